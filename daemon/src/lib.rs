//! tend's daemon: one per tmux server or zellij session, the loop around
//! the pane table (`tend_core::Core`). It listens on two Unix sockets
//! (control requests; taps handing over their pane's pipe), reads every pane's pipe on its own
//! event loop's read ticks ([`pipes`]), and runs every multiplexer command
//! on one backend thread: [`worker`] for tmux, [`zellij`] for zellij
//! ([`mux`] says which).
//!
//! ```text
//!  tend tap ──pipe fd──▶ tap socket ─▶ pipes reader ─▶ output ──┐ (each pane's pipe, on the read ticks)
//!  tend CLI ──JSON─────▶ control ─────────────────────▶ requests ┼─▶ Core (pane table) ─▶ jobs ─▶ backend
//!  tmux hooks ─poke────▶ control ─────────────────────▶ requests ┘        ▲                        │
//!                                                                       └── results as events ───┘
//! ```
//!
//! Requests have their own queue and are served first; pane output is fed
//! to the table [`FEED_ROUND`] at a time, so a flooding pane delays a
//! request by one round, not by all it printed.
//!
//! The loop (`serve`) is a short sequence of named steps: read what is
//! ready (control requests first, then pane output for one round at
//! most), hand each to the core with the time, run the core's timers, and
//! perform what it asks (`Driver::perform`): jobs to the backend thread,
//! answers to their connections, link tasks started and stopped, the state
//! file, the log. Everything that waits — sockets, pipes, threads, ssh,
//! files, signals — lives here; everything that decides lives in the core.
//!
//! Besides the loop, this crate holds what the daemon does for itself: the
//! remotes' links ([`remote`], [`links`]), desktop and tmux notifications
//! ([`notify`]), the state file ([`store`]), the tap (`tend tap`, [`tap`]).
//! What it reads of the user's setup — `config.toml` (once, in
//! [`Options`]), the folders, the manifests, which keys to bind — is
//! `tend-config`'s, shared with the commands.
//!
//! The `tend` binary calls this crate only to be the daemon's parts: its
//! entry points are [`run`] with [`Options`] (`tend daemon`), [`run_tap`]
//! (`tend tap`, which tmux starts for the daemon) and [`clean_up`] (`tend
//! stop` when no daemon is left to undo what it installed). The commands
//! speak to a running daemon only in `tend-protocol`'s types.

pub mod conversations;
mod deadline;
mod doorbell;
pub mod event;
pub mod guard;
pub mod ipc;
pub mod links;
pub mod notify;
mod options;
pub mod pipes;
pub mod project;
pub mod published;
pub mod remote;
mod restore;
pub mod sessions;
pub mod store;
pub mod tap;
pub mod trace;
pub mod worker;
pub mod zellij;

pub use tend_core::{mux, publish, status, tape};

/// Removes what tend installs in tmux (`tend stop` when no daemon is left
/// to do it).
pub use worker::remove_everything as clean_up;

/// `tend tap`: hands tmux's end of a pane's pipe to the daemon and exits.
pub use tap::run as run_tap;

// What the daemon reads of the user's setup, shared with the commands.
pub(crate) use tend_config::say;
use tend_config::{config, error, keys, manifests, paths};

use crate::error::ErrorKind;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tend_core::{Core, Effect, Input, MuxJob, RemotesConfig, RequestId};

use self::event::{Event, ReplyTx};
use self::worker::Job;
use crate::error::CliError;
use tend_platform::sampler::Sampler;

pub use options::Options;
pub use tend_core::RECONCILE_EVERY;

/// Longest the event loop spends on pane output before it serves the
/// control requests and ticks the pane table again. Output comes in pieces
/// of at most [`pipes::FEED_CHUNK`] bytes, so a round lasts about this long
/// plus one piece.
pub const FEED_ROUND: Duration = Duration::from_millis(10);

/// The grid the pane table's own deadlines (evaluations, probes, timers)
/// are rounded up to while no pane prints, so that the panes' deadlines
/// share wake-ups instead of each waking the daemon on its own schedule.
/// While panes print, the pipes' read ticks play that part
/// ([`pipes::Cadence`]).
const DEADLINE_GRID: Duration = Duration::from_millis(20);

