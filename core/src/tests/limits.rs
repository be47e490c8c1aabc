//! Usage limits in the table, on virtual time: a pane at Claude Code's
//! limit screen is `waiting/limit` in the `limited` band with its reset, a
//! demand once the reset passes, and — with `[limits] resume` — gets the
//! resume text exactly once, at the reset plus the margin, unless someone
//! typed into it; `tend resume` does it by hand.

use super::*;
use tend_attention::limit::ResumePolicy;
use tend_detector::limit::Resume;

use crate::limits::{ResumeBy, ResumeOutcome};
use crate::{Fact, GlobalFact, PaneFact};

/// 2027-01-15 08:00:00 UTC is [`WALL`]: the limit resets two minutes in.
const LIMIT_SCREEN: &str = "\x1b[2J\x1b[H\
\u{276f} Write a short poem about tmux.\r\n\
  \u{23bf}  You've hit your 5-hour limit \u{b7} resets 8:02am (UTC)\r\n\r\n\
\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\r\n\
\u{276f} \r\n\
\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\u{2500}\r\n\
  \u{23f8} manual mode on \u{b7} ? for shortcuts";

/// The reset on the table's clock: two minutes after its start.
const RESET: u64 = 120;

fn policy(text: Option<&str>) -> ResumePolicy {
    ResumePolicy {
        text: text.map(str::to_owned),
        margin: Duration::from_secs(2),
    }
}

/// A table with Claude Code in %1 (pid 4545), its screen at the limit.
fn limited(resume: Option<&str>, clients: Vec<ClientInfo>) -> Rig {
    let mut r = Rig::with_resume(Mux::Tmux, policy(resume));
    r.declared_agent(4545, "claude");
    let mut p1 = pane(1);
    p1.pane_pid = 4545;
    r.input(Input::Listed {
        panes: vec![p1],
        clients,
    });
    let mut screen = tend_detector::screen::Screen::new(24, 80);
    screen.process(LIMIT_SCREEN.as_bytes());
    r.input(Input::Captured {
        pane: PaneId(1),
        screen: capture_of(1, &screen),
        purpose: CapturePurpose::Seed,
    });
    r.drive_to(3000);
    r
}

/// The resumes asked of the backend since the last call: (text, by).
fn resumes(r: &mut Rig) -> Vec<(String, ResumeBy, Option<RequestId>)> {
    r.drain_jobs()
        .into_iter()
        .filter_map(|j| match j {
            MuxJob::LimitResume {
                pane: PaneId(1),
                text,
                by,
                reply,
                ..
            } => Some((text, by, reply)),
            _ => None,
        })
        .collect()
}

/// The value tmux was last told for an option, from the publishes since
/// the last call.
fn published(jobs: &[MuxJob], fact: Fact) -> Option<String> {
    jobs.iter()
        .filter_map(|j| match j {
            MuxJob::Publish { updates, .. } => Some(updates),
            _ => None,
        })
        .flatten()
        .rfind(|u| u.fact == fact)
        .and_then(|u| u.value.clone())
}

#[test]
fn a_limit_is_no_demand_until_its_reset_and_then_resumed_exactly_once() {
    let mut r = limited(Some("continue"), vec![]);
    let g = r.get("%1");
    assert_eq!(
        (&g["state"], &g["reason"], &g["band"]),
        (&json!("waiting"), &json!("limit"), &json!("limited")),
        "{g}"
    );
    assert_eq!(g["resets_at"], json!(WALL as i64 + RESET as i64));
    assert_eq!(g["reset_words"], "8:02am (UTC)");
    let hit = r.events("pane.agent_status_changed");
    let last = hit.last().expect("a status change");
    assert_eq!(last["band"], "limited");
    assert_eq!(last["resets"], "08:02");
    // The status line: its own glyph, the soonest reset, no demand.
    let jobs = r.drain_jobs();
    assert_eq!(
        published(&jobs, Fact::Pane(PaneId(1), PaneFact::Glyph)).as_deref(),
        Some("⧖")
    );
    assert_eq!(
        published(&jobs, Fact::Global(GlobalFact::NextReset)).as_deref(),
        Some("08:02")
    );
    assert_eq!(
        published(&jobs, Fact::Global(GlobalFact::Limited)).as_deref(),
        Some("1")
    );
    assert_eq!(
        published(&jobs, Fact::Global(GlobalFact::Needs)).as_deref(),
        Some("0")
    );
    assert_eq!(
        published(&jobs, Fact::Global(GlobalFact::Summary)).as_deref(),
        Some("1 agent limited until 08:02")
    );
    // The reset passes: a demand. "8:02am" names the minute, so the
    // resume waits for its end and the margin: 08:03:01.
    r.drive_to(RESET * 1000 + 500);
    assert_eq!(r.get("%1")["band"], "waiting");
    let reset = r.events("pane.agent_status_changed");
    assert_eq!(
        (&reset[0]["prev_band"], &reset[0]["band"]),
        (&json!("limited"), &json!("waiting"))
    );
    assert!(
        r.ok("explain", json!({"pane": "%1"}))["limit"]["resume"]
            .as_str()
            .is_some_and(|s| s.starts_with("at 08:03 (in 1m:")),
        "{}",
        r.ok("explain", json!({"pane": "%1"}))["limit"]
    );
    r.drive_to(RESET * 1000 + 60_900);
    assert!(resumes(&mut r).is_empty(), "not before the minute's end");
    r.drive_to(RESET * 1000 + 61_000);
    assert_eq!(
        resumes(&mut r),
        vec![("continue".to_owned(), ResumeBy::Reset, None)]
    );
    // The backend found the limit and sent the text: said in the log, on
    // the bus and in `tend explain`.
    r.input(Input::LimitResumed {
        pane: PaneId(1),
        outcome: ResumeOutcome {
            result: Ok(Resume::Text("continue".into())),
            by: ResumeBy::Reset,
            reply: None,
        },
    });
    let logs: Vec<String> = std::iter::from_fn(|| r.core.poll_effect())
        .filter_map(|e| match e {
            Effect::Log(l) => Some(l),
            _ => None,
        })
        .collect();
    assert_eq!(
        logs,
        ["resumed %1 (claude) at its usage limit's reset: sent \"continue\""]
    );
    let ev = r.events("pane.resumed");
    assert_eq!(ev.len(), 1);
    assert_eq!(
        (&ev[0]["by"], &ev[0]["text"], &ev[0]["resets_at"]),
        (
            &json!("reset"),
            &json!("continue"),
            &json!(WALL as i64 + 120)
        )
    );
    let limit = r.ok("explain", json!({"pane": "%1"}))["limit"].clone();
    assert_eq!(limit["resume"], "done at 08:03");
    assert!(
        limit["last"]
            .as_str()
            .is_some_and(|l| l.starts_with("resumed %1 (claude) at its usage limit's reset")),
        "{limit}"
    );
    // Never twice, however long the screen still shows the limit.
    r.drive_to(RESET * 1000 + 600_000);
    assert!(resumes(&mut r).is_empty());
}

