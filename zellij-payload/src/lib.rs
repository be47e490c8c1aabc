//! The status payload tend's daemon pushes to its zellij plugin, defined
//! once for both sides: the daemon's zellij crate (`tend-zellij-host`)
//! writes it, the plugin (`zellij-plugin/`, built for `wasm32-wasip1`)
//! reads it.
//!
//! The daemon decides everything (which agents need the user, in which
//! order, with which words) and sends the result with
//! `zellij pipe --name tend -- '<json>'`; the plugin keeps the last
//! payload, renders it as one line, and on `next` focuses the next pane of
//! its jump list.
//!
//! # The payload (version 1)
//!
//! ```json
//! {
//!   "v": 1,
//!   "summary": "2 agents need you · 1 agent has gone quiet",
//!   "needs": 2,
//!   "quiet": 1,
//!   "band": "waiting",
//!   "ttl": 90,
//!   "jump": [
//!     {"pane": 3, "band": "waiting", "state": "waiting", "reason": "approval", "agent": "claude"},
//!     {"pane": 7, "band": "blocked", "state": "waiting", "reason": "error", "agent": "codex"}
//!   ]
//! }
//! ```
//!
//! `jump` lists terminal pane ids (zellij's `terminal_N` without the prefix)
//! in the order the next-waiting key visits them: the daemon's attention
//! order. `band` is the worst band of all panes. `ttl`, when present, is how
//! many seconds the status stays valid without a fresh push: a daemon that
//! died leaves no stale "agents need you" behind. Unknown fields are
//! ignored, and every field but `v` may be missing; a payload whose `v` is
//! newer than [`PAYLOAD_VERSION`] is refused ([`Status::parse`]) with a
//! message that says to update the plugin.

#![warn(missing_docs)]

use serde::{Deserialize, Serialize};

/// The pipe the daemon pushes the status on (and that carries `next`).
pub const PIPE_NAME: &str = "tend";

/// The pipe name that means "focus the next waiting pane", for
/// `MessagePlugin { name "tend_next"; }` key bindings.
pub const NEXT_PIPE_NAME: &str = "tend_next";

/// The payload version the daemon writes and the newest the plugin reads.
pub const PAYLOAD_VERSION: u32 = 1;

/// What the daemon pushes to the plugin: what to show and where `next`
/// goes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Status {
    /// Payload version ([`PAYLOAD_VERSION`]).
    pub v: u32,
    /// The sentence to show: `2 agents need you · 1 agent has gone quiet`.
    /// Empty: nothing needs the user (the plugin builds a sentence from the
    /// counts, if any).
    #[serde(default)]
    pub summary: String,
    /// How many agents need the user (blocked, waiting, ready for review).
    #[serde(default)]
    pub needs: usize,
    /// How many agents have gone quiet.
    #[serde(default)]
    pub quiet: usize,
    /// The worst band of all panes (`blocked`, `waiting`, `quiet`, …), which
    /// picks the glyph and colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<String>,
    /// Seconds the status stays valid without a fresh push; the plugin
    /// hides it afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<f64>,
    /// The panes the next-waiting key visits, in attention order.
    #[serde(default)]
    pub jump: Vec<JumpTarget>,
}

/// One pane of [`Status::jump`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct JumpTarget {
    /// The terminal pane number (the `N` of zellij's `terminal_N`).
    pub pane: u32,
    /// Its band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<String>,
    /// The agent's state (`waiting`, `completed`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Why it waits (`approval`, `error`, `question`, `prompt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The agent (`claude`, `codex`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl Status {
    /// The JSON the plugin reads.
    pub fn to_json(&self) -> String {
        // Plain data with string keys: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| "{\"v\":1}".to_owned())
    }

    /// Reads a payload. The error is a sentence for the zellij log: an
    /// unreadable payload or a newer version than this build reads, and
    /// what to do about it.
    pub fn parse(json: &str) -> Result<Status, String> {
        let status: Status = serde_json::from_str(json).map_err(|e| {
            format!(
                "tend: could not read the status pushed by the daemon ({e}); \
                 the plugin and the daemon may come from different tend versions — \
                 rebuild the plugin from the same checkout"
            )
        })?;
        if status.v > PAYLOAD_VERSION {
            return Err(format!(
                "tend: the daemon sent status version {} but this plugin reads up to {}; \
                 rebuild and reinstall the plugin (zellij-plugin/README.md)",
                status.v, PAYLOAD_VERSION
            ));
        }
        Ok(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../tests/status-payload.json");

    #[test]
    fn the_fixture_round_trips() {
        let s = Status::parse(FIXTURE).expect("fixture parses");
        assert_eq!(s.v, PAYLOAD_VERSION);
        assert_eq!(s.jump.len(), 2);
        assert_eq!(s.ttl, Some(90.0));
        let back = Status::parse(&s.to_json()).expect("round trip");
        assert_eq!(back, s);
    }

    #[test]
    fn the_daemon_writes_fields_in_its_first_order_and_leaves_out_what_is_absent() {
        let s = Status {
            v: 1,
            summary: "1 agent needs you".into(),
            needs: 1,
            band: Some("waiting".into()),
            ttl: Some(90.0),
            jump: vec![JumpTarget {
                pane: 3,
                reason: Some("approval".into()),
                ..JumpTarget::default()
            }],
            ..Status::default()
        };
        assert_eq!(
            s.to_json(),
            r#"{"v":1,"summary":"1 agent needs you","needs":1,"quiet":0,"band":"waiting","ttl":90.0,"jump":[{"pane":3,"reason":"approval"}]}"#
        );
    }

    #[test]
    fn newer_versions_are_refused_with_advice_and_unknown_fields_ignored() {
        let err = Status::parse(r#"{"v":2}"#).expect_err("newer");
        assert!(err.contains("rebuild"), "{err}");
        let s = Status::parse(r#"{"v":1,"needs":1,"future":[1,2]}"#).expect("parses");
        assert_eq!(s.needs, 1);
    }
}
