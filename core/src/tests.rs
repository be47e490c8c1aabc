//! The core's policy without a multiplexer or a process table: panes,
//! screens and requests go in as inputs, the clock is the test's (virtual
//! time: nothing here sleeps), processes come from a stub source, and what
//! comes out (jobs for the backend, events for the bus) is checked.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tend_detector::identity::{ProcessInfo, WalkLimits};
use tend_detector::{DetectorConfig, Reason, Registry, State};
use tend_protocol::{PaneId, SessionId, WindowId};

use crate::source::{PaneSnapshot, Probe, SampleError, SampleStats};
use crate::{
    Backend, CapturePurpose, ClientInfo, Config, Core, Effect, Input, Mux, MuxJob, NoProjects,
    OutputRead, PaneInfo, Pipe, ProcSource, RequestId, Screen, StatusForm,
};
use tend_protocol::{ErrorCode, Request, Response};

/// The Unix time the table starts at.
const WALL: f64 = 1_800_000_000.0;

/// Processes the test sets: each a pane's only process, in its own group
/// holding its terminal (a shell at its prompt, or an agent run with
/// `exec`). Shared with the core, so a test may change them as it goes.
#[derive(Debug, Clone, Default)]
struct StubProcs(Arc<Mutex<BTreeMap<u32, ProcessInfo>>>);

impl StubProcs {
    fn get(&self, pid: u32) -> Option<ProcessInfo> {
        self.0.lock().ok()?.get(&pid).cloned()
    }
}

impl ProcSource for StubProcs {
    fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError> {
        let p = self.get(shell_pid).ok_or(SampleError::Gone(shell_pid))?;
        Ok(Probe {
            shell_pgid: p.pgid.unwrap_or(shell_pid),
            tpgid: p.tpgid,
        })
    }

    fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError> {
        let p = self.get(shell_pid).ok_or(SampleError::Gone(shell_pid))?;
        Ok(PaneSnapshot {
            procs: vec![p],
            truncated: false,
            stats: SampleStats::default(),
        })
    }

    fn limits(&self) -> WalkLimits {
        WalkLimits::default()
    }

    fn ticks_per_sec(&self) -> f64 {
        100.0
    }

    fn agent_version(&mut self, _: &tend_detector::Manifest, _: &[&str]) -> Option<String> {
        None
    }

    fn launched_program(&mut self, _: u32) -> Option<String> {
        None
    }
}

struct Rig {
    core: Core,
    t0: Instant,
    /// The core's clock: the last time given.
    now: Instant,
    procs: StubProcs,
    seq: u64,
    /// Effects polled while looking for an answer, kept for `drain_jobs`.
    polled: Vec<Effect>,
}

fn pane(n: u32) -> PaneInfo {
    PaneInfo {
        pane_id: PaneId(n),
        pane_pid: 0,
        session_id: SessionId(0),
        session_name: "main".into(),
        window_id: WindowId(n),
        window_label: format!("@{n}"),
        window_index: n,
        window_name: format!("w{n}"),
        pane_index: Some(0),
        window_active: true,
        pane_active: true,
        width: 80,
        height: 24,
        current_command: "sleep".into(),
        pipe: Pipe::None,
        dead: false,
        dead_status: None,
        title: String::new(),
        alternate_on: false,
        in_mode: false,
        current_path: String::new(),
    }
}

fn client(shows: u32, activity: u64) -> ClientInfo {
    ClientInfo {
        name: "/dev/pts/9".into(),
        pane_id: Some(PaneId(shows)),
        control_mode: false,
        activity,
    }
}

/// What each backend declares (`daemon/src/worker.rs`,
/// `daemon/src/zellij.rs`), for a rig on `mux`.
fn backend(mux: Mux) -> Backend {
    let tmux = mux == Mux::Tmux;
    Backend {
        mux,
        guard: tmux,
        status: if tmux {
            StatusForm::Facts
        } else {
            StatusForm::Overview
        },
        output: if tmux {
            OutputRead::Taps
        } else {
            OutputRead::ShownLive
        },
        restore: tmux,
        remote_windows: tmux,
    }
}

impl Rig {
    fn new(mux: Mux) -> Rig {
        Rig::with_resume(mux, tend_attention::limit::ResumePolicy::default())
    }

    /// A table whose `[limits]` says `resume`, in the UTC zone.
    fn with_resume(mux: Mux, resume: tend_attention::limit::ResumePolicy) -> Rig {
        Rig::on(backend(mux), resume)
    }

    /// A table on a backend that offers what `backend` says.
    fn on(backend: Backend, resume: tend_attention::limit::ResumePolicy) -> Rig {
        let t0 = Instant::now();
        let procs = StubProcs::default();
        let config = Config {
            detector: Arc::new(DetectorConfig::default()),
            registry: Registry::bundled(),
            backend,
            trace: false,
            daemon_id: 1,
            limit_resume: resume,
            utc_offset: 0,
            home: Some("/home/u".into()),
        };
        let core = Core::new(
            config,
            Box::new(procs.clone()),
            Box::new(NoProjects),
            t0,
            WALL,
        );
        Rig {
            core,
            t0,
            now: t0,
            procs,
            seq: 0,
            polled: Vec::new(),
        }
    }

    /// Hands `input` to the core at the current time.
    fn input(&mut self, input: Input) {
        self.core.handle(self.now, input);
    }

    /// Lists `panes` (each seeded with an empty screen) and `clients`.
    fn list(&mut self, panes: &[u32], clients: Vec<ClientInfo>) {
        self.list_infos(panes.iter().map(|n| pane(*n)).collect(), clients);
    }

    /// Lists `panes` as given (each seeded with a shell prompt's screen)
    /// and `clients`.
    fn list_infos(&mut self, panes: Vec<PaneInfo>, clients: Vec<ClientInfo>) {
        let ids: Vec<PaneId> = panes.iter().map(|p| p.pane_id).collect();
        self.input(Input::Listed { panes, clients });
        for id in ids {
            self.input(Input::Captured {
                pane: id,
                screen: Screen {
                    pane_id: id,
                    text: "$ \n".into(),
                    cursor_x: 2,
                    cursor_y: 0,
                    cursor_visible: true,
                    alternate_on: false,
                    in_mode: false,
                    width: 80,
                    height: 24,
                },
                purpose: CapturePurpose::Seed,
            });
        }
    }

    /// An idle `sh` at its prompt with process id `pid` (its own process
    /// group in the foreground).
    fn idle_shell(&self, pid: u32) {
        self.leader(pid, "sh", 1, None);
    }

    /// Process `pid` running `comm`, child of `ppid`: its own group and
    /// session, holding its terminal; `agent` in its `TEND_AGENT`.
    fn leader(&self, pid: u32, comm: &str, ppid: u32, agent: Option<&str>) {
        let p = ProcessInfo {
            pid,
            ppid,
            pgid: Some(pid),
            tpgid: Some(pid),
            state: "S".into(),
            comm: comm.into(),
            argv: vec![comm.into()],
            env_agent: agent.map(str::to_owned),
            ..ProcessInfo::default()
        };
        if let Ok(mut m) = self.procs.0.lock() {
            m.insert(pid, p);
        }
    }

    /// Moves the clock to `secs` after the start and runs the timers.
    fn at(&mut self, secs: u64) {
        self.at_ms(secs * 1000);
    }

    fn at_ms(&mut self, ms: u64) {
        self.now = self.t0 + Duration::from_millis(ms);
        self.core.handle_timeout(self.now);
    }

    /// Runs the core's timers at every wake-up it asks for until `ms` after
    /// the start, as a driver would (quinn-proto's `Pair::drive`): on
    /// virtual time, so a minute takes as long as its wake-ups.
    fn drive_to(&mut self, ms: u64) {
        let end = self.t0 + Duration::from_millis(ms);
        loop {
            let next = self.core.poll_timeout().max(self.now);
            if next > end {
                break;
            }
            self.now = next;
            self.core.handle_timeout(next);
        }
        self.now = end;
        self.core.handle_timeout(end);
    }

    /// Asks the table as a client would: a method and its parameters as
    /// JSON in, the answer line out, running the table's timers on their
    /// wake-ups until it answers (at most a minute of virtual time).
    fn ask(&mut self, method: &str, params: Value) -> Response {
        let req = match Request::from_wire(method, params) {
            Ok(req) => req,
            Err(e) => return Response::refusal(7, e),
        };
        let id = self.request(req);
        let end = self.now + Duration::from_secs(60);
        loop {
            if let Some(r) = self.answer(id) {
                return r;
            }
            assert!(self.now < end, "{method}: no answer within a minute");
            let next = self.core.poll_timeout().max(self.now);
            self.now = next.min(end);
            self.core.handle_timeout(self.now);
        }
    }

