//! Which zellij session to talk to, and the command transport.
//!
//! A zellij session is addressed by its name: every command runs
//! `zellij --session NAME …` with an argument vector (never a shell), waits
//! for it with a deadline, and turns failures into [`ZellijError`]s that say
//! what happened. [`Session::from_env`] finds the session the way a user
//! expects: `TEND_ZELLIJ_SESSION`, else the session tend runs inside
//! (`$ZELLIJ` and `$ZELLIJ_SESSION_NAME`, which zellij sets in every pane).

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Result, ZellijError};

/// Environment variable naming the zellij session tend should use.
pub const SESSION_ENV: &str = "TEND_ZELLIJ_SESSION";

/// Environment variable naming the zellij binary (default: `zellij` on
/// `PATH`).
pub const PROGRAM_ENV: &str = "TEND_ZELLIJ";

/// How long one command may take before it is stopped. zellij answers
/// queries in milliseconds; `list-panes` asks each pane's pty with a 100 ms
/// deadline, so a large session takes longer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// True when this process runs inside a zellij pane (`$ZELLIJ` is set).
pub fn inside_zellij() -> bool {
    std::env::var_os("ZELLIJ").is_some()
}

/// The output of one zellij command that succeeded.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

/// A zellij session and how to reach it.
#[derive(Debug, Clone)]
pub struct Session {
    name: String,
    program: OsString,
    envs: Vec<(OsString, OsString)>,
    timeout: Duration,
}

impl Session {
    /// The session called `name`, reached with the zellij from
    /// `TEND_ZELLIJ` or `PATH`.
    pub fn new(name: impl Into<String>) -> Session {
        Session {
            name: name.into(),
            program: program_from_env(),
            envs: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The session from the environment: `TEND_ZELLIJ_SESSION`, else the
    /// session this process runs inside (`$ZELLIJ_SESSION_NAME`).
    pub fn from_env() -> Result<Session> {
        let tend = std::env::var(SESSION_ENV).ok();
        let name = std::env::var("ZELLIJ_SESSION_NAME").ok();
        Session::from_vars(tend.as_deref(), name.as_deref())
    }

    /// [`Session::from_env`] over given values.
    pub fn from_vars(
        tend_session: Option<&str>,
        zellij_session_name: Option<&str>,
    ) -> Result<Session> {
        [tend_session, zellij_session_name]
            .into_iter()
            .flatten()
            .map(str::trim)
            .find(|s| !s.is_empty())
            .map(Session::new)
            .ok_or(ZellijError::NoSession)
    }

    /// Uses another zellij binary.
    pub fn with_program(mut self, program: impl Into<OsString>) -> Session {
        self.program = program.into();
        self
    }

    /// Sets an environment variable for every zellij command (tests use it
    /// for `ZELLIJ_SOCKET_DIR`, `HOME` and the XDG directories).
    pub fn with_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Session {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Changes the deadline of each command.
    pub fn with_timeout(mut self, timeout: Duration) -> Session {
        self.timeout = timeout;
        self
    }

    /// The session name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The zellij binary.
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// The deadline of each command.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A `zellij --session NAME` command with tend's environment, for
    /// callers that manage the process themselves (subscriptions).
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.envs(self.envs.iter().map(|(k, v)| (k, v)));
        cmd.arg("--session").arg(&self.name);
        cmd
    }

    /// Runs `zellij --session NAME action ARGS…`.
    pub fn action<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Output> {
        let mut all: Vec<OsString> = vec!["action".into()];
        all.extend(args.iter().map(|a| a.as_ref().to_owned()));
        self.run(&all, None)
    }

    /// Runs an action that changes something (`paste`, `write`,
    /// `focus-pane-id`), trying again while zellij's command-line client
    /// says "There is no active session!": it says that when the session's
    /// socket does not answer its probe in time (a loaded machine), before it
    /// sends anything, so trying again cannot do the thing twice. Any other
    /// answer — success included — is final.
    pub fn act<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Output> {
        let label = label(args);
        self.patiently(&label, || self.action(args).map(Some))
    }

    /// Runs `zellij --session NAME ARGS…`, feeding `stdin` when given,
    /// within the session's deadline.
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S], stdin: Option<&[u8]>) -> Result<Output> {
        let mut cmd = self.command();
        cmd.args(args);
        let label = label(args);
        run_command(cmd, &self.program, &label, stdin, self.timeout)
            .and_then(|out| classify(out, &self.name, &label))
    }

