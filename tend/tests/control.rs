//! The control surface against a real daemon and real tmux: the protocol,
//! wait and prompt with their errors, self-report with a short lease, stop
//! flags, park and snooze persistence, and the peer check.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde_json::Value;
use support::{corpus, tend_bin, wait_until, Env};

fn control_socket(env: &Env) -> std::path::PathBuf {
    let run = env.path().join("run").join("tend");
    std::fs::read_dir(&run)
        .expect("runtime dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sock"))
        .expect("control socket")
}

fn raw(env: &Env, line: &str) -> Value {
    let mut s = UnixStream::connect(control_socket(env)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(line.as_bytes()).expect("write");
    s.write_all(b"\n").expect("write");
    let mut out = String::new();
    BufReader::new(s).read_line(&mut out).expect("read");
    serde_json::from_str(&out).expect("a JSON response")
}

fn err_code(out: &std::process::Output) -> String {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v["error"]["code"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn protocol_answers_and_never_crashes_on_garbage() {
    let env = Env::new("ctl-proto");
    env.tend_ok(&["start"]);
    let pong = raw(&env, r#"{"id": 7, "method": "ping"}"#);
    assert_eq!(pong["id"], 7);
    assert_eq!(pong["result"]["protocol"], 1);
    for bad in [
        "not json",
        "{}",
        r#"{"id": 1}"#,
        r#"{"id":1,"method":"get","params":{"pane":"nope"}}"#,
        "[1,2,3]",
        "\u{0}\u{1}",
    ] {
        let r = raw(&env, bad);
        assert!(r["error"]["code"].is_string(), "{bad}: {r}");
    }
    let r = raw(&env, r#"{"id": 2, "method": "frobnicate"}"#);
    assert_eq!(r["error"]["code"], "unknown_method");
    let r = raw(
        &env,
        r#"{"id": 3, "method": "get", "params": {"pane": "%999"}}"#,
    );
    assert_eq!(r["error"]["code"], "unknown_pane");
    // Still alive.
    assert_eq!(raw(&env, r#"{"id": 4, "method": "ping"}"#)["id"], 4);
    // The socket is the owner's alone.
    let sock = control_socket(&env);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&sock).expect("meta").permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn another_user_is_refused() {
    if !nix::unistd::getuid().is_root() {
        eprintln!("skipped: needs root to act as another user");
        return;
    }
    let env = Env::new("ctl-user");
    env.tend_ok(&["start"]);
    let sock = control_socket(&env);
    let script = format!(
        "import socket\ns=socket.socket(socket.AF_UNIX)\ns.connect({:?})\ntry:\n  s.sendall(b'{{\"id\":1,\"method\":\"list\"}}\\n')\nexcept OSError:\n  pass\nprint(s.makefile().readline())",
        sock.display().to_string()
    );
    let out = support::python_as_nobody(&env, &sock, &script);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("forbidden"),
        "another user got: {text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !text.contains("\"result\""),
        "another user was answered: {text}"
    );
}

#[test]
fn wait_prompt_and_their_errors() {
    let env = Env::new("ctl-wait");
    env.tend_ok(&["start"]);
    // An agent that idles until it gets a prompt, then works and completes.
    let cast = corpus("claude/working_then_done").join("pane.cast");
    let cmd = format!(
        "env TEND_AGENT=claude '{}' play '{}' --wait-input-at 5.1 --hold 60",
        tend_bin(),
        cast.display()
    );
    let pane = env.window("main", &cmd);
    let idle = env.tend(&[
        "wait",
        &pane,
        "--until",
        "idle",
        "--timeout",
        "20s",
        "--json",
    ]);
    assert!(
        idle.status.success(),
        "{}",
        String::from_utf8_lossy(&idle.stderr)
    );
    // Already idle: a second wait returns at once.
    env.tend_ok(&["wait", &pane, "--until", "idle", "--timeout", "1s"]);
    let out = env.tend(&[
        "prompt",
        &pane,
        "Write a short poem about tmux.",
        "--wait",
        "--timeout",
        "60s",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "prompt --wait: {} {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["state"], "completed", "{v}");
    assert!(v["state_change_seq"].as_u64().unwrap_or(0) >= 3);
    // A wait with a timeout that cannot be met.
    let t = env.tend(&[
        "wait",
        &pane,
        "--until",
        "working",
        "--timeout",
        "1s",
        "--json",
    ]);
    assert_eq!(err_code(&t), "timeout");

    // A blocked agent refuses prompts and nothing is sent.
    let cast = corpus("claude/approval").join("pane.cast");
    let blocked = env.window("main", &env.play_cmd("claude", &cast, 60));
    env.tend_ok(&[
        "wait",
        &blocked,
        "--until",
        "waiting/approval",
        "--timeout",
        "30s",
    ]);
    let r = env.tend(&["prompt", &blocked, "do it", "--json"]);
    assert_eq!(err_code(&r), "agent_blocked");
    assert!(!env
        .tmux_out(&["capture-pane", "-p", "-t", &blocked])
        .contains("do it"));

    // An agent that never reacts: stalled after 5 s.
    let cast = corpus("claude/idle").join("pane.cast");
    let deaf = env.window("main", &env.play_cmd("claude", &cast, 60));
    env.tend_ok(&["wait", &deaf, "--until", "idle", "--timeout", "20s"]);
    let r = env.tend(&["prompt", &deaf, "hello?", "--wait", "--json"]);
    assert_eq!(err_code(&r), "agent_prompt_stalled");
    let msg = String::from_utf8_lossy(&r.stderr);
    assert!(msg.contains("read the pane"), "{msg}");
}

#[test]
fn wait_ends_with_agent_not_running_when_the_pane_dies() {
    let env = Env::new("ctl-gone");
    env.tend_ok(&["start"]);
    let cast = corpus("claude/idle").join("pane.cast");
    let pane = env.window("main", &env.play_cmd("claude", &cast, 60));
    env.tend_ok(&["wait", &pane, "--until", "idle", "--timeout", "20s"]);
    let child = env
        .command(&["wait", &pane, "--until", "completed", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("wait");
    std::thread::sleep(Duration::from_secs(1));
    env.tmux(&["kill-pane", "-t", &pane]);
    let out = child.wait_with_output().expect("wait output");
    assert_eq!(
        err_code(&out),
        "agent_not_running",
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn self_report_authority_and_a_short_lease() {
    let env = Env::new("ctl-report");
    env.tend_ok(&["start"]);
    // A reporting agent whose screen says nothing tend knows.
    let pane = env.window("main", "env TEND_AGENT=claude sleep 600");
    assert!(wait_until(10, || env
        .list_json()
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| p["pane"] == pane.as_str() && p["agent"] == "claude")));
    env.tend_ok(&[
        "report",
        "working",
        "--pane",
        &pane,
        "--message",
        "compiling",
        "--every",
        "1s",
    ]);
    let v: Value = serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"])).expect("json");
    assert_eq!(v["state"], "working");
    assert_eq!(v["authority"], "report");
    assert_eq!(v["message"], "compiling");
    // Stale sequence numbers are ignored… (the CLI uses the clock; send one by hand)
    let r = raw(
        &env,
        &format!(
            r#"{{"id":1,"method":"report","params":{{"pane":"{pane}","state":"idle","seq":1}}}}"#
        ),
    );
    assert_eq!(r["error"]["code"], "bad_report", "{r}");
    // …and with nothing posted for twice `every` and no output: gone, the
    // screen decides again.
    assert!(
        wait_until(10, || {
            let v: Value = serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"]))
                .unwrap_or(Value::Null);
            v["authority"] == "screen"
                && v["lifecycle"].as_str().is_some_and(|l| l.contains("gone"))
        }),
        "lease never ran out: {}",
        env.tend_ok(&["get", &pane, "--json"])
    );
    // Done stays done (no lease).
    env.tend_ok(&["report", "done", "--pane", &pane]);
    std::thread::sleep(Duration::from_secs(3));
    let v: Value = serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"])).expect("json");
    assert_eq!(v["state"], "completed", "{v}");
    env.tend_ok(&["release", "--pane", &pane]);
    let v: Value = serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"])).expect("json");
    assert_eq!(v["authority"], "screen");
}

#[test]
fn stop_flags_block_prompts_until_acknowledged() {
    let env = Env::new("ctl-stop");
    env.tend_ok(&["start"]);
    let cast = corpus("claude/idle").join("pane.cast");
    let pane = env.window("main", &env.play_cmd("claude", &cast, 60));
    env.tend_ok(&["wait", &pane, "--until", "idle", "--timeout", "20s"]);
    env.tend_ok(&["stop-request", &pane, "wrap up, the release is cut"]);
    let v: Value = serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"])).expect("json");
    assert_eq!(v["stop"], "stop pending · not read");
    assert_eq!(
        err_code(&env.tend(&["prompt", &pane, "more work", "--json"])),
        "stop_pending"
    );
    // Looking does not mark it read; the agent's own inbox does.
    env.tend_ok(&["get", &pane]);
    let inbox = env.tend_ok(&["inbox", "--pane", &pane]);
    assert!(inbox.contains("wrap up"), "{inbox}");
    let v: Value = serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"])).expect("json");
    assert_eq!(v["stop"], "stop pending · read, not acknowledged");
    env.tend_ok(&["ack", "--pane", &pane]);
    let v: Value = serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"])).expect("json");
    assert!(v["stop"].is_null(), "{v}");
}

#[test]
fn park_and_snooze_survive_a_restart_and_a_corrupt_state_file_is_set_aside() {
    let env = Env::new("ctl-park");
    env.tend_ok(&["start"]);
    let cast = corpus("claude/approval").join("pane.cast");
    let pane = env.window("main", &env.play_cmd("claude", &cast, 120));
    let other = env.window("main", "sleep 600");
    env.tend_ok(&["wait", &pane, "--until", "waiting", "--timeout", "30s"]);
    env.tend_ok(&["park", &pane, "--note", "after lunch"]);
    env.tend_ok(&["snooze", &other, "6h"]);
    let band = |p: &str| -> Value {
        let v: Value = serde_json::from_str(&env.tend_ok(&["get", p, "--json"])).expect("json");
        v
    };
    assert_eq!(band(&pane)["band"], "parked");
    // The status line is published a moment after the change.
    assert!(
        wait_until(10, || env.global_option("@tend_needs") == "0"),
        "a parked agent is no demand"
    );
    std::thread::sleep(Duration::from_millis(1500)); // saved at most once a second
    env.tend_ok(&["stop"]);
    env.tend_ok(&["start"]);
    assert!(
        wait_until(10, || band(&pane)["band"] == "parked"),
        "park lost across restart: {}",
        band(&pane)
    );
    assert_eq!(band(&pane)["note"], "after lunch");
    assert_eq!(band(&other)["snoozed"], true);
    env.tend_ok(&["unpark", &pane]);
    assert!(wait_until(5, || band(&pane)["band"] == "waiting"));
    env.tend_ok(&["stop"]);
    // A damaged state file: set aside with a message, never a crash.
    let state_dir = env.path().join("state").join("tend");
    let file = std::fs::read_dir(&state_dir)
        .expect("state dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("state file");
    std::fs::write(&file, "{ this is not json").expect("corrupt");
    env.tend_ok(&["start"]);
    assert!(wait_until(5, || band(&pane)["band"] == "waiting"));
    let aside = std::fs::read_dir(&state_dir)
        .expect("state dir")
        .flatten()
        .any(|e| e.file_name().to_string_lossy().contains(".corrupt-"));
    assert!(aside, "the damaged file was not set aside");
}
