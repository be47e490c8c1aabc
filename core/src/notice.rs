//! Bus events as the notifier (`tend_attention::notify`) reads them: the
//! daemon's notifications and the tests' use the same reading.

use tend_attention::notify::{Happening, StatusChange};
use tend_protocol::{BusEvent, ReleaseReason};
use tend_vocab::{Lifecycle, PaneState};

/// Reads one bus event as something the notifier knows; `None` for the
/// events it does not care about.
pub fn happening(ev: &BusEvent) -> Option<Happening> {
    match ev {
        BusEvent::StatusChanged(c) => {
            let state = |s: Option<PaneState>| s.and_then(PaneState::agent);
            Some(Happening::Status(StatusChange {
                pane: c.pane.clone(),
                name: c.name.clone().or_else(|| c.agent.clone()),
                session: Some(c.session.clone()),
                focused: c.focused,
                state: state(c.state),
                reason: c.reason,
                band: c.band,
                prev_state: state(c.prev_state),
                prev_reason: c.prev_reason,
                prev_band: c.prev_band,
                message: c.message.clone().flatten(),
                resets: c.resets.clone(),
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
        } if *to == Lifecycle::Gone => Some(Happening::Gone {
            pane: pane.clone(),
            notify: *notify,
        }),
        BusEvent::Closed { pane, .. } => Some(Happening::Closed { pane: pane.clone() }),
        BusEvent::Resumed {
            pane,
            text,
            keys,
            refused: None,
            ..
        } => Some(Happening::Resumed {
            pane: pane.clone(),
            text: text.clone().unwrap_or_else(|| keys.join(" ")),
        }),
        _ => None,
    }
}
