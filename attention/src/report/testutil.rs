//! Helpers shared by the report unit tests: short durations, a default
//! book and the signs of life a tick is given.

use super::*;

pub(super) fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}

pub(super) fn m(n: u64) -> Duration {
    Duration::from_secs(60 * n)
}

pub(super) fn h(n: u64) -> Duration {
    Duration::from_secs(3600 * n)
}

pub(super) fn book() -> ReportBook {
    ReportBook::new(ReportConfig::default())
}

pub(super) fn dead(_: &str) -> Alive {
    Alive::NONE
}

pub(super) fn shown(b: &ReportBook, pane: &str) -> Lifecycle {
    b.reporter(pane).unwrap().lifecycle()
}

pub(super) fn screen_none() -> ScreenStatus<'static> {
    ScreenStatus::default()
}

pub(super) fn lives(map: &'static [(&'static str, PaneLife)]) -> impl Fn(&str) -> Alive {
    move |p: &str| Alive {
        life: map
            .iter()
            .find(|(q, _)| *q == p)
            .map_or(PaneLife::Gone, |(_, l)| *l),
        ..Alive::NONE
    }
}
