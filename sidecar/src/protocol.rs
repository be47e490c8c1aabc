//! The control protocol: newline-delimited JSON over the daemon's Unix
//! socket. A request is `{"id": N, "method": "...", "params": {...}}`; the
//! answer carries the same `id` and either `result` or
//! `error: {code, message}`. Codes are stable; messages are for people.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bumped on incompatible changes; `ping` reports it.
pub const PROTOCOL_VERSION: u32 = 1;

/// A request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Echoed in the response.
    #[serde(default)]
    pub id: u64,
    /// `ping`, `list`, `status`, `next`, `explain`, `stop`, `poke`.
    pub method: String,
    /// Method parameters.
    #[serde(default)]
    pub params: Value,
}

/// An error in a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// Stable code, e.g. `unknown_pane`, `bad_request`.
    pub code: String,
    /// What happened and what to do.
    pub message: String,
}

/// A response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The request's id.
    pub id: u64,
    /// The result, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

impl Response {
    /// A success.
    pub fn ok(id: u64, result: Value) -> Self {
        Response {
            id,
            result: Some(result),
            error: None,
        }
    }

    /// A failure.
    pub fn err(id: u64, code: &str, message: impl Into<String>) -> Self {
        Response {
            id,
            result: None,
            error: Some(ErrorBody {
                code: code.to_owned(),
                message: message.into(),
            }),
        }
    }
}

/// One pane as `tend list --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaneView {
    /// tmux pane id, `%3`.
    pub pane: String,
    /// Session name.
    pub session: String,
    /// Window id, `@1`.
    pub window: String,
    /// Agent id, when one is identified.
    pub agent: Option<String>,
    /// State, when an agent is identified and has shown evidence.
    pub state: Option<String>,
    /// Waiting reason.
    pub reason: Option<String>,
    /// Attention band.
    pub band: Option<String>,
    /// Unix time the state was entered.
    pub since: Option<f64>,
    /// The rule that produced the state.
    pub rule: Option<String>,
    /// A working run silent past the quiet threshold.
    #[serde(default)]
    pub quiet: bool,
    /// Counts state changes of the current agent run.
    #[serde(default)]
    pub state_change_seq: u64,
    /// How the pane's output reaches tend: `pipe`, `polling` (someone
    /// else's pipe-pane is on it) or `none` yet.
    #[serde(default)]
    pub tap: String,
    /// Who decides the state: `screen` or `report` (a self-reporting agent).
    #[serde(default)]
    pub authority: String,
    /// A self-reporting agent's lifecycle word (`working`, `quiet · 12m`).
    #[serde(default)]
    pub lifecycle: Option<String>,
    /// Its last status text.
    #[serde(default)]
    pub message: Option<String>,
    /// Display label (`tend report-metadata`); never affects state.
    #[serde(default)]
    pub label: Option<String>,
    /// Parked by the user.
    #[serde(default)]
    pub parked: bool,
    /// The park's note, in the user's words.
    #[serde(default)]
    pub note: Option<String>,
    /// The pane whose next finished turn releases the park.
    #[serde(default)]
    pub gate: Option<String>,
    /// Snoozed.
    #[serde(default)]
    pub snoozed: bool,
    /// Unix time the snooze ends (none: unlimited).
    #[serde(default)]
    pub until: Option<u64>,
    /// A pending stop flag: `stop pending · not read` / `· read, not acknowledged`.
    #[serde(default)]
    pub stop: Option<String>,
    /// Counts agent runs in this pane (a wait is pinned to one).
    #[serde(default)]
    pub run: u64,
}
