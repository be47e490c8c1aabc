//! What the live benches share: a private tmux server to run them in.

use std::process::Command;

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
