//! [`PaneWatch`]: everything the daemon keeps about one pane's processes —
//! when to probe and sample, identity hysteresis, the detector's process
//! view and the agent's version.

use std::time::Duration;

use tend_detector::engine::ProcessObservation;
use tend_detector::identity::{
    self, IdentifiedBy, IdentityChange, IdentityEvidence, IdentityTracker, ProcSample, ProcessInfo,
    ProcessTracker, Resolution, SamplePolicy, SampleScheduler,
};
use tend_detector::rules::ScreenView;
use tend_detector::Registry;

use crate::source::{ProcSource, SampleStats};

/// What one [`PaneWatch::poll`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchUpdate {
    /// A probe was taken (one `stat` read).
    pub probed: bool,
    /// A full sample was taken.
    pub sampled: bool,
    /// Its resolution.
    pub resolution: Option<Resolution>,
    /// The committed identity changed.
    pub change: Option<IdentityChange>,
    /// For the detector (`PaneDetector::observe_process`).
    pub observation: Option<ProcessObservation>,
    /// The shell is gone.
    pub gone: bool,
    /// The processes of a full sample (what `tend capture` saves as
    /// `procs.jsonl`), seen through a `tend run` relay (see
    /// `look_through_relay`).
    pub procs: Option<Vec<ProcessInfo>>,
    /// A full sample found a `tend run` relay holding the pane's terminal.
    pub relay: bool,
    /// Cost of the sample.
    pub stats: SampleStats,
}

/// What a sample may read of the pane's screen: its view and when the pane
/// last printed. Read only when a wrapper (`ssh`, `docker exec`, …) holds
/// the terminal with no agent process below it (see
/// [`IdentityTracker::needs_screen`]).
pub trait ScreenSource {
    /// The screen as the rules see it.
    fn view(&self) -> ScreenView;
    /// When the pane last printed (the daemon's clock).
    fn last_output(&self) -> Option<Duration>;
}

impl ScreenSource for tend_detector::PaneDetector {
    fn view(&self) -> ScreenView {
        tend_detector::PaneDetector::view(self)
    }

    fn last_output(&self) -> Option<Duration> {
        tend_detector::PaneDetector::last_output(self)
    }
}

/// How a pane's agent was identified, kept past the agent's end (the pane
/// reads `exited` naming it until another starts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identified {
    /// The agent.
    pub agent: String,
    /// How.
    pub by: IdentifiedBy,
    /// Named from the screen: the wrapper the process tree shows (`ssh`).
    pub wrapper: Option<String>,
}

/// The process of a pane's committed agent, as the last full sample found
/// it: what a session file must name to speak for the pane
/// (`tend_detector::session_file::tie`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentProcess {
    /// Its pid.
    pub pid: u32,
    /// When it started, in clock ticks after boot.
    pub start_ticks: Option<u64>,
    /// It is stopped (Ctrl-Z, a debugger): what it wrote last is not what
    /// it does now.
    pub stopped: bool,
    /// Its process group holds the pane's terminal, and no child of it
    /// took the terminal over (an editor it opened): what the pane prints
    /// is the agent's own output.
    pub foreground: bool,
}

/// Everything the daemon keeps about one pane's processes: scheduling,
/// identity hysteresis and the detector's process view.
#[derive(Debug)]
pub struct PaneWatch {
    shell_pid: u32,
    /// What the pane is known by among the source's exit watches
    /// ([`ProcSource::watch_exit`]).
    key: u64,
    sched: SampleScheduler,
    identity: IdentityTracker,
    procs: ProcessTracker,
    /// The agent whose processes are followed (kept one sample past a
    /// drop, so the detector hears that it ended).
    followed: Option<String>,
    /// (agent, foreground pgid or `None` for the shell) of the last sample.
    last_key: Option<(Option<String>, Option<u32>)>,
    hz: f64,
    /// The committed agent's version, where its package metadata says.
    version: Option<String>,
    /// The agent and process the version was looked up for.
    version_of: Option<(String, u32)>,
    /// How the latest agent was identified.
    identified: Option<Identified>,
    /// The last full sample found a `tend run` relay holding the terminal.
    relay: bool,
    /// The processes that are `tend run` relays: those that said so on the
    /// daemon's socket, by the pid the kernel gave (see
    /// [`PaneWatch::set_relays`]).
    relays: Vec<u32>,
    /// The committed agent's process, as the last full sample found it.
    agent_process: Option<AgentProcess>,
}

