//! Which version of an agent runs, from the package metadata installed
//! beside its program. Pure: the functions here say which file to read and
//! how to read it; the sampler does the reading.

/// Where an agent's version may be written, for one program path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataSource {
    /// An npm package's `package.json`.
    PackageJson(String),
    /// A Python environment's `site-packages` directory: list it and pass
    /// the entries to [`dist_info_dir`].
    SitePackages(String),
    /// A Python environment's `lib` directory: its `python3.*` entries hold
    /// `site-packages` (see [`site_packages_of`]).
    PythonLib(String),
}

/// The npm package name of a manifest's `packages` key, when it is one
/// (`@openai/codex`, `aider-chat`), not a path fragment (`/aider/__main__.py`,
/// `node_modules/cline`, `@github/copilot/`).
fn package_name(key: &str) -> Option<&str> {
    let key = key.strip_prefix("node_modules/").unwrap_or(key);
    let key = key.strip_suffix('/').unwrap_or(key);
    let ok = match key.strip_prefix('@') {
        Some(rest) => rest.split('/').count() == 2,
        None => !key.contains('/'),
    };
    (ok && !key.is_empty() && !key.ends_with(".py")).then_some(key)
}

/// The files that may name the version of the agent whose program is at
/// `path` (a resolved executable or script), best first. `packages` are the
/// manifest's identity package keys.
///
/// npm: the agent's own package directory under the nearest
/// `node_modules/` (a platform package such as `@openai/codex-linux-x64`
/// answers with its sibling `@openai/codex`, whose version it carries). Python: the
/// `site-packages` the path is in, or the `lib` of the environment whose
/// `bin/` holds it.
pub fn metadata_sources(path: &str, packages: &[String]) -> Vec<MetadataSource> {
    let mut out = Vec::new();
    let names: Vec<&str> = packages.iter().filter_map(|k| package_name(k)).collect();
    let mut search = path;
    while let Some(at) = search.rfind("/node_modules/") {
        let base = &path[..at + "/node_modules/".len()];
        let rest = &path[base.len()..];
        let mut parts = rest.split('/');
        let first = parts.next().unwrap_or_default();
        let name = if first.starts_with('@') {
            match parts.next() {
                Some(second) => format!("{first}/{second}"),
                None => String::new(),
            }
        } else {
            first.to_owned()
        };
        for want in &names {
            if name == *want {
                out.push(MetadataSource::PackageJson(format!(
                    "{base}{name}/package.json"
                )));
            } else if name.starts_with(&format!("{want}-")) {
                out.push(MetadataSource::PackageJson(format!(
                    "{base}{want}/package.json"
                )));
            }
        }
        search = &path[..at];
    }
    if let Some(at) = path.find("/site-packages/") {
        out.push(MetadataSource::SitePackages(
            path[..at + "/site-packages".len()].to_owned(),
        ));
    } else if let Some((dir, _)) = path.rsplit_once('/') {
        if let Some(root) = dir.strip_suffix("/bin") {
            if !root.is_empty() {
                out.push(MetadataSource::PythonLib(format!("{root}/lib")));
            }
        }
    }
    out
}

/// The `python3.*` directories of a Python `lib` listing, as
/// `site-packages` paths, newest name last.
pub fn site_packages_of(lib: &str, entries: &[String]) -> Vec<String> {
    let mut dirs: Vec<&String> = entries
        .iter()
        .filter(|e| e.starts_with("python3"))
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|e| format!("{lib}/{e}/site-packages"))
        .collect()
}

/// A Python distribution name in its normalised form (PEP 503, with `_`):
/// `aider-chat` and `Aider.Chat` are both `aider_chat`.
fn normalise(name: &str) -> String {
    name.to_ascii_lowercase().replace(['-', '.'], "_")
}

/// The `<dist>-<version>.dist-info` entry of a `site-packages` listing for
/// one of `packages`, with its version: `("aider_chat-0.86.2.dist-info",
/// "0.86.2")`.
pub fn dist_info_dir(entries: &[String], packages: &[String]) -> Option<(String, String)> {
    let wanted: Vec<String> = packages
        .iter()
        .filter_map(|k| package_name(k))
        .filter(|k| !k.starts_with('@'))
        .map(normalise)
        .collect();
    entries.iter().find_map(|e| {
        let stem = e.strip_suffix(".dist-info")?;
        let (dist, version) = stem.split_once('-')?;
        (wanted.contains(&normalise(dist)) && !version.is_empty())
            .then(|| (e.clone(), version.to_owned()))
    })
}

/// The `version` of a `package.json`.
pub fn package_json_version(text: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    clean(v.get("version")?.as_str()?)
}

/// The `Version:` header of a Python distribution's `METADATA` (the
/// headers end at the first blank line).
pub fn metadata_version(text: &str) -> Option<String> {
    text.lines()
        .take_while(|l| !l.trim().is_empty())
        .find_map(|l| l.strip_prefix("Version:"))
        .and_then(|v| clean(v.trim()))
}

