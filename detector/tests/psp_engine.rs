//! The pane's own word (OSC 7501) as the detector reads it from the bytes
//! every tap delivers: found however the output is split, kept beside the
//! screen (never changing what the screen rules read), asked for at once
//! (`poll_timeout`), and forgotten when the run ends or the shell is back.

use std::sync::Arc;
use std::time::Duration;

use tend_detector::engine::{PaneDetector, ProcessObservation};
use tend_detector::psp::base64_encode;
use tend_detector::{DetectorConfig, Reason, Registry, State};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn detector() -> PaneDetector {
    PaneDetector::new(Arc::new(DetectorConfig::default()), 24, 80)
}

fn with_agent(agent: &str) -> PaneDetector {
    let reg = Registry::bundled();
    let m = Arc::new(reg.get(agent).expect("bundled manifest").clone());
    let mut d = detector();
    d.set_agent(ms(0), Some(m));
    d
}

fn osc(body: &str) -> Vec<u8> {
    format!("\x1b]7501;{body}\x1b\\").into_bytes()
}

fn reading(d: &PaneDetector) -> Option<(State, Option<Reason>, Option<String>)> {
    d.psp().reading().map(|r| (r.state, r.reason, r.message))
}

#[test]
fn reports_are_read_from_the_output_split_anywhere() {
    let msg = base64_encode(b"approve Bash: rm -rf ./build");
    let mut stream = b"\x1b]7501;?\x07\x1b[c".to_vec();
    stream.extend(osc("state=idle:app=claude-code"));
    stream.extend(b"\x1b[2J\x1b[Hhello");
    stream.extend(osc(&format!("state=blocked:kind=permission:msg={msg}")));
    for cut in [1, 3, 7, 11, 64] {
        let mut d = detector();
        for (i, chunk) in stream.chunks(cut).enumerate() {
            d.feed(ms(i as u64), chunk);
        }
        assert_eq!(
            reading(&d),
            Some((
                State::Waiting,
                Some(Reason::Approval),
                Some("approve Bash: rm -rf ./build".into())
            )),
            "chunks of {cut}"
        );
        assert_eq!(d.psp().counters().queries, 1);
        assert_eq!(d.psp().counters().reports, 2);
        // The screen shows the text and nothing of the sequences.
        assert!(d.screen().rows().join("\n").contains("hello"));
        assert!(!d.screen().rows().join("\n").contains("7501"));
    }
}

#[test]
fn a_report_asks_for_a_tick_at_once() {
    let mut d = detector();
    d.tick(ms(1000));
    assert_eq!(d.poll_timeout(), None);
    d.feed(ms(1000), &osc("state=working"));
    assert_eq!(d.poll_timeout(), Some(ms(1000)));
    d.tick(ms(1000));
    assert_eq!(d.poll_timeout().filter(|t| *t <= ms(1000)), None);
    // A query or a dropped report changes nothing to read.
    d.feed(ms(1100), b"\x1b]7501;?\x07\x1b]7501;state=bogus\x07");
    d.tick(ms(1100));
    assert_eq!(d.poll_timeout(), None);
    assert_eq!(d.psp().counters().dropped_total(), 1);
}

#[test]
fn the_screen_machine_is_not_moved_by_reports() {
    let mut a = with_agent("claude");
    let mut b = with_agent("claude");
    let screen = b"\x1b[2J\x1b[H> \r\n";
    a.feed(ms(100), screen);
    b.feed(ms(100), screen);
    b.feed(ms(100), &osc("state=blocked:kind=permission"));
    a.tick(ms(5000));
    b.tick(ms(5000));
    assert_eq!(a.status(), b.status());
}

#[test]
fn the_word_ends_with_the_run_or_the_shell_prompt() {
    // The process ends.
    let mut d = with_agent("claude");
    d.feed(ms(100), &osc("state=working"));
    assert!(d.psp().reading().is_some());
    d.observe_process(
        ms(200),
        ProcessObservation {
            agent_alive: false,
            exit_code: Some(0),
            cpu_percent: None,
            live_child: None,
        },
    );
    assert_eq!(d.psp().reading(), None);

    // The identity is dropped.
    let mut d = with_agent("claude");
    d.feed(ms(100), &osc("state=working"));
    d.set_agent(ms(200), None);
    assert_eq!(d.psp().reading(), None);

    // The shell draws its prompt (OSC 133;A).
    let mut d = detector();
    d.feed(ms(100), &osc("state=done"));
    d.feed(ms(200), b"\x1b]133;D;0\x07\x1b]133;A\x07$ ");
    assert_eq!(d.psp().reading(), None);

    // An agent named after it reported keeps what it said.
    let mut d = detector();
    d.feed(ms(100), &osc("state=idle:app=claude-code"));
    let reg = Registry::bundled();
    let m = Arc::new(reg.get("claude").expect("bundled").clone());
    d.set_agent(ms(900), Some(m));
    assert_eq!(reading(&d).map(|r| r.0), Some(State::Idle));

    // The caller may end it (no `tend run` answered the program).
    d.forget_reports();
    assert_eq!(d.psp().reading(), None);
}

#[test]
fn explain_shows_the_records_and_the_counters() {
    let mut d = detector();
    assert!(d.explain().psp.is_none());
    let title = base64_encode(b"Run the long command");
    d.feed(
        ms(10),
        &osc(&format!("state=working:id=bash-1:title={title}")),
    );
    d.feed(ms(20), b"\x1b]7501;state=idle:msg=***\x07");
    let ex = d.explain();
    let psp = ex.psp.expect("summary");
    assert_eq!(psp.counters.reports, 1);
    assert_eq!(psp.counters.dropped_total(), 1);
    let r = psp.reading.expect("reading");
    assert_eq!((r.state, r.live_tasks), (State::Working, 1));
    let json = serde_json::to_value(d.explain()).unwrap();
    assert_eq!(
        json["psp"]["reading"]["tasks"][0]["title"],
        "Run the long command"
    );
    assert_eq!(json["psp"]["counters"]["dropped"]["bad_value"], 1);
}
