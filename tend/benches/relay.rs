//! Relay benchmark (not a test: it measures): what `tend run -- COMMAND`
//! adds to a keystroke, to a frame and to the CPU, beside the same program
//! without it.
//!
//! ```text
//! cargo bench -p tend --bench relay                           # 500 pings, 32 MB, 3 s of each stream
//! cargo bench -p tend --bench relay -- --runs 2000 --frame 4096 --mb 64 --secs 10 --rounds 5
//! TEND_BENCH_BIN=/path/to/other/tend cargo bench -p tend --bench relay
//! ```
//!
//! Each program runs on a pty of the bench's own (the outer terminal, as
//! tmux gives a pane), either directly or under `tend run`. The program is
//! this bench again (`--child …`), so both paths run the same code.
//!
//! 1. **Latency**: the bench writes one byte to the outer terminal (a
//!    keystroke); the program reads it, notes the time, and writes a frame
//!    (`--frame` bytes, 2 KiB by default: a few redrawn rows of an agent's
//!    screen) holding the time it read the byte and the time it wrote the
//!    frame; the bench notes when the whole frame is back. *Keystroke*:
//!    written by the bench → read by the program. *Frame*: written by the
//!    program → read whole by the bench. Both on `CLOCK_MONOTONIC`, shared
//!    by every process. The direct and the relayed program run at once and
//!    are pinged alternately, with a pause of 1–4 ms between pings: p50,
//!    p99, max of each, side by side.
//! 2. **CPU, flat out**: the program writes `--mb` MB as fast as the
//!    terminal takes them; the CPU time (on-CPU time from
//!    `/proc/PID/task/*/schedstat`, every thread) of the relay (`tend run` and its session
//!    leader `tend run-session`) beside `cat` passing the same bytes from a
//!    pipe to the outer terminal (the floor of any process that copies a
//!    stream once), and beside `cat` passing them from a pty of its own to
//!    the outer terminal (the floor of any relay: a pty's reads cost the
//!    kernel more than a pipe's).
//! 3. **CPU, an agent streaming** for `--secs` seconds: the working turns
//!    recorded of Claude Code, Codex, Gemini CLI and aider
//!    (`tests/corpus/<agent>/working_then_done`) one after the other at
//!    their own pace, each for a quarter of the time, silences over 0.5 s
//!    cut to 0.5 s (denser than the real thing); and a spinner line redrawn at 60 Hz (the live bench's
//!    harshest steady redraw). The relay's and both `cat`s' CPU, % of one
//!    core.
//!
//! It fails only when it cannot run (no pty, no `tend` binary); the figures
//! are printed, never judged.

use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::pty::{openpty, Winsize};
use nix::sys::termios::{self, SetArg};
use nix::time::{clock_gettime, ClockId};
use nix::unistd;
use tend_detector::cast::{Cast, EventKind};

