//! tend's daemon core: the pane table, and everything the daemon decides,
//! with no I/O. It owns every pane's detector, identity watch and tap
//! state, the self-reports, stop flags, parks and remote links; it answers
//! control requests, computes what the status line shows, and says what
//! the multiplexer must be told. It reads no clock, file, socket or
//! process list of its own: time comes in as an argument, the process tree
//! through a [`ProcSource`], projects through a [`ProjectSource`], and
//! everything else as an [`Input`]. What it wants done leaves as
//! [`Effect`]s, what happened as [`BusEvent`]s, both queued inside it.
//!
//! The daemon (`tend-daemon`) drives it; tests drive it on virtual time
//! with [`NoProcesses`] (see `tests.rs`).
//!
//! # The API
//!
//! [`Core`]'s methods come in four kinds, as in quinn-proto's
//! `Connection`:
//!
//! * **`handle`**: [`Core::handle`] takes one [`Input`] at the time it is
//!   given; [`Core::handle_timeout`] runs the timers (evaluations,
//!   identity samples, polls, listings, leases, the state file's save).
//! * **mutators**: [`Core::install_guard`], [`Core::restore`],
//!   [`Core::stop`].
//! * **`poll`**: [`Core::poll_effect`], [`Core::poll_event`] and
//!   [`Core::poll_timeout`].
//! * **getters**: [`Core::is_stopping`], [`Core::published_keys`],
//!   [`Core::state_text`], [`Core::mux`].
//!
//! After calling `handle*` or a mutator, the driver polls in this order:
//! every effect ([`Core::poll_effect`] until `None`, performed in order:
//! a capture asked for before a publish goes out before it), every event
//! ([`Core::poll_event`]), then [`Core::poll_timeout`] for when to call
//! [`Core::handle_timeout`] next. Inputs may be handed in any number
//! between two timeouts; a state change they cause is evaluated and
//! published by the next [`Core::handle_timeout`], which the driver calls
//! at the end of each round.
//!
//! # The files
//!
//! This one holds [`Core`] and its inputs' dispatch; `listing.rs` takes
//! listings and screens; `tick.rs` runs the timers and each pane's
//! effective status; `control.rs` answers requests; `links.rs` keeps the
//! remotes; `publish.rs` and `status.rs` say what the status line shows,
//! `overview.rs` the same in one piece (for zellij's plugin); `conversations.rs` keeps each agent's
//! conversation for `tend restore` (its rules in `resume/`).

#![warn(missing_docs)]

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tend_attention::limit::{Limits, ResumePolicy};
use tend_attention::park::ParkStore;
use tend_attention::report::{ReportBook, ReportConfig};
use tend_attention::stopflag::StopFlags;
use tend_detector::engine::PaneDetector;
use tend_detector::identity::ProcessInfo;
use tend_detector::{DetectorConfig, Registry};
use tend_protocol::{BusEvent, PaneId};
use tend_vocab::PaneBand;

pub mod answer;
mod capture;
mod channel;
mod control;
mod conversations;
mod effect;
pub mod fact;
pub mod feed;
mod follow;
mod input;
pub mod limits;
pub mod links;
mod listing;
pub mod mux;
pub mod notice;
pub mod overview;
pub mod pane;
pub mod publish;
pub mod remote;
mod remote_panes;
pub mod resume;
mod seed_check;
pub mod session;
pub mod source;
pub mod status;
pub mod store;
pub mod tape;
mod tick;
pub mod trust;
mod waits;
pub mod watch;

pub use effect::{Effect, MuxJob};
pub use fact::{Fact, FactUpdate, GlobalFact, PaneFact, SessionFact, WindowFact};
pub use input::{CapturePurpose, Input, RequestId};
pub use links::RemotesConfig;
pub use mux::{Backend, Mux, OutputRead, StatusForm};
pub use pane::{ClientInfo, PaneInfo, Pipe, Screen, TapOutcome};
pub use session::{FileRead, FollowFile};
pub use source::{
    ConversationSource, LiveFacts, NoConversations, NoProcesses, NoProjects, ProcSource,
    ProjectSource,
};
pub use waits::{PROMPT_REACTION, UNLISTED_GRACE};

use crate::links::Link;
use crate::publish::PaneRow;
use crate::status::EffView;
use crate::tape::Tape;
use crate::watch::PaneWatch;

/// How often panes are listed even without a hook firing (new panes also
/// arrive through break-pane, join-pane, respawn, which have no hook).
pub const RECONCILE_EVERY: Duration = Duration::from_secs(1);

