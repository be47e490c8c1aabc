//! When to notify, and what to say.
//!
//! A [`Notifier`] is fed what the daemon publishes — a pane's status
//! changed, a gated park released itself, a self-reporting agent went
//! *gone*, a pane closed — each with the time it happened and the local
//! time of day, and hands back [`Notification`]s ready to deliver. It
//! decides; the sidecar's adapters deliver (desktop, tmux, terminal).
//!
//! The rules:
//!
//! * A pane is notified when it *enters* a demand band (blocked, waiting,
//!   ready for review), or when what it demands changes (a question that
//!   turns into an approval dialog, a wait that ends in a finished turn).
//!   Quiet, a park released by its gate and a reporter gone are notified
//!   too, each behind its own switch ([`Switches`]), and so are a usage
//!   limit hit (the `limited` band, no demand), its reset (the pane then
//!   demands: `waiting` with reason `limit`) and tend resuming the agent.
//! * Never for a pane a client is showing: the user is looking at it.
//! * Bursts are grouped: the first notifiable happening opens a window
//!   ([`Policy::group_window`], 200 ms by default); everything that arrives
//!   within it goes out as one notification when it closes. Within a
//!   window a pane appears once, with its latest demand; a pane that stops
//!   demanding (answered, focused, closed) before the window closes is left
//!   out.
//! * Quiet hours ([`QuietHours`]) drop what happens inside them; nothing is
//!   saved up for the morning (the status line still shows it).
//! * The wording is [`bands::sentence`] for one pane; a group names a
//!   reason only when every member shares it.
//!
//! Like the detector, it takes time as an input: call
//! [`Notifier::poll_timeout`] for when it next wants to run and
//! [`Notifier::handle_timeout`] then.
//!
//! This file holds what goes in and comes out ([`Happening`],
//! [`StatusChange`], [`Notification`]); `policy.rs` the settings,
//! `notifier.rs` the state machine and `compose.rs` the wording. Their
//! public names are re-exported here.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::bands::{self, Band};
use tend_vocab::{Reason, State};

mod compose;
mod notifier;
mod policy;

#[cfg(test)]
mod testutil;

pub use notifier::{Notifier, FIRST_SIGHT_GRACE};
pub use policy::{Policy, QuietHours, Switches, TimeOfDay, DEFAULT_GROUP_WINDOW};

/// A pane's status changed (the daemon's `pane.agent_status_changed`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatusChange {
    /// Pane id (`%3`).
    pub pane: String,
    /// The agent's display name ("Claude"), when known.
    pub name: Option<String>,
    /// The session the pane is in, for the notification's body.
    pub session: Option<String>,
    /// A client is showing this pane right now.
    pub focused: bool,
    /// The state now.
    pub state: Option<State>,
    /// The waiting reason now.
    pub reason: Option<Reason>,
    /// The band now.
    pub band: Option<Band>,
    /// The state before.
    pub prev_state: Option<State>,
    /// The reason before.
    pub prev_reason: Option<Reason>,
    /// The band before.
    pub prev_band: Option<Band>,
    /// What the agent said about it (`tend report --message`, an OSC 7501
    /// `msg`): shown in the notification's body.
    pub message: Option<String>,
    /// When its plan's usage limit resets, as the user reads the time
    /// (`15:00`, `Tue 09:00`), while it waits on one that named it.
    pub resets: Option<String>,
}

/// Something the notifier is told about.
#[derive(Debug, Clone, PartialEq)]
pub enum Happening {
    /// A pane's status changed.
    Status(StatusChange),
    /// A gated park released itself.
    ParkReleased {
        /// The parked pane.
        pane: String,
        /// The gate pane.
        gate: String,
        /// The park's note, in the user's words.
        note: String,
        /// Released because the gate pane is gone (rather than ready).
        gate_gone: bool,
    },
    /// A self-reporting agent went gone.
    Gone {
        /// The pane.
        pane: String,
        /// Whether the user is to be told (false after a `stopped` report).
        notify: bool,
    },
    /// A pane closed.
    Closed {
        /// The pane.
        pane: String,
    },
    /// tend sent the resume text into a pane at its usage limit's reset.
    Resumed {
        /// The pane.
        pane: String,
        /// What was sent.
        text: String,
    },
}

/// How loudly a notification asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Urgency {
    /// Finished turns, quiet runs.
    Low,
    /// Waiting on the user.
    Normal,
    /// Blocked by an error.
    Critical,
}

/// One notification, ready for any adapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notification {
    /// The headline: "Claude is waiting for approval", "3 agents need you".
    pub title: String,
    /// Where, and for a group one line per member.
    pub body: String,
    /// The panes it is about, most urgent first.
    pub panes: Vec<String>,
    /// How loudly it asks.
    pub urgency: Urgency,
}

impl Notification {
    /// The title and body on one line (a status-line message).
    pub fn one_line(&self) -> String {
        let mut line = self.title.clone();
        for l in self.body.lines().filter(|l| !l.trim().is_empty()) {
            line.push_str(" · ");
            line.push_str(l.trim());
        }
        line
    }
}
