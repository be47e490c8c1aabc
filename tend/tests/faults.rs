//! Fault tests against real tmux servers (results in docs/RELIABILITY.md):
//! the daemon killed with SIGKILL while panes stream, the tmux server
//! killed and restarted, a pane flooding at ~10 MB/s, a pane killed
//! mid-burst, the state directory read-only or full, corrupt config and
//! manifests, the security properties (text printed by a program that is
//! not an agent creates no demand; another user cannot reach the sockets;
//! hostile names never reach a shell or a tmux format), an agent started
//! through a shim, and control connections that never finish their request.
//!
//! The default tier is short (a couple of minutes on two cores);
//! `TEND_TEST_SOAK=1` runs the long one (100 kills, a 60 s flood, 3000
//! half-written requests):
//!
//! ```sh
//! cargo test -p tend --test tests faults::
//! TEND_TEST_SOAK=1 cargo test -p tend --test tests faults:: -- --nocapture
//! ```
//!
//! The tests of this file run one at a time (they measure latencies and
//! memory; running them side by side on two cores would measure each
//! other). Every figure is printed as a `FIGURE` line.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{corpus, tend_bin, wait_until, Env};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// One fault test at a time, and nothing beside it (see `support::alone`).
fn serial() -> support::Turn {
    support::alone()
}

fn soak() -> bool {
    std::env::var("TEND_TEST_SOAK").is_ok_and(|v| v == "1")
}

fn figure(text: impl AsRef<str>) {
    eprintln!("FIGURE {}", text.as_ref());
}

/// A small xorshift generator; the seed is printed so a run can be
/// repeated with `TEND_TEST_SEED`.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::env::var("TEND_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
                    | 1
            });
        eprintln!("random seed {seed} (repeat with TEND_TEST_SEED={seed})");
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Milliseconds in `[lo, hi]`.
    fn ms(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.next() % (hi - lo + 1))
    }
}

/// The state letter of a process (`None` when it is gone).
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
}

/// Alive and not a zombie.
fn alive(pid: u32) -> bool {
    proc_state(pid).is_some_and(|s| s != 'Z')
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

fn sigkill(pid: u32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
}

fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
                .collect()
        })
        .unwrap_or_default()
}

/// `tend tap` processes serving this test's daemon: `(pid, pane)`.
fn tap_processes(env: &Env) -> Vec<(u32, String)> {
    let root = env.path().to_string_lossy().into_owned();
    all_pids()
        .into_iter()
        .filter(|p| alive(*p))
        .filter_map(|pid| {
            let argv = cmdline(pid);
            let is_tap = argv.first().is_some_and(|a| a == tend_bin())
                && argv.get(1).is_some_and(|a| a == "tap")
                && argv.iter().any(|a| a.starts_with(&root));
            if !is_tap {
                return None;
            }
            let pane = argv
                .iter()
                .position(|a| a == "--pane")
                .and_then(|i| argv.get(i + 1))
                .cloned()?;
            Some((pid, pane))
        })
        .collect()
}

/// `tend daemon` processes for this test's tmux server.
fn daemon_processes(env: &Env) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|p| alive(*p))
        .filter(|pid| {
            let argv = cmdline(*pid);
            argv.first().is_some_and(|a| a == tend_bin())
                && argv.get(1).is_some_and(|a| a == "daemon")
                && argv.iter().any(|a| a.ends_with(&format!("/{}", env.name)))
        })
        .collect()
}

fn runtime_file(env: &Env, ext: &str) -> Option<PathBuf> {
    std::fs::read_dir(env.path().join("run").join("tend"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == ext))
}

fn control_socket(env: &Env) -> PathBuf {
    runtime_file(env, "sock").expect("control socket")
}

fn tap_socket(env: &Env) -> PathBuf {
    runtime_file(env, "tap").expect("tap socket")
}

