//! Which of the agent's own channels speaks for a pane, if any: the
//! trust decision that [`tend_attention::report`]'s policy then weighs
//! against the screen.

use std::time::Duration;

use tend_attention::report::{Authority, Reading, Word};
use tend_detector::engine::Status;
use tend_detector::{PaneDetector, State};

use crate::session::PaneSession;
use crate::watch::PaneWatch;

/// The agent's own word for a pane at `now`, if one is trusted, and the
/// channel it came by (`status` is what the screen reads):
///
/// * the program's OSC 7501 reports while a `tend run` relay answers for
///   the pane's terminal (the pane's samples say so): authority `relay`;
/// * else the session file its process keeps (`session.rs`): `file`;
/// * else the OSC 7501 reports an agent prints unasked (Codex, Mistral
///   Vibe), while the agent itself holds the terminal and the reports
///   name it as its manifest says (`unasked_reports_app`): `osc`.
pub(crate) fn word(
    watch: &PaneWatch,
    det: &PaneDetector,
    session: &PaneSession,
    now: Duration,
    status: &Status,
) -> Option<Word> {
    let reports = || det.psp().reading();
    if watch.relay() {
        if let Some(reading) = reports() {
            return Some(Word::new(reading, Authority::Relay));
        }
    }
    let completed = status.state == Some(State::Completed);
    if let Some(reading) = session.reading(now, completed) {
        return Some(Word::new(reading, Authority::File));
    }
    let app = unasked_app(watch, det)?;
    reports()
        .filter(|r| r.app.as_deref() == Some(app))
        .filter(|r| !settling(r, status, now, unasked_settle(det)))
        .map(|r| Word::new(r, Authority::Osc))
}

/// How long the pane's agent's unasked `working` waits before it counts
/// (its manifest's `unasked_working_settle_ms`).
fn unasked_settle(det: &PaneDetector) -> Duration {
    det.manifest()
        .map_or(Duration::ZERO, |m| m.unasked_working_settle)
}

/// An unasked report of `working` younger than `settle` that the screen
/// does not show yet.
fn settling(reading: &Reading, status: &Status, now: Duration, settle: Duration) -> bool {
    reading.state == State::Working
        && status.state != Some(State::Working)
        && now < reading.since + settle
}

/// When an unasked `working` now held back (its manifest's
/// `unasked_working_settle_ms`) counts: the pane is visited then.
pub(crate) fn held_until(
    watch: &PaneWatch,
    det: &PaneDetector,
    now: Duration,
    status: &Status,
) -> Option<Duration> {
    let app = unasked_app(watch, det)?;
    let settle = unasked_settle(det);
    det.psp()
        .reading()
        .filter(|r| r.app.as_deref() == Some(app) && settling(r, status, now, settle))
        .map(|r| r.since + settle)
}

/// The `app` the pane's agent names in the OSC 7501 reports it prints
/// unasked, while it holds the pane's terminal itself (the last sample
/// found its process group in the foreground); `None` for any other
/// program in the foreground, or an agent that never reports unasked.
pub(crate) fn unasked_app<'a>(watch: &PaneWatch, det: &'a PaneDetector) -> Option<&'a str> {
    watch.agent_process().filter(|a| a.foreground)?;
    det.manifest()
        .filter(|m| Some(m.id.as_str()) == watch.agent())?
        .unasked_reports_app
        .as_deref()
}
