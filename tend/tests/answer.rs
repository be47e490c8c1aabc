//! `tend approve` / `tend deny` on recordings of real agents replayed in
//! tmux panes: refused (nothing typed) while no dialog shows; the exact
//! keys of each agent's dialog once it does. The player logs every byte
//! typed into its pane, so the test sees what the agent would have read.
//!
//! `TEND_TEST_REAL_AGENTS=1` adds a tier with the real Claude Code CLI (see
//! `real_claude_approval_answered`).

use crate::support;

use support::{corpus, tend_bin, typed, wait_until, Env, Terminal};

fn state(env: &Env, pane: &str) -> String {
    env.tmux_out(&[
        "display",
        "-p",
        "-t",
        pane,
        "#{@tend_state}/#{@tend_reason}",
    ])
}

/// One agent's approval recording: held at its idle prompt (`idle_at`),
/// then at its dialog (`dialog_at`).
fn check(agent: &str, idle_at: f64, dialog_at: f64, deny: &[u8], approve: &[u8]) {
    check_case(agent, "approval", idle_at, dialog_at, deny, approve);
}

/// tend started on a private server whose one pane replays `agent`'s
/// recording `case`, holding for a key at each time of `waits`; returns
/// once tend reads it idle, with the player's input log and the pane.
fn replay_idle(agent: &str, case: &str, waits: &[f64]) -> (Env, std::path::PathBuf, String) {
    let env = Env::new(&format!("answer-{agent}"));
    let log = env.path().join("typed.log");
    let cast = corpus(&format!("{agent}/{case}/pane.cast"));
    let waits: String = waits
        .iter()
        .map(|t| format!(" --wait-input-at {t}"))
        .collect();
    let cmd = format!(
        "env TEND_AGENT={agent} '{}' play '{}'{waits} --input-log '{}' --hold 600",
        tend_bin(),
        cast.display(),
        log.display()
    );
    env.tend_ok(&["start"]);
    let pane = env.window("main", &cmd);
    assert!(
        wait_until(30, || state(&env, &pane) == "idle/"),
        "{agent} never idle: {}",
        state(&env, &pane)
    );
    (env, log, pane)
}

/// The same with the recording `case` of `agent` (`approval@80x24`).
fn check_case(agent: &str, case: &str, idle_at: f64, dialog_at: f64, deny: &[u8], approve: &[u8]) {
    // At its prompt: refused, and nothing typed.
    let (env, log, pane) = replay_idle(agent, case, &[idle_at, dialog_at]);
    let before = typed(&log);
    let out = env.tend(&["approve", &pane, "--json"]);
    assert!(!out.status.success(), "approve with no dialog succeeded");
    let err: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json error");
    assert_eq!(err["error"]["code"], "no_dialog", "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("nothing was sent"),
        "{err}"
    );
    let out = env.tend(&["deny", &pane]);
    assert!(!out.status.success());
    assert_eq!(typed(&log), before, "keys reached a pane with no dialog");

    // On to the dialog.
    env.tend_ok(&["send-keys", &pane, "Enter"]);
    assert!(
        wait_until(60, || state(&env, &pane) == "waiting/approval"),
        "{agent} never showed its dialog: {}",
        state(&env, &pane)
    );
    let dry: serde_json::Value =
        serde_json::from_str(&env.tend_ok(&["approve", &pane, "--dry-run", "--json"])).unwrap();
    assert_eq!(dry["rule"], format!("{agent}/approval"));
    assert_eq!(dry["sent"], false);
    assert!(!dry["dialog"].as_array().unwrap().is_empty(), "{dry}");
    let base = typed(&log);
    assert_eq!(
        base.last(),
        // The player's terminal keeps ICRNL: Enter arrives as a newline.
        Some(&b'\n'),
        "the dry run typed something: {:?}",
        String::from_utf8_lossy(&base)
    );

    let denied: serde_json::Value =
        serde_json::from_str(&env.tend_ok(&["deny", &pane, "--json"])).unwrap();
    assert_eq!(denied["sent"], true, "{denied}");
    let want: Vec<u8> = base.iter().chain(deny).copied().collect();
    assert!(
        wait_until(10, || typed(&log) == want),
        "{agent} deny typed {:?}, want {:?}",
        String::from_utf8_lossy(&typed(&log)[base.len().min(typed(&log).len())..]),
        String::from_utf8_lossy(deny)
    );
    // The recording still shows the dialog (a replay does not react to
    // keys), so approve is accepted too and types its own keys.
    env.tend_ok(&["approve", &pane]);
    let want: Vec<u8> = want.iter().chain(approve).copied().collect();
    assert!(
        wait_until(10, || typed(&log) == want),
        "{agent} approve typed {:?}, want {:?}",
        String::from_utf8_lossy(&typed(&log)),
        String::from_utf8_lossy(&want)
    );
}

