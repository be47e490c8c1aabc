//! `R` in the fleet view: what ran when the last server ended and where
//! (`tend restore`'s list), each one restored with Enter or every one
//! with `A` — the daemon decides, as for `tend restore`.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use tend_protocol::params;
use tend_protocol::reply::{Restorable, Restored};

use super::app::{App, Mode};
use super::{model, Pilot};

impl Pilot {
    /// Asks the daemon what could be restored; `None` when it cannot say.
    fn restorable(&self, app: &mut App) -> Option<Restored> {
        match self.call(params::Restore::default()) {
            Ok(v) => Some(v),
            Err(e) => {
                app.status = model::sanitize(&e.message, 300);
                None
            }
        }
    }

    /// The status line's offer, when a run is left to restore (at start).
    pub(super) fn offer_restore(&self, app: &mut App) {
        let Some(v) = self.restorable(app) else {
            return;
        };
        let can = v
            .conversations
            .iter()
            .filter(|c| c.command.is_some())
            .count();
        if can > 0 {
            app.status = match can {
                1 => "1 agent ran when the last server ended: R to restore it".to_owned(),
                n => format!("{n} agents ran when the last server ended: R to restore them"),
            };
        }
    }

    /// `R`: the list.
    pub(super) fn open_restore(&self, app: &mut App) {
        if let Some(v) = self.restorable(app) {
            if v.conversations.is_empty() {
                app.status = "nothing to restore".to_owned();
            } else {
                app.mode = Mode::Restore(v.conversations, 0);
            }
        }
    }

    /// A key while the list shows; `false` ends the view.
    pub(super) fn restore_key(
        &self,
        app: &mut App,
        k: KeyEvent,
        items: Vec<Restorable>,
        at: usize,
    ) -> bool {
        let last = items.len().saturating_sub(1);
        let call = match k.code {
            KeyCode::Down | KeyCode::Char('j') => {
                app.mode = Mode::Restore(items, (at + 1).min(last));
                return true;
            }
            KeyCode::Up | KeyCode::Char('k') => {
                app.mode = Mode::Restore(items, at.saturating_sub(1));
                return true;
            }
            KeyCode::Enter => match items.get(at) {
                Some(c) => params::Restore {
                    places: vec![c.place.clone()],
                    ..Default::default()
                },
                None => return true,
            },
            KeyCode::Char('A') => params::Restore {
                all: true,
                ..Default::default()
            },
            KeyCode::Char('q') | KeyCode::Esc => {
                app.mode = Mode::List;
                return true;
            }
            _ => return true,
        };
        app.status = match self.call(call) {
            Ok(v) => said(&v),
            Err(e) => model::sanitize(&e.message, 300),
        };
        // What is left (a run restored leaves the list).
        app.mode = match self.restorable(app) {
            Some(v) if !v.conversations.is_empty() => {
                let at = at.min(v.conversations.len() - 1);
                Mode::Restore(v.conversations, at)
            }
            _ => Mode::List,
        };
        true
    }
}

/// One sentence for what a restore did.
fn said(v: &Restored) -> String {
    let started: Vec<String> = v
        .conversations
        .iter()
        .filter(|c| c.started)
        .map(|c| format!("{} in {}", c.name, c.target.as_deref().unwrap_or("?")))
        .collect();
    let chosen_skips: Vec<&str> = v
        .conversations
        .iter()
        .filter(|c| !c.started)
        .filter_map(|c| c.skipped.as_deref())
        .collect();
    match (started.is_empty(), chosen_skips.first()) {
        (false, _) => model::sanitize(&format!("restored: {}", started.join(", ")), 300),
        (true, Some(why)) => model::sanitize(&format!("not restored: {why}"), 300),
        (true, None) => "nothing restored".to_owned(),
    }
}
