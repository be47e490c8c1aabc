//! One pane's reporter and its lease: what it posted, the phase it is in
//! (posted, dispatching, quiet, gone) and the time step that moves it when
//! the lease runs out.
//!
//! Separate because the lease rules are the subtle part of the report model
//! and concern one pane only; the book and the authority build on them.

use super::*;

/// Where a reporter is beyond what it posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "phase")]
pub enum Phase {
    /// As posted (shown as `dispatching` when a running state has live
    /// dispatched panes).
    Posted,
    /// The lease ran out while dispatched panes live.
    Dispatching,
    /// The lease ran out; alive another way (or waiting on the user).
    Quiet {
        /// When the quiet began (the lease's end).
        since: Duration,
    },
    /// Something ran out; the report authority is over.
    Gone {
        /// When (tick time).
        at: Duration,
        /// Whether the user is told.
        notify: bool,
    },
}

/// One pane's self-report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reporter {
    pub(super) posted: Lifecycle,
    pub(super) reason: Option<WaitReason>,
    pub(super) message: Option<String>,
    pub(super) agent: Option<String>,
    #[serde(with = "opt_dur", default)]
    pub(super) every: Option<Duration>,
    #[serde(default)]
    pub(super) dispatches: Vec<String>,
    #[serde(default)]
    pub(super) live_children: Vec<String>,
    pub(super) seq: u64,
    pub(super) posted_at: Duration,
    pub(super) phase: Phase,
    #[serde(skip)]
    pub(super) recheck: Option<Duration>,
}

/// How a posted state ends.
pub(super) enum Lease {
    /// done, stuck: only by the next report.
    None,
    /// stopped: gone at `2E`, no notification.
    Stopped,
    /// waiting on the user: quiet at `2E`, gone after the quiet window.
    OnUser,
    /// handing-over: silent and holding nothing.
    Handover,
    /// everything else: dispatching, quiet or gone at `2E`.
    Running,
}

impl Reporter {
    /// The last posted state.
    pub fn posted(&self) -> Lifecycle {
        self.posted
    }

    /// Its `--reason`, with `waiting`.
    pub fn reason(&self) -> Option<WaitReason> {
        self.reason
    }

    /// The last status text (kept through quiet).
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The agent it said it is.
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// The lease period.
    pub fn every(&self) -> Option<Duration> {
        self.every
    }

    /// The panes it declared with `--dispatches`.
    pub fn dispatches(&self) -> &[String] {
        &self.dispatches
    }

    /// Those of them alive at the last tick.
    pub fn live_children(&self) -> &[String] {
        &self.live_children
    }

    /// The last accepted sequence number.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// When it last posted.
    pub fn posted_at(&self) -> Duration {
        self.posted_at
    }

    /// Its phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The lifecycle state shown for it.
    pub fn lifecycle(&self) -> Lifecycle {
        match self.phase {
            Phase::Gone { .. } => Lifecycle::Gone,
            Phase::Quiet { .. } => Lifecycle::Quiet,
            Phase::Dispatching => Lifecycle::Dispatching,
            Phase::Posted if self.posted.is_running() && !self.live_children.is_empty() => {
                Lifecycle::Dispatching
            }
            Phase::Posted => self.posted,
        }
    }

    /// Whether it is the pane's authority (not gone).
    pub fn is_live(&self) -> bool {
        !matches!(self.phase, Phase::Gone { .. })
    }

    /// The word for display: `working`, `quiet · 12m`,
    /// `dispatching %4, %5`, `waiting · for an item`, `gone`.
    pub fn word(&self, now: Duration) -> String {
        match self.lifecycle() {
            Lifecycle::Quiet => format!("quiet · {}", minutes(now.saturating_sub(self.posted_at))),
            Lifecycle::Dispatching => format!("dispatching {}", self.live_children.join(", ")),
            Lifecycle::Waiting if self.reason == Some(WaitReason::Work) => {
                "waiting · for an item".to_owned()
            }
            l => l.as_str().to_owned(),
        }
    }

    pub(super) fn waits_on_user(&self) -> bool {
        self.posted == Lifecycle::Waiting && self.reason != Some(WaitReason::Work)
    }

    pub(super) fn lease(&self) -> Lease {
        match self.posted {
            Lifecycle::Done | Lifecycle::Stuck => Lease::None,
            Lifecycle::Stopped => Lease::Stopped,
            Lifecycle::HandingOver => Lease::Handover,
            _ if self.waits_on_user() => Lease::OnUser,
            _ => Lease::Running,
        }
    }

