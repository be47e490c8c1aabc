//! The vocabulary: agent states, waiting reasons, transitions.

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use tend_vocab::{Reason, State};

/// What caused a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// A screen rule matched.
    Screen,
    /// Output arrived and no rule claimed the screen.
    Activity,
    /// The pane stayed silent past the settle window.
    Silence,
    /// The user typed into the pane.
    Input,
    /// The process tree changed (agent gone, CPU backstop expired).
    Process,
    /// The waiting watchdog fired.
    Watchdog,
    /// The agent reported its own state.
    Report,
}

/// A state change, with everything needed to explain it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transition {
    /// When, on the caller's clock.
    #[serde(serialize_with = "secs")]
    pub at: Duration,
    /// State before (`None` before the first evidence).
    pub from: Option<State>,
    /// Reason before.
    pub from_reason: Option<Reason>,
    /// New state.
    pub to: State,
    /// New reason (only with `waiting`).
    pub reason: Option<Reason>,
    /// What caused it.
    pub trigger: Trigger,
    /// The rule id (`claude/approval`), or a built-in name such as
    /// `builtin/activity`.
    pub rule: String,
    /// 0–1.
    pub confidence: f32,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}
