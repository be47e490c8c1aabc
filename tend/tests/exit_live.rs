//! After an agent exits, its pane reads `exited` until the next agent
//! starts there — live, with the real agent CLIs, the real daemon and a
//! private tmux server.
//!
//! Opt-in (`TEND_TEST_REAL_AGENTS=1`): it runs the CLIs installed under the
//! folders of `$TEND_AGENT_DIRS` (`:`-separated), else `$AGENTS_DIR`, else
//! the four folders `tools/agentlab/setup.sh` fills. Every CLI runs offline:
//! its model endpoint is a closed local port, and nothing here needs a
//! model answer.
//!
//! One pane runs the agents one after another, as a user would: start one,
//! wait until tend names it and it is at its prompt, leave it with its own
//! exit command, check that the pane reads `exited` and keeps reading it
//! (also after a command that is not an agent), then start the next agent,
//! which replaces the exited run. At its prompt, each agent's window is
//! first resized across 120, 200, 250 and 80 columns, and the pane must
//! read `idle` throughout. The last agent is started a second time,
//! so that both a different agent and the same one are seen replacing an
//! exited run.

use crate::support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::offline;
use support::{wait_until, Env};

/// One agent CLI: how a user starts it and leaves it.
struct Cli {
    agent: &'static str,
    /// The program under an agents folder.
    rel: &'static str,
    /// The command line typed at the shell (the program found on `PATH`).
    line: &'static str,
    /// Text the agent shows once it takes keys at its prompt (`|` between
    /// the texts of different versions).
    ready: &'static str,
    /// The keys that make it exit, typed literally, then Enter (as
    /// `tools/agentlab/harness.py` does).
    exit: &'static str,
}

const CLIS: [Cli; 13] = [
    Cli {
        agent: "claude",
        rel: "node_modules/.bin/claude",
        line: "claude",
        ready: "? for shortcuts",
        exit: "/exit",
    },
    Cli {
        agent: "codex",
        rel: "node_modules/.bin/codex",
        line: "codex",
        // The bare composer comes first, while Codex connects to its
        // background service, and loses keys typed then.
        ready: "← for agents",
        exit: "/quit",
    },
    Cli {
        agent: "gemini",
        rel: "node_modules/.bin/gemini",
        line: "gemini",
        ready: "Type your message",
        exit: "/quit",
    },
    Cli {
        agent: "aider",
        rel: "venv/bin/aider",
        // Outside a git repository aider first asks whether to create
        // one; the work folder is not one.
        line: "aider --no-git",
        ready: "\n>",
        exit: "/exit",
    },
    Cli {
        agent: "opencode",
        rel: "node_modules/.bin/opencode",
        line: "opencode",
        ready: "ctrl+p commands",
        exit: "/exit",
    },
    Cli {
        agent: "qwen",
        rel: "node_modules/.bin/qwen",
        line: "qwen",
        // 0.24's footer shows the approval mode instead
        ready: "? for shortcuts|(shift + tab to cycle)",
        exit: "/quit",
    },
    Cli {
        agent: "pi",
        rel: "node_modules/.bin/pi",
        line: "pi --provider fakellm --model fake-model",
        ready: "%/128k",
        exit: "/quit",
    },
    Cli {
        agent: "kilo",
        rel: "node_modules/.bin/kilo",
        line: "kilo",
        ready: "ctrl+p commands",
        exit: "/exit",
    },
    // `/exit` opens Grok CLI's command list and its Enter only picks the
    // entry; the bare word `exit` quits (its start-up hint says so).
    Cli {
        agent: "grok",
        rel: "node_modules/.bin/grok",
        line: "grok",
        ready: "auto-edit: ",
        exit: "exit",
    },
    // Continue CLI reads ~/.continue/config.yaml (written by
    // support::offline::configure).
    Cli {
        agent: "continue",
        rel: "node_modules/.bin/cn",
        line: "cn",
        ready: "Ask anything",
        exit: "/exit",
    },
    // Kimi CLI 1.51.0 reads ~/.kimi/config.toml (written by
    // support::offline::configure); its status line ends in 'context: …'.
    Cli {
        agent: "kimi",
        rel: "venv/bin/kimi",
        line: "kimi",
        ready: "context: ",
        exit: "/exit",
    },
    // Mistral Vibe reads ~/.vibe/config.toml (written by
    // support::offline::configure); its status line ends in 'tokens (0%)'.
    Cli {
        agent: "vibe",
        rel: "venv/bin/vibe",
        line: "vibe",
        ready: "tokens (",
        exit: "/exit",
    },
    // Cline CLI reads ~/.cline/data/settings (written by
    // support::offline::configure); `-i` opens its TUI, whose bottom line is
    // 'Auto-approve all disabled (Shift+Tab)'.
    Cli {
        agent: "cline",
        rel: "node_modules/.bin/cline",
        line: "cline -i",
        ready: "Auto-approve all",
        exit: "/exit",
    },
];

