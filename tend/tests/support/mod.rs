//! Shared helpers for tests against real tmux servers on private sockets.
#![allow(dead_code)]

pub mod offline;
pub mod restore_lab;
pub mod shell;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::Duration;

pub use tend_testkit::{check_tmux_version, skip};

/// A private tmux server with its own tend runtime, state and config
/// directories. Dropping it stops tend and kills the server.
pub struct Env {
    pub name: String,
    root: PathBuf,
    owner: Option<tempfile::TempDir>,
    /// Held until the server is gone (fields drop after `Drop::drop`).
    _turn: Turn,
}

/// The machine, shared by the tests of this binary: the fault tests take
/// it whole ([`alone`]: a 10 MB/s flood, daemon kills, memory figures),
/// every test that starts a server takes a share ([`beside_others`]), so
/// that a flood never runs beside a test that waits on a daemon or on
/// zellij. (They were separate binaries, run one after another, before
/// they became modules of one.) A lock of its own rather than `RwLock`:
/// a turn moves with its `Env` to another thread.
static MACHINE: Mutex<Machine> = Mutex::new(Machine {
    shares: 0,
    whole: false,
    waiting_whole: 0,
});
static MACHINE_FREED: Condvar = Condvar::new();

struct Machine {
    shares: u32,
    whole: bool,
    waiting_whole: u32,
}

thread_local! {
    /// How many turns this test's thread holds: a second `Env` in the same
    /// test must not queue behind a waiting [`alone`] while its first
    /// holds a share.
    static TURNS: Cell<u32> = const { Cell::new(0) };
}

/// A test's hold on [`MACHINE`]; released on drop.
pub struct Turn {
    held: Option<(bool, ThreadId)>,
}

fn machine() -> MutexGuard<'static, Machine> {
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}

fn wait(m: MutexGuard<'static, Machine>) -> MutexGuard<'static, Machine> {
    MACHINE_FREED.wait(m).unwrap_or_else(|e| e.into_inner())
}

/// The whole machine, for a test that loads it or measures it.
pub fn alone() -> Turn {
    assert_eq!(
        TURNS.with(Cell::get),
        0,
        "take the machine alone() before starting any server"
    );
    let mut m = machine();
    m.waiting_whole += 1;
    while m.whole || m.shares > 0 {
        m = wait(m);
    }
    m.waiting_whole -= 1;
    m.whole = true;
    TURNS.with(|t| t.set(1));
    Turn {
        held: Some((true, std::thread::current().id())),
    }
}

/// A share of the machine: waits while a test has it whole, or wants it
/// and this thread holds no turn yet.
pub fn beside_others() -> Turn {
    let nested = TURNS.with(Cell::get) > 0;
    let mut m = machine();
    while !nested && (m.whole || m.waiting_whole > 0) {
        m = wait(m);
    }
    m.shares += 1;
    TURNS.with(|t| t.set(t.get() + 1));
    Turn {
        held: Some((false, std::thread::current().id())),
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let Some((whole, thread)) = self.held else {
            return;
        };
        let mut m = machine();
        if whole {
            m.whole = false;
        } else {
            m.shares -= 1;
        }
        MACHINE_FREED.notify_all();
        if thread == std::thread::current().id() {
            TURNS.with(|t| t.set(t.get().saturating_sub(1)));
        }
    }
}

pub fn tend_bin() -> &'static str {
    env!("CARGO_BIN_EXE_tend")
}

pub fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus")
        .join(rel)
}

