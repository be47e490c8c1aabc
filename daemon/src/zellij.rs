//! The zellij backend: the thread that runs the pane table's [`Job`]s
//! against a zellij session and reports back as [`Event`]s, as the tmux
//! worker does for tmux. Everything else (the pane table, the control
//! socket, reports, parks, notifications, events) is the daemon's one core.
//!
//! * panes: `list-panes --json` and `list-clients` on each reconcile
//!   (terminal panes only), each pane's root process from `/proc/*/environ`
//!   (`ZELLIJ_PANE_ID`), turned into the table's pane and client rows;
//! * output: one `zellij subscribe` for the panes in the tabs clients look
//!   at (whole viewports, pushed to the table as polled screens), and
//!   `dump-screen` for panes in background tabs at most every
//!   [`POLL_BACKGROUND`]; seeds with `dump-screen`;
//! * published status: the core's [`Overview`] made into the plugin's payload
//!   ([`payload`]) and pushed to tend's plugin with
//!   `zellij pipe` from its own thread (newest only, never blocking), again
//!   every [`HEARTBEAT`] so that the plugin's time to live never runs out
//!   while the daemon lives;
//! * jumps: `focus-pane-id`; keys: `write` (tmux key names translated to
//!   bytes); prompts: `paste` (bracketed), then Enter.
//!
//! tmux-only jobs (taps, hooks, key bindings, the guard, remote windows)
//! are no-ops here, or a clear "not in zellij" message.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tend_core::overview::Overview;
use tend_core::{ClientInfo, Input, MuxJob, PaneInfo, Pipe, Screen, TapOutcome};
use tend_protocol::{PaneId, SessionId, WindowId};
use tend_zellij_host::{
    JumpTarget, PaneId as ZPaneId, PluginStatus, Session, SubscribeEvent, SubscribeOptions,
    Subscription,
};
use tokio::sync::mpsc::Sender;

use super::event::Event;
use super::worker::Job;
use tend_core::CapturePurpose;
use tend_protocol::reply::Reply;
use tend_protocol::{Error, ErrorCode};

/// Background-tab panes are read with `dump-screen` (one zellij process
/// each) at most this often.
pub const POLL_BACKGROUND: Duration = Duration::from_millis(1500);
/// The status is pushed again this often while nothing changes; the plugin
/// drops it after three times this without a push.
pub const HEARTBEAT: Duration = Duration::from_secs(30);
/// How often the subscription's screens are passed on.
const PUMP: Duration = Duration::from_millis(50);
/// How often the thread wakes with no subscription and no job.
const IDLE_WAKE: Duration = Duration::from_secs(1);

/// What the backend remembers of a pane between listings.
#[derive(Debug, Default)]
struct ZPane {
    tab_id: usize,
    title: String,
    rows: u32,
    cols: u32,
    cursor: Option<(usize, usize)>,
    last_poll: Option<Instant>,
}

struct Backend {
    session: Session,
    panes: HashMap<u32, ZPane>,
    visible_tabs: HashSet<usize>,
    sub: Option<(Subscription, Vec<u32>)>,
    push: std::sync::mpsc::Sender<PluginStatus>,
    last_status: Option<PluginStatus>,
    last_push: Instant,
    persister: crate::store::Persister,
    events: Sender<Event>,
}

fn send(events: &Sender<Event>, input: Input) {
    let _ = events.blocking_send(Event::Core(input));
}