/// The state file is written at most this often.
const SAVE_EVERY: Duration = Duration::from_secs(1);

/// A trace line, built only when tracing was asked for. Its time is the
/// core's clock on the Unix scale (fields only, so that it may be written
/// while a pane is borrowed).
macro_rules! trace {
    ($core:expr, $($arg:tt)*) => {
        if $core.tracing {
            let line = format!($($arg)*);
            let at = $core.start_wall
                + $core.clock.saturating_duration_since($core.start).as_secs_f64();
            $core.effects.push_back($crate::Effect::Trace {
                at_us: (at * 1e6) as u128,
                line,
            });
        }
    };
}
pub(crate) use trace;

/// What a core is made with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Detector timings.
    pub detector: Arc<DetectorConfig>,
    /// The agents' manifests.
    pub registry: Registry,
    /// What the backend the panes live in offers, as it declares it.
    pub backend: Backend,
    /// Emit [`Effect::Trace`] lines.
    pub trace: bool,
    /// Names this daemon in its guards' tokens (its process id).
    pub daemon_id: u32,
    /// `[limits]`: what goes into a pane at its usage limit's reset.
    pub limit_resume: ResumePolicy,
    /// The user's zone, seconds east of UTC, for the reset times agents
    /// draw without one ("resets 3pm").
    pub utc_offset: i32,
    /// The daemon user's home: where an agent whose environment the
    /// daemon cannot read is taken to keep its session files.
    pub home: Option<String>,
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
    pub(crate) fn word(self) -> tend_vocab::Tap {
        match self {
            // A tap is running but its pipe is not in hand yet: not tapped.
            TapState::None | TapState::Installed => tend_vocab::Tap::None,
            TapState::Connected => tend_vocab::Tap::Pipe,
            TapState::Polling => tend_vocab::Tap::Polling,
        }
    }
}

pub(crate) struct PaneEntry {
    pub(crate) info: PaneInfo,
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
    /// The gap to the next poll: [`POLL_BUSY`] after a capture that
    /// changed the screen, doubled by each that did not, at most
    /// [`POLL_EVERY`].
    poll_gap: Duration,
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
    /// The agent's session file, followed while its process runs.
    pub(crate) session: session::PaneSession,
    /// When an unasked report held back counts (`channel::held_until`).
    pub(crate) word_hold: Option<Duration>,
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
        if let Some(d) = self.session.next_deadline() {
            due = due.min(d);
        }
        if let Some(d) = self.word_hold {
            due = due.min(d);
        }
        due
    }
}

/// Process samples a pane keeps for `tend capture`: enough for a replay to
/// see the agent alive and its CPU, a few KiB.
pub(crate) const PROCS_KEPT: usize = 4;

