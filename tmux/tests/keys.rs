//! Key bindings against a real tmux server: ours bound and removed, the
//! user's and tmux's defaults intact.

use crate::common;

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
    // The whole table, not `list-keys -T prefix W`: tmux 3.7 shows a
    // listing of exactly one binding as a message (cmd-list-keys.c: `n == 1`
    // goes to status_message_set) and prints nothing.
    let table = t.tmux_ok(&["list-keys", "-T", "prefix"]);
    let w = table
        .lines()
        .find(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words.windows(3).any(|w| w == ["-T", "prefix", "W"])
        })
        .unwrap_or_default();
    assert!(w.contains("user-W"), "{table}");
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

fn in_table(t: &TestServer, table: &str) -> Vec<Binding> {
    bindings(t)
        .into_iter()
        .map(|b| Binding {
            table: table.to_string(),
            ..b
        })
        .collect()
}

/// A table name with quotes and spaces (tmux takes any name, and
/// `list-keys` prints it bare): tend binds there, leaves the user's key in
/// it and in the table whose name starts the same, and removes exactly its
/// own. `list-keys` reads byte for byte as before.
#[test]
fn a_table_with_quotes_and_spaces_is_bound_and_cleaned_exactly() {
    let t = TestServer::start();
    let table = "my \"tend\" keys";
    t.tmux_ok(&["bind-key", "-T", table, "T", "display-message user-T"]);
    t.tmux_ok(&["bind-key", "-T", "my", "N", "display-message user-my-N"]);
    t.tmux_ok(&["bind-key", "-T", "it's", "W", "display-message user-W"]);
    let before = t.tmux_ok(&["list-keys"]);

    let report = t.server.bind_keys(&in_table(&t, table)).unwrap();
    assert_eq!(report.kept.len(), 1, "{report:?}");
    assert_eq!(
        (report.kept[0].table.as_str(), report.kept[0].key.as_str()),
        (table, "T")
    );
    assert!(report.invalid.is_empty(), "{report:?}");
    assert_eq!(
        ours(&t),
        ["A", "N", "W"]
            .iter()
            .map(|k| (table.to_string(), k.to_string()))
            .collect::<Vec<_>>()
    );
    // A second bind (tmux.conf sourced again) reads its own keys back.
    let again = t.server.bind_keys(&in_table(&t, table)).unwrap();
    assert_eq!(again.bound.len(), 3, "{again:?}");

    assert_eq!(t.server.unbind_keys().unwrap(), 3);
    assert_eq!(t.tmux_ok(&["list-keys"]), before);
    assert_eq!(
        t.tmux_ok(&["show-options", "-sqv", tend_tmux::keys::TABLES_RECORD]),
        ""
    );
}

/// tmux writes some keys its own way (`C-M-x` lists as `M-C-x` in 3.3a,
/// `0x41` as `A`, `^a` as `C-a`): a user's binding spelt differently is
/// still theirs and stays.
#[test]
fn a_users_key_spelt_differently_is_kept() {
    let t = TestServer::start();
    t.tmux_ok(&[
        "bind-key",
        "-T",
        "prefix",
        "C-M-x",
        "display-message user-x",
    ]);
    t.tmux_ok(&["bind-key", "-T", "prefix", "C-a", "display-message user-a"]);
    t.tmux_ok(&["bind-key", "-T", "prefix", "0x42", "display-message user-B"]);
    t.tmux_ok(&["set-option", "-g", "@tend-key-next", "M-C-x"]);
    t.tmux_ok(&["set-option", "-g", "@tend-key-next-session", "^a"]);
    t.tmux_ok(&["set-option", "-g", "@tend-key-working", "B"]);
    let before = t.tmux_ok(&["list-keys"]);
    let report = t.server.bind_keys(&bindings(&t)).unwrap();
    assert_eq!(report.kept.len(), 3, "{report:?}");
    assert_eq!(report.bound, [("prefix".to_string(), "A".to_string())]);
    t.server.unbind_keys().unwrap();
    assert_eq!(t.tmux_ok(&["list-keys"]), before);
}

/// A key or table name is handed to tmux as one argument and never
/// expanded: `#(…)` runs nothing, whether tmux refuses the key or takes
/// the table.
#[test]
fn hostile_key_and_table_names_run_nothing() {
    let t = TestServer::start();
    let key_file = t.pwn_dir.join("key");
    let table_file = t.pwn_dir.join("table");
    let key = format!("#(touch {})", key_file.display());
    let table = format!("#(touch {})", table_file.display());
    assert_eq!(
        t.server.key_refused(&key).unwrap(),
        Some(format!("invalid key: {key}"))
    );
    assert_eq!(t.server.key_refused("M-n").unwrap(), None);
    assert_eq!(t.server.key_refused("C-M-x").unwrap(), None);
    let mut b = in_table(&t, &table);
    b[0].key = key.clone();
    let report = t.server.bind_keys(&b).unwrap();
    assert_eq!(
        report.invalid,
        [(key.clone(), format!("unknown key: {key}"))]
    );
    assert_eq!(report.bound.len(), KEY_ACTIONS.len() - 1, "{report:?}");
    assert_eq!(t.server.unbind_keys().unwrap(), KEY_ACTIONS.len() - 1);
    assert!(ours(&t).is_empty());
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!key_file.exists() && !table_file.exists());
}

/// Two actions on one key: the second is reported, not bound over the
/// first.
#[test]
fn one_key_for_two_actions_is_reported() {
    let t = TestServer::start();
    t.tmux_ok(&["set-option", "-g", "@tend-key-working", "C-n"]);
    t.tmux_ok(&["set-option", "-g", "@tend-key-picker", "^n"]);
    let report = t.server.bind_keys(&bindings(&t)).unwrap();
    assert_eq!(
        report.invalid,
        [(
            "^n".to_string(),
            "the same key as \"tend: jump to the next working agent\"; give each its own key"
                .to_string()
        )]
    );
    assert_eq!(report.bound.len(), 3);
}
