//! tend-zellij-host against a real zellij (0.45+), run headless inside a
//! tmux pane on a private tmux socket, with its own HOME, config, cache and
//! socket directories in a temporary folder.
//!
//! Panes replay bundled agent recordings with `tend play demo:<agent>`
//! (the `tend` binary of this workspace: `cargo build -p tend`). The plugin
//! test loads `zellij-plugin`'s wasm (`scripts/install-zellij.sh` builds it)
//! with its permission granted through zellij's permission cache.
//!
//! Each test prints why it skips when zellij, tmux, `tend` or the wasm is
//! missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tend_testkit::zellij::{zellij_missing, Headless};
use tend_testkit::{skip, wait_for};
use tend_zellij_host::plugin::{grant_permissions, JumpTarget, PluginStatus, PLUGIN_PERMISSIONS};
use tend_zellij_host::{
    pane_processes, PaneId, Session, SubscribeEvent, SubscribeOptions, Subscription,
};

/// One zellij at a time: on a two-core machine two sessions starting at
/// once push zellij past its own 1 s internal deadlines.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// The `tend` binary this `cargo test` built, found beside this test's own
/// executable (`<target>/debug/deps/real_zellij-…` → `<target>/debug/tend`),
/// so that it is found wherever the target directory is (`CARGO_TARGET_DIR`,
/// a cargo config's `target-dir`).
fn tend_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TEND_BIN") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let exe = std::env::current_exe().ok()?;
    let profile_dir = exe.parent()?.parent()?;
    Some(profile_dir.join("tend")).filter(|p| p.is_file())
}

/// The plugin that `scripts/install-zellij.sh` built, in the target
/// directory cargo uses for `zellij-plugin/` (as `cargo metadata` reports it:
/// `zellij-plugin/target`, or `CARGO_TARGET_DIR` when set).
fn plugin_wasm() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TEND_ZELLIJ_WASM") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(repo().join("zellij-plugin"))
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let target = PathBuf::from(meta.get("target_directory")?.as_str()?);
    Some(target.join("wasm32-wasip1/release/tend-zellij.wasm")).filter(|p| p.is_file())
}

/// Why this machine cannot run the test, if it cannot.
fn missing_prerequisite() -> Option<String> {
    if let Some(why) = zellij_missing() {
        return Some(why);
    }
    if tend_bin().is_none() {
        return Some("the tend binary is not built (run `cargo build -p tend`)".into());
    }
    None
}

/// A busy zellij (two cores, other tests running) can end a fresh
/// subscription at once with success and nothing said; the daemon then
/// subscribes again, and so do these tests (at most three times).
fn ended_at_once(status: Option<i32>, stderr: &str) -> bool {
    status == Some(0) && stderr.trim().is_empty()
}

/// A headless zellij session (`tend_testkit::zellij`) and the
/// `tend-zellij-host` session that drives it.
struct Harness {
    host: Headless,
    session: Session,
    wasm: Option<PathBuf>,
}

