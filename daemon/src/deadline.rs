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
//! The `timerfd` is Linux's own (`tend_platform::linux::timer`). Should
//! the kernel refuse one (no such thing where tend could start at all, but
//! a limit on descriptors could), or with the portable backend
//! (`tend_platform::precise_timer`), the loop uses tokio's timer, with
//! the extra wake-ups above.

use std::time::Instant;

/// The timer (see the module).
pub struct Deadline {
    #[cfg(target_os = "linux")]
    fd: Option<tend_platform::linux::TimerFdTimer>,
}

impl Deadline {
    /// A disarmed timer. Must be called inside the runtime.
    pub fn new() -> Deadline {
        #[cfg(target_os = "linux")]
        {
            let fd = tend_platform::precise_timer()
                .then(|| {
                    tend_platform::linux::TimerFdTimer::new()
                        .map_err(|e| {
                            crate::say!("no timerfd ({e}); the event loop uses tokio's timer")
                        })
                        .ok()
                })
                .flatten();
            Deadline { fd }
        }
        #[cfg(not(target_os = "linux"))]
        Deadline {}
    }

    /// Waits until `at` (at once when it is past). Cancel-safe: dropped
    /// unfinished, the timer stays armed and the next call for the same
    /// instant goes on waiting for it.
    pub async fn until(&mut self, at: Instant) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &mut self.fd {
            if fd.until(at).await {
                return;
            }
        }
        tokio::time::sleep_until(at.into()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn wakes_at_the_instant_and_can_be_moved() {
        let mut d = Deadline::new();
        #[cfg(target_os = "linux")]
        assert_eq!(d.fd.is_some(), tend_platform::precise_timer());
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
