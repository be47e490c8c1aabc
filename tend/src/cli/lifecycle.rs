//! `tend start`, `tend stop` and the hidden `tend daemon`.

use crate::error::ErrorKind;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;
use tend_protocol::params;
use tend_protocol::reply::Pong;

use super::target::{ServerArgs, Target};
use crate::client;
use crate::error::CliError;
use crate::paths;

/// Arguments of `tend start`.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// Stay in the foreground (logs to stderr).
    #[arg(long)]
    pub foreground: bool,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tend stop`.
#[derive(Debug, Args)]
pub struct StopArgs {
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

fn ping(control: &std::path::Path) -> Option<Pong> {
    client::call(control, params::Ping {}, Duration::from_secs(2)).ok()
}

/// `tend start`: one daemon per tmux server; a second start reports the
/// running one.
pub fn start(server: &ServerArgs, args: &StartArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    wait_for_a_stale_daemon(&t);
    if let Some(p) = ping(&t.control) {
        return already_running(&t, u64::from(p.pid), args.json, out);
    }
    let exe = std::env::current_exe().map_err(|e| {
        CliError::new(
            ErrorKind::Exe,
            format!("cannot find the tend executable: {e}"),
        )
    })?;
    // A bad configuration is reported here, naming the file, line and key,
    // not after a 10 s wait in the daemon's log; so is a key tmux does not
    // know (set in config.toml or tmux.conf), which would stay unbound.
    let cfg = crate::config::load()?;
    if t.zellij.is_none() {
        crate::keys::check_for_start(&t.server, &cfg.keys)?;
    }
    // What leaves a part of tend not working but the panes watched is a
    // warning, not a refusal: the user's manifests that do not load (a
    // file where their folder should be, a rule's bad regex) and a state
    // folder tend cannot use (parks and snoozes neither restored nor
    // saved). Watching the panes matters more; `tend doctor` says it again.
    if let Err(e) = paths::state_dir() {
        if e.kind == paths::UNSAFE_DIR {
            return Err(e);
        }
    }
    let warnings = start_warnings(&t.tmux_socket);
    for w in &warnings {
        tend_config::say!("warning: {w}");
    }
    if args.foreground {
        return run_daemon(&t, exe);
    }
    let log = paths::log_file(&t.tmux_socket)?;
    let child = spawn_daemon(&t, &exe, &log)?;
    let pid = wait_until_up(&t, child, &log)?;
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    if args.json {
        writeln!(out, "{}", json!({"running": true, "started": true, "pid": pid, "tmux_socket": t.tmux_socket, "warnings": warnings})).map_err(io)?;
    } else {
        writeln!(
            out,
            "tend started for {} (pid {pid})",
            t.tmux_socket.display()
        )
        .map_err(io)?;
    }
    Ok(())
}

/// tmux was killed and started again at once: the daemon that answers
/// served the old server and exits on its next listing. Waits for it (5 s
/// at most), so that one can start for this server.
fn wait_for_a_stale_daemon(t: &Target) {
    let Some(p) = ping(&t.control) else { return };
    if t.zellij.is_some() || !started_before(p.pid, t.server.server_pid().ok()) {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(p.pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A daemon answers already: its status formats are filled in again (a
/// re-sourced `~/.tmux.conf` runs tend.tmux, and may hold placeholders
/// again), and it is said.
fn already_running(t: &Target, pid: u64, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    if t.zellij.is_none() {
        t.server.install_status().map_err(|e| {
            CliError::new(
                ErrorKind::Tmux,
                format!("cannot fill in the status line: {e}"),
            )
        })?;
    }
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    if json {
        writeln!(
            out,
            "{}",
            json!({"running": true, "started": false, "pid": pid, "tmux_socket": t.tmux_socket})
        )
        .map_err(io)?;
    } else {
        writeln!(
            out,
            "tend is already running for {} (pid {pid})",
            t.tmux_socket.display()
        )
        .map_err(io)?;
    }
    Ok(())
}

/// The daemon, detached from the caller's session, writing to `log`.
fn spawn_daemon(
    t: &Target,
    exe: &std::path::Path,
    log: &std::path::Path,
) -> Result<std::process::Child, CliError> {
    let open = |e: std::io::Error| {
        CliError::new(
            ErrorKind::Log,
            format!("cannot open {}: {e}", log.display()),
        )
    };
    let logf = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(open)?;
    let err = logf.try_clone().map_err(open)?;
    let mut cmd = Command::new(exe);
    cmd.arg("daemon");
    match &t.zellij {
        Some(z) => cmd.arg("--zellij").arg(z.name()),
        None => cmd.arg("-S").arg(&t.tmux_socket),
    };
    cmd.stdin(Stdio::null())
        .stdout(logf)
        .stderr(err)
        .env_remove("TMUX_PANE");
    // SAFETY: setsid is async-signal-safe; it detaches the daemon from the
    // caller's session so closing that terminal does not end it.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)
        });
    }
    cmd.spawn()
        .map_err(|e| CliError::new(ErrorKind::Spawn, format!("cannot start the daemon: {e}")))
}

/// Waits (10 s at most) for the daemon to answer; its process id. A
/// daemon that exits first is reported with the end of its log.
fn wait_until_up(
    t: &Target,
    mut child: std::process::Child,
    log: &std::path::Path,
) -> Result<u64, CliError> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(p) = ping(&t.control) {
            return Ok(u64::from(p.pid));
        }
        if let Ok(Some(status)) = child.try_wait() {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let last: Vec<&str> = text.lines().rev().take(5).collect();
            let last: Vec<&str> = last.into_iter().rev().collect();
            return Err(CliError::new(
                ErrorKind::StartFailed,
                format!(
                    "the daemon exited at once ({status}); the end of its log {}:\n{}",
                    log.display(),
                    last.join("\n")
                ),
            ));
        }
        if Instant::now() > deadline {
            return Err(CliError::new(
                ErrorKind::StartFailed,
                format!(
                    "the daemon did not come up within 10 s; see its log {}",
                    log.display()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What `tend start` warns about: the user's manifests that do not load
/// and a state folder tend cannot use.
fn start_warnings(tmux_socket: &std::path::Path) -> Vec<String> {
    let (_, errors) = crate::manifests::load();
    let mut out: Vec<String> = errors
        .iter()
        .map(|e| format!("{e} (not used; `tend doctor` checks again)"))
        .collect();
    out.extend(super::doctor::state_problem(Some(tmux_socket)));
    out
}

fn options(t: &Target, exe: std::path::PathBuf) -> Result<tend_daemon::Options, CliError> {
    // Parks and snoozes are worth saving, not worth leaving the panes
    // unwatched: a state folder tend cannot create runs the daemon without
    // saving (`tend start` and `tend doctor` say so). One that others could
    // use (another owner, open permissions) stops it, as for the runtime
    // folder: state planted there would be obeyed.
    let state = match paths::state_file(&t.tmux_socket) {
        Ok(p) => p,
        Err(e) if e.kind == paths::UNSAFE_DIR => return Err(e),
        Err(e) => {
            tend_config::say!("{e}; parks and snoozes will not be saved");
            paths::state_file_in(&paths::state_dir_path()?, &t.tmux_socket)
        }
    };
    Ok(tend_daemon::Options {
        server: t.server.clone(),
        control: t.control.clone(),
        tap: paths::tap_socket(&t.tmux_socket)?,
        tend_bin: exe,
        state,
        config: crate::config::load()?,
        zellij: t.zellij.clone(),
    })
}

fn run_daemon(t: &Target, exe: std::path::PathBuf) -> Result<(), CliError> {
    tend_daemon::run(options(t, exe)?)
}

/// `tend daemon` (run by `tend start`).
pub fn daemon(server: &ServerArgs) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let exe = std::env::current_exe().map_err(|e| {
        CliError::new(
            ErrorKind::Exe,
            format!("cannot find the tend executable: {e}"),
        )
    })?;
    run_daemon(&t, exe)
}

/// `tend stop`: the daemon removes its pipes, hooks, options and bindings
/// and exits.
pub fn stop(server: &ServerArgs, args: &StopArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    if ping(&t.control).is_none() {
        // A daemon that died left its keys, hooks and "tend is not running"
        // behind (on purpose: the status line should say so until the user
        // acts), and could not put the status line back. Stopping is
        // acting: leave nothing, as a clean stop does.
        let removed = match &t.zellij {
            None if t.server.is_running() => tend_daemon::clean_up(&t.server),
            _ => 0,
        };
        if args.json {
            writeln!(
                out,
                "{}",
                json!({"running": false, "stopped": false, "removed": removed})
            )
            .map_err(io)?;
        } else if removed > 0 {
            writeln!(
                out,
                "tend is not running for {}; removed what a daemon that died left ({removed} \
                 options, hooks, keys and taps)",
                t.tmux_socket.display()
            )
            .map_err(io)?;
        } else {
            writeln!(out, "tend is not running for {}", t.tmux_socket.display()).map_err(io)?;
        }
        return Ok(());
    }
    client::call(&t.control, params::Stop {}, Duration::from_secs(5))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while t.control.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    if args.json {
        writeln!(out, "{}", json!({"running": false, "stopped": true})).map_err(io)?;
    } else {
        writeln!(out, "tend stopped for {}", t.tmux_socket.display()).map_err(io)?;
    }
    Ok(())
}

/// True when process `pid` started before process `other` (both local;
/// see [`tend_platform::os::process_facts`]).
fn started_before(pid: u32, other: Option<u32>) -> bool {
    let start = |pid: u32| tend_platform::os::process_facts(pid).map(|f| f.start);
    match (start(pid), other.and_then(start)) {
        (Some(a), Some(b)) => a < b,
        _ => false,
    }
}

/// True while process `pid` runs (a zombie has exited).
fn running(pid: u32) -> bool {
    tend_platform::os::process_facts(pid).is_some_and(|f| !f.zombie)
}