impl Harness {
    /// Starts zellij with `layout` (in which `@TEND@` is the tend binary and
    /// `@WASM@` the plugin copy), then waits until it lists `terminals`
    /// terminal panes.
    fn start(layout: &str, with_plugin: bool, terminals: usize) -> Harness {
        let host = Headless::new("tzj");
        let root = host.root();
        let wasm = if with_plugin {
            plugin_wasm().map(|src| {
                let dst = root.join("tend.wasm");
                std::fs::copy(&src, &dst).expect("copy the plugin");
                grant_permissions(
                    &root.join("cache/zellij/permissions.kdl"),
                    &dst,
                    PLUGIN_PERMISSIONS,
                )
                .expect("grant the plugin's permissions");
                dst
            })
        } else {
            None
        };
        let tend = tend_bin().expect("checked by missing_prerequisite");
        let layout = layout.replace("@TEND@", &tend.to_string_lossy()).replace(
            "@WASM@",
            &wasm
                .as_deref()
                .map(|w| w.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        host.start(
            "keybinds {\n    shared {\n        bind \"Ctrl y\" { MessagePlugin { name \"tend_next\"; }; }\n    }\n}\n",
            &layout,
        );
        let mut session = Session::new(host.name()).with_program("zellij");
        for (k, v) in host.envs() {
            session = session.with_env(k, v);
        }
        let h = Harness {
            host,
            session,
            wasm,
        };
        let start = Instant::now();
        loop {
            let listed = h.session.list_panes();
            if let Ok(panes) = &listed {
                if panes.iter().filter(|p| p.is_terminal()).count() >= terminals {
                    break;
                }
            }
            if start.elapsed() > Duration::from_secs(30) {
                panic!(
                    "zellij did not list the layout's panes within 30 s.\n\
                     last answer: {listed:?}\nterminal:\n{}\nzellij log:\n{}",
                    h.terminal(),
                    h.host.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // zellij applies command-line focus changes to the last client that
        // typed: type once (the jump key, harmless while nothing waits).
        h.keys("C-y");
        wait_for(Duration::from_secs(10), "the client to be listed", || {
            let clients = h.session.list_clients().ok()?;
            (!clients.is_empty()).then_some(())
        });
        h
    }

    fn keys(&self, key: &str) {
        self.host.type_keys(&[key]);
        std::thread::sleep(Duration::from_millis(300));
    }

    /// What the user's terminal shows (tmux's capture of the zellij client).
    fn terminal(&self) -> String {
        self.host.screen()
    }

    fn pane_titled(&self, title: &str) -> PaneId {
        let panes = self.session.list_panes().expect("list-panes");
        panes
            .iter()
            .find(|p| p.title == title)
            .map(|p| p.id)
            .unwrap_or_else(|| panic!("no pane titled {title:?} in {panes:#?}"))
    }

    fn looked_at(&self) -> Option<PaneId> {
        self.session.focused_pane().expect("list-clients")
    }
}

const AGENTS_LAYOUT: &str = r#"
layout {
    tab name="agents" focus=true {
        pane split_direction="vertical" {
            pane command="@TEND@" name="claude" {
                args "play" "demo:claude"
            }
            pane command="sh" name="ticker" {
                args "-c" "i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done"
            }
        }
    }
    tab name="background" {
        pane split_direction="vertical" {
            pane command="@TEND@" name="gemini" {
                args "play" "demo:gemini"
            }
            pane command="sh" name="bgticker" {
                args "-c" "i=0; while true; do i=$((i+1)); echo bgtick $i; sleep 0.2; done"
            }
        }
    }
}
"#;

#[test]
fn panes_screens_subscriptions_focus_and_identity() {
    if let Some(why) = missing_prerequisite() {
        return skip("panes_screens_subscriptions_focus_and_identity", &why);
    }
    let _serial = serial();
    let h = Harness::start(AGENTS_LAYOUT, false, 4);
    let s = &h.session;

    // list-panes: every terminal pane with its tab and command.
    let panes = s.list_panes().expect("list-panes");
    let claude = panes
        .iter()
        .find(|p| p.title == "claude")
        .expect("claude pane");
    let gemini = panes
        .iter()
        .find(|p| p.title == "gemini")
        .expect("gemini pane");
    assert_eq!(claude.tab_name, "agents");
    assert_eq!(gemini.tab_name, "background");
    assert_ne!(claude.tab_id, gemini.tab_id);
    assert!(
        claude
            .command
            .as_deref()
            .is_some_and(|c| c.contains("play demo:claude")),
        "{claude:?}"
    );
    let (claude, gemini) = (claude.id, gemini.id);
    let ticker = h.pane_titled("ticker");
    let bgticker = h.pane_titled("bgticker");
    let tabs = s.list_tabs().expect("list-tabs");
    assert!(
        tabs.iter().any(|t| t.name == "agents" && t.active),
        "{tabs:?}"
    );

    // dump-screen: the agent's screen, in the visible tab and in the
    // background one.
    wait_for(
        Duration::from_secs(20),
        "Claude's screen in dump-screen",
        || {
            let text = s.dump_screen(claude, false).ok()?;
            text.contains("Clean the build directory").then_some(())
        },
    );
    wait_for(
        Duration::from_secs(20),
        "Gemini's screen (background tab)",
        || {
            let text = s.dump_screen(gemini, false).ok()?;
            text.contains("Gemini CLI").then_some(())
        },
    );
    let styled = s.dump_screen(gemini, true).expect("dump-screen --ansi");
    assert!(styled.contains('\u{1b}'), "--ansi keeps styling");

    // A background pane is followed by polling dump-screen: it changes.
    let first = s.dump_screen(bgticker, false).expect("dump bgticker");
    wait_for(
        Duration::from_secs(10),
        "the background ticker to move",
        || {
            let now = s.dump_screen(bgticker, false).ok()?;
            (now.contains("bgtick") && now != first).then_some(())
        },
    );

    // subscribe: a visible pane streams its viewport as it changes.
    let options = SubscribeOptions {
        ansi: true,
        scrollback: None,
    };
    let mut sub = Subscription::start(s, &[ticker, bgticker], options).expect("subscribe");
    let mut restarts = 0;
    let mut visible = Vec::new();
    let mut background_initial = false;
    let start = Instant::now();
    while visible.len() < 3 && start.elapsed() < Duration::from_secs(10) {
        match sub
            .recv_timeout(Duration::from_millis(500))
            .expect("an event")
        {
            Some(SubscribeEvent::Update(u)) if u.pane == ticker => {
                let last = u
                    .viewport
                    .iter()
                    .rev()
                    .find(|l| l.contains("tick"))
                    .cloned();
                visible.push(last.unwrap_or_default());
            }
            Some(SubscribeEvent::Update(u)) if u.pane == bgticker => {
                background_initial |= u.initial;
            }
            Some(SubscribeEvent::Ended { status, stderr }) => {
                // See `ended_at_once` below.
                assert!(
                    ended_at_once(status, &stderr) && restarts < 3,
                    "subscribe ended: {status:?} {stderr}"
                );
                restarts += 1;
                sub =
                    Subscription::start(s, &[ticker, bgticker], options).expect("subscribe again");
            }
            _ => {}
        }
    }
    assert!(
        visible.len() >= 3,
        "updates from the visible ticker: {visible:?}"
    );
    assert_ne!(visible[0], visible[2], "the viewport moves");
    assert!(
        background_initial,
        "a background pane still gets its initial update"
    );
    drop(sub);

    // A pane created later shows up, streams, and reports its close.
    let out = s
        .run(
            &[
                "run",
                "--no-focus",
                "--name",
                "late",
                "--",
                "sh",
                "-c",
                "echo late; sleep 60",
            ],
            None,
        )
        .expect("zellij run");
    let late: PaneId = out
        .stdout
        .trim()
        .parse()
        .expect("zellij run prints the pane id");
    assert!(s
        .list_panes()
        .expect("list-panes")
        .iter()
        .any(|p| p.id == late));
    // See `ended_at_once`.
    let mut sub = Subscription::start(s, &[late], SubscribeOptions::default()).expect("subscribe");
    let mut restarts = 0;
    wait_for(
        Duration::from_secs(10),
        "the new pane's first update",
        || match sub.recv_timeout(Duration::from_millis(200)).ok()?? {
            SubscribeEvent::Update(u) => {
                u.viewport.iter().any(|r| r.contains("late")).then_some(())
            }
            SubscribeEvent::Ended { status, stderr } => {
                assert!(
                    ended_at_once(status, &stderr) && restarts < 3,
                    "the subscription ended: {status:?} {stderr}"
                );
                restarts += 1;
                sub = Subscription::start(s, &[late], SubscribeOptions::default())
                    .expect("subscribe again");
                None
            }
            _ => None,
        },
    );
    let id = late.to_string();
    s.act(&["close-pane", "--pane-id", id.as_str()])
        .expect("close-pane");
    let mut closed = false;
    let mut ended = false;
    let start = Instant::now();
    while !ended && start.elapsed() < Duration::from_secs(10) {
        match sub
            .recv_timeout(Duration::from_millis(200))
            .expect("an event")
        {
            Some(SubscribeEvent::Closed(p)) => closed |= p == late,
            Some(SubscribeEvent::Ended { .. }) => ended = true,
            _ => {}
        }
    }
    assert!(closed && ended, "closed: {closed}, ended: {ended}");

    // viewport(): the same screen through a one-shot subscription.
    let rows = s.viewport(claude, false).expect("viewport");
    assert!(
        rows.iter().any(|r| r.contains("Clean the build directory")),
        "{rows:?}"
    );

    // /proc identity: each pane's root process is its command.
    let procs = pane_processes(s.name()).expect("scan /proc");
    for (pane, needle) in [(claude, "demo:claude"), (gemini, "demo:gemini")] {
        let p = procs
            .iter()
            .find(|p| p.pane == pane.number())
            .unwrap_or_else(|| panic!("no process for {pane} in {procs:?}"));
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", p.pid)).expect("cmdline");
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        assert!(cmdline.contains(needle), "{pane}: {cmdline}");
        assert!(p.foreground_pgid.is_some(), "{p:?}");
    }

    // focus-pane-id: moves the user's client, across tabs.
    s.focus_pane(gemini).expect("focus gemini");
    wait_for(
        Duration::from_secs(10),
        "focus on the background pane",
        || (h.looked_at() == Some(gemini)).then_some(()),
    );
    let tabs = s.list_tabs().expect("list-tabs");
    assert!(
        tabs.iter().any(|t| t.name == "background" && t.active),
        "{tabs:?}"
    );
    s.focus_pane(claude).expect("focus claude");
    wait_for(Duration::from_secs(10), "focus back on claude", || {
        (h.looked_at() == Some(claude)).then_some(())
    });
    // A missing pane is an error when zellij answers in time (a busy zellij
    // gives up waiting for its screen thread after 1 s and reports success).
    if let Err(err) = s.focus_pane(PaneId::Terminal(999)) {
        assert!(err.is_pane_gone(), "{err:?}");
    }
    assert_eq!(h.looked_at(), Some(claude), "focus stays where it was");
    let err = s
        .viewport(PaneId::Terminal(999), false)
        .expect_err("no such pane");
    assert!(err.is_pane_gone(), "{err:?}");

    // A session that does not run says so.
    let mut other = Session::new("tend-no-such-session").with_program("zellij");
    for (k, v) in h.host.envs() {
        other = other.with_env(k, v);
    }
    let err = other.list_panes().expect_err("no such session");
    assert!(err.is_no_session(), "{err:?}");
    assert!(
        s.is_running().expect("list-sessions"),
        "{}",
        h.host.log_tail()
    );
}

const PLUGIN_LAYOUT: &str = r#"
layout {
    tab name="agents" focus=true {
        pane split_direction="vertical" {
            pane command="@TEND@" name="claude" {
                args "play" "demo:claude"
            }
            pane command="@TEND@" name="codex" {
                args "play" "demo:codex"
            }
        }
        pane size=1 borderless=true {
            plugin location="file:@WASM@"
        }
    }
    tab name="background" {
        pane command="@TEND@" name="gemini" {
            args "play" "demo:gemini"
        }
    }
}
"#;

#[test]
fn plugin_shows_the_status_and_jumps_to_waiting_panes() {
    if let Some(why) = missing_prerequisite() {
        return skip("plugin_shows_the_status_and_jumps_to_waiting_panes", &why);
    }
    if plugin_wasm().is_none() {
        return skip(
            "plugin_shows_the_status_and_jumps_to_waiting_panes",
            "the plugin is not built (scripts/install-zellij.sh builds it into \
             cargo's target directory for zellij-plugin/)",
        );
    }
    let _serial = serial();
    let h = Harness::start(PLUGIN_LAYOUT, true, 3);
    let s = &h.session;
    let wasm = h.wasm.clone().expect("plugin copied");

    // The plugin pane, loaded with its permission granted from the cache:
    // it made itself unselectable, which it does once granted.
    let plugin = wait_for(Duration::from_secs(20), "the plugin to be granted", || {
        let panes = s.list_panes().ok()?;
        panes
            .iter()
            .find(|p| {
                p.plugin_url
                    .as_deref()
                    .is_some_and(|u| u.ends_with(&*wasm.to_string_lossy()))
            })
            .filter(|p| !p.selectable)
            .map(|p| p.id)
    });
    let claude = h.pane_titled("claude");
    let codex = h.pane_titled("codex");
    let gemini = h.pane_titled("gemini");

    // Nothing needs the user yet: the line is empty.
    let rows = s.viewport(plugin, false).expect("plugin viewport");
    assert!(rows.iter().all(|r| r.trim().is_empty()), "{rows:?}");

    // The daemon's push: codex asks a question (this tab), gemini too (the
    // background tab), and one agent went quiet.
    let status = PluginStatus {
        v: 1,
        summary: "2 agents need you · 1 agent has gone quiet".into(),
        needs: 2,
        quiet: 1,
        band: Some("waiting".into()),
        ttl: None,
        jump: vec![
            JumpTarget {
                pane: codex.number(),
                band: Some("waiting".into()),
                state: Some("waiting".into()),
                reason: Some("question".into()),
                agent: Some("codex".into()),
            },
            JumpTarget {
                pane: gemini.number(),
                band: Some("waiting".into()),
                state: Some("waiting".into()),
                reason: Some("question".into()),
                agent: Some("gemini".into()),
            },
        ],
    };
    s.push_status(&status).expect("zellij pipe");
    let line = "● 2 agents need you · 1 agent has gone quiet";
    wait_for(
        Duration::from_secs(10),
        "the plugin to render the status",
        || {
            let rows = s.viewport(plugin, false).ok()?;
            rows.iter().any(|r| r.contains(line)).then_some(())
        },
    );
    wait_for(
        Duration::from_secs(10),
        "the user's terminal to show it",
        || h.terminal().contains(line).then_some(()),
    );

    // The jump key goes to codex, then gemini in the background tab, then
    // around again.
    assert_eq!(h.looked_at(), Some(claude));
    h.keys("C-y");
    wait_for(Duration::from_secs(10), "the key to focus codex", || {
        (h.looked_at() == Some(codex)).then_some(())
    });
    h.keys("C-y");
    wait_for(Duration::from_secs(10), "the key to focus gemini", || {
        (h.looked_at() == Some(gemini)).then_some(())
    });
    let tabs = s.list_tabs().expect("list-tabs");
    assert!(
        tabs.iter().any(|t| t.name == "background" && t.active),
        "{tabs:?}"
    );
    // The same through a pipe from the command line.
    s.plugin_next().expect("zellij pipe --name tend_next");
    wait_for(
        Duration::from_secs(10),
        "the pipe to focus codex again",
        || (h.looked_at() == Some(codex)).then_some(()),
    );

    // A newer status replaces the line; `clear` hides it.
    let mut one = status.clone();
    one.summary = "1 agent needs you".into();
    one.needs = 1;
    one.quiet = 0;
    one.band = Some("blocked".into());
    one.jump.truncate(1);
    s.push_status(&one).expect("zellij pipe");
    wait_for(
        Duration::from_secs(10),
        "the plugin to render the new status",
        || {
            let rows = s.viewport(plugin, false).ok()?;
            rows.iter()
                .any(|r| r.contains("✖ 1 agent needs you"))
                .then_some(())
        },
    );
    s.clear_status().expect("zellij pipe clear");
    wait_for(
        Duration::from_secs(10),
        "the plugin to hide the line",
        || {
            let rows = s.viewport(plugin, false).ok()?;
            rows.iter().all(|r| r.trim().is_empty()).then_some(())
        },
    );

    // A status with a ttl disappears when no fresh one follows in time (a
    // daemon that died leaves nothing stale).
    let mut short = one.clone();
    short.ttl = Some(1.0);
    s.push_status(&short).expect("zellij pipe");
    wait_for(Duration::from_secs(10), "the short-lived status", || {
        let rows = s.viewport(plugin, false).ok()?;
        rows.iter()
            .any(|r| r.contains("1 agent needs you"))
            .then_some(())
    });
    wait_for(
        Duration::from_secs(10),
        "the short-lived status to expire",
        || {
            let rows = s.viewport(plugin, false).ok()?;
            rows.iter().all(|r| r.trim().is_empty()).then_some(())
        },
    );
    assert!(
        s.is_running().expect("list-sessions"),
        "{}",
        h.host.log_tail()
    );
}

const DAEMON_LAYOUT: &str = r#"
layout {
    tab name="agents" focus=true {
        pane command="env" name="claude" {
            args "TEND_AGENT=claude" "@TEND@" "play" "demo:claude" "--hold" "120"
        }
        pane size=1 borderless=true {
            plugin location="file:@WASM@"
        }
    }
    tab name="background" {
        pane command="env" name="gemini" {
            args "TEND_AGENT=gemini" "@TEND@" "play" "demo:gemini" "--hold" "120"
        }
    }
}
"#;

/// The tend daemon itself on zellij: agents in the visible tab (subscribe)
/// and in a background tab (dump-screen polling) are identified and read,
/// `tend list`/`next` answer, and the plugin shows the daemon's sentence.
#[test]
fn the_daemon_drives_zellij_and_the_plugin() {
    if let Some(why) = missing_prerequisite() {
        return skip("the_daemon_drives_zellij_and_the_plugin", &why);
    }
    if plugin_wasm().is_none() {
        return skip(
            "the_daemon_drives_zellij_and_the_plugin",
            "the plugin is not built",
        );
    }
    let _serial = serial();
    let h = Harness::start(DAEMON_LAYOUT, true, 2);
    let tend = tend_bin().expect("tend");
    let name = h.session.name().to_owned();
    let run = |args: &[&str]| -> (bool, String) {
        let out = h
            .host
            .command(&tend)
            .args(["--zellij", &name])
            .args(args)
            .output()
            .expect("run tend");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, out) = run(&["start"]);
    assert!(ok, "tend start on zellij: {out}");
    let claude = h.pane_titled("claude");
    let gemini = h.pane_titled("gemini");
    let state_of = |pane: PaneId| -> Option<(String, String)> {
        let (_, out) = run(&["list", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).ok()?;
        v.as_array()?
            .iter()
            .find(|p| p["pane"] == pane.to_string())
            .map(|p| {
                (
                    p["state"].as_str().unwrap_or_default().to_owned(),
                    p["reason"].as_str().unwrap_or_default().to_owned(),
                )
            })
    };
    let waited = Instant::now();
    while state_of(claude) != Some(("waiting".into(), "approval".into())) {
        assert!(
            waited.elapsed() < Duration::from_secs(40),
            "claude never read waiting for approval in 40 s: tend list --json says {}, \
             explain says {}",
            run(&["list", "--json"]).1,
            run(&["explain", &claude.to_string()]).1
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_for(
        Duration::from_secs(40),
        "gemini (background tab) asking a question",
        || (state_of(gemini)? == ("waiting".into(), "question".into())).then_some(()),
    );
    let (ok, next) = run(&["next"]);
    assert!(ok);
    assert_eq!(
        next.trim(),
        claude.to_string(),
        "approval comes before a question"
    );
    let plugin = h
        .session
        .list_panes()
        .expect("list")
        .into_iter()
        .find(|p| p.plugin_url.is_some() && !p.selectable)
        .map(|p| p.id)
        .expect("plugin pane");
    wait_for(
        Duration::from_secs(15),
        "the plugin to show the daemon's sentence",
        || {
            let rows = h.session.viewport(plugin, false).ok()?;
            rows.iter()
                .any(|r| r.contains("2 agents need you"))
                .then_some(())
        },
    );
    let (ok, _) = run(&["stop"]);
    assert!(ok);
}
