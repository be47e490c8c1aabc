//! `tend hooks install|uninstall|status` against a temporary HOME holding
//! real-format settings files with the user's own hooks: install, idempotence,
//! dry run, status, uninstall restoring the file byte for byte, corrupt files,
//! the agents' directory overrides, and the installed command being harmless
//! when tend is not running.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const MARKER: &str = "# tend-managed";

const CLAUDE_EVENTS: &[&str] = &["SessionStart", "SessionEnd"];
const CODEX_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "Interrupt",
    "SessionEnd",
];
const GEMINI_EVENTS: &[&str] = &["SessionStart", "SessionEnd"];

/// A Claude Code user settings file as people have them: permissions, env,
/// and hooks of their own, including one on an event tend also uses.
const CLAUDE_SETTINGS: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
    "deny": ["Read(./.env)"]
  },
  "env": {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0"
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "jq -r '.tool_input.command' >> ~/.claude/bash-log.txt"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "echo 'remember: run the tests'"
          }
        ]
      }
    ],
    "Notification": [
      {
        "matcher": "permission_prompt",
        "hooks": [
          {
            "type": "command",
            "command": "notify-send 'Claude needs you'",
            "timeout": 10
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh"
  }
}
"#;

/// A Codex `hooks.json` (4-space indentation) with the user's hooks,
/// including one on `Stop`, which tend also uses.
const CODEX_HOOKS: &str = r#"{
    "description": "My Codex hooks",
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": "/usr/bin/python3 ~/.codex/hooks/pre_tool_use_policy.py",
                        "statusMessage": "Checking Bash command"
                    }
                ]
            }
        ],
        "Stop": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "/usr/bin/python3 ~/.codex/hooks/stop_continue.py",
                        "timeout": 30
                    }
                ]
            }
        ]
    }
}
"#;

const CODEX_CONFIG: &str = r#"model = "gpt-5-codex"
approval_policy = "on-request"
notify = ["notify-send", "codex"]

[features]
hooks = true
"#;

/// A Gemini CLI settings file (tab-indented) with the user's hooks and a
/// `hooks.disabled` list.
const GEMINI_SETTINGS: &str = "{\n\t\"theme\": \"GitHub\",\n\t\"hooksConfig\": {\n\t\t\"enabled\": true\n\t},\n\t\"hooks\": {\n\t\t\"BeforeTool\": [\n\t\t\t{\n\t\t\t\t\"matcher\": \"write_file|replace\",\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"name\": \"secret-scanner\",\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"$GEMINI_PROJECT_DIR/.gemini/hooks/block-secrets.sh\",\n\t\t\t\t\t\t\"timeout\": 5000\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t],\n\t\t\"SessionEnd\": [\n\t\t\t{\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"name\": \"save-notes\",\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"~/.gemini/hooks/save-notes.sh\"\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t],\n\t\t\"disabled\": [\"old-hook\"]\n\t}\n}\n";

fn tend() -> &'static str {
    env!("CARGO_BIN_EXE_tend")
}

/// Runs tend with `HOME` set to `home` and none of the agents' overrides.
fn run(home: &Path, args: &[&str]) -> Output {
    run_env(home, args, &[])
}

fn run_env(home: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(tend());
    c.args(args)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run tend")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "tend failed: {}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read file")
}

fn backups(path: &Path) -> Vec<PathBuf> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let prefix = format!("{name}.tend-backup-");
    let mut v: Vec<PathBuf> = std::fs::read_dir(path.parent().expect("parent"))
        .expect("read dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .collect();
    v.sort();
    v
}

/// Every hook command in the file, per event.
fn commands(text: &str) -> Vec<(String, String)> {
    let v: Value = serde_json::from_str(text).expect("valid JSON");
    let mut out = Vec::new();
    if let Some(hooks) = v.get("hooks").and_then(Value::as_object) {
        for (event, groups) in hooks {
            for g in groups.as_array().into_iter().flatten() {
                for h in g
                    .get("hooks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(c) = h.get("command").and_then(Value::as_str) {
                        out.push((event.clone(), c.to_string()));
                    }
                }
            }
        }
    }
    out
}

