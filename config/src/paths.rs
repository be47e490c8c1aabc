//! Where tend keeps its sockets, state and logs.
//!
//! * runtime (sockets): `$XDG_RUNTIME_DIR/tend/`, else `/tmp/tend-$UID/`,
//!   created 0700; one daemon socket per tmux server.
//! * state (parks, snoozes, seen marks): `$XDG_STATE_HOME/tend/`, else
//!   `~/.local/state/tend/`, created 0700.
//!
//! Both are refused when they are not the user's own, private folder
//! (another owner, any permission for group or others), with the folder,
//! its owner or mode and the fix.
//! * log: the daemon writes `<runtime>/<server>.log`.

use crate::error::ErrorKind;
use std::io::Write;
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

/// The directory holding daemon sockets and logs, created with mode
/// 0700, and refused (as ssh refuses a bad `~/.ssh`) when it is not a
/// folder, belongs to another user or others may use it: every command
/// that connects to the daemon comes through here.
pub fn runtime_dir() -> Result<PathBuf, CliError> {
    let dir = match env_dir("XDG_RUNTIME_DIR") {
        Some(d) => d.join("tend"),
        None => PathBuf::from(format!("/tmp/tend-{}", nix::unistd::getuid())),
    };
    ensure_private_dir(&dir, Private::Runtime)?;
    Ok(dir)
}

/// The state directory's path, whether or not it exists or can be used.
pub fn state_dir_path() -> Result<PathBuf, CliError> {
    Ok(match env_dir("XDG_STATE_HOME") {
        Some(d) => d.join("tend"),
        None => match env_dir("HOME") {
            Some(h) => h.join(".local/state/tend"),
            None => runtime_dir()?.join("state"),
        },
    })
}

/// The directory holding persistent state, created with mode 0700 and
/// refused like the runtime directory ([`runtime_dir`]).
pub fn state_dir() -> Result<PathBuf, CliError> {
    let dir = state_dir_path()?;
    ensure_private_dir(&dir, Private::State)?;
    Ok(dir)
}

/// Which private directory, for the words of its errors.
#[derive(Clone, Copy)]
enum Private {
    Runtime,
    State,
}

impl Private {
    fn holds(self) -> &'static str {
        match self {
            Private::Runtime => "its sockets and log",
            Private::State => "its parks, snoozes and marks",
        }
    }

    fn variable(self) -> &'static str {
        match self {
            Private::Runtime => "XDG_RUNTIME_DIR",
            Private::State => "XDG_STATE_HOME",
        }
    }

    fn code(self) -> crate::error::ErrorKind {
        match self {
            Private::Runtime => ErrorKind::RuntimeDir,
            Private::State => ErrorKind::StateDir,
        }
    }
}

/// The error code of a directory refused because someone else could use
/// it (another owner, open permissions): nothing tend does should go on.
pub const UNSAFE_DIR: crate::error::ErrorKind = ErrorKind::UnsafeDir;

