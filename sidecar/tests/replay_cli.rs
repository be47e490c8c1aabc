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
