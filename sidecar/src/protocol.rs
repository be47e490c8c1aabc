//! The control protocol: newline-delimited JSON over the daemon's Unix
//! socket. A request is `{"id": N, "method": "...", "params": {...}}`; the
//! answer carries the same `id` and either `result` or
//! `error: {code, message}`. Codes are stable; messages are for people.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bumped on incompatible changes; `ping` reports it.
pub const PROTOCOL_VERSION: u32 = 1;

/// A request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Request {
    /// Echoed in the response.
    #[serde(default)]
    pub id: u64,
    /// `ping`, `list`, `status`, `next`, `explain`, `stop`, `poke`, `answer`
    /// (`{"pane": "%3", "action": "approve"|"deny", "dry_run": bool}`), ….
    pub method: String,
    /// Method parameters.
    #[serde(default)]
    pub params: Value,
}

/// An error in a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    /// Stable code, e.g. `unknown_pane`, `bad_request`.
    pub code: String,
    /// What happened and what to do.
    pub message: String,
}

/// A response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct PaneView {
    /// tmux pane id, `%3`.
    pub pane: String,
    /// Session name.
    pub session: String,
    /// Window id, `@1`.
    pub window: String,
    /// Agent id, when one is identified.
    pub agent: Option<String>,
    /// How `agent` was identified: `process` (its executable, package,
    /// argv or process name), `screen` (its live UI on the screen, behind a
    /// wrapper whose agent the process tree cannot show: `ssh`, `mosh`,
    /// `docker exec`, `kubectl exec`, a launcher or script with no agent
    /// process below it) or `declared` (`TEND_AGENT` in its environment).
    /// Absent with no agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identified_by: Option<String>,
    /// With `identified_by: screen`, the wrapper the process tree shows
    /// (`ssh`, `docker exec`, `nix develop`, a script's name): its end is
    /// the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper: Option<String>,
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
    /// Who decides the state: `screen`, `report` (an agent reporting with
    /// `tend report`) or `psp` (the program's own word through the
    /// terminal, OSC 7501, while `tend run` answers for it).
    #[serde(default)]
    pub authority: String,
    /// A self-reporting agent's lifecycle word (`working`, `quiet · 12m`).
    #[serde(default)]
    pub lifecycle: Option<String>,
    /// Its last status text (`tend report --message`, or an OSC 7501
    /// report's `msg`, else its `title`), without control characters.
    #[serde(default)]
    pub message: Option<String>,
    /// The program's subtasks, from its OSC 7501 child records (`id=`):
    /// live ones first. While one is live the agent is never `completed`.
    #[serde(default)]
    pub tasks: Vec<TaskView>,
    /// The program's name for itself, from its OSC 7501 reports
    /// (`claude-code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
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
    /// The exit code of an agent run that has exited, where known (the
    /// pane's dead status or the shell's OSC 133;D mark). With `exited`,
    /// `agent` names the agent whose run ended in this pane.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Whether the agent's rules were verified on recordings of the real
    /// CLI (unverified rules never claim an approval, question or error:
    /// such a dialog shows as `waiting/prompt`).
    #[serde(default)]
    pub verified: Option<bool>,
    /// The running agent's version, from the package metadata beside its
    /// program, when found.
    #[serde(default)]
    pub version: Option<String>,
    /// Unix time since which no rule of the agent's manifest has matched
    /// the pane's screen, once that has lasted `[detector]
    /// unrecognised_after` (30 s by default): the state comes only from
    /// activity, silence and the process tree. `tend capture` saves such a
    /// pane as a test case.
    #[serde(default)]
    pub unrecognised_since: Option<f64>,
    /// The remote the pane is on (`tend remote add`); absent for this
    /// machine's panes. A remote pane's id is `NAME:%3`, and while its link
    /// is down its state and band are `unreachable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The git repository (or linked worktree) of the pane's working
    /// directory and its branch, `tend · main` (a detached head: a short
    /// commit id); absent outside a repository, and for a pane with no
    /// agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Where the pane is, as tmux names it: `session:window.pane` with the
    /// window's and pane's indexes (`work:2.1`). Absent in zellij.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

