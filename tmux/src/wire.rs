//! tmux's client protocol, spoken directly over the server's socket.
//!
//! Every `tmux cmd` a program runs is a client process that connects to
//! the server's Unix socket, says who it is (a few `MSG_IDENTIFY_*`
//! messages), sends its command (`MSG_COMMAND`) and prints what the server
//! writes back (`MSG_WRITE_*` on stream 1 or 2) until `MSG_EXIT` carries the
//! exit status. Measured on a 2-vCPU VM that process costs about 3 ms of CPU
//! before the server sees a byte (exec, dynamic linking, reading the
//! locale); a daemon that lists panes once a second and publishes options as
//! they change spends most of its tmux budget there. This module is that
//! client without the process: the same messages from the caller's own
//! thread, a few microseconds.
//!
//! It is not a crate because none exists that speaks the protocol (tmux
//! wrappers all run the binary), and it is small: the message layout is
//! tmux's `tmux-protocol.h` and the header is `imsg`'s, both unchanged
//! since tmux 3.2 for what is used here (protocol version 8; 3.4 and later
//! only added messages a command client does not receive).
//!
//! Safety for the user's server comes first. tmux aborts the whole server
//! on an identify message of the wrong size, so every message here has
//! exactly the size tmux's own client sends, and nothing is sent after
//! `MSG_IDENTIFY_DONE` but the command. A server that speaks another
//! protocol version answers `MSG_VERSION` before it runs anything: that,
//! and a socket that cannot be reached, are [`WireError::Unsupported`],
//! after which the caller runs the `tmux` binary as before (which prints
//! tmux's own message, such as "no server running").
//!
//! The client is identified as tmux's own is with `-u` and no terminal:
//! UTF-8 output byte for byte, no tty, no environment (as if `TMUX` and
//! everything else were unset: nothing tend runs reads the client's
//! environment), the caller's working directory.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// tmux's `PROTOCOL_VERSION` (tmux 3.2 to 3.6).
const PROTOCOL_VERSION: u32 = 8;
/// `imsg`'s header: type u32, len u16, flags u16, peerid u32, pid u32.
const HEADER: usize = 16;
/// tmux's `MAX_IMSGSIZE`: no message, header included, is longer.
pub(crate) const MAX_MESSAGE: usize = 16384;

const MSG_VERSION: u32 = 12;
const MSG_IDENTIFY_FLAGS: u32 = 100;
const MSG_IDENTIFY_TERM: u32 = 101;
const MSG_IDENTIFY_TTYNAME: u32 = 102;
const MSG_IDENTIFY_DONE: u32 = 106;
const MSG_IDENTIFY_CLIENTPID: u32 = 107;
const MSG_IDENTIFY_CWD: u32 = 108;
const MSG_IDENTIFY_FEATURES: u32 = 109;
const MSG_IDENTIFY_LONGFLAGS: u32 = 111;
const MSG_COMMAND: u32 = 200;
const MSG_DETACH: u32 = 201;
const MSG_DETACHKILL: u32 = 202;
const MSG_EXIT: u32 = 203;
const MSG_EXITING: u32 = 205;
const MSG_SHUTDOWN: u32 = 210;
const MSG_EXEC: u32 = 217;
const MSG_READ_OPEN: u32 = 300;
const MSG_READ_DONE: u32 = 302;
const MSG_WRITE_OPEN: u32 = 303;
const MSG_WRITE: u32 = 304;
const MSG_WRITE_READY: u32 = 305;

/// tmux's `CLIENT_UTF8` (what `tmux -u` sets): output is not sanitised for
/// a non-UTF-8 terminal.
const CLIENT_UTF8: u64 = 0x10000;

/// `EBADF`, the error a refused file open is answered with.
const EBADF: i32 = 9;

/// How long a reply may take before the command is given up. tmux answers
/// a command client within milliseconds; a server that says nothing for
/// this long is stuck, and a daemon must not be.
const REPLY_TIMEOUT: Duration = Duration::from_secs(20);

