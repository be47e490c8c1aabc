//! tend's platform layer: what tend asks of the operating system, which
//! Linux answers one way and other systems another
//! (`docs/decisions/0009-platform-backends.md`). The daemon's loop and the
//! commands take every system call that differs between systems from
//! here:
//!
//! * the processes of a pane's tree ([`ProcReader`]), read for the core
//!   by the [`sampler::Sampler`] (the core's `tend_core::ProcSource`),
//!   which also looks agents' versions up in their package metadata;
//! * the end of a pane's foreground job ([`ExitWatch`], over an
//!   [`ExitSource`]),
//! * which panes' pipes are readable, and what the event loop waits on
//!   while none prints ([`ReadySet`]),
//! * the event loop's timer ([`precise_timer`]), the peer of a Unix socket
//!   and the descriptors it hands over, one-shot facts about a process
//!   ([`os`]).
//!
//! Two backends implement them. `linux` is what tend was tuned with
//! (`docs/PERFORMANCE.md`): `/proc` read through kept files, a pidfd per
//! watched job, one `epoll` set for every pipe, a `timerfd`. `portable`
//! uses what every Unix offers: the `sysinfo` crate for processes, a
//! liveness check on each round of the event loop for exits, `poll(2)` and
//! the runtime's own `kqueue`/`epoll` registration for the pipes, tokio's
//! timer. Linux builds use `linux` unless told otherwise ([`backend`]);
//! every other system builds only `portable`.

use std::ffi::OsStr;
use std::fmt;
use std::sync::OnceLock;

use tend_detector::identity::{self, ProcessInfo, Source, WalkLimits};

use tend_core::source::{PaneSnapshot, Probe, SampleError};

#[cfg(target_os = "linux")]
pub mod linux;
pub mod portable;

mod exit_source;
mod exits;
pub mod os;
mod ready;
pub mod sampler;

#[cfg(all(test, target_os = "linux"))]
mod tests;

pub use exit_source::ExitSource;
pub use exits::ExitWatch;
pub use ready::ReadySet;

/// Above this many entries a cache is emptied (the identity cache of the
/// Linux source, the versions here).
pub(crate) const CACHE_MAX: usize = 4096;

/// The environment variable that picks the backend, read once per
/// process: `linux` or `portable`.
pub const PLATFORM_ENV: &str = "TEND_PLATFORM";

/// Which implementations of the platform's parts are in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `/proc`, pidfds, `epoll`, `timerfd` (Linux only).
    Linux,
    /// `sysinfo`, liveness checks, `poll(2)`, tokio's timer.
    Portable,
}

impl Backend {
    /// Its name, as [`PLATFORM_ENV`] takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Linux => "linux",
            Backend::Portable => "portable",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The backend this process uses: [`PLATFORM_ENV`] when it names one this
/// build has, else `portable` on a build with the `portable` feature or on
/// a system other than Linux, else `linux`. Decided at the first call (the
/// daemon makes it at start) and kept: parts made later must agree with
/// parts made before.
pub fn backend() -> Backend {
    static CHOSEN: OnceLock<Backend> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let value = std::env::var_os(PLATFORM_ENV);
        let (chosen, warning) = choose(
            value.as_deref(),
            cfg!(target_os = "linux"),
            cfg!(feature = "portable"),
        );
        if let Some(w) = warning {
            eprintln!("tend: {w}");
        }
        chosen
    })
}

/// [`backend`]'s choice from the variable's value, whether the `linux`
/// backend is built, and whether `portable` is the build's default; with a
/// warning for a value that is not taken.
pub fn choose(
    value: Option<&OsStr>,
    linux_built: bool,
    portable_default: bool,
) -> (Backend, Option<String>) {
    let default = if linux_built && !portable_default {
        Backend::Linux
    } else {
        Backend::Portable
    };
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return (default, None);
    };
    match value.to_str() {
        Some("portable") => (Backend::Portable, None),
        Some("linux") if linux_built => (Backend::Linux, None),
        Some("linux") => (
            Backend::Portable,
            Some(format!(
                "{PLATFORM_ENV}=linux: this build has only the portable backend; using it"
            )),
        ),
        _ => (
            default,
            Some(format!(
                "{PLATFORM_ENV}={}: not a backend (linux or portable); using {default}",
                value.to_string_lossy()
            )),
        ),
    }
}