    /// Hands a request to the table; its id.
    fn send(&mut self, method: &str, params: Value) -> RequestId {
        let req = Request::from_wire(method, params).expect("a request");
        self.request(req)
    }

    fn request(&mut self, req: Request) -> RequestId {
        self.seq += 1;
        let id = RequestId(self.seq);
        self.input(Input::Control { id, req });
        id
    }

    /// The answer to request `id`, if the table gave it since the last
    /// look (other effects are kept for `drain_jobs` and `saved`).
    fn answer(&mut self, id: RequestId) -> Option<Response> {
        let mut answer = None;
        while let Some(e) = self.core.poll_effect() {
            match e {
                Effect::Reply { id: got, result } if got == id => answer = Some(result),
                other => self.polled.push(other),
            }
        }
        answer.map(|a| Response::answer(7, a))
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.ask(method, params.clone());
        assert!(r.error.is_none(), "{method} {params}: {:?}", r.error);
        r.result.unwrap_or(Value::Null)
    }

    fn report(&mut self, pane: &str, state: &str, extra: Value) {
        self.seq += 1;
        let mut p = json!({"pane": pane, "state": state, "seq": self.seq, "agent": "claude"});
        if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        self.ok("report", p);
    }

    /// The verifying captures among the jobs since the last look, of any
    /// pane.
    fn verifies(&mut self) -> usize {
        self.drain_jobs()
            .iter()
            .filter(|j| matches!(j, MuxJob::Capture(_, CapturePurpose::Verify)))
            .count()
    }

    /// `pane` reports it waits for the user (`reason`), for an hour.
    fn waits(&mut self, pane: &str, reason: &str) {
        self.report(pane, "waiting", json!({"reason": reason, "every": "1h"}));
    }

    /// `pane` reports it works, for an hour.
    fn works(&mut self, pane: &str) {
        self.report(pane, "working", json!({"every": "1h"}));
    }

    fn get(&mut self, pane: &str) -> Value {
        self.ok("get", json!({ "pane": pane }))
    }

    /// The bus events since the last call, of kind `kind`.
    fn events(&mut self, kind: &str) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(ev) = self.core.poll_event() {
            if ev.kind() == kind {
                out.push(serde_json::to_value(ev).expect("an event is JSON"));
            }
        }
        out
    }

    /// Whether the state file was asked to be written since the last call
    /// (other effects are dropped).
    fn saved(&mut self) -> bool {
        let mut effects = std::mem::take(&mut self.polled);
        effects.extend(std::iter::from_fn(|| self.core.poll_effect()));
        effects.iter().any(|e| matches!(e, Effect::Persist(_)))
    }

    /// The jobs for the backend since the last call.
    fn drain_jobs(&mut self) -> Vec<MuxJob> {
        let mut effects = std::mem::take(&mut self.polled);
        effects.extend(std::iter::from_fn(|| self.core.poll_effect()));
        effects
            .into_iter()
            .filter_map(|e| match e {
                Effect::Mux(j) => Some(j),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn a_snooze_runs_out_on_the_clock_the_table_is_given() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1], vec![]);
    r.waits("%1", "question");
    r.at(1);
    assert_eq!(r.get("%1")["band"], "waiting");
    let until = r.ok("snooze", json!({"pane": "%1", "for": "30m"}))["until"].clone();
    assert_eq!(until, json!(WALL as u64 + 1 + 30 * 60));
    r.at(2);
    assert_eq!(r.get("%1")["band"], "snoozed");
    r.events("pane.agent_status_changed");
    r.at(29 * 60);
    assert_eq!(r.get("%1")["band"], "snoozed");
    assert!(r.events("pane.agent_status_changed").is_empty());
    r.at(31 * 60 + 2);
    assert_eq!(r.get("%1")["band"], "waiting");
    let ev = r.events("pane.agent_status_changed");
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(
        (&ev[0]["prev_band"], &ev[0]["band"]),
        (&json!("snoozed"), &json!("waiting"))
    );
    assert!(r.saved(), "the expired snooze is saved");
}

#[test]
fn typing_into_a_snoozed_pane_ends_the_snooze() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1], vec![client(1, 100)]);
    r.waits("%1", "question");
    r.ok("snooze", json!({"pane": "%1", "for": "6h"}));
    r.at(1);
    assert_eq!(r.get("%1")["band"], "snoozed");
    // The same activity time: nobody typed.
    r.list(&[1], vec![client(1, 100)]);
    r.at(2);
    assert_eq!(r.get("%1")["band"], "snoozed");
    // The client's activity moved while it showed %1: the user typed there.
    r.list(&[1], vec![client(1, 105)]);
    r.at(3);
    assert_eq!(r.get("%1")["band"], "waiting");
    assert_eq!(r.get("%1")["snoozed"], false);
}

#[test]
fn a_report_lease_runs_out_when_the_agent_goes_silent() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1], vec![]);
    r.report("%1", "working", json!({"every": "10s"}));
    r.at(1);
    let g = r.get("%1");
    assert_eq!(
        (&g["state"], &g["authority"]),
        (&json!("working"), &json!("report"))
    );
    r.at(15);
    assert_eq!(r.get("%1")["authority"], "report", "within twice the lease");
    r.at(60);
    let g = r.get("%1");
    assert_eq!(g["authority"], "screen", "{g}");
    assert!(
        g["lifecycle"].as_str().is_some_and(|l| l.contains("gone")),
        "{g}"
    );
    let changes = r.events("pane.report_changed");
    assert!(
        changes
            .iter()
            .any(|c| c["pane"] == "%1" && c["to"] == "gone"),
        "{changes:?}"
    );
}

#[test]
fn a_closed_pane_releases_parks_gated_on_it_and_forgets_its_report() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1, 2], vec![]);
    r.waits("%1", "question");
    r.works("%2");
    r.ok("park", json!({"pane": "%1", "gate": "%2"}));
    r.at(1);
    r.events("park.released");
    // %2 is gone from the next listing.
    r.list(&[1], vec![]);
    let all: Vec<Value> = std::iter::from_fn(|| r.core.poll_event())
        .map(|ev| serde_json::to_value(ev).expect("an event is JSON"))
        .collect();
    assert_eq!(
        all,
        [
            json!({"event": "pane.closed", "pane": "%2", "agent": null}),
            json!({"event": "park.released", "pane": "%1", "gate": "%2", "note": "", "reason": "GateGone"}),
        ]
    );
    r.at(2);
    assert_eq!(r.get("%1")["band"], "waiting");
    let err = r.ask("get", json!({"pane": "%2"})).error.expect("gone");
    assert_eq!(
        (err.code.as_str(), err.message.as_str()),
        (
            "unknown_pane",
            "no pane %2 on this tmux server (see `tend list`)"
        )
    );
    assert!(r.saved());
}

#[test]
fn a_gated_park_releases_when_its_gate_finishes_a_turn() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1, 2], vec![]);
    r.waits("%1", "question");
    r.works("%2");
    r.at(1);
    r.ok(
        "park",
        json!({"pane": "%1", "note": "after the build", "gate": "%2"}),
    );
    r.at(2);
    assert_eq!(r.get("%1")["band"], "parked");
    assert_eq!(r.get("%1")["gate"], "%2");
    r.report("%2", "done", json!({}));
    r.at(3);
    let released = r.events("park.released");
    assert_eq!(released.len(), 1, "{released:?}");
    assert_eq!(
        (&released[0]["pane"], &released[0]["gate"]),
        (&json!("%1"), &json!("%2"))
    );
    // Refreshed on the next round.
    r.at(4);
    assert_eq!(r.get("%1")["band"], "waiting");
}

#[test]
fn tmux_gets_options_and_a_guard() {
    let mut r = Rig::new(Mux::Tmux);
    r.core.install_guard();
    r.list(&[1], vec![]);
    r.waits("%1", "approval");
    r.at(1);
    let jobs = r.drain_jobs();
    assert!(jobs.iter().any(|j| matches!(j, MuxJob::Guard { .. })));
    assert!(jobs.iter().any(|j| matches!(j, MuxJob::Publish { .. })));
    assert!(!jobs.iter().any(|j| matches!(j, MuxJob::Overview(_))));
    assert_eq!(r.ok("ping", json!({}))["backend"], "tmux");
}

