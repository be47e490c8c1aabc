//! Notifications: the adapters around the pure [`Notifier`] of
//! `tend_attention::notify`.
//!
//! [`run`] reads the daemon's event bus, feeds the notifier, and delivers
//! what it decides:
//!
//! 1. **Desktop**, over D-Bus (`org.freedesktop.Notifications`, through
//!    notify-rust). With `desktop = "auto"` only when a notification
//!    service answers `GetServerInformation` on the session bus within a
//!    second; the answer is remembered for a while (a missing service is
//!    asked again after 30 s, a present one after 10 min or at the first
//!    failed send).
//! 2. **tmux**, when no desktop notification was shown: `display-message`
//!    on every attached client, and the bell — a BEL written to each
//!    client's own terminal (`#{client_tty}`), so it rings where the user
//!    is, not in an agent's pane (which `bell-action` and `monitor-bell`
//!    govern, and which would mark that window).
//! 3. **OSC 9 / OSC 777**, written to each client's terminal for
//!    terminals that turn them into notifications (iTerm2, WezTerm,
//!    Ghostty, kitty, foot, rxvt, Windows Terminal). They go straight to
//!    the client's tty, not through a pane, so no tmux passthrough is
//!    needed, and over ssh they reach the terminal on the user's machine.
//!    Sent to every client when no desktop notification was shown; when one
//!    was, only to clients attached over ssh (a local terminal showing it
//!    too would make two of the same).
//!
//! Every blocking call (D-Bus, tmux commands, tty writes) runs on tokio's
//! blocking pool; the decision loop never waits for delivery.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

#[cfg(any(test, not(target_os = "macos")))]
use tend_attention::notify::Urgency;
use tend_attention::notify::{Notification, Notifier, TimeOfDay};
use tend_protocol::BusEvent;
use tend_tmux::Server;
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

use crate::config::{DesktopMode, NotificationsConfig, OscFormat};

/// How long a D-Bus call may take before the service counts as missing.
const DBUS_TIMEOUT: Duration = Duration::from_secs(1);
/// A missing desktop service is looked for again after this.
const RECHECK_MISSING: Duration = Duration::from_secs(30);
/// A present desktop service is asked again after this.
const RECHECK_PRESENT: Duration = Duration::from_secs(600);
/// Longest text put in an OSC sequence.
const MAX_OSC_TEXT: usize = 240;
/// Notifications waiting for delivery; past this they are dropped.
const QUEUE: usize = 32;

/// Runs until the bus closes (the daemon stops). Spawn it with
/// `bus.subscribe()` as soon as the bus exists.
/// `server`: the tmux server whose clients show messages (`None` under
/// zellij, which has no such message: the desktop shows them alone).
pub async fn run(
    mut bus: broadcast::Receiver<BusEvent>,
    cfg: NotificationsConfig,
    server: Option<Server>,
) {
    if !cfg.enabled {
        return;
    }
    let mut notifier = Notifier::new(cfg.policy());
    let (tx, rx) = mpsc::channel::<Notification>(QUEUE);
    tokio::spawn(deliver_all(rx, cfg, server));
    let start = Instant::now();
    loop {
        let deadline = notifier.poll_timeout().map(|d| start + d);
        let far = Instant::now() + Duration::from_secs(3600);
        tokio::select! {
            ev = bus.recv() => match ev {
                Ok(v) => {
                    if let Some(h) = happening(&v) {
                        notifier.handle(start.elapsed(), time_of_day(), h);
                    }
                }
                // Missed events are missed notifications; nothing to undo.
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
            },
            _ = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => {
                notifier.handle_timeout(start.elapsed());
            }
        }
        while let Some(n) = notifier.poll_notification() {
            if tx.try_send(n).is_err() {
                crate::say!("notifications: delivery is behind; one notification dropped");
            }
        }
    }
}

/// The local time of day, for quiet hours.
pub fn time_of_day() -> TimeOfDay {
    use chrono::Timelike;
    let now = chrono::Local::now();
    TimeOfDay::hm(now.hour(), now.minute())
}

pub use tend_core::notice::happening;

