//! Key bindings against a real tmux server: ours bound and removed, the
//! user's and tmux's defaults intact.

mod common;

use common::TestServer;
use tend_tmux::keys::{action_command, KEY_ACTIONS};
use tend_tmux::{Binding, ListedBinding};

fn ours(t: &TestServer) -> Vec<(String, String)> {
    let mut v: Vec<_> = t
        .server
        .list_bindings(None)
        .unwrap()
        .into_iter()
        .filter(ListedBinding::is_ours)
        .map(|b| (b.table, b.key))
        .collect();
    v.sort();
    v
}

fn bindings(t: &TestServer) -> Vec<Binding> {
    t.server
        .resolve_keys()
        .unwrap()
        .into_iter()
        .filter_map(|(action, table, key)| {
            Some(Binding {
                table,
                key: key?,
                note: action.note.to_string(),
                command: action_command("/usr/bin/tend", &["key"], action.id),
            })
        })
        .collect()
}

#[test]
fn defaults_do_not_shadow_tmux_bindings() {
    let t = TestServer::start();
    let prefix = t.server.list_bindings(Some("prefix")).unwrap();
    assert!(
        prefix.len() > 20,
        "tmux's default prefix table: {}",
        prefix.len()
    );
    for a in KEY_ACTIONS {
        assert!(
            !prefix.iter().any(|b| b.key == a.default_key),
            "{} is bound by default",
            a.default_key
        );
    }
}

#[test]
fn bind_and_unbind_leave_the_users_keys() {
    let t = TestServer::start();
    // The user has their own W, and asks for tend's "next" on M-;.
    t.tmux_ok(&["bind-key", "-T", "prefix", "W", "display-message user-W"]);
    t.tmux_ok(&["set-option", "-g", "@tend-key-next", "M-;"]);
    t.tmux_ok(&["set-option", "-g", "@tend-key-picker", "none"]);
    let before: Vec<_> = t.server.list_bindings(None).unwrap();

    let report = t.server.bind_keys(&bindings(&t)).unwrap();
    assert_eq!(report.kept.len(), 1, "{report:?}");
    assert_eq!(report.kept[0].key, "W");
    assert!(report.invalid.is_empty(), "{report:?}");
    assert_eq!(
        ours(&t),
        [
            ("prefix".to_string(), "M-;".to_string()),
            ("prefix".to_string(), "T".to_string())
        ]
    );
    // The notes show in `list-keys -N` (and so in `prefix ?`).
    let notes = t.tmux_ok(&["list-keys", "-N", "-T", "prefix"]);
    assert!(
        notes.contains("tend: jump to the next agent waiting on you"),
        "{notes}"
    );

    // Binding again is idempotent.
    let again = t.server.bind_keys(&bindings(&t)).unwrap();
    assert_eq!(again.bound.len(), 2);
    assert_eq!(ours(&t).len(), 2);

    assert_eq!(t.server.unbind_keys().unwrap(), 2);
    assert!(ours(&t).is_empty());
    let after: Vec<_> = t.server.list_bindings(None).unwrap();
    assert_eq!(before, after, "every other binding is as it was");
    let w = t.tmux_ok(&["list-keys", "-T", "prefix", "W"]);
    assert!(w.contains("user-W"), "{w}");
}

#[test]
fn a_key_table_option_moves_the_keys() {
    let t = TestServer::start();
    t.tmux_ok(&["set-option", "-g", "@tend-key-table", "tend"]);
    let report = t.server.bind_keys(&bindings(&t)).unwrap();
    assert_eq!(report.bound.len(), KEY_ACTIONS.len());
    assert!(ours(&t).iter().all(|(table, _)| table == "tend"));
    assert_eq!(t.server.unbind_keys().unwrap(), KEY_ACTIONS.len());
    assert!(t.server.list_bindings(Some("tend")).unwrap().is_empty());
}

#[test]
fn unknown_keys_are_reported() {
    let t = TestServer::start();
    t.tmux_ok(&["set-option", "-g", "@tend-key-next", "Not-A-Key"]);
    let report = t.server.bind_keys(&bindings(&t)).unwrap();
    assert_eq!(report.invalid.len(), 1, "{report:?}");
    assert_eq!(report.invalid[0].0, "Not-A-Key");
    assert_eq!(report.bound.len(), KEY_ACTIONS.len() - 1);
}

#[test]
fn pressing_a_key_runs_the_action_with_the_client() {
    let mut t = TestServer::start();
    let out = t.path("pressed");
    let client = t.attach_client("main");
    let script = format!("printf '%s\\n' \"$*\" >> '{}'", out.display());
    let b = Binding {
        table: "prefix".into(),
        key: "N".into(),
        note: "test".into(),
        command: action_command("/bin/sh", &["-c", &script, "sh"], "next-waiting"),
    };
    t.server.bind_keys(&[b]).unwrap();
    // The binding runs as if the user pressed prefix N in that client.
    t.type_keys(0, b"\x02N");
    let expected = format!("next-waiting client={client} pane=%0 session=$0");
    assert!(
        common::wait_until(common::DEADLINE, || common::read(&out).contains(&expected)),
        "{:?}",
        common::read(&out)
    );
}
