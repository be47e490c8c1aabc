//! The report book: every pane's reporter and label, taking reports,
//! releasing panes and ticking leases into [`Change`]s, with the signs of
//! life ([`Alive`]) the caller passes in.
//!
//! Separate because it is the book-keeping across panes (dispatched panes,
//! labels, persistence), where the reporter file is one pane's lease.

use super::reporter::{step, Lease};
use super::*;

/// Signs of life of a pane other than its reports, as the caller sees them
/// at tick time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alive {
    /// When the pane last printed something (caller's clock).
    pub last_output: Option<Duration>,
    /// Its process group burns CPU now (the detector's busy threshold).
    pub cpu_busy: bool,
    /// How the pane looks outside reports, for panes named by
    /// `--dispatches` (a pane with a live report of its own is judged by
    /// that report instead).
    pub life: PaneLife,
}

impl Alive {
    /// No sign of life at all; the pane is gone.
    pub const NONE: Alive = Alive {
        last_output: None,
        cpu_busy: false,
        life: PaneLife::Gone,
    };

    /// Whether there is a sign of life within `window` of `now`.
    pub fn within(&self, now: Duration, window: Duration) -> bool {
        self.cpu_busy
            || self
                .last_output
                .is_some_and(|t| now.saturating_sub(t) <= window)
    }
}

/// A dispatched pane's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaneLife {
    /// Alive and not quiet.
    Live,
    /// Quiet (the Quiet band, or a quiet report).
    Quiet,
    /// Gone, exited or closed.
    Gone,
}

/// What [`ReportBook::apply`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// The lifecycle shown before (`None`: no reporter yet).
    pub from: Option<Lifecycle>,
    /// The lifecycle shown now.
    pub to: Lifecycle,
    /// The sequence number taken.
    pub seq: u64,
}

/// A change of a pane's displayed lifecycle, from [`ReportBook::tick`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The pane.
    pub pane: String,
    /// Shown before.
    pub from: Lifecycle,
    /// Shown now.
    pub to: Lifecycle,
    /// When (tick time).
    pub at: Duration,
    /// Whether the user is told: a change to `gone`, unless the last report
    /// was `stopped`.
    pub notify: bool,
}

/// Every pane's reporter and label.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportBook {
    #[serde(skip)]
    pub(super) config: ReportConfig,
    #[serde(default)]
    pub(super) reporters: BTreeMap<String, Reporter>,
    #[serde(default)]
    pub(super) labels: BTreeMap<String, String>,
}

impl ReportBook {
    /// An empty book.
    pub fn new(config: ReportConfig) -> Self {
        ReportBook {
            config,
            ..ReportBook::default()
        }
    }

    /// Takes the reporters and labels of `saved` (a state file read late)
    /// for panes that have none here.
    pub fn merge_missing(&mut self, saved: ReportBook) {
        for (pane, r) in saved.reporters {
            self.reporters.entry(pane).or_insert(r);
        }
        for (pane, l) in saved.labels {
            self.labels.entry(pane).or_insert(l);
        }
    }

    /// Replaces the timings (after loading a persisted book).
    pub fn set_config(&mut self, config: ReportConfig) {
        self.config = config;
    }

    /// The timings.
    pub fn config(&self) -> &ReportConfig {
        &self.config
    }

