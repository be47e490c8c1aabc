//! The parameters of each method, one type per method (named after it).
//!
//! Every field is read leniently (see the crate's `lenient` module): a
//! missing field, or one of the wrong type, is absent. What a method does
//! with an absent field is said on the field.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Declares methods whose only parameter is the pane.
macro_rules! pane_only {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        pub struct $name {
            /// The pane: `%3` in tmux, `terminal_3` (or `3`) in zellij.
            #[serde(default, deserialize_with = "crate::lenient::text")]
            pub pane: String,
        }
    )*};
}

/// Declares methods without parameters.
macro_rules! no_params {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        pub struct $name {}
    )*};
}

no_params! {
    /// `ping`: is the daemon there, and which protocol does it speak.
    Ping;
    /// `list`: every pane, this machine's and the remotes'.
    List;
    /// `remotes`: each remote's link.
    Remotes;
    /// `remotes_reload`: read the remotes in `config.toml` again.
    RemotesReload;
    /// `status`: the summary sentence and its counts.
    Status;
    /// `stop`: stop the daemon.
    Stop;
}

pane_only! {
    /// `get`: one pane's view.
    Get;
    /// `capture`: the pane's recent output and tend's states, as the files
    /// of a test case.
    Capture;
    /// `explain`: why the pane is in its state.
    Explain;
    /// `release`: drop the pane's self-report; the screen decides again.
    Release;
    /// `inbox`: the agent reads its stop flag.
    Inbox;
    /// `ack`: the agent acknowledges its stop flag.
    Ack;
    /// `unpark`: end the pane's park.
    Unpark;
    /// `unsnooze`: end the pane's snooze.
    Unsnooze;
}

/// `poke`: a tmux hook fired; look at the panes again now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Poke {
    /// The hook's words, as tmux passed them (not read by the daemon).
    #[serde(default, deserialize_with = "crate::lenient::strings")]
    pub event: Vec<String>,
}

/// `goto`: move a client to a pane (a remote's: open its window).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Goto {
    /// The pane, `%3` or `build-box:%3`.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// The tmux client to move; absent: the most recent one.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub client: Option<String>,
}

/// `next`: the pane to go to next, in attention order; `jump` goes there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Next {
    /// `waiting` (absent: the panes that need the user), `working`, `agent`
    /// (every agent by pane number) or `session` (those that need the user
    /// in the session of `from`, else of `session`).
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub kind: Option<String>,
    /// The pane to start after, so that repeated calls cycle.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub from: Option<String>,
    /// Move this client there (absent: the most recent).
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub client: Option<String>,
    /// Move the client, not only name the pane.
    #[serde(default, deserialize_with = "crate::lenient::flag")]
    pub jump: bool,
    /// With `kind: session`, the session when `from` names none.
    #[serde(
        default,
        deserialize_with = "crate::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub session: Option<String>,
}

/// `read`: the pane's text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Read {
    /// The pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// The last this many lines of the screen and its history (at most
    /// 100 000); absent or 0: the visible screen.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub lines: Option<u64>,
}

/// `report`: an agent posts its own state (`tend report`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// The pane the agent runs in.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// A lifecycle state: `up`, `working`, `merging`, `idle`, `waiting`,
    /// `stuck`, `warning`, `stopped`, `handing-over`, `done`.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub state: String,
    /// With `waiting`: `approval`, `question`, `error`, `prompt` or `work`.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub reason: Option<String>,
    /// Status text shown with the state.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub message: Option<String>,
    /// A lease (`30s`, `10m`): nothing posted for twice this long makes the
    /// pane gone, or quiet while it shows other signs of life.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub every: Option<String>,
    /// Increasing across reports (`tend report` sends wall-clock
    /// microseconds); an older one is refused.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub seq: Option<u64>,
    /// Acknowledge a pending stop flag with this report.
    #[serde(default, deserialize_with = "crate::lenient::flag")]
    pub ack: bool,
    /// Panes this agent started: it reads dispatching while they live.
    /// Absent: no change.
    #[serde(
        default,
        deserialize_with = "crate::lenient::opt_strings",
        skip_serializing_if = "Option::is_none"
    )]
    pub dispatches: Option<Vec<String>>,
    /// The agent's id; absent: the one identified in the pane.
    #[serde(
        default,
        deserialize_with = "crate::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub agent: Option<String>,
}

/// `report_metadata`: the pane's display label (never affects state).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReportMetadata {
    /// The pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// The label; absent or empty clears it.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub label: Option<String>,
}

/// `stop_request`: ask the pane's agent to stop (a stop flag it must read
/// and acknowledge).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StopRequest {
    /// The agent's pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// Why, in the asker's words.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub reason: String,
    /// Who asks (`user`, a pane id); absent: `user`.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub by: Option<String>,
}

