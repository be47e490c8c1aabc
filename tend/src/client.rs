//! A blocking client for the daemon's control socket (used by the CLI).
//!
//! A call is a method's parameters (`tend_protocol::params`); its answer
//! comes back as the type the method names ([`Call::Reply`]), so the CLI
//! reads fields, not keys.

use crate::error::ErrorKind;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use tend_protocol::{Call, Envelope, Response};

use crate::error::CliError;

/// Sends one request and waits up to `timeout` for its answer.
pub fn call<C: Call>(socket: &Path, call: C, timeout: Duration) -> Result<C::Reply, CliError> {
    call_for(socket, call, Some(timeout))
}

/// Sends one request and waits for its answer, up to `timeout` (`None`:
/// as long as it takes, for `wait`).
pub fn call_for<C: Call>(
    socket: &Path,
    call: C,
    timeout: Option<Duration>,
) -> Result<C::Reply, CliError> {
    let method = C::METHOD;
    let mut stream = connect(socket)?;
    stream
        .set_read_timeout(timeout)
        .and_then(|_| stream.set_write_timeout(Some(Duration::from_secs(5))))
        .map_err(|e| CliError::new(ErrorKind::Io, format!("socket setup failed: {e}")))?;
    stream
        .write_all(request_line(call).as_bytes())
        .map_err(|e| {
            CliError::new(
                ErrorKind::Io,
                format!("cannot talk to the tend daemon: {e}"),
            )
        })?;
    let mut reader = BufReader::new(stream);
    let mut answer = String::new();
    reader.read_line(&mut answer).map_err(|e| {
        CliError::new(
            ErrorKind::Timeout,
            format!("the tend daemon did not answer `{method}` ({e}); see `tend doctor`"),
        )
    })?;
    let unreadable = |e: serde_json::Error| {
        CliError::new(
            ErrorKind::BadResponse,
            format!("the tend daemon sent something unreadable ({e}); is it the same version? Try `tend stop && tend start`"),
        )
    };
    let resp: Response = serde_json::from_str(&answer).map_err(unreadable)?;
    let result = resp
        .into_result()
        .map_err(|err| CliError::new(ErrorKind::Daemon(err.code), err.message))?;
    serde_json::from_value(result).map_err(unreadable)
}

/// Connects to the daemon's socket at `socket`, and makes sure the
/// process listening there runs as this user: a socket in a folder
/// someone else could reach might be theirs, and what the CLI sends (a
/// prompt, a note) would go to them.
pub fn connect(socket: &Path) -> Result<UnixStream, CliError> {
    let stream = UnixStream::connect(socket).map_err(|e| {
        CliError::new(
            ErrorKind::NoDaemon,
            format!(
                "tend is not running for this tmux server ({}: {e}); start it with `tend start`",
                socket.display()
            ),
        )
    })?;
    check_owner(&stream, socket)?;
    Ok(stream)
}

/// Refuses a socket whose listener is another user (see [`connect`]).
fn check_owner(stream: &UnixStream, socket: &Path) -> Result<(), CliError> {
    use std::os::fd::AsFd;
    let me = nix::unistd::getuid().as_raw();
    match tend_platform::os::peer_uid(stream.as_fd()) {
        Ok(uid) if uid == me => Ok(()),
        Ok(uid) => Err(CliError::new(
            crate::paths::UNSAFE_DIR,
            format!(
                "the daemon at {} runs as uid {uid}, not as you (uid {me}): someone else put it there, so tend sends it nothing. Remove the socket, check who can write to its folder (`ls -ld {}`), then `tend start`",
                socket.display(),
                socket.parent().unwrap_or(socket).display()
            ),
        )),
        Err(e) => Err(CliError::new(
            ErrorKind::Io,
            format!(
                "cannot tell who runs the daemon at {} ({e}); tend sends nothing to a daemon it cannot check",
                socket.display()
            ),
        )),
    }
}

/// The request line that asks `call` (id 1), newline included: for the
/// connections that read more than one answer (`events`, `guard`).
pub fn request_line<C: Call>(call: C) -> String {
    tend_protocol::wire::line(&Envelope::new(1, &call.into()))
}

/// An answer as `--json` prints it: the daemon's JSON, keys sorted.
pub fn json_text(reply: &impl Serialize) -> String {
    serde_json::to_value(reply)
        .unwrap_or(serde_json::Value::Null)
        .to_string()
}
