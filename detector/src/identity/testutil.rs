//! Helpers shared by the identity unit tests: the bundled registry and
//! process shapes.

use super::*;

/// Parsing the bundled manifests compiles many regexes: once per run.
pub(super) fn reg() -> Registry {
    static REG: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REG.get_or_init(Registry::bundled).clone()
}

pub(super) fn p(exe: &str, comm: &str, argv: &[&str]) -> ProcessInfo {
    ProcessInfo {
        pid: 10,
        exe: exe.into(),
        comm: comm.into(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        depth: 1,
        ..Default::default()
    }
}

/// The agent and the key kind a process matches.
pub(super) fn id(pr: ProcessInfo) -> Option<(String, String)> {
    match_process(&reg(), &pr).map(|m| (m.agent, m.via))
}

pub(super) fn agent(pr: ProcessInfo) -> Option<String> {
    match_process(&reg(), &pr).map(|m| m.agent)
}

/// A process with group `pgid`, below `ppid`.
pub(super) fn proc(pid: u32, ppid: u32, pgid: u32, argv: &[&str]) -> ProcessInfo {
    ProcessInfo {
        pid,
        ppid,
        pgid: Some(pgid),
        exe: format!("/usr/bin/{}", argv.first().map_or("x", |a| basename(a))),
        comm: argv
            .first()
            .map_or("x", |a| basename(a))
            .chars()
            .take(15)
            .collect(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        state: "S".into(),
        ..Default::default()
    }
}

pub(super) fn claude_proc(pid: u32, ppid: u32, pgid: u32) -> ProcessInfo {
    proc(
        pid,
        ppid,
        pgid,
        &["node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"],
    )
}

pub(super) fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}
