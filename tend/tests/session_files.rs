//! Claude Code's session file (`<config>/sessions/<pid>.json`) as the
//! agent's word, with the real daemon, tmux and real processes: a file
//! counts only for the pane whose agent process it names, by pid and start
//! time; hostile files (not JSON, huge, another user's, a symlink, in a
//! folder others can write, naming another pane's process or an earlier
//! process with the same pid) read as nothing; the opt-in tier runs the
//! real Claude Code in a plain tmux pane (no `tend run`).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tend_testkit::zellij::{zellij_missing, Headless};

use crate::support::{self, wait_until, Env};

/// A pane whose only process is `sleep`, declared as Claude Code
/// (`TEND_AGENT`), keeping its session files under `config`: its pid.
fn stand_in(env: &Env, config: &Path) -> (String, u32) {
    let pane = env.window(
        "main",
        &format!(
            "exec env TEND_AGENT=claude CLAUDE_CONFIG_DIR='{}' sleep 1000",
            config.display()
        ),
    );
    let pid: u32 = env
        .tmux_out(&["display-message", "-p", "-t", &pane, "#{pane_pid}"])
        .trim()
        .parse()
        .expect("the pane's pid");
    (pane, pid)
}

/// When process `pid` started, in clock ticks after boot: `/proc/<pid>/stat`'s
/// 22nd field, as Claude Code writes it into `procStart`.
fn proc_start(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/<pid>/stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    after.split(' ').nth(19).expect("starttime").to_owned()
}

/// A session file as Claude Code 2.1.332 writes it.
fn body(pid: u32, start: &str, status: &str, waiting_for: Option<&str>) -> String {
    let mut v = json!({"pid": pid, "sessionId": "00000000-0000-4000-8000-000000000001",
        "cwd": "/home/user/work", "startedAt": 1796537525052u64, "procStart": start,
        "version": "2.1.332", "kind": "interactive", "entrypoint": "cli", "name": "work-1",
        "status": status, "updatedAt": 1796537529013u64, "statusUpdatedAt": 1796537529013u64});
    if let Some(w) = waiting_for {
        v["waitingFor"] = w.into();
    }
    v.to_string()
}

/// Writes `text` as the file at `path` (mode 0644), in place of what was
/// there, by rename as the CLI's own writes are atomic.
fn put(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    std::fs::write(&tmp, text).expect("write");
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::rename(&tmp, path).expect("rename");
}

fn explain(env: &Env, pane: &str) -> Value {
    serde_json::from_str(&env.tend_ok(&["explain", pane, "--json"])).expect("explain --json")
}

/// Waits until the pane's row satisfies `f`; fails naming `what`.
fn wait_row(env: &Env, pane: &str, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    let ok = wait_until(30, || f(&env.row(pane)));
    let r = env.row(pane);
    assert!(ok, "never {what}: {r}\n{}", env.tend_ok(&["explain", pane]));
    r
}

fn by_file(r: &Value, state: &str) -> bool {
    r["authority"] == "file" && r["state"] == state
}

fn by_screen(r: &Value) -> bool {
    r["agent"] == "claude" && r["authority"] == "screen"
}

/// What makes a pane's file hostile, named.
type Hostile<'a> = Box<dyn Fn() + 'a>;

