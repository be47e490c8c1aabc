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

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use tend_detector::state::State;

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

fn busy(s: State) -> bool {
    matches!(s, State::Working | State::Directing)
}

fn ready(s: State) -> bool {
    matches!(s, State::Idle | State::Completed | State::Waiting)
}

impl ParkStore {
    /// An empty store.
    pub fn new() -> Self {
        ParkStore::default()
    }

    /// Parks `pane` with `note`, optionally gated on `gate`. Parking a
    /// parked pane again replaces note and gate, keeps `parked_at` and
    /// counts as a revisit. Returns the previous park.
    pub fn park(
        &mut self,
        pane: &str,
        note: &str,
        gate: Option<&str>,
        now: u64,
    ) -> Result<Option<Park>, ParkError> {
        let gate = gate.map(str::trim).filter(|g| !g.is_empty());
        if gate == Some(pane) {
            return Err(ParkError::GateOnItself(pane.to_owned()));
        }
        let old = self.parks.get(pane);
        if old.is_none() && self.parks.len() >= MAX_PARKS {
            return Err(ParkError::TooMany { limit: MAX_PARKS });
        }
        let park = Park {
            note: note.trim().to_owned(),
            parked_at: old.map_or(now, |p| p.parked_at),
            touched_at: now,
            gate: gate.map(str::to_owned),
        };
        Ok(self.parks.insert(pane.to_owned(), park))
    }

    /// Lifts a park by hand.
    pub fn unpark(&mut self, pane: &str) -> Option<Park> {
        self.parks.remove(pane)
    }

    /// The user revisited a park (opened it, edited it): staleness starts
    /// over. Returns whether the pane is parked.
    pub fn touch(&mut self, pane: &str, now: u64) -> bool {
        match self.parks.get_mut(pane) {
            Some(p) => {
                p.touched_at = p.touched_at.max(now);
                true
            }
            None => false,
        }
    }

    /// Snoozes `pane` from `now` (replacing any snooze). Returns the old one.
    pub fn snooze(&mut self, pane: &str, length: SnoozeFor, now: u64) -> Option<Snooze> {
        self.snoozes.insert(
            pane.to_owned(),
            Snooze {
                length,
                set_at: now,
                until: length.secs().map(|s| now.saturating_add(s)),
            },
        )
    }

    /// Lifts a snooze by hand.
    pub fn unsnooze(&mut self, pane: &str) -> Option<Snooze> {
        self.snoozes.remove(pane)
    }

    /// The user typed into `pane`: its snooze is over (a park is not).
    /// Returns whether a snooze was cleared.
    pub fn typed(&mut self, pane: &str) -> bool {
        self.snoozes.remove(pane).is_some()
    }

    /// Removes the snoozes over at `now`; returns their panes (to
    /// republish). [`marks`](ParkStore::marks) already treats an ended
    /// snooze as over; this only tidies and tells.
    pub fn expire(&mut self, now: u64) -> Vec<String> {
        let over: Vec<String> = self
            .snoozes
            .iter()
            .filter(|(_, s)| !s.active(now))
            .map(|(p, _)| p.clone())
            .collect();
        for p in &over {
            self.snoozes.remove(p);
        }
        over
    }

    /// When the next snooze ends.
    pub fn next_deadline(&self) -> Option<u64> {
        self.snoozes.values().filter_map(|s| s.until).min()
    }

    /// The pane `gate` changed state: parks gated on it are released the
    /// first time it goes busy (working, directing) → ready (idle,
    /// completed, waiting); its agent exiting releases them as gone.
    pub fn gate_transition(
        &mut self,
        gate: &str,
        from: Option<State>,
        to: State,
    ) -> Vec<ParkReleased> {
        let reason = if to == State::Exited {
            ReleaseReason::GateGone
        } else if from.is_some_and(busy) && ready(to) {
            ReleaseReason::GateReady
        } else {
            return Vec::new();
        };
        self.release_gated(gate, reason)
    }

    /// The pane was killed: parks gated on it are released, and its own
    /// park and snooze are dropped without a word.
    pub fn pane_gone(&mut self, pane: &str) -> Vec<ParkReleased> {
        self.parks.remove(pane);
        self.snoozes.remove(pane);
        self.release_gated(pane, ReleaseReason::GateGone)
    }

