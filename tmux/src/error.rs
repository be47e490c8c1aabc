//! Errors: what went wrong when talking to tmux, and what to do about it.

use std::fmt;
use std::io;

/// Everything that can go wrong when tend talks to tmux.
///
/// Every variant renders (through [`fmt::Display`]) as a sentence meant for a
/// person: what happened, and what to do next.
#[derive(Debug)]
pub enum TmuxError {
    /// The tmux program could not be found.
    NotInstalled {
        /// The program tend tried to run (usually `tmux`).
        program: String,
    },
    /// The tmux program exists but could not be started.
    Spawn {
        /// The program tend tried to run.
        program: String,
        /// Why the operating system refused.
        source: io::Error,
    },
    /// No tmux server answers on the socket.
    NoServer {
        /// The socket, as tend addressed it (`default`, `-L name` or `-S path`).
        socket: String,
        /// tmux's own words.
        detail: String,
    },
    /// A pane, window, session or client named in a command does not exist
    /// (any more). Panes come and go; callers usually treat this as "gone".
    TargetNotFound {
        /// The command that named it.
        command: String,
        /// tmux's own words, such as `can't find pane: %7`.
        detail: String,
    },
    /// A command is longer than tmux accepts in one message (about 16 KiB,
    /// and since tmux 3.7 at most 1000 arguments).
    TooLong {
        /// The start of the command.
        command: String,
        /// Its length in bytes.
        len: usize,
        /// How many arguments it has.
        args: usize,
    },
    /// tmux ran the command and reported an error.
    Failed {
        /// The command (shortened).
        command: String,
        /// The exit status, if tmux exited normally.
        status: Option<i32>,
        /// What tmux wrote on standard error.
        stderr: String,
    },
    /// tmux answered something tend cannot read.
    Parse {
        /// What tend asked for.
        what: String,
        /// What was wrong with the answer.
        detail: String,
    },
    /// The caller asked for something that cannot be done as asked.
    Invalid {
        /// What was wrong.
        detail: String,
    },
    /// A value this tmux prints in a form that cannot be read back exactly
    /// (see [`Printing`](crate::Printing)): tend leaves it alone.
    Unreadable {
        /// Which value, and how it printed.
        detail: String,
    },
}

impl TmuxError {
    /// True when the error means the target (a pane, window, session or
    /// client) no longer exists: the normal outcome of a race with a closing
    /// pane, not a fault.
    pub fn is_target_gone(&self) -> bool {
        matches!(self, TmuxError::TargetNotFound { .. })
    }

    /// True for a value this tmux prints ambiguously.
    pub fn is_unreadable(&self) -> bool {
        matches!(self, TmuxError::Unreadable { .. })
    }

    /// True when no tmux server runs on the socket.
    pub fn is_no_server(&self) -> bool {
        matches!(self, TmuxError::NoServer { .. })
    }
}

impl fmt::Display for TmuxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TmuxError::NotInstalled { program } => write!(
                f,
                "tmux is not installed (could not find `{program}`). \
                 Install tmux 3.2 or newer and make sure it is on PATH."
            ),
            TmuxError::Spawn { program, source } => write!(
                f,
                "could not run `{program}`: {source}. \
                 Check that the file is an executable tmux binary."
            ),
            TmuxError::NoServer { socket, detail } => write!(
                f,
                "no tmux server is running on {socket} ({detail}). \
                 Start tmux first, or point tend at the right server with \
                 TEND_TMUX_SOCKET (a socket name or path)."
            ),
            TmuxError::TargetNotFound { command, detail } => write!(
                f,
                "tmux could not find what `{command}` names: {detail}. \
                 It has probably just closed."
            ),
            TmuxError::TooLong { command, len, args } => write!(
                f,
                "the tmux command `{command}` ({len} bytes, {args} arguments) is more \
                 than tmux accepts in one message. This is a bug in tend; please report it."
            ),
            TmuxError::Failed {
                command,
                status,
                stderr,
            } => {
                let stderr = stderr.trim();
                let why = if stderr.is_empty() {
                    match status {
                        Some(code) => format!("tmux exited with status {code}"),
                        None => "tmux was killed by a signal".to_string(),
                    }
                } else {
                    stderr.to_string()
                };
                write!(
                    f,
                    "tmux refused `{command}`: {why}. \
                     If your tmux is older than 3.2, upgrading it may help."
                )
            }
            TmuxError::Parse { what, detail } => write!(
                f,
                "could not read tmux's answer to {what}: {detail}. \
                 Your tmux version may print something tend does not expect; \
                 please report it together with the output of `tmux -V`."
            ),
            TmuxError::Invalid { detail } | TmuxError::Unreadable { detail } => {
                write!(f, "{detail}")
            }
        }
    }
}

impl std::error::Error for TmuxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TmuxError::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = TmuxError> = std::result::Result<T, E>;
