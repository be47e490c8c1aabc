//! The per-run state machine: narrow transitions, strong-evidence locks,
//! and the record of every change.
//!
//! The transitions are narrow: a noisy terminal cannot walk a pane
//! into a state it was never in.
//!
//! | from | may go to |
//! |---|---|
//! | (none) | anything |
//! | idle | working, waiting, directing, exited |
//! | working | waiting, completed, exited (idle only before the first turn) |
//! | waiting | working, completed, waiting (other reason), exited, idle (watchdog, or before the first turn) |
//! | completed | working, waiting, directing, exited |
//! | directing | working, waiting, idle/completed (released), exited |
//! | exited | nothing: a new run starts a new machine |

use std::collections::VecDeque;
use std::time::Duration;

use crate::config::DetectorConfig;
use crate::state::{Reason, State, Transition, Trigger};

/// A proposed state, with the evidence behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Proposed state.
    pub state: State,
    /// Proposed reason (waiting only).
    pub reason: Option<Reason>,
    /// Rule id or built-in name.
    pub rule: String,
    /// 0–1.
    pub confidence: f32,
    /// What produced it.
    pub trigger: Trigger,
}

/// Current status of one agent run.
#[derive(Debug, Clone, PartialEq)]
pub struct Current {
    /// State (`None` until the first evidence).
    pub state: Option<State>,
    /// Reason, with waiting.
    pub reason: Option<Reason>,
    /// When the state was entered.
    pub since: Duration,
    /// The rule that produced it.
    pub rule: String,
    /// Its confidence.
    pub confidence: f32,
    /// What produced it (`None` before the first evidence).
    pub trigger: Option<Trigger>,
    /// Counts every state change of this run (for `state_change_seq`).
    pub seq: u64,
}

/// The state machine of one agent run.
#[derive(Debug, Clone)]
pub struct Machine {
    strong: f32,
    lock: Duration,
    cur: Current,
    /// A turn has run since the agent was first seen ready (decides idle vs
    /// completed when the prompt comes back).
    had_turn: bool,
    /// The agent's own UI has been seen in this run: before it, output is
    /// the agent starting up, not a turn.
    ui_seen: bool,
    lock_until: Option<Duration>,
    out: VecDeque<Transition>,
    /// While the current state is one activity made: the status and the
    /// turn flag before it, so that a resize heard of late can take it back
    /// ([`Machine::retract_activity`]).
    before_activity: Option<(Current, bool)>,
}

fn allowed(from: Option<State>, to: State, had_turn: bool, trigger: Trigger) -> bool {
    use State::*;
    let Some(from) = from else { return true };
    match (from, to) {
        (Exited, _) => false,
        (_, Exited) => true,
        (Idle, Working | Waiting | Directing) => true,
        (Working, Waiting | Completed) => true,
        (Working, Idle) => !had_turn,
        (Waiting, Working | Completed | Waiting) => true,
        // Before the first turn a wait (a start-up dialog, or silence on a
        // screen no rule knows) ends at the prompt as idle.
        (Waiting, Idle) => trigger == Trigger::Watchdog || !had_turn,
        (Completed, Working | Waiting | Directing) => true,
        (Directing, Working | Waiting | Idle | Completed) => true,
        _ => false,
    }
}

impl Machine {
    /// A machine with no state yet.
    pub fn new(cfg: &DetectorConfig) -> Self {
        Machine {
            strong: cfg.strong_confidence,
            lock: cfg.strong_lock,
            cur: Current {
                state: None,
                reason: None,
                since: Duration::ZERO,
                rule: String::new(),
                confidence: 0.0,
                trigger: None,
                seq: 0,
            },
            had_turn: false,
            ui_seen: false,
            lock_until: None,
            out: VecDeque::new(),
            before_activity: None,
        }
    }

    /// The current status.
    pub fn current(&self) -> &Current {
        &self.cur
    }

    /// The agent's own UI (a screen rule other than an exit rule) has been
    /// seen in this run.
    pub fn saw_ui(&mut self) {
        self.ui_seen = true;
    }

    /// Whether the agent's own UI has been seen in this run.
    pub fn ui_seen(&self) -> bool {
        self.ui_seen
    }

    /// Whether a turn has run in this agent run.
    pub fn had_turn(&self) -> bool {
        self.had_turn
    }

    /// When a strong lock ends, if one holds.
    pub fn lock_until(&self) -> Option<Duration> {
        self.lock_until
    }

    /// Forgets a strong lock that has run out by `at`.
    pub fn expire_lock(&mut self, at: Duration) {
        if self.lock_until.is_some_and(|until| at >= until) {
            self.lock_until = None;
        }
    }

    /// Maps the "agent's prompt is up" evidence to idle or completed.
    pub fn ready_state(&self) -> State {
        if self.had_turn {
            State::Completed
        } else {
            State::Idle
        }
    }

