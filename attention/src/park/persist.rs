//! The [`ParkStore`] as a file: versioned JSON out, and in, what loading
//! repairs (stale parks, a gate on itself, too many parks, snoozes already
//! over) rather than refusing the whole file.

use super::*;

impl ParkStore {
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
