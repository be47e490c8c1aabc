use super::*;
use proptest::prelude::*;

fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Every sequence found in `chunks`, fed in that order.
fn found(chunks: &[&[u8]]) -> Vec<Result<Vec<u8>, &'static str>> {
    let mut sc = Scanner::new();
    let mut out = Vec::new();
    for c in chunks {
        sc.scan(c, |f| {
            out.push(match f {
                Found::Sequence(b) => Ok(b.to_vec()),
                Found::Oversized => Err("oversized"),
                Found::Unterminated => Err("unterminated"),
            })
        });
    }
    out
}

fn report(body: &str) -> Report {
    match parse(body.as_bytes()) {
        Ok(Message::Report(r)) => r,
        other => panic!("{body}: {other:?}"),
    }
}

fn b64(s: &str) -> String {
    base64_encode(s.as_bytes())
}

#[test]
fn scanner_finds_sequences_ended_by_bel_or_st() {
    let stream =
        b"text\x1b]7501;?\x07more\x1b[c\x1b]7501;state=idle:app=claude-code\x1b\\\x1b]0;title\x07";
    assert_eq!(
        found(&[stream]),
        vec![
            Ok(b"?".to_vec()),
            Ok(b"state=idle:app=claude-code".to_vec())
        ]
    );
}

#[test]
fn scanner_assembles_a_sequence_split_anywhere_once() {
    let stream: &[u8] = b"ab\x1b]7501;state=working:msg=aGk=\x1b\\cd\x1b]7501;?\x07";
    let whole = found(&[stream]);
    assert_eq!(whole.len(), 2);
    for i in 0..=stream.len() {
        for j in i..=stream.len() {
            assert_eq!(
                found(&[&stream[..i], &stream[i..j], &stream[j..]]),
                whole,
                "split at {i}, {j}"
            );
        }
    }
    // Byte by byte.
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(found(&bytes), whole);
}

#[test]
fn scanner_ignores_other_oscs_and_near_misses() {
    assert!(found(&[b"\x1b]750;x\x07\x1b]75011;x\x07\x1b]9;4;1;5\x07\x1b[7501m"]).is_empty());
    // An ESC that is not the introducer's start, just before one.
    assert_eq!(found(&[b"\x1b\x1b]7501;?\x07"]), vec![Ok(b"?".to_vec())]);
    assert_eq!(found(&[b"\x1b]\x1b]7501;?\x07"]), vec![Ok(b"?".to_vec())]);
}

#[test]
fn scanner_drops_unterminated_and_oversized_sequences() {
    // ESC followed by something else ends the sequence unfinished; the
    // ESC may start the next one.
    assert_eq!(
        found(&[b"\x1b]7501;state=idle\x1b]7501;state=done\x07"]),
        vec![Err("unterminated"), Ok(b"state=done".to_vec())]
    );
    assert_eq!(
        found(&[b"\x1b]7501;state=idle\x18\x1b]7501;state=done\x1a"]),
        vec![Err("unterminated"), Err("unterminated")]
    );
    // Longer than the protocol's 4 KiB: dropped, and skipped to its end,
    // whatever the reads.
    let mut big = PREFIX.to_vec();
    big.extend(std::iter::repeat_n(b'a', MAX_BODY + 1));
    big.extend_from_slice(b"\x07\x1b]7501;?\x07");
    assert_eq!(found(&[&big]), vec![Err("oversized"), Ok(b"?".to_vec())]);
    let chunks: Vec<&[u8]> = big.chunks(100).collect();
    assert_eq!(found(&chunks), vec![Err("oversized"), Ok(b"?".to_vec())]);
    // Exactly at the limit is kept.
    let mut edge = PREFIX.to_vec();
    edge.extend(std::iter::repeat_n(b'a', MAX_BODY));
    edge.push(0x07);
    assert_eq!(found(&[&edge]).len(), 1);
    assert!(found(&[&edge])[0].is_ok());
}