/// Bytes for tmux key names (`send-keys` style, as manifests' `[actions]`
/// and `tend send-keys` give them): named keys, `C-x` controls, and any
/// other word as its text.
pub fn key_bytes(keys: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for k in keys {
        let named: Option<&[u8]> = match k.as_str() {
            "Enter" | "C-m" => Some(b"\r"),
            "Escape" | "Esc" => Some(b"\x1b"),
            "Tab" => Some(b"\t"),
            "BTab" => Some(b"\x1b[Z"),
            "BSpace" => Some(b"\x7f"),
            "Space" => Some(b" "),
            "Up" => Some(b"\x1b[A"),
            "Down" => Some(b"\x1b[B"),
            "Right" => Some(b"\x1b[C"),
            "Left" => Some(b"\x1b[D"),
            "Home" => Some(b"\x1b[H"),
            "End" => Some(b"\x1b[F"),
            "PageUp" | "PPage" => Some(b"\x1b[5~"),
            "PageDown" | "NPage" => Some(b"\x1b[6~"),
            "DC" | "Delete" => Some(b"\x1b[3~"),
            _ => None,
        };
        if let Some(b) = named {
            out.extend_from_slice(b);
            continue;
        }
        let ctrl = k
            .strip_prefix("C-")
            .filter(|c| c.len() == 1)
            .and_then(|c| c.bytes().next())
            .filter(u8::is_ascii_alphabetic);
        match ctrl {
            Some(c) => out.push(c.to_ascii_lowercase() - b'a' + 1),
            None => out.extend_from_slice(k.as_bytes()),
        }
    }
    out
}

/// `rows` as a [`Capture`] of pane `n`: what the pane table rebuilds a
/// screen from.
fn capture_of(n: u32, p: &ZPane, rows: &[String]) -> Screen {
    let mut text = String::new();
    for r in rows {
        text.push_str(r);
        // Styles end with their row, as `redraw_bytes` has them.
        text.push_str("\x1b[0m\n");
    }
    let (x, y) = p.cursor.unwrap_or((0, rows.len().saturating_sub(1)));
    Screen {
        pane_id: PaneId(n),
        text,
        cursor_x: u32::try_from(x).unwrap_or(0),
        cursor_y: u32::try_from(y).unwrap_or(0),
        cursor_visible: p.cursor.is_some(),
        alternate_on: false,
        in_mode: false,
        width: p.cols,
        height: p.rows,
    }
}

fn nz(n: usize) -> u32 {
    u32::try_from(n.max(1)).unwrap_or(u32::MAX)
}

impl Backend {
    fn send(&self, input: Input) {
        send(&self.events, input);
    }

    fn list(&mut self) {
        let panes = match self.session.list_panes() {
            Ok(p) => p,
            Err(e) => {
                if self.session.is_running().ok() == Some(false) {
                    self.send(Input::ServerGone);
                } else {
                    crate::say!("listing zellij panes failed: {e}");
                }
                return;
            }
        };
        let zclients = self.session.list_clients().unwrap_or_default();
        let procs = tend_zellij_host::pane_processes(self.session.name()).unwrap_or_default();
        let terminals: Vec<_> = panes
            .into_iter()
            .filter(|p| p.is_terminal() && !p.suppressed && p.selectable)
            .collect();
        let focused: HashSet<u32> = zclients
            .iter()
            .filter_map(|c| c.pane.filter(|p| p.is_terminal()).map(|p| p.number()))
            .collect();
        // Tabs a client looks at: the tabs of focused panes.
        self.visible_tabs = terminals
            .iter()
            .filter(|p| focused.contains(&p.id.number()))
            .map(|p| p.tab_id)
            .collect();
        let live: HashSet<u32> = terminals.iter().map(|p| p.id.number()).collect();
        self.panes.retain(|n, _| live.contains(n));
        let name = self.session.name().to_owned();
        let mut rows = Vec::with_capacity(terminals.len());
        for p in &terminals {
            let n = p.id.number();
            let e = self.panes.entry(n).or_default();
            e.tab_id = p.tab_id;
            e.title = p.title.clone();
            e.rows = nz(p.geometry.content_rows);
            e.cols = nz(p.geometry.content_cols);
            e.cursor = p.cursor;
            rows.push(PaneInfo {
                pane_id: PaneId(n),
                pane_pid: procs.iter().find(|pp| pp.pane == n).map_or(0, |pp| pp.pid),
                session_id: SessionId(0),
                session_name: name.clone(),
                window_id: WindowId(u32::try_from(p.tab_id).unwrap_or(u32::MAX)),
                // Users know a tab by its name.
                window_label: p.tab_name.clone(),
                window_index: u32::try_from(p.tab_position).unwrap_or(u32::MAX),
                window_name: p.tab_name.clone(),
                pane_index: None,
                window_active: self.visible_tabs.contains(&p.tab_id),
                pane_active: focused.contains(&n),
                width: e.cols,
                height: e.rows,
                current_command: p.command.clone().unwrap_or_default(),
                // zellij has no pipes: output comes by subscription.
                pipe: Pipe::None,
                dead: p.exited,
                dead_status: p.exit_status,
                title: p.title.clone(),
                alternate_on: false,
                in_mode: false,
                current_path: String::new(),
            });
        }
        let clients = zclients
            .iter()
            .map(|c| ClientInfo {
                name: format!("zellij-client-{}", c.client_id),
                pane_id: c
                    .pane
                    .filter(|p| p.is_terminal())
                    .map(|p| PaneId(p.number())),
                control_mode: false,
                // No command-line zellij has a client's last keystroke: no
                // snooze ends by typing here.
                activity: 0,
            })
            .collect();
        self.send(Input::Listed {
            panes: rows,
            clients,
        });
        self.resubscribe();
    }

