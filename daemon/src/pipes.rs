//! The pane pipes: the daemon receives each pane's pipe from its tap
//! (`SCM_RIGHTS` on the tap socket, see [`crate::tap`]) and its event loop
//! reads every pipe on shared read ticks ([`Cadence`]): one wake-up of one
//! thread for all the panes that printed, not one per write, nor one for
//! a reading thread and another for the loop it hands the output to.
//!
//! tmux buffers whatever its reader does not take, without bound (tmux
//! 3.3a, measured: a pane running `yes` with a reader that holds the pipe
//! and never reads grew the server by ~8 MB a second, and the memory stayed
//! after the pipe was read). So the loop reads at every tick whatever the
//! pane table still has to consume, and never spends more than a bounded
//! round ([`super::FEED_ROUND`]) between reads; when the pane table falls
//! behind a pane (more than [`MAX_PENDING`] bytes of it read and not yet
//! consumed) the reader drops that pane's output and reports a gap, which
//! makes the daemon re-seed the pane from `capture-pane`. Under a flood,
//! gaps are reported at most once per [`GAP_EVERY`] (output between a drop
//! and its report is dropped too: the re-seed replaces it), so a pane
//! printing megabytes a second costs a few captures a second, not
//! hundreds; a pipe that gives 32 KiB in a tick is also drained every 2 ms
//! until the next one, before the socket's buffer fills.
//!
//! A quiet server costs nothing: with no pane printing, the loop sleeps on
//! the pipes themselves (the [`Reader::doorbell`]), and the first byte
//! wakes it. Which pipes are readable is the platform's [`ReadySet`]: one
//! `epoll` set on Linux, `poll(2)` with the portable backend.

use std::collections::VecDeque;
use std::io::{ErrorKind, IoSliceMut, Read};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::socket::{recvmsg, ControlMessageOwned, UnixAddr};
use tend_tmux::PaneId;

use super::event::{Event, Ticket};
use crate::tap::MAX_PANE_ID;
use tend_core::Input;
use tend_detector::psp;
use tend_platform::{os, ReadySet};

/// Most bytes of one pane handed to the pane table and not yet consumed;
/// beyond it the pane's output is dropped and re-seeded.
pub const MAX_PENDING: usize = 128 * 1024;

/// Fewest time between two gap reports of a pane (each makes the daemon
/// capture the pane).
pub const GAP_EVERY: Duration = Duration::from_millis(250);

/// The shortest time between two read ticks while panes print (see
/// [`Cadence`]): output waits at most this long to be read (a dialog drawn
/// after a silence is read at once). 30 ms: ten busy agents wake the
/// daemon ~33 times a second, and a dialog drawn while others print still
/// reaches the status line well within the 50 ms the benchmarks ask of
/// the slowest run (`docs/PERFORMANCE.md`).
pub const READ_EVERY: Duration = Duration::from_millis(30);

/// Most bytes taken from one pipe at one tick (33 MB/s at a tick every
/// 30 ms, several times what tmux 3.3a writes into a pipe under `yes`).
const DRAIN_MAX: usize = 1 << 20;

/// Reads of at least this much in one tick make a pipe hot: read every
/// [`HOT_EVERY`] until the next tick as well (about 1 MB a second and more; agents
/// print far less). Read only on the tick, a pane printing 10 MB a second
/// fills the pipe's socket buffer (about 200 KiB) before the tick, and tmux
/// then keeps the rest in memory it does not give back.
const HOT_READ: usize = 32 * 1024;

/// How often a hot pipe is read between ticks.
const HOT_EVERY: Duration = Duration::from_millis(2);

/// What a read asks for at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Most bytes of one pane in one [`Input::TapData`]. The pane table feeds
/// output to the detector event by event and lets control requests in
/// between (see [`super::FEED_ROUND`]): a smaller piece bounds how long a
/// request can wait behind a flooding pane's output.
pub const FEED_CHUNK: usize = 16 * 1024;

