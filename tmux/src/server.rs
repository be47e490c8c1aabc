//! Which tmux server to talk to, and the command transport.
//!
//! A tmux server is addressed by its socket: the default one, a named one
//! (`tmux -L name`) or a path (`tmux -S path`). [`SocketSpec`] holds that
//! choice, [`SocketSpec::from_env`] reads it from the environment the way a
//! user expects, and [`SocketSpec::resolved_path`] gives the socket path that
//! identifies the server: tend runs one daemon per path.
//!
//! [`Server`] runs tmux commands against that socket. Every call starts one
//! `tmux` client process with an argument vector (never a shell), waits for
//! it, and turns failures into [`TmuxError`]s that say what happened.
//! [`Server::run_many`] sends several commands in one process, separated by
//! `;`, which tmux executes back to back without running anything else in
//! between.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Result, TmuxError};
use crate::escape::argv_arg;
use crate::wire::{self, WireError};

/// Environment variable naming the tmux socket tend should use: a value
/// containing `/` is a socket path (`tmux -S`), anything else a socket name
/// (`tmux -L`).
pub const SOCKET_ENV: &str = "TEND_TMUX_SOCKET";

/// Largest argument vector (in bytes) sent in one tmux invocation. tmux
/// refuses commands whose packed arguments exceed its 16 KiB message size
/// ("command too long"); this leaves room for its framing.
const MAX_BATCH_BYTES: usize = 12 * 1024;

/// Most arguments sent in one tmux invocation, `;` separators included.
/// tmux 3.7 refuses a command message of more than 1000 arguments
/// ("command too long", `cmd_unpack_argv`), however short; earlier versions
/// have no such limit, and splitting there costs one more message.
const MAX_BATCH_ARGS: usize = 1000;

/// How to reach a tmux server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SocketSpec {
    /// tmux's default socket (`$TMUX_TMPDIR/tmux-$UID/default`).
    Default,
    /// A named socket in tmux's socket directory (`tmux -L name`).
    Name(String),
    /// A socket path (`tmux -S path`).
    Path(PathBuf),
}

impl SocketSpec {
    /// The socket from the environment:
    ///
    /// 1. `TEND_TMUX_SOCKET` (a path if it contains `/`, else a name);
    /// 2. the socket of the tmux we run inside, from `$TMUX`
    ///    (`/tmp/tmux-1000/default,12345,0` → `/tmp/tmux-1000/default`);
    /// 3. the default socket.
    pub fn from_env() -> SocketSpec {
        let tend = std::env::var(SOCKET_ENV).ok();
        let tmux = std::env::var("TMUX").ok();
        SocketSpec::from_vars(tend.as_deref(), tmux.as_deref())
    }

    /// [`SocketSpec::from_env`] over given values (for tests and callers
    /// that read the environment themselves).
    pub fn from_vars(tend_socket: Option<&str>, tmux: Option<&str>) -> SocketSpec {
        if let Some(v) = tend_socket.map(str::trim).filter(|v| !v.is_empty()) {
            return SocketSpec::parse(v);
        }
        if let Some(path) = tmux.and_then(socket_from_tmux_var) {
            return SocketSpec::Path(PathBuf::from(path));
        }
        SocketSpec::Default
    }

    /// Reads a user's socket choice: `default`, a path (contains `/`), or a
    /// name.
    pub fn parse(s: &str) -> SocketSpec {
        if s == "default" {
            SocketSpec::Default
        } else if s.contains('/') {
            SocketSpec::Path(PathBuf::from(s))
        } else {
            SocketSpec::Name(s.to_string())
        }
    }

    /// The arguments that select this socket on tmux's command line.
    pub fn args(&self) -> Vec<OsString> {
        match self {
            SocketSpec::Default => Vec::new(),
            SocketSpec::Name(n) => vec!["-L".into(), n.into()],
            SocketSpec::Path(p) => vec!["-S".into(), p.into()],
        }
    }

