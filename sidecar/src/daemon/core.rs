//! The pane table: the one place that owns every pane's detector, identity
//! watch and tap state. Everything reaches it as an [`Event`]; every effect
//! on tmux leaves it as a [`Job`] for the tmux worker.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tend_detector::attention::Band;
use tend_detector::engine::PaneDetector;
use tend_detector::park::ParkStore;
use tend_detector::report::{Alive, PaneLife, ReportBook, ReportConfig};
use tend_detector::stopflag::StopFlags;
use tend_detector::{DetectorConfig, Registry, State};
use tend_tmux::{Capture, Client, Pane, PaneId, Scope};

use crate::daemon::publish::{self, PaneRow};
use crate::daemon::status::{self, EffView};
use crate::daemon::tape::Tape;
pub use crate::daemon::worker::Job;
use crate::protocol::{Request, Response};
use crate::sampler::{PaneWatch, Sampler};
use tend_detector::identity::ProcessInfo;
use tend_detector::identity::SamplePolicy;

/// Something that happened.
#[derive(Debug)]
pub enum Event {
    /// What the pipe reader took at one tick (the events below, in order).
    Taps(Vec<Event>),
    /// A tap handed over its pane's pipe.
    TapHello { conn: u64, pane: PaneId },
    /// Pane output read from a pipe.
    TapData {
        conn: u64,
        bytes: Vec<u8>,
        at: Instant,
        /// Counts the bytes against the pane's bound until consumed.
        held: crate::daemon::pipes::Held,
    },
    /// Output was dropped: re-seed the pane.
    TapGap { conn: u64 },
    /// A pipe closed (tmux closed it: the pane or its pipe ended).
    TapClosed { conn: u64 },
    /// The tmux worker listed panes and clients.
    Listed {
        panes: Vec<Pane>,
        clients: Vec<Client>,
    },
    /// The tmux server is gone.
    ServerGone,
    /// Saving the state failed: save again (at most once a second).
    PersistFailed,
    /// A pane was captured (seed, resync or polling).
    Captured {
        pane: PaneId,
        capture: Capture,
        purpose: CapturePurpose,
    },
    /// A tap install finished.
    TapInstalled {
        pane: PaneId,
        outcome: Result<tend_tmux::TapOutcome, String>,
    },
    /// A control request, with where to send the answer.
    Control {
        req: Request,
        reply: tokio::sync::oneshot::Sender<Response>,
    },
    /// Someone asked for an immediate reconcile (a tmux hook fired).
    Poke,
    /// A `tend guard` connected (see [`crate::daemon::guard`]).
    GuardHello { token: String },
    /// A guard's connection closed while the daemon runs: the guard was
    /// killed, and tmux has cleaned up (or is about to).
    GuardClosed { token: String },
    /// A remote's link reported (see [`crate::daemon::remote`]).
    Remote {
        name: String,
        generation: u64,
        ev: crate::daemon::remote::LinkEvent,
    },
}

/// Why a capture was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapturePurpose {
    /// First sight of the pane, before its tap.
    Seed,
    /// After a gap in the tap's stream.
    Resync,
    /// Periodic, for a pane whose pipe belongs to someone else.
    Poll,
}

/// How a pane's output reaches the daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TapState {
    /// Nothing yet (seeding or installing).
    None,
    /// A tend tap is installed; waiting for it to hand its pipe over.
    Installed,
    /// The daemon holds the pane's pipe.
    Connected,
    /// Someone else's pipe: capture-pane polling.
    Polling,
}

impl TapState {
    pub(crate) fn word(self) -> &'static str {
        match self {
            // A tap is running but its pipe is not in hand yet: not tapped.
            TapState::None | TapState::Installed => "none",
            TapState::Connected => "pipe",
            TapState::Polling => "polling",
        }
    }
}

pub(crate) struct PaneEntry {
    pub(crate) info: Pane,
    pub(crate) det: PaneDetector,
    pub(crate) watch: PaneWatch,
    pub(crate) tap: TapState,
    conn: Option<u64>,
    /// When the tap was installed or found (to notice a tap that never
    /// connects).
    tap_since: Instant,
    seeded: bool,
    /// The current completion has been looked at.
    pub(crate) seen: bool,
    last_poll: Option<Instant>,
    /// Last polled screen text (polling mode only feeds changes).
    last_polled: Option<String>,
    /// A client shows this pane right now.
    pub(crate) focused: bool,
    /// The effective status last computed.
    pub(crate) eff: Option<EffView>,
    /// Unix time the effective state was entered.
    pub(crate) eff_since: f64,
    /// Counts effective state changes (`state_change_seq`).
    pub(crate) eff_seq: u64,
    /// The agent last announced (for detected/released events).
    pub(crate) announced: Option<String>,
    /// What the pane showed lately, for `tend capture`.
    pub(crate) tape: Tape,
    /// The last few process samples (daemon clock), for `tend capture`.
    pub(crate) procs: VecDeque<(Duration, Vec<ProcessInfo>)>,
}