fn tend_commands(text: &str) -> Vec<(String, String)> {
    commands(text)
        .into_iter()
        .filter(|(_, c)| c.contains(MARKER))
        .collect()
}

fn user_commands(text: &str) -> Vec<(String, String)> {
    let mut v: Vec<_> = commands(text)
        .into_iter()
        .filter(|(_, c)| !c.contains(MARKER))
        .collect();
    v.sort();
    v
}

/// The whole install / idempotence / status / uninstall cycle on a file
/// with the user's own hooks.
fn full_cycle(agent: &str, rel: &str, original: &str, events: &[&str]) {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, original).expect("write fixture");

    let st = ok(run(home.path(), &["hooks", "status", agent]));
    assert!(st.contains("not installed"), "{st}");

    let out = ok(run(home.path(), &["hooks", "install", agent]));
    assert!(out.contains("installed tend's hooks"), "{out}");
    let installed = read(&path);
    // The user's hooks are all still there, unchanged.
    assert_eq!(user_commands(&installed), user_commands(original));
    // One tend entry per event, calling this tend by absolute path.
    let ours = tend_commands(&installed);
    let mut got: Vec<&str> = ours.iter().map(|(e, _)| e.as_str()).collect();
    got.sort_unstable();
    let mut want = events.to_vec();
    want.sort_unstable();
    assert_eq!(got, want, "{installed}");
    for (event, c) in &ours {
        assert!(
            c.starts_with(&format!("'{}' hooks run {agent} {event} ", tend())),
            "{c}"
        );
        assert!(c.contains("|| true"), "{c}");
    }
    // Backed up before the change, with the original bytes.
    let b = backups(&path);
    assert_eq!(b.len(), 1, "{b:?}");
    assert_eq!(read(&b[0]), original);

    // Idempotent: a second install changes nothing and makes no backup.
    let out = ok(run(home.path(), &["hooks", "install", agent]));
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(read(&path), installed);
    assert_eq!(backups(&path).len(), 1);

    let st = ok(run(home.path(), &["hooks", "status", agent]));
    assert!(st.contains(": installed"), "{st}");
    for e in events {
        assert!(
            st.lines()
                .any(|l| l.contains(e) && l.ends_with("installed") && !l.contains("not")),
            "{e} in {st}"
        );
    }

    // Uninstall restores the file byte for byte.
    let out = ok(run(home.path(), &["hooks", "uninstall", agent]));
    assert!(out.contains("removed tend's hooks"), "{out}");
    assert_eq!(read(&path), original);
    assert_eq!(backups(&path).len(), 2);
    let out = ok(run(home.path(), &["hooks", "uninstall", agent]));
    assert!(out.contains("nothing changed"), "{out}");
    assert_eq!(read(&path), original);
}

#[test]
fn claude_install_uninstall_keeps_the_users_file() {
    full_cycle(
        "claude",
        ".claude/settings.json",
        CLAUDE_SETTINGS,
        CLAUDE_EVENTS,
    );
}

#[test]
fn codex_install_uninstall_keeps_the_users_file() {
    full_cycle("codex", ".codex/hooks.json", CODEX_HOOKS, CODEX_EVENTS);
}

#[test]
fn gemini_install_uninstall_keeps_the_users_file() {
    full_cycle(
        "gemini",
        ".gemini/settings.json",
        GEMINI_SETTINGS,
        GEMINI_EVENTS,
    );
}

