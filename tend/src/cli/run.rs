//! `tend run -- COMMAND [ARGS]`: a transparent PTY relay that answers the
//! OSC 7501 query for the terminal, and `tend shell-init`, which wraps the
//! known agents' commands in it.
//!
//! An agent that speaks the Program Status Protocol (OSC 7501) first asks
//! its terminal whether it listens — `ESC ] 7501 ; ? ST` followed by a DA1
//! request — and reports its state only if the query comes back before the
//! DA1 reply. tmux never answers, so inside tmux such an agent stays
//! silent. `tend run` starts the command on a pty of its own and relays
//! every byte both ways unchanged, with one addition: when the command's
//! output holds the query, `ESC ] 7501 ; ? ESC \` goes into the command's
//! input at once — before the output that holds the DA1 request is passed
//! on, so before tmux can answer that. The reports then travel on to tmux
//! like any output, where tend's tap reads them (`tend_detector::psp`); the
//! daemon takes them as the pane's word only while a relay holds the
//! pane's terminal (`core/src/watch.rs`).
//!
//! The relay:
//!
//! * puts the outer terminal in raw mode (restored on exit, on a stop, and
//!   on the signals that end it), so Ctrl-C, Ctrl-Z and every other key
//!   reach the command's pty as bytes, whose line discipline makes them
//!   signals for the command;
//! * copies the outer terminal's settings and size to the pty at start,
//!   and the size again on every SIGWINCH (the kernel then signals the
//!   command);
//! * forwards SIGHUP, SIGTERM, SIGINT and SIGQUIT sent to itself to the
//!   command's foreground group;
//! * stops itself when the command stops (Ctrl-Z), so the outer shell's job
//!   control takes over, and continues the command when it is continued.
//!   For Ctrl-Z to stop the command at all, the command must not be alone
//!   in its session (the kernel discards terminal stop signals to an
//!   orphaned process group): the pty's session is led by a small helper,
//!   `tend run-session`, which runs the command as its session's foreground
//!   job the way a shell does, stops with it and passes its status on;
//! * exits with the command's status: its exit code, or 128 + the signal
//!   that killed it;
//! * under another relay's pty (`TEND_RUN` names it) just runs the command,
//!   so wrappers can nest (`tend run -- ssh host tend run -- claude`
//!   answers on both ends, once each).
//!
//! The command's output is passed on by a thread that blocks in `read` on
//! the pty, as `cat` would (`run/output.rs`), and the user's keys go in
//! from a thread of their own (`run/keys.rs`); the relay's own loop waits
//! with `poll` on the rarer things, the signals and the user's input.
//!
//! Why `nix` (`openpty`, termios, `poll`, `waitpid`) rather than
//! `portable-pty` or `pty-process`: it is already in the build, well kept,
//! and a relay needs the raw calls anyway (raw mode, `TIOCSWINSZ`, the
//! stop/continue dance); `portable-pty` brings a Windows abstraction tend
//! does not need, `pty-process` an async runtime around the same calls.

use crate::error::ErrorKind;
use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

use clap::{Args, ValueEnum};
use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, FdFlag, OFlag};
use nix::libc;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::pty::{openpty, Winsize};
use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::sys::termios::{self, SetArg, Termios};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{self, Pid};

use crate::error::CliError;

mod keys;
mod output;
mod pty;

use pty::send;

/// The environment variable naming the relay's pty (for the command and
/// everything it starts).
pub const ENV: &str = "TEND_RUN";

/// Arguments of `tend run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The command and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

/// The shells `tend shell-init` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InitShell {
    /// bash.
    Bash,
    /// zsh.
    Zsh,
    /// fish.
    Fish,
}

/// Arguments of `tend shell-init`.
#[derive(Debug, Args)]
pub struct ShellInitArgs {
    /// The shell: bash, zsh or fish.
    pub shell: InitShell,
}

// ---------------------------------------------------------------------------
// `tend shell-init`.

/// Whether `name` may be a shell function's name as written here: a letter
/// first, then letters, digits, `_` and `-` (a user's manifest can name
/// anything as an executable; nothing else reaches the shell).
fn safe_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.len() <= 64
}

