//! When to notify, and what to say.
//!
//! A [`Notifier`] is fed what the daemon publishes — a pane's status
//! changed, a gated park released itself, a self-reporting agent went
//! *gone*, a pane closed — each with the time it happened and the local
//! time of day, and hands back [`Notification`]s ready to deliver. It
//! decides; the sidecar's adapters deliver (desktop, tmux, terminal).
//!
//! The rules:
//!
//! * A pane is notified when it *enters* a demand band (blocked, waiting,
//!   ready for review), or when what it demands changes (a question that
//!   turns into an approval dialog, a wait that ends in a finished turn).
//!   Quiet, a park released by its gate and a reporter gone are notified
//!   too, each behind its own switch ([`Switches`]).
//! * Never for a pane a client is showing: the user is looking at it.
//! * Bursts are grouped: the first notifiable happening opens a window
//!   ([`Policy::group_window`], 200 ms by default); everything that arrives
//!   within it goes out as one notification when it closes. Within a
//!   window a pane appears once, with its latest demand; a pane that stops
//!   demanding (answered, focused, closed) before the window closes is left
//!   out.
//! * Quiet hours ([`QuietHours`]) drop what happens inside them; nothing is
//!   saved up for the morning (the status line still shows it).
//! * The wording is [`attention::sentence`] for one pane; a group names a
//!   reason only when every member shares it.
//!
//! Like the detector, it takes time as an input: call
//! [`Notifier::poll_timeout`] for when it next wants to run and
//! [`Notifier::handle_timeout`] then.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::attention::{self, Band};
use crate::state::{Reason, State};

/// Which kinds of happening are notified. Every switch defaults to on
/// except `quiet` (quiet is not a demand: nobody asked for anything).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Switches {
    /// Waiting for approval (a permission dialog).
    pub approval: bool,
    /// The agent asked a question.
    pub question: bool,
    /// Blocked by an error (rate limit, auth, network).
    pub error: bool,
    /// Waiting at a prompt with no evidence of what it wants.
    pub prompt: bool,
    /// A finished turn not yet seen (ready for review).
    pub completed: bool,
    /// A working run that has gone quiet.
    pub quiet: bool,
    /// A park released by its gate.
    pub park_released: bool,
    /// A self-reporting agent went gone.
    pub gone: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Switches {
            approval: true,
            question: true,
            error: true,
            prompt: true,
            completed: true,
            quiet: false,
            park_released: true,
            gone: true,
        }
    }
}

/// A daily window of local time in which nothing is notified, written
/// `"22:00-07:00"`. A window whose end is before its start runs over
/// midnight. The start is inside it, the end is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietHours {
    /// Start, in minutes after midnight.
    pub start: TimeOfDay,
    /// End, in minutes after midnight.
    pub end: TimeOfDay,
}

impl QuietHours {
    /// Whether `t` falls inside the window.
    pub fn contains(&self, t: TimeOfDay) -> bool {
        let (s, e, t) = (self.start.0, self.end.0, t.0);
        if s <= e {
            s <= t && t < e
        } else {
            t >= s || t < e
        }
    }
}

impl FromStr for QuietHours {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s.split_once('-').ok_or_else(|| {
            format!("`{s}` is not a time window; write it as start-end, e.g. `22:00-07:00`")
        })?;
        let start: TimeOfDay = a.parse()?;
        let end: TimeOfDay = b.parse()?;
        if start == end {
            return Err(format!(
                "`{s}` starts and ends at the same time; leave quiet_hours out to have none"
            ));
        }
        Ok(QuietHours { start, end })
    }
}

impl fmt::Display for QuietHours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}

/// A local time of day, in minutes after midnight (0–1439).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TimeOfDay(u16);

impl TimeOfDay {
    /// `hour:minute`; out-of-range values wrap into the day.
    pub fn hm(hour: u32, minute: u32) -> TimeOfDay {
        TimeOfDay(((hour * 60 + minute) % (24 * 60)) as u16)
    }

    /// Minutes after midnight.
    pub fn minutes(&self) -> u16 {
        self.0
    }
}

