//! The pane pipes: one thread that receives each pane's pipe from its tap
//! (`SCM_RIGHTS` on the tap socket, see [`crate::tap`]) and reads every
//! pipe on the daemon's batch tick ([`super::ipc::next_batch_tick`]).
//!
//! tmux buffers whatever its reader does not take, without bound (tmux
//! 3.3a, measured: a pane running `yes` with a reader that holds the pipe
//! and never reads grew the server by ~8 MB a second, and the memory stayed
//! after the pipe was read). So this thread never waits for anyone: it
//! drains every pipe at each tick whatever the event loop is doing, and
//! when the pane table falls behind a pane (more than [`MAX_PENDING`] bytes
//! of it handed on and not yet consumed) it drops that pane's output and
//! reports a gap, which makes the daemon re-seed the pane from
//! `capture-pane`. Under a flood, gaps are reported at most once per
//! [`GAP_EVERY`] (output between a drop and its report is dropped too: the
//! re-seed replaces it), so a pane printing megabytes a second costs a few
//! captures a second, not hundreds.
//!
//! A quiet server costs nothing: with no pane printing, the thread sleeps
//! in `epoll_wait` on all pipes and the socket. Once a pane prints, the
//! thread keeps to the tick for `LINGER_TICKS` ticks after its last data
//! (agents print in bursts tens of milliseconds apart), reading at each
//! tick the pipes `epoll` calls readable.

use std::io::{ErrorKind, IoSliceMut, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::poll::PollTimeout;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, UnixAddr};
use tend_tmux::PaneId;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::mpsc::Sender;

use super::core::Event;
use super::ipc::next_batch_tick;
use crate::tap::MAX_PANE_ID;

/// Most bytes of one pane handed to the pane table and not yet consumed;
/// beyond it the pane's output is dropped and re-seeded.
pub const MAX_PENDING: usize = 128 * 1024;

/// Fewest time between two gap reports of a pane (each makes the daemon
/// capture the pane).
pub const GAP_EVERY: Duration = Duration::from_millis(250);

/// Ticks a pipe keeps being read at each tick after its last data (200 ms
/// at 20 ms a tick).
const LINGER_TICKS: u32 = 10;

/// Most bytes taken from one pipe at one tick (50 MB/s at 20 ms a tick,
/// several times what tmux 3.3a writes into a pipe under `yes`).
const DRAIN_MAX: usize = 1 << 20;

/// Reads of at least this much in one tick make a pipe hot: read every
/// [`HOT_EVERY`] until the next tick as well (1.6 MB a second and more; agents
/// print far less). Read only on the tick, a pane printing 10 MB a second
/// fills the pipe's socket buffer (about 200 KiB) before the tick, and tmux
/// then keeps the rest in memory it does not give back.
const HOT_READ: usize = 32 * 1024;

/// How often a hot pipe is read between ticks.
const HOT_EVERY: Duration = Duration::from_millis(2);

/// What a read asks for at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Most bytes of one pane in one [`Event::TapData`]. The pane table feeds
/// output to the detector event by event and lets control requests in
/// between (see [`super::FEED_ROUND`]): a smaller piece bounds how long a
/// request can wait behind a flooding pane's output.
pub const FEED_CHUNK: usize = 16 * 1024;

/// How long a hand-over may take to arrive once its connection is
/// accepted (the tap sends it right after connecting).
const HANDOVER_WAIT: Duration = Duration::from_millis(200);

/// Pane output bytes handed on and not yet consumed, per pane; released
/// when the [`Event::TapData`] carrying them is dropped.
#[derive(Debug)]
pub struct Held {
    count: Arc<AtomicUsize>,
    bytes: usize,
}

