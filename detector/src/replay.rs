//! Replaying a recording through a [`PaneDetector`]: the same code path as
//! the live daemon, with the recording's clock as time.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use crate::cast::{Cast, EventKind};
use crate::config::DetectorConfig;
use crate::engine::{PaneDetector, ProcessObservation};
use crate::identity::{self, ProcessInfo};
use crate::manifest::{Manifest, Registry};
use crate::state::Transition;

/// Clock ticks per second of `/proc/<pid>/stat` CPU times (USER_HZ).
pub const TICKS_PER_SEC: f64 = 100.0;

/// How long after the last event timers keep running.
const TAIL: Duration = Duration::from_secs(30);

/// A process snapshot of a pane at one time (as in `procs.jsonl`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcSample {
    /// When it was taken.
    pub at: Duration,
    /// Every process under the pane's shell, the shell at depth 0.
    pub procs: Vec<ProcessInfo>,
}

/// Turns successive snapshots into what the detector needs about one
/// agent: alive, CPU, live children. Pure; used by replay and the daemon.
#[derive(Debug, Default)]
pub struct ProcessTracker {
    seen_alive: bool,
    last: Option<(Duration, u64)>,
}

impl ProcessTracker {
    /// Observes a snapshot for the agent `agent`; `None` until the agent
    /// has been seen alive once (so a pane still starting is not "exited").
    pub fn observe(
        &mut self,
        registry: &Registry,
        agent: &str,
        sample: &ProcSample,
    ) -> Option<ProcessObservation> {
        let found = sample
            .procs
            .iter()
            .filter(|p| p.depth > 0)
            .filter(|p| identity::match_process(registry, p).is_some_and(|m| m.agent == agent))
            .min_by_key(|p| p.depth);
        let Some(root) = found else {
            return if self.seen_alive {
                self.seen_alive = false;
                Some(ProcessObservation {
                    agent_alive: false,
                    exit_code: None,
                    cpu_percent: None,
                    live_child: None,
                })
            } else {
                None
            };
        };
        self.seen_alive = true;
        // The agent's subtree.
        let mut children: HashMap<u32, Vec<&ProcessInfo>> = HashMap::new();
        for p in &sample.procs {
            children.entry(p.ppid).or_default().push(p);
        }
        let mut ticks = 0u64;
        let mut stack = vec![root];
        let mut seen = HashSet::new();
        let mut tools = 0usize;
        while let Some(p) = stack.pop() {
            if !seen.insert(p.pid) {
                continue;
            }
            ticks += p.cpu_ticks;
            for c in children.get(&p.pid).into_iter().flatten() {
                // A child that is the agent itself re-executed (gemini
                // relaunches under node) is not a tool.
                if identity::match_process(registry, c).is_none_or(|m| m.agent != agent) {
                    tools += 1;
                }
                stack.push(c);
            }
        }
        let cpu = match self.last {
            Some((t0, k0)) if sample.at > t0 && ticks >= k0 => {
                let secs = (sample.at - t0).as_secs_f64();
                Some(((ticks - k0) as f64 / TICKS_PER_SEC / secs * 100.0) as f32)
            }
            _ => None,
        };
        self.last = Some((sample.at, ticks));
        Some(ProcessObservation {
            agent_alive: true,
            exit_code: None,
            cpu_percent: cpu,
            live_child: Some(tools > 0),
        })
    }
}

/// Runs a recording through the detector for `manifest`'s agent and
/// returns every transition, in order.
pub fn replay(
    cast: &Cast,
    manifest: Arc<Manifest>,
    registry: &Registry,
    cfg: Arc<DetectorConfig>,
    procs: &[ProcSample],
) -> Vec<Transition> {
    let mut det = PaneDetector::new(cfg, cast.header.height, cast.header.width);
    let agent = manifest.id.clone();
    det.set_agent(Duration::ZERO, Some(manifest));
    let mut tracker = ProcessTracker::default();
    let mut out = Vec::new();
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
                   t: Duration| {
        loop {
            let timer = det.poll_timeout().filter(|d| *d < t);
            let sample = procs.peek().map(|s| s.at).filter(|d| *d < t);
            match (timer, sample) {
                (Some(d), s) if s.is_none_or(|s| d <= s) => det.tick(d),
                (_, Some(_)) => {
                    if let Some(s) = procs.next() {
                        if let Some(obs) = tracker.observe(registry, &agent, s) {
                            det.observe_process(s.at, obs);
                        }
                    }
                }
                _ => break,
            }
            drain(det, out);
        }
    };
    for ev in &cast.events {
        advance(&mut det, &mut procs, &mut tracker, &mut out, ev.at);
        match &ev.kind {
            EventKind::Output(b) => det.feed(ev.at, b),
            EventKind::Input(b) => det.input(ev.at, b),
            EventKind::Resize(c, r) => det.resize(ev.at, *r, *c),
            EventKind::Marker(_) => {}
        }
        drain(&mut det, &mut out);
    }
    let end = cast
        .duration()
        .max(procs.clone().last().map_or(Duration::ZERO, |s| s.at))
        + TAIL;
    advance(&mut det, &mut procs, &mut tracker, &mut out, end);
    det.tick(end);
    drain(&mut det, &mut out);
    out
}