/// zellij has no taps: its panes are read through its subscription and
/// polls from their first listing, and no tap is asked for (the backend
/// could only refuse it).
#[test]
fn zellij_panes_are_never_asked_for_a_tap() {
    let mut r = Rig::new(Mux::Zellij);
    r.list(&[4, 5], vec![]);
    r.at(1);
    let jobs = r.drain_jobs();
    assert!(
        !jobs
            .iter()
            .any(|j| matches!(j, MuxJob::InstallTap(_) | MuxJob::Retap(_))),
        "{jobs:?}"
    );
    assert_eq!(r.core.panes[&PaneId(4)].tap, crate::TapState::Polling);
    // tmux's panes are tapped at once.
    let mut t = Rig::new(Mux::Tmux);
    t.list(&[1], vec![]);
    assert!(t
        .drain_jobs()
        .iter()
        .any(|j| matches!(j, MuxJob::InstallTap(PaneId(1)))));
}

#[test]
fn zellij_panes_keep_zellij_names_and_publish_to_the_plugin() {
    let mut r = Rig::new(Mux::Zellij);
    // No guard in zellij: the plugin's status has a time to live instead.
    r.core.install_guard();
    r.list(&[4, 5], vec![]);
    r.waits("terminal_4", "approval");
    r.works("terminal_5");
    r.at(1);
    // The bare number `$ZELLIJ_PANE_ID` holds, and `%N`.
    for spelled in ["terminal_4", "4", "%4"] {
        assert_eq!(r.get(spelled)["pane"], "terminal_4", "{spelled}");
    }
    let err = r.ask("get", json!({"pane": "terminal_9"}));
    let err = err.error.expect("unknown pane");
    assert_eq!(err.code, ErrorCode::UnknownPane);
    assert_eq!(
        err.message,
        "no pane terminal_9 on this zellij session (see `tend list`)"
    );
    let ev = r.events("pane.agent_status_changed");
    assert!(ev.iter().all(|e| e["pane"]
        .as_str()
        .is_some_and(|p| p.starts_with("terminal_"))));
    assert_eq!(ev.len(), 2, "{ev:?}");
    let jobs = r.drain_jobs();
    assert!(!jobs
        .iter()
        .any(|j| matches!(j, MuxJob::Guard { .. } | MuxJob::Publish { .. })));
    let status = jobs
        .iter()
        .rev()
        .find_map(|j| match j {
            MuxJob::Overview(s) => Some(s.clone()),
            _ => None,
        })
        .expect("a plugin status");
    assert_eq!(
        (status.needs, status.summary.as_str()),
        (1, "1 agent needs you")
    );
    assert_eq!(
        status.jump.iter().map(|j| j.pane).collect::<Vec<_>>(),
        [PaneId(4)]
    );
    // Parks and snoozes are named as zellij names panes, gates too.
    let parked = r.ok("park", json!({"pane": "4", "gate": "5"}));
    assert_eq!(parked["parked"], "terminal_4");
    r.at(2);
    assert_eq!(r.get("terminal_4")["gate"], "terminal_5");
    let next = r.ask("next", json!({}));
    assert_eq!(next.error.map(|e| e.code), Some(ErrorCode::NoTarget));
    assert_eq!(r.ok("ping", json!({}))["backend"], "zellij");
    // Listed in a tab a client looks at: followed by the subscription.
    assert_eq!(r.get("terminal_4")["tap"], "subscribe");
    // A jump goes to the backend as a switch to the pane.
    r.ok("unpark", json!({"pane": "terminal_4"}));
    r.at(3);
    r.drain_jobs();
    let next = r.ok("next", json!({"jump": true}));
    assert_eq!(next["pane"], "terminal_4");
    let jobs = r.drain_jobs();
    assert!(
        jobs.iter()
            .any(|j| matches!(j, MuxJob::Switch { pane, .. } if *pane == PaneId(4))),
        "{jobs:?}"
    );
}

/// The core asks what the backend offers, not which multiplexer it is: a
/// backend with tmux's pane names that offers no guard, no options, no
/// taps, no restore and no remote windows is served as it says.
#[test]
fn the_core_asks_what_the_backend_offers_not_which_it_is() {
    let offers_little = Backend {
        mux: Mux::Tmux,
        guard: false,
        status: StatusForm::Overview,
        output: OutputRead::ShownLive,
        restore: false,
        remote_windows: false,
    };
    let mut r = Rig::on(offers_little, Default::default());
    r.core.install_guard();
    let mut shown = pane(1);
    shown.pane_index = None;
    shown.window_label = "tests".into();
    let mut hidden = pane(2);
    hidden.window_active = false;
    r.list_infos(vec![shown, hidden], vec![]);
    r.waits("%1", "approval");
    r.at(1);
    let jobs = r.drain_jobs();
    assert!(!jobs
        .iter()
        .any(|j| matches!(j, MuxJob::Guard { .. } | MuxJob::Publish { .. })));
    assert!(jobs.iter().any(|j| matches!(j, MuxJob::Overview(_))));
    let one = r.get("%1");
    // The window as the backend labels it; no place where panes have no
    // index; output by subscription where a client looks, else polled.
    assert_eq!(
        (&one["window"], &one["place"], &one["tap"]),
        (&json!("tests"), &Value::Null, &json!("subscribe"))
    );
    let two = r.get("%2");
    assert_eq!(
        (&two["window"], &two["place"], &two["tap"]),
        (&json!("@2"), &json!("main:2.0"), &json!("polling"))
    );
    let refused = r.ask("restore", json!({"all": true}));
    assert_eq!(refused.error.map(|e| e.code), Some(ErrorCode::BadRequest));
    let refused = r.ask("goto", json!({"pane": "box:%3"}));
    assert_eq!(refused.error.map(|e| e.code), Some(ErrorCode::NotInZellij));
}

#[test]
fn zellij_changes_reach_the_notifier_grouped() {
    use tend_attention::notify::{Notifier, Policy, TimeOfDay};
    let mut r = Rig::new(Mux::Zellij);
    let mut n = Notifier::new(Policy::default());
    let noon = TimeOfDay::hm(12, 0);
    let feed = |r: &mut Rig, n: &mut Notifier, secs: u64| {
        while let Some(v) = r.core.poll_event() {
            if let Some(h) = crate::notice::happening(&v) {
                n.handle(Duration::from_secs(secs), noon, h);
            }
        }
    };
    r.list(&[4, 5], vec![]);
    r.works("terminal_4");
    r.works("terminal_5");
    r.at(1);
    feed(&mut r, &mut n, 1);
    r.waits("terminal_4", "approval");
    r.waits("terminal_5", "question");
    r.at(60);
    feed(&mut r, &mut n, 60);
    // Both within one grouping window: one notification for the two, the
    // approval first.
    n.handle_timeout(Duration::from_secs(61));
    let got = n.poll_notification().expect("a notification");
    assert_eq!(got.panes, ["terminal_4", "terminal_5"]);
    assert_eq!(got.title, "2 agents need you");
    assert!(n.poll_notification().is_none());
}

#[test]
fn the_sweep_skips_panes_where_nothing_happened() {
    let mut r = Rig::new(Mux::Tmux);
    // %1's shell, an idle `sh` at its prompt, in the table's procfs.
    r.idle_shell(4242);
    r.list(&[1, 2], vec![]);
    let mut p1 = pane(1);
    p1.pane_pid = 4242;
    r.input(Input::Listed {
        panes: vec![p1.clone(), pane(2)],
        clients: vec![],
    });
    r.works("%2");
    // A minute of quiet: the process samples back off.
    r.drive_to(60_000);
    r.drain_jobs();
    let e1 = &r.core.panes[&PaneId(1)];
    assert_eq!(
        e1.det.poll_timeout(),
        None,
        "no detector timer on a shell prompt"
    );
    let due = e1.watch.next_wakeup();
    let now = r.core.now();
    assert!(due > now, "a sample due at {due:?}, now {now:?}");
    // Nothing happened in %1 and nothing is due there; %2 reports, and the
    // report book reads it against the clock.
    assert_eq!(r.core.sweep_ids(now), vec![PaneId(2)]);
    assert!(
        r.core.next_sweep <= due,
        "the skipped pane's sample bounds the next sweep"
    );
    // Its sample falls due: visited.
    let mut at_due = r.core.sweep_ids(due);
    at_due.sort_by_key(|p| p.0);
    assert_eq!(at_due, vec![PaneId(1), PaneId(2)]);
    // The same listing again: nothing to visit but the reporting pane.
    r.input(Input::Listed {
        panes: vec![p1.clone(), pane(2)],
        clients: vec![],
    });
    assert_eq!(r.core.sweep_ids(now), vec![PaneId(2)]);
    // A client now shows %1: its focus changed, so it is visited.
    r.input(Input::Listed {
        panes: vec![p1, pane(2)],
        clients: vec![client(1, 100)],
    });
    let mut after_focus = r.core.sweep_ids(now);
    after_focus.sort_by_key(|p| p.0);
    assert_eq!(after_focus, vec![PaneId(1), PaneId(2)]);
}