/// What is known of the desktop notification service.
#[derive(Debug, Clone)]
enum Desktop {
    /// Not asked yet.
    Unknown,
    /// A service answered: its name, and whether it reads markup in bodies.
    Present {
        name: String,
        markup: bool,
        asked: Instant,
    },
    /// None answered.
    Missing { why: String, asked: Instant },
}

/// The delivery side: one notification at a time, in order.
async fn deliver_all(
    mut rx: mpsc::Receiver<Notification>,
    cfg: NotificationsConfig,
    server: Option<Server>,
) {
    let mut desktop = Desktop::Unknown;
    while let Some(n) = rx.recv().await {
        let shown = match cfg.desktop {
            DesktopMode::Off => false,
            DesktopMode::Auto | DesktopMode::On => {
                desktop_deliver(&n, cfg.desktop, &mut desktop).await
            }
        };
        let cfg = cfg.clone();
        let Some(server) = server.clone() else {
            continue;
        };
        let job = tokio::task::spawn_blocking(move || terminal_deliver(&n, &cfg, &server, shown));
        match job.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => crate::say!("notifications: {e}"),
            Err(e) => crate::say!("notifications: delivery failed: {e}"),
        }
    }
}

/// Shows `n` on the desktop when the mode and the service allow; true when
/// it was shown.
async fn desktop_deliver(n: &Notification, mode: DesktopMode, known: &mut Desktop) -> bool {
    let stale = match known {
        Desktop::Unknown => true,
        Desktop::Present { asked, .. } => asked.elapsed() >= RECHECK_PRESENT,
        Desktop::Missing { asked, .. } => asked.elapsed() >= RECHECK_MISSING,
    };
    if stale {
        let now = probe().await;
        match (&*known, &now) {
            (Desktop::Present { .. }, Desktop::Present { .. })
            | (Desktop::Missing { .. }, Desktop::Missing { .. }) => {}
            (_, Desktop::Present { name, .. }) => {
                crate::say!("notifications: desktop notifications through {name}");
            }
            (_, Desktop::Missing { why, .. }) => {
                crate::say!(
                    "notifications: no desktop notification service ({why}); \
                     using tmux messages and terminal notifications"
                );
            }
            (_, Desktop::Unknown) => {}
        }
        *known = now;
    }
    let markup = match known {
        Desktop::Present { markup, .. } => *markup,
        Desktop::Missing { .. } | Desktop::Unknown if mode == DesktopMode::On => false,
        _ => return false,
    };
    match show(n, markup).await {
        Ok(()) => true,
        Err(e) => {
            crate::say!("notifications: the desktop notification failed: {e}");
            *known = Desktop::Missing {
                why: e,
                asked: Instant::now(),
            };
            false
        }
    }
}

/// Runs a blocking D-Bus call on the blocking pool, giving up after
/// [`DBUS_TIMEOUT`] (the call may go on in the background and is ignored).
async fn dbus<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, notify_rust::error::Error> + Send + 'static,
) -> Result<T, String> {
    match tokio::time::timeout(DBUS_TIMEOUT, tokio::task::spawn_blocking(f)).await {
        Ok(Ok(Ok(v))) => Ok(v),
        Ok(Ok(Err(e))) => Err(e.to_string()),
        Ok(Err(e)) => Err(format!("the D-Bus call failed: {e}")),
        Err(_) => Err(format!(
            "no answer on the session bus within {} ms",
            DBUS_TIMEOUT.as_millis()
        )),
    }
}

/// Asks the session bus for a notification service.
#[cfg(not(target_os = "macos"))]
async fn probe() -> Desktop {
    let asked = Instant::now();
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none()
        && std::env::var_os("XDG_RUNTIME_DIR")
            .map(|d| std::path::Path::new(&d).join("bus"))
            .is_none_or(|p| !p.exists())
    {
        return Desktop::Missing {
            why: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set".into(),
            asked,
        };
    }
    match dbus(notify_rust::get_server_information).await {
        Ok(info) => {
            let caps = dbus(notify_rust::get_capabilities)
                .await
                .unwrap_or_default();
            Desktop::Present {
                name: format!("{} {}", info.name, info.version).trim().to_owned(),
                markup: caps.iter().any(|c| c == "body-markup"),
                asked,
            }
        }
        Err(why) => Desktop::Missing { why, asked },
    }
}