#[test]
fn parses_the_reports_claude_code_sends() {
    assert_eq!(parse(b"?"), Ok(Message::Query));
    assert_eq!(
        report("state=idle:app=claude-code"),
        Report {
            state: ReportState::Idle,
            kind: None,
            app: Some("claude-code".into()),
            id: None,
            progress: None,
            msg: None,
            title: None,
        }
    );
    let r = report(&format!(
        "state=blocked:kind=permission:msg={}",
        b64("approve Bash: rm -rf ./build")
    ));
    assert_eq!(r.state, ReportState::Blocked);
    assert_eq!(r.kind, Some(Kind::Permission));
    assert_eq!(r.msg.as_deref(), Some("approve Bash: rm -rf ./build"));
    let r = report(&format!(
        "state=working:id=bash-1:title={}",
        b64("Run the long command")
    ));
    assert_eq!(r.id.as_deref(), Some("bash-1"));
    assert_eq!(r.title.as_deref(), Some("Run the long command"));
    let r = report("state=clear:id=bash-1");
    assert_eq!(
        (r.state, r.id.as_deref()),
        (ReportState::Clear, Some("bash-1"))
    );
    // Spaces around keys and values are allowed; progress read.
    let r = report(" state = working : progress=42 ");
    assert_eq!((r.state, r.progress), (ReportState::Working, Some(42)));
}

#[test]
fn unknown_keys_are_ignored_and_kind_goes_with_blocked_only() {
    let r = report("state=working:future=whatever:kind=permission");
    assert_eq!(r.state, ReportState::Working);
    assert_eq!(r.kind, None);
    assert_eq!(report("state=blocked:kind=payment").kind, Some(Kind::Other));
    assert_eq!(report("state=blocked").kind, None);
}

#[test]
fn broken_reports_are_dropped_whole() {
    let cases: &[(&[u8], Rejected)] = &[
        (b"", Rejected::Malformed),
        (b"state=idle:", Rejected::Malformed),
        (b"state", Rejected::Malformed),
        (b"State=idle", Rejected::Malformed),
        (b"=idle", Rejected::Malformed),
        (b"averyveryverylongkey=1:state=idle", Rejected::Malformed),
        (b"state=idle\n", Rejected::BadValue),
        (b"state=idle:app=a b", Rejected::BadValue),
        (b"state=idle:app=caf\xc3\xa9", Rejected::BadValue),
        (b"state=idle:state=done", Rejected::DuplicateKey),
        (b"app=x", Rejected::MissingState),
        (b"state=busy", Rejected::UnknownState),
        (b"state=idle:msg=a", Rejected::BadBase64),
        (b"state=idle:msg=a-_b", Rejected::BadBase64),
        (b"state=idle:msg=aGl=", Rejected::BadBase64),
        (b"state=idle:msg=//8=", Rejected::BadUtf8),
        (b"state=idle:progress=101", Rejected::BadProgress),
        (b"state=idle:progress=-1", Rejected::BadProgress),
        (b"state=idle:progress=", Rejected::BadProgress),
        (b"state=idle:progress=0042", Rejected::BadProgress),
        (b"state=idle:id=", Rejected::BadId),
        (b"state=idle:id=a//b", Rejected::BadId),
        (b"state=idle:id=/a", Rejected::BadId),
        (b"state=idle:id=a/b/c/d/e/f/g/h/i", Rejected::BadId),
        (
            b"state=idle:app=abcdefghijklmnopqrstuvwxyz0123456",
            Rejected::TooLong,
        ),
    ];
    for (body, why) in cases {
        assert_eq!(parse(body), Err(*why), "{}", String::from_utf8_lossy(body));
    }
    // The limits: msg 2048 bytes decoded, title 192; one more is dropped.
    let ok = format!("state=working:msg={}", b64(&"m".repeat(MAX_MSG)));
    assert!(parse(ok.as_bytes()).is_ok());
    let long = format!("state=working:msg={}", b64(&"m".repeat(MAX_MSG + 1)));
    assert_eq!(parse(long.as_bytes()), Err(Rejected::TooLong));
    let ok = format!("state=working:title={}", b64(&"t".repeat(MAX_TITLE)));
    assert!(parse(ok.as_bytes()).is_ok());
    let long = format!("state=working:title={}", b64(&"t".repeat(MAX_TITLE + 1)));
    assert_eq!(parse(long.as_bytes()), Err(Rejected::TooLong));
    let id = ["abcdefghijklmnopqrstuvwxyz012345"; 4].join("/");
    assert_eq!(id.len(), 131);
    assert_eq!(
        parse(format!("state=idle:id={id}").as_bytes()),
        Err(Rejected::TooLong)
    );
    let seg = "a".repeat(MAX_ID_SEGMENT + 1);
    assert_eq!(
        parse(format!("state=idle:id={seg}").as_bytes()),
        Err(Rejected::BadId)
    );
}