/// The first instant of the [`DEADLINE_GRID`] after `at` (multiples of it
/// since the first call, the same for every pane).
fn next_grid_tick(at: std::time::Instant) -> std::time::Instant {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let epoch = *EPOCH.get_or_init(std::time::Instant::now);
    let since = at.saturating_duration_since(epoch).as_nanos();
    let step = DEADLINE_GRID.as_nanos();
    let ticks = since / step + 1;
    epoch + Duration::from_nanos((ticks * step).min(u64::MAX as u128) as u64)
}

/// When the loop wakes next: for the pane table's next deadline, `wait`
/// from now, and for the pipes. While panes print (the last read tick
/// found output, [`pipes::Cadence::printing`]), only on the pipes' read
/// ticks: the table's deadlines due before the next read wait for it, so
/// that reads, evaluations and identity probes of all panes share one
/// wake-up instead of each waking the daemon on its own schedule.
/// Otherwise on the table's deadline rounded up to a shared grid
/// ([`next_grid_tick`]), the read ticks left before the reader goes quiet,
/// or the doorbell. The deadlines
/// are soft (an evaluation interval, a probe gap): up to one tick late is
/// within their meaning.
///
/// A quiet reader with no doorbell (`bell`: whether one is armed) is read
/// on ticks anyway.
fn wake_at(wait: Duration, reader: &pipes::Reader, bell: bool) -> std::time::Instant {
    let now = std::time::Instant::now();
    let read = match reader.next_wake() {
        None if !bell => Some(now + pipes::READ_EVERY),
        read => read,
    };
    first_wake(now, wait, read, reader.cadence())
}

/// [`wake_at`] at `now`, the reader's next wake being `read`.
fn first_wake(
    now: std::time::Instant,
    wait: Duration,
    read: Option<std::time::Instant>,
    cadence: &pipes::Cadence,
) -> std::time::Instant {
    let table = if wait.is_zero() {
        now
    } else {
        next_grid_tick(now + wait - Duration::from_nanos(1))
    };
    match read {
        // Once a tick found nothing (quiet or not yet), the table's
        // deadlines are served on time: nothing prints to share a wake-up
        // with, and an agent that stopped streaming is drawing its dialog.
        Some(read) if !cadence.printing() => read.min(table),
        Some(read) => read.min(cadence.align(table)),
        None => table,
    }
}

/// Set to `1` to have the daemon run a `tmux` process for each command
/// instead of speaking tmux's protocol over the socket.
pub const TMUX_PROCESS_ENV: &str = "TEND_TMUX_PROCESS";

/// Runs the daemon until `tend stop`, a signal, or the tmux server's end.
/// On the way out it removes what it installed in tmux.
pub fn run(mut opts: Options) -> Result<(), CliError> {
    one_malloc_arena();
    // The daemon runs tmux commands all the time (the listing every second,
    // publishes as states change): over the socket, not a process each
    // (decision 0013). `TEND_TMUX_PROCESS=1` keeps the process per command,
    // to compare, or should a tmux build refuse the socket's protocol in a
    // way tend does not notice.
    if std::env::var_os(TMUX_PROCESS_ENV).is_none_or(|v| v.is_empty() || v == "0") {
        opts.server = opts.server.clone().without_client_process();
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            CliError::new(
                ErrorKind::Runtime,
                format!("cannot start the async runtime: {e}"),
            )
        })?;
    rt.block_on(serve(opts))
}

/// One malloc arena for the whole daemon, asked before any thread starts.
/// glibc gives each thread that allocates an arena of its own (the pipe
/// reader, the multiplexer worker, the manifest loader, tokio's blocking
/// pool), and each keeps its free memory apart: measured at 50 panes, one
/// arena held the daemon's RSS ~0.9 MB lower. The threads allocate little
/// and rarely at the same moment, so sharing costs no measurable time.
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called before
    // the daemon starts any thread.
    unsafe {
        nix::libc::mallopt(nix::libc::M_ARENA_MAX, 1);
    }
}