/// How long a hand-over may take to arrive once its connection is
/// accepted (the tap sends it right after connecting).
const HANDOVER_WAIT: Duration = Duration::from_millis(200);

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
        os::RECV_CLOEXEC,
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
    // Where the flag above is not atomic (macOS), each descriptor is made
    // close-on-exec now.
    for fd in &fds {
        os::after_receive(fd);
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
    os::peer_uid(stream.as_fd()).is_ok_and(|uid| uid == nix::unistd::getuid().as_raw())
}

struct Pipe {
    conn: u64,
    file: std::fs::File,
    in_flight: Arc<AtomicUsize>,
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
    /// The ready set called it readable (or closed) since the tick's reads.
    ready: bool,
    /// The program's reports in output dropped here, kept for the pane
    /// table (a drop loses the screen, which a capture puts right, but
    /// not the program's word).
    salvage: psp::Salvage,
}

impl Pipe {
    /// A pipe just handed over.
    fn new(conn: u64, file: std::fs::File) -> Self {
        Pipe {
            conn,
            file,
            in_flight: Arc::new(AtomicUsize::new(0)),
            gap: false,
            last_gap: None,
            closed: false,
            carry: Vec::new(),
            read: 0,
            hot: false,
            ready: false,
            salvage: psp::Salvage::default(),
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
        let read = &scratch[..len];
        if self.in_flight.load(Ordering::Relaxed) + self.carry.len() + len > MAX_PENDING {
            // The pane table is behind on this pane: drop, re-seed later.
            // What was kept for this tick goes too: its reports are saved.
            self.gap = true;
            self.salvage.scan(&self.carry, true);
            self.salvage.scan(read, true);
            self.carry = Vec::new();
            return len;
        }
        if !self.report_due() && self.gap {
            // A gap is outstanding but may not be reported yet: the re-seed
            // that follows its report replaces this output anyway.
            self.salvage.scan(read, true);
            return len;
        }
        // Kept: scanned for reports when it is handed on (it may yet be
        // dropped), in the order it was read.
        self.carry.extend_from_slice(read);
        len
    }

    /// Whether the tick has anything to do for this pipe: `epoll` just
    /// called it readable, a gap is outstanding, or reads between ticks
    /// (a hot pipe) left output or an end to hand on. Otherwise a read
    /// would only answer EAGAIN.
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
            && self.in_flight.load(Ordering::Relaxed) <= MAX_PENDING / 2
            && self.last_gap.is_none_or(|t| t.elapsed() >= GAP_EVERY)
    }

    fn hold(&self, bytes: usize) -> Ticket {
        self.in_flight.fetch_add(bytes, Ordering::Relaxed);
        Ticket::new(self.in_flight.clone(), bytes)
    }
}

/// The pipes' read ticks: when the event loop reads them next.
///
/// Reading is what wakes the daemon, and on a virtual machine a wake-up
/// costs more than the parsing it leads to (measured in
/// `docs/PERFORMANCE.md`), so the pipes are read on ticks, not on every
/// write: after a read that found output, the next one is [`READ_EVERY`]
/// later, whatever was written meanwhile (ten busy agents wake the daemon
/// at most that often, not once per write). [`QUIET_AFTER`] ticks in a
/// row that find nothing make the reader *quiet*: the loop then waits on
/// the pipes themselves (the [`Reader::doorbell`]) and the first byte is
/// read at once, so an agent that goes silent and then draws a dialog is
/// read without waiting for a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cadence {
    /// The last read tick while busy; `None` while quiet.
    busy_since_read: Option<Instant>,
    /// Ticks in a row that found nothing.
    empty: u8,
}

