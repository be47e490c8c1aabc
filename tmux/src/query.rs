//! Reading the server's state: panes, pane contents, clients.
//!
//! All queries ask tmux for formats with nonce separators (see the private
//! `records` module), so session names, window names, pane titles and
//! process names are returned verbatim whatever they contain, and can never
//! break the parse.

use serde::{Deserialize, Serialize};

use crate::error::{Result, TmuxError};
use crate::options::OptionUpdate;
use crate::records::{Record, Records};
use crate::server::Printing;
use crate::server::Server;
use crate::tap::TAP_OPTION;
use tend_protocol::ids::{PaneId, SessionId, WindowId};

/// One pane, as `list-panes -a` sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pane {
    /// `#{pane_id}`, e.g. `%3`. Stable for the pane's life.
    pub pane_id: PaneId,
    /// `#{pane_pid}`: the process tmux started in the pane (usually a shell).
    pub pane_pid: u32,
    /// `#{session_id}`, e.g. `$0`.
    pub session_id: SessionId,
    /// `#{session_name}`: chosen by users and programs; display only.
    pub session_name: String,
    /// `#{window_id}`, e.g. `@1`.
    pub window_id: WindowId,
    /// `#{window_index}`.
    pub window_index: u32,
    /// `#{window_name}`: display only.
    pub window_name: String,
    /// `#{pane_index}`.
    pub pane_index: u32,
    /// `#{window_active}`: the window is its session's current window.
    pub window_active: bool,
    /// `#{pane_active}`: the pane is its window's active pane.
    pub pane_active: bool,
    /// `#{session_attached}`: how many clients show the session (control
    /// mode clients included; see [`Client::control_mode`]).
    pub session_attached: u32,
    /// `#{pane_width}`, in cells.
    pub width: u32,
    /// `#{pane_height}`, in cells.
    pub height: u32,
    /// `#{pane_current_command}`: the foreground process name. Raw: it may
    /// contain any byte a program put in its name.
    pub current_command: String,
    /// `#{pane_pipe}`: some `pipe-pane` is open on the pane (tend's or the
    /// user's; see [`Pane::tap`]).
    pub pipe: bool,
    /// tend's tap mark on this pane (the pane option `@tend_tap`, holding
    /// the tap's command): set when tend installed the pipe. See
    /// [`Pane::is_tapped`], [`Pane::has_foreign_pipe`] and
    /// [`Pane::has_stale_tap_mark`].
    pub tap: Option<String>,
    /// `#{pane_dead}`: the pane's process has exited (with
    /// `remain-on-exit`).
    pub dead: bool,
    /// `#{pane_dead_status}`: the exit status of a dead pane. `None` while
    /// alive, and possibly for a moment after `dead` turns true (tmux sees
    /// the terminal close before it reaps the process).
    pub dead_status: Option<i32>,
    /// `#{pane_title}`: set by programs with an escape sequence; display only.
    pub title: String,
    /// `#{pane_tty}`, e.g. `/dev/pts/3`.
    pub tty: String,
    /// `#{alternate_on}`: the pane shows its alternate screen (full-screen
    /// programs).
    pub alternate_on: bool,
    /// `#{pane_in_mode}`: the pane is in copy mode or another mode.
    pub in_mode: bool,
    /// `#{pane_current_path}`: the working directory of the pane's
    /// foreground process, as tmux reads it. Raw: a directory name may hold
    /// any byte; empty when tmux cannot tell.
    #[serde(default)]
    pub current_path: String,
}

impl Pane {
    /// True when tend's tap is the pipe open on the pane.
    pub fn is_tapped(&self) -> bool {
        self.pipe && self.tap.is_some()
    }

    /// True when a pipe is open on the pane that tend did not install: the
    /// pane must not be tapped and falls back to polling with `capture-pane`.
    pub fn has_foreign_pipe(&self) -> bool {
        self.pipe && self.tap.is_none()
    }

