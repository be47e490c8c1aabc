//! The vocabulary: agent states, waiting reasons, transitions.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What an identified agent is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Up at its prompt, no turn in progress, nothing to review.
    Idle,
    /// Busy: streaming, running tools, thinking.
    Working,
    /// Waiting on the user; see [`Reason`].
    Waiting,
    /// The turn is over and the agent is back at its normal prompt.
    Completed,
    /// The user is typing into it.
    Directing,
    /// The agent process ended.
    Exited,
}

impl State {
    /// The lower-case name used everywhere (JSON, tmux options, CLI).
    pub fn as_str(&self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Working => "working",
            State::Waiting => "waiting",
            State::Completed => "completed",
            State::Directing => "directing",
            State::Exited => "exited",
        }
    }

    /// Parses a state name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "idle" => State::Idle,
            "working" => State::Working,
            "waiting" => State::Waiting,
            "completed" => State::Completed,
            "directing" => State::Directing,
            "exited" => State::Exited,
            _ => return None,
        })
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an agent waits, in the order a second of attention buys most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A permission dialog: one keystroke unblocks it.
    Approval,
    /// Rate limit, overload, auth or network failure shown.
    Error,
    /// The agent asked the user something.
    Question,
    /// At a prompt that is not its normal input box, or silent after work
    /// with no evidence of what it wants.
    Prompt,
}

impl Reason {
    /// The lower-case name.
    pub fn as_str(&self) -> &'static str {
        match self {
            Reason::Approval => "approval",
            Reason::Error => "error",
            Reason::Question => "question",
            Reason::Prompt => "prompt",
        }
    }

    /// Parses a reason name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "approval" => Reason::Approval,
            "error" => Reason::Error,
            "question" => Reason::Question,
            "prompt" => Reason::Prompt,
            _ => return None,
        })
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