#[test]
fn text_is_cleaned_and_bounded() {
    assert_eq!(
        clean_text(
            "line one\nline\ttwo\x1b[31m red\x07\u{202e}evil\u{200b}",
            100
        ),
        "line one line two[31m redevil"
    );
    assert_eq!(clean_text("  \n\t ", 100), "");
    assert_eq!(clean_text("abcdef", 4), "a…");
    assert_eq!(clean_text("éééé", 5), "é…");
    // Decoded messages are cleaned: an escape sequence in a message never
    // reaches a terminal or tmux.
    let r = report(&format!(
        "state=working:msg={}",
        b64("\x1b]0;pwned\x07ok\r\n")
    ));
    assert_eq!(r.msg.as_deref(), Some("]0;pwnedok"));
    // A message that is only control characters is no message.
    let r = report(&format!("state=working:msg={}", b64("\x1b\x07")));
    assert_eq!(r.msg, None);
    // A long message is cut for display.
    let r = report(&format!("state=working:msg={}", b64(&"x".repeat(2000))));
    let m = r.msg.unwrap();
    assert_eq!(m.len(), MAX_SHOWN);
    assert!(m.ends_with('…'));
}

#[test]
fn base64_round_trips_and_is_strict() {
    for s in [
        "",
        "f",
        "fo",
        "foo",
        "foob",
        "fooba",
        "foobar",
        "approve Bash: rm -rf ./build",
    ] {
        let e = base64_encode(s.as_bytes());
        assert_eq!(base64_decode(e.as_bytes()).as_deref(), Some(s.as_bytes()));
        // Unpadded too.
        let bare = e.trim_end_matches('=');
        assert_eq!(
            base64_decode(bare.as_bytes()).as_deref(),
            Some(s.as_bytes())
        );
    }
    assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
    for bad in [
        "=", "Zg=", "Zg===", "Z===", "Zm9v=", "Zh==", "Z", "Zm9vY", "Zm 9v",
    ] {
        assert_eq!(base64_decode(bad.as_bytes()), None, "{bad}");
    }
}

#[test]
fn a_report_replaces_its_record_and_clear_removes_a_subtree() {
    let mut recs = Records::default();
    recs.apply(s(1), report("state=working:app=claude-code:progress=10"))
        .unwrap();
    recs.apply(s(2), report("state=working")).unwrap();
    let root = recs.root.clone().unwrap();
    // Replaced whole: app and progress are gone; the state's start kept.
    assert_eq!(
        (root.app, root.progress, root.since, root.at),
        (None, None, s(1), s(2))
    );
    for id in ["a", "a/1", "a/1/x", "ab", "b"] {
        recs.apply(s(3), report(&format!("state=working:id={id}")))
            .unwrap();
    }
    recs.apply(s(4), report("state=clear:id=a")).unwrap();
    assert_eq!(
        recs.children.keys().map(String::as_str).collect::<Vec<_>>(),
        vec!["ab", "b"]
    );
    recs.apply(s(5), report("state=clear")).unwrap();
    assert!(recs.is_empty());
}