    /// True when the pane carries tend's tap mark but no pipe is open (the
    /// tap process ended on its own). Clear it with
    /// [`Server::clear_tap_mark`] before tapping again.
    pub fn has_stale_tap_mark(&self) -> bool {
        !self.pipe && self.tap.is_some()
    }
}

const PANE_FIELDS: &[&str] = &[
    "pane_id",
    "pane_pid",
    "session_id",
    "session_name",
    "window_id",
    "window_index",
    "window_name",
    "pane_index",
    "window_active",
    "pane_active",
    "session_attached",
    "pane_width",
    "pane_height",
    "pane_current_command",
    "pane_pipe",
    TAP_OPTION,
    "pane_dead",
    "pane_dead_status",
    "pane_title",
    "pane_tty",
    "alternate_on",
    "pane_in_mode",
    "pane_current_path",
];

fn pane_from(r: &Record<'_>, printing: Printing) -> Result<Pane> {
    const WHAT: &str = "list-panes";
    // tend's own mark is compared with the tap it installs: read back
    // exactly where this tmux printed it with escapes (3.4, 3.5a).
    let printed = r.get(TAP_OPTION);
    let tap = printing
        .unprint(printed)
        .unwrap_or_else(|| printed.to_owned());
    let dead = r.flag("pane_dead");
    Ok(Pane {
        pane_id: r.id("pane_id", WHAT)?,
        pane_pid: r.num("pane_pid"),
        session_id: r.id("session_id", WHAT)?,
        session_name: r.string("session_name"),
        window_id: r.id("window_id", WHAT)?,
        window_index: r.num("window_index"),
        window_name: r.string("window_name"),
        pane_index: r.num("pane_index"),
        window_active: r.flag("window_active"),
        pane_active: r.flag("pane_active"),
        session_attached: r.num("session_attached"),
        width: r.num("pane_width"),
        height: r.num("pane_height"),
        current_command: r.string("pane_current_command"),
        pipe: r.flag("pane_pipe"),
        tap: (!tap.is_empty()).then_some(tap),
        dead,
        dead_status: if dead {
            r.opt_num("pane_dead_status")
        } else {
            None
        },
        title: r.string("pane_title"),
        tty: r.string("pane_tty"),
        alternate_on: r.flag("alternate_on"),
        in_mode: r.flag("pane_in_mode"),
        current_path: r.string("pane_current_path"),
    })
}

/// A pane's visible screen and cursor, read in one tmux invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capture {
    /// The pane.
    pub pane_id: PaneId,
    /// `capture-pane -p -e -J`: the visible screen with colour and
    /// attribute escape sequences, wrapped lines joined (so one text line
    /// may cover several screen rows; written at the pane's width it wraps
    /// back into the same rows), trailing spaces kept. Lines end in `\n`.
    pub text: String,
    /// `#{cursor_x}`: cursor column, 0-based.
    pub cursor_x: u32,
    /// `#{cursor_y}`: cursor row on the visible screen, 0-based (a screen
    /// row, not a line of [`Capture::text`]).
    pub cursor_y: u32,
    /// `#{cursor_flag}`: the cursor is visible.
    pub cursor_visible: bool,
    /// `#{alternate_on}`: the capture shows the alternate screen.
    pub alternate_on: bool,
    /// `#{pane_in_mode}`: the pane is in copy mode (the capture still shows
    /// the program's screen, not the mode's view).
    pub in_mode: bool,
    /// `#{pane_width}`.
    pub width: u32,
    /// `#{pane_height}`.
    pub height: u32,
}

const SCREEN_FIELDS: &[&str] = &[
    "pane_id",
    "cursor_x",
    "cursor_y",
    "alternate_on",
    "pane_in_mode",
    "pane_title",
];