fn daemon_log(env: &Env) -> String {
    runtime_file(env, "log")
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

/// Panes whose `#{pane_pipe}` is 1.
fn piped_panes(env: &Env) -> Vec<String> {
    env.tmux_out(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pipe}"])
        .lines()
        .filter_map(|l| l.strip_suffix(" 1"))
        .map(str::to_owned)
        .collect()
}

/// One request on the control socket; `None` when the daemon does not
/// answer.
fn call(sock: &Path, method: &str, params: Value) -> Option<Value> {
    let mut s = UnixStream::connect(sock).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let line = json!({"id": 1, "method": method, "params": params}).to_string();
    s.write_all(format!("{line}\n").as_bytes()).ok()?;
    let mut out = String::new();
    BufReader::new(s).read_line(&mut out).ok()?;
    let v: Value = serde_json::from_str(&out).ok()?;
    v.get("result").cloned()
}

fn start_pid(env: &Env) -> u32 {
    let out = env.tend_ok(&["start", "--json"]);
    let v: Value = serde_json::from_str(&out).expect("start --json");
    v["pid"].as_u64().expect("pid") as u32
}

fn tmux_pid(env: &Env) -> u32 {
    env.tmux_out(&["display", "-p", "#{pid}"])
        .parse()
        .expect("tmux pid")
}

fn pane_ids(env: &Env) -> Vec<String> {
    env.tmux_out(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Every pane of the server is in the daemon's table as `pipe` (the
/// daemon holds the pane's pipe: its tap handed it over), tmux says every
/// pane's pipe is open, and no tap process is left: no process per pane.
fn all_tapped(env: &Env, ctl: &Path, panes: &[String]) -> bool {
    let Some(list) = call(ctl, "list", json!({})) else {
        return false;
    };
    let rows = list.as_array().cloned().unwrap_or_default();
    let in_table = panes.iter().all(|p| {
        rows.iter()
            .any(|r| r["pane"] == p.as_str() && r["tap"] == "pipe")
    });
    let piped = piped_panes(env);
    in_table && panes.iter().all(|p| piped.contains(p)) && tap_processes(env).is_empty()
}

/// The bytes a recording prints up to `until` seconds, without the
/// terminal queries (device attributes, cursor position, colour and mode
/// reports): replayed by `cat`, their answers would be echoed over the
/// screen.
fn cast_bytes(rel: &str, until: f64) -> Vec<u8> {
    let text = std::fs::read_to_string(corpus(rel).join("pane.cast")).expect("cast");
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let Ok(Value::Array(ev)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if ev.len() < 3 || ev[1] != "o" {
            continue;
        }
        if ev[0].as_f64().unwrap_or(f64::MAX) > until {
            break;
        }
        out.extend_from_slice(ev[2].as_str().unwrap_or_default().as_bytes());
    }
    strip_queries(&out)
}

fn strip_queries(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == 0x1b && b.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while j < b.len() && (0x30..=0x3f).contains(&b[j]) {
                j += 1;
            }
            let inter = j;
            while j < b.len() && (0x20..=0x2f).contains(&b[j]) {
                j += 1;
            }
            if j < b.len() {
                let params = &b[i + 2..inter];
                let query = match (&b[inter..j], b[j]) {
                    (b"", b'c') => true,
                    (b"", b'n') => params == b"6" || params == b"5",
                    (b"", b'q') => params.first() == Some(&b'>'),
                    (b"$", b'p') => true,
                    _ => false,
                };
                if query {
                    i = j + 1;
                    continue;
                }
            }
        }
        if b[i] == 0x1b && b.get(i + 1) == Some(&b']') {
            let end = (i + 2..b.len())
                .find(|&k| b[k] == 0x07 || (b[k] == 0x1b && b.get(k + 1) == Some(&b'\\')));
            if let Some(end) = end {
                if b[i + 2..end].ends_with(b";?") {
                    i = if b[end] == 0x07 { end + 1 } else { end + 2 };
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Hands the daemon a pipe for `pane` as `tend tap` does (the pane id,
/// the descriptor as `SCM_RIGHTS`), holding `bytes`; returns the
/// connection, to read its end.
fn hand_over(tap: &Path, pane: &str, bytes: &[u8]) -> UnixStream {
    use std::os::fd::AsRawFd;
    let (mut ours, theirs) = UnixStream::pair().expect("pair");
    let s = UnixStream::connect(tap).expect("connect");
    let fds = [theirs.as_raw_fd()];
    nix::sys::socket::sendmsg::<nix::sys::socket::UnixAddr>(
        s.as_raw_fd(),
        &[std::io::IoSlice::new(pane.as_bytes())],
        &[nix::sys::socket::ControlMessage::ScmRights(&fds)],
        nix::sys::socket::MsgFlags::empty(),
        None,
    )
    .expect("sendmsg");
    ours.write_all(bytes).expect("write into the pipe");
    drop(theirs);
    s
}

/// Lines of a pane's whole history, trailing blank lines dropped.
fn history(env: &Env, pane: &str) -> Vec<String> {
    let text = env.tmux_out(&["capture-pane", "-p", "-S", "-", "-E", "-", "-t", pane]);
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_owned()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

/// A tmpfs mounted over a directory; unmounted (lazily) on drop.
struct Mount(PathBuf);

impl Mount {
    /// `None` (with a notice) when mounting is not permitted here.
    fn tmpfs(dir: &Path, size: &str) -> Option<Mount> {
        std::fs::create_dir_all(dir).ok()?;
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700")])
            .arg("tmpfs")
            .arg(dir)
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!(
                "skipped: cannot mount a tmpfs ({}); needs root with CAP_SYS_ADMIN",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return None;
        }
        Some(Mount(dir.to_owned()))
    }

    fn remount(&self, opts: &str) {
        let out = std::process::Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(&self.0)
            .output()
            .expect("mount");
        assert!(
            out.status.success(),
            "remount {opts}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .output();
    }
}

/// A Python script that writes 200-byte lines at `rate` bytes/s (0: as
/// fast as the pane takes them) for `secs`, then the bytes written and the
/// seconds taken to `report`.
const FLOOD_PY: &str = r#"
import sys, time
rate, secs, report = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
chunk = (b"x" * 199 + b"\n") * 160
out = sys.stdout.buffer
t0 = time.monotonic(); sent = 0
while True:
    now = time.monotonic() - t0
    if now >= secs:
        break
    if rate > 0 and sent > rate * now:
        time.sleep(0.001)
        continue
    out.write(chunk); out.flush(); sent += len(chunk)
open(report, "w").write("%d %f\n" % (sent, time.monotonic() - t0))
"#;

fn flood_cmd(env: &Env, rate: u64, secs: u64, report: &Path) -> String {
    let script = env.path().join("flood.py");
    std::fs::write(&script, FLOOD_PY).expect("write flood.py");
    format!(
        "python3 '{}' {rate} {secs} '{}'; exec sleep 100000",
        script.display(),
        report.display()
    )
}

// ---------------------------------------------------------------------------
// 1. SIGKILL while panes stream
// ---------------------------------------------------------------------------

#[test]
fn sigkill_while_streaming_loses_nothing_and_every_pane_is_retapped() {
    let _serial = serial();
    let kills = if soak() { 100 } else { 10 };
    let mut rng = Rng::new();
    let env = Env::new("flt-kill");
    env.tmux(&["set", "-g", "history-limit", "500000"]);
    let stop = env.path().join("STOP");
    let stop_s = stop.display().to_string();
    let mut pid = start_pid(&env);
    // Steady panes: one numbered line every 10 ms. Burst panes: 100
    // numbered lines at once every 200 ms. An idle pane prints nothing
    // (tmux must notice the daemon's death on its pipe all the same).
    let mut streams: Vec<(String, String)> = Vec::new();
    for k in 1..=3 {
        let cmd = format!(
            "i=0; while [ ! -e '{stop_s}' ]; do i=$((i+1)); echo s{k}-$i; sleep 0.01; done; \
             echo end-s{k}-$i; exec sleep 100000"
        );
        streams.push((env.window("main", &cmd), format!("s{k}")));
    }
    for k in 1..=2 {
        let cmd = format!(
            "i=0; while [ ! -e '{stop_s}' ]; do seq -f b{k}-%.0f $((i+1)) $((i+100)); i=$((i+100)); \
             sleep 0.2; done; echo end-b{k}-$i; exec sleep 100000"
        );
        streams.push((env.window("main", &cmd), format!("b{k}")));
    }
    env.window("main", "exec sleep 100000");
    let panes = pane_ids(&env);
    let ctl = control_socket(&env);
    assert!(
        wait_until(15, || all_tapped(&env, &ctl, &panes)),
        "panes never all tapped: pipes open on {:?} of {} panes, tap processes {:?}; {}",
        piped_panes(&env),
        panes.len(),
        tap_processes(&env),
        env.list_json()
    );
    let mut retaps: Vec<Duration> = Vec::new();
    let mut closes: Vec<Duration> = Vec::new();
    let mut starts: Vec<Duration> = Vec::new();
    let mut polling_seen: Vec<String> = Vec::new();
    for n in 1..=kills {
        std::thread::sleep(rng.ms(100, 2000));
        sigkill(pid);
        let killed = Instant::now();
        assert!(
            wait_until(5, || !alive(pid)),
            "daemon {pid} survived SIGKILL"
        );
        // No pipe outlives the daemon that held it, the idle pane's
        // included: tmux closes each one itself.
        assert!(
            wait_until(5, || piped_panes(&env).is_empty()),
            "kill {n}: pipes left open after the daemon died: {:?}",
            piped_panes(&env)
        );
        closes.push(killed.elapsed());
        // Down for a moment while the panes keep printing.
        std::thread::sleep(rng.ms(0, 300));
        let t0 = Instant::now();
        pid = start_pid(&env);
        starts.push(t0.elapsed());
        let back = wait_until(10, || all_tapped(&env, &ctl, &panes));
        let took = t0.elapsed();
        assert!(
            back,
            "kill {n}: not every pane re-tapped within 10 s: pipes open on {:?} of {} panes, tap processes {:?}; {}",
            piped_panes(&env),
            panes.len(),
            tap_processes(&env),
            env.list_json()
        );
        retaps.push(took);
        // Now and then (and after the last kill) leave the daemon up long
        // enough that a pane whose pipe it does not hold would have been
        // tapped again or fallen back to polling (3–6 s).
        if n == kills || n % 5 == 0 {
            std::thread::sleep(Duration::from_secs(7));
            if let Some(list) = call(&ctl, "list", json!({})) {
                for r in list.as_array().into_iter().flatten() {
                    if r["tap"] != "pipe" {
                        polling_seen.push(format!("kill {n}: {} is {}", r["pane"], r["tap"]));
                    }
                }
            }
        }
    }
    std::fs::write(&stop, "").expect("stop file");
    for (pane, tag) in &streams {
        assert!(
            wait_until(30, || env
                .tmux_out(&["capture-pane", "-p", "-t", pane])
                .contains(&format!("end-{tag}-"))),
            "{tag} ({pane}) never finished"
        );
    }
    // No pane's content differs from what its program printed.
    let mut lines_checked = 0usize;
    for (pane, tag) in &streams {
        let got = history(&env, pane);
        let last = got.last().cloned().unwrap_or_default();
        let count: usize = last
            .strip_prefix(&format!("end-{tag}-"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{tag}: last line is {last:?}"));
        let mut want: Vec<String> = (1..=count).map(|i| format!("{tag}-{i}")).collect();
        want.push(last.clone());
        if got != want {
            let at = got
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            panic!(
                "{tag} ({pane}): history differs from what was printed at line {at}: got {:?}, want {:?} ({} vs {} lines)",
                got.get(at),
                want.get(at),
                got.len(),
                want.len()
            );
        }
        lines_checked += got.len();
    }
    let taps_after = tap_processes(&env);
    assert!(taps_after.is_empty(), "tap processes left: {taps_after:?}");
    let mut closes_sorted = closes.clone();
    closes_sorted.sort();
    let mut sorted = retaps.clone();
    sorted.sort();
    let mut starts_sorted = starts.clone();
    starts_sorted.sort();
    figure(format!(
        "sigkill: {kills} kills, {} panes ({} streaming), {lines_checked} lines compared, 0 differ; \
         every pipe closed by tmux after SIGKILL within median {} ms, worst {} ms; \
         re-tap after `tend start` began: median {} ms, p90 {} ms, worst {} ms; `tend start` itself: median {} ms, worst {} ms; \
         tap processes left: {}",
        panes.len(),
        streams.len(),
        ms(percentile(&closes_sorted, 0.5)),
        ms(*closes_sorted.last().expect("kills")),
        ms(percentile(&sorted, 0.5)),
        ms(percentile(&sorted, 0.9)),
        ms(*sorted.last().expect("kills")),
        ms(percentile(&starts_sorted, 0.5)),
        ms(*starts_sorted.last().expect("kills")),
        taps_after.len()
    ));
    assert!(
        polling_seen.is_empty(),
        "tapped panes were not held by the daemon a while after a restart: {polling_seen:?}"
    );
    // The target is 2 s and a restart typically takes a few hundred ms
    // (the figures above, and the live bench, report it); the test only
    // asserts that every pane came back, with a bound no loaded machine
    // reaches: timings belong in benchmarks, not in pass/fail.
    let worst = *sorted.last().expect("kills");
    assert!(
        worst <= Duration::from_secs(20),
        "worst re-tap {} ms: a pane was not re-tapped within 20 s (all: {:?})",
        ms(worst),
        retaps.iter().map(|d| ms(*d)).collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------------------
// 2. The tmux server killed and restarted
// ---------------------------------------------------------------------------

#[test]
fn tmux_server_killed_the_daemon_goes_and_a_new_server_gets_a_new_one() {
    let _serial = serial();
    let env = Env::new("flt-server");
    let pid = start_pid(&env);
    env.window("main", "exec sleep 100000");
    let ctl = control_socket(&env);
    let tap = tap_socket(&env);
    let panes = pane_ids(&env);
    assert!(wait_until(10, || all_tapped(&env, &ctl, &panes)));
    let t0 = Instant::now();
    env.tmux(&["kill-server"]);
    assert!(
        wait_until(10, || !alive(pid)),
        "daemon {pid} outlived its tmux server"
    );
    let gone_after = t0.elapsed();
    assert!(!ctl.exists(), "control socket left behind");
    assert!(!tap.exists(), "tap socket left behind");
    assert!(
        wait_until(5, || tap_processes(&env).is_empty()),
        "tap processes outlived the server: {:?}",
        tap_processes(&env)
    );
    // A new server on the same socket name, and `tend start`.
    // `kill-server` returns before the old server has quite gone: a new
    // one may need a second try (as it would for a user).
    let up = |session: &str| {
        let mut last = String::new();
        let ok = wait_until(5, || {
            let out = env.tmux(&[
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                session,
                "-x",
                "200",
                "-y",
                "50",
            ]);
            last = String::from_utf8_lossy(&out.stderr).into_owned();
            out.status.success()
        });
        assert!(ok, "new server: {last}");
    };
    up("again");
    let pid2 = start_pid(&env);
    assert_ne!(pid, pid2);
    let panes = pane_ids(&env);
    assert!(
        wait_until(10, || all_tapped(&env, &ctl, &panes)),
        "new server's panes not tapped: {}",
        env.list_json()
    );
    // At once: `tmux kill-server; tmux` (a tmux.conf that runs `tend start`
    // starts it while the old daemon may not have noticed yet).
    env.tmux(&["kill-server"]);
    up("third");
    let t1 = Instant::now();
    env.tend_ok(&["start"]);
    let serves_new = wait_until(10, || {
        !alive(pid2)
            && call(&ctl, "list", json!({})).is_some_and(|l| {
                let rows = l.as_array().cloned().unwrap_or_default();
                !rows.is_empty() && rows.iter().all(|r| r["session"] == "third")
            })
            && env.tmux_out(&["show-hooks", "-g"]).contains("tend")
    });
    assert!(
        serves_new,
        "after a quick tmux restart no daemon serves the new server: old daemon alive={}, daemons {:?}, list {:?}, hooks {:?}",
        alive(pid2),
        daemon_processes(&env),
        call(&ctl, "list", json!({})),
        env.tmux_out(&["show-hooks", "-g"])
            .lines()
            .filter(|l| l.contains("tend"))
            .collect::<Vec<_>>()
    );
    figure(format!(
        "tmux server killed: daemon gone after {} ms, sockets removed, taps gone; quick restart served after {} ms",
        ms(gone_after),
        ms(t1.elapsed())
    ));
}

// ---------------------------------------------------------------------------
// 3. A pane printing ~10 MB/s
// ---------------------------------------------------------------------------

#[test]
fn flood_keeps_memory_bounded_and_other_panes_on_time() {
    let _serial = serial();
    let secs: u64 = if soak() { 60 } else { 10 };
    let rate: u64 = 10_000_000;
    let env = Env::new("flt-flood");
    let daemon = start_pid(&env);
    let server = tmux_pid(&env);
    let ctl = control_socket(&env);
    std::thread::sleep(Duration::from_millis(500));
    let daemon_base = rss_kib(daemon).expect("daemon rss");
    let tmux_base = rss_kib(server).expect("tmux rss");
    let report = env.path().join("flood.report");
    let flood = env.window("main", &flood_cmd(&env, rate, secs, &report));
    let flood_start = Instant::now();
    // Sample memory and status latency while it floods.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        let view = env.view();
        let ctl = ctl.clone();
        std::thread::spawn(move || {
            let mut daemon_rss = Vec::new();
            let mut tmux_rss = Vec::new();
            let mut raw = Vec::new();
            let mut cli = Vec::new();
            let mut last_cli = Instant::now() - Duration::from_secs(5);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                daemon_rss.push(rss_kib(daemon).unwrap_or(0));
                tmux_rss.push(rss_kib(server).unwrap_or(0));
                let t = Instant::now();
                let ok = call(&ctl, "status", json!({})).is_some();
                raw.push((t.elapsed(), ok));
                if last_cli.elapsed() >= Duration::from_secs(1) {
                    last_cli = Instant::now();
                    let t = Instant::now();
                    let ok = view.tend(&["status"]).status.success();
                    cli.push((t.elapsed(), ok));
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            (daemon_rss, tmux_rss, raw, cli)
        })
    };
    std::thread::sleep(Duration::from_secs(1));
    // Another pane replays Claude asking for approval (the dialog is drawn
    // about 7.6 s into the recording).
    let cmd = env.play_cmd("claude", &corpus("claude/approval").join("pane.cast"), 120);
    let agent = env.window("main", &cmd);
    let mut dialog_at = None;
    let mut published_at = None;
    let deadline = Instant::now() + Duration::from_secs(40);
    while Instant::now() < deadline && (dialog_at.is_none() || published_at.is_none()) {
        if dialog_at.is_none()
            && env
                .tmux_out(&["capture-pane", "-p", "-t", &agent])
                .contains("Do you want to proceed?")
        {
            dialog_at = Some(Instant::now());
        }
        if published_at.is_none() && env.pane_option(&agent, "@tend_reason") == "approval" {
            published_at = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    // Let the flood run its course.
    let end = flood_start + Duration::from_secs(secs + 1);
    if let Some(rest) = end.checked_duration_since(Instant::now()) {
        std::thread::sleep(rest);
    }
    assert!(
        wait_until(30, || report.exists()),
        "the flood did not finish"
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (daemon_rss, tmux_rss, raw, cli) = sampler.join().expect("sampler");
    let rep = std::fs::read_to_string(&report).expect("report");
    let mut it = rep.split_whitespace();
    let bytes: f64 = it.next().and_then(|v| v.parse().ok()).expect("bytes");
    let took: f64 = it.next().and_then(|v| v.parse().ok()).expect("secs");
    let mbps = bytes / took / 1e6;
    // Still live afterwards: both panes tapped, the agent still waiting.
    let list = env.list_json();
    let rows = list.as_array().cloned().unwrap_or_default();
    let daemon_max = daemon_rss.iter().copied().max().unwrap_or(0);
    let tmux_max = tmux_rss.iter().copied().max().unwrap_or(0);
    let q = daemon_rss.len() / 4;
    let early = daemon_rss[..q.max(1)].iter().copied().max().unwrap_or(0);
    let late = daemon_rss[daemon_rss.len() - q.max(1)..]
        .iter()
        .copied()
        .max()
        .unwrap_or(0);
    let raw_max = raw.iter().map(|(d, _)| *d).max().unwrap_or_default();
    let cli_max = cli.iter().map(|(d, _)| *d).max().unwrap_or_default();
    let latency = match (dialog_at, published_at) {
        (Some(d), Some(p)) => Some(p.saturating_duration_since(d)),
        _ => None,
    };
    figure(format!(
        "flood: {secs} s at {mbps:.1} MB/s ({:.0} MB); daemon RSS {} KiB before, max {} KiB (first quarter max {} KiB, last quarter max {} KiB); \
         tmux RSS {} KiB before, max {} KiB; status over the control socket p90 {} ms, max {} ms ({} samples), `tend status` max {} ms ({} runs); \
         approval published {} ms after the dialog was drawn",
        bytes / 1e6,
        daemon_base,
        daemon_max,
        early,
        late,
        tmux_base,
        tmux_max,
        ms({
            let mut v: Vec<Duration> = raw.iter().map(|(d, _)| *d).collect();
            v.sort();
            percentile(&v, 0.9)
        }),
        ms(raw_max),
        raw.len(),
        ms(cli_max),
        cli.len(),
        latency.map_or("never".into(), |l| ms(l).to_string())
    ));
    assert!(
        mbps >= 2.0,
        "the flood reached only {mbps:.1} MB/s: the test measured nothing"
    );
    assert!(
        raw.iter().all(|(_, ok)| *ok) && cli.iter().all(|(_, ok)| *ok),
        "status failed during the flood"
    );
    assert!(
        // Published at all while the flood runs (the figure above is the
        // latency; the bound only catches a daemon the flood starved).
        latency.is_some_and(|l| l <= Duration::from_secs(10)),
        "the other pane's approval was not published within 10 s of the dialog (dialog seen: {}, latency {latency:?})",
        dialog_at.is_some()
    );
    // Memory: the daemon holds a screen per pane and a few frames in
    // flight, whatever the volume; 32 MiB over its resting size is far
    // above what it needs, far below what buffering the flood would take
    // (10 MB every second).
    assert!(
        daemon_max <= daemon_base + 32 * 1024,
        "daemon RSS grew from {daemon_base} to {daemon_max} KiB"
    );
    assert!(
        late <= early + 8 * 1024,
        "daemon RSS keeps growing during the flood: {early} KiB early, {late} KiB late"
    );
    // tmux keeps a stalled pipe's data without bound: its memory shows
    // whether the tap ever blocked it (history of 2000 lines is a few MiB).
    assert!(
        tmux_max <= tmux_base + 32 * 1024,
        "tmux RSS grew from {tmux_base} to {tmux_max} KiB: the pipe was not drained"
    );
    // Status stays quick: nine answers in ten under 1 s (a few hundred ms
    // measured), none slower than 3 s (a loaded machine may stall any
    // process for a moment).
    let mut raw_sorted: Vec<Duration> = raw.iter().map(|(d, _)| *d).collect();
    raw_sorted.sort();
    assert!(
        percentile(&raw_sorted, 0.9) < Duration::from_secs(1),
        "the daemon answered status slowly during the flood: p90 {} ms",
        ms(percentile(&raw_sorted, 0.9))
    );
    assert!(
        raw_max < Duration::from_secs(3) && cli_max < Duration::from_secs(3),
        "status took {} ms (socket) / {} ms (`tend status`) during the flood",
        ms(raw_max),
        ms(cli_max)
    );
    for p in [&flood, &agent] {
        assert!(
            rows.iter()
                .any(|r| r["pane"] == p.as_str() && r["tap"] == "pipe"),
            "{p} not tapped after the flood: {list}"
        );
    }
    assert!(alive(daemon), "the daemon died");
}

// ---------------------------------------------------------------------------
// 4. A pane killed mid-burst
// ---------------------------------------------------------------------------

#[test]
fn panes_killed_mid_burst_leave_no_entry_and_no_tap() {
    let _serial = serial();
    let rounds = if soak() { 20 } else { 3 };
    let env = Env::new("flt-killpane");
    let daemon = start_pid(&env);
    let ctl = control_socket(&env);
    let report = env.path().join("burst.report");
    let quiet = env.window("main", "exec sleep 100000");
    for round in 1..=rounds {
        let noisy = env.window("main", &flood_cmd(&env, 0, 120, &report));
        let panes = pane_ids(&env);
        assert!(
            wait_until(10, || all_tapped(&env, &ctl, &panes)),
            "round {round}: flooding pane not tapped"
        );
        std::thread::sleep(Duration::from_millis(700));
        env.tmux(&["kill-pane", "-t", &noisy]);
        let gone = wait_until(5, || {
            call(&ctl, "list", json!({})).is_some_and(|l| {
                !l.as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r["pane"] == noisy.as_str())
            })
        });
        assert!(gone, "round {round}: {noisy} still in the table");
    }
    let panes = pane_ids(&env);
    assert!(panes.contains(&quiet));
    assert!(wait_until(5, || all_tapped(&env, &ctl, &panes)));
    assert!(alive(daemon));
    figure(format!(
        "pane killed mid-burst: {rounds} rounds, entry and tap gone within 5 s each, daemon alive"
    ));
}

// ---------------------------------------------------------------------------
// 5. The state directory read-only, then full
// ---------------------------------------------------------------------------

fn state_file(env: &Env) -> Option<PathBuf> {
    std::fs::read_dir(env.path().join("state").join("tend"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
}

#[test]
fn state_directory_read_only_or_full_keeps_working_and_saves_later() {
    let _serial = serial();
    let env = Env::new("flt-state");
    let dir = env.path().join("state").join("tend");
    let Some(mount) = Mount::tmpfs(&dir, "256k") else {
        return;
    };
    env.tend_ok(&["start"]);
    let a = env.window("main", "env TEND_AGENT=claude sleep 100000");
    let b = env.window("main", "env TEND_AGENT=claude sleep 100000");
    let get = |p: &str| -> Value {
        serde_json::from_str(&env.tend_ok(&["get", p, "--json"])).unwrap_or(Value::Null)
    };
    assert!(wait_until(10, || get(&a)["agent"] == "claude"
        && get(&b)["agent"] == "claude"));
    let saved = || {
        state_file(&env)
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
    };

    // The daemon saves at most once a second: this long after a change,
    // it has tried.
    let tried = || std::thread::sleep(Duration::from_millis(2500));

    // Read-only: park and unpark work in memory, the failure is logged.
    mount.remount("ro");
    env.tend_ok(&["park", &a, "--note", "read-only note"]);
    assert_eq!(get(&a)["parked"], true);
    assert!(
        wait_until(5, || daemon_log(&env).contains("could not save state")),
        "no message about the failed save: {}",
        daemon_log(&env)
    );
    let msg = daemon_log(&env);
    assert!(
        msg.contains("Read-only file system") && msg.contains("stay in memory"),
        "unclear message: {msg}"
    );
    env.tend_ok(&["unpark", &a]);
    assert_eq!(get(&a)["parked"], false);
    env.tend_ok(&["park", &a, "--note", "saved later"]);
    assert_eq!(get(&a)["note"], "saved later");
    tried();
    assert!(!saved().contains("saved later"));
    // Writable again: saved without any further change.
    mount.remount("rw");
    assert!(
        wait_until(10, || saved().contains("saved later")),
        "state not saved once the directory was writable again: {:?}",
        saved()
    );

    // Full: the same.
    let filler = dir.join("filler");
    let mut f = std::fs::File::create(&filler).expect("filler");
    let block = vec![0u8; 4096];
    while f.write_all(&block).is_ok() {}
    drop(f);
    env.tend_ok(&["snooze", &b, "6h"]);
    assert_eq!(get(&b)["snoozed"], true);
    tried();
    assert!(
        daemon_log(&env).contains("No space left on device"),
        "no message about the failed save on a full file system: {}",
        daemon_log(&env)
    );
    assert!(
        !saved().contains(b.as_str()),
        "saved on a full file system?"
    );
    std::fs::remove_file(&filler).expect("remove filler");
    assert!(
        wait_until(10, || {
            let s = saved();
            s.contains("saved later") && s.contains(b.as_str())
        }),
        "state not saved once space was free again: {:?}",
        saved()
    );
    // Stopping while read-only: a message, a clean exit; starting again
    // with a read-only directory works and restores what was saved.
    mount.remount("ro");
    env.tend_ok(&["stop"]);
    env.tend_ok(&["start"]);
    assert!(
        wait_until(10, || get(&a)["parked"] == true
            && get(&b)["snoozed"] == true),
        "saved state not restored: {} {}",
        get(&a),
        get(&b)
    );
    mount.remount("rw");
    env.tend_ok(&["stop"]);
    figure("state directory: read-only and full both logged, parks kept in memory, saved once writable");
}

// ---------------------------------------------------------------------------
// 6. Corrupt config and manifests
// ---------------------------------------------------------------------------

#[test]
fn corrupt_config_fails_start_naming_file_line_and_key() {
    let _serial = serial();
    let env = Env::new("flt-config");
    let cfg_dir = env.path().join("config").join("tend");
    std::fs::create_dir_all(&cfg_dir).expect("config dir");
    let file = cfg_dir.join("config.toml");
    let cases = [
        (
            "[detector]\n# how long a screen must hold\nsettle = \"6 parsecs\"\n",
            "line 3",
            "settle",
        ),
        ("[detector]\nsettel = \"6s\"\n", "line 2", "settel"),
        ("[keys]\nnext = \"N\"\n[detector\n", "line 3", "detector"),
    ];
    for (text, line, key) in cases {
        std::fs::write(&file, text).expect("write config");
        let t0 = Instant::now();
        let out = env.tend(&["start"]);
        let took = t0.elapsed();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "start succeeded with {text:?}");
        assert!(
            err.contains(&file.display().to_string()) && err.contains(line) && err.contains(key),
            "the error does not name the file, {line} and `{key}`: {err}"
        );
        assert!(
            took < Duration::from_secs(5),
            "start took {} ms to report a bad config",
            ms(took)
        );
        // Nothing started: no daemon, no sockets, nothing in tmux.
        assert!(daemon_processes(&env).is_empty(), "a daemon runs");
        assert!(runtime_file(&env, "sock").is_none());
        assert!(!env.tmux_out(&["show-hooks", "-g"]).contains("tend"));
        assert!(env.global_option("@tend_needs").is_empty());
        figure(format!(
            "bad config: exit {:?} after {} ms: {}",
            out.status.code(),
            ms(took),
            err.lines().next().unwrap_or_default()
        ));
    }
    std::fs::remove_file(&file).expect("rm config");

    // A bad user manifest: reported by doctor, the bundled ones still used.
    let agents = cfg_dir.join("agents");
    std::fs::create_dir_all(&agents).expect("agents dir");
    std::fs::write(
        agents.join("x.toml"),
        "id = \"x\"\n[[rules]\nthis is not toml\n",
    )
    .expect("write manifest");
    env.tend_ok(&["start"]);
    let out = env.tend(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!out.status.success(), "doctor passed with a bad manifest");
    assert!(
        text.lines()
            .any(|l| l.contains("manifests") && l.contains("x.toml")),
        "doctor does not name the bad manifest: {text}"
    );
    let pane = env.window("main", "env TEND_AGENT=claude sleep 100000");
    assert!(
        wait_until(10, || env
            .list_json()
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["pane"] == pane.as_str() && p["agent"] == "claude")),
        "the bundled claude manifest is not used: {}",
        env.list_json()
    );
}

// ---------------------------------------------------------------------------
// 7. Security
// ---------------------------------------------------------------------------

#[test]
fn dialogs_printed_by_a_program_that_is_not_an_agent_create_no_demand() {
    let _serial = serial();
    let env = Env::new("flt-fake");
    env.tend_ok(&["start"]);
    let fakes = [
        ("claude-approval.txt", cast_bytes("claude/approval", 8.0)),
        ("codex-question.txt", cast_bytes("codex/question", 9.6)),
        ("aider-approval.txt", cast_bytes("aider/approval", 10.3)),
        (
            "claude-spinner.txt",
            cast_bytes("claude/working_then_done", 10.0),
        ),
    ];
    let mut script = String::new();
    for (name, bytes) in &fakes {
        let p = env.path().join(name);
        std::fs::write(&p, bytes).expect("write fake");
        script.push_str(&format!("cat '{}'; sleep 2; ", p.display()));
    }
    // The same file, printed by a process that *is* identified as Claude
    // (TEND_AGENT in its environment): the bytes are a real dialog.
    let control = env.window(
        "main",
        &format!(
            "env TEND_AGENT=claude sh -c \"cat '{}'; exec sleep 100000\"",
            env.path().join("claude-approval.txt").display()
        ),
    );
    let plain = env.window("main", &format!("{script}exec sleep 100000"));
    let shell = env.window("main", "exec sh");
    env.tmux(&["send-keys", "-t", &shell, &script, "Enter"]);
    assert!(
        wait_until(20, || env.pane_option(&control, "@tend_reason")
            == "approval"),
        "control: the recorded dialog is not recognised when an agent prints it"
    );
    let markers = [
        "Do you want to proceed?",
        "Which database should the new service use?",
        "(Y)es/(N)o",
        "esc to interrupt",
    ];
    let mut shown: Vec<(String, &str)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(14);
    let mut needs_max = 0u32;
    let mut states: Vec<String> = Vec::new();
    while Instant::now() < deadline {
        for p in [&plain, &shell] {
            let screen = env.tmux_out(&["capture-pane", "-p", "-t", p]);
            for m in markers {
                if screen.contains(m) && !shown.contains(&(p.clone(), m)) {
                    shown.push((p.clone(), m));
                }
            }
            let s = env.tmux_out(&[
                "display",
                "-p",
                "-t",
                p,
                "#{@tend_agent}/#{@tend_state}/#{@tend_reason}",
            ]);
            if s != "//" && !states.contains(&s) {
                states.push(s);
            }
        }
        let v: Value =
            serde_json::from_str(&env.tend_ok(&["status", "--json"])).unwrap_or(Value::Null);
        // The control pane is one demand; anything more is a fake.
        needs_max = needs_max.max(v["needs"].as_u64().unwrap_or(0) as u32);
        std::thread::sleep(Duration::from_millis(200));
    }
    for p in [&plain, &shell] {
        for m in markers {
            assert!(
                shown.contains(&(p.clone(), m)),
                "{p} never showed {m:?} (shown: {shown:?})"
            );
        }
    }
    let list = env.list_json();
    for r in list.as_array().into_iter().flatten() {
        if r["pane"] == plain.as_str() || r["pane"] == shell.as_str() {
            assert!(
                r["agent"].is_null() && r["state"].is_null(),
                "a pane with no agent has a state: {r}"
            );
        }
    }
    assert!(
        states.is_empty(),
        "published for non-agent panes: {states:?}"
    );
    assert_eq!(needs_max, 1, "demands besides the control pane's");
    figure("fake dialogs: 4 recordings cat'ed in 2 panes without an agent: 0 demands, no state");
}

#[test]
fn another_user_cannot_reach_the_sockets_or_inject_pane_output() {
    let _serial = serial();
    if !nix::unistd::getuid().is_root() {
        eprintln!("skipped: needs root to act as another user");
        return;
    }
    let env = Env::new("flt-user");
    env.tend_ok(&["start"]);
    let ctl = control_socket(&env);
    let tap = tap_socket(&env);
    for s in [&ctl, &tap] {
        let mode = std::fs::metadata(s).expect("socket").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} is {mode:o}", s.display());
    }
    let run = ctl.parent().expect("runtime dir");
    let mode = std::fs::metadata(run).expect("dir").permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "runtime dir is {mode:o}");
    // An agent pane whose screen says nothing yet.
    let pane = env.window("main", "env TEND_AGENT=claude sleep 100000");
    assert!(wait_until(10, || env
        .list_json()
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| p["pane"] == pane.as_str() && p["agent"] == "claude")));
    // A pipe for that pane holding the bytes of Claude's approval dialog,
    // handed over as `tend tap` does.
    let dialog = cast_bytes("claude/approval", 8.0);
    let payload = env.path().join("dialog.bin");
    std::fs::write(&payload, &dialog).expect("dialog");
    std::fs::set_permissions(&payload, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let script = [
        "import socket, array".to_string(),
        "ours, theirs = socket.socketpair()".into(),
        "s = socket.socket(socket.AF_UNIX)".into(),
        "s.settimeout(5)".into(),
        format!("s.connect({:?})", tap.display().to_string()),
        "try:".into(),
        format!(
            "  s.sendmsg([{pane:?}.encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [theirs.fileno()]).tobytes())])"
        ),
        format!("  ours.sendall(open({:?}, 'rb').read())", payload.display().to_string()),
        "except OSError as e:".into(),
        "  print('send', e)".into(),
        "try:".into(),
        "  print('eof' if s.recv(1) == b'' else 'data')".into(),
        "except OSError as e:".into(),
        "  print('recv', e)".into(),
    ]
    .join("\n");
    let out = support::python_as_nobody(&env, &tap, &script);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.contains("eof") || said.contains("reset") || said.contains("Broken pipe"),
        "another user's tap connection was not closed: {said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::thread::sleep(Duration::from_secs(3));
    assert_ne!(
        env.pane_option(&pane, "@tend_reason"),
        "approval",
        "another user's pipe reached the pane table"
    );
    // The same hand-over from the owner is taken: the check above is what
    // kept the other user out.
    let s = hand_over(&tap, &pane, &dialog);
    let owner_ok = wait_until(10, || env.pane_option(&pane, "@tend_reason") == "approval");
    drop(s);
    assert!(
        owner_ok,
        "control: the owner's hand-over did not draw the dialog"
    );
    figure("another user: tap connection closed unread, its pipe never read, no state change; the owner's identical hand-over draws the dialog");
}

#[test]
fn hostile_titles_names_and_notes_never_reach_a_shell_or_a_format() {
    let _serial = serial();
    let env = Env::new("flt-names");
    let m = |n: &str| env.path().join(format!("pwned-{n}"));
    let sname = format!(
        "s'\"#{{pane_id}};$(touch {})#(touch {})",
        m("s1").display(),
        m("s2").display()
    );
    // tmux expands formats in the names it is given (`##` is a `#`): escape
    // them so that the names themselves carry `#{}` and `#()`.
    let sid = env.tmux_out(&[
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{session_id}",
        "-s",
        &sname.replace('#', "##"),
        "-x",
        "200",
        "-y",
        "50",
    ]);
    let wname = format!(
        "w;$(touch {})'#(touch {})\"#{{q}}",
        m("w1").display(),
        m("w2").display()
    );
    env.tmux(&[
        "rename-window",
        "-t",
        &format!("{sid}:"),
        &wname.replace('#', "##"),
    ]);
    assert_eq!(
        env.tmux_out(&["display", "-p", "-t", &sid, "#{session_name}"]),
        sname.replace([':', '.'], "_"),
        "the session name did not reach tmux as is"
    );
    assert_eq!(
        env.tmux_out(&["display", "-p", "-t", &format!("{sid}:"), "#{window_name}"]),
        wname
    );
    env.tend_ok(&["start"]);
    // Claude asking for approval, under a title set by the program itself.
    let title = format!(
        "t'$(touch {});#(touch {})#{{pane_id}}\"",
        m("t1").display(),
        m("t2").display()
    );
    let title_file = env.path().join("title.bin");
    std::fs::write(&title_file, format!("\x1b]2;{title}\x07")).expect("title");
    let cmd = format!(
        "cat '{}'; {}",
        title_file.display(),
        env.play_cmd("claude", &corpus("claude/approval").join("pane.cast"), 120)
    );
    let pane = env.window_at(&format!("{sid}:"), &cmd);
    assert!(
        wait_until(30, || env.pane_option(&pane, "@tend_reason") == "approval"),
        "approval never published"
    );
    let note = format!(
        "n'$(touch {});#(touch {}) #{{pane_id}} \"; kill-server",
        m("n1").display(),
        m("n2").display()
    );
    env.tend_ok(&["park", &pane, "--note", &note]);
    // Everything that shows names: list, next, explain, doctor, and the
    // picker and agent menus on a real client.
    env.tend_ok(&["list"]);
    env.tend_ok(&["list", "--json"]);
    env.tend_ok(&["explain", &pane]);
    let _ = env.tend(&["doctor"]);
    let _ = env.tend(&["next"]);
    let mut client = std::process::Command::new("script")
        .args([
            "-qfc",
            &format!("tmux -L {} attach -t {}", env.name, sid),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("script (util-linux) to attach a client");
    let attached = wait_until(10, || !env.tmux_out(&["list-clients"]).is_empty());
    if attached {
        let c = env.tmux_out(&["list-clients", "-F", "#{client_name}"]);
        let socket = control_socket(&env).display().to_string();
        // The fleet view in a popup (what prefix A opens by default) draws
        // the same names; then the picker menu.
        let o = env.tend(&["key", "--socket", &socket, "picker", &format!("client={c}")]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::thread::sleep(Duration::from_millis(800));
        env.tmux(&["display-popup", "-C", "-c", &c]);
        env.tmux(&["set", "-g", "@tend-picker-view", "menu"]);
        for action in [
            vec!["picker".to_owned(), format!("client={c}")],
            vec![
                "agent".to_owned(),
                format!("pane={pane}"),
                format!("client={c}"),
            ],
        ] {
            let mut args = vec!["key", "--socket", socket.as_str()];
            args.extend(action.iter().map(String::as_str));
            let o = env.tend(&args);
            assert!(
                o.status.success(),
                "tend key {action:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            std::thread::sleep(Duration::from_millis(500));
            // Close the menu from the client's keyboard.
            if let Some(k) = client.stdin.as_mut() {
                let _ = k.write_all(b"\x1b");
                let _ = k.flush();
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    let _ = client.kill();
    let _ = client.wait();
    std::thread::sleep(Duration::from_millis(500));
    let hit: Vec<String> = ["s1", "s2", "w1", "w2", "t1", "t2", "n1", "n2"]
        .iter()
        .filter(|n| m(n).exists())
        .map(|n| n.to_string())
        .collect();
    assert!(hit.is_empty(), "hostile text was executed: {hit:?}");
    assert!(
        env.tmux(&["has-session"]).status.success(),
        "a note ended the server"
    );
    let v: Value = serde_json::from_str(&env.tend_ok(&["get", &pane, "--json"])).expect("get");
    assert_eq!(v["note"], note.as_str(), "the note was altered");
    figure(format!(
        "hostile names: session, window, title and note with quotes, #{{}}, #(), ;, $(): nothing executed (client attached: {attached})"
    ));
}

/// Garbage on the tap socket from the owner (no descriptor, a pane id
/// that is not one, an unknown pane, too long a message, a descriptor of a
/// regular file) closes that connection and nothing else.
#[test]
fn garbage_on_the_tap_socket_closes_only_that_connection() {
    let _serial = serial();
    let env = Env::new("flt-garbage");
    let daemon = start_pid(&env);
    let ctl = control_socket(&env);
    let tap = tap_socket(&env);
    let panes = pane_ids(&env);
    assert!(wait_until(10, || all_tapped(&env, &ctl, &panes)));
    let without_fd: Vec<Vec<u8>> =
        vec![vec![9, 0, 0, 0, 1, b'x'], b"%0".to_vec(), vec![b'%'; 4096]];
    for bytes in without_fd {
        let mut s = UnixStream::connect(&tap).expect("connect");
        let _ = s.write_all(&bytes);
        let _ = s.shutdown(std::net::Shutdown::Write);
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut b = [0u8; 1];
        let _ = s.read(&mut b);
    }
    for pane in ["not a pane", "%99999", &"%9".repeat(40)] {
        drop(hand_over(
            &tap,
            pane,
            b"\x1b[999999;999999H\x1b]2;\x07\xff\xfe",
        ));
    }
    {
        use std::os::fd::AsRawFd;
        let file = std::fs::File::open("/etc/hostname").expect("a file");
        let s = UnixStream::connect(&tap).expect("connect");
        nix::sys::socket::sendmsg::<nix::sys::socket::UnixAddr>(
            s.as_raw_fd(),
            &[std::io::IoSlice::new(panes[0].as_bytes())],
            &[nix::sys::socket::ControlMessage::ScmRights(&[
                file.as_raw_fd()
            ])],
            nix::sys::socket::MsgFlags::empty(),
            None,
        )
        .expect("sendmsg");
    }
    assert!(alive(daemon));
    assert!(call(&ctl, "ping", json!({})).is_some());
    assert!(wait_until(5, || all_tapped(&env, &ctl, &panes)));
}

// ---------------------------------------------------------------------------
// 8. An agent started through a shim
// ---------------------------------------------------------------------------

/// A pane started as `env TEND_AGENT=claude sh -c 'exec <shim> …'`, the
/// shim a script named as the program it runs that first runs a child (a
/// version lookup, as pyenv, asdf and mise shims do) and then execs the
/// program: the pane reads the agent's dialog, never `exited` while the
/// program lives (the lookup inherits `TEND_AGENT`, and its end is not the
/// agent's), and `exited` once the program ends.
#[test]
fn an_agent_behind_a_shim_exits_only_when_it_ends() {
    let _serial = serial();
    let env = Env::new("flt-shim");
    // The pane stays when its program ends, to read `exited` on it.
    env.tmux(&["set", "-g", "remain-on-exit", "on"]);
    env.tend_ok(&["start"]);
    let shims = env.path().join("shims");
    std::fs::create_dir_all(&shims).expect("mkdir");
    let shim = shims.join("tend");
    std::fs::write(&shim, "#!/bin/sh\n/bin/sleep 1\nexec \"$REAL\" \"$@\"\n").expect("shim");
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // Held at its dialog (7.5 s into the recording) until input comes.
    let cast = corpus("claude/approval").join("pane.cast");
    let pane = env.window(
        "main",
        &format!(
            "env TEND_AGENT=claude REAL='{}' sh -c \"exec '{}' play '{}' --wait-input-at 9 --hold 600\"",
            tend_bin(),
            shim.display(),
            cast.display()
        ),
    );
    let pid: u32 = env
        .tmux_out(&["display", "-p", "-t", &pane, "#{pane_pid}"])
        .parse()
        .expect("pane pid");
    let read = || {
        env.tmux_out(&[
            "display",
            "-p",
            "-t",
            &pane,
            "#{@tend_agent}/#{@tend_state}/#{@tend_reason}",
        ])
    };
    // Every state the pane reads until the dialog has been shown for a
    // while; the state is read before the process, so `exited` read while
    // the process is alive was published while it was alive.
    let mut seen: Vec<String> = Vec::new();
    let mut dialog_since: Option<Instant> = None;
    let deadline = Instant::now() + Duration::from_secs(40);
    while Instant::now() < deadline {
        let s = read();
        let lives = alive(pid);
        if seen.last() != Some(&s) {
            seen.push(s.clone());
        }
        assert!(
            !(s.contains("/exited/") && lives),
            "exited while the program lives: {seen:?}\n{}",
            env.tend_ok(&["explain", &pane])
        );
        assert!(lives, "the program ended by itself: {seen:?}");
        if s == "claude/waiting/approval" {
            let since = *dialog_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= Duration::from_secs(2) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        dialog_since.is_some(),
        "the dialog was never read: {seen:?}\n{}",
        env.tend_ok(&["explain", &pane])
    );
    // The program ends: `exited`.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    assert!(
        wait_until(20, || read() == "claude/exited/"),
        "not exited once the program ended: {} {seen:?}",
        read()
    );
    assert!(!alive(pid));
    figure(format!(
        "agent behind a shim: states {seen:?}, exited once it ended"
    ));
}

// ---------------------------------------------------------------------------
// 9. Half-written control requests
// ---------------------------------------------------------------------------

/// The daemon's bound on unfinished control connections (`MAX_UNFINISHED`
/// in `daemon/ipc.rs`).
const MAX_UNFINISHED: usize = 256;

/// Room for `n` more descriptors in this process (and the daemon it
/// starts, which inherits the limit); `false` when the hard limit is lower.
fn room_for_descriptors(n: u64) -> bool {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return false;
    };
    let want = n + 1024;
    if soft >= want {
        return true;
    }
    want <= hard && setrlimit(Resource::RLIMIT_NOFILE, want, hard).is_ok()
}

/// Connections to the control socket holding the start of a request and
/// no newline, as a client that stalls mid-line.
fn half_written(sock: &Path, n: usize) -> Vec<UnixStream> {
    (0..n)
        .map(|i| {
            let mut s = UnixStream::connect(sock)
                .unwrap_or_else(|e| panic!("connection {i} of {n} refused: {e}"));
            s.write_all(br#"{"id":1,"method":"li"#).expect("write");
            s
        })
        .collect()
}

/// Reads what the daemon sends until it closes the connection; `None`
/// when it is still open after 30 s (three times its deadline).
fn until_closed(s: &mut UnixStream) -> Option<String> {
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut text = String::new();
    s.read_to_string(&mut text).ok().map(|_| text)
}

/// Connections that never finish their request line are closed by the
/// daemon after its deadline (10 s), the oldest at once beyond 256 open,
/// while `tend list` is answered and an `events` connection, whose request
/// was whole, stays open. With `TEND_TEST_SOAK=1`, 3000 of them, and the
/// daemon's memory comes back to within 3 MiB of what it was before.
#[test]
fn half_written_requests_are_closed_and_their_memory_returns() {
    let _serial = serial();
    let n = if soak() { 3000 } else { MAX_UNFINISHED + 44 };
    if !room_for_descriptors(n as u64) {
        support::skip(
            "half_written_requests_are_closed_and_their_memory_returns",
            &format!("no room for {n} more descriptors (RLIMIT_NOFILE)"),
        );
        return;
    }
    let env = Env::new("flt-half");
    let daemon = start_pid(&env);
    let ctl = control_socket(&env);
    for _ in 0..20 {
        env.tend_ok(&["list"]);
    }
    std::thread::sleep(Duration::from_millis(500));
    let before = rss_kib(daemon).expect("daemon rss");
    // A connection whose request is whole and that waits for pushes.
    let mut events = UnixStream::connect(&ctl).expect("connect");
    events
        .write_all(b"{\"id\":1,\"method\":\"events\",\"params\":{}}\n")
        .expect("write");
    events
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut ack = [0u8; 1];
    assert_eq!(events.read(&mut ack).expect("the subscription"), 1);
    let opened = Instant::now();
    let mut conns = half_written(&ctl, n);
    // The daemon answers meanwhile.
    let list: Value = serde_json::from_str(&env.tend_ok(&["list", "--json"])).expect("list");
    assert!(list.is_array(), "{list}");
    assert!(call(&ctl, "ping", json!({})).is_some());
    let during = rss_kib(daemon).expect("daemon rss");
    // Every one is closed by the daemon, with the reason: the oldest
    // beyond the bound at once, the rest at their deadline.
    let mut oldest = Vec::new();
    let mut deadline = Vec::new();
    for (i, s) in conns.iter_mut().enumerate() {
        let said = until_closed(s).unwrap_or_else(|| panic!("connection {i} still open"));
        if said.contains("the oldest, this one, was closed") {
            oldest.push(i);
        } else if said.contains("no complete request line within 10 s") {
            deadline.push(i);
        } else {
            panic!("connection {i} closed with {said:?}");
        }
    }
    let all_closed = opened.elapsed();
    drop(conns);
    assert!(
        oldest.len() >= n - MAX_UNFINISHED,
        "{} closed as the oldest",
        oldest.len()
    );
    assert!(!deadline.is_empty());
    assert!(
        oldest.iter().max() < deadline.iter().min(),
        "the oldest go first: {oldest:?} / {deadline:?}"
    );
    assert!(
        daemon_log(&env).contains("that had not finished their request line"),
        "{}",
        daemon_log(&env)
    );
    // The events connection is still open: whatever it was sent, no end.
    events.set_nonblocking(true).expect("nonblocking");
    let mut buf = [0u8; 4096];
    loop {
        match events.read(&mut buf) {
            Ok(0) => panic!("the events connection was closed"),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("the events connection failed: {e}"),
        }
    }
    assert!(call(&ctl, "ping", json!({})).is_some());
    assert!(alive(daemon));
    // The memory comes back once they are gone.
    let settled = wait_until(10, || {
        rss_kib(daemon).is_some_and(|r| r <= before + 3 * 1024)
    });
    let after = rss_kib(daemon).expect("daemon rss");
    figure(format!(
        "half-written requests: {n} connections, daemon RSS {before} kB before, {during} kB with them open, \
         {after} kB after; {} closed as the oldest, {} at the deadline, all within {:.1} s",
        oldest.len(),
        deadline.len(),
        all_closed.as_secs_f64()
    ));
    if soak() {
        assert!(settled, "RSS {before} kB before, {after} kB after");
    }
}
