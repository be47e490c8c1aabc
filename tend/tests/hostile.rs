//! Hostile input, through a real tmux and a real client: what a remote
//! machine sends and what a user types at tend's prompts is never run by
//! the local tmux or a shell, and arrives as it was written.
//!
//! Every payload carries a `touch` of its own marker file; a test fails
//! naming the markers that appeared.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use support::{corpus, wait_until, Env, Terminal};

/// Marker files of one test.
struct Markers {
    dir: PathBuf,
    names: Vec<String>,
}

impl Markers {
    fn new(env: &Env) -> Markers {
        Markers {
            dir: env.path().join("markers"),
            names: Vec::new(),
        }
    }

    /// A new marker's path, as the payload names it.
    fn path(&mut self, name: &str) -> String {
        self.names.push(name.to_owned());
        self.dir.join(name).display().to_string()
    }

    /// The markers a payload created. A folder name cannot hold a `/`:
    /// there the payload's path has `_` for `/`, and a `touch` run from it
    /// lands in the working folder of whoever ran it (tmux and tend run in
    /// the test's, this crate's folder).
    fn hit(&self) -> Vec<&str> {
        let cwd = std::env::current_dir().expect("working folder");
        self.names
            .iter()
            .filter(|n| {
                let path = self.dir.join(n);
                let flat = cwd.join(path.display().to_string().replace('/', "_"));
                let stray = flat.exists();
                let _ = std::fs::remove_file(&flat);
                path.exists() || stray
            })
            .map(String::as_str)
            .collect()
    }
}

/// A fake `ssh` (`TEND_SSH`) for a remote that sends `feed`: asked for the
/// feed, it writes the snapshot and a heartbeat every second; asked for
/// anything else (attaching to a pane), it logs its arguments and waits.
fn hostile_ssh(dir: &Path, feed: &Value) -> PathBuf {
    let feed_file = dir.join("feed.jsonl");
    std::fs::write(&feed_file, format!("{feed}\n")).expect("feed");
    let log = dir.join("ssh-args.log");
    let script = dir.join("ssh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$*\" in\n  *'events --feed'*)\n    cat '{}'\n    \
             while sleep 1; do echo '{{\"event\":\"feed.heartbeat\"}}'; done ;;\n  \
             *) printf '%s\\n' \"$@\" >> '{}'; exec sleep 600 ;;\nesac\n",
            feed_file.display(),
            log.display()
        ),
    )
    .expect("ssh script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script
}

fn waiting_pane(pane: &str, session: &str, since: f64) -> Value {
    json!({
        "pane": pane, "session": session, "window": "@1",
        "agent": "claude", "state": "waiting", "reason": "approval",
        "band": "waiting", "rule": "claude/approval", "since": since,
    })
}

