//! tend-zellij-host: everything tend says to zellij.
//!
//! The zellij counterpart of `tend-tmux`: thin and synchronous. Every
//! operation runs one `zellij` client process with an argument vector (never
//! through a shell) and a deadline, and returns typed data or a
//! [`ZellijError`] that tells a person what happened and what to do. The
//! daemon calls it from blocking threads. Needs zellij 0.45 or newer.
//!
//! # The pieces
//!
//! * [`session`] — which session ([`Session::from_env`]: `TEND_ZELLIJ_SESSION`,
//!   else `$ZELLIJ_SESSION_NAME` inside zellij), the transport
//!   ([`Session::action`], [`Session::run`]), [`list_sessions`], [`version`].
//! * [`panes`] — [`Session::list_panes`], [`Session::list_tabs`],
//!   [`Session::list_clients`], [`Session::focused_pane`],
//!   [`Session::dump_screen`], [`Session::focus_pane`].
//! * [`subscribe`] — [`Subscription`]: `zellij subscribe --format json`
//!   as a stream of [`SubscribeEvent`]s (whole viewports per pane);
//!   [`Session::viewport`] (one snapshot, plugin panes too);
//!   [`redraw_bytes`] (a viewport as bytes for a screen model).
//! * [`identity`] — pane → processes through `/proc/*/environ`
//!   (`ZELLIJ_PANE_ID`, `ZELLIJ_SESSION_NAME`): [`pane_processes`].
//! * [`plugin`] — the status payload for tend's plugin ([`PluginStatus`], defined in
//!   `tend-zellij-payload` beside the plugin),
//!   [`Session::pipe_to_plugin`], [`Session::push_status`], the zjstatus
//!   line, and [`grant_permissions`] in zellij's permission cache.
//! * [`ids`] — [`PaneId`]: `terminal_N` / `plugin_N`.
//!
//! # What zellij does, and how this crate copes
//!
//! Behaviours of zellij 0.45.1 this crate works with (seen on the real
//! binary; most are exercised by `tests/real_zellij.rs`):
//!
//! * `subscribe` streams viewports of panes in the tabs clients look at;
//!   a pane in a background tab sends its initial update and then nothing
//!   until shown: poll it with `dump-screen`, which works in any tab.
//! * `dump-screen` prints nothing for plugin panes and for panes that do
//!   not exist; [`Session::viewport`] reads plugin panes.
//! * Command-line focus changes go to the client that typed last.
//! * `zellij pipe` waits while any plugin still waits for its permissions.
//! * Querying a session while it is being created can crash its server:
//!   ask after the first client has drawn.
//!
//! # Example
//!
//! ```no_run
//! use tend_zellij_host::Session;
//!
//! let session = Session::from_env()?;
//! for pane in session.list_panes()?.iter().filter(|p| p.is_terminal()) {
//!     println!("{} {} {:?}", pane.id, pane.tab_name, pane.command);
//! }
//! # Ok::<(), tend_zellij_host::ZellijError>(())
//! ```

#![warn(missing_docs)]

pub mod error;
pub mod identity;
pub mod ids;
pub mod panes;
pub mod plugin;
pub mod session;
pub mod subscribe;

pub use error::{Result, ZellijError};
pub use identity::{pane_process, pane_processes, PaneProcess};
pub use ids::PaneId;
pub use panes::{Client, Geometry, Pane, Tab};
pub use plugin::{grant_permissions, permission_cache_path, JumpTarget, PluginStatus};
pub use session::{inside_zellij, list_sessions, version, Session, SessionInfo};
pub use subscribe::{redraw_bytes, PaneUpdate, SubscribeEvent, SubscribeOptions, Subscription};
