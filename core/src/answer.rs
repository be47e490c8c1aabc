//! Answering a dialog, and reading a pane, as both backends do it: the
//! check that the dialog a request means is still on the screen just
//! captured (written once here; the backends capture, call [`check`], then
//! send the keys it returns), and the answers' shapes.

use tend_detector::answer::{Action, Answer, Refusal};
use tend_detector::rules::ScreenView;
use tend_detector::Manifest;
use tend_protocol::reply::{Answered, Reply, Text};
use tend_protocol::{Error, ErrorCode};

/// A pane's screen as captured just before answering.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// The visible rows, as text.
    pub rows: Vec<String>,
    /// The pane's title.
    pub title: String,
    /// The alternate screen is on.
    pub alternate: bool,
    /// Cursor row and column, 0-based.
    pub cursor: (u32, u32),
    /// The pane is in copy mode (which would take the keys).
    pub in_mode: bool,
}

/// Checks that `manifest`'s dialog rule still wins on `screen` and says
/// which keys give `action`. `pane` names the pane in messages; `send`
/// false only reports (the picker), so copy mode does not matter then.
pub fn check(
    pane: &str,
    screen: Captured,
    manifest: &Manifest,
    action: Action,
    send: bool,
) -> Result<Answer, Error> {
    if screen.in_mode && send {
        return Err(in_copy_mode(pane));
    }
    let view = view_of(screen);
    tend_detector::answer::answer(&view, manifest, action).map_err(|r| refusal_of(&r, pane))
}

/// The refusal to send keys into a pane in copy mode (they would move
/// its cursor, not reach the agent).
pub(crate) fn in_copy_mode(pane: &str) -> Error {
    Error::new(
        ErrorCode::PaneInMode,
        format!(
            "{pane} is in copy mode, which would take the keys; leave it (q) and try again. Nothing was sent"
        ),
    )
}

/// A screen the backend captured, as the detector reads it.
pub(crate) fn view_of(screen: Captured) -> ScreenView {
    ScreenView {
        rows: screen.rows,
        title: screen.title,
        progress: String::new(),
        alternate: screen.alternate,
        cursor: (
            u16::try_from(screen.cursor.0).unwrap_or(u16::MAX),
            u16::try_from(screen.cursor.1).unwrap_or(u16::MAX),
        ),
    }
}

/// The answer to an `answer` request whose dialog was found (and, when
/// `sent`, answered with its keys).
pub fn answered(pane: String, manifest: &Manifest, action: Action, a: Answer, sent: bool) -> Reply {
    Answered {
        pane,
        agent: manifest.id.clone(),
        action: action.as_str().to_owned(),
        rule: a.rule,
        dialog: a.dialog,
        keys: a.keys,
        sent,
    }
    .into()
}

/// The detector's refusal to answer a dialog, as the protocol's: its code,
/// and its sentence after the pane's name.
fn refusal_of(r: &Refusal, pane: &str) -> Error {
    let code = match r {
        Refusal::NoActions { .. } => ErrorCode::NoActions,
        Refusal::NoDialog { .. } => ErrorCode::NoDialog,
        Refusal::NoOption { .. } => ErrorCode::NoOption,
    };
    Error::new(code, format!("{pane}: {r}"))
}

/// The answer to a `read` request: the screen, or with `lines` the last
/// that many lines of the screen and its history.
pub fn read_reply(pane: String, text: String, lines: Option<u32>) -> Reply {
    let text = match lines {
        Some(n) if n > 0 => {
            let all: Vec<&str> = text.trim_end_matches('\n').lines().collect();
            all[all.len().saturating_sub(n as usize)..].join("\n")
        }
        _ => text,
    };
    Text { pane, text }.into()
}
