//! Install and uninstall on users' files: bytes kept, layouts followed,
//! wrong shapes named by line.

use std::path::PathBuf;

use serde_json::Value;

use super::super::spec::{desired_groups, spec};
use super::super::Agent;
use super::super::MARKER;
use super::*;

fn p() -> PathBuf {
    PathBuf::from("/x/settings.json")
}

fn install(text: &str, agent: Agent) -> String {
    let s = spec(agent);
    let desired = desired_groups(s, "/opt/tend");
    let cleaned = remove_ours(text, &p(), s).unwrap_or_else(|e| panic!("{}", e.message));
    insert_groups(&cleaned, &p(), s, &desired).unwrap_or_else(|e| panic!("{}", e.message))
}

fn uninstall(text: &str, agent: Agent) -> String {
    remove_ours(text, &p(), spec(agent)).unwrap_or_else(|e| panic!("{}", e.message))
}

#[test]
fn round_trip_keeps_user_bytes() {
    let user = "{\n    \"model\": \"x\",\n    \"hooks\": {\n        \"SessionStart\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}\n        ]\n    }\n}\n";
    let installed = install(user, Agent::Claude);
    assert!(installed.contains(MARKER));
    assert!(serde_json::from_str::<Value>(&installed).is_ok());
    assert_eq!(uninstall(&installed, Agent::Claude), user);
}

#[test]
fn compact_file_round_trips() {
    let user = r#"{"a":1,"b":[2]}"#;
    let installed = install(user, Agent::Codex);
    assert!(!installed.contains('\n'), "stays on one line: {installed}");
    assert!(
        serde_json::from_str::<Value>(&installed).is_ok(),
        "{installed}"
    );
    assert_eq!(uninstall(&installed, Agent::Codex), user);
}

#[test]
fn compact_containers_keep_their_separator() {
    let user = "{\n  \"hooks\": {\"Stop\": [], \"SessionEnd\": [{\"hooks\": []}]}\n}\n";
    let installed = install(user, Agent::Claude);
    assert_eq!(
        installed,
        "{\n  \"hooks\": {\"Stop\": [], \"SessionEnd\": [{\"hooks\": []},{\"hooks\":[{\"type\":\"command\",\"command\":\"'/opt/tend' hooks run claude SessionEnd >/dev/null 2>&1 || true # tend-managed\",\"timeout\":5}]}], \"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"'/opt/tend' hooks run claude SessionStart >/dev/null 2>&1 || true # tend-managed\",\"timeout\":5}]}]}\n}\n"
    );
    assert_eq!(uninstall(&installed, Agent::Claude), user);
}

/// The layout the library gives tend's entries: the file's own indent
/// unit, after the user's items, in the file's line endings.
#[test]
fn new_entries_follow_the_files_layout() {
    let user = "{\r\n    \"model\": \"x\"\r\n}\r\n";
    let installed = install(user, Agent::Claude);
    let want = "{\r\n    \"model\": \"x\",\r\n    \"hooks\": {\r\n        \"SessionStart\": [\r\n            {\r\n                \"hooks\": [\r\n                    {\r\n                        \"type\": \"command\",\r\n                        \"command\": \"'/opt/tend' hooks run claude SessionStart >/dev/null 2>&1 || true # tend-managed\",\r\n                        \"timeout\": 5\r\n                    }\r\n                ]\r\n            }\r\n        ],\r\n        \"SessionEnd\": [\r\n            {\r\n                \"hooks\": [\r\n                    {\r\n                        \"type\": \"command\",\r\n                        \"command\": \"'/opt/tend' hooks run claude SessionEnd >/dev/null 2>&1 || true # tend-managed\",\r\n                        \"timeout\": 5\r\n                    }\r\n                ]\r\n            }\r\n        ]\r\n    }\r\n}\r\n";
    assert_eq!(installed, want);
    assert_eq!(uninstall(&installed, Agent::Claude), user);
}

