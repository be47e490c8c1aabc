//! `tend restore` with the real agents (opt-in: `TEND_TEST_REAL_AGENTS=1`),
//! offline against `tools/agentlab/fakellm.py`: the agent takes a turn in a
//! tmux pane, the server is killed, a new server comes up with the same
//! session and window, `tend restore --all` starts the agent's resume
//! command in that pane, the agent takes its conversation up again in the
//! same folder, and a second restore does nothing. Claude Code and Codex
//! each have a test of their own (Claude Code's new session file must name
//! the same conversation and folder); the other agents with a `[resume]`
//! table share the last (`TEND_RESTORE_LIVE_AGENTS=gemini,pi` runs only
//! those).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;
use support::offline::{self, Killed, DEAD};
use support::restore_lab::Lab;
use support::wait_until;

/// The fake model server, on a port of its own, logging to `log`;
/// answers the first turn with a short poem.
struct Model {
    url: String,
    log: PathBuf,
    _server: Killed,
}

impl Model {
    fn start(dir: &Path) -> Model {
        let port_file = dir.join("fakellm.port");
        let log = dir.join("fakellm.jsonl");
        let server = Killed(
            Command::new("python3")
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/agentlab/fakellm.py"))
                .args(["--scenario", "working_then_done", "--port-file"])
                .arg(&port_file)
                .arg("--log")
                .arg(&log)
                .env("FAKELLM_STREAM_SECS", "1")
                .spawn()
                .expect("python3 for tools/agentlab/fakellm.py"),
        );
        assert!(
            wait_until(15, || std::fs::read_to_string(&port_file)
                .is_ok_and(|p| !p.trim().is_empty())),
            "fakellm did not start"
        );
        let port = std::fs::read_to_string(&port_file).expect("port");
        Model {
            url: format!("http://127.0.0.1:{}", port.trim()),
            log,
            _server: server,
        }
    }

    /// Turns answered to the end.
    fn turns(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"stream_end\""))
            .count()
    }
}

/// Processes outliving the test that run from `dir` or with it as their
/// HOME (Codex's app-server daemon and Cline's hub, which outlive the tmux
/// server by design) are killed on drop.
struct Leftovers(PathBuf);

