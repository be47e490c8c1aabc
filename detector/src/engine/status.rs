//! What the detector says about its pane: the published [`Status`], the
//! [`Explanation`] behind it (`tend explain`) and the plain-text view the
//! rules read.

use std::time::Duration;

use serde::Serialize;

use super::PaneDetector;
use crate::machine::Current;
use crate::rules::{self, Evidence, ScreenView, Verdict};
use crate::state::{Reason, State, Transition, Trigger};

/// The status of a pane, as published.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// The agent id, when one is identified.
    pub agent: Option<String>,
    /// The state (`None` before the first evidence or with no agent).
    pub state: Option<State>,
    /// The reason, with waiting.
    pub reason: Option<Reason>,
    /// When the state was entered (caller's clock).
    #[serde(serialize_with = "secs")]
    pub since: Duration,
    /// The rule that produced the state.
    pub rule: String,
    /// Its confidence.
    pub confidence: f32,
    /// What produced the state (a screen rule, activity, silence, …).
    pub trigger: Option<Trigger>,
    /// A working run that has been silent past `quiet_after`.
    pub quiet: bool,
    /// How long it has been silent (for the quiet band's clock).
    #[serde(serialize_with = "secs")]
    pub silent_for: Duration,
    /// Counts state changes in this agent run.
    pub state_change_seq: u64,
    /// Counts agent runs in this pane.
    pub run: u64,
    /// The CPU backstop is holding the run in working.
    pub cpu_hold: bool,
    /// The agent process's exit code, once the run has exited and where it
    /// is known (the pane's dead status, or the shell's OSC 133;D mark).
    pub exit_code: Option<i32>,
    /// The agent of the run is still running (false once it has exited:
    /// `agent` then names the agent whose run ended in this pane).
    pub live: bool,
    /// Waiting on its usage limit: the words its screen says the limit
    /// resets at (`9:37am (UTC)`), when its limit rule reads them.
    pub reset: Option<String>,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Why the pane is in its state: `tend explain`.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// The current status.
    pub status: Status,
    /// The manifest in use (`bundled:claude.toml` or a path).
    pub manifest: Option<String>,
    /// Whether that manifest's rules were verified on recordings.
    pub verified: Option<bool>,
    /// The winning screen evidence at the last evaluation.
    pub evidence: Option<Evidence>,
    /// Every rule's verdict on the current screen.
    pub verdicts: Vec<Verdict>,
    /// The current title.
    pub title: String,
    /// Alternate screen on.
    pub alternate: bool,
    /// The last transitions, newest last.
    pub recent: Vec<Transition>,
    /// What the program said about itself through OSC 7501, once it sent
    /// anything (a query, a report, or something dropped).
    pub psp: Option<crate::psp::Summary>,
}

impl PaneDetector {
    /// The current status.
    pub fn status(&self) -> Status {
        let cur: &Current = self.machine.current();
        let live = self.manifest.is_some();
        // A run that ended keeps its agent and `exited` until the next one.
        let identified = live || self.ended.is_some();
        let exited = cur.state == Some(State::Exited);
        Status {
            agent: self
                .manifest
                .as_ref()
                .map(|m| m.id.clone())
                .or_else(|| self.ended.clone()),
            state: if identified { cur.state } else { None },
            reason: if identified { cur.reason } else { None },
            since: cur.since,
            rule: cur.rule.clone(),
            confidence: cur.confidence,
            trigger: cur.trigger,
            quiet: self.quiet,
            silent_for: self.clock.saturating_sub(self.silence_anchor()),
            state_change_seq: cur.seq,
            run: self.run,
            cpu_hold: self.cpu_hold_since.is_some(),
            exit_code: if exited {
                self.exit_code.or(self.finish_code)
            } else {
                None
            },
            live: live && !exited,
            reset: self.reset_words().map(str::to_owned),
        }
    }

    /// The run waits on its usage limit (`waiting` with reason `limit`).
    pub fn at_limit(&self) -> bool {
        let cur = self.machine.current();
        let identified = self.manifest.is_some() || self.ended.is_some();
        identified && cur.state == Some(State::Waiting) && cur.reason == Some(Reason::Limit)
    }