fn ensure_private_dir(dir: &Path, which: Private) -> Result<(), CliError> {
    use std::os::unix::fs::MetadataExt;
    // The parents first: nothing is created inside a folder someone else
    // controls.
    check_parents(dir, which)?;
    if std::fs::symlink_metadata(dir).is_err() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| {
                CliError::new(
                    which.code(),
                    format!(
                        "cannot create {}: {e}; set {} to a folder of yours",
                        dir.display(),
                        which.variable()
                    ),
                )
            })?;
    }
    let meta = std::fs::metadata(dir)
        .map_err(|e| CliError::new(which.code(), format!("cannot read {}: {e}", dir.display())))?;
    if !meta.is_dir() {
        return Err(CliError::new(
            which.code(),
            format!(
                "{} is not a folder: tend keeps {} in a folder there. Move it away (`mv {} {}.old`), and tend creates the folder",
                dir.display(),
                which.holds(),
                dir.display(),
                dir.display()
            ),
        ));
    }
    let me = nix::unistd::getuid().as_raw();
    if meta.uid() != me {
        let owner = owner_name(meta.uid());
        return Err(CliError::new(
            UNSAFE_DIR,
            format!(
                "{} belongs to {owner}, not to you: tend keeps {} only in a folder of yours. Remove it (`sudo rm -r {}`), or set {} to a folder of yours",
                dir.display(),
                which.holds(),
                dir.display(),
                which.variable()
            ),
        ));
    }
    let mode = meta.permissions().mode() & 0o7777;
    // Others who can write there could replace what tend keeps: refused.
    // Others who can only read: the runtime folder's log holds what
    // agents printed, refused too; the state folder's parks and notes are
    // the user's own words, a warning (`readable_by_others`).
    let others_write = mode & 0o022 != 0;
    if others_write || (mode & 0o077 != 0 && matches!(which, Private::Runtime)) {
        let could = if others_write { "replace" } else { "read" };
        return Err(CliError::new(
            UNSAFE_DIR,
            format!(
                "{} has mode {mode:04o}: other users could {could} {} there, so tend will not use it. Run `chmod 700 {}` (or remove the folder, and tend creates it again with mode 0700)",
                dir.display(),
                which.holds(),
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// A sentence when other users can read the state folder `dir` (its mode
/// lets them in, though not write): tend uses it, and says so.
pub fn readable_by_others(dir: &Path) -> Option<String> {
    let mode = std::fs::metadata(dir).ok()?.permissions().mode() & 0o7777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "{} has mode {mode:04o}: other users can read your parks' notes and stop reasons \
             there (not change them). Run `chmod 700 {}` to keep them to yourself",
            dir.display(),
            dir.display()
        )
    })
}

/// Whether someone else could swap a folder on the way to `dir` for one of
/// their own, as OpenSSH's StrictModes asks of `~/.ssh`: each folder that
/// holds it, up to and including the first one the user owns, must belong
/// to the user or root, and no one else may write to it — unless it is
/// root's and has the sticky bit (`/tmp`), where no one can rename what is
/// not theirs. The folders are those of the real path: a symbolic link on
/// the way is followed, and the folders it leads through are checked.
fn check_parents(dir: &Path, which: Private) -> Result<(), CliError> {
    let cannot_read = |p: &Path, e: std::io::Error| {
        CliError::new(which.code(), format!("cannot read {}: {e}", p.display()))
    };
    // `dir` itself when it exists (it may be a link), else the nearest
    // folder above it that does: tend makes the rest, 0700.
    let (existing, is_dir) = match dir.ancestors().find(|p| p.exists()) {
        Some(p) => (p, p == dir),
        None => return Ok(()),
    };
    let real = std::fs::canonicalize(existing).map_err(|e| cannot_read(existing, e))?;
    let first = if is_dir {
        real.parent()
    } else {
        Some(real.as_path())
    };
    let me = nix::unistd::getuid().as_raw();
    for holder in first.into_iter().flat_map(Path::ancestors) {
        let meta = std::fs::metadata(holder).map_err(|e| cannot_read(holder, e))?;
        if let Some(why) = unsafe_holder(&meta, me) {
            return Err(CliError::new(
                UNSAFE_DIR,
                format!(
                    "{} {why}, so they could put a folder of their own in place of {}: tend keeps {} only under folders that you or root own and no one else can write. Set {} to a folder of yours (such as /run/user/{me}, or a folder in your home created with mode 0700)",
                    holder.display(),
                    dir.display(),
                    which.holds(),
                    which.variable()
                ),
            ));
        }
        if std::os::unix::fs::MetadataExt::uid(&meta) == me {
            break;
        }
    }
    Ok(())
}

/// Why a folder that holds tend's folder is not safe, if it is not.
fn unsafe_holder(meta: &std::fs::Metadata, me: u32) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.permissions().mode() & 0o7777;
    if meta.uid() != me && meta.uid() != 0 {
        return Some(format!("belongs to {}", owner_name(meta.uid())));
    }
    let sticky_root = meta.uid() == 0 && mode & 0o1000 != 0;
    (mode & 0o022 != 0 && !sticky_root)
        .then(|| format!("has mode {mode:04o}: other users can write to it"))
}

/// `name (uid N)`, or `uid N` for a user with no name.
fn owner_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map_or_else(
            || format!("uid {uid}"),
            |u| format!("{} (uid {uid})", u.name),
        )
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

/// The state file (parks, snoozes, flags, reports) of the tmux server at
/// `tmux_socket`, in the state folder.
pub fn state_file(tmux_socket: &Path) -> Result<PathBuf, CliError> {
    Ok(state_file_in(&state_dir()?, tmux_socket))
}

/// The state file for a tmux server in folder `dir`.
pub fn state_file_in(dir: &Path, tmux_socket: &Path) -> PathBuf {
    dir.join(format!("{}.json", server_name(tmux_socket)))
}

