//! Reading a session's panes and tabs, and what a pane shows.
//!
//! * [`Session::list_panes`] — `zellij action list-panes --json --all`,
//!   parsed by [`parse_list_panes`] into [`Pane`]s.
//! * [`Session::list_tabs`] — `zellij action list-tabs --json --all`,
//!   parsed by [`parse_list_tabs`] into [`Tab`]s.
//! * [`Session::dump_screen`] — `zellij action dump-screen --pane-id …`:
//!   the pane's viewport as text (with `--ansi`, with its styling).
//! * [`Session::focus_pane`] — `zellij action focus-pane-id …`, which also
//!   switches to the pane's tab.
//! * [`Session::list_clients`] — `zellij action list-clients`: the pane
//!   each attached client looks at; [`Session::focused_pane`] is the first
//!   client's.
//!
//! Plugin panes print an empty line through `dump-screen` (zellij 0.45 renders
//! plugins per client); read them with
//! [`Session::viewport`](crate::Session::viewport), which takes the initial
//! update of a short subscription.

use serde::Deserialize;

use crate::error::{Result, ZellijError};
use crate::ids::PaneId;
use crate::session::Session;

/// One pane as `list-panes --json` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pane {
    /// The pane id (`terminal_N` or `plugin_N`).
    pub id: PaneId,
    /// The title in the pane frame (a program may set it with OSC 0/2).
    pub title: String,
    /// The tab's stable id (survives moving and renaming tabs).
    pub tab_id: usize,
    /// The tab's position, from 0 (changes when tabs move).
    pub tab_position: usize,
    /// The tab's name.
    pub tab_name: String,
    /// Focused in its tab by some client. Each tab keeps a focused pane per
    /// client, and a command-line client that moved focus counts as one, so
    /// several panes of a tab can be focused: ask
    /// [`Session::list_clients`] what the user looks at.
    pub focused: bool,
    /// Floating rather than tiled.
    pub floating: bool,
    /// Fullscreen in its tab.
    pub fullscreen: bool,
    /// Hidden (suppressed) by zellij, e.g. replaced in place.
    pub suppressed: bool,
    /// Can take focus (status bars and tab bars cannot).
    pub selectable: bool,
    /// The pane's command exited (a command pane held open).
    pub exited: bool,
    /// The exit status of an exited command pane.
    pub exit_status: Option<i32>,
    /// The command the pane was started with (`command` panes only).
    pub terminal_command: Option<String>,
    /// The command running in the pane now (its foreground process, as
    /// zellij reads it from the pty), e.g. `tend play demo:claude`.
    pub command: Option<String>,
    /// The pane's working directory.
    pub cwd: Option<String>,
    /// For a plugin pane, where it was loaded from (`file:/…/tend.wasm`,
    /// `zellij:tab-bar`).
    pub plugin_url: Option<String>,
    /// Position and size.
    pub geometry: Geometry,
    /// The cursor, `(x, y)` in the pane's content, when visible.
    pub cursor: Option<(usize, usize)>,
}

impl Pane {
    /// True for a terminal pane (where an agent can run).
    pub fn is_terminal(&self) -> bool {
        self.id.is_terminal()
    }
}

/// Where a pane sits and how big it is, in cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Geometry {
    /// Column of the pane (frame included).
    pub x: usize,
    /// Row of the pane (frame included).
    pub y: usize,
    /// Rows, frame included.
    pub rows: usize,
    /// Columns, frame included.
    pub cols: usize,
    /// Column of the content area.
    pub content_x: usize,
    /// Row of the content area.
    pub content_y: usize,
    /// Rows of the content area: the screen an agent draws on.
    pub content_rows: usize,
    /// Columns of the content area.
    pub content_cols: usize,
}

/// One tab as `list-tabs --json` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tab {
    /// The tab's stable id.
    pub tab_id: usize,
    /// Its position, from 0.
    pub position: usize,
    /// Its name.
    pub name: String,
    /// The active tab of the client that asked: what that client sees.
    pub active: bool,
}

/// One attached client as `list-clients` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// zellij's client id.
    pub client_id: u32,
    /// The pane the client has focused (what the user looks at).
    pub pane: Option<PaneId>,
    /// The command running in that pane, as zellij shows it.
    pub command: String,
}

