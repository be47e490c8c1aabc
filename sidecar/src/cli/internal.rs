//! Commands tmux runs on tend's behalf: `tend tap` (the pipe-pane
//! process), `tend poke` (hooks), `tend key` (key bindings that need a
//! process: the picker).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::json;
use tend_tmux::MenuItem;

use super::target::ServerArgs;
use crate::client;
use crate::error::CliError;
use crate::protocol::PaneView;

/// Arguments of `tend tap`.
#[derive(Debug, Args)]
pub struct TapArgs {
    /// The daemon's tap socket.
    #[arg(long)]
    pub socket: PathBuf,
    /// The pane whose output arrives on stdin.
    #[arg(long)]
    pub pane: String,
}

/// Arguments of `tend poke` and `tend key`.
#[derive(Debug, Args)]
pub struct PokeArgs {
    /// The daemon's control socket.
    #[arg(long)]
    pub socket: PathBuf,
    /// The hook or action name, then `key=value` fields.
    pub rest: Vec<String>,
}

/// `tend tap`.
pub fn tap(args: &TapArgs) -> Result<(), CliError> {
    crate::tap::run(&args.socket, &args.pane)
        .map_err(|e| CliError::new("tap", format!("tap for {} ended: {e}", args.pane)))
}

/// `tend poke`: a hook fired; ask for a reconcile. Never fails loudly (a
/// hook must not disturb the user).
pub fn poke(args: &PokeArgs) -> Result<(), CliError> {
    let _ = client::call(
        &args.socket,
        "poke",
        json!({"event": args.rest}),
        Duration::from_secs(2),
    );
    Ok(())
}

fn field<'a>(rest: &'a [String], key: &str) -> Option<&'a str> {
    rest.iter()
        .find_map(|f| f.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .filter(|v| !v.is_empty())
}

/// `tend key ACTION client=… pane=… session=…`.
pub fn key(server: &ServerArgs, args: &PokeArgs) -> Result<(), CliError> {
    let action = args.rest.first().map(String::as_str).unwrap_or("");
    let client_name = field(&args.rest, "client").map(str::to_owned);
    let pane = field(&args.rest, "pane").map(str::to_owned);
    match action {
        "picker" => {
            let v = client::call(&args.socket, "list", json!({}), Duration::from_secs(3))?;
            let mut panes: Vec<PaneView> = serde_json::from_value(v)
                .map_err(|e| CliError::new("bad_response", format!("unreadable pane list: {e}")))?;
            panes.retain(|p| p.agent.is_some());
            panes.sort_by_key(|p| band_rank(p.band.as_deref()));
            let server = server.server();
            let Some(c) = client_name else { return Ok(()) };
            let mut items = Vec::new();
            if panes.is_empty() {
                items.push(MenuItem::Disabled("no agents".into()));
            }
            for (i, p) in panes.iter().enumerate().take(30) {
                let state = match (&p.state, &p.reason) {
                    (Some(s), Some(r)) => format!("{s}/{r}"),
                    (Some(s), None) => s.clone(),
                    _ => "-".into(),
                };
                let key = char::from_digit((i + 1) as u32 % 36, 36)
                    .map(|k| k.to_string())
                    .unwrap_or_default();
                items.push(MenuItem::Entry {
                    label: format!(
                        "{:<16} {:<10} {:<18} {} {}",
                        p.band.as_deref().unwrap_or("-"),
                        p.agent.as_deref().unwrap_or("-"),
                        state,
                        p.session,
                        p.pane
                    ),
                    key,
                    command: tend_tmux::client::switch_command(p.pane.parse().map_err(|_| {
                        CliError::new("bad_response", format!("bad pane id {}", p.pane))
                    })?),
                });
            }
            server
                .display_menu(&c, "tend: agents", &items)
                .map_err(|e| CliError::new("tmux", e.to_string()))
        }
        "next-waiting" | "next-waiting-session" | "next-working" => {
            let kind = match action {
                "next-working" => "working",
                "next-waiting-session" => "session",
                _ => "waiting",
            };
            let _ = client::call(
                &args.socket,
                "next",
                json!({"kind": kind, "from": pane, "jump": true, "client": client_name}),
                Duration::from_secs(3),
            );
            Ok(())
        }
        other => Err(CliError::new(
            "bad_request",
            format!("unknown key action `{other}`"),
        )),
    }
}

fn band_rank(b: Option<&str>) -> u8 {
    match b {
        Some("blocked") => 0,
        Some("waiting") => 1,
        Some("quiet") => 2,
        Some("ready_for_review") => 3,
        Some("working") => 4,
        Some("parked") => 5,
        Some("snoozed") => 6,
        Some("finished") => 7,
        Some("idle") => 8,
        Some("exited") => 9,
        _ => 10,
    }
}