/// The daemon's side of the core: performs what it asks and keeps what
/// only the daemon can hold (answers' senders, link tasks, the bus).
struct Driver {
    core: Core,
    /// The backend thread's inbox.
    jobs: std::sync::mpsc::Sender<Job>,
    /// Events for `tend events`, `wait`, `prompt --wait` and notifications.
    bus: tokio::sync::broadcast::Sender<tend_protocol::BusEvent>,
    /// Where the answers of requests in the core's hands go.
    replies: HashMap<RequestId, ReplyTx>,
    next_request: u64,
    /// The running links to remotes.
    links: HashMap<String, tokio::task::JoinHandle<()>>,
    /// Where links report (the control queue: a snapshot is small and
    /// must not wait behind a flood of pane output).
    link_tx: tokio::sync::mpsc::Sender<Event>,
    /// The persistent state file.
    state: PathBuf,
    /// Whether a save may write it (not over a file never read).
    save_gate: store::SaveGate,
    /// When the user's zone was last read (a daylight-saving change moves
    /// the reset times agents draw without one).
    zone_read: Instant,
    /// The agents' session files the core follows (`None`: no watcher on
    /// this platform).
    sessions: Option<sessions::Sessions>,
}

/// The user's zone now, in seconds east of UTC.
fn utc_offset() -> i32 {
    chrono::Local::now().offset().local_minus_utc()
}

/// How often the user's zone is read again.
const ZONE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

impl Driver {
    /// Hands one event to the core, at `now`.
    fn take(&mut self, now: Instant, ev: Event) {
        match ev {
            Event::Core(input) => self.core.handle(now, input),
            // The ticket is returned when the core has taken the bytes.
            Event::Output(input, _ticket) => self.core.handle(now, input),
            Event::Control { req, reply } => {
                self.next_request += 1;
                let id = RequestId(self.next_request);
                self.replies.insert(id, reply);
                self.core.handle(now, Input::Control { id, req });
            }
        }
        self.perform();
    }

    /// Pane output for the core (as [`Driver::take`] of an
    /// [`Event::Output`]), the buffer left to the caller.
    fn take_output(&mut self, now: Instant, conn: u64, bytes: &[u8], at: Instant) {
        self.core.handle_output(now, conn, bytes, at);
        self.perform();
    }

    /// Runs the core's timers at `now`, then performs what they asked.
    fn timeout(&mut self, now: Instant) {
        if now.saturating_duration_since(self.zone_read) >= ZONE_EVERY {
            self.zone_read = now;
            self.core.set_utc_offset(utc_offset());
        }
        self.core.handle_timeout(now);
        self.perform();
    }

    /// Performs the core's effects in order, then passes its events on.
    fn perform(&mut self) {
        while let Some(effect) = self.core.poll_effect() {
            self.perform_one(effect);
        }
        while let Some(ev) = self.core.poll_event() {
            // No subscriber is no error: nobody listens right now.
            let _ = self.bus.send(ev);
        }
    }

    fn perform_one(&mut self, effect: Effect) {
        match effect {
            Effect::Mux(job) => {
                let _ = self.jobs.send(Job::Mux(job));
            }
            Effect::Reply { id, result } => {
                if let Some(tx) = self.replies.remove(&id) {
                    let _ = tx.send(result);
                }
            }
            Effect::Persist(text) => {
                let text = match self.save_gate.before_save(&self.state, unix_now() as u64) {
                    store::MaySave::Yes => text,
                    store::MaySave::AfterMerging(saved) => {
                        self.core.restore_late(*saved);
                        self.core.state_text()
                    }
                    store::MaySave::No => {
                        // Asked again a second later, as after a failed
                        // write.
                        self.core.handle(Instant::now(), Input::PersistFailed);
                        return;
                    }
                };
                let _ = self.jobs.send(Job::Persist {
                    path: self.state.clone(),
                    text,
                });
            }
            Effect::StartLink {
                name,
                generation,
                remote: r,
                link,
                stderr,
            } => {
                let task = links::start(&name, &r, &link, generation, stderr, self.link_tx.clone());
                if let Some(old) = self.links.insert(name, task) {
                    old.abort();
                }
            }
            Effect::StopLink { name } => {
                // The task owns the ssh child (kill_on_drop): aborting it
                // ends ssh.
                if let Some(task) = self.links.remove(&name) {
                    task.abort();
                }
            }
            Effect::LoadRemotes { reply } => self.core.handle(
                Instant::now(),
                Input::Remotes {
                    config: remotes_config(),
                    reply: Some(reply),
                },
            ),
            Effect::FollowFiles(files) => {
                if let Some(s) = &self.sessions {
                    s.follow(files);
                }
            }
            Effect::Log(text) => crate::say!("{text}"),
            Effect::Trace { at_us, line } => trace::line_at(at_us, &line),
        }
    }

    /// Ends the links (their ssh with them).
    fn stop_links(&mut self) {
        for (_, task) in self.links.drain() {
            task.abort();
        }
    }
}

