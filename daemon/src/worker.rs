//! The tmux worker: one thread that runs every tmux command the daemon
//! needs, in order, and reports results back as events. Keeping tmux calls
//! off the event loop means a slow tmux never delays tap data.

use std::collections::VecDeque;
use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;

use tend_protocol::reply::Reply;
use tend_protocol::{Error, ErrorCode};
use tend_tmux::escape::shell_join;
use tend_tmux::{Binding, OptionUpdate, PaneId, Server};
use tokio::sync::mpsc::Sender;

use super::event::Event;
use super::{guard, published};
use crate::options::Options;
use tend_core::{Backend, ClientInfo, Input, MuxJob, PaneFact, PaneInfo, Pipe, Screen, TapOutcome};

/// Work for a backend thread (the tmux worker, or zellij's): the core's
/// jobs, and the daemon's own.
#[derive(Debug)]
pub enum Job {
    /// A job of the core's (one that a request waits on reports its
    /// outcome as [`Input::Done`]).
    Mux(MuxJob),
    /// Write the persistent state file (atomically).
    Persist {
        /// Where.
        path: std::path::PathBuf,
        /// What.
        text: String,
    },
    /// Remove everything tend installed, then exit the thread.
    Cleanup,
}

/// Hooks that make the daemon reconcile at once (the periodic reconcile
/// catches everything else).
const HOOKS: &[&str] = &[
    "after-new-window",
    "after-split-window",
    "pane-exited",
    "pane-died",
    "session-created",
    "client-session-changed",
    "session-window-changed",
    "window-pane-changed",
    // A resize (of the window, or of a pane in it): heard of at once, so
    // that the redraw the program makes for its new size is known for one.
    "window-layout-changed",
];

/// The command for a jump key that spawns no process: `run-shell -C`
/// expands the pane's published `@tend_next…` option (the target after the
/// current pane, so repeated presses cycle) and runs `switch-client`. With
/// no target it says so — or, when `@tend_daemon` is gone too (the daemon
/// died), that tend is not running.
/// `#{@tend-managed}` expands to nothing and marks the binding as tend's.
///
/// A remote target (`build-box:%3`, the only ids with a `:`) is no tmux
/// target here: for it the key runs `remote` (`tend key … goto`), which
/// opens or reuses the local window attached to it. `None` (a path that
/// cannot sit unquoted in the format) leaves remote targets to `tend jump`.
pub fn jump_command(option: &str, none: &str, remote: Option<&str>) -> String {
    let go = match remote {
        Some(r) => format!(
            "#{{?#{{m:*:*,#{{{option}}}}},run-shell -b \"{r} pane=#{{{option}}} client=#{{client_name}}\",switch-client -t #{{{option}}}}}"
        ),
        None => format!("switch-client -t #{{{option}}}"),
    };
    format!(
        "run-shell -C '#{{?{option},{go},#{{?{daemon},display-message \"{none}\",display-message \"{down}\"}}}}#{{@{}}}'",
        tend_tmux::MARKER,
        daemon = guard::DAEMON_OPTION,
        down = NOT_RUNNING_KEY,
    )
}

/// The `tend key … goto` prefix a jump key runs for a remote target, when
/// the program and socket paths need no quoting inside a format.
fn remote_goto(program: &str, socket: &str) -> Option<String> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._+-".contains(&b))
    };
    (plain(program) && plain(socket)).then(|| format!("{program} key --socket {socket} goto"))
}

/// What a jump key says once the daemon died (its keys stay bound: only a
/// clean `tend stop` removes them). No comma: it sits in a conditional.
pub const NOT_RUNNING_KEY: &str = "tend is not running: start it with tend start";

