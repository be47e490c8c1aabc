//! The [`Notifier`] state machine: it takes happenings, decides which are
//! news (entering or changing a demand, not focused, not in quiet hours,
//! not at first sight) and groups bursts within the window.
//!
//! Separate because it is the stateful part; the settings and the wording
//! it uses live beside it.

use super::compose::{compose, Entry, Subject, SOMEONE};
use super::*;

/// Panes seen for the first time this soon after the clock's start (the
/// daemon's start) are not notified: they were in that state before tend
/// looked.
pub const FIRST_SIGHT_GRACE: Duration = Duration::from_secs(5);

/// The notification state machine. See the module documentation.
#[derive(Debug, Clone)]
pub struct Notifier {
    policy: Policy,
    /// The open burst.
    pending: Vec<Entry>,
    /// When the open burst closes.
    deadline: Option<Duration>,
    /// Notifications ready to deliver.
    ready: VecDeque<Notification>,
    /// Last known display name and session per pane (park releases and
    /// gone events do not carry them).
    known: HashMap<String, (String, Option<String>)>,
}

impl Notifier {
    /// A notifier with nothing pending.
    pub fn new(policy: Policy) -> Notifier {
        Notifier {
            policy,
            pending: Vec::new(),
            deadline: None,
            ready: VecDeque::new(),
            known: HashMap::new(),
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Feeds one happening at `now` (time since the daemon started, on
    /// any monotonic clock) and local time of day `local`.
    pub fn handle(&mut self, now: Duration, local: TimeOfDay, h: Happening) {
        match h {
            Happening::Status(s) => self.status(now, local, s),
            Happening::ParkReleased {
                pane,
                gate,
                note,
                gate_gone,
            } => {
                // The release speaks for the pane: its status entries go.
                self.pending.retain(|e| e.pane != pane);
                if !self.allowed(local, self.policy.switches.park_released) {
                    return;
                }
                let subject = Subject::Park {
                    gate,
                    note,
                    gate_gone,
                };
                self.push(now, pane, subject, None, None);
            }
            Happening::Gone { pane, notify } => {
                if !notify || !self.allowed(local, self.policy.switches.gone) {
                    return;
                }
                self.pending
                    .retain(|e| !(e.pane == pane && e.subject == Subject::Gone));
                self.push(now, pane, Subject::Gone, None, None);
            }
            Happening::Resumed { pane, text } => {
                if !self.allowed(local, self.policy.switches.limit) {
                    return;
                }
                self.push(now, pane, Subject::Resumed(text), None, None);
            }
            Happening::Closed { pane } => {
                self.pending
                    .retain(|e| e.pane != pane || e.subject == Subject::Gone);
                self.known.remove(&pane);
            }
        }
        if self.policy.group_window.is_zero() {
            self.handle_timeout(now);
        }
    }

    fn status(&mut self, now: Duration, local: TimeOfDay, s: StatusChange) {
        let known = self.known.entry(s.pane.clone()).or_default();
        if let Some(n) = s.name.as_ref().filter(|n| !n.trim().is_empty()) {
            known.0 = n.trim().to_owned();
        }
        if s.session.is_some() {
            known.1 = s.session.clone();
        }
        if s.prev_band.is_none() && s.prev_state.is_none() && now < FIRST_SIGHT_GRACE {
            // First sight of the pane as tend starts: it was like that
            // before anyone was watching; the status line shows it.
            return;
        }
        let subject = match (s.band, s.state) {
            (Some(b), Some(state)) if b.is_demand() => {
                let entered = !s.prev_band.is_some_and(|p| p.is_demand());
                let changed = (s.prev_state, s.prev_reason) != (Some(state), s.reason);
                if entered || changed {
                    Some(Subject::Demand(state, s.reason))
                } else {
                    // Same demand as before (an authority or a flag
                    // changed): whatever is pending stands.
                    return;
                }
            }
            (Some(Band::Quiet), _) if s.prev_band != Some(Band::Quiet) => Some(Subject::Quiet),
            (Some(Band::Quiet), _) => return,
            (Some(Band::Limited), _) if s.prev_band != Some(Band::Limited) => {
                Some(Subject::Limited(s.resets.clone()))
            }
            (Some(Band::Limited), _) => return,
            _ => None,
        };
        // A newer status replaces the pane's pending status entry; a pane
        // that stopped demanding, or that the user is looking at, drops it.
        let parked = self
            .pending
            .iter()
            .any(|e| e.pane == s.pane && matches!(e.subject, Subject::Park { .. }));
        self.pending
            .retain(|e| !(e.pane == s.pane && e.subject.is_status()));
        let Some(subject) = subject else { return };
        if s.focused || parked {
            return;
        }
        let sw = &self.policy.switches;
        let on = match &subject {
            Subject::Demand(State::Waiting, Some(Reason::Approval)) => sw.approval,
            Subject::Demand(State::Waiting, Some(Reason::Question)) => sw.question,
            Subject::Demand(State::Waiting, Some(Reason::Error)) => sw.error,
            Subject::Demand(State::Waiting, Some(Reason::Limit)) => sw.limit,
            Subject::Limited(_) => sw.limit,
            Subject::Demand(State::Waiting, _) => sw.prompt,
            Subject::Demand(_, _) => sw.completed,
            Subject::Quiet => sw.quiet,
            Subject::Park { .. } | Subject::Gone | Subject::Resumed(_) => false,
        };
        if !self.allowed(local, on) {
            return;
        }
        self.push(now, s.pane, subject, s.name, s.message);
    }

    fn allowed(&self, local: TimeOfDay, switch: bool) -> bool {
        self.policy.enabled && switch && !self.policy.quiet_hours.is_some_and(|q| q.contains(local))
    }

    fn push(
        &mut self,
        now: Duration,
        pane: String,
        subject: Subject,
        name: Option<String>,
        message: Option<String>,
    ) {
        let (known_name, session) = self.known.get(&pane).cloned().unwrap_or_default();
        let name = name
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .or_else(|| Some(known_name).filter(|n| !n.is_empty()))
            .unwrap_or_else(|| SOMEONE.to_owned());
        self.pending.push(Entry {
            pane,
            name,
            session,
            subject,
            message,
        });
        if self.deadline.is_none() {
            self.deadline = Some(now + self.policy.group_window);
        }
    }

    /// When [`Notifier::handle_timeout`] should next be called: the close
    /// of the open burst. `None` when nothing is pending.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.deadline
    }

    /// Closes the burst if its window is over.
    pub fn handle_timeout(&mut self, now: Duration) {
        let Some(d) = self.deadline else { return };
        if now < d {
            return;
        }
        self.deadline = None;
        let mut entries = std::mem::take(&mut self.pending);
        if entries.is_empty() {
            return;
        }
        entries.sort_by_key(|e| e.subject.rank());
        self.ready.push_back(compose(&entries));
    }

    /// The next notification to deliver.
    pub fn poll_notification(&mut self) -> Option<Notification> {
        self.ready.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::testutil::*;

    #[test]
    fn one_pane_entering_approval() {
        let mut n = Notifier::new(Policy::default());
        n.handle(ms(1000), NOON, waiting("%3", "Claude", Reason::Approval));
        assert_eq!(n.poll_timeout(), Some(ms(1200)));
        assert!(run(&mut n, 1000, 1190).is_empty(), "held for the window");
        let out = run(&mut n, 1200, 1300);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].title, "Claude is waiting for approval");
        assert_eq!(out[0].body, "%3 in session main");
        assert_eq!(out[0].panes, vec!["%3"]);
        assert_eq!(out[0].urgency, Urgency::Normal);
        assert_eq!(n.poll_timeout(), None);
    }

    #[test]
    fn only_entering_or_changing_a_demand_counts() {
        let mut n = Notifier::new(Policy::default());
        // Already waiting for approval; only the authority changed.
        let mut c = change("%1", "Claude", State::Waiting, Some(Reason::Approval));
        c.prev_state = Some(State::Waiting);
        c.prev_reason = Some(Reason::Approval);
        c.prev_band = Some(Band::Waiting);
        n.handle(ms(0), NOON, Happening::Status(c.clone()));
        assert_eq!(n.poll_timeout(), None);
        // Working, idle, exited, finished: no demand.
        for state in [State::Working, State::Idle, State::Exited] {
            n.handle(
                ms(0),
                NOON,
                Happening::Status(change("%2", "Claude", state, None)),
            );
        }
        assert_eq!(n.poll_timeout(), None);
        // A question that becomes an approval dialog is a new demand.
        c.prev_reason = Some(Reason::Question);
        n.handle(ms(0), NOON, Happening::Status(c));
        let out = run(&mut n, 0, 300);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].title, "Claude is waiting for approval");
    }

    #[test]
    fn not_for_the_pane_being_looked_at() {
        let mut n = Notifier::new(Policy::default());
        let mut c = change("%1", "Claude", State::Waiting, Some(Reason::Approval));
        c.focused = true;
        n.handle(ms(0), NOON, Happening::Status(c));
        assert!(run(&mut n, 0, 500).is_empty());
        // Focused after it entered, within the window: dropped too.
        n.handle(ms(600), NOON, waiting("%2", "Codex", Reason::Question));
        let mut c = change("%2", "Codex", State::Waiting, Some(Reason::Question));
        c.focused = true;
        c.prev_state = Some(State::Waiting);
        c.prev_reason = Some(Reason::Question);
        c.prev_band = Some(Band::Waiting);
        // Same demand but focused now: it stands (focus alone is no
        // status change), so the decision is made at entry.
        n.handle(ms(650), NOON, Happening::Status(c));
        assert_eq!(run(&mut n, 600, 900).len(), 1);
    }

    #[test]
    fn a_burst_is_one_notification() {
        let mut n = Notifier::new(Policy::default());
        n.handle(ms(0), NOON, waiting("%1", "Claude", Reason::Approval));
        n.handle(ms(50), NOON, waiting("%2", "Codex", Reason::Approval));
        n.handle(ms(190), NOON, waiting("%3", "Gemini", Reason::Approval));
        let out = run(&mut n, 0, 400);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].title, "3 agents are waiting for approval");
        assert_eq!(out[0].panes, vec!["%1", "%2", "%3"]);
        assert_eq!(
            out[0].body.lines().next(),
            Some("Claude is waiting for approval (%1 in session main)")
        );
        // After the window: a new burst.
        n.handle(ms(500), NOON, waiting("%4", "Aider", Reason::Prompt));
        let out = run(&mut n, 500, 800);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].title, "Aider is waiting for input");
    }

    #[test]
    fn a_pane_appears_once_per_burst_with_its_latest_demand() {
        let mut n = Notifier::new(Policy::default());
        n.handle(ms(0), NOON, waiting("%1", "Claude", Reason::Approval));
        n.handle(ms(10), NOON, waiting("%1", "Claude", Reason::Approval));
        let out = run(&mut n, 0, 300);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].title, "Claude is waiting for approval");
        // Question, then approval within the window: one, the approval.
        n.handle(ms(400), NOON, waiting("%1", "Claude", Reason::Question));
        let mut c = change("%1", "Claude", State::Waiting, Some(Reason::Approval));
        c.prev_state = Some(State::Waiting);
        c.prev_reason = Some(Reason::Question);
        c.prev_band = Some(Band::Waiting);
        n.handle(ms(450), NOON, Happening::Status(c));
        let out = run(&mut n, 400, 700);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].title, "Claude is waiting for approval");
        assert_eq!(out[0].panes, vec!["%1"]);
    }

    #[test]
    fn answered_within_the_window_is_not_sent() {
        let mut n = Notifier::new(Policy::default());
        n.handle(ms(0), NOON, waiting("%1", "Claude", Reason::Approval));
        let mut back = change("%1", "Claude", State::Working, None);
        back.prev_state = Some(State::Waiting);
        back.prev_band = Some(Band::Waiting);
        n.handle(ms(100), NOON, Happening::Status(back));
        assert!(run(&mut n, 0, 400).is_empty());
        n.handle(ms(500), NOON, waiting("%2", "Claude", Reason::Approval));
        n.handle(
            ms(550),
            NOON,
            Happening::Closed {
                pane: "%2".to_owned(),
            },
        );
        assert!(run(&mut n, 500, 900).is_empty());
    }

    #[test]
    fn switches() {
        let policy = Policy {
            switches: Switches {
                question: false,
                completed: false,
                ..Switches::default()
            },
            ..Policy::default()
        };
        let mut n = Notifier::new(policy);
        n.handle(ms(0), NOON, waiting("%1", "Codex", Reason::Question));
        n.handle(
            ms(0),
            NOON,
            Happening::Status(change("%2", "Claude", State::Completed, None)),
        );
        assert!(run(&mut n, 0, 300).is_empty());
        n.handle(ms(400), NOON, waiting("%1", "Codex", Reason::Approval));
        assert_eq!(run(&mut n, 400, 700).len(), 1);

        // Quiet is off by default, on when asked for.
        let mut quiet = change("%1", "Claude", State::Working, None);
        quiet.band = Some(Band::Quiet);
        let mut n = Notifier::new(Policy::default());
        n.handle(ms(0), NOON, Happening::Status(quiet.clone()));
        assert!(run(&mut n, 0, 300).is_empty());
        let mut n = Notifier::new(Policy {
            switches: Switches {
                quiet: true,
                ..Switches::default()
            },
            ..Policy::default()
        });
        n.handle(ms(0), NOON, Happening::Status(quiet));
        let out = run(&mut n, 0, 300);
        assert_eq!(out[0].title, "Claude has gone quiet");
        assert_eq!(out[0].urgency, Urgency::Low);

        // Everything off.
        let mut n = Notifier::new(Policy {
            enabled: false,
            ..Policy::default()
        });
        n.handle(ms(0), NOON, waiting("%1", "Claude", Reason::Approval));
        assert!(run(&mut n, 0, 300).is_empty());
    }

    #[test]
    fn quiet_hours() {
        let q: QuietHours = "22:00-07:00".parse().unwrap();
        assert!(q.contains(TimeOfDay::hm(22, 0)));
        assert!(q.contains(TimeOfDay::hm(23, 59)));
        assert!(q.contains(TimeOfDay::hm(0, 0)));
        assert!(q.contains(TimeOfDay::hm(6, 59)));
        assert!(!q.contains(TimeOfDay::hm(7, 0)));
        assert!(!q.contains(NOON));
        let day: QuietHours = "12:30-13:30".parse().unwrap();
        assert!(day.contains(TimeOfDay::hm(12, 30)));
        assert!(!day.contains(TimeOfDay::hm(13, 30)));
        assert!(!day.contains(TimeOfDay::hm(9, 0)));
        assert_eq!(day.to_string(), "12:30-13:30");
        assert!("22:00"
            .parse::<QuietHours>()
            .unwrap_err()
            .contains("start-end"));
        assert!("25:00-07:00"
            .parse::<QuietHours>()
            .unwrap_err()
            .contains("00:00 to 23:59"));
        assert!("9-17".parse::<QuietHours>().unwrap_err().contains("HH:MM"));
        assert!("08:00-08:00"
            .parse::<QuietHours>()
            .unwrap_err()
            .contains("same time"));
        assert_eq!("7:05".parse::<TimeOfDay>(), Ok(TimeOfDay::hm(7, 5)));

        let mut n = Notifier::new(Policy {
            quiet_hours: Some(q),
            ..Policy::default()
        });
        n.handle(
            ms(0),
            TimeOfDay::hm(23, 10),
            waiting("%1", "Claude", Reason::Approval),
        );
        assert!(run(&mut n, 0, 300).is_empty(), "dropped, not saved up");
        n.handle(
            ms(400),
            TimeOfDay::hm(7, 0),
            waiting("%1", "Claude", Reason::Approval),
        );
        assert_eq!(run(&mut n, 400, 700).len(), 1);
    }

    #[test]
    fn park_released_and_gone() {
        let mut n = Notifier::new(Policy::default());
        // Names are remembered from status events.
        n.handle(
            ms(0),
            NOON,
            Happening::Status(change("%3", "Claude", State::Working, None)),
        );
        n.handle(
            ms(0),
            NOON,
            Happening::ParkReleased {
                pane: "%3".into(),
                gate: "%5".into(),
                note: "review the migration".into(),
                gate_gone: false,
            },
        );
        // The unpark that follows shows the pane waiting: the release
        // already speaks for it.
        let mut c = change("%3", "Claude", State::Waiting, Some(Reason::Prompt));
        c.prev_band = Some(Band::Parked);
        n.handle(ms(20), NOON, Happening::Status(c));
        let out = run(&mut n, 0, 300);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].title,
            "The park on %3 was released: review the migration"
        );
        assert_eq!(out[0].body, "%3 in session main: its gate %5 is ready");

        n.handle(
            ms(400),
            NOON,
            Happening::Gone {
                pane: "%3".into(),
                notify: true,
            },
        );
        n.handle(
            ms(400),
            NOON,
            Happening::Gone {
                pane: "%9".into(),
                notify: false,
            },
        );
        let out = run(&mut n, 400, 700);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].title, "Claude is gone");
        assert!(out[0].body.contains("stopped reporting"), "{}", out[0].body);

        // Unknown pane: a generic name.
        n.handle(
            ms(800),
            NOON,
            Happening::Gone {
                pane: "%8".into(),
                notify: true,
            },
        );
        n.handle(
            ms(810),
            NOON,
            Happening::ParkReleased {
                pane: "%7".into(),
                gate: "%6".into(),
                note: String::new(),
                gate_gone: true,
            },
        );
        let out = run(&mut n, 800, 1100);
        assert_eq!(out[0].title, "2 agents want your attention");
        assert_eq!(
            out[0].body,
            "The park on %7 was released (%7: its gate %6 is gone)\n\
             An agent is gone (%8: it stopped reporting and shows no sign of life)"
        );

        let mut off = Notifier::new(Policy {
            switches: Switches {
                park_released: false,
                gone: false,
                ..Switches::default()
            },
            ..Policy::default()
        });
        off.handle(
            ms(0),
            NOON,
            Happening::Gone {
                pane: "%8".into(),
                notify: true,
            },
        );
        off.handle(
            ms(0),
            NOON,
            Happening::ParkReleased {
                pane: "%7".into(),
                gate: "%6".into(),
                note: String::new(),
                gate_gone: false,
            },
        );
        assert!(run(&mut off, 0, 300).is_empty());
    }

    #[test]
    fn first_sight_at_start_is_not_news() {
        let mut first = change("%1", "Claude", State::Waiting, Some(Reason::Approval));
        first.prev_state = None;
        first.prev_band = None;
        let mut n = Notifier::new(Policy::default());
        n.handle(ms(1500), NOON, Happening::Status(first.clone()));
        assert!(run(&mut n, 1500, 2000).is_empty());
        // Later, a new pane that opens on a dialog is news.
        n.handle(ms(60_000), NOON, Happening::Status(first));
        assert_eq!(run(&mut n, 60_000, 60_300).len(), 1);
    }

    #[test]
    fn a_usage_limit_is_told_when_hit_when_it_resets_and_when_resumed() {
        let mut n = Notifier::new(Policy::default());
        // Hit: the limited band (no demand), with the reset as the user
        // reads it.
        let mut hit = change("%2", "Claude", State::Waiting, Some(Reason::Limit));
        assert_eq!(hit.band, Some(Band::Limited));
        hit.resets = Some("15:00".into());
        n.handle(ms(1000), NOON, Happening::Status(hit.clone()));
        let out = run(&mut n, 1000, 1300);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].title, "Claude hit its usage limit · resets 15:00");
        assert_eq!(out[0].urgency, Urgency::Low);
        // Redrawn (same band): nothing new.
        let mut again = hit.clone();
        again.prev_state = Some(State::Waiting);
        again.prev_reason = Some(Reason::Limit);
        again.prev_band = Some(Band::Limited);
        n.handle(ms(2000), NOON, Happening::Status(again.clone()));
        assert!(run(&mut n, 2000, 2300).is_empty());
        // The reset passes: the pane now demands.
        let mut reset = again;
        reset.band = Some(Band::Waiting);
        n.handle(ms(3000), NOON, Happening::Status(reset));
        let out = run(&mut n, 3000, 3300);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].title, "Claude's usage limit has reset");
        assert_eq!(out[0].urgency, Urgency::Normal);
        // tend resumed it.
        n.handle(
            ms(4000),
            NOON,
            Happening::Resumed {
                pane: "%2".into(),
                text: "continue".into(),
            },
        );
        let out = run(&mut n, 4000, 4300);
        assert_eq!(
            out[0].title,
            "tend resumed Claude at its usage limit's reset"
        );
        assert_eq!(out[0].body, "%2 in session main: sent \"continue\"");
        // The switch turns all three off.
        let mut policy = Policy::default();
        policy.switches.limit = false;
        let mut quiet = Notifier::new(policy);
        quiet.handle(ms(1000), NOON, Happening::Status(hit));
        quiet.handle(
            ms(1000),
            NOON,
            Happening::Resumed {
                pane: "%2".into(),
                text: "continue".into(),
            },
        );
        assert!(run(&mut quiet, 1000, 1500).is_empty());
    }
}