#[test]
fn a_listing_naming_another_foreground_command_brings_the_sample_forward() {
    let mut r = Rig::new(Mux::Tmux);
    r.idle_shell(4343);
    r.list(&[1], vec![]);
    let mut p1 = pane(1);
    p1.pane_pid = 4343;
    r.input(Input::Listed {
        panes: vec![p1.clone()],
        clients: vec![],
    });
    // A minute of quiet: samples (and with them the idle probes) back off.
    r.drive_to(60_000);
    r.drain_jobs();
    let now = r.core.now();
    let due = r.core.panes[&PaneId(1)].watch.next_wakeup();
    assert!(
        due > now + Duration::from_secs(2),
        "due {due:?}, now {now:?}"
    );
    // The same listing changes nothing; one naming another command makes a
    // sample due now.
    r.input(Input::Listed {
        panes: vec![p1.clone()],
        clients: vec![],
    });
    assert!(r.core.panes[&PaneId(1)].watch.next_wakeup() > now);
    p1.current_command = "claude".into();
    r.input(Input::Listed {
        panes: vec![p1],
        clients: vec![],
    });
    assert!(r.core.panes[&PaneId(1)].watch.next_wakeup() <= now);
    assert_eq!(r.core.sweep_ids(now), vec![PaneId(1)]);
}

impl Rig {
    /// A pane's only process: `sleep` started with `TEND_AGENT=agent`, in
    /// its own group in the foreground (a pane started as
    /// `env TEND_AGENT=… sh -c "…; exec sleep …"`).
    fn declared_agent(&self, pid: u32, agent: &str) {
        self.leader(pid, "sleep", 50, Some(agent));
    }

    fn data(&mut self, conn: u64, ms: u64, bytes: &[u8]) {
        let at = self.t0 + Duration::from_millis(ms);
        self.now = self.now.max(at);
        self.core.handle(
            self.now,
            Input::TapData {
                conn,
                bytes: bytes.to_vec(),
                at,
            },
        );
    }
}

/// What `capture-pane` would answer for `screen`.
fn capture_of(n: u32, screen: &tend_detector::screen::Screen) -> Screen {
    let (rows, cols) = screen.size();
    let (y, x) = screen.cursor();
    Screen {
        pane_id: PaneId(n),
        text: screen.rows().join("\n") + "\n",
        cursor_x: u32::from(x),
        cursor_y: u32::from(y),
        cursor_visible: true,
        alternate_on: screen.alternate(),
        in_mode: false,
        width: u32::from(cols),
        height: u32::from(rows),
    }
}

/// Claude Code's approval dialog as its recording has it 8 s in, and the
/// same screen with the last 30 % of those bytes drawn twice.
fn approval_drawn_twice() -> (Vec<u8>, Vec<u8>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/claude/approval/pane.cast");
    let text = std::fs::read_to_string(path).expect("the claude/approval recording");
    let cast = tend_detector::cast::Cast::parse(&text).expect("a recording");
    let mut bytes = Vec::new();
    for ev in cast
        .events
        .iter()
        .filter(|e| e.at <= Duration::from_secs(8))
    {
        if let tend_detector::cast::EventKind::Output(b) = &ev.kind {
            bytes.extend_from_slice(b);
        }
    }
    // A tail that starts where a line or an escape sequence does.
    let mut k = bytes.len() * 7 / 10;
    while k > 0 && bytes[k - 1] != b'\n' && bytes[k] != 0x1b {
        k -= 1;
    }
    let tail = bytes[k..].to_vec();
    (bytes, tail)
}

#[test]
fn output_already_in_the_seed_is_found_by_a_second_capture_and_the_screen_put_right() {
    let mut r = Rig::new(Mux::Tmux);
    r.declared_agent(4545, "claude");
    let mut p1 = pane(1);
    p1.pane_pid = 4545;
    p1.width = 200;
    p1.height = 50;
    r.input(Input::Listed {
        panes: vec![p1],
        clients: vec![],
    });
    let (bytes, tail) = approval_drawn_twice();
    let mut truth = tend_detector::screen::Screen::new(50, 200);
    truth.process(&bytes);
    // tmux has drawn the dialog when the seed is captured; the pipe,
    // handed over after it, still holds the tail of it.
    r.input(Input::Captured {
        pane: PaneId(1),
        screen: capture_of(1, &truth),
        purpose: CapturePurpose::Seed,
    });
    r.input(Input::TapHello {
        conn: 1,
        pane: PaneId(1),
    });
    r.data(1, 40, &tail);
    let shown = &r.core.panes[&PaneId(1)].det;
    assert_ne!(
        shown.screen().rows(),
        truth.rows(),
        "the tail drawn twice changes the screen (else this test shows nothing)"
    );
    r.drain_jobs();
    let mut verify = 0;
    for ms in (100..=3000).step_by(20) {
        r.at_ms(ms);
        verify += r.verifies();
    }
    assert_eq!(verify, 1, "one verifying capture once the pane is quiet");
    let st = r.core.panes[&PaneId(1)].det.status();
    assert_eq!(st.agent.as_deref(), Some("claude"));
    assert_ne!(
        (st.state, st.reason),
        (Some(State::Waiting), Some(Reason::Approval)),
        "drawn twice, the dialog is not recognised (else this test shows nothing)"
    );
    // tmux answers with the screen it shows: the table re-seeds from it.
    r.input(Input::Captured {
        pane: PaneId(1),
        screen: capture_of(1, &truth),
        purpose: CapturePurpose::Verify,
    });
    assert_eq!(r.core.panes[&PaneId(1)].det.screen().rows(), truth.rows());
    for ms in (3020..=4000).step_by(20) {
        r.at_ms(ms);
    }
    let st = r.core.panes[&PaneId(1)].det.status();
    assert_eq!(
        (st.state, st.reason),
        (Some(State::Waiting), Some(Reason::Approval))
    );
    // The re-seed is checked too; this time nothing followed it.
    assert_eq!(r.verifies(), 0);
}

#[test]
fn a_verifying_capture_that_matches_changes_nothing() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1], vec![]);
    r.input(Input::TapHello {
        conn: 1,
        pane: PaneId(1),
    });
    r.data(1, 10, b"ls\r\n");
    r.drain_jobs();
    r.at_ms(200);
    assert!(r.verifies() > 0, "no verifying capture asked for");
    let cap = capture_of(1, r.core.panes[&PaneId(1)].det.screen());
    r.input(Input::Captured {
        pane: PaneId(1),
        screen: cap,
        purpose: CapturePurpose::Verify,
    });
    // Not re-seeded: output now is not checked again (a re-seed would be).
    r.data(1, 400, b"x");
    for ms in (420..=3000).step_by(20) {
        r.at_ms(ms);
    }
    assert_eq!(r.verifies(), 0);
}

#[test]
fn a_resize_in_a_listing_rebuilds_the_screen_from_the_multiplexer() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1], vec![]);
    r.drain_jobs();
    let resync = |jobs: &[MuxJob]| {
        jobs.iter()
            .filter(|j| matches!(j, MuxJob::Capture(PaneId(1), CapturePurpose::Resync)))
            .count()
    };
    // The same size again: nothing to rebuild.
    r.list(&[1], vec![]);
    assert_eq!(resync(&r.drain_jobs()), 0);
    // Wider: the program has redrawn for it already; the screen comes back
    // from tmux's, at the new size.
    let mut wide = pane(1);
    wide.width = 250;
    wide.height = 60;
    r.input(Input::Listed {
        panes: vec![wide],
        clients: vec![],
    });
    assert_eq!(r.core.panes[&PaneId(1)].det.screen().size(), (60, 250));
    assert_eq!(resync(&r.drain_jobs()), 1);
}

