//! The agent's own word in a file: Claude Code's session file.
//!
//! Each interactive `claude` keeps `<config>/sessions/<pid>.json` while it
//! runs (`<config>` is `$CLAUDE_CONFIG_DIR`, else `~/.claude`), rewrites it
//! whenever its status changes, and removes it when it exits. Read from
//! Claude Code 2.1.332 (`detector/tests/session_files/`, captured with
//! `tools/agentlab/session_capture.py`), one file holds:
//!
//! ```json
//! {"pid":24849,"sessionId":"…","cwd":"/home/u/work","startedAt":1796537525052,
//!  "procStart":"40196","version":"2.1.332","kind":"interactive","entrypoint":"cli",
//!  "name":"work-58","status":"waiting","waitingFor":"permission prompt",
//!  "updatedAt":1796537531211,"statusUpdatedAt":1796537531211, …}
//! ```
//!
//! * `status` is `busy` (a turn runs), `shell` (the turn's text is over
//!   but a background shell it started still runs), `waiting` (on the
//!   user: `waitingFor` says on what) or `idle` (at its prompt). The very
//!   first write, ~0.2 s before the first `idle`, has no `status` yet.
//! * `waitingFor` is `permission prompt`, `sandbox request`,
//!   `worker request`, `goal proposal` (Claude Code's own table reads all
//!   four as a permission), `input needed` (a question) or `dialog open`
//!   (any other dialog).
//! * `procStart` tells a reused pid apart: on Linux the process's start
//!   time in clock ticks after boot, as `/proc/<pid>/stat`'s 22nd field
//!   says it (the CLI reads it from there); elsewhere the date
//!   `ps -o lstart=` prints, which this module does not read.
//! * The file is written on every change of status and of a few other
//!   fields, never as a heartbeat: a dialog left open for a minute leaves
//!   the file a minute old. Its age says nothing; the process's life does.
//!
//! The format is not documented and has changed before (older releases
//! wrote only `busy` and `idle`), so the reading is strict: a file that is
//! too long, is not a JSON object, lacks a field this module needs, or
//! names a status it does not know is [`Rejected`], with the version the
//! file names so that `tend doctor` can say which release it did not
//! understand. A rejected file is never a state.
//!
//! This module is pure: the daemon reads the bytes (bounded by
//! [`MAX_FILE`], from a file it has checked it may trust) and the core
//! ties a file to a pane ([`tie`]) and reads it as a state ([`Follower`]).
//! The same parse serves anything else that wants the session's id and
//! folder (`tend restore`).

use std::fmt;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::psp::{clean_text, Reading, ReportState, Task};
use crate::state::{Reason, State};

/// Longest session file read: Claude Code's are under 1 KiB; a longer one
/// is not read as one.
pub const MAX_FILE: usize = 64 * 1024;

/// Longest `sessionId`.
pub const MAX_SESSION_ID: usize = 128;
/// Longest `cwd`.
pub const MAX_CWD: usize = 4096;
/// Longest text kept of `name`, `waitingFor` and `version`.
pub const MAX_WORDS: usize = 256;

/// The session's status, as the file names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A turn runs.
    Busy,
    /// The turn's text is over, a background shell it started still runs.
    Shell,
    /// At its prompt.
    Idle,
    /// Waiting on the user (`waitingFor` says on what).
    Waiting,
}

impl Status {
    /// The word in the file.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Busy => "busy",
            Status::Shell => "shell",
            Status::Idle => "idle",
            Status::Waiting => "waiting",
        }
    }

    fn parse(s: &str) -> Option<Status> {
        Some(match s {
            "busy" => Status::Busy,
            "shell" => Status::Shell,
            "idle" => Status::Idle,
            "waiting" => Status::Waiting,
            _ => return None,
        })
    }
}

/// What kind of session wrote the file. Only an `interactive` one is a
/// user's agent in a pane; the others are Claude Code's own background
/// workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// `claude` at a terminal.
    Interactive,
    /// A background session.
    Bg,
    /// Its daemon.
    Daemon,
    /// A daemon's worker.
    DaemonWorker,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "interactive" => Kind::Interactive,
            "bg" => Kind::Bg,
            "daemon" => Kind::Daemon,
            "daemon-worker" => Kind::DaemonWorker,
            _ => return None,
        })
    }
}

