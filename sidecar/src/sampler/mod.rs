//! The procfs sampler: reads the process tree below each pane's shell and
//! hands it to the pure identity logic in `tend_detector::identity`.
//!
//! Only the panes' own trees are read, never a full `/proc` scan per tick:
//! from the shell's `stat` (its `tpgid` is the terminal's foreground group)
//! the walk follows `/proc/<pid>/task/<tid>/children`, bounded in depth and
//! count. A scan of `/proc` happens only on kernels without those
//! `children` files (`CONFIG_PROC_CHILDREN` off). What a process runs (its
//! image, argv, `TEND_AGENT`, resolved script path) is cached per process
//! image (pid, start time, and the image's addresses from `stat`: an
//! `exec` through a shim keeps the first two), so a steady pane costs one
//! `stat` and the `children` files per process.
//!
//! [`PaneWatch`] ties it together for one pane: when to probe and sample
//! ([`SampleScheduler`]), hysteresis ([`IdentityTracker`]) and what the
//! detector needs ([`ProcessTracker`]).
//!
//! [`SampleScheduler`]: tend_detector::identity::SampleScheduler
//! [`IdentityTracker`]: tend_detector::identity::IdentityTracker
//! [`ProcessTracker`]: tend_detector::identity::ProcessTracker
//!
//! The files: this one holds the [`Sampler`], its results and its small
//! reads; `stat.rs` parsing `/proc/<pid>/stat`; `tree.rs` the walk below a
//! shell (probe and sample); `process.rs` what one process runs, cached;
//! `agent_version.rs` an agent's version from its package metadata;
//! `exits.rs` the kernel reporting a foreground job's end ([`ExitWatch`]);
//! `watch.rs` [`PaneWatch`].

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use tend_detector::identity::{ProcessInfo, WalkLimits};

mod agent_version;
mod exits;
mod fds;
mod process;
mod stat;
mod tree;
mod watch;

#[cfg(test)]
mod tests;

use fds::{FdCache, Which};
use process::Identity;
use stat::{parse_stat, Stat};
use tree::ChildrenMode;

pub use exits::ExitWatch;
pub use watch::{Identified, PaneWatch, ScreenSource, WatchUpdate};

/// Why a pane could not be sampled.
#[derive(Debug)]
pub enum SampleError {
    /// The shell process is gone (the pane closed, or a stale pid).
    Gone(u32),
    /// `/proc` could not be read.
    Io(io::Error),
}

impl fmt::Display for SampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleError::Gone(pid) => write!(f, "process {pid} is gone"),
            SampleError::Io(e) => write!(f, "cannot read /proc: {e}"),
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

/// A pane's foreground group, from one `stat` read of its shell.
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

/// Cache entries unused for this many sweeps are dropped.
const CACHE_KEEP_SWEEPS: u64 = 4;
/// Above this many entries a sweep happens on its own.
const CACHE_MAX: usize = 4096;
/// Largest `environ` read (bigger ones are cut: the hint is usually near
/// the start, and a pathological environment must not cost much).
const ENVIRON_MAX: usize = 256 * 1024;
/// Largest package metadata file read (`package.json`, `METADATA`).
const METADATA_MAX: usize = 64 * 1024;
/// Most directory entries read when looking for a Python distribution.
const LIST_MAX: usize = 4096;
/// Largest `cmdline` read.
const CMDLINE_MAX: usize = 64 * 1024;

/// Reads pane process trees from `/proc` (or another root, for tests).
#[derive(Debug)]
pub struct Sampler {
    root: PathBuf,
    limits: WalkLimits,
    mode: ChildrenMode,
    cache: HashMap<u32, Identity>,
    generation: u64,
    files_read: u64,
    use_cache: bool,
    buf: Vec<u8>,
    /// Agent versions by (agent, program path): package metadata changes
    /// only with an upgrade, which starts a new process.
    versions: HashMap<(String, String), Option<String>>,
    /// `stat`, `task` and `children` files kept open for re-reading.
    fds: FdCache,
    /// Pidfds of the panes' foreground jobs (real `/proc` only).
    pub exits: ExitWatch,
}

impl Default for Sampler {
    fn default() -> Self {
        Self::new()
    }
}

impl Sampler {
    /// A sampler over `/proc` with default walk limits.
    pub fn new() -> Self {
        Self::with_root("/proc")
    }