/// The agents' command names, from the manifests (bundled and the user's).
pub fn agent_commands(registry: &tend_detector::Registry) -> Vec<String> {
    let mut names: Vec<String> = registry
        .ids()
        .iter()
        .filter_map(|id| registry.get(id))
        .flat_map(|m| m.identity.executables.iter().cloned())
        .filter(|n| safe_name(n))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The opt-in functions for `shell`, wrapping `commands`.
pub fn shell_init(shell: InitShell, commands: &[String]) -> String {
    let mut s = String::new();
    let how = match shell {
        InitShell::Bash => "~/.bashrc: eval \"$(tend shell-init bash)\"",
        InitShell::Zsh => "~/.zshrc: eval \"$(tend shell-init zsh)\"",
        InitShell::Fish => "~/.config/fish/config.fish: tend shell-init fish | source",
    };
    s.push_str(&format!(
        "# tend: the coding agents below run through `tend run` inside tmux or zellij,\n\
         # which answers their OSC 7501 query, so that they report their own state.\n\
         # Outside tmux and zellij they run as before. In {how}\n"
    ));
    match shell {
        InitShell::Bash | InitShell::Zsh => {
            s.push_str(
                "__tend_run() {\n  \
                   if [ -n \"${TMUX-}\" ] || [ -n \"${ZELLIJ-}\" ]; then\n    \
                     command tend run -- \"$@\"\n  \
                   else\n    \
                     command \"$@\"\n  \
                   fi\n\
                 }\n",
            );
            for c in commands.iter().filter(|c| safe_name(c)) {
                s.push_str(&format!("{c}() {{ __tend_run {c} \"$@\"; }}\n"));
            }
        }
        InitShell::Fish => {
            s.push_str(
                "function __tend_run\n    \
                   if set -q TMUX; or set -q ZELLIJ\n        \
                     command tend run -- $argv\n    \
                   else\n        \
                     command $argv\n    \
                   end\n\
                 end\n",
            );
            for c in commands.iter().filter(|c| safe_name(c)) {
                s.push_str(&format!(
                    "function {c} --wraps {c}\n    __tend_run {c} $argv\nend\n"
                ));
            }
        }
    }
    s
}

/// Runs `tend shell-init`.
pub fn init(args: &ShellInitArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (registry, _errors) = crate::manifests::load();
    out.write_all(shell_init(args.shell, &agent_commands(&registry)).as_bytes())
        .map_err(|e| CliError::new(ErrorKind::Io, format!("cannot write output: {e}")))
}

// ---------------------------------------------------------------------------
// The relay.

/// The write end of the signal pipe (the handler writes the signal's
/// number; -1 before the relay starts).
static SIGNAL_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = SIGNAL_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; the buffer is one byte on
        // this stack; the descriptor is non-blocking (a full pipe drops the
        // byte, and a pending byte for the same signal is enough).
        unsafe {
            libc::write(fd, (&b as *const u8).cast(), 1);
        }
    }
}

/// The signals the relay handles.
const HANDLED: [Signal; 7] = [
    Signal::SIGWINCH,
    Signal::SIGCHLD,
    Signal::SIGHUP,
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGQUIT,
    Signal::SIGCONT,
];

fn winsize(fd: BorrowedFd<'_>) -> Option<Winsize> {
    let mut ws = Winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into `ws`, which outlives the
    // call.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_row > 0 && ws.ws_col > 0).then_some(ws)
}

fn set_winsize(fd: BorrowedFd<'_>, ws: &Winsize) {
    // SAFETY: TIOCSWINSZ reads one `winsize` from `ws`.
    unsafe {
        libc::ioctl(fd.as_raw_fd(), libc::TIOCSWINSZ, ws);
    }
}

fn cloexec(fd: BorrowedFd<'_>) {
    let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
}

fn nonblocking(fd: BorrowedFd<'_>) {
    if let Ok(flags) = fcntl(fd, FcntlArg::F_GETFL) {
        let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
        let _ = fcntl(fd, FcntlArg::F_SETFL(flags));
    }
}

/// The outer terminal's settings, put back when dropped.
struct RawMode {
    saved: Option<Termios>,
}