/// The daemon's state: the pane table and all it decides. See the crate
/// documentation for how to drive it.
pub struct Core {
    start: Instant,
    /// The time now, as the driver last said.
    clock: Instant,
    start_wall: f64,
    cfg: Arc<DetectorConfig>,
    pub(crate) registry: Registry,
    /// The manifests in use, shared by every pane running that agent.
    manifests: HashMap<String, Arc<tend_detector::Manifest>>,
    /// The process tree.
    procs: Box<dyn ProcSource>,
    /// Projects by working directory.
    projects: Box<dyn ProjectSource>,
    pub(crate) panes: BTreeMap<PaneId, PaneEntry>,
    conns: HashMap<u64, PaneId>,
    clients: Vec<ClientInfo>,
    /// Last `client_activity` per client, to notice keys typed into a pane.
    client_activity: HashMap<String, u64>,
    published: BTreeMap<Fact, String>,
    /// What the driver has to do, in order.
    pub(crate) effects: VecDeque<Effect>,
    /// Events for `tend events`, `wait`, `prompt --wait` and notifications.
    pub(crate) events: VecDeque<BusEvent>,
    /// [`Effect::Trace`] lines are wanted.
    tracing: bool,
    /// [`Config::daemon_id`].
    pub(crate) token_id: u32,
    /// Self-reports (authority), on the Unix clock.
    pub(crate) book: ReportBook,
    /// Stop flags.
    pub(crate) flags: StopFlags,
    /// Parks and snoozes.
    pub(crate) parks: ParkStore,
    /// Persistent state changed and should be written.
    pub(crate) persist: bool,
    /// When the state file was last asked to be written.
    last_save: Option<Duration>,
    listed_once: bool,
    /// A listing was asked for: it goes out at the end of this tick, in
    /// the same multiplexer call as the tick's publish if there is one.
    list_due: bool,
    /// When the next periodic listing is due.
    next_list: Duration,
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
    /// The `tend run` relays registered on the daemon's socket: their pids
    /// by connection.
    relays: BTreeMap<u64, u32>,
    /// When [`Core::handle_timeout`] wants to run next.
    wake: Duration,
    /// Jobs that wait for their time (the core's clock), sent by the
    /// first tick at or after it: the Enter after a prompt's paste, for
    /// agents whose manifest asks for a pause.
    later: Vec<(Duration, MuxJob)>,
    /// Something published may have changed.
    pub(crate) changed: bool,
    /// Links to remotes, by name.
    pub(crate) links: BTreeMap<String, Link>,
    /// Counts link starts.
    pub(crate) link_gen: u64,
    /// `[remote_link]` in use.
    pub(crate) link_cfg: remote::LinkConfig,
    /// Set when the daemon should exit.
    stopping: bool,
    /// How the multiplexer's panes are spelled (`backend.mux`, at hand
    /// on every path that names a pane).
    pub(crate) mux: Mux,
    /// What the backend offers, as it declared it.
    pub(crate) backend: Backend,
    /// The guard that makes the multiplexer clean up if the daemon dies.
    guard: GuardWatch,
    /// Each agent's conversation, for `tend restore`.
    conversations: resume::Conversations,
    /// `restore` requests waiting for the first listing.
    restores_waiting: Vec<(RequestId, tend_protocol::params::Restore)>,
    /// Requests answered later: waits, and requests for panes not listed
    /// yet.
    pub(crate) waits: waits::Waits,
    /// Each pane's usage limit, by pane name.
    pub(crate) limits: Limits,
    /// `[limits]` in force.
    pub(crate) limit_resume: ResumePolicy,
    /// [`Config::utc_offset`].
    pub(crate) utc_offset: i32,
    /// The last resume (or refusal) per pane: Unix time and the log line,
    /// for `tend explain`.
    pub(crate) last_resume: HashMap<String, (u64, String)>,
    /// [`Config::home`].
    home: Option<String>,
    /// The session files the daemon was last told to follow.
    followed: BTreeMap<PaneId, String>,
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
/// How often a pane with someone else's pipe (read by `capture-pane`,
/// not its output) is captured while its screen stands still.
const POLL_EVERY: Duration = Duration::from_millis(500);
/// How often it is captured while its agent works, and right after a
/// capture found its screen changed: a dialog drawn then waits half of it
/// on average, not half of [`POLL_EVERY`]. Otherwise each capture that
/// finds the screen unchanged doubles the gap again, up to [`POLL_EVERY`].
const POLL_BUSY: Duration = Duration::from_millis(125);

impl Core {
    /// A new, empty table whose clock starts at `now`, which is `now_unix`
    /// on the Unix clock (seconds): reports, flags and parks persist
    /// across restarts, so they run on it.
    pub fn new(
        config: Config,
        procs: Box<dyn ProcSource>,
        projects: Box<dyn ProjectSource>,
        now: Instant,
        now_unix: f64,
    ) -> Self {
        Core {
            start: now,
            clock: now,
            start_wall: now_unix,
            cfg: config.detector,
            registry: config.registry,
            manifests: HashMap::new(),
            procs,
            projects,
            panes: BTreeMap::new(),
            conns: HashMap::new(),
            clients: Vec::new(),
            client_activity: HashMap::new(),
            published: BTreeMap::new(),
            effects: VecDeque::new(),
            events: VecDeque::new(),
            tracing: config.trace,
            token_id: config.daemon_id,
            book: ReportBook::new(ReportConfig::default()),
            flags: StopFlags::new(),
            parks: ParkStore::new(),
            persist: false,
            last_save: None,
            listed_once: false,
            list_due: false,
            next_list: Duration::ZERO,
            held: false,
            touched: HashSet::new(),
            fed: HashSet::new(),
            next_sweep: Duration::ZERO,
            relays: BTreeMap::new(),
            wake: Duration::ZERO,
            later: Vec::new(),
            changed: true,
            links: BTreeMap::new(),
            link_gen: 0,
            link_cfg: remote::LinkConfig::default(),
            stopping: false,
            mux: config.backend.mux,
            backend: config.backend,
            guard: GuardWatch {
                token: None,
                generation: 0,
                since: now,
                connected: false,
                failures: 0,
            },
            conversations: resume::Conversations::default(),
            restores_waiting: Vec::new(),
            waits: waits::Waits::default(),
            limits: Limits::new(),
            limit_resume: config.limit_resume,
            utc_offset: config.utc_offset,
            last_resume: HashMap::new(),
            home: config.home,
            followed: BTreeMap::new(),
        }
    }