    /// Asks zellij again, up to three times in all, while it answers the
    /// way a saturated session does: with nothing and success (its screen
    /// thread answers within 1 s or not at all; `ask` returns `Ok(None)`),
    /// or with "no active session" (the command-line client decides that
    /// when the session's socket does not answer its probe in time). Any
    /// other answer is final.
    pub(crate) fn patiently<T>(
        &self,
        command: &str,
        mut ask: impl FnMut() -> Result<Option<T>>,
    ) -> Result<T> {
        // zellij's probe gives up on a session that does not answer at
        // once; on a loaded 2-core machine that lasted past half a second.
        const PAUSES: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(1000)];
        for pause in PAUSES.iter().map(Some).chain([None]) {
            match ask() {
                Ok(Some(v)) => return Ok(v),
                Ok(None) => {}
                Err(ZellijError::SessionNotFound { .. }) if pause.is_some() => {}
                Err(e) => return Err(e),
            }
            if let Some(p) = pause {
                thread::sleep(*p);
            }
        }
        Err(ZellijError::Failed {
            command: command.to_owned(),
            status: Some(0),
            stderr: "zellij answered with nothing, three times (the session is busy or \
                     shutting down)"
                .into(),
        })
    }

    /// True when zellij lists this session as running (not exited).
    pub fn is_running(&self) -> Result<bool> {
        let sessions = list_sessions_with(&self.program, &self.envs, self.timeout)?;
        Ok(sessions.iter().any(|s| s.name == self.name && !s.exited))
    }
}

/// One line of `zellij list-sessions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session name.
    pub name: String,
    /// True for an exited session that can be resurrected (not running).
    pub exited: bool,
    /// True for the session this process runs inside.
    pub current: bool,
}

/// Lists zellij's sessions (running and resurrectable).
pub fn list_sessions() -> Result<Vec<SessionInfo>> {
    list_sessions_with(&program_from_env(), &[], DEFAULT_TIMEOUT)
}

fn list_sessions_with(
    program: &OsStr,
    envs: &[(OsString, OsString)],
    timeout: Duration,
) -> Result<Vec<SessionInfo>> {
    let mut cmd = Command::new(program);
    cmd.envs(envs.iter().map(|(k, v)| (k, v)));
    cmd.args(["list-sessions", "--no-formatting"]);
    let out = run_command(cmd, program, "list-sessions", None, timeout)?;
    if !out.success {
        // zellij exits non-zero with "No active zellij sessions found."
        // when there are none.
        let text = format!("{}{}", out.stdout, out.stderr);
        if text.contains("No active zellij sessions") {
            return Ok(Vec::new());
        }
        return Err(ZellijError::Failed {
            command: "list-sessions".into(),
            status: out.status,
            stderr: text,
        });
    }
    Ok(parse_list_sessions(&out.stdout))
}

/// Parses `zellij list-sessions --no-formatting`: one session a line,
/// `NAME [Created 5m ago]`, with `(current)` or `(EXITED - attach to
/// resurrect)` after it.
pub fn parse_list_sessions(text: &str) -> Vec<SessionInfo> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let name = line.split_whitespace().next()?;
            if name.is_empty() {
                return None;
            }
            Some(SessionInfo {
                name: name.to_owned(),
                exited: line.contains("EXITED"),
                current: line.contains("(current)"),
            })
        })
        .collect()
}

