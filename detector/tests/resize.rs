//! A resize seen late: the program in the pane redraws for its new size
//! (it hears SIGWINCH first) before tend hears of the resize from the
//! multiplexer. That redraw, drawn into the old size, is not work: the
//! state it made is taken back once the resize is heard of.

use std::sync::Arc;
use std::time::Duration;

use tend_detector::engine::PaneDetector;
use tend_detector::{DetectorConfig, Registry, State};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// aider at its prompt on an 80x24 pane.
fn aider_at_its_prompt() -> PaneDetector {
    let reg = Registry::bundled();
    let m = Arc::new(reg.get("aider").expect("bundled manifest").clone());
    let mut d = PaneDetector::new(Arc::new(DetectorConfig::default()), 24, 80);
    d.set_agent(ms(0), Some(m));
    d.feed(ms(100), b"Aider v0.86.2\r\nMain model: gpt-4o\r\n> ");
    d.tick(ms(800));
    assert_eq!(d.status().state, Some(State::Idle), "{:?}", d.status());
    d
}

/// Its redraw for a 200-column pane, in two writes 10 ms apart, as an
/// 80-column emulator gets it: the rule lines wrap and the cursor ends on
/// a line that is not the prompt.
fn redraw(d: &mut PaneDetector, at: u64) {
    let rule = "─".repeat(200);
    d.feed(ms(at), format!("\r\x1b[K{rule}\r\n").as_bytes());
    d.feed(
        ms(at + 10),
        format!("{rule}\r\nRepo-map: disabled ").as_bytes(),
    );
}

/// Runs the detector's own timers up to `until`, checking the state at
/// each.
fn run_until(d: &mut PaneDetector, until: u64, want: State) {
    while let Some(due) = d.poll_timeout() {
        if due > ms(until) {
            break;
        }
        d.tick(due);
        let st = d.status();
        assert_eq!(st.state, Some(want), "at {due:?}: {st:?}");
    }
    d.tick(ms(until));
}

#[test]
fn a_redraw_before_the_resize_is_heard_of_is_not_work() {
    let mut d = aider_at_its_prompt();
    run_until(&mut d, 1000, State::Idle);
    redraw(&mut d, 1000);
    // Until the resize is heard of, the redraw's changes look like work.
    let idle_since = d.status().since;
    d.tick(ms(1050));
    assert_eq!(d.status().state, Some(State::Working));
    // The multiplexer's word of the resize comes 60 ms after the redraw
    // began (the daemon's hook on the window's layout): the redraw was no
    // work, and the agent is idle as before, on the same clock — not
    // "completed", as a turn ending would make it.
    d.resize(ms(1060), 50, 200);
    let st = d.status();
    assert_eq!(
        (st.state, st.since, st.rule.as_str()),
        (Some(State::Idle), idle_since, "aider/ready"),
        "{st:?}"
    );
    let back = std::iter::from_fn(|| d.poll_transition()).last();
    let back = back.expect("a transition");
    assert_eq!(
        (back.from, back.to, back.rule.as_str()),
        (Some(State::Working), State::Idle, "builtin/resize-redraw")
    );
    // The screen is then rebuilt from the multiplexer's, the prompt at the
    // bottom.
    d.seed(
        ms(1070),
        b"\x1b[H\x1b[2JAider v0.86.2\r\nMain model: gpt-4o\r\n> ",
    );
    run_until(&mut d, 6000, State::Idle);
    assert_eq!(d.status().state, Some(State::Idle));
}

#[test]
fn the_same_redraw_without_a_resize_reads_as_work() {
    // What the test above guards against: the redraw's changes, which no
    // rule explains, are activity when no resize accounts for them.
    let mut d = aider_at_its_prompt();
    run_until(&mut d, 1000, State::Idle);
    redraw(&mut d, 1000);
    d.feed(ms(1200), b"\r\nmore text no rule explains ");
    d.tick(ms(1400));
    let st = d.status();
    assert_eq!(st.state, Some(State::Working), "{st:?}");
    assert_eq!(st.rule, "builtin/activity");
    // And the prompt back after it reads as a finished turn.
    d.feed(
        ms(1500),
        b"\x1b[H\x1b[2JAider v0.86.2\r\nMain model: gpt-4o\r\n> ",
    );
    d.tick(ms(3000));
    assert_eq!(d.status().state, Some(State::Completed), "{:?}", d.status());
}
