//! The user's settings and folders against a real tmux server: key tables
//! and key names tmux takes or refuses, folders tend cannot use or must not
//! trust, and a tmux whose pane list tend cannot read. Each is either made
//! to work or reported — by `tend config`, `tend start` or `tend doctor` —
//! with the file or folder and what to do.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{wait_until, Env};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn config_file(env: &Env) -> PathBuf {
    let dir = env.path().join("config").join("tend");
    std::fs::create_dir_all(&dir).expect("config dir");
    dir.join("config.toml")
}

/// The line of `tend doctor` for check `name`.
fn doctor_line(out: &Output, name: &str) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| {
            l.get(5..)
                .is_some_and(|r| r.starts_with(&format!("{name} ")))
        })
        .unwrap_or_default()
        .to_owned()
}

fn watched(env: &Env) -> usize {
    env.list_json().as_array().map_or(0, Vec::len)
}

fn kill_daemon(env: &Env) {
    let pid = env.daemon_pid().expect("daemon pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill");
    assert!(wait_until(5, || nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        None
    )
    .is_err()));
}

// ---------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------

/// `[keys] table` with quotes and spaces (tmux takes any table name, and
/// `list-keys` prints it bare): tend binds there, leaves the user's key in
/// it alone, and `tend stop` — clean, or after the daemon was killed —
/// leaves `list-keys` byte for byte as it was.
#[test]
fn a_key_table_with_quotes_and_spaces_is_restored_byte_for_byte() {
    let env = Env::new("set-table");
    let table = "my \"tend\" keys";
    std::fs::write(config_file(&env), "[keys]\ntable = 'my \"tend\" keys'\n").expect("config");
    env.tmux(&["bind-key", "-T", table, "T", "display-message user-T"]);
    env.tmux(&["bind-key", "-T", "my", "N", "display-message user-my-N"]);
    let before = env.tmux_out(&["list-keys"]);

    for killed in [false, true] {
        env.tend_ok(&["start"]);
        let ours = || {
            env.tmux_out(&["list-keys"])
                .lines()
                .filter(|l| l.contains("tend-managed"))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert!(wait_until(10, || ours().len() == 3), "{:?}", ours());
        assert!(
            ours().iter().all(|l| l.contains(&format!("-T {table} "))),
            "{:?}",
            ours()
        );
        // The user's T in that table is theirs; doctor says which action
        // has no key and what to do.
        let out = env.tend(&["doctor"]);
        let keys = doctor_line(&out, "keys");
        assert!(
            keys.starts_with("FAIL keys")
                && keys.contains(
                    "\"jump to the next agent waiting in this session\": \"my \\\"tend\\\" keys\" \
                     T is bound to `display-message user-T`, which is not tend's (left alone): \
                     choose another key ([keys] next_session in "
                ),
            "{}",
            text(&out)
        );
        if killed {
            kill_daemon(&env);
        }
        env.tend_ok(&["stop"]);
        assert_eq!(env.tmux_out(&["list-keys"]), before, "killed: {killed}");
    }
}

/// A key name tmux does not know — `#(touch …)` — is an error for
/// `tend config` and `tend start` (naming the file or option, the setting
/// and what to write), and is never run: it only ever reaches tmux as one
/// argument of `list-keys`/`bind-key`, which do not expand it.
#[test]
fn a_key_name_tmux_does_not_know_is_an_error_and_runs_nothing() {
    let env = Env::new("set-key");
    let file = config_file(&env);
    let pwned = env.path().join("pwned");
    let hostile = format!("#(touch {})", pwned.display());
    std::fs::write(&file, format!("[keys]\nnext = {hostile:?}\n")).expect("config");
    let help = "write a key as tmux does: `N`, `M-n` (Alt+n), `C-a` (Ctrl+a), `F5`, `Space`, \
                `C-Space`, or `none` for no key";
    for cmd in [&["config"][..], &["start"][..]] {
        let out = env.tend(cmd);
        assert!(!out.status.success(), "{cmd:?} passed: {}", text(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim(),
            format!(
                "tend: {}: [keys] next = {hostile:?}: tmux knows no key by that name; {help}",
                file.display()
            ),
            "{cmd:?}"
        );
    }
    std::fs::remove_file(&file).expect("rm config");

    // The same from tmux.conf, and a key this tmux refuses though another
    // might take it: tmux's own verdict, before anything starts.
    env.tmux(&["set", "-g", "@tend-key-picker", &hostile]);
    let out = env.tend(&["start"]);
    assert!(!out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "tend: tmux option @tend-key-picker = {hostile:?} is not a key tmux knows (tmux: \
             invalid key: {hostile}); {help}"
        )) && err.trim_end().ends_with("then run `tend start` again"),
        "{err}"
    );
    assert!(env.global_option("@tend_daemon").is_empty(), "a daemon ran");
    env.tmux(&["set", "-gu", "@tend-key-picker"]);

    // Configured, but not bound: the user's own binding took the key.
    env.tend_ok(&["start"]);
    let out = env.tend(&["doctor"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        doctor_line(&out, "keys"),
        "ok   keys       4 tend key bindings: prefix N, prefix T, prefix W, prefix A"
    );
    env.tmux(&["bind-key", "-T", "prefix", "N", "display-message mine"]);
    let out = env.tend(&["doctor"]);
    assert!(!out.status.success());
    let keys = doctor_line(&out, "keys");
    assert!(
        keys.starts_with(
            "FAIL keys       \"jump to the next agent waiting on you\": prefix N is bound to \
             `display-message mine`, which is not tend's (left alone): choose another key \
             ([keys] next in "
        ),
        "{keys}"
    );
    assert!(!pwned.exists(), "a key name was run");
}

// ---------------------------------------------------------------------------
// Folders
// ---------------------------------------------------------------------------

/// A bundled manifest with its own id and a rule whose regex does not
/// compile.
fn bad_regex_manifest() -> String {
    let pi = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../detector/agents/pi.toml"),
    )
    .expect("pi manifest");
    let bad = pi.replacen("id = \"pi\"", "id = \"mypi\"", 1).replacen(
        "'(?m)^ Error: '",
        "'(unclosed'",
        1,
    );
    assert_ne!(bad, pi);
    bad
}

