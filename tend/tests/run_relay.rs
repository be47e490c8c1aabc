//! `tend run -- COMMAND` in a real tmux pane: a transparent relay (sizes,
//! keys and signals, exit status, full-screen programs, 10 MB of output
//! byte for byte) that answers a program's OSC 7501 query, so that the
//! program's own word reaches tend; and the same program without the relay
//! (no answer, so no reports), whose screen tend reads as before.
//!
//! The agent is `support/psp_agent.py`: it asks and reports as Claude Code
//! 2.1 does, and draws a real Claude Code recording's screens
//! (`claude/working_then_done`) so that the screen rules read it as Claude
//! (`TEND_AGENT=claude`). Each step of its turn is one key typed into it;
//! the test waits for what tend reads after each.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;
use support::{corpus, tend_bin, wait_until, Env};
use tend_detector::cast::{Cast, EventKind};

/// One at a time: each runs a tmux server, and some a daemon, on a
/// two-core machine.
static SERIAL: Mutex<()> = Mutex::new(());

pub(crate) fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A pane running an interactive bash at a `$ ` prompt.
pub(crate) fn shell(env: &Env) -> String {
    env.window("main", "env PS1='$ ' bash --norc --noprofile")
}

pub(crate) fn keys(env: &Env, pane: &str, keys: &[&str]) {
    let mut args = vec!["send-keys", "-t", pane];
    args.extend_from_slice(keys);
    env.tmux(&args);
}

/// The pane's text, history included.
pub(crate) fn text(env: &Env, pane: &str) -> String {
    env.tmux_out(&["capture-pane", "-p", "-J", "-S", "-", "-t", pane])
}

pub(crate) fn wait_text(env: &Env, pane: &str, want: &str) {
    let seen = wait_until(30, || text(env, pane).contains(want));
    assert!(seen, "never showed {want:?}:\n{}", text(env, pane));
}

fn pane_size(env: &Env, pane: &str) -> String {
    env.tmux_out(&["display", "-p", "-t", pane, "#{pane_height} #{pane_width}"])
}

fn quoted(p: &Path) -> String {
    format!("'{}'", p.display())
}

pub(crate) fn relay() -> String {
    format!("'{}' run --", tend_bin())
}

/// A command that cannot start ends the relay as a shell would: 127 for
/// no such program, 126 for one that cannot be run, with the reason (on
/// the relayed terminal: the helper that runs it holds the pty).
#[test]
fn a_command_that_cannot_start_exits_127_or_126() {
    let dir = tempfile::tempdir().expect("tempdir");
    let not_executable = dir.path().join("not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\n").expect("write");
    for (program, code, why) in [
        (dir.path().join("missing"), 127, "No such file"),
        (not_executable, 126, "Permission denied"),
    ] {
        let out = std::process::Command::new(tend_bin())
            .arg("run")
            .arg("--")
            .arg(&program)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run tend");
        let err = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{program:?}: {err}");
        assert!(
            err.contains("cannot run") && err.contains(why),
            "{program:?}: {err}"
        );
    }
}

/// A resize of the pane reaches the program (the relay's pty takes the
/// new size, the kernel tells the program), and its exit code is the
/// relay's.
#[test]
fn sizes_follow_the_pane_and_the_exit_code_passes_through() {
    let _serial = serial();
    let env = Env::new("run-size");
    let pane = shell(&env);
    wait_text(&env, &pane, "$ ");
    let before = pane_size(&env, &pane);
    env.type_line(
        &pane,
        &format!(
            "{} sh -c 'echo \"size $(stty size)\"; read x; echo \"size $(stty size)\"; exit 7'; echo \"rc=$?\"",
            relay()
        ),
    );
    wait_text(&env, &pane, &format!("size {before}"));
    env.tmux(&["resize-window", "-t", &pane, "-x", "97", "-y", "31"]);
    let after = pane_size(&env, &pane);
    assert_ne!(after, before);
    env.type_line(&pane, "go");
    wait_text(&env, &pane, &format!("size {after}"));
    wait_text(&env, &pane, "rc=7");
}