/// What a command printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    /// Stream 1.
    pub stdout: Vec<u8>,
    /// Stream 2 (tmux's error messages).
    pub stderr: Vec<u8>,
    /// The exit status tmux's client would have exited with.
    pub status: i32,
}

/// Why a command did not complete over the socket.
#[derive(Debug)]
pub(crate) enum WireError {
    /// Nothing ran: the socket could not be reached or the server speaks
    /// another protocol version. Running the `tmux` binary is the answer.
    Unsupported(String),
    /// The command was sent and then the exchange failed (the server went
    /// away, stopped answering, or said something a command client is never
    /// told). It may have run: it must not be sent again.
    Broken(String),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Unsupported(s) | WireError::Broken(s) => f.write_str(s),
        }
    }
}

/// Runs one command line (`args`, tmux's argv after the options: commands
/// separated by `;` arguments) on the server at `socket`.
pub(crate) fn run(socket: &Path, args: &[String], cwd: &Path) -> Result<Reply, WireError> {
    let hello = hello(args, cwd)?;
    let mut stream = UnixStream::connect(socket).map_err(|e| {
        WireError::Unsupported(format!("cannot connect to {}: {e}", socket.display()))
    })?;
    let broken = |what: &str, e: io::Error| WireError::Broken(format!("{what}: {e}"));
    stream
        .set_read_timeout(Some(REPLY_TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(REPLY_TIMEOUT)))
        .map_err(|e| broken("setting the socket's timeouts", e))?;
    // A server on its way out accepts and then resets: the command did not
    // reach it, and the binary will say what became of the server.
    stream
        .write_all(&hello)
        .map_err(|e| WireError::Unsupported(format!("sending the command to tmux: {e}")))?;
    converse(&mut stream)
}

/// The identify messages and the command, in one buffer.
fn hello(args: &[String], cwd: &Path) -> Result<Vec<u8>, WireError> {
    let mut packed = Vec::with_capacity(4 + args.iter().map(|a| a.len() + 1).sum::<usize>());
    let argc = i32::try_from(args.len())
        .map_err(|_| WireError::Unsupported("too many arguments".into()))?;
    packed.extend_from_slice(&argc.to_ne_bytes());
    for a in args {
        // tmux splits the packed arguments at NUL bytes: one inside an
        // argument would shift every argument after it.
        if a.as_bytes().contains(&0) {
            return Err(WireError::Unsupported(format!(
                "an argument contains a NUL byte: {a:?}"
            )));
        }
        packed.extend_from_slice(a.as_bytes());
        packed.push(0);
    }
    if HEADER + packed.len() > MAX_MESSAGE {
        return Err(WireError::Unsupported("command too long".into()));
    }
    let mut cwd = cwd.as_os_str().as_encoded_bytes().to_vec();
    if cwd.is_empty() || cwd.contains(&0) || HEADER + cwd.len() + 1 > MAX_MESSAGE {
        cwd = b"/".to_vec();
    }
    cwd.push(0);
    let pid = std::process::id() as i32;
    let mut out = Vec::with_capacity(256 + packed.len());
    // The order and sizes are those of tmux's own client
    // (`client_send_identify`): an int, a uint64_t, C strings, a pid_t.
    message(
        &mut out,
        MSG_IDENTIFY_FLAGS,
        &(CLIENT_UTF8 as i32).to_ne_bytes(),
    );
    message(&mut out, MSG_IDENTIFY_LONGFLAGS, &CLIENT_UTF8.to_ne_bytes());
    message(&mut out, MSG_IDENTIFY_TERM, b"\0");
    message(&mut out, MSG_IDENTIFY_FEATURES, &0i32.to_ne_bytes());
    message(&mut out, MSG_IDENTIFY_TTYNAME, b"\0");
    message(&mut out, MSG_IDENTIFY_CWD, &cwd);
    message(&mut out, MSG_IDENTIFY_CLIENTPID, &pid.to_ne_bytes());
    message(&mut out, MSG_IDENTIFY_DONE, &[]);
    message(&mut out, MSG_COMMAND, &packed);
    Ok(out)
}