    /// One subscription for the panes in visible tabs; restarted when that
    /// set changes or it ended.
    fn resubscribe(&mut self) {
        let mut want: Vec<u32> = self
            .panes
            .iter()
            .filter(|(_, p)| self.visible_tabs.contains(&p.tab_id))
            .map(|(n, _)| *n)
            .collect();
        want.sort_unstable();
        if self.sub.as_ref().map(|(_, w)| w) == Some(&want) {
            return;
        }
        self.sub = None;
        if want.is_empty() {
            return;
        }
        let ids: Vec<ZPaneId> = want.iter().map(|n| ZPaneId::Terminal(*n)).collect();
        match Subscription::start(
            &self.session,
            &ids,
            SubscribeOptions {
                ansi: true,
                scrollback: None,
            },
        ) {
            Ok(s) => self.sub = Some((s, want)),
            Err(e) => crate::say!("cannot follow the visible zellij panes: {e}"),
        }
    }

    fn subscribed(&self, n: u32) -> bool {
        self.sub.as_ref().is_some_and(|(_, w)| w.contains(&n))
    }

    /// Passes the subscription's newest screens on as polled screens.
    fn pump(&mut self) {
        let mut updates = Vec::new();
        if let Some((sub, _)) = self.sub.as_mut() {
            for ev in sub.drain_latest() {
                match ev {
                    SubscribeEvent::Update(u) => updates.push(u),
                    SubscribeEvent::Closed(_) => {}
                    SubscribeEvent::Ended { .. } => {
                        // Started again at the next listing.
                        self.sub = None;
                        break;
                    }
                }
            }
        }
        for u in updates {
            let n = u.pane.number();
            let Some(p) = self.panes.get(&n) else {
                continue;
            };
            let capture = capture_of(n, p, &u.viewport);
            self.send(Input::Captured {
                pane: PaneId(n),
                screen: capture,
                purpose: CapturePurpose::Poll,
            });
        }
    }

    fn capture(&mut self, pane: PaneId, purpose: CapturePurpose) {
        let n = pane.0;
        if purpose == CapturePurpose::Poll {
            // The subscription pushes these panes' screens as they change.
            if self.subscribed(n) {
                return;
            }
            let recent = self
                .panes
                .get(&n)
                .and_then(|p| p.last_poll)
                .is_some_and(|t| t.elapsed() < POLL_BACKGROUND);
            if recent {
                return;
            }
        }
        let text = match self.session.dump_screen(ZPaneId::Terminal(n), true) {
            Ok(t) => t,
            Err(_) => return,
        };
        let Some(p) = self.panes.get_mut(&n) else {
            return;
        };
        p.last_poll = Some(Instant::now());
        let rows: Vec<String> = text.lines().map(str::to_owned).collect();
        let capture = capture_of(n, p, &rows);
        self.send(Input::Captured {
            pane,
            screen: capture,
            purpose,
        });
    }

    fn write(&self, pane: PaneId, bytes: &[u8]) -> Result<(), String> {
        write_keys(&self.session, pane, bytes)
    }

    fn seen(&self, pane: PaneId) -> SeenPane {
        let p = self.panes.get(&pane.0);
        SeenPane {
            cursor: p.and_then(|p| p.cursor).unwrap_or((0, 0)),
            title: p.map(|p| p.title.clone()).unwrap_or_default(),
        }
    }