impl RawMode {
    fn enter(saved: Option<&Termios>) -> Self {
        let raw = RawMode {
            saved: saved.cloned(),
        };
        raw.apply();
        raw
    }

    fn apply(&self) {
        if let Some(t) = &self.saved {
            let mut raw = t.clone();
            termios::cfmakeraw(&mut raw);
            let _ = termios::tcsetattr(std::io::stdin(), SetArg::TCSANOW, &raw);
        }
    }

    fn restore(&self) {
        if let Some(t) = &self.saved {
            let _ = termios::tcsetattr(std::io::stdin(), SetArg::TCSADRAIN, t);
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        self.restore();
    }
}

fn status_code(status: WaitStatus) -> Option<u8> {
    match status {
        WaitStatus::Exited(_, code) => Some((code & 0xff) as u8),
        WaitStatus::Signaled(_, sig, _) => Some(128u8.saturating_add(sig as u8)),
        _ => None,
    }
}

fn fail(msg: String, code: u8) -> ExitCode {
    // The command's name and the system's words, shown as text.
    eprintln!("tend run: {}", crate::error::visible(&msg));
    ExitCode::from(code)
}

/// The command could not be started: 127 when there is no such program,
/// 126 otherwise, as a shell says.
fn cannot_run(program: &std::ffi::OsStr, e: &std::io::Error) -> ExitCode {
    let code = if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    fail(
        format!("cannot run `{}`: {e}", program.to_string_lossy()),
        code,
    )
}

/// Runs `tend run`: the command on a pty of its own, relayed both ways;
/// returns its exit status.
pub fn main(args: &RunArgs) -> ExitCode {
    let Some((program, rest)) = args.command.split_first() else {
        return fail("name a command: tend run -- COMMAND [ARGS]".into(), 2);
    };
    let stdin = std::io::stdin();
    let outer_tty = unistd::isatty(stdin.as_fd()).unwrap_or(false);
    let outer_name = outer_tty
        .then(|| unistd::ttyname(stdin.as_fd()).ok())
        .flatten();
    // Already on a relay's pty: that relay answers.
    if let (Some(name), Some(relay)) = (&outer_name, std::env::var_os(ENV)) {
        if name.as_os_str() == relay {
            let e = std::process::Command::new(program).args(rest).exec();
            return cannot_run(program, &e);
        }
    }
    let saved = if outer_tty {
        termios::tcgetattr(stdin.as_fd()).ok()
    } else {
        None
    };
    let size = winsize(stdin.as_fd())
        .or_else(|| winsize(std::io::stdout().as_fd()))
        .unwrap_or(Winsize {
            ws_row: 24,
            ws_col: 80,
            ws_xpixel: 0,
            ws_ypixel: 0,
        });
    let pty = match openpty(Some(&size), saved.as_ref()) {
        Ok(p) => p,
        Err(e) => return fail(format!("cannot open a pty: {e}"), 1),
    };
    let (master, slave) = (pty.master, pty.slave);
    cloexec(master.as_fd());
    cloexec(slave.as_fd());
    let pts = match unistd::ttyname(slave.as_fd()) {
        Ok(p) => p,
        Err(e) => return fail(format!("cannot name the pty: {e}"), 1),
    };
    let stdio = |fd: &OwnedFd| fd.try_clone().map(std::process::Stdio::from);
    let (Ok(i), Ok(o), Ok(e)) = (stdio(&slave), stdio(&slave), stdio(&slave)) else {
        return fail("cannot share the pty with the command".into(), 1);
    };
    // The session's leader: the helper running the command as its
    // foreground job (else the command itself, whose Ctrl-Z then does
    // nothing).
    let mut cmd = match std::env::current_exe() {
        Ok(me) => {
            let mut c = std::process::Command::new(me);
            c.arg("run-session").arg("--").arg(program).args(rest);
            c
        }
        Err(_) => {
            let mut c = std::process::Command::new(program);
            c.args(rest);
            c
        }
    };
    cmd.stdin(i).stdout(o).stderr(e).env(ENV, &pts);
    // SAFETY: between fork and exec only async-signal-safe calls: setsid(2)
    // and ioctl(2) making the pty (the child's stdin) its controlling
    // terminal.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return cannot_run(program, &e),
    };
    drop(cmd);
    drop(slave);
    let pid = Pid::from_raw(child.id() as i32);
    // The child is reaped with waitpid below, not through `child`.
    std::mem::forget(child);
    register_with_daemon();
    relay(master, pid, saved.as_ref(), outer_tty)
}