/// A paste bigger than the pty holds, into a program that does not read
/// it yet, leaves the relay free: a resize reaches the program while the
/// paste waits (the keys go in from a thread of their own), and then the
/// whole paste arrives, byte for byte in order.
#[test]
fn a_resize_reaches_a_program_while_a_paste_waits_for_it() {
    if !python() {
        return;
    }
    let _serial = serial();
    let env = Env::new("run-paste");
    let pane = shell(&env);
    wait_text(&env, &pane, "$ ");
    // 600 KiB: more than the pty takes unread (18 KiB on Linux 6.18) and
    // the keys the relay queues before it stops reading (256 KiB)
    // together.
    let paste: Vec<u8> = (0..600 * 1024).map(|i| b'a' + (i % 26) as u8).collect();
    let file = env.path().join("paste.txt");
    std::fs::write(&file, &paste).expect("write the paste");
    let got = env.path().join("got.txt");
    let program = env.path().join("slow_reader.py");
    std::fs::write(
        &program,
        format!(
            r#"import os, signal, time, tty
tty.setraw(0)
resized = []
signal.signal(signal.SIGWINCH, lambda *_: resized.append(os.get_terminal_size(1)))
os.write(1, b"not reading\r\n")
while not resized:
    time.sleep(0.05)
rows, cols = resized[0].lines, resized[0].columns
os.write(1, f"resized {{rows}} {{cols}}\r\n".encode())
want, got = {n}, b""
while len(got) < want:
    got += os.read(0, want - len(got))
open("{got}", "wb").write(got)
os.write(1, f"read {{len(got)}}\r\n".encode())
"#,
            n = paste.len(),
            got = got.display()
        ),
    )
    .expect("write the program");
    env.type_line(
        &pane,
        &format!("{} python3 {}; echo \"rc=$?\"", relay(), quoted(&program)),
    );
    wait_text(&env, &pane, "not reading");
    env.tmux(&["load-buffer", "-b", "big", &file.display().to_string()]);
    env.tmux(&["paste-buffer", "-b", "big", "-t", &pane]);
    // Until the resize's answer shows, the program reads nothing: the
    // paste fills the pty and waits.
    std::thread::sleep(std::time::Duration::from_millis(500));
    env.tmux(&["resize-window", "-t", &pane, "-x", "93", "-y", "29"]);
    let size = pane_size(&env, &pane);
    let (rows, cols) = size.split_once(' ').expect("rows cols");
    wait_text(&env, &pane, &format!("resized {rows} {cols}"));
    wait_text(&env, &pane, &format!("read {}", paste.len()));
    wait_text(&env, &pane, "rc=0");
    let got = std::fs::read(&got).expect("what the program read");
    assert_eq!(got.len(), paste.len());
    assert!(got == paste, "the paste arrived changed");
}

