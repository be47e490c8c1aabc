//! What each method answers on success, one type per answer.
//!
//! The daemon hands any of them back as a [`Reply`]; a client knows which
//! one to expect from the method it called ([`crate::Call::Reply`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::event::{BusEvent, StatusChanged};
use crate::explain::Explained;
use crate::pane::PaneView;

/// `ping`: the daemon is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Pong {
    /// [`crate::PROTOCOL_VERSION`] of the daemon.
    pub protocol: u32,
    /// tend's version (`0.1.0`).
    pub version: String,
    /// The daemon's process id.
    pub pid: u32,
    /// How many panes it watches on this machine.
    pub panes: usize,
    /// `tmux` or `zellij`.
    pub backend: String,
}

/// `remotes`: one remote's link (`tend remote list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Link {
    /// The remote's name in `config.toml`.
    pub name: String,
    /// Where ssh goes (`build-box`, `me@10.0.0.5`).
    pub dest: String,
    /// `connecting`, `up` or `unreachable`.
    pub state: tend_vocab::LinkState,
    /// The last error (ssh's last line, or what went wrong with the feed).
    pub error: Option<String>,
    /// Unix time of the last state change.
    pub since: f64,
    /// How many times ssh was started.
    pub attempts: u64,
    /// How many agent panes the last snapshot listed.
    pub agents: usize,
    /// The remote's host name.
    pub hostname: Option<String>,
    /// The remote tmux server's socket.
    pub tmux_socket: Option<String>,
    /// The tail of ssh's stderr.
    pub stderr: String,
    /// Panes the last snapshot listed that were left out (bad ids, too
    /// many).
    pub dropped: usize,
}

/// `remotes_reload`: how many remotes the configuration names now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Reloaded {
    /// The number of remotes.
    pub remotes: usize,
}

/// `goto`: the pane the client was moved to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Moved {
    /// The pane, as asked.
    pub pane: String,
}

/// `status`: the summary the status line shows, and its counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Overview {
    /// Agents watched, remotes' included.
    pub agents: usize,
    /// How many need the user (blocked, waiting, ready for review).
    pub needs: usize,
    /// How many have gone quiet.
    pub quiet: usize,
    /// `2 agents need you · 1 agent has gone quiet`; empty when nothing
    /// needs the user.
    pub summary: String,
}

/// `next`: where to go, and the order it was chosen from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    /// The pane to go to.
    pub pane: String,
    /// The candidates, in the order visited.
    pub order: Vec<String>,
}

/// `capture`: a pane's recent output and tend's states, as the files of a
/// test case in the corpus layout (`tests/corpus/README.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Captured {
    /// The pane.
    pub pane: String,
    /// Its agent.
    pub agent: String,
    /// The state it read.
    pub state: Option<tend_vocab::State>,
    /// The reason, with waiting.
    pub reason: Option<tend_vocab::Reason>,
    /// `COLSxROWS` of the recording.
    pub size: String,
    /// How many seconds of output the recording holds.
    pub seconds: f64,
    /// How many times the bounded tape wrapped (more than 0: the recording
    /// starts from tend's redraw of the screen).
    pub wraps: u64,
    /// The files' text by name: `pane.cast`, `snapshots.jsonl`,
    /// `procs.jsonl`, `labels.json`, `meta.json`.
    pub files: BTreeMap<String, String>,
}

/// `read`: the pane's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Text {
    /// The pane.
    pub pane: String,
    /// The visible screen, or its last lines with history.
    pub text: String,
}

/// `stop`: the daemon stops after answering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Stopping {
    /// Always true.
    pub stopping: bool,
}

/// An answer with nothing to say (`poke`, and `guard`'s acknowledgement).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Empty {}

/// A pending stop flag, as the agent's inbox shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StopFlag {
    /// Why, in the words of whoever asked.
    pub reason: String,
    /// Who asked (`user`, a pane id, a script's name).
    pub set_by: String,
    /// When it was set (Unix seconds).
    pub set_at: u64,
    /// When the agent first read it.
    #[serde(default)]
    pub read_at: Option<u64>,
}

/// `report`: the report was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Reported {
    /// The lifecycle shown before (none: no report yet).
    pub from: Option<tend_vocab::Lifecycle>,
    /// The lifecycle shown now (`working`, `handing-over`).
    pub to: tend_vocab::Lifecycle,
    /// The sequence number taken.
    pub seq: u64,
    /// A stop flag waiting for the agent, which this report has read.
    pub stop: Option<StopFlag>,
    /// What happened to the flag, each in Rust's debug notation
    /// (`Read { pane: "%3", at: 1800000000 }`).
    pub flag_events: Vec<String>,
}

