//! Errors: what went wrong when talking to zellij, and what to do about it.

use std::fmt;
use std::io;

/// Everything that can go wrong when tend talks to zellij.
///
/// Every variant renders (through [`fmt::Display`]) as a sentence meant for a
/// person: what happened, and what to do next.
#[derive(Debug)]
pub enum ZellijError {
    /// The zellij program could not be found.
    NotInstalled {
        /// The program tend tried to run (usually `zellij`).
        program: String,
    },
    /// The zellij program exists but could not be started.
    Spawn {
        /// The program tend tried to run.
        program: String,
        /// Why the operating system refused.
        source: io::Error,
    },
    /// No session was named and none could be found in the environment.
    NoSession,
    /// The named session does not run (or no session runs at all).
    SessionNotFound {
        /// The session tend addressed.
        session: String,
        /// zellij's own words.
        detail: String,
    },
    /// A pane named in a command does not exist (any more). Panes come and
    /// go; callers usually treat this as "gone".
    PaneNotFound {
        /// The command that named it.
        command: String,
        /// The pane, as `terminal_N` or `plugin_N`.
        pane: String,
    },
    /// zellij did not answer in time and was stopped.
    Timeout {
        /// The command (shortened).
        command: String,
        /// How long tend waited, in milliseconds.
        waited_ms: u128,
    },
    /// zellij ran the command and reported an error.
    Failed {
        /// The command (shortened).
        command: String,
        /// The exit status, if zellij exited normally.
        status: Option<i32>,
        /// What zellij wrote on standard error (or standard output).
        stderr: String,
    },
    /// zellij answered something tend cannot read.
    Parse {
        /// What tend asked for.
        what: String,
        /// What was wrong with the answer.
        detail: String,
    },
    /// Reading or writing a local file (the permission cache, `/proc`)
    /// failed.
    Io {
        /// What tend was doing.
        what: String,
        /// Why it failed.
        source: io::Error,
    },
    /// The caller asked for something that cannot be done as asked.
    Invalid {
        /// What was wrong.
        detail: String,
    },
}

impl ZellijError {
    /// True when the error means the pane no longer exists: the normal
    /// outcome of a race with a closing pane, not a fault.
    pub fn is_pane_gone(&self) -> bool {
        matches!(self, ZellijError::PaneNotFound { .. })
    }

    /// True when the session does not run (any more).
    pub fn is_no_session(&self) -> bool {
        matches!(
            self,
            ZellijError::SessionNotFound { .. } | ZellijError::NoSession
        )
    }
}

impl fmt::Display for ZellijError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZellijError::NotInstalled { program } => write!(
                f,
                "zellij is not installed (could not find `{program}`). Install zellij 0.45 \
                 or newer (`cargo install zellij --locked`) and make sure it is on PATH, \
                 or set TEND_ZELLIJ to the zellij binary."
            ),
            ZellijError::Spawn { program, source } => write!(
                f,
                "could not run `{program}`: {source}. \
                 Check that the file is an executable zellij binary."
            ),
            ZellijError::NoSession => write!(
                f,
                "no zellij session to talk to: ZELLIJ_SESSION_NAME is not set. Run this \
                 inside a zellij pane, or name the session (`zellij list-sessions` shows them)."
            ),
            ZellijError::SessionNotFound { session, detail } => write!(
                f,
                "the zellij session `{session}` is not running ({detail}). \
                 Start or attach it first; `zellij list-sessions` shows the running ones."
            ),
            ZellijError::PaneNotFound { command, pane } => write!(
                f,
                "zellij has no pane {pane} (for `{command}`); it has probably just closed."
            ),
            ZellijError::Timeout { command, waited_ms } => write!(
                f,
                "zellij did not answer `{command}` within {waited_ms} ms and was stopped. \
                 The session may be busy or hung; try again, and check \
                 `zellij list-sessions`."
            ),
            ZellijError::Failed {
                command,
                status,
                stderr,
            } => {
                let stderr = stderr.trim();
                let why = if stderr.is_empty() {
                    match status {
                        Some(code) => format!("zellij exited with status {code}"),
                        None => "zellij was killed by a signal".to_string(),
                    }
                } else {
                    stderr.to_string()
                };
                write!(
                    f,
                    "zellij refused `{command}`: {why}. \
                     tend needs zellij 0.45 or newer (`zellij --version`)."
                )
            }
            ZellijError::Parse { what, detail } => write!(
                f,
                "could not read zellij's answer to {what}: {detail}. \
                 Your zellij version may print something tend does not expect; \
                 please report it together with the output of `zellij --version`."
            ),
            ZellijError::Io { what, source } => write!(f, "could not {what}: {source}."),
            ZellijError::Invalid { detail } => write!(f, "{detail}"),
        }
    }
}

impl std::error::Error for ZellijError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ZellijError::Spawn { source, .. } | ZellijError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = ZellijError> = std::result::Result<T, E>;