/// The remotes as `config.toml` says now (`remotes.reload`).
fn remotes_config() -> Result<RemotesConfig, String> {
    let cfg = crate::config::load().map_err(|e| e.message)?;
    Ok(RemotesConfig {
        remotes: cfg.remotes,
        link: cfg.remote_link,
    })
}

/// Unix time now, in seconds.
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The manifests take a while to load (their patterns are compiled):
/// loaded on a thread of their own while the backend sets the multiplexer
/// up and lists the panes, so that a restarted daemon taps them as soon as
/// its pane table exists.
fn start_loading_manifests() -> Result<
    std::thread::JoinHandle<(
        tend_detector::Registry,
        Vec<tend_detector::manifest::ManifestError>,
    )>,
    CliError,
> {
    std::thread::Builder::new()
        .name("tend-manifests".into())
        .spawn(crate::manifests::load)
        .map_err(|e| {
            CliError::new(
                ErrorKind::Manifests,
                format!("cannot start loading the manifests: {e}"),
            )
        })
}

/// SIGTERM or SIGINT, waited on by a task of its own, so that the loop
/// polls one receiver per round rather than two signal streams (each poll
/// of which built a future anew: ~2 % of the loop's time with ten busy
/// panes).
fn stop_signal() -> Result<tokio::sync::oneshot::Receiver<()>, CliError> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut sigterm = signal(SignalKind::terminate())
        .map_err(|e| CliError::new(ErrorKind::Signal, format!("cannot watch SIGTERM: {e}")))?;
    let mut sigint = signal(SignalKind::interrupt())
        .map_err(|e| CliError::new(ErrorKind::Signal, format!("cannot watch SIGINT: {e}")))?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        tokio::select! {
            _ = sigterm.recv() => {}
            _ = sigint.recv() => {}
        }
        let _ = tx.send(());
    });
    Ok(rx)
}

/// The process source, and the doorbell that rings when it sees a pane's
/// foreground job end (none where the platform cannot, or where the
/// doorbell cannot be armed: the source then has no exit watch, and panes
/// are probed instead). The portable backend is asked at each round
/// (`polled`).
fn process_source() -> (Sampler, doorbell::Doorbell, bool) {
    let mut sampler = Sampler::new();
    let mut exits = doorbell::Doorbell::new(
        sampler.exits.doorbell(),
        "agents ending (panes are probed instead)",
    );
    let polled = sampler.exits.polled();
    if !polled && !exits.arm() {
        sampler.exits = tend_platform::sampler::ExitWatch::disabled();
    }
    (sampler, exits, polled)
}

async fn serve(opts: Options) -> Result<(), CliError> {
    // The backend is decided once, before any part of it is made.
    crate::say!(
        "platform backend {} (docs/decisions/0009-platform-backends.md)",
        tend_platform::backend()
    );
    let manifests = start_loading_manifests()?;
    let control = ipc::bind(&opts.control)?;
    let taps = ipc::bind_std(&opts.tap)?;
    let reader = pipes::Reader::new(taps).map_err(|e| {
        CliError::new(
            ErrorKind::Pipes,
            format!("cannot watch the tap socket for the panes' pipes: {e}"),
        )
    })?;
    let (ev_tx, ev_rx) = tokio::sync::mpsc::channel::<Event>(4096);
    // Control connections have their own queue, read before pane output.
    let (ctl_tx, ctl_rx) = tokio::sync::mpsc::channel::<Event>(1024);
    let (job_tx, job_rx) = std::sync::mpsc::channel();
    let (bus, _) = tokio::sync::broadcast::channel(1024);
    start_notifications(&opts, &bus);
    // The backend: the one thread that talks to the multiplexer.
    let backend = match &opts.zellij {
        Some(session) => zellij::spawn(session.clone(), job_rx, ev_tx.clone()),
        None => worker::spawn(opts.clone(), job_rx, ev_tx),
    };
    let guards = ipc::Guards::new();
    tokio::spawn(ipc::accept_control(
        control,
        ctl_tx.clone(),
        bus.clone(),
        guards.clone(),
    ));
    let _ = job_tx.send(Job::Mux(MuxJob::Setup));
    let _ = job_tx.send(Job::Mux(MuxJob::List));
    let registry = manifests_loaded(manifests).await?;
    let (sampler, exits, exits_polled) = process_source();
    let core = core_for(&opts, registry, sampler);
    let mut d = Driver {
        core,
        jobs: job_tx.clone(),
        bus,
        replies: HashMap::new(),
        next_request: 0,
        links: HashMap::new(),
        // A file read must not wait behind a flood of pane output either.
        sessions: sessions::Sessions::spawn(ctl_tx.clone()),
        link_tx: ctl_tx,
        state: opts.state.clone(),
        save_gate: store::SaveGate::default(),
        zone_read: Instant::now(),
    };
    d.begin(&opts.config);
    let bell = pipes_doorbell(&reader);
    let mut rounds = Rounds {
        reader,
        ev_rx,
        ctl_rx,
        signalled: stop_signal()?,
        deadline: deadline::Deadline::new(),
        backlog: VecDeque::new(),
        bell,
        exits,
        exits_polled,
        rang: false,
    };
    while rounds.next(&mut d).await {}
    d.stop_links();
    d.save_last();
    // Leave the multiplexer as we found it: taps, hooks, options, bindings.
    let _ = job_tx.send(Job::Cleanup);
    drop(job_tx);
    drop(d);
    let _ = tokio::task::spawn_blocking(move || backend.join()).await;
    // `@tend_daemon` is gone with the other options: the guard can go
    // without tmux cleaning anything.
    guards.dismiss(Duration::from_secs(3)).await;
    let _ = std::fs::remove_file(&opts.control);
    let _ = std::fs::remove_file(&opts.tap);
    Ok(())
}

