//! Commands sent over the socket (`Server::without_client_process`) give
//! what the `tmux` binary gives: the same output byte for byte, the same
//! errors, on a real server — and the server survives everything sent.

use crate::common;

use common::TestServer;
use tend_tmux::{Server, SocketSpec};

/// The same server reached both ways.
fn both(t: &TestServer) -> (Server, Server) {
    let process = Server::new(SocketSpec::Name(t.name.clone()));
    let direct = process.clone().without_client_process();
    assert!(direct.sends_without_client_process());
    assert!(!process.sends_without_client_process());
    (process, direct)
}

#[test]
fn output_is_byte_for_byte_the_binarys() {
    let t = TestServer::start();
    let (process, direct) = both(&t);
    // Names tmux would mangle for a client that is not UTF-8, and a pane
    // that printed something.
    t.tmux_ok(&["rename-window", "-t", "main:0", "wïndow ✓ 日本"]);
    // Control characters: in a window name where tmux takes one (3.7
    // refuses them in names, "invalid window name": tmux.c check_name),
    // and in an option value everywhere.
    let version = t.server.server_version().expect("the server's version");
    let name = if version.at_least(3, 7) {
        "tab name"
    } else {
        "tab\tname"
    };
    t.tmux_ok(&["set-option", "-g", "@tend_ctl", "tab\tand\u{1f}unit"]);
    t.tmux_ok(&[
        "new-window",
        "-d",
        "-n",
        name,
        "printf 'héllo\\n'; exec sleep 100",
    ]);
    for _ in 0..10 {
        t.tmux_ok(&["new-window", "-d", "exec sleep 100"]);
    }
    let commands: Vec<Vec<String>> = vec![
        vec!["list-panes".into(), "-a".into()],
        vec![
            "list-panes".into(),
            "-a".into(),
            "-F".into(),
            "#{pane_id}\t#{window_name}\t#{pane_current_command}\t#{pane_pid}".into(),
        ],
        vec![
            "display-message".into(),
            "-p".into(),
            "#{pid} #{version}".into(),
        ],
        vec!["list-clients".into()],
        vec!["show-options".into(), "-g".into()],
        vec!["list-keys".into()],
        vec![
            "capture-pane".into(),
            "-p".into(),
            "-t".into(),
            "main:1".into(),
        ],
    ];
    for cmd in &commands {
        let a = process.run(cmd).unwrap();
        let b = direct.run(cmd).unwrap();
        assert_eq!(a, b, "{cmd:?}");
    }
    // More than one message of output (tmux cuts at 16 KiB).
    let keys = direct.run(["list-keys"]).unwrap();
    assert!(keys.len() > 16 * 1024, "{}", keys.len());
    let many = direct.run_many(&commands).unwrap();
    assert_eq!(many, process.run_many(&commands).unwrap());
}

#[test]
fn errors_are_the_binarys() {
    let t = TestServer::start();
    let (process, direct) = both(&t);
    for cmd in [
        vec!["capture-pane", "-p", "-t", "%999"],
        vec!["no-such-command"],
        vec!["set-option", "-g", "no-such-option", "1"],
        vec!["list-panes", "-t", "nosuchsession"],
    ] {
        let a = process.run(&cmd).unwrap_err();
        let b = direct.run(&cmd).unwrap_err();
        assert_eq!(a.to_string(), b.to_string(), "{cmd:?}");
        assert_eq!(a.is_target_gone(), b.is_target_gone(), "{cmd:?}");
    }
    // A batch stops at its failing command, both ways.
    let batch = [
        vec!["set-option", "-g", "@a", "1"],
        vec!["capture-pane", "-p", "-t", "%999"],
        vec!["set-option", "-g", "@b", "1"],
    ];
    assert!(direct.run_many(&batch).is_err());
    assert_eq!(t.tmux_ok(&["show-options", "-gqv", "@a"]).trim(), "1");
    assert_eq!(t.tmux_ok(&["show-options", "-gqv", "@b"]).trim(), "");
    // The server is still there.
    assert!(direct.is_running());
}

#[test]
fn commands_act_and_arguments_arrive_unchanged() {
    let t = TestServer::start();
    let (_, direct) = both(&t);
    let hostile = "a;b \\; '\"$(touch /tmp/x) #{pane_id} ✓;";
    direct
        .run(["set-option", "-g", "@tend_test", hostile])
        .unwrap();
    assert_eq!(
        t.tmux_ok(&["show-options", "-gqv", "@tend_test"]),
        format!("{hostile}\n")
    );
    // Keys reach the pane.
    direct
        .run(["send-keys", "-t", "main:0", "-l", "echo direct-$((6*7))"])
        .unwrap();
    direct.run(["send-keys", "-t", "main:0", "Enter"]).unwrap();
    assert!(common::wait_until(common::DEADLINE, || t
        .tmux_ok(&["capture-pane", "-p", "-t", "main:0"])
        .contains("direct-42")));
}

#[test]
fn a_server_that_is_gone_is_reported_as_the_binary_reports_it() {
    let name = format!("tend-t-wire-none-{}", std::process::id());
    let process = Server::new(SocketSpec::Name(name.clone()));
    let direct = process.clone().without_client_process();
    let a = process.run(["list-sessions"]).unwrap_err();
    let b = direct.run(["list-sessions"]).unwrap_err();
    assert!(a.is_no_server() && b.is_no_server(), "{a} / {b}");
    // And after the server went away: the socket file is left, nobody
    // listens.
    let t = TestServer::start();
    let direct = Server::new(SocketSpec::Name(t.name.clone())).without_client_process();
    assert!(direct.is_running());
    t.tmux_ok(&["kill-server"]);
    assert!(common::wait_until(common::DEADLINE, || !direct.is_running()));
    let e = direct.run(["list-sessions"]).unwrap_err();
    assert!(e.is_no_server(), "{e}");
}

#[test]
fn the_command_client_leaves_no_trace() {
    let mut t = TestServer::start();
    let _client = t.attach_client("main");
    let (_, direct) = both(&t);
    t.tmux_ok(&["set-hook", "-g", "client-attached", "set -g @attached yes"]);
    for _ in 0..20 {
        direct.run(["list-panes", "-a"]).unwrap();
    }
    // One client: the attached one; no hook fired; nothing attached.
    let clients = t.tmux_ok(&["list-clients", "-F", "#{client_name}"]);
    assert_eq!(clients.lines().count(), 1, "{clients}");
    assert_eq!(t.tmux_ok(&["show-options", "-gqv", "@attached"]).trim(), "");
    assert_eq!(t.display("main:", "#{session_attached}"), "1");
}
