//! Live benchmark against a real tmux server (not a test: it measures).
//!
//! ```text
//! cargo bench -p tend --bench live                      # latency + 10 and 50 panes
//! cargo bench -p tend --bench live -- --latency-runs 100 --panes 10,50,200 --secs 30
//! TEND_BENCH_AGENTS=claude,codex cargo bench -p tend --bench live -- --load agents
//! TEND_BENCH_BIN=/path/to/other/tend cargo bench -p tend --bench live    # another build
//! ```
//!
//! 1. **Latency**: a pane whose process is an identified agent alternates
//!    between a working frame (then a spinner redrawn for a second) and an
//!    approval dialog (frames rendered from the `claude/approval` recording). Time from the dialog's bytes being
//!    written to `@tend_state` reading `waiting`, over N runs: p50, p99,
//!    max. Twice: the agent declared with `TEND_AGENT=claude`, and the agent
//!    known only from its process tree (`node …/@anthropic-ai/claude-code/
//!    cli.js`, a real `node` printing the frames, as Claude Code ran before
//!    its native build), so that a delay in the identity path shows.
//! 2. **Cost**: N panes streaming (a spinner line at 60 Hz, as a working
//!    agent redraws) for S seconds; CPU (user+system, % of one core) and
//!    memory of the daemon (RSS) and of the taps (PSS, summed), and the tmux
//!    server's CPU; then the same panes watched instead by a `capture-pane`
//!    poller at 500 ms (what polling plugins do), side by side.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tend_detector::cast::Cast;

struct Server {
    name: String,
    dir: tempfile::TempDir,
    tend: PathBuf,
}