#[test]
fn a_session_file_speaks_for_its_own_process_only() {
    let env = Env::new("sessions");
    let config = env.path().join("claude");
    let sessions = config.join("sessions");
    std::fs::create_dir_all(&sessions).expect("mkdir");
    env.tend_ok(&["start"]);
    let (pane, pid) = stand_in(&env, &config);
    let (other, other_pid) = stand_in(&env, &config);
    let start = proc_start(pid);
    let file = sessions.join(format!("{pid}.json"));
    wait_row(&env, &pane, "named claude", |r| r["agent"] == "claude");

    // Its own file, as the CLI writes it: the word decides.
    put(&file, &body(pid, &start, "busy", None));
    wait_row(&env, &pane, "working by its file", |r| {
        by_file(r, "working")
    });
    put(&file, &body(pid, &start, "shell", None));
    let r = wait_row(&env, &pane, "working with a live shell", |r| {
        by_file(r, "working") && r["rule"] == "file/shell"
    });
    println!("session_files: shell: {r}");
    put(
        &file,
        &body(pid, &start, "waiting", Some("permission prompt")),
    );
    let r = wait_row(&env, &pane, "waiting for approval by its file", |r| {
        by_file(r, "waiting") && r["reason"] == "approval"
    });
    assert_eq!(r["message"], "permission prompt", "{r}");
    put(&file, &body(pid, &start, "idle", None));
    wait_row(&env, &pane, "completed by its file", |r| {
        by_file(r, "completed")
    });
    let ex = explain(&env, &pane);
    assert_eq!(
        ex["authority"]["file"]["path"],
        file.display().to_string(),
        "{ex}"
    );

    // Each hostile file reads as nothing: the screen decides at once.
    let hostile: Vec<(&str, Hostile)> = vec![
        ("not JSON", Box::new(|| put(&file, "{\"pid\": 12, \"stat"))),
        (
            "huge",
            Box::new(|| {
                let mut b = body(pid, &start, "busy", None);
                b.push_str(&" ".repeat(2 * 1024 * 1024));
                put(&file, &b)
            }),
        ),
        (
            "another pane's process",
            Box::new(|| {
                put(
                    &file,
                    &body(other_pid, &proc_start(other_pid), "busy", None),
                )
            }),
        ),
        (
            "an earlier process with the same pid",
            Box::new(|| {
                let earlier = start.parse::<u64>().expect("ticks") - 1;
                put(&file, &body(pid, &earlier.to_string(), "busy", None))
            }),
        ),
        (
            "an unknown status",
            Box::new(|| put(&file, &body(pid, &start, "thinking", None))),
        ),
        (
            "a symlink",
            Box::new(|| {
                let real = sessions.join("elsewhere.json");
                put(&real, &body(pid, &start, "busy", None));
                let _ = std::fs::remove_file(&file);
                std::os::unix::fs::symlink(&real, &file).expect("symlink");
            }),
        ),
        (
            "writable by others",
            Box::new(|| {
                put(&file, &body(pid, &start, "busy", None));
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666))
                    .expect("chmod");
                // A change the watch sees: the mode alone is not one.
                put(&file.with_extension("touch"), "");
            }),
        ),
        (
            "in a folder others can write",
            Box::new(|| {
                std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o777))
                    .expect("chmod");
                put(&file, &body(pid, &start, "busy", None));
            }),
        ),
        (
            "gone",
            Box::new(|| {
                let _ = std::fs::remove_file(&file);
            }),
        ),
    ];
    let mut hostile = hostile;
    if nix::unistd::geteuid().is_root() {
        hostile.push((
            "another user's",
            Box::new(|| {
                put(&file, &body(pid, &start, "busy", None));
                nix::unistd::chown(&file, Some(nix::unistd::Uid::from_raw(65534)), None)
                    .expect("chown");
                put(&file.with_extension("touch"), "");
            }),
        ));
    } else {
        support::skip(
            "a_session_file_speaks_for_its_own_process_only",
            "not root: another user's file is not made (tend_core::trust tests the rule)",
        );
    }
    for (what, make) in &hostile {
        // The pane's own good file first, then the hostile one.
        std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        let _ = std::fs::remove_file(&file);
        put(&file, &body(pid, &start, "busy", None));
        wait_row(
            &env,
            &pane,
            &format!("working by its file before {what}"),
            |r| by_file(r, "working"),
        );
        make();
        let r = wait_row(
            &env,
            &pane,
            &format!("back to the screen with {what}"),
            by_screen,
        );
        let last = explain(&env, &pane)["authority"]["file"]["last"].clone();
        println!("session_files: {what}: {} ({last})", r["authority"]);
    }
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    // The other pane reads only its own file.
    let _ = std::fs::remove_file(&file);
    put(
        &sessions.join(format!("{other_pid}.json")),
        &body(other_pid, &proc_start(other_pid), "busy", None),
    );
    wait_row(
        &env,
        &other,
        "the other pane working by its own file",
        |r| by_file(r, "working"),
    );
    assert!(by_screen(&env.row(&pane)), "{}", env.row(&pane));
    let ex = explain(&env, &pane)["authority"]["file"].clone();
    println!("session_files: counters {ex}");
    assert!(ex["rejected"].as_u64() >= Some(3), "{ex}");
    assert!(ex["untied"].as_u64() >= Some(2), "{ex}");
    assert!(ex["refused"].as_u64() >= Some(3), "{ex}");
    let doctor = env.tend_ok(&["doctor"]);
    assert!(doctor.contains("session files"), "{doctor}");
}

