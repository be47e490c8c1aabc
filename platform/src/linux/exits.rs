//! [`PidfdWatch`]: the kernel says when a pane's foreground job ends.
//!
//! A pane whose agent prints was probed five times a second (one read of
//! its shell's `stat`) only to notice the shell taking its terminal back
//! when the agent ends. A pidfd on the foreground job's leader becomes
//! readable when that process ends, so the daemon waits on one `epoll` set
//! of them instead (`pidfd_open(2)`, Linux 5.3): nothing is read while the
//! agent runs, and its end is seen at once. Where the kernel has no pidfds,
//! or `/proc` is not the real one (tests), [`PidfdWatch::watch`] says no and
//! the probes go on.

use std::collections::HashMap;
use std::os::fd::OwnedFd;

use nix::poll::PollTimeout;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use rustix::io::Errno;
use rustix::process::{pidfd_open, Pid, PidfdFlags};

use crate::ExitSource;

/// Pidfds of the processes watched, by the caller's key (a pane).
#[derive(Debug)]
pub struct PidfdWatch {
    /// `None`: no watching here (no `epoll`, or pidfds refused once).
    epoll: Option<Epoll>,
    watched: HashMap<u64, (u32, OwnedFd)>,
    events: Vec<EpollEvent>,
}

impl PidfdWatch {
    /// A watch using pidfds where the kernel has them.
    pub fn new() -> PidfdWatch {
        PidfdWatch {
            epoll: Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).ok(),
            watched: HashMap::new(),
            events: Vec::new(),
        }
    }

    /// A watch that never watches (a sampler over a fake `/proc`).
    pub fn disabled() -> PidfdWatch {
        PidfdWatch {
            epoll: None,
            watched: HashMap::new(),
            events: Vec::new(),
        }
    }

    /// Watches process `pid` for `key`, instead of what `key` watched
    /// before. Returns whether its end will be reported: `false` when the
    /// process is already gone, or pidfds are not available.
    pub fn watch(&mut self, key: u64, pid: u32) -> bool {
        if self.watched.get(&key).is_some_and(|(p, _)| *p == pid) {
            return true;
        }
        self.unwatch(key);
        let Some(epoll) = &self.epoll else {
            return false;
        };
        let Some(target) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
            return false;
        };
        let fd = match pidfd_open(target, PidfdFlags::empty()) {
            Ok(fd) => fd,
            Err(e) => {
                if e == Errno::NOSYS {
                    // An old kernel: the probes go on, for every pane.
                    self.epoll = None;
                }
                return false;
            }
        };
        if epoll
            .add(&fd, EpollEvent::new(EpollFlags::EPOLLIN, key))
            .is_err()
        {
            return false;
        }
        self.watched.insert(key, (pid, fd));
        true
    }

    /// Stops watching for `key`.
    pub fn unwatch(&mut self, key: u64) {
        if let Some((_, fd)) = self.watched.remove(&key) {
            if let Some(epoll) = &self.epoll {
                let _ = epoll.delete(&fd);
            }
        }
    }

    /// The process watched for `key`.
    pub fn watching(&self, key: u64) -> Option<u32> {
        self.watched.get(&key).map(|(pid, _)| *pid)
    }

    /// A descriptor readable while a watched process has ended and not
    /// been taken (the event loop waits on it); `None` without watching.
    pub fn doorbell(&self) -> Option<OwnedFd> {
        self.epoll.as_ref().and_then(|e| e.0.try_clone().ok())
    }

    /// The keys whose process ended, no longer watched.
    pub fn take_ended(&mut self) -> Vec<u64> {
        let Some(epoll) = &self.epoll else {
            return Vec::new();
        };
        let n = self.watched.len().max(1);
        if self.events.len() < n {
            self.events.resize(n, EpollEvent::empty());
        }
        let got = epoll.wait(&mut self.events, PollTimeout::ZERO).unwrap_or(0);
        let keys: Vec<u64> = self.events[..got].iter().map(|e| e.data()).collect();
        for k in &keys {
            self.unwatch(*k);
        }
        keys
    }
}

impl ExitSource for PidfdWatch {
    fn watch(&mut self, key: u64, pid: u32) -> bool {
        PidfdWatch::watch(self, key, pid)
    }

    fn unwatch(&mut self, key: u64) {
        PidfdWatch::unwatch(self, key);
    }

    fn watching(&self, key: u64) -> Option<u32> {
        PidfdWatch::watching(self, key)
    }

    fn doorbell(&self) -> Option<OwnedFd> {
        PidfdWatch::doorbell(self)
    }

    fn take_ended(&mut self) -> Vec<u64> {
        PidfdWatch::take_ended(self)
    }
}

impl Default for PidfdWatch {
    fn default() -> Self {
        PidfdWatch::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn an_ended_process_is_reported_once_by_its_key() {
        let mut w = PidfdWatch::new();
        let mut a = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let mut b = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        assert!(w.watch(7, a.id()));
        assert!(w.watch(9, b.id()));
        assert_eq!(w.watching(7), Some(a.id()));
        assert!(w.take_ended().is_empty(), "both alive");
        b.kill().expect("kill");
        b.wait().expect("wait");
        let t0 = Instant::now();
        let mut ended = Vec::new();
        while ended.is_empty() && t0.elapsed() < Duration::from_secs(5) {
            ended = w.take_ended();
        }
        assert_eq!(ended, [9]);
        assert_eq!(w.watching(9), None, "reported once, then forgotten");
        assert!(w.take_ended().is_empty());
        // Another process for the same key replaces the first.
        assert!(w.watch(7, std::process::id()));
        a.kill().expect("kill");
        a.wait().expect("wait");
        std::thread::sleep(Duration::from_millis(50));
        assert!(w.take_ended().is_empty(), "the old process is not watched");
        w.unwatch(7);
        assert_eq!(w.watching(7), None);
    }

    #[test]
    fn a_process_already_gone_is_not_watched() {
        let mut w = PidfdWatch::new();
        let mut c = std::process::Command::new("true").spawn().expect("true");
        let pid = c.id();
        c.wait().expect("wait");
        assert!(!w.watch(1, pid));
        assert!(!PidfdWatch::disabled().watch(1, std::process::id()));
    }
}
