//! A tmux server for `tend restore`'s tests (`restore`, `restore_live`):
//! panes whose bash has the agent's HOME, PATH and environment, a server
//! killed and started again with the same session and window, the
//! conversations tend saved, and `tend restore` itself.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{wait_until, Env};

/// The server, its panes' shell, and where the agent's HOME is.
pub struct Lab {
    pub env: Env,
    /// The agents' HOME.
    pub home: PathBuf,
    /// Folders in front of the shell's PATH.
    path: Vec<PathBuf>,
    /// More variables for the shell.
    vars: Vec<(String, String)>,
}

impl Lab {
    pub fn new(tag: &str) -> Lab {
        let env = Env::new(tag);
        let home = env.path().join("agent-home");
        std::fs::create_dir_all(&home).expect("mkdir home");
        Lab {
            env,
            home,
            path: Vec::new(),
            vars: Vec::new(),
        }
    }

    /// `dir` in front of the panes' PATH.
    pub fn with_path(mut self, dir: PathBuf) -> Lab {
        self.path.push(dir);
        self
    }

    /// `name=value` in the panes' environment.
    pub fn with_var(mut self, name: &str, value: &str) -> Lab {
        self.vars.push((name.to_owned(), value.to_owned()));
        self
    }

    /// A folder of the test's, made.
    pub fn folder(&self, name: &str) -> PathBuf {
        let f = self.env.path().join(name);
        std::fs::create_dir_all(&f).expect("mkdir folder");
        f
    }

    /// The shell every pane runs: bash with a known prompt.
    fn shell(&self) -> String {
        let mut path: Vec<String> = self.path.iter().map(|p| p.display().to_string()).collect();
        path.push("/usr/local/bin:/usr/bin:/bin".into());
        let mut words = vec![
            "env".to_owned(),
            format!("PATH={}", path.join(":")),
            format!("HOME={}", self.home.display()),
            "PS1=t$ ".into(),
            "HISTFILE=/dev/null".into(),
            "TERM=tmux-256color".into(),
        ];
        words.extend(self.vars.iter().map(|(k, v)| format!("{k}={v}")));
        words.extend(["bash", "--norc", "--noprofile", "-i"].map(str::to_owned));
        tend_tmux::escape::shell_join(&words)
    }

    /// A new server (the old one gone first) with session `work`, window
    /// `agent` in `folder`; new windows run the same shell.
    pub fn server(&self, folder: &Path) {
        self.server_gone();
        let shell = self.shell();
        // -c is a format: a folder's `#` written as `##`.
        let dir = folder.display().to_string().replace('#', "##");
        let args = [
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "work",
            "-n",
            "agent",
            "-c",
            &dir,
            "-x",
            "160",
            "-y",
            "40",
            &shell,
        ];
        // tmux 3.3a: a server started right after another exits may die
        // at once ("server exited unexpectedly"); the next one lives.
        let mut out = self.env.tmux(&args);
        for _ in 0..5 {
            if out.status.success() {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
            out = self.env.tmux(&args);
        }
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.env
            .tmux(&["set-option", "-g", "default-command", &shell]);
        assert!(
            wait_until(10, || self.screen("work:agent").contains("t$")),
            "no prompt: {}",
            self.screen("work:agent")
        );
    }

    /// A window `name` at index `index` of session `work`, in `folder`.
    pub fn window(&self, index: u32, name: &str, folder: &Path) {
        let dir = folder.display().to_string().replace('#', "##");
        let target = format!("work:{index}");
        self.env
            .tmux(&["new-window", "-d", "-t", &target, "-n", name, "-c", &dir]);
    }

    pub fn screen(&self, target: &str) -> String {
        self.env.tmux_out(&["capture-pane", "-p", "-t", target])
    }

    /// What runs in the pane's foreground, as tmux names it.
    pub fn command(&self, target: &str) -> String {
        self.env
            .tmux_out(&["display", "-p", "-t", target, "#{pane_current_command}"])
    }

    /// The conversations in the state file.
    pub fn saved(&self) -> Vec<Value> {
        let dir = self.env.path().join("state/tend");
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|t| serde_json::from_str::<Value>(&t).ok())
            .flat_map(|v| v["conversations"].as_array().cloned().unwrap_or_default())
            .collect()
    }

    /// Waits until tend saved a running conversation with an id in
    /// `folder`; returns the id.
    pub fn saved_id(&self, agent: &str, folder: &Path, secs: u64) -> String {
        let find = || {
            self.saved().into_iter().find_map(|c| {
                (c["agent"] == agent
                    && c["end"]["kind"] == "running"
                    && c["folder"] == folder.display().to_string())
                .then(|| c["id"].as_str().map(str::to_owned))
                .flatten()
            })
        };
        assert!(
            wait_until(secs, || find().is_some()),
            "tend saved no conversation of {agent}: {:?}",
            self.saved()
        );
        find().expect("found")
    }

    /// `tend restore ARGS`, which must succeed; its output.
    pub fn restore(&self, args: &[&str]) -> String {
        let mut all = vec!["restore"];
        all.extend_from_slice(args);
        self.env.tend_ok(&all)
    }

    /// Kills the server, if one runs, and waits until it is gone (a new
    /// server started while the old one exits dies with it).
    pub fn server_gone(&self) {
        let _ = self.env.tmux(&["kill-server"]);
        assert!(
            wait_until(10, || !self.env.tmux(&["has-session"]).status.success()),
            "the server did not exit"
        );
    }

    /// Kills the server and waits until it and its daemon are gone.
    pub fn kill_server(&self) {
        let pid = self.env.daemon_pid();
        self.server_gone();
        if let Some(pid) = pid {
            assert!(
                wait_until(10, || !Path::new(&format!("/proc/{pid}")).exists()),
                "the daemon outlived its server"
            );
        }
    }
}

impl Drop for Lab {
    /// The server's socket goes with it (the lab starts several servers on
    /// one; tmux leaves the file behind).
    fn drop(&mut self) {
        let _ = self.env.tend(&["stop"]);
        let _ = self.env.tmux(&["kill-server"]);
        let dir =
            std::env::var_os("TMUX_TMPDIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
        let socket = dir
            .join(format!("tmux-{}", nix::unistd::getuid()))
            .join(&self.env.name);
        let _ = std::fs::remove_file(socket);
    }
}
