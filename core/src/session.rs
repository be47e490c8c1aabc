//! The agent's own word in a file: which session file each pane follows,
//! and what it says (`tend_detector::session_file`).
//!
//! A pane follows a file only while its committed agent's manifest names
//! a session-file format (`session_files = "claude-code"`) and the last
//! process sample found that agent's process, running: the file is the one
//! that process keeps (`<config>/sessions/<pid>.json`, the folder from the
//! agent's own environment), so the daemon never reads a file for a
//! process outside the user's panes. The daemon watches the followed
//! files ([`Effect::FollowFiles`]) and hands in every version it reads, or
//! that it is gone, or why it would not read it ([`Input::SessionFile`]).
//! A version counts only when it names the pane's agent process, by pid
//! and start time ([`session_file::tie`]). Anything else — the process
//! ends or stops, the file goes, a version that does not parse or is not
//! tied — hands the pane back to the screen at once.
//!
//!
//! This module is one pane's part; `follow.rs` keeps the set of files the
//! daemon follows for all of them.
//!
//! [`Effect::FollowFiles`]: crate::Effect::FollowFiles
//! [`Input::SessionFile`]: crate::Input::SessionFile

use std::time::Duration;

use tend_detector::manifest::SessionFiles;
use tend_detector::psp::Reading;
use tend_detector::session_file::{self, Follower};
use tend_protocol::PaneId;

use tend_detector::manifest::resume::{agent_home, HomeDir};

use crate::source::ProcSource;
use crate::watch::AgentProcess;

/// One file the daemon is to watch and read for a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowFile {
    /// The pane it speaks for.
    pub pane: PaneId,
    /// The file (absolute).
    pub path: String,
}

/// What the daemon read of a followed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRead {
    /// Its bytes (at most `session_file::MAX_FILE` + 1: a longer file is
    /// read that far, and rejected).
    Bytes(Vec<u8>),
    /// There is no such file (not yet, or no longer).
    Gone,
    /// It was not read: why (another user's, a symlink, a folder others
    /// can write, not a regular file, an error).
    Refused(String),
}

/// The file a pane follows: where, and the process it must name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) path: String,
    pid: u32,
    start_ticks: Option<u64>,
}

/// A pane's session file: the one it follows, what it said last.
#[derive(Debug, Default)]
pub(crate) struct PaneSession {
    pub(crate) target: Option<Target>,
    follower: Follower,
    /// What the last read came to, for `tend explain`.
    pub(crate) last: Option<String>,
    /// Reads refused (ownership, a symlink, …).
    refused: u64,
}

impl PaneSession {
    /// The file read as a state, while one is tied to the pane.
    pub(crate) fn reading(&self, now: Duration, screen_completed: bool) -> Option<Reading> {
        self.target.as_ref()?;
        self.follower.reading(now, screen_completed)
    }

    /// When the reading next changes on its own.
    pub(crate) fn next_deadline(&self) -> Option<Duration> {
        self.target.as_ref()?;
        self.follower.next_deadline()
    }

    /// For `tend explain` and `tend doctor`: the file followed, what it
    /// says, what was dropped.
    pub(crate) fn seen(&self) -> Option<tend_protocol::explain::SessionFile> {
        if self.target.is_none() && self.last.is_none() {
            return None;
        }
        let file = self.follower.file();
        let c = self.follower.counters();
        let rejected = c.last_rejected.as_ref();
        Some(tend_protocol::explain::SessionFile {
            path: self.target.as_ref().map(|t| t.path.clone()),
            status: file.and_then(|f| f.status).map(|s| s.as_str().to_owned()),
            waiting_for: file.and_then(|f| f.waiting_for.clone()),
            version: file
                .map(|f| f.version.clone())
                .or_else(|| rejected.and_then(|r| r.version().map(str::to_owned))),
            last: self.last.clone(),
            not_understood: rejected.map(|r| r.to_string()),
            read: c.read - c.untied,
            rejected: c.rejected,
            untied: c.untied,
            refused: self.refused,
        })
    }

    /// Follows the file `process` keeps, if the agent keeps one and runs;
    /// `folder` finds the folder (looked up only for a new process).
    /// Whether the target changed.
    pub(crate) fn retarget(
        &mut self,
        format: Option<SessionFiles>,
        process: Option<AgentProcess>,
        folder: impl FnOnce(u32) -> Option<String>,
    ) -> bool {
        let want = match (format, process) {
            (Some(SessionFiles::ClaudeCode), Some(p)) if !p.stopped => Some(p),
            _ => None,
        };
        let same = match (&self.target, &want) {
            (Some(t), Some(p)) => t.pid == p.pid && t.start_ticks == p.start_ticks,
            (None, None) => true,
            _ => false,
        };
        if same {
            return false;
        }
        self.follower.forget();
        self.target = want.and_then(|p| {
            let dir = folder(p.pid)?;
            Some(Target {
                path: format!("{dir}/{}", session_file::file_name(p.pid)),
                pid: p.pid,
                start_ticks: p.start_ticks,
            })
        });
        if let Some(t) = &self.target {
            self.last = Some(format!("following {}", t.path));
        }
        true
    }