    fn status(&mut self, status: Option<PluginStatus>) {
        let due = self.last_push.elapsed() >= HEARTBEAT;
        let status = match status {
            Some(s) if self.last_status.as_ref() != Some(&s) => s,
            _ if due => match self.last_status.clone() {
                Some(s) => s,
                None => return,
            },
            _ => return,
        };
        self.last_status = Some(status.clone());
        self.last_push = Instant::now();
        let _ = self.push.send(status);
    }

    /// Runs one job; false when the backend is done.
    fn run(&mut self, job: Job) -> bool {
        let job = match job {
            Job::Mux(job) => job,
            Job::Persist { path, text } => {
                if !self.persister.write(&path, &text) {
                    self.send(Input::PersistFailed);
                }
                return true;
            }
            Job::Cleanup => return false,
        };
        match job {
            MuxJob::List => self.list(),
            MuxJob::Capture(pane, purpose) => self.capture(pane, purpose),
            // zellij has no pipes to hand over: output comes from the
            // subscription and dump-screen, as for a foreign pipe in tmux.
            // The core does not ask (the backend says its output is read
            // `ShownLive`); answered should it ever.
            MuxJob::InstallTap(pane) | MuxJob::Retap(pane) => self.send(Input::TapInstalled {
                pane,
                outcome: TapOutcome::Foreign,
            }),
            MuxJob::Publish { .. } => {}
            MuxJob::Overview(o) => self.status(Some(payload(o))),
            MuxJob::Switch { pane, .. } => {
                if let Err(e) = self.session.focus_pane(ZPaneId::Terminal(pane.0)) {
                    crate::say!("cannot focus terminal_{}: {e}", pane.0);
                }
            }
            MuxJob::RemoteAttach { window, .. } => {
                crate::say!("remote panes open in a local tmux window; not in zellij ({window})")
            }
            // Hooks, key bindings and the guard are tmux's; the core
            // refuses `restore` in zellij before any job is made.
            MuxJob::Setup | MuxJob::Guard { .. } | MuxJob::Resume { .. } => {}
            MuxJob::Read { pane, lines, reply } => {
                let name = ZPaneId::Terminal(pane.0).to_string();
                let id = ZPaneId::Terminal(pane.0);
                let text = if lines.is_some_and(|n| n > 0) {
                    self.session.dump_history(id)
                } else {
                    self.session.dump_screen(id, false)
                };
                let result = text
                    .map(|t| tend_core::answer::read_reply(name, t, lines))
                    .map_err(|e| Error::new(ErrorCode::Zellij, e.to_string()));
                self.send(Input::Done { reply, result });
            }
            MuxJob::Paste { pane, text, enter } => {
                let name = ZPaneId::Terminal(pane.0).to_string();
                let pasted = self
                    .session
                    .act(&["paste", "--pane-id", name.as_str(), text.as_str()])
                    .map(|_| ())
                    .map_err(|e| e.to_string());
                let r = pasted.and_then(|()| {
                    if enter {
                        self.write(pane, b"\r")
                    } else {
                        Ok(())
                    }
                });
                if let Err(e) = r {
                    crate::say!("prompt to {name} failed: {e}");
                }
            }
            MuxJob::SendKeys { pane, keys } => {
                if let Err(e) = self.write(pane, &key_bytes(&keys)) {
                    crate::say!("keys to terminal_{} failed: {e}", pane.0);
                }
            }
            MuxJob::Answer {
                pane,
                manifest,
                action,
                send,
                reply,
            } => {
                let seen = self.seen(pane);
                let result = answer(&self.session, &seen, pane, &manifest, action, send);
                self.send(Input::Done { reply, result });
            }
            MuxJob::LimitResume {
                pane,
                manifest,
                text,
                by,
                reply,
            } => {
                let seen = self.seen(pane);
                let result = limit_resume(&self.session, &seen, pane, &manifest, &text);
                self.send(Input::LimitResumed {
                    pane,
                    outcome: tend_core::limits::ResumeOutcome { result, by, reply },
                });
            }
        }
        true
    }
}

