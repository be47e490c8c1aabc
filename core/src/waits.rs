//! Requests the core answers later, kept until it can: `wait` and
//! `prompt --wait` until a status change ends them, their agent goes, or
//! their time runs out on the core's clock; and a request naming a pane no
//! listing has shown yet (created a moment ago), asked again once every
//! listed pane has its first status, for up to [`UNLISTED_GRACE`] (then
//! asked a last time, and answered whatever it finds). Every answer leaves as the core's
//! `Effect::Reply`: the connection that asked only waits for it.
//!
//! The table is pure: requests, events and the time come in, answers go
//! out; the core (`control.rs`, `lib.rs`) hands them on.

use std::time::Duration;

use tend_protocol::reply::{Prompted, Reply, Waited};
use tend_protocol::{BusEvent, Error, ErrorCode, PaneView, Request};
use tend_vocab::{PaneState, Reason, State};

use crate::input::RequestId;

/// How long `prompt --wait` gives the agent to react before it answers
/// `agent_prompt_stalled`.
pub const PROMPT_REACTION: Duration = Duration::from_secs(5);

/// How long a request for a pane no listing has shown waits for one that
/// does, before its `unknown_pane` answer.
pub const UNLISTED_GRACE: Duration = Duration::from_secs(2);

/// How often the panes are listed again while such a request waits.
const UNLISTED_POKE: Duration = Duration::from_millis(200);

/// A request's answer, by the request's id.
pub type Answer = (RequestId, Result<Reply, Error>);

/// The states that end a wait: each a state, with or without a reason
/// (`waiting` is any reason, `waiting/approval` only that one).
#[derive(Debug, Clone, PartialEq)]
pub struct Until {
    states: Vec<(PaneState, Option<Reason>)>,
    /// As the request wrote them, for messages.
    words: String,
}

impl Until {
    /// Reads `["idle", "waiting/approval", "waiting:error"]`; none: idle,
    /// completed and waiting. A word that names no state is refused.
    pub fn parse(words: &[String]) -> Result<Until, Error> {
        if words.is_empty() {
            return Ok(Until::of(&[State::Idle, State::Completed, State::Waiting]));
        }
        let states = words
            .iter()
            .map(|w| {
                let (state, reason) = match w.split_once(['/', ':']) {
                    Some((s, r)) => (s, Some(r)),
                    None => (w.as_str(), None),
                };
                let state = PaneState::parse(state).ok_or_else(|| not_a_state(w))?;
                let reason = match reason {
                    Some(r) => Some(Reason::parse(r).ok_or_else(|| not_a_state(w))?),
                    None => None,
                };
                Ok((state, reason))
            })
            .collect::<Result<_, Error>>()?;
        Ok(Until {
            states,
            words: words.join(", "),
        })
    }

