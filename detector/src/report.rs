//! Self-reported lifecycle and status authority.
//!
//! An agent, its hooks or a wrapper script can say what it is doing with
//! `tend report <state> [--reason R] [--message TEXT] [--every DUR]
//! [--dispatches %4,%5]`. This module is the pure model of those reports:
//! one [`Reporter`] per pane in a [`ReportBook`], the leases that run out,
//! the states tend derives itself (*quiet*, *gone*, *dispatching*), and the
//! one authority per pane that decides between the report and the screen.
//!
//! Nothing here reads a clock: `now` is an input on the caller's clock (any
//! monotonic clock; to persist a book across restarts use one that keeps
//! going, such as the time since the Unix epoch).
//!
//! # The states, and what ends each one
//!
//! | posted | lease (`--every E`) | what ends it |
//! |---|---|---|
//! | `up`, `working`, `merging`, `idle`, `warning`, `waiting --reason work` | yes | the next report; nothing posted for `2E` ⇒ *dispatching* while a dispatched pane lives, else *quiet* while another sign of life lasts, else *gone* |
//! | `waiting` (on the user) | yes | the next report; `2E` ⇒ *quiet* (no other sign needed: a chat cannot post while you are away), then *gone* after [`ReportConfig::waiting_quiet_for`] (12 h) of quiet |
//! | `stuck` | no | only its next report |
//! | `done` | no | only its next report |
//! | `stopped` | yes | `2E` ⇒ *gone*, **without** a notification |
//! | `handing-over` | no (not measured by `every`) | the next report in the pane, or once silent for [`ReportConfig::handover_silence`] and holding nothing (no live dispatched pane) ⇒ *gone* |
//!
//! Without `--every` a state has no lease: it holds until the next report
//! or [`ReportBook::release`] (the caller releases when the agent run ends
//! or the pane closes). `--every`, `--dispatches` and the agent name are
//! sticky: a later report that leaves them out keeps them. The message is
//! not: each report replaces it (an old question must not outlive its
//! answer).
//!
//! *Quiet* and *dispatching* keep the report authority; *gone* ends it (the
//! screen is the authority again) until the pane posts again. Every change
//! of the displayed lifecycle comes out of [`ReportBook::tick`] as a
//! [`Change`]; a change to *gone* carries `notify: true` unless the last
//! report was `stopped` (the agent already said it stopped).
//!
//! # Mapping to tend's vocabulary
//!
//! | lifecycle | [`State`] | [`Reason`] | band |
//! |---|---|---|---|
//! | `up`, `working`, `merging`, `warning`, `handing-over`, `dispatching` | working | – | Working |
//! | `idle`, `waiting --reason work` | idle | – | Idle |
//! | `waiting` (`--reason approval\|error\|question\|prompt`, default prompt) | waiting | that reason | Waiting / Blocked |
//! | `stuck` | waiting | error | Blocked |
//! | `done` | completed | – | Ready for review / Finished |
//! | `stopped` | exited | – | Exited (no demand, no notice) |
//! | `quiet` after a running state | working, `quiet: true` | – | Quiet |
//! | `quiet` after waiting on the user | waiting | its reason | Waiting / Blocked (the question still stands) |
//! | `gone` | the screen's view; `exited` when the screen knows nothing | – | – |
//!
//! # Authority
//!
//! While a report is live (posted, quiet or dispatching) its word is the
//! pane's status. The screen detector is the fallback and overrides a live
//! report only with a *visible blocking dialog of the same agent*: a screen
//! rule (not silence) that reads `waiting` with reason `approval`,
//! `question` or `prompt`, on a pane whose identified agent is the
//! reporter's (or any identified agent, when the reporter named none).
//! An error banner is not a dialog; the reporter says `stuck` for that.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::dur;
use crate::state::{Reason, State};