/// Nanoseconds on the clock every process shares.
fn now_ns() -> u64 {
    let t = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("clock");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// Puts the terminal on `fd` in raw mode (no echo, no line editing, no
/// output processing), as an agent's UI does.
fn raw(fd: BorrowedFd<'_>) {
    if let Ok(mut t) = termios::tcgetattr(fd) {
        termios::cfmakeraw(&mut t);
        let _ = termios::tcsetattr(fd, SetArg::TCSANOW, &t);
    }
}

fn read_some(fd: BorrowedFd<'_>, buf: &mut [u8]) -> usize {
    loop {
        match unistd::read(fd, buf) {
            Ok(n) => return n,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return 0,
        }
    }
}

fn write_all(fd: BorrowedFd<'_>, mut buf: &[u8]) -> bool {
    while !buf.is_empty() {
        match unistd::write(fd, buf) {
            Ok(0) => return false,
            Ok(n) => buf = &buf[n..],
            Err(nix::errno::Errno::EINTR) => {}
            Err(nix::errno::Errno::EAGAIN) => {
                let mut p = [PollFd::new(fd, PollFlags::POLLOUT)];
                let _ = poll(&mut p, PollTimeout::from(100u16));
            }
            Err(_) => return false,
        }
    }
    true
}

// ---------------------------------------------------------------------------
// The program, run directly or under `tend run` (`--child MODE …`).

/// `--child echo FRAME`: for each byte read, a frame of FRAME bytes:
/// `<read ns> <write ns> xxxx…\n`. `q` ends it.
fn child_echo(frame: usize) {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let (inp, out) = (stdin.as_fd(), stdout.as_fd());
    raw(inp);
    let mut b = [0u8; 64];
    loop {
        let n = read_some(inp, &mut b);
        let t_read = now_ns();
        if n == 0 || b[..n].contains(&b'q') {
            return;
        }
        let mut f = format!("{t_read} ").into_bytes();
        let t_write = now_ns();
        f.extend_from_slice(format!("{t_write} ").as_bytes());
        f.resize(frame.max(f.len() + 1) - 1, b'x');
        f.push(b'\n');
        if !write_all(out, &f) {
            return;
        }
    }
}

/// Says it is ready (`START`) and waits for the bench's go (a byte), so that
/// the bench reads the relay's CPU time after its start.
fn ready(inp: BorrowedFd<'_>, out: BorrowedFd<'_>) {
    write_all(out, b"START\n");
    let mut b = [0u8; 8];
    read_some(inp, &mut b);
}

/// `--child flat MB`: MB megabytes of printable lines as fast as they go,
/// then waits for a byte (the bench reads the CPU time meanwhile).
fn child_flat(mb: usize) {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    raw(stdin.as_fd());
    ready(stdin.as_fd(), stdout.as_fd());
    let line: Vec<u8> = (0..127u8)
        .map(|i| b' ' + (i % 94))
        .chain(std::iter::once(b'\n'))
        .collect();
    let block: Vec<u8> = line.iter().cycle().take(64 * 1024).copied().collect();
    let mut left = mb * 1_000_000;
    while left > 0 {
        let n = left.min(block.len());
        if !write_all(stdout.as_fd(), &block[..n]) {
            return;
        }
        left -= n;
    }
    let mut b = [0u8; 8];
    read_some(stdin.as_fd(), &mut b);
}

/// `--child agents SECS PATH…`: the recordings' output one after the
/// other, looped, at their own pace but with every pause longer than half
/// a second cut to half a second (the model's silences: a denser stream
/// than the real one), each for an equal share of SECS seconds; `--child spinner SECS`: a spinner
/// line redrawn at 60 Hz. Then the end marker, and a wait for a byte.
/// When the recording beside `cast` (its `labels.json`) starts working.
fn working_from(cast: &Path) -> Duration {
    let labels = cast.with_file_name("labels.json");
    let text = std::fs::read_to_string(&labels).expect("labels.json beside the recording");
    let v: serde_json::Value = serde_json::from_str(&text).expect("labels.json");
    v["timeline"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|l| l["state"] == "working")
        .and_then(|l| l["t"].as_f64())
        .map(Duration::from_secs_f64)
        .unwrap_or_default()
}

fn child_stream(mode: &str, secs: f64, paths: &[String]) {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    raw(stdin.as_fd());
    let out = stdout.as_fd();
    ready(stdin.as_fd(), out);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    if mode == "spinner" {
        let mut i = 0u64;
        let mut due = Instant::now();
        while due < end {
            i += 1;
            let line = format!("\r* Working… ({}s · esc to interrupt) frame {i}   ", i / 60);
            if !write_all(out, line.as_bytes()) {
                return;
            }
            due += Duration::from_micros(16_667);
            if let Some(d) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(d);
            }
        }
    } else {
        // Each recording from its labelled working turn on (what a relay
        // carries while the agent works, not its start-up screen).
        let casts: Vec<(Cast, Duration)> = paths
            .iter()
            .map(|p| {
                let cast =
                    Cast::parse(&std::fs::read_to_string(p).expect("recording")).expect("cast");
                (cast, working_from(Path::new(p)))
            })
            .collect();
        let gap_max = Duration::from_millis(500);
        // Each recording gets an equal share of the time, in turn.
        let share = Duration::from_secs_f64(secs / casts.len().max(1) as f64);
        let mut due = Instant::now();
        'all: loop {
            for (cast, from) in &casts {
                let mut last = *from;
                let until = (due + share).min(end);
                for ev in cast.events.iter().filter(|e| e.at >= *from) {
                    let EventKind::Output(b) = &ev.kind else {
                        continue;
                    };
                    due += ev.at.saturating_sub(last).min(gap_max);
                    last = ev.at;
                    if due > end {
                        break 'all;
                    }
                    if due > until {
                        due = until;
                        break;
                    }
                    if let Some(d) = due.checked_duration_since(Instant::now()) {
                        std::thread::sleep(d);
                    }
                    if !write_all(out, b) {
                        return;
                    }
                }
            }
        }
    }
    write_all(out, b"\x1b[0m\r\nEND\n");
    let mut b = [0u8; 8];
    read_some(stdin.as_fd(), &mut b);
}