/// Ctrl-C and Ctrl-Z are bytes to the relay and signals to the program
/// (its pty's line discipline makes them): Ctrl-C interrupts it (128 +
/// SIGINT, or what its handler says), Ctrl-Z stops it and hands the pane
/// back to the shell, `fg` brings it back.
#[test]
fn ctrl_c_and_ctrl_z_reach_the_program() {
    let _serial = serial();
    let env = Env::new("run-keys");
    let pane = shell(&env);
    wait_text(&env, &pane, "$ ");
    env.type_line(
        &pane,
        &format!(
            "{} sh -c 'echo REA\"\"DY1; exec sleep 1000'; echo \"rc1=$?\"",
            relay()
        ),
    );
    wait_text(&env, &pane, "READY1");
    keys(&env, &pane, &["C-c"]);
    wait_text(&env, &pane, "rc1=130");

    env.type_line(
        &pane,
        &format!(
            "{} sh -c 'trap \"echo CAUGHT_$((40+2)); exit 42\" INT; echo REA\"\"DY2; while :; do sleep 1; done'; echo \"rc2=$?\"",
            relay()
        ),
    );
    wait_text(&env, &pane, "READY2");
    keys(&env, &pane, &["C-c"]);
    wait_text(&env, &pane, "CAUGHT_42");
    wait_text(&env, &pane, "rc2=42");

    env.type_line(
        &pane,
        &format!("{} sh -c 'echo REA\"\"DY3; exec sleep 1000'", relay()),
    );
    wait_text(&env, &pane, "READY3");
    keys(&env, &pane, &["C-z"]);
    wait_text(&env, &pane, "Stopped");
    env.type_line(&pane, "echo shell-is-back");
    wait_text(&env, &pane, "\nshell-is-back");
    env.type_line(&pane, "fg; echo \"rc3=$?\"");
    // bash names the job it brings back (the command line, the job's
    // `Stopped` line, and now once more).
    let back = wait_until(30, || text(&env, &pane).matches("sleep 1000").count() >= 3);
    assert!(back, "{}", text(&env, &pane));
    keys(&env, &pane, &["C-c"]);
    wait_text(&env, &pane, "rc3=130");
}

/// A full-screen program: vi on the alternate screen, typed into
/// (Escape included), written and quit; the shell's screen comes back.
#[test]
fn a_full_screen_program_works() {
    let _serial = serial();
    let env = Env::new("run-vi");
    let file = env.path().join("note.txt");
    let pane = shell(&env);
    wait_text(&env, &pane, "$ ");
    env.type_line(
        &pane,
        &format!(
            "{} vi -u NONE -N {}; echo \"rc=$?\"",
            relay(),
            quoted(&file)
        ),
    );
    let on = wait_until(30, || {
        env.tmux_out(&["display", "-p", "-t", &pane, "#{alternate_on}"]) == "1"
    });
    assert!(
        on,
        "vi never took the alternate screen:\n{}",
        text(&env, &pane)
    );
    keys(&env, &pane, &["i"]);
    keys(&env, &pane, &["-l", "hello from vi"]);
    keys(&env, &pane, &["Escape"]);
    keys(&env, &pane, &["-l", ":wq"]);
    keys(&env, &pane, &["Enter"]);
    wait_text(&env, &pane, "rc=0");
    assert_eq!(
        env.tmux_out(&["display", "-p", "-t", &pane, "#{alternate_on}"]),
        "0"
    );
    assert_eq!(
        std::fs::read_to_string(&file).expect("vi wrote the file"),
        "hello from vi\n"
    );
}

/// 10 MB of random bytes from the program arrive byte for byte (the
/// program's pty in raw mode, so its line discipline changes nothing).
#[test]
fn ten_megabytes_arrive_byte_for_byte() {
    let _serial = serial();
    let env = Env::new("run-bulk");
    let sent = env.path().join("sent.bin");
    let got = env.path().join("got.bin");
    let pane = shell(&env);
    wait_text(&env, &pane, "$ ");
    env.type_line(
        &pane,
        &format!(
            "{} sh -c 'stty raw -echo; head -c 10000000 /dev/urandom | tee {}' > {}; echo \"rc=$?\"",
            relay(),
            quoted(&sent),
            quoted(&got)
        ),
    );
    let done = wait_until(120, || text(&env, &pane).contains("rc=0"));
    assert!(done, "{}", text(&env, &pane));
    let a = std::fs::read(&sent).expect("sent");
    let b = std::fs::read(&got).expect("got");
    assert_eq!(a.len(), 10_000_000);
    assert_eq!(b.len(), a.len(), "lengths differ");
    assert!(a == b, "the bytes differ");
}

// ---------------------------------------------------------------------------
// The agent's own word.