/// `park`: shelve the pane, with a note, maybe until another pane finishes
/// a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Park {
    /// The pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// The note, in the user's words.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub note: String,
    /// The pane whose next finished turn (or death) releases the park.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub gate: Option<String>,
}

/// `snooze`: hide the pane's demands for a while.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Snooze {
    /// The pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// `15m`, `30m`, `6h` or `unlimited`; absent: `30m`.
    #[serde(rename = "for", default, deserialize_with = "crate::lenient::opt")]
    pub length: Option<String>,
}

/// `prompt`: paste text into the agent and press Enter; refused while it
/// waits for an approval or an answer, or has a stop flag pending.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Prompt {
    /// The pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// The prompt (sent as a bracketed paste).
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub text: String,
    /// Press Enter after the paste; absent: yes.
    #[serde(
        default,
        deserialize_with = "crate::lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub enter: Option<bool>,
    /// Wait for the agent to react (within 5 s) and then for `until`.
    #[serde(default, deserialize_with = "crate::lenient::flag")]
    pub wait: bool,
    /// With `wait`: the states that end it (as [`Wait::until`]).
    #[serde(default, deserialize_with = "crate::lenient::strings")]
    pub until: Vec<String>,
    /// With `wait`: give up after this many milliseconds.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub timeout_ms: Option<u64>,
}

/// `answer`: approve or deny the agent's dialog with the keys its manifest
/// names, after reading the screen again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Answer {
    /// The pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// `approve` or `deny`.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub action: String,
    /// Only say what would be sent (the dialog and the keys).
    #[serde(default, deserialize_with = "crate::lenient::flag")]
    pub dry_run: bool,
}

/// `resume`: after reading the screen again, send the resume text (or the
/// keys of the agent's limit dialog) into a pane whose agent shows its
/// usage limit; refused when it shows something else.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Resume {
    /// The pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// The text; absent: `[limits] resume` of `config.toml`, else
    /// `continue`.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub text: Option<String>,
}

/// `send_keys`: keys, as tmux names them, to any pane.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SendKeys {
    /// The pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// `Enter`, `C-c`, `Escape`, text; at least one.
    #[serde(default, deserialize_with = "crate::lenient::strings")]
    pub keys: Vec<String>,
}

/// `events`: acknowledge, then stream the bus's events (those that match)
/// until the client goes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Events {
    /// Only this pane's events.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub pane: Option<String>,
    /// Only this kind (`pane.agent_status_changed`).
    #[serde(rename = "type", default, deserialize_with = "crate::lenient::opt")]
    pub kind: Option<String>,
    /// Only events with this state.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub state: Option<String>,
}

impl Events {
    /// Whether the subscription wants `ev`: its pane, kind and state, where
    /// it names them.
    pub fn admits(&self, ev: &crate::BusEvent) -> bool {
        self.pane
            .as_deref()
            .is_none_or(|want| ev.pane() == Some(want))
            && self.kind.as_deref().is_none_or(|want| ev.kind() == want)
            && self
                .state
                .as_deref()
                .is_none_or(|want| ev.state().map(|s| s.as_str()) == Some(want))
    }
}

/// `guard`: held open by `tend guard` until the daemon stops (`bye`) or
/// dies (the connection closes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Guard {
    /// Names the guard to the pane table; required.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub token: Option<String>,
}

/// `relay`: held open by `tend run` while it relays, so that the daemon
/// takes the OSC 7501 reports in its pane. The daemon believes the pid
/// the kernel gives for the connection, not anything said here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Relay {}

/// `wait`: until the pane's agent reaches a state (at once when it is in
/// one), pinned to the agent run it started on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Wait {
    /// The pane.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub pane: String,
    /// The states that end the wait: `idle`, `waiting/approval` (a state
    /// and a reason; `waiting:approval` too); empty: idle, completed and
    /// waiting (any reason).
    #[serde(default, deserialize_with = "crate::lenient::strings")]
    pub until: Vec<String>,
    /// Give up after this many milliseconds; absent: never.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub timeout_ms: Option<u64>,
}

/// `restore`: after a server restart, start each agent that ran when the
/// last server ended again in its pane, in its own conversation
/// (`tend restore`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Restore {
    /// Every one that can be.
    #[serde(default, deserialize_with = "crate::lenient::flag")]
    pub all: bool,
    /// Those whose saved place is one of these (`work:1.0`).
    #[serde(default, deserialize_with = "crate::lenient::strings")]
    pub places: Vec<String>,
    /// Say what would be done, do nothing.
    #[serde(default, deserialize_with = "crate::lenient::flag")]
    pub dry_run: bool,
}
