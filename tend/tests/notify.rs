//! Notifications end to end: a daemon on a private tmux server
//! watches a pane replaying a recorded Claude session that reaches an
//! approval dialog, and the user is told.
//!
//! * With a notification service on the session bus: a real one (dunst,
//!   on a private D-Bus session and a virtual X display) receives
//!   "Claude is waiting for approval".
//! * Without a session bus: the message appears in the tmux client's
//!   status line (`show-messages`), and the client's own terminal receives
//!   the bell and an OSC 9 notification. The client is a real
//!   `tmux attach` running in a pane of a second, outer tmux server, whose
//!   `pipe-pane` records every byte that reaches the client's terminal.
//! * The pane the client shows is never notified.
//!
//! Each test prints why and passes when a tool it needs is missing
//! (`scripts/test.sh` installs them).

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::{corpus, wait_until, Env};

/// True when every program is on `PATH`; otherwise prints a notice.
fn have(test: &str, programs: &[&str]) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| !std::env::split_paths(&path).any(|d| d.join(p).is_file()))
        .collect();
    if missing.is_empty() {
        return true;
    }
    support::skip(
        test,
        &format!(
            "{} not installed (scripts/test.sh installs them)",
            missing.join(", ")
        ),
    );
    false
}

/// Children killed (and reaped) on drop.
struct Procs(Vec<Child>);

impl Drop for Procs {
    fn drop(&mut self) {
        for c in self.0.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A private desktop: a virtual X display, a D-Bus session bus and dunst
/// printing every notification it receives to a file.
struct Desktop {
    bus: String,
    log: PathBuf,
    _procs: Procs,
    _dir: tempfile::TempDir,
}

impl Desktop {
    fn start() -> Desktop {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut procs = Procs(Vec::new());
        // The X server picks a free display and writes its number to fd 1.
        let mut x = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-nolisten",
                "tcp",
                "-screen",
                "0",
                "640x480x24",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb");
        let out = x.stdout.take().expect("Xvfb stdout");
        procs.0.push(x);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(out).read_line(&mut line);
            let _ = tx.send(line);
        });
        let display = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("Xvfb did not report its display");
        let display = format!(":{}", display.trim());

        let sock = dir.path().join("bus");
        let bus = format!("unix:path={}", sock.display());
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).expect("mkdir");
        let d = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile"])
            .arg(format!("--address={bus}"))
            .env("DISPLAY", &display)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-daemon");
        procs.0.push(d);
        assert!(
            wait_until(10, || sock.exists()),
            "dbus-daemon did not create {}",
            sock.display()
        );