    /// The next effect to perform, oldest first.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    /// The next event for the bus, oldest first.
    pub fn poll_event(&mut self) -> Option<BusEvent> {
        self.events.pop_front()
    }

    /// When [`Core::handle_timeout`] wants to run next: never later than
    /// [`RECONCILE_EVERY`] after the last.
    pub fn poll_timeout(&self) -> Instant {
        self.start + self.wake
    }

    /// Runs what is due at `now`: timers, samples, polls, jobs that waited,
    /// the periodic listing, and publishes what changed.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.set_clock(now);
        let from = self.events.len();
        let wait = self.tick();
        self.answer_waits(from);
        let now = self.now();
        let answers = self.waits.expire(now);
        self.reply_all(answers);
        self.retry_unlisted();
        if self.stopping {
            let answers = self.waits.stop();
            self.reply_all(answers);
        }
        self.wake = self
            .waits
            .next_due()
            .map_or(now + wait, |d| d.min(now + wait));
    }

    /// The waits that the events published since `from` end.
    fn answer_waits(&mut self, from: usize) {
        let now = self.now();
        let answers = self.waits.on_events(self.events.range(from..), now);
        self.reply_all(answers);
    }

    fn reply_all(&mut self, answers: Vec<waits::Answer>) {
        for (id, result) in answers {
            self.effects.push_back(Effect::Reply { id, result });
        }
    }

    /// Takes the saved state (parks, snoozes, flags, reports,
    /// conversations) of a daemon that ran before.
    pub fn restore(&mut self, saved: store::Loaded) {
        self.parks = saved.parks;
        self.flags = saved.flags;
        self.book = saved.reports;
        self.restore_conversations(saved.conversations);
    }

    /// Takes saved state read only now (the file could not be read when
    /// the daemon started): what it holds that the table does not is
    /// added, what the table holds (newer) stays, and the state is saved.
    pub fn restore_late(&mut self, saved: store::Loaded) {
        self.parks.merge_missing(saved.parks);
        self.conversations.book.merge_missing(saved.conversations);
        self.flags.merge_missing(saved.flags);
        self.book.merge_missing(saved.reports);
        self.persist = true;
    }

    /// The daemon is asked to stop (a signal).
    pub fn stop(&mut self) {
        self.stopping = true;
    }

    /// Whether the daemon should stop now.
    pub fn is_stopping(&self) -> bool {
        self.stopping
    }

    /// The multiplexer the core serves.
    pub fn mux(&self) -> Mux {
        self.mux
    }

    /// The state file's text now.
    pub fn state_text(&self) -> String {
        store::to_text(
            &self.parks,
            &self.flags,
            &self.book,
            self.conversation_book(),
        )
    }