    /// Takes a report for `pane` at `now`. Stale, unknown or inconsistent
    /// reports change nothing.
    pub fn apply(
        &mut self,
        now: Duration,
        pane: &str,
        report: Report,
    ) -> Result<Applied, ReportError> {
        let state = Lifecycle::parse_loose(&report.state)
            .ok_or_else(|| ReportError::UnknownState(report.state.trim().to_owned()))?;
        if !state.is_posted() {
            return Err(ReportError::DerivedState(state));
        }
        let reason = match report.reason.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(r) => match WaitReason::parse(r) {
                Some(w) if state == Lifecycle::Waiting => Some(w),
                _ => {
                    return Err(ReportError::BadReason {
                        state,
                        reason: r.to_owned(),
                    })
                }
            },
        };
        if report.every.is_some_and(|e| e.is_zero()) {
            return Err(ReportError::ZeroEvery);
        }
        if let Some(d) = &report.dispatches {
            if let Some(bad) = d.iter().find(|p| p.trim().is_empty() || p.trim() == pane) {
                return Err(ReportError::BadDispatch(bad.trim().to_owned()));
            }
        }
        let old = self.reporters.get(pane);
        let seq = match (report.seq, old) {
            (Some(seq), Some(r)) if seq <= r.seq => {
                return Err(ReportError::Stale { seq, last: r.seq })
            }
            (Some(seq), _) => seq,
            (None, Some(r)) => r.seq + 1,
            (None, None) => 1,
        };
        let from = old.map(Reporter::lifecycle);
        let mut dispatches = match report.dispatches {
            Some(d) => d.into_iter().map(|p| p.trim().to_owned()).collect(),
            None => old.map(|r| r.dispatches.clone()).unwrap_or_default(),
        };
        dispatches.dedup();
        let live_children = match old {
            Some(r) if r.dispatches == dispatches => r.live_children.clone(),
            // Panes just declared are taken as live until the next tick.
            _ => dispatches.clone(),
        };
        let r = Reporter {
            posted: state,
            reason,
            message: report
                .message
                .map(|m| m.trim().to_owned())
                .filter(|m| !m.is_empty()),
            agent: report.agent.or_else(|| old.and_then(|r| r.agent.clone())),
            every: report.every.or_else(|| old.and_then(|r| r.every)),
            dispatches,
            live_children,
            seq,
            posted_at: now,
            phase: Phase::Posted,
            recheck: None,
        };
        let to = r.lifecycle();
        self.reporters.insert(pane.to_owned(), r);
        Ok(Applied { from, to, seq })
    }

    /// `tend release`: ends the pane's report authority and forgets its
    /// sequence. Returns what it was.
    pub fn release(&mut self, pane: &str) -> Option<Reporter> {
        self.reporters.remove(pane)
    }

    /// The pane closed: forgets its reporter and its label.
    pub fn forget(&mut self, pane: &str) {
        self.reporters.remove(pane);
        self.labels.remove(pane);
    }

    /// `tend report-metadata`: sets (or with `None` or blank text, clears)
    /// the pane's display label. Never affects state. Returns the old one.
    pub fn set_label(&mut self, pane: &str, label: Option<&str>) -> Option<String> {
        match label.map(str::trim).filter(|l| !l.is_empty()) {
            Some(l) => self.labels.insert(pane.to_owned(), l.to_owned()),
            None => self.labels.remove(pane),
        }
    }

    /// The pane's label.
    pub fn label(&self, pane: &str) -> Option<&str> {
        self.labels.get(pane).map(String::as_str)
    }

    /// The pane's reporter, live or gone.
    pub fn reporter(&self, pane: &str) -> Option<&Reporter> {
        self.reporters.get(pane)
    }

    /// Every pane with a reporter, in order.
    pub fn panes(&self) -> impl Iterator<Item = (&str, &Reporter)> {
        self.reporters.iter().map(|(p, r)| (p.as_str(), r))
    }

    /// The pane's authority: `report` while its reporter is live.
    pub fn authority(&self, pane: &str) -> Authority {
        match self.reporters.get(pane) {
            Some(r) if r.is_live() => Authority::Report,
            _ => Authority::Screen,
        }
    }

    /// How a pane named by `--dispatches` lives: by its own live report
    /// when it has one, else as the caller sees it.
    fn child_life(&self, pane: &str, alive: &dyn Fn(&str) -> Alive) -> PaneLife {
        match self.reporters.get(pane) {
            Some(r) if r.is_live() => match r.lifecycle() {
                Lifecycle::Quiet => PaneLife::Quiet,
                _ => PaneLife::Live,
            },
            _ => alive(pane).life,
        }
    }

    /// Moves every reporter's time to `now`: leases run out, quiet begins
    /// and ends, dispatched panes are re-read. `alive` gives each pane's
    /// other signs of life. Returns the changes of displayed lifecycle, in
    /// pane order.
    pub fn tick(&mut self, now: Duration, alive: &dyn Fn(&str) -> Alive) -> Vec<Change> {
        // Read every dispatched pane before changing anything, so the result
        // does not depend on the order panes are visited in.
        let lives: BTreeMap<String, PaneLife> = self
            .reporters
            .values()
            .flat_map(|r| r.dispatches.iter())
            .map(|p| (p.clone(), self.child_life(p, alive)))
            .collect();
        let cfg = self.config.clone();
        let mut changes = Vec::new();
        for (pane, r) in &mut self.reporters {
            let before = r.lifecycle();
            r.live_children = r
                .dispatches
                .iter()
                .filter(|p| lives.get(*p) == Some(&PaneLife::Live))
                .cloned()
                .collect();
            r.recheck = None;
            if r.is_live() {
                step(r, now, &cfg, &alive(pane));
            }
            let after = r.lifecycle();
            if after != before {
                changes.push(Change {
                    pane: pane.clone(),
                    from: before,
                    to: after,
                    at: now,
                    notify: match r.phase {
                        Phase::Gone { notify, .. } => notify,
                        _ => false,
                    },
                });
            }
        }
        changes
    }

    /// The earliest time the book's own timers need a
    /// [`tick`](ReportBook::tick). Outcomes that depend on signs of life are
    /// re-checked one lease period after the last tick; the caller should
    /// also tick when a dispatched pane changes.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.reporters
            .values()
            .filter(|r| r.is_live())
            .filter_map(|r| {
                let own = match (r.phase, r.lease()) {
                    (Phase::Posted, Lease::Handover) => {
                        Some(r.posted_at + self.config.handover_silence)
                    }
                    (Phase::Posted, _) => r.lease_end(),
                    (Phase::Quiet { since }, Lease::OnUser) => {
                        Some(since + self.config.waiting_quiet_for)
                    }
                    _ => None,
                };
                match (own, r.recheck) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                }
            })
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::*;

    #[test]
    fn errors_refuse_and_change_nothing() {
        let mut b = book();
        let e = b.apply(s(0), "%1", Report::new("busy")).unwrap_err();
        assert_eq!(e, ReportError::UnknownState("busy".into()));
        assert!(e.to_string().contains("handing-over"), "{e}");
        for derived in ["quiet", "gone", "dispatching"] {
            let e = b.apply(s(0), "%1", Report::new(derived)).unwrap_err();
            assert!(matches!(e, ReportError::DerivedState(_)));
            assert!(e.to_string().contains("set by tend"), "{e}");
        }
        let e = b
            .apply(s(0), "%1", Report::new("waiting").reason("lunch"))
            .unwrap_err();
        assert!(e.to_string().contains("not a waiting reason"), "{e}");
        let e = b
            .apply(s(0), "%1", Report::new("stopped").reason("error"))
            .unwrap_err();
        assert!(e.to_string().contains("--message"), "{e}");
        let e = b
            .apply(s(0), "%1", Report::new("working").every(s(0)))
            .unwrap_err();
        assert_eq!(e, ReportError::ZeroEvery);
        let e = b
            .apply(s(0), "%1", Report::new("working").dispatches(&["%1"]))
            .unwrap_err();
        assert!(e.to_string().contains("itself"), "{e}");
        let e = b
            .apply(s(0), "%1", Report::new("working").dispatches(&[" "]))
            .unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
        assert!(b.reporter("%1").is_none());
        assert_eq!(b.authority("%1"), Authority::Screen);
    }

    #[test]
    fn stale_sequence_is_ignored() {
        let mut b = book();
        let a = b.apply(s(0), "%1", Report::new("working").seq(10)).unwrap();
        assert_eq!(
            a,
            Applied {
                from: None,
                to: Lifecycle::Working,
                seq: 10
            }
        );
        let e = b.apply(s(1), "%1", Report::new("done").seq(9)).unwrap_err();
        assert_eq!(e, ReportError::Stale { seq: 9, last: 10 });
        assert!(e.to_string().contains("older"), "{e}");
        let e = b
            .apply(s(1), "%1", Report::new("done").seq(10))
            .unwrap_err();
        assert_eq!(e, ReportError::Stale { seq: 10, last: 10 });
        assert_eq!(shown(&b, "%1"), Lifecycle::Working);
        assert_eq!(b.reporter("%1").unwrap().posted_at(), s(0));
        // Without a number: next in arrival order.
        let a = b.apply(s(2), "%1", Report::new("done")).unwrap();
        assert_eq!(a.seq, 11);
        assert_eq!(a.from, Some(Lifecycle::Working));
        // Other panes count on their own.
        assert_eq!(
            b.apply(s(2), "%2", Report::new("up").seq(1)).unwrap().seq,
            1
        );
        // Release forgets the sequence: a new agent starts over.
        assert!(b.release("%1").is_some());
        assert_eq!(
            b.apply(s(3), "%1", Report::new("up").seq(1)).unwrap().seq,
            1
        );
    }

    #[test]
    fn dispatching_lives_through_its_panes() {
        let mut b = book();
        b.apply(
            s(0),
            "%1",
            Report::new("working")
                .every(s(60))
                .dispatches(&["%4", "%5"]),
        )
        .unwrap();
        assert_eq!(shown(&b, "%1"), Lifecycle::Dispatching);
        assert_eq!(b.reporter("%1").unwrap().word(s(0)), "dispatching %4, %5");
        let both = lives(&[("%4", PaneLife::Live), ("%5", PaneLife::Live)]);
        assert!(b.tick(s(120), &both).is_empty());
        assert_eq!(b.reporter("%1").unwrap().phase(), Phase::Dispatching);
        let e = b.effective(s(120), "%1", &screen_none());
        assert_eq!(e.state, Some(State::Working));
        assert_eq!(e.dispatching, vec!["%4", "%5"]);
        // One quiet, one live: still dispatching, naming the live one.
        let one = lives(&[("%4", PaneLife::Quiet), ("%5", PaneLife::Live)]);
        assert!(b.tick(h(1), &one).is_empty());
        assert_eq!(b.reporter("%1").unwrap().word(h(1)), "dispatching %5");
        // All quiet or gone: gone.
        let none = lives(&[("%4", PaneLife::Quiet)]);
        let ch = b.tick(h(2), &none);
        assert_eq!(ch[0].from, Lifecycle::Dispatching);
        assert_eq!(ch[0].to, Lifecycle::Gone);
        assert!(ch[0].notify);
    }

    #[test]
    fn dispatched_panes_with_reports_are_judged_by_them() {
        let mut b = book();
        b.apply(
            s(0),
            "%1",
            Report::new("working").every(s(60)).dispatches(&["%4"]),
        )
        .unwrap();
        b.apply(s(0), "%4", Report::new("working").every(s(600)))
            .unwrap();
        // The caller knows nothing of %4; its own report keeps it live.
        assert!(b.tick(s(120), &dead).is_empty());
        assert_eq!(shown(&b, "%1"), Lifecycle::Dispatching);
        // %4's report goes gone at 1200; %1 follows on the next tick.
        let ch = b.tick(s(1200), &dead);
        assert_eq!(ch.len(), 1);
        assert_eq!((ch[0].pane.as_str(), ch[0].to), ("%4", Lifecycle::Gone));
        let ch = b.tick(s(1201), &dead);
        assert_eq!((ch[0].pane.as_str(), ch[0].to), ("%1", Lifecycle::Gone));
    }

    #[test]
    fn dispatcher_with_fresh_posts_shows_dispatching_until_children_end() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("working").dispatches(&["%4"]))
            .unwrap();
        let ch = b.tick(s(5), &dead);
        assert_eq!(ch[0].from, Lifecycle::Dispatching);
        assert_eq!(ch[0].to, Lifecycle::Working);
        assert!(!ch[0].notify);
        // Dispatches are sticky; an empty list clears them.
        b.apply(s(6), "%1", Report::new("working")).unwrap();
        assert_eq!(b.reporter("%1").unwrap().dispatches(), ["%4"]);
        b.apply(s(7), "%1", Report::new("working").dispatches(&[]))
            .unwrap();
        assert!(b.reporter("%1").unwrap().dispatches().is_empty());
        // A dispatcher waiting on the user shows waiting, not dispatching.
        b.apply(
            s(8),
            "%1",
            Report::new("waiting")
                .reason("question")
                .dispatches(&["%4"]),
        )
        .unwrap();
        assert_eq!(shown(&b, "%1"), Lifecycle::Waiting);
    }

    #[test]
    fn dispatcher_with_quiet_children_and_own_signs_goes_quiet() {
        let mut b = book();
        b.apply(
            s(0),
            "%1",
            Report::new("working").every(s(60)).dispatches(&["%4"]),
        )
        .unwrap();
        let quiet_child_busy_me = |p: &str| Alive {
            last_output: None,
            cpu_busy: p == "%1",
            life: PaneLife::Quiet,
        };
        let ch = b.tick(s(120), &quiet_child_busy_me);
        assert_eq!(ch[0].to, Lifecycle::Quiet);
    }

    #[test]
    fn stopped_goes_gone_without_notice() {
        let mut b = book();
        b.apply(
            s(0),
            "%1",
            Report::new("stopped")
                .every(s(60))
                .message("quota exhausted"),
        )
        .unwrap();
        let e = b.effective(s(1), "%1", &screen_none());
        assert_eq!(e.state, Some(State::Exited));
        assert_eq!(e.message.as_deref(), Some("quota exhausted"));
        // Other signs of life do not hold a stopped agent.
        let busy = |_: &str| Alive {
            cpu_busy: true,
            ..Alive::NONE
        };
        assert!(b.tick(s(119), &busy).is_empty());
        let ch = b.tick(s(120), &busy);
        assert_eq!(ch[0].from, Lifecycle::Stopped);
        assert_eq!(ch[0].to, Lifecycle::Gone);
        assert!(!ch[0].notify);
        assert_eq!(
            b.reporter("%1").unwrap().phase(),
            Phase::Gone {
                at: s(120),
                notify: false
            }
        );
    }

    #[test]
    fn labels_never_affect_state() {
        let mut b = book();
        assert_eq!(b.set_label("%1", Some("review bot")), None);
        let e = b.effective(s(0), "%1", &screen_none());
        assert_eq!(e.label.as_deref(), Some("review bot"));
        assert_eq!((e.state, e.authority), (None, Authority::Screen));
        b.apply(s(0), "%1", Report::new("done")).unwrap();
        let e = b.effective(s(0), "%1", &screen_none());
        assert_eq!(e.label.as_deref(), Some("review bot"));
        assert_eq!(e.state, Some(State::Completed));
        // Release keeps the label; forget (pane closed) drops it.
        b.release("%1");
        assert_eq!(b.label("%1"), Some("review bot"));
        assert_eq!(b.set_label("%1", Some("  ")).as_deref(), Some("review bot"));
        assert_eq!(b.label("%1"), None);
        b.set_label("%1", Some("x"));
        b.forget("%1");
        assert_eq!(b.label("%1"), None);
    }

    #[test]
    fn agent_and_every_are_sticky_message_is_not() {
        let mut b = book();
        b.apply(
            s(0),
            "%1",
            Report::new("working")
                .agent("codex")
                .every(s(30))
                .message("m"),
        )
        .unwrap();
        b.apply(s(1), "%1", Report::new("idle")).unwrap();
        let r = b.reporter("%1").unwrap();
        assert_eq!(r.agent(), Some("codex"));
        assert_eq!(r.every(), Some(s(30)));
        assert_eq!(r.message(), None);
    }

    #[test]
    fn serde_round_trip() {
        let mut b = book();
        b.apply(
            s(5),
            "%1",
            Report::new("waiting")
                .reason("question")
                .every(s(90))
                .message("Which one?")
                .agent("claude")
                .seq(7),
        )
        .unwrap();
        b.apply(
            s(5),
            "%2",
            Report::new("working").every(s(60)).dispatches(&["%4"]),
        )
        .unwrap();
        b.apply(s(5), "%3", Report::new("handing-over")).unwrap();
        b.set_label("%2", Some("dispatcher"));
        b.tick(s(200), &dead);
        let text = serde_json::to_string(&b).unwrap();
        assert!(text.contains("\"90s\""), "{text}");
        assert!(text.contains("handing-over"), "{text}");
        let back: ReportBook = serde_json::from_str(&text).unwrap();
        assert_eq!(back, b);
        assert!(serde_json::from_str::<ReportBook>("{\"reporters\": 3}").is_err());
        // Reports travel as JSON too.
        let r = Report::new("working").every(s(60)).seq(3);
        let t = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<Report>(&t).unwrap(), r);
        let r: Report = serde_json::from_str(r#"{"state":"done"}"#).unwrap();
        assert_eq!(r, Report::new("done"));
        assert!(serde_json::from_str::<Report>(r#"{"state":"done","every":"soon"}"#).is_err());
        // Config with human durations.
        let c: ReportConfig = toml::from_str("waiting_quiet_for = \"6h\"").unwrap();
        assert_eq!(c.waiting_quiet_for, h(6));
        assert_eq!(c.handover_silence, s(120));
    }

    #[test]
    fn deterministic_across_tick_granularity() {
        // The same inputs give the same final state whether ticked every
        // second or once.
        let run = |step: u64| {
            let mut b = book();
            b.apply(s(0), "%1", Report::new("waiting").every(s(60)))
                .unwrap();
            b.apply(s(0), "%2", Report::new("stopped").every(s(60)))
                .unwrap();
            b.apply(s(0), "%3", Report::new("done")).unwrap();
            let mut t = 0;
            while t < 40_000 {
                t += step;
                b.tick(s(t), &dead);
            }
            b.tick(s(40_000), &dead);
            b.panes()
                .map(|(p, r)| (p.to_owned(), r.lifecycle(), r.phase()))
                .collect::<Vec<_>>()
        };
        let fine = run(1);
        let coarse = run(40_000);
        assert_eq!(fine[0].2, Phase::Quiet { since: s(120) });
        assert_eq!(fine[0].2, coarse[0].2);
        assert_eq!(fine[2].1, Lifecycle::Done);
        assert_eq!(
            fine.iter().map(|x| x.1).collect::<Vec<_>>(),
            coarse.iter().map(|x| x.1).collect::<Vec<_>>()
        );
    }
}
