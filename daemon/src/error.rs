//! Errors for people: what happened, and what to do; and the one place
//! that writes a sentence to stderr ([`say!`](crate::say)).

use std::fmt;
use std::io::Write;

/// Writes `tend: <sentence>` to stderr, the one way tend's daemon and
/// commands speak there (the daemon's stderr is its log file). A failed
/// write is dropped: there is nowhere else to say it.
pub fn say(sentence: fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "tend: {sentence}");
}

/// `say!("remote {name} is up")`: a sentence on stderr after `tend: `
/// ([`say`]).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::error::say(format_args!($($arg)*))
    };
}

/// What kind of failure an error is: its stable code under `--json`
/// ([`ErrorKind::as_str`]), which scripts match on. The sentence for
/// people is the error's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `io`.
    Io,
    /// `bad_config`.
    BadConfig,
    /// `tmux`.
    Tmux,
    /// `no_daemon`.
    NoDaemon,
    /// `exe`.
    Exe,
    /// `bad_request`.
    BadRequest,
    /// `manifests`.
    Manifests,
    /// `unknown_agent`.
    UnknownAgent,
    /// `hooks_write_failed`.
    HooksWriteFailed,
    /// `bind`.
    Bind,
    /// `signal`.
    Signal,
    /// `bad_recording`.
    BadRecording,
    /// `spawn`.
    Spawn,
    /// `dir_not_empty`.
    DirNotEmpty,
    /// `log`.
    Log,
    /// `start_failed`.
    StartFailed,
    /// `bad_remote`.
    BadRemote,
    /// `bad_key`.
    BadKey,
    /// `already_running`.
    AlreadyRunning,
    /// `runtime`.
    Runtime,
    /// `pipes`.
    Pipes,
    /// `timeout`.
    Timeout,
    /// `bad_response`.
    BadResponse,
    /// `missing_agent`.
    MissingAgent,
    /// `bad_answer`.
    BadAnswer,
    /// `daemon_gone`.
    DaemonGone,
    /// `tap`.
    Tap,
    /// `no_tmux`.
    NoTmux,
    /// `doctor`.
    Doctor,
    /// `bad_procs`.
    BadProcs,
    /// `duplicate_remote`.
    DuplicateRemote,
    /// `unknown_remote`.
    UnknownRemote,
    /// `hooks_internal`.
    HooksInternal,
    /// `no_home`.
    NoHome,
    /// `hooks_config_invalid`.
    HooksConfigInvalid,
    /// `file_unreadable`.
    FileUnreadable,
    /// `file_not_found`.
    FileNotFound,
    /// `unsafe_dir`.
    UnsafeDir,
    /// `runtime_dir`.
    RuntimeDir,
    /// `state_dir`.
    StateDir,
    /// The daemon refused a request: its own code.
    Daemon(tend_protocol::ErrorCode),
}

impl ErrorKind {
    /// The stable code. A daemon's refusal keeps the daemon's code, but for
    /// the zellij-only ones, which older clients know as `daemon_error`.
    pub fn as_str(self) -> &'static str {
        use tend_protocol::ErrorCode;
        match self {
            ErrorKind::Io => "io",
            ErrorKind::BadConfig => "bad_config",
            ErrorKind::Tmux => "tmux",
            ErrorKind::NoDaemon => "no_daemon",
            ErrorKind::Exe => "exe",
            ErrorKind::BadRequest => "bad_request",
            ErrorKind::Manifests => "manifests",
            ErrorKind::UnknownAgent => "unknown_agent",
            ErrorKind::HooksWriteFailed => "hooks_write_failed",
            ErrorKind::Bind => "bind",
            ErrorKind::Signal => "signal",
            ErrorKind::BadRecording => "bad_recording",
            ErrorKind::Spawn => "spawn",
            ErrorKind::DirNotEmpty => "dir_not_empty",
            ErrorKind::Log => "log",
            ErrorKind::StartFailed => "start_failed",
            ErrorKind::BadRemote => "bad_remote",
            ErrorKind::BadKey => "bad_key",
            ErrorKind::AlreadyRunning => "already_running",
            ErrorKind::Runtime => "runtime",
            ErrorKind::Pipes => "pipes",
            ErrorKind::Timeout => "timeout",
            ErrorKind::BadResponse => "bad_response",
            ErrorKind::MissingAgent => "missing_agent",
            ErrorKind::BadAnswer => "bad_answer",
            ErrorKind::DaemonGone => "daemon_gone",
            ErrorKind::Tap => "tap",
            ErrorKind::NoTmux => "no_tmux",
            ErrorKind::Doctor => "doctor",
            ErrorKind::BadProcs => "bad_procs",
            ErrorKind::DuplicateRemote => "duplicate_remote",
            ErrorKind::UnknownRemote => "unknown_remote",
            ErrorKind::HooksInternal => "hooks_internal",
            ErrorKind::NoHome => "no_home",
            ErrorKind::HooksConfigInvalid => "hooks_config_invalid",
            ErrorKind::FileUnreadable => "file_unreadable",
            ErrorKind::FileNotFound => "file_not_found",
            ErrorKind::UnsafeDir => "unsafe_dir",
            ErrorKind::RuntimeDir => "runtime_dir",
            ErrorKind::StateDir => "state_dir",
            ErrorKind::Daemon(
                ErrorCode::Zellij | ErrorCode::NotSeeded | ErrorCode::NotInZellij,
            ) => ErrorCode::DaemonError.as_str(),
            ErrorKind::Daemon(code) => code.as_str(),
        }
    }
}

