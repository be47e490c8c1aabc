//! Commands tmux runs on tend's behalf: `tend tap` (the pipe-pane
//! process), `tend poke` (hooks), `tend key` (key bindings that need a
//! process: the picker), `tend guard` (waits for the daemon's end, see
//! `tend_daemon::guard`).

use crate::error::ErrorKind;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tend_protocol::params;
use tend_protocol::reply::Answered;
use tend_tmux::command::{Command, Commands};
use tend_tmux::escape::{run_shell_command, Word};
use tend_tmux::MenuItem;

use super::target::ServerArgs;
use crate::client;
use crate::error::CliError;
use tend_protocol::PaneView;
use tend_vocab::{PaneBand, Reason};

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

/// Arguments of `tend guard`.
#[derive(Debug, Args)]
pub struct GuardArgs {
    /// The daemon's control socket.
    #[arg(long)]
    pub socket: PathBuf,
    /// The token the daemon put in `@tend_daemon`.
    #[arg(long)]
    pub token: String,
}

/// `tend guard`: connects to the daemon and blocks until the connection
/// ends. `bye` (a clean stop): success. The daemon died (the kernel closed
/// the connection) or was never there: failure, and the shell around the
/// guard has tmux clean up.
pub fn guard(args: &GuardArgs) -> Result<(), CliError> {
    use std::io::{BufRead, BufReader, Write};
    let mut stream = client::connect(&args.socket).map_err(|e| {
        CliError::new(
            e.kind,
            format!(
                "no daemon to guard: {}; tmux cleans up the status line now",
                e.message
            ),
        )
    })?;
    let hello = params::Guard {
        token: Some(args.token.clone()),
    };
    stream
        .write_all(client::request_line(hello).as_bytes())
        .map_err(|e| CliError::new(ErrorKind::Io, format!("cannot reach the daemon: {e}")))?;
    // The answer, then nothing until `bye` or the end of the connection:
    // no timeout, no polling.
    let mut lines = BufReader::new(stream);
    let mut line = String::new();
    while lines.read_line(&mut line).is_ok_and(|n| n > 0) {
        if line.trim() == "bye" {
            return Ok(());
        }
        line.clear();
    }
    // Failing is what makes the shell around the guard run the cleanup.
    Err(CliError::new(
        ErrorKind::DaemonGone,
        format!(
            "the daemon on {} ended without `tend stop`",
            args.socket.display()
        ),
    ))
}

/// `tend tap`.
pub fn tap(args: &TapArgs) -> Result<(), CliError> {
    tend_daemon::run_tap(&args.socket, &args.pane)
        .map_err(|e| CliError::new(ErrorKind::Tap, format!("tap for {} ended: {e}", args.pane)))
}

/// `tend poke`: a hook fired; ask for a reconcile. Never fails loudly (a
/// hook must not disturb the user).
pub fn poke(args: &PokeArgs) -> Result<(), CliError> {
    let poke = params::Poke {
        event: args.rest.clone(),
    };
    let _ = client::call(&args.socket, poke, Duration::from_secs(2));
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
    match (action, pane) {
        ("goto", Some(pane)) => {
            let goto = params::Goto {
                pane,
                client: client_name,
            };
            let _ = client::call(&args.socket, goto, Duration::from_secs(3));
            Ok(())
        }
        ("picker", _) => picker(server, args, client_name),
        ("agent", Some(pane)) => match client_name {
            Some(c) => agent_menu(server, args, &c, &pane),
            None => Ok(()),
        },
        ("approve" | "deny", Some(pane)) => {
            answer_key(server, args, action, pane, client_name.as_deref());
            Ok(())
        }
        ("ask-note" | "ask-reason", Some(pane)) => ask_and_send(&args.socket, action, pane),
        ("unpark" | "unsnooze" | "snooze", Some(pane)) => mark_key(args, action, pane),
        ("next-waiting" | "next-waiting-session" | "next-working", pane) => {
            let kind = match action {
                "next-working" => "working",
                "next-waiting-session" => "session",
                _ => "waiting",
            };
            let next = params::Next {
                kind: Some(kind.to_owned()),
                from: pane,
                client: client_name,
                jump: true,
                session: None,
            };
            let _ = client::call(&args.socket, next, Duration::from_secs(3));
            Ok(())
        }
        ("goto" | "agent" | "approve" | "deny" | "ask-note" | "ask-reason", None)
        | ("unpark" | "unsnooze" | "snooze", None) => Ok(()),
        (other, _) => Err(CliError::new(
            ErrorKind::BadRequest,
            format!("unknown key action `{other}`"),
        )),
    }
}