/// The user agents folder is a file, or holds a manifest whose regex does
/// not compile: doctor fails naming the path and the fix, `tend start`
/// warns on stderr and starts, and the panes are watched.
#[test]
fn unusable_manifests_are_reported_and_start_still_starts() {
    let env = Env::new("set-agents");
    let agents = config_file(&env).with_file_name("agents");
    std::fs::write(&agents, "not a folder").expect("file");
    let out = env.tend(&["start"]);
    assert!(out.status.success(), "{}", text(&out));
    let fix = format!(
        "{0}: is a file, not a folder: tend loads your agent manifests (*.toml) from a folder \
         here, so none load. Move the file away (`mv {0} {0}.old && mkdir {0}`)",
        agents.display()
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("tend: warning: {fix} (not used; `tend doctor` checks again)")
    );
    assert!(wait_until(10, || watched(&env) >= 1), "no pane watched");
    let out = env.tend(&["doctor"]);
    assert!(!out.status.success());
    assert_eq!(
        doctor_line(&out, "manifests"),
        format!("FAIL manifests  not used: {fix}")
    );
    env.tend_ok(&["stop"]);

    std::fs::remove_file(&agents).expect("rm");
    std::fs::create_dir(&agents).expect("mkdir");
    std::fs::write(agents.join("mypi.toml"), bad_regex_manifest()).expect("manifest");
    let out = env.tend(&["start"]);
    assert!(out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "tend: warning: {}: rule `api-error`: invalid regex `(unclosed`",
            agents.join("mypi.toml").display()
        )) && err
            .trim_end()
            .ends_with("(not used; `tend doctor` checks again)"),
        "{err}"
    );
    assert!(wait_until(10, || watched(&env) >= 1), "no pane watched");
}