/// Appends one message: the `imsg` header (this process as the sender, the
/// protocol version in `peerid`, no file descriptor) and its data.
fn message(out: &mut Vec<u8>, kind: u32, data: &[u8]) {
    let len = (HEADER + data.len()) as u16;
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&len.to_ne_bytes());
    out.extend_from_slice(&0u16.to_ne_bytes());
    out.extend_from_slice(&PROTOCOL_VERSION.to_ne_bytes());
    out.extend_from_slice(&std::process::id().to_ne_bytes());
    out.extend_from_slice(data);
}

/// Reads the server's messages until `MSG_EXIT`, answering what a command
/// client must answer.
fn converse(stream: &mut UnixStream) -> Result<Reply, WireError> {
    let mut reply = Reply {
        stdout: Vec::new(),
        stderr: Vec::new(),
        status: 0,
    };
    let mut inbox = Inbox::default();
    let mut answered_anything = false;
    loop {
        let (kind, data) = match inbox.next(stream) {
            Ok(m) => m,
            // Nothing was answered yet and the server hung up: it refused
            // the client before running anything (an old server that
            // closes on a version it does not know, or a server that is
            // exiting, does this). If it ran the command and then died,
            // the binary finds no server and says so: nothing runs twice.
            Err(e)
                if !answered_anything
                    && matches!(
                        e.kind(),
                        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset
                    ) =>
            {
                return Err(WireError::Unsupported(
                    "tmux closed the connection without answering".into(),
                ))
            }
            Err(e) => return Err(WireError::Broken(format!("reading tmux's answer: {e}"))),
        };
        answered_anything = true;
        match kind {
            MSG_VERSION => {
                return Err(WireError::Unsupported(
                    "the tmux server speaks another protocol version".into(),
                ))
            }
            MSG_WRITE_OPEN => {
                // struct msg_write_open { int stream; int fd; int flags; }
                // followed by a path: stdout and stderr are taken, anything
                // else (a file the client should open) is refused.
                let stream_id = int_at(&data, 0).ok_or_else(|| bad("MSG_WRITE_OPEN"))?;
                let error = if matches!(stream_id, 1 | 2) { 0 } else { EBADF };
                let mut answer = Vec::with_capacity(8);
                answer.extend_from_slice(&stream_id.to_ne_bytes());
                answer.extend_from_slice(&error.to_ne_bytes());
                send(stream, MSG_WRITE_READY, &answer)?;
            }
            MSG_WRITE => {
                let stream_id = int_at(&data, 0).ok_or_else(|| bad("MSG_WRITE"))?;
                let bytes = &data[4..];
                match stream_id {
                    1 => reply.stdout.extend_from_slice(bytes),
                    2 => reply.stderr.extend_from_slice(bytes),
                    _ => {}
                }
            }
            MSG_READ_OPEN => {
                // The command wants to read a file or standard input: there
                // is none.
                let stream_id = int_at(&data, 0).ok_or_else(|| bad("MSG_READ_OPEN"))?;
                let mut answer = Vec::with_capacity(8);
                answer.extend_from_slice(&stream_id.to_ne_bytes());
                answer.extend_from_slice(&EBADF.to_ne_bytes());
                send(stream, MSG_READ_DONE, &answer)?;
            }
            MSG_EXIT => {
                // int retval, then an optional message (printed by tmux's
                // client on stderr).
                reply.status = int_at(&data, 0).unwrap_or(0);
                if data.len() > 4 {
                    let text = data[4..].split(|b| *b == 0).next().unwrap_or(&[]);
                    if !text.is_empty() {
                        reply.stderr.extend_from_slice(text);
                        reply.stderr.push(b'\n');
                    }
                }
                // Said as tmux's client says it; the answer (MSG_EXITED) is
                // not waited for: closing the socket ends the client too.
                let _ = send(stream, MSG_EXITING, &[]);
                return Ok(reply);
            }
            MSG_SHUTDOWN => return Err(WireError::Broken("the tmux server exited".into())),
            MSG_DETACH | MSG_DETACHKILL | MSG_EXEC => {
                return Err(WireError::Broken(format!(
                "tmux answered a command with message {kind}, which only an attached client gets"
            )))
            }
            // Anything else (MSG_WRITE_CLOSE, flags, messages of newer
            // versions) needs no answer from a command client.
            _ => {}
        }
    }
}

