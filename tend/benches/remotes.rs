//! Remotes benchmark (opt-in: `cargo bench -p tend --bench remotes`):
//! N remotes × M agent panes joined into one local daemon, and the delay
//! from an approval dialog on a remote to the local status line.
//!
//! ```text
//! cargo bench -p tend --bench remotes                                  # 10 remotes × 20 panes
//! cargo bench -p tend --bench remotes -- --remotes 10 --panes 20 --runs 20 --secs 10
//! ```
//!
//! Each remote is its own tmux server with its own tend daemon. The link
//! runs through `TEND_SSH`, set to a stand-in that runs the remote command
//! locally (`sh -c`), so the figures are tend's own cost: no ssh
//! encryption, no network. The agent panes are identified (`TEND_AGENT`)
//! and quiet; the latency pane shows frames of the `claude/approval`
//! recording written into it through a fifo.
//!
//! Reported: the local daemon's CPU (user+system, % of one core, its tmux
//! commands included) and RSS with every link up, and the time from the
//! dialog's bytes reaching the remote pane to `@tend_needs` on the local
//! server counting it: p50, p90, max.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tend_detector::cast::Cast;

struct Server {
    name: String,
    dir: tempfile::TempDir,
}

impl Server {
    fn new(tag: &str) -> Server {
        let name = format!("tend-rbench-{tag}-{}", std::process::id());
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["run", "state", "config/tend", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        let s = Server { name, dir };
        common::start_server(&s.name);
        s
    }
    fn tmux(&self, args: &[&str]) -> String {
        common::tmux(&self.name, args)
    }
    fn env_words(&self) -> String {
        let d = self.dir.path();
        format!(
            "env XDG_RUNTIME_DIR={} XDG_STATE_HOME={} XDG_CONFIG_HOME={} HOME={} TEND_TMUX_SOCKET={}",
            d.join("run").display(),
            d.join("state").display(),
            d.join("config").display(),
            d.join("home").display(),
            self.name
        )
    }
    fn tend(&self, args: &[&str], ssh: &Path) -> String {
        let d = self.dir.path();
        let o = Command::new(env!("CARGO_BIN_EXE_tend"))
            .env("XDG_RUNTIME_DIR", d.join("run"))
            .env("XDG_STATE_HOME", d.join("state"))
            .env("XDG_CONFIG_HOME", d.join("config"))
            .env("HOME", d.join("home"))
            .env("TEND_SSH", ssh)
            .env_remove("TMUX")
            .env_remove("TEND_TMUX_SOCKET")
            .arg("-L")
            .arg(&self.name)
            .args(args)
            .output()
            .expect("tend");
        String::from_utf8_lossy(&o.stdout).trim_end().to_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(env!("CARGO_BIN_EXE_tend"))
            .env("XDG_RUNTIME_DIR", self.dir.path().join("run"))
            .env_remove("TMUX")
            .args(["-L", &self.name, "stop"])
            .output();
        self.tmux(&["kill-server"]);
    }
}

fn stat_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime, stime, cutime, cstime: its tmux commands are its cost too.
    get(11) + get(12) + get(13) + get(14)
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> Option<Duration> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return Some(t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    None
}

fn main() {
    let remotes = arg("--remotes", 10) as usize;
    let panes = arg("--panes", 20) as usize;
    let runs = arg("--runs", 10) as usize;
    let secs = arg("--secs", 10);
    let local = Server::new("local");
    // The ssh stand-in: drops the options and the destination, runs the
    // remote command (the last word) with sh.
    let ssh = local.dir.path().join("fake-ssh");
    std::fs::write(
        &ssh,
        "#!/bin/sh\neval \"cmd=\\${$#}\"\nexec sh -c \"$cmd\"\n",
    )
    .expect("fake ssh");
    let _ = Command::new("chmod").arg("+x").arg(&ssh).status();

    let cast_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/claude/approval/pane.cast");
    let cast = Cast::parse(&std::fs::read_to_string(cast_path).expect("cast")).expect("parse");
    let working = common::frame_at(&cast, 7.0);
    let dialog = common::frame_at(&cast, 15.0);

    let mut servers = Vec::new();
    let mut config = String::from("[remote_link]\nreconnect_max = \"1s\"\n\n");
    let mut fifo = PathBuf::new();
    for r in 0..remotes {
        let s = Server::new(&format!("r{r}"));
        for i in 0..panes {
            let cmd = if r == 0 && i == 0 {
                fifo = s.dir.path().join("agent.fifo");
                nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600))
                    .expect("mkfifo");
                format!(
                    "env TEND_AGENT=claude sh -c 'printf \"\\033[?1049h\"; exec cat \"{}\"'",
                    fifo.display()
                )
            } else {
                "env TEND_AGENT=claude sleep 100000".to_owned()
            };
            s.tmux(&["new-window", "-d", &cmd]);
        }
        config.push_str(&format!(
            "[remotes.r{r}]\ndest = \"r{r}\"\ntend_command = \"{} {}\"\n\n",
            s.env_words(),
            env!("CARGO_BIN_EXE_tend")
        ));
        servers.push(s);
    }
    std::fs::write(local.dir.path().join("config/tend/config.toml"), config).expect("config");
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open fifo");
    w.write_all(&working).expect("write");

    let started = local.tend(&["start", "--json"], &ssh);
    let pid = serde_json::from_str::<serde_json::Value>(&started)
        .ok()
        .and_then(|v| v["pid"].as_u64())
        .expect("local daemon pid") as u32;
    let want = remotes * panes;
    let up = wait_for(Duration::from_secs(180), || {
        local
            .tend(&["list", "--json"], &ssh)
            .matches("\"host\"")
            .count()
            >= want
    });
    println!(
        "remotes={remotes} panes/remote={panes}: all {want} remote panes listed after {:.1}s",
        up.map_or(f64::NAN, |d| d.as_secs_f64())
    );
    std::thread::sleep(Duration::from_secs(2));
    let hz = 100.0;
    let t0 = stat_ticks(pid);
    let w0 = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    let cpu = (stat_ticks(pid) - t0) as f64 / hz / w0.elapsed().as_secs_f64() * 100.0;
    println!(
        "local daemon, links up and quiet for {secs}s: CPU {cpu:.2}% of a core, RSS {} KiB",
        rss_kb(pid)
    );

    let needs = || local.tmux(&["show-options", "-gqv", "@tend_needs"]);
    let mut lat = Vec::new();
    let t_run = stat_ticks(pid);
    let w_run = Instant::now();
    for _ in 0..runs {
        w.write_all(&working).expect("write");
        wait_for(Duration::from_secs(10), || needs() == "0");
        std::thread::sleep(Duration::from_millis(700));
        let t = Instant::now();
        w.write_all(&dialog).expect("write");
        w.flush().ok();
        if wait_for(Duration::from_secs(10), || needs() == "1").is_some() {
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let cpu_run = (stat_ticks(pid) - t_run) as f64 / hz / w_run.elapsed().as_secs_f64() * 100.0;
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    println!(
        "remote dialog → local @tend_needs: runs={} p50={:.0}ms p90={:.0}ms max={:.0}ms \
         (local daemon CPU meanwhile {cpu_run:.2}%, RSS {} KiB)",
        lat.len(),
        pct(&lat, 0.5),
        pct(&lat, 0.9),
        lat.last().copied().unwrap_or(f64::NAN),
        rss_kb(pid)
    );
    drop(w);
}