/// A lifecycle state: the ten an agent may post and the three tend derives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lifecycle {
    /// Started and read its instructions; ends on its first piece of work.
    Up,
    /// On one item. Leased.
    Working,
    /// Folding its own branch in. Leased exactly like working.
    Merging,
    /// Alive with nothing to do. Leased.
    Idle,
    /// Waiting on the user (or, with reason `work`, polling for work).
    Waiting,
    /// One problem it cannot get past; replaced by its next status.
    Stuck,
    /// Low on room to work: finishes the item in hand, takes nothing new.
    Warning,
    /// Cannot go on; gone without a notification when its lease ends.
    Stopped,
    /// Writing its handover for the next agent.
    HandingOver,
    /// Signed off; stays done until it posts again.
    Done,
    /// Derived: stopped posting but alive another way.
    Quiet,
    /// Derived: something ran out.
    Gone,
    /// Derived: alive through the panes it dispatched.
    Dispatching,
}

impl Lifecycle {
    /// Every lifecycle state, posted ones first.
    pub const ALL: [Lifecycle; 13] = [
        Lifecycle::Up,
        Lifecycle::Working,
        Lifecycle::Merging,
        Lifecycle::Idle,
        Lifecycle::Waiting,
        Lifecycle::Stuck,
        Lifecycle::Warning,
        Lifecycle::Stopped,
        Lifecycle::HandingOver,
        Lifecycle::Done,
        Lifecycle::Quiet,
        Lifecycle::Gone,
        Lifecycle::Dispatching,
    ];

    /// The name used on the command line and in JSON.
    pub fn as_str(&self) -> &'static str {
        match self {
            Lifecycle::Up => "up",
            Lifecycle::Working => "working",
            Lifecycle::Merging => "merging",
            Lifecycle::Idle => "idle",
            Lifecycle::Waiting => "waiting",
            Lifecycle::Stuck => "stuck",
            Lifecycle::Warning => "warning",
            Lifecycle::Stopped => "stopped",
            Lifecycle::HandingOver => "handing-over",
            Lifecycle::Done => "done",
            Lifecycle::Quiet => "quiet",
            Lifecycle::Gone => "gone",
            Lifecycle::Dispatching => "dispatching",
        }
    }

    /// Parses a name (`handing_over` and `handover` are accepted too).
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        if s == "handing_over" || s == "handover" {
            return Some(Lifecycle::HandingOver);
        }
        Lifecycle::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// Whether an agent may post this state (`quiet`, `gone` and
    /// `dispatching` are tend's alone).
    pub fn is_posted(&self) -> bool {
        !matches!(
            self,
            Lifecycle::Quiet | Lifecycle::Gone | Lifecycle::Dispatching
        )
    }

    /// The states a dispatcher shows as `dispatching` while its panes live.
    fn is_running(&self) -> bool {
        matches!(
            self,
            Lifecycle::Up | Lifecycle::Working | Lifecycle::Merging | Lifecycle::Idle
        )
    }
}

