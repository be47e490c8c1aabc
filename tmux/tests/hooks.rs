//! Hooks against a real tmux server: appended next to the user's, removed
//! exactly, and reporting ids only.

use crate::common;

use std::time::Duration;

use common::{read, wait_until, TestServer, DEADLINE};
use tend_tmux::escape::format_escape_hash;
use tend_tmux::hooks::{event_command, FOCUS_HOOKS, PANE_HOOKS};

/// Hook commands that append their arguments to `events`.
fn recorder(events: &std::path::Path, hooks: &[&'static str]) -> Vec<(&'static str, String)> {
    let script = format!("printf '%s\\n' \"$*\" >> '{}'", events.display());
    hooks
        .iter()
        .map(|h| (*h, event_command("/bin/sh", &["-c", &script, "sh"], h)))
        .collect()
}

#[test]
fn user_hooks_survive_install_and_removal() {
    let t = TestServer::start();
    let events = t.path("events");
    t.tmux_ok(&[
        "set-hook",
        "-ga",
        "after-new-window",
        "set-option -gF @user_saw '#{pane_id}'",
    ]);
    t.tmux_ok(&[
        "set-hook",
        "-ga",
        "pane-exited",
        "set-option -g @user_exit 1",
    ]);

    let mut hooks: Vec<&'static str> = PANE_HOOKS.to_vec();
    hooks.extend(FOCUS_HOOKS);
    let report = t.server.install_hooks(&recorder(&events, &hooks)).unwrap();
    assert_eq!(report.installed.len(), hooks.len(), "{report:?}");
    assert!(report.unsupported.is_empty(), "{report:?}");
    // Installing again replaces tend's entries instead of adding more.
    t.server.install_hooks(&recorder(&events, &hooks)).unwrap();
    let entries = t.server.list_hooks().unwrap();
    for h in &hooks {
        assert_eq!(
            entries
                .iter()
                .filter(|e| e.hook == *h && e.is_ours())
                .count(),
            1,
            "{h}"
        );
    }
    assert_eq!(entries.iter().filter(|e| !e.is_ours()).count(), 2);

    // Both the user's hook and tend's run.
    let pane = t.tmux_ok(&[
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        "=main:",
        "/bin/sh",
    ]);
    let pane = pane.trim().to_string();
    assert!(wait_until(DEADLINE, || read(&events)
        .contains(&format!("after-new-window pane={pane} "))));
    assert_eq!(
        t.tmux_ok(&["show-options", "-gv", "@user_saw"]).trim(),
        pane
    );
    let line = read(&events)
        .lines()
        .find(|l| l.starts_with("after-new-window"))
        .unwrap()
        .to_string();
    // Ids arrive intact: `$0` was not expanded by the shell.
    assert!(line.contains(" session=$0 "), "{line}");

    // Removal takes exactly tend's entries.
    assert_eq!(t.server.remove_hooks().unwrap(), hooks.len());
    let left = t.server.list_hooks().unwrap();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.iter().all(|e| !e.is_ours()));
    assert!(left
        .iter()
        .any(|e| e.hook == "after-new-window" && e.command.contains("@user_saw")));
    assert!(left.iter().any(|e| e.hook == "pane-exited"));

    // And the user's hook still works, ours no longer fires.
    let before = read(&events);
    let pane2 = t.tmux_ok(&[
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        "=main:",
        "/bin/sh",
    ]);
    let pane2 = pane2.trim().to_string();
    assert!(wait_until(DEADLINE, || {
        t.tmux_ok(&["show-options", "-gv", "@user_saw"]).trim() == pane2
    }));
    assert!(!wait_until(Duration::from_millis(300), || read(&events) != before));
    assert_eq!(t.server.remove_hooks().unwrap(), 0);
}

#[test]
fn hook_events_name_the_pane_by_id() {
    let t = TestServer::start();
    let events = t.path("events");
    t.server
        .install_hooks(&recorder(&events, PANE_HOOKS))
        .unwrap();
    // A hostile session name reaches no shell: only ids are passed.
    let hostile = t.hostile_name();
    t.tmux_ok(&[
        "new-session",
        "-d",
        "-s",
        &format_escape_hash(&hostile),
        "/bin/sh",
    ]);
    assert!(wait_until(DEADLINE, || read(&events).contains("session-created")));
    let split = t.split("=main:0", "/bin/sh").to_string();
    // Background hook commands finish in any order: wait for each.
    let created = format!("after-split-window pane={split} ");
    assert!(wait_until(DEADLINE, || read(&events).contains(&created)));
    t.tmux_ok(&["send-keys", "-t", &split, "exit", "Enter"]);
    let exited = format!("hook_pane={split} ");
    assert!(wait_until(DEADLINE, || read(&events)
        .lines()
        .any(|l| l.starts_with("pane-exited") && l.contains(&exited))));
    let ev = read(&events);
    assert!(!ev.contains("it's"), "{ev}");
    t.assert_not_pwned();
}

#[test]
fn commands_without_the_marker_are_refused() {
    let t = TestServer::start();
    let e = t
        .server
        .install_hooks(&[("after-new-window", "display-message hi".to_string())])
        .unwrap_err();
    assert!(e.to_string().contains("marker"), "{e}");
    assert!(t.server.list_hooks().unwrap().is_empty());
}

#[test]
fn unknown_hooks_are_reported_not_set() {
    let t = TestServer::start();
    let events = t.path("events");
    let mut hooks = recorder(&events, &["after-new-window"]);
    hooks.push(("no-such-hook", hooks[0].1.clone()));
    let report = t.server.install_hooks(&hooks).unwrap();
    assert_eq!(report.installed, ["after-new-window"]);
    assert_eq!(report.unsupported, ["no-such-hook"]);
    assert!(t.server.supported_hooks().unwrap().contains("pane-died"));
}