#[test]
fn at_most_64_children() {
    let mut recs = Records::default();
    for i in 0..MAX_CHILDREN {
        recs.apply(s(1), report(&format!("state=working:id=t{i}")))
            .unwrap();
    }
    assert_eq!(
        recs.apply(s(2), report("state=working:id=one-more")),
        Err(Rejected::TooManyRecords)
    );
    // An existing one may still change.
    recs.apply(s(2), report("state=done:id=t0")).unwrap();
    recs.apply(s(3), report("state=clear:id=t1")).unwrap();
    recs.apply(s(3), report("state=working:id=one-more"))
        .unwrap();
    assert_eq!(recs.children.len(), MAX_CHILDREN);
}

fn read(reports: &[&str]) -> Option<Reading> {
    let mut recs = Records::default();
    for (i, r) in reports.iter().enumerate() {
        recs.apply(s(i as u64), report(r)).unwrap();
    }
    recs.reading()
}

fn st(reports: &[&str]) -> Option<(State, Option<Reason>, String)> {
    read(reports).map(|r| (r.state, r.reason, r.rule))
}

#[test]
fn the_mapping() {
    use Reason::*;
    let w = |r| Some((State::Waiting, Some(r)));
    type Want = Option<(State, Option<Reason>)>;
    let cases: &[(&str, Want)] = &[
        ("state=idle", Some((State::Idle, None))),
        ("state=working", Some((State::Working, None))),
        ("state=blocked:kind=permission", w(Approval)),
        ("state=blocked:kind=question", w(Question)),
        ("state=blocked:kind=auth", w(Error)),
        ("state=blocked:kind=other", w(Prompt)),
        ("state=blocked", w(Prompt)),
        ("state=error", w(Error)),
        ("state=done", Some((State::Completed, None))),
        ("state=clear", None),
        ("state=done:id=x", None),
    ];
    for (r, want) in cases {
        assert_eq!(st(&[r]).map(|(s, r, _)| (s, r)), *want, "{r}");
    }
    assert_eq!(st(&[]), None);
    assert_eq!(
        st(&["state=blocked:kind=permission"]).unwrap().2,
        "psp/blocked:permission"
    );
}

#[test]
fn never_completed_while_a_subtask_is_live() {
    let task = format!(
        "state=working:id=bash-7:title={}",
        b64("Run the long command")
    );
    let still = format!("state=working:msg={}", b64("1 shell still running"));
    let r = read(&["state=working", &task, "state=done"]).unwrap();
    assert_eq!(
        (r.state, r.rule.as_str()),
        (State::Working, "psp/done+tasks")
    );
    assert_eq!(r.live_tasks, 1);
    assert_eq!(r.tasks[0].title.as_deref(), Some("Run the long command"));
    let r = read(&["state=working", &task, &still]).unwrap();
    assert_eq!(r.state, State::Working);
    assert_eq!(r.message.as_deref(), Some("1 shell still running"));
    let r = read(&[
        "state=working",
        &task,
        &still,
        "state=clear:id=bash-7",
        "state=done",
    ])
    .unwrap();
    assert_eq!((r.state, r.live_tasks), (State::Completed, 0));
    assert!(r.tasks.is_empty());
    // A finished subtask does not hold the agent; it is listed until
    // cleared.
    let r = read(&["state=done:id=t", "state=done"]).unwrap();
    assert_eq!(
        (r.state, r.live_tasks, r.tasks.len()),
        (State::Completed, 0, 1)
    );
    assert!(!r.tasks[0].live);
    // Subtasks without a root: working while one is live.
    assert_eq!(
        st(&["state=working:id=t"]).map(|x| x.0),
        Some(State::Working)
    );
}

