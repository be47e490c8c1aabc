//! The agent's own word — its OSC 7501 reports (read by the detector into
//! a [`Reading`]) or the session file it keeps (read the same way) — ahead
//! of `tend report`'s reports and the screen.
//!
//! Separate because it is a second source of self-reports with its own
//! life: no lease (the program clears its records, or its run ends; the
//! file goes with its process), no sequence numbers, and subtasks.

use super::*;

/// The agent's own word, and the channel it came by: [`Authority::Relay`]
/// (OSC 7501 through `tend run`), [`Authority::File`] (its session file)
/// or [`Authority::Osc`] (OSC 7501 printed unasked). Which channel is
/// trusted for a pane is the caller's to decide.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// What it says, in tend's vocabulary.
    pub reading: Reading,
    /// How it came.
    pub channel: Authority,
}

impl Word {
    /// `reading`, come by `channel`.
    pub fn new(reading: Reading, channel: Authority) -> Word {
        Word { reading, channel }
    }
}

impl ReportBook {
    /// [`ReportBook::effective`] with the agent's own word: while it says
    /// something, that is the pane's status (authority: its channel),
    /// unless the screen shows a visible blocking dialog of the pane's
    /// identified agent — the word names no manifest agent, so any
    /// identified agent's dialog counts, as for a reporter that named none.
    /// A session file's `idle` says that the turn is over, not how: a
    /// waiting state a screen rule reads then (an error banner, "what
    /// should Claude do instead?") tells it, and shows. The word's message
    /// and subtasks are kept either way. Without a word, the reports and
    /// the screen decide as before.
    pub fn effective_with(
        &self,
        now: Duration,
        pane: &str,
        screen: &ScreenStatus<'_>,
        word: Option<&Word>,
    ) -> Effective {
        let mut e = self.effective(now, pane, screen);
        let Some(Word {
            reading: w,
            channel,
        }) = word
        else {
            return e;
        };
        e.tasks = w.tasks.clone();
        e.app = w.app.clone();
        e.quiet = false;
        let shown = screen.from_rule && screen.agent.is_some();
        let how_it_ended = *channel == Authority::File
            && w.state == State::Completed
            && shown
            && screen.state == Some(State::Waiting);
        // `idle` says nothing waits for the user; what the screen shows
        // left for them does: a finished turn with its answer unread, an
        // error or a usage limit (Codex says idle as soon as the user
        // starts typing the next prompt: corpus/codex/multi_turn@200x50
        // t=34.8, codex/limit_resume@120x40 t=91.3).
        let left_for_the_user = w.state == State::Idle
            && shown
            && matches!(screen.state, Some(State::Completed | State::Waiting));
        // An error the agent reports, which the screen names: a usage
        // limit, with when it resets (Codex says `state=error` at its
        // limit screen: corpus/codex/limit@80x24 t=12.7).
        let named_error = w.state == State::Waiting
            && w.reason == Some(Reason::Error)
            && shown
            && screen.state == Some(State::Waiting)
            && screen.reason == Some(Reason::Limit);
        if screen.is_blocking_dialog() || how_it_ended || left_for_the_user || named_error {
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
        e.authority = *channel;
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

    /// The word of a program that sent `reports` (OSC 7501 bodies)
    /// through `tend run`.
    fn word(reports: &[&str]) -> Option<Word> {
        let mut recs = Records::default();
        for r in reports {
            match psp::parse(r.as_bytes()) {
                Ok(psp::Message::Report(r)) => recs.apply(s(0), r).unwrap(),
                other => panic!("{r}: {other:?}"),
            }
        }
        recs.reading().map(|r| Word::new(r, Authority::Relay))
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
        let screen = claude(Some(State::Completed), None, false);
        for (r, state, reason) in cases {
            let w = word(&[r]);
            let e = b.effective_with(s(1), "%1", &screen, w.as_ref());
            assert_eq!(
                (e.state, e.reason, e.authority),
                (Some(*state), *reason, Authority::Relay),
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
            (Some(State::Working), Authority::Relay)
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
                (Some(State::Working), Authority::Relay)
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
            (Some(State::Working), Authority::Relay, None)
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

    /// The word of a session file that says `status` (waiting on
    /// `waiting_for`), after a turn.
    fn file(status: &str, waiting_for: Option<&str>) -> Word {
        use tend_detector::session_file::{parse, Follower};
        let body = |st: &str| {
            let mut v = serde_json::json!({"pid": 42, "procStart": "7", "sessionId": "s",
                "cwd": "/w", "version": "2.1.332", "kind": "interactive", "status": st});
            if let Some(w) = waiting_for {
                v["waitingFor"] = w.into();
            }
            v.to_string()
        };
        let mut f = Follower::new();
        f.apply(s(0), parse(body("busy").as_bytes()), true);
        f.apply(s(1), parse(body(status).as_bytes()), true);
        Word::new(f.reading(s(2), false).unwrap(), Authority::File)
    }

    #[test]
    fn a_session_file_decides_as_the_file() {
        let b = book();
        // The screen reads a finished turn while a background shell runs.
        let screen = claude(Some(State::Completed), None, true);
        let e = b.effective_with(s(2), "%1", &screen, Some(&file("shell", None)));
        assert_eq!(
            (e.state, e.authority, e.tasks.len()),
            (Some(State::Working), Authority::File, 1)
        );
        assert!(e.tasks[0].live);
        let e = b.effective_with(
            s(2),
            "%1",
            &screen,
            Some(&file("waiting", Some("permission prompt"))),
        );
        assert_eq!(
            (e.state, e.reason, e.authority, e.message.as_deref()),
            (
                Some(State::Waiting),
                Some(Reason::Approval),
                Authority::File,
                Some("permission prompt")
            )
        );
        // The approval dialog on screen is the witness: it shows, with the
        // agent's words.
        let dialog = claude(Some(State::Waiting), Some(Reason::Approval), true);
        let e = b.effective_with(
            s(2),
            "%1",
            &dialog,
            Some(&file("waiting", Some("permission prompt"))),
        );
        assert_eq!(
            (e.authority, e.overridden, e.message.as_deref()),
            (Authority::Screen, true, Some("permission prompt"))
        );
    }

    #[test]
    fn a_files_idle_lets_the_screen_say_how_the_turn_ended() {
        let b = book();
        let idle = file("idle", None);
        assert_eq!(idle.reading.state, State::Completed);
        // An error banner or the interrupted prompt, read by a rule: shown.
        for reason in [Reason::Error, Reason::Prompt] {
            let screen = claude(Some(State::Waiting), Some(reason), true);
            let e = b.effective_with(s(2), "%1", &screen, Some(&idle));
            assert_eq!(
                (e.state, e.reason, e.authority),
                (Some(State::Waiting), Some(reason), Authority::Screen)
            );
        }
        // A finished turn on screen outlives a word's idle.
        let screen_done = claude(Some(State::Completed), None, true);
        let said_idle = word(&["state=done", "state=idle"]).unwrap();
        let e = b.effective_with(s(2), "%1", &screen_done, Some(&said_idle));
        assert_eq!(
            (e.state, e.authority),
            (Some(State::Completed), Authority::Screen)
        );
        // Nor a limit notice still on screen.
        let e = b.effective_with(
            s(2),
            "%1",
            &claude(Some(State::Waiting), Some(Reason::Limit), true),
            Some(&said_idle),
        );
        assert_eq!(
            (e.state, e.reason, e.authority),
            (Some(State::Waiting), Some(Reason::Limit), Authority::Screen)
        );
        // An error the screen names a usage limit: the limit shows.
        let limit = claude(Some(State::Waiting), Some(Reason::Limit), true);
        let said_error = word(&["state=error:app=codex"]).unwrap();
        let e = b.effective_with(s(2), "%1", &limit, Some(&said_error));
        assert_eq!(
            (e.state, e.reason, e.authority),
            (Some(State::Waiting), Some(Reason::Limit), Authority::Screen)
        );
        // Waiting from silence, not a rule: the file's completed.
        let silent = claude(Some(State::Waiting), Some(Reason::Error), false);
        let e = b.effective_with(s(2), "%1", &silent, Some(&idle));
        assert_eq!(
            (e.state, e.authority),
            (Some(State::Completed), Authority::File)
        );
        // While the file says busy, an error banner does not override it.
        let banner = claude(Some(State::Waiting), Some(Reason::Error), true);
        let e = b.effective_with(s(2), "%1", &banner, Some(&file("busy", None)));
        assert_eq!(
            (e.state, e.authority),
            (Some(State::Working), Authority::File)
        );
        // The program's own `done` says how its turn ended: it holds.
        let done = word(&["state=done"]).unwrap();
        let e = b.effective_with(s(2), "%1", &banner, Some(&done));
        assert_eq!(
            (e.state, e.authority),
            (Some(State::Completed), Authority::Relay)
        );
    }

    #[test]
    fn an_unasked_report_decides_under_its_own_channel() {
        let b = book();
        let w = word(&["state=blocked:app=codex:kind=permission"]).unwrap();
        let w = Word::new(w.reading, Authority::Osc);
        let e = b.effective_with(s(1), "%1", &screen_none(), Some(&w));
        assert_eq!(
            (e.state, e.reason, e.authority, e.app.as_deref()),
            (
                Some(State::Waiting),
                Some(Reason::Approval),
                Authority::Osc,
                Some("codex")
            )
        );
        assert_eq!(Authority::Osc.as_str(), "osc");
        assert_eq!(Authority::File.as_str(), "file");
    }
}
