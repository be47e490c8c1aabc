//! The status line once the daemon is gone: a daemon killed with SIGKILL
//! leaves no count behind — tmux, told by the daemon's guard, clears what
//! it published and says tend is not running, and the jump key says so too.
//! A restarted daemon takes over; a clean `tend stop` leaves nothing.
//!
//! The status line is read as a real client draws it: the client is a
//! `tmux attach` running in a pane of a second (outer) tmux server, whose
//! `capture-pane` shows the client's screen, status line included.

use crate::support;

use std::process::{Command, Stdio};

use support::{corpus, tend_bin, wait_until, Env};

/// A tmux client attached to `env`'s session `session`, drawn in a pane of
/// its own private tmux server (80×12).
struct Client {
    outer: String,
}

impl Client {
    fn attach(env: &Env, session: &str) -> Client {
        let outer = format!("{}-outer", env.name);
        let attach = format!("env -u TMUX tmux -L {} attach -t ={session}", env.name);
        let ok = Command::new("tmux")
            .args(["-L", &outer, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", "80", "-y", "12", &attach])
            .stdin(Stdio::null())
            .status()
            .expect("run tmux")
            .success();
        assert!(ok, "cannot start the outer tmux server");
        let c = Client { outer };
        // The outer server's own status line is off: the last row is the
        // inner client's status line.
        c.tmux(&["set-option", "-g", "status", "off"]);
        assert!(
            wait_until(10, || env.tmux_out(&["list-clients"]).lines().count() == 1),
            "the client did not attach"
        );
        c
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.outer)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The client's screen as the terminal shows it.
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "%0"])
    }

    /// The client's status line (its last row).
    fn status_line(&self) -> String {
        self.screen()
            .trim_end_matches('\n')
            .lines()
            .last()
            .unwrap_or("")
            .to_owned()
    }

    /// Keys typed into the client.
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "%0"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

/// The status line of the README's snippets, without the clock, and no
/// periodic redraw: what changes on screen is what tend (or tmux on its
/// behalf) set.
fn status_snippets(env: &Env) {
    for (name, value) in [
        ("status-interval", "0"),
        ("status-right-length", "60"),
        // `<N>`: the count itself, `<>` when there is none.
        (
            "status-right",
            "#{?@tend_summary,[#{@tend_summary}],}<#{@tend_needs}>",
        ),
        (
            "window-status-format",
            "#I:#W#{?@tend_window_glyph, #{@tend_window_glyph},}",
        ),
        (
            "window-status-current-format",
            "#I:#W#{?@tend_window_glyph, #{@tend_window_glyph},}",
        ),
    ] {
        env.tmux(&["set-option", "-g", name, value]);
    }
}

/// A pane replaying Claude Code asking for approval.
fn waiting_agent(env: &Env, session: &str) -> String {
    let cast = corpus("claude/approval/pane.cast");
    env.window(session, &env.play_cmd("claude", &cast, 600))
}

/// `tend guard` processes of this test's daemon.
fn guards(env: &Env) -> Vec<i32> {
    let root = env.path().to_string_lossy().into_owned();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let argv: Vec<String> = raw
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state
                .rsplit_once(") ")
                .is_some_and(|(_, r)| r.starts_with('Z'));
            !zombie
                && argv.first().is_some_and(|a| a == tend_bin())
                && argv.get(1).is_some_and(|a| a == "guard")
                && argv.iter().any(|a| a.starts_with(&root))
        })
        .collect()
}

fn sigkill(pid: i32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("SIGKILL");
}