    /// Any of `states`, with any reason.
    fn of(states: &[State]) -> Until {
        Until {
            states: states.iter().map(|s| ((*s).into(), None)).collect(),
            words: states
                .iter()
                .map(State::as_str)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// Whether a pane in `state` for `reason` is there.
    pub fn matches(&self, state: Option<PaneState>, reason: Option<Reason>) -> bool {
        let Some(state) = state else {
            return false;
        };
        self.states
            .iter()
            .any(|(s, r)| *s == state && (r.is_none() || *r == reason))
    }
}

/// The refusal of a word in `until` that is no state.
fn not_a_state(word: &str) -> Error {
    let states: Vec<&str> = State::ALL.iter().map(State::as_str).collect();
    let reasons: Vec<&str> = Reason::ALL.iter().map(Reason::as_str).collect();
    Error::new(
        ErrorCode::BadRequest,
        format!(
            "`{word}` is not a state: use one of {}, or unreachable; waiting may name a reason \
             (waiting/{})",
            states.join(", "),
            reasons.join(", waiting/")
        ),
    )
}

/// What a state wait waits for now.
#[derive(Debug)]
enum Phase {
    /// `prompt --wait`'s first part: any reaction (working or waiting)
    /// within [`PROMPT_REACTION`]; then `then`, within `timeout` of the
    /// reaction.
    Reaction {
        then: Until,
        timeout: Option<Duration>,
    },
    /// The states asked for.
    Until,
}

/// A `wait`, or a `prompt --wait` after its prompt went out.
#[derive(Debug)]
struct StateWait {
    id: RequestId,
    pane: String,
    /// The agent run waited on; none until the pane's first agent shows.
    run: Option<u64>,
    until: Until,
    /// A change numbered this or lower happened before: it does not count.
    after: Option<u64>,
    deadline: Option<Duration>,
    phase: Phase,
}

/// A request for a pane no listing has shown yet.
#[derive(Debug)]
struct Unlisted {
    id: RequestId,
    req: Request,
    /// When it was first asked.
    since: Duration,
}

/// Every request the core answers later.
#[derive(Debug, Default)]
pub struct Waits {
    states: Vec<StateWait>,
    unlisted: Vec<Unlisted>,
    next_poke: Duration,
}

impl Waits {
    /// `wait` for the pane `view` shows, from `now`: answered at once when
    /// it is there already (or its agent has exited), kept otherwise.
    pub fn wait(
        &mut self,
        id: RequestId,
        view: PaneView,
        until: Until,
        timeout: Option<Duration>,
        now: Duration,
    ) -> Option<Result<Reply, Error>> {
        if until.matches(view.state, view.reason) {
            return Some(Ok(Waited::Already(Box::new(view)).into()));
        }
        if view.state == Some(State::Exited.into()) {
            return Some(Err(gone(format!("the agent in {} has exited", view.pane))));
        }
        self.states.push(StateWait {
            id,
            // No agent yet (one is starting): the first run to show up.
            run: view.agent.is_some().then_some(view.run),
            pane: view.pane,
            until,
            after: None,
            deadline: timeout.map(|t| now + t),
            phase: Phase::Until,
        });
        None
    }

    /// `prompt --wait` after its prompt went out (`sent`): a reaction
    /// first, then `then`.
    pub fn after_prompt(
        &mut self,
        id: RequestId,
        sent: &Prompted,
        then: Until,
        timeout: Option<Duration>,
        now: Duration,
    ) {
        self.states.push(StateWait {
            id,
            pane: sent.pane.pane.clone(),
            run: Some(sent.run),
            until: Until::of(&[State::Working, State::Waiting]),
            after: Some(sent.state_change_seq),
            deadline: Some(now + PROMPT_REACTION),
            phase: Phase::Reaction { then, timeout },
        });
    }

    /// Keeps a request for a pane no listing has shown, first asked at
    /// `since`; false once its grace is over (answer it now).
    pub fn unlisted(
        &mut self,
        id: RequestId,
        req: Request,
        since: Duration,
        now: Duration,
    ) -> bool {
        if now >= since + UNLISTED_GRACE {
            return false;
        }
        self.unlisted.push(Unlisted { id, req, since });
        true
    }

    /// Whether a request waits for a pane to be listed.
    pub fn any_unlisted(&self) -> bool {
        !self.unlisted.is_empty()
    }

    /// The requests to ask again, each with when it was first asked.
    pub fn take_unlisted(&mut self) -> Vec<(RequestId, Request, Duration)> {
        std::mem::take(&mut self.unlisted)
            .into_iter()
            .map(|u| (u.id, u.req, u.since))
            .collect()
    }

    /// Events just published, at `now`: the answers of the waits they end.
    pub fn on_events<'a>(
        &mut self,
        events: impl Iterator<Item = &'a BusEvent>,
        now: Duration,
    ) -> Vec<Answer> {
        let mut out = Vec::new();
        if self.states.is_empty() {
            return out;
        }
        for ev in events {
            self.states.retain_mut(|w| match w.on_event(ev, now) {
                Some(answer) => {
                    out.push((w.id, answer));
                    false
                }
                None => true,
            });
        }
        out
    }

    /// The time is `now`: the answers of the waits whose time ran out.
    pub fn expire(&mut self, now: Duration) -> Vec<Answer> {
        let mut out = Vec::new();
        self.states.retain(|w| match w.deadline {
            Some(d) if d <= now => {
                out.push((w.id, Err(w.timed_out())));
                false
            }
            _ => true,
        });
        out
    }

    /// The requests for unlisted panes whose grace ran out at `now`: to be
    /// asked a last time and answered.
    pub fn unlisted_expired(&mut self, now: Duration) -> Vec<(RequestId, Request)> {
        let (done, kept): (Vec<Unlisted>, Vec<Unlisted>) = std::mem::take(&mut self.unlisted)
            .into_iter()
            .partition(|u| u.since + UNLISTED_GRACE <= now);
        self.unlisted = kept;
        done.into_iter().map(|u| (u.id, u.req)).collect()
    }

    /// Whether to list the panes again at `now`: a request waits for a
    /// pane, and the last listing asked for is [`UNLISTED_POKE`] old.
    pub fn poke_due(&mut self, now: Duration) -> bool {
        let due = !self.unlisted.is_empty() && now >= self.next_poke;
        if due {
            self.next_poke = now + UNLISTED_POKE;
        }
        due
    }

    /// When [`Waits::expire`] has something to do next.
    pub fn next_due(&self) -> Option<Duration> {
        let deadlines = self.states.iter().filter_map(|w| w.deadline);
        let unlisted = self.unlisted.iter().map(|u| u.since + UNLISTED_GRACE);
        let poke = (!self.unlisted.is_empty()).then_some(self.next_poke);
        deadlines.chain(unlisted).chain(poke).min()
    }

    /// The daemon stops: every request kept gets its answer.
    pub fn stop(&mut self) -> Vec<Answer> {
        let ids = self.states.drain(..).map(|w| w.id);
        let ids: Vec<RequestId> = ids.chain(self.unlisted.drain(..).map(|u| u.id)).collect();
        ids.into_iter()
            .map(|id| {
                let e = Error::new(ErrorCode::DaemonError, "the daemon is shutting down");
                (id, Err(e))
            })
            .collect()
    }
}

impl StateWait {
    /// What `ev` means for this wait: its answer, or `None` to go on
    /// waiting (maybe in its next phase).
    fn on_event(&mut self, ev: &BusEvent, now: Duration) -> Option<Result<Reply, Error>> {
        if ev.pane() != Some(self.pane.as_str()) {
            return None;
        }
        let pane = &self.pane;
        let c = match ev {
            BusEvent::Closed { .. } => return Some(Err(gone(format!("{pane} was closed")))),
            BusEvent::AgentReleased { .. } if self.run.is_some() => {
                return Some(Err(gone(format!("the agent in {pane} is gone"))))
            }
            BusEvent::StatusChanged(c) => c,
            _ => return None,
        };
        // Not pinned yet (no agent when the wait began): the first run
        // seen is the one waited on.
        if self.run.is_none() && c.agent.is_some() {
            self.run = Some(c.run);
        }
        let run = self.run?;
        if c.run != run {
            return Some(Err(gone(format!("the agent in {pane} was replaced"))));
        }
        if self.after.is_some_and(|s| c.state_change_seq <= s) {
            return None;
        }
        if !self.until.matches(c.state, c.reason) {
            return (c.state == Some(State::Exited.into()))
                .then(|| Err(gone(format!("the agent in {pane} exited"))));
        }
        let reacted = match &self.phase {
            Phase::Until => return Some(Ok(Waited::Changed(c.clone()).into())),
            Phase::Reaction { then, timeout } => (then.clone(), *timeout),
        };
        let (then, timeout) = reacted;
        if c.state != Some(State::Working.into()) && then.matches(c.state, c.reason) {
            return Some(Ok(Waited::Changed(c.clone()).into()));
        }
        self.until = then;
        self.after = Some(c.state_change_seq);
        self.deadline = timeout.map(|t| now + t);
        self.phase = Phase::Until;
        None
    }

