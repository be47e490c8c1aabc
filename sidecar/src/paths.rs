//! Where tend keeps its sockets, state and logs.
//!
//! * runtime (sockets): `$XDG_RUNTIME_DIR/tend/`, else `/tmp/tend-$UID/`,
//!   created 0700; one daemon socket per tmux server.
//! * state (parks, snoozes, seen marks): `$XDG_STATE_HOME/tend/`, else
//!   `~/.local/state/tend/`.
//! * log: the daemon writes `<runtime>/<server>.log`.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::CliError;

fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// `$XDG_CONFIG_HOME/tend` (else `~/.config/tend`): config.toml and the
/// user's agent manifests.
pub fn config_dir() -> Option<PathBuf> {
    let base = env_dir("XDG_CONFIG_HOME")
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("tend"))
}

/// The directory holding daemon sockets, created with mode 0700.
pub fn runtime_dir() -> Result<PathBuf, CliError> {
    let dir = match env_dir("XDG_RUNTIME_DIR") {
        Some(d) => d.join("tend"),
        None => PathBuf::from(format!("/tmp/tend-{}", nix::unistd::getuid())),
    };
    ensure_private_dir(&dir)?;
    Ok(dir)
}

/// The directory holding persistent state, created with mode 0700.
pub fn state_dir() -> Result<PathBuf, CliError> {
    let dir = match env_dir("XDG_STATE_HOME") {
        Some(d) => d.join("tend"),
        None => match env_dir("HOME") {
            Some(h) => h.join(".local/state/tend"),
            None => runtime_dir()?.join("state"),
        },
    };
    ensure_private_dir(&dir)?;
    Ok(dir)
}

fn ensure_private_dir(dir: &Path) -> Result<(), CliError> {
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| {
                CliError::new(
                    "runtime_dir",
                    format!(
                        "cannot create {}: {e}; set XDG_RUNTIME_DIR to a writable directory",
                        dir.display()
                    ),
                )
            })?;
    }
    let meta = std::fs::metadata(dir)
        .map_err(|e| CliError::new("runtime_dir", format!("cannot read {}: {e}", dir.display())))?;
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != nix::unistd::getuid().as_raw() {
        return Err(CliError::new(
            "runtime_dir",
            format!(
                "{} belongs to another user; tend will not put its sockets there. Set XDG_RUNTIME_DIR to a directory of yours",
                dir.display()
            ),
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// A file-name-safe name for a tmux server, from its socket path: the
/// socket's name plus a short hash of the full path (two servers named
/// `default` under different uids or TMUX_TMPDIRs do not collide).
pub fn server_name(tmux_socket: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tmux_socket.hash(&mut h);
    let base: String = tmux_socket
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "default".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{base}-{:08x}", h.finish() as u32)
}

/// The daemon's control socket for a tmux server.
pub fn control_socket(tmux_socket: &Path) -> Result<PathBuf, CliError> {
    Ok(runtime_dir()?.join(format!("{}.sock", server_name(tmux_socket))))
}

/// The socket taps connect to.
pub fn tap_socket(tmux_socket: &Path) -> Result<PathBuf, CliError> {
    Ok(runtime_dir()?.join(format!("{}.tap", server_name(tmux_socket))))
}

/// The daemon's log file.
pub fn log_file(tmux_socket: &Path) -> Result<PathBuf, CliError> {
    Ok(runtime_dir()?.join(format!("{}.log", server_name(tmux_socket))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_are_safe_and_distinct() {
        let a = server_name(Path::new("/tmp/tmux-0/default"));
        let b = server_name(Path::new("/tmp/tmux-1000/default"));
        assert!(a.starts_with("default-"));
        assert_ne!(a, b);
        let c = server_name(Path::new("/tmp/x/it's; $(rm -rf) #{x}"));
        assert!(c
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    }
}
