//! `tend status`, `tend list`, `tend next`, `tend jump`: questions to the
//! running daemon.

use crate::error::ErrorKind;
use std::io::Write;
use std::time::Duration;

use clap::Args;
use tend_protocol::params;

use super::target::{ServerArgs, Target};
use crate::client;
use crate::error::CliError;
use tend_protocol::PaneView;

const TIMEOUT: Duration = Duration::from_secs(5);

/// `--json` alone.
#[derive(Debug, Args)]
pub struct JsonArgs {
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tend next` and `tend jump`.
#[derive(Debug, Args)]
pub struct NextArgs {
    /// Only agents in this session (of --from, or the current pane's).
    #[arg(long, conflicts_with = "working")]
    pub session: bool,
    /// The next working agent instead of the next waiting one.
    #[arg(long)]
    pub working: bool,
    /// The pane to start from (default: `$TMUX_PANE`), so repeated calls cycle.
    #[arg(long)]
    pub from: Option<String>,
    /// The tmux client to move (jump only; default: the most recent).
    #[arg(long)]
    pub client: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

fn io(e: std::io::Error) -> CliError {
    CliError::new(ErrorKind::Io, format!("cannot write output: {e}"))
}

/// `tend status`: one line for scripts and status bars.
pub fn status(server: &ServerArgs, args: &JsonArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let v = client::call(&t.control, params::Status {}, TIMEOUT)?;
    if args.json {
        writeln!(out, "{}", client::json_text(&v)).map_err(io)?;
        return Ok(());
    }
    let (summary, agents) = (v.summary, v.agents);
    if summary.is_empty() {
        let noun = if agents == 1 { "agent" } else { "agents" };
        writeln!(out, "no agent needs you ({agents} {noun} watched)").map_err(io)?;
    } else {
        writeln!(out, "{summary}").map_err(io)?;
    }
    Ok(())
}

/// `tend list`.
pub fn list(server: &ServerArgs, args: &JsonArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let panes: Vec<PaneView> = client::call(&t.control, params::List {}, TIMEOUT)?;
    if args.json {
        writeln!(out, "{}", client::json_text(&panes)).map_err(io)?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<6} {:<16} {:<8} {:<10} {:<18} {:<16} RULE",
        "PANE", "SESSION", "WINDOW", "AGENT", "STATE", "BAND"
    )
    .map_err(io)?;
    for p in panes {
        let state = match (&p.state, &p.reason, p.exit_code) {
            (Some(s), Some(r), _) => format!("{s}/{r}"),
            (Some(s), None, Some(code)) => format!("{s} ({code})"),
            (Some(s), None, None) => s.to_string(),
            _ => "-".into(),
        };
        writeln!(
            out,
            "{:<6} {:<16} {:<8} {:<10} {:<18} {:<16} {}",
            p.pane,
            truncate(&p.session, 16),
            p.window,
            p.agent.as_deref().unwrap_or("-"),
            state,
            p.band.map_or("-", |b| b.as_str()),
            p.rule.as_deref().unwrap_or("")
        )
        .map_err(io)?;
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

fn next_params(args: &NextArgs, jump: bool) -> params::Next {
    let kind = if args.working {
        "working"
    } else if args.session {
        "session"
    } else {
        "waiting"
    };
    params::Next {
        kind: Some(kind.to_owned()),
        from: args.from.clone().or_else(super::target::this_pane),
        client: args.client.clone(),
        jump,
        session: None,
    }
}

/// `tend next`: prints the pane to go to.
pub fn next(server: &ServerArgs, args: &NextArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let v = client::call(&t.control, next_params(args, false), TIMEOUT)?;
    if args.json {
        writeln!(out, "{}", client::json_text(&v)).map_err(io)?;
    } else {
        writeln!(out, "{}", v.pane).map_err(io)?;
    }
    Ok(())
}

/// `tend jump`: moves a client there (across sessions and windows).
pub fn jump(server: &ServerArgs, args: &NextArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let v = client::call(&t.control, next_params(args, true), TIMEOUT)?;
    if args.json {
        writeln!(out, "{}", client::json_text(&v)).map_err(io)?;
    } else {
        writeln!(out, "{}", v.pane).map_err(io)?;
    }
    Ok(())
}
