//! `tend tap`: the command tmux runs under `pipe-pane -IO`. It hands its
//! standard input — tmux's end of the pane's pipe — to the daemon over the
//! tap socket (`SCM_RIGHTS`) and exits: no process stays beside a pane.
//!
//! tmux keeps a pipe open for as long as anything holds its other end, not
//! for as long as the command it started lives; once the daemon holds it,
//! the daemon reads the pane's output directly ([`crate::pipes`]).
//! `-I` makes tmux read from the pipe too (tend never writes to it), so it
//! sees the moment the last holder closes it — a daemon that dies, even on
//! a silent pane — and closes the pipe on its own: no pipe outlives the
//! daemon.
//!
//! The message on the socket: the pane id (`%N`, at most [`MAX_PANE_ID`]
//! bytes) as the payload, one file descriptor as `SCM_RIGHTS`.

use std::io::IoSlice;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, UnixAddr};

/// Longest pane id a hand-over may carry.
pub const MAX_PANE_ID: usize = 32;

/// How long a tap keeps trying to reach a daemon that is not listening
/// yet (one being restarted). A tap that gives up exits; tmux then closes
/// the pipe and the daemon installs a new tap when it next lists panes.
pub const CONNECT_PATIENCE: Duration = Duration::from_secs(1);

/// Sends `fd` and `pane` over `stream` in one message.
pub fn send_fd(stream: &UnixStream, pane: &str, fd: &impl AsRawFd) -> std::io::Result<()> {
    let fds = [fd.as_raw_fd()];
    let iov = [IoSlice::new(pane.as_bytes())];
    sendmsg::<UnixAddr>(
        stream.as_raw_fd(),
        &iov,
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::empty(),
        None,
    )
    .map_err(std::io::Error::from)?;
    Ok(())
}

/// Hands stdin to the daemon listening on `socket`, then returns.
pub fn run(socket: &Path, pane: &str) -> std::io::Result<()> {
    if pane.is_empty() || pane.len() > MAX_PANE_ID {
        return Err(std::io::Error::other(format!(
            "`{pane}` is not a pane id (%N)"
        )));
    }
    let deadline = Instant::now() + CONNECT_PATIENCE;
    let stream = loop {
        match UnixStream::connect(socket) {
            Ok(s) => break s,
            Err(e) if Instant::now() >= deadline => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!(
                        "no tend daemon on {} ({e}); the daemon taps the pane again when it runs",
                        socket.display()
                    ),
                ))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    // The pane's output goes only to a daemon of this user's: a socket
    // someone else put in the way would read everything the pane shows.
    let me = nix::unistd::getuid().as_raw();
    let owner = tend_platform::os::peer_uid(std::os::fd::AsFd::as_fd(&stream))?;
    if owner != me {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "the daemon at {} runs as uid {owner}, not as you (uid {me}); the pane is not handed to it",
                socket.display()
            ),
        ));
    }
    // A descriptor in flight stays open after this process exits: the
    // daemon receives it whenever it reads the message.
    send_fd(&stream, pane, &std::io::stdin())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn the_pipe_reaches_the_daemon_and_outlives_the_sender() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.tap");
        let listener = std::os::unix::net::UnixListener::bind(&path).expect("bind");
        let (mut tmux_end, tap_end) = UnixStream::pair().expect("pair");
        let sender = UnixStream::connect(&path).expect("connect");
        send_fd(&sender, "%7", &tap_end).expect("send");
        // The sender's copies go away, as when `tend tap` exits.
        drop(sender);
        drop(tap_end);
        let (conn, _) = listener.accept().expect("accept");
        let (pane, fd) = crate::pipes::receive(&conn).expect("receive");
        assert_eq!(pane, "%7");
        let mut pipe = std::fs::File::from(fd);
        tmux_end.write_all(b"hello").expect("write");
        let mut got = [0u8; 5];
        pipe.read_exact(&mut got).expect("read");
        assert_eq!(&got, b"hello");
        // The daemon's copy was the last: tmux's end sees it close.
        drop(pipe);
        let mut rest = Vec::new();
        tmux_end.read_to_end(&mut rest).expect("eof");
        assert!(rest.is_empty());
    }

    #[test]
    fn no_daemon_is_an_error_naming_the_socket() {
        let e = run(Path::new("/nonexistent/tend.tap"), "%1").expect_err("no daemon");
        assert!(e.to_string().contains("/nonexistent/tend.tap"), "{e}");
    }

    #[test]
    fn a_pane_id_that_is_too_long_is_refused() {
        let long = format!("%{}", "9".repeat(MAX_PANE_ID));
        let e = run(Path::new("/nonexistent/tend.tap"), &long).expect_err("refused");
        assert!(e.to_string().contains("not a pane id"), "{e}");
    }
}