/// Claude Code's recorded output between two times (seconds), without its
/// own OSC 7501 query (the stand-in asks for itself).
fn recorded(from: f64, to: f64) -> Vec<u8> {
    let text = std::fs::read_to_string(corpus("claude/working_then_done").join("pane.cast"))
        .expect("cast");
    let cast = Cast::parse(&text).expect("valid cast");
    let mut out = Vec::new();
    for ev in &cast.events {
        let t = ev.at.as_secs_f64();
        if t < from || t >= to {
            continue;
        }
        if let EventKind::Output(b) = &ev.kind {
            out.extend_from_slice(b);
        }
    }
    let query: &[u8] = b"\x1b]7501;?\x07\x1b[c";
    let mut clean = Vec::with_capacity(out.len());
    let mut i = 0;
    while i < out.len() {
        if out[i..].starts_with(query) {
            i += query.len();
        } else {
            clean.push(out[i]);
            i += 1;
        }
    }
    clean
}

/// The stand-in agent's screens: Claude ready (1.6 s), working (5.3 s),
/// and its finished turn (27.4 s).
fn screens(dir: &Path) -> PathBuf {
    let d = dir.join("screens");
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(d.join("ready.bin"), recorded(0.0, 3.0)).expect("write");
    std::fs::write(d.join("working.bin"), recorded(3.0, 15.0)).expect("write");
    std::fs::write(d.join("finished.bin"), recorded(15.0, 30.0)).expect("write");
    d
}

pub(crate) fn agent_cmd(env: &Env, extra: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/psp_agent.py");
    format!(
        "env TEND_AGENT=claude python3 {} --screens {} {extra}",
        quoted(&script),
        quoted(&screens(env.path()))
    )
}

pub(crate) fn explain(env: &Env, pane: &str) -> Value {
    serde_json::from_str(&env.tend_ok(&["explain", pane, "--json"])).expect("explain --json")
}

/// Waits until the pane's row satisfies `f`.
pub(crate) fn wait_row(env: &Env, pane: &str, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    let ok = wait_until(60, || f(&env.row(pane)));
    let r = env.row(pane);
    assert!(
        ok,
        "never {what}: {r}\n{}\n{}",
        env.tend_ok(&["explain", pane]),
        text(env, pane)
    );
    r
}

pub(crate) fn is(r: &Value, state: &str, reason: Option<&str>, authority: &str) -> bool {
    r["state"] == state && r["reason"].as_str() == reason && r["authority"] == authority
}

/// Whether python3 runs here (the stand-in agent is a Python script).
pub(crate) fn python() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        support::skip("run_relay", "python3 is not installed");
    }
    ok
}

