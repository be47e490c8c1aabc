//! The zellij backend: the same detector, identity and attention model as
//! the tmux daemon, fed from zellij.
//!
//! * panes: `list-panes --json` every second (terminal panes only);
//! * output: one `zellij subscribe` for the panes in the tabs clients look
//!   at (whole viewports, redrawn into the screen model), and
//!   `dump-screen` polling for panes in background tabs, fed only on change;
//! * identity: the pane's root process from `/proc/*/environ`
//!   (`ZELLIJ_PANE_ID`), then the same process-tree resolver as tmux;
//! * output to the user: the status segment pushed to tend's plugin with
//!   `zellij pipe` (newest status only, never blocking the loop); jumps
//!   with `focus-pane-id`.
//!
//! Self-reports, park and snooze and the tmux key bindings are tmux-only
//! for now; the control socket answers `ping`, `list`, `get`, `status`,
//! `next` (with `jump`), `explain` and `stop`.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tend_attention::{self as attention, Band, PaneFacts};
use tend_detector::engine::PaneDetector;
use tend_detector::identity::SamplePolicy;
use tend_detector::{DetectorConfig, Registry, State};
use tend_zellij_host::{
    redraw_bytes, JumpTarget, PaneId, PluginStatus, Session, SubscribeEvent, SubscribeOptions,
    Subscription,
};

use crate::error::CliError;
use crate::protocol::{PaneView, Request, Response};
use crate::sampler::{PaneWatch, Sampler};

const LIST_EVERY: Duration = Duration::from_secs(1);
const POLL_BACKGROUND: Duration = Duration::from_millis(1500);
const HEARTBEAT: Duration = Duration::from_secs(30);
const TICK: Duration = Duration::from_millis(50);

/// What the zellij daemon needs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The zellij session.
    pub session: Session,
    /// Control socket path.
    pub control: PathBuf,
    /// Detector timings.
    pub detector: DetectorConfig,
}

struct ZPane {
    title: String,
    tab_id: usize,
    tab_name: String,
    det: PaneDetector,
    watch: Option<PaneWatch>,
    last_dump: Option<String>,
    last_poll: Option<Instant>,
    seen: bool,
    since_wall: f64,
    seq: u64,
    key: Option<(Option<State>, Option<tend_detector::Reason>, Option<Band>)>,
}

struct Z {
    session: Session,
    cfg: Arc<DetectorConfig>,
    registry: Registry,
    sampler: Sampler,
    start: Instant,
    start_wall: f64,
    panes: BTreeMap<u32, ZPane>,
    focused: HashSet<u32>,
    visible_tabs: HashSet<usize>,
    sub: Option<(Subscription, Vec<u32>)>,
    push: Sender<PluginStatus>,
    last_status: Option<PluginStatus>,
    last_push: Instant,
    stopping: bool,
}

fn nz(n: usize) -> u16 {
    u16::try_from(n.max(1)).unwrap_or(u16::MAX)
}

impl Z {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn wall(&self) -> f64 {
        self.start_wall + self.start.elapsed().as_secs_f64()
    }

    fn list(&mut self) {
        let Ok(panes) = self.session.list_panes() else {
            if self.session.is_running().ok() == Some(false) {
                self.stopping = true;
            }
            return;
        };
        let now = self.now();
        let clients = self.session.list_clients().unwrap_or_default();
        self.focused = clients
            .iter()
            .filter_map(|c| c.pane.map(|p| p.number()))
            .collect();
        let procs = tend_zellij_host::pane_processes(self.session.name()).unwrap_or_default();
        let terminals: Vec<_> = panes
            .into_iter()
            .filter(|p| p.is_terminal() && !p.suppressed && p.selectable)
            .collect();
        // Tabs a client looks at: the tabs of focused panes.
        self.visible_tabs = terminals
            .iter()
            .filter(|p| self.focused.contains(&p.id.number()))
            .map(|p| p.tab_id)
            .collect();
        let live: HashSet<u32> = terminals.iter().map(|p| p.id.number()).collect();
        self.panes.retain(|n, _| live.contains(n));
        for p in terminals {
            let n = p.id.number();
            let (rows, cols) = (nz(p.geometry.content_rows), nz(p.geometry.content_cols));
            let entry = self.panes.entry(n).or_insert_with(|| ZPane {
                title: String::new(),
                tab_id: p.tab_id,
                tab_name: p.tab_name.clone(),
                det: PaneDetector::new(self.cfg.clone(), rows, cols),
                watch: None,
                last_dump: None,
                last_poll: None,
                seen: false,
                since_wall: self.start_wall + now.as_secs_f64(),
                seq: 0,
                key: None,
            });
            if (rows, cols) != entry.det.screen().size() {
                entry.det.resize(now, rows, cols);
            }
            entry.tab_id = p.tab_id;
            entry.tab_name = p.tab_name.clone();
            entry.title = p.title.clone();
            if entry.watch.is_none() {
                if let Some(pp) = procs.iter().find(|pp| pp.pane == n) {
                    entry.watch = Some(PaneWatch::new(pp.pid, now, SamplePolicy::default()));
                }
            }
            if self.focused.contains(&n) && entry.det.status().state == Some(State::Completed) {
                entry.seen = true;
            }
        }
        self.resubscribe();
    }

