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

    /// A pane's window as users know it: tmux's `@N`, zellij's tab name.
    pub fn window(self, info: &crate::pane::PaneInfo) -> String {
        match self {
            Mux::Tmux => info.window_id.to_string(),
            Mux::Zellij => info.window_name.clone(),
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

    /// Whether a guard process (tmux's `run-shell` cleanup when the daemon
    /// dies) exists. zellij's plugin hides a status whose time to live ran
    /// out instead.
    pub fn has_guard(self) -> bool {
        self == Mux::Tmux
    }
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