/// Tells the daemon watching this pane, on its socket, that this process
/// relays it, and holds the connection open while it lives (a thread,
/// connecting again a second after a daemon goes away). The daemon takes
/// this process's pid from the kernel, so only a relay that said so is
/// believed: a program that merely looks like `tend run` is not. Outside
/// tmux and zellij, or with no daemon, nothing is said and the relay
/// works all the same.
fn register_with_daemon() {
    use std::io::{BufRead, BufReader, Read, Write};
    let in_tmux = std::env::var_os("TMUX").is_some();
    if !in_tmux && std::env::var_os("ZELLIJ_SESSION_NAME").is_none() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("relay-hello".into())
        .spawn(move || {
            let hello = crate::client::request_line(tend_protocol::params::Relay {});
            let mut pause = std::time::Duration::from_secs(1);
            loop {
                let registered = control_socket(in_tmux)
                    .and_then(|control| crate::client::connect(&control).ok())
                    .filter(|stream| {
                        let mut stream = stream;
                        stream.write_all(hello.as_bytes()).is_ok()
                    });
                if let Some(stream) = registered {
                    let mut answer = String::new();
                    let _ = BufReader::new(&stream).read_line(&mut answer);
                    // Held until the daemon goes.
                    let mut rest = [0u8; 64];
                    let mut stream = &stream;
                    while matches!(stream.read(&mut rest), Ok(n) if n > 0) {}
                    pause = std::time::Duration::from_secs(1);
                } else {
                    pause = (pause * 2).min(std::time::Duration::from_secs(30));
                }
                std::thread::sleep(pause);
            }
        });
    drop(spawned);
}

/// The socket of the daemon that watches this pane: in tmux, where the
/// daemon said it is (`@tend_control`, whatever this process's own
/// environment would make of it); in zellij, where the CLI looks.
fn control_socket(in_tmux: bool) -> Option<std::path::PathBuf> {
    if in_tmux {
        // `$TMUX` is `socket,pid,session`: the server this pane is in.
        let tmux = std::env::var("TMUX").ok()?;
        let socket = tmux.split(',').next().filter(|s| s.starts_with('/'))?;
        let server = tend_tmux::Server::new(tend_tmux::SocketSpec::Path(socket.into()));
        let path = server
            .show_option(tend_tmux::Scope::Global, "@tend_control")
            .ok()
            .flatten()?;
        return Some(std::path::PathBuf::from(path.trim_end()));
    }
    super::target::Target::resolve(&Default::default())
        .ok()
        .map(|t| t.control)
}

fn signal_pipe() -> Option<OwnedFd> {
    let (r, w) = unistd::pipe().ok()?;
    for fd in [r.as_fd(), w.as_fd()] {
        cloexec(fd);
        nonblocking(fd);
    }
    // The write end lives as long as the process (the handler may run at
    // any time).
    SIGNAL_FD.store(w.as_raw_fd(), Ordering::Relaxed);
    std::mem::forget(w);
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for s in HANDLED {
        // SAFETY: the handler only writes one byte to a pipe.
        let _ = unsafe { signal::sigaction(s, &action) };
    }
    Some(r)
}

