//! The pane table: the one place that owns every pane's detector, identity
//! watch and tap state. Everything reaches it as an [`Event`]; every effect
//! on tmux leaves it as a [`Job`] for the tmux worker.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tend_detector::attention::{self, Band, PaneFacts};
use tend_detector::engine::PaneDetector;
use tend_detector::{DetectorConfig, Registry, State};
use tend_tmux::{Capture, Client, Pane, PaneId, Scope};

use crate::daemon::publish::{self, PaneRow};
pub use crate::daemon::worker::Job;
use crate::protocol::{PaneView, Request, Response};
use crate::sampler::{PaneWatch, Sampler};
use tend_detector::identity::SamplePolicy;

/// Something that happened.
#[derive(Debug)]
pub enum Event {
    /// A tap connected and named its pane.
    TapHello { conn: u64, pane: PaneId },
    /// Pane output from a tap.
    TapData {
        conn: u64,
        bytes: Vec<u8>,
        at: Instant,
    },
    /// The tap dropped output: re-seed the pane.
    TapGap { conn: u64 },
    /// A tap connection closed.
    TapClosed { conn: u64 },
    /// The tmux worker listed panes and clients.
    Listed {
        panes: Vec<Pane>,
        clients: Vec<Client>,
    },
    /// The tmux server is gone.
    ServerGone,
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
    /// A tend tap is installed; waiting for it to connect.
    Installed,
    /// A tend tap is connected.
    Connected,
    /// Someone else's pipe: capture-pane polling.
    Polling,
}

impl TapState {
    fn word(self) -> &'static str {
        match self {
            TapState::None => "none",
            TapState::Installed | TapState::Connected => "pipe",
            TapState::Polling => "polling",
        }
    }
}

struct PaneEntry {
    info: Pane,
    det: PaneDetector,
    watch: PaneWatch,
    tap: TapState,
    conn: Option<u64>,
    /// When the tap was installed or found (to notice a tap that never
    /// connects).
    tap_since: Instant,
    seeded: bool,
    /// The current completion has been looked at.
    seen: bool,
    last_poll: Option<Instant>,
    /// Last polled screen text (polling mode only feeds changes).
    last_polled: Option<String>,
    /// A client shows this pane right now.
    focused: bool,
}

impl PaneEntry {
    /// What the published options depend on, to notice a change cheaply.
    fn publish_key(&self) -> (Option<String>, Option<State>, Option<tend_detector::Reason>, bool, bool, u64) {
        let st = self.det.status();
        (st.agent, st.state, st.reason, st.quiet, self.seen, st.state_change_seq)
    }
}

/// The daemon's state.
pub struct Core {
    start: Instant,
    start_wall: f64,
    cfg: Arc<DetectorConfig>,
    registry: Registry,
    sampler: Sampler,
    panes: BTreeMap<PaneId, PaneEntry>,
    conns: HashMap<u64, PaneId>,
    clients: Vec<Client>,
    published: BTreeMap<(Scope, String), String>,
    jobs: std::sync::mpsc::Sender<Job>,
    listed_once: bool,
    /// Panes that received something since the last tick.
    touched: HashSet<PaneId>,
    /// When every pane must next be visited.
    next_sweep: Duration,
    /// Something published may have changed.
    changed: bool,
    /// Set when the daemon should exit.
    pub stopping: bool,
}

const TAP_CONNECT_GRACE: Duration = Duration::from_secs(3);
const POLL_EVERY: Duration = Duration::from_millis(500);

impl Core {
    /// A new, empty table.
    pub fn new(
        cfg: Arc<DetectorConfig>,
        registry: Registry,
        jobs: std::sync::mpsc::Sender<Job>,
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
            sampler: Sampler::new(),
            panes: BTreeMap::new(),
            conns: HashMap::new(),
            clients: Vec::new(),
            published: BTreeMap::new(),
            jobs,
            listed_once: false,
            touched: HashSet::new(),
            next_sweep: Duration::ZERO,
            changed: true,
            stopping: false,
        }
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn at(&self, i: Instant) -> Duration {
        i.saturating_duration_since(self.start)
    }

    fn wall(&self, d: Duration) -> f64 {
        self.start_wall + d.as_secs_f64()
    }

    fn job(&self, j: Job) {
        let _ = self.jobs.send(j);
    }

    /// Asks the worker for a pane listing.
    pub fn reconcile(&self) {
        self.job(Job::List);
    }

