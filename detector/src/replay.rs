//! Replaying a recording through a [`PaneDetector`]: the same code path as
//! the live daemon, with the recording's clock as time.

use std::sync::Arc;
use std::time::Duration;

use crate::cast::{Cast, EventKind};
use crate::config::DetectorConfig;
use crate::engine::PaneDetector;
use crate::manifest::{Manifest, Registry};
use crate::psp::Reading;
use crate::state::Transition;

// The snapshot model and the process tracker live with identity resolution
// (the daemon uses them too); re-exported here where replay callers look.
pub use crate::identity::{ProcSample, ProcessTracker, TICKS_PER_SEC};

/// How long after the last event timers keep running.
const TAIL: Duration = Duration::from_secs(30);

/// Runs a recording through the detector for `manifest`'s agent and
/// returns every transition, in order.
pub fn replay(
    cast: &Cast,
    manifest: Arc<Manifest>,
    registry: &Registry,
    cfg: Arc<DetectorConfig>,
    procs: &[ProcSample],
) -> Vec<Transition> {
    replay_all(cast, manifest, registry, cfg, procs).transitions
}

/// What a replay found: the screen's transitions and the program's own
/// word (OSC 7501) as it changed.
#[derive(Debug, Clone, Default)]
pub struct Replayed {
    /// The screen detector's transitions, in order.
    pub transitions: Vec<Transition>,
    /// Each change of what the program's reports say (`None`: nothing any
    /// more, the screen decides), with its time, in order.
    pub words: Vec<(Duration, Option<Reading>)>,
    /// Each change of the words the screen says a usage limit resets at
    /// ([`PaneDetector::reset_words`]), with its time, in order.
    pub resets: Vec<(Duration, Option<String>)>,
}

/// [`replay`], with the program's own word beside the transitions.
pub fn replay_all(
    cast: &Cast,
    manifest: Arc<Manifest>,
    registry: &Registry,
    cfg: Arc<DetectorConfig>,
    procs: &[ProcSample],
) -> Replayed {
    let mut words: Vec<(Duration, Option<Reading>)> = Vec::new();
    let mut resets: Vec<(Duration, Option<String>)> = Vec::new();
    let mut note = |det: &PaneDetector, at: Duration| {
        let now = det.psp().reading();
        if words.last().map_or(now.is_some(), |(_, w)| *w != now) {
            words.push((at, now));
        }
        let reset = det.reset_words();
        if resets
            .last()
            .map_or(reset.is_some(), |(_, r)| r.as_deref() != reset)
        {
            resets.push((at, reset.map(str::to_owned)));
        }
    };
    let mut det = PaneDetector::new(cfg, cast.header.height, cast.header.width);
    let agent = manifest.id.clone();
    det.set_agent(Duration::ZERO, Some(manifest));
    let mut tracker = ProcessTracker::default();
    let mut out = Vec::new();
    // Seen as the daemon sees them: through a `tend run` relay holding the
    // pane's terminal, at the agent on the relay's own pty.
    let procs: Vec<ProcSample> = procs
        .iter()
        .map(|s| ProcSample {
            at: s.at,
            procs: crate::identity::look_through_relay(s.procs.clone(), crate::identity::is_relay)
                .0,
        })
        .collect();
    let mut procs = procs.iter().peekable();
    let drain = |det: &mut PaneDetector, out: &mut Vec<Transition>| {
        while let Some(t) = det.poll_transition() {
            out.push(t);
        }
    };
    // Runs timers strictly before `t`, and process samples taken before it.
    let advance = |det: &mut PaneDetector,
                   procs: &mut std::iter::Peekable<std::slice::Iter<'_, ProcSample>>,
                   tracker: &mut ProcessTracker,
                   out: &mut Vec<Transition>,
                   ended: &mut Vec<Duration>,
                   t: Duration| {
        loop {
            let timer = det.poll_timeout().filter(|d| *d < t);
            let sample = procs.peek().map(|s| s.at).filter(|d| *d < t);
            match (timer, sample) {
                (Some(d), s) if s.is_none_or(|s| d <= s) => {
                    det.tick(d);
                    if det.poll_timeout() == Some(d) {
                        // Defensive: a deadline that does not move would
                        // spin; the detector's own catch-up is bounded too.
                        debug_assert!(false, "deadline {d:?} not consumed");
                        break;
                    }
                }
                (_, Some(_)) => {
                    if let Some(s) = procs.next() {
                        if let Some(obs) = tracker.observe(registry, &agent, s) {
                            det.observe_process(s.at, obs);
                            // A run that ended takes its word with it.
                            if det.psp().reading().is_none() {
                                ended.push(s.at);
                            }
                        }
                    }
                }
                _ => break,
            }
            drain(det, out);
        }
    };
    let mut ended = Vec::new();
    for ev in &cast.events {
        advance(
            &mut det,
            &mut procs,
            &mut tracker,
            &mut out,
            &mut ended,
            ev.at,
        );
        for at in ended.drain(..) {
            note(&det, at);
        }
        match &ev.kind {
            EventKind::Output(b) => det.feed(ev.at, b),
            EventKind::Input(b) => det.input(ev.at, b),
            EventKind::Resize(c, r) => det.resize(ev.at, *r, *c),
            EventKind::Marker(_) => {}
        }
        note(&det, ev.at);
        drain(&mut det, &mut out);
    }
    let end = cast
        .duration()
        .max(procs.clone().last().map_or(Duration::ZERO, |s| s.at))
        + TAIL;
    advance(
        &mut det,
        &mut procs,
        &mut tracker,
        &mut out,
        &mut ended,
        end,
    );
    for at in ended.drain(..) {
        note(&det, at);
    }
    det.tick(end);
    note(&det, end);
    drain(&mut det, &mut out);
    Replayed {
        transitions: out,
        words,
        resets,
    }
}