    /// The socket path this spec resolves to, computed the way tmux does:
    /// `${TMUX_TMPDIR:-/tmp}/tmux-$UID/<name>` with the directory resolved
    /// through symlinks, or the given path made absolute.
    ///
    /// This is the key for "one daemon per tmux server". It needs no running
    /// server. When a server runs, [`Server::socket_path`] asks it directly.
    pub fn resolved_path(&self) -> PathBuf {
        match self {
            SocketSpec::Default => socket_dir().join("default"),
            SocketSpec::Name(n) => socket_dir().join(n),
            SocketSpec::Path(p) => {
                let abs = if p.is_absolute() {
                    p.clone()
                } else {
                    std::env::current_dir()
                        .map(|d| d.join(p))
                        .unwrap_or_else(|_| p.clone())
                };
                match (abs.parent(), abs.file_name()) {
                    (Some(dir), Some(name)) => std::fs::canonicalize(dir)
                        .map(|d| d.join(name))
                        .unwrap_or(abs.clone()),
                    _ => abs,
                }
            }
        }
    }
}

impl fmt::Display for SocketSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SocketSpec::Default => write!(f, "the default socket"),
            SocketSpec::Name(n) => write!(f, "socket name `{n}` (-L)"),
            SocketSpec::Path(p) => write!(f, "socket `{}` (-S)", p.display()),
        }
    }
}

/// The socket path in a `$TMUX` value: everything before the last two
/// comma-separated fields (the path itself may contain commas).
fn socket_from_tmux_var(v: &str) -> Option<&str> {
    let mut parts = v.rsplitn(3, ',');
    let _session = parts.next()?;
    let _pid = parts.next()?;
    let path = parts.next()?;
    (!path.is_empty()).then_some(path)
}

/// tmux's socket directory for this user.
fn socket_dir() -> PathBuf {
    let base = std::env::var_os("TMUX_TMPDIR")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| OsString::from("/tmp"));
    let uid = nix::unistd::getuid();
    let dir = Path::new(&base).join(format!("tmux-{uid}"));
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// A tmux version as printed by `tmux -V`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// Major number (`3` in `3.3a`).
    pub major: u32,
    /// Minor number (`3` in `3.3a`).
    pub minor: u32,
    /// Patch letter (`a` in `3.3a`).
    pub letter: Option<char>,
    /// A development build (`next-3.5`, `3.4-rc`, `master`, `openbsd-7.5`).
    pub development: bool,
    /// What tmux printed, without the leading `tmux `.
    pub raw: String,
}

impl Version {
    /// Reads the output of `tmux -V` (`tmux 3.3a`, `tmux next-3.5`,
    /// `tmux 3.4-rc`). Builds without a number (`master`, `openbsd-7.5`)
    /// count as newer than every release.
    pub fn parse(output: &str) -> Result<Version> {
        let raw = output.trim();
        let raw = raw.strip_prefix("tmux ").unwrap_or(raw).trim().to_string();
        let mut s = raw.as_str();
        let mut development = false;
        if let Some(rest) = s.strip_prefix("next-") {
            s = rest;
            development = true;
        }
        if let Some((head, _)) = s.split_once('-') {
            s = head;
            development = true;
        }
        let numbered = s.chars().next().is_some_and(|c| c.is_ascii_digit());
        if !numbered {
            if raw.is_empty() {
                return Err(TmuxError::Parse {
                    what: "`tmux -V`".into(),
                    detail: "it printed nothing".into(),
                });
            }
            return Ok(Version {
                major: u32::MAX,
                minor: 0,
                letter: None,
                development: true,
                raw,
            });
        }
        let (major, rest) = s.split_once('.').unwrap_or((s, "0"));
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let letter = rest[digits.len()..]
            .chars()
            .next()
            .filter(|c| c.is_ascii_alphabetic());
        let bad = |what: &str| TmuxError::Parse {
            what: "`tmux -V`".into(),
            detail: format!("{what} in `{raw}`"),
        };
        let major = major.parse().map_err(|_| bad("no major version"))?;
        let minor = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| bad("no minor version"))?
        };
        Ok(Version {
            major,
            minor,
            letter,
            development,
            raw,
        })
    }

    /// True when this version is `major.minor` or newer (a development
    /// build of `next-3.5` counts as 3.5).
    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// What differs between the tmux versions tend supports (3.2a to 3.7c),
