//! The `tend` binary's integration tests, one binary (ripgrep's
//! `tests/tests.rs`): each module was a test file of its own. They run the
//! real `tend` against real tmux servers on private sockets, real zellij
//! sessions and real processes; `support` holds what they share.
//!
//! Opt-in tiers (real agent CLIs, soaks) are gated by environment
//! variables inside their modules; pick a module with its path as the
//! filter: `cargo test -p tend --test tests faults::`.

mod support;

mod answer;
mod attention;
mod capture;
mod cli_docs;
mod control;
mod daemon_death;
mod exit_live;
mod faults;
mod hooks_install;
mod hostile;
mod identity_tmux;
mod limits;
mod notify;
mod pilot;
mod platform;
mod remote;
mod replay_cli;
mod restore;
mod restore_live;
mod run_relay;
mod session_files;
mod settings;
mod shared_behaviour;
mod status_line;
mod tmux_e2e;
mod word_corpus;
mod wrappers;