/// A version as written, or nothing when it is not a plausible one (a
/// version is short and printable; the file is not ours).
fn clean(v: &str) -> Option<String> {
    let ok = !v.is_empty()
        && v.len() <= 64
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+_".contains(c));
    ok.then(|| v.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn npm_sources() {
        // (the file the process runs, the package, its package.json): a
        // script in the package (Claude Code's cli.js; Grok CLI's and
        // Continue CLI's `.bin` links resolve to their `dist/` scripts, and
        // `grok --version` prints a constant, not the package's) or a
        // native binary of a platform package beside it (Codex).
        for (file, package, json) in [
            (
                "/opt/agents/node_modules/@anthropic-ai/claude-code/cli.js",
                "@anthropic-ai/claude-code",
                "/opt/agents/node_modules/@anthropic-ai/claude-code/package.json",
            ),
            (
                "/opt/agents/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex/codex",
                "@openai/codex",
                "/opt/agents/node_modules/@openai/codex/package.json",
            ),
            (
                "/opt/agent4/node_modules/@vibe-kit/grok-cli/dist/index.js",
                "@vibe-kit/grok-cli",
                "/opt/agent4/node_modules/@vibe-kit/grok-cli/package.json",
            ),
            (
                "/opt/agent7/node_modules/@continuedev/cli/dist/cn.js",
                "@continuedev/cli",
                "/opt/agent7/node_modules/@continuedev/cli/package.json",
            ),
        ] {
            assert_eq!(
                metadata_sources(file, &keys(&[package])),
                vec![MetadataSource::PackageJson(json.into())],
                "{file}"
            );
        }
        // Kilo Code: the native binary its postinstall links into the CLI's
        // own package (`bin/.kilo`), and the launcher script beside it: the
        // package's package.json first (a `bin/` folder also offers a
        // Python `lib` beside it, read only when nothing came before).
        for path in [
            "/opt/agent3/node_modules/@kilocode/cli/bin/.kilo",
            "/opt/agent3/node_modules/@kilocode/cli/bin/kilo",
        ] {
            assert_eq!(
                metadata_sources(path, &keys(&["@kilocode/cli"])).first(),
                Some(&MetadataSource::PackageJson(
                    "/opt/agent3/node_modules/@kilocode/cli/package.json".into()
                )),
                "{path}"
            );
        }
        // Nested node_modules: the nearest first.
        assert_eq!(
            metadata_sources(
                "/a/node_modules/@google/gemini-cli/node_modules/@google/gemini-cli-core/x.js",
                &keys(&["@google/gemini-cli"])
            ),
            vec![
                MetadataSource::PackageJson("/a/node_modules/@google/gemini-cli/node_modules/@google/gemini-cli/package.json".into()),
                MetadataSource::PackageJson("/a/node_modules/@google/gemini-cli/package.json".into()),
            ]
        );
        // Someone else's package is not the agent's.
        assert!(metadata_sources(
            "/x/node_modules/left-pad/index.js",
            &keys(&["@openai/codex"])
        )
        .is_empty());
    }

    #[test]
    fn python_sources() {
        let aider = keys(&["aider-chat", "/aider/__main__.py"]);
        assert_eq!(
            metadata_sources("/opt/agents/venv/bin/aider", &aider),
            vec![MetadataSource::PythonLib("/opt/agents/venv/lib".into())]
        );
        assert_eq!(
            metadata_sources("/v/lib/python3.11/site-packages/aider/__main__.py", &aider),
            vec![MetadataSource::SitePackages(
                "/v/lib/python3.11/site-packages".into()
            )]
        );
        assert_eq!(
            site_packages_of("/v/lib", &keys(&["python3.11", "pkgconfig"])),
            vec!["/v/lib/python3.11/site-packages".to_owned()]
        );
        let entries = keys(&[
            "aider",
            "gitpython-3.1.46.dist-info",
            "aider_chat-0.86.2.dist-info",
        ]);
        assert_eq!(
            dist_info_dir(&entries, &aider),
            Some(("aider_chat-0.86.2.dist-info".into(), "0.86.2".into()))
        );
        assert_eq!(dist_info_dir(&entries, &keys(&["@openai/codex"])), None);
    }

    #[test]
    fn parsing() {
        assert_eq!(
            package_json_version(r#"{"name": "@openai/codex", "version": "0.171.0"}"#),
            Some("0.171.0".into())
        );
        assert_eq!(package_json_version(r#"{"name": "x"}"#), None);
        assert_eq!(package_json_version("not json"), None);
        assert_eq!(
            package_json_version(r#"{"version": "1.0; rm -rf /"}"#),
            None
        );
        assert_eq!(
            metadata_version(
                "Metadata-Version: 2.4\nName: aider-chat\nVersion: 0.86.2\n\nVersion: 9\n"
            ),
            Some("0.86.2".into())
        );
        assert_eq!(metadata_version("Name: x\n\nVersion: 1.0\n"), None);
    }
}
