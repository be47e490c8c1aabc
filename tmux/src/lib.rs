//! tend-tmux: everything tend says to tmux.
//!
//! This crate is the only place in tend that talks to tmux. It is thin and
//! synchronous: every operation runs one `tmux` client process with an
//! argument vector (never through a shell), waits for it, and returns typed
//! data or a [`TmuxError`] that tells a person what happened and what to do.
//! The daemon calls it from blocking threads.
//!
//! # The pieces
//!
//! * [`server`] — which server ([`SocketSpec`]: default, `-L name`,
//!   `-S path`, or from `$TEND_TMUX_SOCKET`/`$TMUX`), the key that makes one
//!   daemon per server ([`Server::key`]), the transport ([`Server::run`],
//!   [`Server::run_many`]) and [`Server::version`].
//! * [`query`] — reading state: [`Server::list_panes`],
//!   [`Server::capture`] (screen with cursor and alternate-screen flag),
//!   [`Server::list_clients`].
//! * [`tap`] — `pipe-pane` taps that never clobber a user's pipe:
//!   [`Server::install_tap`], [`Server::remove_tap`].
//! * [`hooks`] — tmux hooks appended next to the user's and removed
//!   exactly: [`Server::install_hooks`], [`Server::remove_hooks`].
//! * [`options`] — publishing `@tend_*` user options at global, session,
//!   window and pane scope, removing them all on stop, and
//!   [`Server::refresh_clients`].
//! * [`keys`] — tend's key bindings with the user's `@tend-key-*`
//!   overrides; removal of only tend's bindings.
//! * [`client`] — what a key press does: [`Server::switch_to`] a pane,
//!   [`Server::display_message`], [`Server::display_menu`].
//! * [`escape`] — quoting for tmux's command parser, formats and the shell,
//!   so that hostile session names, window names and titles are never
//!   interpreted.
//! * [`ids`] — [`PaneId`] `%N`, [`WindowId`] `@N`, [`SessionId`] `$N`.
//!   tend targets everything by id, never by name.
//!
//! # What tend leaves in tmux, and how it finds it again
//!
//! `tend stop` must remove what tend installed and nothing else. Each kind
//! of artefact is recognisable:
//!
//! | artefact | how it is recognised |
//! |---|---|
//! | tap (`pipe-pane`) | the pane option `@tend_tap` set in the same step |
//! | hook entry | its command contains [`MARKER`] |
//! | key binding | its command contains [`MARKER`] |
//! | published option | its name starts with `@tend_` |
//!
//! The user's own settings for tend are named `@tend-…` (with a dash) and
//! are never removed.
//!
//! # Example
//!
//! ```no_run
//! use tend_tmux::{Server, SocketSpec};
//!
//! let server = Server::new(SocketSpec::from_env());
//! for pane in server.list_panes()? {
//!     println!("{} {} {}", pane.pane_id, pane.current_command, pane.session_name);
//! }
//! # Ok::<(), tend_tmux::TmuxError>(())
//! ```

#![warn(missing_docs)]

pub mod client;
pub mod command;
pub mod error;
pub mod escape;
pub mod hooks;

pub mod keys;
pub mod options;
pub mod query;
mod records;
pub mod server;
pub mod status;
pub mod tap;
mod wire;

pub use client::MenuItem;
pub use error::{Result, TmuxError};
pub use hooks::{HookEntry, HookReport};
pub use keys::{BindReport, Binding, KeyAction, ListedBinding};
pub use options::{OptionUpdate, Scope};
pub use query::{Capture, Client, Pane, PaneScreen, Snapshot};
pub use server::{Capabilities, Printing, Server, SocketSpec, Version};
pub use status::StatusReport;
pub use tap::TapOutcome;
pub use tend_protocol::ids::{self, IdError, PaneId, SessionId, WindowId};

/// The text that marks a hook entry or key binding as tend's.
///
/// Commands built by [`escape::run_shell_command`], [`hooks::event_command`]
/// and [`keys::action_command`] end with the shell comment `# tend-managed`
/// (written `## tend-managed`, since tmux expands formats in `run-shell`
/// commands). tmux keeps the text when it prints hooks and bindings, so
/// tend can find and remove exactly its own entries.
pub const MARKER: &str = "tend-managed";
