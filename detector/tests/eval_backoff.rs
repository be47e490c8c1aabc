//! The evaluation back-off (`eval_interval_max`) and a dialog drawn while a
//! spinner runs: the spinner's unchanging verdict is read less often, but
//! output that writes rows the spinner does not is read at the base
//! interval. (Real Claude Code, Codex and Gemini CLI dialogs waited up to
//! 200 ms for the grown interval before this; `tools/agentlab/latency.py`.)

use std::sync::Arc;
use std::time::Duration;

use tend_detector::engine::PaneDetector;
use tend_detector::{DetectorConfig, Registry, State};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Aider at 80×24, its "Waiting for" spinner redrawn every 25 ms for two
/// seconds, then one evaluation at the time the detector asked for.
/// Returns the detector and that evaluation's time.
fn spinning() -> (PaneDetector, Duration) {
    let reg = Registry::bundled();
    let m = Arc::new(reg.get("aider").expect("bundled manifest").clone());
    let cfg = DetectorConfig::default();
    assert_eq!(
        (cfg.eval_interval, cfg.eval_interval_max),
        (ms(50), ms(200))
    );
    let mut d = PaneDetector::new(Arc::new(cfg), 24, 80);
    d.set_agent(ms(0), Some(m));
    d.feed(ms(10), b"> Clean the build directory.\r\n\r\n");
    for i in 0..80u64 {
        let t = ms(100 + i * 25);
        if let Some(due) = d.poll_timeout().filter(|due| *due <= t) {
            d.tick(due);
        }
        let frame: &[u8] = if i % 2 == 0 {
            "\r\u{2591}\u{2588}\u{2588} Waiting for fake-model\x1b[K".as_bytes()
        } else {
            "\r\u{2588}\u{2591}\u{2588} Waiting for fake-model\x1b[K".as_bytes()
        };
        d.feed(t, frame);
    }
    let due = d.poll_timeout().expect("an evaluation is due");
    d.tick(due);
    assert_eq!(d.status().state, Some(State::Working));
    (d, due)
}

#[test]
fn a_spinner_keeps_the_grown_interval() {
    let (mut d, evaluated) = spinning();
    d.feed(
        evaluated + ms(5),
        "\r\u{2591}\u{2588}\u{2588} Waiting for fake-model\x1b[K".as_bytes(),
    );
    assert_eq!(d.poll_timeout(), Some(evaluated + ms(200)));
}

#[test]
fn a_dialog_under_the_spinner_is_read_at_the_base_interval() {
    let (mut d, evaluated) = spinning();
    d.feed(
        evaluated + ms(10),
        b"\r\x1b[K\r\nrm -rf build\r\n\r\nRun shell command? (Y)es/(N)o [Yes]: ",
    );
    assert_eq!(d.poll_timeout(), Some(evaluated + ms(50)));
    d.tick(evaluated + ms(50));
    let st = d.status();
    assert_eq!(st.state, Some(State::Waiting));
    assert_eq!(st.rule, "aider/approval");
}
