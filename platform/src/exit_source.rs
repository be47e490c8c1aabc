//! What a watch of processes' ends offers, whichever backend keeps it
//! (`linux/exits.rs`: pidfds; `portable/exits.rs`: liveness checks).

use std::os::fd::OwnedFd;

/// Watches processes for their end, by the caller's key (a pane).
pub trait ExitSource: std::fmt::Debug + Send {
    /// Watches process `pid` for `key`, instead of what `key` watched
    /// before. Returns whether its end will be reported: `false` when the
    /// process is already gone, or the system cannot watch it.
    fn watch(&mut self, key: u64, pid: u32) -> bool;
    /// Stops watching for `key`.
    fn unwatch(&mut self, key: u64);
    /// The process watched for `key`.
    fn watching(&self, key: u64) -> Option<u32>;
    /// A descriptor readable while a watched process has ended and not
    /// been taken; `None` when the ends must be asked for
    /// ([`super::ExitWatch::polled`]).
    fn doorbell(&self) -> Option<OwnedFd>;
    /// The keys whose process ended, no longer watched.
    fn take_ended(&mut self) -> Vec<u64>;
}
