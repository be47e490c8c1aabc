//! Which processes run in which pane: `/proc/*/environ`.
//!
//! zellij starts every terminal pane's program with `ZELLIJ_PANE_ID=N` and
//! `ZELLIJ_SESSION_NAME=S` in its environment, and children inherit them.
//! So one scan of `/proc` maps each pane of a session to its processes. The
//! pane's **root** is the process whose parent is not in the same pane (the
//! shell, or the command of a command pane); its terminal's foreground
//! process group (`tpgid` in `/proc/PID/stat`) is what runs in front now —
//! the process tend's identity logic looks at.
//!
//! Only the environment a process was started with is visible; a process
//! that clears its environment drops out of its pane (its parent stays).
//! Reading another user's `/proc/PID/environ` is not allowed, so only the
//! user's own panes are found — the ones tend serves.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use crate::error::{Result, ZellijError};

/// A pane's root process and what runs in front of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneProcess {
    /// The terminal pane number (`N` of `terminal_N`).
    pub pane: u32,
    /// The root process: the pane's shell or command.
    pub pid: u32,
    /// The foreground process group of the pane's terminal, when the root
    /// has a controlling terminal.
    pub foreground_pgid: Option<u32>,
}

/// The zellij variables of one process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZellijEnv {
    /// `ZELLIJ_PANE_ID`.
    pub pane: Option<u32>,
    /// `ZELLIJ_SESSION_NAME`.
    pub session: Option<String>,
}

/// Reads `ZELLIJ_PANE_ID` and `ZELLIJ_SESSION_NAME` from the bytes of a
/// `/proc/PID/environ` file (NUL-separated `KEY=VALUE`).
pub fn parse_environ(bytes: &[u8]) -> ZellijEnv {
    let mut env = ZellijEnv::default();
    for entry in bytes.split(|b| *b == 0) {
        if let Some(v) = entry.strip_prefix(b"ZELLIJ_PANE_ID=") {
            env.pane = std::str::from_utf8(v)
                .ok()
                .and_then(|s| s.trim().parse().ok());
        } else if let Some(v) = entry.strip_prefix(b"ZELLIJ_SESSION_NAME=") {
            env.session = std::str::from_utf8(v).ok().map(str::to_owned);
        }
    }
    env
}

/// The fields of `/proc/PID/stat` tend needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Parent process id.
    pub ppid: u32,
    /// Process group.
    pub pgrp: u32,
    /// Foreground process group of the controlling terminal (`-1`, read as
    /// `None`, without one).
    pub tpgid: Option<u32>,
}

/// Parses `/proc/PID/stat` (the command name may hold spaces and
/// parentheses, so fields are counted after its last `)`).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state ppid pgrp session tty_nr tpgid …
    let ppid = fields.get(1)?.parse().ok()?;
    let pgrp = fields.get(2)?.parse().ok()?;
    let tpgid: i64 = fields.get(5)?.parse().ok()?;
    Some(Stat {
        ppid,
        pgrp,
        tpgid: u32::try_from(tpgid).ok().filter(|t| *t > 0),
    })
}

/// Every pane of `session` with its root process, found in the real
/// `/proc`.
pub fn pane_processes(session: &str) -> Result<Vec<PaneProcess>> {
    pane_processes_in(Path::new("/proc"), session)
}

/// The root process of one pane of `session`, if it is found.
pub fn pane_process(session: &str, pane: u32) -> Result<Option<PaneProcess>> {
    Ok(pane_processes(session)?
        .into_iter()
        .find(|p| p.pane == pane))
}