    fn release_gated(&mut self, gate: &str, reason: ReleaseReason) -> Vec<ParkReleased> {
        let panes: Vec<String> = self
            .parks
            .iter()
            .filter(|(_, p)| p.gate.as_deref() == Some(gate))
            .map(|(pane, _)| pane.clone())
            .collect();
        panes
            .into_iter()
            .filter_map(|pane| {
                let park = self.parks.remove(&pane)?;
                Some(ParkReleased {
                    pane,
                    gate: gate.to_owned(),
                    note: park.note,
                    reason,
                })
            })
            .collect()
    }

    /// Park and snooze of `pane` at `now`.
    pub fn marks(&self, pane: &str, now: u64) -> PaneMarks {
        let park = self.parks.get(pane);
        let snooze = self.snoozes.get(pane).filter(|s| s.active(now));
        PaneMarks {
            parked: park.is_some(),
            snoozed: snooze.is_some(),
            note: park.map(|p| p.note.clone()),
            until: snooze.and_then(|s| s.until),
            gate: park.and_then(|p| p.gate.clone()),
        }
    }

    /// The pane's park.
    pub fn park_of(&self, pane: &str) -> Option<&Park> {
        self.parks.get(pane)
    }

    /// The pane's snooze (even if over and not yet expired).
    pub fn snooze_of(&self, pane: &str) -> Option<&Snooze> {
        self.snoozes.get(pane)
    }

    /// Every park, in pane order.
    pub fn parks(&self) -> impl Iterator<Item = (&str, &Park)> {
        self.parks.iter().map(|(p, k)| (p.as_str(), k))
    }

    /// Every snooze, in pane order.
    pub fn snoozes(&self) -> impl Iterator<Item = (&str, &Snooze)> {
        self.snoozes.iter().map(|(p, s)| (p.as_str(), s))
    }

    /// The store as versioned, pretty JSON.
    pub fn to_text(&self) -> String {
        let mut s = self.clone();
        s.version = STORE_VERSION;
        serde_json::to_string_pretty(&s).unwrap_or_default() + "\n"
    }

    /// Reads a store written by [`to_text`](ParkStore::to_text) at `now`.
    /// Stale parks are dropped, snoozes already over are dropped silently,
    /// and anything repaired comes back as a warning for the log. A file
    /// that cannot be read at all, or comes from a newer tend, is an error:
    /// set it aside and start empty.
    pub fn load(text: &str, now: u64) -> Result<(ParkStore, Vec<String>), LoadError> {
        let mut store: ParkStore = serde_json::from_str(text)
            .map_err(|e| LoadError(format!("the park file is damaged ({e})")))?;
        if store.version == 0 || store.version > STORE_VERSION {
            return Err(LoadError(format!(
                "the park file has version {}; this tend reads version {STORE_VERSION}",
                store.version
            )));
        }
        store.version = STORE_VERSION;
        let mut warnings = Vec::new();
        store.parks.retain(|pane, park| {
            let idle = now.saturating_sub(park.touched_at);
            if idle >= STALE_AFTER_SECS {
                warnings.push(format!(
                    "dropped the park on {pane} ({}): not revisited in {} days",
                    quoted_note(&park.note),
                    idle / 86_400
                ));
                return false;
            }
            if park.gate.as_deref() == Some(pane.as_str()) {
                warnings.push(format!(
                    "the park on {pane} was gated on itself; the gate is removed"
                ));
                park.gate = None;
            }
            true
        });
        if store.parks.len() > MAX_PARKS {
            let mut by_age: Vec<(u64, String)> = store
                .parks
                .iter()
                .map(|(p, k)| (k.touched_at, p.clone()))
                .collect();
            // Most recently revisited first; the rest are dropped.
            by_age.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let dropped = by_age.len() - MAX_PARKS;
            for (_, pane) in by_age.into_iter().skip(MAX_PARKS) {
                store.parks.remove(&pane);
            }
            warnings.push(format!(
                "the park file held more than {MAX_PARKS} parks; dropped the {dropped} \
                 least recently revisited"
            ));
        }
        store.snoozes.retain(|_, s| s.active(now));
        Ok((store, warnings))
    }
}

