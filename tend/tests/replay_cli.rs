//! `tend replay` as a user runs it: on a recording of a real agent, and on
//! one in which no agent can be identified.

use std::path::PathBuf;
use std::process::Command;

fn tend() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tend"))
}

fn corpus(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus")
        .join(case)
}

#[test]
fn a_recording_of_an_agent_gives_its_states() {
    let out = tend()
        .arg("replay")
        .arg(corpus("claude/approval/pane.cast"))
        .arg("--json")
        .output()
        .expect("run tend");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let states: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(
        states
            .iter()
            .any(|s| s["state"] == "waiting" && s["reason"] == "approval"),
        "{text}"
    );
}

#[test]
fn a_recording_with_no_agent_reports_no_state_and_succeeds() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        corpus("claude/approval/pane.cast"),
        dir.path().join("pane.cast"),
    )
    .expect("copy cast");
    let cast = dir.path().join("pane.cast");

    // No process snapshots at all.
    let out = tend().arg("replay").arg(&cast).output().expect("run tend");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no agent was identified"), "{text}");
    assert!(text.contains("no process snapshots"), "{text}");
    assert!(!text.contains("waiting"), "{text}");

    // Snapshots of a shell running `cat`: no agent.
    std::fs::write(
        dir.path().join("procs.jsonl"),
        concat!(
            r#"{"t": 0.5, "procs": [{"pid": 10, "ppid": 1, "exe": "/usr/bin/bash", "comm": "bash", "argv": ["bash"]},"#,
            r#" {"pid": 11, "ppid": 10, "exe": "/usr/bin/cat", "comm": "cat", "argv": ["cat", "dialog.txt"]}]}"#,
            "\n"
        ),
    )
    .expect("write procs");
    let out = tend()
        .arg("replay")
        .arg(&cast)
        .arg("--json")
        .output()
        .expect("run tend");
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("its process snapshots name no agent"), "{err}");
}

/// A recording whose agent reports its own state (OSC 7501): the replay
/// reads the reports as the daemon does. Claude Code's recorded turn, with
/// the reports it sends when answered put in: working at the prompt, a
/// background task started during the turn, the turn's text ending (the
/// screen reads completed at 27.4 s) while the task runs on, then the task
/// cleared and done at 40 s.
#[test]
fn a_recording_holding_reports_reads_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text =
        std::fs::read_to_string(corpus("claude/working_then_done/pane.cast")).expect("read cast");
    let b64 = tend_detector::psp::base64_encode;
    let reports = [
        (5.2, "state=working:app=claude-code".to_owned()),
        (
            12.0,
            format!(
                "state=working:id=bash-1:title={}",
                b64(b"Run the long command")
            ),
        ),
        (
            27.3,
            format!("state=working:msg={}", b64(b"1 shell still running")),
        ),
        (40.0, "state=clear:id=bash-1".to_owned()),
        (40.1, "state=done:app=claude-code".to_owned()),
    ];
    let mut lines: Vec<(f64, String)> = Vec::new();
    let mut it = text.lines();
    let header = it.next().expect("header").to_owned();
    for l in it {
        let v: serde_json::Value = serde_json::from_str(l).expect("event");
        lines.push((v[0].as_f64().expect("time"), l.to_owned()));
    }
    for (t, body) in &reports {
        let ev = serde_json::json!([t, "o", format!("\u{1b}]7501;{body}\u{1b}\\")]);
        lines.push((*t, ev.to_string()));
    }
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    let cast = dir.path().join("pane.cast");
    let mut body = header + "\n";
    for (_, l) in &lines {
        body.push_str(l);
        body.push('\n');
    }
    std::fs::write(&cast, body).expect("write cast");

    let out = tend()
        .args(["replay", "--agent", "claude", "--json"])
        .arg(&cast)
        .output()
        .expect("run tend");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let states: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let brief: Vec<(String, String, String)> = states
        .iter()
        .map(|s| {
            (
                s["state"].as_str().unwrap_or("-").to_owned(),
                s["rule"].as_str().unwrap_or("-").to_owned(),
                s["authority"].as_str().unwrap_or("screen").to_owned(),
            )
        })
        .collect();
    let want: Vec<(String, String, String)> = [
        ("idle", "claude/ready", "screen"),
        ("working", "psp/working", "relay"),
        ("completed", "psp/done", "relay"),
    ]
    .iter()
    .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
    .collect();
    assert_eq!(brief, want, "{text}");
    // Completed only once the task was cleared, not when the screen said so.
    assert!(states[2]["t"].as_f64().unwrap_or(0.0) >= 40.0, "{text}");
    // Without the reports, the same recording completes at 27.4 s.
    let out = tend()
        .args(["replay", "--agent", "claude", "--json"])
        .arg(corpus("claude/working_then_done/pane.cast"))
        .output()
        .expect("run tend");
    let plain = String::from_utf8_lossy(&out.stdout);
    assert!(plain.contains("\"state\":\"completed\""), "{plain}");
    assert!(!plain.contains("psp"), "{plain}");
}