/// Process samples a pane keeps for `tend capture`: enough for a replay to
/// see the agent alive and its CPU, a few KiB.
pub(crate) const PROCS_KEPT: usize = 4;

/// The daemon's state.
pub struct Core {
    start: Instant,
    start_wall: f64,
    cfg: Arc<DetectorConfig>,
    pub(crate) registry: Registry,
    /// The manifests in use, shared by every pane running that agent.
    manifests: HashMap<String, Arc<tend_detector::Manifest>>,
    sampler: Sampler,
    pub(crate) panes: BTreeMap<PaneId, PaneEntry>,
    conns: HashMap<u64, PaneId>,
    clients: Vec<Client>,
    /// Last `client_activity` per client, to notice keys typed into a pane.
    client_activity: HashMap<String, u64>,
    published: BTreeMap<(Scope, String), String>,
    pub(crate) jobs: std::sync::mpsc::Sender<Job>,
    /// Self-reports (authority), on the Unix clock.
    pub(crate) book: ReportBook,
    /// Stop flags.
    pub(crate) flags: StopFlags,
    /// Parks and snoozes.
    pub(crate) parks: ParkStore,
    /// Events for `tend events`, `wait` and `prompt --wait`.
    pub(crate) bus: tokio::sync::broadcast::Sender<Value>,
    /// Persistent state changed and should be written.
    pub(crate) persist: bool,
    listed_once: bool,
    /// A listing was asked for: it goes out at the end of this tick, in
    /// the same tmux process as the tick's publish if there is one.
    list_due: bool,
    /// Changes held back to go out with the next listing (see
    /// [`publish::can_wait`]).
    held: bool,
    /// Panes that received something since the last tick.
    touched: HashSet<PaneId>,
    /// When every pane must next be visited.
    next_sweep: Duration,
    /// Something published may have changed.
    pub(crate) changed: bool,
    /// Links to remotes, by name.
    pub(crate) links: BTreeMap<String, crate::daemon::remote::Link>,
    /// Where link tasks send their events (none: remotes are off, as in
    /// unit tests).
    pub(crate) link_tx: Option<tokio::sync::mpsc::Sender<Event>>,
    /// Counts link starts.
    pub(crate) link_gen: u64,
    /// `[remote_link]` in use.
    pub(crate) link_cfg: crate::remote::LinkConfig,
    /// Set when the daemon should exit.
    pub stopping: bool,
    /// The guard that makes tmux clean up if this daemon dies.
    guard: GuardWatch,
}

/// The current guard: its token (also in `@tend_daemon`), when it was
/// installed, whether it connected, and how many in a row did not.
#[derive(Debug)]
struct GuardWatch {
    token: Option<String>,
    generation: u64,
    since: Instant,
    connected: bool,
    failures: u32,
}

/// How long a guard may take to connect before it is installed again.
const GUARD_CONNECT_GRACE: Duration = Duration::from_secs(5);
/// Guards in a row that never connect before the daemon stops trying.
const GUARD_MAX_FAILURES: u32 = 3;

const TAP_CONNECT_GRACE: Duration = Duration::from_secs(3);
const POLL_EVERY: Duration = Duration::from_millis(500);

impl Core {
    /// A new, empty table.
    pub fn new(
        cfg: Arc<DetectorConfig>,
        registry: Registry,
        jobs: std::sync::mpsc::Sender<Job>,
        bus: tokio::sync::broadcast::Sender<Value>,
    ) -> Self {
        let start_wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        Core {
            start: Instant::now(),
            start_wall,
            cfg,
            registry,
            manifests: HashMap::new(),
            sampler: Sampler::new(),
            panes: BTreeMap::new(),
            conns: HashMap::new(),
            clients: Vec::new(),
            client_activity: HashMap::new(),
            published: BTreeMap::new(),
            jobs,
            book: ReportBook::new(ReportConfig::default()),
            flags: StopFlags::new(),
            parks: ParkStore::new(),
            bus,
            persist: false,
            listed_once: false,
            list_due: false,
            held: false,
            touched: HashSet::new(),
            next_sweep: Duration::ZERO,
            changed: true,
            links: BTreeMap::new(),
            link_tx: None,
            link_gen: 0,
            link_cfg: crate::remote::LinkConfig::default(),
            stopping: false,
            guard: GuardWatch {
                token: None,
                generation: 0,
                since: Instant::now(),
                connected: false,
                failures: 0,
            },
        }
    }

