//! The sampler: reads the process tree below each pane's shell and hands
//! it to the pure identity logic in `tend_detector::identity`.
//!
//! How the tree is read is the platform's business
//! ([`crate::ProcReader`]): `/proc` on Linux, `sysinfo` elsewhere
//! (`docs/decisions/0009-platform-backends.md`). The [`Sampler`] holds the
//! backend's source and exit watch, and what is the same everywhere: the
//! walk limits and an agent's version from its package metadata.
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
//! reads; `agent_version.rs` an agent's version from its package metadata;
//! `watch.rs` [`PaneWatch`].

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::Path;

use tend_detector::identity::WalkLimits;

mod agent_version;

#[cfg(test)]
mod tests;

#[cfg(target_os = "linux")]
use crate::linux::ProcFs;
use crate::portable::SysProcs;
use crate::{backend, Backend, ProcReader, CACHE_MAX};

pub use crate::ExitWatch;
pub use tend_core::watch::{Identified, PaneWatch, ScreenSource, WatchUpdate};

pub use tend_core::source::{PaneSnapshot, Probe, SampleError, SampleStats};

/// Largest package metadata file read (`package.json`, `METADATA`).
const METADATA_MAX: usize = 64 * 1024;
/// Most directory entries read when looking for a Python distribution.
const LIST_MAX: usize = 4096;

/// The backend's process source. The Linux one is the larger (its caches
/// inline); a daemon has one sampler, made once and never moved about.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
enum Source {
    #[cfg(target_os = "linux")]
    ProcFs(ProcFs),
    Portable(SysProcs),
}

/// Reads pane process trees through the platform's source, and agents'
/// versions from their package metadata.
#[derive(Debug)]
pub struct Sampler {
    source: Source,
    /// Filesystem reads of the version lookup.
    files_read: u64,
    buf: Vec<u8>,
    /// Agent versions by (agent, program path): package metadata changes
    /// only with an upgrade, which starts a new process.
    versions: HashMap<(String, String), Option<String>>,
    /// The ends of the panes' foreground jobs, as the backend watches them
    /// (none over a fake `/proc`).
    pub exits: ExitWatch,
}

impl Default for Sampler {
    fn default() -> Self {
        Self::new()
    }
}

impl Sampler {
    /// A sampler of the backend in use ([`crate::backend`]) with
    /// default walk limits.
    pub fn new() -> Self {
        match backend() {
            #[cfg(target_os = "linux")]
            Backend::Linux => Self::with_root("/proc"),
            _ => Self::portable(),
        }
    }

    /// A sampler through `sysinfo` (the portable backend), whatever the
    /// backend in use.
    pub fn portable() -> Self {
        Self::over(Source::Portable(SysProcs::new()), ExitWatch::liveness())
    }

    /// A sampler over a procfs-shaped tree (the Linux backend; another
    /// root for tests). Files are kept open only under the real `/proc`: a
    /// kept copy of a fake tree's file would not notice its process being
    /// removed.
    #[cfg(target_os = "linux")]
    pub fn with_root(root: impl Into<std::path::PathBuf>) -> Self {
        let procfs = ProcFs::with_root(root);
        // A pid in a fake tree is no process of this machine.
        let exits = if procfs.is_real() {
            ExitWatch::pidfd()
        } else {
            ExitWatch::disabled()
        };
        Self::over(Source::ProcFs(procfs), exits)
    }

    fn over(source: Source, exits: ExitWatch) -> Self {
        Sampler {
            source,
            files_read: 0,
            buf: Vec::with_capacity(4096),
            versions: HashMap::new(),
            exits,
        }
    }

    fn source(&self) -> &dyn ProcReader {
        match &self.source {
            #[cfg(target_os = "linux")]
            Source::ProcFs(s) => s,
            Source::Portable(s) => s,
        }
    }

    fn source_mut(&mut self) -> &mut dyn ProcReader {
        match &mut self.source {
            #[cfg(target_os = "linux")]
            Source::ProcFs(s) => s,
            Source::Portable(s) => s,
        }
    }

    /// The sampler with its Linux source, if that is the one in use,
    /// replaced by `f`'s.
    #[cfg(target_os = "linux")]
    fn map_procfs(mut self, f: impl FnOnce(ProcFs) -> ProcFs) -> Self {
        if let Source::ProcFs(p) = &mut self.source {
            let taken = std::mem::take(p);
            *p = f(taken);
        }
        self
    }

    /// The name of the backend whose source this reads through.
    pub fn backend(&self) -> Backend {
        match &self.source {
            #[cfg(target_os = "linux")]
            Source::ProcFs(_) => Backend::Linux,
            Source::Portable(_) => Backend::Portable,
        }
    }

    /// At most `cap` `/proc` files kept open (0: every read opens its
    /// file). The Linux source only; others keep none.
    pub fn with_fd_cap(self, cap: usize) -> Self {
        #[cfg(target_os = "linux")]
        return self.map_procfs(|p| p.with_fd_cap(cap));
        #[cfg(not(target_os = "linux"))]
        {
            let _ = cap;
            self
        }
    }