    /// One subscription for the panes in visible tabs; restarted when that
    /// set changes.
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
        let ids: Vec<PaneId> = want.iter().map(|n| PaneId::Terminal(*n)).collect();
        if let Ok(s) = Subscription::start(
            &self.session,
            &ids,
            SubscribeOptions {
                ansi: true,
                scrollback: None,
            },
        ) {
            self.sub = Some((s, want));
        }
    }

    fn frame(&mut self, n: u32, rows: &[String], initial: bool) {
        let now = self.now();
        let Some(p) = self.panes.get_mut(&n) else {
            return;
        };
        let mut bytes = b"\x1b]2;".to_vec();
        bytes.extend(p.title.bytes().filter(|b| !b.is_ascii_control()));
        bytes.push(0x07);
        bytes.extend(redraw_bytes(rows));
        if initial {
            p.det.seed(now, &bytes);
        } else {
            p.det.feed(now, &bytes);
        }
        if let Some(w) = p.watch.as_mut() {
            w.on_output(now);
        }
    }

    fn pump(&mut self) {
        let mut updates = Vec::new();
        if let Some((sub, _)) = self.sub.as_mut() {
            for ev in sub.drain_latest() {
                match ev {
                    SubscribeEvent::Update(u) => updates.push(u),
                    SubscribeEvent::Closed(_) => {}
                    SubscribeEvent::Ended { .. } => {
                        self.sub = None;
                        break;
                    }
                }
            }
        }
        for u in updates {
            self.frame(u.pane.number(), &u.viewport, u.initial);
        }
        // Background tabs: poll, feed only on change (silence stays silence).
        let due: Vec<u32> = self
            .panes
            .iter()
            .filter(|(_, p)| !self.visible_tabs.contains(&p.tab_id))
            .filter(|(_, p)| p.last_poll.is_none_or(|t| t.elapsed() >= POLL_BACKGROUND))
            .map(|(n, _)| *n)
            .collect();
        for n in due {
            let text = self
                .session
                .dump_screen(PaneId::Terminal(n), true)
                .unwrap_or_default();
            let Some(p) = self.panes.get_mut(&n) else {
                continue;
            };
            p.last_poll = Some(Instant::now());
            if p.last_dump.as_deref() == Some(text.as_str()) {
                continue;
            }
            let initial = p.last_dump.is_none();
            p.last_dump = Some(text.clone());
            let rows: Vec<String> = text.lines().map(str::to_owned).collect();
            self.frame(n, &rows, initial);
        }
    }

    fn tick(&mut self) {
        let now = self.now();
        let wall = self.wall();
        for p in self.panes.values_mut() {
            p.det.tick(now);
            if let Some(w) = p.watch.as_mut() {
                if w.next_wakeup() <= now {
                    let prompt_visible = matches!(p.det.status().state, None | Some(State::Exited));
                    let up = w.poll(&mut self.sampler, &self.registry, now, prompt_visible);
                    if let Some(change) = &up.change {
                        let m = change
                            .to
                            .as_ref()
                            .and_then(|a| self.registry.get(a))
                            .cloned()
                            .map(Arc::new);
                        p.det.set_agent(now, m);
                        p.seen = false;
                    }
                    if let Some(obs) = up.observation {
                        p.det.observe_process(now, obs);
                    }
                }
            }
            while let Some(t) = p.det.poll_transition() {
                if t.to != State::Completed {
                    p.seen = false;
                }
            }
            let st = p.det.status();
            let band = band_of(p);
            let key = (st.state, st.reason, band);
            if p.key != Some(key) {
                if p.key.map(|k| (k.0, k.1)) != Some((st.state, st.reason)) {
                    p.seq += 1;
                    p.since_wall = wall;
                }
                p.key = Some(key);
            }
        }
        let status = self.status();
        let changed = self.last_status.as_ref() != Some(&status);
        if changed || self.last_push.elapsed() >= HEARTBEAT {
            self.last_status = Some(status.clone());
            self.last_push = Instant::now();
            let _ = self.push.send(status);
        }
    }

    fn view(&self, n: u32, p: &ZPane) -> PaneView {
        let st = p.det.status();
        PaneView {
            pane: format!("terminal_{n}"),
            session: self.session.name().to_owned(),
            window: p.tab_name.clone(),
            agent: st.agent.clone(),
            state: st.state.map(|s| s.as_str().to_owned()),
            reason: st.reason.map(|r| r.as_str().to_owned()),
            band: band_of(p).map(|b| b.as_str().to_owned()),
            since: st.state.map(|_| p.since_wall),
            rule: st.state.map(|_| st.rule.clone()),
            quiet: st.quiet,
            state_change_seq: p.seq,
            tap: if self.visible_tabs.contains(&p.tab_id) {
                "subscribe"
            } else {
                "polling"
            }
            .into(),
            authority: "screen".into(),
            run: st.run,
            exit_code: st.exit_code,
            ..PaneView::default()
        }
    }

    fn order(&self, kind: &str) -> Vec<u32> {
        let ids: Vec<String> = self.panes.keys().map(|n| n.to_string()).collect();
        let cands: Vec<attention::Candidate<'_>> = self
            .panes
            .values()
            .zip(&ids)
            .filter_map(|(p, id)| {
                let st = p.det.status();
                Some(attention::Candidate {
                    pane: id,
                    session: "",
                    band: band_of(p)?,
                    reason: st.reason,
                    since: p.since_wall,
                })
            })
            .collect();
        let order = match kind {
            "working" => attention::working_order(&cands),
            _ => attention::attention_order(&cands),
        };
        order.iter().filter_map(|s| s.parse().ok()).collect()
    }

    fn status(&self) -> PluginStatus {
        let bands: Vec<Band> = self.panes.values().filter_map(band_of).collect();
        let needs = bands.iter().filter(|b| b.is_demand()).count();
        let quiet = bands.iter().filter(|b| **b == Band::Quiet).count();
        let jump = self
            .order("waiting")
            .into_iter()
            .filter_map(|n| {
                let p = self.panes.get(&n)?;
                let st = p.det.status();
                Some(JumpTarget {
                    pane: n,
                    band: band_of(p).map(|b| b.as_str().to_owned()),
                    state: st.state.map(|s| s.as_str().to_owned()),
                    reason: st.reason.map(|r| r.as_str().to_owned()),
                    agent: st.agent,
                })
            })
            .collect();
        PluginStatus {
            v: 1,
            summary: attention::summary(needs, quiet),
            needs,
            quiet,
            band: attention::rollup(&bands).map(|b| b.as_str().to_owned()),
            ttl: Some(HEARTBEAT.as_secs_f64() * 3.0),
            jump,
        }
    }

    fn pane_arg(&self, params: &Value) -> Result<u32, Response> {
        let raw = params
            .get("pane")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let n: Option<u32> = raw
            .trim_start_matches("terminal_")
            .trim_start_matches('%')
            .parse()
            .ok();
        match n.filter(|n| self.panes.contains_key(n)) {
            Some(n) => Ok(n),
            None => Err(Response::err(
                0,
                "unknown_pane",
                format!("no pane `{raw}` in zellij session {}", self.session.name()),
            )),
        }
    }

    fn control(&mut self, req: &Request) -> Response {
        let id = req.id;
        let r = match req.method.as_str() {
            "ping" => Ok(json!({"protocol": crate::protocol::PROTOCOL_VERSION, "version": env!("CARGO_PKG_VERSION"),
                "pid": std::process::id(), "panes": self.panes.len(), "backend": "zellij"})),
            "list" => Ok(serde_json::to_value(self.panes.iter().map(|(n, p)| self.view(*n, p)).collect::<Vec<_>>()).unwrap_or(Value::Null)),
            "get" => self.pane_arg(&req.params).map(|n| serde_json::to_value(self.view(n, &self.panes[&n])).unwrap_or(Value::Null)),
            "status" => {
                let s = self.status();
                Ok(json!({"agents": self.panes.values().filter(|p| p.det.status().agent.is_some()).count(),
                    "needs": s.needs, "quiet": s.quiet, "summary": s.summary}))
            }
            "explain" => self.pane_arg(&req.params).map(|n| {
                let p = &self.panes[&n];
                json!({"pane": self.view(n, p), "explain": p.det.explain(), "identity": p.watch.as_ref().map(|w| w.evidence()),
                    "tap": self.view(n, p).tap, "screen": p.det.screen().rows()})
            }),
            "next" => {
                let kind = req.params.get("kind").and_then(Value::as_str).unwrap_or("waiting");
                let from: Option<u32> = req
                    .params
                    .get("from")
                    .and_then(Value::as_str)
                    .and_then(|f| f.trim_start_matches("terminal_").parse().ok());
                let order = self.order(kind);
                let ids: Vec<String> = order.iter().map(|n| n.to_string()).collect();
                let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                let from_s = from.map(|f| f.to_string());
                match attention::next_after(&refs, from_s.as_deref()).and_then(|t| t.parse::<u32>().ok()) {
                    Some(t) => {
                        if req.params.get("jump").and_then(Value::as_bool) == Some(true) {
                            let _ = self.session.focus_pane(PaneId::Terminal(t));
                        }
                        Ok(json!({"pane": format!("terminal_{t}"), "order": order.iter().map(|n| format!("terminal_{n}")).collect::<Vec<_>>()}))
                    }
                    None => Err(Response::err(0, "no_target", if kind == "working" { "no agent is working" } else { "no agent needs you" })),
                }
            }
            "poke" => Ok(json!({})),
            "stop" => {
                self.stopping = true;
                Ok(json!({"stopping": true}))
            }
            other => Err(Response::err(0, "unknown_method", format!("`{other}` is not available with the zellij backend"))),
        };
        match r {
            Ok(v) => Response::ok(id, v),
            Err(e) => Response { id, ..e },
        }
    }
}