/// from the version of the running server. `tend doctor` lists what is
/// missing and what tend does instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// `display-message -c CLIENT` shows on that client. In 3.2a `-c` takes
    /// no argument (its option string is `acd:…`): a message goes to the
    /// most recently active client instead.
    pub message_to_client: bool,
    /// How the server prints a command's output ([`Printing`]).
    pub printing: Printing,
    /// `capture-pane -J` ends each line at its last written cell. 3.2a
    /// ends it at the last cell the line ever held, cleared ones included
    /// (grid.c: `gl->cellsize`, 3.3 `cellused`): a line comes padded with
    /// spaces, and tend trims them (see [`Server::capture_text`]).
    pub joined_capture_exact: bool,
    /// `display-popup` (tmux 3.2): `prefix A` opens `tend pilot` in a
    /// popup; without it, the picker menu.
    pub popup: bool,
}

/// How a server prints what a command outputs (`show-options -v`,
/// `display-message -p`, `list-panes -F`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printing {
    /// As it is (3.2a, 3.3a, 3.6a and later).
    Raw,
    /// Control characters made visible, `\036` or `\t` (3.5a).
    Visible,
    /// Control characters made visible and `\` put before a `$` that
    /// starts a variable name (`\$HOME`) (3.4).
    VisibleAndDollar,
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            message_to_client: true,
            printing: Printing::Raw,
            joined_capture_exact: true,
            popup: true,
        }
    }
}

impl Printing {
    /// What tmux printed as `printed`, turned back into the value, when
    /// that is certain.
    ///
    /// tmux 3.4 and 3.5a write no `\\` before a backslash of the value
    /// (`VIS_NOSLASH`). A backslash followed by a character that starts none
    /// of their escapes (`\\ooo`, `\\n`, `\\t`, … and 3.4's `\\$NAME`) is the
    /// value's own; one followed by `$NAME` on 3.4 is tmux's (the value's
    /// own would have printed as `\\\\$NAME`). One followed by an octal digit
    /// or a letter of a C escape cannot be told from an escape: `None`.
    pub fn unprint(self, printed: &str) -> Option<String> {
        if self == Printing::Raw || !printed.contains('\\') {
            return Some(printed.to_owned());
        }
        let mut out = String::with_capacity(printed.len());
        let mut chars = printed.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let mut ahead = chars.clone();
            match ahead.next() {
                Some('$') if self == Printing::VisibleAndDollar => {
                    let name = ahead
                        .next()
                        .is_some_and(|n| n.is_ascii_alphabetic() || n == '_' || n == '{');
                    if !name {
                        out.push('\\');
                    }
                }
                Some(e) if "01234567abfnrstv".contains(e) => return None,
                _ => out.push('\\'),
            }
        }
        Some(out)
    }
}

impl Capabilities {
    /// The capabilities of `version`.
    pub fn of(version: &Version) -> Capabilities {
        let printing = match (version.major, version.minor) {
            (3, 4) => Printing::VisibleAndDollar,
            (3, 5) => Printing::Visible,
            _ => Printing::Raw,
        };
        Capabilities {
            message_to_client: version.at_least(3, 3),
            printing,
            joined_capture_exact: version.at_least(3, 3),
            popup: version.at_least(3, 2),
        }
    }