/// A pane's visible screen as plain rows ([`Server::screen`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneScreen {
    /// Visible rows, top to bottom, right-trimmed.
    pub rows: Vec<String>,
    /// `#{cursor_x}`.
    pub cursor_x: u32,
    /// `#{cursor_y}`.
    pub cursor_y: u32,
    /// `#{alternate_on}`.
    pub alternate_on: bool,
    /// `#{pane_in_mode}`: copy mode or another mode has the pane's keys.
    pub in_mode: bool,
    /// `#{pane_title}` (the program's OSC title).
    pub title: String,
}

const CAPTURE_FIELDS: &[&str] = &[
    "pane_id",
    "cursor_x",
    "cursor_y",
    "cursor_flag",
    "alternate_on",
    "pane_in_mode",
    "pane_width",
    "pane_height",
];

/// One client attached to the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    /// `#{client_name}`: the target for `-c`/`-t` client arguments
    /// (usually the tty path).
    pub name: String,
    /// `#{client_tty}`.
    pub tty: String,
    /// `#{client_pid}`.
    pub pid: u32,
    /// `#{session_id}` of the session the client shows.
    pub session_id: Option<SessionId>,
    /// `#{client_session}`: that session's name; display only.
    pub session_name: String,
    /// `#{window_id}` of the window the client shows.
    pub window_id: Option<WindowId>,
    /// `#{pane_id}`: the active pane of the window the client shows — the
    /// pane the user is looking at.
    pub pane_id: Option<PaneId>,
    /// `#{client_flags}`, e.g. `attached,focused,UTF-8` (empty on tmux
    /// versions without it).
    pub flags: String,
    /// `#{client_control_mode}`: a control-mode client (`tmux -C`), which
    /// has no status line and no user looking at it.
    pub control_mode: bool,
    /// `#{client_width}`.
    pub width: u32,
    /// `#{client_height}`.
    pub height: u32,
    /// `#{client_activity}`: time of the client's last activity (Unix
    /// seconds).
    pub activity: u64,
}

impl Client {
    /// True when the client's terminal has focus (`focused` in
    /// [`Client::flags`]; tmux only knows this with `focus-events on`).
    pub fn focused(&self) -> bool {
        self.flags.split(',').any(|f| f == "focused")
    }
}

const CLIENT_FIELDS: &[&str] = &[
    "client_name",
    "client_tty",
    "client_pid",
    "session_id",
    "client_session",
    "window_id",
    "pane_id",
    "client_flags",
    "client_control_mode",
    "client_width",
    "client_height",
    "client_activity",
];

fn client_from(r: &Record<'_>) -> Client {
    Client {
        name: r.string("client_name"),
        tty: r.string("client_tty"),
        pid: r.num("client_pid"),
        session_id: r.get("session_id").parse().ok(),
        session_name: r.string("client_session"),
        window_id: r.get("window_id").parse().ok(),
        pane_id: r.get("pane_id").parse().ok(),
        flags: r.string("client_flags"),
        control_mode: r.flag("client_control_mode"),
        width: r.num("client_width"),
        height: r.num("client_height"),
        activity: r.num("client_activity"),
    }
}

fn gone(pane: PaneId, command: &str) -> TmuxError {
    TmuxError::TargetNotFound {
        command: format!("{command} -t {pane}"),
        detail: format!("can't find pane: {pane}"),
    }
}

impl Server {
    /// Every pane in every session (`list-panes -a`).
    ///
    /// A pane linked into several sessions (through a window shared with
    /// `link-window`) appears once per session.
    pub fn list_panes(&self) -> Result<Vec<Pane>> {
        let rec = Records::new(PANE_FIELDS);
        let out = self.run(["list-panes", "-a", "-F", &rec.format()])?;
        let printing = self.capabilities().printing;
        rec.parse(&out, "list-panes")?
            .iter()
            .map(|r| pane_from(r, printing))
            .collect()
    }

