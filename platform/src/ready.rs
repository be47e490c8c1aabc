//! [`ReadySet`]: which of the panes' pipes (and the tap socket) are
//! readable, asked at each read tick without waiting, and what the event
//! loop waits on while no pane prints (the doorbell, `daemon/doorbell.rs`).

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};

use super::backend;
#[cfg(target_os = "linux")]
use super::linux::EpollSet;
use super::portable::PollSet;

/// The descriptors watched, by the backend in use.
#[derive(Debug)]
pub enum ReadySet {
    /// One `epoll` set, registered once.
    #[cfg(target_os = "linux")]
    Epoll(EpollSet),
    /// `poll(2)` over the descriptors handed in at each tick.
    Poll(PollSet),
}

impl ReadySet {
    /// The set of the backend in use ([`backend`]).
    pub fn new() -> io::Result<ReadySet> {
        match backend() {
            #[cfg(target_os = "linux")]
            super::Backend::Linux => ReadySet::epoll(),
            _ => Ok(ReadySet::poll()),
        }
    }

    /// The Linux set.
    #[cfg(target_os = "linux")]
    pub fn epoll() -> io::Result<ReadySet> {
        Ok(ReadySet::Epoll(EpollSet::new()?))
    }

    /// The portable set.
    pub fn poll() -> ReadySet {
        ReadySet::Poll(PollSet)
    }

    /// Watches `fd` under `key` from now on.
    pub fn add(&mut self, fd: BorrowedFd<'_>, key: u64) -> io::Result<()> {
        match self {
            #[cfg(target_os = "linux")]
            ReadySet::Epoll(set) => set.add(fd, key),
            // Nothing is registered: each tick hands the descriptors in.
            ReadySet::Poll(_) => {
                let _ = (fd, key);
                Ok(())
            }
        }
    }

    /// Appends to `out` the keys of the descriptors readable (or closed)
    /// now. `fds` is every descriptor watched with its key (`watched` of
    /// them); the `epoll` set never looks at it.
    pub fn ready<'a>(
        &mut self,
        watched: usize,
        fds: impl Iterator<Item = (BorrowedFd<'a>, u64)>,
        out: &mut Vec<u64>,
    ) -> io::Result<()> {
        match self {
            #[cfg(target_os = "linux")]
            ReadySet::Epoll(set) => {
                let _ = fds;
                set.ready(watched, out)
            }
            ReadySet::Poll(set) => set.ready(watched, fds, out),
        }
    }

    /// What the event loop waits on for output while no pane prints: the
    /// `epoll` set's own descriptor, or a copy of each of `fds` (the
    /// runtime registers them one by one, and they are dropped when the
    /// loop goes back to ticks: see [`ReadySet::doorbell_follows`]).
    pub fn doorbell<'a>(
        &self,
        fds: impl Iterator<Item = BorrowedFd<'a>>,
    ) -> io::Result<Vec<OwnedFd>> {
        match self {
            #[cfg(target_os = "linux")]
            ReadySet::Epoll(set) => {
                let _ = fds;
                Ok(vec![set.doorbell()?])
            }
            ReadySet::Poll(_) => fds.map(|fd| fd.try_clone_to_owned()).collect(),
        }
    }

    /// Whether the doorbell is made of the descriptors of the moment, and
    /// so must be taken again each time the loop starts waiting on it
    /// (pipes come and go meanwhile); the `epoll` set's is made once.
    pub fn doorbell_follows(&self) -> bool {
        matches!(self, ReadySet::Poll(_))
    }
}