impl FromStr for TimeOfDay {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let bad = || format!("`{t}` is not a time of day; write it as HH:MM, e.g. `07:30`");
        let (h, m) = t.split_once(':').ok_or_else(bad)?;
        if h.is_empty() || h.len() > 2 || m.len() != 2 {
            return Err(bad());
        }
        let h: u32 = h.parse().map_err(|_| bad())?;
        let m: u32 = m.parse().map_err(|_| bad())?;
        if h > 23 || m > 59 {
            return Err(format!("`{t}` is not a time of day (00:00 to 23:59)"));
        }
        Ok(TimeOfDay::hm(h, m))
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.0 / 60, self.0 % 60)
    }
}

/// What the notifier decides by.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Off: nothing is ever notified.
    pub enabled: bool,
    /// Which kinds are notified.
    pub switches: Switches,
    /// When nothing is notified.
    pub quiet_hours: Option<QuietHours>,
    /// How long a burst is collected before it goes out as one
    /// notification. Zero sends each at once.
    pub group_window: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            enabled: true,
            switches: Switches::default(),
            quiet_hours: None,
            group_window: DEFAULT_GROUP_WINDOW,
        }
    }
}

/// The default grouping window.
pub const DEFAULT_GROUP_WINDOW: Duration = Duration::from_millis(200);

/// A pane's status changed (the daemon's `pane.agent_status_changed`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatusChange {
    /// Pane id (`%3`).
    pub pane: String,
    /// The agent's display name ("Claude"), when known.
    pub name: Option<String>,
    /// The session the pane is in, for the notification's body.
    pub session: Option<String>,
    /// A client is showing this pane right now.
    pub focused: bool,
    /// The state now.
    pub state: Option<State>,
    /// The waiting reason now.
    pub reason: Option<Reason>,
    /// The band now.
    pub band: Option<Band>,
    /// The state before.
    pub prev_state: Option<State>,
    /// The reason before.
    pub prev_reason: Option<Reason>,
    /// The band before.
    pub prev_band: Option<Band>,
}

/// Something the notifier is told about.
#[derive(Debug, Clone, PartialEq)]
pub enum Happening {
    /// A pane's status changed.
    Status(StatusChange),
    /// A gated park released itself.
    ParkReleased {
        /// The parked pane.
        pane: String,
        /// The gate pane.
        gate: String,
        /// The park's note, in the user's words.
        note: String,
        /// Released because the gate pane is gone (rather than ready).
        gate_gone: bool,
    },
    /// A self-reporting agent went gone.
    Gone {
        /// The pane.
        pane: String,
        /// Whether the user is to be told (false after a `stopped` report).
        notify: bool,
    },
    /// A pane closed.
    Closed {
        /// The pane.
        pane: String,
    },
}

/// How loudly a notification asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Urgency {
    /// Finished turns, quiet runs.
    Low,
    /// Waiting on the user.
    Normal,
    /// Blocked by an error.
    Critical,
}

/// One notification, ready for any adapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notification {
    /// The headline: "Claude is waiting for approval", "3 agents need you".
    pub title: String,
    /// Where, and for a group one line per member.
    pub body: String,
    /// The panes it is about, most urgent first.
    pub panes: Vec<String>,
    /// How loudly it asks.
    pub urgency: Urgency,
}

impl Notification {
    /// The title and body on one line (a status-line message).
    pub fn one_line(&self) -> String {
        let mut line = self.title.clone();
        for l in self.body.lines().filter(|l| !l.trim().is_empty()) {
            line.push_str(" · ");
            line.push_str(l.trim());
        }
        line
    }
}

/// What one pending entry is about.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    /// Entered (or changed within) a demand band.
    Demand(State, Option<Reason>),
    /// A working run went quiet.
    Quiet,
    /// A gated park released itself.
    Park {
        gate: String,
        note: String,
        gate_gone: bool,
    },
    /// A reporter went gone.
    Gone,
}

impl Subject {
    fn urgency(&self) -> Urgency {
        match self {
            Subject::Demand(State::Waiting, Some(Reason::Error)) => Urgency::Critical,
            Subject::Demand(State::Waiting, _) => Urgency::Normal,
            Subject::Demand(_, _) | Subject::Quiet => Urgency::Low,
            Subject::Park { .. } | Subject::Gone => Urgency::Normal,
        }
    }

