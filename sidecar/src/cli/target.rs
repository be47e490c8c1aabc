//! Which tmux server a command is about, found as tmux itself finds it:
//! `-L NAME`, `-S PATH`, else `$TEND_TMUX_SOCKET`, else `$TMUX`, else the
//! default socket.

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

/// The tmux server, its socket path (asked of tmux), and the daemon's
/// control socket for it.
pub struct Target {
    /// The server.
    pub server: Server,
    /// Its socket path.
    pub tmux_socket: PathBuf,
    /// The daemon's control socket.
    pub control: PathBuf,
}

impl Target {
    /// Resolves the target; fails with a clear message when no tmux server
    /// is running there.
    pub fn resolve(args: &ServerArgs) -> Result<Target, CliError> {
        let server = args.server();
        let tmux_socket = server.socket_path().map_err(|e| {
            CliError::new(
                "no_tmux",
                format!("no tmux server to watch ({e}). Start tmux first, or name the server with -L NAME / -S PATH"),
            )
        })?;
        let control = paths::control_socket(&tmux_socket)?;
        Ok(Target {
            server: Server::new(SocketSpec::Path(tmux_socket.clone())),
            tmux_socket,
            control,
        })
    }
}
