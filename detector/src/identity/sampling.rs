//! What the detector and the sampler need over time besides identity:
//! [`ProcessTracker`] (alive, CPU of the process tree, live tool children)
//! and [`SampleScheduler`] (when the sampler should look again).
//!
//! Separate because these drive the detector's process signals and the
//! sampler's timing, not the choice of agent.

use super::resolve::root_agent;
use super::*;

/// Turns successive snapshots into what the detector needs about one agent:
/// alive, CPU of its process tree, live tool children. Pure; used by replay
/// and the daemon.
#[derive(Debug)]
pub struct ProcessTracker {
    ticks_per_sec: f64,
    seen_alive: bool,
    /// (time, root pid, ticks) of the previous sample.
    last: Option<(Duration, u32, u64)>,
}

impl Default for ProcessTracker {
    fn default() -> Self {
        Self::with_ticks_per_sec(TICKS_PER_SEC)
    }
}

impl ProcessTracker {
    /// A tracker for a system whose CPU times count `hz` ticks per second.
    pub fn with_ticks_per_sec(hz: f64) -> Self {
        ProcessTracker {
            ticks_per_sec: if hz.is_finite() && hz > 0.0 {
                hz
            } else {
                TICKS_PER_SEC
            },
            seen_alive: false,
            last: None,
        }
    }

    /// Observes a snapshot for the agent `agent`; `None` until the agent
    /// has been seen alive once (so a pane still starting is not "exited").
    pub fn observe(
        &mut self,
        registry: &Registry,
        agent: &str,
        sample: &ProcSample,
    ) -> Option<ProcessObservation> {
        let is_agent = |p: &ProcessInfo| {
            !p.is_zombie() && match_process(registry, p).is_some_and(|m| m.agent == agent)
        };
        // A pane started as the agent (`exec claude`, or `env
        // TEND_AGENT=claude sh -c 'exec python3 …'`): the pane's own
        // process is the agent, as `resolve_pane` names it, and lives as long
        // as the agent does, through every `exec` of a shim or wrapper.
        // What runs below it inherited its environment: a shim's
        // short-lived child (a version lookup) carries the hint but is a
        // tool, and its end is not the agent's.
        let as_root = find_root(&sample.procs).filter(|p| {
            !p.is_zombie() && root_agent(registry, p).is_some_and(|m| m.agent == agent)
        });
        let found = as_root.or_else(|| {
            // The agent below the shell: the shallowest of its processes
            // (its job's leader; the rest are its own children).
            sample
                .procs
                .iter()
                .filter(|p| p.depth > 0 && is_agent(p))
                .min_by_key(|p| (p.depth, p.pid))
        });
        let Some(root) = found else {
            self.last = None;
            return if self.seen_alive {
                self.seen_alive = false;
                Some(ProcessObservation {
                    agent_alive: false,
                    exit_code: None,
                    cpu_percent: None,
                    live_child: None,
                })
            } else {
                None
            };
        };
        self.seen_alive = true;
        // The agent's subtree: its group and whatever it spawned, including
        // daemons in their own session (codex's app-server runs its tools).
        let mut children: HashMap<u32, Vec<&ProcessInfo>> = HashMap::new();
        for p in &sample.procs {
            children.entry(p.ppid).or_default().push(p);
        }
        let mut ticks = 0u64;
        let mut stack = vec![root];
        let mut seen = HashSet::new();
        let mut tools = 0usize;
        while let Some(p) = stack.pop() {
            if !seen.insert(p.pid) {
                continue;
            }
            ticks += p.cpu_ticks;
            for c in children.get(&p.pid).into_iter().flatten() {
                // The agent re-executed (gemini relaunches under node) or its
                // daemon is not a tool; a child that only inherited
                // `TEND_AGENT` is one.
                let itself = !c.is_zombie()
                    && match_process(registry, c)
                        .is_some_and(|m| m.agent == agent && m.via != "env");
                if !itself && !c.is_zombie() {
                    tools += 1;
                }
                stack.push(c);
            }
        }
        let cpu = match self.last {
            Some((t0, pid0, k0)) if pid0 == root.pid && sample.at > t0 && ticks >= k0 => {
                let secs = (sample.at - t0).as_secs_f64();
                Some(((ticks - k0) as f64 / self.ticks_per_sec / secs * 100.0) as f32)
            }
            _ => None,
        };
        self.last = Some((sample.at, root.pid, ticks));
        Some(ProcessObservation {
            agent_alive: true,
            exit_code: None,
            cpu_percent: cpu,
            live_child: Some(tools > 0),
        })
    }
}

