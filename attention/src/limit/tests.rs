use super::*;

/// Sunday 2026-12-06 09:30 UTC.
const NOW: f64 = 1_796_549_400.0;
/// 15:00 that day.
const THREE_PM: i64 = 1_796_569_200;

fn on(text: &str) -> ResumePolicy {
    ResumePolicy {
        text: Some(text.to_owned()),
        margin: Duration::from_secs(2),
    }
}

#[test]
fn a_limit_is_read_once_and_resumed_once_at_its_reset() {
    let mut l = Limits::new();
    let policy = on("continue");
    assert_eq!(
        l.observe("%3", NOW, true, Some("3pm (UTC)"), 7200),
        Some(LimitChange::Hit)
    );
    assert_eq!(l.get("%3").and_then(|x| x.resets_at), Some(THREE_PM));
    // The same screen again: nothing new.
    assert_eq!(
        l.observe("%3", NOW + 5.0, true, Some("3pm (UTC)"), 7200),
        None
    );
    // "3pm" names the minute: the reset may be as late as 15:00:59, so the
    // resume waits for the minute's end and the margin (2 s here).
    assert_eq!(l.get("%3").unwrap().within, 60);
    let reset = THREE_PM as f64;
    assert_eq!(
        l.hold("%3", reset + 1.0, &policy),
        Some(Hold::Until(THREE_PM + 61))
    );
    assert!(l.due(reset + 60.0, &policy).is_empty());
    assert_eq!(l.next_wakeup(NOW, &policy), Some(reset));
    assert_eq!(l.next_wakeup(reset, &policy), Some(reset + 61.0));
    assert!(!l.get("%3").unwrap().reset_passed(reset - 1.0));
    assert!(l.get("%3").unwrap().reset_passed(reset));
    // Then: due, once.
    assert_eq!(l.due(reset + 61.0, &policy), vec!["%3".to_owned()]);
    l.resumed("%3", reset + 61.0);
    assert!(l.due(reset + 62.0, &policy).is_empty());
    assert_eq!(
        l.hold("%3", reset + 62.0, &policy),
        Some(Hold::Done(reset + 61.0))
    );
    assert_eq!(l.next_wakeup(reset + 62.0, &policy), None);
    // The agent hits the same limit again at once: never twice.
    assert_eq!(
        l.observe("%3", reset + 4.0, false, None, 7200),
        Some(LimitChange::Ended)
    );
    l.observe("%3", reset + 9.0, true, Some("3pm (UTC)"), 7200);
    assert_eq!(l.get("%3").unwrap().resets_at, Some(THREE_PM));
    assert!(l.due(reset + 600.0, &policy).is_empty());
    assert_eq!(
        l.hold("%3", reset + 600.0, &policy),
        Some(Hold::Done(reset + 61.0))
    );
    // Words that name the second: the margin alone.
    l.observe("%9", NOW, true, Some("3:00:10pm (UTC)"), 0);
    assert_eq!(l.get("%9").unwrap().within, 1);
    assert_eq!(
        l.hold("%9", NOW, &policy),
        Some(Hold::Until(THREE_PM + 10 + 2))
    );
}

#[test]
fn typing_into_the_pane_or_resume_off_holds_it() {
    let mut l = Limits::new();
    l.observe("%1", NOW, true, Some("in 10m"), 0);
    let reset = NOW + 600.0;
    assert_eq!(
        l.hold("%1", reset + 5.0, &ResumePolicy::default()),
        Some(Hold::Off)
    );
    assert!(l.due(reset + 100.0, &ResumePolicy::default()).is_empty());
    // With resume off the reset still wakes the caller (the band changes).
    assert_eq!(l.next_wakeup(NOW, &ResumePolicy::default()), Some(reset));
    l.typed("%1");
    assert_eq!(l.hold("%1", reset + 5.0, &on("go on")), Some(Hold::Typed));
    assert!(l.due(reset + 5.0, &on("go on")).is_empty());
    // A limit that named no time is never resumed on its own.
    l.observe("%2", NOW, true, None, 0);
    assert_eq!(l.hold("%2", NOW + 1e6, &on("go on")), Some(Hold::NoReset));
    l.observe("%4", NOW, true, Some("soon"), 0);
    assert_eq!(l.get("%4").unwrap().resets_at, None);
    assert_eq!(l.next_wakeup(reset + 10.0, &on("go on")), None);
}

#[test]
fn words_that_count_down_keep_their_reset_and_new_words_move_it() {
    let mut l = Limits::new();
    l.observe("%1", NOW, true, Some("in 2h 14m"), 0);
    let first = l.get("%1").unwrap().resets_at;
    // A minute later the agent draws "in 2h 13m": the same reset.
    assert_eq!(
        l.observe("%1", NOW + 61.0, true, Some("in 2h 13m"), 0),
        None
    );
    assert_eq!(l.get("%1").unwrap().resets_at, first);
    // Words naming another time: another limit.
    assert_eq!(
        l.observe("%1", NOW + 90.0, true, Some("Dec 9, 6:32am (UTC)"), 0),
        Some(LimitChange::Moved)
    );
    assert_eq!(l.get("%1").unwrap().resets_at, Some(1_796_797_920));
    // Words that name no time leave the reset as it was.
    assert_eq!(l.observe("%1", NOW + 95.0, true, Some("later"), 0), None);
    assert_eq!(l.get("%1").unwrap().resets_at, Some(1_796_797_920));
    l.closed("%1");
    assert!(l.get("%1").is_none());
    assert_eq!(l.observe("%1", NOW, false, None, 0), None);
}

#[test]
fn a_manual_resume_counts_as_the_limits_one() {
    let mut l = Limits::new();
    l.observe("%5", NOW, true, Some("9:40am"), 0);
    // `tend resume` before the reset: the automatic one never follows.
    l.resumed("%5", NOW + 10.0);
    let policy = on("continue");
    assert!(l.due(NOW + 3600.0, &policy).is_empty());
    assert_eq!(l.iter().count(), 1);
}