#[test]
fn claude_dialog_answered_with_its_keys() {
    check("claude", 3.5, 15.0, b"4", b"1");
}

#[test]
fn codex_dialog_answered_with_its_keys() {
    check("codex", 3.5, 15.0, b"\x1b", b"y");
}

#[test]
fn gemini_dialog_answered_with_its_keys() {
    check("gemini", 4.5, 15.0, b"\x1b", b"1");
}

#[test]
fn aider_prompt_answered_with_its_keys() {
    check("aider", 5.5, 15.0, b"n\n", b"y\n");
}

/// Continue CLI's permission box (recorded at 80x24): Esc refuses, Enter
/// takes the selected "Continue" (a newline through the player's ICRNL).
#[test]
fn continue_dialog_answered_with_its_keys() {
    check_case("continue", "approval@80x24", 5.0, 15.0, b"\x1b", b"\n");
}

/// Kimi CLI's approval panel (recorded at 80x24): Down, Down, Enter picks
/// '[3] Reject'; Enter takes the selected '[1] Approve once'.
#[test]
fn kimi_dialog_answered_with_its_keys() {
    check_case(
        "kimi",
        "approval@80x24",
        5.0,
        15.0,
        b"\x1b[B\x1b[B\n",
        b"\n",
    );
}

/// Mistral Vibe's permission box (recorded at 80x24): Esc rejects, Enter
/// takes the selected '1. Allow once'.
#[test]
fn vibe_dialog_answered_with_its_keys() {
    check_case("vibe", "approval@80x24", 6.5, 18.0, b"\x1b", b"\n");
}

/// Cline CLI's approval (recorded at 80x24): its own keys, 'n' denies and
/// 'y' approves ('[y] Approve   [n] Deny').
#[test]
fn cline_dialog_answered_with_its_keys() {
    check_case("cline", "approval@80x24", 5.5, 15.0, b"n", b"y");
}

/// `tend prompt` to an agent whose manifest pauses the Enter after the
/// paste (Continue CLI, `[prompt] enter_after_ms`): the text arrives and its
/// Enter still follows, from the daemon's own timer.
#[test]
fn prompt_with_a_pause_still_presses_enter() {
    let (env, log, pane) = replay_idle("continue", "approval@80x24", &[5.0]);
    env.tend_ok(&["prompt", &pane, "Clean the build directory."]);
    // The replay does not turn bracketed paste on, so tmux pastes the bare
    // text; the player's terminal keeps ICRNL: Enter arrives as a newline.
    let want = b"Clean the build directory.\n".to_vec();
    assert!(
        wait_until(10, || typed(&log) == want),
        "typed {:?}",
        String::from_utf8_lossy(&typed(&log))
    );
}

#[test]
fn a_pane_without_a_known_agent_is_refused() {
    let env = Env::new("answer-none");
    env.tend_ok(&["start"]);
    let out = env.tend(&["approve", "%0", "--json"]);
    assert!(!out.status.success());
    let err: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(err["error"]["code"], "no_agent", "{err}");
}

/// The picker on a real client: the agent's menu shows the dialog's own
/// text and its answers; choosing Approve types the agent's key.
#[test]
fn picker_shows_the_dialog_and_approves() {
    let env = Env::new("answer-picker");
    // The menu, not the fleet view (tests/pilot.rs) that prefix A opens
    // in a popup by default.
    env.tmux(&["set", "-g", "@tend-picker-view", "menu"]);
    let log = env.path().join("typed.log");
    let cmd = format!(
        "env TEND_AGENT=claude '{}' play '{}' --wait-input-at 15 --input-log '{}' --hold 600",
        tend_bin(),
        corpus("claude/approval/pane.cast").display(),
        log.display()
    );
    env.tend_ok(&["start"]);
    let pane = env.window("main", &cmd);
    assert!(
        wait_until(60, || state(&env, &pane) == "waiting/approval"),
        "no dialog: {}",
        state(&env, &pane)
    );
    let term = Terminal::attach(&env, "main", "picker");
    let before = typed(&log);
    // prefix A: the picker; 1: the first (most urgent) agent.
    term.type_keys(&["C-b", "A"]);
    assert!(
        wait_until(10, || term.screen().contains("choose an agent")),
        "no picker: {}",
        term.screen()
    );
    term.type_keys(&["1"]);
    let screen = term.screen_when(10, "no answers in the agent menu", |screen| {
        screen.contains("Approve (sends 1)") && screen.contains("Deny (sends 4)")
    });
    assert!(screen.contains("Do you want to proceed?"), "{screen}");
    assert_eq!(typed(&log), before, "opening the menu typed something");
    term.type_keys(&["y"]);
    let want: Vec<u8> = before.iter().chain(b"1").copied().collect();
    assert!(
        wait_until(10, || typed(&log) == want),
        "typed {:?}",
        String::from_utf8_lossy(&typed(&log))
    );
}

