//! tend: the command line, and the binary that is also the daemon.
//!
//! The binary (`src/main.rs`) parses arguments and dispatches to one module
//! per command ([`cli`]); the commands speak to the daemon through
//! [`client`] in `tend-protocol`'s types. What runs as the daemon is
//! `tend-daemon` (its loop) around `tend-core` (the pane table, pure);
//! what tend asks of the operating system is `tend-platform`'s; what an agent is doing is
//! `tend-detector`'s business, what that means for the user
//! `tend-attention`'s; everything that speaks to tmux is in `tend-tmux`.

pub mod cli;
pub mod client;

pub use tend_config::{config, error, keys, manifests, paths};
