//! An agent run's end, as the pane shows it afterwards: `exited` stays on
//! the pane (naming the agent, with its exit code where known) until a new
//! agent run starts there.

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

fn gone(code: Option<i32>) -> ProcessObservation {
    ProcessObservation {
        agent_alive: false,
        exit_code: code,
        cpu_percent: None,
        live_child: None,
    }
}

#[test]
fn exited_stays_after_the_identity_is_dropped() {
    let mut d = detector_with("aider");
    d.feed(ms(100), b"aider v0.86.2\r\n> ");
    d.tick(ms(500));
    d.feed(ms(900), b"\r\n$ ");
    d.observe_process(ms(1000), gone(Some(3)));
    let st = d.status();
    assert_eq!(st.state, Some(State::Exited));
    assert_eq!(st.exit_code, Some(3));
    assert!(!st.live);
    // The sampler drops the identity once the shell is back.
    d.set_agent(ms(1500), None);
    d.feed(ms(1600), b"\r\n$ ls\r\nREADME.md\r\n$ ");
    d.tick(ms(5000));
    let st = d.status();
    assert_eq!(st.agent.as_deref(), Some("aider"));
    assert_eq!(st.state, Some(State::Exited));
    assert_eq!(st.exit_code, Some(3));
    assert!(!st.live);
    assert_eq!(st.rule, "builtin/process-exit:3");
}

#[test]
fn a_run_that_never_showed_its_ui_leaves_no_trace() {
    // `aider --version`: named for a moment, prints, exits.
    let mut d = detector_with("aider");
    d.feed(ms(100), b"aider 0.86.2\r\n$ ");
    d.tick(ms(300));
    d.observe_process(ms(400), gone(Some(0)));
    d.set_agent(ms(500), None);
    let st = d.status();
    assert_eq!((st.agent, st.state), (None, None));
}

#[test]
fn a_dropped_identity_without_an_exit_sample_is_still_exited() {
    let mut d = detector_with("aider");
    d.feed(ms(100), b"> ");
    d.tick(ms(500));
    d.set_agent(ms(1000), None);
    let st = d.status();
    assert_eq!(st.agent.as_deref(), Some("aider"));
    assert_eq!(st.state, Some(State::Exited));
    assert_eq!(st.rule, "builtin/agent-gone");
    assert_eq!(st.exit_code, None);
}

#[test]
fn the_shells_command_finished_mark_gives_the_exit_code() {
    let mut d = detector_with("aider");
    d.feed(ms(100), b"> ");
    d.tick(ms(500));
    // The shell prints OSC 133;D;130 when the agent's command ends,
    // before the sampler has noticed.
    d.feed(ms(900), b"\x1b]133;D;130\x07\r\n$ ");
    d.observe_process(ms(1000), gone(None));
    assert_eq!(d.status().exit_code, Some(130));
    d.set_agent(ms(1500), None);
    assert_eq!(d.status().exit_code, Some(130));
}

#[test]
fn the_prompts_mark_from_before_the_agent_started_is_not_its_exit_code() {
    // The agent was named before its pane's earlier output reached tend
    // (a loaded machine delays the tap): the prompt's own mark, 0, arrives
    // first, then the typed command and the agent's UI, then its real end.
    let mut d = detector_with("aider");
    d.feed(ms(100), b"\x1b]133;D;0\x07$ aider\r\n");
    d.feed(ms(200), b"> ");
    d.tick(ms(500));
    d.feed(ms(900), b"\x1b]133;D;3\x07\r\n$ ");
    d.observe_process(ms(1000), gone(None));
    assert_eq!(d.status().exit_code, Some(3));
}

#[test]
fn commands_after_the_exit_do_not_change_its_code() {
    let mut d = detector_with("aider");
    d.feed(ms(100), b"> ");
    d.tick(ms(500));
    d.feed(ms(900), b"\x1b]133;D;0\x07\r\n$ ");
    d.observe_process(ms(1000), gone(None));
    d.set_agent(ms(1500), None);
    assert_eq!(d.status().exit_code, Some(0));
    // `ls /missing` at the prompt: the shell reports 2 for it.
    d.feed(
        ms(3000),
        b"ls /missing\r\nls: cannot access\r\n\x1b]133;D;2\x07$ ",
    );
    d.tick(ms(4000));
    let st = d.status();
    assert_eq!(st.state, Some(State::Exited));
    assert_eq!(st.agent.as_deref(), Some("aider"));
    assert_eq!(st.exit_code, Some(0));
}

