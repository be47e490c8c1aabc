//! The attention model: folding state, reason,
//! silence, seen-state, park and snooze into one band per pane, the demand
//! and attention sets, the summary sentences and the jump order.
//!
//! Pure: every input, including the wall clock for snoozes, is a value.

use std::cmp::Ordering;

use tend_vocab::{Reason, State};

pub use tend_vocab::Band;

/// What the band of a pane is computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneFacts {
    /// Detector state (`None`: no agent or no evidence yet).
    pub state: Option<State>,
    /// Waiting reason.
    pub reason: Option<Reason>,
    /// The quiet flag of a working run.
    pub quiet: bool,
    /// The current completion has been seen by the user.
    pub seen: bool,
    /// The pane is parked.
    pub parked: bool,
    /// The pane is snoozed (and the snooze has not run out).
    pub snoozed: bool,
    /// Waiting on its plan's usage limit, the reset it named has passed:
    /// the agent can go on, and only the user (or a resume) makes it.
    pub reset_passed: bool,
}

/// The band of one pane. Parked and snoozed take precedence over every
/// state, a blocked run included: the user said so. A run waiting on its
/// plan's usage limit is `limited`, no demand, until the reset it named
/// has passed (or for good when it named none): nobody can do anything
/// for it before.
pub fn band(f: &PaneFacts) -> Option<Band> {
    let state = f.state?;
    if f.parked {
        return Some(Band::Parked);
    }
    if f.snoozed {
        return Some(Band::Snoozed);
    }
    Some(match state {
        State::Waiting if f.reason == Some(Reason::Error) => Band::Blocked,
        State::Waiting if f.reason == Some(Reason::Limit) && !f.reset_passed => Band::Limited,
        State::Waiting => Band::Waiting,
        State::Working if f.quiet => Band::Quiet,
        State::Working | State::Directing => Band::Working,
        State::Completed if f.seen => Band::Finished,
        State::Completed => Band::ReadyForReview,
        State::Idle => Band::Idle,
        State::Exited => Band::Exited,
    })
}

/// The worst (most urgent) band of a group: window, session, server rollups.
pub fn rollup<'a>(bands: impl IntoIterator<Item = &'a Band>) -> Option<Band> {
    bands.into_iter().min().copied()
}

/// One pane as the jump order sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate<'a> {
    /// Pane id.
    pub pane: &'a str,
    /// Session the pane is in.
    pub session: &'a str,
    /// Its band.
    pub band: Band,
    /// Its waiting reason.
    pub reason: Option<Reason>,
    /// Since when it is in its state (seconds, any monotonic clock).
    pub since: f64,
}

fn reason_rank(r: Option<Reason>) -> u8 {
    // Approval first (one keystroke unblocks it), then error, question,
    // prompt; a limit whose reset passed waits for a word, as a prompt does.
    match r {
        Some(Reason::Approval) => 0,
        Some(Reason::Error) => 1,
        Some(Reason::Question) => 2,
        Some(Reason::Prompt | Reason::Limit) | None => 3,
    }
}

/// Orders panes for "next waiting": waiting panes by reason (approval,
/// error, question, prompt), then ready-for-review, then quiet; within a
/// group the longest wait first. Panes outside the attention set are left
/// out.
pub fn attention_order<'a>(panes: &[Candidate<'a>]) -> Vec<&'a str> {
    let mut list: Vec<&Candidate<'a>> = panes.iter().filter(|c| c.band.is_attention()).collect();
    let group = |c: &Candidate<'_>| -> u8 {
        match c.band {
            Band::Blocked | Band::Waiting => reason_rank(c.reason),
            Band::ReadyForReview => 4,
            _ => 5,
        }
    };
    list.sort_by(|a, b| {
        group(a)
            .cmp(&group(b))
            .then(a.since.partial_cmp(&b.since).unwrap_or(Ordering::Equal))
            .then(a.pane.cmp(b.pane))
    });
    list.into_iter().map(|c| c.pane).collect()
}

/// Working panes, longest-running first (for "next working").
pub fn working_order<'a>(panes: &[Candidate<'a>]) -> Vec<&'a str> {
    let mut list: Vec<&Candidate<'a>> = panes
        .iter()
        .filter(|c| matches!(c.band, Band::Working | Band::Quiet))
        .collect();
    list.sort_by(|a, b| {
        a.since
            .partial_cmp(&b.since)
            .unwrap_or(Ordering::Equal)
            .then(a.pane.cmp(b.pane))
    });
    list.into_iter().map(|c| c.pane).collect()
}