/// [`pane_processes`] over a `/proc`-like directory (for tests).
pub fn pane_processes_in(proc_root: &Path, session: &str) -> Result<Vec<PaneProcess>> {
    let entries = fs::read_dir(proc_root).map_err(|e| ZellijError::Io {
        what: format!("list processes in {}", proc_root.display()),
        source: e,
    })?;
    // pid → (pane, stat) for every process of this session.
    let mut members: HashMap<u32, (u32, Stat)> = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let dir = entry.path();
        // Processes come and go, and others' environments are unreadable:
        // skip whatever cannot be read.
        let Ok(environ) = fs::read(dir.join("environ")) else {
            continue;
        };
        let env = parse_environ(&environ);
        let (Some(pane), Some(s)) = (env.pane, env.session) else {
            continue;
        };
        if s != session {
            continue;
        }
        let Some(stat) = fs::read_to_string(dir.join("stat"))
            .ok()
            .and_then(|t| parse_stat(&t))
        else {
            continue;
        };
        members.insert(pid, (pane, stat));
    }
    let mut roots: HashMap<u32, PaneProcess> = HashMap::new();
    for (pid, (pane, stat)) in &members {
        let parent_in_pane = members
            .get(&stat.ppid)
            .is_some_and(|(parent_pane, _)| parent_pane == pane);
        if parent_in_pane {
            continue;
        }
        let candidate = PaneProcess {
            pane: *pane,
            pid: *pid,
            foreground_pgid: stat.tpgid,
        };
        // Two roots in one pane (a double fork that re-parented to init):
        // the oldest, i.e. lowest pid in practice, is the pane's own.
        roots
            .entry(*pane)
            .and_modify(|cur| {
                if *pid < cur.pid {
                    *cur = candidate;
                }
            })
            .or_insert(candidate);
    }
    let mut out: Vec<PaneProcess> = roots.into_values().collect();
    out.sort_by_key(|p| p.pane);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_zellij_variables() {
        let env =
            parse_environ(b"HOME=/root\0ZELLIJ=0\0ZELLIJ_PANE_ID=4\0ZELLIJ_SESSION_NAME=work\0");
        assert_eq!(env.pane, Some(4));
        assert_eq!(env.session.as_deref(), Some("work"));
        assert_eq!(parse_environ(b"ZELLIJ_PANE_ID=x\0"), ZellijEnv::default());
    }

    #[test]
    fn stat_with_a_hostile_name() {
        let st = parse_stat("42 (a) b (c)) S 7 42 42 34817 99 4194560 0 0").expect("parses");
        assert_eq!(
            st,
            Stat {
                ppid: 7,
                pgrp: 42,
                tpgid: Some(99)
            }
        );
        let st = parse_stat("5 (kworker) I 2 0 0 0 -1 69238880").expect("parses");
        assert_eq!(st.tpgid, None);
        assert_eq!(parse_stat("garbage"), None);
    }

    fn fake(root: &Path, pid: u32, ppid: u32, env: &str, tpgid: i32) {
        let dir = root.join(pid.to_string());
        fs::create_dir_all(&dir).expect("mkdir");
        fs::write(dir.join("environ"), env.replace(';', "\0")).expect("environ");
        fs::write(
            dir.join("stat"),
            format!("{pid} (sh) S {ppid} {pid} {pid} 34816 {tpgid} 0 0"),
        )
        .expect("stat");
    }

    #[test]
    fn finds_each_panes_root() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        // zellij server (no pane id), two panes, a child in pane 1, a pane of
        // another session, and an unrelated process.
        fake(root, 100, 1, "ZELLIJ=0;ZELLIJ_SESSION_NAME=work", -1);
        fake(
            root,
            110,
            100,
            "ZELLIJ_PANE_ID=1;ZELLIJ_SESSION_NAME=work",
            120,
        );
        fake(
            root,
            120,
            110,
            "ZELLIJ_PANE_ID=1;ZELLIJ_SESSION_NAME=work",
            120,
        );
        fake(
            root,
            130,
            100,
            "ZELLIJ_PANE_ID=2;ZELLIJ_SESSION_NAME=work",
            130,
        );
        fake(
            root,
            140,
            1,
            "ZELLIJ_PANE_ID=1;ZELLIJ_SESSION_NAME=other",
            140,
        );
        fake(root, 150, 1, "PATH=/bin", 150);
        fs::create_dir_all(root.join("self")).expect("non-pid entry");
        let found = pane_processes_in(root, "work").expect("scans");
        assert_eq!(
            found,
            vec![
                PaneProcess {
                    pane: 1,
                    pid: 110,
                    foreground_pgid: Some(120)
                },
                PaneProcess {
                    pane: 2,
                    pid: 130,
                    foreground_pgid: Some(130)
                },
            ]
        );
    }

    #[test]
    fn missing_proc_is_an_error_for_people() {
        let err = pane_processes_in(Path::new("/nonexistent/proc"), "work").expect_err("fails");
        assert!(err.to_string().contains("list processes"), "{err}");
    }

    #[test]
    fn finds_this_test_in_the_real_proc_only_inside_zellij() {
        // Outside zellij nothing carries the variables for a made-up session.
        let found = pane_processes("tend-no-such-session").expect("scans");
        assert!(found.is_empty());
    }
}