/// A failure with a kind (its stable machine-readable code, for `--json`)
/// and a message that says what happened and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// What happened and what to do.
    pub message: String,
}

impl CliError {
    /// A new error.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CliError {
            kind,
            message: message.into(),
        }
    }

    /// The stable code of its kind, e.g. `file_not_found`, `bad_recording`.
    pub fn code(&self) -> &'static str {
        self.kind.as_str()
    }

    /// The JSON form printed under `--json`.
    pub fn to_json(&self) -> String {
        serde_json::json!({"error": {"code": self.code(), "message": self.message}}).to_string()
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// Reads a file, with an error that names it and the fix.
pub fn read_file(path: &std::path::Path) -> Result<String, CliError> {
    let bytes = std::fs::read(path).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorKind::FileNotFound
        } else {
            ErrorKind::FileUnreadable
        };
        CliError::new(code, format!("cannot read {}: {e}", path.display()))
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The most characters of the user's text (a value, a line of a file) an
/// error quotes: a 10 MB line makes a short message, not a 30 MB one.
pub const EXCERPT_CHARS: usize = 200;

/// `text` cut to at most `max` characters, on a character boundary, with
/// `…` where it was cut.
pub fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// `text` as a quoted string (`"#(touch x)"`, control characters escaped),
/// cut to [`EXCERPT_CHARS`] first.
pub fn quoted(text: &str) -> String {
    format!("{:?}", excerpt(text, EXCERPT_CHARS))
}

/// A message written elsewhere (a parser's) that may quote the user's
/// text: each run between backticks or double quotes is cut to
/// [`EXCERPT_CHARS`], and the whole to four times that.
pub fn bound_quotes(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4 * EXCERPT_CHARS + 16));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let q = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..=open]);
        let inner = &rest[open + 1..];
        let (quoted, after) = match inner.find(q) {
            Some(close) => (&inner[..close], &inner[close..]),
            None => (inner, ""),
        };
        out.push_str(&excerpt(quoted, EXCERPT_CHARS));
        if let Some(close) = after.chars().next() {
            out.push(close);
            rest = &after[close.len_utf8()..];
        } else {
            rest = "";
        }
        if out.chars().count() > 4 * EXCERPT_CHARS {
            break;
        }
    }
    out.push_str(rest);
    excerpt(&out, 4 * EXCERPT_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_cut_on_a_character_boundary() {
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd", 3), "abc…");
        assert_eq!(excerpt("ééééé", 2), "éé…");
        assert_eq!(excerpt("", 0), "");
        assert_eq!(quoted("it's \"x\"\n"), "\"it's \\\"x\\\"\\n\"");
        let long = "🦀".repeat(10_000);
        assert_eq!(quoted(&long).chars().count(), EXCERPT_CHARS + 3);
    }

    #[test]
    fn quoted_runs_in_a_message_are_bounded() {
        assert_eq!(
            bound_quotes("unknown field `x`, expected `a` or \"b\""),
            "unknown field `x`, expected `a` or \"b\""
        );
        let v = "x".repeat(10_000_000);
        let m = bound_quotes(&format!("`{v}` does not start with a number"));
        assert_eq!(
            m,
            format!(
                "`{}…` does not start with a number",
                "x".repeat(EXCERPT_CHARS)
            )
        );
        // An unclosed quote, and a message long without quotes.
        assert_eq!(
            bound_quotes(&format!("bad \"{v}")),
            format!("bad \"{}…", "x".repeat(EXCERPT_CHARS))
        );
        assert_eq!(bound_quotes(&v).chars().count(), 4 * EXCERPT_CHARS + 1);
        let many = format!("`{v}` ").repeat(20);
        assert!(bound_quotes(&many).chars().count() <= 4 * EXCERPT_CHARS + 1);
    }
}
