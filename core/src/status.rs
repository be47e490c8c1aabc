//! A pane's effective status: the screen detector's reading, the pane's
//! own reports and the program's own word through the terminal (OSC 7501;
//! one authority per pane), the user's park and snooze, and the band that
//! folds them together.

use serde::Serialize;
use tend_attention::park::PaneMarks;
use tend_attention::report::{Authority, Effective, ScreenStatus, Task, Word};
use tend_attention::{self as attention, Band, PaneFacts};
use tend_detector::engine::Status;
use tend_detector::{Reason, State, Trigger};

/// Everything published and listed about one pane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffView {
    /// Agent id.
    pub agent: Option<String>,
    /// Effective state.
    pub state: Option<State>,
    /// Effective reason.
    pub reason: Option<Reason>,
    /// Quiet (a silent working run, or a report gone quiet).
    pub quiet: bool,
    /// The band.
    pub band: Option<Band>,
    /// Who decided: the screen, a report, or the agent's own word by
    /// one of its channels (`relay`, `file`, `osc`).
    pub authority: Authority,
    /// The rule (screen), `report/<lifecycle>` or the program's word
    /// (`psp/blocked:permission`).
    pub rule: String,
    /// The lifecycle word of a reporting agent (`quiet · 12m`).
    pub lifecycle: Option<String>,
    /// The reporter's last status text.
    pub message: Option<String>,
    /// The display label (`tend report-metadata`).
    pub label: Option<String>,
    /// Parked, with the note.
    pub parked: bool,
    /// The park's note.
    pub note: Option<String>,
    /// The park's gate pane.
    pub gate: Option<String>,
    /// Snoozed.
    pub snoozed: bool,
    /// Unix time the snooze ends (`None`: unlimited or none).
    pub until: Option<u64>,
    /// The stop flag's words (`stop pending · not read`).
    pub stop: Option<String>,
    /// The exit code of an agent run that has exited, where known.
    pub exit_code: Option<i32>,
    /// The program's subtasks (OSC 7501 child records), live first.
    pub tasks: Vec<Task>,
    /// The program's name for itself (OSC 7501 `app`).
    pub app: Option<String>,
    /// Waiting on its usage limit: Unix time the limit resets, when the
    /// agent named it.
    pub resets_at: Option<i64>,
    /// The words the agent's limit screen says it resets at.
    pub reset_words: Option<String>,
}

/// A pane's usage limit, as the fold takes it ([`crate::limits`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LimitFacts {
    /// The reset it named has passed.
    pub reset_passed: bool,
    /// When it resets (Unix time).
    pub resets_at: Option<i64>,
    /// The words.
    pub words: Option<String>,
}

impl EffView {
    /// What changes the published options and the events.
    pub fn key(&self) -> (Option<State>, Option<Reason>, Option<Band>, bool) {
        (self.state, self.reason, self.band, self.quiet)
    }
}

/// Folds the detector's status, the report book's verdict (given the
/// agent's own `word`, when one is trusted), the marks, the seen flag and
/// the pane's usage limit into the effective view.
pub fn fold(
    status: &Status,
    word: Option<&Word>,
    effective: impl FnOnce(&ScreenStatus<'_>) -> Effective,
    marks: &PaneMarks,
    seen: bool,
    stop: Option<String>,
    limit: &LimitFacts,
) -> EffView {
    let screen = ScreenStatus {
        agent: status.agent.as_deref(),
        state: status.state,
        reason: status.reason,
        from_rule: status.trigger == Some(Trigger::Screen),
    };
    let e = effective(&screen);
    let by_report = e.authority == Authority::Report;
    let quiet = if e.authority == Authority::Screen {
        status.quiet
    } else {
        e.quiet
    };
    let band = attention::band(&PaneFacts {
        state: e.state,
        reason: e.reason,
        quiet,
        seen,
        parked: marks.parked,
        snoozed: marks.snoozed,
        reset_passed: limit.reset_passed,
    });
    let limited = e.state == Some(State::Waiting) && e.reason == Some(Reason::Limit);
    let rule = match (&e.lifecycle, by_report, word) {
        (Some(l), true, _) => format!("report/{}", l.as_str()),
        (_, _, Some(w)) if e.authority == w.channel => w.reading.rule.clone(),
        _ => status.rule.clone(),
    };
    EffView {
        agent: status.agent.clone(),
        state: e.state,
        reason: e.reason,
        quiet,
        band,
        authority: e.authority,
        rule,
        lifecycle: e.word,
        message: e.message,
        label: e.label,
        parked: marks.parked,
        note: marks.note.clone(),
        gate: marks.gate.clone(),
        snoozed: marks.snoozed,
        until: marks.until,
        stop,
        exit_code: if e.state == Some(State::Exited) {
            status.exit_code
        } else {
            None
        },
        tasks: e.tasks,
        app: e.app,
        resets_at: limit.resets_at.filter(|_| limited),
        reset_words: limit.words.clone().filter(|_| limited),
    }
}
