//! Command-line commands, one module each.

pub mod explain;
pub mod replay;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// tend watches the coding agents in your tmux panes and tells you, in the
/// status line, which ones need you.
#[derive(Debug, Parser)]
#[command(name = "tend", version, about, long_about = None)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Every command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the detector over an asciicast v2 recording and print its state
    /// transitions.
    Replay(replay::ReplayArgs),
    /// Explain a state: every rule's verdict on a screen.
    Explain(explain::ExplainArgs),
}

/// Where the user wants JSON instead of text.
pub fn wants_json(cli: &Cli) -> bool {
    match &cli.command {
        Command::Replay(a) => a.json,
        Command::Explain(a) => a.json,
    }
}

/// A path argument.
pub type PathArg = PathBuf;
