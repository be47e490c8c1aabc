//! What falls due when: the next evaluation, silence, quiet, the CPU hold,
//! the directing hold and the watchdog, and catching the detector up to the
//! time of each input. Kept apart from the inputs because every input first
//! runs what was due before it.

use std::time::Duration;

use super::PaneDetector;
use crate::machine::Candidate;
use crate::state::{Reason, State, Trigger};

impl PaneDetector {
    pub(super) fn eval_deadline(&self) -> Duration {
        let mut d = match self.last_eval {
            Some(last) => last + self.interval,
            None => Duration::ZERO,
        };
        if let Some(since) = self.sync_since {
            // Mid-frame: wait for the frame to end, but not forever.
            d = d.max(since + self.cfg.sync_max);
        }
        d.max(self.clock)
    }

    pub(super) fn silence_anchor(&self) -> Duration {
        let a = self.last_activity.unwrap_or(Duration::ZERO);
        match self.working_since {
            Some(w) if self.machine.current().state == Some(State::Working) => a.max(w),
            _ => a.max(self.machine.current().since),
        }
    }

    pub(super) fn silence_deadline(&self) -> Option<Duration> {
        let base = self.silence_anchor() + self.cfg.settle;
        if self.cpu_busy || self.cpu_hold_since.is_some() {
            // Held by CPU; the hold itself expires.
            let since = self.cpu_hold_since.unwrap_or(base);
            return Some(if self.cpu_busy {
                since + self.cfg.cpu_backstop_max
            } else {
                base
            });
        }
        Some(base)
    }

    pub(super) fn quiet_deadline(&self) -> Option<Duration> {
        Some(self.silence_anchor() + self.cfg.quiet_after)
    }

    /// Runs everything due up to `now` (inclusive when `inclusive`, so that
    /// bytes arriving at one instant are never split by an evaluation).
    pub(super) fn catch_up(&mut self, now: Duration, inclusive: bool) {
        let now = now.max(self.clock);
        for _ in 0..64 {
            let Some(d) = self.poll_timeout() else { break };
            if d > now || (!inclusive && d == now) {
                break;
            }
            let before = (
                self.dirty,
                self.last_eval,
                self.machine.current().seq,
                self.quiet,
                self.cpu_hold_since,
                self.psp.changed(),
            );
            self.clock = self.clock.max(d);
            // The tick a report asked for.
            self.psp.take_changed();
            if self.dirty && d >= self.eval_deadline() {
                self.evaluate(d);
            }
            self.run_timers(d);
            let after = (
                self.dirty,
                self.last_eval,
                self.machine.current().seq,
                self.quiet,
                self.cpu_hold_since,
                self.psp.changed(),
            );
            if before == after {
                // Nothing was due after all (e.g. a lock that already
                // expired): step past it.
                self.clock = self.clock.max(d);
                if self.poll_timeout() == Some(d) {
                    break;
                }
            }
        }
        self.clock = now;
    }

    pub(super) fn directing_live(&self, at: Duration) -> bool {
        self.last_typing
            .is_some_and(|t| at < t + self.cfg.directing_hold)
    }

    pub(super) fn run_timers(&mut self, at: Duration) {
        if self.manifest.is_none() {
            return;
        }
        let cur = self.machine.current().clone();
        // A lock that expired may let the last evidence through now.
        if self.machine.lock_until().is_some_and(|d| at >= d) {
            self.machine.expire_lock(at);
            self.decide(at);
        }
        match cur.state {
            Some(State::Working) => {
                let anchor = self.silence_anchor();
                let silent = at.saturating_sub(anchor);
                if !self.quiet && silent >= self.cfg.quiet_after {
                    self.quiet = true;
                }
                // Silence asks nothing of the user before the agent's UI is
                // up: it is still starting (a slow machine, a cold cache).
                if self.evidence.is_none() && silent >= self.cfg.settle && self.machine.ui_seen() {
                    if self.cpu_busy {
                        let since = *self.cpu_hold_since.get_or_insert(at);
                        if at < since + self.cfg.cpu_backstop_max {
                            return;
                        }
                    }
                    self.propose(
                        at,
                        Candidate {
                            state: State::Waiting,
                            reason: Some(Reason::Prompt),
                            rule: "builtin/silence".into(),
                            confidence: 0.5,
                            trigger: Trigger::Silence,
                        },
                    );
                }
            }
            Some(State::Directing) if !self.directing_live(at) => {
                // Released: back to what the screen shows.
                {
                    let state = self.machine.ready_state();
                    let rule = self
                        .evidence
                        .as_ref()
                        .map_or_else(|| "builtin/typing-ended".to_owned(), |e| e.rule.clone());
                    self.propose(
                        at,
                        Candidate {
                            state,
                            reason: None,
                            rule,
                            confidence: 0.9,
                            trigger: Trigger::Input,
                        },
                    );
                }
            }
            Some(State::Waiting)
                if self.live_child == Some(false)
                    && at.saturating_sub(self.silence_anchor()) >= self.cfg.watchdog =>
            {
                self.propose(
                    at,
                    Candidate {
                        state: State::Idle,
                        reason: None,
                        rule: "builtin/watchdog".into(),
                        confidence: 0.5,
                        trigger: Trigger::Watchdog,
                    },
                );
            }
            _ => {}
        }
    }
}
