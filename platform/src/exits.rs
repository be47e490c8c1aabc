//! [`ExitWatch`]: the end of each pane's foreground job, reported without
//! probing its shell (see `PaneWatch::watch_exit` in `core/src/watch.rs`).

use std::os::fd::OwnedFd;

use super::backend;
use super::exit_source::ExitSource;
#[cfg(target_os = "linux")]
use super::linux::PidfdWatch;
use super::portable::LivenessWatch;

#[derive(Debug)]
enum Inner {
    #[cfg(target_os = "linux")]
    Pidfd(PidfdWatch),
    Liveness(LivenessWatch),
    Off,
}

/// The watch of the backend in use, or none.
#[derive(Debug)]
pub struct ExitWatch(Inner);

impl ExitWatch {
    /// The watch of the backend in use ([`backend`]): pidfds on Linux, a
    /// liveness check of each watched process elsewhere.
    pub fn new() -> ExitWatch {
        match backend() {
            #[cfg(target_os = "linux")]
            super::Backend::Linux => ExitWatch::pidfd(),
            _ => ExitWatch::liveness(),
        }
    }

    /// A pidfd for each watched process, in one `epoll` set (Linux).
    #[cfg(target_os = "linux")]
    pub fn pidfd() -> ExitWatch {
        ExitWatch(Inner::Pidfd(PidfdWatch::new()))
    }

    /// A watch that checks whether each watched process still exists when
    /// asked ([`ExitWatch::take_ended`]).
    pub fn liveness() -> ExitWatch {
        ExitWatch(Inner::Liveness(LivenessWatch::new()))
    }

    /// A watch that never watches (a sampler over a fake `/proc`, or an
    /// event loop that cannot wait on the kernel's reports).
    pub fn disabled() -> ExitWatch {
        ExitWatch(Inner::Off)
    }

    fn source(&self) -> Option<&dyn ExitSource> {
        match &self.0 {
            #[cfg(target_os = "linux")]
            Inner::Pidfd(w) => Some(w),
            Inner::Liveness(w) => Some(w),
            Inner::Off => None,
        }
    }

    fn source_mut(&mut self) -> Option<&mut dyn ExitSource> {
        match &mut self.0 {
            #[cfg(target_os = "linux")]
            Inner::Pidfd(w) => Some(w),
            Inner::Liveness(w) => Some(w),
            Inner::Off => None,
        }
    }

    /// See [`ExitSource::watch`].
    pub fn watch(&mut self, key: u64, pid: u32) -> bool {
        self.source_mut().is_some_and(|s| s.watch(key, pid))
    }

    /// See [`ExitSource::unwatch`].
    pub fn unwatch(&mut self, key: u64) {
        if let Some(s) = self.source_mut() {
            s.unwatch(key);
        }
    }

    /// See [`ExitSource::watching`].
    pub fn watching(&self, key: u64) -> Option<u32> {
        self.source().and_then(|s| s.watching(key))
    }

    /// See [`ExitSource::doorbell`].
    pub fn doorbell(&self) -> Option<OwnedFd> {
        self.source().and_then(|s| s.doorbell())
    }

    /// See [`ExitSource::take_ended`].
    pub fn take_ended(&mut self) -> Vec<u64> {
        self.source_mut()
            .map(|s| s.take_ended())
            .unwrap_or_default()
    }

    /// Whether ends are found only by asking ([`ExitWatch::take_ended`]):
    /// the event loop then asks at each of its rounds instead of waiting
    /// on a [`ExitWatch::doorbell`].
    pub fn polled(&self) -> bool {
        matches!(self.0, Inner::Liveness(_))
    }
}

impl Default for ExitWatch {
    fn default() -> Self {
        ExitWatch::new()
    }
}
