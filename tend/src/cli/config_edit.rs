//! Editing `config.toml` for `tend remote add` and `tend remote remove`:
//! the user's comments and layout kept (`toml_edit`), the result read back
//! with the daemon's own reader (`tend_config::config::parse`) before it is
//! written, so an edit never leaves a file the daemon refuses. Reading the
//! file is `tend-config`'s; changing it is the command line's, here.

use crate::error::ErrorKind;
use std::path::Path;

use crate::config::{check_name, RemoteConfig};
use crate::error::CliError;

fn read_doc(path: &Path) -> Result<toml_edit::DocumentMut, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(CliError::new(
                ErrorKind::BadConfig,
                format!("cannot read {}: {e}", path.display()),
            ))
        }
    };
    // The whole file must be a valid configuration before it is changed.
    crate::config::parse(&path.display().to_string(), &text)?;
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| CliError::new(ErrorKind::BadConfig, format!("{}: {e}", path.display())))
}

fn write_doc(path: &Path, doc: &toml_edit::DocumentMut) -> Result<(), CliError> {
    let text = doc.to_string();
    crate::config::parse(&path.display().to_string(), &text)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::new(
                ErrorKind::BadConfig,
                format!("cannot create {}: {e}", dir.display()),
            )
        })?;
    }
    crate::paths::write_atomic(path, &text)
        .map_err(|e| CliError::new(ErrorKind::BadConfig, e.to_string()))
}

/// Adds `[remotes.NAME]` to the file at `path`, keeping everything else
/// (comments included) as it was.
pub fn add(path: &Path, name: &str, r: &RemoteConfig) -> Result<(), CliError> {
    check_name(name).map_err(|e| CliError::new(ErrorKind::BadRemote, e))?;
    r.validate()
        .map_err(|e| CliError::new(ErrorKind::BadRemote, format!("remote {name}: {e}")))?;
    let mut doc = read_doc(path)?;
    let remotes = doc
        .entry("remotes")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| {
            CliError::new(
                ErrorKind::BadConfig,
                format!("{}: `remotes` is not a table", path.display()),
            )
        })?;
    if remotes.contains_key(name) {
        return Err(CliError::new(
            ErrorKind::DuplicateRemote,
            format!(
                "a remote named {name} exists already (see `tend remote list`); remove it first \
                 with `tend remote remove {name}`"
            ),
        ));
    }
    let mut t = toml_edit::Table::new();
    t.insert("dest", toml_edit::value(r.dest.as_str()));
    if let Some(c) = &r.tend_command {
        t.insert("tend_command", toml_edit::value(c.as_str()));
    }
    if !r.ssh_options.is_empty() {
        let mut a = toml_edit::Array::new();
        for o in &r.ssh_options {
            a.push(o.as_str());
        }
        t.insert("ssh_options", toml_edit::value(a));
    }
    remotes.insert(name, toml_edit::Item::Table(t));
    write_doc(path, &doc)
}

/// Removes `[remotes.NAME]`.
pub fn remove(path: &Path, name: &str) -> Result<(), CliError> {
    let mut doc = read_doc(path)?;
    let unknown = || {
        CliError::new(
            ErrorKind::UnknownRemote,
            format!("no remote named {name} (see `tend remote list`)"),
        )
    };
    let remotes = doc
        .get_mut("remotes")
        .and_then(|i| i.as_table_mut())
        .ok_or_else(unknown)?;
    remotes.remove(name).ok_or_else(unknown)?;
    if remotes.is_empty() {
        doc.remove("remotes");
    }
    write_doc(path, &doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(dest: &str) -> RemoteConfig {
        RemoteConfig {
            dest: dest.into(),
            tend_command: None,
            ssh_options: vec![],
        }
    }

    #[test]
    fn add_and_remove_keep_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before =
            "# my settings\n[notifications]\n# quiet at night\nquiet_hours = \"22:00-07:00\"\n";
        std::fs::write(&path, before).unwrap();
        let r = RemoteConfig {
            dest: "me@build".into(),
            tend_command: Some("~/bin/tend".into()),
            ssh_options: vec!["-p".into(), "2222".into()],
        };
        add(&path, "build-box", &r).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            format!(
                "{before}\n[remotes.build-box]\ndest = \"me@build\"\ntend_command = \"~/bin/tend\"\nssh_options = [\"-p\", \"2222\"]\n"
            )
        );
        let cfg = crate::config::parse("c", &text).unwrap();
        assert_eq!(cfg.remotes.get("build-box"), Some(&r));
        let e = add(&path, "build-box", &remote("other")).unwrap_err();
        assert_eq!(e.code(), "duplicate_remote");
        let e = add(&path, "bad:name", &remote("other")).unwrap_err();
        assert_eq!(e.code(), "bad_remote");
        let e = remove(&path, "nope").unwrap_err();
        assert_eq!(e.code(), "unknown_remote");
        remove(&path, "build-box").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    }
}
