//! The program's own word through the terminal (OSC 7501, read by the
//! detector into a [`Reading`]) ahead of `tend report`'s reports and the
//! screen.
//!
//! Separate because it is a second source of self-reports with its own
//! life: no lease (the program clears its records, or its run ends), no
//! sequence numbers, and subtasks.

use super::*;

impl ReportBook {
    /// [`ReportBook::effective`] with the program's own word: while its
    /// records say something, that is the pane's status (authority `psp`),
    /// unless the screen shows a visible blocking dialog of the pane's
    /// identified agent — the program names no manifest agent, so any
    /// identified agent's dialog counts, as for a reporter that named none.
    /// The reading's message and subtasks are kept either way. Without a
    /// reading, the reports and the screen decide as before.
    pub fn effective_with(
        &self,
        now: Duration,
        pane: &str,
        screen: &ScreenStatus<'_>,
        word: Option<&Reading>,
    ) -> Effective {
        let mut e = self.effective(now, pane, screen);
        let Some(w) = word else { return e };
        e.tasks = w.tasks.clone();
        e.app = w.app.clone();
        e.quiet = false;
        if screen.is_blocking_dialog() {
            e.state = screen.state;
            e.reason = screen.reason;
            e.authority = Authority::Screen;
            e.overridden = true;
            // The program's message, when it too says it waits on the user.
            e.message = w
                .message
                .clone()
                .filter(|_| w.state == State::Waiting)
                .or(e.message);
            return e;
        }
        e.state = Some(w.state);
        e.reason = w.reason;
        e.authority = Authority::Psp;
        e.overridden = false;
        e.message = w.message.clone();
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::*;
    use tend_detector::psp::{self, Records};

    /// The reading of a program that sent `reports` (OSC 7501 bodies).
    fn word(reports: &[&str]) -> Option<Reading> {
        let mut recs = Records::default();
        for r in reports {
            match psp::parse(r.as_bytes()) {
                Ok(psp::Message::Report(r)) => recs.apply(s(0), r).unwrap(),
                other => panic!("{r}: {other:?}"),
            }
        }
        recs.reading()
    }

    fn msg(text: &str) -> String {
        psp::base64_encode(text.as_bytes())
    }

    fn claude(
        state: Option<State>,
        reason: Option<Reason>,
        from_rule: bool,
    ) -> ScreenStatus<'static> {
        ScreenStatus {
            agent: Some("claude"),
            state,
            reason,
            from_rule,
        }
    }

    #[test]
    fn the_word_decides_with_its_message() {
        let b = book();
        let blocked = format!(
            "state=blocked:kind=permission:msg={}",
            msg("approve Bash: rm -rf ./build")
        );
        let cases: &[(&str, State, Option<Reason>)] = &[
            ("state=idle:app=claude-code", State::Idle, None),
            ("state=working", State::Working, None),
            (&blocked, State::Waiting, Some(Reason::Approval)),
            (
                "state=blocked:kind=question",
                State::Waiting,
                Some(Reason::Question),
            ),
            (
                "state=blocked:kind=auth",
                State::Waiting,
                Some(Reason::Error),
            ),
            ("state=error", State::Waiting, Some(Reason::Error)),
            ("state=done", State::Completed, None),
        ];
        // The screen reads something else: completed after silence.
        let screen = claude(Some(State::Completed), None, true);
        for (r, state, reason) in cases {
            let w = word(&[r]);
            let e = b.effective_with(s(1), "%1", &screen, w.as_ref());
            assert_eq!(
                (e.state, e.reason, e.authority),
                (Some(*state), *reason, Authority::Psp),
                "{r}"
            );
            assert!(!e.overridden);
        }
        let e = b.effective_with(s(1), "%1", &screen, word(&[&blocked]).as_ref());
        assert_eq!(e.message.as_deref(), Some("approve Bash: rm -rf ./build"));
        let e = b.effective_with(
            s(1),
            "%1",
            &screen,
            word(&["state=idle:app=claude-code"]).as_ref(),
        );
        assert_eq!(e.app.as_deref(), Some("claude-code"));
    }

    #[test]
    fn clear_hands_the_pane_back_to_the_screen() {
        let b = book();
        let screen = claude(Some(State::Idle), None, true);
        let w = word(&["state=working", "state=clear"]);
        assert_eq!(w, None);
        let e = b.effective_with(s(1), "%1", &screen, w.as_ref());
        assert_eq!(
            (e.state, e.authority),
            (Some(State::Idle), Authority::Screen)
        );
        assert_eq!(e, b.effective(s(1), "%1", &screen));
    }

    #[test]
    fn a_live_subtask_keeps_the_agent_working() {
        let b = book();
        let task = format!(
            "state=working:id=bash-1:title={}",
            msg("Run the long command")
        );
        let w = word(&["state=working", &task, "state=done"]).unwrap();
        let screen = claude(Some(State::Completed), None, true);
        let e = b.effective_with(s(1), "%1", &screen, Some(&w));
        assert_eq!(
            (e.state, e.authority),
            (Some(State::Working), Authority::Psp)
        );
        assert_eq!(e.tasks.len(), 1);
        assert_eq!(e.tasks[0].title.as_deref(), Some("Run the long command"));
        assert!(e.tasks[0].live);
    }

    #[test]
    fn only_a_visible_dialog_of_the_agent_overrides() {
        let b = book();
        let w = word(&["state=working"]);
        for reason in [Reason::Approval, Reason::Question, Reason::Prompt] {
            let dialog = claude(Some(State::Waiting), Some(reason), true);
            let e = b.effective_with(s(1), "%1", &dialog, w.as_ref());
            assert_eq!(
                (e.state, e.reason, e.authority, e.overridden),
                (Some(State::Waiting), Some(reason), Authority::Screen, true)
            );
            // The program's working message is not the dialog's.
            assert_eq!(e.message, None);
        }
        // Silence, an error banner, a pane with no identified agent: no.
        for screen in [
            claude(Some(State::Waiting), Some(Reason::Prompt), false),
            claude(Some(State::Waiting), Some(Reason::Error), true),
            ScreenStatus {
                agent: None,
                ..claude(Some(State::Waiting), Some(Reason::Approval), true)
            },
        ] {
            let e = b.effective_with(s(1), "%1", &screen, w.as_ref());
            assert_eq!(
                (e.state, e.authority),
                (Some(State::Working), Authority::Psp)
            );
        }
        // A dialog while the program says it is blocked: its message shows.
        let blocked = format!("state=blocked:kind=permission:msg={}", msg("approve Bash"));
        let dialog = claude(Some(State::Waiting), Some(Reason::Approval), true);
        let e = b.effective_with(s(1), "%1", &dialog, word(&[&blocked]).as_ref());
        assert_eq!(
            (e.authority, e.message.as_deref()),
            (Authority::Screen, Some("approve Bash"))
        );
    }

    #[test]
    fn the_word_goes_ahead_of_a_report() {
        let mut b = book();
        b.apply(s(0), "%1", Report::new("done").message("all green"))
            .unwrap();
        let screen = screen_none();
        let e = b.effective_with(s(1), "%1", &screen, word(&["state=working"]).as_ref());
        assert_eq!(
            (e.state, e.authority, e.message),
            (Some(State::Working), Authority::Psp, None)
        );
        // The report's word is still shown beside it, and decides again
        // once the program's word is cleared.
        assert_eq!(e.lifecycle, Some(Lifecycle::Done));
        let e = b.effective_with(s(1), "%1", &screen, None);
        assert_eq!(
            (e.state, e.authority),
            (Some(State::Completed), Authority::Report)
        );
    }
}