#[derive(Deserialize)]
struct RawPane {
    id: u32,
    is_plugin: bool,
    #[serde(default)]
    title: String,
    #[serde(default)]
    tab_id: usize,
    #[serde(default)]
    tab_position: usize,
    #[serde(default)]
    tab_name: String,
    #[serde(default)]
    is_focused: bool,
    #[serde(default)]
    is_floating: bool,
    #[serde(default)]
    is_fullscreen: bool,
    #[serde(default)]
    is_suppressed: bool,
    #[serde(default = "yes")]
    is_selectable: bool,
    #[serde(default)]
    exited: bool,
    #[serde(default)]
    exit_status: Option<i32>,
    #[serde(default)]
    terminal_command: Option<String>,
    #[serde(default)]
    pane_command: Option<String>,
    #[serde(default)]
    pane_cwd: Option<String>,
    #[serde(default)]
    plugin_url: Option<String>,
    #[serde(default)]
    pane_x: usize,
    #[serde(default)]
    pane_y: usize,
    #[serde(default)]
    pane_rows: usize,
    #[serde(default)]
    pane_columns: usize,
    #[serde(default)]
    pane_content_x: usize,
    #[serde(default)]
    pane_content_y: usize,
    #[serde(default)]
    pane_content_rows: usize,
    #[serde(default)]
    pane_content_columns: usize,
    #[serde(default)]
    cursor_coordinates_in_pane: Option<(usize, usize)>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct RawTab {
    position: usize,
    #[serde(default)]
    name: String,
    #[serde(default)]
    active: bool,
    #[serde(default)]
    tab_id: Option<usize>,
}

/// Parses the output of `zellij action list-panes --json` (an array of
/// objects; unknown fields are ignored, missing optional ones default).
pub fn parse_list_panes(json: &str) -> Result<Vec<Pane>> {
    let raw: Vec<RawPane> = serde_json::from_str(json.trim()).map_err(|e| ZellijError::Parse {
        what: "`list-panes --json`".into(),
        detail: e.to_string(),
    })?;
    Ok(raw
        .into_iter()
        .map(|r| Pane {
            id: if r.is_plugin {
                PaneId::Plugin(r.id)
            } else {
                PaneId::Terminal(r.id)
            },
            title: r.title,
            tab_id: r.tab_id,
            tab_position: r.tab_position,
            tab_name: r.tab_name,
            focused: r.is_focused,
            floating: r.is_floating,
            fullscreen: r.is_fullscreen,
            suppressed: r.is_suppressed,
            selectable: r.is_selectable,
            exited: r.exited,
            exit_status: r.exit_status,
            terminal_command: r.terminal_command.filter(|s| !s.is_empty()),
            command: r.pane_command.filter(|s| !s.is_empty()),
            cwd: r.pane_cwd.filter(|s| !s.is_empty()),
            plugin_url: r.plugin_url.filter(|s| !s.is_empty()),
            geometry: Geometry {
                x: r.pane_x,
                y: r.pane_y,
                rows: r.pane_rows,
                cols: r.pane_columns,
                content_x: r.pane_content_x,
                content_y: r.pane_content_y,
                content_rows: r.pane_content_rows,
                content_cols: r.pane_content_columns,
            },
            cursor: r.cursor_coordinates_in_pane,
        })
        .collect())
}

/// Parses the output of `zellij action list-tabs --json`.
pub fn parse_list_tabs(json: &str) -> Result<Vec<Tab>> {
    let raw: Vec<RawTab> = serde_json::from_str(json.trim()).map_err(|e| ZellijError::Parse {
        what: "`list-tabs --json`".into(),
        detail: e.to_string(),
    })?;
    Ok(raw
        .into_iter()
        .map(|r| Tab {
            tab_id: r.tab_id.unwrap_or(r.position),
            position: r.position,
            name: r.name,
            active: r.active,
        })
        .collect())
}

/// Parses `zellij action list-clients`: a header line, then
/// `CLIENT_ID PANE_ID COMMAND…` per attached client.
pub fn parse_list_clients(text: &str) -> Result<Vec<Client>> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("CLIENT_ID") {
            continue;
        }
        let (id, rest) = split_word(line);
        let client_id = id.parse().map_err(|_| ZellijError::Parse {
            what: "`list-clients`".into(),
            detail: format!("expected a client id at the start of {line:?}"),
        })?;
        let (pane, command) = split_word(rest);
        let command = command.to_owned();
        let rest = pane;
        out.push(Client {
            client_id,
            pane: rest.trim().parse().ok(),
            command,
        });
    }
    Ok(out)
}

/// The first word of `s` and what follows it (trimmed).
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    }
}

impl Session {
    /// Every pane of the session, terminal and plugin, in every tab.
    pub fn list_panes(&self) -> Result<Vec<Pane>> {
        let out = self.query(&["list-panes", "--json", "--all"])?;
        parse_list_panes(&out)
    }

    /// Every tab of the session.
    pub fn list_tabs(&self) -> Result<Vec<Tab>> {
        let out = self.query(&["list-tabs", "--json", "--all"])?;
        parse_list_tabs(&out)
    }

    /// The attached clients and the pane each looks at.
    pub fn list_clients(&self) -> Result<Vec<Client>> {
        let out = self.query(&["list-clients"])?;
        parse_list_clients(&out)
    }

