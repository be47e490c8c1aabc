//! A headless zellij session for tests: its client runs in a private tmux
//! server (what the user's terminal would show is that pane), its server,
//! sockets, configuration and caches in a temporary folder of its own, so
//! that no test touches the user's sessions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The oldest zellij tend supports.
const OLDEST_MINOR: u32 = 45;

/// Why this machine cannot run zellij tests, if it cannot.
pub fn zellij_missing() -> Option<String> {
    let Some(version) = crate::have("zellij", "--version") else {
        return Some(
            "zellij is not installed (scripts/install-zellij.sh installs zellij 0.45)".into(),
        );
    };
    let v = version.trim_start_matches("zellij ").to_owned();
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if major == 0 && minor < OLDEST_MINOR {
        return Some(format!("zellij {v} is older than 0.{OLDEST_MINOR}"));
    }
    crate::have("tmux", "-V")
        .is_none()
        .then(|| "tmux is not installed (the zellij client runs in it)".into())
}

/// The zellij session, its client's tmux server and its folder; all
/// stopped and removed on drop.
pub struct Headless {
    dir: tempfile::TempDir,
    tmux_socket: String,
    name: String,
}

impl Headless {
    /// A session to be, named after `prefix` (short: zellij's socket path
    /// must fit in a Unix socket address): its folder, where a test puts
    /// what the session needs before [`start`](Self::start).
    pub fn new(prefix: &str) -> Headless {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in("/tmp")
            .expect("a temporary directory");
        for d in [
            "home/.config",
            "home/state",
            "config",
            "cache/zellij",
            "sock",
            "tmp",
        ] {
            std::fs::create_dir_all(dir.path().join(d)).expect("mkdir");
        }
        let name = crate::unique_name(prefix);
        Headless {
            tmux_socket: format!("{name}-client"),
            name,
            dir,
        }
    }

    /// Starts the session with `config` (after the lines that keep
    /// zellij's first-run screens away) and `layout`, and waits until its
    /// client has drawn: zellij 0.45.1's server panics when a command-line
    /// client leaves while the session is still being created.
    pub fn start(&self, config: &str, layout: &str) {
        let root = self.root();
        std::fs::write(
            root.join("config/config.kdl"),
            format!(
                "show_startup_tips false\nshow_release_notes false\n\
                 session_serialization false\n{config}"
            ),
        )
        .expect("config");
        let layout_path = root.join("layout.kdl");
        std::fs::write(&layout_path, layout).expect("layout");
        let mut shell =
            String::from("exec env -u ZELLIJ -u ZELLIJ_SESSION_NAME -u ZELLIJ_PANE_ID -u TMUX");
        for (k, v) in self.envs() {
            shell.push_str(&format!(" {k}='{}'", v.display()));
        }
        shell.push_str(&format!(
            " zellij --session '{}' --new-session-with-layout '{}'",
            self.name,
            layout_path.display()
        ));
        let status = Command::new("tmux")
            .args([
                "-L",
                &self.tmux_socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
            ])
            .args(["-x", "200", "-y", "50"])
            .arg(&shell)
            .env_remove("TMUX")
            .status()
            .expect("run tmux");
        assert!(status.success(), "tmux new-session failed");
        let drawn = crate::poll_until(Duration::from_secs(30), Duration::from_millis(100), || {
            !self.screen().trim().is_empty()
        });
        assert!(
            drawn,
            "zellij drew nothing within 30 s.\nzellij log:\n{}",
            self.log_tail()
        );
    }

    /// The session's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The session's folder.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The environment zellij, and everything that talks to it, runs with.
    pub fn envs(&self) -> Vec<(&'static str, PathBuf)> {
        let root = self.root();
        vec![
            ("HOME", root.join("home")),
            ("ZELLIJ_CONFIG_DIR", root.join("config")),
            ("XDG_CONFIG_HOME", root.join("home/.config")),
            ("XDG_CACHE_HOME", root.join("cache")),
            ("XDG_DATA_HOME", root.join("home/.local/share")),
            ("XDG_STATE_HOME", root.join("home/state")),
            ("XDG_RUNTIME_DIR", root.join("tmp")),
            ("ZELLIJ_SOCKET_DIR", root.join("sock")),
            ("TMPDIR", root.join("tmp")),
        ]
    }

    /// `program` with the session's environment, outside any multiplexer.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.envs(self.envs())
            .env_remove("ZELLIJ")
            .env_remove("ZELLIJ_SESSION_NAME")
            .env_remove("ZELLIJ_PANE_ID")
            .env_remove("TMUX")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `zellij ARGS` against this session's sockets.
    pub fn zellij(&self, args: &[&str]) -> Output {
        self.command("zellij")
            .args(args)
            .output()
            .expect("run zellij")
    }

    /// Keys typed at the zellij client (tmux `send-keys` names).
    pub fn type_keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.tmux_socket, "send-keys"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success(), "send-keys {keys:?}");
    }

    /// What the zellij client shows.
    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.tmux_socket, "capture-pane", "-p"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The end of zellij's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_dir(self.root().join("tmp"))
            .ok()
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("zellij-log/zellij.log"))
            .find(|p| p.is_file());
        log.and_then(|p| std::fs::read_to_string(p).ok())
            .map(|t| t.lines().rev().take(30).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }
}

impl Drop for Headless {
    fn drop(&mut self) {
        // The zellij server outlives its client: stop it by name, then the
        // tmux server, then (if it still runs) the server process by pid.
        let _ = self
            .command("zellij")
            .args(["kill-session", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = Command::new("tmux")
            .args(["-L", &self.tmux_socket, "kill-server"])
            .stderr(Stdio::null())
            .status();
        let marker = self.root().join("sock").to_string_lossy().into_owned();
        let deadline = Instant::now() + Duration::from_secs(3);
        while let Some(pid) = server_pid(&marker) {
            if Instant::now() > deadline {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        crate::remove_socket_file(&self.tmux_socket);
    }
}

/// The pid of the zellij server whose command line holds `marker` (its
/// socket folder, unique to one session).
fn server_pid(marker: &str) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline);
        if cmdline.contains("--server") && cmdline.contains(marker) {
            return Some(pid);
        }
    }
    None
}