fn band_of(p: &ZPane) -> Option<Band> {
    let st = p.det.status();
    attention::band(&PaneFacts {
        state: st.state,
        reason: st.reason,
        quiet: st.quiet,
        seen: p.seen,
        parked: false,
        snoozed: false,
    })
}

type Ask = (Request, Sender<Response>);

fn serve_control(listener: UnixListener, asks: Sender<Ask>) {
    for stream in listener.incoming().flatten() {
        let asks = asks.clone();
        std::thread::spawn(move || {
            let me = nix::unistd::getuid().as_raw();
            let peer =
                nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials)
                    .map(|c| c.uid())
                    .unwrap_or(u32::MAX);
            let mut w = match stream.try_clone() {
                Ok(w) => w,
                Err(_) => return,
            };
            if peer != me {
                let r = Response::err(0, "forbidden", "this tend daemon belongs to another user");
                let _ = writeln!(w, "{}", serde_json::to_string(&r).unwrap_or_default());
                return;
            }
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { return };
                let resp = match serde_json::from_str::<Request>(&line) {
                    Ok(req) => {
                        let (tx, rx) = channel();
                        if asks.send((req, tx)).is_err() {
                            return;
                        }
                        match rx.recv_timeout(Duration::from_secs(10)) {
                            Ok(r) => r,
                            Err(_) => return,
                        }
                    }
                    Err(e) => Response::err(0, "bad_request", format!("not a request ({e})")),
                };
                if writeln!(w, "{}", serde_json::to_string(&resp).unwrap_or_default()).is_err() {
                    return;
                }
            }
        });
    }
}

