//! Live benchmark against a real tmux server (not a test: it measures).
//!
//! ```text
//! cargo bench -p tend --bench live                      # latency + 10 and 50 panes
//! cargo bench -p tend --bench live -- --latency-runs 100 --panes 10,50,200 --secs 30
//! cargo bench -p tend --bench live -- --latency-runs 40 --latency-busy 9 --panes 10 --load agents
//! cargo bench -p tend --bench live -- --latency-runs 0 --floor 20,30 --panes 10 --load agents,real --rounds 0
//! cargo bench -p tend --bench live -- --latency-runs 0 --floor 30 --floor-work screen,detector --panes 10 --load agents
//! TEND_BENCH_AGENTS=claude,codex cargo bench -p tend --bench live -- --load agents
//! TEND_BENCH_BIN=/path/to/other/tend cargo bench -p tend --bench live    # another build
//! TEND_BENCH_BEFORE=/tmp/tend-before cargo bench -p tend --bench live -- --rounds 3 --load agents,real
//! TEND_BENCH_BEFORE=/tmp/tend-before cargo bench -p tend --bench live -- \
//!     --latency-runs 0 --together 3 --secs 40 --settle 8 --panes 10 --load agents,real
//! ```
//!
//! With `TEND_BENCH_BEFORE` each cell is measured for that build and this
//! one alternately, `--rounds` times (latency: `--latency-rounds`, runs
//! pooled), and a table of medians closes the run: two builds side by side
//! on the same machine in the same minutes. With `--together N` the cost
//! cells are measured instead with every build watching its own copy of the
//! load at once, over the same N windows (the figures to compare two builds
//! by on a noisy machine).
//!
//! 1. **Latency**: a pane whose process is an identified agent alternates
//!    between a working frame (then a spinner redrawn for a second) and an
//!    approval dialog (frames rendered from the `claude/approval` recording). Time from the dialog's bytes being
//!    written to `@tend_state` reading `waiting`, over N runs: p50, p99,
//!    max. Twice: the agent declared with `TEND_AGENT=claude`, and the agent
//!    known only from its process tree (`node …/@anthropic-ai/claude-code/
//!    cli.js`, a real `node` printing the frames, as Claude Code ran before
//!    its native build), so that a delay in the identity path shows; and
//!    the latter again beside `--latency-busy` (9) panes replaying working
//!    agents, so that the delay of a daemon busy with other panes shows.
//! 2. **Floor** (`--floor MS,…`): the same panes' pipes handed over by
//!    `tend tap` to this bench and read on a tick of MS, nothing parsed:
//!    what waking and reading alone cost on this machine, the part of
//!    tend's cost no work of its own can remove. Under the cost table each
//!    build's CPU is printed over it (`over the floor`: a ratio from one
//!    run, which a noisy machine moves less than a percentage). With
//!    `--floor-work screen,detector` the floor is measured again with each
//!    pane's bytes through an emulator of its own, then through a whole
//!    detector with its agent's manifest: what any reader of these screens
//!    pays, and what detection costs without the daemon around it.
//! 3. **Cost**: N panes streaming (a spinner line at 60 Hz, as a working
//!    agent redraws) for S seconds; CPU (user+system, % of one core) and
//!    memory of the daemon (RSS) and of the taps (PSS, summed), and the tmux
//!    server's CPU, and the tmux processes the daemon starts per second
//!    (counted with `strace -f -e trace=execve` in a window of its own);
//!    then the same panes, on a fresh server, watched instead by a
//!    `capture-pane` poller at 500 ms (what polling plugins do).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tend_detector::cast::Cast;
use tend_testkit::cpu_ns;

struct Server {
    name: String,
    dir: tempfile::TempDir,
    tend: PathBuf,
}

