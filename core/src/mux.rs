//! Which terminal multiplexer the daemon serves, and what the pane table
//! needs to know about it.
//!
//! The pane table ([`crate::Core`]) is the same for every multiplexer: it
//! takes [`crate::Input`]s and asks for [`crate::MuxJob`]s. A
//! backend is the thread that runs those jobs against one multiplexer and
//! reports back as events: the tmux worker, and the zellij backend
//! for zellij. The job list is the adapter's interface: list panes and
//! clients, capture (seed) a screen, tap or subscribe for output, publish,
//! jump, paste and send keys, persist, clean up. A backend answers what it
//! cannot do with a no-op or a clear error, never a panic.
//!
//! Pane ids inside the table are [`PaneId`] numbers for both: tmux's `%N`,
//! zellij's `terminal_N`. Users, self-reporting agents and the state file
//! see the multiplexer's own spelling ([`Mux::name`]).
//!
//! What a backend can do beyond the jobs every backend runs, it declares
//! when the daemon starts, as a [`Backend`] (`daemon/src/worker.rs`'s
//! `BACKEND` for tmux, `daemon/src/zellij.rs`'s for zellij): the core asks
//! "can the backend do X", never "is this tmux". [`Mux`] stays for what is
//! only a matter of spelling — pane ids as users write them, the words in
//! messages — where one match per multiplexer is the whole table of it.

use tend_protocol::PaneId;

/// The multiplexer behind the daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mux {
    /// tmux: panes `%N`.
    #[default]
    Tmux,
    /// zellij: terminal panes `terminal_N`.
    Zellij,
}

impl Mux {
    /// The multiplexer's name, for messages and `ping`.
    pub fn word(self) -> &'static str {
        match self {
            Mux::Tmux => "tmux",
            Mux::Zellij => "zellij",
        }
    }

    /// A pane as the multiplexer's users name it: `%3`, `terminal_3`.
    pub fn name(self, id: PaneId) -> String {
        match self {
            Mux::Tmux => id.to_string(),
            Mux::Zellij => format!("terminal_{}", id.0),
        }
    }

    /// A pane id as the user wrote it. zellij also takes the bare number
    /// (`$ZELLIJ_PANE_ID`) and `%N`.
    pub fn parse(self, raw: &str) -> Option<PaneId> {
        match self {
            Mux::Tmux => raw.parse().ok(),
            Mux::Zellij => {
                let n = raw
                    .strip_prefix("terminal_")
                    .or_else(|| raw.strip_prefix('%'))
                    .unwrap_or(raw);
                // Digits only: `u32::from_str` would take a leading `+`.
                (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| n.parse().ok().map(PaneId))
                    .flatten()
            }
        }
    }

    /// An example pane id, for error messages.
    pub fn example(self) -> &'static str {
        match self {
            Mux::Tmux => "%3",
            Mux::Zellij => "terminal_3",
        }
    }

    /// What the daemon watches, for error messages: `this tmux server`.
    pub fn place(self) -> &'static str {
        match self {
            Mux::Tmux => "this tmux server",
            Mux::Zellij => "this zellij session",
        }
    }
}

/// What a backend offers the core, declared by the backend at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backend {
    /// How its panes are spelled and named in messages.
    pub mux: Mux,
    /// A guard process cleans the status up when the daemon dies
    /// ([`crate::MuxJob::Guard`]; tmux's `run-shell`). Without one the
    /// status must expire by itself (zellij's plugin hides a status whose
    /// time to live ran out).
    pub guard: bool,
    /// How the status line takes what the core publishes.
    pub status: StatusForm,
    /// How each pane's output reaches the core.
    pub output: OutputRead,
    /// `tend restore` can start agents again in its panes. zellij brings
    /// its sessions back itself (session resurrection).
    pub restore: bool,
    /// A remote pane can be opened in a local window attached to it
    /// ([`crate::MuxJob::RemoteAttach`]).
    pub remote_windows: bool,
}

/// How the status line takes what the core publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusForm {
    /// Each fact that changed, where it belongs ([`crate::Fact`],
    /// [`crate::MuxJob::Publish`]): tmux's options.
    Facts,
    /// The whole status in one piece, whenever it may have changed
    /// ([`crate::overview::Overview`], [`crate::MuxJob::Overview`]):
    /// zellij's plugin.
    Overview,
}

/// How each pane's output reaches the core, as `tend list` shows it
/// ([`tend_vocab::Tap`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputRead {
    /// A tap per pane that the core installs and follows (tmux's
    /// `pipe-pane`): tapped, polled beside someone else's pipe, or waiting
    /// for its tap.
    Taps,
    /// One subscription for the panes of the windows (tabs) a client shows;
    /// the others' screens are polled (zellij's `subscribe` and
    /// `dump-screen`).
    ShownLive,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_parses_panes_per_multiplexer() {
        assert_eq!(Mux::Tmux.name(PaneId(3)), "%3");
        assert_eq!(Mux::Zellij.name(PaneId(3)), "terminal_3");
        assert_eq!(Mux::Tmux.parse("%3"), Some(PaneId(3)));
        assert_eq!(Mux::Tmux.parse("terminal_3"), None);
        assert_eq!(Mux::Tmux.parse("3"), None);
        for ok in ["terminal_3", "3", "%3"] {
            assert_eq!(Mux::Zellij.parse(ok), Some(PaneId(3)), "{ok}");
        }
        for bad in ["", "terminal_", "plugin_1", "+3", "terminal_x", "@3"] {
            assert_eq!(Mux::Zellij.parse(bad), None, "{bad}");
        }
    }
}