/// Pushes only the newest status, from its own thread: a plugin still
/// waiting for its permissions holds `zellij pipe`, and that must never
/// hold the daemon.
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

/// Runs the zellij daemon until `tend stop` or the session ends.
pub fn run(opts: Options) -> Result<(), CliError> {
    let listener = super::ipc::bind_std(&opts.control)?;
    let (ask_tx, ask_rx) = channel::<Ask>();
    std::thread::spawn(move || serve_control(listener, ask_tx));
    let (push_tx, push_rx) = channel();
    let push_session = opts.session.clone();
    let pusher = std::thread::spawn(move || pusher(push_session, push_rx));
    let (registry, errors) = crate::manifests::load();
    for e in &errors {
        eprintln!("tend: manifest not used: {e}");
    }
    let start_wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let mut z = Z {
        session: opts.session.clone(),
        cfg: Arc::new(opts.detector.clone()),
        registry,
        sampler: Sampler::new(),
        start: Instant::now(),
        start_wall,
        panes: BTreeMap::new(),
        focused: HashSet::new(),
        visible_tabs: HashSet::new(),
        sub: None,
        push: push_tx,
        last_status: None,
        last_push: Instant::now(),
        stopping: false,
    };
    let mut last_list: Option<Instant> = None;
    while !z.stopping {
        if last_list.is_none_or(|t| t.elapsed() >= LIST_EVERY) {
            last_list = Some(Instant::now());
            z.list();
        }
        z.pump();
        z.tick();
        match ask_rx.recv_timeout(TICK) {
            Ok((req, reply)) => {
                let r = z.control(&req);
                let _ = reply.send(r);
                while let Ok((req, reply)) = ask_rx.try_recv() {
                    let r = z.control(&req);
                    let _ = reply.send(r);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    drop(z);
    let _ = pusher.join();
    let _ = std::fs::remove_file(&opts.control);
    Ok(())
}
