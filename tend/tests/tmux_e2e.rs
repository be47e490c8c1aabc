//! End to end with real tmux servers on private sockets: the daemon taps
//! panes replaying recordings of real agents, publishes `@tend_*` options
//! that follow the labels, leaves users' pipes alone, survives being killed,
//! and exits with the server.

use crate::support;

use std::time::{Duration, Instant};

use support::{corpus, label_sequence, wait_until, Env};

/// Polls the pane's published state until `secs` pass or `stop` returns
/// true; returns the distinct `state[/reason]` values seen, in order.
fn watch_states(
    env: &Env,
    pane: &str,
    secs: u64,
    mut on_sample: impl FnMut(&str) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut seen: Vec<String> = Vec::new();
    while Instant::now() < deadline {
        // One read for both, so a change between two reads cannot mix them.
        let both = env.tmux_out(&[
            "display",
            "-p",
            "-t",
            pane,
            "#{@tend_state}/#{@tend_reason}",
        ]);
        let (state, reason) = both.split_once('/').unwrap_or((both.as_str(), ""));
        if !state.is_empty() {
            let s = if reason.is_empty() {
                state.to_owned()
            } else {
                format!("{state}/{reason}")
            };
            if seen.last() != Some(&s) {
                seen.push(s.clone());
            }
            if on_sample(&s) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    seen
}

/// The observed sequence from the first labelled state on (the player's
/// own start-up, before the agent's prompt, is not labelled).
fn from_first(seen: &[String], first: &str) -> Vec<String> {
    match seen.iter().position(|s| s == first) {
        Some(i) => seen[i..].to_vec(),
        None => seen.to_vec(),
    }
}

#[test]
fn published_states_follow_the_labels() {
    let env = Env::new("e2e-labels");
    env.tend_ok(&["start"]);
    let cases = [
        ("claude", "claude/approval"),
        ("aider", "aider/question"),
        ("codex", "codex/question"),
    ];
    let panes: Vec<(String, &str, &str)> = cases
        .iter()
        .map(|(agent, case)| {
            let cmd = env.play_cmd(agent, &corpus(case).join("pane.cast"), 60);
            (env.window("main", &cmd), *agent, *case)
        })
        .collect();
    let handles: Vec<_> = panes
        .iter()
        .map(|(pane, _, case)| {
            let pane = pane.clone();
            let case = case.to_string();
            let view = env.view();
            std::thread::spawn(move || {
                let expected = label_sequence(&corpus(&case).join("labels.json"));
                let last = expected.last().cloned().unwrap_or_default();
                let mut needs_seen = false;
                let mut next_ok = false;
                let seen = watch_states(&view, &pane, 45, |s| {
                    if s.starts_with("waiting/") {
                        needs_seen |= view
                            .global_option("@tend_needs")
                            .parse::<u32>()
                            .unwrap_or(0)
                            >= 1;
                        let next = String::from_utf8_lossy(
                            &view.tend(&["next", "--from", "%9999"]).stdout,
                        )
                        .trim()
                        .to_owned();
                        next_ok |= !next.is_empty();
                    }
                    false
                });
                (case, expected, seen, last, needs_seen, next_ok)
            })
        })
        .collect();
    for h in handles {
        let (case, expected, seen, _last, needs_seen, next_ok) = h.join().expect("watcher");
        let got = from_first(&seen, &expected[0]);
        assert_eq!(got, expected, "{case}: published states {seen:?}");
        assert!(
            needs_seen,
            "{case}: @tend_needs never counted the waiting agent"
        );
        assert!(
            next_ok,
            "{case}: tend next named no pane while an agent waited"
        );
    }
}

#[test]
fn next_names_the_waiting_pane_and_the_key_switches_a_client() {
    let env = Env::new("e2e-jump");
    env.tend_ok(&["start"]);
    env.tmux(&["new-session", "-d", "-s", "agents", "-x", "200", "-y", "50"]);
    let cmd = env.play_cmd("claude", &corpus("claude/approval").join("pane.cast"), 120);
    let pane = env.window("agents", &cmd);
    assert!(
        wait_until(30, || env.pane_option(&pane, "@tend_reason") == "approval"),
        "the approval dialog was never published"
    );
    let next = env.tend_ok(&["next"]);
    assert_eq!(next.trim(), pane);
    // A headless client attached to session `main`, driven through its pty.
    let mut client = std::process::Command::new("script")
        .args([
            "-qfc",
            &format!("tmux -L {} attach -t main", env.name),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("script (util-linux) to attach a client");
    assert!(
        wait_until(10, || env.tmux_out(&[
            "list-clients",
            "-F",
            "#{session_name}"
        ]) == "main"),
        "client did not attach"
    );
    // prefix (C-b) then N: tend's default "next waiting" key.
    use std::io::Write;
    let stdin = client.stdin.as_mut().expect("client stdin");
    stdin.write_all(b"\x02N").expect("press keys");
    stdin.flush().expect("flush");
    let moved = wait_until(10, || {
        env.tmux_out(&["list-clients", "-F", "#{session_name} #{pane_id}"])
            == format!("agents {pane}")
    });
    let where_ = env.tmux_out(&["list-clients", "-F", "#{session_name} #{pane_id}"]);
    let _ = client.kill();
    let _ = client.wait();
    assert!(
        moved,
        "the key did not move the client to {pane}: client is at {where_}"
    );
}

#[test]
fn a_users_pipe_survives_and_the_pane_is_still_tracked() {
    let env = Env::new("e2e-pipe");
    let log = env.path().join("user-pipe.log");
    let cmd = env.play_cmd("gemini", &corpus("gemini/idle").join("pane.cast"), 120);
    let pane = env.window("main", &cmd);
    env.tmux(&[
        "pipe-pane",
        "-t",
        &pane,
        &format!("cat >> '{}'", log.display()),
    ]);
    env.tend_ok(&["start"]);
    assert!(
        wait_until(20, || {
            let v = env.list_json();
            v.as_array().into_iter().flatten().any(|p| {
                p["pane"] == pane.as_str()
                    && p["tap"] == "polling"
                    && p["agent"] == "gemini"
                    && p["state"] == "idle"
            })
        }),
        "pane with a user's pipe is not tracked by polling: {}",
        env.list_json()
    );
    assert_eq!(
        env.tmux_out(&["display", "-p", "-t", &pane, "#{pane_pipe}"]),
        "1"
    );
    let doctor = String::from_utf8_lossy(&env.tend(&["doctor"]).stdout).into_owned();
    assert!(
        doctor.contains("polling"),
        "doctor does not say so: {doctor}"
    );
    env.tend_ok(&["stop"]);
    assert_eq!(
        env.tmux_out(&["display", "-p", "-t", &pane, "#{pane_pipe}"]),
        "1",
        "tend stop closed the user's pipe"
    );
    let before = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    env.tmux(&["send-keys", "-t", &pane, "x"]);
    env.tmux(&[
        "respawn-pane",
        "-k",
        "-t",
        &pane,
        "printf 'still-piped\\n'; sleep 5",
    ]);
    assert!(
        wait_until(10, || std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0)
            > before),
        "the user's pipe stopped receiving output"
    );
}

#[test]
fn stop_removes_what_tend_installed_and_nothing_else() {
    let env = Env::new("e2e-stop");
    env.tmux(&[
        "set-hook",
        "-g",
        "after-new-window",
        "set -g @user_hook_ran 1",
    ]);
    env.tmux(&["set", "-g", "@user_option", "mine"]);
    env.tmux(&["bind-key", "M-u", "display-message user-binding"]);
    env.tend_ok(&["start"]);
    let cmd = env.play_cmd("claude", &corpus("claude/idle").join("pane.cast"), 60);
    let pane = env.window("main", &cmd);
    assert!(wait_until(20, || env.pane_option(&pane, "@tend_state") == "idle"));
    assert_eq!(
        env.tmux_out(&["display", "-p", "-t", &pane, "#{pane_pipe}"]),
        "1"
    );
    env.tend_ok(&["stop"]);
    assert_eq!(
        env.tmux_out(&["display", "-p", "-t", &pane, "#{pane_pipe}"]),
        "0",
        "tap left behind"
    );
    let opts = env.tmux_out(&["show-options", "-g"]);
    assert!(!opts.contains("@tend_"), "options left behind: {opts}");
    assert!(opts.contains("@user_option mine"));
    assert!(env.pane_option(&pane, "@tend_state").is_empty());
    let hooks = env.tmux_out(&["show-hooks", "-g"]);
    assert!(
        !hooks.contains("tend-managed"),
        "hooks left behind: {hooks}"
    );
    assert!(
        hooks.contains("@user_hook_ran"),
        "the user's hook is gone: {hooks}"
    );
    let keys = env.tmux_out(&["list-keys"]);
    assert!(!keys.contains("tend-managed"), "bindings left behind");
    assert!(keys.contains("user-binding"), "the user's binding is gone");
}

#[test]
fn killing_the_daemon_disturbs_no_pane_and_start_retaps() {
    let env = Env::new("e2e-kill");
    env.tend_ok(&["start"]);
    let counter =
        "for i in $(seq 1 400); do echo line-$i; sleep 0.01; done; echo finished; sleep 60";
    let a = env.window("main", counter);
    let b = env.window("main", counter);
    assert!(wait_until(10, || {
        let v = env.list_json();
        v.as_array()
            .map_or(0, |a| a.iter().filter(|p| p["tap"] == "pipe").count())
            >= 3
    }));
    let pid = env.daemon_pid().expect("daemon pid");
    std::thread::sleep(Duration::from_millis(500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill");
    // The panes finish their output as if nothing happened.
    for p in [&a, &b] {
        assert!(
            wait_until(30, || env
                .tmux_out(&["capture-pane", "-p", "-t", p])
                .contains("finished")),
            "pane {p} stalled after the daemon died"
        );
        let text = env.tmux_out(&["capture-pane", "-p", "-S", "-", "-t", p]);
        assert!(text.contains("line-400"), "pane {p} lost output");
    }
    env.tend_ok(&["start"]);
    assert!(
        wait_until(5, || {
            let v = env.list_json();
            v.as_array()
                .is_some_and(|a| a.len() >= 3 && a.iter().all(|p| p["tap"] == "pipe"))
        }),
        "not every pane re-tapped after restart: {}",
        env.list_json()
    );
}

#[test]
fn the_daemon_exits_with_the_tmux_server_and_moves_follow_panes() {
    let env = Env::new("e2e-exit");
    env.tend_ok(&["start"]);
    let pid = env.daemon_pid().expect("pid");
    let pane = env.window("main", "sleep 600");
    env.tmux(&["new-session", "-d", "-s", "other", "-x", "200", "-y", "50"]);
    assert!(wait_until(5, || env
        .list_json()
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| p["pane"] == pane.as_str())));
    // Move the pane's window to another session: same pane id, new session.
    env.tmux(&["move-window", "-s", &pane, "-t", "=other:"]);
    assert!(
        wait_until(5, || env
            .list_json()
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["pane"] == pane.as_str() && p["session"] == "other")),
        "moved pane not followed: {}",
        env.list_json()
    );
    // A pane killed mid-stream disappears; the daemon carries on.
    let noisy = env.window("main", "yes tend-flood");
    std::thread::sleep(Duration::from_millis(500));
    env.tmux(&["kill-pane", "-t", &noisy]);
    assert!(wait_until(5, || !env
        .list_json()
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| p["pane"] == noisy.as_str())));
    env.tmux(&["kill-server"]);
    let gone = wait_until(10, || {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_err()
    });
    assert!(
        gone,
        "daemon {pid} still running after the tmux server exited"
    );
}

#[test]
fn hostile_names_never_reach_a_shell() {
    let env = Env::new("e2e-names");
    let marker = env.path().join("pwned");
    let name = format!("it's \"x\" #{{pane_id}} ; $(touch {})", marker.display());
    let sid = env.tmux_out(&[
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{session_id}",
        "-s",
        &name,
        "-x",
        "200",
        "-y",
        "50",
    ]);
    // tmux turns `.` and `:` in session names into `_`.
    let name = env.tmux_out(&["display", "-p", "-t", &sid, "#{session_name}"]);
    env.tmux(&[
        "rename-window",
        "-t",
        &format!("{sid}:"),
        &format!("w;$(touch {})'#{{q}}", marker.display()),
    ]);
    env.tend_ok(&["start"]);
    let cmd = env.play_cmd("claude", &corpus("claude/approval").join("pane.cast"), 60);
    let pane = env.window_at(&format!("{sid}:"), &cmd);
    assert!(wait_until(30, || env.pane_option(&pane, "@tend_reason") == "approval"));
    let v = env.list_json();
    assert!(v
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| p["session"] == name.as_str()));
    env.tend_ok(&["next"]);
    env.tend_ok(&["doctor"]);
    assert!(!marker.exists(), "a name was executed by a shell");
}

/// An agent that exits leaves `exited` on its pane — naming it, with the
/// exit code the shell reported (OSC 133;D) — until another agent starts
/// there; the exited pane makes no demand.
#[test]
fn exited_stays_until_the_next_agent_starts() {
    let env = Env::new("e2e-exited");
    env.tend_ok(&["start"]);
    // A shell that reports each command's status as OSC 133;D, as shells
    // with prompt integration do.
    let pane = env.window(
        "main",
        "env PS1='$ ' PROMPT_COMMAND='printf \"\\033]133;D;%s\\007\" $?' bash --norc --noprofile",
    );
    let aider = corpus("aider/question").join("pane.cast");
    let line = format!(
        "env TEND_AGENT=aider sh -c \"'{}' play '{}' --hold 1; exit 3\"",
        support::tend_bin(),
        aider.display()
    );
    env.tmux(&["send-keys", "-t", &pane, "-l", &line]);
    env.tmux(&["send-keys", "-t", &pane, "Enter"]);
    let ran = wait_until(60, || env.pane_option(&pane, "@tend_state") == "exited");
    let row = |env: &Env| -> serde_json::Value {
        env.list_json()
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["pane"] == pane.as_str())
            .cloned()
            .unwrap_or_default()
    };
    assert!(ran, "never exited: {}", row(&env));
    // Still exited after the sampler has long dropped the identity.
    std::thread::sleep(Duration::from_secs(4));
    let r = row(&env);
    assert_eq!(r["agent"], "aider", "{r}");
    assert_eq!(r["state"], "exited", "{r}");
    assert_eq!(r["exit_code"], 3, "{r}");
    assert_eq!(r["band"], "exited", "{r}");
    assert_eq!(env.pane_option(&pane, "@tend_agent"), "aider");
    assert_eq!(env.pane_option(&pane, "@tend_exit_code"), "3");
    assert_eq!(env.global_option("@tend_needs"), "0");
    let text = env.tend_ok(&["explain", &pane]);
    assert!(text.contains("state     exited (exit code 3)"), "{text}");
    assert!(
        text.contains("identity  none: the agent's process has ended"),
        "{text}"
    );
    // The next agent starts a new run in the pane.
    let claude = corpus("claude/idle").join("pane.cast");
    let line = format!(
        "env TEND_AGENT=claude '{}' play '{}' --hold 30",
        support::tend_bin(),
        claude.display()
    );
    env.tmux(&["send-keys", "-t", &pane, "-l", &line]);
    env.tmux(&["send-keys", "-t", &pane, "Enter"]);
    let next = wait_until(30, || {
        env.pane_option(&pane, "@tend_agent") == "claude"
            && env.pane_option(&pane, "@tend_state") == "idle"
    });
    let r = row(&env);
    assert!(next, "the next agent did not replace the exited run: {r}");
    assert!(r["exit_code"].is_null(), "{r}");
    assert_eq!(env.pane_option(&pane, "@tend_exit_code"), "");
    let text = env.tend_ok(&["explain", &pane]);
    assert!(
        text.contains("identity  claude (pid ") && text.contains("env `TEND_AGENT=claude`"),
        "{text}"
    );
}