/// [`MuxJob::RemoteAttach`]: one local window per remote session, named for
/// it; a jump into it again restarts its ssh with the new pane selected.
fn remote_attach(
    server: &Server,
    client: Option<&str>,
    window: &str,
    argv: &[String],
) -> Result<(), String> {
    let cmd = shell_join(argv);
    let windows = server
        .run(["list-windows", "-a", "-F", "#{window_name}\t#{pane_id}"])
        .map_err(|e| e.to_string())?;
    // tmux 3.4 prints a name's `$HOME` as `\$HOME`: compared as the name.
    let printing = server.capabilities().printing;
    let existing = windows.lines().find_map(|l| {
        let (name, pane) = l.split_once('\t')?;
        (printing.unprint(name).as_deref() == Some(window)).then(|| pane.to_owned())
    });
    let pane = match existing {
        Some(pane) => {
            server
                .run(["respawn-pane", "-k", "-t", pane.as_str(), cmd.as_str()])
                .map_err(|e| e.to_string())?;
            pane
        }
        None => {
            let session = session_for_window(server, client)?;
            let target = format!("{session}:");
            // new-window expands formats in -n (every version from 3.2a),
            // and the name holds the remote's session name: escaped, it
            // arrives as written (`rs#(touch x)` stays text).
            let name = tend_tmux::escape::format_escape(window);
            server
                .run([
                    "new-window",
                    "-d",
                    "-P",
                    "-F",
                    "#{pane_id}",
                    "-n",
                    name.as_str(),
                    "-t",
                    target.as_str(),
                    cmd.as_str(),
                ])
                .map_err(|e| e.to_string())?
                .trim()
                .to_owned()
        }
    };
    if let Ok(id) = pane.parse::<PaneId>() {
        let _ = server.switch_to(client, id);
    }
    Ok(())
}

/// The session a new remote window goes into, by id: `client`'s, else the
/// most recently used client's, else the first session. (tmux 3.4 and
/// 3.5a print a name with escapes, `\$HOME`, `\037`, which would name no
/// session. On 3.2a `-c` takes no client: that fails, and the most
/// recently used client's session is taken, as 3.2a itself would.)
fn session_for_window(server: &Server, client: Option<&str>) -> Result<String, String> {
    let of_client = client
        .and_then(|c| {
            server
                .run(["display-message", "-p", "-c", c, "#{session_id}"])
                .ok()
        })
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    if let Some(s) = of_client {
        return Ok(s);
    }
    let clients = server
        .run(["list-clients", "-F", "#{client_activity} #{session_id}"])
        .unwrap_or_default();
    let most_recent = clients
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, s)| !s.is_empty())
        .max_by_key(|(a, _)| a.parse::<u64>().unwrap_or(0))
        .map(|(_, s)| s.to_owned());
    if let Some(s) = most_recent {
        return Ok(s);
    }
    Ok(server
        .run(["list-sessions", "-F", "#{session_id}"])
        .map_err(|e| e.to_string())?
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned())
}

/// Removes everything tend installs in tmux: taps, hooks, key bindings,
/// options; then redraws the status lines. Returns how many things it
/// removed. (`tend stop` also runs it when a daemon died and left them.)
pub fn remove_everything(server: &Server) -> usize {
    let taps = server.remove_all_taps().unwrap_or(0);
    let hooks = server.remove_hooks().unwrap_or(0);
    let keys = server.unbind_keys().unwrap_or(0);
    // Before the options go: the status line's originals are saved in them.
    if let Err(e) = server.restore_status() {
        crate::say!("putting the status line back failed: {e}");
    }
    let options = server.remove_tend_options().unwrap_or(0);
    let _ = server.refresh_clients();
    taps + hooks + keys + options
}

/// The pane's screen as tmux has it, for a check before keys are sent.
fn captured(server: &Server, pane: PaneId) -> Result<tend_core::answer::Captured, Error> {
    let screen = server
        .screen(pane)
        .map_err(|e| Error::new(ErrorCode::Tmux, format!("cannot read {pane}: {e}")))?;
    Ok(tend_core::answer::Captured {
        rows: screen.rows,
        title: screen.title,
        alternate: screen.alternate_on,
        cursor: (screen.cursor_y, screen.cursor_x),
        in_mode: screen.in_mode,
    })
}

