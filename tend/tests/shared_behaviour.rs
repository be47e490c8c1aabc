//! The same scenarios against a real tmux and a real zellij: self-reports
//! (`tend report`), stop flags, park and snooze, `tend events`, `wait`,
//! `prompt` and `read`, and `approve`/`deny` behave the same in both,
//! because one daemon core serves both multiplexers.
//!
//! Each multiplexer runs two panes: a declared agent that draws nothing
//! (`env TEND_AGENT=codex sleep 600`), so that everything [`scenario`]
//! sees comes from what it asks tend to do; and Claude Code's approval
//! recording replayed by `tend play`, which logs every byte typed into it,
//! for [`answering`]: `send-keys`, `approve`/`deny` and `prompt` against a
//! real dialog. The scenarios are written once; a harness per multiplexer
//! starts them, names its panes (`%N` in tmux, `terminal_N` in zellij) and
//! runs `tend` against it.
//!
//! zellij runs headless inside a private tmux server, with its own HOME,
//! config, cache and socket directories (`tend_testkit::zellij`). Without zellij 0.45+ the zellij test skips
//! loudly, and fails under CI. The fleet view (`tend pilot`) opens in a
//! zellij floating pane from the key binding README.md gives.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{tend_bin, typed, wait_until, Env};
use tend_testkit::zellij::{zellij_missing, Headless};

/// One multiplexer with tend running on it and one agent pane.
trait Multiplexer {
    /// `tmux` or `zellij`.
    fn label(&self) -> &'static str;
    /// `tend args…` against this multiplexer, not yet run.
    fn command(&self, args: &[&str]) -> Command;
    /// How this multiplexer spells a pane: the prefix of its pane ids.
    fn pane_prefix(&self) -> &'static str;
    /// The input log of the pane replaying Claude Code's approval.
    fn typed_log(&self) -> PathBuf;
    /// The `XDG_RUNTIME_DIR` tend runs with (its log is in `tend/`).
    fn runtime_dir(&self) -> PathBuf;
}

/// The end of the daemon's log, for failure messages: what tend said about
/// a job the multiplexer did not do.
fn daemon_log(m: &dyn Multiplexer) -> String {
    let dir = m.runtime_dir().join("tend");
    let mut text = String::new();
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "log") {
            let log = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(30)..].join("\n");
            text.push_str(&format!("\n--- {} ---\n{tail}", path.display()));
        }
    }
    if text.is_empty() {
        format!("(no daemon log in {})", dir.display())
    } else {
        text
    }
}

/// When the replayed recording waits for a key at its idle prompt, then
/// at its dialog (as `tests/answer.rs` replays it).
const PLAYER_ARGS: &[&str] = &[
    "--wait-input-at",
    "3.5",
    "--wait-input-at",
    "15.0",
    "--hold",
    "600",
];

fn claude_approval() -> PathBuf {
    support::corpus("claude/approval/pane.cast")
}

fn tend(m: &dyn Multiplexer, args: &[&str]) -> Output {
    m.command(args).output().expect("run tend")
}

