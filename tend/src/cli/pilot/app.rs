//! The fleet view's state: the panes, the rows shown, the selection, the
//! mode over the list, and what the background threads tell the loop.

use std::time::{SystemTime, UNIX_EPOCH};

use tend_protocol::{BusEvent, PaneView};

use super::model;

/// What the background threads tell the loop.
pub(crate) enum Msg {
    /// The event stream is up (the list must be fetched).
    Subscribed,
    /// An event line.
    Event(Option<BusEvent>),
    /// The stream ended.
    Lost(String),
}

/// What the line editor is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    Prompt,
    Note,
}

/// A mode over the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    List,
    /// Typing a line (for `pane`).
    Typing(Input, String, String),
    /// Choosing a snooze length.
    Snooze(String),
    /// A text shown over the list (explain, capture, the keys).
    Text(String, Vec<String>, usize),
    /// What ran when the last server ended, one of them chosen (`R`).
    Restore(Vec<tend_protocol::reply::Restorable>, usize),
}

/// The view's state.
pub(crate) struct App {
    pub(crate) panes: Vec<PaneView>,
    /// Indexes into `panes`, in display order, after the filter.
    pub(crate) rows: Vec<usize>,
    pub(crate) filter: Option<usize>,
    /// The selected pane's id (kept across reorders).
    pub(crate) selected: Option<String>,
    pub(crate) offset: usize,
    pub(crate) mode: Mode,
    /// The selected pane's screen tail and dialog, with its pane.
    pub(crate) preview: (String, Vec<String>, Vec<String>),
    pub(crate) status: String,
    pub(crate) connected: bool,
    pub(crate) now: f64,
}

pub(crate) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl App {
    pub(crate) fn new(panes: Vec<PaneView>) -> App {
        let mut a = App {
            panes,
            rows: Vec::new(),
            filter: None,
            selected: None,
            offset: 0,
            mode: Mode::List,
            preview: Default::default(),
            status: String::new(),
            connected: true,
            now: unix_now(),
        };
        a.reorder();
        a
    }

    /// Orders and filters the rows again; the selection stays on its pane
    /// (or the first row).
    pub(crate) fn reorder(&mut self) {
        let all = model::order(&self.panes);
        self.rows = match self.filter {
            Some(g) => all
                .into_iter()
                .filter(|&i| model::group_of(&self.panes[i]) == g)
                .collect(),
            None => all,
        };
        let keep = self
            .selected
            .as_ref()
            .is_some_and(|s| self.rows.iter().any(|&i| self.panes[i].pane == *s));
        if !keep {
            self.selected = self.rows.first().map(|&i| self.panes[i].pane.clone());
        }
    }

    pub(crate) fn selected_index(&self) -> Option<usize> {
        let s = self.selected.as_ref()?;
        self.rows.iter().position(|&i| self.panes[i].pane == *s)
    }

    pub(crate) fn current(&self) -> Option<&PaneView> {
        let i = self.selected_index()?;
        Some(&self.panes[self.rows[i]])
    }

    pub(crate) fn step(&mut self, by: isize) {
        if self.rows.is_empty() {
            return;
        }
        let at = self.selected_index().unwrap_or(0) as isize;
        let to = (at + by).clamp(0, self.rows.len() as isize - 1) as usize;
        self.selected = Some(self.panes[self.rows[to]].pane.clone());
    }

    /// A pane's new view (or its end).
    pub(crate) fn upsert(&mut self, pane: &str, view: Option<PaneView>) {
        let at = self.panes.iter().position(|p| p.pane == pane);
        match (at, view) {
            (Some(i), Some(v)) => self.panes[i] = v,
            (None, Some(v)) => self.panes.push(v),
            (Some(i), None) => {
                self.panes.remove(i);
            }
            (None, None) => {}
        }
        self.reorder();
    }

    pub(crate) fn toggle_filter(&mut self, g: usize) {
        self.filter = if self.filter == Some(g) {
            None
        } else {
            Some(g)
        };
        self.offset = 0;
        self.reorder();
    }
}
