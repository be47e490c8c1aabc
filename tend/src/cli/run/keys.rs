//! The user's keys, written to the pty by a thread of their own.
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

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

use super::pty::{lock, write_all};

/// Bytes of keys queued before the loop stops reading the user's input.
pub(super) const MAX_QUEUED: usize = 256 * 1024;

/// The keys' writer, as the relay's loop sees it.
pub(super) struct Keys {
    tx: Sender<Vec<u8>>,
    queued: Arc<AtomicUsize>,
}

impl Keys {
    /// Starts the thread writing keys to `master`, one handed-over piece
    /// at a time under `writer` (held by the output thread for a query's
    /// answer). `on_drained` runs on that thread when the queue falls
    /// back under [`MAX_QUEUED`] after reaching it, and once the pty takes
    /// no more.
    pub(super) fn start(
        master: &OwnedFd,
        writer: Arc<Mutex<()>>,
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
                    let written = {
                        let _lock = lock(&writer);
                        write_all(pty.as_fd(), &keys)
                    };
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

    /// Queues `keys` for the command.
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
