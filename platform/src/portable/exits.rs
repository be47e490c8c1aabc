//! [`LivenessWatch`]: a watched job's end, found by asking.
//!
//! No system but Linux has a descriptor that becomes readable when an
//! unrelated process ends (a pidfd; macOS's `kqueue` has `EVFILT_PROC`,
//! but tokio does not register it, and a watch the tests cannot run on
//! Linux would go untested). So each round of the event loop asks, for
//! each watched process, whether it still exists: one `kill(pid, 0)` each,
//! no signal sent. An end is seen at the loop's next round: within the
//! 30 ms read tick while panes print, within the once-a-second listing
//! when all is quiet.

use std::collections::HashMap;
use std::os::fd::OwnedFd;

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

use crate::ExitSource;

/// The processes watched, by the caller's key (a pane).
#[derive(Debug, Default)]
pub struct LivenessWatch {
    watched: HashMap<u64, u32>,
}

impl LivenessWatch {
    /// Nothing watched yet.
    pub fn new() -> LivenessWatch {
        LivenessWatch::default()
    }
}

/// Whether process `pid` exists (a zombie still does, until its parent
/// reaps it). Another user's process answers `EPERM`: it exists.
pub fn alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    if raw <= 0 {
        return false;
    }
    match kill(Pid::from_raw(raw), None) {
        Ok(()) => true,
        Err(e) => e == Errno::EPERM,
    }
}

impl ExitSource for LivenessWatch {
    fn watch(&mut self, key: u64, pid: u32) -> bool {
        if self.watched.get(&key) == Some(&pid) {
            return true;
        }
        self.watched.remove(&key);
        if !alive(pid) {
            return false;
        }
        self.watched.insert(key, pid);
        true
    }

    fn unwatch(&mut self, key: u64) {
        self.watched.remove(&key);
    }

    fn watching(&self, key: u64) -> Option<u32> {
        self.watched.get(&key).copied()
    }

    fn doorbell(&self) -> Option<OwnedFd> {
        None
    }

    fn take_ended(&mut self) -> Vec<u64> {
        let mut ended: Vec<u64> = self
            .watched
            .iter()
            .filter(|(_, pid)| !alive(**pid))
            .map(|(key, _)| *key)
            .collect();
        ended.sort_unstable();
        for k in &ended {
            self.watched.remove(k);
        }
        ended
    }
}