/// The commands a menu entry runs: `tend key …` for this daemon, and the
/// popups in which tend itself reads free text (a note, a reason: it never
/// passes through a tmux template or a shell, cli/ask.rs).
struct KeyCommands {
    exe: String,
    socket: String,
    pane: String,
    /// The popup can have a title (tmux 3.3 and later).
    titled: bool,
}

impl KeyCommands {
    fn new(socket: &std::path::Path, pane: &str, titled: bool) -> KeyCommands {
        KeyCommands {
            exe: std::env::current_exe()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "tend".into()),
            socket: socket.to_string_lossy().into_owned(),
            pane: pane.to_owned(),
            titled,
        }
    }

    /// `tend key METHOD pane=… EXTRA…`, as a menu entry's command.
    fn tend(&self, method: &str, extra: &[&str]) -> String {
        let mut words = vec![
            Word::lit(self.exe.as_str()),
            Word::lit("key"),
            Word::lit("--socket"),
            Word::lit(self.socket.as_str()),
            Word::lit(method),
            Word::lit(format!("pane={}", self.pane)),
        ];
        words.extend(extra.iter().map(|e| Word::lit(*e)));
        run_shell_command(&words, tend_tmux::MARKER)
    }

    /// A popup titled `title` in which `tend key METHOD` reads a line.
    fn ask(&self, title: &str, method: &str) -> String {
        let mut popup = Command::new("display-popup").args(["-E", "-w", "72", "-h", "4"]);
        if self.titled {
            popup = popup.args(["-T", title]);
        }
        let popup = popup
            .args([
                self.exe.as_str(),
                "key",
                "--socket",
                self.socket.as_str(),
                method,
            ])
            .arg(format!("pane={}", self.pane));
        Commands::from(popup).command_string()
    }
}

/// The picker key: the fleet view in a popup where the server has one and
/// the user did not ask for the menu; the menu otherwise, and when the
/// popup is refused.
fn picker(
    server: &ServerArgs,
    args: &PokeArgs,
    client_name: Option<String>,
) -> Result<(), CliError> {
    if let Some(c) = client_name.as_deref() {
        if open_pilot(server, &args.socket, c) {
            return Ok(());
        }
    }
    let mut panes: Vec<PaneView> =
        client::call(&args.socket, params::List {}, Duration::from_secs(3))?;
    panes.retain(|p| p.agent.is_some());
    // Most urgent first; unreachable remotes last.
    panes.sort_by_key(|p| {
        let band = p.band.and_then(PaneBand::agent);
        (band.is_none(), band)
    });
    let server = server.server();
    let Some(c) = client_name else { return Ok(()) };
    let mut items = vec![MenuItem::Disabled(
        "choose an agent: go to it, park, snooze…".into(),
    )];
    if panes.is_empty() {
        items.push(MenuItem::Disabled("no agents".into()));
    }
    for (i, p) in panes.iter().enumerate().take(30) {
        let key = char::from_digit((i + 1) as u32 % 36, 36)
            .map(|k| k.to_string())
            .unwrap_or_default();
        // A remote pane has no local menu of actions: choosing it goes
        // there.
        let what = if p.host.is_some() { "goto" } else { "agent" };
        let commands = KeyCommands::new(&args.socket, &p.pane, false);
        let words = [
            Word::lit(commands.exe.as_str()),
            Word::lit("key"),
            Word::lit("--socket"),
            Word::lit(commands.socket.as_str()),
            Word::lit(what),
            Word::lit(format!("pane={}", p.pane)),
            Word::fmt("client=#{client_name}"),
        ];
        items.push(MenuItem::Entry {
            label: picker_label(p),
            key,
            command: run_shell_command(&words, tend_tmux::MARKER),
        });
    }
    server
        .display_menu(&c, "tend: agents", &items)
        .map_err(|e| CliError::new(ErrorKind::Tmux, e.to_string()))
}

/// One agent's menu: its dialog and answers while it waits for approval,
/// go to it, park, snooze, ask it to stop.
fn agent_menu(
    server: &ServerArgs,
    args: &PokeArgs,
    client_name: &str,
    pane: &str,
) -> Result<(), CliError> {
    let get = params::Get {
        pane: pane.to_owned(),
    };
    let view: PaneView = client::call(&args.socket, get, Duration::from_secs(3))?;
    let id: tend_tmux::PaneId = pane
        .parse()
        .map_err(|_| CliError::new(ErrorKind::BadRequest, format!("bad pane id {pane}")))?;
    let titled = server
        .server()
        .server_version()
        .is_none_or(|v| v.at_least(3, 3));
    let commands = KeyCommands::new(&args.socket, pane, titled);
    let mut items = vec![MenuItem::Disabled(picker_label(&view))];
    // Waiting for approval: the dialog's own text (read from the screen
    // now) and its answers, where the agent's keys are known.
    if view.reason == Some(Reason::Approval) {
        items.extend(approval_items(&args.socket, pane, &commands));
    }
    items.push(MenuItem::Entry {
        label: "Go to it".into(),
        key: "g".into(),
        command: tend_tmux::client::switch_command(id),
    });
    items.push(MenuItem::Separator);
    items.extend(mark_items(&view, &commands));
    items.push(MenuItem::Separator);
    items.push(MenuItem::Entry {
        label: "Ask it to stop… (stop flag)".into(),
        key: "s".into(),
        command: commands.ask("tend: ask it to stop", "ask-reason"),
    });
    server
        .server()
        .display_menu(client_name, &format!("tend: {pane}"), &items)
        .map_err(|e| CliError::new(ErrorKind::Tmux, e.to_string()))
}