fn quoted_note(note: &str) -> String {
    if note.is_empty() {
        "no note".to_owned()
    } else {
        format!("“{note}”")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_700_000_000;
    const DAY: u64 = 86_400;

    #[test]
    fn park_with_note_and_marks() {
        let mut s = ParkStore::new();
        assert_eq!(s.park("%3", "  waiting on CI ", None, T0), Ok(None));
        let m = s.marks("%3", T0);
        assert_eq!(
            m,
            PaneMarks {
                parked: true,
                snoozed: false,
                note: Some("waiting on CI".into()),
                until: None,
                gate: None,
            }
        );
        assert_eq!(s.marks("%4", T0), PaneMarks::default());
        // Parking again replaces the note, keeps parked_at, revisits.
        let old = s.park("%3", "later", Some("%7"), T0 + 50).unwrap().unwrap();
        assert_eq!(old.note, "waiting on CI");
        let p = s.park_of("%3").unwrap();
        assert_eq!((p.parked_at, p.touched_at), (T0, T0 + 50));
        assert_eq!(s.marks("%3", T0).gate.as_deref(), Some("%7"));
        assert_eq!(s.unpark("%3").unwrap().note, "later");
        assert!(!s.marks("%3", T0).parked);
        assert_eq!(
            s.park("%3", "", Some("%3"), T0),
            Err(ParkError::GateOnItself("%3".into()))
        );
    }

    #[test]
    fn gate_releases_on_busy_to_ready() {
        for ready_state in [State::Idle, State::Completed, State::Waiting] {
            for busy_state in [State::Working, State::Directing] {
                let mut s = ParkStore::new();
                s.park("%3", "after the build", Some("%7"), T0).unwrap();
                s.park("%4", "also", Some("%7"), T0).unwrap();
                s.park("%5", "other gate", Some("%8"), T0).unwrap();
                let out = s.gate_transition("%7", Some(busy_state), ready_state);
                assert_eq!(
                    out,
                    vec![
                        ParkReleased {
                            pane: "%3".into(),
                            gate: "%7".into(),
                            note: "after the build".into(),
                            reason: ReleaseReason::GateReady
                        },
                        ParkReleased {
                            pane: "%4".into(),
                            gate: "%7".into(),
                            note: "also".into(),
                            reason: ReleaseReason::GateReady
                        }
                    ],
                    "{busy_state}→{ready_state}"
                );
                assert!(!s.marks("%3", T0).parked);
                assert!(s.marks("%5", T0).parked);
                // Only the first time: nothing left to release.
                assert!(s
                    .gate_transition("%7", Some(busy_state), ready_state)
                    .is_empty());
            }
        }
    }

    #[test]
    fn gate_ignores_other_transitions() {
        let mut s = ParkStore::new();
        s.park("%3", "n", Some("%7"), T0).unwrap();
        let quiet = [
            (None, State::Idle),
            (None, State::Completed),
            (Some(State::Idle), State::Working),
            (Some(State::Idle), State::Completed),
            (Some(State::Waiting), State::Idle),
            (Some(State::Completed), State::Idle),
            (Some(State::Working), State::Directing),
            (Some(State::Directing), State::Working),
        ];
        for (from, to) in quiet {
            assert!(
                s.gate_transition("%7", from, to).is_empty(),
                "{from:?}→{to}"
            );
        }
        // Transitions of the parked pane itself or of other panes do nothing.
        assert!(s
            .gate_transition("%3", Some(State::Working), State::Idle)
            .is_empty());
        assert!(s.marks("%3", T0).parked);
    }

    #[test]
    fn gate_killed_or_exited_releases() {
        let mut s = ParkStore::new();
        s.park("%3", "n", Some("%7"), T0).unwrap();
        s.snooze("%7", SnoozeFor::Unlimited, T0);
        s.park("%7", "gate itself parked", None, T0).unwrap();
        let out = s.pane_gone("%7");
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].reason, ReleaseReason::GateGone);
        assert_eq!(out[0].pane, "%3");
        // The killed pane's own marks are gone too.
        assert_eq!(s.marks("%7", T0), PaneMarks::default());

        s.park("%4", "n", Some("%8"), T0).unwrap();
        let out = s.gate_transition("%8", Some(State::Idle), State::Exited);
        assert_eq!(out[0].reason, ReleaseReason::GateGone);
        assert!(!s.marks("%4", T0).parked);
        // A killed pane that gates nothing releases nothing.
        assert!(s.pane_gone("%9").is_empty());
    }

    #[test]
    fn the_200_limit() {
        let mut s = ParkStore::new();
        for i in 0..MAX_PARKS {
            s.park(&format!("%{i}"), "n", None, T0).unwrap();
        }
        let e = s.park("%999", "n", None, T0).unwrap_err();
        assert_eq!(e, ParkError::TooMany { limit: 200 });
        assert!(e.to_string().contains("200"), "{e}");
        // Re-parking one already parked is fine.
        assert!(s.park("%5", "new note", None, T0).is_ok());
        s.unpark("%5");
        assert!(s.park("%999", "n", None, T0).is_ok());
    }

    #[test]
    fn snooze_words() {
        let cases = [
            ("15m", SnoozeFor::Minutes15),
            ("15 min", SnoozeFor::Minutes15),
            ("15 minutes", SnoozeFor::Minutes15),
            ("30m", SnoozeFor::Minutes30),
            ("30MIN", SnoozeFor::Minutes30),
            ("6h", SnoozeFor::Hours6),
            ("6 hours", SnoozeFor::Hours6),
            ("unlimited", SnoozeFor::Unlimited),
            ("forever", SnoozeFor::Unlimited),
        ];
        for (w, want) in cases {
            assert_eq!(SnoozeFor::parse(w), Ok(want), "{w}");
        }
        for l in SnoozeFor::ALL {
            assert_eq!(SnoozeFor::parse(l.as_str()), Ok(l));
        }
        let e = SnoozeFor::parse("2h").unwrap_err();
        assert_eq!(e, ParkError::UnknownSnooze("2h".into()));
        assert!(e.to_string().contains("15m, 30m, 6h or unlimited"), "{e}");
        assert_eq!(SnoozeFor::Hours6.secs(), Some(21_600));
        assert_eq!(SnoozeFor::Unlimited.secs(), None);
    }

    #[test]
    fn snooze_ends_by_wall_clock() {
        let mut s = ParkStore::new();
        s.snooze("%3", SnoozeFor::Minutes15, T0);
        s.snooze("%4", SnoozeFor::Hours6, T0);
        s.snooze("%5", SnoozeFor::Unlimited, T0);
        assert_eq!(s.next_deadline(), Some(T0 + 900));
        let m = s.marks("%3", T0 + 899);
        assert!(m.snoozed && !m.parked);
        assert_eq!(m.until, Some(T0 + 900));
        assert!(!s.marks("%3", T0 + 900).snoozed);
        // The machine slept for a day: every timed snooze is over at once.
        let woke = T0 + DAY;
        assert!(!s.marks("%4", woke).snoozed);
        assert!(s.marks("%5", woke).snoozed);
        assert_eq!(s.marks("%5", woke).until, None);
        assert_eq!(s.expire(woke), vec!["%3".to_owned(), "%4".to_owned()]);
        assert_eq!(s.next_deadline(), None);
        assert!(s.snooze_of("%5").is_some());
        // A new snooze replaces the old.
        let old = s.snooze("%5", SnoozeFor::Minutes30, woke).unwrap();
        assert_eq!(old.length, SnoozeFor::Unlimited);
        assert_eq!(s.marks("%5", woke).until, Some(woke + 1800));
        assert!(s.unsnooze("%5").is_some());
        assert!(!s.marks("%5", woke).snoozed);
    }

    #[test]
    fn typing_clears_snooze_not_park() {
        let mut s = ParkStore::new();
        s.snooze("%3", SnoozeFor::Unlimited, T0);
        s.park("%3", "n", None, T0).unwrap();
        assert!(s.typed("%3"));
        let m = s.marks("%3", T0);
        assert!(!m.snoozed && m.parked);
        assert!(!s.typed("%3"));
    }

    #[test]
    fn round_trip_and_version() {
        let mut s = ParkStore::new();
        s.park("%3", "review “later”", Some("%7"), T0).unwrap();
        s.park("%4", "", None, T0 + 1).unwrap();
        s.snooze("%5", SnoozeFor::Hours6, T0);
        s.snooze("%6", SnoozeFor::Unlimited, T0);
        let text = s.to_text();
        assert!(text.contains("\"version\": 1"), "{text}");
        assert!(text.contains("\"6h\""), "{text}");
        let (back, warnings) = ParkStore::load(&text, T0 + 10).unwrap();
        assert_eq!(back, s);
        assert!(warnings.is_empty(), "{warnings:?}");
        // serde directly, too.
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(serde_json::from_value::<ParkStore>(v).unwrap(), s);
    }

    #[test]
    fn stale_parks_are_dropped_on_load() {
        let mut s = ParkStore::new();
        s.park("%3", "old idea", None, T0).unwrap();
        s.park("%4", "", None, T0).unwrap();
        s.park("%5", "revisited", None, T0).unwrap();
        s.touch("%5", T0 + 10 * DAY);
        s.park("%6", "fresh", None, T0 + 13 * DAY).unwrap();
        assert!(!s.touch("%9", T0));
        let text = s.to_text();
        // 13 days 23:59:59 later: all kept.
        let (kept, w) = ParkStore::load(&text, T0 + 14 * DAY - 1).unwrap();
        assert_eq!(kept.parks().count(), 4);
        assert!(w.is_empty());
        // 14 days: the untouched ones go, each with a warning.
        let (kept, w) = ParkStore::load(&text, T0 + 14 * DAY).unwrap();
        assert_eq!(
            kept.parks().map(|(p, _)| p).collect::<Vec<_>>(),
            vec!["%5", "%6"]
        );
        assert_eq!(w.len(), 2);
        assert!(w[0].contains("%3") && w[0].contains("“old idea”"), "{w:?}");
        assert!(w[0].contains("14 days"), "{w:?}");
        assert!(w[1].contains("no note"), "{w:?}");
        // Staleness is only judged on load: a live store keeps them.
        assert!(s.marks("%3", T0 + 30 * DAY).parked);
    }

    #[test]
    fn expired_snoozes_are_dropped_on_load_quietly() {
        let mut s = ParkStore::new();
        s.snooze("%3", SnoozeFor::Minutes15, T0);
        s.snooze("%4", SnoozeFor::Unlimited, T0);
        let (back, w) = ParkStore::load(&s.to_text(), T0 + 3600).unwrap();
        assert!(w.is_empty());
        assert_eq!(
            back.snoozes().map(|(p, _)| p).collect::<Vec<_>>(),
            vec!["%4"]
        );
    }

    #[test]
    fn corrupt_or_newer_files_are_errors() {
        for bad in [
            "",
            "{",
            "not json",
            "{\"version\": 1, \"parks\": []}",
            "{\"parks\": {}}",
            "{\"version\": 1, \"parks\": {\"%3\": {\"note\": 5}}}",
            "{\"version\": 1, \"snoozes\": {\"%3\": {\"for\": \"2h\", \"set_at\": 0, \"until\": null}}}",
        ] {
            let e = ParkStore::load(bad, T0).unwrap_err();
            assert!(e.to_string().contains("damaged"), "{bad}: {e}");
        }
        let e = ParkStore::load("{\"version\": 2}", T0).unwrap_err();
        assert!(e.to_string().contains("version 2"), "{e}");
        assert!(ParkStore::load("{\"version\": 0}", T0).is_err());
        // A minimal valid file.
        let (s, w) = ParkStore::load("{\"version\": 1}", T0).unwrap();
        assert_eq!(s, ParkStore::new());
        assert!(w.is_empty());
    }

    #[test]
    fn load_repairs_what_it_can() {
        let mut parks = serde_json::Map::new();
        for i in 0..(MAX_PARKS + 3) {
            parks.insert(
                format!("%{i}"),
                serde_json::json!({"note": "n", "parked_at": T0, "touched_at": T0 + i as u64}),
            );
        }
        parks.insert(
            "%self".into(),
            serde_json::json!({"note": "", "parked_at": T0, "touched_at": T0 + 999, "gate": "%self"}),
        );
        let text = serde_json::json!({"version": 1, "parks": parks}).to_string();
        let (s, w) = ParkStore::load(&text, T0 + 1000).unwrap();
        assert_eq!(s.parks().count(), MAX_PARKS);
        // The least recently revisited were dropped.
        assert!(s.park_of("%0").is_none());
        assert!(s.park_of("%3").is_none());
        assert!(s.park_of("%4").is_some());
        assert_eq!(s.park_of("%self").unwrap().gate, None);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().any(|x| x.contains("gated on itself")));
        assert!(w.iter().any(|x| x.contains("dropped the 4")));
    }
}