/// The version of the zellij binary (`zellij --version` → `0.45.1`).
pub fn version(program: &OsStr) -> Result<String> {
    let mut cmd = Command::new(program);
    cmd.arg("--version");
    let out = run_command(cmd, program, "--version", None, DEFAULT_TIMEOUT)?;
    if !out.success {
        return Err(ZellijError::Failed {
            command: "--version".into(),
            status: out.status,
            stderr: out.stderr,
        });
    }
    parse_version(&out.stdout).ok_or_else(|| ZellijError::Parse {
        what: "`zellij --version`".into(),
        detail: format!("expected `zellij X.Y.Z`, got {:?}", out.stdout.trim()),
    })
}

/// `zellij 0.45.1` → `0.45.1`.
pub fn parse_version(text: &str) -> Option<String> {
    let v = text.trim().strip_prefix("zellij")?.trim();
    let ok = !v.is_empty() && v.chars().next().is_some_and(|c| c.is_ascii_digit());
    ok.then(|| v.to_owned())
}

/// The zellij binary from `TEND_ZELLIJ`, else `zellij`.
pub fn program_from_env() -> OsString {
    std::env::var_os(PROGRAM_ENV)
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "zellij".into())
}

/// True when `program` can be run (found on PATH or as a path).
pub fn is_installed(program: &OsStr) -> bool {
    let p = PathBuf::from(program);
    if p.components().count() > 1 {
        return p.is_file();
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(&p).is_file()))
        .unwrap_or(false)
}

/// What one finished process said.
pub(crate) struct Raw {
    pub(crate) success: bool,
    pub(crate) status: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `cmd` to completion or until `timeout`, then kills it.
pub(crate) fn run_command(
    mut cmd: Command,
    program: &OsStr,
    label: &str,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<Raw> {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| spawn_error(program, e))?;
    if let (Some(data), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // Broken pipe means zellij stopped reading: its status says why.
        let _ = pipe.write_all(data);
    }
    let out_reader = child.stdout.take().map(reader);
    let err_reader = child.stderr.take().map(reader);
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ZellijError::Timeout {
                    command: label.to_owned(),
                    waited_ms: timeout.as_millis(),
                });
            }
            Ok(None) => thread::sleep(Duration::from_millis(2)),
            Err(e) => {
                return Err(ZellijError::Io {
                    what: format!("wait for `zellij {label}`"),
                    source: e,
                })
            }
        }
    };
    let stdout = out_reader.map(join).unwrap_or_default();
    let stderr = err_reader.map(join).unwrap_or_default();
    Ok(Raw {
        success: status.success(),
        status: status.code(),
        stdout,
        stderr,
    })
}

fn reader<R: Read + Send + 'static>(mut r: R) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

fn join(h: thread::JoinHandle<String>) -> String {
    h.join().unwrap_or_default()
}

pub(crate) fn spawn_error(program: &OsStr, e: io::Error) -> ZellijError {
    let program = program.to_string_lossy().into_owned();
    if e.kind() == io::ErrorKind::NotFound {
        ZellijError::NotInstalled { program }
    } else {
        ZellijError::Spawn { program, source: e }
    }
}

/// Turns a finished command into output or the error it means.
fn classify(raw: Raw, session: &str, label: &str) -> Result<Output> {
    let text = format!("{}\n{}", raw.stderr, raw.stdout);
    if let Some(detail) = session_missing(&text) {
        return Err(ZellijError::SessionNotFound {
            session: session.to_owned(),
            detail,
        });
    }
    if !raw.success {
        return Err(ZellijError::Failed {
            command: label.to_owned(),
            status: raw.status,
            stderr: if raw.stderr.trim().is_empty() {
                raw.stdout
            } else {
                raw.stderr
            },
        });
    }
    Ok(Output {
        stdout: raw.stdout,
        stderr: raw.stderr,
    })
}

