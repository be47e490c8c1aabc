//! The pane table: the one place that owns every pane's detector, identity
//! watch and tap state. Everything reaches it as an [`Event`]; every effect
//! on the multiplexer leaves it as a [`Job`] for the backend thread (the
//! tmux worker, or zellij's). It reads no clock: it is told the time
//! ([`Core::set_clock`]).
//!
//! `listing.rs` takes listings and screens; `tick.rs` runs the timers and
//! each pane's effective status.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tend_attention::park::ParkStore;
use tend_attention::report::{ReportBook, ReportConfig};
use tend_attention::stopflag::StopFlags;
use tend_attention::Band;
use tend_detector::engine::PaneDetector;
use tend_detector::{DetectorConfig, Registry};
use tend_tmux::{Capture, Client, Pane, PaneId, Scope};

mod listing;
mod seed_check;
mod tick;

use crate::daemon::publish::{self, PaneRow};
use crate::daemon::status::EffView;
use crate::daemon::tape::Tape;
pub use crate::daemon::worker::Job;
use crate::sampler::{PaneWatch, Sampler};
use tend_detector::identity::ProcessInfo;
use tend_protocol::reply::Reply;
use tend_protocol::{BusEvent, Request};

/// Where the answer to a control request goes.
pub type ReplyTx = tokio::sync::oneshot::Sender<Result<Reply, tend_protocol::Error>>;

/// Something that happened.
#[derive(Debug)]
pub enum Event {
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
    Control { req: Request, reply: ReplyTx },
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
    /// Output soon after a seed may have been drawn twice: compared with
    /// the emulated screen, which is re-seeded when they differ
    /// (`core/seed_check.rs`).
    Verify,
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
    /// Whether output may have overlapped the seed ([`seed_check`]).
    check: seed_check::SeedCheck,
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
    /// The git repository or worktree and branch of the pane's working
    /// directory (`tend · main`), for an agent's pane.
    pub(crate) project: Option<String>,
}

impl PaneEntry {
    /// When the pane next needs a visit: its detector's next deadline, its
    /// next process probe or sample, or a seed check.
    fn due(&self) -> Duration {
        let mut due = self.watch.next_wakeup();
        if let Some(d) = self.det.poll_timeout() {
            due = due.min(d);
        }
        if let Some(d) = self.check.due() {
            due = due.min(d);
        }
        due
    }
}

/// Process samples a pane keeps for `tend capture`: enough for a replay to
/// see the agent alive and its CPU, a few KiB.
pub(crate) const PROCS_KEPT: usize = 4;

/// The daemon's state.
pub struct Core {
    start: Instant,
    /// The time now, as the event loop last said ([`Core::set_clock`]).
    clock: Instant,
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
    pub(crate) bus: tokio::sync::broadcast::Sender<BusEvent>,
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
    /// Panes that received output since the last sweep without needing a
    /// visit at once: the sweep visits them (their detector may have moved
    /// on while it read), and skips panes where nothing happened.
    fed: HashSet<PaneId>,
    /// When the next sweep runs.
    next_sweep: Duration,
    /// Jobs that wait for their time (the daemon's clock), sent by the
    /// first tick at or after it: the Enter after a prompt's paste, for
    /// agents whose manifest asks for a pause.
    later: Vec<(Duration, Job)>,
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
    /// The multiplexer the panes live in (how they are named, what it
    /// offers).
    pub mux: crate::daemon::mux::Mux,
    /// The guard that makes tmux clean up if this daemon dies.
    guard: GuardWatch,
    /// Projects by working directory ([`crate::daemon::project`]).
    projects: crate::daemon::project::ProjectCache,
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
    /// A new, empty table, starting now.
    pub fn new(
        cfg: Arc<DetectorConfig>,
        registry: Registry,
        jobs: std::sync::mpsc::Sender<Job>,
        bus: tokio::sync::broadcast::Sender<BusEvent>,
    ) -> Self {
        let start_wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        Core::starting_at(cfg, registry, jobs, bus, Instant::now(), start_wall)
    }

