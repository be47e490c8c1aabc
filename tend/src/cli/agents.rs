//! Commands that script agents: `get`, `events`, `wait`,
//! `prompt`, `send-keys`, `read`; self-report: `report`,
//! `release`, `report-metadata`, `stop-request`, `inbox`, `ack`; and triage:
//! `park`, `unpark`, `snooze`, `unsnooze`.
//!
//! A timeout or `agent_prompt_stalled` does not prove a prompt was not
//! delivered: read the pane before retrying.

use crate::error::ErrorKind;
use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use serde::Serialize;
use serde_json::json;
use tend_detector::config::parse_duration;
use tend_protocol::reply::{PromptReply, Waited};
use tend_protocol::{params, BusEvent, Call, PaneView};
use tend_vocab::{PaneState, Reason};

use super::target::{ServerArgs, Target};
use crate::client;
use crate::error::CliError;
use tend_protocol::FEED_HEARTBEAT;

const TIMEOUT: Duration = Duration::from_secs(5);

fn io(e: std::io::Error) -> CliError {
    CliError::new(ErrorKind::Io, format!("cannot write output: {e}"))
}

/// The pane: given, else `$TMUX_PANE` or `$ZELLIJ_PANE_ID` (the pane this
/// runs in).
fn own_pane(given: &Option<String>) -> Result<String, CliError> {
    given
        .clone()
        .or_else(super::target::this_pane)
        .ok_or_else(|| {
            CliError::new(
                ErrorKind::BadRequest,
                "no pane: run this inside the agent's tmux or zellij pane, or pass --pane %N \
                 (zellij: --pane terminal_N)",
            )
        })
}

fn timeout_ms(t: &Option<String>) -> Result<Option<u64>, CliError> {
    t.as_deref()
        .map(|t| {
            parse_duration(t)
                .map(|d| d.as_millis() as u64)
                .map_err(|e| CliError::new(ErrorKind::BadRequest, format!("--timeout: {e}")))
        })
        .transpose()
}

/// One request to the daemon; its answer printed as JSON, or as `text` says.
fn ask<C: Call>(
    server: &ServerArgs,
    out: &mut dyn Write,
    json: bool,
    call: C,
    text: impl FnOnce(&C::Reply) -> String,
) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let v = client::call(&t.control, call, TIMEOUT)?;
    print(out, json, &v, text)
}

fn print<T: Serialize>(
    out: &mut dyn Write,
    json: bool,
    v: &T,
    text: impl FnOnce(&T) -> String,
) -> Result<(), CliError> {
    if json {
        writeln!(out, "{}", client::json_text(v)).map_err(io)
    } else {
        writeln!(out, "{}", text(v)).map_err(io)
    }
}

/// `waiting/approval`, `idle`, or `-` without a state.
fn state_word(state: Option<PaneState>, reason: Option<Reason>) -> String {
    let s = state.map_or("-", |s| s.as_str());
    match reason {
        Some(r) => format!("{s}/{r}"),
        None => s.to_owned(),
    }
}

fn waited_word(w: &Waited) -> String {
    state_word(w.state(), w.reason())
}