// ---------------------------------------------------------------------------
// The bench's side.

/// A program on an outer terminal of its own.
struct Run {
    master: OwnedFd,
    /// The process whose CPU is counted: `tend run` (with its session
    /// leader), or `cat`; the program itself, directly.
    relay: Child,
    /// The program, when it is not `relay`'s descendant.
    program: Option<Child>,
}

#[derive(Clone, Copy, PartialEq)]
enum Via {
    Direct,
    Relay,
    Cat,
    /// `cat` reading the program's output from a pty of its own, as any
    /// relay must: what the kernel's pty costs beside a pipe is not the
    /// relay's.
    CatPty,
}

impl Via {
    fn name(self) -> &'static str {
        match self {
            Via::Direct => "direct",
            Via::Relay => "tend run",
            Via::Cat => "cat",
            Via::CatPty => "cat (pty)",
        }
    }
}

fn spawn(via: Via, tend: &Path, child_args: &[OsString]) -> Run {
    let size = Winsize {
        ws_row: 40,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = openpty(Some(&size), None).expect("openpty");
    raw(pty.slave.as_fd());
    let me = std::env::current_exe().expect("current_exe");
    let tty = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup"));
    let mut program = Command::new(&me);
    program
        .arg("--child")
        .args(child_args)
        .env_remove("TEND_RUN");
    let (relay, prog) = match via {
        Via::Direct => {
            program
                .stdin(tty(&pty.slave))
                .stdout(tty(&pty.slave))
                .stderr(tty(&pty.slave));
            (program.spawn().expect("the program"), None)
        }
        Via::Relay => {
            let mut c = Command::new(tend);
            c.arg("run")
                .arg("--")
                .arg(&me)
                .arg("--child")
                .args(child_args)
                .env_remove("TEND_RUN")
                .stdin(tty(&pty.slave))
                .stdout(tty(&pty.slave))
                .stderr(tty(&pty.slave));
            (c.spawn().expect("tend run"), None)
        }
        Via::Cat => {
            program
                .stdin(tty(&pty.slave))
                .stdout(Stdio::piped())
                .stderr(Stdio::null());
            let mut p = program.spawn().expect("the program");
            let out = p.stdout.take().expect("pipe");
            let cat = Command::new("cat")
                .stdin(Stdio::from(out))
                .stdout(tty(&pty.slave))
                .stderr(Stdio::null())
                .spawn()
                .expect("cat");
            (cat, Some(p))
        }
        Via::CatPty => {
            let inner = openpty(Some(&size), None).expect("openpty");
            raw(inner.slave.as_fd());
            program
                .stdin(tty(&pty.slave))
                .stdout(tty(&inner.slave))
                .stderr(Stdio::null());
            let p = program.spawn().expect("the program");
            let cat = Command::new("cat")
                .stdin(Stdio::from(inner.master))
                .stdout(tty(&pty.slave))
                .stderr(Stdio::null())
                .spawn()
                .expect("cat");
            (cat, Some(p))
        }
    };
    drop(pty.slave);
    Run {
        master: pty.master,
        relay,
        program: prog,
    }
}

impl Run {
    /// On-CPU nanoseconds of the relaying processes: `tend run` and its
    /// children (`tend run-session`; the program below it is left out),
    /// or `cat`.
    fn cpu_ns(&self, via: Via) -> u64 {
        let pid = self.relay.id();
        let mut sum = tend_testkit::cpu_ns(pid);
        if via == Via::Relay {
            for c in children(pid) {
                sum += tend_testkit::cpu_ns(c);
            }
        }
        sum
    }

    fn write(&self, b: &[u8]) {
        assert!(write_all(self.master.as_fd(), b), "the terminal is gone");
    }

    /// Reads until `end` has been seen (or the terminal closes); the bytes.
    fn read_until(&self, end: &[u8], buf: &mut Vec<u8>, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            if buf.windows(end.len()).any(|w| w == end) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let ms = left.as_millis().min(60_000) as u16;
            let mut p = [PollFd::new(self.master.as_fd(), PollFlags::POLLIN)];
            match poll(&mut p, PollTimeout::from(ms)) {
                Ok(n) if n > 0 => {}
                _ => continue,
            }
            let n = read_some(self.master.as_fd(), &mut chunk);
            if n == 0 {
                return false;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Reads and counts bytes until `done(bytes so far, the last chunk)`
    /// says so, the program closes or `limit` passes; the bytes read.
    fn drain(&self, limit: Duration, mut done: impl FnMut(usize, &[u8]) -> bool) -> usize {
        let deadline = Instant::now() + limit;
        let mut chunk = vec![0u8; 64 * 1024];
        let mut got = 0;
        while Instant::now() < deadline {
            let mut p = [PollFd::new(self.master.as_fd(), PollFlags::POLLIN)];
            match poll(&mut p, PollTimeout::from(500u16)) {
                Ok(n) if n > 0 => {}
                _ => continue,
            }
            let n = read_some(self.master.as_fd(), &mut chunk);
            if n == 0 {
                break;
            }
            got += n;
            if done(got, &chunk[..n]) {
                break;
            }
        }
        got
    }

    fn end(mut self) {
        let _ = write_all(self.master.as_fd(), b"q");
        let deadline = Instant::now() + Duration::from_secs(5);
        // Keep reading so that nothing blocks on a full terminal.
        let mut chunk = vec![0u8; 64 * 1024];
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.relay.try_wait() {
                break;
            }
            let mut p = [PollFd::new(self.master.as_fd(), PollFlags::POLLIN)];
            if let Ok(n) = poll(&mut p, PollTimeout::from(20u16)) {
                if n > 0 && read_some(self.master.as_fd(), &mut chunk) == 0 {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        let _ = self.relay.kill();
        let _ = self.relay.wait();
        if let Some(mut p) = self.program.take() {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
}

fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let i = ((v.len() - 1) as f64 * p).round() as usize;
    v[i]
}

/// One ping: a keystroke in, a frame back. (keystroke µs, frame µs).
fn ping(run: &Run, buf: &mut Vec<u8>) -> Option<(f64, f64)> {
    buf.clear();
    let t0 = now_ns();
    run.write(b"k");
    if !run.read_until(b"\n", buf, Duration::from_secs(5)) {
        return None;
    }
    let t3 = now_ns();
    let text = String::from_utf8_lossy(buf);
    let mut w = text.split_whitespace();
    let t1: u64 = w.next()?.parse().ok()?;
    let t2: u64 = w.next()?.parse().ok()?;
    Some((
        t1.saturating_sub(t0) as f64 / 1000.0,
        t3.saturating_sub(t2) as f64 / 1000.0,
    ))
}

fn latency(tend: &Path, runs: usize, frame: usize) {
    println!("\n== latency: a keystroke in, a {frame}-byte frame out, {runs} pings each, alternating (µs)");
    let args: Vec<OsString> = vec!["echo".into(), frame.to_string().into()];
    let paths = [Via::Direct, Via::Relay];
    let live: Vec<Run> = paths.iter().map(|&v| spawn(v, tend, &args)).collect();
    // Until each answers (the relay's start, the program's raw mode).
    let mut buf = Vec::new();
    for r in &live {
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(50));
            ping(r, &mut buf).expect("the program answers");
        }
    }
    let mut keys: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    let mut frames: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for i in 0..runs * paths.len() {
        // A pause of 1–4 ms, so the pings never queue behind each other.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(1000 + seed % 3000));
        let k = i % paths.len();
        if let Some((key, fr)) = ping(&live[k], &mut buf) {
            keys[k].push(key);
            frames[k].push(fr);
        }
    }
    println!(
        "{:<10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "path", "key p50", "key p99", "key max", "frm p50", "frm p99", "frm max"
    );
    let mut p50 = Vec::new();
    for (k, v) in paths.iter().enumerate() {
        let (kp50, kp99, kmax) = (
            pct(&mut keys[k], 0.5),
            pct(&mut keys[k], 0.99),
            pct(&mut keys[k], 1.0),
        );
        let (fp50, fp99, fmax) = (
            pct(&mut frames[k], 0.5),
            pct(&mut frames[k], 0.99),
            pct(&mut frames[k], 1.0),
        );
        println!(
            "{:<10} {kp50:>8.1} {kp99:>8.1} {kmax:>8.1} {fp50:>8.1} {fp99:>8.1} {fmax:>8.1}",
            v.name()
        );
        p50.push((kp50, fp50, kp99, fp99));
    }
    if let [d, r] = p50[..] {
        println!(
            "added by the relay: keystroke p50 +{:.1} µs (p99 +{:.1}), frame p50 +{:.1} µs (p99 +{:.1})",
            r.0 - d.0,
            r.2 - d.2,
            r.1 - d.1,
            r.3 - d.3
        );
    }
    for r in live {
        r.end();
    }
}

/// CPU of the relaying process while the program writes, from the go to
/// the end of the stream: (ms on CPU, seconds of wall time, bytes).
fn cpu(via: Via, tend: &Path, args: &[OsString], total: Option<usize>) -> (f64, f64, usize) {
    let run = spawn(via, tend, args);
    let mut buf = Vec::new();
    assert!(
        run.read_until(b"START\n", &mut buf, Duration::from_secs(10)),
        "{}: the program never started",
        via.name()
    );
    let base = run.cpu_ns(via);
    let t = Instant::now();
    run.write(b"g");
    let limit = Duration::from_secs(120);
    let got = match total {
        Some(n) => run.drain(limit, |got, _| got >= n),
        None => {
            // The end marker is at the end: only the tail is kept.
            let mut tail: Vec<u8> = Vec::new();
            run.drain(limit, |_, chunk| {
                tail.extend_from_slice(chunk);
                let cut = tail.len().saturating_sub(8);
                tail.drain(..cut);
                tail.windows(4).any(|w| w == b"END\n")
            })
        }
    };
    let wall = t.elapsed().as_secs_f64();
    let ns = run.cpu_ns(via).saturating_sub(base);
    run.end();
    (ns as f64 / 1e6, wall, got)
}

fn median(mut v: Vec<f64>) -> f64 {
    pct(&mut v, 0.5)
}

/// What the relay is measured beside, and the relay: `cat` from a pipe,
/// `cat` from a pty, `tend run`.
const VIAS: [Via; 3] = [Via::Cat, Via::CatPty, Via::Relay];

/// `rounds` runs of the load through each of [`VIAS`], alternately;
/// medians of each: (ms on CPU, wall s, bytes).
fn cpu_rounds(
    tend: &Path,
    args: &[OsString],
    total: Option<usize>,
    rounds: usize,
) -> [(f64, f64, f64); 3] {
    let mut runs: [Vec<(f64, f64, usize)>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        for (k, via) in VIAS.into_iter().enumerate() {
            let r = cpu(via, tend, args, total);
            if let Some(n) = total {
                assert!(r.2 >= n, "{}: only {} bytes arrived", via.name(), r.2);
            }
            runs[k].push(r);
        }
    }
    [0, 1, 2].map(|k| {
        (
            median(runs[k].iter().map(|r| r.0).collect()),
            median(runs[k].iter().map(|r| r.1).collect()),
            median(runs[k].iter().map(|r| r.2 as f64).collect()),
        )
    })
}

/// The agents whose recorded working turns make the *agents* stream (as in
/// the live bench's *agents* load).
const AGENTS: [&str; 4] = ["claude", "codex", "gemini", "aider"];

fn tend_binary() -> PathBuf {
    std::env::var_os("TEND_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tend")))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let a = |j: usize| args.get(i + j).cloned().unwrap_or_default();
        match a(1).as_str() {
            "echo" => child_echo(a(2).parse().unwrap_or(2048)),
            "flat" => child_flat(a(2).parse().unwrap_or(32)),
            m @ ("agents" | "spinner") => child_stream(
                m,
                a(2).parse().unwrap_or(3.0),
                args.get(i + 3..).unwrap_or_default(),
            ),
            m => eprintln!("unknown child mode {m}"),
        }
        return;
    }
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let runs: usize = get("--runs").and_then(|v| v.parse().ok()).unwrap_or(500);
    let frame: usize = get("--frame").and_then(|v| v.parse().ok()).unwrap_or(2048);
    let mb: usize = get("--mb").and_then(|v| v.parse().ok()).unwrap_or(32);
    let secs: f64 = get("--secs").and_then(|v| v.parse().ok()).unwrap_or(3.0);
    let rounds: usize = get("--rounds")
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let tend = tend_binary();
    if !tend.exists() {
        eprintln!("{} does not exist", tend.display());
        std::process::exit(1);
    }
    println!(
        "relay bench: {} ({} cores)",
        tend.display(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if runs > 0 {
        latency(&tend, runs, frame);
    }
    if mb > 0 {
        println!(
            "\n== CPU, flat out: {mb} MB of text through the outer terminal (median of {rounds})"
        );
        let args: Vec<OsString> = vec!["flat".into(), mb.to_string().into()];
        let [c, cp, r] = cpu_rounds(&tend, &args, Some(mb * 1_000_000), rounds);
        for (via, (ms, wall, _)) in [(Via::Cat, c), (Via::CatPty, cp), (Via::Relay, r)] {
            println!(
                "{:<10} {ms:>7.1} ms on CPU ({:.2} ms/MB, {:.0} MB/s wall)",
                via.name(),
                ms / mb as f64,
                mb as f64 / wall,
            );
        }
        println!(
            "relay/cat: {:.2}× the CPU; relay/cat (pty): {:.2}×",
            r.0 / c.0,
            r.0 / cp.0
        );
    }
    if secs > 0.0 {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
        let recordings: Vec<OsString> = AGENTS
            .iter()
            .map(|a| {
                corpus
                    .join(a)
                    .join("working_then_done/pane.cast")
                    .into_os_string()
            })
            .collect();
        for (load, what) in [
            (
                "agents",
                format!(
                    "the working turns of {} (tests/corpus/<agent>/working_then_done), pauses cut to 0.5 s",
                    AGENTS.join(", ")
                ),
            ),
            ("spinner", "a spinner line redrawn at 60 Hz".to_owned()),
        ] {
            println!("\n== CPU, an agent streaming for {secs} s (median of {rounds}): {what}");
            let mut args: Vec<OsString> = vec![load.into(), secs.to_string().into()];
            if load == "agents" {
                args.extend(recordings.iter().cloned());
            }
            let [c, cp, r] = cpu_rounds(&tend, &args, None, rounds);
            for (via, (ms, wall, got)) in [(Via::Cat, c), (Via::CatPty, cp), (Via::Relay, r)] {
                println!(
                    "{:<10} {ms:>7.1} ms on CPU over {wall:.1} s = {:.3} % of a core ({:.1} KB/s through)",
                    via.name(),
                    ms / 10.0 / wall,
                    got / 1000.0 / wall,
                );
            }
            println!(
                "relay/cat: {:.2}× the CPU; relay/cat (pty): {:.2}×; the relay adds {:.3} % of a core to cat (pty)",
                r.0 / c.0,
                r.0 / cp.0,
                (r.0 / r.1 - cp.0 / cp.1) / 10.0
            );
        }
    }
}
