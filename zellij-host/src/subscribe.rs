//! Following what panes show: `zellij subscribe`.
//!
//! `zellij --session S subscribe --pane-id terminal_1 … --format json
//! --ansi` streams one JSON object per line (shape observed with zellij
//! 0.45.1):
//!
//! ```json
//! {"event":"pane_update","is_initial":true,"pane_id":"terminal_1","scrollback":null,"viewport":["acc$ gemini","",…]}
//! {"event":"pane_closed","pane_id":"terminal_1"}
//! ```
//!
//! (`tests/fixtures/subscribe.jsonl` holds real lines.) A pane that does not
//! exist ends the process at once with status 2 and `Pane terminal_9 not
//! found` on standard error; a session that does not run, with status 1 and
//! `Session 'x' not found…`.
//!
//! * `pane_update` carries the pane's whole **viewport** (one string per
//!   row, with SGR styling when `--ansi` is given; trailing empty rows
//!   dropped),
//!   not the bytes the program wrote: no cursor position, no OSC titles or
//!   notifications. The first update per pane has `is_initial: true` (and
//!   `scrollback` lines when `--scrollback N` was asked); later ones are sent
//!   when the viewport changed, after zellij rendered it.
//! * zellij renders only the tabs its clients look at, so a pane in a
//!   background tab sends no update until its tab is shown again: poll those
//!   with [`Session::dump_screen`](crate::Session::dump_screen).
//! * `pane_closed` is sent when a subscribed pane closes; the process exits
//!   once every subscribed pane has closed, or when the session ends.
//!
//! [`Subscription`] runs the process, parses its lines on a reader thread
//! and hands out [`SubscribeEvent`]s. Updates are whole snapshots, so a
//! consumer that falls behind loses nothing by keeping only the newest per
//! pane ([`Subscription::drain_latest`]).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::thread;
use std::time::Duration;

use serde::Deserialize;

use crate::error::{Result, ZellijError};
use crate::ids::PaneId;
use crate::panes::mentions_missing_pane;
use crate::session::{session_missing, spawn_error, Session};

/// How many parsed events may wait for the consumer before the reader
/// thread (and so zellij's stream) waits.
const QUEUE: usize = 1024;

/// What a subscription reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubscribeEvent {
    /// A pane's viewport.
    Update(PaneUpdate),
    /// A subscribed pane closed.
    Closed(PaneId),
    /// The `zellij subscribe` process ended (all panes closed, the session
    /// ended, or it failed): nothing more will come.
    Ended {
        /// Its exit status, when it exited normally.
        status: Option<i32>,
        /// What it wrote on standard error (why it failed, if it did).
        stderr: String,
    },
}

/// One pane's screen as zellij rendered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneUpdate {
    /// The pane.
    pub pane: PaneId,
    /// One string per row of the viewport, top to bottom.
    pub viewport: Vec<String>,
    /// Scrollback rows above the viewport (only on the initial update, and
    /// only when asked for).
    pub scrollback: Option<Vec<String>>,
    /// True for the first update after subscribing.
    pub initial: bool,
}

/// Options for [`Subscription::start`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SubscribeOptions {
    /// Keep SGR styling in the rows (`--ansi`).
    pub ansi: bool,
    /// Scrollback rows in the initial update: `None` for none, `Some(0)` for
    /// all, `Some(n)` for the last `n` (`--scrollback`).
    pub scrollback: Option<usize>,
}

#[derive(Deserialize)]
struct RawEvent {
    event: String,
    pane_id: String,
    #[serde(default)]
    viewport: Vec<String>,
    #[serde(default)]
    scrollback: Option<Vec<String>>,
    #[serde(default)]
    is_initial: bool,
}

/// Parses one line of `zellij subscribe --format json`. Blank lines and
/// events this version does not know give `Ok(None)`.
pub fn parse_event(line: &str) -> Result<Option<SubscribeEvent>> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let raw: RawEvent = serde_json::from_str(line).map_err(|e| ZellijError::Parse {
        what: "`zellij subscribe --format json`".into(),
        detail: format!("{e} in {:?}", shorten(line, 120)),
    })?;
    let pane: PaneId = raw.pane_id.parse().map_err(|_| ZellijError::Parse {
        what: "`zellij subscribe --format json`".into(),
        detail: format!("unknown pane id {:?}", raw.pane_id),
    })?;
    Ok(match raw.event.as_str() {
        "pane_update" => Some(SubscribeEvent::Update(PaneUpdate {
            pane,
            viewport: raw.viewport,
            scrollback: raw.scrollback,
            initial: raw.is_initial,
        })),
        "pane_closed" => Some(SubscribeEvent::Closed(pane)),
        _ => None,
    })
}

