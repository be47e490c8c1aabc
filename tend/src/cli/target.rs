//! Which tmux server a command is about, found as tmux itself finds it:
//! `-L NAME`, `-S PATH`, else `$TEND_TMUX_SOCKET`, else `$TMUX`, else the
//! default socket.

use crate::error::ErrorKind;
use std::path::PathBuf;

use clap::Args;
use tend_tmux::{Server, SocketSpec};

use crate::error::CliError;
use crate::paths;

/// Server selection flags shared by every command that talks to tmux.
#[derive(Debug, Clone, Args, Default)]
pub struct ServerArgs {
    /// tmux socket name (as `tmux -L`).
    #[arg(
        short = 'L',
        long = "socket-name",
        global = true,
        conflicts_with = "socket_path"
    )]
    pub socket_name: Option<String>,
    /// tmux socket path (as `tmux -S`).
    #[arg(short = 'S', long = "socket-path", global = true)]
    pub socket_path: Option<PathBuf>,
    /// Watch this zellij session instead of tmux (default inside zellij:
    /// `$ZELLIJ_SESSION_NAME`).
    #[arg(long = "zellij", global = true, conflicts_with_all = ["socket_name", "socket_path"])]
    pub zellij: Option<String>,
}

impl ServerArgs {
    /// The tmux server.
    pub fn server(&self) -> Server {
        let spec = match (&self.socket_name, &self.socket_path) {
            (_, Some(p)) => SocketSpec::Path(p.clone()),
            (Some(n), None) => SocketSpec::Name(n.clone()),
            (None, None) => SocketSpec::from_env(),
        };
        Server::new(spec)
    }
}

/// The pane this command runs in: `$TMUX_PANE` (`%3`), else zellij's
/// `$ZELLIJ_PANE_ID` as zellij names the pane (`terminal_3`).
pub fn this_pane() -> Option<String> {
    let set = |v: &str| std::env::var(v).ok().filter(|x| !x.is_empty());
    set("TMUX_PANE").or_else(|| set("ZELLIJ_PANE_ID").map(|n| format!("terminal_{n}")))
}

/// The tmux server, its socket path (asked of tmux), and the daemon's
/// control socket for it.
pub struct Target {
    /// The server.
    pub server: Server,
    /// Its socket path (for zellij: `zellij/<session>`, a name for files).
    pub tmux_socket: PathBuf,
    /// The daemon's control socket.
    pub control: PathBuf,
    /// The zellij session, when tend watches zellij.
    pub zellij: Option<tend_zellij_host::Session>,
}

impl Target {
    /// `raw` as the daemon names panes in event streams: zellij's bare
    /// numbers and `%N` become `terminal_N` there (the daemon takes all
    /// three in requests, but an event filter compares names).
    pub fn pane_name(&self, raw: &str) -> String {
        let n = raw.strip_prefix('%').unwrap_or(raw);
        match &self.zellij {
            Some(_) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                format!("terminal_{n}")
            }
            _ => raw.to_owned(),
        }
    }

    /// Resolves the target; fails with a clear message when no tmux server
    /// is running there.
    pub fn resolve(args: &ServerArgs) -> Result<Target, CliError> {
        // Inside zellij (and not inside a tmux within it), or asked for.
        let zellij_session = args.zellij.clone().or_else(|| {
            let plain = args.socket_name.is_none()
                && args.socket_path.is_none()
                && std::env::var_os("TMUX").is_none()
                && std::env::var_os("TEND_TMUX_SOCKET").is_none();
            plain
                .then(|| std::env::var("ZELLIJ_SESSION_NAME").ok())
                .flatten()
                .filter(|_| tend_zellij_host::inside_zellij())
        });
        if let Some(name) = zellij_session {
            let key = PathBuf::from(format!("zellij-{name}"));
            return Ok(Target {
                server: Server::new(SocketSpec::Default),
                control: paths::control_socket(&key)?,
                tmux_socket: key,
                zellij: Some(tend_zellij_host::Session::new(name)),
            });
        }
        let server = args.server();
        let tmux_socket = server.socket_path().map_err(|e| {
            CliError::new(
                ErrorKind::NoTmux,
                format!("no tmux server to watch ({e}). Start tmux first, or name the server with -L NAME / -S PATH"),
            )
        })?;
        let control = paths::control_socket(&tmux_socket)?;
        Ok(Target {
            server: Server::new(SocketSpec::Path(tmux_socket.clone())),
            tmux_socket,
            control,
            zellij: None,
        })
    }
}