/// The agents' manifests, once their thread has loaded them; the ones
/// that could not be used are said in the log.
async fn manifests_loaded(
    loading: std::thread::JoinHandle<(
        tend_detector::Registry,
        Vec<tend_detector::manifest::ManifestError>,
    )>,
) -> Result<tend_detector::Registry, CliError> {
    let (registry, errors) = tokio::task::spawn_blocking(move || loading.join())
        .await
        .map_err(|e| {
            CliError::new(
                ErrorKind::Manifests,
                format!("loading the manifests failed: {e}"),
            )
        })?
        .map_err(|_| {
            CliError::new(
                ErrorKind::Manifests,
                "loading the manifests failed (a panic)",
            )
        })?;
    for e in &errors {
        crate::say!("manifest not used: {e}");
    }
    Ok(registry)
}

/// The pane table the daemon drives, with its process source, projects
/// and conversations' stores.
fn core_for(opts: &Options, registry: tend_detector::Registry, sampler: Sampler) -> Core {
    let config = tend_core::Config {
        detector: Arc::new(opts.config.detector.clone()),
        registry,
        backend: match opts.mux() {
            mux::Mux::Tmux => worker::BACKEND,
            mux::Mux::Zellij => zellij::BACKEND,
        },
        trace: trace::on(),
        daemon_id: std::process::id(),
        limit_resume: opts.config.limits.policy(),
        utc_offset: utc_offset(),
        home: std::env::var("HOME").ok(),
    };
    let hz = tend_core::ProcSource::ticks_per_sec(&sampler);
    let mut core = Core::new(
        config,
        Box::new(sampler),
        Box::new(project::ProjectCache::default()),
        Instant::now(),
        unix_now(),
    );
    core.set_conversations(Box::new(conversations::Stores::new(hz)));
    core
}

impl Driver {
    /// What the table starts from: the state file, the remotes as
    /// `config` names them, the guard.
    fn begin(&mut self, config: &crate::config::Config) {
        let loaded = store::load(&self.state, unix_now() as u64);
        for w in &loaded.warnings {
            crate::say!("{w}");
        }
        self.save_gate = store::SaveGate::after_load(&loaded);
        self.core.restore(loaded);
        let remotes = RemotesConfig {
            remotes: config.remotes.clone(),
            link: config.remote_link.clone(),
        };
        self.take(
            Instant::now(),
            Event::Core(Input::Remotes {
                config: Ok(remotes),
                reply: None,
            }),
        );
        // After Setup (sent first), so that its sweep of a dead daemon's
        // options cannot remove this daemon's token.
        self.core.install_guard();
        self.perform();
    }

    /// The state file's last write, unless it was never read.
    fn save_last(&mut self) {
        let last = match self.save_gate.before_save(&self.state, unix_now() as u64) {
            store::MaySave::Yes => Some(self.core.state_text()),
            store::MaySave::AfterMerging(saved) => {
                self.core.restore_late(*saved);
                Some(self.core.state_text())
            }
            store::MaySave::No => None,
        };
        if let Some(Err(e)) = last.map(|text| store::write_atomic(&self.state, &text)) {
            crate::say!("{e}");
        }
    }
}