impl fmt::Display for Lifecycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a reported `waiting` waits on (`--reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitReason {
    /// On the user, with one of tend's reasons.
    User(Reason),
    /// Still running and polling for work: nothing for the user to do.
    Work,
}

impl WaitReason {
    /// Parses `approval`, `error`, `question`, `prompt` or `work`.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        if s == "work" {
            return Some(WaitReason::Work);
        }
        Reason::parse(&s).map(WaitReason::User)
    }

    /// The word used on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            WaitReason::User(r) => r.as_str(),
            WaitReason::Work => "work",
        }
    }
}

/// One `tend report`, as it arrives (text fields are validated by
/// [`ReportBook::apply`], so its errors can name what was wrong).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Report {
    /// Sequence number, increasing per pane (the CLI can use wall-clock
    /// microseconds). `None`: taken in order of arrival.
    pub seq: Option<u64>,
    /// The posted state (`working`, `handing-over`, …).
    pub state: String,
    /// `--reason`: only with `waiting` (`approval`, `error`, `question`,
    /// `prompt`, `work`).
    pub reason: Option<String>,
    /// `--message`: the status text shown with the state.
    pub message: Option<String>,
    /// `--every`: the lease period; sticky.
    #[serde(with = "opt_dur")]
    pub every: Option<Duration>,
    /// `--dispatches`: the panes this reporter started; sticky, `Some(vec![])`
    /// clears them.
    pub dispatches: Option<Vec<String>>,
    /// The agent reporting (`claude`), when it says; sticky.
    pub agent: Option<String>,
}

impl Report {
    /// A report of `state` with nothing else.
    pub fn new(state: &str) -> Self {
        Report {
            state: state.to_owned(),
            ..Report::default()
        }
    }

    /// With a sequence number.
    pub fn seq(mut self, seq: u64) -> Self {
        self.seq = Some(seq);
        self
    }

    /// With `--reason`.
    pub fn reason(mut self, reason: &str) -> Self {
        self.reason = Some(reason.to_owned());
        self
    }

    /// With `--message`.
    pub fn message(mut self, message: &str) -> Self {
        self.message = Some(message.to_owned());
        self
    }

    /// With `--every`.
    pub fn every(mut self, every: Duration) -> Self {
        self.every = Some(every);
        self
    }

    /// With `--dispatches`.
    pub fn dispatches(mut self, panes: &[&str]) -> Self {
        self.dispatches = Some(panes.iter().map(|p| (*p).to_owned()).collect());
        self
    }

    /// With the reporting agent's id.
    pub fn agent(mut self, agent: &str) -> Self {
        self.agent = Some(agent.to_owned());
        self
    }
}

/// Why a report was refused. The messages are for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportError {
    /// The sequence number is not above the last one seen for the pane.
    Stale {
        /// The report's sequence number.
        seq: u64,
        /// The last one accepted.
        last: u64,
    },
    /// Not a lifecycle state.
    UnknownState(String),
    /// A state only tend sets (`quiet`, `gone`, `dispatching`).
    DerivedState(Lifecycle),
    /// An unknown `--reason`, or a reason with a state that takes none.
    BadReason {
        /// The posted state.
        state: Lifecycle,
        /// The reason given.
        reason: String,
    },
    /// `--every 0s`.
    ZeroEvery,
    /// A `--dispatches` entry that is empty or names the reporting pane.
    BadDispatch(String),
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Stale { seq, last } => write!(
                f,
                "report #{seq} is older than #{last}, already taken for this pane; ignored"
            ),
            ReportError::UnknownState(s) => write!(
                f,
                "`{s}` is not a state an agent can report; use one of: {}",
                posted_names()
            ),
            ReportError::DerivedState(l) => write!(
                f,
                "`{l}` is set by tend, not reported; use one of: {}",
                posted_names()
            ),
            ReportError::BadReason { state, reason } => {
                if *state == Lifecycle::Waiting {
                    write!(
                        f,
                        "`--reason {reason}` is not a waiting reason; use approval, error, \
                         question, prompt or work"
                    )
                } else {
                    write!(
                        f,
                        "`--reason` goes with `waiting` only, not `{state}`; put the cause in \
                         --message"
                    )
                }
            }
            ReportError::ZeroEvery => {
                write!(
                    f,
                    "`--every 0s` would expire at once; use e.g. `--every 60s`"
                )
            }
            ReportError::BadDispatch(p) if p.is_empty() => {
                write!(f, "`--dispatches` has an empty pane id")
            }
            ReportError::BadDispatch(p) => {
                write!(f, "`--dispatches {p}` names the reporting pane itself")
            }
        }
    }
}

impl std::error::Error for ReportError {}

fn posted_names() -> String {
    Lifecycle::ALL
        .iter()
        .filter(|l| l.is_posted())
        .map(|l| l.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Timings of the report model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReportConfig {
    /// How long a reporter waiting on the user stays quiet before it is
    /// gone. Default 12h.
    #[serde(with = "dur")]
    pub waiting_quiet_for: Duration,
    /// How long a `handing-over` reporter with nothing dispatched must be
    /// silent (no report, no output, no CPU) to be gone. Default 2m.
    #[serde(with = "dur")]
    pub handover_silence: Duration,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            waiting_quiet_for: Duration::from_secs(12 * 3600),
            handover_silence: Duration::from_secs(120),
        }
    }
}

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
    posted: Lifecycle,
    reason: Option<WaitReason>,
    message: Option<String>,
    agent: Option<String>,
    #[serde(with = "opt_dur", default)]
    every: Option<Duration>,
    #[serde(default)]
    dispatches: Vec<String>,
    #[serde(default)]
    live_children: Vec<String>,
    seq: u64,
    posted_at: Duration,
    phase: Phase,
    #[serde(skip)]
    recheck: Option<Duration>,
}

/// How a posted state ends.
enum Lease {
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

    fn waits_on_user(&self) -> bool {
        self.posted == Lifecycle::Waiting && self.reason != Some(WaitReason::Work)
    }

    fn lease(&self) -> Lease {
        match self.posted {
            Lifecycle::Done | Lifecycle::Stuck => Lease::None,
            Lifecycle::Stopped => Lease::Stopped,
            Lifecycle::HandingOver => Lease::Handover,
            _ if self.waits_on_user() => Lease::OnUser,
            _ => Lease::Running,
        }
    }

    /// When the lease runs out (`posted_at + 2E`), for leased states.
    fn lease_end(&self) -> Option<Duration> {
        match self.lease() {
            Lease::None | Lease::Handover => None,
            _ => self.every.map(|e| self.posted_at + e * 2),
        }
    }

    /// The tend state and reason of a live report.
    fn mapped(&self) -> (State, Option<Reason>, bool) {
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

/// Who decides a pane's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Authority {
    /// The screen detector.
    Screen,
    /// The pane's own reports.
    Report,
}

impl Authority {
    /// `screen` or `report`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Authority::Screen => "screen",
            Authority::Report => "report",
        }
    }
}

/// The screen detector's view of a pane, the fallback.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ScreenStatus<'a> {
    /// The identified agent.
    pub agent: Option<&'a str>,
    /// Its state.
    pub state: Option<State>,
    /// Its reason.
    pub reason: Option<Reason>,
    /// The state came from a screen rule (visible evidence), not silence
    /// or activity.
    pub from_rule: bool,
}

impl ScreenStatus<'_> {
    /// A visible dialog that blocks the agent: waiting with approval,
    /// question or prompt, from a screen rule.
    pub fn is_blocking_dialog(&self) -> bool {
        self.from_rule
            && self.agent.is_some()
            && self.state == Some(State::Waiting)
            && matches!(
                self.reason,
                Some(Reason::Approval | Reason::Question | Reason::Prompt)
            )
    }
}

/// A pane's status after the authority has been applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effective {
    /// The state in tend's vocabulary (`None`: nothing known).
    pub state: Option<State>,
    /// Its reason.
    pub reason: Option<Reason>,
    /// The quiet flag for the band (a running report gone quiet).
    pub quiet: bool,
    /// Who decided.
    pub authority: Authority,
    /// A live report was overridden by a visible dialog on screen.
    pub overridden: bool,
    /// The lifecycle state shown, when the pane has a reporter.
    pub lifecycle: Option<Lifecycle>,
    /// Its display word (`quiet · 12m`).
    pub word: Option<String>,
    /// The last status text.
    pub message: Option<String>,
    /// The display label (`tend report-metadata`).
    pub label: Option<String>,
    /// The live dispatched panes, while dispatching.
    pub dispatching: Vec<String>,
}

/// Every pane's reporter and label.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportBook {
    #[serde(skip)]
    config: ReportConfig,
    #[serde(default)]
    reporters: BTreeMap<String, Reporter>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

impl ReportBook {
    /// An empty book.
    pub fn new(config: ReportConfig) -> Self {
        ReportBook {
            config,
            ..ReportBook::default()
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
        let state = Lifecycle::parse(&report.state)
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

    /// The pane's status: the live report's word unless the screen shows a
    /// visible blocking dialog of the same agent; the screen's otherwise.
    pub fn effective(&self, now: Duration, pane: &str, screen: &ScreenStatus<'_>) -> Effective {
        let label = self.labels.get(pane).cloned();
        let Some(r) = self.reporters.get(pane) else {
            return Effective {
                state: screen.state,
                reason: screen.reason,
                quiet: false,
                authority: Authority::Screen,
                overridden: false,
                lifecycle: None,
                word: None,
                message: None,
                label,
                dispatching: Vec::new(),
            };
        };
        let lifecycle = r.lifecycle();
        let mut e = Effective {
            state: screen.state,
            reason: screen.reason,
            quiet: false,
            authority: Authority::Screen,
            overridden: false,
            lifecycle: Some(lifecycle),
            word: Some(r.word(now)),
            message: r.message.clone(),
            label,
            dispatching: if lifecycle == Lifecycle::Dispatching {
                r.live_children.clone()
            } else {
                Vec::new()
            },
        };
        if !r.is_live() {
            if e.state.is_none() {
                e.state = Some(State::Exited);
            }
            return e;
        }
        let same_agent = match (r.agent(), screen.agent) {
            (Some(mine), Some(seen)) => mine == seen,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        if same_agent && screen.is_blocking_dialog() {
            e.overridden = true;
            return e;
        }
        let (state, reason, quiet) = r.mapped();
        e.state = Some(state);
        e.reason = reason;
        e.quiet = quiet;
        e.authority = Authority::Report;
        e
    }
}

/// One reporter's time step (it is live).
fn step(r: &mut Reporter, now: Duration, cfg: &ReportConfig, signs: &Alive) {
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

/// Serde for `Option<Duration>` as `"60s"` text.
mod opt_dur {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    use crate::config::{format_duration, parse_duration};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&format_duration(*d)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|s| parse_duration(&s).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn m(n: u64) -> Duration {
        Duration::from_secs(60 * n)
    }

    fn h(n: u64) -> Duration {
        Duration::from_secs(3600 * n)
    }

    fn book() -> ReportBook {
        ReportBook::new(ReportConfig::default())
    }

    fn dead(_: &str) -> Alive {
        Alive::NONE
    }

    fn shown(b: &ReportBook, pane: &str) -> Lifecycle {
        b.reporter(pane).unwrap().lifecycle()
    }

    fn screen_none() -> ScreenStatus<'static> {
        ScreenStatus::default()
    }

    #[test]
    fn parse_states_and_reasons() {
        for l in Lifecycle::ALL {
            assert_eq!(Lifecycle::parse(l.as_str()), Some(l));
        }
        assert_eq!(
            Lifecycle::parse("handing_over"),
            Some(Lifecycle::HandingOver)
        );
        assert_eq!(Lifecycle::parse(" Working "), Some(Lifecycle::Working));
        assert_eq!(Lifecycle::parse("busy"), None);
        assert_eq!(Lifecycle::ALL.iter().filter(|l| l.is_posted()).count(), 10);
        assert_eq!(WaitReason::parse("work"), Some(WaitReason::Work));
        assert_eq!(
            WaitReason::parse("question"),
            Some(WaitReason::User(Reason::Question))
        );
        assert_eq!(WaitReason::parse("lunch"), None);
    }

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

    fn lives(map: &'static [(&'static str, PaneLife)]) -> impl Fn(&str) -> Alive {
        move |p: &str| Alive {
            life: map
                .iter()
                .find(|(q, _)| *q == p)
                .map_or(PaneLife::Gone, |(_, l)| *l),
            ..Alive::NONE
        }
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
    fn report_beats_screen() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("working").agent("claude"))
            .unwrap();
        // The screen thinks it waits at a prompt after silence: the report wins.
        let silent = ScreenStatus {
            agent: Some("claude"),
            state: Some(State::Waiting),
            reason: Some(Reason::Prompt),
            from_rule: false,
        };
        let e = b.effective(s(1), "%1", &silent);
        assert_eq!(e.state, Some(State::Working));
        assert_eq!(e.authority, Authority::Report);
        assert!(!e.overridden);
        // An error banner is not a dialog.
        let banner = ScreenStatus {
            reason: Some(Reason::Error),
            from_rule: true,
            ..silent
        };
        assert_eq!(
            b.effective(s(1), "%1", &banner).authority,
            Authority::Report
        );
        // Idle or completed on screen never override.
        for st in [State::Idle, State::Completed, State::Exited, State::Working] {
            let sc = ScreenStatus {
                state: Some(st),
                reason: None,
                from_rule: true,
                ..silent
            };
            let e = b.effective(s(1), "%1", &sc);
            assert_eq!(e.authority, Authority::Report, "{st}");
            assert_eq!(e.state, Some(State::Working));
        }
    }

    #[test]
    fn screen_overrides_only_with_a_visible_dialog_of_the_same_agent() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("working").agent("claude"))
            .unwrap();
        for reason in [Reason::Approval, Reason::Question, Reason::Prompt] {
            let dialog = ScreenStatus {
                agent: Some("claude"),
                state: Some(State::Waiting),
                reason: Some(reason),
                from_rule: true,
            };
            let e = b.effective(s(1), "%1", &dialog);
            assert_eq!(
                (e.state, e.reason, e.authority, e.overridden),
                (Some(State::Waiting), Some(reason), Authority::Screen, true)
            );
            // The report stays live and its word is still shown.
            assert_eq!(e.lifecycle, Some(Lifecycle::Working));
            assert_eq!(b.authority("%1"), Authority::Report);
        }
        // Another agent's dialog does not count.
        let other = ScreenStatus {
            agent: Some("codex"),
            state: Some(State::Waiting),
            reason: Some(Reason::Approval),
            from_rule: true,
        };
        assert_eq!(b.effective(s(1), "%1", &other).authority, Authority::Report);
        // Nor does text with no identified agent.
        let nobody = ScreenStatus {
            agent: None,
            ..other
        };
        assert_eq!(
            b.effective(s(1), "%1", &nobody).authority,
            Authority::Report
        );
        // A reporter that named no agent yields to the pane's identified one.
        b.apply(s(2), "%2", Report::new("working")).unwrap();
        let e = b.effective(s(2), "%2", &other);
        assert!(e.overridden);
        assert_eq!(e.reason, Some(Reason::Approval));
    }

    #[test]
    fn without_a_live_report_the_screen_decides() {
        let mut b = book();
        let sc = ScreenStatus {
            agent: Some("claude"),
            state: Some(State::Idle),
            reason: None,
            from_rule: true,
        };
        let e = b.effective(s(0), "%1", &sc);
        assert_eq!(e.authority, Authority::Screen);
        assert_eq!(e.state, Some(State::Idle));
        assert_eq!(e.lifecycle, None);
        // Gone: the screen again, with the word kept for display.
        b.apply(s(0), "%1", Report::new("working").every(s(1)))
            .unwrap();
        b.tick(s(2), &dead);
        let e = b.effective(s(2), "%1", &sc);
        assert_eq!(e.authority, Authority::Screen);
        assert_eq!(e.state, Some(State::Idle));
        assert_eq!(e.word.as_deref(), Some("gone"));
        // Gone with nothing on screen reads exited.
        let e = b.effective(s(2), "%1", &screen_none());
        assert_eq!(e.state, Some(State::Exited));
        // Released: no trace.
        b.release("%1");
        let e = b.effective(s(3), "%1", &screen_none());
        assert_eq!((e.state, e.lifecycle), (None, None));
    }

    #[test]
    fn mapping_table() {
        let cases: &[(Report, State, Option<Reason>)] = &[
            (Report::new("up"), State::Working, None),
            (Report::new("working"), State::Working, None),
            (Report::new("merging"), State::Working, None),
            (Report::new("warning"), State::Working, None),
            (Report::new("handing-over"), State::Working, None),
            (Report::new("idle"), State::Idle, None),
            (Report::new("waiting").reason("work"), State::Idle, None),
            (Report::new("waiting"), State::Waiting, Some(Reason::Prompt)),
            (
                Report::new("waiting").reason("error"),
                State::Waiting,
                Some(Reason::Error),
            ),
            (Report::new("stuck"), State::Waiting, Some(Reason::Error)),
            (Report::new("done"), State::Completed, None),
            (Report::new("stopped"), State::Exited, None),
        ];
        for (r, state, reason) in cases {
            let mut b = book();
            b.apply(s(0), "%1", r.clone()).unwrap();
            let e = b.effective(s(0), "%1", &screen_none());
            assert_eq!((e.state, e.reason), (Some(*state), *reason), "{r:?}");
            assert_eq!(e.authority, Authority::Report);
            assert!(!e.quiet);
        }
        // Quiet after running: working with the quiet flag (the Quiet band).
        let mut b = book();
        b.apply(s(0), "%1", Report::new("idle").every(s(10)))
            .unwrap();
        let busy = |_: &str| Alive {
            cpu_busy: true,
            ..Alive::NONE
        };
        b.tick(s(20), &busy);
        let e = b.effective(s(20), "%1", &screen_none());
        assert_eq!((e.state, e.quiet), (Some(State::Working), true));
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
