//! tend: the daemon and the command line.
//!
//! The binary (`src/main.rs`) parses arguments and dispatches to one module
//! per command; everything that talks to the operating system lives here.
//! What decides is pure and lives elsewhere: what an agent is doing in
//! `tend-detector`, what that means for the user (bands, reports, parks,
//! notifications) in `tend-attention`; everything that speaks to tmux is in
//! `tend-tmux`.

pub mod cli;
pub mod client;
pub mod config;
pub mod daemon;
pub mod error;
pub mod keys;
pub mod manifests;
pub mod notify;
pub mod paths;
pub mod platform;
pub mod remote;
pub mod sampler;
pub mod tap;