    /// What this server lacks, each with what tend does instead, for
    /// `tend doctor`.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.printing != Printing::Raw {
            out.push(
                "raw command output (3.4 and 3.5a print control characters as \\ escapes): \
                 names holding them read as printed, and an option value holding a backslash \
                 cannot be read exactly, so tend leaves such a status-line format alone",
            );
        }
        if !self.joined_capture_exact {
            out.push(
                "capture-pane -J ending at a line's last written cell (tmux 3.3): lines come \
                 padded with the spaces of cleared cells, so `tend read` trims the spaces \
                 ending each line (a line's own trailing spaces too)",
            );
        }
        if !self.popup {
            out.push(
                "display-popup (tmux 3.2): `prefix A` opens the picker menu instead of the \
                 fleet view (`tend pilot` still runs in any terminal)",
            );
        }
        if !self.message_to_client {
            out.push(
                "display-message -c (tmux 3.3): tend's messages go to the most recently active \
                 client, not always the one whose key asked",
            );
        }
        out
    }
}

/// A tmux server, reached through one socket.
///
/// Cheap to clone. Every method is synchronous: it runs a `tmux` client
/// process and waits for it. Call it from a blocking thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    socket: SocketSpec,
    program: PathBuf,
    /// Set by [`Server::without_client_process`]: the socket path and the
    /// working directory commands are sent with.
    direct: Option<Direct>,
}

/// Where commands go when they are sent over the socket itself.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Direct {
    socket: PathBuf,
    cwd: PathBuf,
}

impl Server {
    /// A server on `socket`, run with the `tmux` found on `PATH`.
    pub fn new(socket: SocketSpec) -> Server {
        Server {
            socket,
            program: PathBuf::from("tmux"),
            direct: None,
        }
    }

    /// Sends commands over the server's socket with tmux's client protocol
    /// (`crate::wire`) instead of starting a `tmux` process for each: the
    /// same commands, output and errors, without the ~3 ms of CPU a client
    /// process costs. A server that cannot be reached this way (another
    /// protocol version, no socket) is still reached by running `tmux`, per
    /// command. For a long-lived caller that runs commands all the time
    /// (the daemon); one-shot commands gain nothing worth the difference.
    pub fn without_client_process(mut self) -> Server {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        self.direct = Some(Direct {
            socket: self.socket.resolved_path(),
            cwd,
        });
        self
    }

    /// True when commands go over the socket ([`Server::without_client_process`]).
    pub fn sends_without_client_process(&self) -> bool {
        self.direct.is_some()
    }

    /// The server chosen by the environment ([`SocketSpec::from_env`]).
    pub fn from_env() -> Server {
        Server::new(SocketSpec::from_env())
    }

    /// Uses another tmux binary.
    pub fn with_program(mut self, program: impl Into<PathBuf>) -> Server {
        self.program = program.into();
        self
    }

    /// The socket this server is reached through.
    pub fn socket(&self) -> &SocketSpec {
        &self.socket
    }

    /// The key that identifies this server: its resolved socket path (see
    /// [`SocketSpec::resolved_path`]). One daemon runs per key.
    pub fn key(&self) -> PathBuf {
        self.socket.resolved_path()
    }