/// What the loop waits on between rounds, and the events not handled
/// yet.
struct Rounds {
    reader: pipes::Reader,
    ev_rx: tokio::sync::mpsc::Receiver<Event>,
    ctl_rx: tokio::sync::mpsc::Receiver<Event>,
    signalled: tokio::sync::oneshot::Receiver<()>,
    deadline: deadline::Deadline,
    /// Events from the pipes and the backend not handled yet, in the
    /// order they came (a re-seed's capture must not be overtaken by
    /// output read before it). Bounded: the reader drops the output of a
    /// pane whose output is not consumed (pipes::MAX_PENDING).
    backlog: VecDeque<Event>,
    bell: doorbell::Doorbell,
    exits: doorbell::Doorbell,
    /// The platform's exit watch is asked each round (portable backend).
    exits_polled: bool,
    /// The pipes' doorbell rang while the loop waited.
    rang: bool,
}

impl Rounds {
    /// One round: wait for what comes first, read the pipes, hand what is
    /// queued to the core (control requests first, pane output for one
    /// round at most), run its timers. False when the daemon stops.
    async fn next(&mut self, d: &mut Driver) -> bool {
        // While no pane prints, the pipes themselves wake the loop.
        let armed = self.arm_bell();
        if !self.wait(d, armed).await {
            return false;
        }
        let now = Instant::now();
        // The pipes, when a read is due (or hot pipes to drain): every
        // round, so that a flood being fed never keeps them unread longer
        // than a round.
        let rang = std::mem::take(&mut self.rang);
        self.reader.poll(
            now,
            rang || (self.reader.quiet() && !armed),
            &mut self.backlog,
        );
        if self.exits_polled {
            // Agents that ended since the last round (the portable
            // backend's watch, see platform/src/portable/exits.rs).
            d.take(now, Event::Core(Input::JobsEnded));
        }
        self.feed(d, now);
        d.timeout(Instant::now());
        !d.core.is_stopping()
    }

    /// Arms the pipes' doorbell while no pane prints (disarms it while
    /// one does); whether it is armed.
    fn arm_bell(&mut self) -> bool {
        if !self.reader.quiet() {
            self.bell.disarm();
            return false;
        }
        if self.bell.follows() && !self.bell.armed() {
            // The pipes of the moment (they came and went meanwhile).
            self.bell
                .replace(self.reader.doorbell().unwrap_or_default());
        }
        self.bell.arm()
    }

    /// Waits for the first of: a control request, a signal, an event from
    /// the pipes or the backend, a doorbell, the table's next deadline.
    /// False when a queue closed.
    async fn wait(&mut self, d: &mut Driver, armed: bool) -> bool {
        let wait = d
            .core
            .poll_timeout()
            .saturating_duration_since(Instant::now());
        let idle = self.backlog.is_empty();
        tokio::select! {
            // Control requests first: they never wait behind pane output.
            biased;
            ev = self.ctl_rx.recv() => {
                let Some(ev) = ev else { return false };
                d.take(Instant::now(), ev);
            }
            _ = &mut self.signalled => d.core.stop(),
            ev = self.ev_rx.recv(), if idle => {
                let Some(ev) = ev else { return false };
                self.backlog.push_back(ev);
            }
            _ = self.bell.ring(), if idle => self.rang = true,
            _ = self.exits.ring() => d.take(Instant::now(), Event::Core(Input::JobsEnded)),
            _ = self.deadline.until(wake_at(wait, &self.reader, armed)), if idle => {}
            // Behind (a flood on a slow machine): the control connections'
            // tasks and the sockets are served before the next round.
            _ = tokio::task::yield_now(), if !idle => {}
        }
        true
    }