    /// Installs a guard with a fresh token (which also goes into
    /// `@tend_daemon`, before the guard starts). Everything is published
    /// again afterwards: an earlier guard's cleanup may have removed it.
    pub fn install_guard(&mut self) {
        if !self.backend.guard {
            return;
        }
        self.guard.generation += 1;
        let token = format!(
            "{}.{}.{}",
            self.token_id,
            (self.start_wall * 1e6) as u64,
            self.guard.generation
        );
        self.guard.token = Some(token.clone());
        self.guard.since = self.clock;
        self.guard.connected = false;
        self.job(MuxJob::Guard { token });
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
            self.log(format!(
                "the guard did not connect {GUARD_MAX_FAILURES} times in a row; giving up: \
                 if this daemon dies, the status line keeps its last counts until the next \
                 `tend start` (tmux runs the guard with /bin/sh: check that this daemon's \
                 executable is still there)"
            ));
            self.published.clear();
            self.changed = true;
        } else {
            self.log(format!(
                "the guard did not connect within {} s; starting it again",
                GUARD_CONNECT_GRACE.as_secs()
            ));
            self.install_guard();
        }
    }

    /// Moves the table's clock to `now` (never back).
    fn set_clock(&mut self, now: Instant) {
        self.clock = self.clock.max(now);
    }

    /// The foreground jobs the process source reports ended: their panes
    /// are sampled at the next tick.
    fn jobs_ended(&mut self) {
        let now = self.now();
        for key in self.procs.take_ended() {
            let Ok(n) = u32::try_from(key) else { continue };
            let id = PaneId(n);
            if let Some(p) = self.panes.get_mut(&id) {
                trace!(self, "job ended pane={id}");
                p.watch.exit_seen(now);
                self.touched.insert(id);
            }
        }
    }

    /// A sentence for the daemon's log.
    pub(crate) fn log(&mut self, text: String) {
        self.effects.push_back(Effect::Log(text));
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

    pub(crate) fn job(&mut self, j: MuxJob) {
        self.effects.push_back(Effect::Mux(j));
    }

    /// Sends `j` to the backend at `at` (the daemon's clock), from the
    /// first tick at or after it.
    pub(crate) fn job_at(&mut self, at: Duration, j: MuxJob) {
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

    /// Asks the backend for a pane listing (sent at the end of the tick
    /// that follows, with whatever that tick publishes).
    fn reconcile(&mut self) {
        self.list_due = true;
    }

    /// Handles one input, given at `now`.
    pub fn handle(&mut self, now: Instant, input: Input) {
        self.set_clock(now);
        let from = self.events.len();
        self.dispatch_input(input);
        self.answer_waits(from);
    }

    /// Pane output read from pipe `conn` at `at`: the same as
    /// [`Core::handle`] with [`Input::TapData`], for a caller that keeps
    /// the buffer (the daemon reuses it for the next read).
    pub fn handle_output(&mut self, now: Instant, conn: u64, bytes: &[u8], at: Instant) {
        self.set_clock(now);
        let from = self.events.len();
        self.tap_data(conn, bytes, at);
        self.answer_waits(from);
    }

    fn dispatch_input(&mut self, input: Input) {
        match input {
            Input::TapHello { conn, pane } => {
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
            Input::TapData { conn, bytes, at } => self.tap_data(conn, &bytes, at),
            Input::TapSalvaged { conn, salvaged, at } => self.tap_salvaged(conn, &salvaged, at),
            Input::TapGap { conn } => {
                if let Some(pane) = self.conns.get(&conn).copied() {
                    if let Some(p) = self.panes.get_mut(&pane) {
                        p.det.output_dropped();
                    }
                    self.job(MuxJob::Capture(pane, CapturePurpose::Resync));
                }
            }
            Input::TapClosed { conn } => self.tap_closed(conn),
            Input::Listed { panes, clients } => self.on_listed(panes, clients),
            Input::ServerGone => self.stopping = true,
            Input::PersistFailed => self.persist = true,
            Input::Captured {
                pane,
                screen,
                purpose,
            } => self.on_captured(pane, screen, purpose),
            Input::TapInstalled { pane, outcome } => {
                if let Some(p) = self.panes.get_mut(&pane) {
                    match outcome {
                        TapOutcome::Tapped => {
                            if p.tap != TapState::Connected {
                                p.tap = TapState::Installed;
                                p.tap_since = self.clock;
                            }
                        }
                        TapOutcome::Foreign | TapOutcome::Failed(_) => p.tap = TapState::Polling,
                    }
                }
            }
            // Whatever the request changes is published in the next tick.
            Input::Control { id, req } => self.control(id, req),
            Input::Poke => self.reconcile(),
            Input::RelayHello { conn, pid } => {
                self.relays.insert(conn, pid);
                self.relays_changed();
            }
            Input::RelayGone { conn } => {
                if self.relays.remove(&conn).is_some() {
                    self.relays_changed();
                }
            }
            Input::GuardHello { token } => {
                if self.guard.token.as_deref() == Some(token.as_str()) {
                    self.guard.connected = true;
                    self.guard.failures = 0;
                }
            }
            Input::GuardClosed { token } => {
                if self.guard.token.as_deref() == Some(token.as_str()) && !self.stopping {
                    self.log(
                        "the guard process ended while the daemon runs; starting another".into(),
                    );
                    self.install_guard();
                }
            }
            Input::Remote {
                name,
                generation,
                ev,
            } => self.on_remote(name, generation, ev),
            Input::JobsEnded => self.jobs_ended(),
            Input::LimitResumed { pane, outcome } => {
                self.resume_done(pane, outcome);
                self.touched.insert(pane);
            }
            Input::SessionFile { pane, path, read } => self.on_session_file(pane, path, read),
            Input::Remotes { config, reply } => self.remotes(config, reply),
            Input::Done { reply, result } => {
                self.effects.push_back(Effect::Reply { id: reply, result })
            }
        }
    }

    /// Pane output read from pipe `conn` at `at`: fed to its pane's
    /// detector, and the pane visited when something falls due.
    fn tap_data(&mut self, conn: u64, bytes: &[u8], at: Instant) {
        // Read after the loop last set the clock: never fed in the
        // table's future.
        self.set_clock(at);
        let at = self.at(at);
        if let Some(pane) = self.conns.get(&conn).copied() {
            if let Some(p) = self.panes.get_mut(&pane) {
                if p.seeded {
                    p.det.feed(at, bytes);
                    p.tape.output(at, bytes, p.det.screen());
                    p.watch.on_output(at);
                    p.check.output(at);
                    // Visit the pane only when something is due: the
                    // detector coalesces frames into one evaluation
                    // per interval, so most chunks need no tick.
                    let due = p.due();
                    trace!(
                        self,
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

    /// OSC 7501 reports saved from output the pipe reader had to drop
    /// (pipe `conn`, at `at`): taken before the gap.
    fn tap_salvaged(&mut self, conn: u64, salvaged: &tend_detector::psp::Salvaged, at: Instant) {
        self.set_clock(at);
        let at = self.at(at);
        let Some(pane) = self.conns.get(&conn).copied() else {
            return;
        };
        if let Some(p) = self.panes.get_mut(&pane) {
            p.det.feed_salvaged(at, salvaged);
            self.touched.insert(pane);
            trace!(
                self,
                "salvaged pane={pane} reports={} given_up={}",
                salvaged.bodies.len(),
                salvaged.given_up
            );
        }
    }

    /// Pipe `conn` closed.
    fn tap_closed(&mut self, conn: u64) {
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
                    self.effects.push_back(Effect::Mux(MuxJob::Retap(pane)));
                }
            }
        }
    }

    /// The relays registered now, given to every pane's watch; each pane
    /// is sampled again soon, so a relay's word is taken (or no longer)
    /// within a sample of its hello (or its end).
    fn relays_changed(&mut self) {
        let pids = self.relay_pids();
        let now = self.now();
        for (id, p) in self.panes.iter_mut() {
            p.watch.set_relays(&pids);
            p.watch.foreground_hint(now);
            self.touched.insert(*id);
        }
    }

    /// The pids of the relays registered now.
    pub(crate) fn relay_pids(&self) -> Vec<u32> {
        self.relays.values().copied().collect()
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
                    state: e.and_then(|e| e.state),
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
                    resets_at: e.and_then(|e| e.resets_at),
                    reset: e.and_then(|e| e.resets_at).map(|at| self.clock_text(at)),
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
                band: v.band.and_then(PaneBand::agent),
                reason: v.reason,
                since: v.since.unwrap_or(0.0),
                id: v.pane,
            });
        }
        for (name, l) in &self.links {
            if l.state == crate::links::LinkState::Down {
                facts.down.push(name.clone());
            }
        }
        facts
    }

    /// What changed since the last publish, and the clients whose status
    /// line to redraw (`None`: nothing to send now). Changes that can wait
    /// ([`publish::can_wait`]) are held until `listing` (the tick that
    /// sends the periodic listing, at most [`RECONCILE_EVERY`]
    /// later), so that they share its tmux process.
    pub(crate) fn publish(&mut self, listing: bool) -> Option<(Vec<FactUpdate>, Vec<String>)> {
        if !self.listed_once {
            return None;
        }
        if self.backend.status == StatusForm::Overview {
            // The backend pushes it when it differs from the last one.
            let o = overview::overview(&self.rows(), &self.remote_rows());
            self.job(MuxJob::Overview(o));
            return None;
        }
        let mut dropped = Vec::new();
        let new = publish::compute(&self.rows(), &self.remote_rows(), &mut dropped);
        for t in dropped {
            self.log(format!(
                "a jump target that is not a pane id was left out: {t:?}"
            ));
        }
        let ups = publish::diff(&self.published, &new);
        self.held = !ups.is_empty() && !listing && publish::can_wait(&ups);
        if self.held {
            trace!(self, "publish held updates={}", ups.len());
            return None;
        }
        if ups.is_empty() {
            return None;
        }
        trace!(self, "publish updates={}", ups.len());
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
    pub fn published_keys(&self) -> Vec<Fact> {
        self.published.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests;
