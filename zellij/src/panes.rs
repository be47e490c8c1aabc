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
//! * [`Session::focused_pane`] — the focused pane of the active tab.

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
    /// Focused in its tab (each tab has a focused pane; the session's
    /// focused pane is the one of the active tab).
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

impl Session {
    /// Every pane of the session, terminal and plugin, in every tab.
    pub fn list_panes(&self) -> Result<Vec<Pane>> {
        let out = self.action(&["list-panes", "--json", "--all"])?;
        parse_list_panes(&out.stdout)
    }

    /// Every tab of the session.
    pub fn list_tabs(&self) -> Result<Vec<Tab>> {
        let out = self.action(&["list-tabs", "--json", "--all"])?;
        parse_list_tabs(&out.stdout)
    }

    /// The pane the user looks at: the focused pane of the active tab (as
    /// seen by the client zellij considers current), if any.
    pub fn focused_pane(&self) -> Result<Option<PaneId>> {
        let panes = self.list_panes()?;
        let tabs = self.list_tabs()?;
        let Some(active) = tabs.iter().find(|t| t.active) else {
            return Ok(None);
        };
        Ok(focused_in_tab(&panes, active.tab_id))
    }

    /// The pane's viewport as text, one line per row (trailing blanks as
    /// zellij prints them). With `ansi`, styling escapes are kept.
    pub fn dump_screen(&self, pane: PaneId, ansi: bool) -> Result<String> {
        let id = pane.to_string();
        let mut args = vec!["dump-screen", "--pane-id", id.as_str()];
        if ansi {
            args.push("--ansi");
        }
        self.action(&args)
            .map(|o| o.stdout)
            .map_err(|e| pane_error(e, "dump-screen", pane))
    }

    /// Focuses the pane, switching to its tab.
    pub fn focus_pane(&self, pane: PaneId) -> Result<()> {
        let id = pane.to_string();
        self.action(&["focus-pane-id", id.as_str()])
            .map(|_| ())
            .map_err(|e| pane_error(e, "focus-pane-id", pane))
    }
}

/// The focused pane among the selectable, non-suppressed panes of a tab,
/// preferring a focused floating pane (it is on top when floating panes are
/// shown).
pub fn focused_in_tab(panes: &[Pane], tab_id: usize) -> Option<PaneId> {
    let mut focused = panes
        .iter()
        .filter(|p| p.tab_id == tab_id && p.focused && p.selectable && !p.suppressed);
    let first = focused.next()?;
    if first.floating {
        return Some(first.id);
    }
    Some(
        focused
            .find(|p| p.floating)
            .map(|p| p.id)
            .unwrap_or(first.id),
    )
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

fn mentions_missing_pane(text: &str) -> bool {
    let t = text.to_lowercase();
    t.contains("pane") && (t.contains("not found") || t.contains("no pane") || t.contains("does not exist"))
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
    fn missing_pane_messages() {
        assert!(mentions_missing_pane("Pane with id terminal_9 not found"));
        assert!(!mentions_missing_pane("permission denied"));
    }
}
