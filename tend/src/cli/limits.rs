//! `tend limits` (which agents wait on their plan's usage limit, until
//! when) and `tend resume` (go on after one, by hand).

use crate::error::ErrorKind;
use std::io::Write;
use std::time::Duration;

use clap::Args;
use tend_detector::limit::{countdown, local_clock};
use tend_protocol::{params, PaneView};

use super::target::{ServerArgs, Target};
use crate::client;
use crate::error::CliError;

const TIMEOUT: Duration = Duration::from_secs(5);
/// A resume reads the screen again before it types: a little longer.
const RESUME_TIMEOUT: Duration = Duration::from_secs(10);

fn io(e: std::io::Error) -> CliError {
    CliError::new(ErrorKind::Io, format!("cannot write output: {e}"))
}

/// The user's zone now, in seconds east of UTC.
pub fn utc_offset() -> i32 {
    chrono::Local::now().offset().local_minus_utc()
}

/// Unix seconds now.
pub fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// When a limit resets, as the user reads it and counting down:
/// `15:00 (in 2h 14m)`, `Tue 09:00 (in 1d 23h)`; `reset` once it passed.
pub fn reset_text(resets_at: i64, now: i64, offset: i32) -> String {
    if resets_at <= now {
        return format!("{} (reset)", local_clock(resets_at, now, offset));
    }
    format!(
        "{} (in {})",
        local_clock(resets_at, now, offset),
        countdown(resets_at - now)
    )
}

/// Arguments of `tend limits`.
#[derive(Debug, Args)]
pub struct LimitsArgs {
    /// JSON output (the panes as `tend list --json` has them).
    #[arg(long)]
    pub json: bool,
}

/// `tend limits`: the panes whose agent waits on its usage limit, soonest
/// reset first.
pub fn limits(server: &ServerArgs, args: &LimitsArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let panes: Vec<PaneView> = client::call(&t.control, params::List {}, TIMEOUT)?;
    let mut limited: Vec<PaneView> = panes
        .into_iter()
        .filter(|p| p.reason == Some(tend_vocab::Reason::Limit))
        .collect();
    limited.sort_by_key(|p| (p.resets_at.unwrap_or(i64::MAX), p.pane.clone()));
    if args.json {
        writeln!(out, "{}", client::json_text(&limited)).map_err(io)?;
        return Ok(());
    }
    if limited.is_empty() {
        writeln!(out, "no agent is at its usage limit").map_err(io)?;
        return Ok(());
    }
    let (now, offset) = (unix_now(), utc_offset());
    writeln!(
        out,
        "{:<14} {:<10} {:<9} {:<26} SAYS",
        "PANE", "AGENT", "BAND", "RESETS"
    )
    .map_err(io)?;
    for p in &limited {
        let resets = p
            .resets_at
            .map_or_else(|| "-".to_owned(), |at| reset_text(at, now, offset));
        writeln!(
            out,
            "{:<14} {:<10} {:<9} {:<26} {}",
            p.pane,
            p.agent.as_deref().unwrap_or("-"),
            p.band.map_or("-", |b| b.as_str()),
            resets,
            p.reset_words.as_deref().unwrap_or("(names no time)")
        )
        .map_err(io)?;
    }
    Ok(())
}

/// Arguments of `tend resume`.
#[derive(Debug, Args)]
#[command(after_help = "\
Sent only while the pane shows its agent's usage limit (the screen is read
again first), as `tend prompt` would (refused while a stop flag is pending).
An agent whose limit screen is a dialog (Gemini CLI's \"Keep trying\") gets
the dialog's own key instead of the text. To have tend do it at the reset:
`[limits] resume = \"continue\"` in config.toml.")]
pub struct ResumeArgs {
    /// The pane, `%N`.
    pub pane: String,
    /// The text to send (default: `[limits] resume`, else `continue`).
    pub text: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend resume %N [TEXT]`.
pub fn resume(server: &ServerArgs, a: &ResumeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let call = params::Resume {
        pane: a.pane.clone(),
        text: a.text.clone(),
    };
    let v = client::call(&t.control, call, RESUME_TIMEOUT)?;
    if a.json {
        writeln!(out, "{}", client::json_text(&v)).map_err(io)?;
        return Ok(());
    }
    let what = match &v.text {
        Some(text) => format!("sent {text:?}"),
        None => format!("pressed {}", v.keys.join(" ")),
    };
    writeln!(out, "resumed {} ({}): {what}", v.pane, v.agent).map_err(io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_reads_as_a_time_and_a_countdown() {
        // Sunday 2026-12-06 09:30 UTC.
        let now = 1_796_549_400;
        assert_eq!(
            reset_text(now + 5 * 3600 + 1800, now, 0),
            "15:00 (in 5h 30m)"
        );
        assert_eq!(reset_text(now + 86_400, now, 3600), "Mon 10:30 (in 1d 0h)");
        assert_eq!(reset_text(now - 60, now, 0), "09:29 (reset)");
    }
}