#[test]
fn gemini_entries_are_named_and_keep_the_disabled_list() {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, GEMINI_SETTINGS).expect("write");
    ok(run(home.path(), &["hooks", "install", "gemini"]));
    let v: Value = serde_json::from_str(&read(&path)).expect("json");
    assert_eq!(v["hooks"]["disabled"], serde_json::json!(["old-hook"]));
    let start = &v["hooks"]["SessionStart"][0]["hooks"][0];
    assert_eq!(start["name"], "tend-SessionStart");
    assert_eq!(start["timeout"], 5000);
    // The user's SessionEnd group comes first and is untouched.
    assert_eq!(
        v["hooks"]["SessionEnd"][0]["hooks"][0]["name"],
        "save-notes"
    );
    assert_eq!(
        v["hooks"]["SessionEnd"][1]["hooks"][0]["name"],
        "tend-SessionEnd"
    );
    // Tabs kept for tend's lines too.
    assert!(read(&path).contains("\n\t\t\"SessionStart\": ["));
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, CLAUDE_SETTINGS).expect("write");

    let out = ok(run(
        home.path(),
        &["hooks", "install", "claude", "--dry-run"],
    ));
    assert!(
        out.starts_with(&format!(
            "--- {}\n+++ {}\n@@ -",
            path.display(),
            path.display()
        )),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with('+') && l.contains(MARKER)),
        "{out}"
    );
    assert!(
        !out.lines().any(|l| l.starts_with("-  ")),
        "removes nothing: {out}"
    );
    assert!(out.contains("dry run, nothing written"), "{out}");
    assert_eq!(read(&path), CLAUDE_SETTINGS);
    assert!(backups(&path).is_empty());

    ok(run(home.path(), &["hooks", "install", "claude"]));
    let installed = read(&path);
    let out = ok(run(
        home.path(),
        &["hooks", "uninstall", "claude", "--dry-run"],
    ));
    assert!(
        out.lines()
            .any(|l| l.starts_with('-') && l.contains(MARKER)),
        "{out}"
    );
    assert!(
        !out.lines().any(|l| l.starts_with("+ ")),
        "adds nothing: {out}"
    );
    assert_eq!(read(&path), installed);
    assert_eq!(backups(&path).len(), 1);
}

#[test]
fn dry_run_on_a_missing_file_creates_nothing() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = ok(run(
        home.path(),
        &["hooks", "install", "codex", "--dry-run"],
    ));
    assert!(out.contains("+    \"Interrupt\": ["), "{out}");
    assert!(out.starts_with("--- /dev/null\n+++ "), "{out}");
    assert!(out.contains("\n@@ -0,0 +1,"), "{out}");
    assert!(!home.path().join(".codex").exists());
}

#[test]
fn fresh_home_install_creates_and_uninstall_removes() {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".codex/hooks.json");
    ok(run(home.path(), &["hooks", "install", "codex"]));
    let text = read(&path);
    let v: Value = serde_json::from_str(&text).expect("json");
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["hooks"], "Codex rejects unknown top-level keys");
    assert_eq!(tend_commands(&text).len(), CODEX_EVENTS.len());
    assert_eq!(
        v["hooks"]["SessionStart"][0]["matcher"],
        "startup|resume|clear"
    );
    assert_eq!(v["hooks"]["Interrupt"][0]["hooks"][0]["timeout"], 3);
    assert!(backups(&path).is_empty(), "nothing to back up");
    let out = ok(run(home.path(), &["hooks", "uninstall", "codex"]));
    assert!(out.contains("held nothing else"), "{out}");
    assert!(!path.exists());
}

#[test]
fn status_tells_partial_and_outdated_per_event() {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".codex/hooks.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, CODEX_HOOKS).expect("write");
    ok(run(home.path(), &["hooks", "install", "codex"]));

    // The user deletes tend's Interrupt entry and edits its Stop entry.
    let mut v: Value = serde_json::from_str(&read(&path)).expect("json");
    let hooks = v["hooks"].as_object_mut().expect("hooks");
    hooks.remove("Interrupt");
    let stop = hooks["Stop"].as_array_mut().expect("stop");
    stop[1]["hooks"][0]["timeout"] = Value::from(99);
    std::fs::write(&path, serde_json::to_string_pretty(&v).expect("ser")).expect("write");

    let st = ok(run(home.path(), &["hooks", "status", "codex"]));
    assert!(st.contains("partially installed"), "{st}");
    let line = |e: &str| {
        st.lines()
            .find(|l| l.trim_start().starts_with(e))
            .unwrap_or("")
            .to_string()
    };
    assert!(line("Interrupt").contains("not installed"), "{st}");
    assert!(line("Stop").contains("outdated"), "{st}");
    assert!(line("UserPromptSubmit").ends_with("installed"), "{st}");
    assert!(st.contains("/hooks"), "mentions Codex's trust review: {st}");

    // Install repairs it, keeping the user's hooks.
    ok(run(home.path(), &["hooks", "install", "codex"]));
    let st = ok(run(home.path(), &["hooks", "status", "codex"]));
    assert!(
        st.contains("codex hooks") && st.contains(": installed"),
        "{st}"
    );
    assert_eq!(user_commands(&read(&path)), user_commands(CODEX_HOOKS));
    ok(run(home.path(), &["hooks", "uninstall", "codex"]));
    assert_eq!(user_commands(&read(&path)), user_commands(CODEX_HOOKS));
    assert!(tend_commands(&read(&path)).is_empty());
}