/// `tend prompt` to an agent whose manifest pauses the Enter (Continue
/// CLI, `[prompt] enter_after_ms = 500`): the paste goes at once without
/// it, the Enter at the first tick 500 ms later, and the tick asks to run
/// by then. An agent with no pause (Codex) gets both in one job.
#[test]
fn a_prompt_s_enter_waits_for_the_pause_its_agent_needs() {
    let mut r = Rig::new(Mux::Tmux);
    let mut panes = Vec::new();
    for (pid, n, agent) in [(4545, 1, "continue"), (4546, 2, "codex")] {
        r.declared_agent(pid, agent);
        let mut p = pane(n);
        p.pane_pid = pid;
        panes.push(p);
    }
    r.input(Input::Listed {
        panes,
        clients: vec![],
    });
    for n in [1, 2] {
        r.input(Input::Captured {
            pane: PaneId(n),
            screen: capture_of(n, &tend_detector::screen::Screen::new(24, 80)),
            purpose: CapturePurpose::Seed,
        });
    }
    r.at_ms(1000);
    assert_eq!(r.get("%1")["agent"], "continue");
    assert_eq!(r.get("%2")["agent"], "codex");
    r.drain_jobs();
    let prompted = |jobs: &[MuxJob], n: u32| -> (Option<bool>, usize) {
        let paste = jobs.iter().find_map(|j| match j {
            MuxJob::Paste { pane, enter, .. } if *pane == PaneId(n) => Some(*enter),
            _ => None,
        });
        let enters = jobs
            .iter()
            .filter(|j| matches!(j, MuxJob::SendKeys { pane, keys } if *pane == PaneId(n) && keys == &["Enter"]))
            .count();
        (paste, enters)
    };

    r.ok("prompt", json!({"pane": "%2", "text": "go"}));
    assert_eq!(prompted(&r.drain_jobs(), 2), (Some(true), 0));

    r.ok("prompt", json!({"pane": "%1", "text": "go"}));
    assert_eq!(prompted(&r.drain_jobs(), 1), (Some(false), 0));
    r.at_ms(1100);
    let wait = r.core.poll_timeout() - r.now;
    assert!(
        wait <= Duration::from_millis(400),
        "the tick waits {wait:?}"
    );
    assert_eq!(
        prompted(&r.drain_jobs(), 1),
        (None, 0),
        "not before its time"
    );
    r.at_ms(1499);
    assert_eq!(
        prompted(&r.drain_jobs(), 1),
        (None, 0),
        "not before its time"
    );
    r.at_ms(1500);
    assert_eq!(prompted(&r.drain_jobs(), 1), (None, 1));
    r.at_ms(2500);
    assert_eq!(prompted(&r.drain_jobs(), 1), (None, 0), "sent once");
}

#[test]
fn the_core_lists_the_panes_every_second_on_its_own_clock() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1], vec![]);
    r.drain_jobs();
    let mut lists = Vec::new();
    for ms in (0..=5_000).step_by(100) {
        r.drive_to(ms);
        let listed = r
            .drain_jobs()
            .iter()
            .any(|j| matches!(j, MuxJob::List | MuxJob::Publish { list: true, .. }));
        if listed {
            lists.push(ms);
        }
    }
    assert_eq!(lists, [0, 1000, 2000, 3000, 4000, 5000]);
    // No wake-up is later than the next listing.
    assert!(r.core.poll_timeout() <= r.now + crate::RECONCILE_EVERY);
}

#[test]
fn changes_to_the_saved_state_are_written_at_most_once_a_second() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1, 2], vec![]);
    r.drive_to(100);
    r.ok("park", json!({"pane": "%1"}));
    r.drive_to(200);
    assert!(r.saved(), "the first change is written at once");
    r.ok("park", json!({"pane": "%2"}));
    r.drive_to(900);
    assert!(!r.saved(), "the next waits for its second");
    r.drive_to(1_300);
    assert!(r.saved(), "and is written when it comes");
    r.drive_to(5_000);
    assert!(!r.saved(), "nothing changed since");
}

/// An agent (`codex`, declared) in pane `%n`, listed and seeded, after a
/// second on the clock.
fn rig_with_agent(n: u32) -> Rig {
    let mut r = Rig::new(Mux::Tmux);
    r.declared_agent(4500 + n, "codex");
    let mut p = pane(n);
    p.pane_pid = 4500 + n;
    r.input(Input::Listed {
        panes: vec![p],
        clients: vec![],
    });
    r.input(Input::Captured {
        pane: PaneId(n),
        screen: capture_of(n, &tend_detector::screen::Screen::new(24, 80)),
        purpose: CapturePurpose::Seed,
    });
    r.at(1);
    assert_eq!(r.get(&format!("%{n}"))["agent"], "codex");
    r
}

impl Rig {
    /// Runs the timers on their wake-ups until `ms` after the start,
    /// then returns the answer to `id` if the table gave it.
    fn answer_by(&mut self, id: RequestId, ms: u64) -> Option<Response> {
        self.drive_to(ms);
        self.answer(id)
    }
}

#[test]
fn a_wait_is_answered_at_once_when_the_pane_is_there_and_else_by_the_change_that_gets_it_there() {
    let mut r = rig_with_agent(1);
    r.works("%1");
    r.at(2);
    let at_once = r.ok("wait", json!({"pane": "%1", "until": ["working"]}));
    assert_eq!(
        (&at_once["pane"], &at_once["state"]),
        (&json!("%1"), &json!("working"))
    );
    let id = r.send("wait", json!({"pane": "%1", "until": ["completed"]}));
    assert!(r.answer_by(id, 10_000).is_none(), "still working");
    r.report("%1", "done", json!({}));
    let answer = r.answer_by(id, 10_100).expect("the change ends the wait");
    let v = answer.result.expect("not an error");
    assert_eq!(v["event"], "pane.agent_status_changed");
    assert_eq!(
        (&v["pane"], &v["state"]),
        (&json!("%1"), &json!("completed"))
    );
    assert_eq!(v["prev_state"], "working");
}

#[test]
fn a_wait_runs_out_on_the_core_s_clock() {
    let mut r = rig_with_agent(1);
    r.works("%1");
    r.at(2);
    let id = r.send(
        "wait",
        json!({"pane": "%1", "until": ["waiting/approval"], "timeout_ms": 3000}),
    );
    assert!(r.answer_by(id, 4_999).is_none(), "not before its time");
    let e = r
        .answer_by(id, 5_000)
        .expect("answered")
        .error
        .expect("timed out");
    assert_eq!(e.code.as_str(), "timeout");
    assert!(
        e.message
            .starts_with("%1 did not reach waiting/approval in time"),
        "{}",
        e.message
    );
    let e = r.ask("wait", json!({"pane": "%1", "until": ["asleep"]}));
    assert_eq!(e.error.expect("refused").code.as_str(), "bad_request");
}

#[test]
fn a_wait_ends_when_its_pane_closes() {
    let mut r = rig_with_agent(1);
    let id = r.send("wait", json!({"pane": "%1", "until": ["completed"]}));
    assert!(r.answer_by(id, 1_500).is_none());
    r.input(Input::Listed {
        panes: vec![],
        clients: vec![],
    });
    let e = r.answer(id).expect("answered").error.expect("gone");
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        ("agent_not_running", "%1 was closed")
    );
}

#[test]
fn prompt_wait_needs_a_reaction_within_five_seconds_then_waits_for_its_states() {
    let mut r = rig_with_agent(1);
    // No reaction: stalled five seconds after the prompt.
    let id = r.send("prompt", json!({"pane": "%1", "text": "go", "wait": true}));
    assert!(
        r.drain_jobs()
            .iter()
            .any(|j| matches!(j, MuxJob::Paste { pane, .. } if *pane == PaneId(1))),
        "the prompt went out at once"
    );
    assert!(r.answer_by(id, 5_999).is_none());
    let e = r
        .answer_by(id, 6_000)
        .expect("answered")
        .error
        .expect("stalled");
    assert_eq!(e.code.as_str(), "agent_prompt_stalled");
    // A reaction (working), then the state asked for.
    let id = r.send(
        "prompt",
        json!({"pane": "%1", "text": "go", "wait": true, "until": ["completed"]}),
    );
    r.works("%1");
    assert!(
        r.answer_by(id, 7_000).is_none(),
        "reacted, not completed yet"
    );
    r.drive_to(20_000);
    assert!(
        r.answer(id).is_none(),
        "the reaction ended the five seconds"
    );
    r.report("%1", "done", json!({}));
    let v = r
        .answer_by(id, 20_100)
        .expect("answered")
        .result
        .expect("ok");
    assert_eq!(v["state"], "completed");
}