/// The process ends: its file, left behind, speaks for no one.
#[test]
fn a_file_left_by_an_ended_process_speaks_for_no_one() {
    let env = Env::new("sessions-end");
    let config = env.path().join("claude");
    let sessions = config.join("sessions");
    std::fs::create_dir_all(&sessions).expect("mkdir");
    // The pane stays when its process ends.
    env.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
    env.tend_ok(&["start"]);
    let (pane, pid) = stand_in(&env, &config);
    let file = sessions.join(format!("{pid}.json"));
    wait_row(&env, &pane, "named claude", |r| r["agent"] == "claude");
    put(&file, &body(pid, &proc_start(pid), "busy", None));
    wait_row(&env, &pane, "working by its file", |r| {
        by_file(r, "working")
    });
    // Killed: it never removes its file.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    // The screen decides: `exited`, or nothing at all — the stand-in
    // never drew an agent's screen.
    let r = wait_row(&env, &pane, "no longer by its file", |r| {
        r["authority"] == "screen" && r["state"] != "working"
    });
    assert!(
        explain(&env, &pane)["authority"]["file"]["path"].is_null(),
        "still followed"
    );
    println!("session_files: after the kill: {r}");
    assert!(file.exists(), "the file stays behind");
}

// --- The opt-in tier: the real Claude Code in a plain tmux pane and in
// zellij (no `tend run`).

/// A multiplexer with tend on it, and the real Claude Code in one pane.
trait Host {
    /// `tmux` or `zellij`.
    fn label(&self) -> &'static str;
    /// `tend args…` against it, not yet run.
    fn command(&self, args: &[&str]) -> Command;
    /// Ctrl-C at the agent's pane.
    fn ctrl_c(&self, pane: &str);
}

impl Host for Env {
    fn label(&self) -> &'static str {
        "tmux"
    }
    fn command(&self, args: &[&str]) -> Command {
        Env::command(self, args)
    }
    fn ctrl_c(&self, pane: &str) {
        self.tmux(&["send-keys", "-t", pane, "C-c"]);
    }
}

/// A headless zellij session whose one pane runs the real Claude Code.
struct Zellij {
    host: Headless,
    _turn: support::Turn,
}

impl Host for Zellij {
    fn label(&self) -> &'static str {
        "zellij"
    }
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.host.command(support::tend_bin());
        cmd.env_remove("TMUX_PANE")
            .env_remove("TEND_TMUX_SOCKET")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .args(["--zellij", self.host.name()])
            .args(args);
        cmd
    }
    fn ctrl_c(&self, _pane: &str) {
        // The one pane has the client's focus.
        self.host.type_keys(&["C-c"]);
    }
}

impl Drop for Zellij {
    fn drop(&mut self) {
        let _ = self.command(&["stop"]).output();
    }
}

