//! Test support: private tmux servers that are always killed.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tend_tmux::escape::argv_arg;
use tend_tmux::{Server, SocketSpec};

/// How the tmux under test prints command output.
pub fn printing(t: &TestServer) -> tend_tmux::Printing {
    t.server.capabilities().printing
}

pub use tend_testkit::check_tmux_version;

/// A tmux server on a private socket (`tmux -L tend-t-<pid>-<n>`), started
/// with no configuration. Dropping it kills the server, so a failing test
/// leaves nothing behind.
pub struct TestServer {
    pub name: String,
    pub server: Server,
    pub dir: tempfile::TempDir,
    /// A directory whose path has no `.` or `:` (tmux rewrites those in
    /// session names), for hostile names that try to create files in it.
    pub pwn_dir: PathBuf,
    clients: Vec<Child>,
}

impl TestServer {
    /// A server with one detached 200x50 session named `main` running
    /// `/bin/sh`.
    pub fn start() -> TestServer {
        check_tmux_version();
        let name = tend_testkit::unique_name("tend-t");
        let dir = tempfile::tempdir().expect("temporary directory");
        let pwn_dir = PathBuf::from(format!("/tmp/{name}-pwn"));
        std::fs::create_dir_all(&pwn_dir).expect("creating the pwn directory");
        let t = TestServer {
            // The daemon's way: commands over the socket, no process each.
            server: Server::new(SocketSpec::Name(name.clone())).without_client_process(),
            name,
            dir,
            pwn_dir,
            clients: Vec::new(),
        };
        t.tmux_ok(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "200",
            "-y",
            "50",
            "-s",
            "main",
            "/bin/sh",
        ]);
        // tmux 3.2a sizes a window that no client shows by default-size
        // (80x24), whatever -x and -y the session was made with.
        t.tmux_ok(&["set-option", "-g", "default-size", "200x50"]);
        t.fit_window("=main:0", 200, 50);
        t
    }

    /// Gives `target` (a window) the size its detached session was made
    /// with. tmux 3.2a makes a detached session's first window 80x23,
    /// whatever -x and -y (and default-size) say: the size of the command
    /// client that asked, which has no terminal (80x24 less the status
    /// line). Later versions already made it `width`x`height`.
    pub fn fit_window(&self, target: &str, width: u32, height: u32) {
        let now = self.display(target, "#{window_width}x#{window_height}");
        if now != format!("{width}x{height}") {
            self.tmux_ok(&[
                "resize-window",
                "-t",
                target,
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ]);
        }
    }

    /// Runs tmux on this server directly (not through the crate under
    /// test), returning (success, stdout, stderr).
    pub fn tmux(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new("tmux")
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env("ENV", "/dev/null")
            .arg("-u")
            .arg("-L")
            .arg(&self.name)
            // A trailing `;` would end the command (see escape::argv_arg).
            .args(args.iter().map(|a| argv_arg(a).into_owned()))
            .stdin(Stdio::null())
            .output()
            .expect("running tmux");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs tmux and panics with its stderr on failure; returns stdout.
    pub fn tmux_ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.tmux(args);
        assert!(ok, "tmux {args:?} failed: {err}");
        out
    }

    /// A new pane split off `target` (left unfocused) running `command`
    /// through the shell.
    pub fn split(&self, target: &str, command: &str) -> tend_tmux::PaneId {
        let id = self.tmux_ok(&[
            "split-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            target,
            command,
        ]);
        id.trim().parse().expect("split-window printed a pane id")
    }

    /// `display -p -t target format`, trimmed of its newline.
    pub fn display(&self, target: &str, format: &str) -> String {
        let out = self.tmux_ok(&["display-message", "-p", "-t", target, format]);
        out.strip_suffix('\n').unwrap_or(&out).to_string()
    }

    /// A path inside the test's temporary directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Attaches a real (pseudo-terminal) client in the background, as a
    /// user would, and waits until tmux lists it. What the client's terminal
    /// receives is recorded in [`TestServer::typescript`].
    pub fn attach_client(&mut self, session: &str) -> String {
        let before = self.client_names();
        let typescript = self.path(&format!("client-{}.typescript", self.clients.len()));
        let cmd = format!(
            "stty cols 120 rows 40; exec tmux -L {} attach -t '{}'",
            self.name, session
        );
        let child = Command::new("script")
            .arg("-qfc")
            .arg(&cmd)
            .arg(&typescript)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env("TERM", "xterm-256color")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting script(1) for a client");
        self.clients.push(child);
        let mut new = String::new();
        assert!(
            wait_until(Duration::from_secs(10), || {
                let now = self.client_names();
                match now.into_iter().find(|c| !before.contains(c)) {
                    Some(c) => {
                        new = c;
                        true
                    }
                    None => false,
                }
            }),
            "the client never attached"
        );
        new
    }

    /// Types `bytes` into the `n`th attached client's terminal, as a user
    /// at the keyboard would.
    pub fn type_keys(&mut self, n: usize, bytes: &[u8]) {
        use std::io::Write;
        let stdin = self.clients[n].stdin.as_mut().expect("client stdin");
        stdin.write_all(bytes).expect("typing into the client");
        stdin.flush().expect("typing into the client");
    }

    /// Everything the `n`th attached client's terminal received so far.
    pub fn typescript(&self, n: usize) -> String {
        read(&self.path(&format!("client-{n}.typescript")))
    }

    fn client_names(&self) -> Vec<String> {
        let (_, out, _) = self.tmux(&["list-clients", "-F", "#{client_name}"]);
        out.lines().map(str::to_string).collect()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
        for c in &mut self.clients {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.pwn_dir);
        // tmux leaves its socket file behind.
        let _ = std::fs::remove_file(self.server.key());
    }
}

/// Polls `cond` every 20 ms until it holds or `timeout` passes.
pub fn wait_until(timeout: Duration, cond: impl FnMut() -> bool) -> bool {
    tend_testkit::poll_until(timeout, Duration::from_millis(20), cond)
}

/// How long one test's server may live.
const WATCHDOG: Duration = Duration::from_secs(120);

/// The generous deadline for things tmux does asynchronously.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Reads a file, empty if missing.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

impl TestServer {
    /// The hostile name from the brief, with its command substitutions
    /// aimed at files in [`TestServer::pwn_dir`].
    pub fn hostile_name(&self) -> String {
        let d = self.pwn_dir.display();
        format!("it's \"x\" #{{pane_id}} ; $(touch {d}/pwned) `touch {d}/pwned2` #(touch {d}/pwned3) x;")
    }

    /// Fails the test if any hostile name got executed.
    pub fn assert_not_pwned(&self) {
        let entries: Vec<_> = std::fs::read_dir(&self.pwn_dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(
            entries.is_empty(),
            "a hostile name was executed: {entries:?}"
        );
    }
}
