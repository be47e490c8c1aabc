//! Queries against a real tmux server, with hostile names.

use crate::common;

use common::{wait_until, TestServer, DEADLINE};
use tend_tmux::escape::{format_escape_hash, shell_quote};

const OSC_TITLE: &str = "osc #{session_name} 'q' ; $(x)";
use std::time::Duration;
use tend_tmux::{PaneId, SessionId};

#[test]
fn list_panes_reads_hostile_names_verbatim() {
    let t = TestServer::start();
    let hostile = t.hostile_name();
    // new-session -s and rename-window expand formats in the name they are
    // given; `##` makes the stored name the literal hostile text.
    let literal = format_escape_hash(&hostile);
    let other_window = t.tmux_ok(&[
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{window_id}",
        "-x",
        "200",
        "-y",
        "50",
        "-s",
        &literal,
        "/bin/sh",
    ]);
    t.fit_window(other_window.trim(), 200, 50);
    t.tmux_ok(&["rename-window", "-t", "=main:0", &literal]);
    let title = "title with 'quotes' #{session_name} ;";
    // select-pane -T expands formats too.
    t.tmux_ok(&[
        "select-pane",
        "-t",
        "=main:0.0",
        "-T",
        &format_escape_hash(title),
    ]);

    // A program whose name contains the separators a naive parser would use.
    let odd = t.path("sl\u{1f}e\nep");
    std::fs::copy("/bin/sleep", &odd).unwrap();
    let script = t.path("run.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '\\033]2;%s\\033\\\\' {}\nexec \"$(printf '%s' '{}')\" 300\n",
            shell_quote(OSC_TITLE),
            odd.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let odd_pane = t.split("=main:0", &script.to_string_lossy());

    // How tmux names that program: as it is, with control characters made
    // visible (3.4, 3.5a print them so), or not at all: 3.7 passes the
    // name through clean_name (names.c parse_window_name), which refuses
    // control characters, and #{pane_current_command} is empty.
    let version = t.server.server_version().expect("the server's version");
    let printed = if version.at_least(3, 7) {
        ""
    } else {
        match common::printing(&t) {
            tend_tmux::Printing::Raw => "sl\u{1f}e\nep",
            _ => "sl\\037e\nep",
        }
    };
    assert!(wait_until(DEADLINE, || {
        t.server
            .list_panes()
            .unwrap()
            .iter()
            .any(|p| p.pane_id == odd_pane && p.title == OSC_TITLE && p.current_command == printed)
    }));
    let panes = t.server.list_panes().unwrap();
    assert_eq!(panes.len(), 3, "{panes:#?}");

    let main: Vec<_> = panes.iter().filter(|p| p.session_name == "main").collect();
    assert_eq!(main.len(), 2);
    assert!(main.iter().all(|p| p.window_name == hostile));
    let first = main.iter().find(|p| p.pane_index == 0).unwrap();
    assert_eq!(first.title, title);
    assert_eq!(first.session_id, SessionId(0));
    assert_eq!(first.window_id.to_string(), "@0");
    assert!(first.pane_pid > 1);
    assert!(first.window_active);
    assert_eq!(first.session_attached, 0);
    assert_eq!(first.current_command, "sh");
    assert!(first.tty.starts_with("/dev/"));
    assert!(!first.pipe && first.tap.is_none() && !first.dead && !first.alternate_on);

    let odd = panes.iter().find(|p| p.pane_id == odd_pane).unwrap();
    assert_eq!(odd.current_command, printed);
    assert_eq!(odd.title, OSC_TITLE);
    assert_eq!(odd.width, 200);

    let other = panes.iter().find(|p| p.session_name == hostile).unwrap();
    assert_eq!((other.width, other.height), (200, 50));
    assert!(other.pane_active);

    // One pane by id, and a vanished one.
    assert_eq!(t.server.pane(odd_pane).unwrap(), *odd);
    let e = t.server.pane(PaneId(9999)).unwrap_err();
    assert!(e.is_target_gone(), "{e:?}");
    t.assert_not_pwned();
}

#[test]
fn dead_panes_keep_their_status() {
    let t = TestServer::start();
    t.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    // tmux 3.3a on a loaded machine sometimes never learns the exit status
    // of a pane's process: the pane turns dead, but #{pane_dead_status}
    // stays empty for good and no "Pane is dead (status …)" line is drawn
    // (seen in 1 of 3 panes with four busy loops on two cores, with plain
    // tmux commands and no tend). So: every dead pane must read as dead,
    // a status read must be the true one, and at least one of a few panes
    // must carry it.
    let mut statuses = Vec::new();
    for _ in 0..8 {
        // Not at once: a process that exits before the pane is fully
        // set up loses its status more often still.
        let id = t.split("=main:0", "sleep 0.3; exit 7");
        assert!(wait_until(DEADLINE, || t
            .server
            .pane(id)
            .map(|p| p.dead)
            .unwrap_or(false)));
        // tmux may mark the pane dead (its terminal closed) a moment before
        // it has reaped the process and knows the status.
        wait_until(Duration::from_secs(3), || {
            t.server.pane(id).is_ok_and(|p| p.dead_status.is_some())
        });
        let status = t.server.pane(id).unwrap().dead_status;
        statuses.push(status);
        t.tmux_ok(&["kill-pane", "-t", &id.to_string()]);
        if status.is_some() {
            break;
        }
    }
    assert!(
        statuses.iter().all(|s| s.is_none() || *s == Some(7)),
        "{statuses:?}"
    );
    assert_eq!(statuses.last(), Some(&Some(7)), "{statuses:?}");
}

#[test]
fn capture_reads_text_and_cursor() {
    let t = TestServer::start();
    let id = t.split(
        "=main:0",
        "printf 'hello\\n\\033[31mworld\\033[0m'; exec sleep 300",
    );
    assert!(wait_until(DEADLINE, || {
        t.server
            .capture(id)
            .map(|c| c.text.contains("world"))
            .unwrap_or(false)
    }));
    let c = t.server.capture(id).unwrap();
    assert_eq!(c.pane_id, id);
    // tmux 3.2a pads a line it writes attributes for with spaces.
    assert_eq!(
        c.text.lines().next().map(str::trim_end),
        Some("hello"),
        "{:?}",
        c.text
    );
    assert!(
        c.text.contains("\u{1b}[31mworld"),
        "colours kept: {:?}",
        c.text
    );
    assert_eq!((c.cursor_x, c.cursor_y), (5, 1));
    assert!(!c.alternate_on && !c.in_mode);
    assert_eq!(c.width, 200);
    assert!(c.height > 1);
    let plain = t.server.capture_text(id, 100).unwrap();
    assert!(plain.starts_with("hello\nworld"), "{plain:?}");
}

#[test]
fn capture_sees_the_alternate_screen() {
    let t = TestServer::start();
    let id = t.split(
        "=main:0",
        "printf 'below\\n'; printf '\\033[?1049h\\033[H\\033[2;3Halt'; exec sleep 300",
    );
    assert!(wait_until(DEADLINE, || {
        t.server
            .capture(id)
            .map(|c| c.alternate_on && c.text.contains("alt"))
            .unwrap_or(false)
    }));
    let c = t.server.capture(id).unwrap();
    assert!(!c.text.contains("below"), "{:?}", c.text);
    assert_eq!((c.cursor_x, c.cursor_y), (5, 1));
    assert!(t.server.pane(id).unwrap().alternate_on);
}

#[test]
fn capture_of_a_vanished_pane_says_so() {
    let t = TestServer::start();
    let e = t.server.capture(PaneId(4242)).unwrap_err();
    assert!(e.is_target_gone(), "{e:?}");
}

#[test]
fn clients_are_listed() {
    let mut t = TestServer::start();
    assert!(t.server.list_clients().unwrap().is_empty());
    let name = t.attach_client("main");
    let clients = t.server.list_clients().unwrap();
    assert_eq!(clients.len(), 1);
    let c = &clients[0];
    assert_eq!(c.name, name);
    assert_eq!(c.session_id, Some(SessionId(0)));
    assert_eq!(c.session_name, "main");
    assert_eq!(c.pane_id, Some(PaneId(0)));
    assert!(!c.control_mode);
    assert!(c.pid > 1);
    assert!(c.flags.contains("attached"), "{}", c.flags);
    assert_eq!(t.server.pane(PaneId(0)).unwrap().session_attached, 1);
}