impl Env {
    /// Writes an executable `name` holding `text` into the test's own
    /// `bin` folder (a stand-in program for PATH); returns its path.
    pub fn executable(&self, name: &str, text: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let bin = self.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir bin");
        let path = bin.join(name);
        std::fs::write(&path, text).expect("write a stand-in program");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    pub fn new(tag: &str) -> Env {
        check_tmux_version();
        let turn = beside_others();
        let name = tend_testkit::unique_name(&format!("tend-{tag}"));
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["run", "state", "config", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        let env = Env {
            name,
            root: dir.path().to_owned(),
            owner: Some(dir),
            _turn: turn,
        };
        let out = env.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "200",
            "-y",
            "50",
        ]);
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // tmux 3.2a sizes a window that no client shows by default-size
        // (80x24), whatever -x and -y the session was made with: the
        // recordings replayed here are 200x50 and smaller.
        env.tmux(&["set-option", "-g", "default-size", "200x50"]);
        env.fit_window("=main:0", 200, 50);
        env
    }

    /// Gives `target` (a window) the size its detached session was made
    /// with. tmux 3.2a makes a detached session's first window 80x23,
    /// whatever -x and -y (and default-size) say: the size of the command
    /// client that asked, which has no terminal (80x24 less the status
    /// line). Later versions already made it `width`x`height`. Returns
    /// whether the window had to be resized.
    pub fn fit_window(&self, target: &str, width: u32, height: u32) -> bool {
        let now = self.tmux_out(&[
            "display-message",
            "-p",
            "-t",
            target,
            "#{window_width}x#{window_height}",
        ]);
        if now != format!("{width}x{height}") {
            let o = self.tmux(&[
                "resize-window",
                "-t",
                target,
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ]);
            assert!(
                o.status.success(),
                "resize-window {target}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            return true;
        }
        false
    }

    /// A second handle on the same server and directories, for another
    /// thread; dropping it does nothing.
    pub fn view(&self) -> Env {
        Env {
            name: self.name.clone(),
            root: self.root.clone(),
            owner: None,
            _turn: Turn { held: None },
        }
    }

    /// The test's private directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    fn apply_env(&self, cmd: &mut Command) {
        let d = self.root.as_path();
        cmd.env("XDG_RUNTIME_DIR", d.join("run"))
            .env("XDG_STATE_HOME", d.join("state"))
            .env("XDG_CONFIG_HOME", d.join("config"))
            .env("HOME", d.join("home"))
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env_remove("TEND_TMUX_SOCKET")
            // No desktop pop-ups on a developer's machine from these tests.
            .env_remove("DBUS_SESSION_BUS_ADDRESS");
    }

    pub fn tmux(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("tmux");
        cmd.arg("-L")
            .arg(&self.name)
            .args(args)
            .stdin(Stdio::null());
        cmd.output().expect("run tmux")
    }

    pub fn tmux_out(&self, args: &[&str]) -> String {
        let o = self.tmux(args);
        String::from_utf8_lossy(&o.stdout)
            .trim_end_matches('\n')
            .to_owned()
    }

