//! tend: the daemon and the command line.
//!
//! The binary (`src/main.rs`) parses arguments and dispatches to one module
//! per command; everything that talks to the operating system lives here,
//! everything that decides lives in `tend-detector`.

pub mod cli;
pub mod error;
pub mod manifests;