    /// Sorts the members of a group: what buys most for a second of
    /// attention first (the jump order), then park releases, gone, quiet,
    /// finished turns.
    fn rank(&self) -> u8 {
        match self {
            Subject::Demand(State::Waiting, Some(Reason::Approval)) => 0,
            Subject::Demand(State::Waiting, Some(Reason::Error)) => 1,
            Subject::Demand(State::Waiting, Some(Reason::Question)) => 2,
            Subject::Demand(State::Waiting, _) => 3,
            Subject::Park { .. } => 4,
            Subject::Gone => 5,
            Subject::Quiet => 6,
            Subject::Demand(_, _) => 7,
        }
    }

    /// A status entry (replaced by the pane's next status).
    fn is_status(&self) -> bool {
        matches!(self, Subject::Demand(..) | Subject::Quiet)
    }
}

#[derive(Debug, Clone)]
struct Entry {
    pane: String,
    name: String,
    session: Option<String>,
    subject: Subject,
}

impl Entry {
    fn sentence(&self) -> String {
        match &self.subject {
            Subject::Demand(state, reason) => attention::sentence(&self.name, *state, *reason),
            Subject::Quiet => attention::sentence(&self.name, State::Working, None),
            Subject::Park { note, .. } => attention::park_released_sentence(&self.pane, note),
            Subject::Gone => attention::gone_sentence(&self.name),
        }
    }

    /// Where the pane is, and for a park or a reporter why.
    fn detail(&self) -> String {
        let place = match &self.session {
            Some(s) if !s.is_empty() => format!("{} in session {s}", self.pane),
            _ => self.pane.clone(),
        };
        match &self.subject {
            Subject::Park {
                gate, gate_gone, ..
            } => {
                if *gate_gone {
                    format!("{place}: its gate {gate} is gone")
                } else {
                    format!("{place}: its gate {gate} is ready")
                }
            }
            Subject::Gone => format!("{place}: it stopped reporting and shows no sign of life"),
            _ => place,
        }
    }
}

/// Longest list of members in a group's body; the rest are counted.
const MAX_GROUP_LINES: usize = 8;

/// Panes seen for the first time this soon after the clock's start (the
/// daemon's start) are not notified: they were in that state before tend
/// looked.
pub const FIRST_SIGHT_GRACE: Duration = Duration::from_secs(5);