/// The pane's name and its screen as zellij dumps it, with the cursor and
/// title the plugin last sent, for a check before keys are sent.
fn dump_for_check(
    session: &Session,
    seen: &SeenPane,
    pane: PaneId,
) -> Result<(String, tend_core::answer::Captured), Error> {
    let name = ZPaneId::Terminal(pane.0).to_string();
    let text = session
        .dump_screen(ZPaneId::Terminal(pane.0), false)
        .map_err(|e| Error::new(ErrorCode::Zellij, format!("cannot read {name}: {e}")))?;
    let (x, y) = seen.cursor;
    let captured = tend_core::answer::Captured {
        rows: text.lines().map(|l| l.trim_end().to_owned()).collect(),
        title: seen.title.clone(),
        alternate: false,
        cursor: (
            u32::try_from(y).unwrap_or(u32::MAX),
            u32::try_from(x).unwrap_or(u32::MAX),
        ),
        in_mode: false,
    };
    Ok((name, captured))
}

/// [`MuxJob::LimitResume`] in zellij: the screen read again, checked, then the
/// text (pasted, and Enter unless the agent wants a pause, which the core
/// sends) or the limit dialog's keys.
fn limit_resume(
    session: &Session,
    seen: &SeenPane,
    pane: PaneId,
    manifest: &tend_detector::Manifest,
    text: &str,
) -> Result<tend_detector::limit::Resume, Error> {
    use tend_detector::limit::Resume;
    let (name, captured) = dump_for_check(session, seen, pane)?;
    let r = tend_core::limits::check(&name, captured, manifest, text)?;
    let failed =
        |e: String| Error::new(ErrorCode::Zellij, format!("writing to {name} failed: {e}"));
    match &r {
        Resume::Text(t) => {
            session
                .act(&["paste", "--pane-id", name.as_str(), t.as_str()])
                .map_err(|e| failed(e.to_string()))?;
            if manifest.prompt.enter_after.is_zero() {
                write_keys(session, pane, b"\r").map_err(failed)?;
            }
        }
        Resume::Keys(keys) => write_keys(session, pane, &key_bytes(keys)).map_err(failed)?,
    }
    Ok(r)
}

/// Pushes only the newest status, from its own thread: a plugin still
/// waiting for its permissions holds `zellij pipe`, and that must never
/// hold the daemon. Clears the status when the daemon stops.
fn pusher(session: Session, statuses: Receiver<PluginStatus>) {
    let session = session.with_timeout(Duration::from_secs(2));
    while let Ok(mut s) = statuses.recv() {
        while let Ok(newer) = statuses.try_recv() {
            s = newer;
        }
        let _ = session.push_status(&s);
        // zjstatus users show the sentence in their own bar (`{pipe_tend}`).
        let _ = session.push_zjstatus(&s.summary);
    }
    let _ = session.clear_status();
}

/// What the zellij backend offers the core: the status as one payload for
/// tend's plugin (which hides it once its time to live runs out: no guard),
/// one subscription for the tabs in view, no `tend restore` (zellij brings
/// its sessions back itself), no local windows for remote panes.
pub const BACKEND: tend_core::Backend = tend_core::Backend {
    mux: tend_core::Mux::Zellij,
    guard: false,
    status: tend_core::StatusForm::Overview,
    output: tend_core::OutputRead::ShownLive,
    restore: false,
    remote_windows: false,
};