/// macOS has one notification centre, and nothing to ask it: notify-rust
/// shows through it and answers `Ok` whatever becomes of the notification.
#[cfg(target_os = "macos")]
async fn probe() -> Desktop {
    Desktop::Present {
        name: "macOS Notification Center".into(),
        markup: false,
        asked: Instant::now(),
    }
}

/// Sends one desktop notification.
async fn show(n: &Notification, markup: bool) -> Result<(), String> {
    let mut d = notify_rust::Notification::new();
    d.appname("tend").summary(&n.title).body(&if markup {
        escape_markup(&n.body)
    } else {
        n.body.clone()
    });
    // macOS's notification centre has no urgency.
    #[cfg(not(target_os = "macos"))]
    d.urgency(match n.urgency {
        Urgency::Low => notify_rust::Urgency::Low,
        Urgency::Normal => notify_rust::Urgency::Normal,
        Urgency::Critical => notify_rust::Urgency::Critical,
    });
    // The handle holds the connection; dropping it leaves the notification
    // up.
    dbus(move || d.show().map(drop)).await
}

/// Escapes the characters the notification body markup reads.
fn escape_markup(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One attached client's terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientTerm {
    /// `#{client_name}`, for `-c`.
    pub name: String,
    /// `#{client_tty}`.
    pub tty: String,
    /// `#{client_termname}`: the terminal's `TERM`.
    pub termname: String,
    /// `#{client_pid}`.
    pub pid: u32,
    /// A control-mode client (no terminal, nobody looking).
    pub control_mode: bool,
}

const CLIENT_FORMAT: &str =
    "#{client_name}\t#{client_tty}\t#{client_termname}\t#{client_pid}\t#{client_control_mode}";

/// Parses `list-clients -F CLIENT_FORMAT`.
pub fn parse_clients(out: &str) -> Vec<ClientTerm> {
    out.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let [name, tty, termname, pid, control] = f.as_slice() else {
                return None;
            };
            Some(ClientTerm {
                name: (*name).to_owned(),
                tty: (*tty).to_owned(),
                termname: (*termname).to_owned(),
                pid: pid.parse().unwrap_or(0),
                control_mode: *control == "1",
            })
        })
        .filter(|c| !c.name.is_empty())
        .collect()
}