#[test]
fn a_blocked_subtask_waits_on_the_user() {
    let ask = format!(
        "state=blocked:kind=question:id=sub/1:msg={}",
        b64("Postgres or SQLite?")
    );
    let r = read(&["state=working", &ask]).unwrap();
    assert_eq!(
        (r.state, r.reason, r.message.as_deref()),
        (
            State::Waiting,
            Some(Reason::Question),
            Some("Postgres or SQLite?")
        )
    );
    // The root's own block or failure comes first.
    let r = read(&["state=error", &ask]).unwrap();
    assert_eq!(r.reason, Some(Reason::Error));
}

#[test]
fn the_message_is_the_msg_else_the_title() {
    let both = format!("state=working:msg={}:title={}", b64("m"), b64("t"));
    assert_eq!(read(&[&both]).unwrap().message.as_deref(), Some("m"));
    let title = format!("state=working:title={}", b64("t"));
    assert_eq!(read(&[&title]).unwrap().message.as_deref(), Some("t"));
    assert_eq!(read(&["state=working"]).unwrap().message, None);
}

#[test]
fn the_tracker_counts_what_it_drops() {
    let mut t = Tracker::new();
    t.feed(
        s(1),
        b"\x1b]7501;?\x07\x1b]7501;state=idle:app=claude-code\x1b\\",
    );
    assert!(t.take_changed());
    assert!(!t.take_changed());
    t.feed(
        s(2),
        b"\x1b]7501;state=nope\x07\x1b]7501;state=idle:msg=a\x07",
    );
    t.feed(s(2), b"\x1b]7501;state=working\x1b[");
    assert!(!t.changed());
    let c = t.counters();
    assert_eq!((c.queries, c.reports, c.dropped_total()), (1, 1, 3));
    assert_eq!(c.dropped.get(&Rejected::UnknownState), Some(&1));
    assert_eq!(c.dropped.get(&Rejected::BadBase64), Some(&1));
    assert_eq!(c.dropped.get(&Rejected::Unterminated), Some(&1));
    assert_eq!(t.last_query(), Some(s(1)));
    assert_eq!(t.reading().map(|r| r.state), Some(State::Idle));
    t.forget();
    assert!(t.take_changed());
    assert_eq!(t.reading(), None);
    assert_eq!(t.counters().reports, 1);
}

#[test]
fn encode_writes_what_parse_reads() {
    let r = Report {
        state: ReportState::Blocked,
        kind: Some(Kind::Permission),
        app: Some("claude-code".into()),
        id: Some("a/b".into()),
        progress: Some(7),
        msg: Some("approve Bash: rm -rf ./build".into()),
        title: Some("Run".into()),
    };
    let wire = encode(&r);
    let got = found(&[&wire]);
    let body = got[0].clone().unwrap();
    assert_eq!(parse(&body), Ok(Message::Report(r)));
}

fn arb_report() -> impl Strategy<Value = Report> {
    let state = prop_oneof![
        Just(ReportState::Idle),
        Just(ReportState::Working),
        Just(ReportState::Blocked),
        Just(ReportState::Done),
        Just(ReportState::Error),
        Just(ReportState::Clear),
    ];
    let kind = proptest::option::of(prop_oneof![
        Just(Kind::Permission),
        Just(Kind::Question),
        Just(Kind::Auth),
    ]);
    (
        state,
        kind,
        proptest::option::of("[a-z0-9._-]{1,32}"),
        proptest::option::of("[a-z0-9]{1,8}(/[a-z0-9]{1,8}){0,3}"),
        proptest::option::of(0u8..=100),
        proptest::option::of("[a-zA-Z0-9 ,.:!?éü→]{1,200}"),
        proptest::option::of("[a-zA-Z0-9 ]{1,40}"),
    )
        .prop_map(|(state, kind, app, id, progress, msg, title)| Report {
            state,
            kind: kind.filter(|_| state == ReportState::Blocked),
            app,
            id,
            progress,
            msg: msg
                .map(|m| clean_text(&m, MAX_SHOWN))
                .filter(|m| !m.is_empty()),
            title: title
                .map(|t| clean_text(&t, MAX_SHOWN))
                .filter(|t| !t.is_empty()),
        })
}