/// Under `tend run` the agent is answered and reports; tend takes its
/// word: waiting for approval with its message while blocked, working
/// while its background task lives even though the screen shows the turn
/// finished, completed once the task ends and it says done.
#[test]
fn the_agents_word_through_the_relay() {
    if !python() {
        return;
    }
    let _serial = serial();
    let env = Env::new("run-psp");
    env.tend_ok(&["start"]);
    let pane = shell(&env);
    wait_text(&env, &pane, "$ ");
    env.type_line(
        &pane,
        &format!(
            "{} {}; echo \"rc=$?\"",
            relay(),
            agent_cmd(&env, "--exit 5")
        ),
    );
    // Named from its process (`TEND_AGENT`) through the relay, a few
    // samples after its word is taken.
    let r = wait_row(&env, &pane, "claude, idle by its word", |r| {
        r["agent"] == "claude" && is(r, "idle", None, "relay")
    });
    assert_eq!(r["identified_by"], "declared", "{r}");
    assert_eq!(r["app"], "fake-agent", "{r}");
    // `tend doctor` names the pane as reporting.
    let d = String::from_utf8_lossy(&env.tend(&["doctor"]).stdout).into_owned();
    assert!(
        d.contains(&format!(
            "reporting its own state through tend run: {pane} claude ("
        )),
        "{d}"
    );
    assert_eq!(r["rule"], "psp/idle", "{r}");

    keys(&env, &pane, &["n"]);
    wait_row(&env, &pane, "working by its word", |r| {
        is(r, "working", None, "relay")
    });

    keys(&env, &pane, &["n"]);
    let r = wait_row(&env, &pane, "waiting for approval by its word", |r| {
        is(r, "waiting", Some("approval"), "relay")
    });
    assert_eq!(r["message"], "approve Bash: rm -rf ./build", "{r}");
    assert_eq!(r["band"], "waiting", "{r}");
    assert_eq!(r["rule"], "psp/blocked:permission", "{r}");
    let text_explain = env.tend_ok(&["explain", &pane]);
    assert!(
        text_explain.contains(
            "authority relay: the agent's own word (OSC 7501, answered by tend run), from fake-agent"
        ),
        "{text_explain}"
    );
    assert!(
        text_explain.contains("message   approve Bash: rm -rf ./build"),
        "{text_explain}"
    );

    // The background task: the turn's text ends and the screen shows
    // Claude's finished turn, but the agent says a shell still runs.
    keys(&env, &pane, &["n"]);
    let r = wait_row(&env, &pane, "working with its task", |r| {
        is(r, "working", None, "relay") && r["tasks"].as_array().is_some_and(|t| t.len() == 1)
    });
    assert_eq!(r["message"], "1 shell still running", "{r}");
    assert_eq!(r["tasks"][0]["id"], "bash-1", "{r}");
    assert_eq!(r["tasks"][0]["title"], "Run the long command", "{r}");
    assert_eq!(r["tasks"][0]["live"], true, "{r}");
    let finished = wait_until(60, || {
        let v = explain(&env, &pane);
        v["authority"]["screen"]["state"]
            .as_str()
            .is_some_and(|s| s == "completed" || s == "idle")
    });
    let v = explain(&env, &pane);
    assert!(finished, "the screen never read the turn finished: {v}");
    assert_eq!(v["authority"]["holder"], "relay", "{v}");
    assert_eq!(v["authority"]["screen_agrees"], false, "{v}");
    assert_eq!(v["pane"]["state"], "working", "{v}");
    let text_explain = env.tend_ok(&["explain", &pane]);
    assert!(
        text_explain.contains("word      working: 1 background task (Run the long command)"),
        "{text_explain}"
    );
    assert!(text_explain.contains("it disagrees"), "{text_explain}");

    keys(&env, &pane, &["n"]);
    let r = wait_row(&env, &pane, "completed by its word", |r| {
        is(r, "completed", None, "relay")
    });
    assert_eq!(r["tasks"], serde_json::json!([]), "{r}");
    assert_eq!(r["rule"], "psp/done", "{r}");
    // A turn it says is done waits for review, though the screen showed
    // the turn finished long before.
    assert_eq!(r["band"], "ready_for_review", "{r}");

    // It exits: its word ends with it, and the relay's exit code is its.
    keys(&env, &pane, &["q"]);
    wait_text(&env, &pane, "rc=5");
    let r = wait_row(&env, &pane, "exited", |r| r["state"] == "exited");
    assert_eq!(r["authority"], "screen", "{r}");
}

