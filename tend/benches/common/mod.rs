//! What the live benches share: a private tmux server to run them in,
//! and screens of a recording to write into its panes.

use tend_detector::cast::{Cast, EventKind};

pub use tend_testkit::tmux;

/// Starts the private server `server` with no configuration and one
/// detached 200×50 session named `main`.
pub fn start_server(server: &str) {
    tend_testkit::start_server(server, 200, 50);
}

/// A frame: the screen of the recording at time `t`, as bytes that draw it.
pub fn frame_at(cast: &Cast, t: f64) -> Vec<u8> {
    let nz = |v: u16| std::num::NonZeroU16::new(v).unwrap_or(std::num::NonZeroU16::MIN);
    let mut p = vt100::Parser::new(nz(cast.header.height), nz(cast.header.width), 0);
    for ev in &cast.events {
        if ev.at.as_secs_f64() > t {
            break;
        }
        if let EventKind::Output(b) = &ev.kind {
            p.process(b);
        }
    }
    let mut out = b"\x1b[H\x1b[2J".to_vec();
    out.extend_from_slice(p.screen().contents_formatted().as_bytes());
    out
}