impl PaneWatch {
    /// Watches the pane whose shell is `shell_pid`, first sample due `now`;
    /// `key` names it among the source's exit watches (one per pane); `hz`
    /// is the source's clock ticks per second
    /// ([`ProcSource::ticks_per_sec`]).
    pub fn new(shell_pid: u32, key: u64, now: Duration, policy: SamplePolicy, hz: f64) -> Self {
        PaneWatch {
            shell_pid,
            key,
            sched: SampleScheduler::new(policy, now),
            identity: IdentityTracker::new(),
            procs: ProcessTracker::with_ticks_per_sec(hz),
            followed: None,
            last_key: None,
            hz,
            version: None,
            version_of: None,
            identified: None,
            relay: false,
            relays: Vec::new(),
            agent_process: None,
        }
    }

    /// The pids of the `tend run` relays registered on the daemon's
    /// socket now. Only these are relays: a process that merely looks like
    /// one (`exec -a tend prog run`, `tend pilot --client run`) is not, so
    /// what it prints is never taken for an answered program's word.
    pub fn set_relays(&mut self, pids: &[u32]) {
        self.relays.clear();
        self.relays.extend_from_slice(pids);
    }

    /// The pane's shell pid.
    pub fn shell_pid(&self) -> u32 {
        self.shell_pid
    }

    /// The committed agent.
    pub fn agent(&self) -> Option<&str> {
        self.identity.agent()
    }

    /// The committed agent's version, where its package metadata says.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// Whether the last full sample found a `tend run` relay holding the
    /// pane's terminal: then, and only then, a program in the pane was
    /// answered when it asked whether the terminal takes OSC 7501 reports.
    pub fn relay(&self) -> bool {
        self.relay
    }

    /// The committed agent's process, as the last full sample found it
    /// (`None` for an agent named from the screen, or one whose process
    /// the sample did not find).
    pub fn agent_process(&self) -> Option<AgentProcess> {
        self.agent_process
    }

    /// Evidence for `tend explain`.
    pub fn evidence(&self) -> IdentityEvidence {
        self.identity.evidence()
    }

    /// How the committed agent, or the one whose run ended last, was
    /// identified.
    pub fn identified(&self) -> Option<&Identified> {
        self.identified.as_ref()
    }

    /// The pane printed something.
    pub fn on_output(&mut self, at: Duration) {
        self.sched.on_output(at);
    }

    /// When [`PaneWatch::poll`] has something to do next.
    pub fn next_wakeup(&self) -> Duration {
        self.sched.next_wakeup()
    }

    /// The multiplexer's listing names another foreground command for the
    /// pane: sample at the next poll (an idle pane is otherwise probed only
    /// as often as it is sampled).
    pub fn foreground_hint(&mut self, at: Duration) {
        self.sched.foreground_hint(at);
    }

    /// The kernel reported that the pane's foreground job ended (see
    /// [`crate::ProcSource::watch_exit`]): sample at the next poll.
    pub fn exit_seen(&mut self, at: Duration) {
        self.sched.exit_seen(at);
    }

    /// Probes and samples as the schedule says. `prompt_visible`: the
    /// screen shows the shell's prompt. The screen is never read: an agent
    /// behind a wrapper is not named (see [`PaneWatch::poll_reading`]).
    pub fn poll(
        &mut self,
        source: &mut dyn ProcSource,
        registry: &Registry,
        at: Duration,
        prompt_visible: bool,
    ) -> WatchUpdate {
        self.poll_reading(source, registry, at, prompt_visible, None)
    }

