//! Reading the screen and deciding: one evaluation re-reads the rows that
//! changed, asks the manifest's rules, adapts the evaluation interval, and
//! turns the evidence (or screen activity no rule explains) into a
//! candidate state for the machine.

use std::time::Duration;

use super::{PaneDetector, RECENT};
use crate::machine::Candidate;
use crate::manifest::RuleState;
use crate::rules;
use crate::state::{State, Trigger};

impl PaneDetector {
    pub(super) fn evaluate(&mut self, at: Duration) {
        self.dirty = false;
        self.last_eval = Some(at);
        // The rows this evaluation re-reads, and of those the ones the
        // evaluation before re-read too (see `churn`). Not kept any longer:
        // over a whole turn they would come to hold every row the turn ever
        // wrote, a dialog's rows included.
        let (churn, written) = (&mut self.churn, &mut self.written);
        churn.clear();
        let before = std::mem::take(written);
        self.screen.rows_pending(|i| {
            if written.len() <= i {
                written.resize(i + 1, false);
                churn.resize(i + 1, false);
            }
            written[i] = true;
            churn[i] = before.get(i).copied().unwrap_or(false);
        });
        let changed = self.refresh_view() && at >= self.suppress_until;
        let Some(manifest) = self.manifest.clone() else {
            if changed {
                self.last_activity = Some(at);
            }
            return;
        };
        let evidence = rules::evaluate_with(&self.seen, &manifest, &mut self.memo);
        // Same evidence again: read less often; anything new: read at once.
        self.interval = if evidence == self.evidence {
            (self.interval * 2).clamp(self.cfg.eval_interval, self.cfg.eval_interval_max)
        } else {
            self.cfg.eval_interval
        };
        self.evidence = evidence;
        match self.evidence {
            None => {
                self.unmatched_since.get_or_insert(at);
            }
            Some(_) => self.unmatched_since = None,
        }
        if changed {
            self.last_activity = Some(at);
            // Only changes no rule explains count towards "activity": the
            // agent redrawing a screen a rule already claims (echo at its
            // prompt, a spinner) is that rule's business.
            self.prev_activity = match self.evidence {
                None => self.unexplained_change.replace(at),
                Some(_) => {
                    self.unexplained_change = None;
                    None
                }
            };
        }
        self.decide(at);
    }

    /// Turns the last evidence (or its absence) into a candidate.
    pub(super) fn decide(&mut self, at: Duration) {
        let cur_state = self.machine.current().state;
        let candidate = match &self.evidence {
            Some(e) => {
                let state = match e.state {
                    RuleState::Working => State::Working,
                    RuleState::Waiting => State::Waiting,
                    RuleState::Ready => self.machine.ready_state(),
                    RuleState::Exited => State::Exited,
                };
                // Goodbye text (or the shell's screen) before the agent's own
                // UI was ever seen is the shell about to start it, not an exit.
                if e.state == RuleState::Exited && !self.machine.ui_seen() {
                    return;
                }
                // The same agent's UI back, unmistakably, after its run
                // ended: it was started again (an exit and a restart faster
                // than the process sampler notices). That is a new run —
                // unless the process sampler saw the end: the screen the
                // agent left behind (its prompt above the shell's) still
                // shows its UI, and the process coming back is what says
                // it restarted (`observe_process`).
                if cur_state == Some(State::Exited)
                    && !self.process_gone
                    && e.state != RuleState::Exited
                    && e.confidence >= self.cfg.strong_confidence
                {
                    self.new_run();
                    return self.decide(at);
                }
                if e.state != RuleState::Exited {
                    self.machine.saw_ui();
                }
                // Typing keeps directing until the agent shows something
                // other than its prompt.
                if cur_state == Some(State::Directing)
                    && e.state == RuleState::Ready
                    && self.directing_live(at)
                {
                    return;
                }
                Some(Candidate {
                    state,
                    reason: e.reason,
                    rule: e.rule.clone(),
                    confidence: e.confidence,
                    trigger: Trigger::Screen,
                })
            }
            None => {
                // One repaint is not work (a cursor moved, an Enter echoed):
                // activity is two screen changes within the window.
                let active = self
                    .prev_activity
                    .is_some_and(|a| at.saturating_sub(a) <= self.cfg.activity_window);
                if active && cur_state != Some(State::Directing) {
                    Some(Candidate {
                        state: State::Working,
                        reason: None,
                        rule: "builtin/activity".into(),
                        confidence: 0.5,
                        trigger: Trigger::Activity,
                    })
                } else {
                    None
                }
            }
        };
        if let Some(c) = candidate {
            self.propose(at, c);
        }
    }

    pub(super) fn propose(&mut self, at: Duration, c: Candidate) {
        if self.machine.propose(at, c) {
            self.take_transitions();
        }
    }

    /// Moves the machine's transitions to the output and the recent list.
    pub(super) fn take_transitions(&mut self) {
        while let Some(t) = self.machine.poll_transition() {
            if t.to == State::Working && t.from != Some(State::Working) {
                self.working_since = Some(t.at);
            }
            self.cpu_hold_since = None;
            self.quiet = false;
            if self.recent.len() == RECENT {
                self.recent.pop_front();
            }
            self.recent.push_back(t.clone());
            self.out.push_back(t);
        }
    }
}
