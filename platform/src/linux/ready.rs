//! [`EpollSet`]: which of the panes' pipes are readable, from one `epoll`
//! set holding every pipe and the tap socket.
//!
//! Registered once: a read tick asks which are readable without handing
//! the kernel the whole list (`poll` did, and it was a fifth of the
//! reading's time). While no pane prints the event loop waits on the set
//! itself (an `epoll` set can be waited on like any descriptor): the
//! doorbell is another descriptor of it. A descriptor closed by its last
//! holder leaves the set on its own.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};

use nix::poll::PollTimeout;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};

/// The set (see the module).
#[derive(Debug)]
pub struct EpollSet {
    epoll: Epoll,
    /// What the last [`EpollSet::ready`] returned, reused; grown to hold
    /// every watched descriptor.
    events: Vec<EpollEvent>,
}

impl EpollSet {
    /// An empty set.
    pub fn new() -> io::Result<EpollSet> {
        Ok(EpollSet {
            epoll: Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?,
            events: Vec::new(),
        })
    }

    /// Watches `fd` for input under `key`.
    pub fn add(&self, fd: BorrowedFd<'_>, key: u64) -> io::Result<()> {
        self.epoll
            .add(fd, EpollEvent::new(EpollFlags::EPOLLIN, key))
            .map_err(io::Error::from)
    }

    /// Appends the keys of the readable (or closed) descriptors to `out`,
    /// without waiting; `watched` is how many are in the set.
    pub fn ready(&mut self, watched: usize, out: &mut Vec<u64>) -> io::Result<()> {
        // Room for every descriptor at once: level-triggered `epoll` answers
        // the readable ones again at each call, so a smaller buffer asked
        // again until it comes back short would never end while more pipes
        // than it holds are readable.
        if self.events.len() < watched {
            self.events.resize(watched, EpollEvent::empty());
        }
        let n = self.epoll.wait(&mut self.events, PollTimeout::ZERO)?;
        out.extend(self.events[..n].iter().map(|e| e.data()));
        Ok(())
    }

    /// A descriptor of the set, readable while any descriptor in it is.
    pub fn doorbell(&self) -> io::Result<OwnedFd> {
        self.epoll.0.try_clone()
    }
}