fn relay(master: OwnedFd, child: Pid, saved: Option<&Termios>, outer_tty: bool) -> ExitCode {
    let Some(sigs) = signal_pipe() else {
        let _ = signal::kill(child, Signal::SIGHUP);
        return fail("cannot set up signals".into(), 1);
    };
    // The child may have ended before the handler was in place.
    wake_relay(libc::SIGCHLD as u8);
    let raw = RawMode::enter(saved);
    let stdin = std::io::stdin();
    // SAFETY: fd 0 stays open for the life of the process.
    let inp = unsafe { BorrowedFd::borrow_raw(stdin.as_raw_fd()) };
    // The pty's input has one writer: the user's keys and the query's
    // answers (from the output thread) in the order they are handed over.
    let keys = match keys::Keys::start(&master, || wake_relay(KEYS_DRAINED)) {
        Ok(keys) => keys,
        Err(e) => {
            let _ = signal::kill(child, Signal::SIGHUP);
            drop(raw);
            return fail(format!("cannot start the relay's input: {e}"), 1);
        }
    };
    let flow = match output::start(&master, child, keys.clone(), || wake_relay(OUTPUT_ENDED)) {
        Ok(flow) => flow,
        Err(e) => {
            let _ = signal::kill(child, Signal::SIGHUP);
            drop(raw);
            return fail(format!("cannot start the relay's output: {e}"), 1);
        }
    };
    let mut r = Relay {
        master: master.as_fd(),
        child,
        inp,
        outer_tty,
        keys,
        buf: vec![0u8; 64 * 1024],
        stdin_open: true,
        master_open: true,
        status: None,
    };
    while r.status.is_none() && r.master_open {
        let mut fds = [
            PollFd::new(sigs.as_fd(), PollFlags::POLLIN),
            PollFd::new(inp, PollFlags::POLLIN),
        ];
        // Not while the keys already given wait for the command to read
        // them: the rest waits in the user's terminal.
        let n = if r.stdin_open && r.keys.accepting() {
            2
        } else {
            1
        };
        match poll(&mut fds[..n], PollTimeout::NONE) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => break,
        }
        let ready = |i: usize| fds[..n].get(i).and_then(|f| f.revents());
        if ready(0).is_some_and(|f| !f.is_empty()) {
            r.signals(&sigs, &raw);
        }
        if ready(1).is_some_and(|f| {
            f.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
        }) {
            r.pass_input();
        }
    }
    let code = r.finish();
    // What the command wrote before it ended goes out first (without
    // waiting for a background process that still holds the pty).
    flow.settle();
    drop(raw);
    ExitCode::from(code)
}

/// Wakes the relay's loop as the signal handler does: `byte` is a signal's
/// number, or [`OUTPUT_ENDED`].
fn wake_relay(byte: u8) {
    // SAFETY: the pipe's write end lives for the whole process.
    let fd = unsafe { BorrowedFd::borrow_raw(SIGNAL_FD.load(Ordering::Relaxed)) };
    let _ = unistd::write(fd, &[byte]);
}

/// Written to the signals' pipe when the pty's output has ended (no
/// signal is numbered 0).
const OUTPUT_ENDED: u8 = 0;

/// Written to the signals' pipe when the keys queued for the command fell
/// under [`keys::MAX_QUEUED`] (signals are numbered below 128): the loop
/// reads the user's input again.
const KEYS_DRAINED: u8 = 255;

/// The relay's state between two waits.
struct Relay<'a> {
    master: BorrowedFd<'a>,
    child: Pid,
    inp: BorrowedFd<'a>,
    /// The relay's input is a terminal (else a file or a pipe).
    outer_tty: bool,
    /// The user's keys on their way into the pty.
    keys: keys::Keys,
    buf: Vec<u8>,
    stdin_open: bool,
    master_open: bool,
    /// The command's exit status, once reaped.
    status: Option<u8>,
}