#[test]
fn a_request_for_a_pane_not_listed_yet_is_answered_after_the_listing_that_shows_it() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1], vec![]);
    r.at(1);
    r.drain_jobs();
    let id = r.send("get", json!({"pane": "%2"}));
    assert!(r.answer(id).is_none(), "kept");
    r.at_ms(1_010);
    let listed = r
        .drain_jobs()
        .iter()
        .any(|j| matches!(j, MuxJob::List | MuxJob::Publish { list: true, .. }));
    assert!(listed, "the panes are listed again at once");
    r.list(&[1, 2], vec![]);
    assert!(
        r.answer(id).is_none(),
        "not before the new pane has a status"
    );
    r.at_ms(1_020);
    let v = r.answer(id).expect("answered").result.expect("found");
    assert_eq!(v["pane"], "%2");
    assert_eq!(v["tap"], "none", "the pane as evaluated, not an empty row");
    // A pane that never shows up: `unknown_pane`, two seconds after.
    let id = r.send("get", json!({"pane": "%9"}));
    assert!(r.answer_by(id, 3_019).is_none());
    let e = r
        .answer_by(id, 3_030)
        .expect("answered")
        .error
        .expect("unknown");
    assert_eq!(e.code.as_str(), "unknown_pane");
}

#[test]
fn read_and_answer_are_answered_from_what_the_backend_reports() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1], vec![]);
    r.at(1);
    r.drain_jobs();
    let id = r.send("read", json!({"pane": "%1"}));
    let reply = r
        .drain_jobs()
        .into_iter()
        .find_map(|j| match j {
            MuxJob::Read {
                pane: PaneId(1),
                reply,
                ..
            } => Some(reply),
            _ => None,
        })
        .expect("the backend is asked to read");
    assert_eq!(reply, id);
    let text = crate::answer::read_reply("%1".into(), "$ ls\n".into(), None);
    r.input(Input::Done {
        reply,
        result: Ok(text),
    });
    let v = r.answer(id).expect("answered").result.expect("ok");
    assert_eq!((&v["pane"], &v["text"]), (&json!("%1"), &json!("$ ls\n")));
}

/// Agents' stores with fixed answers: the conversation each agent
/// process's session file names, and the conversations kept.
#[derive(Debug, Clone, Default)]
struct StubStores(Arc<Mutex<StubStore>>);

#[derive(Debug, Default)]
struct StubStore {
    live: BTreeMap<u32, (String, String)>,
    saved: BTreeMap<String, String>,
    /// How often a running agent was looked up.
    lookups: usize,
}

impl crate::ConversationSource for StubStores {
    fn live(
        &mut self,
        _: &tend_detector::manifest::Resume,
        agent: &ProcessInfo,
        _: &str,
        _: bool,
    ) -> crate::LiveFacts {
        let mut s = self.0.lock().expect("stores");
        s.lookups += 1;
        crate::LiveFacts {
            home: Some(crate::resume::Home {
                dir: "/home/u/.claude".into(),
                var: None,
            }),
            session_file: s.live.get(&agent.pid).cloned(),
            ..crate::LiveFacts::default()
        }
    }

    fn saved(
        &mut self,
        _: &tend_detector::manifest::Resume,
        _: &crate::resume::Home,
        id: &str,
        _: &str,
    ) -> crate::resume::plan::Saved {
        let s = self.0.lock().expect("stores");
        match s.saved.get(id) {
            Some(folder) => crate::resume::plan::Saved::Found {
                folder: folder.clone(),
            },
            None => crate::resume::plan::Saved::Missing,
        }
    }
}

/// Pane `n` of session `work`, window 0, in `/w`, its shell `pid`.
fn work_pane(n: u32, pid: u32) -> PaneInfo {
    let mut p = pane(n);
    p.pane_pid = pid;
    p.session_name = "work".into();
    p.window_index = 0;
    p.window_name = "agent".into();
    p.current_path = "/w".into();
    p
}

impl Rig {
    fn list_panes(&mut self, panes: Vec<PaneInfo>) {
        let ids: Vec<PaneId> = panes.iter().map(|p| p.pane_id).collect();
        self.input(Input::Listed {
            panes,
            clients: vec![],
        });
        for id in ids {
            self.input(Input::Captured {
                pane: id,
                screen: capture_of(id.0, &tend_detector::screen::Screen::new(24, 80)),
                purpose: CapturePurpose::Seed,
            });
        }
    }
}

#[test]
fn a_conversation_left_running_is_restored_into_its_place_once_after_the_server_restarts() {
    const A: &str = "eb34e611-e881-43e1-9a20-021e02493a45";
    let stores = StubStores::default();
    if let Ok(mut s) = stores.0.lock() {
        s.live.insert(4545, (A.into(), "/w".into()));
        s.saved.insert(A.into(), "/w".into());
    }
    // The first server: Claude Code runs in work:0.0.
    let mut r = Rig::new(Mux::Tmux);
    r.core.set_conversations(Box::new(stores.clone()));
    r.declared_agent(4545, "claude");
    r.list_panes(vec![work_pane(1, 4545)]);
    r.drive_to(3_000);
    assert_eq!(r.get("%1")["agent"], "claude");
    let text = r.core.state_text();
    let saved: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(saved["conversations"][0]["id"], A);
    assert_eq!(saved["conversations"][0]["end"]["kind"], "running");
    assert!(r.saved(), "the record is written");

    // The server died with it; the next daemon loads the state and is
    // asked to restore before it has listed the panes: it answers once it
    // has.
    let mut r = Rig::new(Mux::Tmux);
    r.core.set_conversations(Box::new(stores));
    r.core
        .restore(crate::store::parse(&text, WALL as u64).expect("the state reads back"));
    let req = Request::from_wire("restore", json!({"all": true})).expect("restore");
    r.input(Input::Control {
        id: RequestId(99),
        req,
    });
    let answered = |r: &mut Rig| {
        let mut out = None;
        while let Some(e) = r.core.poll_effect() {
            match e {
                Effect::Reply {
                    id: RequestId(99),
                    result,
                } => out = Some(result),
                other => r.polled.push(other),
            }
        }
        out
    };
    assert!(answered(&mut r).is_none(), "waits for the panes");
    r.idle_shell(700);
    r.list_panes(vec![work_pane(0, 700)]);
    let reply = answered(&mut r).expect("answered").expect("restored");
    let v = serde_json::to_value(&reply).expect("json");
    assert_eq!(v["conversations"][0]["started"], true, "{v}");
    assert_eq!(v["conversations"][0]["target"], "work:0.0");
    let resumed: Vec<_> = r
        .drain_jobs()
        .into_iter()
        .filter_map(|j| match j {
            MuxJob::Resume { target, command } => Some((target, command)),
            _ => None,
        })
        .collect();
    assert_eq!(
        resumed,
        [(
            crate::resume::plan::Target::Pane {
                pane: PaneId(0),
                place: crate::resume::Place {
                    session: "work".into(),
                    window_index: 0,
                    window_name: "agent".into(),
                    pane_index: 0,
                }
            },
            vec!["claude".to_owned(), "--resume".into(), A.into()]
        )]
    );
    // Never twice.
    let again = r.ok("restore", json!({"all": true}));
    assert_eq!(again["conversations"], json!([]));
    assert_eq!(again["resumed_before"], 1);
    assert!(!r
        .drain_jobs()
        .iter()
        .any(|j| matches!(j, MuxJob::Resume { .. })));
}

#[test]
fn restore_is_tmux_s() {
    let mut r = Rig::new(Mux::Zellij);
    let e = r
        .ask("restore", json!({"all": true}))
        .error
        .expect("refused");
    assert_eq!(e.code, ErrorCode::BadRequest);
    assert!(e.message.contains("tmux only"), "{}", e.message);
}
mod limits;