#[test]
fn a_hostile_remote_runs_nothing_when_its_panes_are_jumped_to_or_listed() {
    let env = Env::new("hostile-remote");
    let mut m = Markers::new(&env);
    std::fs::create_dir_all(&m.dir).expect("markers dir");
    // The two payloads of the report, and their kin: a pane id that closes
    // the jump key's quoting, a session name that is a format running a
    // command, and every other field the feed carries.
    let id_payload = format!(
        "%9\";run-shell \"touch {}\";display-message \"",
        m.path("pane-id")
    );
    let id_payload2 = format!("%9';run-shell 'touch {}';#'", m.path("pane-id-2"));
    let id_payload3 = format!("%9\n run-shell 'touch {}'", m.path("pane-id-3"));
    let session_payload = format!("rs#(touch {})", m.path("session"));
    let mut other = waiting_pane("%4", &format!("s'\";$(touch {})", m.path("s2")), 3.0);
    other["message"] = json!(format!("#(touch {})", m.path("message")));
    other["note"] = json!(format!("#{{?1,#(touch {}),}}", m.path("note")));
    other["label"] = json!(format!("'; run-shell 'touch {}'", m.path("label")));
    other["agent"] = json!(format!("claude;touch {}", m.path("agent")));
    other["window"] = json!("@2");
    // Fields once taken as sent: control bytes (OSC 52 writes the user's
    // clipboard, CSI 2J clears the screen) and no bound.
    other["project"] = json!(format!("p\u{1b}]52;c;ZXZpbA==\u{7}{}", "x".repeat(1 << 20)));
    other["place"] = json!("work:1.0\u{1b}[2J");
    other["tasks"] = json!((0..500)
        .map(
            |i| json!({"id": format!("t{i}"), "state": "working", "live": true,
            "title": format!("\u{1b}[2J#(touch {})", m.path(&format!("task{i}")))})
        )
        .collect::<Vec<_>>());
    let mut bad_window = waiting_pane("%6", "w", 4.0);
    bad_window["window"] = json!(format!("@1;run-shell 'touch {}'", m.path("window")));
    let feed = json!({
        "event": "feed.snapshot",
        "hostname": format!("h#(touch {})", m.path("hostname")),
        "tmux_socket": format!("/tmp/x;touch {}", m.path("socket")),
        "panes": [
            waiting_pane(&id_payload, "work", 1.0),
            waiting_pane(&id_payload2, "work", 1.1),
            waiting_pane(&id_payload3, "work", 1.2),
            waiting_pane("%3", &session_payload, 2.0),
            other,
            bad_window,
        ],
    });
    let ssh = hostile_ssh(env.path(), &feed);
    env.tend_ok(&["remote", "add", "evil", "me@evil"]);
    let out = env
        .command(&["start"])
        .env("TEND_SSH", &ssh)
        .output()
        .expect("tend start");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Only the panes whose ids are ids arrive: two of six.
    let listed = wait_until(30, || {
        env.list_json()
            .as_array()
            .is_some_and(|a| a.iter().filter(|p| p["host"] == "evil").count() == 2)
    });
    let list = env.list_json();
    assert!(listed, "remote panes never listed: {list}");
    let ids: Vec<&str> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["host"] == "evil")
        .filter_map(|p| p["pane"].as_str())
        .collect();
    assert_eq!(ids, ["evil:%3", "evil:%4"]);
    let remotes = env.tend_ok(&["remote", "list", "--json"]);
    assert!(remotes.contains("\"dropped\":4"), "{remotes}");
    assert_eq!(env.global_option("@tend_next"), "evil:%3");
    // The session name comes through as text.
    let p3 = list
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["pane"] == "evil:%3")
        .cloned()
        .unwrap_or_default();
    assert_eq!(p3["session"], session_payload.as_str());
    let p4 = list
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["pane"] == "evil:%4")
        .cloned()
        .unwrap_or_default();
    let shown = p4.to_string();
    assert!(
        !shown.contains("\\u001b"),
        "control bytes kept: {shown:.300}"
    );
    assert!(shown.len() < 8192, "unbounded: {} bytes", shown.len());
    assert_eq!(p4["place"], "work:1.0[2J");
    assert_eq!(p4["tasks"].as_array().map(Vec::len), Some(16));

    // A user at a real client: prefix N (the jump opens a local window
    // for the remote session), the picker (prefix A) and its first entry,
    // then everything that prints panes.
    let term = Terminal::attach(&env, "main", "hostile");
    term.type_keys(&["C-b", "N"]);
    let window = format!("evil:{session_payload}");
    let opened = wait_until(20, || {
        env.tmux_out(&["list-windows", "-a", "-F", "#{window_name}"])
            .lines()
            .any(|w| w == window)
    });
    assert!(
        opened,
        "no local window named {window:?}: {}\n{}",
        env.tmux_out(&["list-windows", "-a", "-F", "#{window_name}"]),
        term.screen()
    );
    term.type_keys(&["C-b", "N"]);
    // prefix A: the fleet view in a popup, then the picker menu.
    for view in ["popup", "menu"] {
        env.tmux(&["set", "-g", "@tend-picker-view", view]);
        term.type_keys(&["C-b", "A"]);
        std::thread::sleep(Duration::from_millis(800));
        term.type_keys(&["1"]);
        std::thread::sleep(Duration::from_millis(800));
        term.type_keys(&["Escape"]);
        std::thread::sleep(Duration::from_millis(300));
    }
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["status"],
        &["next"],
        &["remote", "list"],
        &["get", "evil:%4", "--json"],
    ] {
        let _ = env.tend(args);
    }
    let _ = env.tend(&["doctor"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(m.hit(), Vec::<&str>::new(), "hostile text was executed");
    assert!(env.tmux(&["has-session"]).status.success());
    // The attach went to the remote's pane by its id, through ssh, as
    // separate words (the remote's own shell is the remote's business).
    let log = std::fs::read_to_string(env.path().join("ssh-args.log")).unwrap_or_default();
    assert!(log.lines().any(|l| l == "me@evil"), "{log}");
    assert!(log.contains("attach-session -t %3"), "{log}");
}

/// A pane id whose number starts with 1 (`%12`): `command-prompt` replaces
/// `%1` in its template with the typed text, which once made the picker's
/// park note go to `No such pane: plain note2`.
fn pane_numbered_from_ten(env: &Env) -> String {
    let cast = corpus("claude/approval").join("pane.cast");
    loop {
        let p = env.window("main", &env.play_cmd("claude", &cast, 600));
        let n: u32 = p.trim_start_matches('%').parse().expect("pane id");
        if n >= 10 && p.starts_with("%1") {
            return p;
        }
        if n < 10 {
            env.tmux(&["kill-pane", "-t", &p]);
        }
    }
}

#[test]
fn notes_and_reasons_typed_at_the_picker_arrive_as_typed() {
    let env = Env::new("hostile-prompt");
    let mut m = Markers::new(&env);
    std::fs::create_dir_all(&m.dir).expect("markers dir");
    let pane = pane_numbered_from_ten(&env);
    env.tend_ok(&["start"]);
    assert!(
        wait_until(30, || env.pane_option(&pane, "@tend_reason") == "approval"),
        "the agent never read waiting/approval"
    );
    let term = Terminal::attach(&env, "main", "prompt");
    let client = env.tmux_out(&["list-clients", "-F", "#{client_name}"]);
    let socket = control_socket(&env);
    // What tmux 3.3a's command-prompt put into its template a second
    // time, unescaped (`%2`, `%%`), beside every other quoting breaker:
    // the text never reaches a template now, on any version.
    let note = format!(
        "a %2 b %% it's \"plain\" %1 % $HOME ~ ; #(touch {}) $(touch {}) \\ end",
        m.path("note-format"),
        m.path("note-shell")
    );
    let reason = format!(
        "%2\" ; run-shell \"touch {}\" ; # stop'; run-shell \"touch {}\" ; #{{pane_id}} %12 %%%",
        m.path("reason-percent"),
        m.path("reason")
    );
    for (key, text) in [("p", &note), ("s", &reason)] {
        let o = env.tend(&[
            "key",
            "--socket",
            &socket.display().to_string(),
            "agent",
            &format!("pane={pane}"),
            &format!("client={client}"),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            wait_until(10, || term.screen().contains("Ask it to stop")),
            "no agent menu: {}",
            term.screen()
        );
        term.type_keys(&[key]);
        assert!(
            wait_until(10, || term.screen().contains(if key == "p" {
                "park note:"
            } else {
                "stop reason:"
            })),
            "no prompt: {}",
            term.screen()
        );
        term.type_keys(&["-l", text]);
        term.type_keys(&["Enter"]);
        let field = if key == "p" { "note" } else { "stop" };
        let arrived = wait_until(10, || {
            let v: Value =
                serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"])).unwrap_or_default();
            !v[field].is_null()
        });
        std::thread::sleep(Duration::from_millis(300));
        assert!(arrived, "nothing arrived for `{key}`: {}", term.screen());
    }
    let v: Value = serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"])).expect("get");
    assert_eq!(v["parked"], true);
    assert_eq!(v["note"], note.as_str(), "the note was altered");
    let inbox: Value =
        serde_json::from_str(&env.tend_ok(&["inbox", "--pane", &pane, "--json"])).expect("inbox");
    assert_eq!(
        inbox["stop"]["reason"],
        reason.as_str(),
        "the reason was altered"
    );
    assert_eq!(m.hit(), Vec::<&str>::new(), "typed text was executed");
    assert!(env.tmux(&["has-session"]).status.success());
}

/// The daemon's control socket.
fn control_socket(env: &Env) -> PathBuf {
    std::fs::read_dir(env.path().join("run").join("tend"))
        .expect("runtime folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sock"))
        .expect("control socket")
}

/// The payloads: each makes `marker` if any layer runs it (a format, the
/// tmux parser, a shell), or breaks out of its quoting.
fn payloads(m: &mut Markers) -> Vec<(String, String)> {
    let mut v = Vec::new();
    let mut add = |name: &str, f: &dyn Fn(&str) -> String| {
        let path = m.path(name);
        v.push((name.to_owned(), f(&path)));
    };
    add("format-cond", &|p| format!("#{{?1,#(touch {p}),}}"));
    add("format-job", &|p| format!("#(touch {p})"));
    add("shell-subst", &|p| format!("$(touch {p})"));
    add("backtick", &|p| format!("`touch {p}`"));
    add("single-quote", &|p| format!("'; run-shell 'touch {p}' ; '"));
    add("double-quote", &|p| {
        format!("\"; run-shell \"touch {p}\" ; \"")
    });
    add("percent", &|p| format!("%1 %2 %%% ; run-shell 'touch {p}'"));
    add("newline", &|p| format!("x\nrun-shell 'touch {p}'"));
    add("braces", &|p| format!("}} ; run-shell 'touch {p}' ; {{"));
    add("tilde-dollar", &|p| {
        format!("~root $HOME \\; run-shell 'touch {p}'")
    });
    add("long", &|p| format!("{}#(touch {p})", "y".repeat(100_000)));
    v
}

/// Every payload as a session name, a window name, a pane title, a
/// folder name, a park note, a stop reason, a label and a self-report's
/// message, shown by a real client's status line and pane borders, the
/// picker and agent menus, and every command that prints panes: nothing
/// runs, the server lives, and the texts tend keeps arrive as written.
#[test]
fn every_payload_through_every_local_place_runs_nothing() {
    let env = Env::new("hostile-table");
    let mut m = Markers::new(&env);
    std::fs::create_dir_all(&m.dir).expect("markers dir");
    let payloads = payloads(&mut m);
    let cast = corpus("claude/approval").join("pane.cast");
    // The user's own formats show tend's options.
    env.tmux(&[
        "set",
        "-g",
        "status-right",
        "#{@tend_summary} #{@tend_marks} #{@tend_state}",
    ]);
    env.tmux(&["set", "-g", "pane-border-status", "top"]);
    env.tmux(&[
        "set",
        "-g",
        "pane-border-format",
        "#{@tend_marks} #{@tend_agent} #{pane_title}",
    ]);
    let mut panes = Vec::new();
    for (i, (name, text)) in payloads.iter().enumerate() {
        // Names and folders cannot hold everything: tmux takes no
        // newline in a name it is given and cuts nothing; a folder
        // name is at most 255 bytes.
        let session = format!("s{i}-{}", text.replace('\n', " "));
        let folder = env.path().join(format!(
            "d{i}-{}",
            text.replace('/', "_").chars().take(200).collect::<String>()
        ));
        std::fs::create_dir_all(&folder).expect("hostile folder");
        let title = env.path().join(format!("title-{i}.bin"));
        let mut bytes = format!("\x1b]2;{}", text.replace('\n', " ")).into_bytes();
        bytes.extend_from_slice(b"\xff\xfe\x07");
        std::fs::write(&title, bytes).expect("title");
        let play = format!(
            "cat '{}'; {}",
            title.display(),
            env.play_cmd("claude", &cast, 600)
        );
        let sid = env.tmux_out(&[
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{session_id}",
            "-s",
            &format!("s{i}"),
            // tmux expands formats in -c too.
            "-c",
            &folder.display().to_string().replace('#', "##"),
            // The recording's size, and a row for the pane's border.
            "-x",
            "200",
            "-y",
            "51",
            &play,
        ]);
        // The names go in through a file tmux reads itself (a command line
        // holds at most 16 kB); tmux expands formats in the names it is
        // given, so `##` is a `#`.
        let quote = |t: &str| format!("'{}'", t.replace('#', "##").replace('\'', "'\\''"));
        let conf = env.path().join(format!("names-{i}.conf"));
        std::fs::write(
            &conf,
            format!(
                "rename-session -t {sid} {}\nrename-window -t {sid}: {}\n",
                quote(&session),
                quote(&format!("w-{}", text.replace('\n', " ")))
            ),
        )
        .expect("names");
        let o = env.tmux(&["source-file", &conf.display().to_string()]);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(sid.starts_with('$'), "{name}: no session ({sid})");
        // On 3.2a the window was 80x23 (see `fit_window`): the recording
        // starts again at its own size.
        if env.fit_window(&format!("{sid}:"), 200, 51) {
            let o = env.tmux(&["respawn-pane", "-k", "-t", &format!("{sid}:"), &play]);
            assert!(
                o.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let pane = env.tmux_out(&["display-message", "-p", "-t", &sid, "#{pane_id}"]);
        panes.push((name.clone(), text.clone(), pane));
    }
    env.tend_ok(&["start"]);
    let all_waiting = wait_until(60, || {
        panes
            .iter()
            .all(|(_, _, p)| env.pane_option(p, "@tend_reason") == "approval")
    });
    let states: Vec<String> = panes
        .iter()
        .map(|(n, _, p)| format!("{n} {p}: {:?}", env.pane_option(p, "@tend_reason")))
        .collect();
    assert!(
        all_waiting,
        "not every agent read waiting/approval: {states:?}\n{}",
        String::from_utf8_lossy(&env.tend(&["doctor"]).stdout)
    );
    for (i, (name, text, pane)) in panes.iter().enumerate() {
        // A note and a reason in the user's words; a label and a message
        // in an agent's.
        match i % 3 {
            0 => {
                let o = env.tend(&["park", pane, "--note", text]);
                assert!(
                    o.status.success(),
                    "{name}: park: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            1 => {
                let o = env.tend(&["stop-request", pane, text]);
                assert!(
                    o.status.success(),
                    "{name}: stop: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            _ => {
                let o = env.tend(&["report-metadata", text, "--pane", pane]);
                assert!(
                    o.status.success(),
                    "{name}: label: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
        }
    }
    let reporter = &panes[0].2;
    let _ = env.tend(&[
        "report",
        "waiting",
        "--reason",
        "question",
        "--message",
        &panes[1].1,
        "--pane",
        reporter,
    ]);
    // A user at a real client looks at everything.
    let term = Terminal::attach(&env, "main", "table");
    let client = env.tmux_out(&["list-clients", "-F", "#{client_name}"]);
    let socket = control_socket(&env).display().to_string();
    for _ in 0..4 {
        term.type_keys(&["C-b", "N"]);
        std::thread::sleep(Duration::from_millis(200));
    }
    term.type_keys(&["C-b", "A"]);
    std::thread::sleep(Duration::from_millis(800));
    term.type_keys(&["Escape"]);
    for (_, _, pane) in panes.iter().take(4) {
        let _ = env.tend(&[
            "key",
            "--socket",
            &socket,
            "agent",
            &format!("pane={pane}"),
            &format!("client={client}"),
        ]);
        std::thread::sleep(Duration::from_millis(500));
        term.type_keys(&["Escape"]);
        let _ = env.tend(&["explain", pane]);
        let _ = env.tend(&["approve", pane, "--dry-run"]);
    }
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["status"],
        &["next"],
        &["doctor"],
    ] {
        let _ = env.tend(args);
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(m.hit(), Vec::<&str>::new(), "hostile text was executed");
    assert!(
        env.tmux(&["has-session"]).status.success(),
        "the server died"
    );
    // What tend keeps arrives as written.
    for (i, (name, text, pane)) in panes.iter().enumerate() {
        let v: Value = serde_json::from_str(&env.tend_ok(&["get", pane, "--json"])).expect("get");
        match i % 3 {
            0 => assert_eq!(v["note"], text.as_str(), "{name}: the note was altered"),
            1 => {
                let inbox: Value =
                    serde_json::from_str(&env.tend_ok(&["inbox", "--pane", pane, "--json"]))
                        .expect("inbox");
                assert_eq!(
                    inbox["stop"]["reason"],
                    text.as_str(),
                    "{name}: the reason was altered"
                );
            }
            _ => assert_eq!(v["label"], text.as_str(), "{name}: the label was altered"),
        }
    }
    // tend stop leaves the user's formats as they were.
    env.tend_ok(&["stop"]);
    assert_eq!(
        env.tmux_out(&["show", "-gv", "status-right"]),
        "#{@tend_summary} #{@tend_marks} #{@tend_state}"
    );
}

/// A Python listener on `path`, run as user `nobody`, that writes every
/// byte a client sends into `log` and answers each line as the daemon
/// would (`{"id":1,"result":[]}`). The folders up to `env`'s root are
/// opened only while it binds.
fn listener_as_nobody(env: &Env, path: &Path, log: &Path) -> std::process::Child {
    use std::os::unix::fs::PermissionsExt;
    let opened = support::OpenedUp::folders_of(env, path, 0o777);
    std::fs::write(log, "").expect("log");
    std::fs::set_permissions(log, std::fs::Permissions::from_mode(0o666)).expect("chmod log");
    let ready = log.with_extension("ready");
    let script = format!(
        r#"
import socket, os
s = socket.socket(socket.AF_UNIX)
s.bind({path:?}); s.listen(8)
open({ready:?}, "w").close()
while True:
    c, _ = s.accept()
    data = c.recv(65536)
    with open({log:?}, "ab") as f: f.write(data)
    try: c.sendall(b'{{"id":1,"result":[]}}\n')
    except OSError: pass
    c.close()
"#,
        path = path.display().to_string(),
        ready = ready.display().to_string(),
        log = log.display().to_string(),
    );
    let child = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
        ])
        .arg(script)
        .spawn()
        .expect("setpriv");
    assert!(
        wait_until(10, || ready.exists()),
        "the listener never bound"
    );
    drop(opened);
    child
}

/// Another user's runtime folder, or another user's daemon behind tend's
/// socket name: tend starts nothing there and sends nothing to it — not a
/// request, not a pane's output.
#[test]
fn another_users_runtime_folder_or_daemon_gets_nothing() {
    use std::os::unix::fs::PermissionsExt;
    if !nix::unistd::getuid().is_root() {
        eprintln!("skipped: needs root to act as another user");
        return;
    }
    let env = Env::new("hostile-runtime");
    // XDG_RUNTIME_DIR owned by `nobody`, open to all: they could rename
    // tend/ and put their own in its place.
    let theirs = env.path().join("theirs");
    std::fs::create_dir(&theirs).expect("mkdir");
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    nix::unistd::chown(&theirs, Some(nix::unistd::Uid::from_raw(65534)), None).expect("chown");
    for args in [&["start"][..], &["list"]] {
        let o = env
            .command(args)
            .env("XDG_RUNTIME_DIR", &theirs)
            .output()
            .expect("tend");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "tend {args:?} used their folder");
        assert!(
            err.contains(&format!(
                "{} belongs to nobody (uid 65534)",
                theirs.display()
            )),
            "{err}"
        );
    }
    assert!(
        !theirs.join("tend").exists(),
        "tend made a folder in theirs"
    );

    // Their daemon behind tend's own socket name (a folder of ours that
    // they could once reach): the CLI and the tap refuse it.
    env.tend_ok(&["start"]);
    let sock = control_socket(&env);
    env.tend_ok(&["stop"]);
    let _ = std::fs::remove_file(&sock);
    let log = env.path().join("theirs.log");
    let mut fake = listener_as_nobody(&env, &sock, &log);
    let o = env
        .command(&["prompt", "%0", "API_KEY=sk-secret-123"])
        .output()
        .expect("tend prompt");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "tend prompt talked to their daemon");
    assert!(err.contains("runs as uid 65534, not as you"), "{err}");
    let tap = sock.with_extension("tap");
    let _ = std::fs::remove_file(&tap);
    let log2 = env.path().join("theirs-tap.log");
    let mut fake_tap = listener_as_nobody(&env, &tap, &log2);
    let o = std::process::Command::new(support::tend_bin())
        .args(["tap", "--socket"])
        .arg(&tap)
        .args(["--pane", "%0"])
        .stdin(std::process::Stdio::piped())
        .output()
        .expect("tend tap");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "the tap handed a pane to their daemon");
    assert!(err.contains("runs as uid 65534, not as you"), "{err}");
    let _ = fake.kill();
    let _ = fake_tap.kill();
    let _ = fake.wait();
    let _ = fake_tap.wait();
    assert_eq!(
        std::fs::read(&log).expect("log"),
        b"",
        "a request reached them"
    );
    assert_eq!(
        std::fs::read(&log2).expect("log"),
        b"",
        "the tap reached them"
    );
}

/// A daemon and a pane at a shell's `$ ` prompt, for a stand-in agent
/// (`support/psp_agent.py`) under `tend run` or not; `None` without
/// python3. The guard keeps such tests one at a time.
fn relay_shell(tag: &str) -> Option<(std::sync::MutexGuard<'static, ()>, Env, String)> {
    use crate::run_relay as relay;
    if !relay::python() {
        return None;
    }
    let serial = relay::serial();
    let env = Env::new(tag);
    env.tend_ok(&["start"]);
    let pane = relay::shell(&env);
    relay::wait_text(&env, &pane, "$ ");
    Some((serial, env, pane))
}

/// A program under `tend run` prints megabytes at full speed, faster than
/// tend reads them, and reports a permission request right after: tend had
/// to drop output it could not keep up with, but the report in it is still
/// taken (before, 8 of 9 such bursts left the pane `working` for good, the
/// report neither taken nor counted).
#[test]
fn a_report_after_a_burst_is_taken() {
    use crate::run_relay as relay;
    let Some((_serial, env, pane)) = relay_shell("hostile-burst") else {
        return;
    };
    env.type_line(
        &pane,
        &format!("{} {}", relay::relay(), relay::agent_cmd(&env, "--burst 3")),
    );
    relay::wait_row(&env, &pane, "idle by its word", |r| {
        relay::is(r, "idle", None, "relay")
    });
    relay::keys(&env, &pane, &["n"]);
    relay::wait_row(&env, &pane, "working by its word", |r| {
        relay::is(r, "working", None, "relay")
    });
    relay::keys(&env, &pane, &["n"]);
    let r = relay::wait_row(&env, &pane, "waiting for approval after the burst", |r| {
        relay::is(r, "waiting", Some("approval"), "relay")
    });
    assert_eq!(r["message"], "approve Bash: rm -rf ./build", "{r}");
    relay::keys(&env, &pane, &["q"]);
}

/// `tend events` opened in a loop: the daemon keeps at most 256 streams
/// open (the next is refused with a sentence), and a stream whose client
/// went away gives its descriptor back at once, not at the next event.
#[test]
fn event_streams_are_capped_and_closed_ones_let_go_at_once() {
    use std::io::{BufRead, BufReader, Write};
    let env = Env::new("hostile-streams");
    env.tend_ok(&["start"]);
    let sock = control_socket(&env);
    let pid = env.daemon_pid().expect("daemon pid");
    let fds = || {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let before = fds();
    let open = |n: usize| -> Vec<(std::os::unix::net::UnixStream, String)> {
        (0..n)
            .map(|_| {
                let mut s = std::os::unix::net::UnixStream::connect(&sock).expect("connect");
                s.write_all(b"{\"id\":1,\"method\":\"events\"}\n")
                    .expect("write");
                let mut first = String::new();
                BufReader::new(s.try_clone().expect("clone"))
                    .read_line(&mut first)
                    .expect("answer");
                (s, first)
            })
            .collect()
    };
    let streams = open(256);
    assert!(
        streams
            .iter()
            .all(|(_, a)| a.contains("\"subscribed\":true")),
        "{}",
        streams[0].1
    );
    let refused = open(1);
    assert!(
        refused[0].1.contains("\"code\":\"too_many\""),
        "{}",
        refused[0].1
    );
    assert!(
        refused[0].1.contains("256 event streams are open already"),
        "{}",
        refused[0].1
    );
    drop(refused);
    drop(streams);
    // A quiet server: no event comes to show the streams their clients
    // are gone. Their descriptors go anyway.
    assert!(
        wait_until(10, || fds() <= before + 2),
        "the daemon still holds {} descriptors (had {before})",
        fds()
    );
    // And a stream can be opened again.
    assert!(open(1)[0].1.contains("\"subscribed\":true"));
}

/// A `config.toml` whose bad values carry terminal controls (OSC 52 writes
/// the clipboard, CSI 2J clears the screen): `tend start`, `tend config`
/// and `tend doctor` quote them as text, and no control byte reaches the
/// user's terminal.
#[test]
fn control_bytes_in_the_config_reach_the_terminal_as_text() {
    let env = Env::new("hostile-config");
    let config = env.path().join("config").join("tend");
    std::fs::create_dir_all(&config).expect("config dir");
    for text in [
        "[detector]\nsettle = \"\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\"\n",
        "[keys]\nnext = \"\u{1b}]52;c;ZXZpbA==\u{7}\"\n",
        "[detector\u{1b}[2J\n",
    ] {
        std::fs::write(config.join("config.toml"), text).expect("config");
        for args in [&["start"][..], &["config"], &["doctor"]] {
            let o = env.tend(args);
            let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
            assert!(
                !all.iter().any(|&b| b == 0x1b || b == 0x07),
                "tend {args:?} printed control bytes: {:?}",
                String::from_utf8_lossy(&all)
            );
            assert!(
                String::from_utf8_lossy(&all).contains("\\u{1b}"),
                "tend {args:?} did not quote the file: {}",
                String::from_utf8_lossy(&all)
            );
        }
    }
}

/// The terminal's answers to queries (tmux 3.3a's version and device
/// attributes), handed to the fleet view as if typed, as tmux 3.3a does to
/// a popup that has just opened: the view takes none of them for keys.
/// Before, `ESC P` read as Alt-P and the `t` of `tmux` opened the prompt,
/// which then held `mux 3.3a\` for the agent.
#[test]
fn the_terminals_answers_are_not_keys_in_the_fleet_view() {
    let env = Env::new("hostile-answers");
    env.tend_ok(&["start"]);
    let cast = corpus("claude/approval").join("pane.cast");
    let agent = env.window("main", &env.play_cmd("claude", &cast, 600));
    assert!(
        wait_until(30, || !env.pane_option(&agent, "@tend_state").is_empty()),
        "the agent was never read"
    );
    let view = env.window(
        "main",
        &format!(
            "{} pilot --socket '{}'",
            support::tend_bin(),
            control_socket(&env).display()
        ),
    );
    let footer = || {
        env.tmux_out(&["capture-pane", "-p", "-t", &view])
            .lines()
            .last()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        wait_until(20, || footer().contains("t prompt")),
        "no fleet view: {}",
        footer()
    );
    let answers: Vec<String> = b"\x1bP>|tmux 3.3a\x1b\\\x1b[?1;2c"
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut args = vec!["send-keys", "-t", view.as_str(), "-H"];
    args.extend(answers.iter().map(String::as_str));
    env.tmux(&args);
    std::thread::sleep(Duration::from_millis(800));
    let screen = env.tmux_out(&["capture-pane", "-p", "-t", &view]);
    assert!(!screen.contains("prompt for"), "{screen}");
    assert!(!screen.contains("3.3a"), "{screen}");
    assert!(footer().contains("t prompt"), "{screen}");
}

/// A program that only looks like `tend run` — `exec -a tend prog … run`,
/// the look the daemon once went by — reports on its own: none of its
/// reports is taken, the screen decides. Only a relay that registered on
/// the daemon's socket (its pid from the kernel) is believed.
#[test]
fn a_look_alike_of_tend_run_is_not_believed() {
    use crate::run_relay as relay;
    let Some((_serial, env, pane)) = relay_shell("hostile-lookalike") else {
        return;
    };
    // agent_cmd is `env TEND_AGENT=claude python3 SCRIPT --screens DIR`:
    // run as `tend … run` by name, reporting whether answered or not.
    let cmd = relay::agent_cmd(&env, "--force run");
    let look_alike = cmd.replacen(
        " python3 ",
        " bash -c 'exec -a tend python3 \"$@\"' tend ",
        1,
    );
    assert_ne!(cmd, look_alike);
    env.type_line(&pane, &look_alike);
    relay::wait_row(&env, &pane, "claude, read from the screen", |r| {
        r["agent"] == "claude" && r["state"] == "idle" && r["authority"] == "screen"
    });
    relay::keys(&env, &pane, &["n"]);
    relay::keys(&env, &pane, &["n"]);
    // It reports `blocked` now; the screen shows no dialog.
    std::thread::sleep(Duration::from_secs(2));
    let v = relay::explain(&env, &pane);
    assert_eq!(v["authority"]["relay"], false, "{v}");
    assert!(
        v["explain"]["psp"]["counters"]["reports"]
            .as_u64()
            .unwrap_or(0)
            >= 2,
        "it did report: {v}"
    );
    let r = env.row(&pane);
    assert_eq!(r["authority"], "screen", "{r}");
    assert_ne!(r["reason"], "approval", "its report was taken: {r}");
    relay::keys(&env, &pane, &["q"]);
}
