//! Helpers shared by the notification unit tests: times, status changes
//! and a clock that runs a notifier.

use super::*;

pub(super) const NOON: TimeOfDay = TimeOfDay(12 * 60);

pub(super) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub(super) fn change(pane: &str, name: &str, state: State, reason: Option<Reason>) -> StatusChange {
    let band = bands::band(&bands::PaneFacts {
        state: Some(state),
        reason,
        quiet: false,
        seen: false,
        parked: false,
        snoozed: false,
        reset_passed: false,
    });
    StatusChange {
        pane: pane.into(),
        name: Some(name.into()),
        session: Some("main".into()),
        focused: false,
        state: Some(state),
        reason,
        band,
        prev_state: Some(State::Working),
        prev_reason: None,
        prev_band: Some(Band::Working),
        message: None,
        resets: None,
    }
}

pub(super) fn waiting(pane: &str, name: &str, r: Reason) -> Happening {
    Happening::Status(change(pane, name, State::Waiting, Some(r)))
}

/// Runs the clock to `until` in 10 ms steps, collecting notifications.
pub(super) fn run(n: &mut Notifier, from: u64, until: u64) -> Vec<Notification> {
    let mut out = Vec::new();
    let mut t = from;
    while t <= until {
        if n.poll_timeout().is_some_and(|d| d <= ms(t)) {
            n.handle_timeout(ms(t));
        }
        out.extend(std::iter::from_fn(|| n.poll_notification()));
        t += 10;
    }
    out
}