/// [`MuxJob::Answer`]: the check and the keys, as close together as tmux
/// allows. Two tmux invocations remain between them (the capture, then
/// `send-keys`): an agent that redraws in those few milliseconds can
/// still receive keys meant for the dialog it just closed.
fn answer(
    server: &Server,
    pane: PaneId,
    manifest: &tend_detector::Manifest,
    action: tend_detector::answer::Action,
    send: bool,
) -> Result<Reply, Error> {
    let captured = captured(server, pane)?;
    let a = tend_core::answer::check(&pane.to_string(), captured, manifest, action, send)?;
    if send {
        let mut cmd = vec!["send-keys".to_string(), "-t".into(), pane.to_string()];
        cmd.extend(a.keys.iter().cloned());
        server
            .run(cmd)
            .map_err(|e| Error::new(ErrorCode::Tmux, format!("send-keys to {pane} failed: {e}")))?;
    }
    Ok(tend_core::answer::answered(
        pane.to_string(),
        manifest,
        action,
        a,
        send,
    ))
}

/// What the tmux backend offers the core: a guard, options, a tap per
/// pane, `tend restore`, remote panes in local windows.
pub const BACKEND: Backend = Backend {
    mux: tend_core::Mux::Tmux,
    guard: true,
    status: tend_core::StatusForm::Facts,
    output: tend_core::OutputRead::Taps,
    restore: true,
    remote_windows: true,
};

/// A pane as the core knows it, from `list-panes`.
fn pane_info(p: tend_tmux::Pane) -> PaneInfo {
    // A tap mark with no pipe open is a stale mark: no pipe.
    let pipe = match (p.pipe, p.tap.is_some()) {
        (false, _) => Pipe::None,
        (true, true) => Pipe::Tend,
        (true, false) => Pipe::Other,
    };
    PaneInfo {
        pane_id: p.pane_id,
        pane_pid: p.pane_pid,
        session_id: p.session_id,
        session_name: p.session_name,
        window_id: p.window_id,
        window_label: p.window_id.to_string(),
        window_index: p.window_index,
        window_name: p.window_name,
        pane_index: Some(p.pane_index),
        window_active: p.window_active,
        pane_active: p.pane_active,
        width: p.width,
        height: p.height,
        current_command: p.current_command,
        pipe,
        dead: p.dead,
        dead_status: p.dead_status,
        title: p.title,
        alternate_on: p.alternate_on,
        in_mode: p.in_mode,
        current_path: p.current_path,
    }
}

/// A client as the core knows it, from `list-clients`.
fn client_info(c: tend_tmux::Client) -> ClientInfo {
    ClientInfo {
        name: c.name,
        pane_id: c.pane_id,
        control_mode: c.control_mode,
        activity: c.activity,
    }
}

/// A capture as the core takes it.
fn screen_of(c: tend_tmux::Capture) -> Screen {
    Screen {
        pane_id: c.pane_id,
        text: c.text,
        cursor_x: c.cursor_x,
        cursor_y: c.cursor_y,
        cursor_visible: c.cursor_visible,
        alternate_on: c.alternate_on,
        in_mode: c.in_mode,
        width: c.width,
        height: c.height,
    }
}

/// How a tap install went, as the core takes it.
fn tap_outcome(r: tend_tmux::Result<tend_tmux::TapOutcome>) -> TapOutcome {
    match r {
        Ok(tend_tmux::TapOutcome::Installed | tend_tmux::TapOutcome::AlreadyTapped { .. }) => {
            TapOutcome::Tapped
        }
        Ok(tend_tmux::TapOutcome::Foreign) => TapOutcome::Foreign,
        Err(e) => TapOutcome::Failed(e.to_string()),
    }
}

/// Starts the worker.
pub fn spawn(opts: Options, jobs: Receiver<Job>, events: Sender<Event>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let worker = Worker {
            server: opts.server.clone(),
            program: opts.tend_bin.to_string_lossy().into_owned(),
            control: opts.control.to_string_lossy().into_owned(),
            opts,
            events,
            server_pid: None,
            persister: crate::store::Persister::default(),
        };
        worker.run(jobs);
    })
}

/// The tmux backend thread's state.
struct Worker {
    server: Server,
    opts: Options,
    /// The tend binary, for the commands tmux runs.
    program: String,
    /// The daemon's control socket, for the same.
    control: String,
    events: Sender<Event>,
    /// The tmux server's process, as the first listing found it.
    server_pid: Option<u32>,
    persister: crate::store::Persister,
}

