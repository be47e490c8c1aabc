//! Bus events as the notifier (`tend_attention::notify`) reads them: the
//! daemon's notifications and the tests' use the same reading.

use tend_attention::notify::{Happening, StatusChange};
use tend_attention::Band;
use tend_detector::{Reason, State};
use tend_protocol::{BusEvent, ReleaseReason};

/// Reads one bus event as something the notifier knows; `None` for the
/// events it does not care about.
pub fn happening(ev: &BusEvent) -> Option<Happening> {
    match ev {
        BusEvent::StatusChanged(c) => {
            let state = |s: &Option<String>| s.as_deref().and_then(State::parse);
            let reason = |r: &Option<String>| r.as_deref().and_then(Reason::parse);
            let band = |b: &Option<String>| {
                b.as_ref().and_then(|b| {
                    serde_json::from_value::<Band>(serde_json::Value::String(b.clone())).ok()
                })
            };
            Some(Happening::Status(StatusChange {
                pane: c.pane.clone(),
                name: c.name.clone().or_else(|| c.agent.clone()),
                session: Some(c.session.clone()),
                focused: c.focused,
                state: state(&c.state),
                reason: reason(&c.reason),
                band: band(&c.band),
                prev_state: state(&c.prev_state),
                prev_reason: reason(&c.prev_reason),
                prev_band: band(&c.prev_band),
                message: c.message.clone().flatten(),
            }))
        }
        BusEvent::ParkReleased {
            pane,
            gate,
            note,
            reason,
        } => Some(Happening::ParkReleased {
            pane: pane.clone(),
            gate: gate.clone(),
            note: note.clone(),
            gate_gone: *reason == ReleaseReason::GateGone,
        }),
        BusEvent::ReportChanged {
            pane, to, notify, ..
        } if to == "gone" => Some(Happening::Gone {
            pane: pane.clone(),
            notify: *notify,
        }),
        BusEvent::Closed { pane, .. } => Some(Happening::Closed { pane: pane.clone() }),
        _ => None,
    }
}