// ---------------------------------------------------------------------------
// When to sample
// ---------------------------------------------------------------------------

/// Timing of [`SampleScheduler`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SamplePolicy {
    /// Shortest gap between two cheap foreground probes (one `stat` read)
    /// triggered by output.
    pub probe_gap: Duration,
    /// Shortest gap between two full samples triggered by output.
    pub output_gap: Duration,
    /// Delay of the confirming sample after a change (hysteresis needs two
    /// agreeing samples to commit).
    pub confirm: Duration,
    /// The back-off starts here…
    pub base: Duration,
    /// …and doubles up to here while nothing changes and nothing is output.
    pub max: Duration,
    /// While no agent is committed, output is followed by probes every
    /// `launch_probe_gap` for this long: a command typed at the shell
    /// echoes its Enter and then often prints nothing for a second or two
    /// while it starts (node, python), and the agent should be named
    /// before it draws its first screen.
    pub launch_window: Duration,
    /// The probe gap inside the launch window.
    pub launch_probe_gap: Duration,
    /// The shortest gap between two full samples triggered by output while
    /// the kernel reports the end of the pane's foreground job
    /// ([`SampleScheduler::watch_exit`]): the probes are then not needed,
    /// and output brings a sample only this often, plus one `output_gap`
    /// after it stops (what the CPU backstop reads when silence begins).
    pub watched_output_gap: Duration,
}

impl Default for SamplePolicy {
    fn default() -> Self {
        SamplePolicy {
            probe_gap: Duration::from_millis(200),
            output_gap: Duration::from_secs(1),
            confirm: Duration::from_millis(300),
            base: Duration::from_secs(1),
            max: Duration::from_secs(16),
            launch_window: Duration::from_secs(3),
            launch_probe_gap: Duration::from_millis(100),
            watched_output_gap: Duration::from_secs(5),
        }
    }
}

/// Decides when a pane is sampled: at once when its foreground
/// group changes, soon after new output, and otherwise with an interval
/// that backs off. Pure: the caller reports output, probes and samples
/// with their times and asks what is due.
#[derive(Debug, Clone)]
pub struct SampleScheduler {
    policy: SamplePolicy,
    interval: Duration,
    next_sample: Duration,
    last_probe: Option<Duration>,
    output_since_probe: bool,
    tpgid: Option<Option<u32>>,
    /// The latest output, for the launch window.
    last_output: Option<Duration>,
    /// No agent is committed: watch for one being launched.
    watching_launch: bool,
    /// The end of the foreground job is reported by the kernel
    /// ([`SampleScheduler::watch_exit`]).
    exit_watched: bool,
    /// The latest full sample.
    last_sample: Option<Duration>,
}

impl SampleScheduler {
    /// A scheduler whose first sample is due at `now`.
    pub fn new(policy: SamplePolicy, now: Duration) -> Self {
        SampleScheduler {
            policy,
            interval: policy.base,
            next_sample: now,
            last_probe: None,
            output_since_probe: false,
            tpgid: None,
            last_output: None,
            watching_launch: true,
            exit_watched: false,
            last_sample: None,
        }
    }

    /// Whether the end of the pane's foreground job is reported to the
    /// caller (a pidfd on its leader): then output no longer brings probes
    /// of the shell, which only look for that end, and brings full samples
    /// less often (`watched_output_gap`). The caller reports the end with
    /// [`SampleScheduler::exit_seen`].
    pub fn watch_exit(&mut self, on: bool) {
        self.exit_watched = on;
    }

    /// The foreground job's leader ended at `at`: a sample is due at once.
    pub fn exit_seen(&mut self, at: Duration) {
        self.exit_watched = false;
        self.interval = self.policy.base;
        self.next_sample = self.next_sample.min(at);
    }

    /// The foreground process group the last probe or sample read (`None`:
    /// unknown; `Some(None)`: none).
    pub fn tpgid(&self) -> Option<Option<u32>> {
        self.tpgid
    }

