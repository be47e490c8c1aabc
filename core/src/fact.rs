//! What the core publishes for a status line, in no multiplexer's terms:
//! one fact per pane, window (tab), session or the whole server, each with
//! its value as text (tend's own words, counts, Unix seconds, pane ids).
//!
//! The core computes the facts ([`crate::publish::compute`]) and sends
//! what changed ([`FactUpdate`]s in [`crate::MuxJob::Publish`]); the
//! backend writes them its own way. The tmux backend names each fact as
//! the user option its users read (`@tend_state`, `@tend_window_band`:
//! `daemon/src/published.rs`, the one place those names are made); a
//! backend that shows the status as one payload takes
//! [`crate::overview::Overview`] instead (zellij's plugin).

use tend_protocol::{PaneId, SessionId, WindowId};

/// A fact about one pane running an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PaneFact {
    /// The agent's id.
    Agent,
    /// The agent's state.
    State,
    /// Why it is in that state.
    Reason,
    /// Its attention band.
    Band,
    /// The band's glyph ([`crate::publish::glyph`]).
    Glyph,
    /// Unix seconds the state was entered.
    Since,
    /// Marks shown next to the state.
    Marks,
    /// The exit code of a run that has exited.
    ExitCode,
    /// The pane's project (`tend · main`): a directory's or a branch's
    /// name, nobody's typed text ([`Fact::is_foreign_text`]).
    Project,
    /// Waiting on its usage limit: Unix seconds it resets.
    ResetsAt,
    /// The same as the user reads the time (`15:00`).
    Reset,
    /// Where "next waiting" goes from this pane.
    Next,
    /// Where "next waiting in this session" goes from this pane.
    NextSession,
    /// Where "next working" goes from this pane.
    NextWorking,
}

impl PaneFact {
    /// Every pane fact.
    pub const ALL: &'static [PaneFact] = &[
        PaneFact::Agent,
        PaneFact::State,
        PaneFact::Reason,
        PaneFact::Band,
        PaneFact::Glyph,
        PaneFact::Since,
        PaneFact::Marks,
        PaneFact::ExitCode,
        PaneFact::Project,
        PaneFact::ResetsAt,
        PaneFact::Reset,
        PaneFact::Next,
        PaneFact::NextSession,
        PaneFact::NextWorking,
    ];
}

/// A fact about one window (zellij: tab): the rollup of its panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WindowFact {
    /// The worst band of its panes.
    Band,
    /// That band's glyph.
    Glyph,
}

impl WindowFact {
    /// Every window fact.
    pub const ALL: &'static [WindowFact] = &[WindowFact::Band, WindowFact::Glyph];
}

/// A fact about one session: the rollup of its panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SessionFact {
    /// The worst band of its panes.
    Band,
    /// How many of its panes need the user.
    Needs,
}

impl SessionFact {
    /// Every session fact.
    pub const ALL: &'static [SessionFact] = &[SessionFact::Band, SessionFact::Needs];
}

/// A fact about everything the daemon watches (remotes included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GlobalFact {
    /// How many panes need the user.
    Needs,
    /// How many are quiet.
    Quiet,
    /// How many wait on their usage limit.
    Limited,
    /// The soonest of their resets, as the user reads the time.
    NextReset,
    /// The sentence (`2 agents need you · 1 on build-box`).
    Summary,
    /// The worst band.
    ServerBand,
    /// The first "next waiting" target.
    Next,
    /// The first "next working" target.
    NextWorking,
}

impl GlobalFact {
    /// Every global fact.
    pub const ALL: &'static [GlobalFact] = &[
        GlobalFact::Needs,
        GlobalFact::Quiet,
        GlobalFact::Limited,
        GlobalFact::NextReset,
        GlobalFact::Summary,
        GlobalFact::ServerBand,
        GlobalFact::Next,
        GlobalFact::NextWorking,
    ];
}

/// One published fact and what it is about. The order (global first, then
/// sessions, windows, panes) is the order updates go out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fact {
    /// About everything watched.
    Global(GlobalFact),
    /// About one session.
    Session(SessionId, SessionFact),
    /// About one window.
    Window(WindowId, WindowFact),
    /// About one pane.
    Pane(PaneId, PaneFact),
}

impl Fact {
    /// The value is nobody's typed text (a directory's or a branch's
    /// name): a backend escapes it for whatever expands it (tmux's
    /// `#{E:@tend_project}`). Every other value is tend's own words, marks,
    /// numbers or pane ids.
    pub fn is_foreign_text(self) -> bool {
        matches!(self, Fact::Pane(_, PaneFact::Project))
    }
}

/// One fact to publish or withdraw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactUpdate {
    /// Which fact.
    pub fact: Fact,
    /// Its new value; `None` withdraws it.
    pub value: Option<String>,
}

impl FactUpdate {
    /// `fact` is now `value`.
    pub fn set(fact: Fact, value: impl Into<String>) -> FactUpdate {
        FactUpdate {
            fact,
            value: Some(value.into()),
        }
    }

    /// `fact` is withdrawn.
    pub fn unset(fact: Fact) -> FactUpdate {
        FactUpdate { fact, value: None }
    }
}
