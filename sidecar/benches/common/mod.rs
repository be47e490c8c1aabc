//! What the live benches share: a private tmux server to run them in,
//! and screens of a recording to write into its panes.

use std::process::Command;

use tend_detector::cast::{Cast, EventKind};

/// Runs `tmux -L <server> ARGS` and returns its output, trimmed.
pub fn tmux(server: &str, args: &[&str]) -> String {
    let o = Command::new("tmux")
        .arg("-L")
        .arg(server)
        .args(args)
        .output()
        .expect("tmux");
    String::from_utf8_lossy(&o.stdout).trim_end().to_owned()
}

/// Starts the private server `server` with no configuration and one
/// detached 200×50 session named `main`.
pub fn start_server(server: &str) {
    tmux(
        server,
        &[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "200",
            "-y",
            "50",
        ],
    );
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