    /// With the exit watched, the sample one `output_gap` after output
    /// stopped, while none has been taken since it.
    fn after_output(&self) -> Option<Duration> {
        let o = self.last_output?;
        (self.exit_watched && self.last_sample.is_none_or(|s| s < o))
            .then_some(o + self.policy.output_gap)
    }

    /// Whether to watch closely for a launch after output (no agent is
    /// committed in the pane).
    pub fn watch_launch(&mut self, on: bool) {
        self.watching_launch = on;
    }

    /// The probe gap due at `at`, if the launch window applies.
    fn launch_gap(&self, at: Duration) -> Option<Duration> {
        let o = self.last_output?;
        (self.watching_launch && at <= o + self.policy.launch_window)
            .then_some(self.policy.launch_probe_gap)
    }

    /// The pane printed something at `at`.
    pub fn on_output(&mut self, at: Duration) {
        self.output_since_probe = true;
        self.last_output = Some(at);
        self.interval = self.policy.base;
        let gap = if self.exit_watched {
            self.policy.watched_output_gap
        } else {
            self.policy.output_gap
        };
        self.next_sample = self.next_sample.min(at + gap);
    }

    /// Whether a cheap foreground probe (the shell's `tpgid`) is due.
    pub fn probe_due(&self, at: Duration) -> bool {
        if self.exit_watched {
            // What a probe looks for, the job's end, is reported.
            return false;
        }
        match self.last_probe {
            None => true,
            Some(t) => {
                (self.output_since_probe && at >= t + self.policy.probe_gap)
                    || self.launch_gap(at).is_some_and(|g| at >= t + g)
                    || at >= t + self.interval
            }
        }
    }

    /// Something outside the pane's output says its foreground process
    /// changed (the multiplexer's listing names another command): a full
    /// sample is due at once.
    pub fn foreground_hint(&mut self, at: Duration) {
        self.next_sample = self.next_sample.min(at);
    }

    /// A probe at `at` read foreground group `tpgid`; returns whether it
    /// changed (a full sample is then due at once).
    pub fn probed(&mut self, at: Duration, tpgid: Option<u32>) -> bool {
        self.last_probe = Some(at);
        self.output_since_probe = false;
        let changed = self.tpgid.is_some_and(|old| old != tpgid);
        self.tpgid = Some(tpgid);
        if changed {
            self.next_sample = at;
            self.interval = self.policy.base;
        }
        changed
    }

    /// Whether a full sample is due.
    pub fn sample_due(&self, at: Duration) -> bool {
        at >= self.next_sample || self.after_output().is_some_and(|t| at >= t)
    }

    /// A full sample was taken at `at`; `changed` says its resolution
    /// differed from the previous one (then a confirming sample follows
    /// soon; otherwise the interval backs off).
    pub fn sampled(&mut self, at: Duration, tpgid: Option<u32>, changed: bool) {
        self.tpgid = Some(tpgid);
        self.last_probe = Some(at);
        self.last_sample = Some(at);
        self.output_since_probe = false;
        if changed {
            self.interval = self.policy.base;
            self.next_sample = at + self.policy.confirm;
        } else if self.exit_watched
            && self
                .last_output
                .is_some_and(|o| at < o + self.policy.output_gap)
        {
            // Printing, its end reported by the kernel: the next sample
            // when it stops, or `watched_output_gap` on.
            self.interval = self.policy.base;
            self.next_sample = at + self.policy.watched_output_gap;
        } else {
            self.next_sample = at + self.interval;
            self.interval = (self.interval * 2).min(self.policy.max);
        }
    }

