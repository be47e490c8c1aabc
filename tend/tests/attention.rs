//! Attention on a real tmux server: a completion is ready for review until
//! a client looks at it, a snooze ends when the user types into the pane,
//! a gated park releases when its gate pane's turn ends.

use crate::support;

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::{corpus, tend_bin, wait_until, Env};

fn get(env: &Env, pane: &str) -> Value {
    serde_json::from_str(&env.tend_ok(&["get", pane, "--json"])).unwrap_or(Value::Null)
}

/// A headless client attached to `target`, driven through its pty.
fn attach(env: &Env, target: &str) -> Child {
    Command::new("script")
        .args([
            "-qfc",
            &format!("tmux -L {} attach -t '{target}'", env.name),
            "/dev/null",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("script (util-linux) to attach a client")
}

fn play(env: &Env, session: &str, agent: &str, case: &str, extra: &str) -> String {
    let cast = corpus(case).join("pane.cast");
    env.window(
        session,
        &format!(
            "env TEND_AGENT={agent} '{}' play '{}' --hold 120 {extra}",
            tend_bin(),
            cast.display()
        ),
    )
}

#[test]
fn a_completion_is_ready_for_review_until_a_client_looks() {
    let env = Env::new("att-seen");
    env.tend_ok(&["start"]);
    env.tmux(&["new-session", "-d", "-s", "work", "-x", "200", "-y", "50"]);
    let pane = play(&env, "work", "claude", "claude/working_then_done", "");
    env.tend_ok(&["wait", &pane, "--until", "completed", "--timeout", "45s"]);
    assert_eq!(get(&env, &pane)["band"], "ready_for_review");
    // Reading through the CLI does not count as looking.
    env.tend_ok(&["read", &pane]);
    env.tend_ok(&["explain", &pane]);
    assert_eq!(get(&env, &pane)["band"], "ready_for_review");
    // The status line is published a moment after the state changes.
    assert!(wait_until(10, || env.global_option("@tend_needs") == "1"));
    // A client showing the pane does.
    env.tmux(&["select-window", "-t", &pane]);
    let mut client = attach(&env, "work");
    let seen = wait_until(10, || get(&env, &pane)["band"] == "finished");
    let _ = client.kill();
    let _ = client.wait();
    assert!(seen, "never marked seen: {}", get(&env, &pane));
    assert!(
        wait_until(10, || env.global_option("@tend_needs") == "0"),
        "@tend_needs is still {:?}",
        env.global_option("@tend_needs")
    );
}

#[test]
fn typing_into_a_snoozed_pane_ends_the_snooze() {
    let env = Env::new("att-snooze");
    env.tend_ok(&["start"]);
    env.tmux(&["new-session", "-d", "-s", "work", "-x", "200", "-y", "50"]);
    let pane = play(&env, "work", "claude", "claude/approval", "");
    env.tend_ok(&[
        "wait",
        &pane,
        "--until",
        "waiting/approval",
        "--timeout",
        "30s",
    ]);
    env.tend_ok(&["snooze", &pane, "unlimited"]);
    assert_eq!(get(&env, &pane)["band"], "snoozed");
    assert!(
        wait_until(10, || env.global_option("@tend_needs") == "0"),
        "a snooze withdraws the demand"
    );
    env.tmux(&["select-window", "-t", &pane]);
    let mut client = attach(&env, "work");
    assert!(wait_until(10, || env.tmux_out(&[
        "list-clients",
        "-F",
        "#{pane_id}"
    ]) == pane));
    std::thread::sleep(Duration::from_millis(1200));
    let stdin = client.stdin.as_mut().expect("stdin");
    stdin.write_all(b"x").expect("type");
    stdin.flush().expect("flush");
    let ended = wait_until(10, || get(&env, &pane)["snoozed"] == false);
    let _ = client.kill();
    let _ = client.wait();
    assert!(ended, "typing did not end the snooze: {}", get(&env, &pane));
}

#[test]
fn a_gated_park_releases_when_the_gate_finishes_its_turn() {
    let env = Env::new("att-gate");
    env.tend_ok(&["start"]);
    let parked = play(&env, "main", "codex", "codex/approval", "");
    let gate = play(
        &env,
        "main",
        "claude",
        "claude/working_then_done",
        "--wait-input-at 5.1",
    );
    env.tend_ok(&["wait", &parked, "--until", "waiting", "--timeout", "30s"]);
    env.tend_ok(&["wait", &gate, "--until", "idle", "--timeout", "30s"]);
    env.tend_ok(&[
        "park",
        &parked,
        "--note",
        "after the refactor lands",
        "--gate",
        &gate,
    ]);
    assert_eq!(get(&env, &parked)["band"], "parked");
    assert_eq!(get(&env, &parked)["gate"], gate.as_str());
    // The gate going idle → working is not the release; working → completed is.
    env.tend_ok(&[
        "prompt",
        &gate,
        "Write a short poem about tmux.",
        "--wait",
        "--timeout",
        "60s",
    ]);
    assert!(
        wait_until(10, || get(&env, &parked)["parked"] == false),
        "park not released by its gate: {}",
        get(&env, &parked)
    );
    // Back in its own band (the replayed codex may have moved on meanwhile).
    assert_ne!(get(&env, &parked)["band"], "parked");
}
