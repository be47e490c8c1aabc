//! tend-zellij: the logic of tend's zellij plugin, free of zellij.
//!
//! The plugin is thin. The tend daemon decides everything (which agents need
//! the user, in which order, with which words) and pushes the result to the
//! plugin with `zellij pipe --name tend -- '<json>'`. The plugin keeps the
//! last payload, renders it as one line, and on the message `next` focuses
//! the next pane of the payload's jump list.
//!
//! This library holds that logic as plain functions over plain data so that
//! it is unit-tested on the host; `src/main.rs` is the glue to zellij (built
//! only for `wasm32-wasip1`).
//!
//! # Messages
//!
//! | pipe name | payload | effect |
//! |---|---|---|
//! | `tend` | a JSON [`Status`] (starts with `{`) | replaces the shown status |
//! | `tend` | `clear` or an empty string | shows nothing (the daemon is stopping) |
//! | `tend` | none | ignored |
//! | `tend` | `next` | focuses the next pane waiting on the user |
//! | `tend_next` | anything | the same as `tend` + `next` (for `MessagePlugin` key bindings) |
//!
//! Every other pipe name is ignored, so that broadcast pipes meant for other
//! plugins pass by. From the command line, give a payload
//! (`zellij pipe --name tend_next -- now`): `zellij pipe` follows a payload
//! with a payload-less "end of input" message, which the plugin ignores, and
//! without a payload sends only that.
//!
//! # The status payload
//!
//! The payload ([`Status`], version [`PAYLOAD_VERSION`]) is defined once, in
//! `tend-zellij-payload` (`zellij-payload/`), which the daemon's side writes
//! with and this plugin reads with: its crate documentation describes it.

#![warn(missing_docs)]

pub use tend_zellij_payload::{JumpTarget, Status, NEXT_PIPE_NAME, PAYLOAD_VERSION, PIPE_NAME};

/// What a pipe message asks of the plugin.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Show this status.
    Status(Status),
    /// Show nothing.
    Clear,
    /// Focus the next waiting pane.
    Next,
    /// Not for this plugin.
    Ignore,
}

/// Reads a pipe message: its name and payload.
///
/// Returns an error (a sentence for the zellij log) for a message addressed
/// to tend that cannot be read; the caller keeps its current state.
pub fn classify(name: &str, payload: Option<&str>) -> Result<Message, String> {
    if name == NEXT_PIPE_NAME {
        return Ok(Message::Next);
    }
    if name != PIPE_NAME {
        return Ok(Message::Ignore);
    }
    // A `tend` message without payload asks nothing (the glue drops the
    // command line's "end of input" messages before they get here).
    let Some(payload) = payload else {
        return Ok(Message::Ignore);
    };
    match payload.trim() {
        "" | "clear" => Ok(Message::Clear),
        "next" => Ok(Message::Next),
        p if p.starts_with('{') => parse_status(p).map(Message::Status),
        p => Err(format!(
            "tend: ignored a message on the `tend` pipe that is neither JSON status, \
             `next` nor `clear`: {:?}",
            shorten(p, 60)
        )),
    }
}

/// Parses a status payload (see [`Status::parse`]).
pub fn parse_status(json: &str) -> Result<Status, String> {
    Status::parse(json)
}

/// The plugin's state: the last status and where the last jump went.
#[derive(Debug, Default)]
pub struct Model {
    status: Option<Status>,
    last_jump: Option<u32>,
    pending_timers: u32,
}

impl Model {
    /// A model that shows nothing.
    pub fn new() -> Model {
        Model::default()
    }

    /// The status shown now, if any.
    pub fn status(&self) -> Option<&Status> {
        self.status.as_ref()
    }

    /// Replaces the status. Returns the seconds after which the caller must
    /// deliver a timer tick ([`Model::on_timer`]) when the status has a ttl.
    pub fn set_status(&mut self, status: Status) -> Option<f64> {
        let ttl = status.ttl.filter(|t| t.is_finite() && *t > 0.0);
        self.status = Some(status);
        if ttl.is_some() {
            self.pending_timers = self.pending_timers.saturating_add(1);
        }
        ttl
    }

    /// Shows nothing until the next status.
    pub fn clear(&mut self) {
        self.status = None;
    }

    /// A timer set for a status ttl fired. When it was the last timer
    /// pending, no status arrived since it was set: the status has expired
    /// and is dropped. Returns true when what is shown changed.
    pub fn on_timer(&mut self) -> bool {
        self.pending_timers = self.pending_timers.saturating_sub(1);
        if self.pending_timers == 0 && self.status.as_ref().is_some_and(|s| s.ttl.is_some()) {
            self.status = None;
            return true;
        }
        false
    }