    /// [`PaneWatch::poll`], reading `screen` when a sample finds a wrapper
    /// (`ssh`, `docker exec`, …) in the foreground and no agent process:
    /// the agent behind it is named from what its screen shows.
    pub fn poll_reading(
        &mut self,
        source: &mut dyn ProcSource,
        registry: &Registry,
        at: Duration,
        prompt_visible: bool,
        screen: Option<&dyn ScreenSource>,
    ) -> WatchUpdate {
        let mut up = WatchUpdate::default();
        if !self.sched.sample_due(at) && self.sched.probe_due(at) {
            up.probed = true;
            match source.probe(self.shell_pid) {
                Ok(p) => {
                    self.sched.probed(at, p.tpgid);
                }
                Err(_) => {
                    up.gone = true;
                    self.forget_exit(source);
                    return up;
                }
            }
        }
        if self.sched.sample_due(at) {
            return self.sample_reading(source, registry, at, prompt_visible, screen);
        }
        self.watch_exit(source);
        up
    }

    /// Has the kernel report the end of the foreground job's leader while
    /// an agent is committed (then printing needs no probes, which look
    /// only for that: the shell taking the terminal back); otherwise stops
    /// that. The leader is the agent's job in an interactive shell, or the
    /// pane's own process when the agent is that (`tmux new-window
    /// claude`), or a shell without job control runs it: its end is then
    /// the pane's, and no probe would see a change before it either.
    fn watch_exit(&mut self, source: &mut dyn ProcSource) {
        let leader = match (self.identity.agent(), self.sched.tpgid()) {
            (Some(_), Some(Some(pgid))) => Some(pgid),
            _ => None,
        };
        match leader {
            Some(pid) => {
                let on = source.watch_exit(self.key, pid);
                self.sched.watch_exit(on);
            }
            None => self.forget_exit(source),
        }
    }

    /// Stops having the end of the foreground job reported (the pane is
    /// gone, or its agent is).
    pub fn forget_exit(&mut self, source: &mut dyn ProcSource) {
        source.unwatch_exit(self.key);
        self.sched.watch_exit(false);
    }

    /// Samples now, whatever the schedule (without reading the screen).
    pub fn sample_now(
        &mut self,
        source: &mut dyn ProcSource,
        registry: &Registry,
        at: Duration,
        prompt_visible: bool,
    ) -> WatchUpdate {
        self.sample_reading(source, registry, at, prompt_visible, None)
    }