/// Read ticks in a row that find nothing before the reader goes quiet:
/// 120 ms of silence. Waiting on the doorbell means registering it with
/// the runtime and taking it off again at the next byte, which costs
/// more than the ticks it saves when it happens at every spinner frame:
/// the agents' working turns pause 60–120 ms between frames hundreds of
/// times a minute (Codex's spinner, Gemini CLI's redraws; `tests/corpus/
/// <agent>/working_then_done`), rarely longer while they work. Quiet
/// after the first empty tick, ten such panes cost 8 % more CPU than on
/// ticks throughout (`docs/PERFORMANCE.md`).
pub const QUIET_AFTER: u8 = 4;

impl Cadence {
    /// A quiet cadence.
    pub const fn new() -> Cadence {
        Cadence {
            busy_since_read: None,
            empty: 0,
        }
    }

    /// Whether the last read tick found output (panes print now; not
    /// while quiet, nor on the empty ticks before it).
    pub fn printing(&self) -> bool {
        self.busy_since_read.is_some() && self.empty == 0
    }

    /// The next read tick, or `None` while quiet (wait on the doorbell).
    pub fn next_tick(&self) -> Option<Instant> {
        self.busy_since_read.map(|t| t + READ_EVERY)
    }

    /// Whether a read tick is due at `now` (`rang`: the doorbell rang).
    pub fn due(&self, now: Instant, rang: bool) -> bool {
        match self.next_tick() {
            Some(t) => now >= t,
            None => rang,
        }
    }

    /// A read tick at `now` found output (`found`) or nothing.
    pub fn read(&mut self, now: Instant, found: bool) {
        if found {
            self.empty = 0;
        } else if self.busy_since_read.is_some() {
            self.empty += 1;
        }
        // Quiet (and counting from nought again) after QUIET_AFTER empty
        // ticks; a doorbell's read that finds nothing leaves it quiet.
        if found || (self.busy_since_read.is_some() && self.empty < QUIET_AFTER) {
            self.busy_since_read = Some(now);
        } else {
            self.busy_since_read = None;
            self.empty = 0;
        }
    }

    /// The first instant at or after `at` that falls on this cadence's
    /// ticks while it is busy (the pane table's soft deadlines are served
    /// at the next read instead of waking the loop on their own); `at`
    /// itself while quiet.
    pub fn align(&self, at: Instant) -> Instant {
        let Some(last) = self.busy_since_read else {
            return at;
        };
        let step = READ_EVERY.as_nanos().max(1);
        let since = at.saturating_duration_since(last).as_nanos();
        let ticks = since.div_ceil(step).max(1);
        last + Duration::from_nanos((ticks * step).min(u64::MAX as u128) as u64)
    }
}

impl Default for Cadence {
    fn default() -> Self {
        Cadence::new()
    }
}

/// Takes pipes from the tap socket and reads them on the event loop's
/// read ticks ([`Cadence`]).
pub struct Reader {
    listener: UnixListener,
    /// Every pipe and the listener: a tick asks which are readable (on
    /// Linux one `epoll` set, registered once: a tick asks without handing
    /// the kernel the whole list). While the reader is quiet the event loop
    /// waits on its doorbell.
    set: ReadySet,
    /// The keys the last [`Reader::ready`] found, reused.
    ready_keys: Vec<u64>,
    /// Ordered by `conn` (connections are numbered in the order they are
    /// accepted, and pipes are only ever appended or removed).
    pipes: Vec<Pipe>,
    next_conn: u64,
    cadence: Cadence,
    /// When hot pipes are next read between ticks.
    next_hot: Option<Instant>,
    /// The one buffer reads go through, allocated once.
    scratch: Vec<u8>,
    /// Buffers of output the pane table has taken, reused for the next
    /// pieces ([`Reader::recycle`]).
    spare: Vec<Vec<u8>>,
}

/// Most buffers [`Reader::recycle`] keeps.
const SPARE_MAX: usize = 16;

/// Largest buffer [`Reader::recycle`] keeps: a tick's output of a busy
/// agent fits (a few KiB); a flood's pieces are not kept.
const SPARE_BYTES: usize = 8 * 1024;

/// The ready set's key of the tap socket (pipes carry their `conn`, from
/// 1).
const LISTENER: u64 = 0;