/// zellij's words for "no such session", if the text has them.
pub(crate) fn session_missing(text: &str) -> Option<String> {
    const SIGNS: [&str; 3] = [
        "There is no active session",
        "No active zellij sessions",
        "not found",
    ];
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| SIGNS.iter().any(|s| l.contains(s)) && l.to_lowercase().contains("session"))?;
    Some(line.to_owned())
}

/// The command for messages: its arguments, shortened.
fn label<S: AsRef<OsStr>>(args: &[S]) -> String {
    let joined = args
        .iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut out: String = joined.chars().take(80).collect();
    if joined.chars().count() > 80 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patiently_asks_again_only_while_the_session_seems_busy() {
        let s = Session::new("busy");
        let gone = || ZellijError::SessionNotFound {
            session: "busy".into(),
            detail: "There is no active session!".into(),
        };
        // Nothing, then "no active session", then an answer.
        let mut answers = vec![Ok(Some(7)), Err(gone()), Ok(None)];
        let mut asked = 0;
        let got = s.patiently("q", || {
            asked += 1;
            answers.pop().expect("asked at most three times")
        });
        assert_eq!((got.expect("the third answer"), asked), (7, 3));
        // Three times nothing: a failure naming the command.
        let err = s.patiently::<u8>("list-panes", || Ok(None)).unwrap_err();
        assert!(
            matches!(&err, ZellijError::Failed { command, status: Some(0), .. } if command == "list-panes"),
            "{err:?}"
        );
        // Still no session the third time: the session is gone.
        let err = s.patiently::<u8>("q", || Err(gone())).unwrap_err();
        assert!(
            matches!(err, ZellijError::SessionNotFound { .. }),
            "{err:?}"
        );
        // Any other error is final at once.
        let mut asked = 0;
        let err = s
            .patiently::<u8>("q", || {
                asked += 1;
                Err(ZellijError::PaneNotFound {
                    command: "q".into(),
                    pane: "terminal_9".into(),
                })
            })
            .unwrap_err();
        assert!(matches!(err, ZellijError::PaneNotFound { .. }) && asked == 1);
    }

    #[test]
    fn session_from_vars() {
        let s = Session::from_vars(Some("mine"), Some("outer")).expect("named");
        assert_eq!(s.name(), "mine");
        let s = Session::from_vars(Some("  "), Some("outer")).expect("inner");
        assert_eq!(s.name(), "outer");
        let err = Session::from_vars(None, None).expect_err("none");
        assert!(err.is_no_session());
        assert!(err.to_string().contains("list-sessions"));
    }

    #[test]
    fn versions() {
        assert_eq!(parse_version("zellij 0.45.1\n").as_deref(), Some("0.45.1"));
        assert_eq!(parse_version("tmux 3.4"), None);
        assert_eq!(parse_version("zellij "), None);
    }

    #[test]
    fn labels_are_short() {
        let long = "x".repeat(200);
        let l = label(&["pipe", long.as_str()]);
        assert_eq!(l.chars().count(), 81);
        assert!(l.ends_with('…'));
    }

    #[test]
    fn missing_program_is_not_installed() {
        let cmd = Command::new("/nonexistent/zellij-for-tend-tests");
        let err = run_command(
            cmd,
            OsStr::new("/nonexistent/zellij-for-tend-tests"),
            "x",
            None,
            Duration::from_secs(1),
        )
        .err()
        .expect("fails");
        assert!(matches!(err, ZellijError::NotInstalled { .. }), "{err:?}");
        assert!(err.to_string().contains("cargo install zellij"));
    }

    #[test]
    fn slow_commands_time_out() {
        let mut cmd = Command::new("sleep");
        cmd.arg("5");
        let start = Instant::now();
        let err = run_command(
            cmd,
            OsStr::new("sleep"),
            "sleep 5",
            None,
            Duration::from_millis(100),
        )
        .err()
        .expect("times out");
        assert!(matches!(err, ZellijError::Timeout { .. }), "{err:?}");
        assert!(start.elapsed() < Duration::from_secs(3));
    }
}