    /// A read of the followed file at `now`; whether it is this pane's.
    pub(crate) fn take(&mut self, now: Duration, path: &str, read: FileRead) -> bool {
        let Some(t) = self.target.as_ref().filter(|t| t.path == path) else {
            return false;
        };
        match read {
            FileRead::Bytes(bytes) => {
                let parsed = session_file::parse(&bytes);
                let tied = match &parsed {
                    Ok(f) => session_file::tie(f, t.pid, t.start_ticks),
                    Err(_) => Ok(()),
                };
                self.last = Some(match (&parsed, tied) {
                    (Err(why), _) => format!("not understood: {why}"),
                    (Ok(_), Err(u)) => format!("not this pane's agent: {}", u.as_str()),
                    (Ok(f), Ok(())) => {
                        format!("read: {}", f.status.map_or("no status yet", |s| s.as_str()))
                    }
                });
                self.follower.apply(now, parsed, tied.is_ok());
            }
            FileRead::Gone => {
                self.last = Some("no file".to_owned());
                self.follower.forget();
            }
            FileRead::Refused(why) => {
                self.refused += 1;
                self.last = Some(format!("not read: {why}"));
                self.follower.forget();
            }
        }
        true
    }
}

/// Where the agent process `pid` keeps its session files: under its home
/// as its manifest's `homes` say, read with its own environment where the
/// daemon may read it, else under `home` (the daemon user's).
pub(crate) fn sessions_dir(
    procs: &mut dyn ProcSource,
    pid: u32,
    homes: &[HomeDir],
    home: Option<&str>,
) -> Option<String> {
    let (dir, _) = agent_home(homes, |name| procs.env_var(pid, name), home)?;
    Some(format!("{dir}/{}", session_file::FOLDER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(pid: u32, start: u64) -> Option<AgentProcess> {
        Some(AgentProcess {
            pid,
            start_ticks: Some(start),
            stopped: false,
            foreground: true,
        })
    }

    fn body(pid: u32, start: u64, status: &str) -> FileRead {
        FileRead::Bytes(
            format!(
                r#"{{"pid":{pid},"procStart":"{start}","sessionId":"s","cwd":"/w","version":"2.1.332","kind":"interactive","status":"{status}"}}"#
            )
            .into_bytes(),
        )
    }

    const CLAUDE: Option<SessionFiles> = Some(SessionFiles::ClaudeCode);

    fn dir(_: u32) -> Option<String> {
        Some("/home/u/.claude/sessions".to_owned())
    }

    #[test]
    fn a_pane_follows_the_file_of_its_agents_process_only() {
        let mut s = PaneSession::default();
        assert!(s.retarget(CLAUDE, proc(4242, 900), dir));
        assert_eq!(
            s.target.as_ref().map(|t| t.path.as_str()),
            Some("/home/u/.claude/sessions/4242.json")
        );
        // The same process: nothing to do (the folder is not looked up).
        assert!(!s.retarget(CLAUDE, proc(4242, 900), |_| panic!("looked up")));
        // Another file is not the pane's.
        assert!(!s.take(ms(1), "/home/u/.claude/sessions/1.json", body(1, 9, "busy")));
        assert!(s.take(
            ms(1),
            "/home/u/.claude/sessions/4242.json",
            body(4242, 900, "busy")
        ));
        assert!(s.reading(ms(1), false).is_some());
        // A version naming another start (a reused pid) is not taken.
        let path = "/home/u/.claude/sessions/4242.json";
        s.take(ms(2), path, body(4242, 901, "busy"));
        assert_eq!(s.reading(ms(2), false), None);
        assert_eq!(
            s.last.as_deref(),
            Some("not this pane's agent: its process started at another time (a reused pid)")
        );
        s.take(ms(3), path, body(4242, 900, "idle"));
        assert!(s.reading(ms(3), false).is_some());
        // Gone, or refused: back to the screen.
        s.take(ms(4), path, FileRead::Gone);
        assert_eq!(s.reading(ms(4), false), None);
        s.take(ms(5), path, body(4242, 900, "busy"));
        s.take(ms(6), path, FileRead::Refused("a symlink".into()));
        assert_eq!(s.reading(ms(6), false), None);
        assert_eq!(s.refused, 1);
    }

    #[test]
    fn a_process_that_ends_stops_or_is_replaced_hands_the_pane_back() {
        let path = "/home/u/.claude/sessions/4242.json";
        let mut s = PaneSession::default();
        s.retarget(CLAUDE, proc(4242, 900), dir);
        s.take(ms(1), path, body(4242, 900, "busy"));
        let stopped = Some(AgentProcess {
            stopped: true,
            ..proc(4242, 900).unwrap()
        });
        assert!(s.retarget(CLAUDE, stopped, dir));
        assert_eq!((s.reading(ms(2), false), s.target.as_ref()), (None, None));
        s.retarget(CLAUDE, proc(4242, 900), dir);
        s.take(ms(3), path, body(4242, 900, "busy"));
        assert!(s.retarget(CLAUDE, proc(4242, 950), dir));
        assert_eq!(s.reading(ms(4), false), None);
        assert!(s.retarget(CLAUDE, None, dir));
        assert_eq!(s.target, None);
        // An agent without session files, or no folder: nothing followed.
        assert!(!s.retarget(None, proc(4242, 900), dir));
        s.retarget(CLAUDE, proc(4242, 900), |_| None);
        assert_eq!(s.target, None);
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }
}
