//! What the relay does to its pty from either of its threads: write to
//! it whole, and signal the command's foreground job.

use std::os::fd::BorrowedFd;
use std::sync::{Mutex, MutexGuard};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{self, Signal};
use nix::unistd::{self, Pid};

/// Writes all of `buf` to a blocking descriptor; false when it is gone.
pub(super) fn write_all(fd: BorrowedFd<'_>, mut buf: &[u8]) -> bool {
    while !buf.is_empty() {
        match unistd::write(fd, buf) {
            Ok(0) => return false,
            Ok(n) => buf = &buf[n..],
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => {
                let mut p = [PollFd::new(fd, PollFlags::POLLOUT)];
                let _ = poll(&mut p, PollTimeout::from(100u16));
            }
            Err(_) => return false,
        }
    }
    true
}

/// The command's foreground process group on the relay's pty (the command
/// itself when that cannot be read).
fn foreground(master: BorrowedFd<'_>, child: Pid) -> Pid {
    unistd::tcgetpgrp(master).unwrap_or(child)
}

/// Sends `sig` to the command's foreground job (and SIGCONT to the
/// session's leader too, which may be stopped with it).
pub(super) fn send(master: BorrowedFd<'_>, child: Pid, sig: Signal) {
    let fg = foreground(master, child);
    let _ = signal::kill(Pid::from_raw(-fg.as_raw()), sig);
    if fg != child && sig == Signal::SIGCONT {
        let _ = signal::kill(child, sig);
    }
}

/// `m` locked, whatever a thread that panicked holding it left: the lock
/// only keeps writes to the pty whole.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