fn tend_options(env: &Env) -> Vec<String> {
    env.tmux_out(&["show-options", "-g"])
        .lines()
        .filter(|l| l.starts_with("@tend_"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_killed_daemon_leaves_no_count_in_the_status_line_and_the_jump_key_says_so() {
    let env = Env::new("death-kill");
    status_snippets(&env);
    env.tmux(&["new-session", "-d", "-s", "work", "-x", "80", "-y", "11"]);
    env.tend_ok(&["start"]);
    let a = waiting_agent(&env, "work");
    let b = waiting_agent(&env, "work");
    let client = Client::attach(&env, "work");
    // Both in one look at the status line: the notification of the two
    // waiting agents is shown in the client's status line for a moment,
    // in place of the count and the windows.
    assert!(
        wait_until(45, || {
            let line = client.status_line();
            line.contains("[2 agents need you]<2>") && line.contains(" ●")
        }),
        "the count and the window's mark never showed: {:?} (panes {a} {b}: {})",
        client.status_line(),
        env.list_json()
    );
    // One guard for the server, not one per pane.
    assert_eq!(guards(&env).len(), 1, "guards: {:?}", guards(&env));

    let pid = env.daemon_pid().expect("daemon pid");
    sigkill(pid as i32);
    assert!(
        wait_until(5, || {
            let line = client.status_line();
            line.contains("[tend is not running]") && !line.contains("need")
        }),
        "5 s after SIGKILL the status line still says {:?}",
        client.status_line()
    );
    let line = client.status_line();
    assert!(line.contains("<>"), "a count is still shown: {line}");
    assert!(
        !line.contains('●'),
        "a window still claims a waiting agent: {line}"
    );
    // Nothing published is left at any scope: no count, no pane state.
    assert_eq!(
        tend_options(&env),
        ["@tend_summary \"tend is not running\""]
    );
    for p in [&a, &b] {
        assert_eq!(env.pane_option(p, "@tend_state"), "", "pane {p}");
        assert_eq!(env.pane_option(p, "@tend_next"), "", "pane {p}");
    }
    assert!(
        wait_until(5, || guards(&env).is_empty()),
        "the guard outlived the daemon"
    );

    // The jump key (prefix N) says why nothing happens.
    client.keys(&["C-b", "N"]);
    assert!(
        wait_until(5, || client
            .status_line()
            .contains("tend is not running: start it with tend start")),
        "prefix N said {:?}",
        client.status_line()
    );

    // A new daemon takes over: a count is back (whatever the re-seeded
    // panes read as), "not running" is gone, and its own guard runs.
    env.tend_ok(&["start"]);
    assert!(
        wait_until(10, || {
            let line = client.status_line();
            !line.contains("not running") && (0..=2).any(|n| line.contains(&format!("<{n}>")))
        }),
        "after a restart: {:?}",
        client.status_line()
    );
    assert_eq!(guards(&env).len(), 1);

    // A clean stop: nothing left, and the guard's end cleans nothing.
    env.tend_ok(&["stop"]);
    assert!(guards(&env).is_empty(), "tend stop left its guard running");
    assert!(tend_options(&env).is_empty(), "{:?}", tend_options(&env));
    assert!(
        wait_until(5, || client.status_line().ends_with("<>")),
        "after tend stop: {:?}",
        client.status_line()
    );
    assert!(!client.status_line().contains("not running"));
}

#[test]
fn a_guard_killed_alone_is_replaced_and_one_killed_with_the_daemon_still_cleans_up() {
    let env = Env::new("death-guard");
    status_snippets(&env);
    env.tmux(&["new-session", "-d", "-s", "work", "-x", "80", "-y", "11"]);
    env.tend_ok(&["start"]);
    waiting_agent(&env, "work");
    let client = Client::attach(&env, "work");
    assert!(
        wait_until(45, || client.status_line().contains("[1 agent needs you]")),
        "the count never showed: {:?}",
        client.status_line()
    );
    let first = guards(&env);
    assert_eq!(first.len(), 1);

    // The guard alone: tmux cleans up (it cannot tell), the daemon starts
    // another guard and publishes everything again.
    sigkill(first[0]);
    assert!(
        wait_until(10, || {
            let now = guards(&env);
            now.len() == 1 && now != first
        }),
        "no new guard: {:?}",
        guards(&env)
    );
    assert!(
        wait_until(10, || client.status_line().contains("[1 agent needs you]")),
        "the count did not come back: {:?}",
        client.status_line()
    );

    // Daemon and guard killed at once (`pkill -9 tend` would): tmux still
    // cleans up, since it runs the cleanup however the guard ended.
    let pid = env.daemon_pid().expect("daemon pid");
    let guard = guards(&env)[0];
    sigkill(guard);
    sigkill(pid as i32);
    assert!(
        wait_until(5, || {
            let line = client.status_line();
            line.contains("[tend is not running]") && !line.contains("need")
        }),
        "5 s after killing both: {:?}",
        client.status_line()
    );

    // `tend stop` with no daemon: what the dead one left goes too.
    let out = env.tend_ok(&["stop"]);
    assert!(
        out.contains("removed what a daemon that died left"),
        "{out}"
    );
    assert!(tend_options(&env).is_empty(), "{:?}", tend_options(&env));
    let keys = env.tmux_out(&["list-keys"]);
    assert!(!keys.contains("tend-managed"), "bindings left behind");
    let hooks = env.tmux_out(&["show-hooks", "-g"]);
    assert!(
        !hooks.contains("tend-managed"),
        "hooks left behind: {hooks}"
    );
    assert!(
        wait_until(5, || client.status_line().ends_with("<>")),
        "after tend stop: {:?}",
        client.status_line()
    );
    // And a second stop finds nothing to remove.
    assert_eq!(
        env.tend_ok(&["stop"]).trim(),
        format!(
            "tend is not running for {}",
            env.tmux_out(&["display-message", "-p", "#{socket_path}"])
        )
    );
}
