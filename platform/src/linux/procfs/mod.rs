//! The Linux process source: reads the process tree below each pane's
//! shell from `/proc`.
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
//! The files: this one holds [`ProcFs`] and its small reads; `stat.rs`
//! parsing `/proc/<pid>/stat`; `fds.rs` the `/proc` files kept open for
//! re-reading; `tree.rs` the walk below a shell (probe and sample);
//! `process.rs` what one process runs, cached.

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use tend_detector::identity::WalkLimits;

use crate::ProcReader;
use crate::CACHE_MAX;
use tend_core::source::{PaneSnapshot, Probe, SampleError, SampleStats};

mod fds;
mod kept;
mod process;
pub(crate) mod stat;
mod tree;

#[cfg(test)]
pub(crate) mod tests;

use fds::{FdCache, Which};
use kept::{ChildrenMode, Identity};
use stat::{parse_stat, Stat};

/// Cache entries unused for this many sweeps are dropped.
const CACHE_KEEP_SWEEPS: u64 = 4;
/// Largest `environ` read (bigger ones are cut: the hint is usually near
/// the start, and a pathological environment must not cost much).
const ENVIRON_MAX: usize = 256 * 1024;
/// Largest `cmdline` read.
const CMDLINE_MAX: usize = 64 * 1024;

/// Reads pane process trees from `/proc` (or another root, for tests).
#[derive(Debug)]
pub struct ProcFs {
    root: PathBuf,
    limits: WalkLimits,
    mode: ChildrenMode,
    cache: HashMap<u32, Identity>,
    generation: u64,
    files_read: u64,
    use_cache: bool,
    buf: Vec<u8>,
    /// `stat`, `task` and `children` files kept open for re-reading.
    fds: FdCache,
}

impl Default for ProcFs {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcFs {
    /// A source over `/proc` with default walk limits.
    pub fn new() -> Self {
        Self::with_root("/proc")
    }

    /// A source over another procfs-shaped tree (tests). Files are kept
    /// open only under the real `/proc`: a kept copy of a fake tree's file
    /// would not notice its process being removed.
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let cap = if root == Path::new("/proc") {
            fds::default_cap()
        } else {
            0
        };
        ProcFs {
            root,
            limits: WalkLimits::default(),
            mode: ChildrenMode::Unknown,
            cache: HashMap::new(),
            generation: 0,
            files_read: 0,
            use_cache: true,
            buf: Vec::with_capacity(4096),
            fds: FdCache::new(cap),
        }
    }

    /// Whether this reads the real `/proc` (its pids are this machine's
    /// processes).
    pub fn is_real(&self) -> bool {
        self.root == Path::new("/proc")
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

    /// Reads served by a kept file since the source was made.
    pub fn reused_reads(&self) -> u64 {
        self.fds.reused()
    }

    /// Ends a round of the daemon (once a second): closes the `/proc`
    /// files of processes not read for a while. The identity cache is
    /// left alone (see [`ProcFs::sweep`]).
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

    /// Filesystem reads since the source was made.
    pub fn files_read(&self) -> u64 {
        self.files_read
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

impl ProcReader for ProcFs {
    fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError> {
        ProcFs::probe(self, shell_pid)
    }

    fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError> {
        ProcFs::sample(self, shell_pid)
    }

    fn env_var(&mut self, pid: u32, name: &str) -> Option<String> {
        ProcFs::env_var(self, pid, name)
    }

    fn limits(&self) -> WalkLimits {
        self.limits
    }

    fn set_limits(&mut self, limits: WalkLimits) {
        self.limits = limits;
    }

    fn end_round(&mut self) {
        ProcFs::end_round(self);
    }

    fn sweep(&mut self) {
        ProcFs::sweep(self);
    }

    fn files_read(&self) -> u64 {
        self.files_read
    }
}

fn gone_or_io(pid: u32, e: io::Error) -> SampleError {
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::InvalidData => SampleError::Gone(pid),
        _ if e.raw_os_error() == Some(3) => SampleError::Gone(pid), // ESRCH
        _ => SampleError::Io(e),
    }
}
