//! `tend tap`: the process tmux runs under `pipe-pane -O`. It reads the
//! pane's output from stdin and forwards it to the daemon's tap socket.
//!
//! It must never block tmux (tmux buffers a stalled pipe without bound), so
//! stdin is always drained: when the daemon is slow or gone the tap drops
//! data, keeps at most [`MAX_PENDING`] bytes, and tells the daemon there was
//! a gap once it can, so the pane is re-seeded from `capture-pane`.
//!
//! Framing on the socket: `[kind: u8][len: u32 big-endian][payload]`, kind
//! [`FRAME_HELLO`] (payload: the pane id), [`FRAME_DATA`], [`FRAME_GAP`].

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout};

/// First frame: names the pane.
pub const FRAME_HELLO: u8 = 0;
/// Pane output.
pub const FRAME_DATA: u8 = 1;
/// Output was dropped before this point: re-seed the pane.
pub const FRAME_GAP: u8 = 2;

/// Most bytes held for a slow daemon before dropping (and marking a gap).
pub const MAX_PENDING: usize = 512 * 1024;

const RECONNECT_EVERY: Duration = Duration::from_secs(1);

/// Reads smaller than this are treated as interactive redraws and coalesced.
const SMALL_READ: usize = 4096;

/// How long a small read waits for the rest of its burst.
const COALESCE: Duration = Duration::from_millis(3);

/// Reads whatever is already waiting on stdin, without blocking.
fn drain_available(input: &mut impl Read, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        let stdin = std::io::stdin();
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
        match nix::poll::poll(&mut fds, PollTimeout::ZERO) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
        let ready = fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLIN));
        if !ready {
            break;
        }
        match input.read(&mut buf[got..]) {
            Ok(0) | Err(_) => break,
            Ok(m) => got += m,
        }
    }
    got
}

/// Encodes one frame.
pub fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(payload.len() + 5);
    f.push(kind);
    f.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    f.extend_from_slice(payload);
    f
}

struct Link {
    socket: PathBuf,
    pane: String,
    stream: Option<UnixStream>,
    pending: Vec<u8>,
    gap: bool,
    last_try: Option<Instant>,
}

impl Link {
    fn connect(&mut self) {
        if self.stream.is_some() {
            return;
        }
        if self.last_try.is_some_and(|t| t.elapsed() < RECONNECT_EVERY) {
            return;
        }
        self.last_try = Some(Instant::now());
        if let Ok(s) = UnixStream::connect(&self.socket) {
            if s.set_nonblocking(true).is_ok() {
                self.pending.clear();
                self.pending
                    .extend(frame(FRAME_HELLO, self.pane.as_bytes()));
                if self.gap {
                    self.pending.extend(frame(FRAME_GAP, &[]));
                    self.gap = false;
                }
                self.stream = Some(s);
            }
        }
    }

    fn push(&mut self, data: &[u8]) {
        if self.stream.is_none() || self.pending.len() + data.len() > MAX_PENDING {
            // Daemon gone or too slow: drop the new data (frames already
            // queued stay intact) and remember the gap.
            self.gap = true;
            return;
        }
        if self.gap {
            self.pending.extend(frame(FRAME_GAP, &[]));
            self.gap = false;
        }
        self.pending.extend(frame(FRAME_DATA, data));
    }

    fn flush(&mut self) {
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        while !self.pending.is_empty() {
            match stream.write(&self.pending) {
                Ok(0) => {
                    self.drop_stream();
                    return;
                }
                Ok(n) => {
                    self.pending.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.drop_stream();
                    return;
                }
            }
        }
    }

    fn drop_stream(&mut self) {
        self.stream = None;
        self.pending.clear();
        self.gap = true;
    }
}

/// Runs the tap until stdin closes (the pane or the pipe ends).
pub fn run(socket: &Path, pane: &str) -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut link = Link {
        socket: socket.to_owned(),
        pane: pane.to_owned(),
        stream: None,
        pending: Vec::new(),
        gap: false,
        last_try: None,
    };
    link.connect();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        link.connect();
        link.flush();
        let want_write = link.stream.is_some() && !link.pending.is_empty();
        let stdin_fd = std::io::stdin();
        let mut fds = vec![PollFd::new(stdin_fd.as_fd(), PollFlags::POLLIN)];
        if let (true, Some(s)) = (want_write, link.stream.as_ref()) {
            fds.push(PollFd::new(s.as_fd(), PollFlags::POLLOUT));
        }
        let timeout = if link.stream.is_none() {
            PollTimeout::from(1000u16)
        } else {
            PollTimeout::NONE
        };
        match nix::poll::poll(&mut fds, timeout) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(std::io::Error::other(e)),
        }
        let readable = fds[0].revents().is_some_and(|r| {
            r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
        });
        drop(fds);
        if readable {
            match input.read(&mut buf) {
                Ok(0) => {
                    // The pane closed: hand over what is left, best effort.
                    if let Some(s) = link.stream.as_mut() {
                        let _ = s.set_nonblocking(false);
                        let _ = s.set_write_timeout(Some(Duration::from_millis(200)));
                        let _ = s.write_all(&link.pending);
                    }
                    return Ok(());
                }
                Ok(n) => {
                    let mut len = n;
                    if n < SMALL_READ {
                        // A frame of an interactive program: give it a moment
                        // to finish drawing and send the burst as one frame, so
                        // the daemon wakes once per redraw, not once per write.
                        // Large reads (a flood) never wait: tmux must never
                        // find the pipe full.
                        std::thread::sleep(COALESCE);
                        len += drain_available(&mut input, &mut buf[n..]);
                    }
                    link.push(&buf[..len]);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        assert_eq!(frame(FRAME_DATA, b"ab"), vec![1, 0, 0, 0, 2, b'a', b'b']);
        assert_eq!(frame(FRAME_GAP, b""), vec![2, 0, 0, 0, 0]);
    }

    #[test]
    fn no_daemon_means_drop_and_gap() {
        let mut link = Link {
            socket: PathBuf::from("/nonexistent/tend.tap"),
            pane: "%1".into(),
            stream: None,
            pending: Vec::new(),
            gap: false,
            last_try: None,
        };
        link.connect();
        link.push(b"hello");
        assert!(link.pending.is_empty());
        assert!(link.gap);
    }
}
