//! `tend-tmux`'s integration tests, one binary: each module was a test file
//! of its own; `common` holds the private-socket tmux servers they share.

mod common;

mod client;
mod hooks;
mod keys;
mod options;
mod plugin;
mod query;
mod server;
mod status;
mod tap;
mod wire;