impl Relay<'_> {
    /// The signals the handler wrote down: a resize, the command's end, a
    /// resumed relay, or one to pass on to the command; and the end of the
    /// pty's output.
    fn signals(&mut self, sigs: &OwnedFd, raw: &RawMode) {
        let mut got = [0u8; 64];
        let n = unistd::read(sigs, &mut got).unwrap_or(0);
        for &s in &got[..n] {
            if s == OUTPUT_ENDED {
                self.master_open = false;
                continue;
            }
            if s == KEYS_DRAINED {
                // The next wait reads the user's input again.
                continue;
            }
            match Signal::try_from(i32::from(s)) {
                Ok(Signal::SIGWINCH) => {
                    if let Some(ws) = winsize(self.inp) {
                        set_winsize(self.master, &ws);
                    }
                }
                Ok(Signal::SIGCHLD) => {
                    self.status = reap(self.child, self.master, raw, self.inp);
                }
                Ok(Signal::SIGCONT) => {
                    raw.apply();
                    if let Some(ws) = winsize(self.inp) {
                        set_winsize(self.master, &ws);
                    }
                }
                Ok(sig @ (Signal::SIGHUP | Signal::SIGTERM | Signal::SIGINT | Signal::SIGQUIT)) => {
                    send(self.master, self.child, sig)
                }
                _ => {}
            }
        }
    }

    /// The user's input, for the command (queued whole for the keys'
    /// thread: the pty takes it as the command reads).
    fn pass_input(&mut self) {
        match unistd::read(self.inp, &mut self.buf) {
            Ok(0) => {
                self.stdin_open = false;
                if !self.outer_tty {
                    // Input from a file or pipe ended: end of file for the
                    // command (VEOF at the start of a line), after the
                    // input before it.
                    self.keys.send(b"\x04");
                }
            }
            Ok(n) => self.keys.send(&self.buf[..n]),
            Err(Errno::EAGAIN | Errno::EINTR) => {}
            Err(_) => self.stdin_open = false,
        }
    }

    /// The command's exit status (waiting for it if the pty closed first).
    fn finish(&mut self) -> u8 {
        match self.status {
            Some(c) => c,
            None => loop {
                match waitpid(self.child, None) {
                    Ok(s) => {
                        if let Some(c) = status_code(s) {
                            break c;
                        }
                    }
                    Err(Errno::EINTR) => {}
                    Err(_) => break 1,
                }
            },
        }
    }
}

/// A SIGCHLD: the command ended (its status), or stopped (the relay stops
/// too, handing the outer terminal back, and continues the command when it
/// is continued itself).
fn reap(child: Pid, master: BorrowedFd<'_>, raw: &RawMode, inp: BorrowedFd<'_>) -> Option<u8> {
    loop {
        match waitpid(child, Some(WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED)) {
            Ok(WaitStatus::StillAlive) => return None,
            Ok(WaitStatus::Stopped(_, _)) => {
                raw.restore();
                let _ = signal::kill(unistd::getpid(), Signal::SIGSTOP);
                // Continued (`fg`).
                raw.apply();
                if let Some(ws) = winsize(inp) {
                    set_winsize(master, &ws);
                }
                send(master, child, Signal::SIGCONT);
            }
            Ok(s) => {
                if let Some(c) = status_code(s) {
                    return Some(c);
                }
            }
            Err(Errno::EINTR) => {}
            Err(_) => return Some(1),
        }
    }
}

// ---------------------------------------------------------------------------
// The session's leader.