/// One session file, as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionFile {
    /// The process that writes it.
    pub pid: u32,
    /// When that process started, as the file says it (see the module's
    /// doc): compared with the process's own start by [`tie`].
    pub proc_start: String,
    /// The conversation's id (`claude --resume <id>`).
    pub session_id: String,
    /// The folder the session runs in.
    pub cwd: String,
    /// The release that wrote the file.
    pub version: String,
    /// What kind of session.
    pub kind: Kind,
    /// Its status; `None` in the very first write.
    pub status: Option<Status>,
    /// What it waits on, with [`Status::Waiting`] (shown text).
    pub waiting_for: Option<String>,
    /// The session's name (shown text).
    pub name: Option<String>,
    /// When the status last changed, Unix milliseconds.
    pub status_updated_at: Option<u64>,
}

/// Why a file was not read as a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum Rejected {
    /// Longer than [`MAX_FILE`].
    TooLong {
        /// Its length, or at least this much.
        bytes: usize,
    },
    /// Not a JSON object.
    NotJson,
    /// A field it needs is missing.
    Missing {
        /// The field.
        field: &'static str,
        /// The version the file names, where it names one.
        version: Option<String>,
    },
    /// A field is of the wrong type or out of its range.
    Invalid {
        /// The field.
        field: &'static str,
        /// The version the file names, where it names one.
        version: Option<String>,
    },
    /// `status` (or `kind`) is a word this module does not know.
    Unknown {
        /// The field.
        field: &'static str,
        /// The word (shown text).
        word: String,
        /// The version the file names, where it names one.
        version: Option<String>,
    },
}

impl Rejected {
    /// The version the rejected file names, where it names one.
    pub fn version(&self) -> Option<&str> {
        match self {
            Rejected::TooLong { .. } | Rejected::NotJson => None,
            Rejected::Missing { version, .. }
            | Rejected::Invalid { version, .. }
            | Rejected::Unknown { version, .. } => version.as_deref(),
        }
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejected::TooLong { bytes } => {
                write!(f, "{bytes} bytes, longer than a session file ({MAX_FILE})")
            }
            Rejected::NotJson => f.write_str("not a JSON object"),
            Rejected::Missing { field, .. } => write!(f, "no `{field}`"),
            Rejected::Invalid { field, .. } => write!(f, "`{field}` is not what it should be"),
            Rejected::Unknown { field, word, .. } => write!(f, "unknown `{field}` `{word}`"),
        }?;
        if let Some(v) = self.version() {
            write!(f, " (written by {v})")?;
        }
        Ok(())
    }
}

/// Reads one session file's bytes, strictly (see the module's doc).
/// Fields it does not use are ignored.
pub fn parse(bytes: &[u8]) -> Result<SessionFile, Rejected> {
    if bytes.len() > MAX_FILE {
        return Err(Rejected::TooLong { bytes: bytes.len() });
    }
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(bytes) else {
        return Err(Rejected::NotJson);
    };
    let version = match map.get("version") {
        Some(Value::String(v)) if !v.is_empty() && v.len() <= MAX_WORDS => {
            Some(clean_text(v, MAX_WORDS))
        }
        _ => None,
    };
    let f = Fields {
        map: &map,
        version: &version,
    };
    let pid = f.number("pid")?;
    let pid = u32::try_from(pid)
        .ok()
        .filter(|p| *p > 1)
        .ok_or_else(|| f.invalid("pid"))?;
    let proc_start = f.text("procStart", 64)?.to_owned();
    let session_id = f.text("sessionId", MAX_SESSION_ID)?.to_owned();
    let cwd = f.text("cwd", MAX_CWD)?.to_owned();
    let Some(version) = version.clone() else {
        return Err(f.missing_or_invalid("version"));
    };
    let kind = f.text("kind", MAX_WORDS)?;
    let kind = Kind::parse(kind).ok_or_else(|| f.unknown("kind", kind))?;
    let status = match map.get("status") {
        None => None,
        Some(Value::String(s)) => Some(Status::parse(s).ok_or_else(|| f.unknown("status", s))?),
        Some(_) => return Err(f.invalid("status")),
    };
    let waiting_for = f.optional_text("waitingFor")?;
    if status == Some(Status::Waiting) && waiting_for.is_none() {
        return Err(f.missing_or_invalid("waitingFor"));
    }
    let status_updated_at = match map.get("statusUpdatedAt") {
        None => None,
        Some(_) => Some(f.number("statusUpdatedAt")?),
    };
    Ok(SessionFile {
        pid,
        proc_start,
        session_id: clean_text(&session_id, MAX_SESSION_ID),
        cwd,
        version,
        kind,
        status,
        waiting_for,
        name: f.optional_text("name")?,
        status_updated_at,
    })
}

/// The fields of one file, and the version to name in a rejection.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    version: &'a Option<String>,
}