/// Gemini CLI strips comments from its settings, so tend keeps them;
/// the other agents read plain JSON and a comment is refused.
#[test]
fn comments_are_kept_where_the_format_has_them() {
    let user = "{\n  // my theme\n  \"theme\": \"GitHub\", /* dark */\n  \"hooks\": {\n    // mine\n    \"SessionEnd\": [\n      {\"hooks\": [{\"name\": \"n\", \"type\": \"command\", \"command\": \"x\"}]} // keep\n    ]\n  }\n}\n";
    let installed = install(user, Agent::Gemini);
    assert!(installed.contains("// my theme") && installed.contains("// keep"));
    assert_eq!(uninstall(&installed, Agent::Gemini), user);
    let e = match remove_ours(user, &p(), spec(Agent::Claude)) {
        Err(e) => e.message,
        Ok(t) => panic!("accepted a comment for Claude Code: {t}"),
    };
    assert!(e.contains("line 2") && e.contains("comments"), "{e}");
}

#[test]
fn wrong_shapes_name_the_line() {
    let s = spec(Agent::Claude);
    let err = |t: &str| match parse_checked(t, &p(), s) {
        Err(e) => e.message,
        Ok(_) => panic!("accepted {t}"),
    };
    assert!(err("[1]").contains("holds an array, expected a JSON object"));
    let e = err("{\n  \"a\": 1,\n  \"hooks\": 3\n}");
    assert!(
        e.contains("\"hooks\" (line 3) is a number, boolean or null"),
        "{e}"
    );
    let d = desired_groups(s, "/t");
    let e = match insert_groups("{\"hooks\": {\n\"SessionEnd\": {}}}", &p(), s, &d) {
        Err(e) => e.message,
        Ok(t) => panic!("accepted {t}"),
    };
    assert!(
        e.contains("\"hooks\".\"SessionEnd\" (line 2) is an object"),
        "{e}"
    );
}

/// A user's settings (their own keys and hooks, some on tend's events)
/// in one of the layouts people use.
fn user_file() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let events = [
        "SessionStart",
        "Stop",
        "PreToolUse",
        "SessionEnd",
        "Interrupt",
    ];
    (
        proptest::sample::subsequence(events.to_vec(), 0..=events.len()),
        any::<bool>(),
        0usize..4,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(evs, model, layout, crlf, newline_at_end)| {
            let mut v = serde_json::json!({});
            if model {
                v["model"] = "opus".into();
            }
            if !evs.is_empty() {
                let mut hooks = serde_json::Map::new();
                for e in evs {
                    let group = serde_json::json!([{"hooks": [
                        {"type": "command", "command": format!("echo {e}")}]}]);
                    hooks.insert(e.to_string(), group);
                }
                v["hooks"] = Value::Object(hooks);
            }
            let text = match layout {
                0 => v.to_string(),
                n => {
                    let unit: &[u8] = [b"  ".as_slice(), b"    ", b"\t"][n - 1];
                    let mut out = Vec::new();
                    let f = serde_json::ser::PrettyFormatter::with_indent(unit);
                    let mut ser = serde_json::Serializer::with_formatter(&mut out, f);
                    serde::Serialize::serialize(&v, &mut ser).unwrap_or_default();
                    String::from_utf8(out).unwrap_or_default()
                }
            };
            let text = if newline_at_end { text + "\n" } else { text };
            if crlf {
                text.replace('\n', "\r\n")
            } else {
                text
            }
        })
}

proptest::proptest! {
    #[test]
    fn install_then_uninstall_gives_the_file_back(user in user_file()) {
        for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
            let installed = install(&user, agent);
            let v: Value = serde_json::from_str(&installed)
                .unwrap_or_else(|e| panic!("{e}: {installed}"));
            let n = spec(agent).events.len();
            proptest::prop_assert_eq!(installed.matches(MARKER).count(), n);
            let hooks = v["hooks"].as_object().map_or(0, |h| h.len());
            proptest::prop_assert!(hooks >= n, "{}", installed);
            // The file's line endings, throughout.
            let crlf = installed.matches("\r\n").count();
            if user.contains("\r\n") {
                proptest::prop_assert_eq!(crlf, installed.matches('\n').count());
            } else {
                proptest::prop_assert_eq!(crlf, 0);
            }
            proptest::prop_assert_eq!(uninstall(&installed, agent), user.clone());
        }
    }
}
