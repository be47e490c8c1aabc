use super::*;

/// Unix time of a UTC wall time.
fn utc(year: i64, month: u32, day: u32, hour: u32, minute: u32) -> i64 {
    Civil {
        year,
        month,
        day,
        hour,
        minute,
        second: 0,
    }
    .unix(0)
}

/// Sunday 2026-12-06 09:30 UTC.
const NOW: i64 = 1_796_549_400;

#[test]
fn the_agents_own_words_read_as_their_reset() {
    // What the recorded agents drew (tests/corpus/*/limit*), the pane in
    // TZ=UTC.
    let cases = [
        // Claude Code 2.1.332: a 5-hour window, today.
        ("9:37am (UTC)", utc(2026, 12, 6, 9, 37)),
        ("3pm (UTC)", utc(2026, 12, 6, 15, 0)),
        // Claude Code: a weekly window, more than a day away.
        ("Dec 9, 6:32am (UTC)", utc(2026, 12, 9, 6, 32)),
        // Codex 0.171.0, today and another day (with its ordinal and year).
        ("9:38 AM", utc(2026, 12, 6, 9, 38)),
        ("Dec 9th, 2026 6:33 AM", utc(2026, 12, 9, 6, 33)),
        // Codex's line wrapped at the pane's edge and cut out across rows.
        ("Dec\n9th, 2026 6:33\nAM.", utc(2026, 12, 9, 6, 33)),
        // Gemini CLI 0.61.0 (Intl's short zone name).
        ("9:41 AM UTC.", utc(2026, 12, 6, 9, 41)),
    ];
    for (text, want) in cases {
        assert_eq!(parse_reset(text, NOW, 0), Some(want), "{text:?}");
    }
}

#[test]
fn spans_count_from_now() {
    for (text, secs) in [
        ("in 2h 14m", 2 * 3600 + 14 * 60),
        ("2h14m", 2 * 3600 + 14 * 60),
        ("in 45 minutes", 45 * 60),
        ("in 1 day, 3 hours and 5 mins", 86_400 + 3 * 3600 + 300),
        ("30s", 30),
        ("after 2 hrs", 7200),
    ] {
        assert_eq!(parse_reset(text, NOW, 3600), Some(NOW + secs), "{text:?}");
    }
}

#[test]
fn a_time_without_a_zone_is_in_the_users_zone() {
    // UTC+2: 15:00 local is 13:00 UTC.
    assert_eq!(parse_reset("3pm", NOW, 7200), Some(utc(2026, 12, 6, 13, 0)));
    assert_eq!(
        parse_reset("15:00", NOW, 7200),
        Some(utc(2026, 12, 6, 13, 0))
    );
    // A zone tend cannot place without a database is the user's.
    assert_eq!(
        parse_reset("3pm (Europe/Berlin)", NOW, 3600),
        Some(utc(2026, 12, 6, 14, 0))
    );
    // A zone the words name and tend knows wins.
    assert_eq!(
        parse_reset("3pm (UTC)", NOW, 7200),
        Some(utc(2026, 12, 6, 15, 0))
    );
    assert_eq!(
        parse_reset("3:05 PM GMT+2", NOW, 0),
        Some(utc(2026, 12, 6, 13, 5))
    );
    assert_eq!(
        parse_reset("7:05 AM PST", NOW, 0),
        Some(utc(2026, 12, 6, 15, 5))
    );
    assert_eq!(
        parse_reset("16:30 +05:30", NOW, 0),
        Some(utc(2026, 12, 6, 11, 0))
    );
}

#[test]
fn a_time_already_passed_is_tomorrows_unless_only_just() {
    // 09:30 now: 9am passed half an hour ago (a screen drawn before its
    // reset, read after it): today's; 8am passed 90 minutes ago: tomorrow's.
    assert_eq!(parse_reset("9am", NOW, 0), Some(utc(2026, 12, 6, 9, 0)));
    assert_eq!(parse_reset("8am", NOW, 0), Some(utc(2026, 12, 7, 8, 0)));
    assert_eq!(parse_reset("12am", NOW, 0), Some(utc(2026, 12, 7, 0, 0)));
    assert_eq!(parse_reset("12pm", NOW, 0), Some(utc(2026, 12, 6, 12, 0)));
    assert_eq!(
        parse_reset("midnight", NOW, 0),
        Some(utc(2026, 12, 7, 0, 0))
    );
    // In the user's zone: at UTC-10 it is 23:30 on the 5th, so 1am is the
    // 6th's.
    assert_eq!(
        parse_reset("1am", NOW, -36_000),
        Some(utc(2026, 12, 6, 11, 0))
    );
}