/// The tmux message, the bell and OSC notifications (blocking).
fn terminal_deliver(
    n: &Notification,
    cfg: &NotificationsConfig,
    server: &Server,
    shown_on_desktop: bool,
) -> Result<(), String> {
    let tmux_message = cfg.tmux && !shown_on_desktop;
    if !tmux_message && !cfg.osc {
        return Ok(());
    }
    let out = server
        .run(["list-clients", "-F", CLIENT_FORMAT])
        .map_err(|e| format!("cannot list tmux clients: {e}"))?;
    let text = n.one_line();
    let ms = u32::try_from(cfg.display_time.as_millis()).unwrap_or(u32::MAX);
    let mut problems = Vec::new();
    for c in parse_clients(&out).into_iter().filter(|c| !c.control_mode) {
        let mut bytes = Vec::new();
        if cfg.osc && (!shown_on_desktop || is_remote(c.pid)) {
            bytes.extend(osc_sequences(cfg.osc_format, &c.termname, n));
        }
        if tmux_message {
            if let Err(e) = server.display_message(Some(&c.name), &text, Some(ms)) {
                problems.push(format!("display-message on {}: {e}", c.name));
            }
            if cfg.bell {
                bytes.push(0x07);
            }
        }
        if !bytes.is_empty() {
            if let Err(e) = write_tty(&c.tty, &bytes) {
                problems.push(format!("cannot write to {}: {e}", c.tty));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Whether a tmux client runs over ssh (its environment says so): the
/// terminal is on another machine, and only OSC reaches it.
fn is_remote(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    tend_platform::os::environ_has(pid, &["SSH_CONNECTION", "SSH_TTY"])
}

/// Writes `bytes` to a client's terminal in one write, without waiting
/// (a terminal that does not read is skipped) and without making it our
/// controlling terminal. Refuses anything that is not a terminal device.
fn write_tty(path: &str, bytes: &[u8]) -> std::io::Result<()> {
    use nix::fcntl::OFlag;
    if !path.starts_with("/dev/") {
        return Err(std::io::Error::other("not a terminal device path"));
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags((OFlag::O_NOCTTY | OFlag::O_NONBLOCK).bits())
        .open(path)?;
    if !nix::unistd::isatty(&f).unwrap_or(false) {
        return Err(std::io::Error::other("not a terminal"));
    }
    f.write_all(bytes)
}

/// One line of plain text for an OSC sequence: control characters become
/// spaces, at most [`MAX_OSC_TEXT`] characters.
fn osc_text(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_OSC_TEXT)
        .collect();
    if s.chars().count() > MAX_OSC_TEXT {
        out.pop();
        out.push('…');
    }
    out
}

/// Whether a terminal (`TERM`) is known to show OSC 777 rather than OSC 9.
fn prefers_777(termname: &str) -> bool {
    let t = termname.to_ascii_lowercase();
    t.starts_with("foot") || t.contains("rxvt")
}

/// The OSC notification sequence(s) for a client whose terminal is
/// `termname`.
pub fn osc_sequences(format: OscFormat, termname: &str, n: &Notification) -> Vec<u8> {
    let (nine, seven) = match format {
        OscFormat::Osc9 => (true, false),
        OscFormat::Osc777 => (false, true),
        OscFormat::Both => (true, true),
        OscFormat::Auto => {
            let s = prefers_777(termname);
            (!s, s)
        }
    };
    let mut out = Vec::new();
    if nine {
        let mut text = osc_text(&n.one_line());
        // `ESC ] 9 ; 4 ; …` is a progress report in some terminals: a
        // message must not start with a number and a semicolon.
        if text.starts_with(|c: char| c.is_ascii_digit()) {
            text.insert_str(0, "tend: ");
        }
        out.extend_from_slice(format!("\x1b]9;{text}\x07").as_bytes());
    }
    if seven {
        // Fields are `;`-separated: the title may not hold one.
        let title = osc_text(&n.title).replace(';', ",");
        let body = osc_text(&n.body.lines().collect::<Vec<_>>().join(" · "));
        out.extend_from_slice(format!("\x1b]777;notify;{title};{body}\x07").as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tend_attention::notify::Happening;
    use tend_protocol::ReleaseReason;
    use tend_protocol::StatusChanged;
    use tend_vocab::{Band, Lifecycle, Reason, State};

    fn note(title: &str, body: &str) -> Notification {
        Notification {
            title: title.into(),
            body: body.into(),
            panes: vec!["%3".into()],
            urgency: Urgency::Normal,
        }
    }

    #[test]
    fn events_become_happenings() {
        let changed = |c: StatusChanged| BusEvent::StatusChanged(Box::new(c));
        let word = |w: &str| Some(w.to_owned());
        let v = changed(StatusChanged {
            pane: "%3".into(),
            agent: word("claude"),
            name: word("Claude"),
            session: "main".into(),
            window: "@1".into(),
            state: Some(State::Waiting.into()),
            reason: Some(Reason::Approval),
            band: Some(Band::Waiting),
            prev_band: Some(Band::Working),
            prev_state: Some(State::Working.into()),
            at: 1.0,
            ..StatusChanged::default()
        });
        let Some(Happening::Status(s)) = happening(&v) else {
            panic!("not a status: {:?}", happening(&v));
        };
        assert_eq!(s.name.as_deref(), Some("Claude"));
        assert_eq!(s.state, Some(State::Waiting));
        assert_eq!(s.reason, Some(Reason::Approval));
        assert_eq!(s.band, Some(Band::Waiting));
        assert_eq!(s.prev_band, Some(Band::Working));
        assert_eq!(s.session.as_deref(), Some("main"));
        // No display name: the agent id stands in.
        let v = changed(StatusChanged {
            pane: "%3".into(),
            agent: word("codex"),
            state: Some(State::Completed.into()),
            band: Some(Band::ReadyForReview),
            ..StatusChanged::default()
        });
        let Some(Happening::Status(s)) = happening(&v) else {
            panic!()
        };
        assert_eq!(s.name.as_deref(), Some("codex"));
        assert_eq!(s.band, Some(Band::ReadyForReview));

        assert_eq!(
            happening(&BusEvent::ParkReleased {
                pane: "%3".into(),
                gate: "%5".into(),
                note: "n".into(),
                reason: ReleaseReason::GateGone,
            }),
            Some(Happening::ParkReleased {
                pane: "%3".into(),
                gate: "%5".into(),
                note: "n".into(),
                gate_gone: true
            })
        );
        let report = |to: Lifecycle, notify: bool| BusEvent::ReportChanged {
            pane: "%3".into(),
            from: Lifecycle::Working,
            to,
            notify,
        };
        assert_eq!(
            happening(&report(Lifecycle::Gone, true)),
            Some(Happening::Gone {
                pane: "%3".into(),
                notify: true
            })
        );
        assert_eq!(happening(&report(Lifecycle::Quiet, false)), None);
        assert_eq!(
            happening(&BusEvent::Closed {
                pane: "%3".into(),
                host: None,
                agent: None,
            }),
            Some(Happening::Closed { pane: "%3".into() })
        );
        let detected = BusEvent::AgentDetected {
            pane: "%3".into(),
            agent: "claude".into(),
        };
        assert_eq!(happening(&detected), None);
    }

    #[test]
    fn osc_sequences_by_terminal() {
        let n = note("Claude is waiting for approval", "%3 in session main");
        let nine = String::from_utf8(osc_sequences(OscFormat::Auto, "xterm-ghostty", &n)).unwrap();
        assert_eq!(
            nine,
            "\x1b]9;Claude is waiting for approval · %3 in session main\x07"
        );
        let seven = String::from_utf8(osc_sequences(OscFormat::Auto, "foot", &n)).unwrap();
        assert_eq!(
            seven,
            "\x1b]777;notify;Claude is waiting for approval;%3 in session main\x07"
        );
        let both = osc_sequences(OscFormat::Both, "foot", &n);
        assert!(both.starts_with(b"\x1b]9;") && both.ends_with(b"main\x07"));
        assert_eq!(
            osc_sequences(OscFormat::Osc777, "xterm-256color", &n),
            seven.as_bytes()
        );
        // Hostile text cannot end the sequence early or start another.
        let evil = note("A;b\x07\x1b]52;c;x\x1b\\", "line one\nline two\u{9b}");
        let s = String::from_utf8(osc_sequences(OscFormat::Both, "x", &evil)).unwrap();
        assert_eq!(s.matches('\x07').count(), 2, "{s:?}");
        assert_eq!(s.matches('\x1b').count(), 2, "{s:?}");
        assert!(s.contains("\x1b]777;notify;A,b"), "{s:?}");
        assert!(s.contains("line one · line two"), "{s:?}");
        // A number first would read as a progress report.
        let s = osc_sequences(OscFormat::Osc9, "x", &note("4;50", ""));
        assert_eq!(s, b"\x1b]9;tend: 4;50\x07");
        // Long text is cut.
        let long = note(&"x".repeat(1000), "");
        let s = String::from_utf8(osc_sequences(OscFormat::Osc9, "x", &long)).unwrap();
        assert!(s.chars().count() < MAX_OSC_TEXT + 10);
        assert!(s.ends_with("…\x07"));
    }

    #[test]
    fn client_list() {
        let out = "/dev/pts/3\t/dev/pts/3\txterm-256color\t123\t0\n\
                   client-9\t\t\t456\t1\n\
                   broken line\n";
        let c = parse_clients(out);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].tty, "/dev/pts/3");
        assert_eq!(c[0].termname, "xterm-256color");
        assert_eq!(c[0].pid, 123);
        assert!(!c[0].control_mode);
        assert!(c[1].control_mode);
    }

    #[test]
    fn only_terminals_are_written() {
        assert!(write_tty("/etc/passwd", b"x").is_err());
        assert!(write_tty("/dev/null", b"x").is_err());
        assert!(write_tty("relative", b"x").is_err());
        assert_eq!(escape_markup("a<b & c>"), "a&lt;b &amp; c&gt;");
        assert!(!is_remote(0));
        assert!(!is_remote(std::process::id()) || std::env::var_os("SSH_CONNECTION").is_some());
    }
}