    /// Installs a guard with a fresh token (which also goes into
    /// `@tend_daemon`, before the guard starts). Everything is published
    /// again afterwards: an earlier guard's cleanup may have removed it.
    pub fn install_guard(&mut self) {
        self.guard.generation += 1;
        let token = format!(
            "{}.{}.{}",
            std::process::id(),
            (self.start_wall * 1e6) as u64,
            self.guard.generation
        );
        self.guard.token = Some(token.clone());
        self.guard.since = Instant::now();
        self.guard.connected = false;
        self.job(Job::Guard { token });
        self.published.clear();
        self.changed = true;
    }

    /// A guard that never connected (its process could not start, or died
    /// at once) has had tmux clean up already: install another, a few
    /// times, and publish everything again.
    fn check_guard(&mut self) {
        if self.guard.connected
            || self.guard.token.is_none()
            || self.guard.failures > GUARD_MAX_FAILURES
            || self.guard.since.elapsed() < GUARD_CONNECT_GRACE
        {
            return;
        }
        self.guard.failures += 1;
        if self.guard.failures > GUARD_MAX_FAILURES {
            eprintln!(
                "tend: the guard did not connect {GUARD_MAX_FAILURES} times in a row; giving up: \
                 if this daemon dies, the status line keeps its last counts until the next \
                 `tend start` (tmux runs the guard with /bin/sh: check that this daemon's \
                 executable is still there)"
            );
            self.published.clear();
            self.changed = true;
        } else {
            eprintln!(
                "tend: the guard did not connect within {} s; starting it again",
                GUARD_CONNECT_GRACE.as_secs()
            );
            self.install_guard();
        }
    }

    pub(crate) fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// Time on the Unix clock (reports, flags, parks persist across
    /// restarts, so they run on it).
    pub(crate) fn epoch(&self) -> Duration {
        Duration::from_secs_f64(self.start_wall) + self.start.elapsed()
    }

    /// Unix seconds.
    pub(crate) fn unix(&self) -> u64 {
        self.epoch().as_secs()
    }

    /// Unix time of a moment on the daemon clock.
    pub(crate) fn unix_at(&self, d: Duration) -> f64 {
        self.start_wall + d.as_secs_f64()
    }

    fn at(&self, i: Instant) -> Duration {
        i.saturating_duration_since(self.start)
    }

    pub(crate) fn job(&self, j: Job) {
        let _ = self.jobs.send(j);
    }

    /// Makes the next tick look at `pane`.
    pub(crate) fn mark_touched(&mut self, pane: PaneId) {
        self.touched.insert(pane);
        self.changed = true;
    }

    /// Asks the worker for a pane listing (sent at the end of the tick
    /// that follows, with whatever that tick publishes).
    pub fn reconcile(&mut self) {
        self.list_due = true;
    }

