//! [`PollSet`]: which pipes are readable, by `poll(2)` over every one at
//! each read tick. Nothing is registered: the reader hands its
//! descriptors in each time, so a pipe closed by the reader is simply no
//! longer asked about.

use std::io;
use std::os::fd::BorrowedFd;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// The readiness check (see the module).
#[derive(Debug, Default)]
pub struct PollSet;

impl PollSet {
    /// Appends to `out` the keys of the descriptors in `fds` (`watched` of
    /// them) that are readable or closed now, without waiting.
    pub fn ready<'a>(
        &mut self,
        watched: usize,
        fds: impl Iterator<Item = (BorrowedFd<'a>, u64)>,
        out: &mut Vec<u64>,
    ) -> io::Result<()> {
        let mut keys = Vec::with_capacity(watched);
        let mut polled = Vec::with_capacity(watched);
        for (fd, key) in fds {
            polled.push(PollFd::new(fd, PollFlags::POLLIN));
            keys.push(key);
        }
        if poll(&mut polled, PollTimeout::ZERO)? == 0 {
            return Ok(());
        }
        // Hang-ups and errors count: the read that follows finds the end.
        out.extend(
            polled
                .iter()
                .zip(keys)
                .filter(|(p, _)| p.revents().is_some_and(|r| !r.is_empty()))
                .map(|(_, key)| key),
        );
        Ok(())
    }
}