impl Reader {
    /// A reader taking pipes from `listener` (set non-blocking here),
    /// through the ready set of the backend in use.
    pub fn new(listener: UnixListener) -> std::io::Result<Reader> {
        Reader::with_set(listener, ReadySet::new()?)
    }

    /// A reader through the ready set `set`.
    pub fn with_set(listener: UnixListener, mut set: ReadySet) -> std::io::Result<Reader> {
        listener.set_nonblocking(true)?;
        set.add(listener.as_fd(), LISTENER)?;
        Ok(Reader {
            listener,
            set,
            ready_keys: Vec::new(),
            pipes: Vec::new(),
            next_conn: LISTENER + 1,
            cadence: Cadence::new(),
            next_hot: None,
            scratch: vec![0u8; DRAIN_MAX],
            spare: Vec::new(),
        })
    }

    /// Takes back a buffer of output the pane table is done with, for a
    /// later piece: a tick's pieces are then copied into buffers already
    /// there instead of new ones. (An allocation of a piece's size made
    /// the allocator sweep its free lists of small blocks at every tick:
    /// 2 % of the daemon's time with ten busy agents, issue #48.)
    pub fn recycle(&mut self, mut bytes: Vec<u8>) {
        if self.spare.len() < SPARE_MAX && bytes.capacity() <= SPARE_BYTES {
            bytes.clear();
            self.spare.push(bytes);
        }
    }

    /// Descriptors of which one is readable when a pipe has output or
    /// closed, or a tap connects: what the event loop waits on while the
    /// reader is quiet. On Linux one, another descriptor of the reader's
    /// own `epoll` set (a set can be waited on like any descriptor); with
    /// the portable backend a copy of the tap socket and of every pipe, to
    /// be taken again each time the loop starts waiting
    /// ([`Reader::doorbell_follows`]).
    pub fn doorbell(&self) -> std::io::Result<Vec<OwnedFd>> {
        let fds =
            std::iter::once(self.listener.as_fd()).chain(self.pipes.iter().map(|p| p.file.as_fd()));
        self.set.doorbell(fds)
    }

    /// Whether [`Reader::doorbell`] names the pipes of the moment (it must
    /// then be taken again before each wait) rather than one set made once.
    pub fn doorbell_follows(&self) -> bool {
        self.set.doorbell_follows()
    }

    /// The reading cadence.
    pub fn cadence(&self) -> &Cadence {
        &self.cadence
    }

    /// When [`Reader::poll`] has something to do without the doorbell
    /// ringing: the next read tick, hot pipes to drain, a gap that may be
    /// reported. `None`: wait on the doorbell.
    pub fn next_wake(&self) -> Option<Instant> {
        [self.cadence.next_tick(), self.next_hot]
            .into_iter()
            .flatten()
            .min()
    }

    /// Whether the loop should wait on the doorbell (no read tick is due
    /// on its own).
    pub fn quiet(&self) -> bool {
        self.cadence.next_tick().is_none()
    }

    /// Marks the readable pipes (`Pipe::ready`, without waiting) and says
    /// whether a tap is connecting.
    fn ready(&mut self) -> bool {
        let watched = self.pipes.len() + 1;
        self.ready_keys.clear();
        let fds = std::iter::once((self.listener.as_fd(), LISTENER))
            .chain(self.pipes.iter().map(|p| (p.file.as_fd(), p.conn)));
        match self.set.ready(watched, fds, &mut self.ready_keys) {
            Ok(()) => {}
            Err(_) => {
                // EINTR, or out of memory: treat everything as ready; the
                // reads are non-blocking.
                for p in &mut self.pipes {
                    p.ready = true;
                }
                return true;
            }
        }
        let mut accept = false;
        for &conn in &self.ready_keys {
            if conn == LISTENER {
                accept = true;
            } else if let Ok(i) = self.pipes.binary_search_by_key(&conn, |p| p.conn) {
                self.pipes[i].ready = true;
            }
        }
        accept
    }