/// The same agent without the relay: tmux does not answer its query, so it
/// never reports, and tend reads its screen as before. The same agent
/// made to report anyway (a program that ignores the handshake) is not
/// believed either: no relay answers for the pane.
#[test]
fn without_the_relay_the_screen_decides() {
    if !python() {
        return;
    }
    let _serial = serial();
    let env = Env::new("run-nopsp");
    env.tend_ok(&["start"]);
    for force in [false, true] {
        let pane = shell(&env);
        wait_text(&env, &pane, "$ ");
        let extra = if force { "--force" } else { "" };
        env.type_line(&pane, &agent_cmd(&env, extra));
        wait_row(&env, &pane, "claude, read from the screen", |r| {
            r["agent"] == "claude" && r["state"] == "idle" && r["authority"] == "screen"
        });
        keys(&env, &pane, &["n"]);
        wait_row(&env, &pane, "working on screen", |r| {
            is(r, "working", None, "screen")
        });
        keys(&env, &pane, &["n"]);
        keys(&env, &pane, &["n"]);
        // The finished turn on screen: completed, no task, no message.
        let r = wait_row(&env, &pane, "completed on screen", |r| {
            is(r, "completed", None, "screen")
        });
        assert_eq!(r["tasks"], serde_json::json!([]), "{r}");
        assert_eq!(r["message"], Value::Null, "{r}");
        let v = explain(&env, &pane);
        let c = &v["explain"]["psp"]["counters"];
        if force {
            // It sent reports; none was taken as its word.
            assert_eq!(v["authority"]["relay"], false, "{v}");
            assert!(c["reports"].as_u64().unwrap_or(0) > 0, "{v}");
        } else {
            // It asked, and said nothing.
            assert_eq!(c["queries"], 1, "{v}");
            assert_eq!(c["reports"], 0, "{v}");
            // `tend doctor`: an agent that could report, without the relay.
            let d = String::from_utf8_lossy(&env.tend(&["doctor"]).stdout).into_owned();
            let line = d
                .lines()
                .find(|l| l.contains("could report its own state under tend run"))
                .unwrap_or_else(|| panic!("{d}"));
            assert!(line.contains(&format!("{pane} claude")), "{d}");
        }
        keys(&env, &pane, &["q"]);
    }
}