    /// Offers a candidate at `at`. Returns true when the state changed.
    pub fn propose(&mut self, at: Duration, c: Candidate) -> bool {
        if let Some(until) = self.lock_until {
            if at >= until {
                self.lock_until = None;
            }
        }
        let reason = if c.state == State::Waiting {
            Some(c.reason.unwrap_or(Reason::Prompt))
        } else {
            None
        };
        if self.cur.state == Some(c.state) && self.cur.reason == reason {
            return false;
        }
        if !allowed(self.cur.state, c.state, self.had_turn, c.trigger) {
            return false;
        }
        let strong = c.confidence >= self.strong;
        // A strong transition locks out weak opposite ones for a moment;
        // exit always passes.
        if !strong && c.state != State::Exited && self.lock_until.is_some() {
            return false;
        }
        self.before_activity =
            (c.trigger == Trigger::Activity).then(|| (self.cur.clone(), self.had_turn));
        // Output while the agent starts (before its UI is up) is not a turn.
        if c.state == State::Working
            && (c.trigger == Trigger::Screen || (self.cur.state.is_some() && self.ui_seen))
        {
            self.had_turn = true;
        }
        let t = Transition {
            at,
            from: self.cur.state,
            from_reason: self.cur.reason,
            to: c.state,
            reason,
            trigger: c.trigger,
            rule: c.rule.clone(),
            confidence: c.confidence,
        };
        self.cur = Current {
            state: Some(c.state),
            reason,
            since: at,
            rule: c.rule,
            confidence: c.confidence,
            trigger: Some(c.trigger),
            seq: self.cur.seq + 1,
        };
        self.lock_until = strong.then_some(at + self.lock);
        self.out.push_back(t);
        true
    }

    /// Takes back the current state when activity made it at or after
    /// `since` (a redraw the program made for a new size before the resize
    /// was heard of, taken for work): the state, reason, clock and turn flag
    /// before it come back, recorded as a transition by `rule`. Returns true
    /// when it did.
    pub fn retract_activity(&mut self, at: Duration, since: Duration, rule: &str) -> bool {
        let Some((before, had_turn)) = self.before_activity.take() else {
            return false;
        };
        let made_by_activity = self.cur.trigger == Some(Trigger::Activity);
        let (Some(to), true, true) = (before.state, made_by_activity, self.cur.since >= since)
        else {
            return false;
        };
        self.out.push_back(Transition {
            at,
            from: self.cur.state,
            from_reason: self.cur.reason,
            to,
            reason: before.reason,
            trigger: before.trigger.unwrap_or(Trigger::Screen),
            rule: rule.to_owned(),
            confidence: before.confidence,
        });
        self.cur = Current {
            seq: self.cur.seq + 1,
            ..before
        };
        self.had_turn = had_turn;
        self.lock_until = None;
        true
    }

    /// Takes the next recorded transition.
    pub fn poll_transition(&mut self) -> Option<Transition> {
        self.out.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(state: State, conf: f32) -> Candidate {
        Candidate {
            state,
            reason: None,
            rule: "r".into(),
            confidence: conf,
            trigger: Trigger::Screen,
        }
    }
    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn narrow_transitions() {
        let mut m = Machine::new(&DetectorConfig::default());
        assert!(m.propose(ms(0), c(State::Idle, 0.9)));
        // idle cannot jump to completed: no turn ran.
        assert!(!m.propose(ms(1000), c(State::Completed, 0.9)));
        assert!(m.propose(ms(2000), c(State::Working, 0.9)));
        assert_eq!(m.ready_state(), State::Completed);
        assert!(!m.propose(ms(3000), c(State::Idle, 0.9)));
        assert!(m.propose(ms(4000), c(State::Completed, 0.9)));
        assert!(m.propose(ms(5000), c(State::Exited, 1.0)));
        assert!(!m.propose(ms(6000), c(State::Working, 1.0)));
        let all: Vec<_> = std::iter::from_fn(|| m.poll_transition())
            .map(|t| t.to)
            .collect();
        assert_eq!(
            all,
            vec![State::Idle, State::Working, State::Completed, State::Exited]
        );
        assert_eq!(m.current().seq, 4);
    }

    #[test]
    fn strong_lock_holds_off_weak_opposite_for_500ms() {
        let mut m = Machine::new(&DetectorConfig::default());
        m.propose(ms(0), c(State::Working, 0.9));
        let mut weak = c(State::Waiting, 0.5);
        weak.trigger = Trigger::Silence;
        assert!(!m.propose(ms(499), weak.clone()));
        assert!(m.propose(ms(500), weak));
        // Exit bypasses a lock.
        let mut m = Machine::new(&DetectorConfig::default());
        m.propose(ms(0), c(State::Working, 0.9));
        assert!(m.propose(ms(10), c(State::Exited, 0.5)));
    }

    #[test]
    fn waiting_reason_changes_and_watchdog() {
        let mut m = Machine::new(&DetectorConfig::default());
        m.propose(ms(0), c(State::Working, 0.9));
        let mut w = c(State::Waiting, 0.9);
        w.reason = Some(Reason::Error);
        assert!(m.propose(ms(1000), w.clone()));
        w.reason = Some(Reason::Approval);
        assert!(m.propose(ms(2000), w));
        assert!(!m.propose(ms(3000), c(State::Idle, 0.9)));
        let mut wd = c(State::Idle, 0.5);
        wd.trigger = Trigger::Watchdog;
        assert!(m.propose(ms(4000), wd));
    }

    #[test]
    fn a_start_up_wait_ends_idle() {
        let mut m = Machine::new(&DetectorConfig::default());
        let mut w = c(State::Waiting, 0.9);
        w.reason = Some(Reason::Approval);
        assert!(m.propose(ms(0), w));
        assert!(m.propose(ms(1000), c(State::Idle, 0.9)));
    }

    #[test]
    fn startup_activity_is_not_a_turn() {
        let mut m = Machine::new(&DetectorConfig::default());
        let mut act = c(State::Working, 0.5);
        act.trigger = Trigger::Activity;
        m.propose(ms(0), act);
        assert_eq!(m.ready_state(), State::Idle);
        assert!(m.propose(ms(1000), c(State::Idle, 0.9)));
    }
}