/// The pane after `current` in `order`, wrapping; the first when `current`
/// is not in it. Repeated presses of the jump key cycle through the list.
pub fn next_after<'a>(order: &[&'a str], current: Option<&str>) -> Option<&'a str> {
    let pos = current.and_then(|c| order.iter().position(|p| *p == c));
    match pos {
        Some(i) if order.len() > 1 => Some(order[(i + 1) % order.len()]),
        Some(_) => None,
        None => order.first().copied(),
    }
}

fn agents(n: usize) -> String {
    if n == 1 {
        "1 agent".to_owned()
    } else {
        format!("{n} agents")
    }
}

/// "3 agents need you", "1 agent needs you"; `None` for zero.
pub fn demand_sentence(n: usize) -> Option<String> {
    match n {
        0 => None,
        1 => Some("1 agent needs you".to_owned()),
        n => Some(format!("{} need you", agents(n))),
    }
}

/// "2 agents have gone quiet", "1 agent has gone quiet"; `None` for zero.
pub fn quiet_sentence(n: usize) -> Option<String> {
    match n {
        0 => None,
        1 => Some("1 agent has gone quiet".to_owned()),
        n => Some(format!("{} have gone quiet", agents(n))),
    }
}

/// The summary: the demand sentence, then the quiet one, kept apart, never
/// one total.
pub fn summary(demands: usize, quiet: usize) -> String {
    [demand_sentence(demands), quiet_sentence(quiet)]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The notification sentence for one pane entering a demand band:
/// "Claude is waiting for approval", "Codex asked a question",
/// "Gemini is blocked by an error", "Aider is waiting for input",
/// "Claude finished".
pub fn sentence(name: &str, state: State, reason: Option<Reason>) -> String {
    match (state, reason) {
        (State::Waiting, Some(Reason::Approval)) => format!("{name} is waiting for approval"),
        (State::Waiting, Some(Reason::Question)) => format!("{name} asked a question"),
        (State::Waiting, Some(Reason::Error)) => format!("{name} is blocked by an error"),
        (State::Waiting, Some(Reason::Limit)) => format!("{name}'s usage limit has reset"),
        (State::Waiting, _) => format!("{name} is waiting for input"),
        (State::Completed, _) => format!("{name} finished"),
        (State::Working, _) => format!("{name} has gone quiet"),
        (s, _) => format!("{name} is {s}"),
    }
}

/// The notification sentence for an agent that hit its plan's usage
/// limit: "Claude hit its usage limit · resets 15:00", or without a reset
/// it named "Claude hit its usage limit".
pub fn limit_sentence(name: &str, resets: Option<&str>) -> String {
    match resets {
        Some(at) => format!("{name} hit its usage limit · resets {at}"),
        None => format!("{name} hit its usage limit"),
    }
}

/// "1 agent limited until 15:00", "3 agents limited, the first until
/// 15:00" (`soonest` is the first reset, as the user reads the time);
/// `None` for zero.
pub fn limited_sentence(n: usize, soonest: Option<&str>) -> Option<String> {
    let until = |at: &str| match n {
        1 => format!("1 agent limited until {at}"),
        n => format!("{n} agents limited, the first until {at}"),
    };
    match (n, soonest) {
        (0, _) => None,
        (_, Some(at)) => Some(until(at)),
        (1, None) => Some("1 agent limited".to_owned()),
        (n, None) => Some(format!("{n} agents limited")),
    }
}

/// The notification sentence for a gated park that released itself:
/// "The park on %3 was released: check the migration". An empty note
/// leaves the colon out.
pub fn park_released_sentence(pane: &str, note: &str) -> String {
    let note = note.trim();
    if note.is_empty() {
        format!("The park on {pane} was released")
    } else {
        format!("The park on {pane} was released: {note}")
    }
}

/// The notification sentence for a self-reporting agent that went *gone*
/// (its reports stopped and nothing else shows it alive): "Claude is gone".
pub fn gone_sentence(name: &str) -> String {
    format!("{name} is gone")
}

/// The sentence for a group of notifications: names a reason only when
/// every member shares it, otherwise the generic wording.
pub fn group_sentence(members: &[(State, Option<Reason>)]) -> Option<String> {
    let first = *members.first()?;
    if members.len() == 1 {
        return None;
    }
    let n = members.len();
    let shared = members.iter().all(|m| *m == first);
    Some(if shared {
        match first {
            (State::Waiting, Some(Reason::Approval)) => {
                format!("{n} agents are waiting for approval")
            }
            (State::Waiting, Some(Reason::Question)) => format!("{n} agents asked a question"),
            (State::Waiting, Some(Reason::Error)) => format!("{n} agents are blocked by an error"),
            (State::Waiting, Some(Reason::Limit)) => format!("{n} agents' usage limits have reset"),
            (State::Completed, _) => format!("{n} agents finished"),
            _ => format!("{n} agents need you"),
        }
    } else {
        format!("{n} agents need you")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(state: State, reason: Option<Reason>) -> PaneFacts {
        PaneFacts {
            state: Some(state),
            reason,
            quiet: false,
            seen: false,
            parked: false,
            snoozed: false,
            reset_passed: false,
        }
    }

    #[test]
    fn band_table() {
        use Band::*;
        let cases: Vec<(PaneFacts, Option<Band>)> = vec![
            (facts(State::Waiting, Some(Reason::Error)), Some(Blocked)),
            (facts(State::Waiting, Some(Reason::Approval)), Some(Waiting)),
            (facts(State::Waiting, Some(Reason::Question)), Some(Waiting)),
            (facts(State::Waiting, Some(Reason::Prompt)), Some(Waiting)),
            // A usage limit is no demand until its reset passes; then the
            // agent waits for a word like any other.
            (facts(State::Waiting, Some(Reason::Limit)), Some(Limited)),
            (
                PaneFacts {
                    reset_passed: true,
                    ..facts(State::Waiting, Some(Reason::Limit))
                },
                Some(Waiting),
            ),
            (
                PaneFacts {
                    snoozed: true,
                    reset_passed: true,
                    ..facts(State::Waiting, Some(Reason::Limit))
                },
                Some(Snoozed),
            ),
            (
                PaneFacts {
                    quiet: true,
                    ..facts(State::Working, None)
                },
                Some(Quiet),
            ),
            (facts(State::Completed, None), Some(ReadyForReview)),
            (facts(State::Working, None), Some(Working)),
            (facts(State::Directing, None), Some(Working)),
            (
                PaneFacts {
                    seen: true,
                    ..facts(State::Completed, None)
                },
                Some(Finished),
            ),
            (facts(State::Idle, None), Some(Idle)),
            (facts(State::Exited, None), Some(Exited)),
            // Park and snooze win over every state, blocked included.
            (
                PaneFacts {
                    parked: true,
                    ..facts(State::Waiting, Some(Reason::Error))
                },
                Some(Parked),
            ),
            (
                PaneFacts {
                    snoozed: true,
                    ..facts(State::Waiting, Some(Reason::Approval))
                },
                Some(Snoozed),
            ),
            (
                PaneFacts {
                    parked: true,
                    snoozed: true,
                    ..facts(State::Completed, None)
                },
                Some(Parked),
            ),
            (
                PaneFacts {
                    state: None,
                    ..facts(State::Idle, None)
                },
                None,
            ),
        ];
        for (f, want) in cases {
            assert_eq!(band(&f), want, "{f:?}");
        }
    }

    #[test]
    fn rank_order_and_sets() {
        use Band::*;
        let order = [
            Blocked,
            Waiting,
            Quiet,
            ReadyForReview,
            Limited,
            Working,
            Parked,
            Snoozed,
            Finished,
            Idle,
            Exited,
        ];
        assert_eq!(order.as_slice(), Band::ALL);
        for w in order.windows(2) {
            assert!(w[0] < w[1]);
        }
        let demands: Vec<_> = order.iter().filter(|b| b.is_demand()).collect();
        assert_eq!(demands, vec![&Blocked, &Waiting, &ReadyForReview]);
        let attention: Vec<_> = order.iter().filter(|b| b.is_attention()).collect();
        assert_eq!(attention, vec![&Blocked, &Waiting, &Quiet, &ReadyForReview]);
        assert_eq!(
            rollup(&[Idle, Working, ReadyForReview]),
            Some(ReadyForReview)
        );
        assert_eq!(rollup(&[Idle, Working, Limited]), Some(Limited));
        assert_eq!(rollup(&[]), None);
    }

    #[test]
    fn jump_order() {
        let c = |pane, band, reason, since| Candidate {
            pane,
            session: "s",
            band,
            reason,
            since,
        };
        let panes = [
            c("%1", Band::Waiting, Some(Reason::Prompt), 1.0),
            c("%2", Band::ReadyForReview, None, 0.0),
            c("%3", Band::Waiting, Some(Reason::Question), 5.0),
            c("%4", Band::Blocked, Some(Reason::Error), 9.0),
            c("%5", Band::Waiting, Some(Reason::Approval), 8.0),
            c("%6", Band::Waiting, Some(Reason::Approval), 3.0),
            c("%7", Band::Working, None, 0.0),
            c("%8", Band::Quiet, None, 0.0),
            c("%9", Band::Parked, None, 0.0),
            c("%10", Band::Limited, Some(Reason::Limit), 0.0),
            c("%11", Band::Waiting, Some(Reason::Limit), 0.5),
        ];
        let order = attention_order(&panes);
        // A limit not yet reset is left out; one whose reset passed waits
        // for a word, beside the prompts.
        assert_eq!(order, vec!["%6", "%5", "%4", "%3", "%11", "%1", "%2", "%8"]);
        assert_eq!(next_after(&order, None), Some("%6"));
        assert_eq!(next_after(&order, Some("%6")), Some("%5"));
        assert_eq!(next_after(&order, Some("%8")), Some("%6"));
        assert_eq!(next_after(&order, Some("%7")), Some("%6"));
        assert_eq!(next_after(&["%1"], Some("%1")), None);
        assert_eq!(working_order(&panes), vec!["%7", "%8"]);
    }

    #[test]
    fn sentences() {
        assert_eq!(summary(0, 0), "");
        assert_eq!(summary(1, 0), "1 agent needs you");
        assert_eq!(
            summary(3, 2),
            "3 agents need you · 2 agents have gone quiet"
        );
        assert_eq!(summary(0, 1), "1 agent has gone quiet");
        assert_eq!(
            sentence("Claude", State::Waiting, Some(Reason::Approval)),
            "Claude is waiting for approval"
        );
        assert_eq!(
            sentence("Codex", State::Waiting, Some(Reason::Question)),
            "Codex asked a question"
        );
        assert_eq!(
            sentence("Gemini", State::Waiting, Some(Reason::Error)),
            "Gemini is blocked by an error"
        );
        assert_eq!(
            sentence("Aider", State::Waiting, Some(Reason::Prompt)),
            "Aider is waiting for input"
        );
        let a = (State::Waiting, Some(Reason::Approval));
        let q = (State::Waiting, Some(Reason::Question));
        assert_eq!(
            group_sentence(&[a, a]).as_deref(),
            Some("2 agents are waiting for approval")
        );
        assert_eq!(
            group_sentence(&[a, q, a]).as_deref(),
            Some("3 agents need you")
        );
        assert_eq!(group_sentence(&[a]), None);
        assert_eq!(
            park_released_sentence("%3", " check the migration "),
            "The park on %3 was released: check the migration"
        );
        assert_eq!(
            park_released_sentence("%3", ""),
            "The park on %3 was released"
        );
        assert_eq!(gone_sentence("Claude"), "Claude is gone");
        let l = (State::Waiting, Some(Reason::Limit));
        assert_eq!(
            sentence("Claude", l.0, l.1),
            "Claude's usage limit has reset"
        );
        assert_eq!(
            group_sentence(&[l, l]).as_deref(),
            Some("2 agents' usage limits have reset")
        );
        assert_eq!(
            limit_sentence("Codex", Some("15:00")),
            "Codex hit its usage limit · resets 15:00"
        );
        assert_eq!(limit_sentence("Codex", None), "Codex hit its usage limit");
        assert_eq!(
            limited_sentence(1, Some("15:00")).as_deref(),
            Some("1 agent limited until 15:00")
        );
        assert_eq!(
            limited_sentence(3, Some("Tue 09:00")).as_deref(),
            Some("3 agents limited, the first until Tue 09:00")
        );
        assert_eq!(
            limited_sentence(2, None).as_deref(),
            Some("2 agents limited")
        );
        assert_eq!(limited_sentence(0, Some("15:00")), None);
    }
}