    /// Samples now, reading `screen` if the sample wants it.
    pub fn sample_reading(
        &mut self,
        source: &mut dyn ProcSource,
        registry: &Registry,
        at: Duration,
        prompt_visible: bool,
        screen: Option<&dyn ScreenSource>,
    ) -> WatchUpdate {
        let mut up = WatchUpdate {
            sampled: true,
            ..WatchUpdate::default()
        };
        let mut snap = match source.sample(self.shell_pid) {
            Ok(s) => s,
            Err(_) => {
                up.gone = true;
                self.agent_process = None;
                self.forget_exit(source);
                return up;
            }
        };
        up.stats = snap.stats;
        // The pane's own foreground group, as a probe reads it (the schedule
        // compares the two).
        let tpgid = snap.procs.first().and_then(|p| p.tpgid);
        let relays = &self.relays;
        let (procs, relay) =
            look_through_relay(std::mem::take(&mut snap.procs), |p| relays.contains(&p.pid));
        snap.procs = procs;
        self.relay = relay;
        up.relay = relay;
        let res = identity::resolve_pane(registry, &snap.procs, &source.limits());
        // Tools coming and going in the foreground group do not count as a
        // change; another agent or another group does.
        let group = match res.foreground {
            identity::Foreground::Group { pgid, .. } => Some(pgid),
            _ => None,
        };
        let key = (res.agent.as_ref().map(|m| m.agent.clone()), group);
        let changed = self.last_key.as_ref().is_some_and(|k| *k != key);
        self.last_key = Some(key);
        // Behind a wrapper with no agent process: what the screen shows.
        let reading = screen
            .filter(|_| self.identity.needs_screen(&res))
            .map(|s| {
                let mut r =
                    identity::read_screen(registry, &s.view(), self.identity.screen_named());
                r.last_output = s.last_output();
                r
            });
        up.change = self
            .identity
            .observe_with_screen(at, &res, prompt_visible, reading.as_ref());
        if let Some(m) = self.identity.evidence().matched {
            let by = m.identified_by();
            self.identified = Some(Identified {
                wrapper: (by == IdentifiedBy::Screen).then(|| m.value.clone()),
                agent: m.agent,
                by,
            });
        }
        self.sched.watch_launch(self.identity.agent().is_none());
        // A pending identity (by process or by screen) also wants its
        // confirming sample soon.
        let pending = self.identity.unsettled();
        self.sched
            .sampled(at, tpgid, changed || up.change.is_some() || pending);
        self.watch_exit(source);
        if self.identity.screen_named().is_some() {
            // The agent runs where the process tree cannot show it: no
            // process of it to follow (the wrapper's end drops it).
            self.followed = None;
        } else if let Some(agent) = self.identity.agent() {
            if self.followed.as_deref() != Some(agent) {
                self.followed = Some(agent.to_owned());
                self.procs = ProcessTracker::with_ticks_per_sec(self.hz);
            }
        }
        self.agent_process = self
            .identity
            .agent()
            .filter(|_| self.identity.screen_named().is_none())
            .and_then(|a| res.agent.as_ref().filter(|m| m.agent == a))
            .and_then(|m| snap.procs.iter().find(|p| p.pid == m.pid))
            .filter(|p| !p.is_zombie())
            .map(|p| AgentProcess {
                pid: p.pid,
                start_ticks: p.start_ticks,
                stopped: p.state == "T" || p.state == "t",
                foreground: !res.via_ancestor && p.pgid.is_some() && p.pgid == p.tpgid,
            });
        self.update_version(source, registry, &res, &snap.procs);
        up.procs = Some(snap.procs.clone());
        if let Some(agent) = self.followed.clone() {
            let sample = ProcSample {
                at,
                procs: snap.procs,
            };
            up.observation = self.procs.observe(registry, &agent, &sample);
            if self.identity.agent().is_none()
                && up.observation.as_ref().is_some_and(|o| !o.agent_alive)
            {
                self.followed = None;
            }
        }
        up.resolution = Some(res);
        up
    }

    /// Looks the committed agent's version up once per agent process.
    fn update_version(
        &mut self,
        source: &mut dyn ProcSource,
        registry: &Registry,
        res: &Resolution,
        procs: &[ProcessInfo],
    ) {
        let Some(agent) = self.identity.agent() else {
            self.version = None;
            self.version_of = None;
            return;
        };
        let Some(m) = res.agent.as_ref().filter(|m| m.agent == agent) else {
            return;
        };
        let key = (agent.to_owned(), m.pid);
        if self.version_of.as_ref() == Some(&key) {
            return;
        }
        let Some(manifest) = registry.get(agent) else {
            return;
        };
        let proc = procs.iter().find(|p| p.pid == m.pid);
        let mut paths: Vec<&str> = vec![m.value.as_str()];
        if let Some(p) = proc {
            paths.extend(p.script_target.as_deref());
            paths.push(p.exe.as_str());
        }
        self.version = source.agent_version(manifest, &paths);
        if self.version.is_none() {
            if let Some(launched) = source.launched_program(m.pid) {
                self.version = source.agent_version(manifest, &[launched.as_str()]);
            }
        }
        self.version_of = Some(key);
    }
}

