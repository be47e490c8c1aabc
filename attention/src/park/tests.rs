//! Park and snooze, from parking a pane to loading a damaged file.

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

#[test]
fn a_store_read_late_adds_what_it_holds_and_keeps_what_is_newer() {
    let mut now = ParkStore::new();
    now.park("%3", "parked since the daemon started", None, 2_000)
        .unwrap();
    let mut saved = ParkStore::new();
    saved.park("%3", "an older note", None, 1_000).unwrap();
    saved.park("%4", "keepme", None, 1_000).unwrap();
    saved.snooze("%5", SnoozeFor::Unlimited, 1_000);
    now.merge_missing(saved);
    assert_eq!(
        now.park_of("%3").map(|p| p.note.as_str()),
        Some("parked since the daemon started")
    );
    assert_eq!(now.park_of("%4").map(|p| p.note.as_str()), Some("keepme"));
    assert!(now.snooze_of("%5").is_some());
}
