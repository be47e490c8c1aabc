//! [`TimerFdTimer`]: a `timerfd` armed at an instant and waited on through
//! the runtime; the event loop's deadline on Linux (why:
//! `daemon/deadline.rs`).

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The timer (see the module).
pub struct TimerFdTimer {
    fd: AsyncFd<Fd>,
    /// The instant the timer is armed for (re-arming for the same one is
    /// skipped).
    armed: Option<Instant>,
}

struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

impl TimerFdTimer {
    /// A disarmed timer, registered with the runtime (must be called
    /// inside it).
    pub fn new() -> io::Result<TimerFdTimer> {
        let t = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // SAFETY: `Fd` owns the timer's descriptor (a `TimerFd` holds an
        // `OwnedFd`) and always returns that one; it is closed only when
        // the `AsyncFd` that owns the `Fd` is dropped.
        let fd = unsafe { AsyncFd::register_with_interest(Fd(t), Interest::READABLE) }?;
        Ok(TimerFdTimer { fd, armed: None })
    }

    /// Waits until `at` (at once when it is past). Returns `false`, having
    /// waited for nothing, when the timer cannot be armed or waited on: the
    /// caller waits another way. Cancel-safe: dropped unfinished, the timer
    /// stays armed and the next call for the same instant goes on waiting
    /// for it.
    pub async fn until(&mut self, at: Instant) -> bool {
        if self.armed != Some(at) {
            // Relative to now; a zero value would disarm the timer.
            let left = at
                .saturating_duration_since(Instant::now())
                .max(Duration::from_nanos(1));
            let set = self.fd.get_ref().0.set(
                Expiration::OneShot(TimeSpec::from_duration(left)),
                TimerSetTimeFlags::empty(),
            );
            if set.is_err() {
                self.armed = None;
                return false;
            }
            self.armed = Some(at);
        }
        loop {
            let Ok(mut ready) = self.fd.readable().await else {
                return false;
            };
            // The expiration count is not read (a system call at every
            // wake-up): the runtime waits for edges, arming the timer again
            // resets the count, and its next expiry is a new edge. The
            // readiness is stale when the timer was re-armed since it
            // fired; the clock tells.
            ready.clear_ready();
            if Instant::now() >= at {
                self.armed = None;
                return true;
            }
        }
    }
}