// What a `tend run` relay looks like in a snapshot, and the snapshot seen
// through it: pure, in the detector, so that `tend replay` and the corpus
// tests see a recording's relay as the daemon does.
pub use tend_detector::identity::look_through_relay;

#[cfg(test)]
mod relay_tests {
    use super::*;
    use tend_detector::identity::{is_relay, resolve_pane};

    fn proc(pid: u32, ppid: u32, pgid: u32, tpgid: u32, argv: &[&str]) -> ProcessInfo {
        ProcessInfo {
            pid,
            ppid,
            pgid: Some(pgid),
            tpgid: Some(tpgid),
            exe: format!("/usr/bin/{}", argv[0].rsplit('/').next().unwrap_or("x")),
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
            state: "S".into(),
            ..ProcessInfo::default()
        }
    }

    /// bash (100) → tend run (200, the pane's foreground) → tend
    /// run-session (250, leading a session on the relay's pty) → claude
    /// (300, that pty's foreground job) → a tool in a group of its own.
    fn pane(relay_argv: &[&str]) -> Vec<ProcessInfo> {
        let mut shell = proc(100, 50, 100, 200, &["-bash"]);
        shell.depth = 0;
        vec![
            shell,
            proc(200, 100, 200, 200, relay_argv),
            proc(250, 200, 250, 300, &["tend", "run-session", "--", "claude"]),
            proc(
                300,
                250,
                300,
                300,
                &["node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"],
            ),
            proc(301, 300, 301, 300, &["bash", "-c", "sleep 60"]),
        ]
    }

    #[test]
    fn a_relay_is_seen_through() {
        let reg = Registry::bundled();
        let raw = pane(&["/home/u/.cargo/bin/tend", "run", "--", "claude"]);
        // As it is, the pane's foreground group holds the relay alone.
        let res = resolve_pane(&reg, &raw, &Default::default());
        assert_eq!(res.agent, None);
        let (procs, relay) = look_through_relay(raw.clone(), is_relay);
        assert!(relay);
        let res = resolve_pane(&reg, &procs, &Default::default());
        assert_eq!(
            res.agent.map(|m| (m.agent, m.pid)),
            Some(("claude".into(), 300))
        );
        // Global options before `run`.
        let (_, relay) =
            look_through_relay(pane(&["tend", "-L", "x", "run", "--", "claude"]), is_relay);
        assert!(relay);
    }

    #[test]
    fn other_programs_are_not_relays() {
        for argv in [
            &["tend", "list"][..],
            &["tend", "report", "--", "run"],
            &["tend", "run-session", "--", "claude"],
            &["/usr/bin/runner", "run"],
            &["python3", "tend", "run"],
        ] {
            let raw = pane(argv);
            let (procs, relay) = look_through_relay(raw.clone(), is_relay);
            assert!(!relay, "{argv:?}");
            assert_eq!(procs, raw);
        }
        // A relay in the background (the shell holds the terminal).
        let mut raw = pane(&["tend", "run", "--", "claude"]);
        for p in &mut raw {
            if p.tpgid == Some(200) {
                p.tpgid = Some(100);
            }
        }
        assert!(!look_through_relay(raw, is_relay).1);
    }

    #[test]
    fn live_only_a_registered_relay_is_a_relay() {
        // The daemon's rule: the pid a relay registered from, whatever
        // the process looks like.
        let registered = |pids: &'static [u32]| move |p: &ProcessInfo| pids.contains(&p.pid);
        let look_alike = pane(&["tend", "pilot", "--client", "run"]);
        assert!(!look_through_relay(look_alike.clone(), registered(&[])).1);
        assert!(!look_through_relay(look_alike, registered(&[250, 300])).1);
        let real = pane(&["/opt/x/tend", "run", "--", "claude"]);
        assert!(!look_through_relay(real.clone(), registered(&[])).1);
        assert!(look_through_relay(real, registered(&[200])).1);
    }
}
