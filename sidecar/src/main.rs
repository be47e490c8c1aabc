//! The `tend` binary.

use std::process::ExitCode;

use clap::Parser;
use tend::cli::{self, Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli::wants_json(&cli);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match &cli.command {
        Command::Replay(a) => cli::replay::run(a, &mut out),
        Command::Explain(a) => cli::explain::run(a, &mut out),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if json {
                println!("{}", e.to_json());
            }
            eprintln!("tend: {e}");
            ExitCode::FAILURE
        }
    }
}
