//! # tend-detector
//!
//! The sans-IO core of tend: it reads a pane's output bytes, the user's
//! keystrokes, resizes and process snapshots — each with the time it
//! happened — and says which agent runs there and what it is doing, with the
//! rule and evidence behind every state.
//!
//! Nothing here does I/O or reads a clock: the same inputs always give the
//! same transitions, which is what makes recordings usable as tests.
//!
//! * [`screen`] — the terminal emulator per pane (`vt100`), history ring
//! * [`signals`] — OSC titles, notifications, progress, prompt marks
//! * [`manifest`] — per-agent TOML rule manifests, bundled and user
//! * [`rules`] — regions of the screen and rule verdicts
//! * [`machine`] — the narrow state machine with strong-evidence locks
//! * [`engine`] — [`PaneDetector`], tying the above to time
//! * [`identity`] — which agent a process tree runs
//! * [`limit`] — when a usage limit resets, from the words an agent draws
//! * [`version`] — which package metadata names an agent's version
//! * [`answer`] — the keys that approve or deny an agent's dialog
//! * [`psp`] — the agent's own word: OSC 7501 (Program Status Protocol)
//! * [`session_file`] — the agent's own word in a file: Claude Code's
//!   session file, read strictly, tied to its process, read as a state
//! * [`cast`], [`replay`] — asciicast v2 recordings through the detector
//!
//! What the daemon makes of a state for the user — bands, self-reports,
//! park and snooze, stop flags, notifications — is policy, not detection,
//! and lives in `tend-attention`, which builds on this crate.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod answer;
pub mod cast;
pub mod config;
pub mod engine;
pub mod identity;
pub mod limit;
pub mod machine;
pub mod manifest;
pub mod psp;
pub mod replay;
pub mod rules;
pub mod screen;
pub mod session_file;
pub mod signals;
pub mod state;
pub mod version;

pub use config::DetectorConfig;
pub use engine::{PaneDetector, ProcessObservation, Status};
pub use manifest::{Manifest, Registry};
pub use state::{Reason, State, Transition, Trigger};