    /// Does what is due at `now` (`rang`: the doorbell rang): at a read
    /// tick, takes waiting hand-overs and reads every readable pipe,
    /// appending what it found to `out` (each pane's output in pieces of
    /// at most [`FEED_CHUNK`]); between ticks, drains hot pipes into what
    /// the next tick hands on. A pane whose output is queued and not
    /// consumed beyond [`MAX_PENDING`] has its output dropped and a gap
    /// reported (the reader stays on its ticks until it is).
    pub fn poll(&mut self, now: Instant, rang: bool, out: &mut VecDeque<Event>) {
        if !self.cadence.due(now, rang) {
            if self.next_hot.is_some_and(|t| now >= t) {
                let scratch = &mut self.scratch;
                for p in self.pipes.iter_mut().filter(|p| p.hot && !p.closed) {
                    p.drain(scratch);
                }
                self.next_hot = Some(now + HOT_EVERY);
            }
            return;
        }
        let before = out.len();
        if self.ready() {
            self.accept(out);
        }
        let scratch = &mut self.scratch;
        let mut found = out.len() > before;
        for p in self.pipes.iter_mut() {
            let readable = std::mem::take(&mut p.ready);
            if !p.needs_tick(readable) {
                continue;
            }
            let n = p.drain(scratch);
            if n > 0 {
                crate::trace!("read conn={} bytes={}", p.conn, n);
                found = true;
            }
            p.end_tick();
            p.salvage.scan(&p.carry, false);
            if !p.salvage.is_empty() {
                // Before the gap and the output after it: in the order
                // the program printed them.
                out.push_back(Event::Core(Input::TapSalvaged {
                    conn: p.conn,
                    salvaged: p.salvage.take(),
                    at: now,
                }));
                found = true;
            }
            if p.report_due() {
                out.push_back(Event::Core(Input::TapGap { conn: p.conn }));
                p.gap = false;
                p.last_gap = Some(Instant::now());
                found = true;
            }
            for piece in p.carry.chunks(FEED_CHUNK) {
                let mut bytes = self.spare.pop().unwrap_or_default();
                bytes.extend_from_slice(piece);
                out.push_back(Event::Output(
                    Input::TapData {
                        conn: p.conn,
                        bytes,
                        at: now,
                    },
                    p.hold(piece.len()),
                ));
            }
            p.carry.clear();
            if p.carry.capacity() > MAX_PENDING {
                p.carry.shrink_to(MAX_PENDING);
            }
            if p.closed {
                out.push_back(Event::Core(Input::TapClosed { conn: p.conn }));
                found = true;
            }
            // A gap not reported yet keeps the reader on its ticks.
            found |= p.gap;
        }
        self.pipes.retain(|p| !p.closed);
        self.cadence.read(now, found);
        self.next_hot = self.pipes.iter().any(|p| p.hot).then(|| now + HOT_EVERY);
    }

    /// Takes every waiting hand-over.
    fn accept(&mut self, out: &mut VecDeque<Event>) {
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
                    crate::say!("a tap connection was closed: {e}");
                    continue;
                }
            };
            let Ok(pane) = pane.trim().parse::<PaneId>() else {
                crate::say!("a tap named `{pane}`, which is not a pane id; closed");
                continue;
            };
            let file = std::fs::File::from(fd);
            if set_nonblocking(&file).is_err() {
                continue;
            }
            match self.watch(file) {
                Ok(conn) => out.push_back(Event::Core(Input::TapHello { conn, pane })),
                Err(e) => {
                    crate::say!("cannot watch the pipe of pane {pane} ({e}); closed")
                }
            }
        }
    }

    /// Adds a pipe to the ones read, under the next connection number. A
    /// pipe the ready set refuses is closed.
    fn watch(&mut self, file: std::fs::File) -> std::io::Result<u64> {
        let conn = self.next_conn;
        self.set.add(file.as_fd(), conn)?;
        self.next_conn += 1;
        self.pipes.push(Pipe::new(conn, file));
        Ok(conn)
    }
}