    /// When the lease runs out (`posted_at + 2E`), for leased states.
    pub(super) fn lease_end(&self) -> Option<Duration> {
        match self.lease() {
            Lease::None | Lease::Handover => None,
            _ => self.every.map(|e| self.posted_at + e * 2),
        }
    }

    /// The tend state and reason of a live report.
    pub(super) fn mapped(&self) -> (State, Option<Reason>, bool) {
        let on_user = match self.reason {
            Some(WaitReason::User(r)) => r,
            _ => Reason::Prompt,
        };
        match self.lifecycle() {
            Lifecycle::Quiet if self.waits_on_user() => (State::Waiting, Some(on_user), false),
            Lifecycle::Quiet => (State::Working, None, true),
            Lifecycle::Up
            | Lifecycle::Working
            | Lifecycle::Merging
            | Lifecycle::Warning
            | Lifecycle::HandingOver
            | Lifecycle::Dispatching => (State::Working, None, false),
            Lifecycle::Idle => (State::Idle, None, false),
            Lifecycle::Waiting if self.reason == Some(WaitReason::Work) => {
                (State::Idle, None, false)
            }
            Lifecycle::Waiting => (State::Waiting, Some(on_user), false),
            Lifecycle::Stuck => (State::Waiting, Some(Reason::Error), false),
            Lifecycle::Done => (State::Completed, None, false),
            Lifecycle::Stopped | Lifecycle::Gone => (State::Exited, None, false),
        }
    }
}

fn minutes(d: Duration) -> String {
    let m = d.as_secs() / 60;
    if m < 60 {
        format!("{m}m")
    } else if m % 60 == 0 {
        format!("{}h", m / 60)
    } else {
        format!("{}h {}m", m / 60, m % 60)
    }
}