/// The user agents folder or the state folder at mode 000 (as a user
/// other than root, whom permissions do not stop): doctor fails naming the
/// folder and `chmod u+rwx`; `tend start` warns and starts.
#[test]
fn folders_tend_cannot_read_are_reported() {
    let Some(user) = Unprivileged::new("set-perm") else {
        return;
    };
    let agents = user.root.join("config/tend/agents");
    let state = user.root.join("state/tend");
    std::fs::create_dir_all(&agents).expect("agents");
    std::fs::create_dir_all(&state).expect("state");
    user.own_everything();
    for d in [&agents, &state] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    }
    let out = user.tend(&["doctor"]);
    assert!(!out.status.success());
    let manifests = doctor_line(&out, "manifests");
    assert_eq!(
        manifests,
        format!(
            "FAIL manifests  not used: {0}: cannot read this folder (Permission denied (os \
             error 13)), so none of your agent manifests load; run `chmod u+rwx {0}`",
            agents.display()
        ),
        "{}",
        text(&out)
    );
    assert_eq!(
        doctor_line(&out, "state"),
        format!(
            "FAIL state      {0} cannot be used (Permission denied (os error 13)): parks and \
             snoozes are neither restored nor saved. Run `chmod u+rwx {0}`",
            state.display()
        ),
        "{}",
        text(&out)
    );
    let out = user.tend(&["start"]);
    assert!(out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "tend: warning: {}: cannot read this folder",
            agents.display()
        )) && err.contains(&format!(
            "tend: warning: {} cannot be used (Permission denied",
            state.display()
        )),
        "{err}"
    );
    assert!(
        wait_until(10, || {
            let out = user.tend(&["list", "--json"]);
            serde_json::from_slice::<serde_json::Value>(&out.stdout)
                .ok()
                .and_then(|v| v.as_array().map(Vec::len))
                .unwrap_or(0)
                >= 1
        }),
        "no pane watched"
    );
}

/// The state folder unreadable when tend starts (it warns and starts), then
/// the `chmod` the warning suggests while tend runs: the parks saved before
/// are still there after a restart, beside the ones made since — tend
/// saved nothing over a file it had not read (it once did: a park
/// `keepme` was gone).
#[test]
fn saved_parks_survive_a_state_folder_unreadable_at_start() {
    let Some(user) = Unprivileged::new("set-unread") else {
        return;
    };
    let state = user.root.join("state/tend");
    std::fs::create_dir_all(&state).expect("state");
    user.own_everything();
    let ok = |args: &[&str]| {
        let out = user.tend(args);
        assert!(out.status.success(), "tend {args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let pane = |n: usize| {
        let out = user.run(
            "tmux",
            &["-L", &user.name, "list-panes", "-a", "-F", "#{pane_id}"],
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(n)
            .expect("pane")
            .to_owned()
    };
    ok(&["start"]);
    let first = pane(0);
    ok(&["park", &first, "--note", "keepme"]);
    ok(&["stop"]);
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let out = user.tend(&["start"]);
    assert!(out.status.success(), "{}", text(&out));
    user.run("tmux", &["-L", &user.name, "new-window", "-d"]);
    let second = pane(1);
    assert!(
        wait_until(10, || user
            .tend(&["park", &second, "--note", "made since"])
            .status
            .success()),
        "no park"
    );
    // The user runs the chmod the warning gave; the next change saves.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    ok(&["snooze", &second, "15m"]);
    ok(&["stop"]);
    ok(&["start"]);
    let note = |p: &str| {
        let v: serde_json::Value =
            serde_json::from_str(&ok(&["get", p, "--json"])).expect("get --json");
        v["note"].as_str().unwrap_or_default().to_owned()
    };
    assert_eq!(note(&first), "keepme");
    assert_eq!(note(&second), "made since");
    ok(&["stop"]);
}

/// A state folder others can read but not write (0755): tend starts and
/// says who can read the notes; one they can write (0775) stops it, since
/// parks planted there would be obeyed.
#[test]
fn a_state_folder_others_can_read_warns_and_one_they_can_write_stops() {
    let env = Env::new("set-state-mode");
    let state = env.path().join("state").join("tend");
    std::fs::create_dir_all(&state).expect("state");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = env.tend(&["start"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "tend: warning: {} has mode 0755: other users can read your parks' notes and stop \
             reasons there (not change them)",
            state.display()
        )),
        "{}",
        text(&out)
    );
    env.tend_ok(&["stop"]);
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o775)).expect("chmod");
    let out = env.tend(&["start"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "{} has mode 0775: other users could replace its parks, snoozes and marks there",
            state.display()
        )),
        "{}",
        text(&out)
    );
}

