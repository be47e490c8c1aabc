//! The event loop's timer for the pane table's next deadline: a `timerfd`
//! armed at that instant, waited on through the runtime.
//!
//! Why not `tokio::time::sleep_until`: tokio keeps timers in a wheel whose
//! first level holds 64 slots of 1 ms. A timer in a later 64 ms block sits
//! in a coarser level and wakes the runtime at the start of its block, to
//! be moved down, before it wakes it again at its own instant. The loop
//! sets a new deadline at every round, tens of milliseconds ahead, so under
//! busy panes it crossed a block boundary most of the time: about 16 extra
//! wake-ups a second (1000 / 64), a quarter of the loop's (68 fell to 51),
//! each costing tens of microseconds on a virtual machine. A `timerfd`
//! wakes the loop once, at the instant asked.
//!
//! Should the kernel refuse a `timerfd` (no such thing where tend could
//! start at all, but a limit on descriptors could), the loop falls back to
//! tokio's timer.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The timer (see the module).
pub struct Deadline {
    fd: Option<AsyncFd<Fd>>,
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

impl Deadline {
    /// A disarmed timer. Must be called inside the runtime.
    pub fn new() -> Deadline {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .map_err(io::Error::from)
        .and_then(|t| {
            // SAFETY: `Fd` owns the timer's descriptor (a `TimerFd` holds
            // an `OwnedFd`) and always returns that one; it is closed only
            // when the `AsyncFd` that owns the `Fd` is dropped.
            unsafe { AsyncFd::register_with_interest(Fd(t), Interest::READABLE) }
                .map_err(io::Error::from)
        });
        let fd = match fd {
            Ok(fd) => Some(fd),
            Err(e) => {
                eprintln!("tend: no timerfd ({e}); the event loop uses tokio's timer");
                None
            }
        };
        Deadline { fd, armed: None }
    }

    /// Waits until `at` (at once when it is past). Cancel-safe: dropped
    /// unfinished, the timer stays armed and the next call for the same
    /// instant goes on waiting for it.
    pub async fn until(&mut self, at: Instant) {
        let Some(fd) = &self.fd else {
            tokio::time::sleep_until(at.into()).await;
            return;
        };
        if self.armed != Some(at) {
            // Relative to now; a zero value would disarm the timer.
            let left = at
                .saturating_duration_since(Instant::now())
                .max(Duration::from_nanos(1));
            let set = fd.get_ref().0.set(
                Expiration::OneShot(TimeSpec::from_duration(left)),
                TimerSetTimeFlags::empty(),
            );
            if set.is_err() {
                self.armed = None;
                tokio::time::sleep_until(at.into()).await;
                return;
            }
            self.armed = Some(at);
        }
        loop {
            let Ok(mut ready) = fd.readable().await else {
                tokio::time::sleep_until(at.into()).await;
                return;
            };
            // The expiration count is not read (a system call at every
            // wake-up): the runtime waits for edges, arming the timer again
            // resets the count, and its next expiry is a new edge. The
            // readiness is stale when the timer was re-armed since it
            // fired; the clock tells.
            ready.clear_ready();
            if Instant::now() >= at {
                self.armed = None;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wakes_at_the_instant_and_can_be_moved() {
        let mut d = Deadline::new();
        assert!(d.fd.is_some());
        let t0 = Instant::now();
        d.until(t0 + Duration::from_millis(30)).await;
        assert!(t0.elapsed() >= Duration::from_millis(30));
        // A past instant returns at once.
        let t1 = Instant::now();
        d.until(t1 - Duration::from_millis(5)).await;
        assert!(t1.elapsed() < Duration::from_secs(1));
        // Dropped while waiting for a far instant, then asked for a near
        // one: the near one is kept.
        let far = Instant::now() + Duration::from_secs(60);
        let _ = tokio::time::timeout(Duration::from_millis(10), d.until(far)).await;
        let t2 = Instant::now();
        d.until(t2 + Duration::from_millis(20)).await;
        let took = t2.elapsed();
        assert!(took >= Duration::from_millis(20));
        assert!(took < Duration::from_secs(30), "{took:?}");
    }
}