    /// Handles one event.
    pub fn handle(&mut self, ev: Event) {
        match ev {
            Event::TapHello { conn, pane } => {
                self.conns.insert(conn, pane);
                if let Some(p) = self.panes.get_mut(&pane) {
                    // tmux gives a pane one pipe: while the daemon holds it,
                    // another hand-over (the owner's own tool) may add
                    // output but does not stand for the pane's pipe.
                    if p.conn.is_none() {
                        p.conn = Some(conn);
                        p.tap = TapState::Connected;
                    }
                }
            }
            Event::Taps(list) => {
                for ev in list {
                    self.handle(ev);
                }
            }
            Event::TapData {
                conn, bytes, at, ..
            } => {
                let at = self.at(at);
                if let Some(pane) = self.conns.get(&conn).copied() {
                    if let Some(p) = self.panes.get_mut(&pane) {
                        if p.seeded {
                            p.det.feed(at, &bytes);
                            p.tape.output(at, &bytes, p.det.screen());
                            p.watch.on_output(at);
                            // Visit the pane only when something is due: the
                            // detector coalesces frames into one evaluation
                            // per interval, so most chunks need no tick.
                            let due = p
                                .det
                                .poll_timeout()
                                .map_or(p.watch.next_wakeup(), |d| d.min(p.watch.next_wakeup()));
                            crate::trace!(
                                "feed pane={pane} bytes={} queued_us={} due_in_us={}",
                                bytes.len(),
                                self.now().saturating_sub(at).as_micros(),
                                due.saturating_sub(at).as_micros()
                            );
                            if due <= at {
                                self.touched.insert(pane);
                            } else {
                                self.next_sweep = self.next_sweep.min(due);
                            }
                        }
                    }
                }
            }
            Event::TapGap { conn } => {
                if let Some(pane) = self.conns.get(&conn).copied() {
                    self.job(Job::Capture(pane, CapturePurpose::Resync));
                }
            }
            Event::TapClosed { conn } => {
                if let Some(pane) = self.conns.remove(&conn) {
                    if let Some(p) = self.panes.get_mut(&pane) {
                        if p.conn == Some(conn) {
                            // tmux closed the pipe while the pane lives: the
                            // user closed it, or replaced it with their own.
                            // Tap again unless a pipe is there now (whose
                            // mark, ours, is cleared first so that a user's
                            // pipe is not taken for a tap).
                            p.conn = None;
                            p.tap = TapState::None;
                            p.tap_since = Instant::now();
                            let _ = self.jobs.send(Job::Retap(pane));
                        }
                    }
                }
            }
            Event::Listed { panes, clients } => self.on_listed(panes, clients),
            Event::ServerGone => self.stopping = true,
            Event::PersistFailed => self.persist = true,
            Event::Captured {
                pane,
                capture,
                purpose,
            } => self.on_captured(pane, capture, purpose),
            Event::TapInstalled { pane, outcome } => {
                if let Some(p) = self.panes.get_mut(&pane) {
                    match outcome {
                        Ok(tend_tmux::TapOutcome::Installed)
                        | Ok(tend_tmux::TapOutcome::AlreadyTapped { .. }) => {
                            if p.tap != TapState::Connected {
                                p.tap = TapState::Installed;
                                p.tap_since = Instant::now();
                            }
                        }
                        Ok(tend_tmux::TapOutcome::Foreign) => p.tap = TapState::Polling,
                        Err(_) => p.tap = TapState::Polling,
                    }
                }
            }
            // Whatever the request changes is published in this tick.
            Event::Control { req, reply } => self.control(req, reply),
            Event::Poke => self.reconcile(),
            Event::GuardHello { token } => {
                if self.guard.token.as_deref() == Some(token.as_str()) {
                    self.guard.connected = true;
                    self.guard.failures = 0;
                }
            }
            Event::GuardClosed { token } => {
                if self.guard.token.as_deref() == Some(token.as_str()) && !self.stopping {
                    eprintln!(
                        "tend: the guard process ended while the daemon runs; starting another"
                    );
                    self.install_guard();
                }
            }
            Event::Remote {
                name,
                generation,
                ev,
            } => self.on_remote(name, generation, ev),
        }
    }

