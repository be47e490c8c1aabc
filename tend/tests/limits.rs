//! Usage limits end to end, on a real tmux server: recorded limit screens
//! replayed in a pane read `waiting/limit` with the reset they show, and
//! with `[limits] resume` a pane at its limit gets the resume text exactly
//! once after its reset and goes on working.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::{corpus, Env};
use tend_testkit::wait_for;

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Starts the daemon with `config` as its `config.toml`, in the UTC zone
/// (the recordings were made in it: Codex draws its reset without one).
fn start(env: &Env, config: &str) {
    let dir = env.path().join("config/tend");
    std::fs::create_dir_all(&dir).expect("mkdir config");
    std::fs::write(dir.join("config.toml"), config).expect("write config.toml");
    let o = env
        .command(&["start"])
        .env("TZ", "UTC")
        .output()
        .expect("tend start");
    assert!(
        o.status.success(),
        "tend start: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The label's reset of a recording's `waiting(limit)`.
fn labelled_reset(case: &Path) -> i64 {
    let labels: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(case.join("labels.json")).expect("labels.json"),
    )
    .expect("labels");
    labels["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .find_map(|b| b["resets_at"].as_i64())
        .expect("a limit with its reset")
}

/// The next time after `now` (or within the hour before it) that the
/// clock shows the time of day of `at`, in UTC: what a screen that says
/// "resets 9:53am (UTC)" means when read now, long after it was recorded.
fn next_time_of_day(at: i64, now: i64) -> i64 {
    let day = 86_400;
    let at = now - now.rem_euclid(day) + at.rem_euclid(day);
    if at < now - 3600 {
        at + day
    } else {
        at
    }
}

#[test]
fn recorded_limit_screens_read_as_limits_with_their_reset() {
    let env = Env::new("limit-replay");
    start(&env, "");
    // Claude Code's line ("resets 9:53am (UTC)") and Codex's ("try again at
    // 10:03 AM.", in the daemon's zone, UTC here).
    for case in ["claude/limit@120x40", "codex/limit@80x24"] {
        let dir = corpus(case);
        let agent = case.split('/').next().expect("agent");
        let pane = env.window("main", &env.play_cmd(agent, &dir.join("pane.cast"), 120));
        let row = wait_for(
            Duration::from_secs(40),
            &format!("{case} at its limit"),
            || {
                let r = env.row(&pane);
                (r["reason"] == "limit").then_some(r)
            },
        );
        // The recording's time of day, next to come: the screen names no
        // date, and it was recorded some time ago.
        let want = next_time_of_day(
            labelled_reset(&dir),
            row["since"].as_f64().unwrap_or(0.0) as i64,
        );
        assert_eq!(row["resets_at"], want, "{case}: {row}");
        // Run within the hour after the recording's time of day, the words
        // name a reset that has just passed: the limit is read, and it no
        // longer holds the agent back.
        let passed = (want as f64) <= unix_now();
        let band = if passed { "waiting" } else { "limited" };
        assert_eq!(
            (&row["state"], &row["band"]),
            (&serde_json::json!("waiting"), &serde_json::json!(band)),
            "{case}: {row}"
        );
        if passed {
            env.tmux(&["kill-pane", "-t", &pane]);
            continue;
        }
        wait_for(Duration::from_secs(5), "the limit's options", || {
            (env.pane_option(&pane, "@tend_glyph") == "⧖"
                && env.pane_option(&pane, "@tend_resets_at") == want.to_string())
            .then_some(())
        });
        assert!(!env.global_option("@tend_next_reset").is_empty());
        let limits = env.tend_ok(&["limits"]);
        assert!(limits.contains(&pane), "{limits}");
        env.tmux(&["kill-pane", "-t", &pane]);
    }
}

#[test]
fn at_its_reset_a_limited_agent_gets_one_continue_and_works_again() {
    let env = Env::new("limit-resume");
    // The default margin: 2 s after the reset (the scripted screen names
    // its second).
    start(&env, "[limits]\nresume = \"continue\"\n");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/limited_agent.py");
    let log = env.path().join("typed.log");
    let reset = unix_now().ceil() as i64 + 20;
    let pane = env.window(
        "main",
        &format!(
            "env TEND_AGENT=claude python3 '{}' {reset} '{}'",
            script.display(),
            log.display()
        ),
    );
    let row = wait_for(Duration::from_secs(15), "the pane at its limit", || {
        let r = env.row(&pane);
        (r["band"] == "limited").then_some(r)
    });
    assert_eq!(row["resets_at"], reset, "{row}");
    wait_for(Duration::from_secs(5), "@tend_limited 1", || {
        (env.global_option("@tend_limited") == "1").then_some(())
    });
    let explain = env.tend_ok(&["explain", &pane, "--json"]);
    let explained: serde_json::Value = serde_json::from_str(&explain).expect("explain --json");
    assert!(
        explained["limit"]["resume"]
            .as_str()
            .is_some_and(|r| r.starts_with("at ")),
        "{}",
        explained["limit"]
    );
    // The same in words: when it resets and when tend goes on.
    let words = env.tend_ok(&["explain", &pane]);
    assert!(
        words.contains("limit     resets ") && words.contains("resume    at "),
        "{words}"
    );
    assert!(!log.exists(), "nothing typed before the reset");
    // After the reset: the text, once.
    let typed = wait_for(Duration::from_secs(60), "the resume text", || {
        std::fs::read_to_string(&log).ok()
    });
    let (at, text) = typed
        .lines()
        .next()
        .and_then(|l| l.split_once(' '))
        .expect("a typed line");
    let at: f64 = at.parse().expect("a time");
    assert_eq!(text, "continue");
    assert!(
        at >= reset as f64,
        "typed at {at}, before the reset {reset}"
    );
    println!(
        "the resume came {:.2} s after the reset (margin 2 s)",
        at - reset as f64
    );
    // It goes on working, and nothing more is typed.
    env.tend_ok(&["wait", &pane, "--until", "working", "--timeout", "20s"]);
    std::thread::sleep(Duration::from_secs(4));
    let typed = std::fs::read_to_string(&log).expect("typed.log");
    assert_eq!(typed.lines().count(), 1, "{typed}");
    let why = env.tend_ok(&["explain", &pane, "--json"]);
    let explained: serde_json::Value = serde_json::from_str(&why).expect("explain --json");
    assert!(
        explained["limit"]["last"]
            .as_str()
            .is_some_and(|l| l.contains("sent \"continue\"")),
        "{}",
        explained["limit"]
    );
    let words = env.tend_ok(&["explain", &pane]);
    assert!(words.contains("resumed   "), "{words}");
}

#[test]
fn resume_by_hand_is_refused_where_no_limit_shows() {
    let env = Env::new("limit-refused");
    start(&env, "");
    let cast = corpus("claude/idle").join("pane.cast");
    let pane = env.window("main", &env.play_cmd("claude", &cast, 60));
    env.tend_ok(&["wait", &pane, "--until", "idle", "--timeout", "20s"]);
    let o = env.tend(&["resume", &pane, "--json"]);
    assert!(!o.status.success());
    let err: serde_json::Value = serde_json::from_slice(&o.stdout)
        .or_else(|_| serde_json::from_slice(&o.stderr))
        .expect("a JSON error");
    assert_eq!(err["error"]["code"], "not_at_limit", "{err}");
    assert!(!env
        .tmux_out(&["capture-pane", "-p", "-t", &pane])
        .contains("continue"));
}
