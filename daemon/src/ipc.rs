//! The daemon's sockets: control (newline-delimited JSON) and taps (pipes
//! handed over, read in [`super::pipes`]). Both are mode 0600 and check
//! that the peer runs as our own uid.

use crate::error::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use tend_protocol::reply::{self, Reply};
use tend_protocol::{params, BusEvent, Envelope, Error, ErrorCode, Request, Response};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc::Sender;

use super::event::Event;
use crate::error::CliError;
use tend_core::Input;

/// Longest control request line.
const MAX_LINE: usize = 1 << 20;

/// A control request line must be complete this long after the daemon
/// begins to wait for it (the connection accepted, or the previous answer
/// sent); then the connection is closed. The CLI writes its line at once;
/// a connection that waits for pushes (`events`, `guard`, `wait`) has sent
/// its request and is not bound by this.
const REQUEST_DEADLINE: Duration = Duration::from_secs(10);

/// Most control connections at once whose request line is not complete:
/// beyond it the oldest of them is closed (a client that has not written
/// its line for that long is the likeliest to never write it), so a flood
/// of half-written requests neither grows the daemon nor shuts out the
/// requests that come whole.
const MAX_UNFINISHED: usize = 256;

/// What a control connection reads at a time: most requests fit, and a
/// connection that has not finished its line holds no more than this.
const READ_CHUNK: usize = 2048;

/// After a burst of at least this many unfinished connections, the memory
/// they freed is handed back to the system once none is left (see
/// [`Unfinished::leave`]).
const TRIM_AFTER: usize = 64;

/// Most event streams (`tend events`, the fleet view, a remote's feed) open
/// at once: each holds a task, a connection and a place on the bus, and a
/// script that opens them in a loop must not grow the daemon without end.
/// More are refused with a sentence (`too_many`).
const MAX_SUBSCRIBERS: usize = 256;

/// The event streams open now, counted against [`MAX_SUBSCRIBERS`].
#[derive(Debug, Default)]
struct Subscribers {
    open: std::sync::Mutex<(usize, usize)>,
}

/// One open event stream's place; given back when it drops.
#[derive(Debug)]
struct Subscribed(std::sync::Arc<Subscribers>);

impl Subscribers {
    /// None open yet.
    fn new() -> std::sync::Arc<Subscribers> {
        std::sync::Arc::new(Subscribers::default())
    }

    /// A place for one more stream, or `None` at [`MAX_SUBSCRIBERS`].
    fn join(self: &std::sync::Arc<Self>) -> Option<Subscribed> {
        let mut g = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let (open, peak) = &mut *g;
        if *open >= MAX_SUBSCRIBERS {
            return None;
        }
        *open += 1;
        *peak = (*peak).max(*open);
        Some(Subscribed(self.clone()))
    }
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        let mut g = self.0.open.lock().unwrap_or_else(|e| e.into_inner());
        let (open, peak) = &mut *g;
        *open -= 1;
        // As for half-written requests: after a burst, hand the memory
        // the streams freed back to the system once they are all closed.
        if *open == 0 && *peak >= TRIM_AFTER {
            *peak = 0;
            drop(g);
            give_back_memory();
        }
    }
}

/// The control connections whose request line is not complete yet, oldest
/// first.
#[derive(Debug, Default)]
struct Unfinished {
    inner: std::sync::Mutex<UnfinishedInner>,
}

#[derive(Debug, Default)]
struct UnfinishedInner {
    next: u64,
    /// By age: dropping a sender closes its connection.
    open: std::collections::BTreeMap<u64, tokio::sync::oneshot::Sender<()>>,
    /// Closed for being the oldest over [`MAX_UNFINISHED`], not yet logged.
    closed: u64,
    /// When that was last logged.
    logged: Option<Instant>,
    /// The most open at once since memory was last handed back.
    peak: usize,
}