    /// The pane the next-waiting key goes to, remembered as the last jump:
    /// the pane after the last jump in the jump list, or the first pane when
    /// the last jump is no longer listed (it was dealt with). `None` when
    /// nothing waits.
    pub fn next_target(&mut self) -> Option<u32> {
        let order: Vec<u32> = self.status.as_ref()?.jump.iter().map(|j| j.pane).collect();
        let target = next_after(&order, self.last_jump)?;
        self.last_jump = Some(target);
        Some(target)
    }

    /// The line to render in `cols` columns: a glyph and the summary, styled
    /// by the worst band, or an empty string when nothing needs the user.
    pub fn line(&self, cols: usize) -> String {
        let Some(status) = &self.status else {
            return String::new();
        };
        let text = if status.summary.trim().is_empty() {
            summary(status.needs, status.quiet)
        } else {
            status.summary.trim().to_owned()
        };
        if text.is_empty() || cols == 0 {
            return String::new();
        }
        let band = status
            .band
            .as_deref()
            .or_else(|| status.jump.first().and_then(|j| j.band.as_deref()))
            .unwrap_or(if status.needs > 0 { "waiting" } else { "quiet" });
        let (glyph, colour) = style(band);
        let plain = format!("{glyph} {text}");
        let shown = shorten(&plain, cols);
        // Colour only the glyph so the sentence stays readable on any theme.
        match shown.strip_prefix(glyph) {
            Some(rest) => format!("\u{1b}[{colour}m{glyph}\u{1b}[0m{rest}"),
            None => shown,
        }
    }
}

/// The pane after `current` in `order` (wrapping), or the first one when
/// `current` is not in `order`; `None` for an empty order.
pub fn next_after(order: &[u32], current: Option<u32>) -> Option<u32> {
    let first = *order.first()?;
    let Some(current) = current else {
        return Some(first);
    };
    match order.iter().position(|p| *p == current) {
        Some(i) => Some(order[(i + 1) % order.len()]),
        None => Some(first),
    }
}

/// The glyph and SGR colour for a band (the same glyphs as tend's tmux
/// snippets).
pub fn style(band: &str) -> (&'static str, &'static str) {
    match band {
        "blocked" => ("✖", "1;31"),
        "waiting" => ("●", "1;33"),
        "quiet" => ("…", "2"),
        "ready_for_review" => ("✔", "1;32"),
        "limited" => ("⧖", "35"),
        "working" => ("◐", "36"),
        _ => ("●", "1"),
    }
}

/// "2 agents need you · 1 agent has gone quiet", from counts alone (used
/// when a payload carries no sentence).
pub fn summary(needs: usize, quiet: usize) -> String {
    let agents = |n: usize| {
        if n == 1 {
            "1 agent".to_owned()
        } else {
            format!("{n} agents")
        }
    };
    let mut parts = Vec::new();
    match needs {
        0 => {}
        1 => parts.push("1 agent needs you".to_owned()),
        n => parts.push(format!("{} need you", agents(n))),
    }
    match quiet {
        0 => {}
        1 => parts.push("1 agent has gone quiet".to_owned()),
        n => parts.push(format!("{} have gone quiet", agents(n))),
    }
    parts.join(" · ")
}

