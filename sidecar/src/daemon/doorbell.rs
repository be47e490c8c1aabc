//! The pipes' doorbell: the event loop waits on the pipes' `epoll` set
//! (see [`super::pipes::Reader::doorbell`]) while no pane prints, so that
//! the first byte wakes it at once; while panes print it reads them on its
//! own ticks and the set is taken off the runtime, since registered it
//! would wake the loop at every write of every pane (an `epoll` set
//! signals its waiters for each event added to it).

use std::os::fd::OwnedFd;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The doorbell (see the module): armed (registered with the runtime) or
/// not.
pub struct Doorbell {
    /// What rings it, and what happens without it, for the message when
    /// the runtime refuses it.
    what: &'static str,
    idle: Option<OwnedFd>,
    armed: Option<AsyncFd<OwnedFd>>,
}

impl Doorbell {
    /// A doorbell on `set` (a descriptor of an `epoll` set), not armed;
    /// `None` when there is none. `what` names what rings it and what
    /// happens without it ("the panes' pipes (read on ticks instead)").
    pub fn new(set: Option<OwnedFd>, what: &'static str) -> Doorbell {
        Doorbell {
            what,
            idle: set,
            armed: None,
        }
    }

    /// Registers it with the runtime (must be called inside it). Returns
    /// whether it is armed: a runtime that refuses it leaves it unarmed
    /// for good (said once on stderr).
    pub fn arm(&mut self) -> bool {
        if let Some(fd) = self.idle.take() {
            // SAFETY: the `AsyncFd` owns the descriptor, which stays open
            // and the same until it is handed back by `into_inner` or
            // dropped with it.
            match unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) } {
                Ok(armed) => self.armed = Some(armed),
                Err(e) => {
                    // Closed (the reader keeps its own), and not asked
                    // again: the runtime would refuse again.
                    let (_, e) = e.into_parts();
                    eprintln!("tend: {} cannot wake the event loop: {e}", self.what);
                }
            }
        }
        self.armed.is_some()
    }

    /// Takes it off the runtime.
    pub fn disarm(&mut self) {
        if let Some(armed) = self.armed.take() {
            self.idle = Some(armed.into_inner());
        }
    }

    /// Whether it is armed.
    #[cfg(test)]
    pub fn armed(&self) -> bool {
        self.armed.is_some()
    }

    /// Returns when it rings; never while it is not armed.
    pub async fn ring(&self) {
        match &self.armed {
            Some(armed) => {
                if let Ok(mut ready) = armed.readable().await {
                    // The reader reads every readable pipe next, and a pipe
                    // that prints again makes a new edge.
                    ready.clear_ready();
                }
            }
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Duration;

    #[tokio::test]
    async fn rings_while_armed_and_only_then() {
        use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
        let set = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).expect("epoll");
        let (mut tmux, ours) = std::os::unix::net::UnixStream::pair().expect("pair");
        set.add(&ours, EpollEvent::new(EpollFlags::EPOLLIN, 1))
            .expect("add");
        let mut bell = Doorbell::new(Some(set.0.try_clone().expect("dup")), "a test");
        assert!(!bell.armed());
        let quick = Duration::from_millis(50);
        assert!(
            tokio::time::timeout(quick, bell.ring()).await.is_err(),
            "not armed: never rings"
        );
        assert!(bell.arm());
        assert!(
            tokio::time::timeout(quick, bell.ring()).await.is_err(),
            "nothing written"
        );
        tmux.write_all(b"x").expect("write");
        tokio::time::timeout(Duration::from_secs(5), bell.ring())
            .await
            .expect("output rings");
        bell.disarm();
        assert!(!bell.armed());
        // Armed again while the output is still unread: rings at once.
        assert!(bell.arm());
        tokio::time::timeout(Duration::from_secs(5), bell.ring())
            .await
            .expect("pending output rings when armed");
    }
}
