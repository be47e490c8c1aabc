//! Usage limits: each pane's limit from the moment its agent shows it, when
//! it resets, and when tend resumes the agent on its own.
//!
//! A limit is not an error to fix and not a question: it is a wait with a
//! known end. [`Limits`] keeps, per pane, when the limit screen came up,
//! the words the agent said it resets at and the time they name (read
//! once, when the screen comes up or its words change: "resets 3pm" read
//! at 4pm would be tomorrow's), whether the user typed into the pane since,
//! and whether tend resumed it.
//!
//! Resuming is opt-in ([`ResumePolicy`], `[limits] resume = "continue"`):
//! at the reset plus a margin, when the pane still shows the limit, nobody
//! typed into it since and this limit was not resumed before, the pane is
//! [`Limits::due`]. The caller sends the text with `tend prompt`'s checks,
//! after a last look at the screen, and calls [`Limits::resumed`]. A limit
//! is resumed once: the same reset shown again afterwards (the agent hit
//! the limit again at once) is never sent to twice.
//!
//! Pure: the wall clock (Unix seconds) and the user's zone come in as
//! arguments; tests drive it on virtual time.

use std::collections::BTreeMap;
use std::time::Duration;

use tend_detector::limit::{read_reset, Reset};

/// How `[limits]` in `config.toml` says to resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePolicy {
    /// The text sent at the reset (`resume = "continue"`); `None`: tend
    /// never resumes on its own (`tend resume` still does).
    pub text: Option<String>,
    /// How long after the reset the text goes: after the last second the
    /// agent's words allow. The agents draw the reset to the minute and
    /// drop the seconds ("resets 3:05pm" for 15:05:40), so a reset named
    /// to the minute is waited out to its end (15:06:00 and the margin).
    pub margin: Duration,
}

/// The default margin after a reset.
pub const DEFAULT_MARGIN: Duration = Duration::from_secs(2);

impl Default for ResumePolicy {
    fn default() -> Self {
        ResumePolicy {
            text: None,
            margin: DEFAULT_MARGIN,
        }
    }
}

/// One pane's limit, from its agent showing the limit screen to leaving it.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// When tend first saw it (Unix seconds).
    pub since: f64,
    /// The words the agent said it resets at (`9:37am (UTC)`).
    pub words: Option<String>,
    /// When it resets (Unix seconds), when the words name a time.
    pub resets_at: Option<i64>,
    /// How much later the reset may really be ([`Reset::within`]): 60 for
    /// words that name the minute.
    pub within: i64,
    /// The user typed into the pane since it came up: no resume on its own.
    pub typed: bool,
    /// When tend resumed it (on its own or by `tend resume`).
    pub resumed: Option<f64>,
}

impl Limit {
    /// The reset has passed at `now`.
    pub fn reset_passed(&self, now: f64) -> bool {
        self.resets_at.is_some_and(|r| now >= r as f64)
    }
}

/// What [`Limits::observe`] saw change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitChange {
    /// The limit screen came up.
    Hit,
    /// The agent named another reset (its words changed to another time).
    Moved,
    /// The pane left the limit screen.
    Ended,
}

/// Why a limited pane is not resumed (yet): `tend explain`'s words.
#[derive(Debug, Clone, PartialEq)]
pub enum Hold {
    /// `[limits] resume` is not set.
    Off,
    /// The agent named no time.
    NoReset,
    /// The reset plus the margin is still ahead: at this Unix time.
    Until(i64),
    /// The user typed into the pane since the limit came up.
    Typed,
    /// tend resumed this limit already, at this Unix time.
    Done(f64),
}

/// How long a resumed limit is remembered (to never resume it twice).
const REMEMBER: f64 = 86_400.0;

/// When the words name a reset more than this far from the one kept,
/// they are another limit's.
const SAME_RESET: i64 = 120;

/// Every pane's usage limit. See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    panes: BTreeMap<String, Limit>,
    /// Limits resumed, by pane and reset, with when.
    done: Vec<(String, i64, f64)>,
}

impl Limits {
    /// An empty book.
    pub fn new() -> Limits {
        Limits::default()
    }