impl Drop for Leftovers {
    fn drop(&mut self) {
        let needle = self.0.display().to_string();
        let home = format!("HOME={needle}\0");
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return;
        };
        for p in procs.flatten() {
            let Ok(pid) = p.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let cmd = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
            let env = std::fs::read(p.path().join("environ")).unwrap_or_default();
            if String::from_utf8_lossy(&cmd).contains(&needle)
                || String::from_utf8_lossy(&env).contains(&home)
            {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// The lab for one agent: the CLIs on PATH, every agent's first-run
/// questions answered and its endpoints pointed at `model`.
fn lab(tag: &str, dirs: &[PathBuf], model: &Model, work: &Path) -> Lab {
    let mut lab = Lab::new(tag);
    for d in dirs {
        lab = lab
            .with_path(d.join("node_modules/.bin"))
            .with_path(d.join("venv/bin"));
    }
    offline::configure(&lab.home, work, dirs);
    // Every provider, from the dead port to the model server.
    to_model(&lab.home, &model.url);
    for (k, v) in offline::agent_env() {
        lab = lab.with_var(k, &v.replace(DEAD, &model.url));
    }
    lab
}

/// `DEAD` written as the model's `url` in every file under `dir`.
fn to_model(dir: &Path, url: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            to_model(&path, url);
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            if text.contains(DEAD) {
                std::fs::write(&path, text.replace(DEAD, url)).expect("write config");
            }
        }
    }
}

/// Starts `agent` (by `command`) in work:0.0, waits for `ready` on its
/// screen, has it take a turn and waits until tend saved its conversation;
/// returns the id.
fn a_turn(
    lab: &Lab,
    model: &Model,
    agent: &str,
    command: &str,
    ready: &str,
    work: &Path,
) -> String {
    lab.env.type_line("work:agent", command);
    assert!(
        wait_until(120, || lab.screen("work:agent").contains(ready)),
        "{agent} not ready: {}",
        lab.screen("work:agent")
    );
    let before = model.turns();
    // Keys that arrive together are a paste to Codex, and an Enter in a
    // paste is a new line: the Enter goes a moment later.
    lab.env.tmux(&[
        "send-keys",
        "-t",
        "work:agent",
        "-l",
        "Write a short poem about tmux.",
    ]);
    std::thread::sleep(std::time::Duration::from_secs(1));
    lab.env.tmux(&["send-keys", "-t", "work:agent", "Enter"]);
    assert!(
        wait_until(90, || model.turns() > before),
        "{agent} took no turn: {}",
        lab.screen("work:agent")
    );
    lab.saved_id(agent, work, 60)
}

/// The server killed under the running agent, a new one with the same
/// session and window in the same folder, and the restore.
fn restart_and_restore(lab: &Lab, work: &Path, agent: &str, id: &str) -> String {
    lab.kill_server();
    let saved = lab.saved();
    assert!(
        saved
            .iter()
            .any(|c| c["id"] == id && c["end"]["kind"] == "running"),
        "{agent}'s conversation not left running: {saved:?}"
    );
    lab.server(work);
    let out = lab.restore(&["--all"]);
    assert!(out.contains("started in work:0.0"), "{out}");
    out
}

#[test]
fn real_claude_code_comes_back_in_its_conversation() {
    if !offline::real_agents("restore_live") {
        return;
    }
    let Some(agents) = offline::claude_installed("real_claude_code_comes_back_in_its_conversation")
    else {
        return;
    };
    let scratch = tempfile::tempdir().expect("tmp");
    let model = Model::start(scratch.path());
    let work = scratch.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir work");
    let lab = lab("restore-claude", &[agents], &model, &work);
    let _leftovers = Leftovers(lab.home.clone());
    lab.server(&work);
    lab.env.tend_ok(&["start"]);
    let id = a_turn(&lab, &model, "claude", "claude", "? for shortcuts", &work);
    let first: Vec<PathBuf> = sessions(&lab.home);
    let out = restart_and_restore(&lab, &work, "claude", &id);
    assert!(out.contains(&format!("claude --resume {id}")), "{out}");
    // Its new session file names the same conversation and folder.
    let names_it = || {
        sessions(&lab.home).into_iter().any(|f| {
            !first.contains(&f)
                && std::fs::read_to_string(&f)
                    .ok()
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                    .is_some_and(|v| {
                        v["sessionId"] == id.as_str() && v["cwd"] == work.display().to_string()
                    })
        })
    };
    assert!(
        wait_until(90, names_it),
        "no session file names {id}: {}",
        lab.screen("work:agent")
    );
    println!(
        "restore_live: Claude Code resumed {id} in {}",
        work.display()
    );
    let second = lab.restore(&["--all"]);
    assert_eq!(second.trim(), "nothing to restore (1 was restored before)");
}

/// Claude Code's session files.
fn sessions(home: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(home.join(".claude/sessions"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn real_codex_comes_back_in_its_conversation() {
    if !offline::real_agents("restore_live") {
        return;
    }
    let Some(agents) = offline::claude_installed("real_codex_comes_back_in_its_conversation")
    else {
        return;
    };
    if !agents.join("node_modules/.bin/codex").exists() {
        support::skip(
            "real_codex_comes_back_in_its_conversation",
            "codex is not installed",
        );
        return;
    }
    let scratch = tempfile::tempdir().expect("tmp");
    let model = Model::start(scratch.path());
    let work = scratch.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir work");
    let lab = lab(
        "restore-codex",
        std::slice::from_ref(&agents),
        &model,
        &work,
    );
    let _leftovers = Leftovers(lab.home.clone());
    lab.server(&work);
    lab.env.tend_ok(&["start"]);
    let id = a_turn(&lab, &model, "codex", "codex", "← for agents", &work);
    let out = restart_and_restore(&lab, &work, "codex", &id);
    assert!(out.contains(&format!("codex resume {id}")), "{out}");
    // Codex shows the conversation it took up, and tend finds the new run
    // in it again (by its command line), in the same folder.
    assert!(
        wait_until(120, || lab
            .screen("work:agent")
            .contains("Write a short poem about tmux.")),
        "the conversation is not back: {}",
        lab.screen("work:agent")
    );
    let running_again = || {
        lab.saved().iter().any(|c| {
            c["id"] == id.as_str()
                && c["end"]["kind"] == "running"
                && c["found_by"] == "its command line"
                && c["folder"] == work.display().to_string()
        })
    };
    assert!(wait_until(60, running_again), "{:?}", lab.saved());
    println!("restore_live: Codex resumed {id} in {}", work.display());
    let second = lab.restore(&["--all"]);
    assert_eq!(second.trim(), "nothing to restore (1 was restored before)");
}

/// The other verified agents that keep their conversations where tend can
/// read them (OpenCode and Kilo Code in a SQLite database): started as
/// `command`, ready when `ready` shows.
const OTHERS: &[(&str, &str, &str)] = &[
    ("gemini", "gemini", "Type your message"),
    ("qwen", "qwen", "? for shortcuts"),
    ("pi", "pi", "%/128k"),
    ("vibe", "vibe", "[PID "),
    ("kimi", "kimi", "── input"),
    ("cline", "cline -i", "Auto-approve all"),
    ("opencode", "opencode", "ctrl+p commands"),
    ("kilo", "kilo", "ctrl+p commands"),
];

#[test]
fn real_agents_with_a_store_come_back_in_their_conversations() {
    if !offline::real_agents("restore_live") {
        return;
    }
    let only = std::env::var("TEND_RESTORE_LIVE_AGENTS").ok();
    let dirs = offline::agent_dirs();
    let mut failed = Vec::new();
    for (agent, command, ready) in OTHERS {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|a| a == *agent))
        {
            continue;
        }
        let program = command.split(' ').next().unwrap_or(command);
        if !dirs.iter().any(|d| {
            d.join("node_modules/.bin").join(program).exists()
                || d.join("venv/bin").join(program).exists()
        }) {
            support::skip(
                "real_agents_with_a_store_come_back",
                &format!("{agent} is not installed"),
            );
            continue;
        }
        let run = std::panic::catch_unwind(|| comes_back(agent, command, ready, &dirs));
        match run {
            Ok(id) => println!("restore_live: {agent} resumed {id}"),
            Err(_) => failed.push(*agent),
        }
    }
    assert!(failed.is_empty(), "not resumed: {failed:?}");
}

/// One agent: a turn, the server killed, a new one, `tend restore --all`,
/// its conversation on the screen again, then a restore that does nothing.
fn comes_back(agent: &str, command: &str, ready: &str, dirs: &[PathBuf]) -> String {
    let scratch = tempfile::tempdir().expect("tmp");
    let model = Model::start(scratch.path());
    let work = scratch.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir work");
    let lab = lab(&format!("restore-{agent}"), dirs, &model, &work);
    let _leftovers = Leftovers(lab.home.clone());
    lab.server(&work);
    lab.env.tend_ok(&["start"]);
    let id = a_turn(&lab, &model, agent, command, ready, &work);
    let out = restart_and_restore(&lab, &work, agent, &id);
    assert!(out.contains(&id), "{out}");
    assert!(
        wait_until(120, || lab.screen("work:agent").contains("short poem")),
        "{agent}: the conversation is not back: {}",
        lab.screen("work:agent")
    );
    let running_again = || {
        lab.saved().iter().any(|c| {
            c["id"] == id.as_str()
                && c["end"]["kind"] == "running"
                && c["found_by"] == "its command line"
        })
    };
    assert!(wait_until(60, running_again), "{agent}: {:?}", lab.saved());
    let second = lab.restore(&["--all"]);
    assert_eq!(second.trim(), "nothing to restore (1 was restored before)");
    id
}
