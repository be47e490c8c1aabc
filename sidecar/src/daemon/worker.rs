//! The tmux worker: one thread that runs every tmux command the daemon
//! needs, in order, and reports results back as events. Keeping tmux calls
//! off the event loop means a slow tmux never delays tap data.

use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;

use tend_protocol::reply::{Answered, Reply, Text};
use tend_protocol::{Error, ErrorCode};
use tend_tmux::escape::shell_join;
use tend_tmux::{Binding, OptionUpdate, PaneId, Server};
use tokio::sync::mpsc::Sender;

use super::core::{CapturePurpose, Event};
use super::guard;
use super::Options;

/// Work for the tmux worker thread.
#[derive(Debug)]
pub enum Job {
    /// `list-panes -a` and `list-clients`.
    List,
    /// Capture a pane.
    Capture(PaneId, CapturePurpose),
    /// Install the tap on a pane.
    InstallTap(PaneId),
    /// The pane's tap pipe closed while the pane lives: clear the mark,
    /// then install a tap unless a pipe (the user's) is open.
    Retap(PaneId),
    /// Apply option updates, then refresh clients; then list the panes
    /// when `list` (all in one tmux process).
    Publish {
        /// The changed options.
        updates: Vec<OptionUpdate>,
        /// Clients whose status line to redraw (the last listing's).
        clients: Vec<String>,
        /// List panes and clients too, as [`Job::List`].
        list: bool,
    },
    /// Switch a client to a pane.
    Switch {
        /// The client (`None`: the most recent).
        client: Option<String>,
        /// Where to.
        pane: PaneId,
    },
    /// Show a remote pane: respawn the local window named `window` with
    /// `argv` (an `ssh -t … tmux attach`), or open it, then switch a client
    /// there.
    RemoteAttach {
        /// The client (`None`: the most recent).
        client: Option<String>,
        /// The local window's name (one per remote session).
        window: String,
        /// The command it runs.
        argv: Vec<String>,
    },
    /// Remove what a daemon that died left published, install hooks and
    /// key bindings.
    Setup,
    /// Set `@tend_daemon` to `token` and start a guard with it.
    Guard {
        /// The token.
        token: String,
    },
    /// Read a pane's text (`tend read`) and answer the request.
    Read {
        /// The pane.
        pane: PaneId,
        /// Lines of history beyond the screen (`None`: the screen).
        lines: Option<u32>,
        /// Where the answer goes.
        reply: super::core::ReplyTx,
    },
    /// Paste text as a bracketed paste, then press Enter.
    Paste {
        /// The pane.
        pane: PaneId,
        /// The text.
        text: String,
        /// Press Enter after it, in the same batch. (An Enter that must
        /// wait is the table's: a later [`Job::SendKeys`].)
        enter: bool,
    },
    /// Send keys (tmux key names).
    SendKeys {
        /// The pane.
        pane: PaneId,
        /// Keys as `send-keys` takes them.
        keys: Vec<String>,
    },
    /// Answer an approval dialog: capture the pane's screen now, check that
    /// the manifest's dialog rule still wins on it, then send the keys (in
    /// the same thread, right after the capture).
    Answer {
        /// The pane.
        pane: PaneId,
        /// The pane's agent.
        manifest: std::sync::Arc<tend_detector::Manifest>,
        /// Approve or deny.
        action: tend_detector::answer::Action,
        /// False: only report the dialog and the keys (the picker).
        send: bool,
        /// How long to wait before the check and the keys: the dialog is
        /// younger than the agent's `settle_ms`.
        wait: std::time::Duration,
        /// Where the answer goes.
        reply: super::core::ReplyTx,
    },
    /// Write the persistent state file (atomically).
    Persist {
        /// Where.
        path: std::path::PathBuf,
        /// What.
        text: String,
    },
    /// The status for zellij's plugin (the zellij backend's publish; the
    /// tmux worker publishes options instead).
    Plugin(tend_zellij_host::PluginStatus),
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

fn bindings(server: &Server, opts: &Options) -> Vec<Binding> {
    // tmux options (`@tend-key-*`) win; then config.toml; then defaults.
    let plan = match crate::keys::plan(server, &opts.keys) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("tend: reading the key options failed, no key bound: {e}");
            return Vec::new();
        }
    };
    let program = opts.tend_bin.to_string_lossy().into_owned();
    let socket = opts.control.to_string_lossy().into_owned();
    plan.into_iter()
        .filter_map(|p| {
            let key = p.key?;
            let remote = remote_goto(&program, &socket);
            let remote = remote.as_deref();
            let command = match p.action.id {
                "next-waiting" => jump_command("@tend_next", "tend: no agent needs you", remote),
                "next-waiting-session" => jump_command(
                    "@tend_next_session",
                    "tend: no agent needs you in this session",
                    remote,
                ),
                "next-working" => {
                    jump_command("@tend_next_working", "tend: no agent is working", remote)
                }
                _ => tend_tmux::keys::action_command(
                    &program,
                    &["key", "--socket", &socket],
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

/// [`Job::RemoteAttach`]: one local window per remote session, named for
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
            // Sessions by id: tmux 3.4 and 3.5a print a name with escapes
            // (`\$HOME`, `\037`), which would name no session. On 3.2a
            // `-c` takes no client: that fails, and the most recently used
            // client's session is taken, as 3.2a itself would.
            let session = match client {
                Some(c) => server
                    .run(["display-message", "-p", "-c", c, "#{session_id}"])
                    .ok(),
                None => None,
            }
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
            let session = match session {
                Some(s) => s,
                None => {
                    // The most recently used client's session, else the
                    // first session.
                    let clients = server
                        .run(["list-clients", "-F", "#{client_activity} #{session_id}"])
                        .unwrap_or_default();
                    let by_client = clients
                        .lines()
                        .filter_map(|l| l.split_once(' '))
                        .filter(|(_, s)| !s.is_empty())
                        .max_by_key(|(a, _)| a.parse::<u64>().unwrap_or(0))
                        .map(|(_, s)| s.to_owned());
                    match by_client {
                        Some(s) => s,
                        None => server
                            .run(["list-sessions", "-F", "#{session_id}"])
                            .map_err(|e| e.to_string())?
                            .lines()
                            .next()
                            .unwrap_or_default()
                            .to_owned(),
                    }
                }
            };
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

/// Removes everything tend installs in tmux: taps, hooks, key bindings,
/// options; then redraws the status lines. Returns how many things it
/// removed. (`tend stop` also runs it when a daemon died and left them.)
pub fn remove_everything(server: &Server) -> usize {
    let taps = server.remove_all_taps().unwrap_or(0);
    let hooks = server.remove_hooks().unwrap_or(0);
    let keys = server.unbind_keys().unwrap_or(0);
    // Before the options go: the status line's originals are saved in them.
    if let Err(e) = server.restore_status() {
        eprintln!("tend: putting the status line back failed: {e}");
    }
    let options = server.remove_tend_options().unwrap_or(0);
    let _ = server.refresh_clients();
    taps + hooks + keys + options
}

/// [`Job::Answer`]: the check and the keys, as close together as tmux
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
    let screen = server
        .screen(pane)
        .map_err(|e| Error::new(ErrorCode::Tmux, format!("cannot read {pane}: {e}")))?;
    if screen.in_mode && send {
        return Err(Error::new(
            ErrorCode::PaneInMode,
            format!(
                "{pane} is in copy mode, which would take the keys; leave it (q) and try again. Nothing was sent"
            ),
        ));
    }
    let view = tend_detector::rules::ScreenView {
        rows: screen.rows,
        title: screen.title,
        progress: String::new(),
        alternate: screen.alternate_on,
        cursor: (
            u16::try_from(screen.cursor_y).unwrap_or(u16::MAX),
            u16::try_from(screen.cursor_x).unwrap_or(u16::MAX),
        ),
    };
    let a = tend_detector::answer::answer(&view, manifest, action)
        .map_err(|r| refusal_of(&r, &pane.to_string()))?;
    if send {
        let mut cmd = vec!["send-keys".to_string(), "-t".into(), pane.to_string()];
        cmd.extend(a.keys.iter().cloned());
        server
            .run(cmd)
            .map_err(|e| Error::new(ErrorCode::Tmux, format!("send-keys to {pane} failed: {e}")))?;
    }
    Ok(answered(pane.to_string(), manifest, action, a, send).into())
}

/// The answer to a `read` request: the screen, or with `lines` the last
/// that many lines of the screen and its history.
pub(crate) fn read_reply(pane: String, text: String, lines: Option<u32>) -> Reply {
    let text = match lines {
        Some(n) if n > 0 => {
            let all: Vec<&str> = text.trim_end_matches('\n').lines().collect();
            all[all.len().saturating_sub(n as usize)..].join("\n")
        }
        _ => text,
    };
    Text { pane, text }.into()
}

/// The answer to an `answer` request whose dialog was found.
pub(crate) fn answered(
    pane: String,
    manifest: &tend_detector::Manifest,
    action: tend_detector::answer::Action,
    a: tend_detector::answer::Answer,
    sent: bool,
) -> Answered {
    Answered {
        pane,
        agent: manifest.id.clone(),
        action: action.as_str().to_owned(),
        rule: a.rule,
        dialog: a.dialog,
        keys: a.keys,
        sent,
    }
}

/// The detector's refusal to answer a dialog, as the protocol's: its code,
/// and its sentence after the pane's name.
pub(crate) fn refusal_of(r: &tend_detector::answer::Refusal, pane: &str) -> Error {
    use tend_detector::answer::Refusal;
    let code = match r {
        Refusal::NoActions { .. } => ErrorCode::NoActions,
        Refusal::NoDialog { .. } => ErrorCode::NoDialog,
        Refusal::NoOption { .. } => ErrorCode::NoOption,
    };
    Error::new(code, format!("{pane}: {r}"))
}

/// Sends `answer()`'s response now, or after `wait` from a thread of its
/// own: a dialog younger than its agent's `settle_ms` must not hold up the
/// backend's other jobs while it ages.
pub(crate) fn answer_after(
    wait: std::time::Duration,
    reply: super::core::ReplyTx,
    answer: impl FnOnce() -> Result<Reply, Error> + Send + 'static,
) {
    if wait.is_zero() {
        let _ = reply.send(answer());
        return;
    }
    std::thread::spawn(move || {
        std::thread::sleep(wait);
        let _ = reply.send(answer());
    });
}

/// Starts the worker.
pub fn spawn(opts: Options, jobs: Receiver<Job>, events: Sender<Event>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let server = opts.server.clone();
        // `exec`: tmux runs the command with `/bin/sh -c`, and dash would
        // otherwise keep a shell waiting beside every pane's tap.
        let tap_cmd = |pane: PaneId| {
            "exec ".to_owned()
                + &shell_join(&[
                    opts.tend_bin.to_string_lossy().as_ref(),
                    "tap",
                    "--socket",
                    opts.tap.to_string_lossy().as_ref(),
                    "--pane",
                    &pane.to_string(),
                ])
        };
        let send = |ev: Event| {
            let _ = events.blocking_send(ev);
        };
        let mut server_pid: Option<u32> = None;
        let mut persister = crate::daemon::store::Persister::default();
        let mut pending: std::collections::VecDeque<Job> = std::collections::VecDeque::new();
        loop {
            if pending.is_empty() {
                match jobs.recv() {
                    Ok(job) => pending.push_back(job),
                    Err(_) => break,
                }
            }
            pending.extend(jobs.try_iter());
            // Every tap waiting to be installed, in one tmux process and
            // ahead of the rest: a daemon starting on a server with many
            // panes holds all their pipes after one invocation instead of
            // one each behind every pane's seed. (A tap installed before its
            // pane's seed is captured is harmless: output before the seed
            // is ignored, the capture holds it.)
            let (taps, rest): (Vec<Job>, Vec<Job>) = pending
                .drain(..)
                .partition(|j| matches!(j, Job::InstallTap(_) | Job::Retap(_)));
            pending = rest.into();
            if !taps.is_empty() {
                let mut list = Vec::with_capacity(taps.len());
                for job in taps {
                    match job {
                        Job::Retap(pane) => {
                            let _ = server.clear_tap_mark(pane);
                            list.push((pane, tap_cmd(pane)));
                        }
                        Job::InstallTap(pane) => list.push((pane, tap_cmd(pane))),
                        _ => {}
                    }
                }
                for (pane, outcome) in server.install_taps(&list) {
                    send(Event::TapInstalled {
                        pane,
                        outcome: outcome.map_err(|e| e.to_string()),
                    });
                }
            }
            // Publishes and listings queued one after another go out in
            // one tmux process: the updates in order (a later value of an
            // option wins, as it would one process later), the listing
            // last (it reads the panes after the updates, as it would have).
            // Only a run of them is merged, never across another job, so
            // the guard's token, a cleanup and a capture keep their place.
            if matches!(pending.front(), Some(Job::Publish { .. } | Job::List))
                && matches!(pending.get(1), Some(Job::Publish { .. } | Job::List))
            {
                let mut merged: Vec<OptionUpdate> = Vec::new();
                let mut to_refresh: Vec<String> = Vec::new();
                let mut any_list = false;
                while let Some(Job::Publish { .. } | Job::List) = pending.front() {
                    match pending.pop_front() {
                        Some(Job::Publish {
                            updates,
                            clients,
                            list,
                        }) => {
                            merged.extend(updates);
                            to_refresh = clients;
                            any_list |= list;
                        }
                        Some(Job::List) => any_list = true,
                        _ => {}
                    }
                }
                pending.push_front(Job::Publish {
                    updates: merged,
                    clients: to_refresh,
                    list: any_list,
                });
            }
            let Some(job) = pending.pop_front() else {
                continue;
            };
            // A listing alone, or riding on a publish.
            let (listing, job) = match job {
                Job::List => (Some(server.snapshot()), None),
                Job::Publish {
                    updates,
                    clients,
                    list: true,
                } => {
                    let result = if updates.is_empty() && clients.is_empty() {
                        server.snapshot()
                    } else {
                        server.publish_and_snapshot(&updates, &clients)
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
                        if server_pid.is_none() {
                            server_pid = Some(snap.server_pid);
                        }
                        if server_pid != Some(snap.server_pid) {
                            send(Event::ServerGone);
                            continue;
                        }
                        send(Event::Listed {
                            panes: snap.panes,
                            clients: snap.clients,
                        })
                    }
                    Err(e) => {
                        if e.is_no_server() {
                            send(Event::ServerGone);
                        } else {
                            eprintln!("tend: listing panes (or publishing) failed: {e}");
                        }
                    }
                }
            }
            let Some(job) = job else {
                continue;
            };
            match job {
                // Taken above.
                Job::List => {}
                Job::Capture(pane, purpose) => match server.capture(pane) {
                    Ok(capture) => send(Event::Captured {
                        pane,
                        capture,
                        purpose,
                    }),
                    Err(e) if e.is_no_server() => send(Event::ServerGone),
                    Err(_) => {}
                },
                // Taken above, all at once.
                Job::Retap(_) | Job::InstallTap(_) => {}
                // zellij's; tmux has the options.
                Job::Plugin(_) => {}
                Job::Publish {
                    updates, clients, ..
                } => {
                    // Vanished panes, windows and clients are skipped inside.
                    let result = server.publish(&updates, &clients);
                    crate::trace!("published updates={}", updates.len());
                    if let Err(e) = result {
                        if e.is_no_server() {
                            send(Event::ServerGone);
                            continue;
                        }
                        eprintln!("tend: publishing to tmux failed: {e}");
                    }
                }
                Job::Switch { client, pane } => {
                    let _ = server.switch_to(client.as_deref(), pane);
                }
                Job::RemoteAttach {
                    client,
                    window,
                    argv,
                } => {
                    if let Err(e) = remote_attach(&server, client.as_deref(), &window, &argv) {
                        eprintln!("tend: cannot open the window for {window}: {e}");
                    }
                }
                Job::Guard { token } => {
                    let program = opts.tend_bin.to_string_lossy().into_owned();
                    let socket = opts.control.to_string_lossy().into_owned();
                    // The cleanup goes through the very tmux that runs the
                    // server, on its socket.
                    let (tmux_bin, tmux_socket) = match (server.server_pid(), server.socket_path())
                    {
                        (Ok(pid), Ok(path)) => (
                            std::fs::read_link(format!("/proc/{pid}/exe"))
                                .map(|p| p.to_string_lossy().into_owned())
                                .unwrap_or_else(|_| "tmux".to_owned()),
                            path.to_string_lossy().into_owned(),
                        ),
                        (Err(e), _) | (_, Err(e)) => {
                            if e.is_no_server() {
                                send(Event::ServerGone);
                            } else {
                                eprintln!("tend: starting the guard failed: {e}");
                            }
                            continue;
                        }
                    };
                    let cmds = [
                        vec![
                            "set-option".to_owned(),
                            "-gq".into(),
                            guard::DAEMON_OPTION.into(),
                            token.clone(),
                        ],
                        guard::install_command(&program, &socket, &token, &tmux_bin, &tmux_socket),
                    ];
                    if let Err(e) = server.run_many(&cmds) {
                        if e.is_no_server() {
                            send(Event::ServerGone);
                            continue;
                        }
                        eprintln!("tend: starting the guard failed: {e}");
                    }
                }
                Job::Setup => {
                    // A daemon killed before this one left its options
                    // (its guard's cleanup may not have run yet: this
                    // daemon's token is set afterwards, and that cleanup then
                    // does nothing). Remove them; the first publish sets
                    // everything again.
                    match server.list_tend_options() {
                        Ok(found) => {
                            let stale: Vec<OptionUpdate> = found
                                .into_iter()
                                .filter(|(_, name)| guard::is_published(name))
                                .map(|(scope, name)| OptionUpdate::unset(scope, name))
                                .collect();
                            if let Err(e) = server.set_options(&stale) {
                                eprintln!("tend: removing a previous daemon's options failed: {e}");
                            }
                        }
                        Err(e) => {
                            eprintln!("tend: listing a previous daemon's options failed: {e}")
                        }
                    }
                    let program = opts.tend_bin.to_string_lossy().into_owned();
                    let socket = opts.control.to_string_lossy().into_owned();
                    let hooks: Vec<(&str, String)> = HOOKS
                        .iter()
                        .map(|h| {
                            (
                                *h,
                                tend_tmux::hooks::event_command(
                                    &program,
                                    &["poke", "--socket", &socket],
                                    h,
                                ),
                            )
                        })
                        .collect();
                    if let Err(e) = server.install_hooks(&hooks) {
                        eprintln!("tend: installing hooks failed: {e}");
                    }
                    match server.bind_keys(&bindings(&server, &opts)) {
                        Ok(report) => {
                            for line in crate::keys::report_lines(&report) {
                                eprintln!("tend: {line}");
                            }
                        }
                        Err(e) => eprintln!("tend: binding keys failed: {e}"),
                    }
                    // The user's placeholders filled in, or tend's segment
                    // added, so that the count shows the moment tend runs.
                    if let Err(e) = server.install_status() {
                        eprintln!("tend: filling in the status line failed: {e}");
                    }
                }
                Job::Read { pane, lines, reply } => {
                    let r = server
                        .capture_text(pane, lines.unwrap_or(0))
                        .map(|text| read_reply(pane.to_string(), text, lines))
                        .map_err(|e| Error::new(ErrorCode::Tmux, e.to_string()));
                    let _ = reply.send(r);
                }
                Job::Paste { pane, text, enter } => {
                    let target = pane.to_string();
                    let mut cmds = vec![
                        vec![
                            "set-buffer".to_string(),
                            "-b".into(),
                            "tend-prompt".into(),
                            "--".into(),
                            text,
                        ],
                        vec![
                            "paste-buffer".to_string(),
                            "-p".into(),
                            "-d".into(),
                            "-b".into(),
                            "tend-prompt".into(),
                            "-t".into(),
                            target.clone(),
                        ],
                    ];
                    if enter {
                        cmds.push(vec![
                            "send-keys".into(),
                            "-t".into(),
                            target,
                            "Enter".into(),
                        ]);
                    }
                    if let Err(e) = server.run_many(&cmds) {
                        eprintln!("tend: prompt to {pane} failed: {e}");
                    }
                }
                Job::SendKeys { pane, keys } => {
                    let mut cmd = vec!["send-keys".to_string(), "-t".into(), pane.to_string()];
                    cmd.extend(keys);
                    if let Err(e) = server.run(cmd) {
                        eprintln!("tend: send-keys to {pane} failed: {e}");
                    }
                }
                Job::Answer {
                    pane,
                    manifest,
                    action,
                    send,
                    wait,
                    reply,
                } => {
                    let server = server.clone();
                    answer_after(wait, reply, move || {
                        answer(&server, pane, &manifest, action, send)
                    });
                }
                Job::Persist { path, text } => {
                    // Retried every second by the table while it fails.
                    if !persister.write(&path, &text) {
                        send(Event::PersistFailed);
                    }
                }
                Job::Cleanup => {
                    remove_everything(&server);
                    return;
                }
            }
        }
    })
}
