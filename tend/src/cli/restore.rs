//! `tend restore`: after a server restart, each agent that ran when the
//! last server ended, started again in its pane in its own conversation.
//! The daemon decides (`tend_core::resume`); this asks it and says what
//! it did.

use std::io::Write;
use std::time::Duration;

use clap::Args;
use tend_protocol::params;
use tend_protocol::reply::{Restorable, Restored};
use tend_tmux::escape::shell_join;

use super::target::{ServerArgs, Target};
use crate::client;
use crate::error::{CliError, ErrorKind};

/// Long enough for a daemon started just now to list the panes.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Arguments of `tend restore`.
#[derive(Debug, Args)]
#[command(after_help = "\
Only a conversation still in its agent's store and belonging to that folder is
resumed, only where its pane (same session, window and pane, same folder) is at
a shell prompt — or in a new window in its folder where that pane is gone — and
never twice. Anything else is said and skipped.

Examples:
  tend restore                     # what ran when the last server ended, and where
  tend restore --all --dry-run     # the commands it would type
  tend restore --all               # resume every one that can be
  tend restore work:1.0            # only the one that ran in work:1.0
  set -g @resurrect-hook-post-restore-all 'tend restore --all'   # after tmux-resurrect")]
pub struct RestoreArgs {
    /// Restore those that ran at these places (`work:1.0`, as listed);
    /// without any, and without --all, only list them.
    pub places: Vec<String>,
    /// Restore every one that can be.
    #[arg(long)]
    pub all: bool,
    /// Print the commands, start nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend restore`: starts tend for this server first if it does not run
/// (a restore from tmux-resurrect's hook comes before anything else).
pub fn run(server: &ServerArgs, a: &RestoreArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    if client::call(&t.control, params::Ping {}, Duration::from_secs(2)).is_err() {
        super::lifecycle::start(
            server,
            &super::lifecycle::StartArgs {
                foreground: false,
                json: true,
            },
            &mut std::io::sink(),
        )?;
    }
    let call = params::Restore {
        all: a.all,
        places: a.places.clone(),
        dry_run: a.dry_run,
    };
    let v = client::call(&t.control, call, TIMEOUT)?;
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    if a.json {
        return writeln!(out, "{}", client::json_text(&v)).map_err(io);
    }
    for line in text(&v, a.all || !a.places.is_empty()) {
        writeln!(out, "{line}").map_err(io)?;
    }
    let unknown: Vec<&String> = a
        .places
        .iter()
        .filter(|p| !v.conversations.iter().any(|c| &c.place == *p))
        .collect();
    if !unknown.is_empty() {
        return Err(CliError::new(
            ErrorKind::UnknownPlace,
            format!(
                "nothing ran at {} when the last server ended; `tend restore` lists what did",
                unknown
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(())
}

/// What a restore did, a line per conversation and a last line saying
/// what is left to do.
fn text(v: &Restored, acting: bool) -> Vec<String> {
    let mut lines: Vec<String> = v.conversations.iter().map(|c| line(c, v.dry_run)).collect();
    let before = match v.resumed_before {
        0 => String::new(),
        1 => " (1 was restored before)".to_owned(),
        n => format!(" ({n} were restored before)"),
    };
    if v.conversations.is_empty() {
        lines.push(format!("nothing to restore{before}"));
    } else if !acting || v.dry_run {
        let can = v
            .conversations
            .iter()
            .filter(|c| c.command.is_some())
            .count();
        if can > 0 && !v.dry_run {
            lines.push(format!(
                "{can} can be restored: `tend restore --all`, or `tend restore PLACE` for one{before}"
            ));
        }
    }
    lines
}

pub(crate) fn line(c: &Restorable, dry_run: bool) -> String {
    let what = format!(
        "{}  {}  {}{}",
        c.place,
        c.name,
        c.folder,
        c.id.as_deref()
            .map(|id| format!("  {id}"))
            .unwrap_or_default()
    );
    match (&c.command, &c.target, &c.skipped) {
        (_, _, Some(why)) => format!("{what}\n    skipped: {why}"),
        (Some(cmd), Some(target), None) => {
            let verb = if c.started {
                "started"
            } else if dry_run {
                "would start"
            } else {
                "can start"
            };
            format!("{what}\n    {verb} in {target}: {}", shell_join(cmd))
        }
        _ => what,
    }
}
