//! The Linux backend: the implementations tend was measured and tuned
//! with (`docs/PERFORMANCE.md`).
//!
//! * [`ProcFs`] — each pane's tree from `/proc`: the shell's `stat` for a
//!   probe, `task/<tid>/children` for the walk, files kept open and read
//!   again from offset 0, what a process runs cached per process image.
//! * [`PidfdWatch`] — a pidfd per watched job's leader, all in one `epoll`
//!   set the event loop waits on: an agent's end is seen the moment it
//!   happens.
//! * [`EpollSet`] — every pane's pipe and the tap socket in one `epoll`
//!   set, registered once: a read tick asks which are readable without
//!   handing the kernel the list, and the quiet event loop waits on the
//!   set itself.
//! * [`TimerFdTimer`] — the event loop's deadline, a `timerfd` that wakes
//!   it once at the instant asked.

pub mod exits;
pub mod procfs;
pub mod ready;
pub mod timer;

pub use exits::PidfdWatch;
pub use procfs::ProcFs;
pub use ready::EpollSet;
pub use timer::TimerFdTimer;