fn shorten(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// A running `zellij subscribe`: stopped (killed) when dropped.
pub struct Subscription {
    child: Child,
    events: Receiver<Result<SubscribeEvent>>,
    stderr: Option<thread::JoinHandle<String>>,
    panes: Vec<PaneId>,
    ended: bool,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("pid", &self.child.id())
            .field("panes", &self.panes)
            .field("ended", &self.ended)
            .finish()
    }
}

impl Subscription {
    /// Starts following `panes` (at least one) of `session`.
    pub fn start(
        session: &Session,
        panes: &[PaneId],
        options: SubscribeOptions,
    ) -> Result<Subscription> {
        if panes.is_empty() {
            return Err(ZellijError::Invalid {
                detail: "a zellij subscription needs at least one pane".into(),
            });
        }
        let mut cmd = session.command();
        cmd.arg("subscribe").arg("--format").arg("json");
        if options.ansi {
            cmd.arg("--ansi");
        }
        if let Some(n) = options.scrollback {
            cmd.arg("--scrollback").arg(n.to_string());
        }
        cmd.arg("--pane-id");
        for p in panes {
            cmd.arg(p.to_string());
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| spawn_error(session.program(), e))?;
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        if let Some(out) = child.stdout.take() {
            thread::Builder::new()
                .name("tend-zellij-subscribe".into())
                .spawn(move || {
                    for line in BufReader::new(out).lines() {
                        let Ok(line) = line else { break };
                        match parse_event(&line) {
                            Ok(None) => continue,
                            Ok(Some(ev)) => {
                                if tx.send(Ok(ev)).is_err() {
                                    return;
                                }
                            }
                            Err(e) => {
                                if tx.send(Err(e)).is_err() {
                                    return;
                                }
                            }
                        }
                    }
                })
                .map_err(|e| ZellijError::Io {
                    what: "start a thread to read `zellij subscribe`".into(),
                    source: e,
                })?;
        }
        let stderr = child.stderr.take().map(|mut err| {
            thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = err.read_to_end(&mut buf);
                String::from_utf8_lossy(&buf).into_owned()
            })
        });
        Ok(Subscription {
            child,
            events: rx,
            stderr,
            panes: panes.to_vec(),
            ended: false,
        })
    }

    /// The process id of `zellij subscribe`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The panes asked for.
    pub fn panes(&self) -> &[PaneId] {
        &self.panes
    }

    /// The next event, waiting at most `timeout`. `Ok(None)` on timeout.
    /// After [`SubscribeEvent::Ended`] every call returns `Ok(None)` at once.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Option<SubscribeEvent>> {
        if self.ended {
            return Ok(None);
        }
        match self.events.recv_timeout(timeout) {
            Ok(ev) => ev.map(Some),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Ok(Some(self.finish())),
        }
    }

    /// The next event if one is waiting.
    pub fn try_recv(&mut self) -> Result<Option<SubscribeEvent>> {
        if self.ended {
            return Ok(None);
        }
        match self.events.try_recv() {
            Ok(ev) => ev.map(Some),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Ok(Some(self.finish())),
        }
    }

    /// Everything waiting now, with only the newest update per pane kept
    /// (updates are whole viewports); closes and the end come after the
    /// updates, in arrival order. Parse errors are skipped.
    pub fn drain_latest(&mut self) -> Vec<SubscribeEvent> {
        let mut latest: HashMap<PaneId, PaneUpdate> = HashMap::new();
        let mut order: Vec<PaneId> = Vec::new();
        let mut rest = Vec::new();
        while let Ok(Some(ev)) = self.try_recv() {
            match ev {
                SubscribeEvent::Update(u) => {
                    if !latest.contains_key(&u.pane) {
                        order.push(u.pane);
                    }
                    let initial = latest.get(&u.pane).is_some_and(|old| old.initial);
                    let mut u = u;
                    u.initial |= initial;
                    latest.insert(u.pane, u);
                }
                other => {
                    let end = matches!(other, SubscribeEvent::Ended { .. });
                    rest.push(other);
                    if end {
                        break;
                    }
                }
            }
        }
        let mut out: Vec<SubscribeEvent> = order
            .into_iter()
            .filter_map(|p| latest.remove(&p).map(SubscribeEvent::Update))
            .collect();
        out.extend(rest);
        out
    }

    /// Stops the subscription now.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.ended = true;
    }

    fn finish(&mut self) -> SubscribeEvent {
        self.ended = true;
        let status = self.child.wait().ok().and_then(|s| s.code());
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        SubscribeEvent::Ended { status, stderr }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Bytes that redraw a terminal emulator's screen to show `rows` (a
/// viewport from a [`PaneUpdate`] or the lines of `dump-screen`): home,
/// clear, then each row, styles reset at every line end. This is how a
/// viewport becomes input for a byte-fed screen model.
pub fn redraw_bytes<S: AsRef<str>>(rows: &[S]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + rows.iter().map(|r| r.as_ref().len() + 8).sum::<usize>());
    out.extend_from_slice(b"\x1b[0m\x1b[H\x1b[2J");
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(row.as_ref().as_bytes());
        out.extend_from_slice(b"\x1b[0m");
    }
    out
}

