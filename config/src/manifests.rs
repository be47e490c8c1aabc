//! Loading the agent manifests: bundled ones plus the user's directory
//! (`$XDG_CONFIG_HOME/tend/agents/*.toml`).

use std::path::{Path, PathBuf};

use tend_detector::manifest::{ManifestError, Registry};

/// The user's manifest directory.
pub fn user_dir() -> Option<PathBuf> {
    Some(crate::paths::config_dir()?.join("agents"))
}

/// Bundled manifests plus every `*.toml` in the user directory. Files that
/// fail to load are returned as errors (and not used), and so is a user
/// directory that is there but cannot be read (a file in its place, no
/// permission): none of the user's manifests would load, without a word.
/// A missing directory is no error (the user has none).
pub fn load() -> (Registry, Vec<ManifestError>) {
    let mut user = Vec::new();
    let mut errors = Vec::new();
    if let Some(dir) = user_dir() {
        match read_dir(&dir) {
            Ok(mut paths) => {
                paths.sort();
                for p in paths {
                    match std::fs::read_to_string(&p) {
                        Ok(text) => user.push((p.display().to_string(), text)),
                        Err(e) => errors.push(ManifestError {
                            file: p.display().to_string(),
                            rule: None,
                            problem: format!("cannot read: {e}; run `chmod u+r {}`", p.display()),
                        }),
                    }
                }
            }
            Err(Some(problem)) => errors.push(ManifestError {
                file: dir.display().to_string(),
                rule: None,
                problem,
            }),
            Err(None) => {}
        }
    }
    let (registry, mut more) = Registry::load(&user);
    errors.append(&mut more);
    // A manifest's text quoted in an error (a 10 MB regex) is cut short.
    for e in &mut errors {
        e.problem = crate::error::bound_quotes(&e.problem);
    }
    (registry, errors)
}

/// The `*.toml` files in the user's manifest directory; `Err(None)` when
/// it does not exist, `Err(Some(why and the fix))` when it cannot be used.
fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, Option<String>> {
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(e) => {
            return Err(Some(format!(
                "cannot reach this folder ({e}), so none of your agent manifests load; \
                 make it and its parents yours and searchable (`chmod u+rwx {}`)",
                dir.display()
            )))
        }
    };
    if !meta.is_dir() {
        return Err(Some(format!(
            "is a file, not a folder: tend loads your agent manifests (*.toml) from a folder \
             here, so none load. Move the file away (`mv {0} {0}.old && mkdir {0}`)",
            dir.display()
        )));
    }
    // Readable and searchable: names listed but not openable would look
    // like a problem with each file.
    let entries = nix::unistd::access(
        dir,
        nix::unistd::AccessFlags::R_OK | nix::unistd::AccessFlags::X_OK,
    )
    .map_err(std::io::Error::from)
    .and_then(|()| std::fs::read_dir(dir))
    .map_err(|e| {
        Some(format!(
            "cannot read this folder ({e}), so none of your agent manifests load; run \
             `chmod u+rwx {}`",
            dir.display()
        ))
    })?;
    Ok(entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect())
}
