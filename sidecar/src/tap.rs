//! `tend tap`: the process tmux runs under `pipe-pane -O`. It reads the
//! pane's output from stdin and forwards it to the daemon's tap socket.
//!
//! It must never block tmux (tmux buffers a stalled pipe without bound), so
//! stdin is always drained: when the daemon is slow or gone the tap drops
//! data, keeps at most [`MAX_PENDING`] bytes, and tells the daemon there was
//! a gap once it can, so the pane is re-seeded from `capture-pane`. Under a
//! flood, gaps are reported at most once per [`GAP_EVERY`] (output between
//! a drop and its report is dropped too: the re-seed replaces it), so a pane
//! printing megabytes a second costs a few captures a second, not hundreds.
//!
//! A daemon that dies is noticed at once, even on a silent pane (the socket
//! hangs up), and the tap connects to the next daemon within
//! [`RECONNECT_EVERY`].
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

/// How often a tap without a daemon tries to connect. A failed connect to
/// a Unix socket costs microseconds; a short period means a restarted
/// daemon gets every pane back within a fraction of a second.
pub const RECONNECT_EVERY: Duration = Duration::from_millis(250);

/// Fewest time between two gap reports (each makes the daemon capture the
/// pane).
pub const GAP_EVERY: Duration = Duration::from_millis(250);

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
    /// Output was dropped and the daemon has not been told yet.
    gap: bool,
    /// When the last gap was reported.
    last_gap: Option<Instant>,
    last_try: Option<Instant>,
}

