//! The daemon's persistent state: parks, snoozes, stop flags and
//! self-reports survive a restart. One JSON file per tmux
//! server in `$XDG_STATE_HOME/tend/`, written atomically (write, fsync,
//! rename). A file that cannot be read is set aside with a message, never
//! a crash and never silently dropped.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tend_attention::park::ParkStore;
use tend_attention::report::ReportBook;
use tend_attention::stopflag::StopFlags;

/// Version of the file format.
pub const VERSION: u64 = 1;

/// What was loaded.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Parks and snoozes.
    pub parks: ParkStore,
    /// Stop flags.
    pub flags: StopFlags,
    /// Self-reports.
    pub reports: ReportBook,
    /// Things the user should hear about (stale parks dropped, a corrupt
    /// file set aside).
    pub warnings: Vec<String>,
}

/// The state file for a tmux server (its folder created, and refused when
/// it is not private: [`crate::paths::state_dir`]).
pub fn path(tmux_socket: &Path) -> Result<PathBuf, crate::error::CliError> {
    Ok(file_in(&crate::paths::state_dir()?, tmux_socket))
}

/// The state file for a tmux server in folder `dir`.
pub fn file_in(dir: &Path, tmux_socket: &Path) -> PathBuf {
    dir.join(format!("{}.json", crate::paths::server_name(tmux_socket)))
}

/// The file's text for the current state.
pub fn to_text(parks: &ParkStore, flags: &StopFlags, reports: &ReportBook) -> String {
    let parks: Value = serde_json::from_str(&parks.to_text()).unwrap_or(Value::Null);
    let v = json!({
        "version": VERSION,
        "parks": parks,
        "flags": flags,
        "reports": reports,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// Parses a state file's text. `now` is Unix seconds (stale parks go).
pub fn parse(text: &str, now: u64) -> Result<Loaded, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    match v.get("version").and_then(Value::as_u64) {
        Some(VERSION) => {}
        Some(other) => {
            return Err(format!(
                "written by a different tend (format version {other})"
            ))
        }
        None => return Err("no format version".into()),
    }
    let mut out = Loaded::default();
    if let Some(p) = v.get("parks").filter(|p| !p.is_null()) {
        let (parks, warnings) =
            ParkStore::load(&p.to_string(), now).map_err(|e| format!("parks: {}", e.0))?;
        out.parks = parks;
        out.warnings.extend(warnings);
    }
    if let Some(f) = v.get("flags").filter(|f| !f.is_null()) {
        out.flags = serde_json::from_value(f.clone()).map_err(|e| format!("stop flags: {e}"))?;
    }
    if let Some(r) = v.get("reports").filter(|r| !r.is_null()) {
        out.reports = serde_json::from_value(r.clone()).map_err(|e| format!("reports: {e}"))?;
    }
    Ok(out)
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
    /// the table then hears of it ([`crate::daemon::core::Event::PersistFailed`])
    /// and writes again a second later.
    pub fn write(&mut self, path: &Path, text: &str) -> bool {
        match write_atomic(path, text) {
            Ok(()) => {
                if std::mem::take(&mut self.failing) {
                    eprintln!("tend: state saved to {} again", path.display());
                }
                true
            }
            Err(e) => {
                if !self.failing {
                    eprintln!("tend: {e}");
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
        write_atomic(&p, &to_text(&parks, &flags, &ReportBook::default())).expect("write");
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
