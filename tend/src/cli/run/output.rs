//! The command's output, passed on by a thread of its own that blocks in
//! `read(2)` on the pty, as `cat` does.
//!
//! Waiting on the pty together with the signals and the user's input (one
//! `poll` or `epoll_wait` before every `read`) cost a system call for each
//! piece of output: at an agent's 60 Hz redraw a third of the relay's
//! calls, and the relay cost 1.3–1.5× what `cat` costs copying the same
//! bytes from a pty. Here each piece costs what it costs `cat` — one
//! `read`, one `write` — plus the scan for the query; the relay's own loop
//! waits on the rarer things (signals, keys) with `poll`.
//!
//! The query's answer is handed to the pty's input (`run/keys.rs`, the one
//! writer of it, the user's keys too) before the piece of output that
//! holds the query is passed on, so before the terminal can answer the DA1
//! request behind it.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex};

use super::keys::Keys;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::Signal;
use nix::unistd::{self, Pid};
use tend_detector::psp::{Found, Scanner, QUERY_ANSWER};

use super::pty::{lock, send, write_all};

/// How long the pty must stay quiet after the command ended before the
/// relay exits while something else (a background job) still holds it.
const QUIET: Duration = Duration::from_millis(50);

/// The output thread, as the relay's loop sees it.
pub(super) struct Flow {
    shared: Arc<Mutex<Shared>>,
}

struct Shared {
    /// When the last piece of output was passed on.
    last: Instant,
    /// The pty's output ended (every holder of its other side closed it).
    done: bool,
}

/// Starts passing the command's output (read from `master`) on to this
/// process's standard output; query's answers go to `input`. `on_end`
/// runs on that thread once the output has ended.
pub(super) fn start(
    master: &OwnedFd,
    child: Pid,
    input: Keys,
    on_end: impl FnOnce() + Send + 'static,
) -> std::io::Result<Flow> {
    let pty = master.try_clone()?;
    let shared = Arc::new(Mutex::new(Shared {
        last: Instant::now(),
        done: false,
    }));
    let theirs = shared.clone();
    std::thread::Builder::new()
        .name("relay-output".into())
        .spawn(move || {
            pass_on(&pty, child, &input, &theirs);
            on_end();
        })?;
    Ok(Flow { shared })
}

fn pass_on(pty: &OwnedFd, child: Pid, input: &Keys, shared: &Mutex<Shared>) {
    let stdout = std::io::stdout();
    let out = stdout.as_fd();
    let mut buf = vec![0u8; 64 * 1024];
    let mut answerer = Answerer::default();
    let mut stdout_open = true;
    loop {
        match unistd::read(pty, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                // Held while the piece goes out: the relay exits only
                // between pieces.
                let mut now = lock(shared);
                let piece = &buf[..n];
                for _ in 0..answerer.queries(piece) {
                    input.send(QUERY_ANSWER);
                }
                if stdout_open && !write_all(out, piece) {
                    // The outer terminal is gone: the command is told, and
                    // its output still read so that it never blocks.
                    stdout_open = false;
                    send(pty.as_fd(), child, Signal::SIGHUP);
                }
                now.last = Instant::now();
            }
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => {
                // Only if something made the pty non-blocking.
                let mut p = [PollFd::new(pty.as_fd(), PollFlags::POLLIN)];
                let _ = poll(&mut p, PollTimeout::from(100u16));
            }
            // EIO: every holder of the pty's other side closed it.
            Err(_) => break,
        }
    }
    lock(shared).done = true;
}

impl Flow {
    /// Returns once the command's output has all been passed on: the pty
    /// closed, or stayed quiet for [`QUIET`] (a background job may hold it
    /// open for good). The thread passes nothing on after this: the relay
    /// is about to exit.
    pub(super) fn settle(self) {
        let asked = Instant::now();
        loop {
            let shared = lock(&self.shared);
            let quiet = shared.last.max(asked).elapsed();
            if shared.done || quiet >= QUIET {
                // Kept locked until the process exits.
                std::mem::forget(shared);
                return;
            }
            drop(shared);
            std::thread::sleep((QUIET - quiet).min(Duration::from_millis(10)));
        }
    }
}

// The query: found in the command's output, answered in its input.

/// Finds the OSC 7501 queries in the command's output, however it is split
/// into reads.
#[derive(Debug, Default)]
pub struct Answerer {
    scanner: Scanner,
}

impl Answerer {
    /// How many queries end in `bytes` (each is answered with
    /// [`QUERY_ANSWER`](tend_detector::psp::QUERY_ANSWER)).
    pub fn queries(&mut self, bytes: &[u8]) -> usize {
        let mut n = 0;
        self.scanner.scan(bytes, |f| {
            if let Found::Sequence(body) = f {
                if body == b"?" {
                    n += 1;
                }
            }
        });
        n
    }
}