    /// The words of the screen's limit rule for when the limit resets,
    /// while the run waits on its usage limit and the screen still shows
    /// them.
    pub fn reset_words(&self) -> Option<&str> {
        if !self.at_limit() {
            return None;
        }
        self.evidence
            .as_ref()
            .filter(|e| e.reason == Some(Reason::Limit))
            .and_then(|e| e.reset.as_deref())
    }

    /// Every rule's verdict on the current screen, and why the pane is in
    /// its state.
    pub fn explain(&self) -> Explanation {
        let view = self.view();
        Explanation {
            status: self.status(),
            manifest: self.manifest.as_ref().map(|m| m.source.clone()),
            verified: self.manifest.as_ref().map(|m| m.verified),
            evidence: self.evidence.clone(),
            verdicts: self
                .manifest
                .as_ref()
                .map(|m| rules::verdicts(&view, m))
                .unwrap_or_default(),
            title: self.screen.title().to_owned(),
            alternate: self.screen.alternate(),
            recent: self.recent.iter().cloned().collect(),
            psp: {
                let c = self.psp.counters();
                let heard = c.queries + c.reports + c.dropped_total() > 0;
                (heard || !self.psp.records().is_empty()).then(|| self.psp.summary())
            },
        }
    }

    /// Since when no rule of the agent's manifest has matched the screen
    /// (`None`: the last evaluation found a rule, there is no live run, or
    /// it has not been evaluated yet): the earliest evaluation of an
    /// unbroken spell of evaluations that all found no rule. Meanwhile the
    /// state comes only from fallback evidence (activity, silence, the
    /// process tree, typing). A run that has exited is not counted: its
    /// screen is the shell's.
    pub fn unmatched_since(&self) -> Option<Duration> {
        let live = self.manifest.is_some() && self.machine.current().state != Some(State::Exited);
        self.unmatched_since.filter(|_| live)
    }

    /// [`unmatched_since`](Self::unmatched_since), once that spell has
    /// lasted `unrecognised_after` by the detector's clock: a screen the
    /// manifest does not know, worth capturing as a test case.
    pub fn unrecognised_since(&self) -> Option<Duration> {
        self.unmatched_since()
            .filter(|s| self.clock.saturating_sub(*s) >= self.cfg.unrecognised_after)
    }

    /// The last state changes (up to 16), oldest first.
    pub fn recent(&self) -> impl Iterator<Item = &Transition> {
        self.recent.iter()
    }

    /// The plain-text view the rules see.
    pub fn view(&self) -> ScreenView {
        self.view_of(self.screen.rows())
    }

    /// Brings the view the evaluations read (`seen`) up to the screen,
    /// reading only the rows written since the last evaluation. Returns
    /// whether the rows, the title or the cursor differ from what the last
    /// evaluation read. (A hash of the whole view, taken at every
    /// evaluation, cost more than the rules; so did a fresh copy of every
    /// row.)
    pub(super) fn refresh_view(&mut self) -> bool {
        let mut changed = self.screen.refresh_rows(&mut self.seen.rows);
        let seen = &mut self.seen;
        let title = self.screen.title();
        if seen.title != title {
            title.clone_into(&mut seen.title);
            changed = true;
        }
        let cursor = self.screen.cursor();
        if seen.cursor != cursor {
            seen.cursor = cursor;
            changed = true;
        }
        let progress = self.progress.map(|p| p.word()).unwrap_or_default();
        if seen.progress != progress {
            progress.clone_into(&mut seen.progress);
        }
        seen.alternate = self.screen.alternate();
        changed
    }

    fn view_of(&self, rows: Vec<String>) -> ScreenView {
        ScreenView {
            rows,
            title: self.screen.title().to_owned(),
            progress: self
                .progress
                .map(|p| p.word().to_owned())
                .unwrap_or_default(),
            alternate: self.screen.alternate(),
            cursor: self.screen.cursor(),
        }
    }
}