    /// When the next probe or sample is due, whichever is first (for the
    /// caller's timer).
    pub fn next_wakeup(&self) -> Duration {
        let probe = if self.exit_watched {
            // No probes: the job's end is reported.
            Duration::MAX
        } else {
            self.last_probe.map_or(Duration::ZERO, |t| {
                // Without output a pane's foreground seldom changes (a
                // program starting or ending prints, and that brings the
                // probe forward): the idle probe backs off with the
                // samples, to `max`.
                let mut gap = if self.output_since_probe {
                    self.policy.probe_gap
                } else {
                    self.interval
                };
                if let Some(g) = self.launch_gap(t + self.policy.launch_probe_gap) {
                    gap = gap.min(g);
                }
                t + gap
            })
        };
        let sample = match self.after_output() {
            Some(t) => self.next_sample.min(t),
            None => self.next_sample,
        };
        probe.min(sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::testutil::*;

    fn sample(at: u64, procs: Vec<ProcessInfo>) -> ProcSample {
        let mut procs = procs;
        // Depth from the parent chain (the shell is pid 100).
        let parents: HashMap<u32, u32> = procs.iter().map(|p| (p.pid, p.ppid)).collect();
        for p in &mut procs {
            let mut d = 0;
            let mut cur = p.pid;
            while cur != 100 {
                match parents.get(&cur) {
                    Some(pp) => {
                        cur = *pp;
                        d += 1;
                    }
                    None => break,
                }
            }
            p.depth = d;
        }
        ProcSample { at: s(at), procs }
    }

    #[test]
    fn process_tracker_cpu_and_children() {
        let reg = reg();
        let mut t = ProcessTracker::default();
        let shell = proc(100, 50, 100, &["bash"]);
        let before = sample(1, vec![shell.clone()]);
        assert_eq!(t.observe(&reg, "claude", &before), None, "not started yet");
        let mut c = claude_proc(200, 100, 200);
        c.cpu_ticks = 100;
        assert_eq!(
            t.observe(&reg, "claude", &sample(2, vec![shell.clone(), c.clone()])),
            Some(ProcessObservation {
                agent_alive: true,
                exit_code: None,
                cpu_percent: None,
                live_child: Some(false)
            })
        );
        c.cpu_ticks = 150;
        let mut tool = proc(300, 200, 300, &["bash", "-c", "make"]);
        tool.cpu_ticks = 50;
        let obs = t
            .observe(
                &reg,
                "claude",
                &sample(3, vec![shell.clone(), c.clone(), tool.clone()]),
            )
            .expect("obs");
        assert_eq!(obs.cpu_percent, Some(100.0));
        assert_eq!(obs.live_child, Some(true));
        // A zombie tool is not live.
        tool.state = "Z".into();
        let obs = t
            .observe(
                &reg,
                "claude",
                &sample(4, vec![shell.clone(), c.clone(), tool]),
            )
            .expect("obs");
        assert_eq!(obs.live_child, Some(false));
        // A new agent process: no CPU delta across pids.
        let mut c2 = claude_proc(201, 100, 201);
        c2.cpu_ticks = 500;
        let obs = t
            .observe(&reg, "claude", &sample(5, vec![shell.clone(), c2]))
            .expect("obs");
        assert_eq!(obs.cpu_percent, None);
        // Gone.
        let obs = t
            .observe(&reg, "claude", &sample(6, vec![shell]))
            .expect("obs");
        assert!(!obs.agent_alive);
    }

    /// `env TEND_AGENT=claude sh -c 'exec python3 agent.py'` as the pane's
    /// command, with `python3` a shim (pyenv, asdf, mise): the pane's own
    /// process runs the shim, whose version lookup inherits the hint, and
    /// then, the same process, the interpreter. The lookup's end is not the
    /// agent's; the pane's process ending is.
    #[test]
    fn a_pane_started_as_the_agent_outlives_its_shims_child() {
        let reg = reg();
        let mut t = ProcessTracker::default();
        let hinted = |mut p: ProcessInfo| {
            p.env_agent = Some("claude".into());
            p
        };
        let shim = hinted(proc(
            100,
            50,
            100,
            &["/bin/sh", "/shims/python3", "agent.py"],
        ));
        let lookup = hinted(proc(101, 100, 100, &["/bin/sleep", "0.2"]));
        let alive = |live_child| ProcessObservation {
            agent_alive: true,
            exit_code: None,
            cpu_percent: None,
            live_child: Some(live_child),
        };
        assert_eq!(
            t.observe(&reg, "claude", &sample(1, vec![shim, lookup])),
            Some(alive(true))
        );
        let real = hinted(proc(100, 50, 100, &["/usr/bin/python3", "agent.py"]));
        let obs = t.observe(&reg, "claude", &sample(2, vec![real.clone()]));
        assert_eq!(
            obs.map(|o| (o.agent_alive, o.live_child)),
            Some((true, Some(false)))
        );
        let obs = t.observe(&reg, "claude", &sample(3, vec![real]));
        assert_eq!(obs.map(|o| o.agent_alive), Some(true));
        let obs = t.observe(&reg, "claude", &sample(4, vec![]));
        assert_eq!(obs.map(|o| o.agent_alive), Some(false));
    }

    /// An interactive shell that inherited the hint is still a shell: the
    /// agent is its job, whose end is the agent's.
    #[test]
    fn a_hinted_interactive_shell_is_not_the_agent() {
        let reg = reg();
        let mut t = ProcessTracker::default();
        let mut shell = proc(100, 50, 100, &["-bash"]);
        shell.env_agent = Some("claude".into());
        let mut job = proc(200, 100, 200, &["/bin/sh", "/shims/python3", "agent.py"]);
        job.env_agent = Some("claude".into());
        let mut lookup = proc(201, 200, 200, &["/bin/sleep", "0.2"]);
        lookup.env_agent = Some("claude".into());
        let obs = t.observe(
            &reg,
            "claude",
            &sample(1, vec![shell.clone(), job.clone(), lookup]),
        );
        assert_eq!(obs.map(|o| o.agent_alive), Some(true));
        let obs = t.observe(&reg, "claude", &sample(2, vec![shell.clone(), job]));
        assert_eq!(obs.map(|o| o.agent_alive), Some(true));
        let obs = t.observe(&reg, "claude", &sample(3, vec![shell]));
        assert_eq!(obs.map(|o| o.agent_alive), Some(false));
    }

    #[test]
    fn inherited_hint_children_are_tools() {
        let reg = reg();
        let mut t = ProcessTracker::default();
        let mut agent = proc(200, 100, 200, &["sleep", "1000"]);
        agent.env_agent = Some("claude".into());
        let mut child = proc(201, 200, 200, &["sleep", "5"]);
        child.env_agent = Some("claude".into());
        let obs = t
            .observe(
                &reg,
                "claude",
                &sample(1, vec![proc(100, 50, 100, &["bash"]), agent, child]),
            )
            .expect("obs");
        assert_eq!(obs.live_child, Some(true));
    }

    // --- scheduling ------------------------------------------------------

    #[test]
    fn scheduler_backs_off_and_wakes_on_output_and_changes() {
        let pol = SamplePolicy::default();
        let mut sch = SampleScheduler::new(pol, s(0));
        assert!(sch.sample_due(s(0)));
        sch.sampled(s(0), Some(100), false);
        // Back-off: 1, 2, 4, 8, 16, 16 s.
        let mut at = s(0);
        let mut gaps = Vec::new();
        for _ in 0..6 {
            let next = sch.next_wakeup().max(at);
            // Probes at the base interval do not change anything.
            let mut t = at;
            while !sch.sample_due(t) {
                if sch.probe_due(t) {
                    assert!(!sch.probed(t, Some(100)));
                }
                t += Duration::from_millis(100);
            }
            assert!(next <= t);
            gaps.push((t - at).as_secs());
            sch.sampled(t, Some(100), false);
            at = t;
        }
        assert_eq!(gaps, vec![1, 2, 4, 8, 16, 16]);
        // Output: a sample within output_gap, back-off reset.
        sch.on_output(at + s(1));
        assert!(sch.sample_due(at + s(2)));
        sch.sampled(at + s(2), Some(100), false);
        assert!(!sch.sample_due(at + s(2) + Duration::from_millis(900)));
        assert!(sch.sample_due(at + s(3)));
        // A probe that sees a new foreground group: a sample at once, and
        // a confirming one soon after it.
        let t = at + s(3);
        sch.sampled(t, Some(100), false);
        sch.on_output(t + Duration::from_millis(50));
        let probe_at = t + Duration::from_millis(250);
        assert!(sch.probe_due(probe_at));
        assert!(sch.probed(probe_at, Some(555)));
        assert!(sch.sample_due(probe_at));
        sch.sampled(probe_at, Some(555), true);
        assert!(!sch.sample_due(probe_at + Duration::from_millis(200)));
        assert!(sch.sample_due(probe_at + pol.confirm));
    }

    #[test]
    fn an_idle_pane_is_probed_with_the_back_off_and_a_hint_samples_at_once() {
        let pol = SamplePolicy::default();
        let mut sch = SampleScheduler::new(pol, s(0));
        sch.sampled(s(0), Some(100), false);
        sch.sampled(s(1), Some(100), false);
        sch.sampled(s(3), Some(100), false);
        sch.sampled(s(7), Some(100), false);
        sch.sampled(s(15), Some(100), false);
        // Back-off at 16 s: no probe every second in between, one wake-up
        // for the next sample.
        let probes = (16..31).filter(|t| sch.probe_due(s(*t))).count();
        assert_eq!(probes, 0);
        assert_eq!(sch.next_wakeup(), s(31));
        // The listing names another foreground command: sample now, and
        // the back-off starts again.
        sch.foreground_hint(s(20));
        assert!(sch.sample_due(s(20)));
        assert_eq!(sch.next_wakeup(), s(20));
        sch.sampled(s(20), Some(200), true);
        sch.sampled(s(20) + pol.confirm, Some(200), false);
        assert_eq!(sch.next_wakeup(), s(20) + pol.confirm + pol.base);
        // Output still brings a probe within probe_gap.
        sch.on_output(s(22));
        assert!(sch.probe_due(s(22) + pol.probe_gap));
    }

    #[test]
    fn a_watched_exit_replaces_the_probes_of_a_printing_pane() {
        let ms = Duration::from_millis;
        let pol = SamplePolicy::default();
        let mut sch = SampleScheduler::new(pol, s(0));
        sch.sampled(s(0), Some(555), false);
        sch.watch_launch(false);
        sch.watch_exit(true);
        assert_eq!(sch.tpgid(), Some(Some(555)));
        // Printing every 50 ms for 12 s: no probe, a sample every
        // `watched_output_gap`.
        let mut probes = 0;
        let mut samples = Vec::new();
        let mut t = s(0);
        while t < s(12) {
            t += ms(50);
            sch.on_output(t);
            if sch.probe_due(t) {
                probes += 1;
                sch.probed(t, Some(555));
            }
            if sch.sample_due(t) {
                samples.push(t);
                sch.sampled(t, Some(555), false);
            }
        }
        assert_eq!(probes, 0);
        assert_eq!(samples.len(), 3, "{samples:?}");
        for pair in samples.windows(2) {
            assert!(pair[1] - pair[0] >= pol.watched_output_gap, "{samples:?}");
        }
        // Silence: a sample one output_gap after the last output (the CPU
        // backstop reads a fresh figure when the settle window ends).
        let last = t;
        assert_eq!(
            sch.next_wakeup().min(last + pol.output_gap),
            last + pol.output_gap
        );
        assert!(!sch.sample_due(last + pol.output_gap - ms(1)));
        assert!(sch.sample_due(last + pol.output_gap));
        sch.sampled(last + pol.output_gap, Some(555), false);
        assert!(!sch.sample_due(last + pol.output_gap + ms(500)));
        // The job's end, reported: a sample at once, and probes on output
        // again until the caller watches the next job.
        let end = last + s(3);
        sch.exit_seen(end);
        assert!(sch.sample_due(end));
        sch.sampled(end, Some(100), true);
        sch.on_output(end + ms(10));
        assert!(sch.probe_due(end + ms(10) + pol.probe_gap));
    }

    #[test]
    fn a_launch_is_watched_closely_after_output_with_no_agent() {
        let ms = Duration::from_millis;
        let pol = SamplePolicy::default();
        let mut sch = SampleScheduler::new(pol, s(0));
        sch.sampled(s(0), Some(100), false);
        sch.sampled(s(10), Some(100), false);
        // The Enter of `claude` is echoed; a probe right after it still
        // sees the shell (the agent is not exec'd yet).
        sch.on_output(s(10) + ms(300));
        assert!(sch.probe_due(s(10) + ms(300)));
        sch.probed(s(10) + ms(300), Some(100));
        // Silence while it starts: probes every 100 ms for 3 s.
        assert_eq!(sch.next_wakeup(), s(10) + ms(400));
        assert!(sch.probe_due(s(10) + ms(400)));
        assert!(sch.probed(s(10) + ms(400), Some(555)));
        assert!(sch.sample_due(s(10) + ms(400)));
        // With an agent committed the window does not apply.
        sch.sampled(s(10) + ms(400), Some(555), false);
        sch.watch_launch(false);
        sch.on_output(s(11));
        sch.probed(s(11), Some(555));
        assert!(!sch.probe_due(s(11) + ms(100)));
        // Past the window, back to the base interval.
        sch.watch_launch(true);
        sch.probed(s(15), Some(555));
        assert!(!sch.probe_due(s(15) + ms(100)));
        assert!(sch.probe_due(s(16)));
    }
}