        let log = dir.path().join("dunst.out");
        let logf = std::fs::File::create(&log).expect("dunst log");
        let mut dunst = Command::new("stdbuf");
        dunst
            .args(["-oL", "dunst", "-print"])
            .env("DISPLAY", &display)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .stdin(Stdio::null())
            .stdout(logf)
            .stderr(Stdio::null());
        procs.0.push(dunst.spawn().expect("start dunst"));
        let owned = wait_until(15, || {
            Command::new("dbus-send")
                .args([
                    "--session",
                    "--print-reply",
                    "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner",
                    "string:org.freedesktop.Notifications",
                ])
                .env("DBUS_SESSION_BUS_ADDRESS", &bus)
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("boolean true"))
        });
        assert!(owned, "dunst did not take the notification service name");
        Desktop {
            bus,
            log,
            _procs: procs,
            _dir: dir,
        }
    }

    fn received(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// Starts tend's daemon for `env` with the session bus `bus` (none:
/// no session bus at all).
fn start_tend(env: &Env, bus: Option<&str>) {
    // The harness's environment, which has no session bus.
    let mut cmd = env.command(&["start"]);
    if let Some(bus) = bus {
        cmd.env("DBUS_SESSION_BUS_ADDRESS", bus);
    }
    let out = cmd.output().expect("run tend start");
    assert!(
        out.status.success(),
        "tend start: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The daemon's log, for failure messages.
fn daemon_log(env: &Env) -> String {
    let dir = env.path().join("run/tend");
    let mut text = String::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().extension().is_some_and(|x| x == "log") {
            text.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    text
}

fn approval_cast() -> PathBuf {
    corpus("claude/approval").join("pane.cast")
}

/// A real tmux client attached to `env`'s session `main`, running in a
/// pane of a second tmux server; every byte its terminal receives is
/// appended to [`Attached::raw`].
struct Attached {
    outer: String,
    raw: PathBuf,
}

impl Attached {
    fn new(env: &Env) -> Attached {
        let outer = format!("{}-outer", env.name);
        let raw = env.path().join("client-terminal.raw");
        let attach = format!(
            "sleep 0.5; exec env -u TMUX tmux -L '{}' attach -t main",
            env.name
        );
        let run = |args: &[&str]| {
            let o = Command::new("tmux")
                .args(["-L", &outer])
                .args(args)
                .stdin(Stdio::null())
                .output()
                .expect("run tmux");
            assert!(
                o.status.success(),
                "outer tmux {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        };
        run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "outer",
            "-x",
            "200",
            "-y",
            "51",
            &attach,
        ]);
        run(&[
            "pipe-pane",
            "-t",
            "outer:",
            &format!("cat >> '{}'", raw.display()),
        ]);
        let a = Attached { outer, raw };
        assert!(
            wait_until(10, || !env.tmux_out(&["list-clients"]).is_empty()),
            "the client did not attach"
        );
        a
    }

    fn raw(&self) -> Vec<u8> {
        std::fs::read(&self.raw).unwrap_or_default()
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.outer, "kill-server"])
            .stdin(Stdio::null())
            .output();
    }
}

/// `bytes` without OSC sequences (`ESC ]` … `BEL` or `ESC \`).
fn strip_osc(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b']') {
            let mut j = i + 2;
            while j < bytes.len() {
                if bytes[j] == 0x07 {
                    j += 1;
                    break;
                }
                if bytes[j] == 0x1b && bytes.get(j + 1) == Some(&b'\\') {
                    j += 2;
                    break;
                }
                j += 1;
            }
            i = j;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_desktop_notification_reaches_a_real_notification_daemon() {
    if !have(
        "desktop notification test",
        &[
            "tmux",
            "Xvfb",
            "dbus-daemon",
            "dbus-send",
            "dunst",
            "stdbuf",
        ],
    ) {
        return;
    }
    let desktop = Desktop::start();
    let env = Env::new("notify-desktop");
    start_tend(&env, Some(&desktop.bus));
    let pane = env.window("main", &env.play_cmd("claude", &approval_cast(), 60));
    let got = wait_until(60, || {
        desktop
            .received()
            .contains("summary: 'Claude is waiting for approval'")
    });
    assert!(
        got,
        "dunst did not receive the notification for {pane}.\n-- dunst:\n{}\n-- tend log:\n{}",
        desktop.received(),
        daemon_log(&env)
    );
    let text = desktop.received();
    assert!(text.contains("appname: 'tend'"), "{text}");
    assert!(
        text.contains(&format!("body: '{pane} in session main'")),
        "{text}"
    );
    assert!(
        daemon_log(&env).contains("desktop notifications through dunst"),
        "{}",
        daemon_log(&env)
    );
    // Delivered on the desktop, so no status-line message (the fallback).
    let messages = env.tmux_out(&["show-messages"]);
    assert!(!messages.contains("message: Claude"), "{messages}");
}

#[test]
fn without_a_session_bus_tmux_shows_it_and_the_terminal_gets_a_bell_and_osc_9() {
    if !have("tmux fallback test", &["tmux"]) {
        return;
    }
    let env = Env::new("notify-tmux");
    // Bells from panes are not passed on: any bell the client's terminal
    // gets is tend's.
    env.tmux(&["set", "-g", "bell-action", "none"]);
    let client = Attached::new(&env);
    start_tend(&env, None);
    // A window of its own, not the one the client shows.
    let pane = env.window("main", &env.play_cmd("claude", &approval_cast(), 60));
    let got = wait_until(60, || {
        env.tmux_out(&["show-messages"])
            .contains("message: Claude is waiting for approval")
    });
    assert!(
        got,
        "no status-line message for {pane}.\n-- messages:\n{}\n-- tend log:\n{}",
        env.tmux_out(&["show-messages"]),
        daemon_log(&env)
    );
    let line = env
        .tmux_out(&["show-messages"])
        .lines()
        .find(|l| l.contains("message: Claude is waiting for approval"))
        .map(str::to_owned)
        .unwrap_or_default();
    assert!(line.contains(&format!("{pane} in session main")), "{line}");
    assert!(
        daemon_log(&env).contains("no desktop notification service"),
        "{}",
        daemon_log(&env)
    );
    let want_osc = b"\x1b]9;Claude is waiting for approval";
    let ok = wait_until(5, || {
        let raw = client.raw();
        contains(&raw, want_osc) && strip_osc(&raw).contains(&0x07)
    });
    let raw = client.raw();
    assert!(
        ok,
        "the client's terminal got no OSC 9 notification and bell: osc {}, bell {}",
        contains(&raw, want_osc),
        strip_osc(&raw).contains(&0x07)
    );
}

#[test]
fn a_session_bus_without_a_notification_service_falls_back_to_tmux() {
    if !have("no notification service test", &["tmux", "dbus-daemon"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let sock = dir.path().join("bus");
    let bus = format!("unix:path={}", sock.display());
    // No display: a notification daemon the bus may try to start for the
    // name cannot come up either.
    let _daemon = Procs(vec![Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--nopidfile"])
        .arg(format!("--address={bus}"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dbus-daemon")]);
    assert!(wait_until(10, || sock.exists()), "no session bus");
    let env = Env::new("notify-nosvc");
    let _client = Attached::new(&env);
    start_tend(&env, Some(&bus));
    let pane = env.window("main", &env.play_cmd("claude", &approval_cast(), 60));
    let got = wait_until(60, || {
        env.tmux_out(&["show-messages"])
            .contains("message: Claude is waiting for approval")
    });
    assert!(
        got,
        "no status-line message for {pane}.\n-- tend log:\n{}",
        daemon_log(&env)
    );
    assert!(
        daemon_log(&env).contains("no desktop notification service"),
        "{}",
        daemon_log(&env)
    );
}

#[test]
fn the_pane_being_looked_at_is_not_notified() {
    if !have("focused pane test", &["tmux"]) {
        return;
    }
    let env = Env::new("notify-focus");
    let client = Attached::new(&env);
    start_tend(&env, None);
    let pane = env.window("main", &env.play_cmd("claude", &approval_cast(), 60));
    // The client now shows the agent's pane.
    env.tmux(&["select-window", "-t", &pane]);
    let reached = wait_until(60, || env.pane_option(&pane, "@tend_reason") == "approval");
    assert!(
        reached,
        "{pane} never showed approval:\n{}",
        daemon_log(&env)
    );
    std::thread::sleep(Duration::from_secs(2));
    let messages = env.tmux_out(&["show-messages"]);
    assert!(!messages.contains("message: Claude"), "{messages}");
    assert!(!contains(&client.raw(), b"\x1b]9;"), "an OSC 9 was sent");
}

#[test]
fn strip_osc_keeps_a_bare_bell() {
    assert_eq!(strip_osc(b"a\x1b]9;x\x07b\x07"), b"ab\x07");
    assert_eq!(strip_osc(b"\x1b]2;t\x1b\\c"), b"c");
}