#[cfg(test)]
impl Held {
    /// Bytes counted against no pane (tests that hand the table output).
    pub fn untracked(bytes: usize) -> Held {
        Held {
            count: Arc::new(AtomicUsize::new(bytes)),
            bytes,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.count.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// Receives one hand-over: the pane id and the pipe. Extra descriptors
/// are closed; a message without one is an error.
pub fn receive(stream: &UnixStream) -> Result<(String, OwnedFd), String> {
    let mut buf = [0u8; MAX_PANE_ID + 1];
    let mut cmsg = nix::cmsg_space!([RawFd; 4]);
    let mut iov = [IoSliceMut::new(&mut buf)];
    let msg = recvmsg::<UnixAddr>(
        stream.as_raw_fd(),
        &mut iov,
        Some(&mut cmsg),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(|e| format!("reading a hand-over failed: {e}"))?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for c in msg.cmsgs().map_err(|e| format!("bad control data: {e}"))? {
        if let ControlMessageOwned::ScmRights(raw) = c {
            // Owned at once, so that every descriptor received is closed
            // whatever happens next.
            // SAFETY: the kernel just installed these descriptors in this
            // process for us; nothing else refers to them.
            fds.extend(
                raw.into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    let len = msg.bytes;
    let Some(fd) = fds.into_iter().next() else {
        return Err("a hand-over without a descriptor".into());
    };
    let pane = std::str::from_utf8(&buf[..len.min(MAX_PANE_ID)])
        .map_err(|_| "a pane id that is not text".to_string())?
        .to_owned();
    if len > MAX_PANE_ID {
        return Err("a pane id longer than any".into());
    }
    Ok((pane, fd))
}

fn same_user(stream: &UnixStream) -> bool {
    nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .map(|c| c.uid() == nix::unistd::getuid().as_raw())
        .unwrap_or(false)
}

struct Pipe {
    conn: u64,
    file: std::fs::File,
    /// Ticks left during which the thread keeps to the tick for this pipe.
    linger: u32,
    held: Arc<AtomicUsize>,
    /// Output was dropped and the pane table has not been told yet.
    gap: bool,
    last_gap: Option<Instant>,
    closed: bool,
    /// Output read and kept to be handed on at the next tick.
    carry: Vec<u8>,
    /// Bytes read since the last tick.
    read: usize,
    /// The last tick's reads took at least [`HOT_READ`] bytes: the pipe is
    /// read between ticks too.
    hot: bool,
    /// `epoll` called it readable (or closed) since the tick's reads.
    ready: bool,
}

impl Pipe {
    /// A pipe just handed over, the thread on the tick for it for `linger`
    /// ticks.
    fn new(conn: u64, file: std::fs::File, linger: u32) -> Self {
        Pipe {
            conn,
            file,
            linger,
            held: Arc::new(AtomicUsize::new(0)),
            gap: false,
            last_gap: None,
            closed: false,
            carry: Vec::new(),
            read: 0,
            hot: false,
            ready: false,
        }
    }

    /// Reads what the pipe holds (up to [`DRAIN_MAX`]) through `scratch`
    /// and keeps it in `carry` for the next tick, or drops it when it must
    /// be dropped. Returns how many bytes were read.
    ///
    /// `scratch` is the reader's one buffer, allocated once: a buffer
    /// grown and zeroed at every read cost as much as the parsing of the
    /// output it held.
    fn drain(&mut self, scratch: &mut [u8]) -> usize {
        let max = scratch.len().min(DRAIN_MAX);
        let mut len = 0;
        while len < max {
            let end = (len + READ_CHUNK).min(max);
            match self.file.read(&mut scratch[len..end]) {
                Ok(0) => {
                    self.closed = true;
                    break;
                }
                Ok(n) => {
                    len += n;
                    // A short read took all the socket held (a Unix stream
                    // socket's read copies every queued buffer up to the
                    // size asked): asking again would only answer EAGAIN.
                    if len < end {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.closed = true;
                    break;
                }
            }
        }
        self.read += len;
        if len == 0 {
            return 0;
        }
        if self.held.load(Ordering::Relaxed) + self.carry.len() + len > MAX_PENDING {
            // The pane table is behind on this pane: drop, re-seed later.
            self.gap = true;
            self.carry = Vec::new();
            return len;
        }
        if !self.report_due() && self.gap {
            // A gap is outstanding but may not be reported yet: the re-seed
            // that follows its report replaces this output anyway.
            return len;
        }
        self.carry.extend_from_slice(&scratch[..len]);
        len
    }

    /// Whether the tick has anything to do for this pipe: `epoll` just
    /// called it readable, a gap is outstanding, or reads between ticks
    /// (a hot pipe) left output or an end to hand on. Otherwise a read
    /// would only answer EAGAIN: lingering keeps the thread on the tick,
    /// it need not read what has nothing.
    fn needs_tick(&self, readable: bool) -> bool {
        readable || self.gap || self.closed || self.read > 0 || !self.carry.is_empty()
    }

    /// The tick's reads are over: hot or not until the next tick.
    fn end_tick(&mut self) {
        self.hot = self.read >= HOT_READ;
        self.read = 0;
    }

    /// A gap is outstanding and may be reported now (the pane table has
    /// consumed half of what it holds, and the last report is old enough).
    fn report_due(&self) -> bool {
        self.gap
            && self.held.load(Ordering::Relaxed) <= MAX_PENDING / 2
            && self.last_gap.is_none_or(|t| t.elapsed() >= GAP_EVERY)
    }

    fn hold(&self, bytes: usize) -> Held {
        self.held.fetch_add(bytes, Ordering::Relaxed);
        Held {
            count: self.held.clone(),
            bytes,
        }
    }
}

/// Starts the thread that takes pipes from `listener` (the tap socket)
/// and reads them. It ends when the pane table's channel closes.
pub fn spawn(listener: UnixListener, events: Sender<Event>) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let reader = Reader::new(listener, events)?;
    std::thread::Builder::new()
        .name("tend-pipes".into())
        .spawn(move || reader.run())?;
    Ok(())
}

struct Reader {
    listener: UnixListener,
    events: Sender<Event>,
    /// Every pipe and the listener, registered once: a tick asks which are
    /// readable without handing the kernel the whole list (`poll` did, and
    /// it was a fifth of the thread's time).
    epoll: Epoll,
    /// What the last [`Reader::ready`] returned, reused; grown to hold
    /// every watched descriptor.
    ready_events: Vec<EpollEvent>,
    /// Ordered by `conn` (connections are numbered in the order they are
    /// accepted, and pipes are only ever appended or removed).
    pipes: Vec<Pipe>,
    /// Hello, gap and close events the pane table's queue had no room for:
    /// sent first at the next tick (only data may be dropped).
    outbox: Vec<Event>,
    next_conn: u64,
}

/// The `epoll` data of the tap socket (pipes carry their `conn`, from 1).
const LISTENER: u64 = 0;

impl Reader {
    fn new(listener: UnixListener, events: Sender<Event>) -> std::io::Result<Reader> {
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        epoll.add(&listener, EpollEvent::new(EpollFlags::EPOLLIN, LISTENER))?;
        Ok(Reader {
            listener,
            events,
            epoll,
            ready_events: Vec::new(),
            pipes: Vec::new(),
            outbox: Vec::new(),
            next_conn: LISTENER + 1,
        })
    }

    /// Something to do at the next tick whatever `epoll` says.
    fn busy(&self) -> bool {
        !self.outbox.is_empty() || self.pipes.iter().any(|p| p.linger > 0)
    }

    /// How long a quiet reader may sleep: until an outstanding gap may be
    /// reported.
    fn gap_timer(&self) -> Option<Duration> {
        self.pipes
            .iter()
            .filter(|p| p.gap)
            .map(|p| {
                let since = p.last_gap.map_or(GAP_EVERY, |t| t.elapsed());
                GAP_EVERY.saturating_sub(since)
            })
            .min()
    }

    /// Waits up to `timeout` for a pipe or the socket to be readable (or
    /// closed); marks the readable pipes (`Pipe::ready`) and says whether a
    /// tap is connecting.
    fn ready(&mut self, timeout: PollTimeout) -> bool {
        // Room for every descriptor at once: level-triggered `epoll` answers
        // the readable ones again at each call, so a smaller buffer asked
        // again until it comes back short would never end while more pipes
        // than it holds are readable.
        let watched = self.pipes.len() + 1;
        if self.ready_events.len() < watched {
            self.ready_events.resize(watched, EpollEvent::empty());
        }
        let n = match self.epoll.wait(&mut self.ready_events, timeout) {
            Ok(n) => n,
            Err(_) => {
                // EINTR, or out of memory: treat everything as ready; the
                // reads are non-blocking.
                for p in &mut self.pipes {
                    p.ready = true;
                }
                return true;
            }
        };
        let mut accept = false;
        for ev in &self.ready_events[..n] {
            let conn = ev.data();
            if conn == LISTENER {
                accept = true;
            } else if let Ok(i) = self.pipes.binary_search_by_key(&conn, |p| p.conn) {
                self.pipes[i].ready = true;
            }
        }
        accept
    }

    /// Waits for `tick`, reading the hot pipes every [`HOT_EVERY`]
    /// meanwhile (a quiet server just sleeps).
    fn wait_for(&mut self, tick: Instant, scratch: &mut [u8]) {
        loop {
            let left = tick.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            if !self.pipes.iter().any(|p| p.hot) {
                std::thread::sleep(left);
                return;
            }
            std::thread::sleep(left.min(HOT_EVERY));
            for p in self.pipes.iter_mut().filter(|p| p.hot && !p.closed) {
                p.drain(scratch);
            }
        }
    }

    fn run(mut self) {
        let mut scratch = vec![0u8; DRAIN_MAX];
        loop {
            if !self.busy() {
                // Nothing printing: sleep until something is.
                let timeout = match self.gap_timer() {
                    Some(d) => {
                        PollTimeout::from(d.as_millis().saturating_add(1).min(60_000) as u16)
                    }
                    None => PollTimeout::NONE,
                };
                let _ = self.ready(timeout);
                for p in &mut self.pipes {
                    p.ready = false;
                }
            }
            // Every pane's output of this tick read together, on the same
            // instants as the pane table's own wake-ups.
            let tick = next_batch_tick(Instant::now());
            self.wait_for(tick, &mut scratch);
            let accept = self.ready(PollTimeout::ZERO);
            let mut batch = std::mem::take(&mut self.outbox);
            if accept {
                self.accept(&mut batch);
            }
            let at = Instant::now();
            for p in self.pipes.iter_mut() {
                let readable = std::mem::take(&mut p.ready);
                if !p.needs_tick(readable) {
                    if p.linger > 0 {
                        p.linger -= 1;
                        p.end_tick();
                    }
                    continue;
                }
                let n = p.drain(&mut scratch);
                if n > 0 {
                    crate::trace!("read conn={} bytes={}", p.conn, n);
                    p.linger = LINGER_TICKS;
                } else {
                    p.linger = p.linger.saturating_sub(1);
                }
                p.end_tick();
                if p.report_due() {
                    batch.push(Event::TapGap { conn: p.conn });
                    p.gap = false;
                    p.last_gap = Some(Instant::now());
                }
                for piece in p.carry.chunks(FEED_CHUNK) {
                    batch.push(Event::TapData {
                        conn: p.conn,
                        bytes: piece.to_vec(),
                        at,
                        held: p.hold(piece.len()),
                    });
                }
                p.carry.clear();
                if p.carry.capacity() > MAX_PENDING {
                    p.carry.shrink_to(MAX_PENDING);
                }
                if p.closed {
                    batch.push(Event::TapClosed { conn: p.conn });
                }
            }
            self.pipes.retain(|p| !p.closed);
            if batch.is_empty() {
                continue;
            }
            match self.events.try_send(Event::Taps(batch)) {
                Ok(()) => {}
                Err(TrySendError::Closed(_)) => return,
                Err(TrySendError::Full(Event::Taps(batch))) => self.requeue(batch),
                Err(TrySendError::Full(_)) => {}
            }
        }
    }

    /// The pane table's queue is full: keep the events that must arrive,
    /// drop the output (and mark those panes for a re-seed).
    fn requeue(&mut self, batch: Vec<Event>) {
        for ev in batch {
            match ev {
                Event::TapData { conn, .. } => {
                    if let Some(p) = self.pipes.iter_mut().find(|p| p.conn == conn) {
                        p.gap = true;
                    }
                }
                other => self.outbox.push(other),
            }
        }
    }

    /// Takes every waiting hand-over.
    fn accept(&mut self, batch: &mut Vec<Event>) {
        loop {
            let stream = match self.listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            // Another user's connection is closed unread.
            if !same_user(&stream) {
                continue;
            }
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_read_timeout(Some(HANDOVER_WAIT));
            let (pane, fd) = match receive(&stream) {
                Ok(got) => got,
                Err(e) => {
                    eprintln!("tend: a tap connection was closed: {e}");
                    continue;
                }
            };
            let Ok(pane) = pane.trim().parse::<PaneId>() else {
                eprintln!("tend: a tap named `{pane}`, which is not a pane id; closed");
                continue;
            };
            let file = std::fs::File::from(fd);
            if set_nonblocking(&file).is_err() {
                continue;
            }
            match self.watch(file) {
                Ok(conn) => batch.push(Event::TapHello { conn, pane }),
                Err(e) => {
                    eprintln!("tend: cannot watch the pipe of pane {pane} (epoll: {e}); closed")
                }
            }
        }
    }

    /// Adds a pipe to the ones read, under the next connection number;
    /// it is read at the next ticks (the pane is printing, or will). A
    /// pipe `epoll` refuses is closed.
    fn watch(&mut self, file: std::fs::File) -> nix::Result<u64> {
        let conn = self.next_conn;
        self.epoll
            .add(&file, EpollEvent::new(EpollFlags::EPOLLIN, conn))?;
        self.next_conn += 1;
        self.pipes.push(Pipe::new(conn, file, LINGER_TICKS));
        Ok(conn)
    }
}

fn set_nonblocking(file: &std::fs::File) -> nix::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    let flags = OFlag::from_bits_truncate(fcntl(file, FcntlArg::F_GETFL)?);
    fcntl(file, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn pipe() -> (UnixStream, Pipe) {
        let (tmux, ours) = UnixStream::pair().expect("pair");
        ours.set_nonblocking(true).expect("nonblocking");
        let file = std::fs::File::from(OwnedFd::from(ours));
        (tmux, Pipe::new(1, file, 0))
    }

    #[test]
    fn output_is_read_whole_and_kept_for_the_tick() {
        let (mut tmux, mut p) = pipe();
        let mut scratch = vec![0u8; DRAIN_MAX];
        tmux.write_all(b"abc").expect("write");
        assert_eq!(p.drain(&mut scratch), 3);
        tmux.write_all(b"de").expect("write");
        assert_eq!(p.drain(&mut scratch), 2);
        assert_eq!(p.carry, b"abcde");
        p.end_tick();
        assert!(!p.hot, "a few bytes do not make a pipe hot");
        let held = p.hold(5);
        assert_eq!(p.held.load(Ordering::Relaxed), 5);
        drop(held);
        assert_eq!(p.held.load(Ordering::Relaxed), 0);
        assert_eq!(p.drain(&mut scratch), 0);
        assert!(!p.closed);
    }

    #[test]
    fn a_pipe_printing_a_lot_in_a_tick_is_hot_until_a_tick_takes_little() {
        let (mut tmux, mut p) = pipe();
        let mut scratch = vec![0u8; DRAIN_MAX];
        // Fits in the socket's buffer: written whole before the reads.
        tmux.write_all(&[b'x'; HOT_READ - 1]).expect("write");
        assert_eq!(p.drain(&mut scratch), HOT_READ - 1);
        tmux.write_all(b"y").expect("write");
        assert_eq!(p.drain(&mut scratch), 1);
        assert!(!p.hot, "hot is decided at the tick");
        p.end_tick();
        assert!(p.hot, "two reads of one tick count together");
        tmux.write_all(b"z").expect("write");
        assert_eq!(p.drain(&mut scratch), 1);
        p.end_tick();
        assert!(!p.hot);
        assert_eq!(p.carry.len(), HOT_READ + 1);
    }

    #[test]
    fn a_pane_table_behind_drops_then_reports_one_gap() {
        let (mut tmux, mut p) = pipe();
        let mut scratch = vec![0u8; DRAIN_MAX];
        let _held = p.hold(MAX_PENDING - 2);
        tmux.write_all(b"xyz").expect("write");
        assert_eq!(p.drain(&mut scratch), 3);
        assert!(p.carry.is_empty(), "over the bound: dropped");
        assert!(p.gap);
        // Still more than half held: no report yet, output still dropped.
        assert!(!p.report_due());
        drop(_held);
        assert!(p.report_due());
        p.gap = false;
        p.last_gap = Some(Instant::now());
        // Another drop right after a report: output is dropped until the
        // next report is due.
        p.gap = true;
        tmux.write_all(b"more").expect("write");
        assert!(!p.report_due());
        assert_eq!(p.drain(&mut scratch), 4);
        assert!(p.carry.is_empty());
        p.last_gap = Instant::now().checked_sub(GAP_EVERY);
        assert!(p.report_due());
        // Kept output counts against the bound with what is held.
        p.gap = false;
        let _held = p.hold(MAX_PENDING - 4);
        tmux.write_all(b"ab").expect("write");
        assert_eq!(p.drain(&mut scratch), 2);
        assert_eq!(p.carry, b"ab");
        tmux.write_all(b"cde").expect("write");
        assert_eq!(p.drain(&mut scratch), 3);
        assert!(p.gap, "2 kept + 3 read + held is over the bound");
        assert!(p.carry.is_empty(), "a gap drops what was kept too");
    }

    #[test]
    fn output_read_between_ticks_is_handed_on_at_the_tick() {
        let (mut tmux, mut p) = pipe();
        let mut scratch = vec![0u8; DRAIN_MAX];
        assert!(!p.needs_tick(false), "nothing to read, nothing kept");
        assert!(p.needs_tick(true));
        // A hot pipe read between ticks drains the socket: `epoll` no longer
        // calls it readable, but what was read waits for the tick.
        tmux.write_all(b"dialog").expect("write");
        assert_eq!(p.drain(&mut scratch), 6);
        assert!(p.needs_tick(false));
        p.carry.clear();
        p.end_tick();
        assert!(!p.needs_tick(false));
        drop(tmux);
        assert_eq!(p.drain(&mut scratch), 0);
        assert!(p.needs_tick(false), "an end read between ticks is reported");
    }

    #[test]
    fn tmux_closing_the_pipe_is_noticed() {
        let (mut tmux, mut p) = pipe();
        let mut scratch = vec![0u8; DRAIN_MAX];
        tmux.write_all(b"last").expect("write");
        drop(tmux);
        // A short read stops the drain (nothing more was queued); the end
        // is read at the next tick, which `epoll` calls readable.
        assert_eq!(p.drain(&mut scratch), 4);
        assert_eq!(p.carry, b"last");
        assert!(!p.closed);
        assert_eq!(p.drain(&mut scratch), 0);
        assert!(p.closed);
    }

    /// A reader on a fresh tap socket in `dir`, watching `n` pipes (conn 1
    /// to `n`) through [`Reader::watch`]; returns tmux's ends.
    fn reader_with_pipes(dir: &std::path::Path, n: u64) -> (Reader, Vec<UnixStream>) {
        let (tx, _rx) = tokio::sync::mpsc::channel(4);
        let listener = UnixListener::bind(dir.join("tap")).expect("bind");
        let mut r = Reader::new(listener, tx).expect("epoll");
        let mut ends = Vec::new();
        for _ in 0..n {
            let (tmux, ours) = UnixStream::pair().expect("pair");
            ours.set_nonblocking(true).expect("nonblocking");
            r.watch(std::fs::File::from(OwnedFd::from(ours)))
                .expect("watch");
            ends.push(tmux);
        }
        (r, ends)
    }

    #[test]
    fn the_reader_is_told_which_pipes_are_readable_or_closed() {
        let dir = tempfile::tempdir().expect("dir");
        let (mut r, mut ends) = reader_with_pipes(dir.path(), 3);
        assert!(!r.ready(PollTimeout::ZERO));
        assert!(r.pipes.iter().all(|p| !p.ready));
        (&ends[2]).write_all(b"x").expect("write");
        drop(ends.remove(0));
        assert!(!r.ready(PollTimeout::ZERO));
        let ready: Vec<u64> = r.pipes.iter().filter(|p| p.ready).map(|p| p.conn).collect();
        assert_eq!(ready, [1, 3], "the closed pipe and the one with output");
        let _tap = UnixStream::connect(dir.path().join("tap")).expect("connect");
        assert!(r.ready(PollTimeout::ZERO), "a tap connecting");
    }

    #[test]
    fn more_readable_pipes_than_one_answer_used_to_hold_are_all_marked() {
        // Level-triggered `epoll` answers every readable pipe again at each
        // call: a fixed buffer of 64 that asked again while it came back
        // full never ended once 64 pipes printed at the same tick.
        let dir = tempfile::tempdir().expect("dir");
        let (mut r, ends) = reader_with_pipes(dir.path(), 150);
        for end in &ends {
            let mut end = end;
            end.write_all(b"x").expect("write");
        }
        assert!(!r.ready(PollTimeout::ZERO));
        assert_eq!(r.pipes.iter().filter(|p| p.ready).count(), 150);
    }

    #[test]
    fn a_hand_over_without_a_descriptor_is_refused() {
        let (a, b) = UnixStream::pair().expect("pair");
        (&a).write_all(b"%3").expect("write");
        let e = receive(&b).expect_err("no descriptor");
        assert!(e.contains("without a descriptor"), "{e}");
    }
}