/// One subtask of a pane's program (an OSC 7501 child record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct TaskView {
    /// Its id (`id=`), as the program named it.
    pub id: String,
    /// `working`, `blocked`, `idle`, `done` or `error`.
    pub state: String,
    /// What it waits on, when blocked: `permission`, `question`, `auth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Its title.
    #[serde(default)]
    pub title: Option<String>,
    /// Its message.
    #[serde(default)]
    pub message: Option<String>,
    /// Progress, 0–100.
    #[serde(default)]
    pub progress: Option<u8>,
    /// Still working or waiting on the user.
    #[serde(default)]
    pub live: bool,
}

/// `pane.agent_status_changed`: a pane's effective state, reason, band or
/// quiet flag changed. Other events: `pane.agent_detected` and
/// `pane.agent_released` (`pane`, `agent`), `pane.closed` (`pane`,
/// `agent`), `pane.report_changed` (`pane`, `from`, `to`, `notify`),
/// `pane.stop_requested` (`pane`, `reason`), `park.released` (`pane`,
/// `gate`, `note`, `reason`), `events.lagged` (`missed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusChanged {
    /// `pane.agent_status_changed`.
    pub event: String,
    /// `%N`.
    pub pane: String,
    /// Agent id.
    pub agent: Option<String>,
    /// Display name (`Claude`).
    pub name: Option<String>,
    /// Session name.
    pub session: String,
    /// Window id.
    pub window: String,
    /// A client shows this pane now.
    pub focused: bool,
    /// New state.
    pub state: Option<String>,
    /// New reason.
    pub reason: Option<String>,
    /// New band.
    pub band: Option<String>,
    /// Band before.
    pub prev_band: Option<String>,
    /// Quiet flag.
    pub quiet: bool,
    /// State before.
    pub prev_state: Option<String>,
    /// Reason before.
    pub prev_reason: Option<String>,
    /// Rule, `report/<lifecycle>` or `psp/<state>`.
    pub rule: String,
    /// `screen`, `report` or `psp`.
    pub authority: String,
    /// The agent's own status text, when it gave one.
    #[serde(default)]
    pub message: Option<String>,
    /// Counts state changes of the pane.
    pub state_change_seq: u64,
    /// The agent run (a wait is pinned to one).
    pub run: u64,
    /// Unix time.
    pub at: f64,
}

/// The protocol's JSON Schema (requests, responses, the pane view and the
/// status event), as committed in `docs/protocol.schema.json`.
pub fn schema() -> serde_json::Value {
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tend control protocol",
        "description": format!(
            "Newline-delimited JSON over the daemon's Unix socket (mode 0600, peer uid checked). \
             Protocol version {PROTOCOL_VERSION} (see `ping`)."
        ),
        "protocol_version": PROTOCOL_VERSION,
        "definitions": {
            "Request": schemars::schema_for!(Request),
            "Response": schemars::schema_for!(Response),
            "PaneView": schemars::schema_for!(PaneView),
            "StatusChanged": schemars::schema_for!(StatusChanged),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let req = Request {
            id: 3,
            method: "wait".into(),
            params: serde_json::json!({"pane": "%1", "until": ["idle"]}),
        };
        let back: Request = serde_json::from_str(&serde_json::to_string(&req).unwrap()).unwrap();
        assert_eq!(back, req);
        for r in [
            Response::ok(1, serde_json::json!({"x": 1})),
            Response::err(2, "agent_blocked", "answer it first"),
        ] {
            let back: Response = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
            assert_eq!(back, r);
        }
        let v = PaneView {
            pane: "%3".into(),
            state: Some("waiting".into()),
            reason: Some("approval".into()),
            ..PaneView::default()
        };
        let back: PaneView = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        assert_eq!(back, v);
    }

    /// Found by the `protocol_parse` fuzz target: a float in `params` must
    /// survive a round trip exactly (serde_json's `float_roundtrip`).
    #[test]
    fn fuzz_regression_float_params_round_trip() {
        let line = r#"{"id":3,"method":"[4","params":5.55e62}"#;
        let req: Request = serde_json::from_str(line).unwrap();
        let again: Request = serde_json::from_str(&serde_json::to_string(&req).unwrap()).unwrap();
        assert_eq!(again, req);
    }
}