/// `s` cut to at most `max` characters, ending in `…` when cut.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The payload crate's example payload.
    const FIXTURE: &str = include_str!("../../zellij-payload/tests/status-payload.json");

    fn status(jump: &[u32]) -> Status {
        Status {
            v: 1,
            summary: "2 agents need you".into(),
            needs: 2,
            band: Some("waiting".into()),
            jump: jump
                .iter()
                .map(|p| JumpTarget {
                    pane: *p,
                    ..JumpTarget::default()
                })
                .collect(),
            ..Status::default()
        }
    }

    #[test]
    fn reads_the_shared_fixture() {
        let s = parse_status(FIXTURE).expect("fixture parses");
        assert_eq!(s.v, 1);
        assert_eq!(s.needs, 2);
        assert_eq!(s.quiet, 1);
        assert_eq!(s.jump.len(), 2);
        assert_eq!(s.jump[0].pane, 1);
        assert_eq!(s.jump[0].reason.as_deref(), Some("approval"));
        assert_eq!(s.jump[0].agent.as_deref(), Some("claude"));
    }

    #[test]
    fn classifies_messages() {
        assert_eq!(classify("tend_next", None), Ok(Message::Next));
        assert_eq!(classify("tend", Some(" next\n")), Ok(Message::Next));
        assert_eq!(classify("tend", Some("clear")), Ok(Message::Clear));
        assert_eq!(classify("tend", Some("")), Ok(Message::Clear));
        assert_eq!(classify("tend", None), Ok(Message::Ignore));
        assert_eq!(classify("tend_next", Some("x")), Ok(Message::Next));
        assert_eq!(classify("zjstatus", Some("{}")), Ok(Message::Ignore));
        assert!(matches!(
            classify("tend", Some(r#"{"v":1,"needs":1}"#)),
            Ok(Message::Status(_))
        ));
        assert!(classify("tend", Some("bogus")).is_err());
        assert!(classify("tend", Some("{not json")).is_err());
    }

    #[test]
    fn refuses_newer_versions_with_advice() {
        let err = parse_status(r#"{"v":2}"#).unwrap_err();
        assert!(err.contains("rebuild"), "{err}");
    }

    #[test]
    fn ignores_unknown_fields() {
        let s = parse_status(r#"{"v":1,"needs":1,"future":[1,2]}"#).expect("parses");
        assert_eq!(s.needs, 1);
    }

    #[test]
    fn renders_nothing_without_demand() {
        let mut m = Model::new();
        assert_eq!(m.line(80), "");
        m.set_status(Status {
            v: 1,
            ..Status::default()
        });
        assert_eq!(m.line(80), "");
    }

    #[test]
    fn renders_glyph_and_sentence() {
        let mut m = Model::new();
        m.set_status(status(&[3]));
        assert_eq!(m.line(80), "\u{1b}[1;33m●\u{1b}[0m 2 agents need you");
    }

    #[test]
    fn builds_a_sentence_from_counts() {
        let mut m = Model::new();
        m.set_status(Status {
            v: 1,
            needs: 1,
            quiet: 2,
            band: Some("blocked".into()),
            ..Status::default()
        });
        assert_eq!(
            m.line(80),
            "\u{1b}[1;31m✖\u{1b}[0m 1 agent needs you · 2 agents have gone quiet"
        );
    }

    #[test]
    fn truncates_to_the_width() {
        let mut m = Model::new();
        m.set_status(status(&[3]));
        let line = m.line(8);
        assert!(line.ends_with("\u{1b}[0m 2 age…"), "{line:?}");
        assert_eq!(m.line(0), "");
    }

    #[test]
    fn next_cycles_in_order_and_restarts_when_the_pane_is_gone() {
        let mut m = Model::new();
        assert_eq!(m.next_target(), None);
        m.set_status(status(&[3, 7, 9]));
        assert_eq!(m.next_target(), Some(3));
        assert_eq!(m.next_target(), Some(7));
        assert_eq!(m.next_target(), Some(9));
        assert_eq!(m.next_target(), Some(3));
        // 3 was dealt with and left the list: start from the top.
        m.set_status(status(&[7, 9]));
        assert_eq!(m.next_target(), Some(7));
        m.set_status(status(&[]));
        assert_eq!(m.next_target(), None);
    }

    #[test]
    fn ttl_expires_only_without_fresh_pushes() {
        let mut m = Model::new();
        let mut s = status(&[3]);
        s.ttl = Some(90.0);
        assert_eq!(m.set_status(s.clone()), Some(90.0));
        assert_eq!(m.set_status(s), Some(90.0));
        // The first timer fires: a newer push is pending, keep showing.
        assert!(!m.on_timer());
        assert!(m.status().is_some());
        // The second fires: nothing came since, drop it.
        assert!(m.on_timer());
        assert!(m.status().is_none());
        // Stray timers do nothing.
        assert!(!m.on_timer());
    }

    #[test]
    fn no_ttl_means_no_expiry() {
        let mut m = Model::new();
        assert_eq!(m.set_status(status(&[3])), None);
        assert!(!m.on_timer());
        assert!(m.status().is_some());
    }

    #[test]
    fn next_after_wraps_and_restarts() {
        assert_eq!(next_after(&[], Some(1)), None);
        assert_eq!(next_after(&[4, 5], None), Some(4));
        assert_eq!(next_after(&[4, 5], Some(5)), Some(4));
        assert_eq!(next_after(&[4, 5], Some(6)), Some(4));
    }
}
