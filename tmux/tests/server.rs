//! The transport against a real tmux server.

use crate::common;

use common::TestServer;
use tend_tmux::{Server, SocketSpec, TmuxError};

#[test]
fn version_and_identity() {
    let t = TestServer::start();
    let v = t.server.version().expect("tmux -V");
    assert!(v.major >= 3, "tests need tmux 3.x, found {v}");
    assert!(t.server.is_running());
    assert!(t.server.server_pid().unwrap() > 1);
    // The key computed without asking the server is the server's own path.
    assert_eq!(t.server.socket_path().unwrap(), t.server.key());
    // The same server through -S has the same key.
    let by_path = Server::new(SocketSpec::Path(t.server.key()));
    assert_eq!(by_path.key(), t.server.key());
    assert_eq!(
        by_path.server_pid().unwrap(),
        t.server.server_pid().unwrap()
    );
}

#[test]
fn no_server_is_explained() {
    let s = Server::new(SocketSpec::Name(format!(
        "tend-t-none-{}",
        std::process::id()
    )));
    assert!(!s.is_running());
    let e = s.run(["list-panes"]).unwrap_err();
    assert!(e.is_no_server(), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("no tmux server is running"), "{msg}");
    assert!(msg.contains("TEND_TMUX_SOCKET"), "{msg}");
}

#[test]
fn missing_tmux_is_explained() {
    let s = Server::new(SocketSpec::Default).with_program("/nonexistent/tmux");
    let e = s.run(["list-panes"]).unwrap_err();
    assert!(matches!(e, TmuxError::NotInstalled { .. }), "{e:?}");
    assert!(e.to_string().contains("not installed"));
}

#[test]
fn failures_carry_tmux_words() {
    let t = TestServer::start();
    let e = t.server.run(["frobnicate"]).unwrap_err();
    assert!(e.to_string().contains("unknown command"), "{e}");
    let e = t
        .server
        .run(["capture-pane", "-p", "-t", "%999"])
        .unwrap_err();
    assert!(e.is_target_gone(), "{e:?}");
}

#[test]
fn arguments_arrive_unchanged() {
    let t = TestServer::start();
    for value in [
        "x;",
        "x\\;",
        ";",
        "\\",
        "a b",
        "-dash",
        "it's \"q\" $HOME ~ {",
        "#{pane_id}",
        "a\\n",
        "\\$HOME",
    ] {
        t.server
            .run(["set-option", "-g", "--", "@tend_arg", value])
            .unwrap();
        let read = t.server.show_option(tend_tmux::Scope::Global, "@tend_arg");
        // tmux 3.4 and 3.5a print control characters as `\ooo` or `\n`
        // but a backslash of the value as it is: a backslash followed by a
        // character that starts one of those escapes cannot be told from
        // one, and such a value is refused, never misread
        // (`Printing::unprint`); any other backslash reads back exactly.
        let ambiguous = value
            .as_bytes()
            .windows(2)
            .any(|w| w[0] == b'\\' && b"01234567abfnrstv".contains(&w[1]));
        if common::printing(&t) != tend_tmux::Printing::Raw && ambiguous {
            assert!(
                matches!(read, Err(ref e) if e.is_unreadable()),
                "{value:?}: {read:?}"
            );
        } else {
            assert_eq!(read.unwrap().as_deref(), Some(value));
        }
    }
    // Window names go through the same path (tmux itself escapes
    // backslashes in names, so none here).
    t.server
        .run(["rename-window", "-t", "main:0", "--", "x;"])
        .unwrap();
    assert_eq!(t.display("main:0", "#{window_name}"), "x;");
}

#[test]
fn batches_run_in_order_and_split_when_long() {
    let t = TestServer::start();
    let out = t
        .server
        .run_many(&[
            ["display-message", "-p", "one"],
            ["display-message", "-p", "two;"],
        ])
        .unwrap();
    assert_eq!(out, "one\ntwo;\n");
    // Far more than tmux accepts in one message: split transparently.
    let cmds: Vec<Vec<String>> = (0..3000)
        .map(|i| {
            vec![
                "set-option".into(),
                "-g".into(),
                format!("@tend_t{i}"),
                format!("value {i}"),
            ]
        })
        .collect();
    t.server.run_many(&cmds).unwrap();
    assert_eq!(
        t.tmux_ok(&["show-options", "-gv", "@tend_t2999"]),
        "value 2999\n"
    );
    // One command that alone is too long is refused with an explanation.
    let e = t
        .server
        .run(["set-option", "-g", "@tend_big", &"x".repeat(20_000)])
        .unwrap_err();
    assert!(matches!(e, TmuxError::TooLong { .. }), "{e:?}");
}