/// What a name falls back to when the agent is not known.
const SOMEONE: &str = "An agent";

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
                self.push(now, pane, subject, None);
            }
            Happening::Gone { pane, notify } => {
                if !notify || !self.allowed(local, self.policy.switches.gone) {
                    return;
                }
                self.pending
                    .retain(|e| !(e.pane == pane && e.subject == Subject::Gone));
                self.push(now, pane, Subject::Gone, None);
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
            Subject::Demand(State::Waiting, _) => sw.prompt,
            Subject::Demand(_, _) => sw.completed,
            Subject::Quiet => sw.quiet,
            Subject::Park { .. } | Subject::Gone => false,
        };
        if !self.allowed(local, on) {
            return;
        }
        self.push(now, s.pane, subject, s.name);
    }

    fn allowed(&self, local: TimeOfDay, switch: bool) -> bool {
        self.policy.enabled && switch && !self.policy.quiet_hours.is_some_and(|q| q.contains(local))
    }

    fn push(&mut self, now: Duration, pane: String, subject: Subject, name: Option<String>) {
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

/// One notification for a (sorted, non-empty) burst.
fn compose(entries: &[Entry]) -> Notification {
    let urgency = entries
        .iter()
        .map(|e| e.subject.urgency())
        .max()
        .unwrap_or(Urgency::Normal);
    let panes = entries.iter().map(|e| e.pane.clone()).collect();
    if let [one] = entries {
        return Notification {
            title: one.sentence(),
            body: one.detail(),
            panes,
            urgency,
        };
    }
    let mut lines: Vec<String> = entries
        .iter()
        .take(MAX_GROUP_LINES)
        .map(|e| format!("{} ({})", e.sentence(), e.detail()))
        .collect();
    if entries.len() > MAX_GROUP_LINES {
        lines.push(format!("and {} more", entries.len() - MAX_GROUP_LINES));
    }
    Notification {
        title: group_title(entries),
        body: lines.join("\n"),
        panes,
        urgency,
    }
}

/// A group's headline: names what the members share, and only that.
fn group_title(entries: &[Entry]) -> String {
    let n = entries.len();
    let demands: Option<Vec<(State, Option<Reason>)>> = entries
        .iter()
        .map(|e| match e.subject {
            Subject::Demand(s, r) => Some((s, r)),
            _ => None,
        })
        .collect();
    if let Some(members) = demands {
        if let Some(s) = attention::group_sentence(&members) {
            return s;
        }
    }
    let all = |f: fn(&Subject) -> bool| entries.iter().all(|e| f(&e.subject));
    if all(|s| matches!(s, Subject::Park { .. })) {
        format!("{n} parks were released")
    } else if all(|s| *s == Subject::Gone) {
        format!("{n} agents are gone")
    } else if all(|s| *s == Subject::Quiet) {
        attention::quiet_sentence(n).unwrap_or_default()
    } else {
        format!("{n} agents want your attention")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    const NOON: TimeOfDay = TimeOfDay(12 * 60);

    fn change(pane: &str, name: &str, state: State, reason: Option<Reason>) -> StatusChange {
        let band = attention::band(&attention::PaneFacts {
            state: Some(state),
            reason,
            quiet: false,
            seen: false,
            parked: false,
            snoozed: false,
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
        }
    }

    fn waiting(pane: &str, name: &str, r: Reason) -> Happening {
        Happening::Status(change(pane, name, State::Waiting, Some(r)))
    }

    /// Runs the clock to `until` in 10 ms steps, collecting notifications.
    fn run(n: &mut Notifier, from: u64, until: u64) -> Vec<Notification> {
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
    fn wording_for_each_reason() {
        let cases = [
            (
                change("%1", "Codex", State::Waiting, Some(Reason::Question)),
                "Codex asked a question",
                Urgency::Normal,
            ),
            (
                change("%1", "Grok", State::Waiting, Some(Reason::Error)),
                "Grok is blocked by an error",
                Urgency::Critical,
            ),
            (
                change("%1", "Aider", State::Waiting, Some(Reason::Prompt)),
                "Aider is waiting for input",
                Urgency::Normal,
            ),
            (
                change("%1", "Claude", State::Completed, None),
                "Claude finished",
                Urgency::Low,
            ),
        ];
        for (c, title, urgency) in cases {
            let mut n = Notifier::new(Policy::default());
            n.handle(ms(0), NOON, Happening::Status(c));
            let out = run(&mut n, 0, 300);
            assert_eq!(out.len(), 1, "{title}");
            assert_eq!(out[0].title, title);
            assert_eq!(out[0].urgency, urgency);
        }
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
    fn a_mixed_group_names_no_reason() {
        let mut n = Notifier::new(Policy::default());
        n.handle(ms(0), NOON, waiting("%1", "Claude", Reason::Question));
        n.handle(ms(10), NOON, waiting("%2", "Grok", Reason::Error));
        n.handle(ms(20), NOON, waiting("%3", "Codex", Reason::Approval));
        let out = run(&mut n, 0, 300);
        assert_eq!(out[0].title, "3 agents need you");
        // Most urgent first, in the jump order; the loudest urgency wins.
        assert_eq!(out[0].panes, vec!["%3", "%2", "%1"]);
        assert_eq!(out[0].urgency, Urgency::Critical);
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
    fn large_groups_are_counted_and_zero_window_sends_at_once() {
        let mut n = Notifier::new(Policy::default());
        for i in 0..12 {
            n.handle(
                ms(0),
                NOON,
                waiting(&format!("%{i}"), "Claude", Reason::Approval),
            );
        }
        let out = run(&mut n, 0, 300);
        assert_eq!(out[0].title, "12 agents are waiting for approval");
        assert_eq!(out[0].body.lines().count(), MAX_GROUP_LINES + 1);
        assert_eq!(out[0].body.lines().last(), Some("and 4 more"));
        assert_eq!(out[0].panes.len(), 12);

        let mut n = Notifier::new(Policy {
            group_window: Duration::ZERO,
            ..Policy::default()
        });
        n.handle(ms(5), NOON, waiting("%1", "Claude", Reason::Approval));
        assert!(n.poll_notification().is_some());
        assert_eq!(n.poll_timeout(), None);
    }

    #[test]
    fn one_line_for_a_status_line() {
        let n = Notification {
            title: "2 agents need you".into(),
            body: "Claude is waiting for approval (%1)\nCodex asked a question (%2)".into(),
            panes: vec!["%1".into(), "%2".into()],
            urgency: Urgency::Normal,
        };
        assert_eq!(
            n.one_line(),
            "2 agents need you · Claude is waiting for approval (%1) · Codex asked a question (%2)"
        );
    }
}