    /// The answer when its time runs out.
    fn timed_out(&self) -> Error {
        let pane = &self.pane;
        match self.phase {
            Phase::Reaction { .. } => Error::new(
                ErrorCode::AgentPromptStalled,
                format!(
                    "{pane} showed no change within {} s of the prompt. That does not prove it was \
                     not delivered: read the pane (tend read {pane}) before sending it again",
                    PROMPT_REACTION.as_secs()
                ),
            ),
            Phase::Until => Error::new(
                ErrorCode::Timeout,
                format!(
                    "{pane} did not reach {} in time. A timeout does not prove a prompt was not \
                     delivered: read the pane (tend read {pane}) before retrying",
                    self.until.words
                ),
            ),
        }
    }
}

/// The answer when the agent waited on is no longer there.
fn gone(why: String) -> Error {
    Error::new(ErrorCode::AgentNotRunning, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn until_reads_states_with_and_without_reasons() {
        let u = Until::parse(&words(&["completed", "waiting/approval", "waiting:error"]))
            .expect("reads");
        let waiting = Some(State::Waiting.into());
        assert!(u.matches(Some(State::Completed.into()), None));
        assert!(u.matches(waiting, Some(Reason::Approval)));
        assert!(u.matches(waiting, Some(Reason::Error)));
        assert!(!u.matches(waiting, Some(Reason::Question)));
        assert!(!u.matches(None, None));
        let any = Until::parse(&[]).expect("the default");
        assert!(any.matches(waiting, Some(Reason::Question)));
        assert!(!any.matches(Some(State::Working.into()), None));
        assert_eq!(any.words, "idle, completed, waiting");
        let e = Until::parse(&words(&["done"])).expect_err("no such state");
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert!(
            e.message.starts_with("`done` is not a state"),
            "{}",
            e.message
        );
        assert!(Until::parse(&words(&["waiting/lunch"])).is_err());
    }
}
