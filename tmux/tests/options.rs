//! User options at every scope, their removal, and status refresh.

use crate::common;

use std::time::Duration;

use common::{wait_until, TestServer, DEADLINE};
use tend_tmux::{OptionUpdate, PaneId, Scope, SessionId, WindowId};

#[test]
fn options_at_every_scope_and_their_removal() {
    let t = TestServer::start();
    let pane = PaneId(0);
    let window = WindowId(0);
    let session = SessionId(0);
    let hostile = t.hostile_name();
    t.server
        .set_options(&[
            OptionUpdate::set(Scope::Global, "@tend_summary", "2 agents need you"),
            OptionUpdate::set(Scope::GlobalWindow, "@tend_gw", "x"),
            OptionUpdate::set(Scope::Server, "@tend_srv", "y"),
            OptionUpdate::set(Scope::Session(session), "@tend_needs", "-1"),
            OptionUpdate::set(Scope::Window(window), "@tend_band", "waiting"),
            OptionUpdate::set(Scope::Pane(pane), "@tend_state", hostile.as_str()),
            OptionUpdate::set(Scope::Pane(pane), "@tend_multi", "a\nb;"),
            // A vanished pane does not spoil the batch.
            OptionUpdate::set(Scope::Pane(PaneId(999)), "@tend_state", "gone"),
        ])
        .unwrap();

    // Stored verbatim at exactly their scope.
    assert_eq!(t.display("%0", "#{@tend_summary}"), "2 agents need you");
    assert_eq!(t.tmux_ok(&["show-options", "-sv", "@tend_srv"]), "y\n");
    assert_eq!(
        t.tmux_ok(&["show-options", "-t", "$0", "-v", "@tend_needs"]),
        "-1\n"
    );
    assert_eq!(
        t.tmux_ok(&["show-options", "-w", "-t", "@0", "-v", "@tend_band"]),
        "waiting\n"
    );
    assert_eq!(
        t.tmux_ok(&["show-options", "-p", "-t", "%0", "-v", "@tend_state"]),
        format!("{hostile}\n")
    );
    assert_eq!(
        t.server
            .show_option(Scope::Pane(pane), "@tend_state")
            .unwrap()
            .as_deref(),
        Some(hostile.as_str())
    );
    assert_eq!(
        t.server
            .show_option(Scope::Pane(pane), "@tend_multi")
            .unwrap()
            .as_deref(),
        Some("a\nb;")
    );
    assert_eq!(
        t.server
            .show_option(Scope::Pane(pane), "@tend_needs")
            .unwrap(),
        None,
        "not inherited"
    );
    assert_eq!(
        t.server
            .show_option(Scope::Pane(PaneId(999)), "@tend_state")
            .unwrap(),
        None
    );

    // Unset one.
    t.server
        .unset_option(Scope::Window(window), "@tend_band")
        .unwrap();
    assert_eq!(
        t.server
            .show_option(Scope::Window(window), "@tend_band")
            .unwrap(),
        None
    );

    // The user's settings and other options survive removal.
    t.tmux_ok(&["set-option", "-g", "@tend-key-next", "M-n"]);
    t.tmux_ok(&["set-option", "-g", "@other", "1"]);
    t.tmux_ok(&[
        "set-option",
        "-g",
        "@tend_fake_in_value",
        "x\n@tend_nothing",
    ]);
    let mut found = t.server.list_tend_options().unwrap();
    found.sort();
    let names: Vec<_> = found.iter().map(|(s, n)| format!("{s} {n}")).collect();
    assert_eq!(
        names,
        [
            "global @tend_fake_in_value",
            "global @tend_summary",
            "global window @tend_gw",
            "server @tend_srv",
            "session $0 @tend_needs",
            "pane %0 @tend_multi",
            "pane %0 @tend_state",
        ]
    );
    assert_eq!(t.server.remove_tend_options().unwrap(), 7);
    assert!(t.server.list_tend_options().unwrap().is_empty());
    assert_eq!(
        t.server
            .show_option(Scope::Global, "@tend-key-next")
            .unwrap()
            .as_deref(),
        Some("M-n")
    );
    assert_eq!(
        t.server
            .show_option(Scope::Global, "@other")
            .unwrap()
            .as_deref(),
        Some("1")
    );
    assert_eq!(
        t.server.user_settings().unwrap(),
        [("@tend-key-next".to_string(), "M-n".to_string())]
    );
    t.assert_not_pwned();
}

#[test]
fn bad_names_are_refused() {
    let t = TestServer::start();
    let e = t
        .server
        .set_option(Scope::Global, "status-right", "x")
        .unwrap_err();
    assert!(e.to_string().contains("user option"), "{e}");
}