/// One connection's place among the [`Unfinished`] ones, given up when it
/// drops (its line came whole, or the connection ended).
#[derive(Debug)]
struct Slot {
    id: u64,
    table: std::sync::Arc<Unfinished>,
    /// When the line must be complete.
    deadline: tokio::time::Instant,
    /// Resolves when the slot was taken back (too many unfinished).
    closed: tokio::sync::oneshot::Receiver<()>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.table.leave(self.id);
    }
}

impl Unfinished {
    /// An empty table.
    fn new() -> std::sync::Arc<Unfinished> {
        std::sync::Arc::new(Unfinished::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, UnfinishedInner> {
        // Nothing that can panic runs under the lock.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many connections have not finished their line.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().open.len()
    }

    /// A connection begins to wait for a request line: its slot, due by
    /// [`REQUEST_DEADLINE`]. At [`MAX_UNFINISHED`] the oldest slot is
    /// taken back first (its connection closes), with a line in the log at
    /// most every 10 s. Never waits.
    fn enter(self: &std::sync::Arc<Self>) -> Slot {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let mut t = self.lock();
        while t.open.len() >= MAX_UNFINISHED {
            // Dropping the sender wakes its connection, which closes.
            if t.open.pop_first().is_none() {
                break;
            }
            t.closed += 1;
        }
        // Logged outside the lock, at most every 10 s.
        let log = (t.closed > 0
            && t.logged
                .is_none_or(|l| l.elapsed() >= Duration::from_secs(10)))
        .then(|| {
            t.logged = Some(Instant::now());
            std::mem::take(&mut t.closed)
        });
        let id = t.next;
        t.next += 1;
        t.open.insert(id, tx);
        t.peak = t.peak.max(t.open.len());
        drop(t);
        if let Some(n) = log {
            crate::say!(
                "closed {n} control connection(s) that had not finished their request line: \
                 more than {MAX_UNFINISHED} were open at once, and the oldest go first"
            );
        }
        Slot {
            id,
            table: self.clone(),
            deadline: tokio::time::Instant::now() + REQUEST_DEADLINE,
            closed: rx,
        }
    }

    /// Gives slot `id` up. The last one of a burst of at least
    /// [`TRIM_AFTER`] hands the memory freed back to the system: glibc
    /// keeps freed heap memory for reuse, and the connections' buffers
    /// and tasks, freed in the order they closed, leave it in holes below
    /// memory still in use that it does not return on its own.
    fn leave(&self, id: u64) {
        let mut t = self.lock();
        t.open.remove(&id);
        if t.open.is_empty() && t.peak >= TRIM_AFTER {
            t.peak = 0;
            drop(t);
            give_back_memory();
        }
    }
}

/// Returns free heap memory to the system (`malloc_trim`, glibc only).
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator; it
    // takes the allocator's own locks and may be called from any thread.
    unsafe {
        nix::libc::malloc_trim(0);
    }
}

/// Writes `resp` as a line if the socket takes it now, never waiting (a
/// client that does not read must not hold the daemon).
fn try_answer(write: &tokio::net::unix::OwnedWriteHalf, resp: &Response) {
    let _ = write.try_write(resp.to_line().as_bytes());
}

/// Binds a socket, replacing a stale one left by a dead daemon. Refuses
/// when a live daemon answers on it.
pub fn bind(path: &Path) -> Result<UnixListener, CliError> {
    let std = bind_std(path)?;
    std.set_nonblocking(true)
        .and_then(|_| UnixListener::from_std(std))
        .map_err(|e| {
            CliError::new(
                ErrorKind::Bind,
                format!("cannot listen on {}: {e}", path.display()),
            )
        })
}

/// [`bind`] for a blocking listener (the tap socket, read by a thread):
/// the same stale-socket check, private mode and message.
pub fn bind_std(path: &Path) -> Result<std::os::unix::net::UnixListener, CliError> {
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(CliError::new(
                ErrorKind::AlreadyRunning,
                format!("a tend daemon already listens on {}", path.display()),
            ));
        }
        let _ = std::fs::remove_file(path);
    }
    // Created private from the start: the umask covers the window between
    // bind and chmod.
    let old = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o177));
    let listener = std::os::unix::net::UnixListener::bind(path);
    nix::sys::stat::umask(old);
    let listener = listener.map_err(|e| {
        CliError::new(
            ErrorKind::Bind,
            format!("cannot listen on {}: {e}", path.display()),
        )
    })?;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    Ok(listener)
}