impl Link {
    fn new(socket: &Path, pane: &str) -> Link {
        Link {
            socket: socket.to_owned(),
            pane: pane.to_owned(),
            stream: None,
            pending: Vec::new(),
            gap: false,
            last_gap: None,
            last_try: None,
        }
    }

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
                self.stream = Some(s);
                if self.gap {
                    // A new daemon seeds the pane anyway; say so at once.
                    self.last_gap = None;
                    self.report_gap();
                }
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
        if !self.report_gap() {
            // A gap is outstanding but may not be reported yet: the re-seed
            // that follows its report replaces this output anyway.
            return;
        }
        self.pending.extend(frame(FRAME_DATA, data));
    }

    /// Queues the gap frame when one is outstanding and may be sent (the
    /// daemon is connected, the queue has drained to half, and the last
    /// report is [`GAP_EVERY`] old). True when no gap is outstanding.
    fn report_gap(&mut self) -> bool {
        if !self.gap {
            return true;
        }
        if self.stream.is_none()
            || self.pending.len() > MAX_PENDING / 2
            || self.last_gap.is_some_and(|t| t.elapsed() < GAP_EVERY)
        {
            return false;
        }
        self.pending.extend(frame(FRAME_GAP, &[]));
        self.gap = false;
        self.last_gap = Some(Instant::now());
        true
    }

    /// How long the loop may sleep without input: until the next connect
    /// attempt, or until an outstanding gap may be reported.
    fn timer(&self) -> Option<Duration> {
        if self.stream.is_none() {
            let since = self.last_try.map_or(RECONNECT_EVERY, |t| t.elapsed());
            return Some(RECONNECT_EVERY.saturating_sub(since));
        }
        if self.gap && self.pending.len() <= MAX_PENDING / 2 {
            let since = self.last_gap.map_or(GAP_EVERY, |t| t.elapsed());
            return Some(GAP_EVERY.saturating_sub(since));
        }
        None
    }

    /// The daemon never writes to a tap: the socket turning readable means
    /// it hung up (or died). Reads and discards; drops the stream on EOF.
    fn check_hangup(&mut self) {
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        let mut sink = [0u8; 512];
        loop {
            match stream.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        self.drop_stream();
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
    let mut link = Link::new(socket, pane);
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        link.connect();
        link.report_gap();
        link.flush();
        let stdin_fd = std::io::stdin();
        let mut fds = vec![PollFd::new(stdin_fd.as_fd(), PollFlags::POLLIN)];
        if let Some(s) = link.stream.as_ref() {
            // Always watch for a hang-up; for room to write when there is
            // something to write.
            let mut flags = PollFlags::POLLIN;
            if !link.pending.is_empty() {
                flags |= PollFlags::POLLOUT;
            }
            fds.push(PollFd::new(s.as_fd(), flags));
        }
        let timeout = match link.timer() {
            // Rounded up, so the loop does not wake a moment too early.
            Some(d) => PollTimeout::from(d.as_millis().saturating_add(1).min(60_000) as u16),
            None => PollTimeout::NONE,
        };
        match nix::poll::poll(&mut fds, timeout) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(std::io::Error::other(e)),
        }
        let readable = fds[0].revents().is_some_and(|r| {
            r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
        });
        let hangup = fds.get(1).and_then(|f| f.revents()).is_some_and(|r| {
            r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
        });
        drop(fds);
        if hangup {
            link.check_hangup();
        }
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
        let mut link = Link::new(Path::new("/nonexistent/tend.tap"), "%1");
        link.connect();
        link.push(b"hello");
        assert!(link.pending.is_empty());
        assert!(link.gap);
    }

    fn connected() -> (tempfile::TempDir, std::os::unix::net::UnixListener, Link) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.tap");
        let listener = std::os::unix::net::UnixListener::bind(&path).expect("bind");
        let mut link = Link::new(&path, "%7");
        link.connect();
        assert!(link.stream.is_some());
        (dir, listener, link)
    }

    #[test]
    fn gaps_are_reported_at_most_once_per_interval() {
        let (_dir, _listener, mut link) = connected();
        let hello = frame(FRAME_HELLO, b"%7");
        assert_eq!(link.pending, hello);
        // A drop, then output: the gap is reported first.
        link.gap = true;
        link.push(b"a");
        let mut want = hello.clone();
        want.extend(frame(FRAME_GAP, b""));
        want.extend(frame(FRAME_DATA, b"a"));
        assert_eq!(link.pending, want);
        // Another drop right away: output is dropped until a report is due.
        link.gap = true;
        link.last_gap = Some(Instant::now() + Duration::from_secs(60));
        link.push(b"b");
        assert_eq!(link.pending, want);
        assert!(link
            .timer()
            .is_some_and(|t| t > Duration::ZERO && t <= GAP_EVERY));
        // A report is due again.
        link.last_gap = Instant::now().checked_sub(GAP_EVERY);
        assert_eq!(link.timer(), Some(Duration::ZERO));
        link.push(b"c");
        want.extend(frame(FRAME_GAP, b""));
        want.extend(frame(FRAME_DATA, b"c"));
        assert_eq!(link.pending, want);
        assert_eq!(link.timer(), None);
    }

    #[test]
    fn a_full_queue_drops_and_reports_once_drained() {
        let (_dir, _listener, mut link) = connected();
        link.pending.clear();
        link.push(&vec![b'x'; MAX_PENDING - 100]);
        let queued = link.pending.len();
        link.push(&[b'y'; 200]);
        assert_eq!(link.pending.len(), queued, "over the limit: dropped");
        assert!(link.gap);
        // Not reported while the queue is more than half full.
        assert!(!link.report_gap());
        link.pending.clear();
        assert!(link.report_gap());
        assert_eq!(link.pending, frame(FRAME_GAP, b""));
    }

    #[test]
    fn a_daemon_that_goes_away_is_noticed_without_output() {
        let (dir, listener, mut link) = connected();
        let (peer, _) = listener.accept().expect("accept");
        // Still there: nothing to read, the stream stays.
        link.check_hangup();
        assert!(link.stream.is_some());
        drop(peer);
        drop(listener);
        let _ = std::fs::remove_file(dir.path().join("t.tap"));
        link.check_hangup();
        assert!(link.stream.is_none(), "hang-up not noticed");
        assert!(link.gap, "the next daemon must re-seed");
        assert!(link.timer().is_some_and(|t| t <= RECONNECT_EVERY));
        // The next daemon: HELLO, then the gap at once.
        let listener =
            std::os::unix::net::UnixListener::bind(dir.path().join("t.tap")).expect("bind again");
        link.last_try = None;
        link.connect();
        let mut want = frame(FRAME_HELLO, b"%7");
        want.extend(frame(FRAME_GAP, b""));
        assert_eq!(link.pending, want);
        drop(listener);
    }
}
