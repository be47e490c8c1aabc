//! The pty's input, written by a thread of its own: the user's keys, and
//! the answers to the command's queries that the output thread hands it.
//!
//! The pty's master is blocking (the output thread blocks in `read` on
//! it), so a write of more than its input buffer holds (18 KiB on Linux
//! 6.18: a paste) waits until the command reads. Written from the relay's
//! loop, that
//! wait held the loop too: a resize or a signal sent to the relay waited
//! behind a paste into a command that was not reading. Here the loop
//! hands the keys over and goes back to waiting; it stops reading the
//! user's input while [`MAX_QUEUED`] bytes wait (the terminal holds the
//! rest, as it would for the command itself), and this thread wakes it
//! once they have gone in.
//!
//! One writer keeps every write whole without a lock, and keeps the order
//! that matters: a query's answer is handed over before the output that
//! holds the query is passed on, so before the terminal's reply to what
//! follows it (a DA1 request) can reach the relay's input and be handed
//! over behind it. The output thread never waits here: a paste the command
//! has not read does not hold its output back.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

use super::pty::write_all;

/// Bytes of keys queued before the loop stops reading the user's input.
pub(super) const MAX_QUEUED: usize = 256 * 1024;

/// The pty's input, as the relay's loop and the output thread see it.
#[derive(Clone)]
pub(super) struct Keys {
    tx: Sender<Vec<u8>>,
    queued: Arc<AtomicUsize>,
}

impl Keys {
    /// Starts the thread writing to `master`'s input, one handed-over
    /// piece at a time, in the order they were handed over. `on_drained`
    /// runs on that thread when the queue falls back under [`MAX_QUEUED`]
    /// after reaching it, and once the pty takes no more.
    pub(super) fn start(
        master: &OwnedFd,
        on_drained: impl Fn() + Send + 'static,
    ) -> std::io::Result<Keys> {
        let pty = master.try_clone()?;
        let (tx, rx) = channel::<Vec<u8>>();
        let queued = Arc::new(AtomicUsize::new(0));
        let theirs = queued.clone();
        std::thread::Builder::new()
            .name("relay-keys".into())
            .spawn(move || {
                for keys in rx {
                    let written = write_all(pty.as_fd(), &keys);
                    let before = theirs.fetch_sub(keys.len(), Ordering::AcqRel);
                    if !written {
                        // The pty is gone; the loop learns it from the
                        // output's end. Keys sent from now on are dropped.
                        theirs.store(0, Ordering::Release);
                        on_drained();
                        return;
                    }
                    if before >= MAX_QUEUED && before - keys.len() < MAX_QUEUED {
                        on_drained();
                    }
                }
            })?;
        Ok(Keys { tx, queued })
    }

    /// Queues `keys` for the command (the user's, or a query's answer).
    pub(super) fn send(&self, keys: &[u8]) {
        self.queued.fetch_add(keys.len(), Ordering::AcqRel);
        if self.tx.send(keys.to_vec()).is_err() {
            self.queued.fetch_sub(keys.len(), Ordering::AcqRel);
        }
    }

    /// Whether the loop may read more of the user's input now.
    pub(super) fn accepting(&self) -> bool {
        self.queued.load(Ordering::Acquire) < MAX_QUEUED
    }
}