/// `tend shell-init bash`: inside tmux, the agents' commands run through
/// the relay (a stand-in `claude` on PATH reports, and is believed).
#[test]
fn shell_init_wraps_the_agents_in_the_relay() {
    if !python() {
        return;
    }
    let _serial = serial();
    let env = Env::new("run-init");
    env.tend_ok(&["start"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/psp_agent.py");
    let claude = env.executable(
        "claude",
        &format!("#!/bin/sh\nexec python3 {} \"$@\"\n", quoted(&script)),
    );
    let bin = claude.parent().expect("bin").to_owned();
    let tend_dir = Path::new(tend_bin()).parent().expect("tend's folder");
    let pane = shell(&env);
    wait_text(&env, &pane, "$ ");
    env.type_line(
        &pane,
        &format!(
            "export PATH={}:{}:$PATH; eval \"$(tend shell-init bash)\"; type claude | head -1",
            quoted(&bin),
            quoted(tend_dir)
        ),
    );
    wait_text(&env, &pane, "claude is a function");
    env.type_line(&pane, "claude");
    let r = wait_row(&env, &pane, "idle by its word", |r| {
        r["state"] == "idle" && r["authority"] == "relay"
    });
    assert_eq!(r["app"], "fake-agent", "{r}");
    keys(&env, &pane, &["q"]);
}

/// The opt-in tier (`TEND_TEST_REAL_AGENTS=1`): the real Claude Code CLI
/// (from `$AGENTS_DIR`, default `/opt/agents`) under `tend run`, offline
/// against the stand-in model server that asks to run `rm -rf ./build`.
/// Answered, Claude Code reports over OSC 7501: idle by its word, its
/// permission request with its message, done after the approval.
#[test]
fn real_claude_reports_through_the_relay() {
    if !support::offline::real_agents("run_relay") {
        return;
    }
    let Some(agents) = support::offline::claude_installed("real_claude_reports_through_the_relay")
    else {
        return;
    };
    let _serial = serial();
    let env = Env::new("run-real");
    let claude = support::offline::OfflineClaude::start(env.path(), &agents);
    let work = &claude.work;
    let cmd = claude.command(&relay());
    env.tend_ok(&["start"]);
    let pane = env.window("main", &cmd);
    let r = wait_row(&env, &pane, "claude idle by its word", |r| {
        r["agent"] == "claude" && is(r, "idle", None, "relay")
    });
    println!("run_relay: real Claude Code at its prompt: {r}");
    env.tend_ok(&["prompt", &pane, "Clean the build directory."]);
    let r = wait_row(&env, &pane, "waiting for approval", |r| {
        r["state"] == "waiting" && r["reason"] == "approval"
    });
    println!("run_relay: real Claude Code asks: {r}");
    println!(
        "run_relay: its word: {}",
        explain(&env, &pane)["explain"]["psp"]
    );
    assert!(r["message"].is_string(), "{r}");
    env.tend_ok(&["approve", &pane]);
    let r = wait_row(&env, &pane, "completed", |r| r["state"] == "completed");
    println!("run_relay: real Claude Code done: {r}");
    assert!(
        !work.join("build").exists(),
        "approved, yet build/ is still there"
    );

    // A background shell: the turn's text ends while the shell runs on.
    env.tend_ok(&["prompt", &pane, "Run the long command in the background."]);
    // (`sleep` needs no approval.)
    // What tend reads, and what the screen alone reads, until it completes.
    let mut seen: Vec<String> = Vec::new();
    let mut with_task_screen_done = false;
    let mut started = false;
    let done = wait_until(90, || {
        let v = explain(&env, &pane);
        let p = &v["pane"];
        let line = format!(
            "{} {} tasks={} message={} screen={}",
            p["state"].as_str().unwrap_or("-"),
            p["authority"].as_str().unwrap_or("-"),
            p["tasks"],
            p["message"],
            v["authority"]["screen"]["state"],
        );
        if p["state"] == "working"
            && p["tasks"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["live"] == true))
            && v["authority"]["screen"]["state"] != "working"
        {
            with_task_screen_done = true;
        }
        if seen.last() != Some(&line) {
            seen.push(line);
        }
        started |= p["state"] == "working";
        started && p["state"] == "completed"
    });
    for l in &seen {
        println!("run_relay: background: {l}");
    }
    assert!(done, "never completed: {seen:#?}");
    assert!(
        with_task_screen_done,
        "never working with a live task while the screen read otherwise: {seen:#?}"
    );
}

/// `tend run -- ssh HOST claude`: the relay answers whatever runs behind
/// the wrapper (a stand-in `ssh` running the stand-in agent as a child, no
/// `TEND_AGENT`), identity looks through the relay at `ssh` and names the
/// agent from its screen, and its word decides.
#[test]
fn behind_ssh_through_the_relay() {
    if !python() {
        return;
    }
    let _serial = serial();
    let env = Env::new("run-ssh");
    env.tend_ok(&["start"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/psp_agent.py");
    let ssh = env.executable(
        "ssh",
        &format!(
            "#!/bin/sh\n# A stand-in for ssh: the remote agent runs as a child.\npython3 {} --screens {}\nexit $?\n",
            quoted(&script),
            quoted(&screens(env.path()))
        ),
    );
    let pane = shell(&env);
    wait_text(&env, &pane, "$ ");
    env.type_line(&pane, &format!("{} {} devbox", relay(), quoted(&ssh)));
    let r = wait_row(&env, &pane, "claude behind ssh, idle by its word", |r| {
        r["agent"] == "claude" && is(r, "idle", None, "relay")
    });
    assert_eq!(
        (r["identified_by"].as_str(), r["wrapper"].as_str()),
        (Some("screen"), Some("ssh")),
        "{r}"
    );
    keys(&env, &pane, &["n"]);
    keys(&env, &pane, &["n"]);
    let r = wait_row(&env, &pane, "waiting for approval by its word", |r| {
        is(r, "waiting", Some("approval"), "relay")
    });
    assert_eq!(r["message"], "approve Bash: rm -rf ./build", "{r}");
    keys(&env, &pane, &["q"]);
}
