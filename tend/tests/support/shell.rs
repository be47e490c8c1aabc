//! A private tmux server whose one pane (`%0`) runs an interactive bash
//! with a known prompt: real processes for the tests that read process
//! trees (`identity_tmux`, `platform`) without a tend daemon. Killed, and
//! its socket file removed, on drop.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The shell's prompt.
pub const PS1: &str = "tend$ ";

/// What the pane's shell starts with, beyond the prompt.
#[derive(Default)]
pub struct ShellOptions<'a> {
    /// `HOME`, when not the test's own.
    pub home: Option<&'a Path>,
    /// Folders put in front of `PATH`.
    pub path: &'a [PathBuf],
    /// More variables for the shell.
    pub env: &'a [(&'a str, String)],
}

/// The server.
pub struct Shell {
    server: tend_testkit::Server,
}

impl Shell {
    /// Starts the server (160x40) and waits for the prompt; `None`, with a
    /// notice (a failure under CI), where tmux is not installed.
    pub fn start(tag: &str, opts: &ShellOptions) -> Option<Shell> {
        if Command::new("tmux").arg("-V").output().is_err() {
            super::skip(tag, "tmux is not installed");
            return None;
        }
        let t = Shell {
            server: tend_testkit::Server::new(&format!("tend-shell-{tag}")),
        };
        let mut search: Vec<String> = opts.path.iter().map(|p| p.display().to_string()).collect();
        search.push(std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()));
        let mut args: Vec<String> = ["-f", "/dev/null", "new-session", "-d", "-s", "t"]
            .into_iter()
            .chain(["-x", "160", "-y", "40"])
            .map(str::to_owned)
            .collect();
        let mut env = vec![
            ("PS1", PS1.to_owned()),
            ("HISTFILE", "/dev/null".to_owned()),
            ("TEND_AGENT", String::new()),
        ];
        if let Some(home) = opts.home {
            env.push(("HOME", home.display().to_string()));
        }
        env.extend(opts.env.iter().cloned());
        for (k, v) in env {
            args.push("-e".into());
            args.push(format!("{k}={v}"));
        }
        // Several words: tmux runs them itself (no `sh -c` between) and
        // `env` execs bash, so the pane's pid is the interactive shell.
        // `PATH` goes through `env`: tmux sets a new pane's `PATH` from the
        // client, over `-e`.
        args.push("env".into());
        args.push(format!("PATH={}", search.join(":")));
        args.extend(["bash", "--noprofile", "--norc", "-i"].map(str::to_owned));
        let out = t.cmd(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        t.wait_prompt();
        Some(t)
    }

    /// Runs a tmux command against this server.
    pub fn cmd(&self, args: &[&str]) -> Output {
        self.server.cmd(args)
    }

    /// The pid of the pane's shell.
    pub fn pane_pid(&self) -> u32 {
        let out = self.cmd(&["display", "-p", "-t", "%0", "#{pane_pid}"]);
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("pane pid")
    }

    /// Types `line` and Enter at the shell.
    pub fn type_line(&self, line: &str) {
        assert!(self
            .cmd(&["send-keys", "-t", "%0", "-l", line])
            .status
            .success());
        assert!(self
            .cmd(&["send-keys", "-t", "%0", "Enter"])
            .status
            .success());
    }

    /// What the pane shows.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "%0"]).stdout).into_owned()
    }

    /// The shell's prompt is the last line, waiting for input.
    pub fn prompt_visible(&self) -> bool {
        let screen = self.screen();
        let last = screen.lines().rev().find(|l| !l.trim().is_empty());
        last.is_some_and(|l| l.trim_end() == PS1.trim_end())
    }

    /// Waits (up to 10 s) for the prompt.
    pub fn wait_prompt(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.prompt_visible() {
            assert!(
                Instant::now() < deadline,
                "no prompt; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