    fn on_listed(&mut self, panes: Vec<Pane>, clients: Vec<Client>) {
        // Sessions, windows, focus may all have changed: visit every pane
        // (their statuses are compared at the visit), and compute what to
        // publish again if the listing differs from the last one (a pane
        // moved to another window or session changes the rollups). An
        // unchanged listing, the common case, publishes nothing: computing
        // every option of 200 panes each second for nothing was a fifth of
        // an idle daemon's time.
        let moved = !self.listed_once
            || clients != self.clients
            || panes.len() != self.panes.len()
            || panes
                .iter()
                .any(|i| self.panes.get(&i.pane_id).is_none_or(|p| p.info != *i));
        if moved {
            self.changed = true;
        }
        self.listed_once = true;
        self.check_guard();
        self.next_sweep = Duration::ZERO;
        let now = self.now();
        // Keys typed into a pane: tmux has no keystroke hook, but a client's
        // activity time moves when its user types, and the client shows one
        // pane. That is the user directing that agent, and it ends a snooze.
        for c in &clients {
            let last = self.client_activity.insert(c.name.clone(), c.activity);
            let typed = last.is_some_and(|l| c.activity > l);
            if let (true, Some(pane)) = (typed, c.pane_id) {
                if let Some(p) = self.panes.get_mut(&pane) {
                    p.det.input(now, b"key");
                    p.tape.input(now, b"key", p.det.screen());
                    self.touched.insert(pane);
                }
                if self.parks.typed(&pane.to_string()) {
                    self.persist = true;
                }
            }
        }
        self.client_activity
            .retain(|name, _| clients.iter().any(|c| &c.name == name));
        self.clients = clients;
        let live: HashSet<PaneId> = panes.iter().map(|p| p.pane_id).collect();
        let gone: Vec<PaneId> = self
            .panes
            .keys()
            .filter(|id| !live.contains(id))
            .copied()
            .collect();
        for id in gone {
            self.pane_closed(id);
        }
        for info in panes {
            let id = info.pane_id;
            match self.panes.get_mut(&id) {
                Some(p) => {
                    let (w, h) = (info.width as u16, info.height as u16);
                    if (h, w) != p.det.screen().size() {
                        p.det.resize(now, h, w);
                        p.tape.resize(now, h, w, p.det.screen());
                    }
                    if info.dead && p.det.status().state.is_some_and(|s| s != State::Exited) {
                        p.det.observe_process(
                            now,
                            tend_detector::ProcessObservation {
                                agent_alive: false,
                                exit_code: info.dead_status,
                                cpu_percent: None,
                                live_child: None,
                            },
                        );
                    }
                    // A tap that was installed but never connected (its
                    // process died): install again.
                    if p.tap == TapState::Installed
                        && p.tap_since.elapsed() > TAP_CONNECT_GRACE
                        && !info.pipe
                    {
                        p.tap = TapState::None;
                        let _ = self.jobs.send(Job::InstallTap(id));
                    }
                    if p.tap == TapState::Installed
                        && p.tap_since.elapsed() > TAP_CONNECT_GRACE * 2
                        && info.pipe
                    {
                        // Marked as ours but nobody connects: treat as foreign
                        // rather than tear down a pipe we cannot prove is ours.
                        p.tap = TapState::Polling;
                    }
                    p.info = info;
                }
                None => {
                    let det =
                        PaneDetector::new(self.cfg.clone(), info.height as u16, info.width as u16);
                    let watch = PaneWatch::new(info.pane_pid, now, SamplePolicy::default());
                    // A tap may have said hello before this first listing (a
                    // restarted daemon: the old taps reconnect at once).
                    let conn = self
                        .conns
                        .iter()
                        .filter(|(_, p)| **p == id)
                        .map(|(c, _)| *c)
                        .max();
                    let tap = if conn.is_some() {
                        TapState::Connected
                    } else if info.has_foreign_pipe() {
                        TapState::Polling
                    } else if info.is_tapped() {
                        TapState::Installed
                    } else {
                        // Tapped at once, beside the seed: a restarted daemon
                        // holds every pane's pipe after one tmux invocation.
                        self.job(Job::InstallTap(id));
                        TapState::Installed
                    };
                    self.panes.insert(
                        id,
                        PaneEntry {
                            info,
                            det,
                            watch,
                            tap,
                            conn,
                            tap_since: Instant::now(),
                            seeded: false,
                            seen: false,
                            last_poll: None,
                            last_polled: None,
                            focused: false,
                            eff: None,
                            eff_since: self.start_wall + now.as_secs_f64(),
                            eff_seq: 0,
                            announced: None,
                            tape: Tape::new(),
                            procs: VecDeque::new(),
                        },
                    );
                    self.job(Job::Capture(id, CapturePurpose::Seed));
                }
            }
        }
        self.mark_seen();
    }

    /// A pane vanished: its run ends, gated parks on it release.
    fn pane_closed(&mut self, id: PaneId) {
        let Some(p) = self.panes.remove(&id) else {
            return;
        };
        let name = id.to_string();
        let _ = self
            .bus
            .send(json!({"event": "pane.closed", "pane": name, "agent": p.det.status().agent}));
        for r in self.parks.pane_gone(&name) {
            self.park_released(r);
        }
        self.book.forget(&name);
        self.flags.forget(&name);
        self.persist = true;
        self.changed = true;
    }

    pub(crate) fn park_released(&mut self, r: tend_detector::park::ParkReleased) {
        let _ = self.bus.send(json!({
            "event": "park.released",
            "pane": r.pane,
            "gate": r.gate,
            "note": r.note,
            "reason": format!("{:?}", r.reason),
        }));
        self.persist = true;
        self.changed = true;
        self.touched.extend(r.pane.parse::<PaneId>().ok());
    }

