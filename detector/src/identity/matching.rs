//! Matching one process against the manifests' `[identity]` keys: the
//! agent a process is, by which key and from which candidate.
//!
//! Separate because it is the only place the manifests' keys meet a
//! process; the keys themselves live in the manifests, never here.

use super::*;

/// Which key of which manifest matched a process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdentityMatch {
    /// Agent id.
    pub agent: String,
    /// The process that matched.
    pub pid: u32,
    /// Which kind of key matched: `env`, `package`, `executable`, `comm`.
    pub via: String,
    /// The key value.
    pub key: String,
    /// Where the matched text came from (`exe`, `argv[1]`, …).
    pub source: Source,
    /// The matched text (a path or a name).
    pub value: String,
}

impl IdentityMatch {
    /// Matched by a key that names the agent beyond doubt (`TEND_AGENT`,
    /// the agent's package path, its executable), not by a process name
    /// alone: such a match commits an identity at its first sample.
    pub fn is_strong(&self) -> bool {
        matches!(self.via.as_str(), "env" | "package" | "executable")
    }
}

/// `key` occurs in `text` as a path fragment: not glued to other name
/// characters before it, and followed by an end, a separator or a version
/// (`@openai/codex-linux-x64`, `aider-chat==0.86` match; `my-aider-chat`
/// does not).
fn contains_package(text: &str, key: &str) -> bool {
    if key.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(off) = text[from..].find(key) {
        let start = from + off;
        let end = start + key.len();
        let before_ok = key.starts_with('/')
            || text[..start]
                .chars()
                .next_back()
                .is_none_or(|c| matches!(c, '/' | ':' | ' ' | '=' | '"' | '\''));
        let after_ok = key.ends_with('/')
            || text[end..].chars().next().is_none_or(|c| {
                matches!(
                    c,
                    '/' | '@' | '-' | '_' | '=' | '.' | '<' | '>' | '~' | '[' | ' '
                )
            });
        if before_ok && after_ok {
            return true;
        }
        from = start + key.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Which key of `keys` one candidate matches, if any: packages first (the
/// most specific), then executable names and aliases.
fn match_candidate(keys: &IdentityKeys, c: &Candidate) -> Option<(&'static str, String)> {
    if c.source != Source::Module {
        if let Some(pkg) = keys.packages.iter().find(|k| contains_package(&c.value, k)) {
            return Some(("package", pkg.clone()));
        }
    }
    let base = normalise(basename(&c.value));
    let base_stem = stem(base);
    keys.executables
        .iter()
        .chain(keys.aliases.iter())
        .find(|e| base == e.as_str() || base_stem == e.as_str())
        .map(|e| ("executable", e.clone()))
}

/// Which agent a single process is, if any.
///
/// `TEND_AGENT` (naming a known agent) wins; then each candidate of
/// [`candidates_with_source`] in order against every manifest; `comm` last.
pub fn match_process(registry: &Registry, p: &ProcessInfo) -> Option<IdentityMatch> {
    if let Some(id) = p.env_agent.as_deref().map(str::trim) {
        if registry.get(id).is_some() {
            return Some(IdentityMatch {
                agent: id.to_owned(),
                pid: p.pid,
                via: "env".into(),
                key: format!("{ENV_HINT}={id}"),
                source: Source::Environ,
                value: id.to_owned(),
            });
        }
    }
    let found = |c: &Candidate| {
        registry.iter().find_map(|m| {
            match_candidate(&m.identity, c).map(|(via, key)| IdentityMatch {
                agent: m.id.clone(),
                pid: p.pid,
                via: via.into(),
                key,
                source: c.source,
                value: c.value.clone(),
            })
        })
    };
    if let Some(m) = candidates_with_source(p).iter().find_map(found) {
        return Some(m);
    }
    let comm = normalise(p.comm.trim());
    if comm.is_empty() {
        return None;
    }
    registry.iter().find_map(|m| {
        m.identity
            .comm
            .iter()
            .find(|c| c.as_str() == comm)
            .map(|c| IdentityMatch {
                agent: m.id.clone(),
                pid: p.pid,
                via: "comm".into(),
                key: c.clone(),
                source: Source::Comm,
                value: p.comm.clone(),
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::testutil::*;

    #[test]
    fn corpus_shapes() {
        assert_eq!(
            agent(p(
                "/opt/agents/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
                "claude",
                &["claude"]
            )),
            Some("claude".into())
        );
        assert_eq!(
            agent(p(
                "/usr/bin/node",
                "node",
                &["node", "/opt/agents/node_modules/.bin/codex"]
            )),
            Some("codex".into())
        );
        assert_eq!(
            agent(p(
                "/usr/bin/node",
                "node",
                &[
                    "/usr/bin/node",
                    "--max-old-space-size=12052",
                    "/opt/node_modules/.bin/gemini"
                ]
            )),
            Some("gemini".into())
        );
        assert_eq!(
            agent(p(
                "/root/.pyenv/versions/3.11.7/bin/python3.11",
                "aider",
                &["/opt/venv/bin/python3", "/opt/venv/bin/aider"]
            )),
            Some("aider".into())
        );
        assert_eq!(
            agent(p(
                "/usr/bin/bash",
                "bash",
                &["bash", "-c", "exec gemini --yolo"]
            )),
            Some("gemini".into())
        );
        assert_eq!(agent(p("/usr/bin/vim", "vim", &["vim", "claude.md"])), None);
        assert_eq!(agent(p("/usr/bin/cat", "cat", &["cat", "notes"])), None);
    }

    #[test]
    fn symlink_targets_from_the_sampler() {
        let mut pr = p(
            "/usr/bin/node",
            "node",
            &["node", "/x/node_modules/.bin/cx"],
        );
        assert_eq!(agent(pr.clone()), None);
        assert_eq!(
            script_path(&pr).map(|c| c.value).as_deref(),
            Some("/x/node_modules/.bin/cx")
        );
        pr.script_target = Some("/x/node_modules/@openai/codex/bin/codex.js".into());
        let m = match_process(&reg(), &pr).expect("codex");
        assert_eq!(
            (m.agent.as_str(), m.source),
            ("codex", Source::ScriptTarget)
        );
        // A symlinked binary: argv[0] names the link, exe the target.
        assert_eq!(
            agent(p(
                "/x/vendor/native-linux-x64",
                "codex",
                &["codex", "--yolo"]
            )),
            Some("codex".into())
        );
        assert_eq!(
            script_path(&p("/bin/sleep", "sleep", &["sleep", "5"])),
            None
        );
    }

    #[test]
    fn env_hint_forces_identity() {
        let mut pr = p("/usr/bin/sleep", "sleep", &["sleep", "1000"]);
        pr.env_agent = Some("claude".into());
        let m = match_process(&reg(), &pr).expect("claude");
        assert_eq!(
            (m.via.as_str(), m.key.as_str()),
            ("env", "TEND_AGENT=claude")
        );
        // It wins over other keys…
        let mut pr = p(
            "/usr/bin/node",
            "node",
            &["node", "/x/node_modules/.bin/codex"],
        );
        pr.env_agent = Some("gemini".into());
        assert_eq!(agent(pr), Some("gemini".into()));
        // …but an unknown id is ignored.
        let mut pr = p("/usr/bin/sleep", "sleep", &["sleep", "1"]);
        pr.env_agent = Some("no-such-agent".into());
        assert_eq!(agent(pr), None);
    }

    #[test]
    fn titles_lie_image_and_argv_do_not() {
        // A process that renamed its comm: argv still says aider.
        assert_eq!(
            id(p(
                "/usr/bin/python3.11",
                "vim",
                &["python3", "/v/bin/aider"]
            )),
            Some(("aider".into(), "executable".into()))
        );
        // `exec -a fake` on the native claude binary: the image path wins.
        let m = match_process(
            &reg(),
            &p(
                "/x/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
                "claude.exe",
                &["fake-title"],
            ),
        )
        .expect("claude");
        assert_eq!((m.via.as_str(), m.source), ("package", Source::Exe));
        // comm alone is the weakest key, used only when nothing else names
        // a program.
        assert_eq!(
            id(p("/usr/bin/python3.11", "aider", &[])),
            Some(("aider".into(), "comm".into()))
        );
        // argv that names a program beats comm.
        assert_eq!(
            agent(p(
                "/usr/bin/python3.11",
                "aider",
                &["python3", "/x/other.py"]
            )),
            Some("aider".into())
        );
        assert_eq!(
            agent(p("/usr/bin/top", "claude", &["top"])),
            Some("claude".into())
        );
    }

    #[test]
    fn package_keys_need_boundaries() {
        assert!(contains_package(
            "/x/@openai/codex-linux-x64/codex",
            "@openai/codex"
        ));
        assert!(contains_package("aider-chat==0.86", "aider-chat"));
        assert!(contains_package(
            "npm:@google/gemini-cli",
            "@google/gemini-cli"
        ));
        assert!(!contains_package("/x/my-aider-chat/tool", "aider-chat"));
        assert!(!contains_package("/x/@openai/codexify", "@openai/codex"));
    }
}