    /// `tend -L <this server> args…` in this environment, not yet run (for
    /// a test that spawns it or adds to its environment).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(tend_bin());
        self.apply_env(&mut cmd);
        cmd.arg("-L")
            .arg(&self.name)
            .args(args)
            .stdin(Stdio::null());
        cmd
    }

    pub fn tend(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run tend")
    }

    pub fn tend_ok(&self, args: &[&str]) -> String {
        let o = self.tend(args);
        assert!(
            o.status.success(),
            "tend {args:?} failed: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The command line a pane runs to replay a recording as agent `agent`.
    pub fn play_cmd(&self, agent: &str, cast: &Path, hold: u32) -> String {
        format!(
            "env TEND_AGENT={agent} '{}' play '{}' --hold {hold}",
            tend_bin(),
            cast.display()
        )
    }

    /// Opens a window running `cmd`; returns its pane id.
    /// A new background window in the session named `session` running
    /// `cmd`; returns its pane id.
    pub fn window(&self, session: &str, cmd: &str) -> String {
        self.window_at(&format!("={session}:"), cmd)
    }

    /// [`Env::window`] at any tmux target (`$1:` for a session whose name
    /// is hostile).
    pub fn window_at(&self, target: &str, cmd: &str) -> String {
        self.tmux_out(&[
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            target,
            cmd,
        ])
    }

    pub fn pane_option(&self, pane: &str, name: &str) -> String {
        self.tmux_out(&["show-options", "-pqv", "-t", pane, name])
    }

    pub fn global_option(&self, name: &str) -> String {
        self.tmux_out(&["show-options", "-gqv", name])
    }

    pub fn list_json(&self) -> serde_json::Value {
        let out = self.tend_ok(&["list", "--json"]);
        serde_json::from_str(&out).expect("list --json")
    }

    /// `pane`'s row of `tend list --json` (null when it is not listed).
    pub fn row(&self, pane: &str) -> serde_json::Value {
        self.list_json()
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["pane"] == pane)
            .cloned()
            .unwrap_or_default()
    }

    /// Types `line` and Enter into `pane`.
    pub fn type_line(&self, pane: &str, line: &str) {
        self.tmux(&["send-keys", "-t", pane, "-l", line]);
        self.tmux(&["send-keys", "-t", pane, "Enter"]);
    }

    pub fn daemon_pid(&self) -> Option<u32> {
        let out = self.tend(&["start", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        v["pid"].as_u64().map(|p| p as u32)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if self.owner.is_none() {
            return;
        }
        let _ = self.tend(&["stop"]);
        let _ = self.tmux(&["kill-server"]);
    }
}

/// A second tmux server whose one pane runs a real tmux client attached to
/// the server under test: what that pane shows is exactly what a user's
/// terminal would. Killed on drop.
pub struct Terminal {
    pub name: String,
}

impl Terminal {
    pub fn attach(env: &Env, session: &str, tag: &str) -> Terminal {
        let name = format!("{}-{tag}-term", env.name);
        let client = format!("exec env -u TMUX tmux -L {} attach -t ={session}", env.name);
        let t = Terminal { name };
        let out = t.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "160",
            "-y",
            "24",
            &client,
        ]);
        assert!(
            out.status.success(),
            "outer tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The outer server's own status line would be in the way.
        t.tmux(&["set", "-g", "status", "off"]);
        // Keys typed while the inner client is still starting (reading
        // its terminal's answers to its queries) can be lost: a user
        // types at a client that shows its session. Wait until the inner
        // server lists the client and its status line is drawn.
        let inner = env.name.clone();
        let ready = wait_until(20, || {
            let listed = Command::new("tmux")
                .env_remove("TMUX")
                .args(["-L", &inner, "list-clients", "-F", "#{client_session}"])
                .output()
                .map(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .lines()
                        .any(|l| l == session)
                })
                .unwrap_or(false);
            listed && t.status_line().contains(session)
        });
        assert!(ready, "the client never showed `{session}`: {}", t.screen());
        t
    }

    pub fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .env_remove("TMUX")
            .arg("-L")
            .arg(&self.name)
            .args(args)
            .output()
            .expect("run tmux")
    }

    /// The client's bottom line: its status line.
    pub fn status_line(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-t", "%0"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines().last().unwrap_or("").to_owned()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

impl Terminal {
    /// Everything the client's terminal shows.
    pub fn screen(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-t", "%0"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The client's screen once `ready` holds for it, polled for up to
    /// `secs`; panics naming `what` and showing the last screen otherwise.
    pub fn screen_when(
        &self,
        secs: u64,
        what: &str,
        mut ready: impl FnMut(&str) -> bool,
    ) -> String {
        let mut screen = String::new();
        let ok = wait_until(secs, || {
            screen = self.screen();
            ready(&screen)
        });
        assert!(ok, "{what}: the client shows\n{screen}");
        screen
    }

    /// Types keys into the client, as a user at its keyboard.
    pub fn type_keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "%0"];
        args.extend(keys);
        self.tmux(&args);
    }
}