/// The pane under test and what its shell reports.
struct Pane<'a> {
    env: &'a Env,
    id: String,
    /// Every exit status the shell saw, one a line (its `PROMPT_COMMAND`).
    statuses: PathBuf,
}

impl Pane<'_> {
    /// Types `text` and Enter; returns when Enter was sent.
    fn type_line(&self, text: &str) -> Instant {
        let out = self.env.tmux(&["send-keys", "-t", &self.id, "-l", text]);
        assert!(out.status.success(), "send-keys: {out:?}");
        // An Enter right after a burst of text can be taken as part of a
        // paste by some TUIs; a pause, as a user's, avoids that.
        std::thread::sleep(Duration::from_millis(400));
        let at = Instant::now();
        let out = self.env.tmux(&["send-keys", "-t", &self.id, "Enter"]);
        assert!(out.status.success(), "send-keys Enter: {out:?}");
        at
    }

    fn screen(&self) -> String {
        self.env
            .tmux_out(&["capture-pane", "-p", "-J", "-t", &self.id])
    }

    fn option(&self, name: &str) -> String {
        self.env.pane_option(&self.id, name)
    }

    /// `tend get <pane> --json`.
    fn get(&self) -> Value {
        let out = self.env.tend_ok(&["get", &self.id, "--json"]);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("tend get --json: {e}: {out}"))
    }

    /// The exit statuses the shell has reported so far.
    fn statuses(&self) -> Vec<i32> {
        std::fs::read_to_string(&self.statuses)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    fn context(&self) -> String {
        // What tend read, kept for `tend replay` (outside the test's
        // directory, which goes when the test ends).
        let keep = std::env::temp_dir().join(format!(
            "tend-exit-live-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis())
        ));
        let captured = self
            .env
            .tend(&["capture", &self.id, &keep.display().to_string()]);
        format!(
            "tend capture: {} {}\ntend get: {}\ntend explain:\n{}\nscreen:\n{}",
            keep.display(),
            String::from_utf8_lossy(&captured.stderr),
            String::from_utf8_lossy(&self.env.tend(&["get", &self.id, "--json"]).stdout),
            String::from_utf8_lossy(&self.env.tend(&["explain", &self.id]).stdout),
            self.screen()
        )
    }
}

/// Starts `cli` in the pane and waits until tend names it and it sits at
/// its prompt; returns how long naming it took.
///
/// Until tend names it, the pane keeps reading the previous agent's exit
/// (`prev`): typing a command at the shell and the command's start do not
/// clear it.
fn start(p: &Pane, cli: &Cli, prev: Option<&str>) -> Duration {
    let t0 = p.type_line(cli.line);
    let mut named = None;
    let mut wrong = None;
    let ok = wait_until(180, || {
        if named.is_none() {
            let seen = p.env.tmux_out(&[
                "display",
                "-p",
                "-t",
                &p.id,
                "#{@tend_agent} #{@tend_state} #{@tend_exit_code}",
            ]);
            let agent = seen.split(' ').next().unwrap_or_default();
            if agent == cli.agent {
                named = Some(t0.elapsed());
            } else if let Some(prev) = prev {
                if wrong.is_none() && !seen.starts_with(&format!("{prev} exited ")) {
                    wrong = Some(format!("{seen:?} at {:?}", t0.elapsed()));
                }
            }
        }
        named.is_some()
            && p.option("@tend_state") == "idle"
            && cli.ready.split('|').any(|r| p.screen().contains(r))
    });
    assert!(
        ok,
        "{}: never named and at its prompt ({:?} to name it)\n{}",
        cli.agent,
        named,
        p.context()
    );
    let text = p.env.tend_ok(&["explain", &p.id]);
    assert!(
        text.contains(&format!("identity  {} (pid ", cli.agent)),
        "{text}"
    );
    assert_eq!(
        wrong, None,
        "{}: before it was named the pane stopped reading {prev:?} exited",
        cli.agent
    );
    named.expect("named")
}