/// The runtime folder is created 0700; one that others may use (mode
/// 0777, 0755) or that another user owns is refused by every command that
/// connects, naming the folder, its mode or owner, and the fix.
#[test]
fn a_runtime_folder_others_can_use_is_refused() {
    let env = Env::new("set-run");
    let run = env.path().join("run").join("tend");
    env.tend_ok(&["start"]);
    let mode = std::fs::metadata(&run).expect("run").permissions().mode() & 0o7777;
    assert_eq!(mode, 0o700);
    env.tend_ok(&["stop"]);
    for (mode, could) in [(0o777, "replace"), (0o755, "read")] {
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(mode)).expect("chmod");
        for cmd in [&["start"][..], &["list"][..], &["stop"][..], &["next"][..]] {
            let out = env.tend(cmd);
            assert!(!out.status.success(), "{cmd:?}: {}", text(&out));
            assert_eq!(
                String::from_utf8_lossy(&out.stderr).trim(),
                format!(
                    "tend: {0} has mode {mode:04o}: other users could {could} its \
                     sockets and log there, so tend will not use it. Run `chmod 700 {0}` (or \
                     remove the folder, and tend creates it again with mode 0700)",
                    run.display()
                ),
                "{cmd:?}"
            );
        }
        assert!(env.global_option("@tend_daemon").is_empty(), "a daemon ran");
    }
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    if nix::unistd::getuid().is_root() {
        nix::unistd::chown(&run, Some(nix::unistd::Uid::from_raw(65534)), None).expect("chown");
        let out = env.tend(&["start"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with(&format!("tend: {} belongs to ", run.display()))
                && err.contains("(uid 65534), not to you"),
            "{err}"
        );
        nix::unistd::chown(&run, Some(nix::unistd::Uid::from_raw(0)), None).expect("chown");
    }
    env.tend_ok(&["start"]);
}

// ---------------------------------------------------------------------------
// A tmux whose pane list tend cannot read
// ---------------------------------------------------------------------------

/// A `tmux` whose pane list comes back with its field and record separators
/// replaced by `?` (tend reads the `\037` escapes of tmux 3.4 and 3.5a, but
/// not a list whose separators are lost): tend watches nothing. Doctor says so
/// — through that tmux (the list cannot be read) and through a good one
/// (the server has panes the daemon does not watch).
#[test]
fn doctor_notices_when_tend_watches_nothing() {
    let env = Env::new("set-watch");
    let real = Command::new("sh")
        .args(["-c", "command -v tmux"])
        .output()
        .expect("sh");
    let real = String::from_utf8_lossy(&real.stdout).trim().to_owned();
    let bin = env.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let wrapper = bin.join("tmux");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \" $* \" in\n*\" list-panes \"*)\n  out=$({real} \"$@\"; rc=$?; \
             echo x; exit $rc); rc=$?\n  printf '%s' \"${{out%x}}\" | sed 's/\\x1f/?/g; \
             s/\\x1e/?/g'\n  exit $rc;;\nesac\nexec {real} \"$@\"\n"
        ),
    )
    .expect("wrapper");
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let escaped = |args: &[&str]| {
        env.command(args)
            .env("PATH", &path)
            .env("TEND_TMUX_PROCESS", "1")
            .output()
            .expect("tend")
    };
    // The wrapper does what it should: the pane list is unreadable.
    let out = escaped(&["start"]);
    assert!(out.status.success(), "{}", text(&out));

    let out = escaped(&["doctor"]);
    assert!(!out.status.success(), "{}", text(&out));
    let watch = doctor_line(&out, "watch");
    assert!(
        watch.starts_with("FAIL watch      tend cannot read the pane list of this tmux (3.3a")
            && watch.contains("so it watches no pane"),
        "{}",
        text(&out)
    );

    let out = env.tend(&["doctor"]);
    assert!(!out.status.success(), "{}", text(&out));
    let watch = doctor_line(&out, "watch");
    assert!(
        watch.starts_with(
            "FAIL watch      tmux has 1 panes and tend watches none of them: the daemon cannot \
             read this tmux's pane list"
        ),
        "{}",
        text(&out)
    );
    assert_eq!(watched(&env), 0);

    // With a tmux tend reads: all well.
    env.tend_ok(&["stop"]);
    env.tend_ok(&["start"]);
    assert!(wait_until(10, || watched(&env) == 1));
    let out = env.tend(&["doctor"]);
    assert_eq!(
        doctor_line(&out, "watch"),
        "ok   watch      tend watches all 1 panes of the tmux server",
        "{}",
        text(&out)
    );
}

