//! `tend remote add|list|remove`: the machines whose agents join this
//! status line, kept in `config.toml` (see [`crate::config::RemoteConfig`]).

use crate::error::ErrorKind;
use std::io::Write;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::{json, Value};
use tend_protocol::params;
use tend_protocol::reply::Link;

use super::target::{ServerArgs, Target};
use crate::client;
use crate::config::RemoteConfig;
use crate::error::CliError;

/// Arguments of `tend remote`.
#[derive(Debug, Args)]
pub struct RemoteArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: RemoteCommand,
}

/// `tend remote …`.
#[derive(Debug, Subcommand)]
pub enum RemoteCommand {
    /// Add a remote: its agents join this status line over ssh.
    Add(AddArgs),
    /// The remotes, and how each link is doing.
    List(ListArgs),
    /// Remove a remote.
    Remove(RemoveArgs),
}

/// Arguments of `tend remote add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// A short name (prefixes its pane ids: NAME:%3).
    pub name: String,
    /// The ssh destination, as `ssh` takes it (`me@host`, a Host alias).
    pub dest: String,
    /// How the remote shell runs tend, when not as `tend` on its PATH
    /// (e.g. `~/.cargo/bin/tend`, `TEND_TMUX_SOCKET=work tend`).
    #[arg(long)]
    pub tend_command: Option<String>,
    /// An option for ssh, before DEST (repeat: --ssh-option=-p --ssh-option=2222).
    #[arg(long = "ssh-option", allow_hyphen_values = true)]
    pub ssh_options: Vec<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tend remote list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tend remote remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The remote's name.
    pub name: String,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

impl RemoteArgs {
    /// Whether JSON was asked for.
    pub fn json(&self) -> bool {
        match &self.command {
            RemoteCommand::Add(a) => a.json,
            RemoteCommand::List(a) => a.json,
            RemoteCommand::Remove(a) => a.json,
        }
    }
}

fn io(e: std::io::Error) -> CliError {
    CliError::new(ErrorKind::Io, format!("cannot write output: {e}"))
}

fn config_path() -> Result<std::path::PathBuf, CliError> {
    crate::config::path().ok_or_else(|| {
        CliError::new(
            ErrorKind::BadConfig,
            "no configuration directory: set HOME or XDG_CONFIG_HOME",
        )
    })
}

/// Tells a running daemon to pick the change up; none running is fine.
fn reload(server: &ServerArgs) -> bool {
    let Ok(t) = Target::resolve(server) else {
        return false;
    };
    client::call(&t.control, params::RemotesReload {}, Duration::from_secs(3)).is_ok()
}

/// `tend remote …`.
pub fn run(server: &ServerArgs, args: &RemoteArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.command {
        RemoteCommand::Add(a) => {
            let r = RemoteConfig {
                dest: a.dest.clone(),
                tend_command: a.tend_command.clone(),
                ssh_options: a.ssh_options.clone(),
            };
            let path = config_path()?;
            super::config_edit::add(&path, &a.name, &r)?;
            let live = reload(server);
            if a.json {
                writeln!(out, "{}", json!({"added": a.name, "daemon_reloaded": live}))
                    .map_err(io)?;
            } else {
                writeln!(
                    out,
                    "added remote {} ({}) to {}{}",
                    a.name,
                    a.dest,
                    path.display(),
                    if live {
                        "; the running daemon connects now"
                    } else {
                        ""
                    }
                )
                .map_err(io)?;
            }
            Ok(())
        }
        RemoteCommand::Remove(a) => {
            let path = config_path()?;
            super::config_edit::remove(&path, &a.name)?;
            let live = reload(server);
            if a.json {
                writeln!(
                    out,
                    "{}",
                    json!({"removed": a.name, "daemon_reloaded": live})
                )
                .map_err(io)?;
            } else {
                writeln!(out, "removed remote {}", a.name).map_err(io)?;
            }
            Ok(())
        }
        RemoteCommand::List(a) => {
            let cfg = crate::config::load()?;
            let live: Vec<Link> = Target::resolve(server)
                .ok()
                .and_then(|t| {
                    client::call(&t.control, params::Remotes {}, Duration::from_secs(3)).ok()
                })
                .unwrap_or_default();
            let link = |name: &str| live.iter().find(|l| l.name == name);
            if a.json {
                let rows: Vec<Value> = cfg
                    .remotes
                    .iter()
                    .map(|(name, r)| {
                        json!({
                            "name": name,
                            "dest": r.dest,
                            "tend_command": r.tend_command,
                            "ssh_options": r.ssh_options,
                            "link": link(name),
                        })
                    })
                    .collect();
                writeln!(out, "{}", Value::Array(rows)).map_err(io)?;
                return Ok(());
            }
            if cfg.remotes.is_empty() {
                writeln!(out, "no remotes; add one with `tend remote add NAME DEST`")
                    .map_err(io)?;
                return Ok(());
            }
            for (name, r) in &cfg.remotes {
                let state = match link(name) {
                    Some(l) => link_words(l),
                    None => "daemon not running".to_owned(),
                };
                writeln!(out, "{:<16} {:<28} {}", name, r.dest, state).map_err(io)?;
            }
            Ok(())
        }
    }
}

/// One link's state in words: `up · 4 agents`, `unreachable: <ssh's error>`.
pub fn link_words(link: &Link) -> String {
    let agents = link.agents;
    match link.state.as_str() {
        "up" => format!("up · {agents} agent{}", if agents == 1 { "" } else { "s" }),
        "connecting" => "connecting".into(),
        _ => format!(
            "unreachable: {}",
            link.error.as_deref().unwrap_or("no error recorded")
        ),
    }
}