impl Server {
    fn new(tag: &str, tend: &Path) -> Server {
        // A name of its own each time: `kill-server` returns before the
        // server is gone, and a next server of the same name would meet it.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("tend-bench-{tag}-{}-{n}", std::process::id());
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["run", "state", "config"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        let tend = tend.to_path_buf();
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

/// Dialog → `@tend_state` delays in milliseconds, `runs` of them, with
/// `busy` other panes printing beside the pane (the *agents* load: each
/// replays a real agent's working turn), so that the delay a busy daemon
/// adds shows too.
fn latency(runs: usize, identity: Identity, busy: usize, bin: &Path) -> Vec<f64> {
    let s = Server::new(
        match identity {
            Identity::Declared => "lat",
            Identity::ProcessTree => "lattree",
        },
        bin,
    );
    for i in 0..busy {
        s.tmux(&["new-window", "-d", &load_command(&s, Load::Agents, i)]);
    }
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
    lat
}

fn latency_line(label: &str, identity: Identity, busy: usize, mut lat: Vec<f64>) {
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    println!(
        "latency dialog→@tend_state  {label:<6} agent={}{} runs={} p50={:.1}ms p99={:.1}ms max={:.1}ms (poll resolution ~1ms + a tmux call)",
        match identity {
            Identity::Declared => "TEND_AGENT",
            Identity::ProcessTree => "process-tree",
        },
        if busy > 0 {
            format!(" beside {busy} busy agents")
        } else {
            String::new()
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
    /// gemini, aider in turn; Gemini's 200×50 recording redraws whole
    /// frames at ~61 KB/s).
    Agents,
    /// Every verified agent's working turn at 80×24
    /// (`tests/corpus/<agent>/working_then_done@80x24`), in turn: the
    /// output rates of real working agents (0.3–11 KB/s).
    Real,
    /// Agents at their prompt, printing nothing.
    Idle,
}

impl Load {
    fn label(self) -> &'static str {
        match self {
            Load::Spinner60Hz => "60Hz",
            Load::Agents => "agents",
            Load::Real => "real",
            Load::Idle => "idle",
        }
    }
}

/// The agents whose `working_then_done@80x24` the *real* load replays.
const REAL_AGENTS: &[&str] = &[
    "aider", "claude", "codex", "gemini", "grok", "kilo", "opencode", "pi", "qwen",
];

/// One build's cost in one cell (CPU in % of one core, memory in MB).
#[derive(Clone, Copy, Default)]
struct TendCost {
    daemon: f64,
    commands: f64,
    taps: f64,
    total: f64,
    rss: f64,
    mem: f64,
    server: f64,
    /// tmux processes the daemon started per second (`NaN`: not counted).
    spawns: f64,
}

/// The poller's cost in one cell.
#[derive(Clone, Copy, Default)]
struct PollCost {
    cpu: f64,
    server: f64,
}

/// A server with `panes` panes printing `load`, for a cost run.
fn cost_server(panes: usize, load: Load, bin: &Path) -> Server {
    let s = Server::new(&format!("cost{panes}-{}", load.label()), bin);
    for i in 0..panes {
        s.tmux(&["new-window", "-d", &load_command(&s, load, i)]);
    }
    s
}

/// The command of the `i`-th pane of `load` on server `s`.
fn load_command(s: &Server, load: Load, i: usize) -> String {
    // One process per pane (a shell loop forking `sleep` 60 times a second
    // per pane measured the forks: 12,000 a second at 200 panes).
    let spinner = "env TEND_AGENT=claude python3 -u -c 'import sys,time\ni=0\nwhile True:\n i+=1\n sys.stdout.write(\"\\r* Working… (%ds · esc to interrupt) frame %d   \" % (i//60, i))\n sys.stdout.flush()\n time.sleep(1/60)'";
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let agent = pane_agent(load, i);
    let agent = agent.as_str();
    let play = |agent: &str, rec: &str, repeat: bool| {
        format!(
            "env TEND_AGENT={agent} '{}' play '{}'{}",
            s.tend.display(),
            corpus.join(agent).join(rec).join("pane.cast").display(),
            if repeat { " --repeat" } else { "" }
        )
    };
    match load {
        Load::Spinner60Hz => spinner.to_owned(),
        Load::Agents => play(agent, "working_then_done", true),
        Load::Real => play(agent, "working_then_done@80x24", true),
        Load::Idle => play(agent, "idle", false),
    }
}

/// The agent the `i`-th pane of `load` runs (the spinner says it is Claude
/// Code).
fn pane_agent(load: Load, i: usize) -> String {
    match load {
        Load::Spinner60Hz => "claude".into(),
        Load::Real => REAL_AGENTS[i % REAL_AGENTS.len()].into(),
        Load::Agents | Load::Idle => {
            let list = std::env::var("TEND_BENCH_AGENTS")
                .unwrap_or_else(|_| "claude,codex,gemini,aider".into());
            let agents: Vec<&str> = list.split(',').filter(|a| !a.is_empty()).collect();
            agents[i % agents.len()].into()
        }
    }
}

/// The daemon's pid on server `s`.
fn daemon_pid(s: &Server) -> u32 {
    let dpid = pids_named(&format!(
        "daemon -S /tmp/tmux-{}/{}",
        nix::unistd::getuid(),
        s.name
    ));
    dpid.first().copied().unwrap_or(0)
}

/// tmux processes `pid` starts per second, counted over `secs` seconds
/// with `strace -f -e trace=execve` (a separate window after the CPU was
/// measured: strace slows what it traces). `NaN` without strace.
fn count_spawns(pid: u32, secs: u64) -> f64 {
    let out = tempfile::NamedTempFile::new().expect("tempfile");
    let child = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=execve", "-e", "signal=none", "-o"])
        .arg(out.path())
        .arg("-p")
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return f64::NAN;
    };
    std::thread::sleep(Duration::from_secs(secs));
    // Only this strace, by its own pid: SIGINT makes it detach. It has
    // been seen to hang there (a child stopped between vfork and execve);
    // then SIGKILL, which detaches its tracees too.
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
    let deadline = Instant::now() + Duration::from_secs(3);
    while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    if matches!(child.try_wait(), Ok(None)) {
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    }
    let _ = child.wait();
    let text = std::fs::read_to_string(out.path()).unwrap_or_default();
    let n = text
        .lines()
        // Successful calls only: a program looked up through PATH is tried
        // in each directory, one failed `execve` each.
        .filter(|l| l.contains("execve(") && l.contains("tmux") && l.ends_with("= 0"))
        .count();
    n as f64 / secs as f64
}

/// Every build watching its own copy of the same load at the same time,
/// each on a server of its own: the CPU of each daemon (all its threads)
/// over the same `windows` windows of `secs` seconds, in % of a core.
/// Builds measured one after another let whatever else the machine does
/// land in one build's figure and not the other's; here they share it.
fn cost_together(
    panes: usize,
    secs: u64,
    settle: u64,
    load: Load,
    builds: &[(&str, PathBuf)],
    windows: usize,
) -> Vec<Vec<f64>> {
    let servers: Vec<Server> = builds
        .iter()
        .map(|(_, bin)| cost_server(panes, load, bin))
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    for s in &servers {
        s.tend(&["start"]);
    }
    std::thread::sleep(Duration::from_secs(settle));
    let pids: Vec<u32> = servers.iter().map(daemon_pid).collect();
    let mut out = vec![Vec::new(); builds.len()];
    for _ in 0..windows {
        let before: Vec<u64> = pids.iter().map(|p| cpu_ns(*p)).collect();
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs(secs));
        let elapsed = t0.elapsed().as_secs_f64();
        for (i, pid) in pids.iter().enumerate() {
            let used = cpu_ns(*pid).saturating_sub(before[i]) as f64 / 1e9;
            out[i].push(used / elapsed * 100.0);
        }
    }
    out
}

/// CPU time of the calling thread in nanoseconds (the scheduler's own
/// accounting, as [`cpu_ns`]).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// What the floor's reader does with the bytes it reads.
#[derive(Clone, Copy, PartialEq)]
enum FloorWork {
    /// Nothing: waking and reading alone.
    Nothing,
    /// Each pane's bytes into a terminal emulator of its own (tend's
    /// `Screen`, the pane's 200×50): the least a reader of screens pays.
    Screen,
    /// Each pane's bytes into a whole detector (screen, rules of its
    /// agent's manifest, timers), ticked on the same wake-ups when it asks:
    /// the detector's own work, without the daemon around it.
    Detector,
}

impl FloorWork {
    fn label(self) -> &'static str {
        match self {
            FloorWork::Nothing => "nothing parsed",
            FloorWork::Screen => "+ an emulator a pane",
            FloorWork::Detector => "+ a detector a pane",
        }
    }
}

/// One pane's parser in a floor run.
enum FloorParse {
    Nothing,
    Screen(Box<tend_detector::screen::Screen>),
    Detector(Box<tend_detector::PaneDetector>),
}

/// The floor under any tap reader on this machine: the same panes' pipes,
/// handed over by `tend tap` exactly as to the daemon, read by one thread
/// of this process on a tick of `tick` (the reader's own ready set for the
/// readable ones: `epoll`, or `poll(2)` with `TEND_PLATFORM=portable`; one
/// read each), with `work` done on the bytes (nothing, for the floor
/// itself). % of one core over `secs`. What tend costs above the bare
/// floor is its own work; the floor itself is what waking up and reading
/// costs here, and the floor with a detector a pane is what the same
/// detection costs without the daemon's loop and bookkeeping around it.
fn cost_floor(
    panes: usize,
    secs: u64,
    settle: u64,
    load: Load,
    bin: &Path,
    tick: Duration,
    work: FloorWork,
) -> f64 {
    use std::io::Read;
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixListener;
    use std::sync::Arc;
    let s = cost_server(panes, load, bin);
    let sock = s.dir.path().join("floor.sock");
    let listener = UnixListener::bind(&sock).expect("bind the floor's tap socket");
    let ids: Vec<String> = s
        .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .map(str::to_owned)
        .collect();
    for id in &ids {
        let cmd = format!(
            "exec '{}' tap --socket '{}' --pane {id}",
            s.tend.display(),
            sock.display()
        );
        s.tmux(&["pipe-pane", "-IO", "-t", id, &cmd]);
    }
    let mut set = tend_platform::ReadySet::new().expect("the pipes' ready set");
    let mut pipes: Vec<std::fs::File> = Vec::new();
    let mut parsers: Vec<FloorParse> = Vec::new();
    let registry = tend_detector::Registry::bundled();
    let config = Arc::new(tend_detector::DetectorConfig::default());
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let patience = Instant::now() + Duration::from_secs(10);
    while pipes.len() < ids.len() && Instant::now() < patience {
        let conn = match listener.accept() {
            Ok((conn, _)) => conn,
            Err(_) => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        conn.set_nonblocking(false).expect("blocking hand-over");
        let Ok((pane, fd)) = tend_daemon::pipes::receive(&conn) else {
            continue;
        };
        let file = std::fs::File::from(fd);
        tend_daemon::pipes::set_nonblocking(&file).expect("non-blocking");
        set.add(file.as_fd(), pipes.len() as u64)
            .expect("watch a pipe");
        pipes.push(file);
        // The pane's place in the server is its place in the load.
        let agent = pane_agent(load, ids.iter().position(|id| *id == pane).unwrap_or(0));
        parsers.push(match work {
            FloorWork::Nothing => FloorParse::Nothing,
            FloorWork::Screen => FloorParse::Screen(Box::new(
                tend_detector::screen::Screen::with_history(50, 200, 0),
            )),
            FloorWork::Detector => {
                let mut d = tend_detector::PaneDetector::new(config.clone(), 50, 200);
                d.set_agent(Duration::ZERO, registry.get(&agent).cloned().map(Arc::new));
                FloorParse::Detector(Box::new(d))
            }
        });
    }
    if pipes.len() < ids.len() {
        println!(
            "floor: only {} of {} panes handed their pipe over in 10 s",
            pipes.len(),
            ids.len()
        );
    }
    std::thread::sleep(Duration::from_secs(settle));
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 20];
        let mut ready: Vec<u64> = Vec::with_capacity(pipes.len());
        let t0 = Instant::now();
        let cpu0 = thread_cpu_ns();
        let mut next = t0 + tick;
        while t0.elapsed() < Duration::from_secs(secs) {
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            next += tick;
            ready.clear();
            let fds = pipes.iter().zip(0u64..).map(|(f, i)| (f.as_fd(), i));
            let _ = set.ready(pipes.len(), fds, &mut ready);
            let now = t0.elapsed();
            for &i in &ready {
                let n = (&pipes[i as usize]).read(&mut buf).unwrap_or(0);
                match &mut parsers[i as usize] {
                    FloorParse::Nothing => {}
                    FloorParse::Screen(screen) => screen.process(&buf[..n]),
                    FloorParse::Detector(d) => d.feed(now, &buf[..n]),
                }
            }
            for parser in &mut parsers {
                if let FloorParse::Detector(d) = parser {
                    if d.poll_timeout().is_some_and(|at| at <= now) {
                        d.tick(now);
                    }
                    while d.poll_transition().is_some() {}
                    d.drain_signals();
                }
            }
        }
        (thread_cpu_ns() - cpu0) as f64 / 1e9 / t0.elapsed().as_secs_f64() * 100.0
    });
    let pct = reader.join().expect("floor reader");
    println!(
        "floor         {:<6} panes={panes:>3} waking every {} ms and reading the readable pipes, {}: cpu={pct:.2}%",
        load.label(),
        tick.as_millis(),
        work.label()
    );
    pct
}

