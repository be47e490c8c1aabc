//! tend's process source: what the operating system says of the panes'
//! processes, for the daemon core (`tend_core::ProcSource`).
//!
//! * [`sampler`]: the [`sampler::Sampler`], which reads each pane's process
//!   tree, looks agents' versions up in their package metadata and
//!   watches the ends of their jobs: the core's `ProcReader`.
//! * [`platform`]: the two backends behind it (Linux `/proc` and pidfds;
//!   `sysinfo` and liveness checks elsewhere), and the other facilities
//!   the event loop takes from the system (ready sets, its timer, a
//!   socket's peer).

pub mod platform;
pub mod sampler;
