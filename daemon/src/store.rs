//! The daemon's persistent state file: parks, snoozes, stop flags and
//! self-reports survive a restart. One JSON file per tmux
//! server in `$XDG_STATE_HOME/tend/` (its format: `tend_core::store`),
//! written atomically (write, fsync, rename). A file that cannot be read is
//! set aside with a message, never a crash and never silently dropped.

use std::path::{Path, PathBuf};

pub use tend_core::store::{parse, to_text, Loaded, VERSION};

/// The state file for a tmux server (its folder created, and refused when
/// it is not private: [`crate::paths::state_dir`]).
pub fn path(tmux_socket: &Path) -> Result<PathBuf, crate::error::CliError> {
    crate::paths::state_file(tmux_socket)
}

/// The state file for a tmux server in folder `dir`.
pub fn file_in(dir: &Path, tmux_socket: &Path) -> PathBuf {
    crate::paths::state_file_in(dir, tmux_socket)
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
                    "cannot read {} ({e}); starting without saved parks, snoozes and flags, and \
                     saving nothing over them until the file can be read (tend tries again \
                     at each change)",
                    path.display()
                )],
                unread: true,
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

/// Keeps a save from overwriting a state file that could not be read:
/// the parks in it would be lost (a user who fixes the folder's
/// permissions after tend started would find them gone at the next
/// restart). Until the file has been read, each save first tries to read
/// it; once it can, what it held is taken into the table and then saved
/// with the rest.
#[derive(Debug, Default)]
pub struct SaveGate {
    unread: bool,
    said: bool,
}

/// What a save may do now.
#[derive(Debug)]
pub enum MaySave {
    /// Write: the file was read (or never existed).
    Yes,
    /// The file could be read only now: take what it holds first, then
    /// write.
    AfterMerging(Box<Loaded>),
    /// The file still cannot be read: write nothing (and try again later).
    No,
}

impl SaveGate {
    /// The gate after the first load.
    pub fn after_load(loaded: &Loaded) -> SaveGate {
        SaveGate {
            unread: loaded.unread,
            said: false,
        }
    }

    /// Before writing `path` at `now` (Unix seconds).
    pub fn before_save(&mut self, path: &Path, now: u64) -> MaySave {
        if !self.unread {
            return MaySave::Yes;
        }
        let loaded = load(path, now);
        if loaded.unread {
            if !std::mem::replace(&mut self.said, true) {
                crate::say!(
                    "not saving parks, snoozes and flags: {} could not be read, and a save \
                     would replace what it holds; fix its permissions (`chmod u+rw`) and tend \
                     reads it, then saves",
                    path.display()
                );
            }
            return MaySave::No;
        }
        self.unread = false;
        for w in &loaded.warnings {
            crate::say!("{w}");
        }
        crate::say!(
            "{} can be read again: its parks, snoozes and flags are back",
            path.display()
        );
        MaySave::AfterMerging(Box::new(loaded))
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

pub use crate::paths::write_atomic;

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
    fn a_file_that_could_not_be_read_is_never_saved_over() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("s.json");
        // Unreadable at start (a folder where the file is stands for a
        // permission denied, which root does not get).
        std::fs::create_dir(&p).expect("in the way");
        let first = load(&p, 1_000);
        assert!(first.unread);
        assert!(
            first.warnings[0].contains("saving nothing over them"),
            "{:?}",
            first.warnings
        );
        let mut gate = SaveGate::after_load(&first);
        assert!(matches!(gate.before_save(&p, 1_001), MaySave::No));
        assert!(p.is_dir(), "nothing written over it");
        // Readable again, holding a park the daemon never saw.
        std::fs::remove_dir(&p).expect("rmdir");
        let mut parks = ParkStore::new();
        parks.park("%3", "keepme", None, 900).expect("park");
        write_atomic(
            &p,
            &to_text(
                &parks,
                &StopFlags::new(),
                &ReportBook::default(),
                &Default::default(),
            ),
        )
        .expect("write");
        match gate.before_save(&p, 1_002) {
            MaySave::AfterMerging(l) => {
                assert_eq!(
                    l.parks.park_of("%3").map(|p| p.note.as_str()),
                    Some("keepme")
                );
            }
            other => panic!("not merged: {other:?}"),
        }
        assert!(matches!(gate.before_save(&p, 1_003), MaySave::Yes));
        // A file that was read, or was never there, is saved at once.
        let mut gate = SaveGate::after_load(&load(&dir.path().join("new.json"), 1));
        assert!(matches!(
            gate.before_save(&dir.path().join("new.json"), 2),
            MaySave::Yes
        ));
    }

    #[test]
    fn unwritable_directory_is_a_message() {
        let e = write_atomic(Path::new("/proc/tend-cannot-write/state.json"), "{}").unwrap_err();
        assert!(e.contains("stay in memory"), "{e}");
    }
}