    /// One pane. Fails with [`TmuxError::TargetNotFound`] when it is gone.
    pub fn pane(&self, pane: PaneId) -> Result<Pane> {
        // `list-panes -t` lists the pane's window. (`display-message -t`
        // would not fail for a missing pane, and tmux 3.3a leaves
        // #{pane_dead_status} empty there.)
        let rec = Records::new(PANE_FIELDS);
        let target = pane.to_string();
        let out = self.run(["list-panes", "-t", &target, "-F", &rec.format()])?;
        for r in rec.parse(&out, "list-panes")? {
            if r.get("pane_id") == target {
                return pane_from(&r, self.capabilities().printing);
            }
        }
        Err(gone(pane, "list-panes"))
    }

    /// The visible screen of a pane with its cursor position, screen mode
    /// and size, read in one invocation so that text and cursor agree.
    pub fn capture(&self, pane: PaneId) -> Result<Capture> {
        let rec = Records::new(CAPTURE_FIELDS);
        let target = pane.to_string();
        let fmt = rec.format();
        let out = self.run_many(&[
            vec!["display-message", "-p", "-t", &target, &fmt],
            vec!["capture-pane", "-p", "-e", "-J", "-t", &target],
        ])?;
        let (records, text) = rec.split(&out, "capture-pane")?;
        let r = records.first().ok_or_else(|| TmuxError::Parse {
            what: format!("the cursor of pane {pane}"),
            detail: "tmux printed nothing".into(),
        })?;
        if r.get("pane_id") != target {
            return Err(gone(pane, "capture-pane"));
        }
        Ok(Capture {
            pane_id: pane,
            text: text.to_string(),
            cursor_x: r.num("cursor_x"),
            cursor_y: r.num("cursor_y"),
            cursor_visible: r.flag("cursor_flag"),
            alternate_on: r.flag("alternate_on"),
            in_mode: r.flag("pane_in_mode"),
            width: r.num("pane_width"),
            height: r.num("pane_height"),
        })
    }

    /// The visible screen as rows (one per screen row, not joined, no
    /// escape sequences), with the cursor, the alternate-screen flag and the
    /// title, read in one tmux invocation: what a screen rule is checked on
    /// right before tend types into a pane.
    pub fn screen(&self, pane: PaneId) -> Result<PaneScreen> {
        let rec = Records::new(SCREEN_FIELDS);
        let target = pane.to_string();
        let fmt = rec.format();
        let out = self.run_many(&[
            vec!["display-message", "-p", "-t", &target, &fmt],
            vec!["capture-pane", "-p", "-t", &target],
        ])?;
        let (records, text) = rec.split(&out, "capture-pane")?;
        let r = records.first().ok_or_else(|| TmuxError::Parse {
            what: format!("the screen of pane {pane}"),
            detail: "tmux printed nothing".into(),
        })?;
        if r.get("pane_id") != target {
            return Err(gone(pane, "capture-pane"));
        }
        Ok(PaneScreen {
            rows: text.lines().map(|l| l.trim_end().to_string()).collect(),
            cursor_x: r.num("cursor_x"),
            cursor_y: r.num("cursor_y"),
            alternate_on: r.flag("alternate_on"),
            in_mode: r.flag("pane_in_mode"),
            title: r.get("pane_title").to_string(),
        })
    }

    /// Plain text of a pane: up to `history` lines of scrollback followed by
    /// the visible screen, wrapped lines joined, no escape sequences.
    ///
    /// For a program on the alternate screen this is the alternate screen
    /// only (tmux keeps no scrollback for it).
    ///
    /// tmux 3.2a pads each line with the spaces of cells that were only
    /// cleared ([`Capabilities::joined_capture_exact`](crate::Capabilities)):
    /// there the spaces ending a line are trimmed, as `capture-pane`
    /// without `-J` trims them.
    pub fn capture_text(&self, pane: PaneId, history: u32) -> Result<String> {
        let target = pane.to_string();
        let start = format!("-{history}");
        let text = self.run(["capture-pane", "-p", "-J", "-S", &start, "-t", &target])?;
        if self.capabilities().joined_capture_exact {
            return Ok(text);
        }
        Ok(trim_line_ends(&text))
    }