impl Fields<'_> {
    fn missing_or_invalid(&self, field: &'static str) -> Rejected {
        if self.map.contains_key(field) {
            self.invalid(field)
        } else {
            Rejected::Missing {
                field,
                version: self.version.clone(),
            }
        }
    }

    fn invalid(&self, field: &'static str) -> Rejected {
        Rejected::Invalid {
            field,
            version: self.version.clone(),
        }
    }

    fn unknown(&self, field: &'static str, word: &str) -> Rejected {
        Rejected::Unknown {
            field,
            word: clean_text(word, 64),
            version: self.version.clone(),
        }
    }

    /// A whole number from 0 to 2^53 (what JSON keeps exactly).
    fn number(&self, field: &'static str) -> Result<u64, Rejected> {
        match self.map.get(field) {
            Some(Value::Number(n)) => n
                .as_u64()
                .filter(|n| *n <= 1 << 53)
                .ok_or_else(|| self.invalid(field)),
            _ => Err(self.missing_or_invalid(field)),
        }
    }

    /// A string of 1 to `max` bytes without control characters.
    fn text(&self, field: &'static str, max: usize) -> Result<&str, Rejected> {
        match self.map.get(field) {
            Some(Value::String(s))
                if !s.is_empty() && s.len() <= max && !s.chars().any(char::is_control) =>
            {
                Ok(s)
            }
            _ => Err(self.missing_or_invalid(field)),
        }
    }

    /// A string shown to the user, when present: cleaned and cut.
    fn optional_text(&self, field: &'static str) -> Result<Option<String>, Rejected> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(clean_text(s, MAX_WORDS)).filter(|s| !s.is_empty())),
            Some(_) => Err(self.invalid(field)),
        }
    }
}

/// The folder under the agent's home (its manifest's `[resume] home`,
/// [`crate::manifest::resume::agent_home`]) that holds its session files.
pub const FOLDER: &str = "sessions";

/// The file a process `pid` keeps in `dir`.
pub fn file_name(pid: u32) -> String {
    format!("{pid}.json")
}

/// Why a file is not tied to a pane's agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Untied {
    /// The file names another process than the pane's agent.
    OtherProcess,
    /// The pid is the agent's, the start time is not: the pid was reused.
    OtherStart,
    /// `procStart` is in a form this module does not read (not Linux's
    /// clock ticks), or the process's start is unknown.
    StartUnknown,
    /// Not an interactive session.
    NotInteractive,
}

impl Untied {
    /// Said in `tend explain`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Untied::OtherProcess => "it names another process",
            Untied::OtherStart => "its process started at another time (a reused pid)",
            Untied::StartUnknown => "its process's start time cannot be compared",
            Untied::NotInteractive => "it is not an interactive session",
        }
    }
}

/// Whether `file` speaks for the pane whose agent process is `pid`,
/// started `start_ticks` clock ticks after boot: the same pid, the same
/// start, an interactive session.
pub fn tie(file: &SessionFile, pid: u32, start_ticks: Option<u64>) -> Result<(), Untied> {
    if file.pid != pid {
        return Err(Untied::OtherProcess);
    }
    if file.kind != Kind::Interactive {
        return Err(Untied::NotInteractive);
    }
    let written = file
        .proc_start
        .parse::<u64>()
        .ok()
        .filter(|_| file.proc_start.bytes().all(|b| b.is_ascii_digit()));
    match (written, start_ticks) {
        (Some(w), Some(s)) if w == s => Ok(()),
        (Some(_), Some(_)) => Err(Untied::OtherStart),
        _ => Err(Untied::StartUnknown),
    }
}

/// Counts of what was read, for `tend doctor` and `tend explain`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Files read as session files.
    pub read: u64,
    /// Files rejected.
    pub rejected: u64,
    /// The last rejection.
    pub last_rejected: Option<Rejected>,
    /// Files not tied to the pane.
    pub untied: u64,
}

/// How long an `idle` straight after `shell` is still read as working:
/// when a background shell ends, Claude Code writes `idle` and, 26 ms
/// later, `busy` again to tell the user the shell's end
/// (`session_files/claude-2.1.332/background.jsonl`). Without the wait,
/// a finished turn would flash `completed` between the two.
pub const SHELL_SETTLE: Duration = Duration::from_millis(300);

/// One pane's session file over time: what it says now, and whether a
/// turn ran since it was first read (an `idle` after one is `completed`).
#[derive(Debug, Clone, Default)]
pub struct Follower {
    file: Option<SessionFile>,
    /// When its status was first read as it is.
    since: Duration,
    /// The status before that.
    before: Option<Status>,
    /// A turn (busy, shell or waiting) was read for this session.
    turn: bool,
    counters: Counters,
}

