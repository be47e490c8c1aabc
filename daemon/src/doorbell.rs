//! The pipes' doorbell: the event loop waits on the pipes while no pane
//! prints (see [`super::pipes::Reader::doorbell`]), so that the first byte
//! wakes it at once; while panes print it reads them on its own ticks and
//! the doorbell is taken off the runtime, since registered it would wake
//! the loop at every write of every pane (an `epoll` set signals its
//! waiters for each event added to it, and so does each pipe registered on
//! its own).
//!
//! On Linux the doorbell is one descriptor, the pipes' `epoll` set. With
//! the portable backend it is a copy of each pipe's descriptor, registered
//! one by one (the runtime's `kqueue` on macOS), made afresh each time the
//! loop starts waiting and closed when it stops ([`Doorbell::following`]).

use std::future::poll_fn;
use std::os::fd::OwnedFd;
use std::task::Poll;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The doorbell (see the module): armed (registered with the runtime) or
/// not.
pub struct Doorbell {
    /// What rings it, and what happens without it, for the message when
    /// the runtime refuses it.
    what: &'static str,
    idle: Vec<OwnedFd>,
    armed: Vec<AsyncFd<OwnedFd>>,
    /// Its descriptors are copies made for one wait: closed when it is
    /// disarmed, replaced before it is armed again.
    follows: bool,
    /// The runtime refused it once: it is not asked again.
    refused: bool,
}

impl Doorbell {
    /// A doorbell on `set` (a descriptor of an `epoll` set), not armed;
    /// `None` when there is none. `what` names what rings it and what
    /// happens without it ("the panes' pipes (read on ticks instead)").
    pub fn new(set: Option<OwnedFd>, what: &'static str) -> Doorbell {
        Doorbell {
            what,
            idle: set.into_iter().collect(),
            armed: Vec::new(),
            follows: false,
            refused: false,
        }
    }

    /// A doorbell on descriptors made for each wait ([`Doorbell::replace`]
    /// before each [`Doorbell::arm`]), closed when it is disarmed.
    pub fn following(what: &'static str) -> Doorbell {
        Doorbell {
            follows: true,
            ..Doorbell::new(None, what)
        }
    }

    /// Whether it is made for each wait (see [`Doorbell::following`]).
    pub fn follows(&self) -> bool {
        self.follows
    }

    /// The descriptors the next [`Doorbell::arm`] registers, while it is
    /// not armed (ignored once the runtime refused it).
    pub fn replace(&mut self, fds: Vec<OwnedFd>) {
        if self.armed.is_empty() && !self.refused {
            self.idle = fds;
        }
    }

    /// Registers it with the runtime (must be called inside it). Returns
    /// whether it is armed: a runtime that refuses it leaves it unarmed
    /// for good (said once on stderr).
    pub fn arm(&mut self) -> bool {
        if self.armed.is_empty() && !self.idle.is_empty() {
            for fd in std::mem::take(&mut self.idle) {
                // SAFETY: the `AsyncFd` owns the descriptor, which stays
                // open and the same until it is handed back by
                // `into_inner` or dropped with it.
                match unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) } {
                    Ok(armed) => self.armed.push(armed),
                    Err(e) => {
                        // Closed (the reader keeps its own), and not asked
                        // again: the runtime would refuse again.
                        let (_, e) = e.into_parts();
                        crate::say!("{} cannot wake the event loop: {e}", self.what);
                        self.armed.clear();
                        self.refused = true;
                        break;
                    }
                }
            }
        }
        !self.armed.is_empty()
    }

    /// Takes it off the runtime (nothing to do when it is not on it: the
    /// loop disarms it at every round while panes print, and what the
    /// next wait arms must outlive those rounds).
    pub fn disarm(&mut self) {
        let armed = std::mem::take(&mut self.armed);
        if !self.follows {
            self.idle.extend(armed.into_iter().map(AsyncFd::into_inner));
        }
    }

    /// Whether it is armed.
    pub fn armed(&self) -> bool {
        !self.armed.is_empty()
    }

    /// Returns when it rings; never while it is not armed.
    pub async fn ring(&self) {
        if self.armed.is_empty() {
            return std::future::pending().await;
        }
        poll_fn(|cx| {
            for armed in &self.armed {
                match armed.poll_read_ready(cx) {
                    Poll::Ready(Ok(mut ready)) => {
                        // The reader reads every readable pipe next, and a
                        // pipe that prints again makes a new edge.
                        ready.clear_ready();
                        return Poll::Ready(());
                    }
                    Poll::Ready(Err(_)) => return Poll::Ready(()),
                    Poll::Pending => {}
                }
            }
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Duration;

    // On an `epoll` set, as the Linux backend makes it.
    #[cfg(target_os = "linux")]
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
        // The loop disarms it at every round while panes print: rounds
        // with nothing armed keep what the next wait arms.
        bell.disarm();
        bell.disarm();
        // Armed again while the output is still unread: rings at once.
        assert!(bell.arm(), "still there after rounds of printing");
        tokio::time::timeout(Duration::from_secs(5), bell.ring())
            .await
            .expect("pending output rings when armed");
    }

    #[tokio::test]
    async fn a_following_doorbell_rings_for_any_of_its_descriptors() {
        use std::os::fd::AsFd;
        let (_a, a_ours) = std::os::unix::net::UnixStream::pair().expect("pair");
        let (mut b, b_ours) = std::os::unix::net::UnixStream::pair().expect("pair");
        let copies = || {
            vec![
                a_ours.as_fd().try_clone_to_owned().expect("dup"),
                b_ours.as_fd().try_clone_to_owned().expect("dup"),
            ]
        };
        let mut bell = Doorbell::following("a test");
        assert!(bell.follows());
        assert!(!bell.arm(), "nothing to arm yet");
        bell.replace(copies());
        assert!(bell.arm());
        let quick = Duration::from_millis(50);
        assert!(
            tokio::time::timeout(quick, bell.ring()).await.is_err(),
            "nothing written"
        );
        b.write_all(b"x").expect("write");
        tokio::time::timeout(Duration::from_secs(5), bell.ring())
            .await
            .expect("output on the second rings");
        // Disarmed, its copies are closed: arming again needs new ones.
        bell.disarm();
        assert!(!bell.armed());
        assert!(!bell.arm());
        bell.replace(copies());
        assert!(bell.arm(), "armed on the descriptors of the moment");
    }
}