impl Server {
    fn new(tag: &str) -> Server {
        let name = format!("tend-bench-{tag}-{}", std::process::id());
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["run", "state", "config"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        let tend = tend_binary();
        let s = Server { name, dir, tend };
        common::start_server(&s.name);
        s
    }
    fn tmux(&self, args: &[&str]) -> String {
        common::tmux(&self.name, args)
    }
    fn tend(&self, args: &[&str]) -> String {
        let d = self.dir.path();
        let o = Command::new(&self.tend)
            .env("XDG_RUNTIME_DIR", d.join("run"))
            .env("XDG_STATE_HOME", d.join("state"))
            .env("XDG_CONFIG_HOME", d.join("config"))
            .env_remove("TMUX")
            .arg("-L")
            .arg(&self.name)
            .args(args)
            .output()
            .expect("tend");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.tend(&["stop"]);
        self.tmux(&["kill-server"]);
    }
}

/// CPU time of `pid` itself, in nanoseconds, from the scheduler's own
/// accounting (`/proc/PID/schedstat`; exact, where the tick-sampled
/// `utime`/`stime` charge whole 10 ms ticks and show a tap that runs for
/// microseconds at a time as 0 or as 10 ms).
fn cpu_ns(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// CPU ticks of the children `pid` waited for: for the daemon, the tmux
/// commands it runs (publishing, listing, capturing) are its cost too.
fn children_ticks(pid: u32) -> u64 {
    stat_ticks(pid, true) - stat_ticks(pid, false)
}

fn stat_ticks(pid: u32, children: bool) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime, stime; then cutime, cstime.
    get(11) + get(12) + if children { get(13) + get(14) } else { 0 }
}

fn status_kb(pid: u32, key: &str, file: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn pids_named(pattern: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(pattern) {
            out.push(pid);
        }
    }
    out
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// How the latency pane's agent is known.
#[derive(Clone, Copy, PartialEq)]
enum Identity {
    /// `TEND_AGENT=claude` in its environment.
    Declared,
    /// Only its process tree: `node …/@anthropic-ai/claude-code/cli.js`.
    ProcessTree,
}

fn latency(runs: usize, identity: Identity) {
    let s = Server::new(match identity {
        Identity::Declared => "lat",
        Identity::ProcessTree => "lattree",
    });
    s.tend(&["start"]);
    let cast_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/claude/approval/pane.cast");
    let cast = Cast::parse(&std::fs::read_to_string(cast_path).expect("cast")).expect("parse");
    let working = common::frame_at(&cast, 7.0);
    let dialog = common::frame_at(&cast, 15.0);
    let fifo = s.dir.path().join("agent.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
    // The pane's agent: reads frames from the fifo and prints them.
    let cmd = match identity {
        Identity::Declared => format!(
            "env TEND_AGENT=claude sh -c 'printf \"\\033[?1049h\"; exec cat \"{}\"'",
            fifo.display()
        ),
        Identity::ProcessTree => {
            let pkg = s.dir.path().join("node_modules/@anthropic-ai/claude-code");
            std::fs::create_dir_all(&pkg).expect("package dir");
            let cli = pkg.join("cli.js");
            std::fs::write(
                &cli,
                "process.stdout.write('\\x1b[?1049h');\n\
                 const fs = require('fs');\n\
                 const fd = fs.openSync(process.argv[2], 'r');\n\
                 const buf = Buffer.alloc(1 << 16);\n\
                 for (;;) {\n\
                   const n = fs.readSync(fd, buf, 0, buf.length, null);\n\
                   if (n === 0) break;\n\
                   fs.writeSync(1, buf.subarray(0, n));\n\
                 }\n",
            )
            .expect("cli.js");
            format!("exec node '{}' '{}'", cli.display(), fifo.display())
        }
    };
    let pane = s.tmux(&["new-window", "-d", "-P", "-F", "#{pane_id}", &cmd]);
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open fifo");
    let state = |s: &Server| s.tmux(&["show-options", "-pqv", "-t", &pane, "@tend_state"]);
    let wait = |want: &str, limit: Duration| -> Option<Duration> {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if state(&s) == want {
                return Some(t0.elapsed());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        None
    };
    w.write_all(&working).expect("write");
    wait("working", Duration::from_secs(20)).expect("pane never identified as working");
    let mut lat = Vec::new();
    for _ in 0..runs {
        w.write_all(&working).expect("write");
        wait("working", Duration::from_secs(5));
        // Past the strong lock, with one row redrawn every 50 ms as a
        // working agent's spinner does: the detector reads an unchanging
        // verdict less often (`eval_interval_max`), and the dialog must
        // still be read at once. (Frames written whole and then silence
        // hid a 200 ms wait that real agents showed.)
        for i in 0..20 {
            w.write_all(format!("\x1b7\x1b[1;1H{}\x1b8", ['|', '/', '-', '\\'][i % 4]).as_bytes())
                .expect("write");
            std::thread::sleep(Duration::from_millis(50));
        }
        let t0 = Instant::now();
        w.write_all(&dialog).expect("write");
        w.flush().ok();
        if wait("waiting", Duration::from_secs(5)).is_some() {
            lat.push(t0.elapsed().as_secs_f64() * 1000.0);
        }
    }
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    println!(
        "latency dialog→@tend_state  agent={} runs={} p50={:.1}ms p99={:.1}ms max={:.1}ms (poll resolution ~1ms + a tmux call)",
        match identity {
            Identity::Declared => "TEND_AGENT",
            Identity::ProcessTree => "process-tree",
        },
        lat.len(),
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        lat.last().copied().unwrap_or(f64::NAN)
    );
}

/// What the panes of a cost run print.
#[derive(Clone, Copy, PartialEq)]
enum Load {
    /// A spinner line redrawn at 60 Hz (the harshest steady redraw).
    Spinner60Hz,
    /// Real agents' working turns replayed in a loop (claude, codex,
    /// gemini, aider in turn).
    Agents,
    /// Agents at their prompt, printing nothing.
    Idle,
}

fn cost(panes: usize, secs: u64, load: Load) {
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    // One process per pane (a shell loop forking `sleep` 60 times a second
    // per pane measured the forks: 12,000 a second at 200 panes).
    let spinner = "env TEND_AGENT=claude python3 -u -c 'import sys,time\ni=0\nwhile True:\n i+=1\n sys.stdout.write(\"\\r* Working… (%ds · esc to interrupt) frame %d   \" % (i//60, i))\n sys.stdout.flush()\n time.sleep(1/60)'";
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let s = Server::new(&format!("cost{panes}-{}", load as u8));
    let list =
        std::env::var("TEND_BENCH_AGENTS").unwrap_or_else(|_| "claude,codex,gemini,aider".into());
    let agents: Vec<&str> = list.split(',').filter(|a| !a.is_empty()).collect();
    for i in 0..panes {
        let agent = agents[i % agents.len()];
        let cmd = match load {
            Load::Spinner60Hz => spinner.to_owned(),
            Load::Agents => format!(
                "env TEND_AGENT={agent} '{}' play '{}' --repeat",
                s.tend.display(),
                corpus
                    .join(agent)
                    .join("working_then_done/pane.cast")
                    .display()
            ),
            Load::Idle => format!(
                "env TEND_AGENT={agent} '{}' play '{}'",
                s.tend.display(),
                corpus.join(agent).join("idle/pane.cast").display()
            ),
        };
        s.tmux(&["new-window", "-d", &cmd]);
    }
    let label = match load {
        Load::Spinner60Hz => "60Hz",
        Load::Agents => "agents",
        Load::Idle => "idle",
    };
    let server_pid: u32 = s.tmux(&["display", "-p", "#{pid}"]).parse().unwrap_or(0);
    std::thread::sleep(Duration::from_secs(2));
    // Phase A: tend.
    s.tend(&["start"]);
    std::thread::sleep(Duration::from_secs(3));
    let dpid = pids_named(&format!(
        "daemon -S /tmp/tmux-{}/{}",
        nix::unistd::getuid(),
        s.name
    ));
    let dpid = dpid.first().copied().unwrap_or(0);
    let taps = pids_named(&format!("{}", s.dir.path().join("run").display()))
        .into_iter()
        .filter(|p| *p != dpid)
        .collect::<Vec<_>>();
    let d0 = cpu_ns(dpid);
    let dc0 = children_ticks(dpid);
    let t0: u64 = taps.iter().map(|p| cpu_ns(*p)).sum();
    let s0 = cpu_ns(server_pid);
    std::thread::sleep(Duration::from_secs(secs));
    let d1 = cpu_ns(dpid);
    let dc1 = children_ticks(dpid);
    let t1: u64 = taps.iter().map(|p| cpu_ns(*p)).sum();
    let s1 = cpu_ns(server_pid);
    let rss = status_kb(dpid, "VmRSS:", "status");
    let pss: u64 = taps
        .iter()
        .map(|p| status_kb(*p, "Pss:", "smaps_rollup"))
        .sum();
    let per = |a: u64, b: u64| (b.saturating_sub(a)) as f64 / 1e9 / secs as f64 * 100.0;
    let per_ticks = |a: u64, b: u64| (b.saturating_sub(a)) as f64 / hz / secs as f64 * 100.0;
    // Everything tend runs: the daemon, its tmux commands, and any process
    // per pane (taps that stay; none since they hand their pipe over).
    let total_cpu = per(d0, d1) + per_ticks(dc0, dc1) + per(t0, t1);
    let total_mb = (rss + pss) as f64 / 1024.0;
    println!(
        "tend    {label:<6} panes={panes:>3} daemon cpu={:.2}% (+ its tmux commands {:.2}%) rss={:.1}MB | taps({}) cpu={:.2}% pss={:.1}MB | all of tend cpu={:.2}% mem={:.1}MB | tmux server cpu={:.2}%",
        per(d0, d1),
        per_ticks(dc0, dc1),
        rss as f64 / 1024.0,
        taps.len(),
        per(t0, t1),
        pss as f64 / 1024.0,
        total_cpu,
        total_mb,
        per(s0, s1)
    );
    s.tend(&["stop"]);
    std::thread::sleep(Duration::from_secs(1));
    // Phase B: a capture-pane poller at 500 ms on the same panes.
    let ids: Vec<String> = s
        .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .map(str::to_owned)
        .collect();
    let me0 = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("rusage");
    let s0 = cpu_ns(server_pid);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        let tick = Instant::now();
        for id in &ids {
            let _ = Command::new("tmux")
                .args(["-L", &s.name, "capture-pane", "-p", "-t", id])
                .stdout(Stdio::null())
                .status();
        }
        if let Some(rest) = Duration::from_millis(500).checked_sub(tick.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    let me1 = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("rusage");
    let s1 = cpu_ns(server_pid);
    let tv = |u: nix::sys::time::TimeVal| u.tv_sec() as f64 + u.tv_usec() as f64 / 1e6;
    let poll_cpu =
        (tv(me1.user_time()) + tv(me1.system_time()) - tv(me0.user_time()) - tv(me0.system_time()))
            / secs as f64
            * 100.0;
    println!(
        "poller  {label:<6} panes={panes:>3} capture-pane processes cpu={:.2}% | tmux server cpu={:.2}%  (500 ms interval, {} captures)",
        poll_cpu,
        per(s0, s1),
        ids.len() as u64 * secs * 2
    );
}

/// The `tend` under test: the one cargo built for this bench (release
/// profile, wherever the target directory is), or `TEND_BENCH_BIN` (to set
/// two builds side by side).
fn tend_binary() -> PathBuf {
    std::env::var_os("TEND_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tend")))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let runs: usize = get("--latency-runs")
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let secs: u64 = get("--secs").and_then(|v| v.parse().ok()).unwrap_or(15);
    let panes: Vec<usize> = get("--panes")
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![10, 50]);
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let release = tend_binary();
    if !release.exists() {
        eprintln!(
            "{} does not exist: build the release binary first (cargo build --release -p tend)",
            release.display()
        );
        return;
    }
    let loads: Vec<Load> = get("--load")
        .map(|v| {
            v.split(',')
                .filter_map(|l| match l {
                    "60hz" => Some(Load::Spinner60Hz),
                    "agents" => Some(Load::Agents),
                    "idle" => Some(Load::Idle),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_else(|| vec![Load::Agents, Load::Spinner60Hz, Load::Idle]);
    if runs > 0 {
        latency(runs, Identity::Declared);
        if Command::new("node").arg("--version").output().is_ok() {
            latency(runs, Identity::ProcessTree);
        } else {
            println!("latency with a process-tree agent: skipped (no `node` on PATH)");
        }
    }
    for load in loads {
        for &n in &panes {
            cost(n, secs, load);
        }
    }
}
