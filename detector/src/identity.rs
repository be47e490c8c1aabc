//! Identity: which agent runs in a pane, from process snapshots (SPEC §3).
//!
//! Pure: the sampler (in `sidecar/`) reads `/proc`; this module decides.
//! Process titles lie (Claude Code rewrites its own), so the executable
//! image and argv are what count; interpreters and wrappers are unwrapped to
//! the script they run.

use serde::{Deserialize, Serialize};

use crate::manifest::{Manifest, Registry};

/// One process as the sampler saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    #[serde(default)]
    pub ppid: u32,
    /// Process group id.
    #[serde(default)]
    pub pgid: Option<u32>,
    /// `/proc/<pid>/exe` target (empty when unreadable).
    #[serde(default, deserialize_with = "nullable")]
    pub exe: String,
    /// `/proc/<pid>/comm`.
    #[serde(default, deserialize_with = "nullable")]
    pub comm: String,
    /// argv.
    #[serde(default, alias = "cmdline", deserialize_with = "nullable")]
    pub argv: Vec<String>,
    /// `TEND_AGENT` from its environment, if set.
    #[serde(default)]
    pub env_agent: Option<String>,
    /// utime + stime, in clock ticks.
    #[serde(default, deserialize_with = "nullable")]
    pub cpu_ticks: u64,
    /// Depth below the pane's shell (0 = the shell).
    #[serde(default, deserialize_with = "nullable")]
    pub depth: u32,
}

/// `null` reads as the default (a process that vanished mid-read).
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Which key of which manifest matched a process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdentityMatch {
    /// Agent id.
    pub agent: String,
    /// The process that matched.
    pub pid: u32,
    /// Which kind of key matched: `env`, `executable`, `package`, `script`,
    /// `comm`.
    pub via: String,
    /// The key value.
    pub key: String,
}

/// Interpreters and wrappers whose first non-option argument is the real
/// program.
const INTERPRETERS: &[&str] = &[
    "node", "nodejs", "bun", "deno", "python", "python3", "uv", "uvx", "npx", "pnpx", "env", "sh",
    "bash", "dash", "zsh", "ruby", "perl", "tsx", "ts-node",
];

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Strips nix's `.foo-wrapped` decoration and versioned interpreter names
/// (`python3.11` → `python3`).
fn normalise(name: &str) -> &str {
    let name = name.strip_suffix("-wrapped").unwrap_or(name);
    let name = name.strip_prefix('.').unwrap_or(name);
    if let Some(base) = name.strip_prefix("python") {
        if base.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return "python";
        }
    }
    name
}

fn is_interpreter(path: &str) -> bool {
    let n = normalise(basename(path));
    INTERPRETERS.contains(&n) || n == "python"
}

/// The programs a process really runs, most specific first: the unwrapped
/// script(s), argv[0], the executable image.
pub fn candidates(p: &ProcessInfo) -> Vec<String> {
    let mut out = Vec::new();
    let mut args = p.argv.iter().peekable();
    let mut first = true;
    // Unwrap interpreter chains: `env FOO=1 node --flag script.js`,
    // `sh -c 'exec gemini …'`, `uv run aider`.
    while let Some(a) = args.next() {
        if first || is_interpreter(a) {
            first = false;
            if !is_interpreter(a) {
                out.push(a.clone());
                break;
            }
            continue;
        }
        if a.starts_with('-') {
            if a == "-c" {
                // `sh -c 'exec gemini --yolo'`: the command string's program.
                if let Some(cmd) = args.next() {
                    for w in cmd.split_whitespace() {
                        if w == "exec" || w.contains('=') {
                            continue;
                        }
                        out.push(w.to_owned());
                        break;
                    }
                }
                break;
            }
            continue;
        }
        if a.contains('=') && !a.contains('/') {
            continue; // env assignments
        }
        if matches!(a.as_str(), "run" | "exec" | "x" | "tool") {
            continue; // uv run, npm exec, bunx-style verbs
        }
        out.push(a.clone());
        if !is_interpreter(a) {
            break;
        }
    }
    if !p.exe.is_empty() {
        out.push(p.exe.clone());
    }
    out
}

fn match_manifest(m: &Manifest, p: &ProcessInfo) -> Option<(String, String)> {
    let keys = &m.identity;
    for c in candidates(p) {
        let base = normalise(basename(&c));
        let base_noext = base.rsplit_once('.').map_or(base, |(b, ext)| {
            if matches!(ext, "exe" | "js" | "mjs" | "cjs" | "py") {
                b
            } else {
                base
            }
        });
        for pkg in &keys.packages {
            if c.contains(pkg.as_str()) {
                return Some(("package".into(), pkg.clone()));
            }
        }
        for e in keys.executables.iter().chain(keys.aliases.iter()) {
            if base == e || base_noext == e {
                return Some(("executable".into(), e.clone()));
            }
        }
    }
    let comm = normalise(&p.comm);
    keys.comm
        .iter()
        .find(|c| c.as_str() == comm)
        .map(|c| ("comm".into(), c.clone()))
}

/// Which agent a single process is, if any.
pub fn match_process(registry: &Registry, p: &ProcessInfo) -> Option<IdentityMatch> {
    if let Some(id) = &p.env_agent {
        if registry.get(id).is_some() {
            return Some(IdentityMatch {
                agent: id.clone(),
                pid: p.pid,
                via: "env".into(),
                key: format!("TEND_AGENT={id}"),
            });
        }
    }
    registry.iter().find_map(|m| {
        match_manifest(m, p).map(|(via, key)| IdentityMatch {
            agent: m.id.clone(),
            pid: p.pid,
            via,
            key,
        })
    })
}

/// The agent among a pane's processes: the shallowest matching process
/// below the shell (the shell itself never counts).
pub fn resolve(registry: &Registry, procs: &[ProcessInfo]) -> Option<IdentityMatch> {
    let mut sorted: Vec<&ProcessInfo> = procs.iter().filter(|p| p.depth > 0).collect();
    sorted.sort_by_key(|p| (p.depth, p.pid));
    sorted.into_iter().find_map(|p| match_process(registry, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(exe: &str, comm: &str, argv: &[&str]) -> ProcessInfo {
        ProcessInfo {
            pid: 10,
            exe: exe.into(),
            comm: comm.into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            depth: 1,
            ..Default::default()
        }
    }

    #[test]
    fn corpus_shapes() {
        let reg = Registry::bundled();
        let id = |pr: ProcessInfo| match_process(&reg, &pr).map(|m| m.agent);
        assert_eq!(
            id(p("/opt/agents/node_modules/@anthropic-ai/claude-code/bin/claude.exe", "claude", &["claude"])),
            Some("claude".into())
        );
        assert_eq!(
            id(p("/usr/bin/node", "node", &["node", "/opt/agents/node_modules/.bin/codex"])),
            Some("codex".into())
        );
        assert_eq!(
            id(p("/usr/bin/node", "node", &["/usr/bin/node", "--max-old-space-size=12052", "/opt/node_modules/.bin/gemini"])),
            Some("gemini".into())
        );
        assert_eq!(
            id(p("/root/.pyenv/versions/3.11.7/bin/python3.11", "aider", &["/opt/venv/bin/python3", "/opt/venv/bin/aider"])),
            Some("aider".into())
        );
        assert_eq!(id(p("/usr/bin/bash", "bash", &["bash", "-c", "exec gemini --yolo"])), Some("gemini".into()));
        assert_eq!(id(p("/usr/bin/vim", "vim", &["vim", "claude.md"])), None);
        assert_eq!(id(p("/usr/bin/cat", "cat", &["cat", "notes"])), None);
    }
}