fn same_user(stream: &UnixStream) -> bool {
    stream
        .peer_cred()
        .map(|c| c.uid() == nix::unistd::getuid().as_raw())
        .unwrap_or(false)
}

/// The guard connections (see [`crate::guard`]): how many are open,
/// and the signal that the daemon is stopping cleanly.
#[derive(Debug)]
pub struct Guards {
    stopping: tokio::sync::watch::Sender<bool>,
    open: std::sync::atomic::AtomicUsize,
}

impl Guards {
    /// No guard yet.
    pub fn new() -> std::sync::Arc<Guards> {
        std::sync::Arc::new(Guards {
            stopping: tokio::sync::watch::channel(false).0,
            open: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// A clean stop: tells each guard to exit (successfully, so that no
    /// cleanup runs) and waits (up to `limit`) until all have, so that
    /// `tend stop` leaves no process behind.
    pub async fn dismiss(&self, limit: Duration) {
        self.stopping.send_replace(true);
        let deadline = Instant::now() + limit;
        while self.open.load(std::sync::atomic::Ordering::SeqCst) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Serves control connections.
pub async fn accept_control(
    listener: UnixListener,
    events: Sender<Event>,
    bus: Bus,
    guards: std::sync::Arc<Guards>,
) {
    let unfinished = Unfinished::new();
    let subscribers = Subscribers::new();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors (EMFILE) and the like: the connection
                // stays queued; trying again at once would spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if !same_user(&stream) {
            let no = Response::err(
                0,
                ErrorCode::Forbidden,
                "this tend daemon belongs to another user",
            );
            let _ = stream.try_write(no.to_line().as_bytes());
            continue;
        }
        let slot = unfinished.enter();
        tokio::spawn(control_conn(
            stream,
            Shared {
                events: events.clone(),
                bus: bus.clone(),
                guards: guards.clone(),
                subscribers: subscribers.clone(),
            },
            slot,
        ));
    }
}

/// What every control connection shares.
struct Shared {
    events: Sender<Event>,
    bus: Bus,
    guards: std::sync::Arc<Guards>,
    subscribers: std::sync::Arc<Subscribers>,
}

async fn control_conn(stream: UnixStream, shared: Shared, first: Slot) {
    let Shared {
        events,
        bus,
        guards,
        subscribers,
    } = shared;
    let table = first.table.clone();
    let mut slot = Some(first);
    // The process on the other end, as the kernel says (a relay's proof).
    let peer_pid = stream
        .peer_cred()
        .ok()
        .and_then(|c| c.pid())
        .and_then(|p| u32::try_from(p).ok());
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::with_capacity(READ_CHUNK, read.take(u64::MAX));
    let mut line = String::new();
    loop {
        line.clear();
        // Each request line has its deadline, and a place among the
        // unfinished ones until it is whole.
        let mut waiting = slot.take().unwrap_or_else(|| table.enter());
        let mut limited = (&mut lines).take(MAX_LINE as u64);
        let n = tokio::select! {
            r = limited.read_line(&mut line) => match r {
                Ok(n) => n,
                Err(_) => return,
            },
            _ = tokio::time::sleep_until(waiting.deadline) => {
                let why = format!(
                    "no complete request line within {} s; closed",
                    REQUEST_DEADLINE.as_secs()
                );
                try_answer(&write, &Response::err(0, ErrorCode::BadRequest, why));
                return;
            }
            _ = &mut waiting.closed => {
                let why = "too many connections had not finished their request line; \
                           the oldest, this one, was closed";
                try_answer(&write, &Response::err(0, ErrorCode::BadRequest, why));
                return;
            }
        };
        drop(waiting);
        if n == 0 {
            return;
        }
        if !line.ends_with('\n') && n >= MAX_LINE {
            let r = Response::err(0, ErrorCode::BadRequest, "request line longer than 1 MiB");
            let _ = write.write_all(r.to_line().as_bytes()).await;
            return;
        }
        let envelope = match serde_json::from_str::<Envelope>(line.trim()) {
            Ok(e) => e,
            Err(e) => {
                let r = Response::err(
                    0,
                    ErrorCode::BadRequest,
                    format!("not a request ({e}); send {{\"id\": 1, \"method\": \"ping\"}}"),
                );
                if write.write_all(r.to_line().as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let id = envelope.id;
        let outcome = match envelope.request() {
            Ok(Request::Events(p)) => {
                let Some(place) = subscribers.join() else {
                    let why = format!(
                        "{MAX_SUBSCRIBERS} event streams are open already (`tend events`, fleet \
                         views, remotes' feeds); close some and ask again"
                    );
                    try_answer(&write, &Response::err(id, ErrorCode::TooMany, why));
                    return;
                };
                stream_events(id, p, lines, &mut write, &bus).await;
                drop(place);
                return;
            }
            Ok(Request::Relay(_)) => {
                relay(id, peer_pid, lines, &mut write, &events).await;
                return;
            }
            Ok(Request::Guard(p)) => {
                guard(id, p, lines, write, &events, &guards).await;
                return;
            }
            Ok(req) => match ask(&events, req).await {
                Some(r) => r,
                None => return,
            },
            Err(e) => Err(e),
        };
        let out = Response::answer(id, outcome).to_line();
        if write.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// A `tend guard` connection: held open until the guard goes (it was
/// killed: the pane table installs another) or the daemon stops cleanly
/// (the guard is told `bye` and exits). The daemon's own death closes it
/// without a word, which is what the guard waits for.
async fn guard<R: tokio::io::AsyncRead + Unpin>(
    id: u64,
    p: params::Guard,
    mut conn: R,
    mut write: tokio::net::unix::OwnedWriteHalf,
    events: &Sender<Event>,
    guards: &Guards,
) {
    use std::sync::atomic::Ordering;
    let Some(token) = p.token else {
        let r = Response::err(id, ErrorCode::BadRequest, "guard needs params.token");
        let _ = write.write_all(r.to_line().as_bytes()).await;
        return;
    };
    guards.open.fetch_add(1, Ordering::SeqCst);
    let mut stopping = guards.stopping.subscribe();
    let ok = Response::ok(id, &reply::Empty {});
    let _ = write.write_all(ok.to_line().as_bytes()).await;
    let _ = events
        .send(Event::Core(Input::GuardHello {
            token: token.clone(),
        }))
        .await;
    let mut buf = [0u8; 64];
    let dismissed = loop {
        tokio::select! {
            r = conn.read(&mut buf) => match r {
                Ok(0) | Err(_) => break false,
                Ok(_) => {}
            },
            r = stopping.wait_for(|s| *s) => break r.is_ok(),
        }
    };
    if dismissed {
        let _ = write.write_all(b"bye\n").await;
        // Until the guard has read it and gone.
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while let Ok(n) = conn.read(&mut buf).await {
                if n == 0 {
                    break;
                }
            }
        })
        .await;
    } else {
        let _ = events.send(Event::Core(Input::GuardClosed { token })).await;
    }
    guards.open.fetch_sub(1, Ordering::SeqCst);
}

/// A `tend run` relay's connection: the pane table hears the relay's pid
/// as the kernel gave it when the relay connected (never a pid the relay
/// names), and believes that process is a relay until the connection
/// closes. The relay says nothing more; its end closes the connection.
async fn relay<R: tokio::io::AsyncRead + Unpin>(
    id: u64,
    pid: Option<u32>,
    mut conn: R,
    write: &mut tokio::net::unix::OwnedWriteHalf,
    events: &Sender<Event>,
) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let Some(pid) = pid.filter(|p| *p > 0) else {
        let why = "the system did not say which process is on this connection; no relay";
        try_answer(write, &Response::err(id, ErrorCode::BadRequest, why));
        return;
    };
    let conn_id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let _ = events
        .send(Event::Core(Input::RelayHello { conn: conn_id, pid }))
        .await;
    let ok = Response::ok(id, &reply::Empty {});
    let _ = write.write_all(ok.to_line().as_bytes()).await;
    let mut buf = [0u8; 64];
    while let Ok(n) = conn.read(&mut buf).await {
        if n == 0 {
            break;
        }
    }
    let _ = events
        .send(Event::Core(Input::RelayGone { conn: conn_id }))
        .await;
}

/// The event bus.
pub type Bus = tokio::sync::broadcast::Sender<BusEvent>;

/// Hands a request to the pane table and waits for its answer (the
/// table answers every request it is given, now or later; `None`: the
/// daemon went away first).
async fn ask(events: &Sender<Event>, req: Request) -> Option<Result<Reply, Error>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    events.send(Event::Control { req, reply: tx }).await.ok()?;
    rx.await.ok()
}

/// `events`: acknowledges, then streams matching events as JSON lines
/// until the client goes away.
async fn stream_events<R: tokio::io::AsyncRead + Unpin>(
    id: u64,
    p: params::Events,
    mut client: R,
    write: &mut tokio::net::unix::OwnedWriteHalf,
    bus: &Bus,
) {
    let mut rx = bus.subscribe();
    let ack = Response::ok(id, &reply::Subscribed { subscribed: true });
    if write.write_all(ack.to_line().as_bytes()).await.is_err() {
        return;
    }
    // The client says nothing more; its end of the connection closing is
    // seen at once (not at the next event, which may be hours away on a
    // quiet server), and the stream's descriptor and memory go with it.
    let mut ignored = [0u8; 256];
    loop {
        let got = tokio::select! {
            ev = rx.recv() => ev,
            r = client.read(&mut ignored) => match r {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            },
        };
        let ev = match got {
            Ok(ev) => ev,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                BusEvent::Lagged { missed }
            }
            Err(_) => return,
        };
        if !p.admits(&ev) && !matches!(ev, BusEvent::Lagged { .. }) {
            continue;
        }
        let line = tend_protocol::wire::line(&ev);
        if write.write_all(line.as_bytes()).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::oneshot::error::TryRecvError;

    fn open(s: &mut Slot) -> bool {
        matches!(s.closed.try_recv(), Err(TryRecvError::Empty))
    }

    #[test]
    fn over_the_cap_the_oldest_unfinished_connection_is_closed() {
        let t = Unfinished::new();
        let mut slots: Vec<Slot> = (0..MAX_UNFINISHED).map(|_| t.enter()).collect();
        assert_eq!(t.len(), MAX_UNFINISHED);
        assert!(slots.iter_mut().all(open));
        // One more: the oldest is taken back, the rest stay.
        let mut newest = t.enter();
        assert_eq!(t.len(), MAX_UNFINISHED);
        assert!(!open(&mut slots[0]));
        assert!(slots[1..].iter_mut().all(open));
        assert!(open(&mut newest));
        // A line that came whole gives its place up: the next one closes
        // nothing.
        slots.remove(1);
        assert_eq!(t.len(), MAX_UNFINISHED - 1);
        let mut next = t.enter();
        assert_eq!(t.len(), MAX_UNFINISHED);
        assert!(slots[1..].iter_mut().all(open));
        assert!(open(&mut next));
        // The one taken back leaves nothing behind when its task ends.
        slots.remove(0);
        assert_eq!(t.len(), MAX_UNFINISHED);
        drop(slots);
        drop(next);
        assert_eq!(t.len(), 1);
        assert!(newest.deadline <= tokio::time::Instant::now() + REQUEST_DEADLINE);
        drop(newest);
        assert_eq!(t.len(), 0);
    }
}