#[test]
fn a_new_agent_run_replaces_the_ended_one() {
    let mut d = detector_with("aider");
    d.feed(ms(100), b"> ");
    d.tick(ms(500));
    d.feed(ms(900), b"\r\n$ ");
    d.observe_process(ms(1000), gone(Some(0)));
    d.set_agent(ms(1500), None);
    let reg = Registry::bundled();
    let codex = Arc::new(reg.get("codex").expect("codex").clone());
    d.set_agent(ms(3000), Some(codex));
    let st = d.status();
    assert_eq!(st.agent.as_deref(), Some("codex"));
    assert_ne!(st.state, Some(State::Exited));
    assert_eq!(st.exit_code, None);
    assert_eq!(st.run, 2);
}

#[test]
fn a_pane_that_never_had_an_agent_has_no_state() {
    let mut d = PaneDetector::new(Arc::new(DetectorConfig::default()), 24, 80);
    d.feed(
        ms(100),
        b"Do you want to proceed?\r\n> 1. Yes\r\n  2. No\r\n",
    );
    d.tick(ms(3000));
    d.set_agent(ms(3500), None);
    let st = d.status();
    assert_eq!(st.agent, None);
    assert_eq!(st.state, None);
}

#[test]
fn a_slow_start_is_neither_a_turn_nor_a_wait() {
    // aider printing its banner for seconds before its prompt is up: the
    // output is not a turn and the silence after it asks nothing.
    let mut d = detector_with("aider");
    d.feed(ms(500), b"Aider v0.86.2\r\n");
    d.feed(ms(700), b"Main model: openai/gpt-4o\r\n");
    d.feed(ms(900), b"Weak model: gpt-4o-mini\r\n");
    d.tick(ms(12_000));
    assert_ne!(d.status().state, Some(State::Waiting));
    d.feed(ms(20_000), b"> ");
    d.tick(ms(21_000));
    assert_eq!(d.status().state, Some(State::Idle));
}

/// The kernel reports an agent's end at once, before the shell draws its
/// prompt: the screen the agent left (its prompt, even with output not yet
/// read into a state, and with the shell's prompt drawn below it) is not
/// the agent starting again, and the exit code the shell reports next is
/// the run's. Its process coming back is.
#[test]
fn the_screen_an_agent_leaves_is_not_a_restart() {
    let mut d = detector_with("aider");
    d.feed(ms(100), b"aider v0.86.2\r\n> ");
    d.tick(ms(500));
    assert_eq!(d.status().state, Some(State::Idle));
    // Its last output, not evaluated yet when its end is reported (an
    // evaluation just before it: the next one is not due yet).
    d.feed(ms(950), b"\r\n> ");
    d.tick(ms(960));
    d.feed(ms(990), b"\r\n> ");
    d.observe_process(ms(1000), gone(None));
    d.tick(ms(1200));
    let st = d.status();
    assert_eq!(st.state, Some(State::Exited));
    assert_eq!(st.run, 1, "still the first run");
    // The shell's prompt, with how the command ended (OSC 133;D).
    d.feed(ms(1300), b"\x1b]133;D;3\x07\r\n$ ");
    d.tick(ms(2000));
    let st = d.status();
    assert_eq!(
        (st.state, st.run, st.exit_code),
        (Some(State::Exited), 1, Some(3))
    );
    // Drawn again: the screen alone does not say whether that is a
    // restart or the old screen; the process coming back does.
    d.feed(ms(3000), b"\x1b[2J\x1b[Haider v0.86.2\r\n> ");
    d.tick(ms(3500));
    assert_eq!(d.status().run, 1);
    d.observe_process(
        ms(3600),
        ProcessObservation {
            agent_alive: true,
            exit_code: None,
            cpu_percent: None,
            live_child: Some(false),
        },
    );
    d.tick(ms(4000));
    let st = d.status();
    assert_eq!(
        (st.state, st.run, st.exit_code),
        (Some(State::Idle), 2, None)
    );
}