/// The folders from `path`'s up to `env`'s root opened to everyone, put
/// back as they were when dropped: tend refuses a runtime folder others
/// can enter, so `tend stop` at the end needs it private again.
pub struct OpenedUp {
    modes: Vec<(PathBuf, u32)>,
}

impl OpenedUp {
    /// Opens `path`'s folders (to `mode`) up to and including `env`'s
    /// root.
    pub fn folders_of(env: &Env, path: &Path, mode: u32) -> OpenedUp {
        use std::os::unix::fs::PermissionsExt;
        let mut modes = Vec::new();
        let mut dir = path.parent().map(Path::to_owned);
        while let Some(d) = dir {
            if let Ok(m) = std::fs::metadata(&d) {
                modes.push((d.clone(), m.permissions().mode()));
            }
            let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode));
            if d == env.path() {
                break;
            }
            dir = d.parent().map(Path::to_owned);
        }
        OpenedUp { modes }
    }
}

impl Drop for OpenedUp {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        for (p, mode) in self.modes.drain(..).rev() {
            let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode));
        }
    }
}

/// Runs a Python `script` as user `nobody` (needs root), after opening
/// `path`'s directories up to `env`'s root to everyone, so that only the
/// daemon's own peer check stands between that user and a socket there.
pub fn python_as_nobody(env: &Env, path: &Path, script: &str) -> Output {
    use std::os::unix::fs::PermissionsExt;
    let opened = OpenedUp::folders_of(env, path, 0o755);
    let before = std::fs::metadata(path).map(|m| m.permissions().mode());
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666));
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            script,
        ])
        .output()
        .expect("setpriv");
    if let Ok(mode) = before {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
    }
    drop(opened);
    out
}

/// Polls `f` every 50 ms until it returns true or `secs` pass.
pub fn wait_until(secs: u64, f: impl FnMut() -> bool) -> bool {
    tend_testkit::poll_until(Duration::from_secs(secs), Duration::from_millis(50), f)
}

/// The distinct `(state/reason)` values of the labels, in order.
pub fn label_sequence(labels: &Path) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(labels).expect("labels")).expect("json");
    let mut out: Vec<String> = Vec::new();
    for b in v["timeline"].as_array().expect("timeline") {
        let Some(s) = b["state"].as_str() else {
            continue;
        };
        let s = match b["reason"].as_str() {
            Some(r) => format!("{s}/{r}"),
            None => s.to_owned(),
        };
        if out.last() != Some(&s) {
            out.push(s);
        }
    }
    out
}

/// The input log without the terminal's answers to the recording's
/// queries (cursor reports `ESC [ … R`, colour reports `ESC ] … BEL`/ST):
/// the keys a user or tend typed. A lone ESC (the Escape key) and the
/// arrow keys (`ESC [ A` to `D`) stay.
pub fn typed(log: &Path) -> Vec<u8> {
    let bytes = std::fs::read(log).unwrap_or_default();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            // An arrow key (CSI A to D, no parameters) is typed, not a reply.
            (0x1b, Some(b'[')) if matches!(bytes.get(i + 2), Some(b'A'..=b'D')) => {
                out.extend_from_slice(&bytes[i..i + 3]);
                i += 3;
            }
            (0x1b, Some(b'[')) => {
                let end = bytes[i + 2..]
                    .iter()
                    .position(|b| (0x40..=0x7e).contains(b))
                    .map_or(bytes.len(), |p| i + 2 + p + 1);
                i = end;
            }
            (0x1b, Some(b']')) | (0x1b, Some(b'P')) => {
                let mut j = i + 2;
                while j < bytes.len()
                    && bytes[j] != 0x07
                    && !(bytes[j] == 0x1b && bytes.get(j + 1) == Some(&b'\\'))
                {
                    j += 1;
                }
                i = if j < bytes.len() && bytes[j] == 0x1b {
                    j + 2
                } else {
                    j + 1
                };
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}