fn bad(what: &str) -> WireError {
    WireError::Broken(format!("tmux sent a malformed {what}"))
}

fn send(stream: &mut UnixStream, kind: u32, data: &[u8]) -> Result<(), WireError> {
    let mut out = Vec::with_capacity(HEADER + data.len());
    message(&mut out, kind, data);
    stream
        .write_all(&out)
        .map_err(|e| WireError::Broken(format!("answering tmux: {e}")))
}

/// The `i32` at `offset`, in the machine's byte order.
fn int_at(data: &[u8], offset: usize) -> Option<i32> {
    let bytes = data.get(offset..offset + 4)?;
    Some(i32::from_ne_bytes(bytes.try_into().ok()?))
}

/// Bytes read from the socket, cut into messages.
#[derive(Default)]
struct Inbox {
    buf: Vec<u8>,
    start: usize,
}

impl Inbox {
    /// The next message: its type and its data.
    fn next(&mut self, stream: &mut UnixStream) -> io::Result<(u32, Vec<u8>)> {
        loop {
            let have = &self.buf[self.start..];
            if have.len() >= HEADER {
                let kind = u32::from_ne_bytes([have[0], have[1], have[2], have[3]]);
                let len = usize::from(u16::from_ne_bytes([have[4], have[5]]));
                if !(HEADER..=MAX_MESSAGE).contains(&len) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("a message of {len} bytes"),
                    ));
                }
                if have.len() >= len {
                    let data = have[HEADER..len].to_vec();
                    self.start += len;
                    return Ok((kind, data));
                }
            }
            if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            let mut chunk = [0u8; 16384];
            // A signal to this process (a child exiting, in a program that
            // starts many) interrupts the read before anything arrived:
            // nothing was lost, read again.
            let n = match stream.read(&mut chunk) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => other?,
            };
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "tmux closed the connection",
                ));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits a buffer of messages into (type, data).
    fn messages(mut buf: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        while buf.len() >= HEADER {
            let kind = u32::from_ne_bytes(buf[0..4].try_into().unwrap());
            let len = usize::from(u16::from_ne_bytes(buf[4..6].try_into().unwrap()));
            assert_eq!(
                u32::from_ne_bytes(buf[8..12].try_into().unwrap()),
                PROTOCOL_VERSION
            );
            out.push((kind, buf[HEADER..len].to_vec()));
            buf = &buf[len..];
        }
        assert!(buf.is_empty());
        out
    }

    #[test]
    fn the_hello_has_the_sizes_tmux_checks() {
        let args = vec!["list-panes".to_string(), "-a".to_string()];
        let out = hello(&args, Path::new("/home/u")).unwrap();
        let msgs = messages(&out);
        let kinds: Vec<u32> = msgs.iter().map(|m| m.0).collect();
        assert_eq!(
            kinds,
            vec![
                MSG_IDENTIFY_FLAGS,
                MSG_IDENTIFY_LONGFLAGS,
                MSG_IDENTIFY_TERM,
                MSG_IDENTIFY_FEATURES,
                MSG_IDENTIFY_TTYNAME,
                MSG_IDENTIFY_CWD,
                MSG_IDENTIFY_CLIENTPID,
                MSG_IDENTIFY_DONE,
                MSG_COMMAND
            ]
        );
        // server_client_dispatch_identify: exact sizes, NUL-terminated strings.
        assert_eq!(msgs[0].1.len(), 4);
        assert_eq!(msgs[1].1.len(), 8);
        assert_eq!(msgs[2].1, b"\0");
        assert_eq!(msgs[3].1.len(), 4);
        assert_eq!(msgs[4].1, b"\0");
        assert_eq!(msgs[5].1, b"/home/u\0");
        assert_eq!(msgs[6].1.len(), 4);
        assert!(msgs[7].1.is_empty());
        let mut command = 2i32.to_ne_bytes().to_vec();
        command.extend_from_slice(b"list-panes\0-a\0");
        assert_eq!(msgs[8].1, command);
    }

    #[test]
    fn a_nul_in_an_argument_or_an_oversized_command_is_refused_before_connecting() {
        let nul = vec!["display-message".to_string(), "a\0b".to_string()];
        assert!(matches!(
            hello(&nul, Path::new("/")),
            Err(WireError::Unsupported(_))
        ));
        let long = vec!["x".repeat(MAX_MESSAGE)];
        assert!(matches!(
            hello(&long, Path::new("/")),
            Err(WireError::Unsupported(_))
        ));
    }

    #[test]
    fn an_unreachable_socket_is_unsupported_not_broken() {
        let dir = tempfile::tempdir().unwrap();
        let r = run(
            &dir.path().join("nothing"),
            &["list-sessions".to_string()],
            Path::new("/"),
        );
        assert!(matches!(r, Err(WireError::Unsupported(_))), "{r:?}");
    }

    /// A stand-in server: answers the hello with `answer` and closes.
    fn fake_server(answer: Vec<u8>) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        std::thread::spawn(move || {
            if let Ok((mut s, _)) = listener.accept() {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let _ = s.write_all(&answer);
            }
        });
        (dir, path)
    }

    #[test]
    fn a_server_of_another_version_is_unsupported() {
        let mut answer = Vec::new();
        message(&mut answer, MSG_VERSION, &[]);
        let (_dir, path) = fake_server(answer);
        let r = run(&path, &["list-sessions".to_string()], Path::new("/"));
        assert!(matches!(r, Err(WireError::Unsupported(_))), "{r:?}");
    }

    #[test]
    fn output_on_both_streams_and_the_exit_status_are_collected() {
        let mut answer = Vec::new();
        let mut write = |stream: i32, text: &[u8]| {
            let mut d = stream.to_ne_bytes().to_vec();
            d.extend_from_slice(text);
            message(&mut answer, MSG_WRITE, &d);
        };
        write(1, b"one\n");
        write(2, b"bad\n");
        write(1, b"two\n");
        let mut exit = 1i32.to_ne_bytes().to_vec();
        exit.extend_from_slice(b"lost server\0");
        message(&mut answer, MSG_EXIT, &exit);
        let (_dir, path) = fake_server(answer);
        let r = run(&path, &["list-sessions".to_string()], Path::new("/")).unwrap();
        assert_eq!(r.stdout, b"one\ntwo\n");
        assert_eq!(r.stderr, b"bad\nlost server\n");
        assert_eq!(r.status, 1);
    }

    #[test]
    fn a_server_that_hangs_up_after_answering_is_broken() {
        let mut answer = Vec::new();
        let mut d = 1i32.to_ne_bytes().to_vec();
        d.extend_from_slice(b"partial");
        message(&mut answer, MSG_WRITE, &d);
        let (_dir, path) = fake_server(answer);
        let r = run(&path, &["list-sessions".to_string()], Path::new("/"));
        assert!(matches!(r, Err(WireError::Broken(_))), "{r:?}");
    }
}
