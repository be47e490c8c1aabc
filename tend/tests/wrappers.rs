//! Agents behind wrappers, with a real tmux server and real processes: an
//! agent whose process the pane's tree cannot show (it runs over `ssh`)
//! is named from what its screen shows, reads its states as a local agent
//! does, and ends with the wrapper; text that merely looks like an agent —
//! printed by `cat`, by a program behind a wrapper, by a script — is never
//! named and makes no demand.
//!
//! The remote agent is a recording (`tend play`) run as a child of a
//! stand-in `ssh`: a script named `ssh` that does not exec the player, so
//! the process tree shows `ssh` and nothing below it is an agent. No
//! `TEND_AGENT` hint is set anywhere.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{corpus, tend_bin, wait_until, Env};
use tend_detector::cast::{Cast, EventKind};
use tend_detector::screen::Screen;

/// The tests here run one at a time: each starts a daemon and several
/// players on a two-core machine.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The recording's header and its events up to `until` seconds.
fn cast_until(rel: &str, until: f64) -> String {
    let text = std::fs::read_to_string(corpus(rel).join("pane.cast")).expect("cast");
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().expect("header"));
    for line in lines {
        let Ok(Value::Array(ev)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if ev.first().and_then(Value::as_f64).unwrap_or(f64::MAX) > until {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The recording's screen at `at` seconds, as plain text (what `tmux
/// capture-pane -p` or a saved screen holds: rows, no title, no
/// alternate screen).
fn screen_text(rel: &str, at: f64) -> String {
    let cast = Cast::parse(&cast_until(rel, at)).expect("valid cast");
    let mut screen = Screen::new(cast.header.height, cast.header.width);
    for ev in &cast.events {
        match &ev.kind {
            EventKind::Output(b) => screen.process(b),
            EventKind::Resize(c, r) => screen.resize(*r, *c),
            _ => {}
        }
    }
    let rows = screen.rows();
    let end = rows
        .iter()
        .rposition(|r| !r.trim().is_empty())
        .map_or(0, |i| i + 1);
    rows[..end].join("\n") + "\n"
}

/// The raw output bytes of the recording up to `at` seconds (the live UI's
/// own escape sequences: title, alternate screen, colours).
fn cast_bytes(rel: &str, at: f64) -> Vec<u8> {
    let cast = Cast::parse(&cast_until(rel, at)).expect("valid cast");
    let mut out = Vec::new();
    for ev in &cast.events {
        if let EventKind::Output(b) = &ev.kind {
            out.extend_from_slice(b);
        }
    }
    out
}

/// Writes an executable script `name` into `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// A pane running an interactive bash (job control: each command line
/// gets the terminal as its own process group, as in a user's shell).
fn shell(env: &Env) -> String {
    env.window("main", "env PS1='$ ' bash --norc --noprofile")
}

fn published(env: &Env, pane: &str) -> String {
    env.tmux_out(&[
        "display",
        "-p",
        "-t",
        pane,
        "#{@tend_agent}/#{@tend_state}/#{@tend_reason}",
    ])
}

/// Claude Code's approval dialog, played behind a stand-in `ssh` with no
/// hint: the pane reads claude, waiting for an approval, named from the
/// screen; when the `ssh` ends, the pane reads exited.
#[test]
fn an_agent_behind_ssh_is_named_from_its_screen_and_ends_with_it() {
    let _serial = serial();
    let env = Env::new("wrap-ssh");
    env.tend_ok(&["start"]);
    // The recording up to 12 s: Claude starts at 2 s, its permission
    // dialog is on the screen from 7.5 s; the player stops at 10 s until
    // Enter.
    let cast = env.path().join("approval.cast");
    std::fs::write(&cast, cast_until("claude/approval", 12.0)).expect("write cast");
    let ssh = script(
        &env.path().join("bin"),
        "ssh",
        &format!(
            "# A stand-in for ssh: the remote Claude Code is a recording, played by a\n\
             # child (not exec'd: the process tree shows ssh and nothing below it is an agent).\n\
             '{}' play '{}' --wait-input-at 10 --hold 1\nexit 3\n",
            tend_bin(),
            cast.display()
        ),
    );
    let pane = shell(&env);
    env.type_line(&pane, &format!("'{}' devbox", ssh.display()));
    let named = wait_until(60, || published(&env, &pane) == "claude/waiting/approval");
    assert!(
        named,
        "never read as Claude's approval: {} {}",
        published(&env, &pane),
        env.tend_ok(&["explain", &pane])
    );
    let r = env.row(&pane);
    assert_eq!(
        (
            r["agent"].as_str(),
            r["identified_by"].as_str(),
            r["wrapper"].as_str(),
            r["state"].as_str(),
            r["reason"].as_str(),
            r["rule"].as_str(),
        ),
        (
            Some("claude"),
            Some("screen"),
            Some("ssh"),
            Some("waiting"),
            Some("approval"),
            Some("claude/approval"),
        ),
        "{r}"
    );
    assert_eq!(env.global_option("@tend_needs"), "1");
    let text = env.tend_ok(&["explain", &pane]);
    assert!(
        text.contains("identity  claude named from the screen; the process tree shows ssh (pid "),
        "{text}"
    );
    let v: Value =
        serde_json::from_str(&env.tend_ok(&["explain", &pane, "--json"])).expect("explain --json");
    assert_eq!(v["identity"]["identified_by"], "screen", "{v}");
    assert_eq!(v["identity"]["matched"]["via"], "screen", "{v}");
    // The dialog is answered over ssh; the recording plays on to its end
    // and the stand-in ssh exits: the agent's exit.
    env.tmux(&["send-keys", "-t", &pane, "Enter"]);
    let exited = wait_until(60, || env.pane_option(&pane, "@tend_state") == "exited");
    let r = env.row(&pane);
    assert!(exited, "never exited after ssh ended: {r}");
    assert_eq!(
        (
            r["agent"].as_str(),
            r["state"].as_str(),
            r["band"].as_str(),
            r["identified_by"].as_str(),
        ),
        (
            Some("claude"),
            Some("exited"),
            Some("exited"),
            Some("screen")
        ),
        "{r}"
    );
    assert_eq!(env.global_option("@tend_needs"), "0");
    let text = env.tend_ok(&["explain", &pane]);
    assert!(
        text.contains("identity  none: claude behind ssh named from the screen has ended with it"),
        "{text}"
    );
}

/// Agent-looking text from programs that are not agents: the raw bytes of
/// a recording `cat` in a shell (title, alternate screen and all), a
/// saved screen of Claude's dialog printed behind a stand-in `ssh` and by
/// a script, `grep` output behind `ssh`. None is named; none makes a
/// demand.
#[test]
fn agent_looking_text_is_never_named_and_makes_no_demand() {
    let _serial = serial();
    let env = Env::new("wrap-fake");
    env.tend_ok(&["start"]);
    let dir = env.path().join("fake");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let raw = dir.join("claude-approval.raw");
    std::fs::write(&raw, cast_bytes("claude/approval", 10.0)).expect("write");
    let saved = dir.join("claude-approval.txt");
    std::fs::write(&saved, screen_text("claude/approval", 10.0)).expect("write");
    let codex = dir.join("codex-idle.txt");
    std::fs::write(&codex, screen_text("codex/idle", 4.5)).expect("write");
    let hold = "sleep 60";
    // Behind a stand-in ssh: the saved screens, printed by `cat`.
    let ssh_cat = script(
        &dir.join("cat-bin"),
        "ssh",
        &format!(
            "cat '{}'; cat '{}'; {hold}\n",
            codex.display(),
            saved.display()
        ),
    );
    // Behind a stand-in ssh: `grep` over the recording's text.
    let ssh_grep = script(
        &dir.join("grep-bin"),
        "ssh",
        &format!(
            "grep -a -e 'Yes' -e 'No' -e 'Esc to cancel' -e '❯' '{}'; {hold}\n",
            saved.display()
        ),
    );
    // A launcher script printing the saved screen.
    let show = script(
        &dir,
        "show.sh",
        &format!("cat '{}'; {hold}\n", saved.display()),
    );
    let panes = [
        (
            "cat of the raw bytes in a shell",
            format!("cat '{}'; {hold}", raw.display()),
        ),
        (
            "saved screens behind ssh",
            format!("'{}' devbox", ssh_cat.display()),
        ),
        (
            "grep output behind ssh",
            format!("'{}' devbox", ssh_grep.display()),
        ),
        (
            "a script printing a saved screen",
            format!("sh '{}'", show.display()),
        ),
    ];
    let mut ids = Vec::new();
    for (what, line) in &panes {
        let pane = shell(&env);
        env.type_line(&pane, line);
        ids.push((pane, *what));
    }
    // Every pane shows what it prints; the wrapper panes are read (their
    // screens are looked at, and show no agent's live UI).
    let shown = wait_until(30, || {
        ids.iter().all(|(p, _)| {
            env.tmux_out(&["capture-pane", "-p", "-t", p])
                .contains("Yes")
        })
    });
    assert!(shown, "the panes never showed the fake dialogs");
    let read = wait_until(30, || {
        ids[1..3].iter().all(|(p, _)| {
            env.tend_ok(&["explain", p])
                .contains("the process tree shows ssh (pid")
        })
    });
    assert!(read, "the ssh panes were never read");
    // Naming takes a couple of seconds: watch for four times that.
    let deadline = Instant::now() + Duration::from_secs(12);
    let mut needs_max = 0u64;
    let mut states: Vec<String> = Vec::new();
    while Instant::now() < deadline {
        for (p, what) in &ids {
            let s = published(&env, p);
            if s != "//" && !states.iter().any(|x| x.starts_with(what)) {
                states.push(format!("{what}: {s}"));
            }
        }
        let v: Value =
            serde_json::from_str(&env.tend_ok(&["status", "--json"])).unwrap_or(Value::Null);
        needs_max = needs_max.max(v["needs"].as_u64().unwrap_or(0));
        std::thread::sleep(Duration::from_millis(200));
    }
    for (p, what) in &ids {
        let r = env.row(p);
        assert!(
            r["agent"].is_null() && r["state"].is_null() && r["identified_by"].is_null(),
            "{what}: {r}"
        );
    }
    assert!(
        states.is_empty(),
        "published for non-agent panes: {states:?}"
    );
    assert_eq!(needs_max, 0, "demands from agent-looking text");
    let text = env.tend_ok(&["explain", &ids[1].0]);
    assert!(
        text.contains("the screen shows no agent's live UI"),
        "{text}"
    );
}
