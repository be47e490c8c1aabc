//! A pane as the daemon shows it: `list`, `get`, `wait`, and the pane
//! inside `explain` and `prompt`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tend_vocab::psp::{Kind, ReportState};
use tend_vocab::{Authority, IdentifiedBy, PaneBand, PaneState, Reason, Tap};

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
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::opt"
    )]
    pub identified_by: Option<IdentifiedBy>,
    /// With `identified_by: screen`, the wrapper the process tree shows
    /// (`ssh`, `docker exec`, `nix develop`, a script's name): its end is
    /// the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper: Option<String>,
    /// State, when an agent is identified and has shown evidence
    /// (`unreachable`: a remote pane whose link is down). A word this
    /// version does not know (a remote's newer tend) reads as absent, and
    /// so do `reason` and `band`'s.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub state: Option<PaneState>,
    /// Waiting reason.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub reason: Option<Reason>,
    /// Attention band.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub band: Option<PaneBand>,
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
    /// else's pipe-pane is on it; in zellij: no client looks at its tab),
    /// `subscribe` (zellij, a tab a client looks at) or `none` yet.
    #[serde(default, deserialize_with = "crate::lenient::or_default")]
    pub tap: Tap,
    /// Who decides the state: `screen`, `report` (an agent reporting with
    /// `tend report`), `relay` (the program's own word through the
    /// terminal, OSC 7501, while `tend run` answers for it; earlier
    /// releases said `psp`), `file` (the session file the agent keeps:
    /// Claude Code's) or `osc` (OSC 7501 reports the agent prints unasked,
    /// while it holds the terminal: Codex's, Mistral Vibe's).
    #[serde(default, deserialize_with = "crate::lenient::or_default")]
    pub authority: Authority,
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
    /// Waiting on its plan's usage limit (`reason: limit`): Unix time the
    /// limit resets, read from the agent's screen; absent when the agent
    /// named no time. Until then the band is `limited` (no demand), after
    /// it `waiting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<i64>,
    /// The words the agent's limit screen says it resets at
    /// (`9:37am (UTC)`, `in 2h 14m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_words: Option<String>,
}

/// One subtask of a pane's program (an OSC 7501 child record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskView {
    /// Its id (`id=`), as the program named it.
    pub id: String,
    /// `working`, `blocked`, `idle`, `done` or `error`.
    pub state: ReportState,
    /// What it waits on, when blocked: `permission`, `question`, `auth`
    /// (`other`: a kind this version does not know).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::lenient::opt"
    )]
    pub kind: Option<Kind>,
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