/// Starts the zellij backend for `session`: jobs in, events out.
pub fn spawn(
    session: Session,
    jobs: std::sync::mpsc::Receiver<Job>,
    events: Sender<Event>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let (push_tx, push_rx) = channel();
        let push_session = session.clone();
        let pusher = std::thread::spawn(move || pusher(push_session, push_rx));
        let mut b = Backend {
            session,
            panes: HashMap::new(),
            visible_tabs: HashSet::new(),
            sub: None,
            push: push_tx,
            last_status: None,
            last_push: Instant::now(),
            persister: Default::default(),
            events,
        };
        loop {
            // Screens arrive on the subscription; without one only the
            // heartbeat is due, and a job wakes the thread anyway.
            let wait = if b.sub.is_some() { PUMP } else { IDLE_WAKE };
            match jobs.recv_timeout(wait) {
                Ok(job) => {
                    if !b.run(job) {
                        break;
                    }
                    let mut done = false;
                    while let Ok(job) = jobs.try_recv() {
                        if !b.run(job) {
                            done = true;
                            break;
                        }
                    }
                    if done {
                        break;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            b.pump();
            b.status(None);
        }
        b.sub = None;
        // Dropping the sender ends the pusher, which clears the status.
        drop(b);
        let _ = pusher.join();
    })
}

/// What the backend last knew of a pane that [`answer`] cannot read from
/// `dump-screen`: where its cursor is and its title.
struct SeenPane {
    cursor: (usize, usize),
    title: String,
}

/// Writes raw bytes to a pane, as typed keys.
fn write_keys(session: &Session, pane: PaneId, bytes: &[u8]) -> Result<(), String> {
    if bytes.is_empty() {
        return Ok(());
    }
    let id = ZPaneId::Terminal(pane.0).to_string();
    let mut args = vec!["write".to_owned(), "--pane-id".into(), id];
    args.extend(bytes.iter().map(u8::to_string));
    session.act(&args).map(|_| ()).map_err(|e| e.to_string())
}

/// [`MuxJob::Answer`] in zellij: the screen read again, checked, then the keys.
/// A free function so that a wait for a young dialog can run it on its own
/// thread.
fn answer(
    session: &Session,
    seen: &SeenPane,
    pane: PaneId,
    manifest: &tend_detector::Manifest,
    action: tend_detector::answer::Action,
    send: bool,
) -> Result<Reply, Error> {
    let (name, captured) = dump_for_check(session, seen, pane)?;
    let a = tend_core::answer::check(&name, captured, manifest, action, send)?;
    if send {
        write_keys(session, pane, &key_bytes(&a.keys)).map_err(|e| {
            Error::new(
                ErrorCode::Zellij,
                format!("writing the keys to {name} failed: {e}"),
            )
        })?;
    }
    Ok(tend_core::answer::answered(name, manifest, action, a, send))
}

/// The plugin's payload (`tend-zellij-payload`) for the core's overview:
/// its words as text, and a time to live of three heartbeats.
pub fn payload(o: Overview) -> PluginStatus {
    let word = |w: Option<&'static str>| w.map(str::to_owned);
    PluginStatus {
        v: tend_zellij_host::plugin::PAYLOAD_VERSION,
        summary: o.summary,
        needs: o.needs,
        quiet: o.quiet,
        band: word(o.band.map(|b| b.as_str())),
        ttl: Some(HEARTBEAT.as_secs_f64() * 3.0),
        jump: o
            .jump
            .into_iter()
            .map(|j| JumpTarget {
                pane: j.pane.0,
                band: word(j.band.map(|b| b.as_str())),
                state: word(j.state.map(|s| s.as_str())),
                reason: word(j.reason.map(|r| r.as_str())),
                agent: j.agent,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmux_key_names_become_bytes() {
        let k = |v: &[&str]| key_bytes(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(k(&["y", "Enter"]), b"y\r");
        assert_eq!(k(&["Down", "Down", "Enter"]), b"\x1b[B\x1b[B\r");
        assert_eq!(k(&["Escape"]), b"\x1b");
        assert_eq!(k(&["C-c"]), b"\x03");
        assert_eq!(k(&["1"]), b"1");
        assert_eq!(k(&["hello world"]), b"hello world");
    }

    #[test]
    fn the_overview_becomes_the_plugins_payload_word_for_word() {
        use tend_core::overview::JumpTarget as Target;
        use tend_vocab::{Band, Reason, State};
        let o = Overview {
            summary: "1 agent needs you".into(),
            needs: 1,
            quiet: 0,
            band: Some(Band::Waiting),
            jump: vec![Target {
                pane: PaneId(3),
                band: Some(Band::Waiting),
                state: Some(State::Waiting),
                reason: Some(Reason::Approval),
                agent: Some("claude".into()),
            }],
        };
        let p = payload(o);
        assert_eq!(
            p.to_json(),
            r#"{"v":1,"summary":"1 agent needs you","needs":1,"quiet":0,"band":"waiting","ttl":90.0,"jump":[{"pane":3,"band":"waiting","state":"waiting","reason":"approval","agent":"claude"}]}"#
        );
    }
}
