//! The daemon: one per tmux server. It owns the pane table ([`core`]),
//! listens on two Unix sockets (control requests; taps handing over their
//! pane's pipe), reads every pane's pipe on one thread ([`pipes`]), and
//! runs every tmux command on one worker thread ([`worker`]).
//!
//! ```text
//!  tend tap ──pipe fd──▶ tap socket ─▶ pipes thread ─┐ (reads each pane's pipe on the tick)
//!  tend CLI ──JSON─────▶ control ────────────────────┼─▶ events ─▶ Core (pane table) ─▶ jobs ─▶ tmux worker
//!  tmux hooks ─poke────▶ control ────────────────────┘                 ▲                         │
//!                                                                     └── results as events ────┘
//! ```

pub mod control;
pub mod core;
pub mod guard;
pub mod ipc;
pub mod pipes;
pub mod publish;
pub mod status;
pub mod store;
pub mod worker;
pub mod zellij;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tend_detector::DetectorConfig;
use tend_tmux::Server;

use self::core::{Core, Event};
use crate::error::CliError;

/// How often panes are listed even without a hook firing (new panes also
/// arrive through break-pane, join-pane, respawn, which have no hook).
pub const RECONCILE_EVERY: Duration = Duration::from_secs(1);

/// When the loop wakes for the pane table's next deadline, `wait` from now:
/// on the pipes' batch tick ([`ipc::next_batch_tick`]), so that
/// evaluations, identity probes and tap reads of all panes share one
/// wake-up instead of each pane waking the daemon on its own schedule. The
/// deadlines are soft (an evaluation interval, a probe gap): up to one tick
/// late is within their meaning.
fn wake_at(wait: Duration) -> std::time::Instant {
    let now = std::time::Instant::now();
    if wait.is_zero() {
        return now;
    }
    ipc::next_batch_tick(now + wait - Duration::from_nanos(1))
}

/// What the daemon needs to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The tmux server.
    pub server: Server,
    /// Control socket path.
    pub control: PathBuf,
    /// Tap socket path.
    pub tap: PathBuf,
    /// This executable (for tap, hook and key commands).
    pub tend_bin: PathBuf,
    /// Detector timings.
    pub detector: DetectorConfig,
    /// The persistent state file (parks, snoozes, flags, reports).
    pub state: PathBuf,
    /// Key bindings from config.toml.
    pub keys: crate::config::KeysConfig,
}

/// Runs the daemon until `tend stop`, a signal, or the tmux server's end.
/// On the way out it removes what it installed in tmux.
pub fn run(opts: Options) -> Result<(), CliError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new("runtime", format!("cannot start the async runtime: {e}")))?;
    rt.block_on(serve(opts))
}

async fn serve(opts: Options) -> Result<(), CliError> {
    let control = ipc::bind(&opts.control)?;
    let taps = ipc::bind_std(&opts.tap)?;
    let (ev_tx, mut ev_rx) = tokio::sync::mpsc::channel::<Event>(4096);
    let (job_tx, job_rx) = std::sync::mpsc::channel();
    let (bus, _) = tokio::sync::broadcast::channel(1024);
    // Notifications (crate::notify): reads the bus, delivers on its own.
    let notify_cfg = crate::config::load_notifications_config().unwrap_or_else(|e| {
        eprintln!("tend: notifications use the defaults: {e}");
        Default::default()
    });
    tokio::spawn(crate::notify::run(
        bus.subscribe(),
        notify_cfg,
        opts.server.clone(),
    ));
    // End notifications.
    let worker = worker::spawn(opts.clone(), job_rx, ev_tx.clone());
    let guards = ipc::Guards::new();
    tokio::spawn(ipc::accept_control(
        control,
        ev_tx.clone(),
        bus.clone(),
        guards.clone(),
    ));
    pipes::spawn(taps, ev_tx.clone()).map_err(|e| {
        CliError::new(
            "pipes",
            format!("cannot start the thread that reads the panes' pipes: {e}"),
        )
    })?;
    let (registry, errors) = crate::manifests::load();
    for e in &errors {
        eprintln!("tend: manifest not used: {e}");
    }
    let mut core = Core::new(
        Arc::new(opts.detector.clone()),
        registry,
        job_tx.clone(),
        bus,
    );
    let now_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let loaded = store::load(&opts.state, now_unix);
    for w in &loaded.warnings {
        eprintln!("tend: {w}");
    }
    core.parks = loaded.parks;
    core.flags = loaded.flags;
    core.book = loaded.reports;
    let mut last_save = std::time::Instant::now();
    let _ = job_tx.send(worker::Job::Setup);
    // After Setup, so that its sweep of a dead daemon's options cannot
    // remove this daemon's token.
    core.install_guard();
    core.reconcile();
    let mut reconcile = tokio::time::interval(RECONCILE_EVERY);
    reconcile.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| CliError::new("signal", format!("cannot watch SIGTERM: {e}")))?;
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| CliError::new("signal", format!("cannot watch SIGINT: {e}")))?;
    let mut wait = Duration::from_millis(10);
    loop {
        tokio::select! {
            ev = ev_rx.recv() => {
                let Some(ev) = ev else { break };
                core.handle(ev);
                // Take what is already queued before publishing once, but
                // no more: the pipes thread keeps queueing while the table
                // works, and a loop that never ends would starve the
                // control connections (tasks of this same thread).
                for _ in 0..ev_rx.len() {
                    match ev_rx.try_recv() {
                        Ok(ev) => core.handle(ev),
                        Err(_) => break,
                    }
                }
                if !ev_rx.is_empty() {
                    // Behind (a flood on a slow machine): let the control
                    // connections in before the next round.
                    tokio::task::yield_now().await;
                }
            }
            _ = tokio::time::sleep_until(wake_at(wait).into()) => {}
            _ = reconcile.tick() => core.reconcile(),
            _ = sigterm.recv() => core.stopping = true,
            _ = sigint.recv() => core.stopping = true,
        }
        wait = core.tick();
        if core.persist && last_save.elapsed() >= Duration::from_secs(1) {
            core.persist = false;
            last_save = std::time::Instant::now();
            let text = store::to_text(&core.parks, &core.flags, &core.book);
            let _ = job_tx.send(worker::Job::Persist {
                path: opts.state.clone(),
                text,
            });
        }
        if core.stopping {
            break;
        }
    }
    let text = store::to_text(&core.parks, &core.flags, &core.book);
    if let Err(e) = store::write_atomic(&opts.state, &text) {
        eprintln!("tend: {e}");
    }
    // Leave tmux as we found it: taps, hooks, options, bindings.
    let _ = job_tx.send(worker::Job::Cleanup);
    drop(job_tx);
    let _ = tokio::task::spawn_blocking(move || worker.join()).await;
    // `@tend_daemon` is gone with the other options: the guard can go
    // without tmux cleaning anything.
    guards.dismiss(Duration::from_secs(3)).await;
    let _ = std::fs::remove_file(&opts.control);
    let _ = std::fs::remove_file(&opts.tap);
    Ok(())
}