    /// Runs a query action whose answer is never empty, patiently (see
    /// [`Session::patiently`]).
    fn query(&self, args: &[&str]) -> Result<String> {
        self.patiently(&args.join(" "), || {
            let out = self.action(args)?;
            Ok((!out.stdout.trim().is_empty()).then_some(out.stdout))
        })
    }

    /// The pane the user looks at: the focused pane of the first attached
    /// client, if any client is attached.
    pub fn focused_pane(&self) -> Result<Option<PaneId>> {
        Ok(self.list_clients()?.into_iter().find_map(|c| c.pane))
    }

    /// A terminal pane's viewport as text, one line per row. With `ansi`,
    /// styling escapes are kept. Works for panes in background tabs.
    ///
    /// zellij 0.45 prints at least a newline: the rows down to the last
    /// one written, or an empty line for a pane that does not exist and
    /// for plugin panes (use [`Session::viewport`](crate::Session::viewport)
    /// for those). It prints nothing at all, with success, when its screen
    /// thread does not answer within a second: 2 of 120 reads on a loaded
    /// 2-core machine. Nothing is therefore never taken for a screen (the
    /// detector would see a blank one, an answer no dialog): it asks again
    /// while the session seems busy, as the queries do, then fails.
    pub fn dump_screen(&self, pane: PaneId, ansi: bool) -> Result<String> {
        self.dump(pane, if ansi { &["--ansi"] } else { &[] })
    }

    /// The same, with the pane's scrollback above its viewport (`--full`).
    pub fn dump_history(&self, pane: PaneId) -> Result<String> {
        self.dump(pane, &["--full"])
    }

    fn dump(&self, pane: PaneId, flags: &[&str]) -> Result<String> {
        let id = pane.to_string();
        let mut args = vec!["dump-screen", "--pane-id", id.as_str()];
        args.extend_from_slice(flags);
        // A read: asking again while the session seems busy cannot do
        // anything twice.
        self.patiently(&args.join(" "), || {
            self.action(&args)
                .map(|o| (!o.stdout.is_empty()).then_some(o.stdout))
        })
        .map_err(|e| pane_error(e, "dump-screen", pane))
    }

    /// Focuses the pane, switching to its tab, for the client that typed
    /// last. zellij applies command-line focus changes to "the last client
    /// that sent a keystroke"; in a session where nobody has typed yet it
    /// moves no attached client. Fails with [`ZellijError::PaneNotFound`]
    /// for a pane that does not exist — when zellij answers in time: a busy
    /// zellij reports success after waiting 1 s for its screen thread.
    pub fn focus_pane(&self, pane: PaneId) -> Result<()> {
        let id = pane.to_string();
        self.act(&["focus-pane-id", id.as_str()])
            .map(|_| ())
            .map_err(|e| pane_error(e, "focus-pane-id", pane))
    }
}

/// Turns zellij's refusal to act on a pane into [`ZellijError::PaneNotFound`].
fn pane_error(e: ZellijError, command: &str, pane: PaneId) -> ZellijError {
    match &e {
        ZellijError::Failed { stderr, .. } if mentions_missing_pane(stderr) => {
            ZellijError::PaneNotFound {
                command: command.to_owned(),
                pane: pane.to_string(),
            }
        }
        _ => e,
    }
}

pub(crate) fn mentions_missing_pane(text: &str) -> bool {
    let t = text.to_lowercase();
    t.contains("pane")
        && (t.contains("not found") || t.contains("no pane") || t.contains("does not exist"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_minimal_entry() {
        let panes = parse_list_panes(r#"[{"id": 3, "is_plugin": false}]"#).expect("parses");
        assert_eq!(panes.len(), 1);
        assert_eq!(panes[0].id, PaneId::Terminal(3));
        assert!(panes[0].selectable);
        assert_eq!(panes[0].command, None);
    }

    #[test]
    fn refuses_garbage() {
        let err = parse_list_panes("No active session").expect_err("garbage");
        assert!(err.to_string().contains("zellij --version"), "{err}");
    }

    #[test]
    fn parses_clients() {
        let clients = parse_list_clients(
            "CLIENT_ID ZELLIJ_PANE_ID RUNNING_COMMAND\n1         terminal_2     tend play demo:gemini\n2 plugin_1 \n",
        )
        .expect("parses");
        assert_eq!(clients.len(), 2);
        assert_eq!(clients[0].client_id, 1);
        assert_eq!(clients[0].pane, Some(PaneId::Terminal(2)));
        assert_eq!(clients[0].command, "tend play demo:gemini");
        assert_eq!(clients[1].pane, Some(PaneId::Plugin(1)));
        assert!(parse_list_clients("x terminal_1 sh").is_err());
        assert!(parse_list_clients("").expect("empty").is_empty());
    }

    #[test]
    fn missing_pane_messages() {
        assert!(mentions_missing_pane("Pane with id Terminal(9) not found"));
        assert!(!mentions_missing_pane("permission denied"));
    }
}