/// The dialog's last lines and its answers, each naming the keys it
/// sends (none when the daemon cannot read the dialog).
fn approval_items(socket: &std::path::Path, pane: &str, commands: &KeyCommands) -> Vec<MenuItem> {
    let dry_run = |action: &str| {
        let answer = params::Answer {
            pane: pane.to_owned(),
            action: action.to_owned(),
            dry_run: true,
        };
        client::call(socket, answer, Duration::from_secs(3))
    };
    let Ok(d) = dry_run("approve") else {
        return Vec::new();
    };
    let mut items = vec![MenuItem::Separator];
    let skip = d.dialog.len().saturating_sub(DIALOG_LINES);
    for line in &d.dialog[skip..] {
        items.push(MenuItem::Disabled(format!("  {line}")));
    }
    let keys = |v: &Answered| v.keys.join(" ");
    items.push(MenuItem::Entry {
        label: format!("Approve (sends {})", keys(&d)),
        key: "y".into(),
        command: commands.tend("approve", &[]),
    });
    if let Ok(n) = dry_run("deny") {
        items.push(MenuItem::Entry {
            label: format!("Deny (sends {})", keys(&n)),
            key: "n".into(),
            command: commands.tend("deny", &[]),
        });
    }
    items
}

/// Park or unpark, unsnooze, the snooze lengths.
fn mark_items(view: &PaneView, commands: &KeyCommands) -> Vec<MenuItem> {
    let mut items = Vec::new();
    if view.parked {
        items.push(MenuItem::Entry {
            label: "Unpark".into(),
            key: "p".into(),
            command: commands.tend("unpark", &[]),
        });
    } else {
        items.push(MenuItem::Entry {
            label: "Park… (with a note)".into(),
            key: "p".into(),
            command: commands.ask("tend: park with a note", "ask-note"),
        });
    }
    if view.snoozed {
        items.push(MenuItem::Entry {
            label: "Unsnooze".into(),
            key: "u".into(),
            command: commands.tend("unsnooze", &[]),
        });
    }
    for (label, key, len) in [
        ("Snooze 15 minutes", "1", "15m"),
        ("Snooze 30 minutes", "3", "30m"),
        ("Snooze 6 hours", "6", "6h"),
        ("Snooze until I type", "0", "unlimited"),
    ] {
        items.push(MenuItem::Entry {
            label: label.into(),
            key: key.into(),
            command: commands.tend("snooze", &[len]),
        });
    }
    items
}

/// Approve or deny from the menu, and say how it went in the client's
/// status line. The daemon reads the screen again before sending; a dialog
/// that closed meanwhile is refused, and the user is told why.
fn answer_key(
    server: &ServerArgs,
    args: &PokeArgs,
    action: &str,
    pane: String,
    client_name: Option<&str>,
) {
    let answer = params::Answer {
        pane: pane.clone(),
        action: action.to_owned(),
        dry_run: false,
    };
    let said = match client::call(&args.socket, answer, Duration::from_secs(3)) {
        Ok(v) => format!(
            "tend: {} {pane} ({})",
            if action == "approve" {
                "approved"
            } else {
                "denied"
            },
            v.rule
        ),
        Err(e) => format!("tend: {}", e.message),
    };
    let _ = server.server().display_message(client_name, &said, None);
}

/// Unpark, unsnooze, or snooze for the length the key names.
fn mark_key(args: &PokeArgs, action: &str, pane: String) -> Result<(), CliError> {
    let socket = &args.socket;
    let wait = Duration::from_secs(3);
    match action {
        "snooze" => {
            let length = args
                .rest
                .iter()
                .find(|a| !a.contains('=') && *a != "snooze")
                .cloned()
                .unwrap_or_else(|| "30m".into());
            let snooze = params::Snooze {
                pane,
                length: Some(length),
            };
            client::call(socket, snooze, wait).map(drop)
        }
        "unpark" => client::call(socket, params::Unpark { pane }, wait).map(drop),
        _ => client::call(socket, params::Unsnooze { pane }, wait).map(drop),
    }
}

