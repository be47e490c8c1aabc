//! Writing an agent's hook configuration: a backup first, then the new text
//! next to the old file, renamed over it (keeping its mode, through a
//! symlink).

use crate::error::ErrorKind;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::config::ConfigFile;
use crate::error::CliError;

fn resolve_symlink(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// `YYYYmmddTHHMMSSZ` for now, in UTC.
fn timestamp() -> String {
    chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string()
}

/// Copies `path` to `<path>.tend-backup-<timestamp>` next to it.
pub(super) fn backup_file(path: &Path) -> Result<PathBuf, CliError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let stamp = timestamp();
    let mut candidate = path.with_file_name(format!("{name}.tend-backup-{stamp}"));
    let mut n = 2;
    while candidate.exists() {
        candidate = path.with_file_name(format!("{name}.tend-backup-{stamp}-{n}"));
        n += 1;
    }
    std::fs::copy(path, &candidate).map_err(|e| {
        CliError::new(
            ErrorKind::HooksWriteFailed,
            format!(
                "cannot back up {} to {}: {e}; nothing was changed",
                path.display(),
                candidate.display()
            ),
        )
    })?;
    Ok(candidate)
}

/// Writes `text` to the configuration file (atomically, keeping its mode and
/// following a symlink), backing the old file up first. Returns the backup.
pub(super) fn write_config(
    path: &Path,
    file: &ConfigFile,
    text: &str,
) -> Result<Option<PathBuf>, CliError> {
    let target = resolve_symlink(path);
    let fail = |what: String| CliError::new(ErrorKind::HooksWriteFailed, what);
    let dir = target
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir)
        .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
    let backup = if file.exists {
        Some(backup_file(&target)?)
    } else {
        None
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let tmp = dir.join(format!(".{name}.tend-tmp-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(&target) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, &target)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(format!(
            "cannot write {}: {e}; the file was not changed",
            target.display()
        )));
    }
    Ok(backup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_is_well_formed() {
        let t = timestamp();
        assert_eq!(t.len(), 16, "{t}");
        assert!(t.starts_with("20"));
        assert!(t.ends_with('Z'));
        assert_eq!(t.as_bytes()[8], b'T');
        assert!(
            t[..8]
                .bytes()
                .chain(t[9..15].bytes())
                .all(|b| b.is_ascii_digit()),
            "{t}"
        );
    }

    #[test]
    fn backups_never_overwrite_each_other() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{}\n").expect("write");
        let a = backup_file(&path).expect("backup");
        let b = backup_file(&path).expect("backup");
        assert_ne!(a, b);
        assert_eq!(std::fs::read_to_string(&b).expect("read"), "{}\n");
    }
}
