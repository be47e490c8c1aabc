//! [`SysProcs`]: a pane's tree through the `sysinfo` crate.
//!
//! `sysinfo` has no "children of" query, so the tree comes from its list
//! of every process and their parents. That list costs a visit of every
//! process on the system (a `stat` read each on Linux, a few `proc_pidinfo`
//! and `sysctl` calls each on macOS), so it is taken at most every
//! [`LIST_FRESH`] and shared by the panes sampled meanwhile (the daemon
//! samples its panes one after another within a round). What a process of
//! the tree runs — argv, image, environment, working directory, CPU time —
//! is read afresh at each sample, from a list of its own: `sysinfo` keeps a
//! process's name from when it first saw it, and an `exec` keeps the pid
//! and start time.
//!
//! Differences from `/proc` (the Linux backend), each a `sysinfo` reading:
//! argv comes without empty or blank arguments, trimmed; an image deleted
//! on disk reads as no image; CPU time counts the process itself, not its
//! reaped children; the start time has one-second resolution.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use sysinfo::{
    Pid, Process, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System, UpdateKind,
};
use tend_detector::identity::{ProcessInfo, WalkLimits, ENV_HINT};

use super::job::job_control;
use crate::{script_target, ticks_per_sec, ProcReader};
use tend_core::source::{PaneSnapshot, Probe, SampleError, SampleStats};

/// How long the list of every process serves the samples that follow it.
/// The daemon samples the panes due in a round one after another, within
/// milliseconds; a process that started since is found by the pane's next
/// sample.
pub const LIST_FRESH: Duration = Duration::from_millis(100);

/// Reads pane process trees through `sysinfo` (see the module).
#[derive(Debug)]
pub struct SysProcs {
    limits: WalkLimits,
    /// Every process and its parent.
    list: System,
    /// When `list` was taken.
    listed: Option<Instant>,
    /// How long `list` serves (see [`LIST_FRESH`]).
    fresh: Duration,
    hz: f64,
    /// The boot time, seconds since the epoch (start times count from it,
    /// as `/proc` does).
    boot: u64,
}

impl Default for SysProcs {
    fn default() -> Self {
        Self::new()
    }
}

impl SysProcs {
    /// A source with default walk limits.
    pub fn new() -> Self {
        // On Linux sysinfo keeps each process's `stat` open, up to half the
        // descriptor limit: the daemon's pipes and sockets need them more.
        sysinfo::set_open_files_limit(0);
        SysProcs {
            limits: WalkLimits::default(),
            list: System::new(),
            listed: None,
            fresh: LIST_FRESH,
            hz: ticks_per_sec(),
            boot: System::boot_time(),
        }
    }

    /// Other walk limits.
    pub fn with_limits(mut self, limits: WalkLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The list of every process serves this long (tests take it at each
    /// sample: `Duration::ZERO`).
    pub fn with_list_fresh(mut self, fresh: Duration) -> Self {
        self.fresh = fresh;
        self
    }

    /// Takes the list of every process again unless it is fresh, or
    /// `force`.
    fn refresh_list(&mut self, force: bool) {
        let stale = self.listed.is_none_or(|t| t.elapsed() >= self.fresh);
        if force || stale {
            self.list.refresh_processes_specifics(
                ProcessesToUpdate::All,
                true,
                ProcessRefreshKind::nothing(),
            );
            self.listed = Some(Instant::now());
        }
    }

    /// Every process's children, ascending.
    fn children(&self) -> HashMap<u32, Vec<u32>> {
        let mut map: HashMap<u32, Vec<u32>> = HashMap::new();
        for (pid, p) in self.list.processes() {
            if let Some(parent) = p.parent() {
                map.entry(parent.as_u32()).or_default().push(pid.as_u32());
            }
        }
        for v in map.values_mut() {
            v.sort_unstable();
        }
        map
    }

    /// The walk below `shell_pid` over the list, as the Linux backend
    /// walks `/proc`: breadth-first, children ascending, within the
    /// limits. Each entry: (pid, its parent in the walk, depth).
    fn walk(&self, shell_pid: u32) -> (Vec<(u32, u32, u32)>, bool) {
        let children = self.children();
        let zombie = |pid: u32| {
            self.list
                .process(Pid::from_u32(pid))
                .is_some_and(|p| p.status() == ProcessStatus::Zombie)
        };
        let mut queue: Vec<(u32, u32, u32)> = vec![(shell_pid, 0, 0)];
        let mut seen = std::collections::HashSet::new();
        let mut truncated = false;
        let mut head = 0;
        while head < queue.len() {
            let (pid, _, depth) = queue[head];
            head += 1;
            if !seen.insert(pid) || zombie(pid) {
                continue; // a zombie has no children of its own to walk
            }
            for &child in children.get(&pid).into_iter().flatten() {
                if depth + 1 > self.limits.max_depth || queue.len() >= self.limits.max_procs {
                    truncated = true;
                    break;
                }
                queue.push((child, pid, depth + 1));
            }
        }
        (queue, truncated)
    }

    /// What `p` runs, as the detector sees a process.
    fn info(&self, pid: u32, p: &Process, depth: u32, reads: &mut u64) -> ProcessInfo {
        let job = job_control(pid);
        let lossy = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
        let mut info = ProcessInfo {
            pid,
            ppid: p.parent().map(Pid::as_u32).unwrap_or(0),
            pgid: job.map(|j| j.pgid),
            tpgid: job.and_then(|j| j.tpgid),
            state: state_letter(p.status()).to_owned(),
            exe: p.exe().map(|e| lossy(e.as_os_str())).unwrap_or_default(),
            comm: lossy(p.name()),
            argv: p.cmd().iter().map(|a| lossy(a)).collect(),
            env_agent: env_in(p, ENV_HINT)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty()),
            script_target: None,
            // Milliseconds of CPU, in the clock ticks the detector counts.
            cpu_ticks: (p.accumulated_cpu_time() as f64 * self.hz / 1000.0) as u64,
            start_ticks: Some((p.start_time().saturating_sub(self.boot) as f64 * self.hz) as u64),
            depth,
        };
        let cwd = || p.cwd().map(|c| lossy(c.as_os_str()));
        info.script_target = script_target(&info, reads, cwd);
        info
    }
}

/// The `/proc` state letter of a `sysinfo` status (`""` where none fits).
fn state_letter(s: ProcessStatus) -> &'static str {
    match s {
        ProcessStatus::Run => "R",
        ProcessStatus::Sleep => "S",
        ProcessStatus::Idle => "I",
        ProcessStatus::Stop => "T",
        ProcessStatus::Zombie => "Z",
        ProcessStatus::Tracing => "t",
        ProcessStatus::Dead => "X",
        ProcessStatus::UninterruptibleDiskSleep => "D",
        _ => "",
    }
}