impl Worker {
    /// Runs jobs until the daemon hangs up or asks for the cleanup: every
    /// tap waiting first, runs of publishes and listings merged into one
    /// tmux command, then the next job.
    fn run(mut self, jobs: Receiver<Job>) {
        let mut pending: VecDeque<Job> = VecDeque::new();
        loop {
            if pending.is_empty() {
                match jobs.recv() {
                    Ok(job) => pending.push_back(job),
                    Err(_) => return,
                }
            }
            pending.extend(jobs.try_iter());
            self.install_taps(&mut pending);
            merge_publishes(&mut pending);
            let job = match pending.pop_front() {
                None => continue,
                Some(Job::Mux(job)) => job,
                Some(Job::Persist { path, text }) => {
                    // Retried every second by the core while it fails.
                    if !self.persister.write(&path, &text) {
                        self.send(Input::PersistFailed);
                    }
                    continue;
                }
                Some(Job::Cleanup) => {
                    remove_everything(&self.server);
                    return;
                }
            };
            if let Some(job) = self.listing(job) {
                self.run_job(job);
            }
        }
    }

    fn send(&self, input: Input) {
        let _ = self.events.blocking_send(Event::Core(input));
    }

    /// The command of a pane's tap. `exec`: tmux runs it with `/bin/sh
    /// -c`, and dash would otherwise keep a shell waiting beside every
    /// pane's tap.
    fn tap_command(&self, pane: PaneId) -> String {
        "exec ".to_owned()
            + &shell_join(&[
                &self.program,
                "tap",
                "--socket",
                self.opts.tap.to_string_lossy().as_ref(),
                "--pane",
                &pane.to_string(),
            ])
    }

    /// Every tap waiting to be installed, in one tmux process and ahead of
    /// the rest: a daemon starting on a server with many panes holds all
    /// their pipes after one invocation instead of one each behind every
    /// pane's seed. (A tap installed before its pane's seed is captured is
    /// harmless: output before the seed is ignored, the capture holds it.)
    fn install_taps(&mut self, pending: &mut VecDeque<Job>) {
        let (taps, rest): (Vec<Job>, Vec<Job>) = pending
            .drain(..)
            .partition(|j| matches!(j, Job::Mux(MuxJob::InstallTap(_) | MuxJob::Retap(_))));
        *pending = rest.into();
        if !taps.is_empty() {
            let mut list = Vec::with_capacity(taps.len());
            for job in taps {
                match job {
                    Job::Mux(MuxJob::Retap(pane)) => {
                        let _ = self.server.clear_tap_mark(pane);
                        list.push((pane, self.tap_command(pane)));
                    }
                    Job::Mux(MuxJob::InstallTap(pane)) => list.push((pane, self.tap_command(pane))),
                    _ => {}
                }
            }
            for (pane, outcome) in self.server.install_taps(&list) {
                self.send(Input::TapInstalled {
                    pane,
                    outcome: tap_outcome(outcome),
                });
            }
        }
    }

    /// A listing alone, or riding on a publish: sent, its result handed to
    /// the core. Returns the job when it is something else.
    fn listing(&mut self, job: MuxJob) -> Option<MuxJob> {
        let (listing, job) = match job {
            MuxJob::List => (Some(self.server.snapshot()), None),
            MuxJob::Publish {
                updates,
                clients,
                list: true,
            } => {
                let updates: Vec<OptionUpdate> =
                    updates.into_iter().map(published::option_update).collect();
                let result = if updates.is_empty() && clients.is_empty() {
                    self.server.snapshot()
                } else {
                    self.server.publish_and_snapshot(&updates, &clients)
                };
                crate::trace!("published updates={} with a listing", updates.len());
                (Some(result), None)
            }
            other => (None, Some(other)),
        };
        if let Some(listing) = listing {
            match listing {
                Ok(snap) => {
                    // A new server on the same socket (the old one was
                    // killed and tmux started again): pane ids restart
                    // from %0 and mean other panes. This daemon's work is
                    // over; the plugin starts a fresh one.
                    if self.server_pid.is_none() {
                        self.server_pid = Some(snap.server_pid);
                    }
                    if self.server_pid != Some(snap.server_pid) {
                        self.send(Input::ServerGone);
                        return None;
                    }
                    self.send(Input::Listed {
                        panes: snap.panes.into_iter().map(pane_info).collect(),
                        clients: snap.clients.into_iter().map(client_info).collect(),
                    })
                }
                Err(e) => self.failed("listing panes (or publishing)", &e),
            }
        }
        job
    }

