use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command};

use tend_detector::Registry;

use super::*;

const A: &str = "eb34e611-e881-43e1-9a20-021e02493a45";
const B: &str = "01a249fd-2644-7f41-a48c-d21dd5072d95";

fn resume(agent: &str) -> Resume {
    Registry::bundled()
        .get(agent)
        .and_then(|m| m.resume.clone())
        .expect("a [resume] table")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A real process (`sleep`) with its own environment, as an agent's, and
/// its process info as a sample has it.
struct Agent(Child, ProcessInfo);

impl Agent {
    fn start(env: &[(&str, &Path)], argv: &[&str]) -> Agent {
        let mut cmd = Command::new("sleep");
        cmd.arg("60").env_clear();
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("sleep");
        let pid = child.id();
        // Its start (field 22 of /proc/PID/stat, after the command's `)`).
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
        let after = &stat[stat.rfind(')').expect(")") + 2..];
        let start = after.split(' ').nth(19).and_then(|s| s.parse().ok());
        let info = ProcessInfo {
            pid,
            start_ticks: start,
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
            ..ProcessInfo::default()
        };
        Agent(child, info)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn stores() -> Stores {
    Stores::new(100.0)
}

fn session_file(pid: u32, start: u64, id: &str, cwd: &str) -> String {
    format!(
        r#"{{"pid":{pid},"sessionId":"{id}","cwd":"{cwd}","procStart":"{start}","version":"2.1.332","kind":"interactive","status":"idle","updatedAt":1}}"#
    )
}

#[test]
fn claude_code_s_session_file_names_the_conversation_of_that_process_only() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let agent = Agent::start(&[("HOME", &home)], &["claude"]);
    let pid = agent.1.pid;
    let start = agent.1.start_ticks.expect("start");
    let sessions = home.join(".claude/sessions");
    write(
        &sessions.join(format!("{pid}.json")),
        &session_file(pid, start, A, "/w"),
    );
    let r = resume("claude");
    let facts = stores().live(&r, &agent.1, "/w", true);
    assert_eq!(facts.session_file, Some((A.to_owned(), "/w".to_owned())));
    assert_eq!(
        facts.home,
        Some(Home {
            dir: format!("{}/.claude", home.display()),
            var: None
        })
    );
    // A file left by an earlier process with the same pid is not its.
    write(
        &sessions.join(format!("{pid}.json")),
        &session_file(pid, start + 1, A, "/w"),
    );
    assert_eq!(stores().live(&r, &agent.1, "/w", true).session_file, None);
    // Nor is a link to one, or a file anyone may write.
    let real = tmp.path().join("elsewhere.json");
    write(&real, &session_file(pid, start, A, "/w"));
    std::fs::remove_file(sessions.join(format!("{pid}.json"))).expect("rm");
    std::os::unix::fs::symlink(&real, sessions.join(format!("{pid}.json"))).expect("link");
    assert_eq!(stores().live(&r, &agent.1, "/w", true).session_file, None);
    std::fs::remove_file(sessions.join(format!("{pid}.json"))).expect("rm");
    write(
        &sessions.join(format!("{pid}.json")),
        &session_file(pid, start, A, "/w"),
    );
    let open = std::fs::Permissions::from_mode(0o666);
    std::fs::set_permissions(sessions.join(format!("{pid}.json")), open).expect("chmod");
    assert_eq!(stores().live(&r, &agent.1, "/w", true).session_file, None);
}

#[test]
fn the_agent_s_own_variable_names_its_folder_and_the_store_says_where_a_conversation_belongs() {
    let tmp = tempfile::tempdir().expect("tmp");
    let cfg = tmp.path().join("cfg");
    let agent = Agent::start(
        &[
            ("HOME", &tmp.path().join("home")),
            ("CLAUDE_CONFIG_DIR", &cfg),
        ],
        &["claude"],
    );
    let r = resume("claude");
    let home = stores().live(&r, &agent.1, "/w", false).home.expect("home");
    assert_eq!(
        home,
        Home {
            dir: cfg.display().to_string(),
            var: Some("CLAUDE_CONFIG_DIR".into())
        }
    );
    assert_eq!(stores().saved(&r, &home, A, "/w"), Saved::Missing);
    write(
        &cfg.join("projects/-w").join(format!("{A}.jsonl")),
        "{\"type\":\"mode\",\"sessionId\":\"x\"}\n{\"type\":\"user\",\"cwd\":\"/w\"}\n",
    );
    assert_eq!(
        stores().saved(&r, &home, A, "/w"),
        Saved::Found {
            folder: "/w".into()
        }
    );
    assert_eq!(stores().saved(&r, &home, B, "/w"), Saved::Missing);
    // A store someone else may write is not read, and says so.
    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    match stores().saved(&r, &home, A, "/w") {
        Saved::Unreadable(why) => assert!(why.contains("anyone may write it"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn codex_s_newest_conversation_for_the_folder_since_it_started() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("codex");
    let agent = Agent::start(&[("CODEX_HOME", &home)], &["codex"]);
    let rollout = |day: &str, id: &str, cwd: &str| {
        let path = home.join(format!(
            "sessions/2026/12/{day}/rollout-2026-12-{day}T06-14-16-{id}.jsonl"
        ));
        write(
            &path,
            &format!(
                "{{\"type\":\"session_meta\",\"payload\":{{\"id\":\"{id}\",\"cwd\":\"{cwd}\"}}}}\n"
            ),
        );
        path
    };
    let r = resume("codex");
    let old = rollout("05", A, "/w");
    // Written before the agent started: not its.
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    File::options()
        .write(true)
        .open(&old)
        .and_then(|f| f.set_modified(long_ago))
        .expect("age");
    assert_eq!(stores().live(&r, &agent.1, "/w", true).newest, None);
    rollout("06", B, "/other");
    assert_eq!(
        stores().live(&r, &agent.1, "/w", true).newest,
        None,
        "another folder's"
    );
    let c = "11111111-2222-4333-8444-555555555555";
    rollout("06", c, "/w");
    assert_eq!(
        stores().live(&r, &agent.1, "/w", true).newest.as_deref(),
        Some(c)
    );
    // Not asked (another pane runs Codex in /w): not looked for.
    assert_eq!(stores().live(&r, &agent.1, "/w", false).newest, None);
    let home = Home {
        dir: home.display().to_string(),
        var: Some("CODEX_HOME".into()),
    };
    assert_eq!(
        stores().saved(&r, &home, A, "/w"),
        Saved::Found {
            folder: "/w".into()
        }
    );
}

#[test]
fn a_folder_beside_the_conversation_names_where_it_belongs() {
    let tmp = tempfile::tempdir().expect("tmp");
    let text = "command = [\"gemini\", \"--resume\", \"{id}\"]\n\
        id = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'\n\
        home = [\"~/.gemini\"]\ncite = \"c\"\n[live]\nnewest = true\ncite = \"c\"\n\
        [store]\nfiles = \"tmp/*/chats/session-*.jsonl\"\nid = \"/sessionId\"\n\
        folder_file = \"../.project_root\"\ncite = \"c\"\n";
    let manifest = format!(
        "id = \"g\"\nname = \"G\"\n[resume]\n{}",
        text.replace("[live]", "[resume.live]")
            .replace("[store]", "[resume.store]")
    );
    let r = tend_detector::Manifest::parse("g.toml", &manifest)
        .expect("parses")
        .resume
        .expect("resume");
    let home = tmp.path().join(".gemini");
    write(&home.join("tmp/work/.project_root"), "/w/work");
    write(
        &home.join("tmp/work/chats/session-2026-12-06T06-16-53f27563.jsonl"),
        &format!("{{\"sessionId\":\"{A}\",\"kind\":\"main\"}}\n"),
    );
    let h = Home {
        dir: home.display().to_string(),
        var: None,
    };
    assert_eq!(
        stores().saved(&r, &h, A, "/w/work"),
        Saved::Found {
            folder: "/w/work".into()
        }
    );
    assert_eq!(stores().saved(&r, &h, B, "/w/work"), Saved::Missing);
}

#[test]
fn another_user_s_file_is_never_read() {
    if nix::unistd::getuid().as_raw() != 0 {
        // Giving a file away takes root; as another user this case is the
        // same check as an open mode, tested above.
        println!("not root: another user's file cannot be made here");
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let cfg = tmp.path().join("cfg");
    let path = cfg.join("projects/-w").join(format!("{A}.jsonl"));
    write(&path, "{\"cwd\":\"/w\"}\n");
    nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(65534)), None).expect("chown");
    let home = Home {
        dir: cfg.display().to_string(),
        var: None,
    };
    assert_eq!(
        stores().saved(&resume("claude"), &home, A, "/w"),
        Saved::Missing
    );
}

/// Files of a store: each path and its text.
type Files = &'static [(&'static str, &'static str)];

/// Each agent's store as seen live (the `cite`s of its manifest's
/// `[resume]` table), cut to the fields tend reads: files under its folder,
/// `{ID}`, `{ID8}` (the id's first 8 characters), `{FOLDER}`, `{MD5}` (the
/// folder's) and `{PID}` filled in.
const STORES: &[(&str, &str, Files)] = &[
    (
        "claude",
        UUID_ID,
        &[(
            "projects/-w/{ID}.jsonl",
            "{\"type\":\"mode\",\"sessionId\":\"{ID}\"}\n{\"type\":\"user\",\"cwd\":\"{FOLDER}\",\"sessionId\":\"{ID}\"}\n",
        )],
    ),
    (
        "codex",
        UUID_ID,
        &[(
            "sessions/2026/12/06/rollout-2026-12-06T06-14-16-{ID}.jsonl",
            "{\"type\":\"session_meta\",\"payload\":{\"id\":\"{ID}\",\"cwd\":\"{FOLDER}\"}}\n",
        )],
    ),
    (
        "gemini",
        UUID_ID,
        &[
            (
                "tmp/work/chats/session-2026-12-06T06-16-{ID8}.jsonl",
                "{\"sessionId\":\"{ID}\",\"projectHash\":\"750f\",\"kind\":\"main\"}\n",
            ),
            ("tmp/work/.project_root", "{FOLDER}"),
        ],
    ),
    (
        "qwen",
        UUID_ID,
        &[(
            "projects/-w/chats/{ID}.jsonl",
            "{\"sessionId\":\"{ID}\",\"type\":\"user\",\"cwd\":\"{FOLDER}\"}\n",
        )],
    ),
    (
        "pi",
        UUID_ID,
        &[(
            "sessions/--w--/2026-12-06T07-33-46-447Z_{ID}.jsonl",
            "{\"type\":\"session\",\"version\":3,\"id\":\"{ID}\",\"cwd\":\"{FOLDER}\"}\n",
        )],
    ),
    (
        "vibe",
        UUID_ID,
        &[(
            "logs/session/unified/{ID}/meta.json",
            "{\"session_id\":\"{ID}\",\"environment\":{\"working_directory\":\"{FOLDER}\"}}",
        )],
    ),
    (
        "kimi",
        UUID_ID,
        &[(
            "sessions/{MD5}/{ID}/context.jsonl",
            "{\"role\":\"_system_prompt\",\"content\":\"You are Kimi Code CLI\"}\n",
        )],
    ),
    (
        "cline",
        "1796542660599_507q8",
        &[
            (
                "sessions/{ID}/{ID}.json",
                "{\"version\":1,\"session_id\":\"{ID}\",\"pid\":{PID},\"cwd\":\"{FOLDER}\"}",
            ),
            ("sessions/{ID}/{ID}.messages.json", "[]"),
        ],
    ),
];

const UUID_ID: &str = "a661d35e-69dc-9e26-3642-7fcccce2a527";

#[test]
fn every_agent_s_store_gives_its_conversation_and_folder() {
    let registry = Registry::bundled();
    for m in registry.iter() {
        if m.resume.as_ref().is_some_and(|r| r.store.table.is_none()) {
            assert!(
                STORES.iter().any(|(agent, _, _)| *agent == m.id),
                "{}: a [resume] table without its store's shape in STORES",
                m.id
            );
        }
    }
    for (agent, id, files) in STORES {
        let r = resume(agent);
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path().join("store");
        let folder = "/home/u/work";
        let running = Agent::start(&[("HOME", tmp.path())], &[agent]);
        for (path, text) in *files {
            let fill = |s: &str| {
                s.replace("{ID8}", &id[..8])
                    .replace("{MD5}", &super::md5::hex(folder.as_bytes()))
                    .replace("{ID}", id)
                    .replace("{FOLDER}", folder)
                    .replace("{PID}", &running.1.pid.to_string())
            };
            write(&home.join(fill(path)), &fill(text));
        }
        let h = Home {
            dir: home.display().to_string(),
            var: None,
        };
        assert_eq!(
            stores().saved(&r, &h, id, folder),
            Saved::Found {
                folder: folder.into()
            },
            "{agent}"
        );
        let other = if id.contains('-') {
            "00000000-0000-4000-8000-000000000000"
        } else {
            "1796542660599_00000"
        };
        assert_eq!(
            stores().saved(&r, &h, other, folder),
            Saved::Missing,
            "{agent}"
        );
        assert_ne!(
            stores().saved(&r, &h, id, "/elsewhere"),
            Saved::Found {
                folder: "/elsewhere".into()
            },
            "{agent}: never another folder's"
        );
        if r.live.newest {
            let dir = Path::new(&h.dir);
            let since = boot_time().expect("boot") - 1;
            let s = stores();
            assert_eq!(
                s.newest(&r, dir, folder, since, running.1.pid).as_deref(),
                Some(*id),
                "{agent}"
            );
            assert_eq!(s.newest(&r, dir, "/elsewhere", since, running.1.pid), None);
            if r.live.pid.is_some() {
                assert_eq!(
                    s.newest(&r, dir, folder, since, running.1.pid + 1),
                    None,
                    "{agent}: another process's conversation"
                );
            }
        }
    }
}

#[test]
fn an_agent_whose_title_hides_its_environment_has_its_shell_s() {
    // Kimi CLI writes its process title over its environment: HOME is
    // read from the process that started it (the pane's shell).
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let shell = Command::new("sh")
        .args(["-c", "env -i sleep 60 & wait"])
        .env_clear()
        .env("HOME", &home)
        .spawn()
        .expect("sh");
    let shell = Agent(shell, ProcessInfo::default());
    let mut agent = None;
    for _ in 0..100 {
        let children = std::fs::read_to_string(format!(
            "/proc/{}/task/{}/children",
            shell.0.id(),
            shell.0.id()
        ))
        .unwrap_or_default();
        // The forked shell first, then `env`: the agent once it is sleep.
        let child: Option<u32> = children
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok());
        let sleeps = |pid: &u32| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
        };
        if let Some(pid) = child.filter(sleeps) {
            agent = Some(pid);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid: u32 = agent.expect("the agent started");
    let info = ProcessInfo {
        pid,
        ppid: shell.0.id(),
        ..ProcessInfo::default()
    };
    assert!(!environ(pid).contains_key("HOME"), "its own has none");
    let facts = stores().live(&resume("kimi"), &info, "/w", false);
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    assert_eq!(
        facts.home,
        Some(Home {
            dir: format!("{}/.kimi", home.display()),
            var: None
        })
    );
}

/// The agents whose store is a SQLite database: each one's schema and
/// rows as its CLI wrote them (`fixtures/`, dumped with `sqlite3 .dump`
/// after one turn), the conversation's id and folder there, and when it
/// was last written (Unix ms).
const DATABASES: &[(&str, &str, &str, &str, u64)] = &[
    (
        "opencode",
        include_str!("fixtures/opencode-1.18.33.sql"),
        "ses_db5427068ffee17Fvj7OBSJVaU",
        "/tmp/x47b/work",
        1_796_550_271_886,
    ),
    (
        "kilo",
        include_str!("fixtures/kilo-7.7.7.sql"),
        "ses_db541fc07fferU8RL3F651UFTI",
        "/tmp/x47b/work",
        1_796_550_306_921,
    ),
];

/// A SQLite database at `path` made by SQLite itself (Python's `sqlite3`)
/// from `sql`, in WAL mode as the agents keep theirs; with `logged`, the
/// writer ends without a checkpoint, so the newest rows are only in the
/// write-ahead log, as while the agent runs.
fn database(path: &Path, sql: &str, logged: bool) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let script = "import os, sqlite3, sys\n\
                  c = sqlite3.connect(sys.argv[1], isolation_level=None)\n\
                  c.execute('PRAGMA journal_mode=WAL')\n\
                  c.execute('PRAGMA wal_autocheckpoint=0')\n\
                  c.executescript(sys.stdin.read())\n\
                  if sys.argv[2] == '1':\n    os._exit(0)\n\
                  c.execute('PRAGMA wal_checkpoint(TRUNCATE)')\n\
                  c.close()\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .arg(if logged { "1" } else { "0" })
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("python3 (its sqlite3 makes the test databases)");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(sql.as_bytes())
        .expect("write sql");
    assert!(
        child.wait().expect("python3").success(),
        "sqlite3: {sql:.200}"
    );
}

/// A copy of the fixture's session row under another id and folder,
/// written at `ms`, a sub-conversation of `parent` where one is given.
fn another_session(
    fixture: &str,
    id: &str,
    new_id: &str,
    folder: &str,
    ms: u64,
    parent: Option<&str>,
) -> String {
    let row = fixture
        .lines()
        .find(|l| l.starts_with("INSERT INTO session VALUES") && l.contains(id))
        .expect("the session row");
    // The row without its id: `…VALUES('<id>','global',<workspace>,<parent>,…`.
    let parent = parent.map_or("NULL".to_owned(), |p| format!("'{p}'"));
    format!(
        "{};\nUPDATE session SET directory = '{folder}', time_updated = {ms}, parent_id = {parent} WHERE id = '{new_id}';\n",
        row.trim_end_matches(';').replacen(id, new_id, 1)
    )
}

#[test]
fn a_database_store_gives_each_conversation_its_folder() {
    let registry = Registry::bundled();
    for m in registry.iter() {
        if m.resume.as_ref().is_some_and(|r| r.store.table.is_some()) {
            assert!(
                DATABASES.iter().any(|(agent, ..)| *agent == m.id),
                "{}: a database store without its fixture in DATABASES",
                m.id
            );
        }
    }
    for (agent, fixture, id, folder, written) in DATABASES {
        let written = *written;
        let r = resume(agent);
        for logged in [true, false] {
            let tmp = tempfile::tempdir().expect("tmp");
            let home = tmp.path().join("share");
            database(&home.join(&r.store.files), fixture, logged);
            let wal = home.join(format!("{}-wal", r.store.files));
            assert_eq!(
                wal.exists() && wal.metadata().expect("wal").len() > 0,
                logged,
                "{agent}"
            );
            let h = Home {
                dir: home.display().to_string(),
                var: None,
            };
            let found = Saved::Found {
                folder: (*folder).into(),
            };
            assert_eq!(
                stores().saved(&r, &h, id, folder),
                found,
                "{agent} logged={logged}"
            );
            assert_eq!(
                stores().saved(&r, &h, "ses_00000000000000000000000000", folder),
                Saved::Missing,
                "{agent}"
            );
            // The newest of the folder's since a time, never a
            // sub-conversation, never another folder's.
            let s = stores();
            let dir = std::fs::canonicalize(&home).expect("home");
            assert_eq!(
                s.newest(&r, &dir, folder, written / 1000 - 5, 0).as_deref(),
                Some(*id),
                "{agent}"
            );
            assert_eq!(
                s.newest(&r, &dir, folder, written / 1000 + 5, 0),
                None,
                "{agent}: written before the run started"
            );
            let later = [
                another_session(
                    fixture,
                    id,
                    "ses_aaaaaaaaaaaaaaaaaaaaaaaaaa",
                    folder,
                    written + 10_000,
                    None,
                ),
                another_session(
                    fixture,
                    id,
                    "ses_bbbbbbbbbbbbbbbbbbbbbbbbbb",
                    folder,
                    written + 20_000,
                    Some(id),
                ),
                another_session(
                    fixture,
                    id,
                    "ses_cccccccccccccccccccccccccc",
                    "/elsewhere",
                    written + 30_000,
                    None,
                ),
            ];
            std::fs::remove_dir_all(&home).expect("rm");
            database(
                &home.join(&r.store.files),
                &format!("{fixture}\n{}", later.concat()),
                logged,
            );
            let since = written / 1000 - 5;
            assert_eq!(
                s.newest(&r, &dir, folder, since, 0).as_deref(),
                Some("ses_aaaaaaaaaaaaaaaaaaaaaaaaaa"),
                "{agent} logged={logged}"
            );
            assert_eq!(
                s.newest(&r, &dir, "/elsewhere", since, 0).as_deref(),
                Some("ses_cccccccccccccccccccccccccc")
            );
            assert_eq!(
                s.newest(&r, &dir, folder, written / 1000 + 60, 0),
                None,
                "{agent}: nothing since"
            );
            assert_eq!(
                stores().saved(&r, &h, "ses_cccccccccccccccccccccccccc", folder),
                Saved::Found {
                    folder: "/elsewhere".into()
                },
                "{agent}: the store says it is another folder's"
            );
        }
    }
}

#[test]
fn a_database_anyone_may_write_is_not_read() {
    let (agent, fixture, id, folder, _) = DATABASES[0];
    let r = resume(agent);
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("share");
    let db = home.join(&r.store.files);
    database(&db, fixture, true);
    let h = Home {
        dir: home.display().to_string(),
        var: None,
    };
    for path in [db.clone(), home.join(format!("{}-wal", r.store.files))] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        assert!(
            matches!(stores().saved(&r, &h, id, folder), Saved::Unreadable(ref why) if why.contains("anyone may write")),
            "{}",
            path.display()
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }
    assert_eq!(
        stores().saved(&r, &h, id, folder),
        Saved::Found {
            folder: folder.into()
        }
    );
    // Not a database at all: said, not a panic.
    std::fs::write(&db, "not a database").expect("write");
    assert!(matches!(
        stores().saved(&r, &h, id, folder),
        Saved::Unreadable(_)
    ));
}

#[test]
fn a_large_database_reads_as_sqlite_lists_it() {
    // Thousands of rows over interior pages, rows spilling onto overflow
    // pages, half of them only in the write-ahead log: every row read as
    // Python's sqlite3 wrote it.
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("big.db");
    let mut sql = String::from(
        "CREATE TABLE t (`id` text PRIMARY KEY, big text, dir text NOT NULL, at integer);\n",
    );
    for i in 0..3000u64 {
        let big = "x".repeat(((i * 37) % 9000) as usize);
        sql.push_str(&format!(
            "INSERT INTO t VALUES('id{i}', '{big}', '/w/{i}', {});\n",
            i as i64 * 1_000_000_007 - 7
        ));
    }
    database(&path, &sql, true);
    let wal = std::fs::read(tmp.path().join("big.db-wal")).expect("wal");
    let main = File::open(&path).expect("db");
    let db = sqlite::Db::open(main, wal).expect("open");
    let rows = db
        .rows("t", &["dir", "at", "id", "missing", "big"])
        .expect("rows");
    assert_eq!(rows.len(), 3000);
    for (i, row) in rows.iter().enumerate() {
        let i = i as u64;
        assert_eq!(
            row[..4],
            [
                sqlite::Value::Text(format!("/w/{i}")),
                sqlite::Value::Int(i as i64 * 1_000_000_007 - 7),
                sqlite::Value::Text(format!("id{i}")),
                sqlite::Value::Null
            ]
        );
        assert_eq!(
            row[4],
            sqlite::Value::Text("x".repeat(((i * 37) % 9000) as usize))
        );
    }
    assert_eq!(
        db.rows("nope", &["id"]).expect_err("no table"),
        "has no table `nope`"
    );
}