/// The processes of a pane's tree: its shell at depth 0 and what runs
/// below it, breadth-first within the walk limits, each with its group, its
/// terminal's foreground group, what it runs and its CPU time.
pub trait ProcReader: fmt::Debug + Send {
    /// The shell's group and its terminal's foreground group, as cheaply
    /// as the system allows (a pane that prints is probed five times a
    /// second).
    fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError>;
    /// The whole tree below `shell_pid`.
    fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError>;
    /// `name` in `pid`'s environment, where the system lets it be read.
    fn env_var(&mut self, pid: u32, name: &str) -> Option<String>;
    /// The walk limits in force.
    fn limits(&self) -> WalkLimits;
    /// Other walk limits.
    fn set_limits(&mut self, limits: WalkLimits);
    /// The daemon's round (once a second) ended.
    fn end_round(&mut self) {}
    /// A round over all panes ended: what is cached of processes not seen
    /// for a while may go.
    fn sweep(&mut self) {}
    /// Files read since the source was made (0 where nothing is counted).
    fn files_read(&self) -> u64 {
        0
    }
}

/// Clock ticks per second of the CPU times a [`ProcReader`] reports.
pub fn ticks_per_sec() -> f64 {
    #[cfg(target_os = "linux")]
    {
        procfs::ticks_per_second() as f64
    }
    #[cfg(not(target_os = "linux"))]
    {
        use nix::unistd::{sysconf, SysconfVar};
        match sysconf(SysconfVar::CLK_TCK) {
            Ok(Some(hz)) if hz > 0 => hz as f64,
            _ => identity::TICKS_PER_SEC,
        }
    }
}

/// The script an interpreter process runs (see [`identity::script_path`]),
/// its symlinks resolved (`…/.bin/gemini` →
/// `…/@google/gemini-cli/bundle/gemini.js`); `None` when that changes
/// nothing or names no file here. A relative path is taken from the
/// process's working directory (`cwd`, asked only then); a bare word in a
/// command string is a `PATH` lookup, not a file here, and is left alone.
/// `reads` counts the path resolutions.
pub fn script_target(
    probe: &ProcessInfo,
    reads: &mut u64,
    cwd: impl FnOnce() -> Option<String>,
) -> Option<String> {
    let script = identity::script_path(probe)?;
    let path = std::path::Path::new(&script.value);
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else if script.source != Source::Command || script.value.contains('/') {
        std::path::Path::new(&cwd()?).join(path)
    } else {
        return None;
    };
    *reads += 1;
    let target = std::fs::canonicalize(&full).ok()?;
    let target = target.to_string_lossy().into_owned();
    (target != script.value).then_some(target)
}

/// Whether the event loop's deadlines use a timer of the kernel's that
/// wakes it once at the instant asked (`timerfd`, Linux) rather than
/// tokio's wheel (see `daemon/deadline.rs`).
pub fn precise_timer() -> bool {
    cfg!(target_os = "linux") && backend() == Backend::Linux
}

#[cfg(test)]
mod choice_tests {
    use super::*;

    #[test]
    fn the_variable_picks_a_backend_the_build_has() {
        fn v(s: &str) -> Option<&OsStr> {
            Some(OsStr::new(s))
        }
        // Linux builds: linux unless asked, or built portable.
        assert_eq!(choose(None, true, false), (Backend::Linux, None));
        assert_eq!(choose(v(""), true, false), (Backend::Linux, None));
        assert_eq!(choose(None, true, true), (Backend::Portable, None));
        assert_eq!(
            choose(v("portable"), true, false),
            (Backend::Portable, None)
        );
        assert_eq!(choose(v("linux"), true, true), (Backend::Linux, None));
        // Elsewhere only portable exists.
        assert_eq!(choose(None, false, false), (Backend::Portable, None));
        let (b, w) = choose(v("linux"), false, false);
        assert_eq!(b, Backend::Portable);
        assert_eq!(
            w.as_deref(),
            Some("TEND_PLATFORM=linux: this build has only the portable backend; using it")
        );
        // A value that names nothing: the default, said once.
        let (b, w) = choose(v("macos"), true, false);
        assert_eq!(b, Backend::Linux);
        assert_eq!(
            w.as_deref(),
            Some("TEND_PLATFORM=macos: not a backend (linux or portable); using linux")
        );
    }
}