/// Runs `tend run-session`: started by the relay as the leader of a new
/// session on its pty, it runs the command as that session's foreground
/// job, as a shell does, so that terminal stop signals (Ctrl-Z) reach it;
/// stops itself when the command stops, continues it when continued, and
/// ends as the command ended (its exit code, or the same signal).
pub fn session(args: &RunArgs) -> ExitCode {
    let Some((program, rest)) = args.command.split_first() else {
        return fail("name a command: tend run -- COMMAND [ARGS]".into(), 2);
    };
    let mut cmd = std::process::Command::new(program);
    cmd.args(rest);
    // SAFETY: between fork and exec only async-signal-safe calls: the
    // child takes a process group of its own and the terminal (with
    // SIGTTOU ignored meanwhile, as it is not yet the foreground), then
    // restores the signals' default actions.
    unsafe {
        cmd.pre_exec(|| {
            libc::setpgid(0, 0);
            libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            libc::tcsetpgrp(0, libc::getpid());
            for s in [
                libc::SIGTTOU,
                libc::SIGTTIN,
                libc::SIGTSTP,
                libc::SIGINT,
                libc::SIGQUIT,
                libc::SIGHUP,
            ] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    // The leader ignores the job-control signals a shell ignores.
    for s in [Signal::SIGTTOU, Signal::SIGTTIN, Signal::SIGTSTP] {
        // SAFETY: setting a disposition to SIG_IGN runs no code.
        let _ = unsafe { signal::signal(s, SigHandler::SigIgn) };
    }
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return cannot_run(program, &e),
    };
    let pid = Pid::from_raw(child.id() as i32);
    std::mem::forget(child);
    // Both sides give the child the terminal (whichever runs first).
    let _ = unistd::setpgid(pid, pid);
    let _ = unistd::tcsetpgrp(std::io::stdin(), pid);
    loop {
        match waitpid(pid, Some(WaitPidFlag::WUNTRACED)) {
            Ok(WaitStatus::Stopped(_, _)) => {
                // Stopped with it; the relay stops too. Continued: so is
                // the command.
                let _ = signal::kill(unistd::getpid(), Signal::SIGSTOP);
                let _ = unistd::tcsetpgrp(std::io::stdin(), pid);
                let _ = signal::kill(Pid::from_raw(-pid.as_raw()), Signal::SIGCONT);
            }
            Ok(WaitStatus::Exited(_, code)) => return ExitCode::from((code & 0xff) as u8),
            Ok(WaitStatus::Signaled(_, sig, _)) => {
                // End the same way, so the relay reports 128 + sig.
                // SAFETY: restoring the default action runs no code.
                let _ = unsafe { signal::signal(sig, SigHandler::SigDfl) };
                let mut set = SigSet::empty();
                set.add(sig);
                let _ = set.thread_unblock();
                let _ = signal::kill(unistd::getpid(), sig);
                return ExitCode::from(128u8.saturating_add(sig as u8));
            }
            Ok(_) => {}
            Err(Errno::EINTR) => {}
            Err(_) => return ExitCode::from(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::output::Answerer;
    use super::*;

    #[test]
    fn queries_are_found_however_the_output_is_split() {
        let out = b"hello\x1b]7501;?\x07\x1b[c more \x1b]7501;?\x1b\\\x1b]7501;state=idle\x07";
        let mut a = Answerer::default();
        assert_eq!(a.queries(out), 2);
        for cut in 1..out.len() {
            let mut a = Answerer::default();
            assert_eq!(
                a.queries(&out[..cut]) + a.queries(&out[cut..]),
                2,
                "cut at {cut}"
            );
        }
        // Reports, other OSCs and the answer itself are not queries.
        let mut a = Answerer::default();
        assert_eq!(
            a.queries(b"\x1b]7501;state=working\x07\x1b]0;?\x07\x1b]7501; ?x\x07"),
            0
        );
    }

    #[test]
    fn shell_init_wraps_only_safe_names() {
        let names: Vec<String> = [
            "claude",
            "codex",
            "cursor-agent",
            "x;rm -rf ~",
            "$(id)",
            "-v",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let sh = shell_init(InitShell::Bash, &names);
        assert!(sh.contains("claude() { __tend_run claude \"$@\"; }\n"));
        assert!(sh.contains("cursor-agent() { __tend_run cursor-agent \"$@\"; }\n"));
        assert!(sh.contains("[ -n \"${TMUX-}\" ] || [ -n \"${ZELLIJ-}\" ]"));
        assert!(!sh.contains("rm -rf"));
        assert!(!sh.contains("$(id)"));
        assert!(!sh.contains("-v()"));
        let fish = shell_init(InitShell::Fish, &names);
        assert!(fish.contains("function codex --wraps codex\n    __tend_run codex $argv\nend\n"));
        assert!(fish.contains("if set -q TMUX; or set -q ZELLIJ"));
        // The bundled agents are all there.
        let cmds = agent_commands(&tend_detector::Registry::bundled());
        for c in ["claude", "codex", "gemini", "aider", "opencode"] {
            assert!(cmds.iter().any(|x| x == c), "{c}");
        }
    }

    #[test]
    fn exit_status_codes() {
        let p = Pid::from_raw(1);
        assert_eq!(status_code(WaitStatus::Exited(p, 3)), Some(3));
        assert_eq!(
            status_code(WaitStatus::Signaled(p, Signal::SIGINT, false)),
            Some(130)
        );
        assert_eq!(
            status_code(WaitStatus::Signaled(p, Signal::SIGKILL, true)),
            Some(137)
        );
        assert_eq!(status_code(WaitStatus::Stopped(p, Signal::SIGTSTP)), None);
    }
}
