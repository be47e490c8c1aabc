//! What the relay waits on — the signals' pipe, the command's pty, the
//! user's input — and what each is ready for.
//!
//! An epoll set keeps the relay's interest between waits: `poll(2)` on the
//! two terminals and the pipe hooked and unhooked their wait queues for
//! every piece of output (a third of the relay's system calls at an
//! agent's 60 Hz redraw); `epoll_wait` only collects what is ready. An
//! input epoll cannot
//! watch (a regular file, `/dev/null`) falls back to `poll(2)`, which
//! takes anything; so do systems without epoll, and Linux with
//! `TEND_PLATFORM=portable` (tend-platform's choice).

use std::os::fd::BorrowedFd;

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
#[cfg(target_os = "linux")]
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};

#[cfg(target_os = "linux")]
const SIGNALS: u64 = 0;
#[cfg(target_os = "linux")]
const PTY: u64 = 1;
#[cfg(target_os = "linux")]
const INPUT: u64 = 2;

/// What each is ready for: (signals' pipe, pty, input).
pub(super) type Readiness = (PollFlags, PollFlags, PollFlags);

/// The relay's three descriptors and its interest in each.
pub(super) struct Ready<'a> {
    signals: BorrowedFd<'a>,
    pty: BorrowedFd<'a>,
    input: BorrowedFd<'a>,
    /// `None`: waiting with `poll(2)`.
    #[cfg(target_os = "linux")]
    epoll: Option<Epoll>,
    /// The set asks whether the pty has room for input.
    #[cfg(target_os = "linux")]
    pty_out: bool,
    /// The set holds the input.
    #[cfg(target_os = "linux")]
    input_in: bool,
}

impl<'a> Ready<'a> {
    pub(super) fn new(signals: BorrowedFd<'a>, pty: BorrowedFd<'a>, input: BorrowedFd<'a>) -> Self {
        #[cfg(target_os = "linux")]
        let epoll = (tend_platform::backend() == tend_platform::Backend::Linux)
            .then(|| Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).ok())
            .flatten()
            .filter(|e| {
                e.add(signals, EpollEvent::new(EpollFlags::EPOLLIN, SIGNALS))
                    .is_ok()
                    && e.add(pty, EpollEvent::new(EpollFlags::EPOLLIN, PTY))
                        .is_ok()
            });
        Ready {
            signals,
            pty,
            input,
            #[cfg(target_os = "linux")]
            epoll,
            #[cfg(target_os = "linux")]
            pty_out: false,
            #[cfg(target_os = "linux")]
            input_in: false,
        }
    }

    /// Waits until one of them is ready: the signals' pipe and the pty's
    /// output always, the pty's room for input when `want_out` (input is
    /// held), the user's input when `want_in`. `None`: waiting failed.
    pub(super) fn wait(&mut self, want_out: bool, want_in: bool) -> Option<Readiness> {
        #[cfg(target_os = "linux")]
        {
            if self.epoll.is_some() && !self.interest(want_out, want_in) {
                self.epoll = None;
            }
            if let Some(epoll) = &self.epoll {
                return wait_epoll(epoll);
            }
        }
        self.wait_poll(want_out, want_in)
    }

    /// Brings the set's interest to what is wanted; false when the set
    /// cannot hold it (the input is a regular file or `/dev/null`).
    #[cfg(target_os = "linux")]
    fn interest(&mut self, want_out: bool, want_in: bool) -> bool {
        let Some(epoll) = &self.epoll else {
            return false;
        };
        if want_out != self.pty_out {
            let mut flags = EpollFlags::EPOLLIN;
            if want_out {
                flags |= EpollFlags::EPOLLOUT;
            }
            if epoll
                .modify(self.pty, &mut EpollEvent::new(flags, PTY))
                .is_err()
            {
                return false;
            }
            self.pty_out = want_out;
        }
        if want_in != self.input_in {
            let done = if want_in {
                epoll.add(self.input, EpollEvent::new(EpollFlags::EPOLLIN, INPUT))
            } else {
                epoll.delete(self.input)
            };
            if done.is_err() {
                return false;
            }
            self.input_in = want_in;
        }
        true
    }

    fn wait_poll(&self, want_out: bool, want_in: bool) -> Option<Readiness> {
        let pty_wants = if want_out {
            PollFlags::POLLIN | PollFlags::POLLOUT
        } else {
            PollFlags::POLLIN
        };
        let mut fds = [
            PollFd::new(self.signals, PollFlags::POLLIN),
            PollFd::new(self.pty, pty_wants),
            PollFd::new(self.input, PollFlags::POLLIN),
        ];
        let n = if want_in { 3 } else { 2 };
        loop {
            match poll(&mut fds[..n], PollTimeout::NONE) {
                Ok(_) => break,
                Err(Errno::EINTR) => continue,
                Err(_) => return None,
            }
        }
        let ready = |i: usize| {
            fds[..n]
                .get(i)
                .and_then(|f| f.revents())
                .unwrap_or(PollFlags::empty())
        };
        Some((ready(0), ready(1), ready(2)))
    }
}

#[cfg(target_os = "linux")]
fn wait_epoll(epoll: &Epoll) -> Option<Readiness> {
    let mut events = [EpollEvent::empty(); 3];
    let n = loop {
        match epoll.wait(&mut events, EpollTimeout::NONE) {
            Ok(n) => break n,
            Err(Errno::EINTR) => continue,
            Err(_) => return None,
        }
    };
    let mut ready = (PollFlags::empty(), PollFlags::empty(), PollFlags::empty());
    for event in &events[..n] {
        let flags = as_poll(event.events());
        match event.data() {
            SIGNALS => ready.0 |= flags,
            PTY => ready.1 |= flags,
            INPUT => ready.2 |= flags,
            _ => {}
        }
    }
    Some(ready)
}

/// epoll's readiness in `poll(2)`'s words (the relay's loop reads those).
#[cfg(target_os = "linux")]
fn as_poll(flags: EpollFlags) -> PollFlags {
    let mut out = PollFlags::empty();
    for (e, p) in [
        (EpollFlags::EPOLLIN, PollFlags::POLLIN),
        (EpollFlags::EPOLLOUT, PollFlags::POLLOUT),
        (EpollFlags::EPOLLHUP, PollFlags::POLLHUP),
        (EpollFlags::EPOLLERR, PollFlags::POLLERR),
    ] {
        if flags.contains(e) {
            out |= p;
        }
    }
    out
}
