//! The user's settings for notifications: which kinds are on
//! ([`Switches`]), quiet hours and the time of day they are read against,
//! and the grouping window ([`Policy`]).
//!
//! Separate because these are configuration, parsed and displayed, with no
//! state of their own.

use super::*;

/// Which kinds of happening are notified. Every switch defaults to on
/// except `quiet` (quiet is not a demand: nobody asked for anything).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Switches {
    /// Waiting for approval (a permission dialog).
    pub approval: bool,
    /// The agent asked a question.
    pub question: bool,
    /// Blocked by an error (rate limit, auth, network).
    pub error: bool,
    /// Waiting at a prompt with no evidence of what it wants.
    pub prompt: bool,
    /// A finished turn not yet seen (ready for review).
    pub completed: bool,
    /// A working run that has gone quiet.
    pub quiet: bool,
    /// A park released by its gate.
    pub park_released: bool,
    /// A self-reporting agent went gone.
    pub gone: bool,
    /// An agent hit its plan's usage limit, the limit reset, tend resumed
    /// it.
    pub limit: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Switches {
            approval: true,
            question: true,
            error: true,
            prompt: true,
            completed: true,
            quiet: false,
            park_released: true,
            gone: true,
            limit: true,
        }
    }
}

/// A daily window of local time in which nothing is notified, written
/// `"22:00-07:00"`. A window whose end is before its start runs over
/// midnight. The start is inside it, the end is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietHours {
    /// Start, in minutes after midnight.
    pub start: TimeOfDay,
    /// End, in minutes after midnight.
    pub end: TimeOfDay,
}

impl QuietHours {
    /// Whether `t` falls inside the window.
    pub fn contains(&self, t: TimeOfDay) -> bool {
        let (s, e, t) = (self.start.0, self.end.0, t.0);
        if s <= e {
            s <= t && t < e
        } else {
            t >= s || t < e
        }
    }
}

impl FromStr for QuietHours {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s.split_once('-').ok_or_else(|| {
            format!("`{s}` is not a time window; write it as start-end, e.g. `22:00-07:00`")
        })?;
        let start: TimeOfDay = a.parse()?;
        let end: TimeOfDay = b.parse()?;
        if start == end {
            return Err(format!(
                "`{s}` starts and ends at the same time; leave quiet_hours out to have none"
            ));
        }
        Ok(QuietHours { start, end })
    }
}

impl fmt::Display for QuietHours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}

/// A local time of day, in minutes after midnight (0–1439).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TimeOfDay(pub(super) u16);

impl TimeOfDay {
    /// `hour:minute`; out-of-range values wrap into the day.
    pub fn hm(hour: u32, minute: u32) -> TimeOfDay {
        TimeOfDay(((hour * 60 + minute) % (24 * 60)) as u16)
    }

    /// Minutes after midnight.
    pub fn minutes(&self) -> u16 {
        self.0
    }
}

impl FromStr for TimeOfDay {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let bad = || format!("`{t}` is not a time of day; write it as HH:MM, e.g. `07:30`");
        let (h, m) = t.split_once(':').ok_or_else(bad)?;
        if h.is_empty() || h.len() > 2 || m.len() != 2 {
            return Err(bad());
        }
        let h: u32 = h.parse().map_err(|_| bad())?;
        let m: u32 = m.parse().map_err(|_| bad())?;
        if h > 23 || m > 59 {
            return Err(format!("`{t}` is not a time of day (00:00 to 23:59)"));
        }
        Ok(TimeOfDay::hm(h, m))
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.0 / 60, self.0 % 60)
    }
}

/// What the notifier decides by.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Off: nothing is ever notified.
    pub enabled: bool,
    /// Which kinds are notified.
    pub switches: Switches,
    /// When nothing is notified.
    pub quiet_hours: Option<QuietHours>,
    /// How long a burst is collected before it goes out as one
    /// notification. Zero sends each at once.
    pub group_window: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            enabled: true,
            switches: Switches::default(),
            quiet_hours: None,
            group_window: DEFAULT_GROUP_WINDOW,
        }
    }
}

/// The default grouping window.
pub const DEFAULT_GROUP_WINDOW: Duration = Duration::from_millis(200);