#[test]
fn uninstall_takes_only_tends_handler_from_a_shared_group() {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    ok(run(home.path(), &["hooks", "install", "claude"]));
    // The user adds a handler of theirs to tend's group.
    let mut v: Value = serde_json::from_str(&read(&path)).expect("json");
    v["hooks"]["SessionEnd"][0]["hooks"]
        .as_array_mut()
        .expect("hooks")
        .push(serde_json::json!({"type": "command", "command": "echo bye"}));
    std::fs::write(&path, serde_json::to_string_pretty(&v).expect("ser")).expect("write");
    ok(run(home.path(), &["hooks", "uninstall", "claude"]));
    let text = read(&path);
    assert_eq!(
        commands(&text),
        [("SessionEnd".to_string(), "echo bye".to_string())]
    );
}

#[test]
fn compact_one_line_file_round_trips() {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let original = r#"{"model":"sonnet","hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}"#;
    std::fs::write(&path, original).expect("write");
    ok(run(home.path(), &["hooks", "install", "claude"]));
    assert_eq!(tend_commands(&read(&path)).len(), 2);
    ok(run(home.path(), &["hooks", "uninstall", "claude"]));
    assert_eq!(read(&path), original);
}

#[test]
fn corrupt_files_are_refused_with_file_and_line() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "claude",
            ".claude/settings.json",
            "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [],\n  }\n}\n",
        ),
        (
            "codex",
            ".codex/hooks.json",
            "{\n  \"hooks\": {\n    \"Stop\": [\n      {\"hooks\": [}\n    ]\n  }\n}\n",
        ),
        // Gemini CLI reads comments, but not a trailing comma.
        (
            "gemini",
            ".gemini/settings.json",
            "{\n  // my theme\n  \"theme\": \"GitHub\",\n}\n",
        ),
    ];
    for (agent, rel, text) in cases {
        let home = tempfile::tempdir().expect("tempdir");
        let path = home.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        for args in [
            vec!["hooks", "install", agent],
            vec!["hooks", "install", agent, "--dry-run"],
            vec!["hooks", "uninstall", agent],
            vec!["hooks", "status", agent],
        ] {
            let o = run(home.path(), &args);
            assert!(!o.status.success(), "{args:?} should fail");
            let err = stderr(&o);
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains("line "), "{err}");
            assert!(err.contains("has not changed the file"), "{err}");
            assert_eq!(read(&path), *text, "{args:?} changed the file");
            assert!(backups(&path).is_empty(), "{args:?} made a backup");
        }
    }
    // Claude Code reads plain JSON: a comment is refused, and the error
    // says why.
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let text = "{\n  // my model\n  \"model\": \"opus\"\n}\n";
    std::fs::write(&path, text).expect("write");
    let o = run(home.path(), &["hooks", "install", "claude"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("line 2") && err.contains("comments are not plain JSON"),
        "{err}"
    );
    assert_eq!(read(&path), text);
}

/// Gemini CLI strips comments from settings.json before reading it, so tend
/// edits such a file too and keeps every comment.
#[test]
fn gemini_comments_are_kept() {
    let commented = GEMINI_SETTINGS
        .replacen("{\n", "{\n\t// Look and feel.\n", 1)
        .replace(
            "\t\t\"disabled\"",
            "\t\t/* Off for now. */\n\t\t\"disabled\"",
        )
        .replace("\"old-hook\"]", "\"old-hook\"] // see notes");
    full_cycle_jsonc("gemini", ".gemini/settings.json", &commented);

    // The notes read a commented file too.
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &path,
        commented.replace("\"enabled\": true", "\"enabled\": false"),
    )
    .expect("write");
    let st = ok(run(home.path(), &["hooks", "status", "gemini"]));
    assert!(st.contains("hooks system is turned off"), "{st}");
}