    /// Whether `pane` shows its limit screen at `now` (Unix seconds), with
    /// the words its agent said it resets at; `offset` is the user's zone
    /// in seconds east of UTC. Says what changed.
    pub fn observe(
        &mut self,
        pane: &str,
        now: f64,
        at_limit: bool,
        words: Option<&str>,
        offset: i32,
    ) -> Option<LimitChange> {
        if !at_limit {
            return self.panes.remove(pane).map(|_| LimitChange::Ended);
        }
        let read = |w: &str| read_reset(w, now.floor() as i64, offset);
        match self.panes.get_mut(pane) {
            None => {
                let reset = words.and_then(read);
                self.panes.insert(
                    pane.to_owned(),
                    Limit {
                        since: now,
                        words: words.map(str::to_owned),
                        resets_at: reset.map(|r| r.at),
                        within: reset.map_or(1, |r| r.within),
                        typed: false,
                        resumed: None,
                    },
                );
                Some(LimitChange::Hit)
            }
            Some(l) => {
                let new = words?;
                if l.words.as_deref() == Some(new) {
                    return None;
                }
                l.words = Some(new.to_owned());
                // A span ("in 2h 14m") counts down as the agent redraws
                // it: the same reset within a couple of minutes.
                match (l.resets_at, read(new)) {
                    (Some(old), Some(r)) if (r.at - old).abs() <= SAME_RESET => None,
                    (_, None) => None,
                    (_, Some(Reset { at, within })) => {
                        l.resets_at = Some(at);
                        l.within = within;
                        Some(LimitChange::Moved)
                    }
                }
            }
        }
    }

    /// The pane's limit, while it shows one.
    pub fn get(&self, pane: &str) -> Option<&Limit> {
        self.panes.get(pane)
    }

    /// Every limited pane, by id.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Limit)> {
        self.panes.iter().map(|(p, l)| (p.as_str(), l))
    }

    /// The user typed into `pane`: tend no longer resumes its limit on its
    /// own.
    pub fn typed(&mut self, pane: &str) {
        if let Some(l) = self.panes.get_mut(pane) {
            l.typed = true;
        }
    }

    /// The pane closed.
    pub fn closed(&mut self, pane: &str) {
        self.panes.remove(pane);
        self.done.retain(|(p, ..)| p != pane);
    }

    /// Why the pane's limit is not due for a resume at `now`, or `None`
    /// when it is (or the pane shows no limit).
    pub fn hold(&self, pane: &str, now: f64, policy: &ResumePolicy) -> Option<Hold> {
        let l = self.panes.get(pane)?;
        let Some(reset) = l.resets_at else {
            return Some(Hold::NoReset);
        };
        if let Some(at) = l.resumed.or_else(|| self.resumed_at(pane, reset)) {
            return Some(Hold::Done(at));
        }
        if policy.text.is_none() {
            return Some(Hold::Off);
        }
        if l.typed {
            return Some(Hold::Typed);
        }
        // After the last second the words allow, then the margin.
        let due = reset + (l.within - 1).max(0) + policy.margin.as_secs() as i64;
        (now < due as f64).then_some(Hold::Until(due))
    }

    /// The panes whose limit is due for a resume at `now`.
    pub fn due(&self, now: f64, policy: &ResumePolicy) -> Vec<String> {
        self.panes
            .keys()
            .filter(|p| self.hold(p, now, policy).is_none())
            .cloned()
            .collect()
    }

    /// tend resumed the pane at `now` (on its own, or by `tend resume`):
    /// never again for this limit.
    pub fn resumed(&mut self, pane: &str, now: f64) {
        self.done.retain(|(_, _, at)| now - at < REMEMBER);
        let Some(l) = self.panes.get_mut(pane) else {
            return;
        };
        l.resumed = Some(now);
        if let Some(reset) = l.resets_at {
            self.done.push((pane.to_owned(), reset, now));
        }
    }

    fn resumed_at(&self, pane: &str, reset: i64) -> Option<f64> {
        self.done
            .iter()
            .find(|(p, r, _)| p == pane && (r - reset).abs() <= SAME_RESET)
            .map(|(.., at)| *at)
    }

    /// When something next falls due after `now`: a reset passing (the
    /// pane's band changes) or a resume.
    pub fn next_wakeup(&self, now: f64, policy: &ResumePolicy) -> Option<f64> {
        self.panes
            .iter()
            .flat_map(|(p, l)| {
                let resume = match self.hold(p, now, policy) {
                    Some(Hold::Until(at)) => Some(at as f64),
                    _ => None,
                };
                [l.resets_at.map(|r| r as f64), resume]
            })
            .flatten()
            .filter(|t| *t > now)
            .reduce(f64::min)
    }
}

#[cfg(test)]
mod tests;