/// `release`: whether the pane had a self-report to drop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Released {
    /// It had one.
    pub released: bool,
}

/// `report_metadata`: the label now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Labelled {
    /// The label (none: cleared).
    pub label: Option<String>,
}

/// `stop_request`: the flag is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FlagSet {
    /// It replaced a flag that was pending.
    pub replaced: bool,
}

/// `inbox`: the agent's pending stop flag, now marked read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Flags {
    /// The flag, if one is pending.
    pub stop: Option<StopFlag>,
}

/// `ack`: what happened to the flag, in Rust's debug notation
/// (`Acknowledged { pane: "%3", at: 1800000000, via: Command }`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Acknowledged(pub String);

/// `park`: the pane parked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Parked {
    /// The pane, in the multiplexer's spelling.
    pub parked: String,
}

/// `unpark`: whether the pane was parked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Unparked {
    /// It was.
    pub unparked: bool,
}

/// `snooze`: the pane snoozed, and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Snoozed {
    /// The pane, in the multiplexer's spelling.
    pub snoozed: String,
    /// Unix time the snooze ends (none: until the user types into it).
    pub until: Option<u64>,
}

/// `unsnooze`: whether the pane was snoozed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Unsnoozed {
    /// It was.
    pub unsnoozed: bool,
}

/// `prompt` (without `wait`): the prompt was handed to the multiplexer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Prompted {
    /// Always true.
    pub sent: bool,
    /// The pane's `state_change_seq` when it was sent: a later change is
    /// the agent's reaction.
    pub state_change_seq: u64,
    /// The agent run it was sent to.
    pub run: u64,
    /// The pane as it was.
    pub pane: PaneView,
}

/// `answer`: the dialog, and the keys sent (or, with `dry_run`, that would
/// be).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Answered {
    /// The pane.
    pub pane: String,
    /// The agent whose manifest named the keys.
    pub agent: String,
    /// `approve` or `deny`.
    pub action: String,
    /// The rule that found the dialog.
    pub rule: String,
    /// The dialog's lines, as on the screen.
    pub dialog: Vec<String>,
    /// The keys, as tmux names them.
    pub keys: Vec<String>,
    /// Whether they were sent (false with `dry_run`).
    pub sent: bool,
}

/// `resume`: what went into the pane at its usage limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Resumed {
    /// The pane.
    pub pane: String,
    /// The agent whose limit it was.
    pub agent: String,
    /// The text pasted (and Enter), when the limit screen takes text.
    pub text: Option<String>,
    /// The keys sent instead, when the limit screen is a dialog (Gemini
    /// CLI's "Keep trying").
    pub keys: Vec<String>,
}

/// `send_keys`: the keys were handed to the multiplexer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Sent {
    /// Always true.
    pub sent: bool,
}

/// `events`: the acknowledgement before the stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Subscribed {
    /// Always true.
    pub subscribed: bool,
}

/// `wait` (and `prompt` with `wait`): what ended the wait.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(untagged)]
pub enum Waited {
    /// The status change that matched: the bus event as it was published
    /// (`event: pane.agent_status_changed` included).
    Changed(Box<StatusChanged>),
    /// The pane as it was: it matched when the wait began.
    Already(Box<PaneView>),
}

impl Waited {
    /// The state it ended in.
    pub fn state(&self) -> Option<tend_vocab::PaneState> {
        match self {
            Waited::Changed(c) => c.state,
            Waited::Already(p) => p.state,
        }
    }

    /// The reason, with waiting.
    pub fn reason(&self) -> Option<tend_vocab::Reason> {
        match self {
            Waited::Changed(c) => c.reason,
            Waited::Already(p) => p.reason,
        }
    }
}

/// The event form of a status change, borrowed.
#[derive(Serialize)]
#[serde(tag = "event")]
enum ChangedRef<'a> {
    #[serde(rename = "pane.agent_status_changed")]
    Changed(&'a StatusChanged),
}

impl Serialize for Waited {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Waited::Changed(c) => ChangedRef::Changed(c).serialize(s),
            Waited::Already(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Waited {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_json::Value::deserialize(d)?;
        if v.get("event").is_some() {
            match serde_json::from_value(v).map_err(D::Error::custom)? {
                BusEvent::StatusChanged(c) => Ok(Waited::Changed(c)),
                other => Err(D::Error::custom(format!(
                    "a wait ends on a status change, not on {}",
                    other.kind()
                ))),
            }
        } else {
            serde_json::from_value(v)
                .map(|p| Waited::Already(Box::new(p)))
                .map_err(D::Error::custom)
        }
    }
}

/// `prompt`: sent, or (with `wait`) what the wait ended on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PromptReply {
    /// With `wait`: the change that ended it.
    Settled(Waited),
    /// Without: sent.
    Sent(Box<Prompted>),
}

