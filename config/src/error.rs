//! Errors for people: what happened, and what to do; and the one place
//! that writes a sentence to stderr ([`say!`](crate::say)).

use std::fmt;
use std::io::Write;

/// Writes `tend: <sentence>` to stderr, the one way tend's daemon and
/// commands speak there (the daemon's stderr is its log file). A failed
/// write is dropped: there is nowhere else to say it.
///
/// Sentences quote text tend did not write (a config file's line, an
/// agent's words, a remote's names), so control characters are shown as
/// escapes, never sent: an OSC 52 in `config.toml` must not write the
/// user's clipboard, nor a `CSI 2J` clear their terminal ([`visible`]).
pub fn say(sentence: fmt::Arguments<'_>) {
    let sentence = sentence.to_string();
    let text = visible(&sentence);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "tend: {text}");
}

/// `text` with every control character but a line break or a tab written
/// as an escape (`\u{1b}`), so that it reaches a terminal as text.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `say!("remote {name} is up")`: a sentence on stderr after `tend: `
/// ([`say`]).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::error::say(format_args!($($arg)*))
    };
}

/// Declares [`ErrorKind`] with each local kind's stable code written once.
macro_rules! error_kinds {
    ($($kind:ident = $code:literal,)*) => {
        /// What kind of failure an error is: its stable code under `--json`
        /// ([`ErrorKind::as_str`]), which scripts match on. The sentence for
        /// people is the error's message.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $(#[doc = concat!("`", $code, "`.")] $kind,)*
            /// The daemon refused a request: its own code.
            Daemon(tend_protocol::ErrorCode),
        }

        impl ErrorKind {
            /// The stable code. A daemon's refusal keeps the daemon's code,
            /// but for the zellij-only ones, which older clients know as
            /// `daemon_error`.
            pub fn as_str(self) -> &'static str {
                use tend_protocol::ErrorCode;
                match self {
                    $(ErrorKind::$kind => $code,)*
                    ErrorKind::Daemon(
                        ErrorCode::Zellij | ErrorCode::NotSeeded | ErrorCode::NotInZellij,
                    ) => ErrorCode::DaemonError.as_str(),
                    ErrorKind::Daemon(code) => code.as_str(),
                }
            }
        }

        /// Every local kind, for tests.
        #[cfg(test)]
        const LOCAL_KINDS: &[ErrorKind] = &[$(ErrorKind::$kind,)*];
    };
}

error_kinds! {
    Io = "io",
    BadConfig = "bad_config",
    Tmux = "tmux",
    NoDaemon = "no_daemon",
    Exe = "exe",
    BadRequest = "bad_request",
    Manifests = "manifests",
    UnknownAgent = "unknown_agent",
    HooksWriteFailed = "hooks_write_failed",
    Bind = "bind",
    Signal = "signal",
    BadRecording = "bad_recording",
    Spawn = "spawn",
    DirNotEmpty = "dir_not_empty",
    Log = "log",
    StartFailed = "start_failed",
    BadRemote = "bad_remote",
    BadKey = "bad_key",
    AlreadyRunning = "already_running",
    Runtime = "runtime",
    Pipes = "pipes",
    Timeout = "timeout",
    BadResponse = "bad_response",
    MissingAgent = "missing_agent",
    BadAnswer = "bad_answer",
    DaemonGone = "daemon_gone",
    Tap = "tap",
    NoTmux = "no_tmux",
    Doctor = "doctor",
    BadProcs = "bad_procs",
    DuplicateRemote = "duplicate_remote",
    UnknownRemote = "unknown_remote",
    HooksInternal = "hooks_internal",
    NoHome = "no_home",
    HooksConfigInvalid = "hooks_config_invalid",
    FileUnreadable = "file_unreadable",
    FileNotFound = "file_not_found",
    UnsafeDir = "unsafe_dir",
    RuntimeDir = "runtime_dir",
    StateDir = "state_dir",
    UnknownPlace = "unknown_place",
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
    /// A new error. Control characters in the message (quoted from a
    /// file, a program, a remote) are kept as escapes ([`visible`]), so
    /// that wherever it is printed — stderr, `tend doctor`, `--json` — it
    /// reaches the terminal as text.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let message = message.into();
        CliError {
            kind,
            message: match visible(&message) {
                std::borrow::Cow::Borrowed(_) => message,
                std::borrow::Cow::Owned(escaped) => escaped,
            },
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
    #[test]
    fn control_characters_in_a_message_reach_the_terminal_as_text() {
        use super::{visible, CliError, ErrorKind};
        let osc52 = "key = \"\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{9b}x\"";
        assert_eq!(
            visible(osc52),
            "key = \"\\u{1b}]52;c;ZXZpbA==\\u{7}\\u{1b}[2J\\u{9b}x\""
        );
        assert_eq!(visible("two\nlines\tand a tab"), "two\nlines\tand a tab");
        let e = CliError::new(ErrorKind::BadConfig, osc52);
        assert!(!e.message.contains('\u{1b}') && !e.message.contains('\u{9b}'));
        assert!(!e.to_json().contains('\u{1b}'));
    }

    use super::*;

    #[test]
    fn every_kind_has_its_own_snake_case_code() {
        let codes: Vec<&str> = LOCAL_KINDS.iter().map(|k| k.as_str()).collect();
        let unique: std::collections::HashSet<&str> = codes.iter().copied().collect();
        assert_eq!(unique.len(), codes.len(), "{codes:?}");
        assert!(codes
            .iter()
            .all(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')));
        assert_eq!(ErrorKind::FileNotFound.as_str(), "file_not_found");
        assert_eq!(
            ErrorKind::Daemon(tend_protocol::ErrorCode::NoDialog).as_str(),
            "no_dialog"
        );
        assert_eq!(
            ErrorKind::Daemon(tend_protocol::ErrorCode::Zellij).as_str(),
            "daemon_error"
        );
    }

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
