//! The multiplexer's panes, clients and screens as the core needs them,
//! in no multiplexer's terms: the tmux backend converts `list-panes`,
//! `list-clients` and `capture-pane`; the zellij backend its own session
//! state. Ids are tend's ([`PaneId`], [`SessionId`], [`WindowId`]): tmux's
//! `%N`, `$N`, `@N`, and zellij's terminal panes by number.

use tend_protocol::{PaneId, SessionId, WindowId};

/// One pane as the multiplexer lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneInfo {
    /// Stable for the pane's life.
    pub pane_id: PaneId,
    /// The process the multiplexer started in the pane (usually a shell;
    /// 0 when not known yet).
    pub pane_pid: u32,
    /// The session the pane is in.
    pub session_id: SessionId,
    /// The session's name: chosen by users and programs; display only.
    pub session_name: String,
    /// The window (tab) the pane is in.
    pub window_id: WindowId,
    /// The window as its users know it, for `tend list` and the log:
    /// tmux's `@N`, zellij's tab name. Display only.
    pub window_label: String,
    /// The window's index (position) in its session.
    pub window_index: u32,
    /// The window's name: display only.
    pub window_name: String,
    /// The pane's index in its window, where the multiplexer numbers them
    /// (tmux; zellij does not).
    pub pane_index: Option<u32>,
    /// The window is its session's current window (zellij: a client
    /// shows the tab).
    pub window_active: bool,
    /// The pane is its window's active pane.
    pub pane_active: bool,
    /// Width in cells.
    pub width: u32,
    /// Height in cells.
    pub height: u32,
    /// The foreground process's name. Raw: any byte a program put there.
    pub current_command: String,
    /// Whose pipe is open on the pane's output.
    pub pipe: Pipe,
    /// The pane's process has exited (the pane stays, dead).
    pub dead: bool,
    /// The exit status of a dead pane, once known.
    pub dead_status: Option<i32>,
    /// The title programs set: display only.
    pub title: String,
    /// The pane shows its alternate screen (false where not known).
    pub alternate_on: bool,
    /// The pane is in copy mode or another mode (false where the
    /// multiplexer has none).
    pub in_mode: bool,
    /// The foreground process's working directory; empty when unknown.
    pub current_path: String,
}

/// Whose pipe is open on a pane's output, as the backend finds it
/// (tmux: `pane_pipe` and tend's tap mark). A multiplexer without pipes
/// (zellij) has [`Pipe::None`] on every pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pipe {
    /// No pipe is open.
    #[default]
    None,
    /// tend's tap.
    Tend,
    /// Someone else's (the user's own `pipe-pane`): the pane is read by
    /// polling its screen instead.
    Other,
}

/// One client (a terminal attached to the multiplexer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInfo {
    /// The name commands target it by.
    pub name: String,
    /// The pane its user looks at (the active pane of the window it
    /// shows).
    pub pane_id: Option<PaneId>,
    /// A control-mode client: no status line, nobody looking.
    pub control_mode: bool,
    /// Its last activity (Unix seconds): moves when its user types (0
    /// where the multiplexer does not say: zellij).
    pub activity: u64,
}

/// A pane's screen as captured: the text with colour and attribute escape
/// sequences, wrapped lines joined, each line ending in `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    /// The pane.
    pub pane_id: PaneId,
    /// The visible screen's text.
    pub text: String,
    /// Cursor column, 0-based.
    pub cursor_x: u32,
    /// Cursor row on the visible screen, 0-based.
    pub cursor_y: u32,
    /// The cursor is visible.
    pub cursor_visible: bool,
    /// The capture shows the alternate screen.
    pub alternate_on: bool,
    /// The pane is in copy mode (the capture still shows the program's
    /// screen).
    pub in_mode: bool,
    /// Width in cells.
    pub width: u32,
    /// Height in cells.
    pub height: u32,
}

/// How installing a pane's tap went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TapOutcome {
    /// tend's tap is on the pane now (installed, or found from before).
    Tapped,
    /// The pane has someone else's pipe: it is polled instead.
    Foreign,
    /// The multiplexer refused; what it said.
    Failed(String),
}
