//! Acting on an attached client: jumps across sessions, messages, menus.

use crate::common;

use common::{wait_until, TestServer, DEADLINE};
use tend_tmux::client::switch_command;
use tend_tmux::escape::format_escape_hash;
use tend_tmux::{MenuItem, PaneId, SessionId};

fn client_pane(t: &TestServer) -> Option<PaneId> {
    t.server
        .list_clients()
        .unwrap()
        .first()
        .and_then(|c| c.pane_id)
}

#[test]
fn switch_to_crosses_sessions_windows_and_panes() {
    let mut t = TestServer::start();
    let client = t.attach_client("main");
    let hostile = t.hostile_name();
    t.tmux_ok(&[
        "new-session",
        "-d",
        "-s",
        &format_escape_hash(&hostile),
        "/bin/sh",
    ]);
    t.tmux_ok(&["new-window", "-d", "-t", "$1:", "/bin/sh"]);
    let target = t.split("$1:1", "/bin/sh");

    t.server.switch_to(Some(&client), target).unwrap();
    assert!(wait_until(DEADLINE, || client_pane(&t) == Some(target)));
    let c = &t.server.list_clients().unwrap()[0];
    assert_eq!(c.session_id, Some(SessionId(1)));
    assert_eq!(c.session_name, hostile);

    // Without a client: the most recent one moves.
    t.server.switch_to(None, PaneId(0)).unwrap();
    assert!(wait_until(DEADLINE, || client_pane(&t) == Some(PaneId(0))));

    let e = t.server.switch_to(Some(&client), PaneId(999)).unwrap_err();
    assert!(e.is_target_gone(), "{e:?}");
    t.assert_not_pwned();
}

#[test]
fn messages_and_menus_show_hostile_text_literally() {
    let mut t = TestServer::start();
    let client = t.attach_client("main");
    let hostile = t.hostile_name();
    t.server
        .display_message(Some(&client), &format!("waiting: {hostile}"), Some(5000))
        .unwrap();
    assert!(wait_until(DEADLINE, || t
        .typescript(0)
        .contains("#{pane_id}")));

    t.tmux_ok(&["new-window", "-d", "-t", "=main:", "/bin/sh"]);
    t.server
        .display_menu(
            &client,
            &hostile,
            &[
                MenuItem::Disabled("-- approval --".into()),
                MenuItem::Entry {
                    label: format!("claude in {hostile}"),
                    key: "1".into(),
                    command: switch_command(PaneId(1)),
                },
                MenuItem::Separator,
                MenuItem::Entry {
                    label: "-dash first".into(),
                    key: "2".into(),
                    command: switch_command(PaneId(0)),
                },
            ],
        )
        .unwrap();
    assert!(wait_until(DEADLINE, || t
        .typescript(0)
        .contains("claude in it's")));
    // Choosing the entry runs its command in the client.
    t.type_keys(0, b"1");
    assert!(wait_until(DEADLINE, || client_pane(&t) == Some(PaneId(1))));
    t.assert_not_pwned();
}