/// One reporter's time step (it is live).
pub(super) fn step(r: &mut Reporter, now: Duration, cfg: &ReportConfig, signs: &Alive) {
    let every = r.every;
    let lapsed = r.lease_end().is_some_and(|end| now >= end);
    match r.lease() {
        Lease::None => r.phase = Phase::Posted,
        Lease::Stopped => {
            if lapsed {
                r.phase = Phase::Gone {
                    at: now,
                    notify: false,
                };
            }
        }
        Lease::OnUser => {
            if let Some(end) = r.lease_end().filter(|_| lapsed) {
                let since = match r.phase {
                    Phase::Quiet { since } => since,
                    _ => end,
                };
                r.phase = if now >= since + cfg.waiting_quiet_for {
                    Phase::Gone {
                        at: now,
                        notify: true,
                    }
                } else {
                    Phase::Quiet { since }
                };
            }
        }
        Lease::Handover => {
            let window = cfg.handover_silence;
            if now >= r.posted_at + window {
                if r.live_children.is_empty() && !signs.within(now, window) {
                    r.phase = Phase::Gone {
                        at: now,
                        notify: true,
                    };
                } else {
                    r.recheck = Some(now + window);
                }
            }
        }
        Lease::Running => {
            let (Some(end), Some(e)) = (r.lease_end(), every) else {
                return;
            };
            if now < end {
                return;
            }
            r.phase = if !r.live_children.is_empty() {
                r.recheck = Some(now + e);
                Phase::Dispatching
            } else if signs.within(now, e) {
                r.recheck = Some(now + e);
                match r.phase {
                    Phase::Quiet { since } => Phase::Quiet { since },
                    _ => Phase::Quiet { since: end },
                }
            } else {
                Phase::Gone {
                    at: now,
                    notify: true,
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::*;

    #[test]
    fn lease_runs_out_to_gone_with_notice() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("working").every(s(60)))
            .unwrap();
        assert_eq!(b.next_deadline(), Some(s(120)));
        assert!(b.tick(s(119), &dead).is_empty());
        assert_eq!(shown(&b, "%1"), Lifecycle::Working);
        let ch = b.tick(s(120), &dead);
        assert_eq!(
            ch,
            vec![Change {
                pane: "%1".into(),
                from: Lifecycle::Working,
                to: Lifecycle::Gone,
                at: s(120),
                notify: true
            }]
        );
        assert_eq!(b.authority("%1"), Authority::Screen);
        assert_eq!(b.next_deadline(), None);
        // Nothing more happens once gone.
        assert!(b.tick(h(1), &dead).is_empty());
        // Posting again revives it.
        let a = b.apply(h(1), "%1", Report::new("working")).unwrap();
        assert_eq!(a.from, Some(Lifecycle::Gone));
        assert_eq!(b.authority("%1"), Authority::Report);
        // `every` is sticky.
        assert_eq!(b.reporter("%1").unwrap().every(), Some(s(60)));
        assert_eq!(b.next_deadline(), Some(h(1) + s(120)));
    }

    #[test]
    fn each_post_renews_the_lease() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("working").every(s(60)))
            .unwrap();
        for t in (50..=500).step_by(50) {
            b.apply(s(t), "%1", Report::new("working")).unwrap();
            assert!(b.tick(s(t + 10), &dead).is_empty());
        }
        assert_eq!(b.next_deadline(), Some(s(620)));
    }

    #[test]
    fn merging_up_idle_warning_are_leased_like_working() {
        for state in ["merging", "up", "idle", "warning"] {
            let mut b = book();
            b.apply(s(0), "%1", Report::new(state).every(s(30)))
                .unwrap();
            assert!(b.tick(s(59), &dead).is_empty(), "{state}");
            let ch = b.tick(s(60), &dead);
            assert_eq!(ch[0].to, Lifecycle::Gone, "{state}");
            assert!(ch[0].notify);
        }
        // Waiting for an item is not waiting on the user: it goes gone too.
        let mut b = book();
        b.apply(
            s(0),
            "%1",
            Report::new("waiting").reason("work").every(s(30)),
        )
        .unwrap();
        assert_eq!(
            b.reporter("%1").unwrap().word(s(0)),
            "waiting · for an item"
        );
        assert_eq!(b.tick(s(60), &dead)[0].to, Lifecycle::Gone);
    }

    #[test]
    fn no_every_means_no_lease() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("working")).unwrap();
        assert_eq!(b.next_deadline(), None);
        assert!(b.tick(h(48), &dead).is_empty());
        assert_eq!(shown(&b, "%1"), Lifecycle::Working);
    }

    #[test]
    fn quiet_is_kept_alive_by_output_then_gone() {
        let mut b = book();
        b.apply(
            s(0),
            "%1",
            Report::new("working").every(s(60)).message("compiling"),
        )
        .unwrap();
        let output_at = |t: u64| {
            move |_: &str| Alive {
                last_output: Some(s(t)),
                cpu_busy: false,
                life: PaneLife::Live,
            }
        };
        let ch = b.tick(s(120), &output_at(100));
        assert_eq!(ch[0].to, Lifecycle::Quiet);
        assert!(!ch[0].notify);
        let r = b.reporter("%1").unwrap();
        assert_eq!(r.phase(), Phase::Quiet { since: s(120) });
        assert_eq!(r.word(m(12)), "quiet · 12m");
        assert_eq!(r.message(), Some("compiling"));
        assert_eq!(b.authority("%1"), Authority::Report);
        assert_eq!(b.next_deadline(), Some(s(180)));
        // Output keeps coming: still quiet.
        assert!(b.tick(s(300), &output_at(290)).is_empty());
        // CPU alone keeps it quiet too.
        let cpu = |_: &str| Alive {
            cpu_busy: true,
            ..Alive::NONE
        };
        assert!(b.tick(s(1000), &cpu).is_empty());
        // Output older than one lease period: the other sign stopped too.
        let ch = b.tick(s(1100), &output_at(1000));
        assert_eq!(ch[0].from, Lifecycle::Quiet);
        assert_eq!(ch[0].to, Lifecycle::Gone);
        assert!(ch[0].notify);
        // Its own next status clears quiet.
        let mut b = book();
        b.apply(s(0), "%1", Report::new("working").every(s(60)))
            .unwrap();
        b.tick(s(120), &output_at(110));
        let a = b.apply(s(130), "%1", Report::new("working")).unwrap();
        assert_eq!(a.from, Some(Lifecycle::Quiet));
        assert_eq!(a.to, Lifecycle::Working);
    }

    #[test]
    fn quiet_display_words() {
        assert_eq!(minutes(s(59)), "0m");
        assert_eq!(minutes(m(12)), "12m");
        assert_eq!(minutes(h(3)), "3h");
        assert_eq!(minutes(h(3) + m(5)), "3h 5m");
    }

    #[test]
    fn done_stays_done() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("done").every(s(10)))
            .unwrap();
        assert_eq!(b.next_deadline(), None);
        assert!(b.tick(h(100), &dead).is_empty());
        assert_eq!(shown(&b, "%1"), Lifecycle::Done);
        let e = b.effective(h(100), "%1", &screen_none());
        assert_eq!(e.state, Some(State::Completed));
        assert_eq!(e.authority, Authority::Report);
        // Until it posts again.
        b.apply(h(100), "%1", Report::new("working")).unwrap();
        assert_eq!(shown(&b, "%1"), Lifecycle::Working);
        assert_eq!(b.next_deadline(), Some(h(100) + s(20)));
    }

    #[test]
    fn stuck_has_no_exit_but_its_next_status() {
        let mut b = book();
        b.apply(
            s(0),
            "%1",
            Report::new("stuck").every(s(10)).message("tests hang"),
        )
        .unwrap();
        assert!(b.tick(h(5), &dead).is_empty());
        let e = b.effective(h(5), "%1", &screen_none());
        assert_eq!(
            (e.state, e.reason),
            (Some(State::Waiting), Some(Reason::Error))
        );
        assert_eq!(e.message.as_deref(), Some("tests hang"));
        let a = b.apply(h(5), "%1", Report::new("working")).unwrap();
        assert_eq!(a.from, Some(Lifecycle::Stuck));
        assert_eq!(a.to, Lifecycle::Working);
        // The message went with the state it described.
        assert_eq!(b.reporter("%1").unwrap().message(), None);
    }

    #[test]
    fn waiting_on_the_user_goes_quiet_for_12h_then_gone() {
        let mut b = book();
        b.apply(
            s(0),
            "%1",
            Report::new("waiting")
                .reason("question")
                .every(s(60))
                .message("Which branch?"),
        )
        .unwrap();
        assert_eq!(b.next_deadline(), Some(s(120)));
        // No other sign of life is needed.
        let ch = b.tick(s(120), &dead);
        assert_eq!(ch[0].to, Lifecycle::Quiet);
        assert!(!ch[0].notify);
        let e = b.effective(h(2), "%1", &screen_none());
        // Still a demand: the question stands.
        assert_eq!(
            (e.state, e.reason, e.quiet),
            (Some(State::Waiting), Some(Reason::Question), false)
        );
        assert_eq!(e.word.as_deref(), Some("quiet · 2h"));
        assert_eq!(e.message.as_deref(), Some("Which branch?"));
        assert_eq!(b.next_deadline(), Some(s(120) + h(12)));
        assert!(b.tick(s(119) + h(12), &dead).is_empty());
        let ch = b.tick(s(120) + h(12), &dead);
        assert_eq!(ch[0].from, Lifecycle::Quiet);
        assert_eq!(ch[0].to, Lifecycle::Gone);
        assert!(ch[0].notify);
        // A late tick jumps straight through.
        let mut b = book();
        b.apply(s(0), "%1", Report::new("waiting").every(s(60)))
            .unwrap();
        let ch = b.tick(h(20), &dead);
        assert_eq!(ch[0].from, Lifecycle::Waiting);
        assert_eq!(ch[0].to, Lifecycle::Gone);
    }

    #[test]
    fn waiting_reason_defaults_to_prompt() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("waiting")).unwrap();
        let e = b.effective(s(0), "%1", &screen_none());
        assert_eq!(
            (e.state, e.reason),
            (Some(State::Waiting), Some(Reason::Prompt))
        );
        b.apply(s(1), "%1", Report::new("waiting").reason("approval"))
            .unwrap();
        let e = b.effective(s(1), "%1", &screen_none());
        assert_eq!(e.reason, Some(Reason::Approval));
    }

    #[test]
    fn handing_over_ends_at_next_report() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("handing-over").every(s(10)))
            .unwrap();
        // Not measured by its every.
        assert!(b.tick(s(60), &dead).is_empty());
        let a = b.apply(s(61), "%1", Report::new("up")).unwrap();
        assert_eq!(a.from, Some(Lifecycle::HandingOver));
        assert_eq!(a.to, Lifecycle::Up);
    }

    #[test]
    fn handing_over_ends_once_silent_and_holding_nothing() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("handing-over")).unwrap();
        assert_eq!(b.next_deadline(), Some(s(120)));
        let typing = |_: &str| Alive {
            last_output: Some(s(110)),
            cpu_busy: false,
            life: PaneLife::Live,
        };
        assert!(b.tick(s(120), &typing).is_empty());
        assert_eq!(b.next_deadline(), Some(s(240)));
        let ch = b.tick(s(240), &typing);
        assert_eq!(ch[0].from, Lifecycle::HandingOver);
        assert_eq!(ch[0].to, Lifecycle::Gone);
        assert!(ch[0].notify);

        // Holding a dispatched pane keeps it.
        let mut b = book();
        b.apply(s(0), "%1", Report::new("handing-over").dispatches(&["%4"]))
            .unwrap();
        let child_live = |p: &str| Alive {
            life: if p == "%4" {
                PaneLife::Live
            } else {
                PaneLife::Gone
            },
            ..Alive::NONE
        };
        assert!(b.tick(s(500), &child_live).is_empty());
        assert_eq!(shown(&b, "%1"), Lifecycle::HandingOver);
        let ch = b.tick(s(600), &dead);
        assert_eq!(ch[0].to, Lifecycle::Gone);
    }
}