// ---------------------------------------------------------------------------
// Another user
// ---------------------------------------------------------------------------

/// A tmux server and tend run as user `nobody` when the tests run as root
/// (root reads a mode-000 folder all the same), else as this user, with
/// every folder under `root`.
struct Unprivileged {
    root: PathBuf,
    _dir: tempfile::TempDir,
    name: String,
    tend: PathBuf,
    as_nobody: bool,
}

impl Unprivileged {
    fn new(tag: &str) -> Option<Unprivileged> {
        let dir = tempfile::Builder::new()
            .prefix("tend-user-")
            .tempdir_in("/tmp")
            .expect("tempdir");
        let root = dir.path().to_owned();
        for sub in ["run", "state", "config", "home"] {
            std::fs::create_dir_all(root.join(sub)).expect("mkdir");
        }
        let as_nobody = nix::unistd::getuid().is_root();
        // nobody may not reach the build's folder: a copy of its own.
        let tend = root.join("tend");
        std::fs::copy(support::tend_bin(), &tend).expect("copy tend");
        let u = Unprivileged {
            root,
            _dir: dir,
            name: format!("tend-{tag}-{}", std::process::id()),
            tend,
            as_nobody,
        };
        u.own_everything();
        let out = u.run(
            "tmux",
            &["-L", &u.name, "-f", "/dev/null", "new-session", "-d"],
        );
        if !out.status.success() {
            support::skip(
                "folders_tend_cannot_read_are_reported",
                &format!("cannot start tmux as nobody: {}", text(&out)),
            );
            return None;
        }
        Some(u)
    }

    fn own_everything(&self) {
        if self.as_nobody {
            let out = Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(&self.root)
                .output()
                .expect("chown");
            assert!(out.status.success(), "{}", text(&out));
        }
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        let mut cmd = if self.as_nobody {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
            c.arg(program);
            c
        } else {
            Command::new(program)
        };
        let d = &self.root;
        // nobody's login shell is nologin: without SHELL (unset under CI)
        // tmux would run it in the pane, and the server would end with it.
        cmd.args(args)
            .env("SHELL", "/bin/sh")
            .env("XDG_RUNTIME_DIR", d.join("run"))
            .env("XDG_STATE_HOME", d.join("state"))
            .env("XDG_CONFIG_HOME", d.join("config"))
            .env("HOME", d.join("home"))
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env_remove("TEND_TMUX_SOCKET")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run")
    }

    fn tend(&self, args: &[&str]) -> Output {
        let mut all = vec!["-L", self.name.as_str()];
        all.extend(args);
        self.run(&self.tend.display().to_string(), &all)
    }
}

impl Drop for Unprivileged {
    fn drop(&mut self) {
        let _ = self.tend(&["stop"]);
        let _ = self.run("tmux", &["-L", &self.name, "kill-server"]);
        // Put the permissions back so that the folder can be removed.
        let _ = Command::new("chmod")
            .args(["-R", "u+rwx"])
            .arg(&self.root)
            .output();
    }
}
