//! A blocking client for the daemon's control socket (used by the CLI).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::error::CliError;
use tend_protocol::{Envelope, Response};

/// Sends one request and waits up to `timeout` for its response.
pub fn call(
    socket: &Path,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<Value, CliError> {
    call_for(socket, method, params, Some(timeout))
}

/// Sends one request and waits for its response, up to `timeout` (`None`:
/// as long as it takes, for `wait`).
pub fn call_for(
    socket: &Path,
    method: &str,
    params: Value,
    timeout: Option<Duration>,
) -> Result<Value, CliError> {
    let mut stream = UnixStream::connect(socket).map_err(|e| {
        CliError::new(
            "no_daemon",
            format!(
                "tend is not running for this tmux server ({}: {e}); start it with `tend start`",
                socket.display()
            ),
        )
    })?;
    stream
        .set_read_timeout(timeout)
        .and_then(|_| stream.set_write_timeout(Some(Duration::from_secs(5))))
        .map_err(|e| CliError::new("io", format!("socket setup failed: {e}")))?;
    let req = Envelope {
        id: 1,
        method: method.to_owned(),
        params,
    };
    let mut line = serde_json::to_string(&req).map_err(|e| CliError::new("io", e.to_string()))?;
    line.push('\n');
    stream
        .write_all(line.as_bytes())
        .map_err(|e| CliError::new("io", format!("cannot talk to the tend daemon: {e}")))?;
    let mut reader = BufReader::new(stream);
    let mut answer = String::new();
    reader.read_line(&mut answer).map_err(|e| {
        CliError::new(
            "timeout",
            format!("the tend daemon did not answer `{method}` ({e}); see `tend doctor`"),
        )
    })?;
    let resp: Response = serde_json::from_str(&answer).map_err(|e| {
        CliError::new(
            "bad_response",
            format!("the tend daemon sent something unreadable ({e}); is it the same version? Try `tend stop && tend start`"),
        )
    })?;
    resp.into_result()
        .map_err(|err| CliError::new(leak_code(err.code.as_str()), err.message))
}

/// Error codes are a small fixed set; map a received one onto it.
fn leak_code(code: &str) -> &'static str {
    const CODES: &[&str] = &[
        "unknown_pane",
        "bad_request",
        "unknown_method",
        "no_target",
        "tmux",
        "timeout",
        "agent_blocked",
        "agent_prompt_stalled",
        "agent_not_running",
        "agent_not_idle",
        "stop_pending",
        "no_agent",
        "no_flag",
        "bad_report",
        "forbidden",
        "no_dialog",
        "no_actions",
        "no_option",
        "pane_in_mode",
        "remote_pane",
        "bad_config",
    ];
    CODES
        .iter()
        .find(|c| **c == code)
        .copied()
        .unwrap_or("daemon_error")
}