#[test]
fn refresh_reaches_attached_clients() {
    let mut t = TestServer::start();
    assert_eq!(t.server.refresh_clients().unwrap(), 0);
    // No periodic redraw, and a status line showing something that changes
    // without tmux redrawing the status line by itself: the cursor row.
    t.tmux_ok(&["set-option", "-g", "status-interval", "0"]);
    t.tmux_ok(&["set-option", "-g", "status-right", "[cy=#{cursor_y}]"]);
    let client = t.attach_client("main");
    assert!(wait_until(DEADLINE, || t.typescript(0).contains("[cy=0]")));
    t.tmux_ok(&["send-keys", "-t", "%0", "echo hi", "Enter"]);
    assert!(wait_until(DEADLINE, || t.display("%0", "#{cursor_y}") == "2"));
    assert!(!wait_until(Duration::from_millis(300), || t
        .typescript(0)
        .contains("[cy=2]")));

    assert_eq!(t.server.refresh_clients().unwrap(), 1);
    assert!(wait_until(DEADLINE, || t.typescript(0).contains("[cy=2]")));

    // (tmux 3.3 also redraws status lines after any set-option.)
    t.server
        .set_option(Scope::Global, "@tend_summary", "1 agent needs you")
        .unwrap();
    // tmux 3.2a's display-message takes no client (-c is a flag there).
    let shown = if t.server.capabilities().message_to_client {
        t.tmux_ok(&["display-message", "-p", "-c", &client, "#{@tend_summary}"])
    } else {
        t.tmux_ok(&["display-message", "-p", "#{@tend_summary}"])
    };
    assert_eq!(shown.trim(), "1 agent needs you");

    // publish(): the redraw alone (no option set, so only refresh-client
    // can show the new cursor row), a client that went away first.
    t.tmux_ok(&["send-keys", "-t", "%0", "echo again", "Enter"]);
    assert!(wait_until(DEADLINE, || t.display("%0", "#{cursor_y}") == "4"));
    assert!(!wait_until(Duration::from_millis(300), || t
        .typescript(0)
        .contains("[cy=4]")));
    t.server
        .publish(&[], &["/dev/pts/9999".to_string(), client.clone()])
        .unwrap();
    assert!(wait_until(DEADLINE, || t.typescript(0).contains("[cy=4]")));
    // And options with a window that went away: the rest are set.
    let updates = [
        OptionUpdate::set(Scope::Window(WindowId(999)), "@tend_window_band", "x"),
        OptionUpdate::set(Scope::Global, "@tend_summary", "2 agents need you"),
    ];
    t.server
        .publish(&updates, std::slice::from_ref(&client))
        .unwrap();
    // tmux 3.2a's display-message takes no client (-c is a flag there).
    let shown = if t.server.capabilities().message_to_client {
        t.tmux_ok(&["display-message", "-p", "-c", &client, "#{@tend_summary}"])
    } else {
        t.tmux_ok(&["display-message", "-p", "#{@tend_summary}"])
    };
    assert_eq!(shown.trim(), "2 agents need you");
}

#[test]
fn a_publish_and_the_listing_in_one_call() {
    let t = TestServer::start();
    // The pane's shell must have started, or the listings compared below
    // could see its command change between them.
    assert!(common::wait_until(common::DEADLINE, || t
        .display("%0", "#{pane_current_command}")
        == "sh"));
    let hostile = t.hostile_name();
    let alone = t.server.snapshot().unwrap();
    let snap = t
        .server
        .publish_and_snapshot(
            &[
                OptionUpdate::set(Scope::Pane(PaneId(0)), "@tend_state", hostile.as_str()),
                OptionUpdate::set(Scope::Global, "@tend_needs", "1"),
                OptionUpdate::set(Scope::Global, "@tend_needs", "2"),
            ],
            &[],
        )
        .unwrap();
    // The updates in order (the later value wins), the listing as
    // `snapshot` reads it.
    assert_eq!(t.display("%0", "#{@tend_state}"), hostile);
    assert_eq!(t.tmux_ok(&["show-options", "-gv", "@tend_needs"]), "2\n");
    assert_eq!(snap, alone);

    // A vanished pane makes tmux skip the rest of a batch: the updates
    // that can be applied still are, and the listing is still read.
    let snap = t
        .server
        .publish_and_snapshot(
            &[
                OptionUpdate::set(Scope::Pane(PaneId(999)), "@tend_state", "gone"),
                OptionUpdate::set(Scope::Pane(PaneId(0)), "@tend_state", "after"),
            ],
            &["no-such-client".to_owned()],
        )
        .unwrap();
    assert_eq!(t.display("%0", "#{@tend_state}"), "after");
    assert_eq!(snap, alone);
}
