//! Stop flags: a stop that cannot be missed.
//!
//! `tend stop-request <pane> "reason"` puts a flag on that pane's agent. It
//! reads *stop pending · not read* until the agent itself reads it (`tend
//! inbox` run in its own pane, or its next `tend report`), then *stop
//! pending · read, not acknowledged* until the agent acknowledges it (`tend
//! ack`, or a report carrying the acknowledgement), which clears it. The two
//! are different problems: a stop that may still be missed, and one being
//! ignored.
//!
//! Only the agent's own reading marks a flag read: the user looking at it
//! ([`StopFlags::get`], `tend list`, the picker) never does, and the API has
//! no way to say otherwise. While a flag is pending, `tend prompt` to the
//! pane is refused ([`StopFlags::check_prompt`]); the agent can still report,
//! read and acknowledge, because an agent that could not speak could not
//! clear the stop that blocks it.
//!
//! Times are wall-clock seconds since the Unix epoch, given by the caller.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// One pending stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopFlag {
    /// Why, in the words of whoever asked.
    pub reason: String,
    /// Who asked (`user`, a pane id, a script's name).
    pub set_by: String,
    /// When it was set (Unix seconds).
    pub set_at: u64,
    /// When the agent first read it.
    #[serde(default)]
    pub read_at: Option<u64>,
}

impl StopFlag {
    /// Where the flag stands.
    pub fn phase(&self) -> FlagPhase {
        if self.read_at.is_some() {
            FlagPhase::ReadNotAcknowledged
        } else {
            FlagPhase::NotRead
        }
    }

    /// A pending flag refuses prompts (always true: an acknowledged flag
    /// is removed).
    pub fn blocks_prompt(&self) -> bool {
        true
    }

    /// `stop pending · not read` or `stop pending · read, not acknowledged`.
    pub fn word(&self) -> String {
        format!("stop pending · {}", self.phase().as_str())
    }
}

/// Where a pending stop stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagPhase {
    /// The agent has not read it yet: it may still be missed.
    NotRead,
    /// Read, not acknowledged: it is being ignored.
    ReadNotAcknowledged,
}

impl FlagPhase {
    /// `not read` or `read, not acknowledged`.
    pub fn as_str(&self) -> &'static str {
        match self {
            FlagPhase::NotRead => "not read",
            FlagPhase::ReadNotAcknowledged => "read, not acknowledged",
        }
    }
}

/// How an acknowledgement arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckVia {
    /// `tend ack` in the agent's pane.
    Command,
    /// A `tend report` carrying the acknowledgement.
    Report,
}

/// What happened to a flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum FlagEvent {
    /// The agent read its flag for the first time.
    Read {
        /// The pane.
        pane: String,
        /// When.
        at: u64,
    },
    /// The agent acknowledged it; the flag is gone.
    Acknowledged {
        /// The pane.
        pane: String,
        /// The flag as it was.
        flag: StopFlag,
        /// When.
        at: u64,
        /// How.
        via: AckVia,
    },
}

/// Why a stop-flag operation was refused. The messages are for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopFlagError {
    /// `tend stop-request` with no reason.
    EmptyReason,
    /// Acknowledging with no flag pending.
    NoFlag {
        /// The pane.
        pane: String,
    },
    /// `tend prompt` to a pane with a stop pending.
    StopPending {
        /// The pane.
        pane: String,
        /// Its reason.
        reason: String,
        /// Read or not.
        phase: FlagPhase,
    },
}

impl fmt::Display for StopFlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopFlagError::EmptyReason => write!(
                f,
                "a stop request needs a reason the agent can act on, e.g. \
                 `tend stop-request %3 \"wrong branch\"`"
            ),
            StopFlagError::NoFlag { pane } => write!(f, "{pane} has no stop pending"),
            StopFlagError::StopPending {
                pane,
                reason,
                phase,
            } => write!(
                f,
                "{pane} has a stop pending ({}): \"{reason}\"; not prompting it until the agent \
                 acknowledges the stop",
                phase.as_str()
            ),
        }
    }
}

impl std::error::Error for StopFlagError {}