    /// Handles one event.
    pub fn handle(&mut self, ev: Event) {
        match ev {
            Event::TapHello { conn, pane } => {
                self.conns.insert(conn, pane);
                if let Some(p) = self.panes.get_mut(&pane) {
                    p.conn = Some(conn);
                    p.tap = TapState::Connected;
                }
            }
            Event::TapData { conn, bytes, at } => {
                let at = self.at(at);
                if let Some(pane) = self.conns.get(&conn).copied() {
                    if let Some(p) = self.panes.get_mut(&pane) {
                        if p.seeded {
                            p.det.feed(at, &bytes);
                            p.watch.on_output(at);
                            // Visit the pane only when something is due: the
                            // detector coalesces frames into one evaluation
                            // per interval, so most chunks need no tick.
                            let due = p
                                .det
                                .poll_timeout()
                                .map_or(p.watch.next_wakeup(), |d| d.min(p.watch.next_wakeup()));
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
                            p.conn = None;
                            p.tap = TapState::Installed;
                            p.tap_since = Instant::now();
                        }
                    }
                }
            }
            Event::Listed { panes, clients } => self.on_listed(panes, clients),
            Event::ServerGone => self.stopping = true,
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
            Event::Control { req, reply } => {
                let resp = self.control(req);
                let _ = reply.send(resp);
            }
            Event::Poke => self.reconcile(),
        }
    }