    /// Recomputes one pane's effective status; emits events for changes.
    fn refresh(&mut self, id: PaneId) {
        let epoch = self.epoch();
        let unix = epoch.as_secs();
        let Some(p) = self.panes.get(&id) else { return };
        let name = id.to_string();
        let st = p.det.status();
        let marks = self.parks.marks(&name, unix);
        let stop = self.flags.get(&name).map(|f| f.word());
        let book = &self.book;
        let view = status::fold(
            &st,
            |screen| book.effective(epoch, &name, screen),
            &marks,
            p.seen,
            stop,
        );
        let old = p.eff.clone();
        // Announced while the agent runs; released when its run ends (the pane
        // keeps naming it, as `exited`, until the next agent).
        let agent_now = st.agent.clone().filter(|_| st.live);
        let announced = p.announced.clone();
        let changed_key = old.as_ref().map(EffView::key) != Some(view.key());
        let wall = self.start_wall + self.start.elapsed().as_secs_f64();
        let mut gate_move = None;
        if let Some(p) = self.panes.get_mut(&id) {
            if announced != agent_now {
                if let Some(a) = &announced {
                    let _ = self
                        .bus
                        .send(json!({"event": "pane.agent_released", "pane": name, "agent": a}));
                }
                if let Some(a) = &agent_now {
                    let _ = self
                        .bus
                        .send(json!({"event": "pane.agent_detected", "pane": name, "agent": a}));
                }
                p.announced = agent_now.clone();
            }
            if changed_key {
                crate::trace!(
                    "state pane={name} state={:?} reason={:?} rule={:?}",
                    view.state,
                    view.reason,
                    view.rule
                );
                let prev_state = old.as_ref().and_then(|o| o.state);
                if prev_state != view.state || old.as_ref().and_then(|o| o.reason) != view.reason {
                    p.eff_seq += 1;
                    p.eff_since = wall;
                    if let Some(to) = view.state {
                        gate_move = Some((prev_state, to));
                    }
                }
                let display = view
                    .agent
                    .as_deref()
                    .and_then(|a| self.registry.get(a))
                    .map(|m| m.short_name.clone());
                let _ = self.bus.send(json!({
                    "event": "pane.agent_status_changed",
                    "pane": name,
                    "agent": view.agent,
                    "name": display,
                    "session": p.info.session_name,
                    "window": p.info.window_id.to_string(),
                    "focused": p.focused,
                    "prev_band": old.as_ref().and_then(|o| o.band),
                    "state": view.state,
                    "reason": view.reason,
                    "band": view.band,
                    "quiet": view.quiet,
                    "prev_state": prev_state,
                    "prev_reason": old.as_ref().and_then(|o| o.reason),
                    "rule": view.rule,
                    "authority": view.authority,
                    "state_change_seq": p.eff_seq,
                    "run": st.run,
                    "at": wall,
                }));
                self.changed = true;
            } else if old.as_ref() != Some(&view) {
                self.changed = true;
            }
            p.eff = Some(view);
        }
        // A park gated on this pane releases the first time it goes from
        // busy to ready.
        if let Some((from, to)) = gate_move {
            for r in self.parks.gate_transition(&name, from, to) {
                self.park_released(r);
            }
        }
    }

    /// A completion is seen when a client shows the pane: it is the active
    /// pane of the window a client is on. Reading through the CLI does not
    /// count.
    fn mark_seen(&mut self) {
        let mut focused: HashSet<PaneId> = HashSet::new();
        for c in &self.clients {
            if let Some(p) = c.pane_id {
                focused.insert(p);
            }
        }
        for (id, p) in self.panes.iter_mut() {
            p.focused = focused.contains(id);
            if p.focused && p.det.status().state == Some(State::Completed) {
                p.seen = true;
            }
        }
    }

    fn on_captured(&mut self, pane: PaneId, cap: Capture, purpose: CapturePurpose) {
        let now = self.now();
        let Some(p) = self.panes.get_mut(&pane) else {
            return;
        };
        let mut bytes = Vec::with_capacity(cap.text.len() + 64);
        match purpose {
            CapturePurpose::Poll => {
                // The title counts too: a capture does not carry it, and a
                // static screen may change only its title.
                let key = format!("{}\u{0}{}", p.info.title, cap.text);
                if p.last_polled.as_deref() == Some(key.as_str()) {
                    return;
                }
                p.last_polled = Some(key);
            }
            CapturePurpose::Seed | CapturePurpose::Resync => {}
        }
        // Rebuild the screen: main screen first, alternate when on.
        if cap.alternate_on {
            bytes.extend_from_slice(b"\x1b[?1049h");
        } else {
            bytes.extend_from_slice(b"\x1b[?1049l");
        }
        // tmux keeps the title the program set (OSC 0/2); a capture does
        // not carry it.
        bytes.extend_from_slice(b"\x1b]2;");
        bytes.extend(p.info.title.bytes().filter(|b| !b.is_ascii_control()));
        bytes.extend_from_slice(b"\x07");
        bytes.extend_from_slice(b"\x1b[0m\x1b[H\x1b[2J");
        for (i, line) in cap.text.lines().enumerate() {
            if i > 0 {
                bytes.extend_from_slice(b"\r\n");
            }
            bytes.extend_from_slice(line.as_bytes());
        }
        bytes.extend_from_slice(
            format!("\x1b[0m\x1b[{};{}H", cap.cursor_y + 1, cap.cursor_x + 1).as_bytes(),
        );
        let (h, w) = (cap.height as u16, cap.width as u16);
        if (h, w) != p.det.screen().size() {
            p.det.resize(now, h, w);
            p.tape.resize(now, h, w, p.det.screen());
        }
        match purpose {
            CapturePurpose::Poll => {
                p.det.feed(now, &bytes);
                p.tape.output(now, &bytes, p.det.screen());
            }
            // The tape starts (again) from the screen the capture rebuilt:
            // output before it was never seen, or was lost.
            _ => {
                p.det.seed(now, &bytes);
                p.tape.checkpoint(now, p.det.screen());
            }
        }
        self.touched.insert(pane);
        if purpose == CapturePurpose::Seed {
            p.seeded = true;
            match p.tap {
                TapState::None => self.job(Job::InstallTap(pane)),
                TapState::Installed | TapState::Connected | TapState::Polling => {}
            }
        }
    }