#[test]
fn a_running_agent_s_conversation_is_looked_up_soon_after_it_starts_then_every_30_s() {
    const A: &str = "eb34e611-e881-43e1-9a20-021e02493a45";
    let stores = StubStores::default();
    let lookups = |s: &StubStores| s.0.lock().expect("stores").lookups;
    let mut r = Rig::new(Mux::Tmux);
    r.core.set_conversations(Box::new(stores.clone()));
    r.declared_agent(4545, "claude");
    r.list_panes(vec![work_pane(1, 4545)]);
    r.drive_to(3_000);
    assert_eq!(r.get("%1")["agent"], "claude");
    // At once when the agent is found, then every 2 s in its first 10 s
    // (it may write its file just after it started); its state does not
    // move, so then not before 30 s have passed, though it is sampled.
    assert!(lookups(&stores) >= 1);
    r.drive_to(12_000);
    let early = lookups(&stores);
    assert!(
        (2..=6).contains(&early),
        "{early} lookups in the first 12 s"
    );
    r.drive_to(30_000);
    assert_eq!(lookups(&stores), early);
    if let Ok(mut s) = stores.0.lock() {
        s.live.insert(4545, (A.into(), "/w".into()));
    }
    r.drive_to(75_000);
    let saved: Value = serde_json::from_str(&r.core.state_text()).expect("json");
    assert_eq!(saved["conversations"][0]["id"], A);
    // Known: every 30 s (when a sample comes), never more often.
    let known = lookups(&stores);
    r.drive_to(195_000);
    let more = lookups(&stores) - known;
    assert!((3..=4).contains(&more), "{more} lookups in 120 s");
}

impl Rig {
    /// The files the core last asked the daemon to follow, if it asked
    /// since the last call (other effects are kept for `drain_jobs`).
    fn follows(&mut self) -> Option<Vec<(PaneId, String)>> {
        let mut last = None;
        let effects: Vec<Effect> = std::mem::take(&mut self.polled)
            .into_iter()
            .chain(std::iter::from_fn(|| self.core.poll_effect()))
            .collect();
        for e in effects {
            match e {
                Effect::FollowFiles(files) => {
                    last = Some(files.into_iter().map(|f| (f.pane, f.path)).collect())
                }
                other => self.polled.push(other),
            }
        }
        last
    }

    /// A version of Claude Code's session file for process `pid` started
    /// at `start`, handed in as read.
    fn session_file(&mut self, pane: u32, pid: u32, start: u64, status: &str, extra: Value) {
        let mut v = json!({"pid": pid, "procStart": start.to_string(), "sessionId": "s1",
            "cwd": "/home/u/work", "version": "2.1.332", "kind": "interactive",
            "status": status});
        if let (Some(v), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            v.extend(e.clone());
        }
        self.input(Input::SessionFile {
            pane: PaneId(pane),
            path: format!("/home/u/.claude/sessions/{pid}.json"),
            read: crate::FileRead::Bytes(v.to_string().into_bytes()),
        });
    }

    /// The pane's state, reason, authority and message as `get` says.
    fn word_of(&mut self, pane: &str) -> (Value, Value, Value, Value) {
        let v = self.get(pane);
        (
            v["state"].clone(),
            v["reason"].clone(),
            v["authority"].clone(),
            v["message"].clone(),
        )
    }
}

/// A pane whose only process is a declared `agent` (pid 4545, started at
/// clock tick 777), listed and committed.
fn agent_pane(agent: &str) -> Rig {
    let mut r = Rig::new(Mux::Tmux);
    r.declared_agent(4545, agent);
    if let Ok(mut m) = r.procs.0.lock() {
        if let Some(p) = m.get_mut(&4545) {
            p.start_ticks = Some(777);
        }
    }
    let mut p1 = pane(1);
    p1.pane_pid = 4545;
    r.list_infos(vec![p1], vec![]);
    r.drive_to(4000);
    r
}

#[test]
fn claudes_session_file_decides_while_its_process_runs() {
    let mut r = agent_pane("claude");
    assert_eq!(
        r.follows(),
        Some(vec![(
            PaneId(1),
            "/home/u/.claude/sessions/4545.json".to_owned()
        )])
    );
    let w = |s: &str, r: Value, a: &str, m: Value| (json!(s), r, json!(a), m);
    r.session_file(1, 4545, 777, "busy", json!({}));
    r.drive_to(4100);
    assert_eq!(
        r.word_of("%1"),
        w("working", Value::Null, "file", Value::Null)
    );
    r.session_file(1, 4545, 777, "shell", json!({}));
    r.drive_to(4200);
    assert_eq!(r.word_of("%1").0, json!("working"));
    assert_eq!(r.get("%1")["rule"], json!("file/shell"));
    r.session_file(
        1,
        4545,
        777,
        "waiting",
        json!({"waitingFor": "permission prompt"}),
    );
    r.drive_to(4300);
    assert_eq!(
        r.word_of("%1"),
        w(
            "waiting",
            json!("approval"),
            "file",
            json!("permission prompt")
        )
    );
    r.session_file(1, 4545, 777, "idle", json!({}));
    r.drive_to(4400);
    assert_eq!(
        r.word_of("%1"),
        w("completed", Value::Null, "file", Value::Null)
    );
    // A version naming another start of pid 4545 is not this agent's.
    r.session_file(1, 4545, 778, "busy", json!({}));
    r.drive_to(4500);
    assert_eq!(r.word_of("%1").2, json!("screen"));
    let ex = r.ok("explain", json!({"pane": "%1"}));
    assert_eq!(
        ex["authority"]["file"]["last"],
        json!("not this pane's agent: its process started at another time (a reused pid)")
    );
    // A version not understood: the screen, and the version is named.
    r.session_file(1, 4545, 777, "thinking", json!({}));
    r.drive_to(4600);
    assert_eq!(r.word_of("%1").2, json!("screen"));
    let ex = r.ok("explain", json!({"pane": "%1"}));
    assert_eq!(
        ex["authority"]["file"]["not_understood"],
        json!("unknown `status` `thinking` (written by 2.1.332)")
    );
    assert_eq!(ex["authority"]["file"]["rejected"], json!(1));
    // The file goes: the screen at once.
    r.session_file(1, 4545, 777, "busy", json!({}));
    r.drive_to(4700);
    assert_eq!(r.word_of("%1").2, json!("file"));
    r.input(Input::SessionFile {
        pane: PaneId(1),
        path: "/home/u/.claude/sessions/4545.json".into(),
        read: crate::FileRead::Gone,
    });
    r.drive_to(4800);
    assert_eq!(r.word_of("%1").2, json!("screen"));
    // A file for a path the pane does not follow is not read as its.
    r.input(Input::SessionFile {
        pane: PaneId(1),
        path: "/home/u/.claude/sessions/1.json".into(),
        read: crate::FileRead::Bytes(b"{}".to_vec()),
    });
    r.session_file(1, 4545, 777, "busy", json!({}));
    r.drive_to(4900);
    assert_eq!(r.word_of("%1").2, json!("file"));
    // The process ends: nothing followed, the screen decides.
    if let Ok(mut m) = r.procs.0.lock() {
        m.clear();
    }
    r.input(Input::JobsEnded);
    r.drive_to(9000);
    assert_eq!(r.follows(), Some(vec![]));
    assert_eq!(r.word_of("%1").2, json!("screen"));
}

#[test]
fn an_agent_without_session_files_follows_none() {
    let mut r = agent_pane("aider");
    assert_eq!(r.follows(), None);
    r.session_file(1, 4545, 777, "busy", json!({}));
    r.drive_to(4100);
    assert_eq!(r.word_of("%1").2, json!("screen"));
}

#[test]
fn codexs_unasked_reports_count_while_codex_holds_the_terminal() {
    let mut r = agent_pane("codex");
    r.input(Input::TapHello {
        conn: 1,
        pane: PaneId(1),
    });
    r.data(
        1,
        4100,
        b"\x1b]7501;state=blocked:app=codex:kind=permission\x07",
    );
    r.drive_to(4200);
    assert_eq!(
        r.word_of("%1"),
        (
            json!("waiting"),
            json!("approval"),
            json!("osc"),
            Value::Null
        )
    );
    // A report naming another program is not Codex's word.
    r.data(1, 4300, b"\x1b]7501;state=working:app=other\x07");
    r.drive_to(4400);
    assert_eq!(r.word_of("%1").2, json!("screen"));
    // A `working` the screen does not show counts once it has lasted
    // 300 ms (Codex flashes working as it starts).
    r.data(1, 4450, b"\x1b]7501;state=idle:app=codex\x07");
    r.data(1, 4500, b"\x1b]7501;state=working:app=codex\x07");
    r.drive_to(4700);
    assert_eq!(r.word_of("%1").2, json!("screen"));
    r.drive_to(4810);
    assert_eq!(
        r.word_of("%1"),
        (json!("working"), Value::Null, json!("osc"), Value::Null)
    );
    r.data(1, 4900, b"\x1b]7501;state=idle:app=codex\x07\x1b]7501;state=working:app=codex\x07\x1b]7501;state=idle:app=codex\x07");
    r.drive_to(5300);
    assert_eq!(r.word_of("%1").0, json!("idle"), "the flash never shows");
    r.data(1, 5400, b"\x1b]7501;state=working:app=codex\x07");
    r.drive_to(5800);
    assert_eq!(r.word_of("%1").2, json!("osc"));
    // Codex runs a child that took the terminal (an editor): what the
    // pane prints is not Codex's, and the reports are forgotten.
    if let Ok(mut m) = r.procs.0.lock() {
        if let Some(p) = m.get_mut(&4545) {
            p.tpgid = Some(4546);
        }
    }
    r.input(Input::JobsEnded);
    r.core
        .panes
        .get_mut(&PaneId(1))
        .unwrap()
        .watch
        .foreground_hint(Duration::from_millis(5800));
    r.drive_to(8000);
    assert_eq!(r.word_of("%1").2, json!("screen"));
}