/// Every pane's pending stop.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopFlags {
    #[serde(default)]
    flags: BTreeMap<String, StopFlag>,
}

impl StopFlags {
    /// No flags.
    pub fn new() -> Self {
        StopFlags::default()
    }

    /// Takes the flags of `saved` (a state file read late) on panes that
    /// have none here.
    pub fn merge_missing(&mut self, saved: StopFlags) {
        for (pane, flag) in saved.flags {
            self.flags.entry(pane).or_insert(flag);
        }
    }

    /// `tend stop-request`: flags `pane`. A second request replaces the
    /// first and is unread again (it says something new); the old flag is
    /// returned.
    pub fn request(
        &mut self,
        pane: &str,
        reason: &str,
        set_by: &str,
        now: u64,
    ) -> Result<Option<StopFlag>, StopFlagError> {
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(StopFlagError::EmptyReason);
        }
        let set_by = match set_by.trim() {
            "" => "user",
            s => s,
        };
        Ok(self.flags.insert(
            pane.to_owned(),
            StopFlag {
                reason: reason.to_owned(),
                set_by: set_by.to_owned(),
                set_at: now,
                read_at: None,
            },
        ))
    }

    /// The user withdraws a stop request.
    pub fn withdraw(&mut self, pane: &str) -> Option<StopFlag> {
        self.flags.remove(pane)
    }

    /// The pane closed.
    pub fn forget(&mut self, pane: &str) {
        self.flags.remove(pane);
    }

    /// `tend inbox` run in the agent's own pane `own_pane`: returns its
    /// flag, marking it read the first time (with a [`FlagEvent::Read`]).
    pub fn inbox(&mut self, own_pane: &str, now: u64) -> (Option<&StopFlag>, Option<FlagEvent>) {
        let event = self.mark_read(own_pane, now);
        (self.flags.get(own_pane), event)
    }

    fn mark_read(&mut self, pane: &str, now: u64) -> Option<FlagEvent> {
        let flag = self.flags.get_mut(pane)?;
        if flag.read_at.is_some() {
            return None;
        }
        flag.read_at = Some(now);
        Some(FlagEvent::Read {
            pane: pane.to_owned(),
            at: now,
        })
    }

    /// The agent in `pane` reported (`tend report`): that reads its flag;
    /// with `ack` it also acknowledges it. Events in order.
    pub fn on_report(&mut self, pane: &str, now: u64, ack: bool) -> Vec<FlagEvent> {
        let mut events: Vec<FlagEvent> = self.mark_read(pane, now).into_iter().collect();
        if ack {
            if let Some(flag) = self.flags.remove(pane) {
                events.push(FlagEvent::Acknowledged {
                    pane: pane.to_owned(),
                    flag,
                    at: now,
                    via: AckVia::Report,
                });
            }
        }
        events
    }

    /// `tend ack` in the agent's own pane: clears its flag (acknowledging
    /// implies reading; an unread flag gets `read_at = now`).
    pub fn ack(&mut self, own_pane: &str, now: u64) -> Result<FlagEvent, StopFlagError> {
        let mut flag = self
            .flags
            .remove(own_pane)
            .ok_or_else(|| StopFlagError::NoFlag {
                pane: own_pane.to_owned(),
            })?;
        flag.read_at.get_or_insert(now);
        Ok(FlagEvent::Acknowledged {
            pane: own_pane.to_owned(),
            flag,
            at: now,
            via: AckVia::Command,
        })
    }

    /// The pane's flag, for display. Looking never marks it read.
    pub fn get(&self, pane: &str) -> Option<&StopFlag> {
        self.flags.get(pane)
    }

    /// Where the pane's flag stands.
    pub fn phase(&self, pane: &str) -> Option<FlagPhase> {
        self.flags.get(pane).map(StopFlag::phase)
    }

    /// A stop is pending on `pane`: `tend prompt` to it is refused.
    pub fn blocks_prompt(&self, pane: &str) -> bool {
        self.flags.get(pane).is_some_and(StopFlag::blocks_prompt)
    }

    /// `Ok` when `tend prompt` may go to `pane`; the refusal names the stop.
    pub fn check_prompt(&self, pane: &str) -> Result<(), StopFlagError> {
        match self.flags.get(pane) {
            Some(f) => Err(StopFlagError::StopPending {
                pane: pane.to_owned(),
                reason: f.reason.clone(),
                phase: f.phase(),
            }),
            None => Ok(()),
        }
    }

    /// Every pending flag, in pane order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &StopFlag)> {
        self.flags.iter().map(|(p, f)| (p.as_str(), f))
    }

    /// How many are pending.
    pub fn len(&self) -> usize {
        self.flags.len()
    }

    /// None pending.
    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_700_000_000;

    #[test]
    fn request_read_ack() {
        let mut f = StopFlags::new();
        assert!(!f.blocks_prompt("%3"));
        assert_eq!(f.request("%3", " wrong branch ", "user", T0), Ok(None));
        let flag = f.get("%3").unwrap();
        assert_eq!(flag.reason, "wrong branch");
        assert_eq!(flag.set_by, "user");
        assert_eq!(flag.set_at, T0);
        assert_eq!(flag.phase(), FlagPhase::NotRead);
        assert_eq!(flag.word(), "stop pending · not read");
        assert!(f.blocks_prompt("%3"));

        // The agent reads its inbox.
        let (seen, ev) = f.inbox("%3", T0 + 10);
        assert_eq!(seen.unwrap().read_at, Some(T0 + 10));
        assert_eq!(
            ev,
            Some(FlagEvent::Read {
                pane: "%3".into(),
                at: T0 + 10
            })
        );
        assert_eq!(f.phase("%3"), Some(FlagPhase::ReadNotAcknowledged));
        assert_eq!(
            f.get("%3").unwrap().word(),
            "stop pending · read, not acknowledged"
        );
        // Reading again changes nothing and says nothing.
        let (seen, ev) = f.inbox("%3", T0 + 20);
        assert_eq!(seen.unwrap().read_at, Some(T0 + 10));
        assert_eq!(ev, None);
        // Still blocks until acknowledged.
        assert!(f.blocks_prompt("%3"));

        let ev = f.ack("%3", T0 + 30).unwrap();
        match ev {
            FlagEvent::Acknowledged {
                pane,
                flag,
                at,
                via,
            } => {
                assert_eq!(pane, "%3");
                assert_eq!(flag.read_at, Some(T0 + 10));
                assert_eq!(at, T0 + 30);
                assert_eq!(via, AckVia::Command);
            }
            e => panic!("{e:?}"),
        }
        assert!(!f.blocks_prompt("%3"));
        assert_eq!(f.phase("%3"), None);
        assert_eq!(
            f.ack("%3", T0 + 40),
            Err(StopFlagError::NoFlag { pane: "%3".into() })
        );
    }

    #[test]
    fn only_the_agents_own_reading_marks_it_read() {
        let mut f = StopFlags::new();
        f.request("%3", "stop", "user", T0).unwrap();
        // The user looking (get, phase, iter, check_prompt) changes nothing.
        let _ = f.get("%3");
        let _ = f.iter().count();
        let _ = f.check_prompt("%3");
        assert_eq!(f.phase("%3"), Some(FlagPhase::NotRead));
        // Another pane's inbox does not read this pane's flag.
        let (seen, ev) = f.inbox("%4", T0 + 1);
        assert!(seen.is_none() && ev.is_none());
        assert_eq!(f.phase("%3"), Some(FlagPhase::NotRead));
        // Nor can another pane acknowledge it.
        assert!(f.ack("%4", T0 + 1).is_err());
        assert!(f.blocks_prompt("%3"));
    }

    #[test]
    fn a_report_reads_and_a_report_with_ack_clears() {
        let mut f = StopFlags::new();
        f.request("%3", "stop", "%1", T0).unwrap();
        let ev = f.on_report("%3", T0 + 5, false);
        assert_eq!(
            ev,
            vec![FlagEvent::Read {
                pane: "%3".into(),
                at: T0 + 5
            }]
        );
        assert_eq!(f.phase("%3"), Some(FlagPhase::ReadNotAcknowledged));
        assert!(f.on_report("%3", T0 + 6, false).is_empty());
        let ev = f.on_report("%3", T0 + 7, true);
        assert_eq!(ev.len(), 1);
        assert!(matches!(
            &ev[0],
            FlagEvent::Acknowledged { via: AckVia::Report, flag, .. } if flag.set_by == "%1"
        ));
        assert!(!f.blocks_prompt("%3"));
        // An unread flag acknowledged by a report is read and cleared at once.
        f.request("%3", "stop", "user", T0).unwrap();
        let ev = f.on_report("%3", T0 + 8, true);
        assert_eq!(ev.len(), 2);
        assert!(matches!(ev[0], FlagEvent::Read { .. }));
        assert!(matches!(
            &ev[1],
            FlagEvent::Acknowledged { flag, .. } if flag.read_at == Some(T0 + 8)
        ));
        // A report with no flag is nothing.
        assert!(f.on_report("%3", T0 + 9, true).is_empty());
    }

    #[test]
    fn ack_of_an_unread_flag_reads_it() {
        let mut f = StopFlags::new();
        f.request("%3", "stop", "user", T0).unwrap();
        match f.ack("%3", T0 + 3).unwrap() {
            FlagEvent::Acknowledged { flag, .. } => assert_eq!(flag.read_at, Some(T0 + 3)),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn prompt_is_refused_while_pending() {
        let mut f = StopFlags::new();
        assert_eq!(f.check_prompt("%3"), Ok(()));
        f.request("%3", "tests are red", "user", T0).unwrap();
        let e = f.check_prompt("%3").unwrap_err();
        assert!(e.to_string().contains("not read"), "{e}");
        assert!(e.to_string().contains("tests are red"), "{e}");
        f.inbox("%3", T0 + 1);
        let e = f.check_prompt("%3").unwrap_err();
        assert!(e.to_string().contains("read, not acknowledged"), "{e}");
        f.ack("%3", T0 + 2).unwrap();
        assert_eq!(f.check_prompt("%3"), Ok(()));
        // Other panes are never blocked.
        f.request("%3", "x", "user", T0).unwrap();
        assert_eq!(f.check_prompt("%4"), Ok(()));
    }

    #[test]
    fn second_request_replaces_and_is_unread_again() {
        let mut f = StopFlags::new();
        f.request("%3", "first", "user", T0).unwrap();
        f.inbox("%3", T0 + 1);
        let old = f.request("%3", "second", "", T0 + 2).unwrap().unwrap();
        assert_eq!(old.reason, "first");
        let now = f.get("%3").unwrap();
        assert_eq!(now.reason, "second");
        assert_eq!(now.set_by, "user");
        assert_eq!(now.phase(), FlagPhase::NotRead);
    }

    #[test]
    fn empty_reason_is_refused_withdraw_and_forget() {
        let mut f = StopFlags::new();
        let e = f.request("%3", "  ", "user", T0).unwrap_err();
        assert_eq!(e, StopFlagError::EmptyReason);
        assert!(e.to_string().contains("reason"), "{e}");
        assert!(f.is_empty());
        f.request("%3", "x", "user", T0).unwrap();
        f.request("%4", "y", "user", T0).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f.withdraw("%3").unwrap().reason, "x");
        f.forget("%4");
        assert!(f.is_empty());
    }

    #[test]
    fn serde_round_trip() {
        let mut f = StopFlags::new();
        f.request("%3", "stop", "user", T0).unwrap();
        f.request("%5", "halt", "%1", T0 + 1).unwrap();
        f.inbox("%5", T0 + 2);
        let text = serde_json::to_string(&f).unwrap();
        let back: StopFlags = serde_json::from_str(&text).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.phase("%5"), Some(FlagPhase::ReadNotAcknowledged));
        assert!(serde_json::from_str::<StopFlags>("{\"flags\":{\"%3\":1}}").is_err());
        let ev = serde_json::to_value(FlagEvent::Read {
            pane: "%3".into(),
            at: 5,
        })
        .unwrap();
        assert_eq!(ev["event"], "read");
    }
}