    /// A `Command` for the tmux client with the socket arguments set and the
    /// caller's `$TMUX`/`$TMUX_PANE` removed, so that the socket is exactly
    /// the one chosen and no command depends on the pane tend runs in.
    ///
    /// `-u` matters: a tmux client whose locale is not UTF-8 (`LANG` unset,
    /// `LC_ALL=C`, as under cron or a service manager) replaces control
    /// characters in command output with `_`, which would break parsing and
    /// alter names. With `-u` output arrives byte for byte.
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.env_remove("TMUX").env_remove("TMUX_PANE");
        cmd.arg("-u");
        cmd.args(self.socket.args());
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Runs one tmux command (`["list-panes", "-a"]`) and returns its
    /// standard output.
    ///
    /// Every argument arrives at tmux unchanged: an argument ending in `;`
    /// is escaped (see [`argv_arg`]). To send several commands, use
    /// [`Server::run_many`].
    pub fn run<I, S>(&self, args: I) -> Result<String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let args: Vec<String> = args
            .into_iter()
            .map(|a| argv_arg(a.as_ref()).into_owned())
            .collect();
        too_long(&args)?;
        self.exec(&args)
    }

    /// Runs several tmux commands in one tmux invocation, separated by `;`,
    /// and returns their combined standard output.
    ///
    /// tmux runs the commands in order with nothing in between, so a batch
    /// sees (and leaves) a consistent state. If a command fails, tmux skips
    /// the rest of its invocation. Batches longer than tmux accepts in one
    /// message are split into several invocations at command boundaries.
    pub fn run_many<C, S>(&self, commands: &[C]) -> Result<String>
    where
        C: AsRef<[S]>,
        S: AsRef<str>,
    {
        let mut out = String::new();
        let mut batch: Vec<String> = Vec::new();
        for cmd in commands {
            let args: Vec<String> = cmd
                .as_ref()
                .iter()
                .map(|a| argv_arg(a.as_ref()).into_owned())
                .collect();
            if args.is_empty() {
                continue;
            }
            too_long(&args)?;
            let len = packed_len(&args);
            if !batch.is_empty()
                && (packed_len(&batch) + 2 + len > MAX_BATCH_BYTES
                    || batch.len() + 1 + args.len() > MAX_BATCH_ARGS)
            {
                out.push_str(&self.exec(&batch)?);
                batch.clear();
            }
            if !batch.is_empty() {
                batch.push(";".to_string());
            }
            batch.extend(args);
        }
        if !batch.is_empty() {
            out.push_str(&self.exec(&batch)?);
        }
        Ok(out)
    }

    /// Runs commands as one batch; if a target has vanished meanwhile (which
    /// makes tmux skip the rest of the batch), runs them one by one and skips
    /// the ones whose target is gone. Returns the combined output.
    pub(crate) fn run_batch_skipping_gone(&self, commands: &[Vec<String>]) -> Result<String> {
        match self.run_many(commands) {
            Err(e) if e.is_target_gone() => {
                let mut out = String::new();
                for cmd in commands {
                    match self.run(cmd) {
                        Ok(o) => out.push_str(&o),
                        Err(e) if e.is_target_gone() => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(out)
            }
            other => other,
        }
    }

    /// Starts a tmux command that may wait for the user (such as
    /// `display-menu`, whose client waits until the menu closes) and
    /// returns once it is under way: after it failed or succeeded, or after
    /// `grace` if it still runs. A still-running client is reaped by a
    /// background thread.
    pub(crate) fn run_detached(&self, args: &[String], grace: std::time::Duration) -> Result<()> {
        let args: Vec<String> = args.iter().map(|a| argv_arg(a).into_owned()).collect();
        let program = self.program.display().to_string();
        let mut child = self
            .command()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| spawn_error(&program, e))?;
        let deadline = std::time::Instant::now() + grace;
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    let mut stderr = String::new();
                    if let Some(mut pipe) = child.stderr.take() {
                        let _ = io::Read::read_to_string(&mut pipe, &mut stderr);
                    }
                    return Err(classify(
                        &self.socket,
                        describe(&args),
                        status.code(),
                        stderr.trim().to_string(),
                    ));
                }
                Ok(None) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Ok(None) | Err(_) => {
                    std::thread::spawn(move || {
                        let _ = child.wait();
                    });
                    return Ok(());
                }
            }
        }
    }

    fn exec(&self, args: &[String]) -> Result<String> {
        if let Some(direct) = &self.direct {
            match wire::run(&direct.socket, args, &direct.cwd) {
                Ok(reply) => {
                    let stdout = String::from_utf8_lossy(&reply.stdout).into_owned();
                    if reply.status == 0 {
                        return Ok(stdout);
                    }
                    let stderr = String::from_utf8_lossy(&reply.stderr).trim().to_string();
                    return Err(classify(
                        &self.socket,
                        describe(args),
                        Some(reply.status),
                        stderr,
                    ));
                }
                // Nothing ran: the binary knows what to say (or speaks the
                // server's version).
                Err(WireError::Unsupported(_)) => {}
                Err(WireError::Broken(detail)) => {
                    return Err(TmuxError::Failed {
                        command: describe(args),
                        status: None,
                        stderr: format!("talking to tmux over its socket: {detail}"),
                    })
                }
            }
        }
        let program = self.program.display().to_string();
        let output = self
            .command()
            .args(args)
            .output()
            .map_err(|e| spawn_error(&program, e))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if output.status.success() {
            return Ok(stdout);
        }
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        Err(classify(
            &self.socket,
            describe(args),
            output.status.code(),
            stderr,
        ))
    }

    /// The tmux version (`tmux -V`; needs no running server).
    pub fn version(&self) -> Result<Version> {
        let program = self.program.display().to_string();
        let output = Command::new(&self.program)
            .arg("-V")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| spawn_error(&program, e))?;
        Version::parse(&String::from_utf8_lossy(&output.stdout))
    }

    /// The running server's version (`#{version}`), asked once per socket
    /// and kept for the life of this process (a server cannot change
    /// version; tend's daemon ends with its server). `None` when the server
    /// does not answer or prints something that is not a version.
    ///
    /// This, not the `tmux` binary's `-V`, is what decides which commands
    /// and flags tend may use: a user who upgraded tmux keeps running the
    /// old server until it is restarted.
    pub fn server_version(&self) -> Option<Version> {
        static KNOWN: std::sync::OnceLock<std::sync::Mutex<HashMap<String, Version>>> =
            std::sync::OnceLock::new();
        let key = format!("{:?}", self.socket);
        let known = KNOWN.get_or_init(Default::default);
        if let Some(v) = known.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Some(v);
        }
        let out = self.run(["display-message", "-p", "#{version}"]).ok()?;
        let v = Version::parse(out.trim()).ok()?;
        if let Ok(mut m) = known.lock() {
            m.insert(key, v.clone());
        }
        Some(v)
    }

    /// What the running server can do that not every supported version can
    /// (see [`Capabilities`]); every capability assumed when the version
    /// cannot be read.
    pub fn capabilities(&self) -> Capabilities {
        self.server_version()
            .map(|v| Capabilities::of(&v))
            .unwrap_or_default()
    }

    /// True when a server answers on the socket.
    pub fn is_running(&self) -> bool {
        self.server_pid().is_ok()
    }

    /// The process id of the tmux server.
    pub fn server_pid(&self) -> Result<u32> {
        let out = self.run(["display-message", "-p", "#{pid}"])?;
        out.trim().parse().map_err(|_| TmuxError::Parse {
            what: "the server's pid".into(),
            detail: format!("`{}` is not a number", out.trim()),
        })
    }

    /// The socket path as the running server reports it
    /// (`#{socket_path}`).
    pub fn socket_path(&self) -> Result<PathBuf> {
        let out = self.run(["display-message", "-p", "#{socket_path}"])?;
        let path = out.strip_suffix('\n').unwrap_or(&out);
        Ok(PathBuf::from(path))
    }
}

