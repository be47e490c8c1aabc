//! Loading the agent manifests: bundled ones plus the user's directory
//! (`$XDG_CONFIG_HOME/tend/agents/*.toml`).

use std::path::PathBuf;

use tend_detector::manifest::{ManifestError, Registry};

/// The user's manifest directory.
pub fn user_dir() -> Option<PathBuf> {
    Some(crate::paths::config_dir()?.join("agents"))
}

/// Bundled manifests plus every `*.toml` in the user directory. Files that
/// fail to load are returned as errors (and not used).
pub fn load() -> (Registry, Vec<ManifestError>) {
    let mut user = Vec::new();
    let mut errors = Vec::new();
    if let Some(dir) = user_dir() {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            let mut paths: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            paths.sort();
            for p in paths {
                match std::fs::read_to_string(&p) {
                    Ok(text) => user.push((p.display().to_string(), text)),
                    Err(e) => errors.push(ManifestError {
                        file: p.display().to_string(),
                        rule: None,
                        problem: format!("cannot read: {e}"),
                    }),
                }
            }
        }
    }
    let (registry, mut more) = Registry::load(&user);
    errors.append(&mut more);
    (registry, errors)
}