    /// A new, empty table whose clock starts at `start`, which is
    /// `start_wall` on the Unix clock (seconds). The table reads no clock
    /// itself: [`Core::set_clock`] moves it (the event loop, before each
    /// round; tests, as they like).
    pub fn starting_at(
        cfg: Arc<DetectorConfig>,
        registry: Registry,
        jobs: std::sync::mpsc::Sender<Job>,
        bus: tokio::sync::broadcast::Sender<BusEvent>,
        start: Instant,
        start_wall: f64,
    ) -> Self {
        Core {
            start,
            clock: start,
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
            fed: HashSet::new(),
            next_sweep: Duration::ZERO,
            later: Vec::new(),
            changed: true,
            links: BTreeMap::new(),
            link_tx: None,
            link_gen: 0,
            link_cfg: crate::remote::LinkConfig::default(),
            stopping: false,
            mux: crate::daemon::mux::Mux::Tmux,
            projects: Default::default(),
            guard: GuardWatch {
                token: None,
                generation: 0,
                since: start,
                connected: false,
                failures: 0,
            },
        }
    }

    /// Installs a guard with a fresh token (which also goes into
    /// `@tend_daemon`, before the guard starts). Everything is published
    /// again afterwards: an earlier guard's cleanup may have removed it.
    pub fn install_guard(&mut self) {
        if !self.mux.has_guard() {
            return;
        }
        self.guard.generation += 1;
        let token = format!(
            "{}.{}.{}",
            std::process::id(),
            (self.start_wall * 1e6) as u64,
            self.guard.generation
        );
        self.guard.token = Some(token.clone());
        self.guard.since = self.clock;
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
            || self.clock.saturating_duration_since(self.guard.since) < GUARD_CONNECT_GRACE
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

    /// Moves the table's clock to `now` (never back).
    pub fn set_clock(&mut self, now: Instant) {
        self.clock = self.clock.max(now);
    }

    /// Replaces the process sampler (one over a procfs-shaped tree in
    /// tests; the backend's otherwise).
    pub fn set_sampler(&mut self, sampler: Sampler) {
        self.sampler = sampler;
    }

    /// A descriptor readable when the kernel reports a pane's foreground
    /// job ended (see [`crate::sampler::ExitWatch`]); the event loop waits
    /// on it and then calls [`Core::jobs_ended`]. `None` without pidfds
    /// (see [`Core::exits_polled`]).
    pub fn exit_doorbell(&self) -> Option<std::os::fd::OwnedFd> {
        self.sampler.exits.doorbell()
    }

    /// Whether the ends of the panes' foreground jobs are found by asking
    /// ([`Core::jobs_ended`] at each round of the event loop) rather than
    /// on [`Core::exit_doorbell`].
    pub fn exits_polled(&self) -> bool {
        self.sampler.exits.polled()
    }

    /// The event loop cannot wait on [`Core::exit_doorbell`]: panes are
    /// probed for their foreground job's end instead.
    pub fn without_exit_watch(&mut self) {
        self.sampler.exits = crate::sampler::ExitWatch::disabled();
    }

    /// Takes the foreground jobs the kernel reports ended: their panes are
    /// sampled at the next tick.
    pub fn jobs_ended(&mut self) {
        let now = self.now();
        for key in self.sampler.exits.take_ended() {
            let Ok(n) = u32::try_from(key) else { continue };
            let id = PaneId(n);
            if let Some(p) = self.panes.get_mut(&id) {
                crate::trace!("job ended pane={id}");
                p.watch.exit_seen(now);
                self.touched.insert(id);
            }
        }
    }

    /// Time on the table's clock since it started.
    pub(crate) fn now(&self) -> Duration {
        self.clock.saturating_duration_since(self.start)
    }

    /// Time on the Unix clock (reports, flags, parks persist across
    /// restarts, so they run on it).
    pub(crate) fn epoch(&self) -> Duration {
        Duration::from_secs_f64(self.start_wall) + self.now()
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

    /// Sends `j` to the backend at `at` (the daemon's clock), from the
    /// first tick at or after it.
    pub(crate) fn job_at(&mut self, at: Duration, j: Job) {
        self.later.push((at, j));
    }

    /// Sends the jobs whose time has come; returns when the next is due.
    fn send_due_jobs(&mut self, now: Duration) -> Option<Duration> {
        let (due, waiting) = std::mem::take(&mut self.later)
            .into_iter()
            .partition::<Vec<_>, _>(|(at, _)| *at <= now);
        self.later = waiting;
        for (_, j) in due {
            self.job(j);
        }
        self.later.iter().map(|(at, _)| *at).min()
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
                let now = self.now();
                if let Some(p) = self.panes.get_mut(&pane) {
                    // tmux gives a pane one pipe: while the daemon holds it,
                    // another hand-over (the owner's own tool) may add
                    // output but does not stand for the pane's pipe.
                    if p.conn.is_none() {
                        p.conn = Some(conn);
                        p.tap = TapState::Connected;
                        if p.seeded {
                            p.check.handed_over(now);
                        }
                    }
                }
            }
            Event::TapData {
                conn, bytes, at, ..
            } => {
                // Read after the loop last set the clock: never fed in the
                // table's future.
                self.set_clock(at);
                let at = self.at(at);
                if let Some(pane) = self.conns.get(&conn).copied() {
                    if let Some(p) = self.panes.get_mut(&pane) {
                        if p.seeded {
                            p.det.feed(at, &bytes);
                            p.tape.output(at, &bytes, p.det.screen());
                            p.watch.on_output(at);
                            p.check.output(at);
                            // Visit the pane only when something is due: the
                            // detector coalesces frames into one evaluation
                            // per interval, so most chunks need no tick.
                            let due = p.due();
                            crate::trace!(
                                "feed pane={pane} bytes={} queued_us={} due_in_us={}",
                                bytes.len(),
                                self.now().saturating_sub(at).as_micros(),
                                due.saturating_sub(at).as_micros()
                            );
                            if due <= at {
                                self.touched.insert(pane);
                            } else {
                                self.fed.insert(pane);
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
                            p.tap_since = self.clock;
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
                                p.tap_since = self.clock;
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
                    project: p.project.clone(),
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
    pub(super) fn publish(
        &mut self,
        listing: bool,
    ) -> Option<(Vec<tend_tmux::OptionUpdate>, Vec<String>)> {
        if !self.listed_once {
            return None;
        }
        if self.mux == crate::daemon::mux::Mux::Zellij {
            // The backend pushes it when it differs from the last one.
            let status = crate::daemon::zellij::plugin_status(&self.rows(), &self.remote_rows());
            self.job(Job::Plugin(status));
            return None;
        }
        let new = publish::compute(&self.rows(), &self.remote_rows());
        let ups = publish::diff(&self.published, &new);
        self.held = !ups.is_empty() && !listing && publish::can_wait(&ups);
        if self.held {
            crate::trace!("publish held updates={}", ups.len());
            return None;
        }
        if ups.is_empty() {
            return None;
        }
        crate::trace!("publish updates={}", ups.len());
        self.published = new;
        let clients = self
            .clients
            .iter()
            .filter(|c| !c.control_mode)
            .map(|c| c.name.clone())
            .collect();
        Some((ups, clients))
    }

    /// Everything published, for `tend stop` to remove.
    pub fn published_keys(&self) -> Vec<(Scope, String)> {
        self.published.keys().cloned().collect()
    }
}

// The table's tests give it processes as a fake `/proc` (the Linux
// backend's source).
#[cfg(all(test, target_os = "linux"))]
mod tests;