    /// Every client attached to the server, control-mode clients included.
    pub fn list_clients(&self) -> Result<Vec<Client>> {
        let rec = Records::new(CLIENT_FIELDS);
        let out = self.run(["list-clients", "-F", &rec.format()])?;
        Ok(rec
            .parse(&out, "list-clients")?
            .iter()
            .map(client_from)
            .collect())
    }

    /// The server's pid, its clients and every pane, in one tmux
    /// invocation: what a watcher polls each second costs one process
    /// instead of three.
    pub fn snapshot(&self) -> Result<Snapshot> {
        let q = SnapshotQuery::new(self.capabilities().printing);
        let out = self.run_many(&q.commands())?;
        q.parse(&out)
    }

    /// Applies `updates`, redraws the status line of `clients` (as
    /// [`Server::publish`]) and then reads a [`Snapshot`], all in one tmux
    /// invocation: a daemon whose changes and periodic listing fall due
    /// together starts one process for both. The listing is taken after the
    /// updates, so it sees them.
    ///
    /// A target that vanished meanwhile makes tmux skip the rest of a batch;
    /// then the updates are applied as [`Server::publish`] does (skipping
    /// what is gone) and the snapshot is read on its own.
    pub fn publish_and_snapshot(
        &self,
        updates: &[OptionUpdate],
        clients: &[String],
    ) -> Result<Snapshot> {
        let mut commands = crate::options::publish_commands(updates, clients)?;
        let q = SnapshotQuery::new(self.capabilities().printing);
        commands.extend(q.commands());
        match self.run_many(&commands) {
            Ok(out) => q.parse(&out),
            Err(e) if e.is_target_gone() => {
                self.publish(updates, clients)?;
                self.snapshot()
            }
            Err(e) => Err(e),
        }
    }
}

/// The three listings of a [`Snapshot`] and how to read their output.
struct SnapshotQuery {
    srv: Records,
    cl: Records,
    pa: Records,
    printing: Printing,
}

impl SnapshotQuery {
    fn new(printing: Printing) -> SnapshotQuery {
        SnapshotQuery {
            srv: Records::new(&["pid"]),
            cl: Records::new(CLIENT_FIELDS),
            pa: Records::new(PANE_FIELDS),
            printing,
        }
    }

    fn commands(&self) -> Vec<Vec<String>> {
        vec![
            vec!["display-message".into(), "-p".into(), self.srv.format()],
            vec!["list-clients".into(), "-F".into(), self.cl.format()],
            vec![
                "list-panes".into(),
                "-a".into(),
                "-F".into(),
                self.pa.format(),
            ],
        ]
    }

    fn parse(&self, out: &str) -> Result<Snapshot> {
        let (server, rest) = self.srv.split(out, "display-message")?;
        let server_pid = server.first().map(|r| r.num("pid")).unwrap_or(0);
        let (clients, rest) = self.cl.split(rest, "list-clients")?;
        let clients = clients.iter().map(client_from).collect();
        let panes = self
            .pa
            .parse(rest, "list-panes")?
            .iter()
            .map(|r| pane_from(r, self.printing))
            .collect::<Result<Vec<_>>>()?;
        Ok(Snapshot {
            server_pid,
            clients,
            panes,
        })
    }
}

/// What [`Server::snapshot`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// `#{pid}` of the server.
    pub server_pid: u32,
    /// Attached clients.
    pub clients: Vec<Client>,
    /// Every pane.
    pub panes: Vec<Pane>,
}

/// `text` with the spaces ending each line removed (its newlines kept).
fn trim_line_ends(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        out.push_str(body.trim_end_matches(' '));
        out.push_str(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ends_are_trimmed_of_spaces_only() {
        assert_eq!(
            trim_line_ends("hello   \nworld\t \n  \n\nend  "),
            "hello\nworld\t\n\n\nend"
        );
        assert_eq!(trim_line_ends(""), "");
        assert_eq!(trim_line_ends("a \u{3000}\n"), "a \u{3000}\n");
    }
}
