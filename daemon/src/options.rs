//! What the daemon is started with: the multiplexer it watches, its
//! sockets and files, and `config.toml` as read once, when it starts
//! (`remotes.reload` reads the remotes again when asked).

use std::path::PathBuf;

use tend_tmux::Server;

/// What the daemon needs to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The tmux server.
    pub server: Server,
    /// Control socket path.
    pub control: PathBuf,
    /// Tap socket path.
    pub tap: PathBuf,
    /// This executable (for tap, hook and key commands).
    pub tend_bin: PathBuf,
    /// The persistent state file (parks, snoozes, flags, reports).
    pub state: PathBuf,
    /// `config.toml`: detector timings, key bindings, notifications,
    /// remotes, limits.
    pub config: crate::config::Config,
    /// The zellij session to watch instead of the tmux server (whose
    /// `server` is then unused).
    pub zellij: Option<tend_zellij_host::Session>,
}

impl Options {
    /// The multiplexer these options watch.
    pub fn mux(&self) -> tend_core::Mux {
        match self.zellij {
            Some(_) => tend_core::Mux::Zellij,
            None => tend_core::Mux::Tmux,
        }
    }
}