/// The widths the agent is resized across at its prompt, and the height
/// with each: the sizes users run agents at, wide monitors included.
const SIZES: [(u32, u32); 4] = [(120, 40), (200, 50), (250, 60), (80, 24)];

/// The agent at its prompt keeps reading `idle` while its window is
/// resized across [`SIZES`] (every agent here redraws on a resize): the
/// pane's state sampled every 200 ms for 4 s at each size, then the
/// window put back as it was.
fn resize_holds(p: &Pane, cli: &Cli) {
    let was = p.env.tmux_out(&[
        "display",
        "-p",
        "-t",
        &p.id,
        "#{window_width} #{window_height}",
    ]);
    let mut sizes: Vec<(String, String)> = SIZES
        .iter()
        .map(|(w, h)| (w.to_string(), h.to_string()))
        .collect();
    if let Some((w, h)) = was.split_once(' ') {
        sizes.push((w.to_owned(), h.to_owned()));
    }
    for (w, h) in &sizes {
        let out = p
            .env
            .tmux(&["resize-window", "-t", &p.id, "-x", w, "-y", h]);
        assert!(out.status.success(), "resize-window {w}x{h}: {out:?}");
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(4) {
            let state = p.option("@tend_state");
            assert_eq!(
                state,
                "idle",
                "{}: read {state} {:.1} s after the window became {w}x{h}\n{}",
                cli.agent,
                t0.elapsed().as_secs_f64(),
                p.context()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// What one agent's exit measured.
struct Exit {
    agent: &'static str,
    named: Duration,
    /// From the Enter of the exit command to `exited` on the pane.
    exited: Duration,
    /// From that Enter to the shell's prompt (the process ended).
    shell: Duration,
    code: i32,
}

/// Leaves `cli` with its exit command and checks the pane while the shell
/// prompt sits there.
fn exit(p: &Pane, cli: &Cli, named: Duration) -> Exit {
    let seen = p.statuses().len();
    // A TUI still settling after its first screen can drop an Enter (the
    // exit command stays in its input box); a user presses it again. The
    // time to `exited` counts from the Enter that took.
    std::thread::sleep(Duration::from_secs(1));
    let mut t0 = p.type_line(cli.exit);
    let mut enters = 1;
    while enters < 3
        && !wait_until(10, || {
            p.statuses().len() > seen || p.option("@tend_state") == "exited"
        })
    {
        println!(
            "exit_live: {}: still running 10 s after `{}` and Enter; Enter again",
            cli.agent, cli.exit
        );
        t0 = Instant::now();
        let out = p.env.tmux(&["send-keys", "-t", &p.id, "Enter"]);
        assert!(out.status.success(), "send-keys Enter: {out:?}");
        enters += 1;
    }
    // When tend reads `exited`, and when the shell reports the agent's
    // command done (its prompt is back: the process has ended).
    let (mut exited, mut shell) = (None, None);
    wait_until(20, || {
        if exited.is_none() && p.option("@tend_state") == "exited" {
            exited = Some(t0.elapsed());
        }
        if shell.is_none() && p.statuses().len() > seen {
            shell = Some(t0.elapsed());
        }
        exited.is_some() && shell.is_some()
    });
    let Some(shell) = shell else {
        panic!(
            "{}: the shell prompt never came back\n{}",
            cli.agent,
            p.context()
        );
    };
    let Some(exited) = exited else {
        panic!("{}: never read exited\n{}", cli.agent, p.context());
    };
    let code = *p.statuses().last().expect("a status");
    // The shell's OSC 133;D reaches tend a moment after the prompt: the
    // code shows once tend has read it.
    let with_code = wait_until(10, || p.get()["exit_code"] == code);
    assert!(
        with_code,
        "{}: exit code {code} never shown\n{}",
        cli.agent,
        p.context()
    );
    for i in 0..5 {
        if i > 0 {
            std::thread::sleep(Duration::from_secs(1));
        }
        check_exited(p, cli.agent, code, &format!("sample {i} after the exit"));
    }
    // The `explain` view names the exit and the agent that ran.
    let explain: Value = serde_json::from_str(&p.env.tend_ok(&["explain", &p.id, "--json"]))
        .expect("explain --json");
    let pane = &explain["pane"];
    assert_eq!(pane["state"], "exited", "{explain}");
    assert_eq!(pane["agent"], cli.agent, "{explain}");
    assert_eq!(pane["exit_code"], code, "{explain}");
    let rule = pane["rule"].as_str().unwrap_or_default();
    assert!(
        rule.starts_with("builtin/process-exit")
            || rule == "builtin/agent-gone"
            || rule.starts_with(&format!("{}/", cli.agent)),
        "{}: exited by rule {rule:?}: {explain}",
        cli.agent
    );
    let text = p.env.tend_ok(&["explain", &p.id]);
    assert!(
        text.contains(&format!("state     exited (exit code {code})"))
            && text.contains("identity  none: the agent's process has ended"),
        "{text}"
    );
    // A command that is not an agent (and fails) leaves the agent's exit
    // on the pane, with the agent's code, not the command's.
    let seen = p.statuses().len();
    p.type_line("ls /nonexistent-tend-test-dir");
    assert!(
        wait_until(20, || p.statuses().len() > seen),
        "ls never returned\n{}",
        p.context()
    );
    assert_eq!(p.statuses().last(), Some(&2), "ls's status");
    for i in 0..3 {
        std::thread::sleep(Duration::from_secs(1));
        check_exited(p, cli.agent, code, &format!("sample {i} after ls"));
    }
    Exit {
        agent: cli.agent,
        named,
        exited,
        shell,
        code,
    }
}

/// The pane reads `exited`, naming `agent`, with `code`, and makes no
/// demand.
fn check_exited(p: &Pane, agent: &str, code: i32, when: &str) {
    let row = p.get();
    let ctx = || format!("{agent} ({when}): {row}\n{}", p.screen());
    assert_eq!(row["state"], "exited", "{}", ctx());
    assert_eq!(row["agent"], agent, "{}", ctx());
    assert_eq!(row["exit_code"], code, "{}", ctx());
    assert_eq!(row["band"], "exited", "{}", ctx());
    assert!(row["reason"].is_null(), "{}", ctx());
    assert_eq!(p.option("@tend_state"), "exited", "{}", ctx());
    assert_eq!(p.option("@tend_agent"), agent, "{}", ctx());
    assert_eq!(p.option("@tend_exit_code"), code.to_string(), "{}", ctx());
    assert_eq!(p.option("@tend_reason"), "", "{}", ctx());
    assert_eq!(p.env.global_option("@tend_needs"), "0", "{}", ctx());
    assert_eq!(p.env.global_option("@tend_summary"), "", "{}", ctx());
    assert_eq!(p.env.global_option("@tend_next"), "", "{}", ctx());
}

/// The next agent's run replaced the exited one: named, not exited, no
/// exit code.
fn check_replaced(p: &Pane, before: &str, cli: &Cli, ended_run: u64) {
    let row = p.get();
    assert!(
        row["run"].as_u64().is_some_and(|r| r > ended_run),
        "{before} → {}: still run {ended_run}: {row}",
        cli.agent
    );
    assert_eq!(row["agent"], cli.agent, "{before} → {}: {row}", cli.agent);
    assert_ne!(row["state"], "exited", "{before} → {}: {row}", cli.agent);
    assert!(
        row["exit_code"].is_null(),
        "{before} → {}: {row}",
        cli.agent
    );
    assert_eq!(p.option("@tend_exit_code"), "");
}

#[test]
fn real_agents_stay_exited_until_the_next_starts() {
    if std::env::var("TEND_TEST_REAL_AGENTS").as_deref() != Ok("1") {
        println!("exit_live: real agents skipped (set TEND_TEST_REAL_AGENTS=1)");
        return;
    }
    let dirs = offline::agent_dirs();
    let mut clis: Vec<&Cli> = Vec::new();
    // `TEND_EXIT_LIVE_AGENTS=qwen,pi` runs only those (to reproduce one).
    let only: Option<Vec<String>> = std::env::var("TEND_EXIT_LIVE_AGENTS")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    for cli in &CLIS {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|a| a == cli.agent))
        {
            continue;
        }
        if dirs.iter().any(|d| d.join(cli.rel).exists()) {
            clis.push(cli);
        } else {
            support::skip(
                "exit_live",
                &format!(
                    "{} ({}) is not installed in {}",
                    cli.agent,
                    cli.rel,
                    std::env::join_paths(&dirs)
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_default()
                ),
            );
        }
    }
    assert!(
        !clis.is_empty(),
        "TEND_TEST_REAL_AGENTS=1 but no agent CLI was found in {dirs:?}: install them with \
         tools/agentlab/setup.sh, or point TEND_AGENT_DIRS / AGENTS_DIR at their folders"
    );

    let env = Env::new("exit-live");
    let home = env.path().join("home");
    let work = env.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir work");
    offline::configure(&home, &work, &dirs);
    let statuses = env.path().join("statuses");
    let mut search: Vec<String> = Vec::new();
    for d in &dirs {
        search.push(d.join("node_modules/.bin").display().to_string());
        search.push(d.join("venv/bin").display().to_string());
    }
    search.push(std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()));
    let mut vars = offline::agent_env();
    vars.push(("CODEX_HOME", home.join(".codex").display().to_string()));
    vars.extend([
        ("HOME", home.display().to_string()),
        ("PATH", search.join(":")),
        ("HISTFILE", "/dev/null".into()),
        ("PS1", "tend$ ".into()),
        // The shell reports each command's status as OSC 133;D (as shells
        // with prompt integration do) and in a file, for the test.
        (
            "PROMPT_COMMAND",
            format!(
                "s=$?; echo $s >> '{}'; printf '\\033]133;D;%s\\007' $s",
                statuses.display()
            ),
        ),
    ]);
    let assignments: Vec<String> = vars
        .iter()
        .map(|(k, v)| format!("{k}='{}'", v.replace('\'', r"'\''")))
        .collect();
    let cmd = format!(
        "cd '{}' && exec env {} bash --norc --noprofile -i",
        work.display(),
        assignments.join(" ")
    );
    env.tend_ok(&["start"]);
    let id = env.window("main", &cmd);
    let p = Pane {
        env: &env,
        id,
        statuses,
    };
    assert!(
        wait_until(10, || !p.statuses().is_empty()),
        "the shell never showed its prompt\n{}",
        p.context()
    );

    let mut results: Vec<Exit> = Vec::new();
    let mut named = start(&p, clis[0], None);
    for (i, cli) in clis.iter().enumerate() {
        resize_holds(&p, cli);
        println!(
            "exit_live: {}: idle throughout, resized across 120x40, 200x50, 250x60 and 80x24",
            cli.agent
        );
        let r = exit(&p, cli, named);
        println!(
            "exit_live: {}: named {:.1} s after its command; after `{}`: shell prompt back at {:.2} s, \
             `exited` at {:.2} s, exit code {}; stayed exited (8 samples over 8 s, `ls` between)",
            r.agent,
            r.named.as_secs_f64(),
            cli.exit,
            r.shell.as_secs_f64(),
            r.exited.as_secs_f64(),
            r.code
        );
        results.push(r);
        // The next agent: the following CLI, and after the last one the
        // same CLI again.
        let next = clis.get(i + 1).copied().unwrap_or(cli);
        let ended_run = p.get()["run"].as_u64().expect("run");
        named = start(&p, next, Some(cli.agent));
        check_replaced(&p, cli.agent, next, ended_run);
        println!(
            "exit_live: {} → {}: the new run replaced the exited one",
            cli.agent, next.agent
        );
    }
    // The last run, started again, also ends in `exited`.
    let last = clis[clis.len() - 1];
    let r = exit(&p, last, named);
    println!(
        "exit_live: {} (second run): after `{}`: shell prompt back at {:.2} s, `exited` at {:.2} s, \
         exit code {}",
        r.agent,
        last.exit,
        r.shell.as_secs_f64(),
        r.exited.as_secs_f64(),
        r.code
    );
    println!(
        "exit_live: {} agents exited and stayed exited until the next run",
        results.len()
    );
}