/// The error for a tmux client that could not be started.
fn spawn_error(program: &str, e: io::Error) -> TmuxError {
    if e.kind() == io::ErrorKind::NotFound {
        TmuxError::NotInstalled {
            program: program.to_string(),
        }
    } else {
        TmuxError::Spawn {
            program: program.to_string(),
            source: e,
        }
    }
}

/// Bytes tmux needs to pack these arguments.
fn packed_len(args: &[String]) -> usize {
    args.iter().map(|a| a.len() + 1).sum()
}

/// Refuses one command that alone is more than tmux takes in one message
/// (see [`MAX_BATCH_BYTES`] and [`MAX_BATCH_ARGS`]).
fn too_long(args: &[String]) -> Result<()> {
    let len = packed_len(args);
    if len > MAX_BATCH_BYTES || args.len() > MAX_BATCH_ARGS {
        return Err(TmuxError::TooLong {
            command: describe(args),
            len,
            args: args.len(),
        });
    }
    Ok(())
}

/// A short, readable rendering of a command for error messages.
fn describe(args: &[String]) -> String {
    const MAX: usize = 160;
    let joined = args
        .iter()
        .map(|a| {
            if a.is_empty() || a.contains(char::is_whitespace) {
                format!("{a:?}")
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    if joined.chars().count() > MAX {
        let cut: String = joined.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        joined
    }
}

/// Turns tmux's stderr into an error kind.
fn classify(
    socket: &SocketSpec,
    command: String,
    status: Option<i32>,
    stderr: String,
) -> TmuxError {
    let first = stderr.lines().next().unwrap_or("").to_string();
    let no_server = first.starts_with("no server running on")
        || (first.starts_with("error connecting to")
            && (first.contains("No such file") || first.contains("Connection refused")));
    if no_server {
        return TmuxError::NoServer {
            socket: socket.to_string(),
            detail: first,
        };
    }
    if stderr.lines().any(|l| {
        l.starts_with("can't find ")
            || l.starts_with("no such ")
            || l.starts_with("session not found")
            || l.starts_with("window not found")
            || l.starts_with("pane not found")
    }) {
        return TmuxError::TargetNotFound {
            command,
            detail: stderr,
        };
    }
    if first.starts_with("command too long") {
        return TmuxError::TooLong {
            command,
            len: MAX_BATCH_BYTES,
            args: MAX_BATCH_ARGS,
        };
    }
    TmuxError::Failed {
        command,
        status,
        stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmux_var() {
        assert_eq!(
            SocketSpec::from_vars(None, Some("/tmp/tmux-0/default,12345,0")),
            SocketSpec::Path("/tmp/tmux-0/default".into())
        );
        assert_eq!(
            SocketSpec::from_vars(None, Some("/tmp/a,b/sock,1,2")),
            SocketSpec::Path("/tmp/a,b/sock".into())
        );
        assert_eq!(SocketSpec::from_vars(None, Some("")), SocketSpec::Default);
        assert_eq!(
            SocketSpec::from_vars(None, Some("junk")),
            SocketSpec::Default
        );
        assert_eq!(SocketSpec::from_vars(None, None), SocketSpec::Default);
    }

    #[test]
    fn tend_var_wins() {
        assert_eq!(
            SocketSpec::from_vars(Some("work"), Some("/tmp/tmux-0/default,1,0")),
            SocketSpec::Name("work".into())
        );
        assert_eq!(
            SocketSpec::from_vars(Some("/run/t.sock"), None),
            SocketSpec::Path("/run/t.sock".into())
        );
        assert_eq!(SocketSpec::from_vars(Some("  "), None), SocketSpec::Default);
        assert_eq!(SocketSpec::parse("default"), SocketSpec::Default);
    }

    #[test]
    fn resolved_paths() {
        let d = SocketSpec::Default.resolved_path();
        assert!(d.ends_with("default"), "{d:?}");
        let n = SocketSpec::Name("x".into()).resolved_path();
        assert_eq!(n.parent(), d.parent());
        assert_eq!(
            SocketSpec::Path("/nonexistent-dir/s".into()).resolved_path(),
            PathBuf::from("/nonexistent-dir/s")
        );
        assert!(SocketSpec::Path("rel/s".into())
            .resolved_path()
            .is_absolute());
    }

    #[test]
    fn printed_values_are_read_back_only_when_certain() {
        use Printing::*;
        assert_eq!(Raw.unprint("a\\036b").as_deref(), Some("a\\036b"));
        assert_eq!(
            Visible.unprint("#(echo $HOME)").as_deref(),
            Some("#(echo $HOME)")
        );
        // A shell quote's backslash is the value's own.
        assert_eq!(Visible.unprint("'it'\\''s'").as_deref(), Some("'it'\\''s'"));
        assert_eq!(Visible.unprint("a\\036b"), None);
        assert_eq!(Visible.unprint("a\\n"), None);
        assert_eq!(Visible.unprint("a\\$HOME").as_deref(), Some("a\\$HOME"));
        assert_eq!(
            VisibleAndDollar
                .unprint("#(echo \\$HOME \\${X} $1 \\$1)")
                .as_deref(),
            Some("#(echo $HOME ${X} $1 \\$1)")
        );
        // The value's own backslash before `$HOME` prints as `\\\\$HOME`.
        assert_eq!(
            VisibleAndDollar.unprint("a\\\\$HOME").as_deref(),
            Some("a\\$HOME")
        );
        let v = |s: &str| Version::parse(s).unwrap();
        assert_eq!(Capabilities::of(&v("tmux 3.4")).printing, VisibleAndDollar);
        assert_eq!(Capabilities::of(&v("tmux 3.5a")).printing, Visible);
        assert_eq!(Capabilities::of(&v("tmux 3.6a")).printing, Raw);
        assert!(!Capabilities::of(&v("tmux 3.2a")).message_to_client);
        assert!(Capabilities::of(&v("tmux 3.3a")).message_to_client);
        assert!(!Capabilities::of(&v("tmux 3.2a")).joined_capture_exact);
        assert!(Capabilities::of(&v("tmux 3.3a")).joined_capture_exact);
        assert!(Capabilities::of(&v("tmux 3.2a")).popup);
        assert!(!Capabilities::of(&v("tmux 3.1c")).popup);
    }

    #[test]
    fn versions() {
        let v = Version::parse("tmux 3.3a\n").unwrap();
        assert_eq!(
            (v.major, v.minor, v.letter, v.development),
            (3, 3, Some('a'), false)
        );
        assert!(v.at_least(3, 2) && v.at_least(3, 3) && !v.at_least(3, 4));
        let v = Version::parse("tmux next-3.5").unwrap();
        assert_eq!((v.major, v.minor, v.development), (3, 5, true));
        let v = Version::parse("tmux 3.4-rc").unwrap();
        assert_eq!(
            (v.major, v.minor, v.letter, v.development),
            (3, 4, None, true)
        );
        let v = Version::parse("tmux 2.9").unwrap();
        assert!(!v.at_least(3, 0));
        let v = Version::parse("tmux master").unwrap();
        assert!(v.at_least(9, 9));
        let v = Version::parse("tmux openbsd-7.5").unwrap();
        assert!(v.at_least(3, 5));
        assert!(Version::parse("").is_err());
        assert_eq!(Version::parse("tmux 3.3a").unwrap().to_string(), "3.3a");
    }

    #[test]
    fn classification() {
        let s = SocketSpec::Name("x".into());
        let e = classify(
            &s,
            "ls".into(),
            Some(1),
            "no server running on /tmp/tmux-0/x".into(),
        );
        assert!(e.is_no_server());
        let e = classify(
            &s,
            "ls".into(),
            Some(1),
            "error connecting to /tmp/tmux-0/x (No such file or directory)".into(),
        );
        assert!(e.is_no_server());
        let e = classify(&s, "x".into(), Some(1), "can't find pane: %9".into());
        assert!(e.is_target_gone());
        let e = classify(&s, "x".into(), Some(1), "unknown command: frob".into());
        assert!(matches!(e, TmuxError::Failed { .. }));
        assert!(e.to_string().contains("unknown command: frob"));
    }

    #[test]
    fn a_command_is_too_long_by_bytes_or_by_arguments() {
        let args = |n: usize, len: usize| vec!["x".repeat(len); n];
        assert!(too_long(&args(MAX_BATCH_ARGS, 1)).is_ok());
        assert!(matches!(
            too_long(&args(MAX_BATCH_ARGS + 1, 1)),
            Err(TmuxError::TooLong { args: 1001, .. })
        ));
        assert!(too_long(&args(1, MAX_BATCH_BYTES - 1)).is_ok());
        assert!(matches!(
            too_long(&args(1, MAX_BATCH_BYTES)),
            Err(TmuxError::TooLong { args: 1, .. })
        ));
    }

    #[test]
    fn describe_shortens() {
        let long = vec!["x".repeat(500)];
        assert!(describe(&long).chars().count() <= 161);
        assert_eq!(describe(&["a".into(), "b c".into()]), "a \"b c\"");
    }
}