/// The opt-in tier: the real Claude Code CLI (from `$AGENTS_DIR`, default
/// `/opt/agents`), offline against a stand-in model server
/// (`support/anthropic.py`) that asks to run `rm -rf ./build`. `tend deny`
/// must leave `build/` in place; `tend approve` must make Claude Code run
/// the command and send its result back. Before the deny, the window is
/// resized across 120, 200, 250 and 80 columns and the dialog must read
/// `waiting/approval` throughout.
#[test]
fn real_claude_approval_answered() {
    if !support::offline::real_agents("answer") {
        return;
    }
    let Some(agents) = support::offline::claude_installed("real_claude_approval_answered") else {
        return;
    };
    let env = Env::new("answer-real");
    let claude = support::offline::OfflineClaude::start(env.path(), &agents);
    let work = &claude.work;
    let cmd = claude.command("");
    env.tend_ok(&["start"]);
    let pane = env.window("main", &cmd);
    let log = || claude.model_log();
    assert!(
        wait_until(90, || state(&env, &pane) == "idle/"),
        "claude never idle: {} {}",
        state(&env, &pane),
        env.tmux_out(&["capture-pane", "-p", "-t", &pane])
    );
    let out = env.tend(&["approve", &pane, "--json"]);
    assert!(!out.status.success(), "approve at the prompt succeeded");

    // Deny: the dialog closes and nothing runs.
    env.tend_ok(&["prompt", &pane, "Clean the build directory."]);
    assert!(
        wait_until(60, || state(&env, &pane) == "waiting/approval"),
        "no dialog: {} {}",
        state(&env, &pane),
        env.tmux_out(&["capture-pane", "-p", "-t", &pane])
    );
    // The dialog holds while the window is resized across the widths users
    // have (Claude Code redraws it at each): sampled every 200 ms for 4 s.
    for (w, h) in [("120", "40"), ("200", "50"), ("250", "60"), ("80", "24")] {
        let out = env.tmux(&["resize-window", "-t", &pane, "-x", w, "-y", h]);
        assert!(out.status.success(), "resize-window {w}x{h}: {out:?}");
        let t0 = std::time::Instant::now();
        while t0.elapsed() < std::time::Duration::from_secs(4) {
            assert_eq!(
                state(&env, &pane),
                "waiting/approval",
                "{:.1} s after the window became {w}x{h}: {}",
                t0.elapsed().as_secs_f64(),
                env.tmux_out(&["capture-pane", "-p", "-t", &pane])
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
    let denied: serde_json::Value =
        serde_json::from_str(&env.tend_ok(&["deny", &pane, "--json"])).unwrap();
    assert_eq!(denied["keys"], serde_json::json!(["4"]), "{denied}");
    assert!(
        wait_until(30, || state(&env, &pane) != "waiting/approval"),
        "the dialog stayed after deny: {}",
        env.tmux_out(&["capture-pane", "-p", "-t", &pane])
    );
    assert!(
        work.join("build").exists(),
        "denied, yet build/ was removed"
    );
    assert!(!log().contains("after_result"), "{}", log());

    // Approve: Claude Code runs the command and sends its result.
    env.tend_ok(&["prompt", &pane, "Clean the build directory."]);
    assert!(
        wait_until(60, || state(&env, &pane) == "waiting/approval"),
        "no second dialog: {} {}",
        log(),
        env.tmux_out(&["capture-pane", "-p", "-t", &pane])
    );
    env.tend_ok(&["approve", &pane]);
    assert!(
        wait_until(60, || log().contains("after_result")),
        "no tool result reached the model: {}\n{}",
        log(),
        env.tmux_out(&["capture-pane", "-p", "-t", &pane])
    );
    assert!(
        !work.join("build").exists(),
        "approved, yet build/ is still there"
    );
    println!("answer: real Claude Code denied (4) and approved (1) through tend");
}