fn tend_ok(m: &dyn Multiplexer, args: &[&str]) -> String {
    let o = tend(m, args);
    assert!(
        o.status.success(),
        "{}: tend {args:?} failed: {}{}",
        m.label(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json_of(m: &dyn Multiplexer, args: &[&str]) -> Value {
    let out = tend_ok(m, args);
    serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("{}: tend {args:?}: not JSON ({e}): {out}", m.label()))
}

/// `tend events --json --pane P`, its lines on a channel; killed on drop.
struct Events {
    child: Child,
    lines: Receiver<Value>,
}

impl Events {
    fn start(m: &dyn Multiplexer, pane: &str) -> Events {
        let mut child = m
            .command(&["events", "--json", "--pane", pane])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start tend events");
        let out = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Events { child, lines }
    }

    /// The next event of kind `kind`, skipping others; panics naming `what`
    /// when none comes within 15 s.
    fn next(&self, kind: &str, what: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(15);
        let mut skipped = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) if v["event"] == kind => return v,
                Ok(v) => skipped.push(v),
                Err(_) => panic!("no {kind} event for {what}; other events: {skipped:?}"),
            }
        }
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The pane running `agent`, once tend lists it.
fn agent_pane(m: &dyn Multiplexer, agent: &str) -> String {
    let mut found = None;
    let listed = wait_until(30, || {
        let out = tend(m, &["list", "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        found = v.as_array().into_iter().flatten().find_map(|p| {
            (p["agent"] == agent)
                .then(|| p["pane"].as_str().map(str::to_owned))
                .flatten()
        });
        found.is_some()
    });
    assert!(
        listed,
        "{}: tend never listed the {agent} pane: {}",
        m.label(),
        tend_ok(m, &["list", "--json"])
    );
    found.unwrap_or_default()
}

/// The scenario both multiplexers must pass the same way.
fn scenario(m: &dyn Multiplexer) {
    let pane = agent_pane(m, "codex");
    assert!(
        pane.starts_with(m.pane_prefix()),
        "{}: pane {pane} is not named as the multiplexer names it",
        m.label()
    );
    let get = |m: &dyn Multiplexer| json_of(m, &["get", &pane, "--json"]);

    // `tend events`: the stream is live once a stop request shows in it
    // (each request replaces the last).
    let events = Events::start(m, &pane);
    let mut live = false;
    for _ in 0..50 {
        tend_ok(m, &["stop-request", &pane, "are you there"]);
        if let Ok(v) = events.lines.recv_timeout(Duration::from_millis(300)) {
            assert_eq!(v["event"], "pane.stop_requested", "{v}");
            assert_eq!(v["pane"], pane.as_str(), "{v}");
            assert_eq!(v["reason"], "are you there", "{v}");
            live = true;
            break;
        }
    }
    assert!(live, "{}: `tend events` never showed an event", m.label());
    // Stop flags: pending until the agent reads and acknowledges it.
    assert_eq!(get(m)["stop"], "stop pending · not read");
    let inbox = tend_ok(m, &["inbox", "--pane", &pane]);
    assert!(inbox.contains("are you there"), "{inbox}");
    assert_eq!(get(m)["stop"], "stop pending · read, not acknowledged");
    tend_ok(m, &["ack", "--pane", &pane]);
    assert!(get(m)["stop"].is_null(), "{}", get(m));

    // `tend report`: the agent's word is the authority.
    tend_ok(
        m,
        &[
            "report",
            "working",
            "--pane",
            &pane,
            "--message",
            "compiling",
            "--every",
            "10m",
        ],
    );
    let v = events.next("pane.agent_status_changed", "the report");
    assert_eq!(
        (&v["pane"], &v["state"], &v["band"], &v["authority"]),
        (
            &Value::from(pane.as_str()),
            &Value::from("working"),
            &Value::from("working"),
            &Value::from("report")
        ),
        "{v}"
    );
    let g = get(m);
    assert_eq!(
        (&g["state"], &g["authority"], &g["message"]),
        (
            &Value::from("working"),
            &Value::from("report"),
            &Value::from("compiling")
        ),
        "{g}"
    );
    let explain = json_of(m, &["explain", &pane, "--json"]);
    assert_eq!(explain["pane"]["authority"], "report", "{explain}");
    assert!(!explain["report"].is_null(), "{explain}");

    // `tend park`: shelved with a note, no demand; unpark brings it back.
    let parked = json_of(m, &["park", &pane, "--note", "after lunch", "--json"]);
    assert_eq!(parked["parked"], pane.as_str(), "{parked}");
    let v = events.next("pane.agent_status_changed", "the park");
    assert_eq!(v["band"], "parked", "{v}");
    assert_eq!(v["prev_band"], "working", "{v}");
    let g = get(m);
    assert_eq!(
        (&g["band"], &g["parked"], &g["note"]),
        (
            &Value::from("parked"),
            &Value::from(true),
            &Value::from("after lunch")
        ),
        "{g}"
    );
    tend_ok(m, &["unpark", &pane]);
    let v = events.next("pane.agent_status_changed", "the unpark");
    assert_eq!(
        (&v["band"], &v["prev_band"]),
        (&"working".into(), &"parked".into()),
        "{v}"
    );
    assert_eq!(get(m)["parked"], false);

    // `tend snooze`: out of the way for six hours; unsnooze ends it.
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let snoozed = json_of(m, &["snooze", &pane, "6h", "--json"]);
    assert_eq!(snoozed["snoozed"], pane.as_str(), "{snoozed}");
    let until = snoozed["until"].as_u64().expect("until");
    assert!(
        (before + 6 * 3600..=before + 6 * 3600 + 60).contains(&until),
        "until {until}, asked at {before}"
    );
    let v = events.next("pane.agent_status_changed", "the snooze");
    assert_eq!(v["band"], "snoozed", "{v}");
    let g = get(m);
    assert_eq!(
        (&g["band"], &g["snoozed"]),
        (&"snoozed".into(), &true.into()),
        "{g}"
    );
    tend_ok(m, &["unsnooze", &pane]);
    let v = events.next("pane.agent_status_changed", "the unsnooze");
    assert_eq!(v["band"], "working", "{v}");
    assert_eq!(get(m)["snoozed"], false);

    // Done stays done; releasing hands the pane back to its screen. A
    // `tend wait` for it returns (whether it starts before or after).
    let waiter = m
        .command(&["wait", &pane, "--until", "completed", "--timeout", "30s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tend wait");
    tend_ok(m, &["report", "done", "--pane", &pane]);
    let waited = waiter.wait_with_output().expect("tend wait");
    assert!(
        waited.status.success(),
        "{}: tend wait: {}{}",
        m.label(),
        String::from_utf8_lossy(&waited.stdout),
        String::from_utf8_lossy(&waited.stderr)
    );
    let v = events.next("pane.agent_status_changed", "the done report");
    assert_eq!(
        (&v["state"], &v["prev_state"]),
        (&"completed".into(), &"working".into()),
        "{v}"
    );
    assert_eq!(get(m)["state"], "completed");
    tend_ok(m, &["release", "--pane", &pane]);
    assert_eq!(get(m)["authority"], "screen");

    // `tend prompt` pastes into the pane (its terminal echoes it: `sleep`
    // reads nothing) and `tend read` reads it back.
    let sent = json_of(m, &["prompt", &pane, "hello from tend", "--json"]);
    assert_eq!(
        (&sent["sent"], &sent["pane"]["pane"]),
        (&true.into(), &Value::from(pane.as_str())),
        "{sent}"
    );
    let mut screen = String::new();
    assert!(
        wait_until(10, || {
            screen = json_of(m, &["read", &pane, "--json"])["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            screen.contains("hello from tend")
        }),
        "{}: the prompt never showed: {screen:?}; the daemon's log:{}",
        m.label(),
        daemon_log(m)
    );
    // With `--lines N`, the last N lines of the screen and its history:
    // the pasted line is the last one written (the pane's rows below it
    // are empty and not lines).
    let last = json_of(m, &["read", &pane, "--lines", "1", "--json"]);
    let text = last["text"].as_str().unwrap_or_default();
    assert!(
        !text.contains('\n') && text.contains("hello from tend"),
        "{}: read --lines 1 gave {text:?}",
        m.label()
    );

    // Unknown panes are refused the same way, in the multiplexer's words.
    let missing = format!("{}9999", m.pane_prefix());
    let out = tend(m, &["park", &missing, "--json"]);
    assert!(!out.status.success());
    let err =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown_pane"), "{err}");
    assert!(err.contains(&missing), "{err}");
}

/// A real dialog answered the same way: refused while none shows, the
/// manifest's keys once it does, prompts refused while it blocks.
fn answering(m: &dyn Multiplexer) {
    let pane = agent_pane(m, "claude");
    let state = |m: &dyn Multiplexer| {
        let g = json_of(m, &["get", &pane, "--json"]);
        format!(
            "{}/{}",
            g["state"].as_str().unwrap_or_default(),
            g["reason"].as_str().unwrap_or_default()
        )
    };
    assert!(
        wait_until(30, || state(m) == "idle/"),
        "{}: claude never idle: {}",
        m.label(),
        state(m)
    );
    let before = typed(&m.typed_log());
    let out = tend(m, &["approve", &pane, "--json"]);
    assert!(!out.status.success(), "approve with no dialog succeeded");
    let err: Value = serde_json::from_slice(&out.stdout).expect("json error");
    assert_eq!(err["error"]["code"], "no_dialog", "{err}");
    assert_eq!(
        typed(&m.typed_log()),
        before,
        "keys reached a pane with no dialog"
    );

    // On to the dialog: the player waits for a key.
    tend_ok(m, &["send-keys", &pane, "Enter"]);
    assert!(
        wait_until(60, || state(m) == "waiting/approval"),
        "{}: claude never showed its dialog: {}",
        m.label(),
        state(m)
    );
    let dry = json_of(m, &["approve", &pane, "--dry-run", "--json"]);
    assert_eq!(
        (&dry["pane"], &dry["rule"], &dry["keys"], &dry["sent"]),
        (
            &Value::from(pane.as_str()),
            &Value::from("claude/approval"),
            &serde_json::json!(["1"]),
            &Value::from(false)
        ),
        "{dry}"
    );
    // The terminal keeps ICRNL: the Enter sent above arrived as a newline.
    let base = typed(&m.typed_log());
    assert_eq!(
        base.last(),
        Some(&b'\n'),
        "{:?}",
        String::from_utf8_lossy(&base)
    );
    let out = tend(m, &["prompt", &pane, "more work", "--json"]);
    assert!(!out.status.success());
    let err: Value = serde_json::from_slice(&out.stdout).expect("json error");
    assert_eq!(err["error"]["code"], "agent_blocked", "{err}");
    let denied = json_of(m, &["deny", &pane, "--json"]);
    assert_eq!(denied["sent"], true, "{denied}");
    let want: Vec<u8> = base.iter().chain(b"4").copied().collect();
    assert!(
        wait_until(10, || typed(&m.typed_log()) == want),
        "{}: deny typed {:?}",
        m.label(),
        String::from_utf8_lossy(&typed(&m.typed_log()))
    );
}

// ---- tmux ----

struct Tmux {
    env: Env,
}

impl Multiplexer for Tmux {
    fn label(&self) -> &'static str {
        "tmux"
    }
    fn command(&self, args: &[&str]) -> Command {
        self.env.command(args)
    }
    fn pane_prefix(&self) -> &'static str {
        "%"
    }
    fn typed_log(&self) -> PathBuf {
        self.env.path().join("typed.log")
    }
    fn runtime_dir(&self) -> PathBuf {
        self.env.path().join("run")
    }
}

#[test]
fn tmux_reports_stop_flags_parks_snoozes_events_and_answers() {
    let env = Env::new("shared");
    env.tend_ok(&["start"]);
    env.window("main", "env TEND_AGENT=codex sleep 600");
    let mut player = format!(
        "env TEND_AGENT=claude '{}' play '{}' --input-log '{}'",
        tend_bin(),
        claude_approval().display(),
        env.path().join("typed.log").display()
    );
    for a in PLAYER_ARGS {
        player.push(' ');
        player.push_str(a);
    }
    env.window("main", &player);
    let m = Tmux { env };
    scenario(&m);
    answering(&m);
}

// ---- zellij ----

const LAYOUT: &str = r#"
layout {
    // The recording at the full width it was made for, in the tab a
    // client looks at (followed by the subscription).
    tab name="claude" focus=true {
        pane command="env" name="claude" {
            args "TEND_AGENT=claude" "@TEND@" "play" "@CAST@" "--input-log" "@LOG@" @PLAYER@
        }
    }
    // A background tab (read with dump-screen).
    tab name="others" {
        pane split_direction="vertical" {
            pane command="env" name="codex" {
                args "TEND_AGENT=codex" "sleep" "600"
            }
            pane command="sh" name="shell" {
                args "-c" "echo ready; exec sleep 600"
            }
        }
    }
}
"#;

/// The key binding README.md gives for the fleet view in zellij: `Alt A`
/// opens `tend pilot` in a floating pane that closes when the view does.
const PILOT_BINDING: &str = r#"
keybinds {
    shared_except "locked" {
        bind "Alt A" { Run "@TEND@" "pilot" { floating true; close_on_exit true; }; }
    }
}
"#;

/// A headless zellij session with tend running on it; tend stopped, then
/// the session, on drop.
struct Zellij {
    host: Headless,
    /// Held until the session is gone (fields drop after `Drop::drop`).
    _turn: support::Turn,
}

impl Zellij {
    fn root(&self) -> &Path {
        self.host.root()
    }

    fn zellij(&self, args: &[&str]) -> Output {
        self.host.zellij(args)
    }

    fn start() -> Zellij {
        let turn = support::beside_others();
        let host = Headless::new("tsb");
        let root = host.root();
        let player: Vec<String> = PLAYER_ARGS.iter().map(|a| format!("\"{a}\"")).collect();
        let layout = LAYOUT
            .replace("@TEND@", tend_bin())
            .replace("@CAST@", &claude_approval().to_string_lossy())
            .replace("@LOG@", &root.join("typed.log").to_string_lossy())
            .replace("@PLAYER@", &player.join(" "));
        // The fleet view's key binding, as the README gives it.
        host.start(&PILOT_BINDING.replace("@TEND@", tend_bin()), &layout);
        let z = Zellij { host, _turn: turn };
        let listed = wait_until(30, || {
            let out = z.zellij(&["--session", z.host.name(), "action", "list-panes", "--json"]);
            let listed = String::from_utf8_lossy(&out.stdout).into_owned();
            listed.contains("codex") && listed.contains("claude")
        });
        assert!(listed, "zellij did not list the layout's pane within 30 s");
        let out = z.command(&["start"]).output().expect("tend start");
        assert!(
            out.status.success(),
            "tend start on zellij: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        z
    }
}

impl Zellij {
    /// Keys typed at the zellij client (tmux `send-keys` names).
    fn type_keys(&self, keys: &[&str]) {
        self.host.type_keys(keys);
    }

    /// What the zellij client shows.
    fn screen(&self) -> String {
        self.host.screen()
    }

    /// The client's screen once `ready` holds for it, polled for up to
    /// `secs`; panics naming `what` and showing the last screen otherwise.
    fn screen_when(&self, secs: u64, what: &str, mut ready: impl FnMut(&str) -> bool) -> String {
        let mut screen = String::new();
        let ok = wait_until(secs, || {
            screen = self.screen();
            ready(&screen)
        });
        assert!(ok, "zellij: {what}: the client shows\n{screen}");
        screen
    }

    /// The pane the (one) client has focused, as `terminal_N`.
    fn focused(&self) -> String {
        let out = self.zellij(&["--session", self.host.name(), "action", "list-clients"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .nth(1)
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or_default()
            .to_owned()
    }
}

impl Multiplexer for Zellij {
    fn label(&self) -> &'static str {
        "zellij"
    }
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.host.command(tend_bin());
        cmd.env_remove("TMUX_PANE")
            .env_remove("TEND_TMUX_SOCKET")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .args(["--zellij", self.host.name()])
            .args(args);
        cmd
    }
    fn pane_prefix(&self) -> &'static str {
        "terminal_"
    }
    fn typed_log(&self) -> PathBuf {
        self.root().join("typed.log")
    }
    fn runtime_dir(&self) -> PathBuf {
        self.root().join("tmp")
    }
}

impl Drop for Zellij {
    fn drop(&mut self) {
        let _ = self.command(&["stop"]).output();
    }
}

#[test]
fn zellij_reports_stop_flags_parks_snoozes_events_and_answers() {
    if let Some(why) = zellij_missing() {
        return support::skip(
            "zellij_reports_stop_flags_parks_snoozes_events_and_answers",
            &why,
        );
    }
    let z = Zellij::start();
    scenario(&z);
    answering(&z);
    // zellij's own part: the visible tab is followed by the subscription,
    // the background tab read with dump-screen.
    let list = json_of(&z, &["list", "--json"]);
    let tap_of = |agent: &str| {
        list.as_array()
            .into_iter()
            .flatten()
            .find(|p| p["agent"] == agent)
            .map(|p| p["tap"].clone())
    };
    assert_eq!(tap_of("claude"), Some("subscribe".into()), "{list}");
    assert_eq!(tap_of("codex"), Some("polling".into()), "{list}");
}

/// The fleet view in a zellij floating pane, opened by the README's key
/// binding: the agents by band, the approve key reaching the agent's
/// dialog (read again by the daemon first), and Enter focusing the chosen
/// pane in its background tab and closing the view.
#[test]
fn zellij_fleet_view_floats_approves_and_jumps() {
    if let Some(why) = zellij_missing() {
        return support::skip("zellij_fleet_view_floats_approves_and_jumps", &why);
    }
    let z = Zellij::start();
    let claude = agent_pane(&z, "claude");
    let codex = agent_pane(&z, "codex");
    let state = |pane: &str| {
        let g = json_of(&z, &["get", pane, "--json"]);
        format!(
            "{}/{}",
            g["state"].as_str().unwrap_or_default(),
            g["reason"].as_str().unwrap_or_default()
        )
    };
    assert!(
        wait_until(30, || state(&claude) == "idle/"),
        "claude never idle: {}",
        state(&claude)
    );
    tend_ok(&z, &["send-keys", &claude, "Enter"]);
    assert!(
        wait_until(60, || state(&claude) == "waiting/approval"),
        "claude never showed its dialog: {}",
        state(&claude)
    );

    z.type_keys(&["M-A"]);
    let screen = z.screen_when(30, "Alt A opened no fleet view", |s| {
        s.contains("tend pilot") && s.contains("── waiting (1)")
    });
    let waiting = screen
        .lines()
        .position(|l| l.contains("── waiting (1)"))
        .unwrap_or_default();
    let row = screen.lines().nth(waiting + 1).unwrap_or_default();
    assert!(
        row.contains("claude") && row.contains("approval"),
        "{screen}"
    );
    assert!(screen.contains("1 agent needs you"), "{screen}");
    assert!(
        screen.contains(&codex) || screen.contains("codex"),
        "{screen}"
    );

    // a: approve. Claude's "Yes" is 1.
    z.screen_when(10, "no dialog text", |s| {
        s.contains("Do you want to proceed?")
    });
    let before = typed(&z.typed_log());
    z.type_keys(&["a"]);
    let want: Vec<u8> = before.iter().chain(b"1").copied().collect();
    assert!(
        wait_until(10, || typed(&z.typed_log()) == want),
        "approve typed {:?}: {}",
        String::from_utf8_lossy(&typed(&z.typed_log())),
        z.screen()
    );

    // Enter on codex's row: its pane (in the background tab) gets the
    // focus and the view closes.
    let on_codex = |s: &str| s.lines().any(|l| l.contains('▶') && l.contains("codex"));
    for _ in 0..6 {
        if wait_until(2, || on_codex(&z.screen())) {
            break;
        }
        z.type_keys(&["j"]);
    }
    assert!(on_codex(&z.screen()), "{}", z.screen());
    z.type_keys(&["Enter"]);
    assert!(
        wait_until(10, || z.focused() == codex),
        "the client is on {} not {codex}: {}",
        z.focused(),
        z.screen()
    );
    z.screen_when(10, "Enter did not close the view", |s| {
        !s.contains("tend pilot")
    });
}