    /// What is queued goes to the core: control requests first, then pane
    /// output for one round at most, so that a flooding pane delays a
    /// control request by one round, not by all it printed.
    fn feed(&mut self, d: &mut Driver, now: Instant) {
        while let Ok(ev) = self.ctl_rx.try_recv() {
            d.take(now, ev);
        }
        // Whatever else is already queued, but no more: the backend keeps
        // queueing while the core works.
        for _ in 0..self.ev_rx.len() {
            match self.ev_rx.try_recv() {
                Ok(ev) => self.backlog.push_back(ev),
                Err(_) => break,
            }
        }
        let round = Instant::now();
        while let Some(ev) = self.backlog.pop_front() {
            match ev {
                // The buffer goes back to the reader once the core has
                // taken its bytes.
                Event::Output(Input::TapData { conn, bytes, at }, ticket) => {
                    d.take_output(round, conn, &bytes, at);
                    drop(ticket);
                    self.reader.recycle(bytes);
                }
                ev => d.take(round, ev),
            }
            if round.elapsed() >= FEED_ROUND {
                break;
            }
        }
    }
}

/// Notifications (crate::notify): read the bus, delivered on their own.
/// tmux shows a notification as a message in its clients; zellij's command
/// line cannot, and has the desktop and the plugin's status.
fn start_notifications(
    opts: &Options,
    bus: &tokio::sync::broadcast::Sender<tend_protocol::BusEvent>,
) {
    let notify_cfg = opts.config.notifications.clone();
    let terminal = match opts.mux() {
        mux::Mux::Tmux => Some(opts.server.clone()),
        mux::Mux::Zellij => None,
    };
    tokio::spawn(crate::notify::run(bus.subscribe(), notify_cfg, terminal));
}

/// The doorbell of the panes' pipes: rings when one is readable while no
/// pane prints (none: they are read on ticks).
fn pipes_doorbell(reader: &pipes::Reader) -> doorbell::Doorbell {
    let what = "the panes' pipes (read on ticks instead)";
    if reader.doorbell_follows() {
        return doorbell::Doorbell::following(what);
    }
    doorbell::Doorbell::new(
        reader
            .doorbell()
            .map_err(|e| crate::say!("no doorbell for the pipes ({e}); they are read on ticks"))
            .ok()
            .and_then(|fds| fds.into_iter().next()),
        what,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_round_up_to_one_grid_shared_by_every_pane() {
        // The grid starts at the first call.
        next_grid_tick(std::time::Instant::now());
        let at = std::time::Instant::now();
        let a = next_grid_tick(at);
        assert!(a > at && a - at <= DEADLINE_GRID, "{:?}", a - at);
        // A later deadline of another pane within the same step lands on
        // the same instant; a deadline on a tick goes to the next one.
        assert_eq!(next_grid_tick(a - Duration::from_nanos(1)), a);
        assert_eq!(next_grid_tick(a), a + DEADLINE_GRID);
        assert_eq!(next_grid_tick(a + DEADLINE_GRID / 2), a + DEADLINE_GRID);
    }

    /// While the last read tick found output, a pane's deadline before
    /// the next tick waits for it (one wake-up for reads and evaluations);
    /// once a tick found nothing, it is served on its own grid tick, before
    /// the next read: an agent that stopped streaming may be drawing its
    /// dialog, and its evaluation is not held back a tick.
    #[test]
    fn deadlines_wait_for_the_read_tick_only_while_panes_print() {
        let grid = DEADLINE_GRID;
        assert!(
            grid + Duration::from_millis(5) < pipes::READ_EVERY,
            "the test needs a grid finer than the read tick"
        );
        let t0 = std::time::Instant::now();
        let mut cadence = pipes::Cadence::new();
        cadence.read(t0, true);
        assert!(cadence.printing());
        let wait = Duration::from_millis(5);
        let read = cadence.next_tick();
        assert_eq!(read, Some(t0 + pipes::READ_EVERY));
        assert_eq!(first_wake(t0, wait, read, &cadence), t0 + pipes::READ_EVERY);

        let t1 = t0 + pipes::READ_EVERY;
        cadence.read(t1, false);
        assert!(!cadence.printing());
        let read = cadence.next_tick();
        assert_eq!(read, Some(t1 + pipes::READ_EVERY));
        let woke = first_wake(t1, wait, read, &cadence);
        assert!(woke >= t1 + wait, "{:?} early", (t1 + wait) - woke);
        assert!(woke <= t1 + wait + grid, "{:?} late", woke - (t1 + wait));
        assert!(woke < t1 + pipes::READ_EVERY);

        // Quiet (no read tick: the doorbell wakes the loop): the deadline
        // on its grid tick.
        let woke = first_wake(t1, wait, None, &cadence);
        assert!(woke >= t1 + wait && woke <= t1 + wait + grid);
    }
}