#[test]
fn dates_weekdays_and_years() {
    assert_eq!(parse_reset("Dec 9", NOW, 0), Some(utc(2026, 12, 9, 0, 0)));
    assert_eq!(
        parse_reset("9 December, 15:00", NOW, 0),
        Some(utc(2026, 12, 9, 15, 0))
    );
    // A date before today without a year is next year's.
    assert_eq!(
        parse_reset("Jan 2, 3pm", NOW, 0),
        Some(utc(2027, 1, 2, 15, 0))
    );
    assert_eq!(
        parse_reset("Mar 1, 2028 9am", NOW, 0),
        Some(utc(2028, 3, 1, 9, 0))
    );
    // Sunday now: Monday is tomorrow, Sunday 8am (passed) next week's.
    assert_eq!(parse_reset("Mon 9am", NOW, 0), Some(utc(2026, 12, 7, 9, 0)));
    assert_eq!(
        parse_reset("Sunday 8am", NOW, 0),
        Some(utc(2026, 12, 13, 8, 0))
    );
    assert_eq!(
        parse_reset("tomorrow at 9:15", NOW, 0),
        Some(utc(2026, 12, 7, 9, 15))
    );
    assert_eq!(
        parse_reset("today 11pm", NOW, 0),
        Some(utc(2026, 12, 6, 23, 0))
    );
}

#[test]
fn timestamps() {
    assert_eq!(
        parse_reset("2026-12-09T06:33:00Z", NOW, 3600),
        Some(utc(2026, 12, 9, 6, 33))
    );
    assert_eq!(
        parse_reset("2026-12-09 06:33 +01:00", NOW, 0),
        Some(utc(2026, 12, 9, 5, 33))
    );
    assert_eq!(
        parse_reset("2026-12-09", NOW, 0),
        Some(utc(2026, 12, 9, 0, 0))
    );
    assert_eq!(parse_reset("1796549820", NOW, 0), Some(1_796_549_820));
}

#[test]
fn the_words_say_how_precisely_they_name_the_reset() {
    let within = |text: &str| read_reset(text, NOW, 0).map(|r| r.within);
    assert_eq!(within("9:37am (UTC)"), Some(60));
    assert_eq!(within("9:37:20am (UTC)"), Some(1));
    assert_eq!(within("15:00"), Some(60));
    assert_eq!(within("Aug 8"), Some(86_400));
    assert_eq!(within("in 2h 14m"), Some(60));
    assert_eq!(within("in 2h"), Some(3600));
    assert_eq!(within("in 45s"), Some(1));
    assert_eq!(within("2026-12-09T06:33:00Z"), Some(1));
    assert_eq!(within("2026-12-09 06:33"), Some(60));
    assert_eq!(within("1796549820"), Some(1));
    assert_eq!(within("later"), None);
}

#[test]
fn words_that_name_no_time_give_none() {
    for text in [
        "",
        "later",
        "soon",
        "you've hit your usage limit",
        "25:00",
        "13pm",
        "Feb 30",
        "2026-02-30",
        "in 5",
        "in 2 fortnights",
    ] {
        assert_eq!(parse_reset(text, NOW, 0), None, "{text:?}");
    }
}

#[test]
fn a_reset_as_the_user_reads_it_and_its_countdown() {
    // Sunday 09:30 UTC; the user at UTC+1.
    assert_eq!(local_clock(utc(2026, 12, 6, 14, 0), NOW, 3600), "15:00");
    assert_eq!(
        local_clock(utc(2026, 12, 6, 23, 30), NOW, 3600),
        "Mon 00:30"
    );
    assert_eq!(local_clock(utc(2026, 12, 9, 6, 32), NOW, 3600), "Wed 07:32");
    assert_eq!(local_clock(utc(2027, 1, 2, 15, 0), NOW, 0), "Jan 2 15:00");
    assert_eq!(countdown(2 * 3600 + 14 * 60 + 59), "2h 14m");
    assert_eq!(countdown(3600 + 5 * 60), "1h 05m");
    assert_eq!(countdown(45 * 60), "45m");
    assert_eq!(countdown(40), "40s");
    assert_eq!(countdown(-5), "0s");
    assert_eq!(countdown(3 * 86_400 + 7200 + 59), "3d 2h");
}