    /// `/proc` files kept open now (0 for other sources).
    pub fn open_files(&self) -> usize {
        match &self.source {
            #[cfg(target_os = "linux")]
            Source::ProcFs(s) => s.open_files(),
            Source::Portable(_) => 0,
        }
    }

    /// Reads served by a kept `/proc` file since the sampler was made (0
    /// for other sources).
    pub fn reused_reads(&self) -> u64 {
        match &self.source {
            #[cfg(target_os = "linux")]
            Source::ProcFs(s) => s.reused_reads(),
            Source::Portable(_) => 0,
        }
    }

    /// Ends a round of the daemon (once a second): the Linux source closes
    /// the `/proc` files of processes not read for a while.
    pub fn end_round(&mut self) {
        self.source_mut().end_round();
    }

    /// Other walk limits.
    pub fn with_limits(mut self, limits: WalkLimits) -> Self {
        self.source_mut().set_limits(limits);
        self
    }

    /// Turns the Linux source's identity cache off (every sample reads
    /// everything; for measuring the cold cost). Other sources cache
    /// nothing.
    pub fn without_cache(self) -> Self {
        #[cfg(target_os = "linux")]
        return self.map_procfs(ProcFs::without_cache);
        #[cfg(not(target_os = "linux"))]
        self
    }

    /// The walk limits in force.
    pub fn limits(&self) -> WalkLimits {
        self.source().limits()
    }

    /// Filesystem reads since the sampler was made (those its source
    /// counts, and the version lookups').
    pub fn files_read(&self) -> u64 {
        self.source().files_read() + self.files_read
    }

    /// CPU clock ticks per second of this system (for
    /// [`ProcessTracker`](tend_detector::identity::ProcessTracker)).
    pub fn ticks_per_sec() -> f64 {
        crate::ticks_per_sec()
    }

    /// Ends a round over all panes: forgets cached processes not seen for a
    /// few rounds (their pids may be reused).
    pub fn sweep(&mut self) {
        self.source_mut().sweep();
    }

    /// One probe of a pane's foreground group (one `stat` read on Linux).
    pub fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError> {
        self.source_mut().probe(shell_pid)
    }

    /// Reads one pane's tree: the shell `shell_pid` at depth 0 and its
    /// descendants within the walk limits, breadth-first.
    pub fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError> {
        self.source_mut().sample(shell_pid)
    }

    /// The program the shell ran to start `pid`: `_` in its environment
    /// (bash sets it to the command's full path), symlinks resolved; `None`
    /// when it is not an absolute path that exists. The version lookup's
    /// last resort, for an agent that renames itself: Pi sets its process
    /// title to `pi` at start, after which argv is just `pi` and the image is
    /// `node`, so nothing else names its package. Only metadata of the
    /// agent's own package is read from it (see `version::metadata_sources`),
    /// so a `_` inherited from elsewhere finds nothing.
    pub fn launched_program(&mut self, pid: u32) -> Option<String> {
        let value = self
            .source_mut()
            .env_var(pid, "_")
            .filter(|v| v.starts_with('/'))?;
        self.files_read += 1;
        let target = std::fs::canonicalize(&value).ok()?;
        Some(target.to_string_lossy().into_owned())
    }

    /// Reads a small file into the scratch buffer, at most `max` bytes.
    fn read_into_buf(&mut self, path: &Path, max: usize) -> io::Result<()> {
        self.files_read += 1;
        self.buf.clear();
        let f = std::fs::File::open(path)?;
        f.take(max as u64).read_to_end(&mut self.buf)?;
        Ok(())
    }
}

/// The core's view of the process table: this sampler's source, its
/// version lookups and its exit watch.
impl tend_core::ProcSource for Sampler {
    fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError> {
        Sampler::probe(self, shell_pid)
    }

    fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError> {
        Sampler::sample(self, shell_pid)
    }

    fn limits(&self) -> WalkLimits {
        Sampler::limits(self)
    }

    fn ticks_per_sec(&self) -> f64 {
        Sampler::ticks_per_sec()
    }

    fn agent_version(
        &mut self,
        manifest: &tend_detector::Manifest,
        paths: &[&str],
    ) -> Option<String> {
        Sampler::agent_version(self, manifest, paths)
    }

    fn launched_program(&mut self, pid: u32) -> Option<String> {
        Sampler::launched_program(self, pid)
    }

    fn env_var(&mut self, pid: u32, name: &str) -> Option<String> {
        self.files_read += 1;
        self.source_mut().env_var(pid, name)
    }

    fn end_round(&mut self) {
        Sampler::end_round(self)
    }

    fn watch_exit(&mut self, key: u64, pid: u32) -> bool {
        self.exits.watch(key, pid)
    }

    fn unwatch_exit(&mut self, key: u64) {
        self.exits.unwatch(key)
    }

    fn take_ended(&mut self) -> Vec<u64> {
        self.exits.take_ended()
    }
}