/// Writes `text` to `path` atomically: a temporary file in the same
/// directory, fsync, rename over, fsync the directory. On failure the old
/// file is untouched.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!(
            "could not save state to {} ({e}); parks, snoozes and flags stay in memory and will be saved when \
             the directory is writable again",
            path.display()
        )
    })
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

    fn with_dir(f: impl FnOnce(&Path)) {
        let root = tempfile::tempdir().unwrap();
        f(&root.path().join("tend"));
    }

    #[test]
    fn a_private_dir_is_created_0700() {
        with_dir(|d| {
            ensure_private_dir(&d.join("a/b"), Private::Runtime).unwrap();
            for p in [d.join("a"), d.join("a/b")] {
                let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o700, "{}", p.display());
            }
        });
    }

    #[test]
    fn an_open_or_foreign_dir_is_refused_with_the_fix() {
        with_dir(|d| {
            std::fs::create_dir(d).unwrap();
            for (mode, could) in [
                (0o777, "replace"),
                (0o755, "read"),
                (0o701, "read"),
                (0o1777, "replace"),
                (0o720, "replace"),
            ] {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode)).unwrap();
                let e = ensure_private_dir(d, Private::Runtime).unwrap_err();
                assert_eq!(e.kind, UNSAFE_DIR);
                assert_eq!(
                    e.message,
                    format!(
                        "{} has mode {mode:04o}: other users could {could} its sockets \
                         and log there, so tend will not use it. Run `chmod 700 {}` (or remove \
                         the folder, and tend creates it again with mode 0700)",
                        d.display(),
                        d.display()
                    )
                );
                // Refused, not quietly mended.
                let now = std::fs::metadata(d).unwrap().permissions().mode() & 0o7777;
                assert_eq!(now, mode);
            }
            for mode in [0o700, 0o500, 0o000] {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode)).unwrap();
                ensure_private_dir(d, Private::State).unwrap();
                assert_eq!(readable_by_others(d), None);
            }
            // A state folder others can read but not write: used, with a
            // sentence; one they can write: refused.
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
            ensure_private_dir(d, Private::State).unwrap();
            assert!(readable_by_others(d)
                .is_some_and(|w| w.contains("other users can read your parks' notes")));
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o775)).unwrap();
            let e = ensure_private_dir(d, Private::State).unwrap_err();
            assert!(
                e.message.contains("other users could replace its parks"),
                "{}",
                e.message
            );
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
            // Another owner (the test may not run as root: then skip).
            if nix::unistd::getuid().is_root() {
                nix::unistd::chown(d, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
                let e = ensure_private_dir(d, Private::State).unwrap_err();
                assert_eq!(e.kind, UNSAFE_DIR);
                assert!(
                    e.message
                        .starts_with(&format!("{} belongs to ", d.display()))
                        && e.message
                            .contains("(uid 65534), not to you: tend keeps its parks")
                        && e.message
                            .ends_with("or set XDG_STATE_HOME to a folder of yours"),
                    "{}",
                    e.message
                );
            }
        });
    }

    #[test]
    fn a_folder_that_others_can_write_or_own_above_tend_is_refused() {
        let root = tempfile::tempdir().unwrap();
        // XDG_RUNTIME_DIR as another user's world-writable folder: they
        // could rename tend/ and put their own in its place.
        let shared = root.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let dir = shared.join("tend");
        let e = ensure_private_dir(&dir, Private::Runtime).unwrap_err();
        assert_eq!(e.kind, UNSAFE_DIR);
        assert_eq!(
            e.message,
            format!(
                "{} has mode 0777: other users can write to it, so they could put a folder \
                 of their own in place of {}: tend keeps its sockets and log only under \
                 folders that you or root own and no one else can write. Set \
                 XDG_RUNTIME_DIR to a folder of yours (such as /run/user/{}, or a folder in \
                 your home created with mode 0700)",
                shared.display(),
                dir.display(),
                nix::unistd::getuid()
            )
        );
        assert!(!dir.exists(), "nothing is made inside such a folder");
        // Made before the folder opened up: refused all the same.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o700)).unwrap();
        ensure_private_dir(&dir, Private::Runtime).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o770)).unwrap();
        assert_eq!(
            ensure_private_dir(&dir, Private::Runtime).unwrap_err().kind,
            UNSAFE_DIR
        );
        // Through a link: the folders the link leads through count.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let mine = root.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::os::unix::fs::symlink(&dir, mine.join("tend")).unwrap();
        assert_eq!(
            ensure_private_dir(&mine.join("tend"), Private::State)
                .unwrap_err()
                .kind,
            UNSAFE_DIR
        );
        // Another owner, even with no one else allowed to write (root only).
        if nix::unistd::getuid().is_root() {
            std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
            nix::unistd::chown(&shared, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
            let e = ensure_private_dir(&dir, Private::Runtime).unwrap_err();
            assert!(
                e.message
                    .starts_with(&format!("{} belongs to ", shared.display())),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn sticky_folders_of_root_and_the_users_own_folders_hold_tend() {
        // /tmp: root's, sticky, everyone writes; no one renames another's.
        let tmp = std::env::temp_dir();
        let dir = tmp.join(format!("tend-paths-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        ensure_private_dir(&dir.join("tend"), Private::Runtime).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_in_the_way_is_named() {
        with_dir(|d| {
            std::fs::write(d, "x").unwrap();
            let e = ensure_private_dir(d, Private::State).unwrap_err();
            assert_eq!(e.code(), "state_dir");
            assert_eq!(
                e.message,
                format!(
                    "{} is not a folder: tend keeps its parks, snoozes and marks in a folder \
                     there. Move it away (`mv {} {}.old`), and tend creates the folder",
                    d.display(),
                    d.display(),
                    d.display()
                )
            );
        });
    }
}
