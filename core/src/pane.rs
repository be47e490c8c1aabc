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
    /// The window's index in its session.
    pub window_index: u32,
    /// The window's name: display only.
    pub window_name: String,
    /// The pane's index in its window.
    pub pane_index: u32,
    /// The window is its session's current window.
    pub window_active: bool,
    /// The pane is its window's active pane.
    pub pane_active: bool,
    /// How many clients show the session.
    pub session_attached: u32,
    /// Width in cells.
    pub width: u32,
    /// Height in cells.
    pub height: u32,
    /// The foreground process's name. Raw: any byte a program put there.
    pub current_command: String,
    /// Some pipe is open on the pane (tend's tap or the user's own).
    pub pipe: bool,
    /// tend's tap mark is on the pane (with `pipe`: the pipe is tend's).
    pub tap_mark: bool,
    /// The pane's process has exited (the pane stays, dead).
    pub dead: bool,
    /// The exit status of a dead pane, once known.
    pub dead_status: Option<i32>,
    /// The title programs set: display only.
    pub title: String,
    /// The pane's terminal device.
    pub tty: String,
    /// The pane shows its alternate screen.
    pub alternate_on: bool,
    /// The pane is in copy mode or another mode.
    pub in_mode: bool,
    /// The foreground process's working directory; empty when unknown.
    pub current_path: String,
}

impl PaneInfo {
    /// A pipe is open and it is tend's tap.
    pub fn is_tapped(&self) -> bool {
        self.pipe && self.tap_mark
    }

    /// A pipe is open that tend did not install: the pane is read by
    /// polling its screen instead.
    pub fn has_foreign_pipe(&self) -> bool {
        self.pipe && !self.tap_mark
    }
}

/// One client (a terminal attached to the multiplexer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInfo {
    /// The name commands target it by.
    pub name: String,
    /// Its terminal device.
    pub tty: String,
    /// Its process.
    pub pid: u32,
    /// The session it shows.
    pub session_id: Option<SessionId>,
    /// That session's name; display only.
    pub session_name: String,
    /// The window it shows.
    pub window_id: Option<WindowId>,
    /// The active pane of that window: the pane its user looks at.
    pub pane_id: Option<PaneId>,
    /// The multiplexer's flags for it (`attached,focused,…`).
    pub flags: String,
    /// A control-mode client: no status line, nobody looking.
    pub control_mode: bool,
    /// Width in cells.
    pub width: u32,
    /// Height in cells.
    pub height: u32,
    /// Its last activity (Unix seconds): moves when its user types.
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
