use super::*;
use crate::manifest::resume::agent_home;

/// A timeline captured from Claude Code 2.1.332 by
/// `tools/agentlab/session_capture.py` (scrubbed): each line one version
/// of the file (`body`) or its removal (`gone`), `t` seconds from the
/// first.
fn timeline(scenario: &str) -> Vec<(Duration, Option<String>)> {
    let text = match scenario {
        "approval" => include_str!("../../tests/session_files/claude-2.1.332/approval.jsonl"),
        "background" => include_str!("../../tests/session_files/claude-2.1.332/background.jsonl"),
        "deny" => include_str!("../../tests/session_files/claude-2.1.332/deny.jsonl"),
        "esc_stream" => include_str!("../../tests/session_files/claude-2.1.332/esc_stream.jsonl"),
        "exit" => include_str!("../../tests/session_files/claude-2.1.332/exit.jsonl"),
        "question" => include_str!("../../tests/session_files/claude-2.1.332/question.jsonl"),
        "approval_edit" => {
            include_str!("../../tests/session_files/claude-2.1.332/approval_edit.jsonl")
        }
        "ctrlc_tool" => include_str!("../../tests/session_files/claude-2.1.332/ctrlc_tool.jsonl"),
        "error_429" => include_str!("../../tests/session_files/claude-2.1.332/error_429.jsonl"),
        "multi_turn" => include_str!("../../tests/session_files/claude-2.1.332/multi_turn.jsonl"),
        "plan" => include_str!("../../tests/session_files/claude-2.1.332/plan.jsonl"),
        other => panic!("no capture {other}"),
    };
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a capture line");
            let t = Duration::from_secs_f64(v["t"].as_f64().expect("t"));
            (t, v["body"].as_str().map(str::to_owned))
        })
        .collect()
}

const SCENARIOS: &[&str] = &[
    "approval",
    "approval_edit",
    "background",
    "ctrlc_tool",
    "deny",
    "error_429",
    "esc_stream",
    "exit",
    "multi_turn",
    "plan",
    "question",
];

/// A file as the CLI writes it, with `status`/`waitingFor` as given.
fn file(status: Option<&str>, waiting_for: Option<&str>) -> String {
    let mut v = serde_json::json!({
        "pid": 4242, "sessionId": "00000000-0000-4000-8000-000000000001",
        "cwd": "/home/user/work", "startedAt": 1796537525052u64, "procStart": "40196",
        "version": "2.1.332", "kind": "interactive", "entrypoint": "cli", "name": "work-58",
    });
    if let Some(s) = status {
        v["status"] = s.into();
        v["statusUpdatedAt"] = 1796537529013u64.into();
    }
    if let Some(w) = waiting_for {
        v["waitingFor"] = w.into();
    }
    v.to_string()
}

fn with(field: &str, value: Value) -> Vec<u8> {
    let mut v: Value = serde_json::from_str(&file(Some("busy"), None)).unwrap();
    v[field] = value;
    v.to_string().into_bytes()
}