/// `full_cycle` for a file with comments (which `serde_json` cannot read).
fn full_cycle_jsonc(agent: &str, rel: &str, original: &str) {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, original).expect("write fixture");
    let out = ok(run(home.path(), &["hooks", "install", agent]));
    assert!(out.contains("installed tend's hooks"), "{out}");
    let installed = read(&path);
    let comments = original
        .lines()
        .filter_map(|l| l.find("//").or_else(|| l.find("/*")).map(|i| &l[i..]));
    for comment in comments {
        assert!(installed.contains(comment), "{comment:?} lost: {installed}");
    }
    assert_eq!(installed.matches(MARKER).count(), 2, "{installed}");
    let st = ok(run(home.path(), &["hooks", "status", agent]));
    assert!(st.contains(": installed"), "{st}");
    let out = ok(run(home.path(), &["hooks", "install", agent]));
    assert!(out.contains("already installed"), "{out}");
    ok(run(home.path(), &["hooks", "uninstall", agent]));
    assert_eq!(read(&path), original);
}

#[test]
fn wrong_shapes_are_refused() {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    for text in [
        "[1, 2]\n",
        "{\"hooks\": \"none\"}\n",
        "{\"hooks\": {\"SessionStart\": {\"hooks\": []}}}\n",
    ] {
        std::fs::write(&path, text).expect("write");
        let o = run(home.path(), &["hooks", "install", "claude"]);
        assert!(!o.status.success(), "{text}");
        let err = stderr(&o);
        assert!(err.contains("expected"), "{err}");
        assert_eq!(read(&path), text);
    }
}

#[test]
fn the_agents_directory_overrides_are_honoured() {
    let home = tempfile::tempdir().expect("tempdir");
    let other = tempfile::tempdir().expect("tempdir");
    let cases: &[(&str, &str, PathBuf)] = &[
        (
            "claude",
            "CLAUDE_CONFIG_DIR",
            other.path().join("settings.json"),
        ),
        ("codex", "CODEX_HOME", other.path().join("hooks.json")),
        (
            "gemini",
            "GEMINI_CLI_HOME",
            other.path().join(".gemini/settings.json"),
        ),
    ];
    for (agent, var, expected) in cases {
        let out = ok(run_env(
            home.path(),
            &["hooks", "install", agent],
            &[(var, other.path())],
        ));
        assert!(out.contains(&expected.display().to_string()), "{out}");
        assert!(!tend_commands(&read(expected)).is_empty());
        let st = ok(run_env(
            home.path(),
            &["hooks", "status", agent],
            &[(var, other.path())],
        ));
        assert!(st.contains(": installed"), "{st}");
    }
    assert_eq!(
        std::fs::read_dir(home.path()).expect("dir").count(),
        0,
        "nothing written under HOME"
    );
}

#[test]
fn codex_status_warns_when_hooks_are_turned_off() {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join(".codex");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("config.toml"),
        CODEX_CONFIG.replace("hooks = true", "hooks = false"),
    )
    .expect("write");
    let st = ok(run(home.path(), &["hooks", "status", "codex"]));
    assert!(st.contains("turned off"), "{st}");
    std::fs::write(dir.join("config.toml"), CODEX_CONFIG).expect("write");
    let st = ok(run(home.path(), &["hooks", "status", "codex"]));
    assert!(!st.contains("turned off"), "{st}");
    assert_eq!(
        read(&dir.join("config.toml")),
        CODEX_CONFIG,
        "config.toml untouched"
    );
}