    fn on_listed(&mut self, panes: Vec<Pane>, clients: Vec<Client>) {
        self.listed_once = true;
        // Sessions, windows, focus may all have changed: visit every pane.
        self.changed = true;
        self.next_sweep = Duration::ZERO;
        self.clients = clients;
        let now = self.now();
        let live: HashSet<PaneId> = panes.iter().map(|p| p.pane_id).collect();
        self.panes.retain(|id, _| live.contains(id));
        for info in panes {
            let id = info.pane_id;
            match self.panes.get_mut(&id) {
                Some(p) => {
                    let (w, h) = (info.width as u16, info.height as u16);
                    if (h, w) != p.det.screen().size() {
                        p.det.resize(now, h, w);
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
                    let tap = if info.has_foreign_pipe() {
                        TapState::Polling
                    } else if info.is_tapped() {
                        TapState::Installed
                    } else {
                        TapState::None
                    };
                    self.panes.insert(
                        id,
                        PaneEntry {
                            info,
                            det,
                            watch,
                            tap,
                            conn: None,
                            tap_since: Instant::now(),
                            seeded: false,
                            seen: false,
                            last_poll: None,
                            last_polled: None,
                            focused: false,
                        },
                    );
                    self.job(Job::Capture(id, CapturePurpose::Seed));
                }
            }
        }
        self.mark_seen();
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
        }
        match purpose {
            CapturePurpose::Poll => p.det.feed(now, &bytes),
            _ => p.det.seed(now, &bytes),
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
        let ids: Vec<PaneId> = if now >= self.next_sweep {
            self.touched.clear();
            self.next_sweep = now + Duration::from_secs(1);
            self.panes.keys().copied().collect()
        } else {
            self.touched.drain().collect()
        };
        let mut polls = Vec::new();
        for id in ids {
            let Some(p) = self.panes.get_mut(&id) else { continue };
            if !p.seeded {
                continue;
            }
            let before = p.publish_key();
            p.det.tick(now);
            // Identity.
            let prompt_visible = matches!(p.det.status().state, None | Some(State::Exited));
            if p.watch.next_wakeup() <= now {
                let up = p
                    .watch
                    .poll(&mut self.sampler, &self.registry, now, prompt_visible);
                if let Some(change) = &up.change {
                    let manifest = change
                        .to
                        .as_ref()
                        .and_then(|a| self.registry.get(a))
                        .cloned()
                        .map(Arc::new);
                    p.det.set_agent(now, manifest);
                    p.seen = false;
                }
                if let Some(obs) = up.observation {
                    p.det.observe_process(now, obs);
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
            if p.publish_key() != before {
                self.changed = true;
            }
        }
        for id in polls {
            self.job(Job::Capture(id, CapturePurpose::Poll));
        }
        if self.changed {
            self.changed = false;
            self.publish();
        }
        self.next_sweep
            .saturating_sub(now)
            .max(Duration::from_millis(2))
    }

    fn rows(&self) -> Vec<PaneRow> {
        self.panes
            .values()
            .map(|p| {
                let st = p.det.status();
                let band = attention::band(&PaneFacts {
                    state: st.state,
                    reason: st.reason,
                    quiet: st.quiet,
                    seen: p.seen,
                    parked: false,
                    snoozed: false,
                });
                PaneRow {
                    pane: p.info.pane_id,
                    window: p.info.window_id,
                    session: p.info.session_id,
                    session_name: p.info.session_name.clone(),
                    agent: st.agent.clone(),
                    state: st.state.map(|s| s.as_str().to_owned()),
                    reason: st.reason,
                    band,
                    since: st.state.map(|_| self.wall(st.since)),
                }
            })
            .collect()
    }

    fn publish(&mut self) {
        if !self.listed_once {
            return;
        }
        let new = publish::compute(&self.rows());
        let ups = publish::diff(&self.published, &new);
        if !ups.is_empty() {
            self.published = new;
            self.job(Job::Publish(ups));
        }
    }

    /// Everything published, for `tend stop` to remove.
    pub fn published_keys(&self) -> Vec<(Scope, String)> {
        self.published.keys().cloned().collect()
    }

    fn view(&self, p: &PaneEntry) -> PaneView {
        let st = p.det.status();
        let band = attention::band(&PaneFacts {
            state: st.state,
            reason: st.reason,
            quiet: st.quiet,
            seen: p.seen,
            parked: false,
            snoozed: false,
        });
        PaneView {
            pane: p.info.pane_id.to_string(),
            session: p.info.session_name.clone(),
            window: p.info.window_id.to_string(),
            agent: st.agent.clone(),
            state: st.state.map(|s| s.as_str().to_owned()),
            reason: st.reason.map(|r| r.as_str().to_owned()),
            band: band.map(|b: Band| b.as_str().to_owned()),
            since: st.state.map(|_| self.wall(st.since)),
            rule: st.state.map(|_| st.rule.clone()),
            quiet: st.quiet,
            state_change_seq: st.state_change_seq,
            tap: p.tap.word().to_owned(),
        }
    }

    fn control(&mut self, req: Request) -> Response {
        let id = req.id;
        match req.method.as_str() {
            "ping" => Response::ok(
                id,
                json!({"protocol": crate::protocol::PROTOCOL_VERSION, "version": env!("CARGO_PKG_VERSION"), "pid": std::process::id(), "panes": self.panes.len()}),
            ),
            "list" => {
                let views: Vec<PaneView> = self.panes.values().map(|p| self.view(p)).collect();
                Response::ok(id, serde_json::to_value(views).unwrap_or(Value::Null))
            }
            "status" => {
                let rows = self.rows();
                let bands: Vec<Band> = rows.iter().filter_map(|r| r.band).collect();
                let demands = bands.iter().filter(|b| b.is_demand()).count();
                let quiet = bands.iter().filter(|b| **b == Band::Quiet).count();
                let agents = rows.iter().filter(|r| r.agent.is_some()).count();
                Response::ok(
                    id,
                    json!({"agents": agents, "needs": demands, "quiet": quiet, "summary": attention::summary(demands, quiet)}),
                )
            }
            "next" => self.next(id, &req.params),
            "explain" => {
                let Some(pane) = req
                    .params
                    .get("pane")
                    .and_then(Value::as_str)
                    .and_then(|p| p.parse::<PaneId>().ok())
                else {
                    return Response::err(id, "bad_request", "explain needs {\"pane\": \"%N\"}");
                };
                match self.panes.get(&pane) {
                    Some(p) => {
                        let ex = p.det.explain();
                        Response::ok(
                            id,
                            json!({
                                "pane": self.view(p),
                                "explain": ex,
                                "identity": p.watch.evidence(),
                                "tap": p.tap.word(),
                                "screen": p.det.screen().rows(),
                            }),
                        )
                    }
                    None => Response::err(
                        id,
                        "unknown_pane",
                        format!("no pane {pane} on this tmux server (see `tend list`)"),
                    ),
                }
            }
            "stop" => {
                self.stopping = true;
                Response::ok(id, json!({"stopping": true}))
            }
            "poke" => {
                self.reconcile();
                Response::ok(id, json!({}))
            }
            other => Response::err(id, "unknown_method", format!("unknown method `{other}`")),
        }
    }

    fn next(&mut self, id: u64, params: &Value) -> Response {
        let kind = params
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("waiting");
        let from = params
            .get("from")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let client = params
            .get("client")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let jump = params.get("jump").and_then(Value::as_bool).unwrap_or(false);
        let rows = self.rows();
        let ids: Vec<String> = rows.iter().map(|r| r.pane.to_string()).collect();
        let cands: Vec<attention::Candidate<'_>> = rows
            .iter()
            .zip(&ids)
            .filter_map(|(r, id)| {
                Some(attention::Candidate {
                    pane: id,
                    session: &r.session_name,
                    band: r.band?,
                    reason: r.reason,
                    since: r.since.unwrap_or(0.0),
                })
            })
            .collect();
        let session = from
            .as_deref()
            .and_then(|f| cands.iter().find(|c| c.pane == f))
            .map(|c| c.session.to_owned())
            .or_else(|| {
                params
                    .get("session")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
        let order: Vec<&str> = match kind {
            "working" => attention::working_order(&cands),
            "agent" => {
                let mut all: Vec<&str> = cands.iter().map(|c| c.pane).collect();
                all.sort_by_key(|p| p.trim_start_matches('%').parse::<u32>().unwrap_or(0));
                all
            }
            "session" => attention::attention_order(&cands)
                .into_iter()
                .filter(|p| {
                    cands
                        .iter()
                        .any(|c| c.pane == *p && Some(c.session) == session.as_deref())
                })
                .collect(),
            _ => attention::attention_order(&cands),
        };
        let target = attention::next_after(&order, from.as_deref()).map(str::to_owned);
        match target {
            Some(t) => {
                if jump {
                    if let Ok(p) = t.parse::<PaneId>() {
                        self.job(Job::Switch { client, pane: p });
                    }
                }
                Response::ok(id, json!({"pane": t, "order": order}))
            }
            None => Response::err(
                id,
                "no_target",
                match kind {
                    "working" => "no agent is working".to_owned(),
                    _ => "no agent needs you".to_owned(),
                },
            ),
        }
    }
}
