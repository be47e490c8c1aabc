//! What the core learns from outside through traits, not channels: the
//! processes below each pane's shell ([`ProcSource`]), the project a
//! working directory belongs to ([`ProjectSource`]) and the agents'
//! conversation stores ([`ConversationSource`]). The daemon passes its
//! implementations (the platform's from `tend-platform`); tests pass
//! [`NoProcesses`], [`NoProjects`] and [`NoConversations`], or sources of
//! their own.
//!
//! All are called inside [`crate::Core::handle`] and
//! [`crate::Core::handle_timeout`], synchronously: a probe is one `stat`
//! read, cheaper than a round trip through the event loop.

use std::fmt;
use std::io;

use tend_detector::identity::{ProcessInfo, WalkLimits};
use tend_detector::manifest::Resume;
use tend_detector::Manifest;

/// Why a pane could not be sampled.
#[derive(Debug)]
pub enum SampleError {
    /// The shell process is gone (the pane closed, or a stale pid).
    Gone(u32),
    /// The processes could not be read.
    Io(io::Error),
}

impl fmt::Display for SampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleError::Gone(pid) => write!(f, "process {pid} is gone"),
            SampleError::Io(e) => write!(f, "cannot read the processes: {e}"),
        }
    }
}

impl std::error::Error for SampleError {}

/// Counts of one sample, for the benchmark and `tend doctor`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleStats {
    /// Filesystem reads: file opens, directory listings, link reads and
    /// path resolutions.
    pub files_read: u64,
    /// Processes visited.
    pub processes: usize,
    /// Identity reads skipped thanks to the cache.
    pub cache_hits: usize,
}

/// A pane's foreground group, from one cheap read of its shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The shell's own process group.
    pub shell_pgid: u32,
    /// The terminal's foreground group (`None` without a terminal).
    pub tpgid: Option<u32>,
}

impl Probe {
    /// The shell holds its terminal.
    pub fn shell_foreground(&self) -> bool {
        self.tpgid == Some(self.shell_pgid)
    }
}

/// One pane's tree as read.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneSnapshot {
    /// The shell (depth 0) and the processes below it, breadth-first.
    pub procs: Vec<ProcessInfo>,
    /// The walk stopped at a limit.
    pub truncated: bool,
    /// What it cost.
    pub stats: SampleStats,
}

/// The processes below the panes' shells, and what the system tells of
/// them: the core's one view of the process table.
pub trait ProcSource: fmt::Debug + Send {
    /// The shell's group and its terminal's foreground group, as cheaply
    /// as the system allows (a pane that prints is probed five times a
    /// second).
    fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError>;
    /// The whole tree below `shell_pid`: the shell at depth 0 and its
    /// descendants within the walk limits, breadth-first.
    fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError>;
    /// The walk limits in force.
    fn limits(&self) -> WalkLimits;
    /// CPU clock ticks per second of the times the samples carry.
    fn ticks_per_sec(&self) -> f64;
    /// An agent's version from its package metadata, looked for beside
    /// each of `paths` (its program, script, executable).
    fn agent_version(&mut self, manifest: &Manifest, paths: &[&str]) -> Option<String>;
    /// The program the shell ran to start `pid`, where the system records
    /// it (the version lookup's last resort, for an agent that renames
    /// itself).
    fn launched_program(&mut self, pid: u32) -> Option<String>;
    /// `name` from process `pid`'s environment, where the system lets the
    /// daemon read it (the user's own processes); `None` otherwise.
    fn env_var(&mut self, pid: u32, name: &str) -> Option<String> {
        let _ = (pid, name);
        None
    }
    /// The daemon's round (once a second) ended: caches may shrink.
    fn end_round(&mut self) {}
    /// Report the end of process `pid` under `key` (one key per pane);
    /// false where the system cannot.
    fn watch_exit(&mut self, key: u64, pid: u32) -> bool {
        let _ = (key, pid);
        false
    }
    /// Stop reporting the end of what `key` watched.
    fn unwatch_exit(&mut self, key: u64) {
        let _ = key;
    }
    /// The keys whose process ended since the last call.
    fn take_ended(&mut self) -> Vec<u64> {
        Vec::new()
    }
}

/// A machine with no processes: every pane's shell is gone at once. For
/// tests that drive the core on screens and requests alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProcesses;

impl ProcSource for NoProcesses {
    fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError> {
        Err(SampleError::Gone(shell_pid))
    }

    fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError> {
        Err(SampleError::Gone(shell_pid))
    }

    fn limits(&self) -> WalkLimits {
        WalkLimits::default()
    }

    fn ticks_per_sec(&self) -> f64 {
        100.0
    }

    fn agent_version(&mut self, _: &Manifest, _: &[&str]) -> Option<String> {
        None
    }

    fn launched_program(&mut self, _: u32) -> Option<String> {
        None
    }
}

/// The project (git repository or worktree, and branch) of a working
/// directory, as shown: `tend · main`.
pub trait ProjectSource: fmt::Debug + Send {
    /// `None` outside a repository, or for an empty `dir`.
    fn project(&mut self, dir: &str) -> Option<String>;
}

/// No directory is in a project.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProjects;

impl ProjectSource for NoProjects {
    fn project(&mut self, _: &str) -> Option<String> {
        None
    }
}

/// What an agent's own files say about the conversation a running agent
/// holds ([`ConversationSource::live`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveFacts {
    /// Its store's folder: the manifest's `home`, read with the agent's
    /// own environment.
    pub home: Option<crate::resume::Home>,
    /// The program the shell ran to start it, as the shell wrote it
    /// (`$_` in its environment).
    pub program: Option<String>,
    /// The conversation and folder its session file names, the file tied
    /// to this very process.
    pub session_file: Option<(String, String)>,
    /// The newest conversation in its store for its folder, written since
    /// it started (looked for only when asked).
    pub newest: Option<String>,
}

/// The agents' own session stores, as the manifests' `[resume]` tables
/// say where they are: which conversation a running agent holds, and
/// whether a saved one is still there.
pub trait ConversationSource: fmt::Debug + Send {
    /// What the files of `agent` (a running agent process that `resume`
    /// describes, in `folder`) say; `newest`: may look for the newest
    /// conversation in the store for the folder.
    fn live(
        &mut self,
        resume: &Resume,
        agent: &ProcessInfo,
        folder: &str,
        newest: bool,
    ) -> LiveFacts;
    /// Whether conversation `id` is in the store under `home`, and the
    /// folder it belongs to (`folder` where the store can only confirm
    /// one: it names it by a hash).
    fn saved(
        &mut self,
        resume: &Resume,
        home: &crate::resume::Home,
        id: &str,
        folder: &str,
    ) -> crate::resume::plan::Saved;
}

/// No agent keeps anything: nothing is found and nothing is saved.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoConversations;

impl ConversationSource for NoConversations {
    fn live(&mut self, _: &Resume, _: &ProcessInfo, _: &str, _: bool) -> LiveFacts {
        LiveFacts::default()
    }

    fn saved(
        &mut self,
        _: &Resume,
        _: &crate::resume::Home,
        _: &str,
        _: &str,
    ) -> crate::resume::plan::Saved {
        crate::resume::plan::Saved::Missing
    }
}
