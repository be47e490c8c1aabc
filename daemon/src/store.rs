//! The daemon's persistent state file: parks, snoozes, stop flags and
//! self-reports survive a restart. One JSON file per tmux
//! server in `$XDG_STATE_HOME/tend/` (its format: `tend_core::store`),
//! written atomically (write, fsync, rename). A file that cannot be read is
//! set aside with a message, never a crash and never silently dropped.

use std::io::Write;
use std::path::{Path, PathBuf};

pub use tend_core::store::{parse, to_text, Loaded, VERSION};

/// The state file for a tmux server (its folder created, and refused when
/// it is not private: [`crate::paths::state_dir`]).
pub fn path(tmux_socket: &Path) -> Result<PathBuf, crate::error::CliError> {
    Ok(file_in(&crate::paths::state_dir()?, tmux_socket))
}

/// The state file for a tmux server in folder `dir`.
pub fn file_in(dir: &Path, tmux_socket: &Path) -> PathBuf {
    dir.join(format!("{}.json", crate::paths::server_name(tmux_socket)))
}

/// Loads the state file. A missing file is an empty state; a damaged one is
/// renamed to `<file>.corrupt-<unix time>` and reported in the warnings.
pub fn load(path: &Path, now: u64) -> Loaded {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::default(),
        Err(e) => {
            return Loaded {
                warnings: vec![format!(
                    "cannot read {} ({e}); starting without saved parks, snoozes and flags",
                    path.display()
                )],
                ..Loaded::default()
            }
        }
    };
    match parse(&text, now) {
        Ok(l) => l,
        Err(problem) => {
            let aside = path.with_extension(format!("json.corrupt-{now}"));
            let moved = std::fs::rename(path, &aside).is_ok();
            Loaded {
                warnings: vec![if moved {
                    format!(
                        "{} is damaged ({problem}); it was moved to {} and tend starts without saved parks, \
                         snoozes and flags",
                        path.display(),
                        aside.display()
                    )
                } else {
                    format!(
                        "{} is damaged ({problem}) and could not be moved aside",
                        path.display()
                    )
                }],
                ..Loaded::default()
            }
        }
    }
}

/// Writes the daemon's persistent state for a backend thread, and says a
/// failing spell once in the log instead of at every retry.
#[derive(Debug, Default)]
pub struct Persister {
    failing: bool,
}

impl Persister {
    /// Writes `text` to `path` ([`write_atomic`]). False when it failed:
    /// the table then hears of it ([`tend_core::Input::PersistFailed`])
    /// and writes again a second later.
    pub fn write(&mut self, path: &Path, text: &str) -> bool {
        match write_atomic(path, text) {
            Ok(()) => {
                if std::mem::take(&mut self.failing) {
                    crate::say!("state saved to {} again", path.display());
                }
                true
            }
            Err(e) => {
                if !self.failing {
                    crate::say!("{e}");
                }
                self.failing = true;
                false
            }
        }
    }
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
    use tend_attention::park::ParkStore;
    use tend_attention::report::ReportBook;
    use tend_attention::stopflag::StopFlags;

    #[test]
    fn round_trip_and_corrupt_file_set_aside() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("s.json");
        let mut parks = ParkStore::new();
        parks
            .park("%3", "waiting on CI", None, 1_000)
            .expect("park");
        let mut flags = StopFlags::new();
        flags.request("%4", "wrap up", "user", 1_000).expect("flag");
        write_atomic(
            &p,
            &to_text(&parks, &flags, &ReportBook::default(), &Default::default()),
        )
        .expect("write");
        let l = load(&p, 1_100);
        assert!(l.warnings.is_empty(), "{:?}", l.warnings);
        assert_eq!(
            l.parks.park_of("%3").map(|p| p.note.as_str()),
            Some("waiting on CI")
        );
        assert!(l.flags.get("%4").is_some());
        std::fs::write(&p, "{ not json").expect("corrupt");
        let l = load(&p, 1_200);
        assert_eq!(l.warnings.len(), 1);
        assert!(l.warnings[0].contains("damaged"), "{}", l.warnings[0]);
        assert!(!p.exists());
        assert!(dir.path().join("s.json.corrupt-1200").exists());
    }

    #[test]
    fn unwritable_directory_is_a_message() {
        let e = write_atomic(Path::new("/proc/tend-cannot-write/state.json"), "{}").unwrap_err();
        assert!(e.contains("stay in memory"), "{e}");
    }
}
