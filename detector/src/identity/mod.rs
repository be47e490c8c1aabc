//! Identity: which agent runs in a pane, from process snapshots.
//!
//! Pure: the sampler (in `tend/`) reads `/proc`; this module decides.
//!
//! * [`ProcessInfo`] — one process as the sampler saw it; [`ProcSample`] — a
//!   timed snapshot of one pane's tree.
//! * [`candidates_with_source`] — the programs a process really runs, with
//!   interpreters and wrappers (`node`, `bun`, `deno`, `python*`, `uv`,
//!   `npx`, `sh -c`, `env`, nix `-wrapped`, …) unwrapped.
//! * [`match_process`] — which agent one process is, from the manifests'
//!   `[identity]` keys (never a table in this file).
//! * [`resolve_pane`] — the pane's agent: shell → terminal foreground group →
//!   that group's processes, with a bounded walk.
//! * [`IdentityTracker`] — hysteresis over successive resolutions, with the
//!   evidence `tend explain` prints.
//! * [`ProcessTracker`] — alive / CPU / live-child for the detector.
//! * [`SampleScheduler`] — when the sampler should look again.
//!
//! Process titles lie (Claude Code rewrites its own), so the executable
//! image and argv are what count; `comm` is the weakest key.
//!
//! The parts live one per file so each can be read on its own: `shell.rs`
//! splits command lines, `unwrap.rs` sees through interpreters and
//! wrappers, `matching.rs` holds manifest keys against one process,
//! `resolve.rs` finds a pane's agent, `tracker.rs` adds hysteresis over
//! time and `sampling.rs` tracks the agent's processes and when to sample.
//! Their public names are re-exported here, so paths stay
//! `tend_detector::identity::X`.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer};

use crate::engine::ProcessObservation;
use crate::manifest::{IdentityKeys, Registry};

mod matching;
mod relay;
mod resolve;
mod sampling;
mod screen;
mod shell;
mod tracker;
mod unwrap;
mod wrapper;

#[cfg(test)]
mod testutil;

pub use matching::{match_process, IdentityMatch};
pub use relay::{is_relay, look_through_relay};
pub use resolve::{find_root, resolve, resolve_pane, Foreground, Resolution, WalkLimits};
pub use sampling::{ProcessTracker, SamplePolicy, SampleScheduler};
pub use screen::{read_screen, ScreenReading, Sighting};
pub use tracker::{
    ChangeReason, HysteresisConfig, IdentifiedBy, IdentityChange, IdentityEvidence,
    IdentityTracker, PendingIdentity, ScreenAbsent, ScreenPending,
};
pub use unwrap::{candidates, candidates_with_source, script_path};
pub use wrapper::{wrapper_of, WrapperKind, WrapperSeen};

use shell::{basename, is_assignment, normalise, split_commands, stem};

/// The environment variable that forces a process's identity.
pub const ENV_HINT: &str = "TEND_AGENT";

/// Clock ticks per second of `/proc/<pid>/stat` CPU times (USER_HZ) when
/// nothing better is known (recordings; the daemon asks the system).
pub const TICKS_PER_SEC: f64 = 100.0;

// ---------------------------------------------------------------------------
// Snapshot model
// ---------------------------------------------------------------------------

/// One process as the sampler saw it.
///
/// Every field but `pid` may be missing: recordings predate some fields
/// (`pgid`, `tpgid`), and a process can vanish between two reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    #[serde(default, deserialize_with = "nullable")]
    pub ppid: u32,
    /// Process group id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgid: Option<u32>,
    /// The foreground process group of the process's controlling terminal
    /// (`tpgid` in `/proc/<pid>/stat`; `None` without a terminal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpgid: Option<u32>,
    /// Scheduler state letter (`R`, `S`, `Z`, …; empty when unknown).
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
    /// `/proc/<pid>/exe` target (empty when unreadable).
    #[serde(default, deserialize_with = "nullable")]
    pub exe: String,
    /// `/proc/<pid>/comm` (the title a process may set for itself).
    #[serde(default, deserialize_with = "nullable")]
    pub comm: String,
    /// argv.
    #[serde(default, alias = "cmdline", deserialize_with = "nullable")]
    pub argv: Vec<String>,
    /// `TEND_AGENT` from its environment, if set.
    #[serde(default)]
    pub env_agent: Option<String>,
    /// The unwrapped script (see [`script_path`]) with symlinks resolved by
    /// the sampler, e.g. `…/.bin/gemini` → `…/@google/gemini-cli/bundle/gemini.js`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_target: Option<String>,
    /// utime + stime, in clock ticks.
    #[serde(default, deserialize_with = "nullable")]
    pub cpu_ticks: u64,
    /// Start time in clock ticks after boot (tells a reused pid apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ticks: Option<u64>,
    /// Depth below the pane's shell (0 = the shell).
    #[serde(default, deserialize_with = "nullable")]
    pub depth: u32,
}

impl ProcessInfo {
    /// A zombie has ended; it only waits for its parent to reap it.
    pub fn is_zombie(&self) -> bool {
        self.state == "Z" || self.state == "X"
    }
}

/// `null` reads as the default (a process that vanished mid-read).
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A process snapshot of a pane at one time (as in `procs.jsonl`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcSample {
    /// When it was taken.
    pub at: Duration,
    /// Every process under the pane's shell, the shell at depth 0.
    pub procs: Vec<ProcessInfo>,
}

fn secs<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn opt_secs<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

// ---------------------------------------------------------------------------
// Candidates: unwrapping interpreters and wrappers
// ---------------------------------------------------------------------------

/// Where a candidate program name came from (shown by `tend explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The `TEND_AGENT` environment variable.
    Environ,
    /// `argv[i]`, after unwrapping the wrappers before it.
    Argv(usize),
    /// A word of a command string (`sh -c '…'`, `npx -c '…'`, `env -S '…'`).
    Command,
    /// A package named by an option (`npx -p …`, `uvx --from …`).
    PackageOption,
    /// A module run with `python -m`.
    Module,
    /// The unwrapped script with its symlinks resolved.
    ScriptTarget,
    /// `/proc/<pid>/exe`.
    Exe,
    /// `/proc/<pid>/comm`.
    Comm,
    /// The screen: the agent's live UI, behind a wrapper (see
    /// [`read_screen`]).
    Screen,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Environ => f.write_str("environ"),
            Source::Argv(i) => write!(f, "argv[{i}]"),
            Source::Command => f.write_str("command string"),
            Source::PackageOption => f.write_str("package option"),
            Source::Module => f.write_str("python -m"),
            Source::ScriptTarget => f.write_str("script target"),
            Source::Exe => f.write_str("exe"),
            Source::Comm => f.write_str("comm"),
            Source::Screen => f.write_str("screen"),
        }
    }
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One program a process may be running, and where that came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// A path or a name.
    pub value: String,
    /// Where it came from.
    pub source: Source,
}
