//! What the daemon publishes on its event bus: `tend events` streams these,
//! `wait` and `prompt --wait` end on them, and notifications are made from
//! them.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use tend_vocab::{Authority, Band, Lifecycle, PaneState, Reason};

/// One event on the bus. On the wire it is an object whose `event` field
/// names the kind (`pane.agent_status_changed`) beside the kind's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event")]
pub enum BusEvent {
    /// A pane's effective state, reason, band or quiet flag changed.
    #[serde(rename = "pane.agent_status_changed")]
    StatusChanged(Box<StatusChanged>),
    /// An agent was identified in a pane.
    #[serde(rename = "pane.agent_detected")]
    AgentDetected {
        /// The pane, `%3`.
        pane: String,
        /// The agent's id.
        agent: String,
    },
    /// The agent identified in a pane is no longer there.
    #[serde(rename = "pane.agent_released")]
    AgentReleased {
        /// The pane.
        pane: String,
        /// The agent's id.
        agent: String,
    },
    /// A pane closed (a remote's: it left the remote's snapshot).
    #[serde(rename = "pane.closed")]
    Closed {
        /// The pane (`build-box:%3` for a remote's).
        pane: String,
        /// The remote it was on; absent for this machine's panes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
        /// The agent it ran, if any.
        agent: Option<String>,
    },
    /// A self-reporting agent's lifecycle changed without a report: its
    /// lease ran out (`quiet`, `gone`) or it came back.
    #[serde(rename = "pane.report_changed")]
    ReportChanged {
        /// The pane.
        pane: String,
        /// The lifecycle shown before (`working`).
        from: Lifecycle,
        /// The lifecycle shown now (`gone`).
        to: Lifecycle,
        /// Whether the user is told (a change to `gone`, unless the agent
        /// last said `stopped`).
        notify: bool,
    },
    /// Someone asked the pane's agent to stop (`tend stop-request`).
    #[serde(rename = "pane.stop_requested")]
    StopRequested {
        /// The pane.
        pane: String,
        /// Why, in the asker's words.
        reason: String,
    },
    /// A park gated on another pane released itself.
    #[serde(rename = "park.released")]
    ParkReleased {
        /// The pane that was parked.
        pane: String,
        /// The gate pane.
        gate: String,
        /// The park's note.
        note: String,
        /// Why it was released.
        reason: ReleaseReason,
    },
    /// tend went on after a pane's usage limit: at its reset (`[limits]
    /// resume`), or by `tend resume`; or it looked and found the limit no
    /// longer on the screen, and sent nothing.
    #[serde(rename = "pane.resumed")]
    Resumed {
        /// The pane.
        pane: String,
        /// Its agent.
        agent: Option<String>,
        /// `reset` (at the limit's reset, on its own) or `user` (`tend
        /// resume`).
        by: String,
        /// The text pasted, when any.
        text: Option<String>,
        /// The keys sent instead (the limit screen is a dialog).
        keys: Vec<String>,
        /// Why nothing was sent, when nothing was.
        refused: Option<String>,
        /// The limit's reset (Unix time), when it named one.
        resets_at: Option<i64>,
    },
    /// This subscriber fell behind and missed events: list the panes again.
    #[serde(rename = "events.lagged")]
    Lagged {
        /// How many it missed.
        missed: u64,
    },
}

impl BusEvent {
    /// The kind as the wire names it: `pane.agent_status_changed`.
    pub fn kind(&self) -> &'static str {
        match self {
            BusEvent::StatusChanged(_) => "pane.agent_status_changed",
            BusEvent::AgentDetected { .. } => "pane.agent_detected",
            BusEvent::AgentReleased { .. } => "pane.agent_released",
            BusEvent::Closed { .. } => "pane.closed",
            BusEvent::ReportChanged { .. } => "pane.report_changed",
            BusEvent::StopRequested { .. } => "pane.stop_requested",
            BusEvent::ParkReleased { .. } => "park.released",
            BusEvent::Resumed { .. } => "pane.resumed",
            BusEvent::Lagged { .. } => "events.lagged",
        }
    }

    /// The pane it is about (none for `events.lagged`).
    pub fn pane(&self) -> Option<&str> {
        match self {
            BusEvent::StatusChanged(s) => Some(&s.pane),
            BusEvent::AgentDetected { pane, .. }
            | BusEvent::AgentReleased { pane, .. }
            | BusEvent::Closed { pane, .. }
            | BusEvent::ReportChanged { pane, .. }
            | BusEvent::StopRequested { pane, .. }
            | BusEvent::ParkReleased { pane, .. }
            | BusEvent::Resumed { pane, .. } => Some(pane),
            BusEvent::Lagged { .. } => None,
        }
    }

    /// The state it carries (only a status change has one).
    pub fn state(&self) -> Option<PaneState> {
        match self {
            BusEvent::StatusChanged(s) => s.state,
            _ => None,
        }
    }
}

