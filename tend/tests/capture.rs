//! `tend capture`: a live pane saved as a test case replays to the state
//! the daemon read, also when the pane printed more than the tape keeps;
//! and a pane whose screen no rule matches is listed by `tend doctor`.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::{corpus, tend_bin, wait_until, Env};

/// `tend get %N --json`.
fn get(env: &Env, pane: &str) -> Value {
    let out = env.tend(&["get", pane, "--json"]);
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn state_of(v: &Value) -> String {
    match (v["state"].as_str(), v["reason"].as_str()) {
        (Some(s), Some(r)) => format!("{s}/{r}"),
        (Some(s), None) => s.to_owned(),
        _ => "-".to_owned(),
    }
}

/// The last state `tend replay --json` reaches on a capture.
fn replayed_state(env: &Env, dir: &Path) -> String {
    let cast = dir.join("pane.cast");
    let out = env.tend_ok(&["replay", cast.to_str().expect("utf-8 path"), "--json"]);
    let last = out
        .lines()
        .last()
        .unwrap_or_else(|| panic!("replay printed no transition for {}", cast.display()));
    state_of(&serde_json::from_str::<Value>(last).expect("a JSON line"))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A pane replaying `cast` as Claude Code, stopped at `stop` seconds of the
/// recording (inside its approval dialog) until a line of input arrives.
fn claude_at_its_dialog(env: &Env, cast: &Path, stop: f64) -> String {
    let cmd = format!(
        "env TEND_AGENT=claude '{}' play '{}' --wait-input-at {stop} --hold 120",
        tend_bin(),
        cast.display()
    );
    let pane = env.window("main", &cmd);
    assert!(
        wait_until(60, || state_of(&get(env, &pane)) == "waiting/approval"),
        "{pane} never read waiting/approval: {}",
        get(env, &pane)
    );
    pane
}

/// Captures `pane` into `dir` and checks what every file says.
fn capture(env: &Env, pane: &str, dir: &Path) -> Value {
    let out = env.tend_ok(&["capture", pane, dir.to_str().expect("utf-8 path")]);
    assert!(
        out.starts_with(&format!(
            "saved {pane} (claude, waiting/approval, 200x50) to "
        )),
        "{out}"
    );
    assert!(out.contains("tend replay "), "{out}");
    for f in [
        "pane.cast",
        "snapshots.jsonl",
        "procs.jsonl",
        "labels.json",
        "meta.json",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing: {out}");
    }
    let meta = read_json(&dir.join("meta.json"));
    assert_eq!(meta["agent"], "claude");
    assert_eq!(meta["size"], "200x50");
    assert_eq!(meta["state"], "waiting");
    assert_eq!(meta["reason"], "approval");
    assert_eq!(meta["tend_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(meta["tape"]["bound_bytes"], 65536);
    let labels = read_json(&dir.join("labels.json"));
    assert_eq!(labels["reviewed"], false);
    assert_eq!(labels["status"], "draft");
    assert_eq!(labels["expected_agent"], "claude");
    let last = labels["timeline"]
        .as_array()
        .and_then(|t| t.last())
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(state_of(&last), "waiting/approval", "{labels}");
    let snap = std::fs::read_to_string(dir.join("snapshots.jsonl")).expect("snapshots");
    let snap: Value = serde_json::from_str(snap.trim()).expect("one snapshot line");
    assert!(
        snap["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Do you want to proceed?"),
        "{snap}"
    );
    let procs = std::fs::read_to_string(dir.join("procs.jsonl")).expect("procs");
    let first: Value = serde_json::from_str(procs.lines().next().expect("a sample")).expect("json");
    let listed = first["procs"].as_array().expect("a process list");
    assert!(listed
        .iter()
        .all(|p| p.get("cmdline").is_some() && p.get("argv").is_none()));
    meta
}

#[test]
fn a_capture_replays_to_the_state_the_daemon_read() {
    let env = Env::new("capture");
    env.tend_ok(&["start"]);
    // Claude Code's approval dialog is up from 7.5 s to 22.8 s.
    let pane = claude_at_its_dialog(&env, &corpus("claude/approval").join("pane.cast"), 10.0);
    let dir = env.path().join("cap");
    let meta = capture(&env, &pane, &dir);
    assert_eq!(meta["tape"]["wraps"], 0, "{meta}");
    assert_eq!(replayed_state(&env, &dir), "waiting/approval");

    // The directory is not empty now: a second capture is refused and
    // leaves it alone.
    let before = std::fs::read_to_string(dir.join("pane.cast")).expect("cast");
    let out = env.tend(&["capture", &pane, dir.to_str().expect("utf-8 path")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exists and is not empty"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("pane.cast")).expect("cast"),
        before
    );

    // Without a directory: ./tend-capture-claude-<time>/ in the working
    // directory.
    let cwd = env.path().join("cwd");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    let out = env
        .command(&["capture", &pane])
        .current_dir(&cwd)
        .output()
        .expect("run tend");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let made: Vec<String> = std::fs::read_dir(&cwd)
        .expect("cwd")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(made[0].starts_with("tend-capture-claude-2"), "{made:?}");
}

#[test]
fn a_capture_whose_tape_wrapped_still_replays_to_the_live_state() {
    let env = Env::new("capture-wrap");
    env.tend_ok(&["start"]);
    // 240 KiB of scrolling output first (four times the tape's bound, in
    // pieces a pipe takes without loss), then Claude Code's approval run.
    let original = std::fs::read_to_string(corpus("claude/approval").join("pane.cast"))
        .expect("the claude/approval recording");
    let mut lines = original.lines();
    let mut cast = String::from(lines.next().expect("a header"));
    cast.push('\n');
    let noise: String = (0..200)
        .map(|i| format!("build step {i:04}: compiling a module of the project, please wait\r\n"))
        .collect();
    assert!(noise.len() > 12_000);
    for k in 0..20 {
        cast.push_str(&serde_json::json!([0.05 * f64::from(k), "o", noise]).to_string());
        cast.push('\n');
    }
    for l in lines {
        let mut ev: Value = serde_json::from_str(l).expect("an event");
        let t = ev[0].as_f64().expect("a time") + 1.5;
        ev[0] = serde_json::json!(t);
        cast.push_str(&ev.to_string());
        cast.push('\n');
    }
    let path = env.path().join("noisy.cast");
    std::fs::write(&path, cast).expect("write the cast");
    let pane = claude_at_its_dialog(&env, &path, 11.5);
    let dir = env.path().join("cap");
    let meta = capture(&env, &pane, &dir);
    assert!(meta["tape"]["wraps"].as_u64().unwrap_or(0) >= 1, "{meta}");
    assert!(
        meta["tape"]["output_bytes"].as_u64().unwrap_or(u64::MAX) <= 65536,
        "{meta}"
    );
    assert_eq!(replayed_state(&env, &dir), "waiting/approval");
}

#[test]
fn doctor_lists_a_pane_whose_screen_no_rule_matches() {
    let env = Env::new("unrecognised");
    let cfg = env.path().join("config").join("tend");
    std::fs::create_dir_all(&cfg).expect("config dir");
    std::fs::write(
        cfg.join("config.toml"),
        "[detector]\nunrecognised_after = \"1s\"\n",
    )
    .expect("config");
    env.tend_ok(&["start"]);
    let pane = env.window(
        "main",
        "env TEND_AGENT=aider sh -c 'printf \"a screen aider never draws\\n\"; exec sleep 120'",
    );
    assert!(
        wait_until(30, || get(&env, &pane)["unrecognised_since"].is_f64()),
        "{pane} never read as unrecognised: {}",
        get(&env, &pane)
    );
    let listed = env.list_json();
    let row = listed
        .as_array()
        .and_then(|a| a.iter().find(|p| p["pane"] == pane.as_str()))
        .cloned()
        .expect("the pane in tend list");
    assert!(row["unrecognised_since"].is_f64(), "{row}");
    let window = env.tmux_out(&["display", "-p", "-t", &pane, "#{window_id}"]);
    let doctor = env.tend(&["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("screens"))
        .unwrap_or_else(|| panic!("no screens check: {text}"));
    let expected_start = format!(
        "ok   screens    {pane} (aider, main:{window}) — no rule has matched its screen for "
    );
    assert!(line.starts_with(&expected_start), "{line}");
    assert!(
        line.ends_with(&format!("; `tend capture {pane}` saves it as a test case")),
        "{line}"
    );
    // Output that a rule knows (aider's prompt) ends it.
    env.tmux(&[
        "respawn-pane",
        "-k",
        "-t",
        &pane,
        "env TEND_AGENT=aider sh -c 'printf \"> \"; exec sleep 120'",
    ]);
    assert!(
        wait_until(30, || {
            let v = get(&env, &pane);
            v["state"].is_string()
                && v["unrecognised_since"].is_null()
                && v["rule"]
                    .as_str()
                    .is_some_and(|r| !r.starts_with("builtin/"))
        }),
        "{pane} still unrecognised at aider's prompt: {}",
        get(&env, &pane)
    );
}
