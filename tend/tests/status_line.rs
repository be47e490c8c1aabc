//! The first minute: in a tmux server with no configuration, `tend start`
//! and `tend demo` make the count of agents needing you appear in a real
//! client's status line, and `tend stop` puts every option back byte for
//! byte.

use crate::support;

use std::process::Command;

use support::{wait_until, Env, Terminal};

/// Global, global window and server options, as tmux lists them.
fn all_options(env: &Env) -> String {
    ["-g", "-gw", "-s"]
        .iter()
        .map(|f| env.tmux_out(&["show-options", f]))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn count_shows_in_a_real_client_and_stop_restores_every_option() {
    let env = Env::new("status");
    let before = all_options(&env);
    let doctor = env.tend(&["doctor"]);
    assert!(
        String::from_utf8_lossy(&doctor.stdout).contains("nothing of tend is visible"),
        "doctor before start: {}",
        String::from_utf8_lossy(&doctor.stdout)
    );

    env.tend_ok(&["start"]);
    assert!(
        wait_until(10, || env
            .global_option("status-right")
            .contains("@tend_summary")),
        "tend start added no segment: {}",
        env.global_option("status-right")
    );
    env.tend_ok(&["demo", "--detached"]);
    let main = Terminal::attach(&env, "main", "main");
    let demo = Terminal::attach(&env, "tend-demo", "demo");

    // The global segment (session `main`) and the demo's own status line
    // both show the count once the replayed agents wait.
    let mut seen = (String::new(), String::new());
    let shown = wait_until(90, || {
        seen = (main.status_line(), demo.status_line());
        seen.0.contains("need you") && seen.1.contains("need you") && seen.1.contains('●')
    });
    assert!(shown, "status lines: main {:?}, demo {:?}", seen.0, seen.1);
    let needs = env.global_option("@tend_needs");
    assert!(
        seen.0.contains(&format!("{needs} agent")),
        "the count {needs} in {:?}",
        seen.0
    );
    let doctor = env.tend_ok(&["doctor"]);
    assert!(
        doctor.contains("the status line shows tend"),
        "doctor after start: {doctor}"
    );

    env.tend_ok(&["stop"]);
    assert_eq!(all_options(&env), before);
    assert!(
        wait_until(10, || !main.status_line().contains("need you")),
        "the client still shows {:?}",
        main.status_line()
    );
}

#[test]
fn placeholders_are_filled_and_off_adds_nothing() {
    let env = Env::new("status-ph");
    env.tmux(&["set", "-g", "status-left", "#{tend_needs}|"]);
    env.tend_ok(&["start"]);
    assert!(wait_until(10, || env.global_option("status-left") == "#{@tend_needs}|"));
    // A placeholder somewhere: tend adds no segment of its own.
    assert!(!env.global_option("status-right").contains("tend"));
    // Sourcing a configuration again re-runs tend.tmux, that is `tend start`.
    env.tmux(&["set", "-g", "status-left", "#{tend_quiet}|"]);
    env.tend_ok(&["start"]);
    assert_eq!(env.global_option("status-left"), "#{@tend_quiet}|");
    env.tend_ok(&["stop"]);
    assert_eq!(env.global_option("status-left"), "#{tend_quiet}|");

    let env = Env::new("status-off");
    env.tmux(&["set", "-g", "@tend-status", "off"]);
    let before = all_options(&env);
    let right = env.global_option("status-right");
    env.tend_ok(&["start"]);
    assert!(wait_until(10, || env.global_option("@tend_needs") == "0"));
    assert_eq!(env.global_option("status-right"), right);
    env.tend_ok(&["stop"]);
    assert_eq!(all_options(&env), before);
}

/// A daemon killed with SIGKILL cannot put the status line back; `tend stop`
/// does, and a restart in between adds no second segment.
#[test]
fn stop_after_a_killed_daemon_restores_the_status_line() {
    let env = Env::new("status-kill");
    let right = env.global_option("status-right");
    let length = env.global_option("status-right-length");
    let pid = env.daemon_pid().expect("tend start");
    assert!(wait_until(10, || env.global_option("status-right") != right));
    let installed = env.global_option("status-right");
    let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    assert!(wait_until(10, || !std::path::Path::new(&format!(
        "/proc/{pid}"
    ))
    .exists()
        || std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.contains(") Z "))));
    // Started again: the same formats, not a second segment.
    env.tend_ok(&["start"]);
    assert_eq!(env.global_option("status-right"), installed);
    let pid = env.daemon_pid().expect("tend start");
    let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    assert!(wait_until(10, || env
        .tend_ok(&["stop"])
        .contains("not running")));
    assert_eq!(env.global_option("status-right"), right);
    assert_eq!(env.global_option("status-right-length"), length);
}