proptest! {
    /// Any bytes: parse and the scanner never panic, and the scanner's body
    /// stays within the limit.
    #[test]
    fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..6000)) {
        let _ = parse(&bytes);
        let mut t = Tracker::new();
        t.feed(s(0), &bytes);
        let mut framed = PREFIX.to_vec();
        framed.extend_from_slice(&bytes);
        framed.push(0x07);
        t.feed(s(1), &framed);
        prop_assert!(t.scanner.body.capacity() <= MAX_BODY * 2 + 64);
        prop_assert!(t.records().children.len() <= MAX_CHILDREN);
        let _ = t.reading();
        let _ = t.summary();
    }

    /// Bodies made of the protocol's own pieces, mixed with junk: never a
    /// panic, and anything accepted is within the limits.
    #[test]
    fn near_valid_bodies(parts in proptest::collection::vec(prop_oneof![
        Just("state=working".to_owned()),
        Just("state=blocked".to_owned()),
        Just("kind=permission".to_owned()),
        Just("id=a/b".to_owned()),
        Just("progress=100".to_owned()),
        Just("msg=aGk=".to_owned()),
        Just("title=".to_owned()),
        "[a-z]{1,3}=[A-Za-z0-9+/=]{0,12}",
        "[ -~]{0,8}",
    ], 0..8)) {
        let body = parts.join(":");
        if let Ok(Message::Report(r)) = parse(body.as_bytes()) {
            prop_assert!(r.msg.as_ref().is_none_or(|m| m.len() <= MAX_SHOWN));
            prop_assert!(r.app.as_ref().is_none_or(|a| a.len() <= MAX_APP));
            prop_assert!(r.id.as_ref().is_none_or(|i| i.len() <= MAX_ID));
            prop_assert!(r.progress.is_none_or(|p| p <= 100));
        }
    }

    /// However a stream is cut into reads, the scanner finds the same
    /// sequences.
    #[test]
    fn split_invariant(
        pieces in proptest::collection::vec(prop_oneof![
            Just(b"\x1b]7501;".to_vec()),
            Just(b"state=idle".to_vec()),
            Just(b"?".to_vec()),
            Just(b"\x07".to_vec()),
            Just(b"\x1b\\".to_vec()),
            Just(b"\x1b".to_vec()),
            Just(b"\x1b]".to_vec()),
            Just(b"\x18".to_vec()),
            proptest::collection::vec(any::<u8>(), 0..8),
        ], 0..40),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let stream: Vec<u8> = pieces.concat();
        let whole = found(&[&stream]);
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(stream.len() + 1)).collect();
        at.sort_unstable();
        let mut chunks: Vec<&[u8]> = Vec::new();
        let mut last = 0;
        for a in at {
            chunks.push(&stream[last..a]);
            last = a;
        }
        chunks.push(&stream[last..]);
        prop_assert_eq!(found(&chunks), whole);
    }

    /// What `encode` writes, `parse` reads back.
    #[test]
    fn round_trip(r in arb_report()) {
        let wire = encode(&r);
        let got = found(&[&wire]);
        prop_assert_eq!(got.len(), 1);
        let body = got[0].clone().unwrap();
        prop_assert_eq!(parse(&body), Ok(Message::Report(r)));
    }
}