impl Follower {
    /// A follower that has read nothing.
    pub fn new() -> Follower {
        Follower::default()
    }

    /// The file as last read and tied to the pane.
    pub fn file(&self) -> Option<&SessionFile> {
        self.file.as_ref()
    }

    /// What was read and dropped.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// A read at `now`: the file tied to the pane (or why not), or
    /// rejected. Anything but a tied file forgets what was read: the pane
    /// goes back to the screen at once.
    pub fn apply(&mut self, now: Duration, read: Result<SessionFile, Rejected>, tied: bool) {
        match read {
            Ok(file) if tied => {
                self.counters.read += 1;
                let same_session = self
                    .file
                    .as_ref()
                    .is_some_and(|f| f.session_id == file.session_id && f.pid == file.pid);
                if !same_session {
                    self.turn = false;
                }
                if matches!(
                    file.status,
                    Some(Status::Busy | Status::Shell | Status::Waiting)
                ) {
                    self.turn = true;
                }
                let moved = self.file.as_ref().map(|f| (f.status, &f.waiting_for))
                    != Some((file.status, &file.waiting_for));
                if moved || !same_session {
                    self.since = now;
                    self.before = self.file.as_ref().and_then(|f| f.status);
                }
                self.file = Some(file);
            }
            Ok(_) => {
                self.counters.read += 1;
                self.counters.untied += 1;
                self.forget();
            }
            Err(why) => {
                self.counters.rejected += 1;
                self.counters.last_rejected = Some(why);
                self.forget();
            }
        }
    }

    /// The file is gone, or no longer the pane's: the screen decides again.
    pub fn forget(&mut self) {
        self.file = None;
        self.turn = false;
        self.before = None;
    }

    /// When [`Follower::reading`] next changes without a new read: the end
    /// of an `idle` held after `shell` ([`SHELL_SETTLE`]).
    pub fn next_deadline(&self) -> Option<Duration> {
        self.settling().then_some(self.since + SHELL_SETTLE)
    }

    fn settling(&self) -> bool {
        self.before == Some(Status::Shell)
            && self.file.as_ref().and_then(|f| f.status) == Some(Status::Idle)
    }

    /// The file read as a state, in the same shape as the program's OSC
    /// 7501 word: `busy` working, `shell` working with a live task,
    /// `waiting` waiting with its reason and the agent's words as the
    /// message, `idle` completed after a turn and idle before one —
    /// unless `screen_completed` (the screen read a finished turn before
    /// the file was first read, e.g. when the daemon started after it).
    /// An `idle` straight after `shell` is working until [`SHELL_SETTLE`]
    /// has passed at `now`. `None` while the file names no status.
    pub fn reading(&self, now: Duration, screen_completed: bool) -> Option<Reading> {
        let file = self.file.as_ref()?;
        let status = file.status?;
        let held = self.settling() && now < self.since + SHELL_SETTLE;
        let (state, reason) = match status {
            Status::Busy | Status::Shell => (State::Working, None),
            Status::Idle if held => (State::Working, None),
            Status::Waiting => (
                State::Waiting,
                Some(waiting_reason(file.waiting_for.as_deref())),
            ),
            Status::Idle if self.turn || screen_completed => (State::Completed, None),
            Status::Idle => (State::Idle, None),
        };
        let tasks = if status == Status::Shell {
            vec![Task {
                id: "shell".to_owned(),
                state: ReportState::Working,
                kind: None,
                title: Some("background shell".to_owned()),
                message: None,
                progress: None,
                live: true,
            }]
        } else {
            Vec::new()
        };
        let rule = match &file.waiting_for {
            Some(w) if status == Status::Waiting => format!("file/waiting:{w}"),
            _ if held => "file/idle-after-shell".to_owned(),
            _ => format!("file/{}", status.as_str()),
        };
        Some(Reading {
            state,
            reason,
            rule,
            message: file
                .waiting_for
                .clone()
                .filter(|_| status == Status::Waiting),
            app: None,
            live_tasks: tasks.len(),
            tasks,
            since: self.since,
        })
    }
}

/// What a `waitingFor` asks of the user, as Claude Code's own table reads
/// it: a permission (approval), input (a question), or another dialog
/// (prompt, as an unverified dialog reads).
pub fn waiting_reason(waiting_for: Option<&str>) -> Reason {
    match waiting_for {
        Some("permission prompt" | "sandbox request" | "worker request" | "goal proposal") => {
            Reason::Approval
        }
        Some("input needed") => Reason::Question,
        _ => Reason::Prompt,
    }
}

#[cfg(test)]
mod tests;