    /// Runs timers, samples processes, polls foreign-pipe panes, and
    /// publishes changes. Only panes that received something since the last
    /// call are visited, plus every pane once its earliest deadline is due,
    /// so the cost per event does not grow with the number of panes.
    /// Returns how long until it next wants to run.
    pub fn tick(&mut self) -> Duration {
        let now = self.now();
        let full = now >= self.next_sweep;
        let ids: Vec<PaneId> = if full {
            self.touched.clear();
            self.next_sweep = now + Duration::from_secs(1);
            self.panes.keys().copied().collect()
        } else {
            self.touched.drain().collect()
        };
        let mut polls = Vec::new();
        let mut visited: Vec<PaneId> = Vec::new();
        for id in ids {
            let Some(p) = self.panes.get_mut(&id) else {
                continue;
            };
            if !p.seeded {
                continue;
            }
            p.det.tick(now);
            crate::trace!(
                "tick pane={id} state={:?} agent={:?} full={full}",
                p.det.status().state,
                p.det.status().agent
            );
            // Identity.
            let prompt_visible = matches!(p.det.status().state, None | Some(State::Exited));
            if p.watch.next_wakeup() <= now {
                let up = p
                    .watch
                    .poll(&mut self.sampler, &self.registry, now, prompt_visible);
                if let Some(change) = &up.change {
                    // One shared manifest per agent: each copy would carry
                    // its own compiled regex caches.
                    let manifest = change.to.as_ref().and_then(|a| {
                        if !self.manifests.contains_key(a) {
                            let m = Arc::new(self.registry.get(a)?.clone());
                            self.manifests.insert(a.clone(), m);
                        }
                        self.manifests.get(a).cloned()
                    });
                    crate::trace!("agent pane={id} to={:?}", change.to);
                    p.det.set_agent(now, manifest);
                    p.seen = false;
                    if change.to.is_none() {
                        // The agent's run is over: its reports end with it.
                        self.book.release(&id.to_string());
                    }
                }
                if let Some(obs) = up.observation {
                    p.det.observe_process(now, obs);
                }
                if let Some(procs) = up.procs {
                    if p.procs.len() == PROCS_KEPT {
                        p.procs.pop_front();
                    }
                    p.procs.push_back((now, procs));
                }
            }
            while let Some(t) = p.det.poll_transition() {
                if t.to != State::Completed {
                    p.seen = false;
                }
            }
            // Completing while the user looks at it: seen at once.
            if p.focused && p.det.status().state == Some(State::Completed) {
                p.seen = true;
            }
            let mut due = p.watch.next_wakeup();
            if let Some(d) = p.det.poll_timeout() {
                due = due.min(d);
            }
            if p.tap == TapState::Polling {
                if p.last_poll.is_none_or(|t| t.elapsed() >= POLL_EVERY) {
                    p.last_poll = Some(Instant::now());
                    polls.push(id);
                }
                due = due.min(now + POLL_EVERY);
            }
            self.next_sweep = self.next_sweep.min(due);
            visited.push(id);
        }
        for id in polls {
            self.job(Job::Capture(id, CapturePurpose::Poll));
        }
        // Leases, quiet and gone of self-reporting agents; parks and
        // snoozes running out.
        let epoch = self.epoch();
        if self.book.next_deadline().is_some_and(|d| d <= epoch) || full {
            let changes = {
                let panes = &self.panes;
                let start = self.start;
                let alive = |pane: &str| -> Alive {
                    let Some(p) = pane.parse::<PaneId>().ok().and_then(|id| panes.get(&id)) else {
                        return Alive::NONE;
                    };
                    let st = p.det.status();
                    let silent = st.silent_for;
                    let last_output = epoch.checked_sub(silent).filter(|_| st.state.is_some());
                    let _ = start;
                    Alive {
                        last_output,
                        cpu_busy: st.cpu_hold,
                        life: match p.eff.as_ref().and_then(|e| e.band) {
                            Some(Band::Quiet) => PaneLife::Quiet,
                            Some(Band::Exited) | None => PaneLife::Gone,
                            _ => PaneLife::Live,
                        },
                    }
                };
                self.book.tick(epoch, &alive)
            };
            for c in changes {
                let _ = self.bus.send(json!({
                    "event": "pane.report_changed",
                    "pane": c.pane,
                    "from": c.from,
                    "to": c.to,
                    "notify": c.notify,
                }));
                visited.extend(c.pane.parse::<PaneId>().ok());
                self.persist = true;
            }
        }
        if self
            .parks
            .next_deadline()
            .is_some_and(|d| d <= epoch.as_secs())
            || full
        {
            for pane in self.parks.expire(epoch.as_secs()) {
                visited.extend(pane.parse::<PaneId>().ok());
                self.persist = true;
            }
        }
        for id in visited {
            self.refresh(id);
        }
        let list = std::mem::take(&mut self.list_due);
        let updates = if self.changed || (self.held && list) {
            self.changed = false;
            self.publish(list)
        } else {
            None
        };
        match updates {
            Some((updates, clients)) => self.job(Job::Publish {
                updates,
                clients,
                list,
            }),
            None if list => self.job(Job::List),
            None => {}
        }
        self.next_sweep
            .saturating_sub(now)
            .max(Duration::from_millis(2))
    }