fn without(field: &str) -> Vec<u8> {
    let mut v: Value = serde_json::from_str(&file(Some("busy"), None)).unwrap();
    v.as_object_mut().unwrap().remove(field);
    v.to_string().into_bytes()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn every_captured_file_parses_and_every_status_is_seen() {
    let mut statuses = std::collections::BTreeSet::new();
    let mut waits = std::collections::BTreeSet::new();
    for s in SCENARIOS {
        for (_, body) in timeline(s) {
            let Some(body) = body else { continue };
            let f = parse(body.as_bytes()).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(
                (f.version.as_str(), f.kind, f.cwd.as_str()),
                ("2.1.332", Kind::Interactive, "/home/user/work")
            );
            assert_eq!(f.session_id, "00000000-0000-4000-8000-000000000001");
            assert!(f.proc_start.parse::<u64>().is_ok(), "{}", f.proc_start);
            statuses.insert(f.status.map(|s| s.as_str()).unwrap_or("none"));
            waits.extend(f.waiting_for);
        }
    }
    assert_eq!(
        statuses.into_iter().collect::<Vec<_>>(),
        ["busy", "idle", "none", "shell", "waiting"]
    );
    assert_eq!(
        waits.into_iter().collect::<Vec<_>>(),
        ["input needed", "permission prompt"]
    );
}

/// Replays a capture through a follower, the file tied, reading at each
/// version and again `SHELL_SETTLE` later: (seconds, state, reason, rule)
/// of every change.
fn replay(scenario: &str) -> Vec<(f64, Option<State>, Option<Reason>, String)> {
    let mut f = Follower::new();
    let mut out: Vec<(f64, Option<State>, Option<Reason>, String)> = Vec::new();
    let mut note = |f: &Follower, at: Duration| {
        let r = f.reading(at, false);
        let row = (
            r.as_ref().map(|r| r.state),
            r.as_ref().and_then(|r| r.reason),
            r.map(|r| r.rule).unwrap_or_default(),
        );
        if out.last().map(|l| (l.1, l.2, l.3.clone())) != Some(row.clone()) {
            out.push((
                (at.as_secs_f64() * 1000.0).round() / 1000.0,
                row.0,
                row.1,
                row.2,
            ));
        }
    };
    let lines = timeline(scenario);
    for (i, (at, body)) in lines.iter().enumerate() {
        match body {
            Some(b) => f.apply(*at, parse(b.as_bytes()), true),
            None => f.forget(),
        }
        note(&f, *at);
        if let Some(d) = f.next_deadline() {
            if lines.get(i + 1).is_none_or(|(next, _)| *next > d) {
                note(&f, d);
            }
        }
    }
    out
}

#[test]
fn an_approval_reads_waiting_approval_with_the_agents_words() {
    use State::*;
    let w = |t: f64, s, r, rule: &str| (t, s, r, rule.to_owned());
    assert_eq!(
        replay("approval"),
        [
            w(0.0, None, None, ""),
            w(0.189, Some(Idle), None, "file/idle"),
            w(4.045, Some(Working), None, "file/busy"),
            w(
                6.167,
                Some(Waiting),
                Some(Reason::Approval),
                "file/waiting:permission prompt"
            ),
            w(21.307, Some(Working), None, "file/busy"),
            w(25.419, Some(Completed), None, "file/idle"),
            w(35.445, None, None, ""),
        ]
    );
    let mut f = Follower::new();
    for (at, body) in timeline("approval").into_iter().take(4) {
        f.apply(at, parse(body.unwrap().as_bytes()), true);
    }
    let r = f.reading(ms(7000), false).unwrap();
    assert_eq!(r.message.as_deref(), Some("permission prompt"));
    assert!(r.tasks.is_empty());
}

#[test]
fn a_background_shell_keeps_the_turn_working_until_it_ends() {
    use State::*;
    let w = |t: f64, s, rule: &str| (t, s, None, rule.to_owned());
    // The shell ran from 10.2 s to 26.2 s: working all along, then the
    // 15 ms idle between the shell's end and the agent's report of it is
    // held, and only the last idle is completed.
    assert_eq!(
        replay("background"),
        [
            w(0.0, None, ""),
            w(0.217, Some(Idle), "file/idle"),
            w(3.998, Some(Working), "file/busy"),
            w(10.209, Some(Working), "file/shell"),
            w(26.18, Some(Working), "file/idle-after-shell"),
            w(26.195, Some(Working), "file/busy"),
            w(30.304, Some(Completed), "file/idle"),
            w(38.315, None, ""),
        ]
    );
    let mut f = Follower::new();
    for (at, body) in timeline("background").into_iter().take(4) {
        f.apply(at, parse(body.unwrap().as_bytes()), true);
    }
    let r = f.reading(ms(11_000), false).unwrap();
    assert_eq!((r.live_tasks, r.tasks[0].live), (1, true));
    assert_eq!(r.tasks[0].title.as_deref(), Some("background shell"));
}

#[test]
fn an_idle_after_a_shell_that_stays_idle_is_completed_once_settled() {
    let mut f = Follower::new();
    f.apply(ms(0), parse(file(Some("busy"), None).as_bytes()), true);
    f.apply(ms(100), parse(file(Some("shell"), None).as_bytes()), true);
    f.apply(ms(5000), parse(file(Some("idle"), None).as_bytes()), true);
    assert_eq!(f.next_deadline(), Some(ms(5000) + SHELL_SETTLE));
    let held = f.reading(ms(5299), false).unwrap();
    assert_eq!(held.state, State::Working);
    let done = f.reading(ms(5300), false).unwrap();
    assert_eq!(
        (done.state, done.rule.as_str()),
        (State::Completed, "file/idle")
    );
    // An idle after anything else is not held.
    f.apply(ms(6000), parse(file(Some("busy"), None).as_bytes()), true);
    f.apply(ms(7000), parse(file(Some("idle"), None).as_bytes()), true);
    assert_eq!(f.next_deadline(), None);
    assert_eq!(f.reading(ms(7000), false).unwrap().state, State::Completed);
}

#[test]
fn a_question_reads_waiting_question() {
    let r = replay("question");
    assert_eq!(
        r.iter().map(|r| (r.1, r.2)).collect::<Vec<_>>(),
        [
            (None, None),
            (Some(State::Idle), None),
            (Some(State::Working), None),
            (Some(State::Waiting), Some(Reason::Question)),
            (Some(State::Working), None),
            (Some(State::Completed), None),
            (None, None),
        ]
    );
}

#[test]
fn a_denial_an_interrupt_and_an_exit_read_as_the_file_says() {
    // After a denial or Esc the CLI writes idle: completed here; the
    // screen's own "what should Claude do instead?" is a visible dialog
    // that the authority lets decide (tend-attention, report/word.rs).
    let states = |s| {
        replay(s)
            .into_iter()
            .map(|r| (r.1, r.2))
            .collect::<Vec<_>>()
    };
    use State::*;
    assert_eq!(
        states("deny"),
        [
            (None, None),
            (Some(Idle), None),
            (Some(Working), None),
            (Some(Waiting), Some(Reason::Approval)),
            (Some(Completed), None),
            (None, None),
        ]
    );
    assert_eq!(
        states("esc_stream"),
        [
            (None, None),
            (Some(Idle), None),
            (Some(Working), None),
            (Some(Completed), None),
            (None, None),
        ]
    );
    assert_eq!(
        states("exit"),
        [(None, None), (Some(Idle), None), (None, None)]
    );
}

#[test]
fn the_other_captures_read_as_their_turns() {
    use State::*;
    let states = |s| {
        replay(s)
            .into_iter()
            .map(|r| (r.1, r.2))
            .collect::<Vec<_>>()
    };
    let approval = [
        (None, None),
        (Some(Idle), None),
        (Some(Working), None),
        (Some(Waiting), Some(Reason::Approval)),
        (Some(Working), None),
        (Some(Completed), None),
        (None, None),
    ];
    // A file edit and a plan ask as a permission prompt too.
    assert_eq!(states("approval_edit"), approval);
    assert_eq!(states("plan"), approval);
    // An interrupted tool and a turn given up on errors end in idle: the
    // screen tells how (its prompt and error rules stay the witness).
    let ended = [
        (None, None),
        (Some(Idle), None),
        (Some(Working), None),
        (Some(Completed), None),
        (None, None),
    ];
    assert_eq!(states("ctrlc_tool"), ended);
    assert_eq!(states("error_429"), ended);
    let mut turns = vec![(None, None), (Some(Idle), None)];
    for _ in 0..3 {
        turns.extend([(Some(Working), None), (Some(Completed), None)]);
    }
    turns.push((None, None));
    assert_eq!(states("multi_turn"), turns);
}

#[test]
fn idle_before_any_turn_is_idle_unless_the_screen_saw_one() {
    let mut f = Follower::new();
    f.apply(ms(0), parse(file(Some("idle"), None).as_bytes()), true);
    assert_eq!(f.reading(ms(0), false).unwrap().state, State::Idle);
    assert_eq!(f.reading(ms(0), true).unwrap().state, State::Completed);
    // A new session in the same process (`/clear`): no turn yet.
    f.apply(ms(1), parse(file(Some("busy"), None).as_bytes()), true);
    let mut other: Value = serde_json::from_str(&file(Some("idle"), None)).unwrap();
    other["sessionId"] = "00000000-0000-4000-8000-000000000002".into();
    f.apply(ms(2), parse(other.to_string().as_bytes()), true);
    assert_eq!(f.reading(ms(2), false).unwrap().state, State::Idle);
}

#[test]
fn waiting_reasons_follow_the_clis_own_table() {
    let cases = [
        ("permission prompt", Reason::Approval),
        ("sandbox request", Reason::Approval),
        ("worker request", Reason::Approval),
        ("goal proposal", Reason::Approval),
        ("input needed", Reason::Question),
        ("dialog open", Reason::Prompt),
        ("something new", Reason::Prompt),
    ];
    for (words, reason) in cases {
        let mut f = Follower::new();
        f.apply(
            ms(0),
            parse(file(Some("waiting"), Some(words)).as_bytes()),
            true,
        );
        let r = f.reading(ms(0), false).unwrap();
        assert_eq!(
            (r.state, r.reason, r.message.as_deref()),
            (State::Waiting, Some(reason), Some(words))
        );
    }
}

#[test]
fn a_file_that_is_not_one_is_rejected_with_the_version_it_names() {
    let v = || Some("2.1.332".to_owned());
    let cases: Vec<(Vec<u8>, Rejected)> = vec![
        (
            vec![b' '; MAX_FILE + 1],
            Rejected::TooLong {
                bytes: MAX_FILE + 1,
            },
        ),
        (b"not json".to_vec(), Rejected::NotJson),
        (b"[1,2]".to_vec(), Rejected::NotJson),
        (b"{\"pid\":12,".to_vec(), Rejected::NotJson),
        (b"".to_vec(), Rejected::NotJson),
        (
            without("pid"),
            Rejected::Missing {
                field: "pid",
                version: v(),
            },
        ),
        (
            without("procStart"),
            Rejected::Missing {
                field: "procStart",
                version: v(),
            },
        ),
        (
            without("sessionId"),
            Rejected::Missing {
                field: "sessionId",
                version: v(),
            },
        ),
        (
            without("cwd"),
            Rejected::Missing {
                field: "cwd",
                version: v(),
            },
        ),
        (
            without("kind"),
            Rejected::Missing {
                field: "kind",
                version: v(),
            },
        ),
        (
            without("version"),
            Rejected::Missing {
                field: "version",
                version: None,
            },
        ),
        (
            with("pid", "4242".into()),
            Rejected::Invalid {
                field: "pid",
                version: v(),
            },
        ),
        (
            with("pid", (-1).into()),
            Rejected::Invalid {
                field: "pid",
                version: v(),
            },
        ),
        (
            with("pid", 1.into()),
            Rejected::Invalid {
                field: "pid",
                version: v(),
            },
        ),
        (
            with("pid", (1u64 << 40).into()),
            Rejected::Invalid {
                field: "pid",
                version: v(),
            },
        ),
        (
            with("procStart", 40196.into()),
            Rejected::Invalid {
                field: "procStart",
                version: v(),
            },
        ),
        (
            with("cwd", "/home/\u{1b}]0;x\u{7}".into()),
            Rejected::Invalid {
                field: "cwd",
                version: v(),
            },
        ),
        (
            with("status", "thinking".into()),
            Rejected::Unknown {
                field: "status",
                word: "thinking".to_owned(),
                version: v(),
            },
        ),
        (
            with("status", 3.into()),
            Rejected::Invalid {
                field: "status",
                version: v(),
            },
        ),
        (
            with("kind", "cron".into()),
            Rejected::Unknown {
                field: "kind",
                word: "cron".to_owned(),
                version: v(),
            },
        ),
        (
            with("status", "waiting".into()),
            Rejected::Missing {
                field: "waitingFor",
                version: v(),
            },
        ),
        (
            with("waitingFor", 7.into()),
            Rejected::Invalid {
                field: "waitingFor",
                version: v(),
            },
        ),
        (
            with("statusUpdatedAt", "now".into()),
            Rejected::Invalid {
                field: "statusUpdatedAt",
                version: v(),
            },
        ),
    ];
    for (bytes, want) in cases {
        assert_eq!(
            parse(&bytes),
            Err(want.clone()),
            "{}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(80)])
        );
    }
    let unknown = parse(&with("status", "thinking".into())).unwrap_err();
    assert_eq!(unknown.version(), Some("2.1.332"));
    assert_eq!(
        unknown.to_string(),
        "unknown `status` `thinking` (written by 2.1.332)"
    );
}

#[test]
fn shown_text_is_cleaned_and_cut() {
    let mut v: Value = serde_json::from_str(&file(Some("waiting"), None)).unwrap();
    v["waitingFor"] = "permission\u{1b}[31m prompt\u{202e}".into();
    v["name"] = "x".repeat(10_000).into();
    let f = parse(v.to_string().as_bytes()).unwrap();
    assert_eq!(f.waiting_for.as_deref(), Some("permission[31m prompt"));
    assert!(f.name.unwrap().len() <= MAX_WORDS);
}

#[test]
fn a_file_is_tied_only_to_its_own_process() {
    let f = parse(file(Some("busy"), None).as_bytes()).unwrap();
    assert_eq!(tie(&f, 4242, Some(40196)), Ok(()));
    assert_eq!(tie(&f, 4243, Some(40196)), Err(Untied::OtherProcess));
    assert_eq!(tie(&f, 4242, Some(40197)), Err(Untied::OtherStart));
    assert_eq!(tie(&f, 4242, None), Err(Untied::StartUnknown));
    let mut mac: Value = serde_json::from_str(&file(Some("busy"), None)).unwrap();
    mac["procStart"] = "Sat Dec  6 06:12:03 2025".into();
    let mac = parse(mac.to_string().as_bytes()).unwrap();
    assert_eq!(tie(&mac, 4242, Some(40196)), Err(Untied::StartUnknown));
    let plus: Value =
        serde_json::from_str(&file(Some("busy"), None).replace("\"40196\"", "\"+40196\"")).unwrap();
    let plus = parse(plus.to_string().as_bytes()).unwrap();
    assert_eq!(tie(&plus, 4242, Some(40196)), Err(Untied::StartUnknown));
    let bg = parse(&with("kind", "bg".into())).unwrap();
    assert_eq!(tie(&bg, 4242, Some(40196)), Err(Untied::NotInteractive));
}

#[test]
fn anything_but_a_tied_file_hands_the_pane_back_and_is_counted() {
    let mut f = Follower::new();
    f.apply(ms(0), parse(file(Some("busy"), None).as_bytes()), true);
    assert!(f.reading(ms(0), false).is_some());
    f.apply(ms(1), parse(b"{oops"), true);
    assert_eq!(f.reading(ms(1), false), None);
    f.apply(ms(2), parse(file(Some("busy"), None).as_bytes()), true);
    f.apply(ms(3), parse(file(Some("busy"), None).as_bytes()), false);
    assert_eq!(f.reading(ms(3), false), None);
    assert_eq!(
        (
            f.counters().read,
            f.counters().rejected,
            f.counters().untied
        ),
        (3, 1, 1)
    );
    assert_eq!(f.counters().last_rejected, Some(Rejected::NotJson));
    // The first write, with no status yet: nothing to say.
    f.apply(ms(4), parse(file(None, None).as_bytes()), true);
    assert_eq!(f.reading(ms(4), false), None);
}

#[test]
fn the_folder_follows_the_agents_environment() {
    let claude = crate::Registry::bundled();
    let homes = &claude
        .get("claude")
        .and_then(|m| m.resume.as_ref())
        .expect("claude's [resume]")
        .home;
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let home = |vars, fallback| agent_home(homes, env(vars), fallback).map(|(d, _)| d);
    assert_eq!(
        agent_home(
            homes,
            env(&[("CLAUDE_CONFIG_DIR", "/cfg/claude/"), ("HOME", "/home/u")]),
            Some("/root")
        ),
        Some(("/cfg/claude".into(), Some("CLAUDE_CONFIG_DIR".into())))
    );
    assert_eq!(
        home(&[("HOME", "/home/u")], Some("/root")).as_deref(),
        Some("/home/u/.claude")
    );
    assert_eq!(
        home(&[("CLAUDE_CONFIG_DIR", "relative")], Some("/root")).as_deref(),
        Some("/root/.claude")
    );
    assert_eq!(home(&[("CLAUDE_CONFIG_DIR", ""), ("HOME", "")], None), None);
    assert_eq!(FOLDER, "sessions");
    assert_eq!(file_name(4242), "4242.json");
}