    /// A tmux command failed: a server that is gone ends the daemon's
    /// work, anything else is said in the log.
    fn failed(&self, doing: &str, e: &tend_tmux::TmuxError) {
        if e.is_no_server() {
            self.send(Input::ServerGone);
        } else {
            crate::say!("{doing} failed: {e}");
        }
    }

    /// [`MuxJob::Guard`]: the daemon's token, and the guard that clears
    /// what it published when the daemon dies. The cleanup goes through
    /// the very tmux that runs the server, on its socket.
    fn start_guard(&self, token: &str) {
        let (tmux_bin, tmux_socket) = match (self.server.server_pid(), self.server.socket_path()) {
            (Ok(pid), Ok(path)) => (
                std::fs::read_link(format!("/proc/{pid}/exe"))
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| "tmux".to_owned()),
                path.to_string_lossy().into_owned(),
            ),
            (Err(e), _) | (_, Err(e)) => return self.failed("starting the guard", &e),
        };
        let cmds = [
            vec![
                "set-option".to_owned(),
                "-gq".into(),
                guard::DAEMON_OPTION.into(),
                token.to_owned(),
            ],
            vec![
                "set-option".to_owned(),
                "-gq".into(),
                guard::CONTROL_OPTION.into(),
                self.control.clone(),
            ],
            guard::install_command(&self.program, &self.control, token, &tmux_bin, &tmux_socket),
        ];
        if let Err(e) = self.server.run_many(&cmds) {
            self.failed("starting the guard", &e);
        }
    }

    /// [`MuxJob::Setup`]: a previous daemon's options swept, then hooks,
    /// key bindings and the status line.
    fn setup(&self) {
        // A daemon killed before this one left its options (its guard's
        // cleanup may not have run yet: this daemon's token is set
        // afterwards, and that cleanup then does nothing). Remove them; the
        // first publish sets everything again.
        match self.server.list_tend_options() {
            Ok(found) => {
                let stale: Vec<OptionUpdate> = found
                    .into_iter()
                    .filter(|(_, name)| guard::is_published(name))
                    .map(|(scope, name)| OptionUpdate::unset(scope, name))
                    .collect();
                if let Err(e) = self.server.set_options(&stale) {
                    crate::say!("removing a previous daemon's options failed: {e}");
                }
            }
            Err(e) => crate::say!("listing a previous daemon's options failed: {e}"),
        }
        let hooks: Vec<(&str, String)> = HOOKS
            .iter()
            .map(|h| {
                let poke = ["poke", "--socket", self.control.as_str()];
                (*h, tend_tmux::hooks::event_command(&self.program, &poke, h))
            })
            .collect();
        if let Err(e) = self.server.install_hooks(&hooks) {
            crate::say!("installing hooks failed: {e}");
        }
        match self.server.bind_keys(&self.bindings()) {
            Ok(report) => {
                for line in crate::keys::report_lines(&report) {
                    crate::say!("{line}");
                }
            }
            Err(e) => crate::say!("binding keys failed: {e}"),
        }
        // The user's placeholders filled in, or tend's segment added, so
        // that the count shows the moment tend runs.
        if let Err(e) = self.server.install_status() {
            crate::say!("filling in the status line failed: {e}");
        }
    }

    /// The key bindings to make: tmux options (`@tend-key-*`) win; then
    /// config.toml; then defaults.
    fn bindings(&self) -> Vec<Binding> {
        let plan = match crate::keys::plan(&self.server, &self.opts.config.keys) {
            Ok(plan) => plan,
            Err(e) => {
                crate::say!("reading the key options failed, no key bound: {e}");
                return Vec::new();
            }
        };
        let remote = remote_goto(&self.program, &self.control);
        let remote = remote.as_deref();
        let next = published::pane_option;
        plan.into_iter()
            .filter_map(|p| {
                let key = p.key?;
                let command = match p.action.id {
                    "next-waiting" => {
                        jump_command(next(PaneFact::Next), "tend: no agent needs you", remote)
                    }
                    "next-waiting-session" => jump_command(
                        next(PaneFact::NextSession),
                        "tend: no agent needs you in this session",
                        remote,
                    ),
                    "next-working" => jump_command(
                        next(PaneFact::NextWorking),
                        "tend: no agent is working",
                        remote,
                    ),
                    _ => tend_tmux::keys::action_command(
                        &self.program,
                        &["key", "--socket", &self.control],
                        p.action.id,
                    ),
                };
                Some(Binding {
                    table: p.table,
                    key,
                    note: p.action.note.to_owned(),
                    command,
                })
            })
            .collect()
    }

    /// [`MuxJob::Paste`]: the text as a bracketed paste, then Enter.
    fn paste(&self, pane: PaneId, text: String, enter: bool) {
        let target = pane.to_string();
        let buffer =
            |args: &[&str]| -> Vec<String> { args.iter().map(|a| (*a).to_owned()).collect() };
        let mut cmds = vec![
            buffer(&["set-buffer", "-b", "tend-prompt", "--", &text]),
            buffer(&[
                "paste-buffer",
                "-p",
                "-d",
                "-b",
                "tend-prompt",
                "-t",
                &target,
            ]),
        ];
        if enter {
            cmds.push(buffer(&["send-keys", "-t", &target, "Enter"]));
        }
        if let Err(e) = self.server.run_many(&cmds) {
            crate::say!("prompt to {pane} failed: {e}");
        }
    }

    /// Runs one job of the core's.
    fn run_job(&mut self, job: MuxJob) {
        match job {
            // Taken above.
            MuxJob::List => {}
            MuxJob::Capture(pane, purpose) => match self.server.capture(pane) {
                Ok(capture) => {
                    crate::trace!("capture pane={pane} purpose={purpose:?}");
                    self.send(Input::Captured {
                        pane,
                        screen: screen_of(capture),
                        purpose,
                    })
                }
                Err(e) if e.is_no_server() => self.send(Input::ServerGone),
                Err(_) => {}
            },
            // Taken above, all at once.
            MuxJob::Retap(_) | MuxJob::InstallTap(_) => {}
            // zellij's; tmux has the options.
            MuxJob::Overview(_) => {}
            MuxJob::Publish {
                updates, clients, ..
            } => {
                let updates: Vec<OptionUpdate> =
                    updates.into_iter().map(published::option_update).collect();
                // Vanished panes, windows and clients are skipped inside.
                let result = self.server.publish(&updates, &clients);
                crate::trace!("published updates={}", updates.len());
                if let Err(e) = result {
                    self.failed("publishing to tmux", &e);
                }
            }
            MuxJob::Switch { client, pane } => {
                let _ = self.server.switch_to(client.as_deref(), pane);
            }
            MuxJob::RemoteAttach {
                client,
                window,
                remote,
                tmux_socket,
                remote_window,
                pane,
            } => {
                let argv = crate::remote::attach_argv(
                    &remote,
                    tmux_socket.as_deref(),
                    &remote_window,
                    &pane,
                );
                if let Err(e) = remote_attach(&self.server, client.as_deref(), &window, &argv) {
                    crate::say!("cannot open the window for {window}: {e}");
                }
            }
            MuxJob::Guard { token } => self.start_guard(&token),
            MuxJob::Setup => self.setup(),
            MuxJob::Read { pane, lines, reply } => {
                let result = self
                    .server
                    .capture_text(pane, lines.unwrap_or(0))
                    .map(|text| tend_core::answer::read_reply(pane.to_string(), text, lines))
                    .map_err(|e| Error::new(ErrorCode::Tmux, e.to_string()));
                self.send(Input::Done { reply, result });
            }
            MuxJob::Paste { pane, text, enter } => self.paste(pane, text, enter),
            MuxJob::Resume { target, command } => {
                if let Err(e) = crate::restore::type_command(&self.server, &target, &command) {
                    crate::say!(
                        "tend restore: {} at {}: {e}",
                        shell_join(&command),
                        target.describe()
                    );
                }
            }
            MuxJob::SendKeys { pane, keys } => {
                let mut cmd = vec!["send-keys".to_string(), "-t".into(), pane.to_string()];
                cmd.extend(keys);
                if let Err(e) = self.server.run(cmd) {
                    crate::say!("send-keys to {pane} failed: {e}");
                }
            }
            MuxJob::Answer {
                pane,
                manifest,
                action,
                send,
                reply,
            } => {
                let result = answer(&self.server, pane, &manifest, action, send);
                self.send(Input::Done { reply, result });
            }
            MuxJob::LimitResume {
                pane,
                manifest,
                text,
                by,
                reply,
            } => {
                let result = self.limit_resume(pane, &manifest, &text);
                self.send(Input::LimitResumed {
                    pane,
                    outcome: tend_core::limits::ResumeOutcome { result, by, reply },
                });
            }
        }
    }

    /// [`MuxJob::LimitResume`]: the last look at the screen and the text (or
    /// the limit dialog's keys), as close together as an answer's. An
    /// agent whose `[prompt]` asks for a pause before Enter gets it from
    /// the core, which hears how this went.
    fn limit_resume(
        &self,
        pane: PaneId,
        manifest: &tend_detector::Manifest,
        text: &str,
    ) -> Result<tend_detector::limit::Resume, Error> {
        use tend_detector::limit::Resume;
        let captured = captured(&self.server, pane)?;
        let r = tend_core::limits::check(&pane.to_string(), captured, manifest, text)?;
        match &r {
            Resume::Text(t) => self.paste(pane, t.clone(), manifest.prompt.enter_after.is_zero()),
            Resume::Keys(keys) => {
                let mut cmd = vec!["send-keys".to_string(), "-t".into(), pane.to_string()];
                cmd.extend(keys.iter().cloned());
                self.server.run(cmd).map_err(|e| {
                    Error::new(ErrorCode::Tmux, format!("send-keys to {pane} failed: {e}"))
                })?;
            }
        }
        Ok(r)
    }
}