#[test]
fn salvage_keeps_sequences_that_lost_any_part_to_a_drop() {
    let mut salv = Salvage::default();
    // Kept whole: the reader hands it on, nothing saved.
    salv.scan(b"text \x1b]7501;state=idle\x07 more", false);
    assert!(salv.is_empty());
    // Started in kept output, ended in dropped output.
    salv.scan(b"\x1b]7501;state=work", false);
    salv.scan(
        b"ing\x07 lots of output \x1b]7501;state=blocked:kind=permission\x1b",
        true,
    );
    // Started in dropped output, ended in kept output.
    salv.scan(b"\\ then \x1b]7501;state=done\x07", false);
    assert_eq!(
        salv.take(),
        Salvaged {
            bodies: vec![
                b"state=working".to_vec(),
                b"state=blocked:kind=permission".to_vec()
            ],
            given_up: 0
        }
    );
    assert!(salv.is_empty(), "taken");
}

#[test]
fn salvage_is_bounded_and_counts_what_it_gives_up() {
    let mut salv = Salvage::default();
    for i in 0..MAX_SALVAGED + 3 {
        salv.scan(
            format!("\x1b]7501;state=working:id=t{i}\x07").as_bytes(),
            true,
        );
    }
    let got = salv.take();
    assert_eq!(got.bodies.len(), MAX_SALVAGED);
    assert_eq!(got.given_up, 3);
    assert_eq!(
        got.bodies[0],
        b"state=working:id=t3".to_vec(),
        "the oldest go first"
    );
    // The tracker takes the kept ones and counts the rest.
    let mut t = Tracker::new();
    t.feed(s(1), b"\x1b]7501;state=work"); // cut short by the drop
    t.feed_salvaged(s(2), &got);
    assert_eq!(t.counters().reports, MAX_SALVAGED as u64);
    assert_eq!(t.counters().dropped.get(&Rejected::Overrun), Some(&3));
    assert_eq!(
        t.counters().dropped_total(),
        3,
        "the cut sequence is forgotten, not misread"
    );
    assert_eq!(t.records().live_children().count(), MAX_SALVAGED);
}

proptest! {
    /// However a stream of text and reports is cut into reads, and
    /// whichever reads are dropped, every report reaches the pane table
    /// exactly once: through the kept output (read by a scanner that
    /// starts afresh after each drop) or through the salvage.
    #[test]
    fn every_report_arrives_once_through_the_output_or_the_salvage(
        pieces in proptest::collection::vec(prop_oneof![
            "[a-z \r\n]{0,12}".prop_map(|t| (t, false)),
            Just((String::new(), true)),
        ], 0..30),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        drops in proptest::collection::vec(any::<bool>(), 9),
    ) {
        let mut stream = Vec::new();
        let mut sent = Vec::new();
        for (i, (text, is_report)) in pieces.iter().enumerate() {
            if *is_report {
                let body = format!("state=working:id=r{i}");
                stream.extend_from_slice(b"\x1b]7501;");
                stream.extend_from_slice(body.as_bytes());
                stream.push(0x07);
                sent.push(body.into_bytes());
            } else {
                stream.extend_from_slice(text.as_bytes());
            }
        }
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(stream.len() + 1)).collect();
        at.sort_unstable();
        at.push(stream.len());
        let mut salvage = Salvage::default();
        let mut kept_reader = Scanner::new();
        let mut through_output = Vec::new();
        let mut last = 0;
        for (n, end) in at.into_iter().enumerate() {
            let chunk = &stream[last..end];
            last = end;
            let dropped = drops[n % drops.len()];
            salvage.scan(chunk, dropped);
            if dropped {
                kept_reader.reset();
            } else {
                kept_reader.scan(chunk, |f| {
                    if let Found::Sequence(b) = f {
                        through_output.push(b.to_vec());
                    }
                });
            }
        }
        let saved = salvage.take();
        let mut all: Vec<Vec<u8>> = through_output.into_iter().chain(saved.bodies).collect();
        all.sort();
        let mut want = sent.clone();
        want.sort();
        prop_assert_eq!(all, want);
    }
}
