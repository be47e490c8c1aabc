//! The portable backend: what tend needs from any Unix, through the
//! `sysinfo` crate and POSIX calls, for macOS and the BSDs (and for Linux
//! when asked: `TEND_PLATFORM=portable`, so that the whole test suite runs
//! through it).
//!
//! * [`SysProcs`] — each pane's tree from `sysinfo`'s process list (every
//!   process's parent), what each process runs read afresh at each sample;
//!   its group and its terminal's foreground group from [`job_control`],
//!   the one call each system answers its own way.
//! * [`LivenessWatch`] — the end of a watched job, found by asking whether
//!   its leader still exists (`kill(pid, 0)`) at each round of the event
//!   loop: seen at the next round, not at once.
//! * [`PollSet`] — which pipes are readable, by `poll(2)` over all of them
//!   at each read tick; while none prints, the event loop waits on a copy
//!   of each, registered with the runtime (`kqueue` on macOS and the BSDs,
//!   `epoll` on Linux).
//!
//! What it cannot give, and what that costs, is in
//! `docs/decisions/0009-platform-backends.md`.

mod exits;
mod job;
mod procs;
mod ready;

pub use exits::LivenessWatch;
pub use job::{job_control, JobControl};
pub use procs::SysProcs;
pub use ready::PollSet;