/// Why a gated park was released. The wire keeps the names the first
/// version wrote (`GateReady`, `GateGone`); the snake-case spelling reads
/// too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ReleaseReason {
    /// The gate pane went from busy to ready.
    #[serde(alias = "gate_ready")]
    GateReady,
    /// The gate pane was killed, or its agent exited.
    #[serde(alias = "gate_gone")]
    GateGone,
}

/// `pane.agent_status_changed`: a pane's effective state, reason, band or
/// quiet flag changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct StatusChanged {
    /// `%N` (`build-box:%N` for a remote's pane).
    pub pane: String,
    /// The remote the pane is on; absent for this machine's panes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Agent id.
    pub agent: Option<String>,
    /// Display name (`Claude`; `Claude on build-box` for a remote's).
    pub name: Option<String>,
    /// Session name.
    pub session: String,
    /// Window id.
    pub window: String,
    /// A client shows this pane now.
    pub focused: bool,
    /// New state (`unreachable`: a remote pane whose link went down).
    pub state: Option<PaneState>,
    /// New reason.
    pub reason: Option<Reason>,
    /// New band (none for a remote pane whose link is down: it makes no
    /// demand).
    pub band: Option<Band>,
    /// Band before.
    pub prev_band: Option<Band>,
    /// Quiet flag.
    pub quiet: bool,
    /// State before.
    pub prev_state: Option<PaneState>,
    /// Reason before.
    pub prev_reason: Option<Reason>,
    /// Rule, `report/<lifecycle>`, `psp/<state>` or `file/<status>`
    /// (`null` for a remote pane whose view has none).
    pub rule: Option<String>,
    /// `screen`, `report`, `relay`, `file` or `osc` (as in the pane view).
    pub authority: Authority,
    /// The agent's own status text: `Some(None)` (`null`) when it gave
    /// none; `None` when the event does not carry it (a remote pane's,
    /// whose feed has it in the pane view instead).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    #[schemars(with = "Option<String>")]
    pub message: Option<Option<String>>,
    /// Counts state changes of the pane.
    pub state_change_seq: u64,
    /// The agent run (a wait is pinned to one).
    pub run: u64,
    /// Unix time.
    pub at: f64,
    /// With reason `limit`: Unix time the usage limit resets, when the
    /// agent named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<i64>,
    /// The same, as the user reads the time (`15:00`, `Tue 09:00`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets: Option<String>,
}

/// A field that is there, even as `null`, is `Some`; a missing one is
/// `None` (through `default`).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_carry_their_kind_in_the_event_field() {
        let ev = BusEvent::Closed {
            pane: "%3".into(),
            host: None,
            agent: None,
        };
        assert_eq!(
            serde_json::to_value(&ev).expect("serializes"),
            json!({"event": "pane.closed", "pane": "%3", "agent": null})
        );
        let lagged: BusEvent =
            serde_json::from_value(json!({"event": "events.lagged", "missed": 4})).expect("reads");
        assert_eq!(lagged, BusEvent::Lagged { missed: 4 });
        assert_eq!(lagged.kind(), "events.lagged");
        assert_eq!(lagged.pane(), None);
    }

    #[test]
    fn a_remote_status_change_has_a_host_and_no_message() {
        let local = json!({
            "event": "pane.agent_status_changed", "pane": "%1", "agent": "claude",
            "name": "Claude", "session": "s", "window": "@1", "focused": true,
            "state": "waiting", "reason": "approval", "band": "waiting", "prev_band": null,
            "quiet": false, "prev_state": "working", "prev_reason": null,
            "rule": "claude/approval", "authority": "screen", "message": null,
            "state_change_seq": 3, "run": 1, "at": 1_800_000_000.25,
        });
        let mut remote = local.clone();
        let map = remote.as_object_mut().expect("an object");
        map.remove("message");
        map.insert("host".into(), json!("box"));
        for v in [local, remote] {
            let ev: BusEvent = serde_json::from_value(v.clone()).expect("reads");
            assert_eq!(serde_json::to_value(&ev).expect("writes"), v);
        }
    }

    #[test]
    fn park_release_reasons_keep_their_first_spelling() {
        let ev: BusEvent = serde_json::from_value(json!({
            "event": "park.released", "pane": "%1", "gate": "%2", "note": "", "reason": "gate_gone"
        }))
        .expect("reads");
        assert_eq!(
            serde_json::to_value(&ev).expect("writes")["reason"],
            "GateGone"
        );
    }
}
