//! A `tend run` relay in a pane's process tree (`tend/src/cli/run.rs`,
//! `docs/decisions/0014-the-agents-own-word.md`): the relay leads the
//! pane's foreground group and runs the agent on a pty of its own, so the
//! snapshot is read through it. Used by the daemon's sampler, by
//! `tend replay` and by the corpus tests, on the same snapshots.

use super::{find_root, ProcessInfo};

/// Whether `p` looks like a `tend run` relay in a recording:
/// `tend [global options] run …`.
///
/// For recordings only (`tend replay`, the corpus tests), which are taken
/// as they were made. A look is no proof: `exec -a tend prog run` or
/// `tend pilot --client run` look the same. The daemon believes a relay
/// only when the relay said so itself, on the daemon's socket, from the
/// pid the kernel names (`core/src/relays.rs`).
pub fn is_relay(p: &ProcessInfo) -> bool {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_owned();
    let tend = p.argv.first().is_some_and(|a| base(a) == "tend")
        || base(p.exe.trim_end_matches(" (deleted)")) == "tend";
    tend && p
        .argv
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "run")
}

/// A snapshot seen through a `tend run` relay, and whether one holds the
/// pane's terminal. `relay` says which process is a relay ([`is_relay`]
/// for a recording; the daemon's registered relays live).
///
/// `tend run -- claude` leads the pane's foreground group, and starts its
/// command in a session of its own on a terminal of its own (the relay's
/// pty), so the pane's foreground group holds the relay alone and no agent.
/// Seen through the relay, the pane's foreground is that terminal's
/// foreground group: every process's `tpgid` that names the pane's group
/// names the inner terminal's instead, and identity resolves the agent (or
/// the `ssh` behind which it runs) as if the relay were not there.
pub fn look_through_relay(
    mut procs: Vec<ProcessInfo>,
    relay: impl Fn(&ProcessInfo) -> bool,
) -> (Vec<ProcessInfo>, bool) {
    let Some(outer) = find_root(&procs).and_then(|r| r.tpgid) else {
        return (procs, false);
    };
    let Some(relay) = procs
        .iter()
        .find(|p| p.pgid == Some(outer) && !p.is_zombie() && relay(p))
        .map(|p| p.pid)
    else {
        return (procs, false);
    };
    let inner = procs
        .iter()
        .filter(|p| p.ppid == relay && !p.is_zombie())
        .find_map(|p| p.tpgid.filter(|&t| t != outer && t != 0));
    if let Some(inner) = inner {
        for p in &mut procs {
            if p.tpgid == Some(outer) {
                p.tpgid = Some(inner);
            }
        }
    }
    (procs, true)
}
