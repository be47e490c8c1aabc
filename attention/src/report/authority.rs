//! Authority: who decides a pane's status, the live report or the screen,
//! and the [`Effective`] status that results.
//!
//! Separate because it is where the report model meets the screen detector;
//! the rest of the report model never looks at the screen.

use super::*;

pub use tend_vocab::Authority;

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
    /// The program's subtasks (OSC 7501 child records), live first.
    pub tasks: Vec<Task>,
    /// The program's name for itself (OSC 7501 `app`).
    pub app: Option<String>,
}

impl ReportBook {
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
                tasks: Vec::new(),
                app: None,
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
            tasks: Vec::new(),
            app: None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::*;

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
}