    pub(crate) fn rows(&self) -> Vec<PaneRow> {
        self.panes
            .values()
            .map(|p| {
                let e = p.eff.as_ref();
                PaneRow {
                    pane: p.info.pane_id,
                    window: p.info.window_id,
                    session: p.info.session_id,
                    session_name: p.info.session_name.clone(),
                    agent: e.and_then(|e| e.agent.clone()),
                    state: e.and_then(|e| e.state).map(|s| s.as_str().to_owned()),
                    reason: e.and_then(|e| e.reason),
                    band: e.and_then(|e| e.band),
                    since: e.and_then(|e| e.state).map(|_| p.eff_since),
                    marks: e.map(|e| {
                        let mut m: Vec<String> = Vec::new();
                        if let Some(stop) = &e.stop {
                            m.push(stop.clone());
                        }
                        if e.parked {
                            m.push(match e.note.as_deref().filter(|n| !n.is_empty()) {
                                Some(n) => format!("parked: {n}"),
                                None => "parked".into(),
                            });
                        }
                        if e.snoozed {
                            m.push("snoozed".into());
                        }
                        if let Some(l) = &e.lifecycle {
                            m.push(l.clone());
                        }
                        m.join(" · ")
                    }),
                    exit_code: e.and_then(|e| e.exit_code),
                }
            })
            .collect()
    }

    /// The remote panes and links, for the rollups.
    pub(crate) fn remote_rows(&self) -> publish::RemoteFacts {
        let mut facts = publish::RemoteFacts::default();
        for v in self.remote_views() {
            let host = v.host.clone().unwrap_or_default();
            facts.rows.push(publish::RemoteRow {
                session_name: format!("{host}:{}", v.session),
                host,
                band: v
                    .band
                    .as_deref()
                    .and_then(|b| serde_json::from_value::<Band>(Value::String(b.to_owned())).ok()),
                reason: v.reason.as_deref().and_then(tend_detector::Reason::parse),
                since: v.since.unwrap_or(0.0),
                id: v.pane,
            });
        }
        for (name, l) in &self.links {
            if l.state == crate::daemon::remote::LinkState::Down {
                facts.down.push(name.clone());
            }
        }
        facts
    }

    /// What changed since the last publish, and the clients whose status
    /// line to redraw (`None`: nothing to send now). Changes that can wait
    /// ([`publish::can_wait`]) are held until `listing` (the tick that
    /// sends the periodic listing, at most [`super::RECONCILE_EVERY`]
    /// later), so that they share its tmux process.
    fn publish(&mut self, listing: bool) -> Option<(Vec<tend_tmux::OptionUpdate>, Vec<String>)> {
        if !self.listed_once {
            return None;
        }
        let new = publish::compute(&self.rows(), &self.remote_rows());
        let ups = publish::diff(&self.published, &new);
        self.held = !ups.is_empty() && !listing && publish::can_wait(&ups);
        if self.held {
            crate::trace!("publish held updates={}", ups.len());
            return None;
        }
        if !ups.is_empty() {
            crate::trace!("publish updates={}", ups.len());
            self.published = new;
            let clients = self
                .clients
                .iter()
                .filter(|c| !c.control_mode)
                .map(|c| c.name.clone())
                .collect();
            return Some((ups, clients));
        }
        None
    }

    /// Everything published, for `tend stop` to remove.
    pub fn published_keys(&self) -> Vec<(Scope, String)> {
        self.published.keys().cloned().collect()
    }
}
