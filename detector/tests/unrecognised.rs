//! A screen no rule of the agent's manifest matches: since when, and when
//! it counts as unrecognised (`unrecognised_after`, 30 s by default).

use std::sync::Arc;
use std::time::Duration;

use tend_detector::engine::{PaneDetector, ProcessObservation};
use tend_detector::{DetectorConfig, Registry, State};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn detector_with(agent: &str) -> PaneDetector {
    let reg = Registry::bundled();
    let m = Arc::new(reg.get(agent).expect("bundled manifest").clone());
    let mut d = PaneDetector::new(Arc::new(DetectorConfig::default()), 24, 80);
    d.set_agent(ms(0), Some(m));
    d
}

#[test]
fn a_screen_no_rule_matches_is_unrecognised_after_the_threshold() {
    let mut d = detector_with("aider");
    // The blank screen the run starts on is evaluated first: no rule
    // matches it either.
    d.feed(ms(100), b"something aider never prints");
    d.tick(ms(200));
    assert_eq!(d.unmatched_since(), Some(ms(0)));
    assert_eq!(d.unrecognised_since(), None);
    // More unknown output keeps the spell going from its start.
    d.feed(ms(10_000), b"\r\nand more of it");
    d.tick(ms(29_999));
    assert_eq!(d.unmatched_since(), Some(ms(0)));
    assert_eq!(d.unrecognised_since(), None);
    d.tick(ms(30_000));
    assert_eq!(d.unrecognised_since(), Some(ms(0)));
    // The state meanwhile came from fallback evidence, never a rule.
    assert!(
        d.status().rule.starts_with("builtin/"),
        "{}",
        d.status().rule
    );
    // Its prompt: a rule matches, the spell ends.
    d.feed(ms(31_000), b"\r\n> ");
    d.tick(ms(31_100));
    assert_eq!(d.status().trigger, Some(tend_detector::Trigger::Screen));
    assert_eq!(d.unmatched_since(), None);
    assert_eq!(d.unrecognised_since(), None);
    // Unknown again: a new spell, from its own start.
    d.feed(ms(40_000), b"\x1b[2J\x1b[Hgarbled");
    d.tick(ms(40_100));
    assert_eq!(d.unmatched_since(), Some(ms(40_000)));
}

#[test]
fn no_agent_or_an_ended_run_is_never_unrecognised() {
    let mut d = PaneDetector::new(Arc::new(DetectorConfig::default()), 24, 80);
    d.feed(ms(100), b"$ make\r\nbuilding");
    d.tick(ms(60_000));
    assert_eq!(d.unmatched_since(), None);

    let mut d = detector_with("aider");
    d.feed(ms(100), b"aider v0.86.2\r\n> ");
    d.tick(ms(500));
    d.feed(ms(900), b"\r\n$ odd shell text");
    d.observe_process(
        ms(1000),
        ProcessObservation {
            agent_alive: false,
            exit_code: Some(0),
            cpu_percent: None,
            live_child: None,
        },
    );
    d.tick(ms(60_000));
    assert_eq!(d.status().state, Some(State::Exited));
    assert_eq!(d.unmatched_since(), None);
    assert_eq!(d.unrecognised_since(), None);
}

#[test]
fn a_new_run_starts_counting_afresh() {
    let mut d = detector_with("aider");
    d.feed(ms(100), b"unknown");
    d.tick(ms(200));
    assert_eq!(d.unmatched_since(), Some(ms(0)));
    // The agent ends and is started again: a new run, a new count.
    d.set_agent(ms(4_000), None);
    assert_eq!(d.unmatched_since(), None);
    let reg = Registry::bundled();
    let aider = Arc::new(reg.get("aider").expect("bundled manifest").clone());
    d.set_agent(ms(5_000), Some(aider));
    assert_eq!(d.unmatched_since(), None);
    d.feed(ms(5_050), b"\r\nstill unknown");
    d.tick(ms(5_100));
    assert_eq!(d.status().run, 2);
    assert_eq!(d.unmatched_since(), Some(ms(5_000)));
}

#[test]
fn the_threshold_is_configurable() {
    let cfg = DetectorConfig {
        unrecognised_after: Duration::from_secs(2),
        ..DetectorConfig::default()
    };
    let reg = Registry::bundled();
    let m = Arc::new(reg.get("aider").expect("bundled manifest").clone());
    let mut d = PaneDetector::new(Arc::new(cfg), 24, 80);
    d.set_agent(ms(0), Some(m));
    d.feed(ms(100), b"unknown");
    d.tick(ms(1_999));
    assert_eq!(d.unrecognised_since(), None);
    d.tick(ms(2_000));
    assert_eq!(d.unrecognised_since(), Some(ms(0)));
}
