//! The daemon's sockets: control (newline-delimited JSON) and taps (frames).
//! Both are mode 0600 and check that the peer runs as our own uid.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Instant;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc::Sender;

use super::core::Event;
use crate::error::CliError;
use crate::protocol::{Request, Response};
use crate::tap::{FRAME_DATA, FRAME_GAP, FRAME_HELLO};

/// Longest control request line.
const MAX_LINE: usize = 1 << 20;
/// Largest tap frame accepted.
const MAX_FRAME: usize = 4 << 20;

/// Binds a socket, replacing a stale one left by a dead daemon. Refuses
/// when a live daemon answers on it.
pub fn bind(path: &Path) -> Result<UnixListener, CliError> {
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(CliError::new(
                "already_running",
                format!("a tend daemon already listens on {}", path.display()),
            ));
        }
        let _ = std::fs::remove_file(path);
    }
    // Created private from the start: the umask covers the window between
    // bind and chmod.
    let old = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o177));
    let listener = UnixListener::bind(path);
    nix::sys::stat::umask(old);
    let listener = listener
        .map_err(|e| CliError::new("bind", format!("cannot listen on {}: {e}", path.display())))?;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    Ok(listener)
}

fn same_user(stream: &UnixStream) -> bool {
    stream
        .peer_cred()
        .map(|c| c.uid() == nix::unistd::getuid().as_raw())
        .unwrap_or(false)
}

/// Serves control connections.
pub async fn accept_control(listener: UnixListener, events: Sender<Event>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        if !same_user(&stream) {
            let mut s = stream;
            let line = serde_json::to_string(&Response::err(
                0,
                "forbidden",
                "this tend daemon belongs to another user",
            ))
            .unwrap_or_default();
            let _ = s.write_all(format!("{line}\n").as_bytes()).await;
            continue;
        }
        tokio::spawn(control_conn(stream, events.clone()));
    }
}

async fn control_conn(stream: UnixStream, events: Sender<Event>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read.take(u64::MAX));
    let mut line = String::new();
    loop {
        line.clear();
        let n = match (&mut lines)
            .take(MAX_LINE as u64)
            .read_line(&mut line)
            .await
        {
            Ok(n) => n,
            Err(_) => return,
        };
        if n == 0 {
            return;
        }
        if !line.ends_with('\n') && n >= MAX_LINE {
            let r = Response::err(0, "bad_request", "request line longer than 1 MiB");
            let _ = write
                .write_all(
                    format!("{}\n", serde_json::to_string(&r).unwrap_or_default()).as_bytes(),
                )
                .await;
            return;
        }
        let resp = match serde_json::from_str::<Request>(line.trim()) {
            Ok(req) => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                if events
                    .send(Event::Control { req, reply: tx })
                    .await
                    .is_err()
                {
                    return;
                }
                match rx.await {
                    Ok(r) => r,
                    Err(_) => return,
                }
            }
            Err(e) => Response::err(
                0,
                "bad_request",
                format!("not a request ({e}); send {{\"id\": 1, \"method\": \"ping\"}}"),
            ),
        };
        let mut out = serde_json::to_string(&resp).unwrap_or_default();
        out.push('\n');
        if write.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Serves tap connections.
pub async fn accept_taps(listener: UnixListener, events: Sender<Event>) {
    let mut next_conn = 1u64;
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        if !same_user(&stream) {
            continue;
        }
        let conn = next_conn;
        next_conn += 1;
        tokio::spawn(tap_conn(conn, stream, events.clone()));
    }
}

async fn tap_conn(conn: u64, mut stream: UnixStream, events: Sender<Event>) {
    let mut header = [0u8; 5];
    loop {
        if stream.read_exact(&mut header).await.is_err() {
            break;
        }
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        if len > MAX_FRAME {
            break;
        }
        let mut payload = vec![0u8; len];
        if stream.read_exact(&mut payload).await.is_err() {
            break;
        }
        let ev = match header[0] {
            FRAME_HELLO => match String::from_utf8_lossy(&payload).trim().parse() {
                Ok(pane) => Event::TapHello { conn, pane },
                Err(_) => break,
            },
            FRAME_DATA => Event::TapData {
                conn,
                bytes: payload,
                at: Instant::now(),
            },
            FRAME_GAP => Event::TapGap { conn },
            _ => break,
        };
        if events.send(ev).await.is_err() {
            return;
        }
    }
    let _ = events.send(Event::TapClosed { conn }).await;
}