/// `restore`: every run left running when its server ended, and what the
/// restore did (or would do) with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Restored {
    /// One per run, oldest first.
    pub conversations: Vec<Restorable>,
    /// Runs a restore started again before (never a second time).
    pub resumed_before: usize,
    /// Nothing was done (`dry_run`).
    pub dry_run: bool,
}

/// One run a restore looked at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Restorable {
    /// The agent (`claude`).
    pub agent: String,
    /// Its name (`Claude Code`).
    pub name: String,
    /// The agent's own id of the conversation, where it named one.
    pub id: Option<String>,
    /// The folder it ran in.
    pub folder: String,
    /// Where its pane was: `session:window.pane` by index.
    pub place: String,
    /// The window's name there.
    pub window_name: String,
    /// The command line it was started with.
    pub argv: Vec<String>,
    /// Unix seconds it was last seen running.
    pub seen: u64,
    /// The command that resumes it, as words (absent when skipped).
    pub command: Option<Vec<String>>,
    /// Where the command goes: `work:1.0`, or `a new window in work`.
    pub target: Option<String>,
    /// The restore acted on it (chosen, and not a dry run).
    pub started: bool,
    /// Why it cannot be resumed.
    pub skipped: Option<String>,
}

/// Any method's answer, as the daemon hands it to the socket.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Reply {
    /// `ping`.
    Pong(Pong),
    /// `list`.
    Panes(Vec<PaneView>),
    /// `get`.
    Pane(Box<PaneView>),
    /// `remotes`.
    Links(Vec<Link>),
    /// `remotes_reload`.
    Reloaded(Reloaded),
    /// `goto`.
    Moved(Moved),
    /// `status`.
    Overview(Overview),
    /// `next`.
    Target(Target),
    /// `capture`.
    Captured(Box<Captured>),
    /// `explain`.
    Explained(Box<Explained>),
    /// `read`.
    Text(Text),
    /// `stop`.
    Stopping(Stopping),
    /// `poke`, `guard`.
    Empty(Empty),
    /// `report`.
    Reported(Reported),
    /// `release`.
    Released(Released),
    /// `report_metadata`.
    Labelled(Labelled),
    /// `stop_request`.
    FlagSet(FlagSet),
    /// `inbox`.
    Flags(Flags),
    /// `ack`.
    Acknowledged(Acknowledged),
    /// `park`.
    Parked(Parked),
    /// `unpark`.
    Unparked(Unparked),
    /// `snooze`.
    Snoozed(Snoozed),
    /// `unsnooze`.
    Unsnoozed(Unsnoozed),
    /// `prompt`.
    Prompted(Box<Prompted>),
    /// `answer`.
    Answered(Answered),
    /// `resume`.
    Resumed(Resumed),
    /// `send_keys`.
    Sent(Sent),
    /// `events`.
    Subscribed(Subscribed),
    /// `wait`, `prompt` with `wait`.
    Waited(Waited),
    /// `restore`.
    Restored(Restored),
}

/// `impl From<T> for Reply` for each answer type.
macro_rules! into_reply {
    ($($ty:ty => $variant:ident $(($wrap:path))?;)*) => {$(
        impl From<$ty> for Reply {
            fn from(r: $ty) -> Reply {
                Reply::$variant($($wrap)?(r))
            }
        }
    )*};
}

into_reply! {
    Pong => Pong;
    Vec<PaneView> => Panes;
    PaneView => Pane(Box::new);
    Vec<Link> => Links;
    Reloaded => Reloaded;
    Moved => Moved;
    Overview => Overview;
    Target => Target;
    Captured => Captured(Box::new);
    Explained => Explained(Box::new);
    Text => Text;
    Stopping => Stopping;
    Empty => Empty;
    Reported => Reported;
    Released => Released;
    Labelled => Labelled;
    FlagSet => FlagSet;
    Flags => Flags;
    Acknowledged => Acknowledged;
    Parked => Parked;
    Unparked => Unparked;
    Snoozed => Snoozed;
    Unsnoozed => Unsnoozed;
    Prompted => Prompted(Box::new);
    Answered => Answered;
    Resumed => Resumed;
    Sent => Sent;
    Subscribed => Subscribed;
    Waited => Waited;
    Restored => Restored;
}