/// Makes a handed-over pipe non-blocking (reads answer `EAGAIN` instead
/// of waiting), as the reader needs it.
pub fn set_nonblocking(file: &std::fs::File) -> nix::Result<()> {
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
        (tmux, Pipe::new(1, file))
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
        let ticket = p.hold(5);
        assert_eq!(p.in_flight.load(Ordering::Relaxed), 5);
        drop(ticket);
        assert_eq!(p.in_flight.load(Ordering::Relaxed), 0);
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
    fn reports_in_dropped_output_are_saved_for_the_pane_table() {
        let (mut tmux, mut p) = pipe();
        let mut scratch = vec![0u8; DRAIN_MAX];
        // Kept, then dropped with what comes after it: the report that
        // started in the kept part and the one wholly in the dropped part
        // are saved; the one read whole and kept reaches the table as
        // output.
        tmux.write_all(b"a\x1b]7501;state=idle\x07b\x1b]7501;state=work")
            .expect("write");
        p.drain(&mut scratch);
        let _held = p.hold(MAX_PENDING);
        tmux.write_all(b"ing\x07 flood \x1b]7501;state=blocked:kind=permission\x07")
            .expect("write");
        p.drain(&mut scratch);
        assert!(p.gap && p.carry.is_empty(), "dropped");
        assert_eq!(
            p.salvage.take().bodies,
            vec![
                b"state=idle".to_vec(),
                b"state=working".to_vec(),
                b"state=blocked:kind=permission".to_vec()
            ],
            "the first was kept, then dropped with the rest: saved too"
        );
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

    /// Every ready set this build has: the reader must behave the same
    /// over each.
    fn sets() -> Vec<ReadySet> {
        #[cfg(target_os = "linux")]
        let sets = vec![ReadySet::epoll().expect("epoll"), ReadySet::poll()];
        #[cfg(not(target_os = "linux"))]
        let sets = vec![ReadySet::poll()];
        sets
    }

    /// A reader through `set` on a fresh tap socket in `dir`, watching `n`
    /// pipes (conn 1 to `n`) through [`Reader::watch`]; returns tmux's
    /// ends.
    fn reader_with_pipes(
        dir: &std::path::Path,
        n: u64,
        set: ReadySet,
    ) -> (Reader, Vec<UnixStream>) {
        let listener = UnixListener::bind(dir.join("tap")).expect("bind");
        let mut r = Reader::with_set(listener, set).expect("reader");
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
        for set in sets() {
            told_which_pipes_are_readable(set);
        }
    }

    fn told_which_pipes_are_readable(set: ReadySet) {
        let dir = tempfile::tempdir().expect("dir");
        let (mut r, mut ends) = reader_with_pipes(dir.path(), 3, set);
        assert!(!r.ready());
        assert!(r.pipes.iter().all(|p| !p.ready));
        (&ends[2]).write_all(b"x").expect("write");
        drop(ends.remove(0));
        assert!(!r.ready());
        let ready: Vec<u64> = r.pipes.iter().filter(|p| p.ready).map(|p| p.conn).collect();
        assert_eq!(ready, [1, 3], "the closed pipe and the one with output");
        let _tap = UnixStream::connect(dir.path().join("tap")).expect("connect");
        assert!(r.ready(), "a tap connecting");
    }

    #[test]
    fn more_readable_pipes_than_one_answer_used_to_hold_are_all_marked() {
        // Level-triggered `epoll` answers every readable pipe again at each
        // call: a fixed buffer of 64 that asked again while it came back
        // full never ended once 64 pipes printed at the same tick.
        for set in sets() {
            let dir = tempfile::tempdir().expect("dir");
            let (mut r, ends) = reader_with_pipes(dir.path(), 150, set);
            for end in &ends {
                let mut end = end;
                end.write_all(b"x").expect("write");
            }
            assert!(!r.ready());
            assert_eq!(r.pipes.iter().filter(|p| p.ready).count(), 150);
        }
    }

    #[test]
    fn the_cadence_reads_at_once_after_silence_and_on_ticks_while_busy() {
        let t0 = Instant::now();
        let mut c = Cadence::new();
        assert_eq!(c.next_tick(), None, "quiet: nothing due on its own");
        assert!(!c.due(t0, false));
        assert!(c.due(t0, true), "the doorbell is read at once");
        assert_eq!(
            c.align(t0 + Duration::from_millis(7)),
            t0 + Duration::from_millis(7)
        );
        c.read(t0, true);
        assert_eq!(c.next_tick(), Some(t0 + READ_EVERY));
        assert!(!c.due(t0 + READ_EVERY - Duration::from_millis(1), false));
        assert!(c.due(t0 + READ_EVERY, false));
        // Deadlines of the pane table land on the next read.
        assert_eq!(c.align(t0 + Duration::from_millis(1)), t0 + READ_EVERY);
        assert_eq!(c.align(t0 + READ_EVERY), t0 + READ_EVERY);
        assert_eq!(
            c.align(t0 + READ_EVERY + Duration::from_millis(1)),
            t0 + 2 * READ_EVERY
        );
        assert_eq!(c.align(t0), t0 + READ_EVERY, "never before the next read");
        assert!(c.printing());
        // Ticks that find nothing: on ticks still, until QUIET_AFTER of
        // them in a row make it quiet again; not printing meanwhile.
        let mut t = t0;
        for n in 1..QUIET_AFTER {
            t += READ_EVERY;
            c.read(t, false);
            assert_eq!(c.next_tick(), Some(t + READ_EVERY), "empty tick {n}");
            assert!(!c.printing());
        }
        // Output before the last: the count starts again.
        t += READ_EVERY;
        c.read(t, true);
        for _ in 1..QUIET_AFTER {
            t += READ_EVERY;
            c.read(t, false);
        }
        assert!(c.next_tick().is_some());
        c.read(t + READ_EVERY, false);
        assert_eq!(c.next_tick(), None, "quiet after {QUIET_AFTER} empty ticks");
        // A doorbell's read that finds nothing leaves it quiet.
        c.read(t + 2 * READ_EVERY, false);
        assert_eq!(c.next_tick(), None);
    }

    fn data_of(out: &VecDeque<Event>) -> Vec<(u64, Vec<u8>)> {
        out.iter()
            .filter_map(|e| match e {
                Event::Output(Input::TapData { conn, bytes, .. }, _) => {
                    Some((*conn, bytes.clone()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_reader_reads_on_its_ticks_and_goes_quiet_when_nothing_came() {
        for set in sets() {
            reads_on_its_ticks(set);
        }
    }

    fn reads_on_its_ticks(set: ReadySet) {
        let dir = tempfile::tempdir().expect("dir");
        let (mut r, ends) = reader_with_pipes(dir.path(), 2, set);
        let (mut a, mut b) = (&ends[0], &ends[1]);
        assert!(r.quiet());
        assert_eq!(r.next_wake(), None);
        a.write_all(b"spinner").expect("write");
        let t0 = Instant::now();
        let mut out = VecDeque::new();
        r.poll(t0, true, &mut out);
        assert_eq!(data_of(&out), [(1, b"spinner".to_vec())]);
        assert!(!r.quiet());
        assert_eq!(r.next_wake(), Some(t0 + READ_EVERY));
        // Written before the next tick: waits for it.
        out.clear();
        b.write_all(b"dialog").expect("write");
        r.poll(t0 + Duration::from_millis(5), false, &mut out);
        assert!(out.is_empty(), "read before its tick: {out:?}");
        r.poll(t0 + READ_EVERY, false, &mut out);
        assert_eq!(data_of(&out), [(2, b"dialog".to_vec())]);
        // Ticks with nothing to read: quiet after QUIET_AFTER of them,
        // waiting on the doorbell.
        out.clear();
        let mut t = t0 + READ_EVERY;
        for _ in 0..QUIET_AFTER {
            assert!(!r.quiet());
            t += READ_EVERY;
            r.poll(t, false, &mut out);
        }
        assert!(out.is_empty());
        assert!(r.quiet());
        // Its end is an event like output.
        drop(ends);
        r.poll(t + READ_EVERY, true, &mut out);
        let closed: Vec<u64> = out
            .iter()
            .filter_map(|e| match e {
                Event::Core(Input::TapClosed { conn }) => Some(*conn),
                _ => None,
            })
            .collect();
        assert_eq!(closed, [1, 2]);
        assert!(r.pipes.is_empty());
    }

    #[test]
    fn a_buffer_given_back_carries_the_next_piece_and_a_big_one_is_not_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let (mut r, ends) = reader_with_pipes(dir.path(), 1, ReadySet::new().expect("set"));
        let mut a = &ends[0];
        let mut take = |r: &mut Reader, at: Instant, what: &[u8]| {
            a.write_all(what).expect("write");
            let mut out = VecDeque::new();
            r.poll(at, true, &mut out);
            match out.pop_front() {
                Some(Event::Output(Input::TapData { bytes, .. }, _)) => bytes,
                other => panic!("no output: {other:?}"),
            }
        };
        let t0 = Instant::now();
        let first = take(&mut r, t0, b"spinner frame");
        assert_eq!(first, b"spinner frame");
        // Given back with what it held before: a capacity no new buffer
        // for six bytes would have.
        let mut given = Vec::with_capacity(4096);
        given.extend_from_slice(b"old output");
        r.recycle(given);
        let second = take(&mut r, t0 + READ_EVERY, b"dialog");
        assert_eq!(second, b"dialog");
        assert_eq!(second.capacity(), 4096, "the buffer given back is reused");
        // One bigger than a busy agent's tick is let go.
        r.recycle(Vec::with_capacity(SPARE_BYTES + 1));
        assert!(r.spare.is_empty());
        for _ in 0..SPARE_MAX + 4 {
            r.recycle(Vec::with_capacity(16));
        }
        assert_eq!(r.spare.len(), SPARE_MAX);
    }

    #[test]
    fn the_doorbell_rings_for_output_and_for_a_tap_connecting() {
        for set in sets() {
            doorbell_rings(set);
        }
    }

    fn doorbell_rings(set: ReadySet) {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let dir = tempfile::tempdir().expect("dir");
        let follows = set.doorbell_follows();
        let (mut r, ends) = reader_with_pipes(dir.path(), 1, set);
        assert_eq!(
            r.doorbell().expect("doorbell").len(),
            if follows { 2 } else { 1 }
        );
        // Rings: one of its descriptors is readable.
        let rings = |r: &Reader| {
            let fds = r.doorbell().expect("doorbell");
            let mut polled: Vec<PollFd> = fds
                .iter()
                .map(|fd| PollFd::new(fd.as_fd(), PollFlags::POLLIN))
                .collect();
            poll(&mut polled, PollTimeout::ZERO).expect("poll") >= 1
        };
        assert!(!rings(&r));
        (&ends[0]).write_all(b"x").expect("write");
        assert!(rings(&r));
        let mut out = VecDeque::new();
        r.poll(Instant::now(), true, &mut out);
        assert!(!rings(&r), "read: silent again");
        let _tap = UnixStream::connect(dir.path().join("tap")).expect("connect");
        assert!(rings(&r));
    }

    #[test]
    fn a_hand_over_without_a_descriptor_is_refused() {
        let (a, b) = UnixStream::pair().expect("pair");
        (&a).write_all(b"%3").expect("write");
        let e = receive(&b).expect_err("no descriptor");
        assert!(e.contains("without a descriptor"), "{e}");
    }
}