impl Session {
    /// What a pane shows now, one string per row: the initial update of a
    /// short subscription. Unlike `dump-screen` this works for plugin panes
    /// too. Waits at most the session's deadline.
    pub fn viewport(&self, pane: PaneId, ansi: bool) -> Result<Vec<String>> {
        self.patiently(&format!("subscribe --pane-id {pane}"), || {
            self.viewport_once(pane, ansi)
        })
    }

    /// One short subscription; `Ok(None)` when zellij ended it at once with
    /// success and nothing said (a busy session, see [`Session::patiently`]).
    fn viewport_once(&self, pane: PaneId, ansi: bool) -> Result<Option<Vec<String>>> {
        let options = SubscribeOptions {
            ansi,
            scrollback: None,
        };
        let mut sub = Subscription::start(self, &[pane], options)?;
        let deadline = std::time::Instant::now() + self.timeout();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(ZellijError::Timeout {
                    command: format!("subscribe --pane-id {pane}"),
                    waited_ms: self.timeout().as_millis(),
                });
            }
            match sub.recv_timeout(left)? {
                Some(SubscribeEvent::Update(u)) if u.pane == pane => return Ok(Some(u.viewport)),
                Some(SubscribeEvent::Closed(_)) => {
                    return Err(ZellijError::PaneNotFound {
                        command: "subscribe".into(),
                        pane: pane.to_string(),
                    })
                }
                Some(SubscribeEvent::Ended { status, stderr })
                    if status == Some(0) && stderr.trim().is_empty() =>
                {
                    return Ok(None)
                }
                Some(SubscribeEvent::Ended { status, stderr }) => {
                    return Err(ended_error(self, pane, status, stderr))
                }
                _ => {}
            }
        }
    }
}

/// The error a subscription that ended before its first update means.
fn ended_error(
    session: &Session,
    pane: PaneId,
    status: Option<i32>,
    stderr: String,
) -> ZellijError {
    if let Some(detail) = session_missing(&stderr) {
        return ZellijError::SessionNotFound {
            session: session.name().to_owned(),
            detail,
        };
    }
    if mentions_missing_pane(&stderr) {
        return ZellijError::PaneNotFound {
            command: "subscribe".into(),
            pane: pane.to_string(),
        };
    }
    ZellijError::Failed {
        command: format!("subscribe --pane-id {pane}"),
        status,
        stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_updates_and_closes() {
        let ev = parse_event(
            r#"{"event":"pane_update","pane_id":"terminal_2","viewport":["a","b"],"scrollback":null,"is_initial":true}"#,
        )
        .expect("parses")
        .expect("an event");
        assert_eq!(
            ev,
            SubscribeEvent::Update(PaneUpdate {
                pane: PaneId::Terminal(2),
                viewport: vec!["a".into(), "b".into()],
                scrollback: None,
                initial: true,
            })
        );
        let ev = parse_event(r#"{"event":"pane_closed","pane_id":"plugin_1"}"#)
            .expect("parses")
            .expect("an event");
        assert_eq!(ev, SubscribeEvent::Closed(PaneId::Plugin(1)));
    }

    #[test]
    fn redraws_a_viewport() {
        let bytes = redraw_bytes(&["a", "\u{1b}[1mb"]);
        assert_eq!(
            bytes,
            b"\x1b[0m\x1b[H\x1b[2Ja\x1b[0m\r\n\x1b[1mb\x1b[0m".to_vec()
        );
        assert_eq!(redraw_bytes::<&str>(&[]), b"\x1b[0m\x1b[H\x1b[2J".to_vec());
    }

    #[test]
    fn skips_blank_and_unknown() {
        assert_eq!(parse_event("  ").expect("blank"), None);
        assert_eq!(
            parse_event(r#"{"event":"future","pane_id":"terminal_1"}"#).expect("unknown"),
            None
        );
    }

    #[test]
    fn refuses_garbage_with_the_line() {
        let err = parse_event("{oops").expect_err("garbage");
        assert!(err.to_string().contains("oops"), "{err}");
        assert!(parse_event(r#"{"event":"pane_closed","pane_id":"%3"}"#).is_err());
    }
}