/// Publishes and listings queued one after another go out in one tmux
/// process: the updates in order (a later value of an option wins, as it
/// would one process later), the listing last (it reads the panes after
/// the updates, as it would have). Only a run of them is merged, never
/// across another job, so the guard's token, a cleanup and a capture keep
/// their place.
fn merge_publishes(pending: &mut VecDeque<Job>) {
    let listing_or_publish =
        |j: Option<&Job>| matches!(j, Some(Job::Mux(MuxJob::Publish { .. } | MuxJob::List)));
    if listing_or_publish(pending.front()) && listing_or_publish(pending.get(1)) {
        let mut merged: Vec<tend_core::FactUpdate> = Vec::new();
        let mut to_refresh: Vec<String> = Vec::new();
        let mut any_list = false;
        while listing_or_publish(pending.front()) {
            match pending.pop_front() {
                Some(Job::Mux(MuxJob::Publish {
                    updates,
                    clients,
                    list,
                })) => {
                    merged.extend(updates);
                    to_refresh = clients;
                    any_list |= list;
                }
                Some(Job::Mux(MuxJob::List)) => any_list = true,
                _ => {}
            }
        }
        pending.push_front(Job::Mux(MuxJob::Publish {
            updates: merged,
            clients: to_refresh,
            list: any_list,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::jump_command;
    use tend_tmux::keys::KEY_ACTIONS;

    #[test]
    fn actions_are_read_from_the_commands_tend_writes() {
        let cmd = |id: &str| match id {
            "next-waiting" => jump_command("@tend_next", "none", Some("/bin/tend key goto")),
            "next-waiting-session" => jump_command("@tend_next_session", "none", None),
            "next-working" => jump_command("@tend_next_working", "none", None),
            _ => tend_tmux::keys::action_command(
                "/usr/bin/tend",
                &["key", "--socket", "/run/t.sock"],
                id,
            ),
        };
        for id in KEY_ACTIONS.iter().map(|a| a.id) {
            assert_eq!(
                tend_config::keys::action_of(&cmd(id)),
                Some(id),
                "{}",
                cmd(id)
            );
        }
        // As tmux 3.3a prints them back.
        assert_eq!(
            tend_config::keys::action_of(
                "run-shell -b \"/usr/bin/tend key --socket /s picker 'client=#{client_name}' \
                 ## tend-managed\""
            ),
            Some("picker")
        );
        assert_eq!(tend_config::keys::action_of("display-message hi"), None);
    }
}