/// The installed command, run the way the agents run it (a shell, the event
/// on stdin), is harmless with no tend daemon: exit 0, no output, quick.
#[test]
fn installed_commands_are_harmless_without_a_daemon() {
    let home = tempfile::tempdir().expect("tempdir");
    ok(run(home.path(), &["hooks", "install", "codex"]));
    ok(run(home.path(), &["hooks", "install", "claude"]));
    let mut all = tend_commands(&read(&home.path().join(".codex/hooks.json")));
    all.extend(tend_commands(&read(
        &home.path().join(".claude/settings.json"),
    )));
    let event = r#"{"session_id":"019a-test","hook_event_name":"X","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
    for (name, command) in &all {
        for in_tmux in [true, false] {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(command)
                .env("HOME", home.path())
                .env("XDG_RUNTIME_DIR", home.path())
                .env_remove("ZELLIJ_PANE_ID")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if in_tmux {
                c.env("TMUX_PANE", "%99")
                    .env("TMUX", home.path().join("no-such-socket,1,0"));
            } else {
                c.env_remove("TMUX_PANE").env_remove("TMUX");
            }
            let started = Instant::now();
            let mut child = c.spawn().expect("spawn sh");
            {
                use std::io::Write;
                let mut stdin = child.stdin.take().expect("stdin");
                stdin.write_all(event.as_bytes()).expect("write event");
            }
            let o = child.wait_with_output().expect("wait");
            assert!(o.status.success(), "{name}: {}", o.status);
            assert!(o.stdout.is_empty(), "{name}: stdout {:?}", stdout(&o));
            assert!(o.stderr.is_empty(), "{name}: stderr {:?}", stderr(&o));
            assert!(
                started.elapsed() < Duration::from_secs(3),
                "{name} took {:?}",
                started.elapsed()
            );
        }
    }
}

/// Even a tend binary that has gone away leaves the agent undisturbed.
#[test]
fn installed_command_survives_a_missing_binary() {
    let home = tempfile::tempdir().expect("tempdir");
    ok(run(home.path(), &["hooks", "install", "claude"]));
    let (_, command) = tend_commands(&read(&home.path().join(".claude/settings.json")))
        .into_iter()
        .next()
        .expect("a command");
    let gone = command.replace(tend(), "/nonexistent/tend");
    let o = Command::new("sh")
        .arg("-c")
        .arg(&gone)
        .stdin(Stdio::null())
        .output()
        .expect("sh");
    assert!(o.status.success());
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
}

#[test]
fn crlf_file_stays_crlf_and_round_trips() {
    let home = tempfile::tempdir().expect("tempdir");
    let path = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let original = CLAUDE_SETTINGS.replace('\n', "\r\n");
    std::fs::write(&path, &original).expect("write");
    ok(run(home.path(), &["hooks", "install", "claude"]));
    let installed = read(&path);
    assert_eq!(
        installed.matches('\n').count(),
        installed.matches("\r\n").count()
    );
    assert_eq!(tend_commands(&installed).len(), 2);
    ok(run(home.path(), &["hooks", "uninstall", "claude"]));
    assert_eq!(read(&path), original);
}

/// Dotfile managers link settings files; tend writes through the link and
/// keeps it a link.
#[test]
fn symlinked_settings_stay_linked() {
    let home = tempfile::tempdir().expect("tempdir");
    let dotfiles = home.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).expect("mkdir");
    std::fs::create_dir_all(home.path().join(".claude")).expect("mkdir");
    let real = dotfiles.join("claude-settings.json");
    std::fs::write(&real, CLAUDE_SETTINGS).expect("write");
    let link = home.path().join(".claude/settings.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    ok(run(home.path(), &["hooks", "install", "claude"]));
    assert!(std::fs::symlink_metadata(&link)
        .expect("meta")
        .file_type()
        .is_symlink());
    assert_eq!(tend_commands(&read(&real)).len(), 2);
    ok(run(home.path(), &["hooks", "uninstall", "claude"]));
    assert!(std::fs::symlink_metadata(&link)
        .expect("meta")
        .file_type()
        .is_symlink());
    assert_eq!(read(&real), CLAUDE_SETTINGS);

    // A linked file that held only tend's hooks is kept (as `{}`), not deleted.
    std::fs::write(&real, "{}\n").expect("write");
    ok(run(home.path(), &["hooks", "install", "claude"]));
    ok(run(home.path(), &["hooks", "uninstall", "claude"]));
    assert!(real.exists());
    assert_eq!(read(&real).trim(), "{}");
}