#[test]
fn typing_into_the_pane_or_resume_off_keeps_tend_out() {
    // Resume off: the reset makes a demand, nothing is sent.
    let mut r = limited(None, vec![]);
    r.drive_to(RESET * 1000 + 60_000);
    assert_eq!(r.get("%1")["band"], "waiting");
    assert!(resumes(&mut r).is_empty());
    let limit = r.ok("explain", json!({"pane": "%1"}))["limit"].clone();
    assert_eq!(
        limit["resume"],
        "off: [limits] resume is not set in config.toml (tend resume does it by hand)"
    );
    // Resume on, but the user typed into the pane after the limit came.
    let mut r = limited(Some("continue"), vec![client(1, 100)]);
    r.input(Input::Listed {
        panes: vec![{
            let mut p = pane(1);
            p.pane_pid = 4545;
            p
        }],
        clients: vec![client(1, 101)],
    });
    r.drive_to(RESET * 1000 + 60_000);
    assert!(resumes(&mut r).is_empty());
    assert_eq!(
        r.ok("explain", json!({"pane": "%1"}))["limit"]["resume"],
        "no: someone typed into the pane since the limit came"
    );
}

#[test]
fn resume_by_hand_goes_through_the_last_look_and_its_answer() {
    let mut r = limited(None, vec![]);
    r.drain_jobs();
    // Before the reset too: the user asks for it.
    let req =
        Request::from_wire("resume", json!({"pane": "%1", "text": "go on"})).expect("a request");
    r.input(Input::Control {
        id: RequestId(99),
        req,
    });
    let asked = resumes(&mut r);
    assert_eq!(
        asked,
        vec![("go on".to_owned(), ResumeBy::User, Some(RequestId(99)))]
    );
    // The backend's look found the screen moved on: the refusal answers.
    r.input(Input::LimitResumed {
        pane: PaneId(1),
        outcome: ResumeOutcome {
            result: Err(tend_protocol::Error::new(
                ErrorCode::NotAtLimit,
                "%1 no longer shows its usage limit (the screen reads claude/ready); nothing was sent",
            )),
            by: ResumeBy::User,
            reply: Some(RequestId(99)),
        },
    });
    let answer = std::iter::from_fn(|| r.core.poll_effect()).find_map(|e| match e {
        Effect::Reply {
            id: RequestId(99),
            result,
        } => Some(result),
        _ => None,
    });
    let err = answer.expect("answered").expect_err("refused");
    assert_eq!(err.code, ErrorCode::NotAtLimit);
    let ev = r.events("pane.resumed");
    assert_eq!(ev[0]["refused"], err.message);
    // The limit counts as resumed: the reset sends nothing more.
    r.drive_to(RESET * 1000 + 60_000);
    assert!(resumes(&mut r).is_empty());
    // A pane at no limit is refused at once.
    let mut idle = Rig::new(Mux::Tmux);
    idle.declared_agent(4600, "claude");
    let mut p = pane(1);
    p.pane_pid = 4600;
    idle.input(Input::Listed {
        panes: vec![p],
        clients: vec![],
    });
    idle.input(Input::Captured {
        pane: PaneId(1),
        screen: capture_of(1, &tend_detector::screen::Screen::new(24, 80)),
        purpose: CapturePurpose::Seed,
    });
    idle.drive_to(2000);
    let e = idle
        .ask("resume", json!({"pane": "%1"}))
        .error
        .expect("refused");
    assert_eq!(e.code, ErrorCode::NotAtLimit);
    assert_eq!(
        e.message,
        "%1 does not show a usage limit; nothing was sent"
    );
}
