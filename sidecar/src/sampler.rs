//! The procfs sampler: reads the process tree below each pane's shell and
//! hands it to the pure identity logic in `tend_detector::identity`.
//!
//! Only the panes' own trees are read, never a full `/proc` scan per tick:
//! from the shell's `stat` (its `tpgid` is the terminal's foreground group)
//! the walk follows `/proc/<pid>/task/<tid>/children`, bounded in depth and
//! count. A scan of `/proc` happens only on kernels without those
//! `children` files (`CONFIG_PROC_CHILDREN` off). What a process runs (its
//! image, argv, `TEND_AGENT`, resolved script path) is cached per process
//! and start time, so a steady pane costs one `stat` and the `children`
//! files per process.
//!
//! [`PaneWatch`] ties it together for one pane: when to probe and sample
//! ([`SampleScheduler`]), hysteresis ([`IdentityTracker`]) and what the
//! detector needs ([`ProcessTracker`]).

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tend_detector::engine::ProcessObservation;
use tend_detector::identity::{
    self, IdentityChange, IdentityEvidence, IdentityTracker, ProcSample, ProcessInfo,
    ProcessTracker, Resolution, SamplePolicy, SampleScheduler, Source, WalkLimits, ENV_HINT,
};
use tend_detector::manifest::Manifest;
use tend_detector::version::{self, MetadataSource};
use tend_detector::Registry;

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

/// The fields of `/proc/<pid>/stat` the sampler uses.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stat {
    comm: String,
    state: char,
    ppid: u32,
    pgrp: u32,
    /// `-1` (no terminal) becomes `None`.
    tpgid: Option<u32>,
    /// utime + stime + cutime + cstime: a reaped child's time moves into its
    /// parent's `cutime`, so a tree's total stays monotonic.
    ticks: u64,
    start: u64,
}

/// Parses `/proc/<pid>/stat`. `comm` sits in parentheses and may contain
/// spaces and parentheses itself, so the fields after it are found from the
/// last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_owned();
    let f: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    let tpgid = f.get(5).and_then(|v| v.parse::<i64>().ok())?;
    Some(Stat {
        comm,
        state: f.first()?.chars().next()?,
        ppid: u32::try_from(num(1)?).ok()?,
        pgrp: u32::try_from(num(2)?).ok()?,
        tpgid: u32::try_from(tpgid).ok().filter(|t| *t > 0),
        ticks: num(11)? + num(12)? + num(13).unwrap_or(0) + num(14).unwrap_or(0),
        start: num(19)?,
    })
}

/// What a process runs: read once per (pid, start time, comm).
#[derive(Debug, Clone)]
struct Identity {
    start: u64,
    comm: String,
    exe: String,
    argv: Vec<String>,
    env_agent: Option<String>,
    script_target: Option<String>,
    /// The sweep generation that last used it.
    used: u64,
}