/// Measures one build of tend on `panes` panes for `secs` seconds.
fn cost_tend(
    panes: usize,
    secs: u64,
    settle: u64,
    load: Load,
    bin: &Path,
    label: &str,
) -> TendCost {
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    let s = cost_server(panes, load, bin);
    let server_pid: u32 = s.tmux(&["display", "-p", "#{pid}"]).parse().unwrap_or(0);
    std::thread::sleep(Duration::from_secs(2));
    s.tend(&["start"]);
    std::thread::sleep(Duration::from_secs(settle));
    let dpid = daemon_pid(&s);
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
    let spawns = count_spawns(dpid, secs.min(5));
    let per = |a: u64, b: u64| (b.saturating_sub(a)) as f64 / 1e9 / secs as f64 * 100.0;
    let per_ticks = |a: u64, b: u64| (b.saturating_sub(a)) as f64 / hz / secs as f64 * 100.0;
    // Everything tend runs: the daemon, its tmux commands, and any process
    // per pane (taps that stay; none since they hand their pipe over).
    let c = TendCost {
        daemon: per(d0, d1),
        commands: per_ticks(dc0, dc1),
        taps: per(t0, t1),
        total: per(d0, d1) + per_ticks(dc0, dc1) + per(t0, t1),
        rss: rss as f64 / 1024.0,
        mem: (rss + pss) as f64 / 1024.0,
        server: per(s0, s1),
        spawns,
    };
    println!(
        "tend {label:<6} {:<6} panes={panes:>3} daemon cpu={:.2}% (+ its tmux commands {:.2}%, {:.1} tmux processes/s) rss={:.1}MB | taps({}) cpu={:.2}% | all of tend cpu={:.2}% mem={:.1}MB | tmux server cpu={:.2}%",
        load.label(),
        c.daemon,
        c.commands,
        c.spawns,
        c.rss,
        taps.len(),
        c.taps,
        c.total,
        c.mem,
        c.server
    );
    s.tend(&["stop"]);
    c
}