/// A pane and `--json`.
#[derive(Debug, Args)]
pub struct PaneArgs {
    /// The pane, `%N`.
    pub pane: String,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend get %N`.
pub fn get(server: &ServerArgs, a: &PaneArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let get = params::Get {
        pane: a.pane.clone(),
    };
    ask(server, out, a.json, get, |v: &PaneView| {
        let resets = v.resets_at.map_or_else(String::new, |at| {
            let (now, offset) = (super::limits::unix_now(), super::limits::utc_offset());
            format!(" resets={}", super::limits::reset_text(at, now, offset))
        });
        format!(
            "{} {} {} band={} since={} seq={}{resets}",
            v.pane,
            v.agent.as_deref().unwrap_or("-"),
            state_word(v.state, v.reason),
            v.band.map_or("-", |b| b.as_str()),
            v.since
                .map(|s| format!("{s:.0}"))
                .unwrap_or_else(|| "-".into()),
            v.state_change_seq
        )
    })
}

/// Arguments of `tend events`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  tend events --json                                  # every event, one JSON object a line
  tend events --json --pane %3 --state waiting        # when %3 starts waiting on you
  tend events --json --type pane.agent_status_changed | jq -r 'select(.reason == \"approval\") | .pane'
  tend events --json --state waiting | while read -r e; do notify-send tend \"$e\"; done")]
pub struct EventsArgs {
    /// Only this pane.
    #[arg(long)]
    pub pane: Option<String>,
    /// Only this event type (e.g. `pane.agent_status_changed`).
    #[arg(long = "type")]
    pub kind: Option<String>,
    /// Only events with this state.
    #[arg(long)]
    pub state: Option<String>,
    /// JSON output (one object per line; the default prints a short line).
    #[arg(long)]
    pub json: bool,
    /// What a remote's link reads (`tend remote add`): starts the daemon
    /// if it is not running, then prints every agent pane as one
    /// `feed.snapshot` JSON line, and again after each change.
    #[arg(long, conflicts_with_all = ["pane", "kind", "state"])]
    pub feed: bool,
}

/// `tend events`: a stream, until interrupted.
pub fn events(server: &ServerArgs, a: &EventsArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if a.feed {
        return feed(server, out);
    }
    let t = Target::resolve(server)?;
    let mut stream = client::connect(&t.control)?;
    let subscribe = params::Events {
        pane: a.pane.as_deref().map(|p| t.pane_name(p)),
        kind: a.kind.clone(),
        state: a.state.clone(),
    };
    stream
        .write_all(client::request_line(subscribe).as_bytes())
        .map_err(|e| CliError::new(ErrorKind::Io, format!("cannot talk to the daemon: {e}")))?;
    let reader = BufReader::new(stream);
    for (i, line) in reader.lines().enumerate() {
        let line =
            line.map_err(|e| CliError::new(ErrorKind::Io, format!("event stream ended: {e}")))?;
        if i == 0 {
            continue; // the subscription acknowledgement
        }
        if a.json {
            writeln!(out, "{line}").map_err(io)?;
        } else {
            let ev = serde_json::from_str::<BusEvent>(&line).ok();
            let state = match &ev {
                Some(BusEvent::StatusChanged(c)) if c.state.is_some() => {
                    let word = state_word(c.state, c.reason);
                    match &c.resets {
                        Some(at) => format!("{word} resets {at}"),
                        None => word,
                    }
                }
                Some(BusEvent::Resumed {
                    text,
                    keys,
                    refused,
                    by,
                    ..
                }) => match (refused, text) {
                    (Some(why), _) => format!("by {by}: nothing sent: {why}"),
                    (None, Some(t)) => format!("by {by}: sent {t:?}"),
                    (None, None) => format!("by {by}: pressed {}", keys.join(" ")),
                },
                _ => String::new(),
            };
            writeln!(
                out,
                "{} {} {state}",
                ev.as_ref().map_or("?", BusEvent::kind),
                ev.as_ref().and_then(BusEvent::pane).unwrap_or(""),
            )
            .map_err(io)?;
        }
        out.flush().map_err(io)?;
    }
    Ok(())
}

/// Arguments of `tend wait`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  tend wait %3                                        # until idle, completed or waiting
  tend wait %3 --until completed --timeout 10m && tend read %3 --lines 50
  tend wait %3 --until waiting/approval --json        # the pane view when it asks
  if ! tend wait %3 --until completed --timeout 30m; then tend read %3; fi

Exit status 0 when the pane matched; 1 on a timeout or when the agent the
wait started on exits or is replaced (code agent_not_running).")]
pub struct WaitArgs {
    /// The pane, `%N`.
    pub pane: String,
    /// States to wait for (repeat; `waiting/approval` names a reason).
    /// Default: idle, completed, waiting.
    #[arg(long)]
    pub until: Vec<String>,
    /// Give up after this long (`30s`, `10m`). No default: waits forever.
    #[arg(long)]
    pub timeout: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend wait`.
pub fn wait(server: &ServerArgs, a: &WaitArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let ms = timeout_ms(&a.timeout)?;
    let wait = params::Wait {
        pane: a.pane.clone(),
        until: a.until.clone(),
        timeout_ms: ms,
    };
    let v = client::call_for(
        &t.control,
        wait,
        ms.map(|m| Duration::from_millis(m) + TIMEOUT),
    )?;
    print(out, a.json, &v, waited_word)
}

/// Arguments of `tend prompt`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  tend prompt %3 \"Now write the tests.\"                 # paste it, press Enter
  tend prompt %3 \"Run the linter and fix what it finds.\" --wait --until completed
  tend prompt %3 \"$(cat task.md)\" --wait --timeout 20m --json

Refused (nothing sent) while the agent waits for approval or an answer
(agent_blocked) or has a stop flag pending (stop_pending). A timeout does not
prove the prompt was not delivered: `tend read` the pane before sending again.")]
pub struct PromptArgs {
    /// The pane, `%N`.
    pub pane: String,
    /// The prompt text (sent as a bracketed paste, then Enter).
    pub text: String,
    /// Wait for the agent to react (5 s) and then to settle.
    #[arg(long)]
    pub wait: bool,
    /// With --wait: states that end the wait (default idle, completed, waiting).
    #[arg(long)]
    pub until: Vec<String>,
    /// With --wait: give up after this long.
    #[arg(long)]
    pub timeout: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend prompt`.
pub fn prompt(server: &ServerArgs, a: &PromptArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let ms = timeout_ms(&a.timeout)?;
    let prompt = params::Prompt {
        pane: a.pane.clone(),
        text: a.text.clone(),
        enter: None,
        wait: a.wait,
        until: a.until.clone(),
        timeout_ms: ms,
    };
    let v = client::call_for(
        &t.control,
        prompt,
        if a.wait {
            ms.map(|m| Duration::from_millis(m) + TIMEOUT)
        } else {
            Some(TIMEOUT)
        },
    )?;
    print(out, a.json, &v, |v| match v {
        PromptReply::Settled(w) if a.wait => waited_word(w),
        // Sent without a wait to show: nothing to read a state from.
        PromptReply::Sent(_) if a.wait => state_word(None, None),
        _ => "sent".into(),
    })
}

/// Arguments of `tend send-keys`.
#[derive(Debug, Args)]
pub struct SendKeysArgs {
    /// The pane, `%N`.
    pub pane: String,
    /// Keys, as tmux `send-keys` names them (`Enter`, `C-c`, `Escape`, text).
    #[arg(required = true)]
    pub keys: Vec<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend send-keys`.
pub fn send_keys(
    server: &ServerArgs,
    a: &SendKeysArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let keys = params::SendKeys {
        pane: a.pane.clone(),
        keys: a.keys.clone(),
    };
    ask(server, out, a.json, keys, |_| "sent".into())
}

/// Arguments of `tend read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The pane, `%N`.
    pub pane: String,
    /// How many lines (default: the visible screen). More than the screen of
    /// an agent on the alternate screen is refused unless it is idle.
    #[arg(long)]
    pub lines: Option<u64>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend read`.
pub fn read(server: &ServerArgs, a: &ReadArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let read = params::Read {
        pane: a.pane.clone(),
        lines: a.lines,
    };
    ask(server, out, a.json, read, |v| v.text.trim_end().to_owned())
}

/// Arguments of `tend report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// up, working, merging, idle, waiting, stuck, warning, stopped,
    /// handing-over, done.
    pub state: String,
    /// With waiting: approval, question, error, prompt (or `work`).
    #[arg(long)]
    pub reason: Option<String>,
    /// Status text shown with the state.
    #[arg(long)]
    pub message: Option<String>,
    /// A lease: nothing posted for twice this long makes the pane gone
    /// (or quiet, while it shows other signs of life).
    #[arg(long)]
    pub every: Option<String>,
    /// Panes this agent started (`%4,%5`): it reads dispatching while they live.
    #[arg(long, value_delimiter = ',')]
    pub dispatches: Vec<String>,
    /// Acknowledge a pending stop flag with this report.
    #[arg(long)]
    pub ack: bool,
    /// The pane (default: `$TMUX_PANE`).
    #[arg(long)]
    pub pane: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend report`.
pub fn report(server: &ServerArgs, a: &ReportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let pane = own_pane(&a.pane)?;
    // Wall-clock microseconds: increasing across processes and restarts.
    let seq = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let report = params::Report {
        pane: pane.clone(),
        state: a.state.clone(),
        reason: a.reason.clone(),
        message: a.message.clone(),
        every: a.every.clone(),
        seq: Some(seq),
        ack: a.ack,
        dispatches: (!a.dispatches.is_empty()).then(|| a.dispatches.clone()),
        agent: None,
    };
    let v = client::call(&t.control, report, TIMEOUT)?;
    print(out, a.json, &v, |v| {
        let mut s = format!("{pane}: {}", v.to);
        if let Some(stop) = &v.stop {
            s.push_str(&format!(
                "\nSTOP requested: {} (acknowledge with `tend ack` or `tend report … --ack`)",
                stop.reason
            ));
        }
        s
    })
}

/// The pane (default `$TMUX_PANE`) and `--json`.
#[derive(Debug, Args)]
pub struct OwnPaneArgs {
    /// The pane (default: `$TMUX_PANE`).
    #[arg(long)]
    pub pane: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend release`.
pub fn release(server: &ServerArgs, a: &OwnPaneArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let pane = own_pane(&a.pane)?;
    let release = params::Release { pane: pane.clone() };
    ask(server, out, a.json, release, |_| {
        format!("{pane}: released; the screen decides again")
    })
}

/// Arguments of `tend report-metadata`.
#[derive(Debug, Args)]
pub struct MetadataArgs {
    /// Display label (empty clears it). Never affects state.
    pub label: String,
    /// The pane (default: `$TMUX_PANE`).
    #[arg(long)]
    pub pane: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend report-metadata`.
pub fn report_metadata(
    server: &ServerArgs,
    a: &MetadataArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let pane = own_pane(&a.pane)?;
    let label = params::ReportMetadata {
        pane: pane.clone(),
        label: Some(a.label.clone()),
    };
    ask(server, out, a.json, label, |_| format!("{pane}: label set"))
}

/// Arguments of `tend stop-request`.
#[derive(Debug, Args)]
pub struct StopRequestArgs {
    /// The agent's pane, `%N`.
    pub pane: String,
    /// Why, in your words.
    pub reason: String,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend stop-request`.
pub fn stop_request(
    server: &ServerArgs,
    a: &StopRequestArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    let by = super::target::this_pane().unwrap_or_else(|| "user".into());
    let request = params::StopRequest {
        pane: a.pane.clone(),
        reason: a.reason.clone(),
        by: Some(by),
    };
    let v = client::call(&t.control, request, TIMEOUT)?;
    print(out, a.json, &v, |_| {
        format!("{}: stop pending, not read yet", a.pane)
    })
}

/// `tend inbox`: the agent reads its flags (run in its own pane).
pub fn inbox(server: &ServerArgs, a: &OwnPaneArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let pane = own_pane(&a.pane)?;
    let inbox = params::Inbox { pane: pane.clone() };
    ask(server, out, a.json, inbox, |v| match &v.stop {
        Some(s) => format!(
            "STOP requested by {}: {}\nacknowledge with `tend ack`",
            s.set_by, s.reason
        ),
        None => "no flags".into(),
    })
}

/// `tend ack`: the agent acknowledges its stop flag.
pub fn ack(server: &ServerArgs, a: &OwnPaneArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let pane = own_pane(&a.pane)?;
    let ack = params::Ack { pane: pane.clone() };
    ask(server, out, a.json, ack, |_| {
        format!("{pane}: stop acknowledged")
    })
}

/// Arguments of `tend park`.
#[derive(Debug, Args)]
pub struct ParkArgs {
    /// The pane to shelve, `%N`.
    pub pane: String,
    /// A note in your words, shown with it.
    #[arg(long, default_value = "")]
    pub note: String,
    /// Release the park the first time this pane finishes a turn (or dies).
    #[arg(long)]
    pub gate: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend park`.
pub fn park(server: &ServerArgs, a: &ParkArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let park = params::Park {
        pane: a.pane.clone(),
        note: a.note.clone(),
        gate: a.gate.clone(),
    };
    ask(server, out, a.json, park, |_| format!("{}: parked", a.pane))
}

/// `tend unpark`.
pub fn unpark(server: &ServerArgs, a: &PaneArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let unpark = params::Unpark {
        pane: a.pane.clone(),
    };
    ask(server, out, a.json, unpark, |_| {
        format!("{}: unparked", a.pane)
    })
}

/// Arguments of `tend snooze`.
#[derive(Debug, Args)]
pub struct SnoozeArgs {
    /// The pane, `%N`.
    pub pane: String,
    /// 15m, 30m, 6h or unlimited. Typing into the pane ends it early.
    #[arg(default_value = "30m")]
    pub length: String,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend snooze`.
pub fn snooze(server: &ServerArgs, a: &SnoozeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let snooze = params::Snooze {
        pane: a.pane.clone(),
        length: Some(a.length.clone()),
    };
    ask(server, out, a.json, snooze, |_| {
        format!("{}: snoozed ({})", a.pane, a.length)
    })
}

/// `tend unsnooze`.
pub fn unsnooze(server: &ServerArgs, a: &PaneArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let unsnooze = params::Unsnooze {
        pane: a.pane.clone(),
    };
    ask(server, out, a.json, unsnooze, |_| {
        format!("{}: unsnoozed", a.pane)
    })
}

/// Arguments of `tend approve` and `tend deny`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  tend approve %3              # press the key that says yes once (Claude: 1, Codex: y)
  tend deny %3 --json          # press the dialog's No; the JSON names the keys sent
  tend approve %3 --dry-run    # show the dialog and the keys, send nothing

Right before sending, tend reads the pane's screen again and sends nothing
(exit status 1, code no_dialog) unless the agent's approval dialog is on it.
The keys per agent are in its manifest's [actions] table.")]
pub struct AnswerArgs {
    /// The pane, `%N`.
    pub pane: String,
    /// Show the dialog and the keys that would be sent; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend approve %N` / `tend deny %N`.
pub fn answer(
    server: &ServerArgs,
    a: &AnswerArgs,
    action: &str,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let answer = params::Answer {
        pane: a.pane.clone(),
        action: action.to_owned(),
        dry_run: a.dry_run,
    };
    ask(server, out, a.json, answer, |v| {
        let verb = if a.dry_run { "would send" } else { "sent" };
        format!(
            "{}\n{} {}: {verb} {}",
            v.dialog.join("\n"),
            v.pane,
            v.rule,
            v.keys.join(" ")
        )
    })
}

/// Changes arriving within this window after the first go out as one
/// snapshot (an agent's turn changes several panes' facts at once).
const FEED_COALESCE: Duration = Duration::from_millis(30);

/// `tend events --feed`: what the local daemon's link to this machine
/// reads over ssh. A full snapshot each time keeps the link stateless: a
/// line lost to a dropped connection is repaired by the next snapshot, and
/// the reader needs no model of which events change what.
fn feed(server: &ServerArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    if client::call(&t.control, params::Ping {}, TIMEOUT).is_err() {
        super::lifecycle::start(
            server,
            &super::lifecycle::StartArgs {
                foreground: false,
                json: true,
            },
            &mut std::io::sink(),
        )?;
    }
    let mut stream = client::connect(&t.control)?;
    stream
        .write_all(client::request_line(params::Events::default()).as_bytes())
        .map_err(|e| CliError::new(ErrorKind::Io, format!("cannot talk to the daemon: {e}")))?;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let reader = BufReader::new(stream);
    std::thread::spawn(move || {
        for line in reader.lines() {
            if line.is_err() || tx.send(()).is_err() {
                break;
            }
        }
    });
    // The acknowledgement: subscribed before the first snapshot, so that
    // no change falls between them.
    rx.recv().map_err(|_| {
        CliError::new(
            ErrorKind::NoDaemon,
            "the tend daemon closed the event stream at once; see `tend doctor`",
        )
    })?;
    let host = tend_platform::os::host_name();
    loop {
        let mut panes = client::call(&t.control, params::List {}, TIMEOUT)?;
        // Only this machine's own agents: a remote's remotes are not
        // passed on (two machines naming each other would loop).
        panes.retain(|p| p.agent.is_some() && p.host.is_none());
        let line = json!({
            "event": "feed.snapshot",
            "hostname": host,
            "tmux_socket": t.tmux_socket,
            "panes": panes,
        });
        writeln!(out, "{line}").map_err(io)?;
        out.flush().map_err(io)?;
        // The next change, then whatever follows it closely. A quiet
        // machine still writes now and then: a write is how this process
        // learns that the link is gone (nothing else reads its stdout).
        loop {
            match rx.recv_timeout(FEED_HEARTBEAT) {
                Ok(()) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    writeln!(out, "{}", json!({"event": "feed.heartbeat"})).map_err(io)?;
                    out.flush().map_err(io)?;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(CliError::new(
                        ErrorKind::NoDaemon,
                        "the tend daemon stopped; the feed ends",
                    ))
                }
            }
        }
        while rx.recv_timeout(FEED_COALESCE).is_ok() {}
    }
}