/// How children are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChildrenMode {
    /// Not known yet (decided on the first walk).
    Unknown,
    /// `/proc/<pid>/task/<tid>/children` exists.
    Files,
    /// It does not: scan `/proc/*/stat` (once per sample).
    Scan,
}

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

    /// A sampler over another procfs-shaped tree (tests).
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        Sampler {
            root: root.into(),
            limits: WalkLimits::default(),
            mode: ChildrenMode::Unknown,
            cache: HashMap::new(),
            generation: 0,
            files_read: 0,
            use_cache: true,
            buf: Vec::with_capacity(4096),
            versions: HashMap::new(),
        }
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

    /// CPU clock ticks per second of this system (for [`ProcessTracker`]).
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

    fn read_stat(&mut self, pid: u32) -> io::Result<Stat> {
        let path = self.path(pid, "stat");
        self.read_into_buf(&path, 4096)?;
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

    /// The version of `manifest`'s agent whose program is at one of
    /// `paths` (a resolved executable or script), from the package
    /// metadata installed beside it; nothing is run. Cached per path.
    pub fn agent_version(&mut self, manifest: &Manifest, paths: &[&str]) -> Option<String> {
        for path in paths {
            if path.is_empty() {
                continue;
            }
            let key = (manifest.id.clone(), (*path).to_owned());
            if let Some(known) = self.versions.get(&key) {
                if known.is_some() {
                    return known.clone();
                }
                continue;
            }
            let found = self.read_version(manifest, path);
            if self.versions.len() >= CACHE_MAX {
                self.versions.clear();
            }
            self.versions.insert(key, found.clone());
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn read_version(&mut self, manifest: &Manifest, path: &str) -> Option<String> {
        let packages = &manifest.identity.packages;
        for source in version::metadata_sources(path, packages) {
            let found = match source {
                MetadataSource::PackageJson(file) => self
                    .read_text(Path::new(&file))
                    .and_then(|t| version::package_json_version(&t)),
                MetadataSource::SitePackages(dir) => self.dist_version(&dir, packages),
                MetadataSource::PythonLib(lib) => {
                    let entries = self.list_dir(Path::new(&lib));
                    version::site_packages_of(&lib, &entries)
                        .into_iter()
                        .rev()
                        .find_map(|dir| self.dist_version(&dir, packages))
                }
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn dist_version(&mut self, site_packages: &str, packages: &[String]) -> Option<String> {
        let entries = self.list_dir(Path::new(site_packages));
        let (dir, named) = version::dist_info_dir(&entries, packages)?;
        let metadata = Path::new(site_packages).join(dir).join("METADATA");
        // The directory name is written by the installer from the same
        // header; the header wins when it can be read.
        Some(
            self.read_text(&metadata)
                .and_then(|t| version::metadata_version(&t))
                .unwrap_or(named),
        )
    }

    /// A small text file, at most [`METADATA_MAX`] bytes.
    fn read_text(&mut self, path: &Path) -> Option<String> {
        self.read_into_buf(path, METADATA_MAX).ok()?;
        Some(String::from_utf8_lossy(&self.buf).into_owned())
    }

    /// A directory's entry names, at most [`LIST_MAX`] of them.
    fn list_dir(&mut self, dir: &Path) -> Vec<String> {
        self.files_read += 1;
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        rd.take(LIST_MAX)
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// One probe: the shell's `stat` (one read).
    pub fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError> {
        let st = self
            .read_stat(shell_pid)
            .map_err(|e| gone_or_io(shell_pid, e))?;
        Ok(Probe {
            shell_pgid: st.pgrp,
            tpgid: st.tpgid,
        })
    }

    /// Children of `pid`: every thread's `children` file (a child forked by
    /// a worker thread is listed under that thread only).
    fn children_from_files(&mut self, pid: u32) -> Option<Vec<u32>> {
        let task_dir = self.path(pid, "task");
        self.files_read += 1;
        let tasks = match std::fs::read_dir(&task_dir) {
            Ok(t) => t,
            Err(_) => return Some(Vec::new()), // vanished
        };
        let tids: Vec<String> = tasks
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let mut out = Vec::new();
        let mut any = false;
        for tid in tids {
            let path = task_dir.join(&tid).join("children");
            match self.read_into_buf(&path, 64 * 1024) {
                Ok(()) => {
                    any = true;
                    let text = String::from_utf8_lossy(&self.buf);
                    out.extend(
                        text.split_whitespace()
                            .filter_map(|v| v.parse::<u32>().ok()),
                    );
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(_) => any = true, // a thread that just ended
            }
        }
        if !any && self.mode == ChildrenMode::Unknown {
            return None; // no children files on this kernel
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// The fallback: `ppid` → children from every `/proc/*/stat`.
    fn scan_children(&mut self) -> HashMap<u32, Vec<u32>> {
        let mut map: HashMap<u32, Vec<u32>> = HashMap::new();
        self.files_read += 1;
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return map;
        };
        let pids: Vec<u32> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
            .collect();
        for pid in pids {
            if let Ok(st) = self.read_stat(pid) {
                map.entry(st.ppid).or_default().push(pid);
            }
        }
        for v in map.values_mut() {
            v.sort_unstable();
        }
        map
    }

    /// What `pid` runs, from the cache when it is the same process image.
    fn identity(&mut self, pid: u32, st: &Stat, stats: &mut SampleStats) -> Identity {
        if self.use_cache {
            if let Some(e) = self.cache.get_mut(&pid) {
                // Same start time: the same process; same comm: no exec
                // since (an exec renames comm to the new program).
                if e.start == st.start && e.comm == st.comm {
                    e.used = self.generation;
                    stats.cache_hits += 1;
                    return e.clone();
                }
            }
        }
        let exe = self.read_link(&self.path(pid, "exe")).unwrap_or_default();
        let argv = self.read_cmdline(pid);
        let env_agent = self.read_env_hint(pid);
        let mut id = Identity {
            start: st.start,
            comm: st.comm.clone(),
            exe,
            argv,
            env_agent,
            script_target: None,
            used: self.generation,
        };
        id.script_target = self.resolve_script(pid, &id, &st.comm);
        if self.use_cache {
            if self.cache.len() >= CACHE_MAX {
                self.sweep();
            }
            self.cache.insert(pid, id.clone());
        }
        id
    }

    fn read_cmdline(&mut self, pid: u32) -> Vec<String> {
        let path = self.path(pid, "cmdline");
        if self.read_into_buf(&path, CMDLINE_MAX).is_err() {
            return Vec::new();
        }
        let buf = self.buf.strip_suffix(b"\0").unwrap_or(&self.buf);
        if buf.is_empty() {
            return Vec::new();
        }
        buf.split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    }

    /// `TEND_AGENT` from the process environment (readable for the user's
    /// own processes only; others simply have no hint).
    fn read_env_hint(&mut self, pid: u32) -> Option<String> {
        let path = self.path(pid, "environ");
        self.read_into_buf(&path, ENVIRON_MAX).ok()?;
        let prefix = format!("{ENV_HINT}=");
        self.buf
            .split(|b| *b == 0)
            .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
            .map(|v| String::from_utf8_lossy(v).trim().to_owned())
            .filter(|v| !v.is_empty())
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
        let path = self.path(pid, "environ");
        self.read_into_buf(&path, ENVIRON_MAX).ok()?;
        let value = self
            .buf
            .split(|b| *b == 0)
            .find_map(|kv| kv.strip_prefix(b"_="))
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .filter(|v| v.starts_with('/'))?;
        self.files_read += 1;
        let target = std::fs::canonicalize(&value).ok()?;
        Some(target.to_string_lossy().into_owned())
    }

    /// Resolves the unwrapped script's symlinks (`…/.bin/gemini` →
    /// `…/@google/gemini-cli/bundle/gemini.js`). A relative path is taken
    /// from the process's working directory; a bare word in a command
    /// string is a `PATH` lookup, not a file here, and is left alone.
    fn resolve_script(&mut self, pid: u32, id: &Identity, comm: &str) -> Option<String> {
        let probe = ProcessInfo {
            pid,
            exe: id.exe.clone(),
            comm: comm.to_owned(),
            argv: id.argv.clone(),
            ..ProcessInfo::default()
        };
        let script = identity::script_path(&probe)?;
        let path = Path::new(&script.value);
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else if script.source != Source::Command || script.value.contains('/') {
            let cwd = self.read_link(&self.path(pid, "cwd"))?;
            Path::new(&cwd).join(path)
        } else {
            return None;
        };
        self.files_read += 1;
        let target = std::fs::canonicalize(&full).ok()?;
        let target = target.to_string_lossy().into_owned();
        (target != script.value).then_some(target)
    }

    /// Reads one pane's tree: the shell `shell_pid` at depth 0 and its
    /// descendants within the walk limits, breadth-first.
    pub fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError> {
        let before = self.files_read;
        let mut stats = SampleStats::default();
        let shell = self
            .read_stat(shell_pid)
            .map_err(|e| gone_or_io(shell_pid, e))?;
        let mut scan: Option<HashMap<u32, Vec<u32>>> = None;
        if self.mode == ChildrenMode::Scan {
            scan = Some(self.scan_children());
        }
        let mut procs: Vec<ProcessInfo> = Vec::new();
        let mut queue: Vec<(u32, u32, Stat)> = vec![(shell_pid, 0, shell)];
        let mut truncated = false;
        let mut seen = std::collections::HashSet::new();
        let mut head = 0;
        while head < queue.len() {
            let (pid, depth, st) = queue[head].clone();
            head += 1;
            if !seen.insert(pid) {
                continue;
            }
            let id = self.identity(pid, &st, &mut stats);
            procs.push(ProcessInfo {
                pid,
                ppid: st.ppid,
                pgid: Some(st.pgrp),
                tpgid: st.tpgid,
                state: st.state.to_string(),
                exe: id.exe,
                comm: st.comm.clone(),
                argv: id.argv,
                env_agent: id.env_agent,
                script_target: id.script_target,
                cpu_ticks: st.ticks,
                start_ticks: Some(st.start),
                depth,
            });
            if st.state == 'Z' {
                continue; // a zombie has no children of its own to walk
            }
            let children = match &scan {
                Some(map) => map.get(&pid).cloned().unwrap_or_default(),
                None => match self.children_from_files(pid) {
                    Some(c) => {
                        self.mode = ChildrenMode::Files;
                        c
                    }
                    None => {
                        self.mode = ChildrenMode::Scan;
                        let map = self.scan_children();
                        let c = map.get(&pid).cloned().unwrap_or_default();
                        scan = Some(map);
                        c
                    }
                },
            };
            for child in children {
                if depth + 1 > self.limits.max_depth || queue.len() >= self.limits.max_procs {
                    truncated = true;
                    break;
                }
                // A child that ended between the two reads is skipped; so is
                // one whose parent changed (reparented mid-walk).
                match self.read_stat(child) {
                    Ok(cst) if cst.ppid == pid => queue.push((child, depth + 1, cst)),
                    _ => {}
                }
            }
        }
        stats.processes = procs.len();
        stats.files_read = self.files_read - before;
        Ok(PaneSnapshot {
            procs,
            truncated,
            stats,
        })
    }
}

fn gone_or_io(pid: u32, e: io::Error) -> SampleError {
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::InvalidData => SampleError::Gone(pid),
        _ if e.raw_os_error() == Some(3) => SampleError::Gone(pid), // ESRCH
        _ => SampleError::Io(e),
    }
}

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
    /// `procs.jsonl`).
    pub procs: Option<Vec<ProcessInfo>>,
    /// Cost of the sample.
    pub stats: SampleStats,
}

/// Everything the daemon keeps about one pane's processes: scheduling,
/// identity hysteresis and the detector's process view.
#[derive(Debug)]
pub struct PaneWatch {
    shell_pid: u32,
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
}

impl PaneWatch {
    /// Watches the pane whose shell is `shell_pid`, first sample due `now`.
    pub fn new(shell_pid: u32, now: Duration, policy: SamplePolicy) -> Self {
        let hz = Sampler::ticks_per_sec();
        PaneWatch {
            shell_pid,
            sched: SampleScheduler::new(policy, now),
            identity: IdentityTracker::new(),
            procs: ProcessTracker::with_ticks_per_sec(hz),
            followed: None,
            last_key: None,
            hz,
            version: None,
            version_of: None,
        }
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

    /// Evidence for `tend explain`.
    pub fn evidence(&self) -> IdentityEvidence {
        self.identity.evidence()
    }

    /// The pane printed something.
    pub fn on_output(&mut self, at: Duration) {
        self.sched.on_output(at);
    }

    /// When [`PaneWatch::poll`] has something to do next.
    pub fn next_wakeup(&self) -> Duration {
        self.sched.next_wakeup()
    }

    /// Probes and samples as the schedule says. `prompt_visible`: the
    /// screen shows the shell's prompt.
    pub fn poll(
        &mut self,
        sampler: &mut Sampler,
        registry: &Registry,
        at: Duration,
        prompt_visible: bool,
    ) -> WatchUpdate {
        let mut up = WatchUpdate::default();
        if !self.sched.sample_due(at) && self.sched.probe_due(at) {
            up.probed = true;
            match sampler.probe(self.shell_pid) {
                Ok(p) => {
                    self.sched.probed(at, p.tpgid);
                }
                Err(_) => {
                    up.gone = true;
                    return up;
                }
            }
        }
        if self.sched.sample_due(at) {
            return self.sample_now(sampler, registry, at, prompt_visible);
        }
        up
    }

    /// Samples now, whatever the schedule.
    pub fn sample_now(
        &mut self,
        sampler: &mut Sampler,
        registry: &Registry,
        at: Duration,
        prompt_visible: bool,
    ) -> WatchUpdate {
        let mut up = WatchUpdate {
            sampled: true,
            ..WatchUpdate::default()
        };
        let snap = match sampler.sample(self.shell_pid) {
            Ok(s) => s,
            Err(_) => {
                up.gone = true;
                return up;
            }
        };
        up.stats = snap.stats;
        let res = identity::resolve_pane(registry, &snap.procs, &sampler.limits());
        let tpgid = snap.procs.first().and_then(|p| p.tpgid);
        // Tools coming and going in the foreground group do not count as a
        // change; another agent or another group does.
        let group = match res.foreground {
            identity::Foreground::Group { pgid, .. } => Some(pgid),
            _ => None,
        };
        let key = (res.agent.as_ref().map(|m| m.agent.clone()), group);
        let changed = self.last_key.as_ref().is_some_and(|k| *k != key);
        self.last_key = Some(key);
        up.change = self.identity.observe(at, &res, prompt_visible);
        self.sched.watch_launch(self.identity.agent().is_none());
        // A pending identity also wants its confirming sample soon.
        let pending = self.identity.evidence().pending.is_some();
        self.sched
            .sampled(at, tpgid, changed || up.change.is_some() || pending);
        if let Some(agent) = self.identity.agent() {
            if self.followed.as_deref() != Some(agent) {
                self.followed = Some(agent.to_owned());
                self.procs = ProcessTracker::with_ticks_per_sec(self.hz);
            }
        }
        self.update_version(sampler, registry, &res, &snap.procs);
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
        sampler: &mut Sampler,
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
        self.version = sampler.agent_version(manifest, &paths);
        if self.version.is_none() {
            if let Some(launched) = sampler.launched_program(m.pid) {
                self.version = sampler.agent_version(manifest, &[launched.as_str()]);
            }
        }
        self.version_of = Some(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_parsing() {
        let line = "4242 (my (weird) prog) S 1 4242 4242 34816 4300 4194560 1 2 3 4 \
                    150 50 7 3 20 0 1 0 987654 1000 100 18446744073709551615";
        let st = parse_stat(line).expect("stat");
        assert_eq!(st.comm, "my (weird) prog");
        assert_eq!(
            (st.state, st.ppid, st.pgrp, st.tpgid),
            ('S', 1, 4242, Some(4300))
        );
        assert_eq!(st.ticks, 210);
        assert_eq!(st.start, 987654);
        let no_tty = line.replace(" 34816 4300 ", " 0 -1 ");
        assert_eq!(parse_stat(&no_tty).expect("stat").tpgid, None);
        assert!(parse_stat("garbage").is_none());
        assert!(parse_stat("1 (x) S").is_none());
    }

    /// One fake process: `(pid, ppid, pgrp, comm, argv, exe)`.
    type FakeProc<'a> = (u32, u32, u32, &'a str, &'a [&'a str], &'a str);

    /// A fake procfs.
    fn fake_proc(root: &Path, procs: &[FakeProc<'_>], children_files: bool) {
        for (pid, ppid, pgrp, comm, argv, exe) in procs {
            let dir = root.join(pid.to_string());
            std::fs::create_dir_all(dir.join("task").join(pid.to_string())).expect("mkdir");
            std::fs::write(
                dir.join("stat"),
                format!("{pid} ({comm}) S {ppid} {pgrp} {pgrp} 34816 200 0 0 0 0 0 10 5 0 0 20 0 1 0 {pid}00 0 0"),
            )
            .expect("stat");
            let mut cmdline = argv.join("\0");
            cmdline.push('\0');
            std::fs::write(dir.join("cmdline"), cmdline).expect("cmdline");
            std::fs::write(dir.join("environ"), "A=1\0TEND_AGENT=\0").expect("environ");
            std::os::unix::fs::symlink(exe, dir.join("exe")).expect("exe");
            if children_files {
                let kids: Vec<String> = procs
                    .iter()
                    .filter(|p| p.1 == *pid)
                    .map(|p| p.0.to_string())
                    .collect();
                std::fs::write(
                    dir.join("task").join(pid.to_string()).join("children"),
                    kids.join(" "),
                )
                .expect("children");
            }
        }
    }

    const TREE: &[FakeProc<'static>] = &[
        (100, 1, 100, "bash", &["-bash"], "/usr/bin/bash"),
        (
            200,
            100,
            200,
            "node",
            &["node", "/x/node_modules/.bin/codex"],
            "/usr/bin/node",
        ),
        (
            201,
            200,
            200,
            "codex",
            &["/x/vendor/codex"],
            "/x/vendor/codex",
        ),
        (300, 1, 300, "other", &["other"], "/usr/bin/other"),
    ];

    #[test]
    fn walks_children_files_and_caches() {
        let dir = tempfile::tempdir().expect("tmp");
        fake_proc(dir.path(), TREE, true);
        let mut s = Sampler::with_root(dir.path());
        let snap = s.sample(100).expect("sample");
        let pids: Vec<u32> = snap.procs.iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![100, 200, 201]);
        assert_eq!(
            snap.procs[1].argv,
            vec!["node", "/x/node_modules/.bin/codex"]
        );
        assert_eq!(snap.procs[1].tpgid, Some(200));
        assert_eq!(snap.procs[1].depth, 1);
        assert_eq!(snap.procs[2].depth, 2);
        assert_eq!(snap.procs[1].env_agent, None); // empty hint ignored
        assert_eq!(snap.procs[0].cpu_ticks, 15);
        let reg = Registry::bundled();
        let r = identity::resolve_pane(&reg, &snap.procs, &s.limits());
        assert_eq!(
            r.agent.map(|m| (m.agent, m.pid)),
            Some(("codex".into(), 200))
        );
        // Warm: identity fields come from the cache.
        let warm = s.sample(100).expect("sample");
        assert_eq!(warm.stats.cache_hits, 3);
        assert!(
            warm.stats.files_read < snap.stats.files_read,
            "{warm:?} vs {snap:?}"
        );
        assert_eq!(warm.procs, snap.procs);
        // The probe is one read.
        let before = s.files_read();
        let p = s.probe(100).expect("probe");
        assert_eq!(s.files_read() - before, 1);
        assert_eq!(
            p,
            Probe {
                shell_pgid: 100,
                tpgid: Some(200)
            }
        );
        assert!(!p.shell_foreground());
        assert!(matches!(s.sample(999), Err(SampleError::Gone(999))));
    }

    #[test]
    fn scans_without_children_files() {
        let dir = tempfile::tempdir().expect("tmp");
        fake_proc(dir.path(), TREE, false);
        let mut s = Sampler::with_root(dir.path());
        let snap = s.sample(100).expect("sample");
        let pids: Vec<u32> = snap.procs.iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![100, 200, 201]);
        assert_eq!(s.mode, ChildrenMode::Scan);
    }

    #[test]
    fn walk_limits_hold() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut tree: Vec<FakeProc<'_>> = vec![(100, 1, 100, "bash", &["bash"], "/usr/bin/bash")];
        for i in 0..30 {
            tree.push((1000 + i, 100, 1000, "make", &["make"], "/usr/bin/make"));
        }
        fake_proc(dir.path(), &tree, true);
        let mut s = Sampler::with_root(dir.path()).with_limits(WalkLimits {
            max_depth: 4,
            max_procs: 10,
        });
        let snap = s.sample(100).expect("sample");
        assert_eq!(snap.procs.len(), 10);
        assert!(snap.truncated);
    }

    #[test]
    fn cache_sweeps_forget_old_processes() {
        let dir = tempfile::tempdir().expect("tmp");
        fake_proc(dir.path(), TREE, true);
        let mut s = Sampler::with_root(dir.path());
        s.sample(100).expect("sample");
        assert_eq!(s.cache.len(), 3);
        for _ in 0..=CACHE_KEEP_SWEEPS {
            s.sweep();
        }
        assert!(s.cache.is_empty());
    }

    #[test]
    fn agent_versions_from_package_metadata() {
        let dir = std::env::temp_dir().join(format!("tend-versions-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let nm = dir.join("node_modules");
        let write = |rel: &str, text: &str| {
            let f = dir.join(rel);
            std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
            std::fs::write(f, text).expect("write");
        };
        write(
            "node_modules/@openai/codex/package.json",
            r#"{"name": "@openai/codex", "version": "0.172.0"}"#,
        );
        write("node_modules/@openai/codex-linux-x64/vendor/bin/codex", "");
        write(
            "venv/lib/python3.11/site-packages/aider_chat-0.86.2.dist-info/METADATA",
            "Metadata-Version: 2.4\nName: aider-chat\nVersion: 0.86.2\n\nbody\n",
        );
        write("venv/bin/aider", "");
        let reg = Registry::bundled();
        let mut s = Sampler::new();
        let exe = nm.join("@openai/codex-linux-x64/vendor/bin/codex");
        let exe = exe.to_string_lossy();
        let codex = reg.get("codex").expect("codex");
        assert_eq!(s.agent_version(codex, &[&exe]).as_deref(), Some("0.172.0"));
        // Cached: the second look reads nothing.
        let before = s.files_read();
        assert_eq!(s.agent_version(codex, &[&exe]).as_deref(), Some("0.172.0"));
        assert_eq!(s.files_read(), before);
        let aider = reg.get("aider").expect("aider");
        let script = dir.join("venv/bin/aider");
        assert_eq!(
            s.agent_version(aider, &["/usr/bin/python3.11", &script.to_string_lossy()])
                .as_deref(),
            Some("0.86.2")
        );
        // Not an agent's package: nothing.
        let claude = reg.get("claude").expect("claude");
        assert_eq!(s.agent_version(claude, &[&exe]), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_renamed_agent_is_found_by_the_program_the_shell_ran() {
        // Pi: argv `pi`, image node; only `_` (set by bash) names the
        // `.bin/pi` link into the package.
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("proc");
        fake_proc(&root, &[(40, 1, 40, "pi", &["pi"], "/usr/bin/node")], true);
        let pkg = dir
            .path()
            .join("node_modules/@mariozechner/pi-coding-agent");
        std::fs::create_dir_all(pkg.join("dist")).expect("mkdir");
        std::fs::write(pkg.join("dist/cli.js"), "").expect("cli");
        std::fs::write(
            pkg.join("package.json"),
            r#"{"name": "@mariozechner/pi-coding-agent", "version": "0.73.1"}"#,
        )
        .expect("package.json");
        let bin = dir.path().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        std::os::unix::fs::symlink(
            "../@mariozechner/pi-coding-agent/dist/cli.js",
            bin.join("pi"),
        )
        .expect("link");
        std::fs::write(
            root.join("40/environ"),
            format!("A=1\0_={}\0", bin.join("pi").display()),
        )
        .expect("environ");
        let reg = Registry::bundled();
        let pi = reg.get("pi").expect("pi");
        let mut s = Sampler::with_root(&root);
        assert_eq!(s.agent_version(pi, &["pi", "/usr/bin/node"]), None);
        let launched = s.launched_program(40).expect("the program the shell ran");
        assert!(
            launched.ends_with("/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"),
            "{launched}"
        );
        assert_eq!(s.agent_version(pi, &[&launched]).as_deref(), Some("0.73.1"));
        // Another agent's package is not read from it.
        let claude = reg.get("claude").expect("claude");
        assert_eq!(s.agent_version(claude, &[&launched]), None);
        // No `_`, or a relative one: nothing.
        std::fs::write(root.join("40/environ"), "A=1\0_=pi\0").expect("environ");
        assert_eq!(s.launched_program(40), None);
    }
}
