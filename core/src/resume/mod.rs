//! Conversations remembered across restarts (`tend restore`): for every
//! pane that runs an agent, the agent's own conversation id where it
//! keeps one, its folder, the pane's place and the command line — kept in
//! the state file after the agent or the server ends, so that after a
//! restart each agent can be started again in its pane, in its own
//! conversation.
//!
//! Pure: [`book`] keeps the records (what ran, when it ended and how,
//! what was resumed), [`plan`] decides what a restore does with them.
//! The core feeds them from its pane table; what the agents' stores say
//! comes in through a [`crate::ConversationSource`].

use std::fmt;

use serde::{Deserialize, Serialize};
use tend_protocol::PaneId;

pub mod book;
pub mod plan;
mod tracking;

pub use book::Book;
pub(crate) use tracking::Conversations;

/// Where a pane was, as a user and tmux-resurrect know it: names and
/// indexes, not ids (ids start again with every server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The session's name.
    pub session: String,
    /// The window's index in its session.
    pub window_index: u32,
    /// The window's name (display, and a second way to find the window).
    pub window_name: String,
    /// The pane's index in its window.
    pub pane_index: u32,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}.{}",
            self.session, self.window_index, self.pane_index
        )
    }
}

/// The agent's own folder, where its store is, and the variable that
/// named it when one did (the new shell may not have it set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Home {
    /// The folder.
    pub dir: String,
    /// `CODEX_HOME`, when it came from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub var: Option<String>,
}

/// How a run ended, as far as tend saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum End {
    /// Still running when tend last saw it: if that was before the server
    /// ended, it is what a restore brings back.
    Running,
    /// The agent ended and its pane lived on (the user quit it).
    Exited {
        /// Unix seconds.
        at: u64,
    },
    /// Its pane was closed while the server lived.
    Closed {
        /// Unix seconds.
        at: u64,
    },
    /// A restore started it again: never a second time.
    Resumed {
        /// Unix seconds.
        at: u64,
        /// Where (`work:1.0`, or `a new window in work`).
        into: String,
    },
}

/// One agent run in one pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    /// The agent (manifest id).
    pub agent: String,
    /// The agent's own id of the conversation, where it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// How the id was found (`session file`, `command line`, `newest in
    /// the store`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_by: Option<String>,
    /// The folder it ran in (the agent's own word where it gives one).
    pub folder: String,
    /// Where its pane was.
    pub place: Place,
    /// The command line it was started with.
    pub argv: Vec<String>,
    /// The program the shell ran to start it, when it names the agent's
    /// program (`/opt/bin/claude`): the resume command runs the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// Where its store is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<Home>,
    /// Its process id and start time (clock ticks after boot): the same
    /// run seen again by a daemon started later.
    pub pid: u32,
    /// See `pid`.
    pub start_ticks: u64,
    /// Unix seconds it was first seen.
    pub since: u64,
    /// Unix seconds it was last seen running.
    pub seen: u64,
    /// How it ended.
    pub end: End,
    /// The pane it runs in now, in this daemon's server (never saved:
    /// pane ids start again with every server).
    #[serde(skip)]
    pub pane: Option<PaneId>,
    /// Its end was seen, to be confirmed by a listing that shows the
    /// server still alive (an end the server's own death caused is no
    /// end: the agent is what a restore brings back).
    #[serde(skip)]
    pub ending: bool,
}

impl Conversation {
    /// Whether it ran when the server it ran in went away (or the daemon
    /// stopped watching it): a restore's candidate.
    pub fn left_running(&self) -> bool {
        self.end == End::Running && self.pane.is_none()
    }
}
