//! Park and snooze: what the user
//! has decided about a pane, which changes how its state is read without
//! changing the state.
//!
//! * **Park** shelves a pane with a note in the user's words. It may be
//!   gated on another pane: released, with a [`ParkReleased`] for the
//!   notification, the first time the gate pane goes from busy (working,
//!   directing) to ready (idle, completed, waiting), or when the gate pane is
//!   killed or its agent exits (a park that can no longer release has to
//!   resurface). Otherwise it holds until lifted by hand, or until it goes
//!   stale: a park not revisited for [`STALE_AFTER_SECS`] (14 days) is
//!   dropped the next time the store is loaded. At most [`MAX_PARKS`] (200).
//! * **Snooze** defers a pane for 15 minutes, 30 minutes, 6 hours or without
//!   limit. It withdraws the pane's demand and nothing else; typing into the
//!   pane clears it. Snoozes run on the wall clock, so a machine that sleeps
//!   through one wakes with it over.
//!
//! Times are wall-clock seconds since the Unix epoch, given by the caller.
//! The whole [`ParkStore`] persists as versioned JSON ([`ParkStore::to_text`],
//! [`ParkStore::load`]).
//!
//! This file holds the vocabulary (a [`Park`], a [`Snooze`], what a pane
//! shows, the errors) and the store's shape; `store.rs` what the user and
//! the gates do to the store; `persist.rs` the store as a file, and what
//! loading one repairs.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use tend_vocab::State;

/// The version written by [`ParkStore::to_text`].
pub const STORE_VERSION: u32 = 1;

/// At most this many panes parked at once: a bound on a runaway caller.
pub const MAX_PARKS: usize = 200;

/// A park not revisited for this long (14 days) is dropped on load.
pub const STALE_AFTER_SECS: u64 = 14 * 86_400;

/// One parked pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Park {
    /// The note, in the user's words (may be empty).
    pub note: String,
    /// When it was parked (Unix seconds).
    pub parked_at: u64,
    /// When the user last revisited it (parked again, edited the note):
    /// staleness counts from here.
    pub touched_at: u64,
    /// The pane whose busy→ready transition releases it.
    #[serde(default)]
    pub gate: Option<String>,
}

/// A snooze length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SnoozeFor {
    /// 15 minutes.
    #[serde(rename = "15m")]
    Minutes15,
    /// 30 minutes.
    #[serde(rename = "30m")]
    Minutes30,
    /// 6 hours.
    #[serde(rename = "6h")]
    Hours6,
    /// Until typed input clears it.
    #[serde(rename = "unlimited")]
    Unlimited,
}

impl SnoozeFor {
    /// Every length, shortest first.
    pub const ALL: [SnoozeFor; 4] = [
        SnoozeFor::Minutes15,
        SnoozeFor::Minutes30,
        SnoozeFor::Hours6,
        SnoozeFor::Unlimited,
    ];

    /// Parses `15m`, `30m`, `6h`, `unlimited` (also `15min`, `30 minutes`,
    /// `6 hours`, `6hr`, `forever`, `none`, case and spaces ignored).
    pub fn parse(s: &str) -> Result<Self, ParkError> {
        let norm: String = s
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        Ok(match norm.as_str() {
            "15m" | "15min" | "15mins" | "15minutes" => SnoozeFor::Minutes15,
            "30m" | "30min" | "30mins" | "30minutes" => SnoozeFor::Minutes30,
            "6h" | "6hr" | "6hrs" | "6hours" => SnoozeFor::Hours6,
            "unlimited" | "forever" | "none" | "untiltyped" => SnoozeFor::Unlimited,
            _ => return Err(ParkError::UnknownSnooze(s.trim().to_owned())),
        })
    }

    /// `15m`, `30m`, `6h` or `unlimited`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SnoozeFor::Minutes15 => "15m",
            SnoozeFor::Minutes30 => "30m",
            SnoozeFor::Hours6 => "6h",
            SnoozeFor::Unlimited => "unlimited",
        }
    }

    /// The length in seconds; `None` without limit.
    pub fn secs(&self) -> Option<u64> {
        match self {
            SnoozeFor::Minutes15 => Some(15 * 60),
            SnoozeFor::Minutes30 => Some(30 * 60),
            SnoozeFor::Hours6 => Some(6 * 3600),
            SnoozeFor::Unlimited => None,
        }
    }
}

impl fmt::Display for SnoozeFor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One snoozed pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snooze {
    /// The length chosen.
    #[serde(rename = "for")]
    pub length: SnoozeFor,
    /// When it was set (Unix seconds).
    pub set_at: u64,
    /// When it ends (`None`: only typing ends it).
    pub until: Option<u64>,
}

impl Snooze {
    /// Still in force at `now`.
    pub fn active(&self, now: u64) -> bool {
        self.until.is_none_or(|u| now < u)
    }
}

/// Why a gated park was released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReleaseReason {
    /// The gate pane went from busy to ready.
    GateReady,
    /// The gate pane was killed, or its agent exited: it can no longer
    /// release the park.
    GateGone,
}

/// A gated park released itself: tell the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParkReleased {
    /// The pane that was parked.
    pub pane: String,
    /// The gate pane.
    pub gate: String,
    /// The park's note.
    pub note: String,
    /// Why.
    pub reason: ReleaseReason,
}

/// What park and snooze say about one pane, for the band
/// ([`crate::PaneFacts`]) and for display.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PaneMarks {
    /// Parked.
    pub parked: bool,
    /// Snoozed, and the snooze has not run out.
    pub snoozed: bool,
    /// The park's note.
    pub note: Option<String>,
    /// When the snooze ends (`None` with no snooze or without limit).
    pub until: Option<u64>,
    /// The park's gate pane.
    pub gate: Option<String>,
}

/// Why a park or snooze was refused. The messages are for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParkError {
    /// Already [`MAX_PARKS`] parked.
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// The gate is the parked pane itself.
    GateOnItself(String),
    /// Not a snooze length.
    UnknownSnooze(String),
}

impl fmt::Display for ParkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParkError::TooMany { limit } => write!(
                f,
                "{limit} panes are parked already, the most tend keeps; unpark some first \
                 (`tend unpark <pane>`)"
            ),
            ParkError::GateOnItself(p) => write!(
                f,
                "{p} cannot be gated on itself; gate it on the pane it waits for"
            ),
            ParkError::UnknownSnooze(s) => write!(
                f,
                "`{s}` is not a snooze length; use 15m, 30m, 6h or unlimited"
            ),
        }
    }
}

impl std::error::Error for ParkError {}

/// A park file that could not be read: the caller sets the file aside and
/// starts empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

/// Every park and snooze.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParkStore {
    /// The file format version ([`STORE_VERSION`]).
    pub version: u32,
    #[serde(default)]
    parks: BTreeMap<String, Park>,
    #[serde(default)]
    snoozes: BTreeMap<String, Snooze>,
}

impl Default for ParkStore {
    fn default() -> Self {
        ParkStore {
            version: STORE_VERSION,
            parks: BTreeMap::new(),
            snoozes: BTreeMap::new(),
        }
    }
}

mod persist;
mod store;

#[cfg(test)]
mod tests;
