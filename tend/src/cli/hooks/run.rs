//! What an installed hook runs (`tend hooks run <agent> <event>`): the
//! agent's event on stdin becomes a `tend report` (or `tend release`), run
//! for at most a moment, and the agent is never disturbed.

use std::io::Read;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::RunArgs;

/// How long a hook waits for the agent's event on stdin.
const STDIN_WAIT: Duration = Duration::from_millis(1000);
/// How long a hook waits for `tend report` before giving up on it.
const REPORT_WAIT: Duration = Duration::from_millis(1500);
/// The most of the event tend keeps for parsing (the rest is drained).
const STDIN_KEEP: usize = 1 << 20;

/// Handles one hook event: drains the event from stdin, maps it to a
/// `tend report` (or `tend release`) and runs that for at most a moment.
/// Prints nothing and never fails: the agent must never be disturbed.
pub fn run_hook(args: &RunArgs) {
    std::panic::set_hook(Box::new(|_| {}));
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(args)));
}

fn read_stdin() -> Value {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut keep = Vec::new();
        let mut buf = [0u8; 65_536];
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if keep.len() < STDIN_KEEP {
                        keep.extend_from_slice(&buf[..n]);
                    }
                }
            }
        }
        let _ = tx.send(keep);
    });
    rx.recv_timeout(STDIN_WAIT)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null)
}

fn in_multiplexer() -> bool {
    ["TMUX_PANE", "ZELLIJ_PANE_ID"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

fn dispatch(args: &RunArgs) {
    // Always read the event, so the agent's write to our stdin never fails.
    let input = read_stdin();
    if !in_multiplexer() {
        return;
    }
    let Some(report) = report_args(&args.agent, &args.event, &input) else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let Ok(mut child) = Process::new(exe)
        .args(&report)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return;
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) if started.elapsed() >= REPORT_WAIT => {
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

fn truncate(s: &str, max: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn session_message(agent: &str, input: &Value) -> Vec<String> {
    match input.get("session_id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => vec![
            "--message".into(),
            format!("{agent} session {}", truncate(id, 80)),
        ],
        _ => Vec::new(),
    }
}

/// The `tend` arguments for one agent event, or `None` for events tend does
/// not act on. Public for tests and documentation.
pub fn report_args(agent: &str, event: &str, input: &Value) -> Option<Vec<String>> {
    let report = |state: &str| vec!["report".to_string(), state.to_string()];
    let args = match (agent, event) {
        // Session identity only: a display label, which never takes the
        // authority from the screen (a report would).
        ("claude" | "gemini", "SessionStart") => {
            let label = match input.get("session_id").and_then(Value::as_str) {
                Some(id) if !id.is_empty() => format!("{agent} session {}", truncate(id, 80)),
                _ => format!("{agent} session"),
            };
            vec!["report-metadata".to_string(), label]
        }
        ("claude" | "gemini", "SessionEnd") => vec!["report-metadata".to_string(), String::new()],
        // Codex reports its states.
        ("codex", "SessionStart") => {
            let mut a = report("idle");
            a.extend(session_message(agent, input));
            a
        }
        ("codex", "UserPromptSubmit" | "PreToolUse" | "PostToolUse") => report("working"),
        ("codex", "PermissionRequest") => {
            let mut a = report("waiting");
            a.extend(["--reason".to_string(), "approval".to_string()]);
            let tool = input
                .get("tool_name")
                .and_then(Value::as_str)
                .unwrap_or("a tool");
            let ti = input.get("tool_input");
            let what = ti
                .and_then(|t| t.get("description"))
                .and_then(Value::as_str)
                .or_else(|| ti.and_then(|t| t.get("command")).and_then(Value::as_str));
            let text = match what {
                Some(w) if !w.trim().is_empty() => format!("approve {tool}: {w}"),
                _ => format!("approve {tool}"),
            };
            a.extend(["--message".to_string(), truncate(&text, 120)]);
            a
        }
        ("codex", "Stop") => report("done"),
        ("codex", "Interrupt") => report("idle"),
        ("codex", "SessionEnd") => vec!["release".to_string()],
        _ => return None,
    };
    Some(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_permission_request_says_what() {
        let input = serde_json::json!({"session_id": "s", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build"}});
        let a = report_args("codex", "PermissionRequest", &input).unwrap_or_default();
        assert_eq!(
            a,
            [
                "report",
                "waiting",
                "--reason",
                "approval",
                "--message",
                "approve Bash: rm -rf build"
            ]
        );
        assert_eq!(report_args("codex", "Nope", &input), None);
        assert_eq!(
            report_args("claude", "SessionStart", &input).unwrap_or_default(),
            ["report-metadata", "claude session s"]
        );
        assert_eq!(
            report_args("gemini", "SessionEnd", &input).unwrap_or_default(),
            ["report-metadata", ""]
        );
    }
}