/// The option that chooses what the picker key opens: `popup` (the
/// default: `tend pilot` in a popup) or `menu` (the picker menu).
pub const PICKER_VIEW_OPTION: &str = "@tend-picker-view";

/// Opens `tend pilot` in a popup on `client`; false when the user chose
/// the menu, the server has no popup, or tmux refused it.
/// `ask-note` / `ask-reason`: asks in the popup this runs in, then parks
/// the pane with the note or puts a stop flag on it with the reason. A
/// refusal is shown in the popup until a key is pressed.
fn ask_and_send(socket: &std::path::Path, action: &str, pane: String) -> Result<(), CliError> {
    let label = if action == "ask-note" {
        "park note:"
    } else {
        "stop reason:"
    };
    let terminal = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("terminal: {e}"));
    let text = match super::ask::ask(label).map_err(terminal)? {
        super::ask::Outcome::Answered(text) => text,
        super::ask::Outcome::Cancelled => return Ok(()),
    };
    let wait = Duration::from_secs(3);
    let sent = if action == "ask-note" {
        let park = params::Park {
            note: text,
            pane,
            gate: None,
        };
        client::call(socket, park, wait).map(drop)
    } else {
        let stop = params::StopRequest {
            reason: text,
            pane,
            by: Some("user".into()),
        };
        client::call(socket, stop, wait).map(drop)
    };
    if let Err(e) = &sent {
        super::ask::tell(&format!("tend: {}", e.message)).map_err(terminal)?;
    }
    sent
}

fn open_pilot(server: &ServerArgs, control: &std::path::Path, client: &str) -> bool {
    let srv = server.server();
    if !srv.capabilities().popup {
        return false;
    }
    let view = srv
        .show_option(tend_tmux::Scope::Global, PICKER_VIEW_OPTION)
        .ok()
        .flatten()
        .unwrap_or_default();
    if view.trim() == "menu" {
        return false;
    }
    let Ok(socket) = srv.socket_path() else {
        return false;
    };
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "tend".into());
    let socket = socket.to_string_lossy().into_owned();
    let control = control.to_string_lossy().into_owned();
    srv.display_popup(
        client,
        &[
            &exe, "-S", &socket, "pilot", "--socket", &control, "--client", client,
        ],
        "90%",
        "85%",
        "tend: agents",
    )
    .is_ok()
}

/// At most this many rows of a dialog in the picker (its bottom rows: the
/// question and the options). tmux shows no menu taller than the client,
/// and the agent menu must still fit a 24-row terminal.
const DIALOG_LINES: usize = 7;

/// Longest agent's message on a picker line, in bytes.
const PICKER_MESSAGE: usize = 60;

/// One line per agent: band, agent, state, marks, session and pane.
fn picker_label(p: &PaneView) -> String {
    let state = match (&p.state, &p.reason) {
        (Some(s), Some(r)) => format!("{s}/{r}"),
        (Some(s), None) => s.to_string(),
        _ => "-".into(),
    };
    let mut marks = Vec::new();
    if let Some(n) = p.note.as_deref().filter(|n| !n.is_empty()) {
        marks.push(format!("“{n}”"));
    }
    if p.snoozed {
        marks.push("snoozed".into());
    }
    if p.stop.is_some() {
        marks.push("stop pending".into());
    }
    // What the agent said about its state (`tend report --message`, an OSC
    // 7501 `msg`), cut to fit a menu line.
    if let Some(m) = p.message.as_deref() {
        let m = tend_detector::psp::clean_text(m, PICKER_MESSAGE);
        if !m.is_empty() {
            marks.push(format!("— {m}"));
        }
    }
    format!(
        "{:<16} {:<8} {:<18} {} {} {}",
        p.band.map_or("-", |b| b.as_str()),
        p.agent.as_deref().unwrap_or("-"),
        state,
        p.session,
        p.pane,
        marks.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tend_vocab::{Band, State};

    #[test]
    fn the_picker_shows_what_the_agent_said_cut_and_cleaned() {
        let mut p = PaneView {
            pane: "%3".into(),
            session: "work".into(),
            agent: Some("claude".into()),
            state: Some(State::Waiting.into()),
            reason: Some(Reason::Approval),
            band: Some(Band::Waiting.into()),
            message: Some("approve Bash:\n rm -rf ./build\u{1b}[31m".into()),
            ..PaneView::default()
        };
        let line = picker_label(&p);
        assert!(
            line.starts_with("waiting          claude   waiting/approval "),
            "{line}"
        );
        assert!(
            line.ends_with("— approve Bash: rm -rf ./build[31m"),
            "{line}"
        );
        p.message = Some("x".repeat(200));
        let line = picker_label(&p);
        assert!(line.ends_with('…'), "{line}");
        assert!(line.len() < 200, "{line}");
    }
}