/// The same panes watched by a `capture-pane` poller at 500 ms.
fn cost_poller(panes: usize, secs: u64, load: Load, bin: &Path) -> PollCost {
    let s = cost_server(panes, load, bin);
    let server_pid: u32 = s.tmux(&["display", "-p", "#{pid}"]).parse().unwrap_or(0);
    std::thread::sleep(Duration::from_secs(2));
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
    let p = PollCost {
        cpu: (tv(me1.user_time()) + tv(me1.system_time())
            - tv(me0.user_time())
            - tv(me0.system_time()))
            / secs as f64
            * 100.0,
        server: (s1.saturating_sub(s0)) as f64 / 1e9 / secs as f64 * 100.0,
    };
    println!(
        "poller        {:<6} panes={panes:>3} capture-pane processes cpu={:.2}% | tmux server cpu={:.2}%  (500 ms interval, {} captures)",
        load.label(),
        p.cpu,
        p.server,
        ids.len() as u64 * secs * 2
    );
    p
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| !x.is_nan());
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn median_of(runs: &[TendCost], f: impl Fn(&TendCost) -> f64) -> f64 {
    median(runs.iter().map(f).collect())
}

/// The `tend` under test: the one cargo built for this bench (release
/// profile, wherever the target directory is), or `TEND_BENCH_BIN`.
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
    // `--rounds 0`: no cost cells (latency or floors only).
    let rounds: usize = get("--rounds").and_then(|v| v.parse().ok()).unwrap_or(1);
    // Seconds from `tend start` to the measurement: a daemon starting on
    // 200 panes is still seeding and tapping them after the default 3.
    let settle: u64 = get("--settle").and_then(|v| v.parse().ok()).unwrap_or(3);
    let latency_rounds: usize = get("--latency-rounds")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let panes: Vec<usize> = get("--panes")
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![10, 50]);
    if args.iter().any(|a| a == "--list") {
        return;
    }
    // The builds: this one, and `TEND_BENCH_BEFORE` beside it (each cell
    // measured for both, alternating, in every round).
    let mut builds: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(before) = std::env::var_os("TEND_BENCH_BEFORE") {
        builds.push(("before", PathBuf::from(before)));
    }
    builds.push(("this", tend_binary()));
    for (_, bin) in &builds {
        if !bin.exists() {
            eprintln!(
                "{} does not exist: build the release binary first (cargo build --release -p tend)",
                bin.display()
            );
            return;
        }
    }
    let loads: Vec<Load> = get("--load")
        .map(|v| {
            v.split(',')
                .filter_map(|l| match l {
                    "60hz" => Some(Load::Spinner60Hz),
                    "agents" => Some(Load::Agents),
                    "real" => Some(Load::Real),
                    "idle" => Some(Load::Idle),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_else(|| vec![Load::Agents, Load::Spinner60Hz, Load::Idle]);
    if runs > 0 {
        let node = Command::new("node").arg("--version").output().is_ok();
        // The pane alone, both ways of knowing its agent; then beside
        // `--latency-busy` (default 9) panes of the *agents* load.
        let busy: usize = get("--latency-busy")
            .and_then(|v| v.parse().ok())
            .unwrap_or(9);
        let mut cells = vec![(Identity::Declared, 0), (Identity::ProcessTree, 0)];
        if busy > 0 {
            cells.push((Identity::ProcessTree, busy));
        }
        for (identity, busy) in cells {
            if identity == Identity::ProcessTree && !node {
                println!("latency with a process-tree agent: skipped (no `node` on PATH)");
                continue;
            }
            let mut pooled: Vec<Vec<f64>> = vec![Vec::new(); builds.len()];
            for _ in 0..latency_rounds {
                for (i, (_, bin)) in builds.iter().enumerate() {
                    pooled[i].extend(latency(runs, identity, busy, bin));
                }
            }
            for ((label, _), lat) in builds.iter().zip(pooled) {
                latency_line(label, identity, busy, lat);
            }
        }
    }
    // `--floor 20,30`: what only waking on such a tick and reading the
    // same panes' pipes costs here, for each load and pane count.
    let floors: Vec<u64> = get("--floor")
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_default();
    // `--floor-work screen,detector`: the same floors again with each
    // pane's bytes parsed by an emulator, or by a whole detector.
    let mut works = vec![FloorWork::Nothing];
    works.extend(
        get("--floor-work")
            .unwrap_or_default()
            .split(',')
            .filter_map(|w| match w {
                "screen" => Some(FloorWork::Screen),
                "detector" => Some(FloorWork::Detector),
                _ => None,
            }),
    );
    // (load, panes, tick, what was done, % of a core): for the ratios
    // under the table.
    let mut floor_cells: Vec<(&'static str, usize, u64, FloorWork, f64)> = Vec::new();
    if !floors.is_empty() {
        for &load in &loads {
            for &n in &panes {
                for &ms in &floors {
                    for &work in &works {
                        let pct = cost_floor(
                            n,
                            secs,
                            settle,
                            load,
                            &builds[builds.len() - 1].1,
                            Duration::from_millis(ms),
                            work,
                        );
                        floor_cells.push((load.label(), n, ms, work, pct));
                    }
                }
            }
        }
    }
    // `--together N`: N windows with every build watching the same load at
    // once, instead of the cells below taking turns.
    let together: usize = get("--together").and_then(|v| v.parse().ok()).unwrap_or(0);
    if together > 0 {
        println!("\n{together} windows of {secs} s, every build at once (CPU of each daemon, % of one core):\n");
        println!(
            "| load | panes | {} |",
            builds
                .iter()
                .map(|(l, _)| *l)
                .collect::<Vec<_>>()
                .join(" | ")
        );
        println!("|---|---:|{}", "---|".repeat(builds.len()));
        for &load in &loads {
            for &n in &panes {
                let cells = cost_together(n, secs, settle, load, &builds, together);
                let shown: Vec<String> = cells
                    .iter()
                    .map(|w| {
                        w.iter()
                            .map(|v| format!("{v:.2}"))
                            .collect::<Vec<_>>()
                            .join(" · ")
                    })
                    .collect();
                println!("| {} | {n} | {} |", load.label(), shown.join(" | "));
            }
        }
        return;
    }
    if rounds == 0 {
        return;
    }
    let mut summary = Vec::new();
    let mut ratios = Vec::new();
    for load in loads {
        for &n in &panes {
            let mut tend: Vec<Vec<TendCost>> = vec![Vec::new(); builds.len()];
            let mut poll = Vec::new();
            for _ in 0..rounds {
                for (i, (label, bin)) in builds.iter().enumerate() {
                    tend[i].push(cost_tend(n, secs, settle, load, bin, label));
                }
                poll.push(cost_poller(n, secs, load, &builds[builds.len() - 1].1));
            }
            for ((label, _), runs) in builds.iter().zip(&tend) {
                summary.push(format!(
                    "| {} | {n} | {label} | {:.2} | {:.2} | {:.1} | {:.2} | **{:.2}** | {:.1} | {:.2} |",
                    load.label(),
                    median_of(runs, |c| c.daemon),
                    median_of(runs, |c| c.commands),
                    median_of(runs, |c| c.spawns),
                    median_of(runs, |c| c.taps),
                    median_of(runs, |c| c.total),
                    median_of(runs, |c| c.mem),
                    median_of(runs, |c| c.server),
                ));
                // The figure to watch: all of tend over the floor measured
                // in the same run (a ratio survives a noisy machine better
                // than a percentage).
                for (_, _, ms, _, floor) in floor_cells.iter().filter(|(l, p, _, w, _)| {
                    *l == load.label() && *p == n && *w == FloorWork::Nothing
                }) {
                    ratios.push(format!(
                        "{} {n} panes, {label}: all of tend {:.2} % ÷ floor at {ms} ms {floor:.2} % = {:.2}×",
                        load.label(),
                        median_of(runs, |c| c.total),
                        median_of(runs, |c| c.total) / floor,
                    ));
                }
            }
            // The floor with the bytes parsed, over the bare floor: what
            // any reader of these screens pays before a daemon around it.
            for (_, _, ms, work, pct) in floor_cells
                .iter()
                .filter(|(l, p, _, w, _)| *l == load.label() && *p == n && *w != FloorWork::Nothing)
            {
                let bare = floor_cells.iter().find(|(l, p, m, w, _)| {
                    *l == load.label() && *p == n && m == ms && *w == FloorWork::Nothing
                });
                if let Some((.., floor)) = bare {
                    ratios.push(format!(
                        "{} {n} panes, the floor at {ms} ms {}: {pct:.2} % = {:.2}× the floor",
                        load.label(),
                        work.label(),
                        pct / floor,
                    ));
                }
            }
            summary.push(format!(
                "| {} | {n} | poller (500 ms) | | | | | **{:.2}** | | {:.2} |",
                load.label(),
                median(poll.iter().map(|p| p.cpu).collect()),
                median(poll.iter().map(|p| p.server).collect()),
            ));
        }
    }
    if !summary.is_empty() {
        println!("\nmedians of {rounds} round(s), {secs} s a cell (CPU in % of one core):\n");
        println!("| load | panes | build | daemon | its tmux commands | tmux processes/s | taps | **all of tend** | mem MB | tmux server |");
        println!("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|");
        for line in summary {
            println!("{line}");
        }
    }
    if !ratios.is_empty() {
        println!("\nover the floor (the same run):\n");
        for line in ratios {
            println!("  {line}");
        }
    }
}
