//! What the user and the gates do to a [`ParkStore`]: park, lift, revisit,
//! snooze, type into a pane, a gate pane going from busy to ready or away,
//! and what a pane shows at a given time.

use super::*;

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

    /// Takes the parks and snoozes of `saved` (a state file read late)
    /// that this store does not hold; what it holds (newer) stays.
    pub fn merge_missing(&mut self, saved: ParkStore) {
        for (pane, park) in saved.parks {
            self.parks.entry(pane).or_insert(park);
        }
        for (pane, snooze) in saved.snoozes {
            self.snoozes.entry(pane).or_insert(snooze);
        }
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
}