fn tend_ok(h: &dyn Host, args: &[&str]) -> String {
    let o = h.command(args).output().expect("run tend");
    assert!(
        o.status.success(),
        "{}: tend {args:?}: {}{}",
        h.label(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The claude pane's row of `tend list --json` (null when not listed).
fn claude_row(h: &dyn Host) -> Value {
    let out = h.command(&["list", "--json"]).output().expect("tend list");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v.as_array()
        .into_iter()
        .flatten()
        .find(|r| r["agent"] == "claude")
        .cloned()
        .unwrap_or_default()
}

fn wait_claude(h: &dyn Host, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    let ok = wait_until(60, || f(&claude_row(h)));
    let r = claude_row(h);
    assert!(ok, "{}: never {what}: {r}", h.label());
    r
}

/// `tend events --json --pane P`: every line with the time it came.
struct Events {
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Events {
    fn start(h: &dyn Host, pane: &str) -> Events {
        let mut child = h
            .command(&["events", "--json", "--pane", pane])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tend events");
        let out = child.stdout.take().expect("piped");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let keep = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                if let (Ok(v), Ok(mut l)) = (serde_json::from_str::<Value>(&line), keep.lock()) {
                    l.push(v);
                }
            }
        });
        Events { child, lines }
    }

    /// The status changes so far: (Unix time, state, authority).
    fn changes(&self) -> Vec<(f64, String, String)> {
        let l = self.lines.lock().map(|l| l.clone()).unwrap_or_default();
        l.iter()
            .filter(|v| v["event"] == "pane.agent_status_changed")
            .map(|v| {
                (
                    v["at"].as_f64().unwrap_or(0.0),
                    v["state"].as_str().unwrap_or("-").to_owned(),
                    v["authority"].as_str().unwrap_or("-").to_owned(),
                )
            })
            .collect()
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every version of the session files in `dir` the test saw (status, its
/// `statusUpdatedAt` in Unix seconds), polled every 20 ms.
fn file_status(dir: &Path) -> Option<(String, f64)> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .find_map(|e| {
            let v: Value = serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok()?;
            Some((
                v["status"].as_str()?.to_owned(),
                v["statusUpdatedAt"].as_f64()? / 1000.0,
            ))
        })
}

/// The scenario both multiplexers run: a 20 s background shell, an
/// approval approved, one denied, the exit.
fn real_claude(h: &dyn Host, claude: &support::offline::OfflineClaude, home: &Path) {
    let label = h.label();
    let dir = home.join(".claude/sessions");
    let r = wait_claude(h, "idle by its file", |r| by_file(r, "idle"));
    let pane = r["pane"].as_str().expect("pane").to_owned();
    let events = Events::start(h, &pane);

    // A background shell of 20 s: working by the file all along, completed
    // only once the file says idle.
    tend_ok(
        h,
        &["prompt", &pane, "Run the long command in the background."],
    );
    let mut versions: Vec<(String, f64)> = Vec::new();
    let done = wait_until(120, || {
        if let Some(v) = file_status(&dir) {
            if versions.last() != Some(&v) {
                versions.push(v);
            }
        }
        let shell_over = versions
            .iter()
            .skip_while(|v| v.0 != "shell")
            .any(|v| v.0 != "shell");
        shell_over && claude_row(h)["state"] == "completed"
    });
    assert!(
        done,
        "{label}: never completed after the shell: {versions:?}"
    );
    // The version tend read last, if the loop ended before the test saw it.
    if let Some(v) = file_status(&dir) {
        if versions.last() != Some(&v) {
            versions.push(v);
        }
    }
    // Taken on the file's own clock (statusUpdatedAt) and the daemon's.
    let shell = versions.iter().position(|v| v.0 == "shell").expect("shell");
    let (shell_from, shell_to) = (versions[shell].1, versions[shell + 1].1);
    let idle_at = versions[shell..]
        .iter()
        .rev()
        .find(|v| v.0 == "idle")
        .map(|v| v.1)
        .expect("idle after the shell");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let changes = events.changes();
    for c in &changes {
        println!("session_files: {label}: {:.3} {} {}", c.0, c.1, c.2);
    }
    for v in &versions {
        println!("session_files: {label}: file {:.3} {}", v.1, v.0);
    }
    let early: Vec<_> = changes
        .iter()
        .filter(|c| c.1 == "completed" && c.0 < shell_to)
        .collect();
    assert!(
        early.is_empty(),
        "{label}: completed while the shell ran: {early:?}"
    );
    let during: Vec<_> = changes
        .iter()
        .filter(|c| c.0 >= shell_from && c.0 < shell_to)
        .collect();
    assert!(
        during.iter().all(|c| c.1 == "working" && c.2 == "file"),
        "{label}: not working by the file while the shell ran: {during:?}"
    );
    let completed = changes
        .iter()
        .find(|c| c.1 == "completed" && c.0 >= idle_at)
        .expect("a completed after the file's idle");
    assert_eq!(completed.2, "file", "{label}: {completed:?}");
    println!(
        "session_files: {label}: figure: the shell ran {:.1} s, no completed before it ended; \
         completed {:.0} ms after the file said idle",
        shell_to - shell_from,
        (completed.0 - idle_at) * 1000.0
    );

    // The approval: waiting/approval with the agent's words.
    tend_ok(h, &["prompt", &pane, "Clean the build directory."]);
    let r = wait_claude(h, "waiting for approval", |r| {
        r["state"] == "waiting" && r["reason"] == "approval"
    });
    println!("session_files: {label}: approval: {r}");
    assert_eq!(r["message"], "permission prompt", "{label}: {r}");
    tend_ok(h, &["approve", &pane]);
    wait_claude(h, "completed by its file", |r| by_file(r, "completed"));
    assert!(
        !claude.work.join("build").exists(),
        "{label}: approved, yet build/ is there"
    );

    // Denied: the file says idle; the screen says how the turn ended.
    std::fs::create_dir_all(claude.work.join("build")).expect("mkdir build");
    tend_ok(h, &["prompt", &pane, "Clean the build directory."]);
    wait_claude(h, "waiting for approval again", |r| {
        r["state"] == "waiting" && r["reason"] == "approval"
    });
    tend_ok(h, &["deny", &pane]);
    let r = wait_claude(h, "the turn over after the denial", |r| {
        r["state"] != "working" && !(r["state"] == "waiting" && r["reason"] == "approval")
    });
    println!("session_files: {label}: denied: {r}");
    assert!(
        claude.work.join("build").exists(),
        "{label}: denied, yet build/ is gone"
    );

    // Exit: the file goes with the process; the screen decides.
    h.ctrl_c(&pane);
    h.ctrl_c(&pane);
    let r = wait_claude(h, "exited", |r| r["state"] == "exited");
    println!("session_files: {label}: exited: {r}");
    assert_ne!(r["authority"], "file", "{label}: {r}");
    let ex: Value =
        serde_json::from_str(&tend_ok(h, &["explain", &pane, "--json"])).expect("explain --json");
    println!("session_files: {label}: file {}", ex["authority"]["file"]);
}

fn real_claude_installed(test: &str) -> Option<PathBuf> {
    if !support::offline::real_agents("session_files") {
        return None;
    }
    support::offline::claude_installed(test)
}

#[test]
fn real_claude_in_a_plain_tmux_pane_is_read_from_its_session_file() {
    let Some(agents) =
        real_claude_installed("real_claude_in_a_plain_tmux_pane_is_read_from_its_session_file")
    else {
        return;
    };
    let env = Env::new("sessions-real");
    let claude = support::offline::OfflineClaude::start_with(env.path(), &agents, 20);
    env.tend_ok(&["start"]);
    // The pane stays after the exit, for its last `explain`.
    env.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
    // No `tend run`: the plain command a user types.
    env.window("main", &claude.command(""));
    real_claude(&env, &claude, &env.path().join("home"));
}

#[test]
fn real_claude_in_zellij_is_read_from_its_session_file() {
    let test = "real_claude_in_zellij_is_read_from_its_session_file";
    let Some(agents) = real_claude_installed(test) else {
        return;
    };
    if let Some(why) = zellij_missing() {
        return support::skip(test, &why);
    }
    let turn = support::beside_others();
    let host = Headless::new("tsf");
    let claude = support::offline::OfflineClaude::start_with(host.root(), &agents, 20);
    let layout = format!(
        "layout {{\n    tab name=\"claude\" focus=true {{\n        pane command=\"sh\" name=\"claude\" {{\n            args \"-c\" {}\n        }}\n    }}\n}}\n",
        serde_json::to_string(&claude.command("")).expect("a KDL string")
    );
    host.start("", &layout);
    let z = Zellij { host, _turn: turn };
    tend_ok(&z, &["start"]);
    let home = z.host.root().join("home");
    real_claude(&z, &claude, &home);
}