/// `name`'s value in `p`'s environment as read.
fn env_in(p: &Process, name: &str) -> Option<String> {
    p.environ().iter().find_map(|kv| {
        let kv = kv.to_string_lossy();
        kv.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('='))
            .map(str::to_owned)
    })
}

/// What is read of each process of a tree at each sample.
fn detail() -> ProcessRefreshKind {
    ProcessRefreshKind::nothing()
        .with_cpu()
        .with_cmd(UpdateKind::Always)
        .with_exe(UpdateKind::Always)
        .with_environ(UpdateKind::Always)
        .with_cwd(UpdateKind::Always)
}

impl ProcReader for SysProcs {
    fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError> {
        let job = job_control(shell_pid).ok_or(SampleError::Gone(shell_pid))?;
        Ok(Probe {
            shell_pgid: job.pgid,
            tpgid: job.tpgid,
        })
    }

    fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError> {
        // A shell the list does not know yet (a new pane) is worth a fresh
        // list.
        self.refresh_list(false);
        if self.list.process(Pid::from_u32(shell_pid)).is_none() {
            self.refresh_list(true);
        }
        let (walked, truncated) = self.walk(shell_pid);
        let pids: Vec<Pid> = walked.iter().map(|(p, _, _)| Pid::from_u32(*p)).collect();
        let mut tree = System::new();
        tree.refresh_processes_specifics(ProcessesToUpdate::Some(&pids), true, detail());
        let mut reads = 0;
        let mut procs: Vec<ProcessInfo> = Vec::with_capacity(walked.len());
        let mut kept = std::collections::HashSet::new();
        for &(pid, parent, depth) in &walked {
            if kept.contains(&pid) {
                continue; // met twice: a pid reused within the list's life
            }
            let Some(p) = tree.process(Pid::from_u32(pid)) else {
                if depth == 0 {
                    return Err(SampleError::Gone(shell_pid));
                }
                continue; // ended since the list was taken
            };
            // Below the shell: still the child of the process it was found
            // under (not reparented since), and that one kept.
            let ppid = p.parent().map(Pid::as_u32).unwrap_or(0);
            if depth > 0 && (ppid != parent || !kept.contains(&parent)) {
                continue;
            }
            kept.insert(pid);
            procs.push(self.info(pid, p, depth, &mut reads));
        }
        Ok(PaneSnapshot {
            stats: SampleStats {
                files_read: reads,
                processes: procs.len(),
                cache_hits: 0,
            },
            procs,
            truncated,
        })
    }

    fn env_var(&mut self, pid: u32, name: &str) -> Option<String> {
        let mut one = System::new();
        let pid = Pid::from_u32(pid);
        one.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing().with_environ(UpdateKind::Always),
        );
        env_in(one.process(pid)?, name)
    }

    fn limits(&self) -> WalkLimits {
        self.limits
    }

    fn set_limits(&mut self, limits: WalkLimits) {
        self.limits = limits;
    }
}
