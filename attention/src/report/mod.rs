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
//!
//! # The agent's own word
//!
//! An agent can also say what it does without `tend report`, by three
//! channels ([`Word`]): OSC 7501 (the Program Status Protocol) through the
//! terminal while a `tend run` relay answers for it (authority `relay`,
//! said `psp` before the other channels came); the session file it keeps
//! (Claude Code's, authority `file`); and OSC 7501 reports it prints
//! unasked (Codex's, authority `osc`). The detector reads the reports
//! from the pane's output (`tend_detector::psp`), the file is read by
//! `tend_detector::session_file`. While the word says something
//! ([`Reading`]) it is the pane's status, ahead of `tend report`'s: it
//! comes from the agent itself, in step with its screen. The same one
//! exception holds: a visible blocking dialog of the pane's identified
//! agent shows; and a session file's `idle`, which says the turn is over
//! but not how, lets a screen rule's waiting state show. Which channel is
//! trusted for a pane is the daemon's to decide (`tend_core`'s
//! `channel::word`) — [`ReportBook::effective_with`].
//!
//! # Files
//!
//! This file holds the vocabulary (lifecycles, reasons, a [`Report`], its
//! errors, the timings); `reporter.rs` one pane's lease, `book.rs` the
//! book across panes, `authority.rs` the choice between report and
//! screen, and `word.rs` the agent's own word ahead of both. Their public
//! names are re-exported here.
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use tend_detector::config::dur;
use tend_vocab::{Reason, State};

mod authority;
mod book;
mod reporter;
mod word;

#[cfg(test)]
mod testutil;

pub use authority::{Authority, Effective, ScreenStatus};
pub use book::{Alive, Applied, Change, PaneLife, ReportBook};
pub use reporter::{Phase, Reporter};
pub use tend_detector::psp::{Reading, Task};
pub use word::Word;

/// Serde for `Option<Duration>` as `"60s"` text.
mod opt_dur {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    use tend_detector::config::{format_duration, parse_duration};

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

pub use tend_vocab::Lifecycle;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_wait_reasons() {
        assert_eq!(WaitReason::parse("work"), Some(WaitReason::Work));
        assert_eq!(
            WaitReason::parse("question"),
            Some(WaitReason::User(Reason::Question))
        );
        assert_eq!(WaitReason::parse("lunch"), None);
    }
}