    /// A sampler over another procfs-shaped tree (tests). Files are kept
    /// open only under the real `/proc`: a kept copy of a fake tree's file
    /// would not notice its process being removed.
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let real = root == Path::new("/proc");
        let cap = if real { fds::default_cap() } else { 0 };
        Sampler {
            root,
            limits: WalkLimits::default(),
            mode: ChildrenMode::Unknown,
            cache: HashMap::new(),
            generation: 0,
            files_read: 0,
            use_cache: true,
            buf: Vec::with_capacity(4096),
            versions: HashMap::new(),
            fds: FdCache::new(cap),
            // A pid in a fake tree is no process of this machine.
            exits: if real {
                ExitWatch::new()
            } else {
                ExitWatch::disabled()
            },
        }
    }

    /// At most `cap` `/proc` files kept open (0: every read opens its
    /// file).
    pub fn with_fd_cap(mut self, cap: usize) -> Self {
        self.fds = FdCache::new(cap);
        self
    }

    /// `/proc` files kept open now.
    pub fn open_files(&self) -> usize {
        self.fds.open()
    }

    /// Reads served by a kept file since the sampler was made.
    pub fn reused_reads(&self) -> u64 {
        self.fds.reused()
    }

    /// Ends a round of the daemon (once a second): closes the `/proc`
    /// files of processes not read for a while. The identity cache is
    /// left alone (see [`Sampler::sweep`]).
    pub fn end_round(&mut self) {
        self.fds.end_round();
    }

    /// Other walk limits.
    pub fn with_limits(mut self, limits: WalkLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Turns the identity cache off (every sample reads everything; for
    /// measuring the cold cost).
    pub fn without_cache(mut self) -> Self {
        self.use_cache = false;
        self
    }

    /// The walk limits in force.
    pub fn limits(&self) -> WalkLimits {
        self.limits
    }

    /// Filesystem reads since the sampler was made.
    pub fn files_read(&self) -> u64 {
        self.files_read
    }

    /// CPU clock ticks per second of this system (for
    /// [`ProcessTracker`](tend_detector::identity::ProcessTracker)).
    pub fn ticks_per_sec() -> f64 {
        procfs::ticks_per_second() as f64
    }

    /// Ends a round over all panes: forgets cached processes not seen for a
    /// few rounds (their pids may be reused).
    pub fn sweep(&mut self) {
        self.generation += 1;
        let keep_after = self.generation.saturating_sub(CACHE_KEEP_SWEEPS);
        self.cache.retain(|_, e| e.used >= keep_after);
    }

    fn path(&self, pid: u32, rest: &str) -> PathBuf {
        let mut p = self.root.join(pid.to_string());
        if !rest.is_empty() {
            p.push(rest);
        }
        p
    }

    /// Reads a small file into the scratch buffer, at most `max` bytes.
    fn read_into_buf(&mut self, path: &Path, max: usize) -> io::Result<()> {
        self.files_read += 1;
        self.buf.clear();
        let f = std::fs::File::open(path)?;
        f.take(max as u64).read_to_end(&mut self.buf)?;
        Ok(())
    }

    /// `pid`'s `stat`; with `keep`, through a file kept open for the next
    /// read.
    fn read_stat(&mut self, pid: u32, keep: bool) -> io::Result<Stat> {
        let path = self.path(pid, "stat");
        self.files_read += 1;
        if let Err(e) = self
            .fds
            .read(pid, Which::Stat, &path, keep, &mut self.buf, 4096)
        {
            // The process is gone: so are its threads' files.
            self.fds.forget(pid);
            return Err(e);
        }
        let text = String::from_utf8_lossy(&self.buf);
        parse_stat(&text).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad stat"))
    }

    fn read_link(&mut self, path: &Path) -> Option<String> {
        self.files_read += 1;
        let target = std::fs::read_link(path).ok()?;
        let s = target.to_string_lossy();
        // An image replaced on disk (an upgrade while it runs) still names
        // the program.
        Some(s.strip_suffix(" (deleted)").unwrap_or(&s).to_owned())
    }
}

fn gone_or_io(pid: u32, e: io::Error) -> SampleError {
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::InvalidData => SampleError::Gone(pid),
        _ if e.raw_os_error() == Some(3) => SampleError::Gone(pid), // ESRCH
        _ => SampleError::Io(e),
    }
}