/// A poll's answer for `%n`: its screen showing `text`.
fn polled(r: &mut Rig, n: u32, ms: u64, text: &str) {
    r.now = r.t0 + Duration::from_millis(ms);
    r.input(Input::Captured {
        pane: PaneId(n),
        screen: Screen {
            pane_id: PaneId(n),
            text: format!("{text}\n"),
            cursor_x: 0,
            cursor_y: 1,
            cursor_visible: true,
            alternate_on: false,
            in_mode: false,
            width: 80,
            height: 24,
        },
        purpose: CapturePurpose::Poll,
    });
}

impl Rig {
    /// A sweep at `ms` (as another pane's deadline makes one); how many
    /// polls of `%n` it asked for.
    fn sweep_at(&mut self, n: u32, ms: u64) -> usize {
        self.core.next_sweep = Duration::ZERO;
        self.at_ms(ms);
        self.drain_jobs()
            .iter()
            .filter(|j| matches!(j, MuxJob::Capture(p, CapturePurpose::Poll) if *p == PaneId(n)))
            .count()
    }
}

#[test]
fn a_pane_with_someone_else_s_pipe_is_polled_on_its_own_gap_whatever_sweeps_come_between() {
    let mut r = Rig::new(Mux::Tmux);
    r.idle_shell(4545);
    let mut p1 = pane(1);
    p1.pipe = Pipe::Other;
    p1.pane_pid = 4545;
    r.list_infos(vec![p1], vec![]);
    assert_eq!(r.core.panes[&PaneId(1)].tap, crate::TapState::Polling);
    assert_eq!(r.sweep_at(1, 1000), 1, "polled at the first sweep");
    // The screen changed: the next poll comes POLL_BUSY after this one.
    polled(&mut r, 1, 1010, "working 1");
    assert_eq!(r.sweep_at(1, 1100), 0, "100 ms after it: not yet");
    assert_eq!(
        r.core.next_sweep,
        Duration::from_millis(1000) + crate::POLL_BUSY,
        "a sweep between polls does not push the next one back"
    );
    assert_eq!(r.sweep_at(1, 1125), 1);
    // Unchanged: the gap doubles, up to POLL_EVERY.
    polled(&mut r, 1, 1130, "working 1");
    assert_eq!(r.sweep_at(1, 1300), 0);
    assert_eq!(r.sweep_at(1, 1375), 1, "250 ms after the last poll");
    polled(&mut r, 1, 1380, "working 1");
    assert_eq!(r.sweep_at(1, 1800), 0);
    assert_eq!(r.sweep_at(1, 1875), 1, "500 ms after the last poll");
    polled(&mut r, 1, 1880, "working 1");
    assert_eq!(r.sweep_at(1, 2300), 0);
    assert_eq!(r.sweep_at(1, 2375), 1, "at most POLL_EVERY apart");
    // It changes again: back to POLL_BUSY.
    polled(&mut r, 1, 2380, "a dialog");
    assert_eq!(r.sweep_at(1, 2500), 1);
}

/// `%1` running Codex (pid `pid`, declared) with someone else's pipe on
/// it, listed and seeded blank: a pane tend reads by polling its screen.
fn codex_behind_someone_else_s_pipe(pid: u32) -> Rig {
    let mut r = Rig::new(Mux::Tmux);
    r.declared_agent(pid, "codex");
    let mut p1 = pane(1);
    p1.pipe = Pipe::Other;
    p1.pane_pid = pid;
    r.input(Input::Listed {
        panes: vec![p1],
        clients: vec![],
    });
    r.input(Input::Captured {
        pane: PaneId(1),
        screen: capture_of(1, &tend_detector::screen::Screen::new(24, 80)),
        purpose: CapturePurpose::Seed,
    });
    r
}

#[test]
fn a_working_agent_behind_someone_else_s_pipe_is_polled_at_the_busy_pace_while_its_screen_stands_still(
) {
    let mut r = codex_behind_someone_else_s_pipe(4601);
    assert_eq!(r.sweep_at(1, 1000), 1);
    // Codex's working line over its prompt box (its manifest's example).
    let working = "› Write a short poem about tmux.\n• Working (1s • esc to interrupt)\n› Ask Codex to do anything";
    polled(&mut r, 1, 1010, working);
    r.drive_to(1100);
    r.drain_jobs();
    let v = r.get("%1");
    assert_eq!(v["state"], "working", "{v}");
    // The same screen at every poll (the model thinking), and still one
    // poll every POLL_BUSY.
    let mut at = 1000;
    for _ in 0..6 {
        let last = at;
        at = (1101..3000)
            .find(|ms| r.sweep_at(1, *ms) == 1)
            .expect("polled again");
        assert!(
            at - last <= crate::POLL_BUSY.as_millis() as u64 + 20,
            "{last} → {at}"
        );
        polled(&mut r, 1, at + 5, working);
    }
}

#[test]
fn a_dialog_in_a_polled_pane_is_read_at_the_capture_that_brings_it_not_a_backed_off_evaluation_later(
) {
    let mut r = codex_behind_someone_else_s_pipe(4602);
    // Working for two seconds, what it streams changing at every poll but
    // not what says it works: the same evidence at each evaluation, so
    // evaluations back off to their longest interval, while each capture
    // rewrites every row.
    // The screen is full, as an agent's is after a few turns: a capture
    // then rewrites rows that were written before, blank or not.
    let history: String = (1..=18)
        .map(|n| format!("  line {n} of an earlier answer\n"))
        .collect();
    let prompt = "› Write a short poem about tmux.";
    for (i, ms) in (1000..3000).step_by(125).enumerate() {
        // What it streams changes; what says it works does not.
        let working = format!(
            "{history}{prompt}\n  streamed {i} tokens\n• Working (1s • esc to interrupt)\n\n› Ask Codex to do anything"
        );
        polled(&mut r, 1, ms, &working);
        r.drive_to(ms + 120);
    }
    assert_eq!(r.get("%1")["state"], "working");
    // Its approval dialog (the manifest's example) in the next capture:
    // read at once, not when the backed-off evaluation falls due.
    let dialog = history.lines().skip(2).collect::<Vec<_>>().join("\n")
        + "\n  Would you like to run the following command?\n  $ rm -rf ./build\n› 1. Yes, proceed (y)\n  3. No, and tell Codex what to do differently (esc)\n  Press enter to confirm or esc to cancel";
    polled(&mut r, 1, 3010, &dialog);
    // Within the base evaluation interval (50 ms); it took 160 ms when
    // every rewritten row counted as churn.
    r.drive_to(3060);
    let v = r.get("%1");
    assert_eq!(
        (&v["state"], &v["reason"]),
        (&json!("waiting"), &json!("approval")),
        "{v}"
    );
}

#[test]
fn a_saved_park_shows_before_its_pane_is_first_evaluated() {
    let mut r = Rig::new(Mux::Tmux);
    r.list(&[1], vec![]);
    r.ok("park", json!({"pane": "%1", "note": "keepme"}));
    let text = r.core.state_text();
    // The next daemon has read the state and just listed the pane: no
    // status yet, the park is the user's all the same.
    let mut r = Rig::new(Mux::Tmux);
    r.core
        .restore(crate::store::parse(&text, WALL as u64).expect("the state reads back"));
    r.list(&[1], vec![]);
    let v = r.get("%1");
    assert_eq!(v["state"], Value::Null, "not evaluated yet: {v}");
    assert_eq!((&v["parked"], &v["note"]), (&json!(true), &json!("keepme")));
}
