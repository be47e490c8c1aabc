//! What tend's integration tests and benches share, once: waiting for a
//! condition on real processes, checking that the tmux on `PATH` is the one
//! under test, and naming, starting and driving private tmux servers
//! (`tmux -L <unique>`), so that no test touches the user's server and a
//! failed one leaves nothing behind under another test's name.
//!
//! [`zellij::Headless`] is a zellij session the same way, its client in a
//! private tmux server. A dev-dependency of the crates whose tests run real
//! tmux and zellij (`tend`, `tend-tmux`, `tend-zellij-host`).

#![warn(missing_docs)]

pub mod zellij;

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Polls `cond` every `every` until it holds or `timeout` passes; asks
/// once more at the end, so a condition met in the last pause counts.
pub fn poll_until(timeout: Duration, every: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(every);
    }
    cond()
}

/// Polls `f` every 100 ms until it gives a value; panics naming `what`
/// after `timeout`.
pub fn wait_for<T>(timeout: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Under the tmux matrix (`scripts/test-tmux-matrix.sh`, which sets
/// `TEND_TEST_TMUX_VERSION`), the tmux on `PATH` must be the version under
/// test: a build that fell back to another tmux would pass for the wrong
/// one. Checked once per test binary.
pub fn check_tmux_version() {
    static CHECKED: std::sync::Once = std::sync::Once::new();
    CHECKED.call_once(|| {
        let Ok(want) = std::env::var("TEND_TEST_TMUX_VERSION") else {
            return;
        };
        let out = Command::new("tmux").arg("-V").output().expect("tmux -V");
        let have = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        assert_eq!(
            have,
            format!("tmux {want}"),
            "the tmux on PATH is not the one under test"
        );
    });
}

/// A socket name no other test of any binary uses at the same time:
/// `<prefix>-<pid>-<n>`.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A test that cannot run on this machine (a tool or input is missing)
/// says so loudly; under CI (`CI` set) it fails instead, since
/// scripts/test.sh installs everything the default tier needs and a
/// missing tool must not pass for a passing test.
pub fn skip(test: &str, why: &str) {
    let in_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(!in_ci, "{test}: {why}; CI must run this test");
    eprintln!("SKIPPED {test}: {why}");
}

/// `program ARG`'s output, trimmed, when it runs and succeeds.
pub fn have(program: &str, arg: &str) -> Option<String> {
    let out = Command::new(program).arg(arg).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Removes the socket file a killed private tmux server leaves behind.
pub fn remove_socket_file(server: &str) {
    use std::os::unix::fs::MetadataExt;
    let Ok(uid) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return;
    };
    let dir = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".into());
    let _ = std::fs::remove_file(
        std::path::Path::new(&dir)
            .join(format!("tmux-{uid}"))
            .join(server),
    );
}

/// A private tmux server by name, killed (and its socket file removed) on
/// drop; start it with [`Server::cmd`] (`new-session`).
pub struct Server {
    name: String,
}

impl Server {
    /// A server named after `prefix` ([`unique_name`]), not yet started.
    pub fn new(prefix: &str) -> Server {
        check_tmux_version();
        Server {
            name: unique_name(prefix),
        }
    }

    /// Its name (`tmux -L NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `tmux -L NAME ARGS`.
    pub fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.name)
            .args(args)
            .output()
            .expect("tmux runs")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
        remove_socket_file(&self.name);
    }
}

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
/// detached `width`×`height` session named `main`.
pub fn start_server(server: &str, width: u32, height: u32) {
    check_tmux_version();
    let (w, h) = (width.to_string(), height.to_string());
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
            &w,
            "-y",
            &h,
        ],
    );
}

/// On-CPU time of every thread of process `pid`, in nanoseconds, from the
/// scheduler's own accounting (`/proc/PID/task/*/schedstat`; exact, where
/// the tick-sampled `utime`/`stime` charge whole 10 ms ticks and show a
/// process that runs for microseconds at a time as 0 or as 10 ms).
/// `/proc/PID/schedstat` alone is the main thread's: the daemon reads its
/// pipes and runs tmux on threads of their own, and `tend run` passes the
/// output on from one. 0 where `/proc` cannot say.
pub fn cpu_ns(pid: u32) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
    let mut sum = 0;
    for task in tasks.into_iter().flatten().flatten() {
        sum += std::fs::read_to_string(task.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_met_late_still_counts_and_one_never_met_does_not() {
        let start = Instant::now();
        assert!(poll_until(
            Duration::from_millis(200),
            Duration::from_millis(10),
            || start.elapsed() >= Duration::from_millis(50)
        ));
        assert!(!poll_until(
            Duration::from_millis(50),
            Duration::from_millis(10),
            || false
        ));
        assert_eq!(wait_for(Duration::from_secs(1), "a value", || Some(7)), 7);
    }

    #[test]
    fn names_differ_within_one_process() {
        assert_ne!(unique_name("t"), unique_name("t"));
        assert!(unique_name("tend-t").starts_with(&format!("tend-t-{}-", std::process::id())));
    }
}
