//! pipe-pane taps against a real tmux server: ours installed and removed,
//! the user's never touched.

use crate::common;

use common::{read, wait_until, TestServer, DEADLINE};
use tend_tmux::escape::shell_join;
use tend_tmux::{PaneId, TapOutcome};

fn new_pane(t: &TestServer) -> PaneId {
    t.split("=main:0", "/bin/sh")
}

fn say(t: &TestServer, pane: PaneId, text: &str) {
    t.tmux_ok(&[
        "send-keys",
        "-t",
        &pane.to_string(),
        &format!("echo {text}"),
        "Enter",
    ]);
}

#[test]
fn tap_installs_once_and_removes_cleanly() {
    let t = TestServer::start();
    let pane = new_pane(&t);
    // A path with characters that every layer would misread.
    let out = t.path("tap out #{pane_id} it's ;$x");
    let cmd = format!("cat >> {}", shell_join(&[out.to_str().unwrap()]));

    assert_eq!(
        t.server.install_tap(pane, &cmd).unwrap(),
        TapOutcome::Installed
    );
    let p = t.server.pane(pane).unwrap();
    assert!(p.is_tapped() && !p.has_foreign_pipe(), "{p:?}");
    assert_eq!(p.tap.as_deref(), Some(cmd.as_str()));

    say(&t, pane, "through-the-tap");
    assert!(wait_until(DEADLINE, || read(&out).contains("through-the-tap")));

    // Again: nothing changes, and tend knows it is its own.
    assert_eq!(
        t.server.install_tap(pane, &cmd).unwrap(),
        TapOutcome::AlreadyTapped {
            command: cmd.clone()
        }
    );

    assert!(t.server.remove_tap(pane).unwrap());
    let p = t.server.pane(pane).unwrap();
    assert!(!p.pipe && p.tap.is_none(), "{p:?}");
    assert!(!t.server.remove_tap(pane).unwrap());
    t.assert_not_pwned();
}

#[test]
fn users_pipe_is_never_touched() {
    let t = TestServer::start();
    let ours = new_pane(&t);
    let theirs = new_pane(&t);
    let user_file = t.path("user-log");
    let tap_file = t.path("tap");
    let user_cmd = format!("cat >> '{}'", user_file.display());
    t.tmux_ok(&["pipe-pane", "-t", &theirs.to_string(), &user_cmd]);

    let cmd = format!("cat >> '{}'", tap_file.display());
    assert_eq!(
        t.server.install_tap(theirs, &cmd).unwrap(),
        TapOutcome::Foreign
    );
    assert_eq!(
        t.server.install_tap(ours, &cmd).unwrap(),
        TapOutcome::Installed
    );
    let listed = t.server.list_panes().unwrap();
    let p = listed.iter().find(|p| p.pane_id == theirs).unwrap();
    assert!(p.has_foreign_pipe(), "{p:?}");

    // Removing "ours" on their pane does nothing; removing all removes ours.
    assert!(!t.server.remove_tap(theirs).unwrap());
    assert_eq!(t.server.remove_all_taps().unwrap(), 1);
    assert!(!t.server.pane(ours).unwrap().pipe);
    assert!(t.server.pane(theirs).unwrap().pipe);

    // The user's pipe still writes.
    say(&t, theirs, "still-piped");
    assert!(wait_until(DEADLINE, || read(&user_file).contains("still-piped")));
    assert!(!read(&tap_file).contains("still-piped"));
}

#[test]
fn stale_marks_are_visible_and_clearable() {
    let t = TestServer::start();
    let pane = new_pane(&t);
    // A tap that exits at once: tmux closes the pipe when it next writes
    // to it, and the mark stays.
    assert_eq!(
        t.server.install_tap(pane, "exit 0").unwrap(),
        TapOutcome::Installed
    );
    assert!(wait_until(DEADLINE, || {
        say(&t, pane, "poke");
        t.server
            .pane(pane)
            .map(|p| p.has_stale_tap_mark())
            .unwrap_or(false)
    }));
    t.server.clear_tap_mark(pane).unwrap();
    let p = t.server.pane(pane).unwrap();
    assert!(!p.pipe && p.tap.is_none());
}
