//! Sampling cost for 50 panes: 50 tmux panes on a private server, each an
//! interactive bash running a fake agent (`node …/claude-code/cli.js`,
//! 7 threads like a real node agent) with one tool child (`sleep`).
//!
//! Measured: one sample of all 50 panes (read + resolve), with the
//! identity cache warm (the steady state) and without it (the first
//! sample of each process), and the cheap foreground probe. The number of
//! filesystem reads per round is printed before the timings.
//!
//! Needs tmux and node; without them it prints a notice and measures
//! nothing.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use tend_detector::identity::{self, WalkLimits};
use tend_detector::Registry;
use tend_platform::sampler::Sampler;
use tend_testkit::Server;

const PANES: usize = 50;

fn available(tool: &str) -> bool {
    Command::new(tool)
        .arg(if tool == "tmux" { "-V" } else { "--version" })
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Starts the server and the 50 fake agents; returns the shells' pids once
/// every pane resolves to its agent.
fn setup(dir: &Path) -> Option<(Server, Vec<u32>)> {
    if !available("tmux") || !available("node") {
        println!("sampler bench: needs tmux and node; skipped");
        return None;
    }
    let cli = dir.join("node_modules/@anthropic-ai/claude-code/cli.js");
    std::fs::create_dir_all(cli.parent()?).ok()?;
    std::fs::write(
        &cli,
        "require('child_process').spawn('sleep', ['1000'], { stdio: 'ignore' });\n\
         setInterval(() => {}, 1000);\n",
    )
    .ok()?;
    let server = Server::new("tend-bench-sampler");
    let shell = ["bash", "--noprofile", "--norc", "-i"];
    let mut args = vec![
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "b",
        "-x",
        "80",
        "-y",
        "24",
    ];
    args.extend(shell);
    assert!(server.cmd(&args).status.success(), "tmux new-session");
    for _ in 1..PANES {
        let mut args = vec!["new-window", "-d", "-t", "b:"];
        args.extend(shell);
        assert!(server.cmd(&args).status.success(), "tmux new-window");
    }
    let out = server.cmd(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"]);
    let panes: Vec<(String, u32)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (id, pid) = l.split_once(' ')?;
            Some((id.to_owned(), pid.parse().ok()?))
        })
        .collect();
    assert_eq!(panes.len(), PANES);
    let line = format!("node {}", cli.display());
    for (id, _) in &panes {
        server.cmd(&["send-keys", "-t", id, "-l", &line]);
        server.cmd(&["send-keys", "-t", id, "Enter"]);
    }
    let pids: Vec<u32> = panes.iter().map(|(_, p)| *p).collect();
    // Wait until every pane shows its agent and tool.
    let registry = Registry::bundled();
    let mut sampler = Sampler::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = pids
            .iter()
            .filter(|pid| {
                sampler.sample(**pid).is_ok_and(|s| {
                    s.procs.len() >= 3
                        && identity::resolve_pane(&registry, &s.procs, &WalkLimits::default())
                            .agent
                            .is_some()
                })
            })
            .count();
        if ready == PANES {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {ready} of {PANES} panes ready"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    Some((server, pids))
}

/// One round over every pane: sample and resolve.
fn round(sampler: &mut Sampler, registry: &Registry, pids: &[u32]) -> usize {
    let mut found = 0;
    for pid in pids {
        if let Ok(s) = sampler.sample(*pid) {
            let r = identity::resolve_pane(registry, &s.procs, &sampler.limits());
            found += usize::from(r.agent.is_some());
        }
    }
    sampler.sweep();
    found
}

fn bench(c: &mut Criterion) {
    let Ok(dir) = tempfile::tempdir() else { return };
    let Some((_server, pids)) = setup(dir.path()) else {
        return;
    };
    let registry = Registry::bundled();

    // Files read per round, cold then warm.
    let mut cold = Sampler::new().without_cache();
    let before = cold.files_read();
    round(&mut cold, &registry, &pids);
    let cold_files = cold.files_read() - before;
    let mut warm = Sampler::new();
    round(&mut warm, &registry, &pids);
    let before = warm.files_read();
    assert_eq!(round(&mut warm, &registry, &pids), PANES);
    let warm_files = warm.files_read() - before;
    let snap = warm.sample(pids[0]).expect("sample");
    let threads: usize = snap
        .procs
        .iter()
        .filter_map(|p| std::fs::read_dir(format!("/proc/{}/task", p.pid)).ok())
        .map(|d| d.count())
        .sum();
    println!(
        "sampler bench: {PANES} panes, {} processes and {threads} threads per pane",
        snap.procs.len()
    );
    println!(
        "sampler bench: files read per round of {PANES} panes: cold {cold_files} ({:.1}/pane), warm {warm_files} ({:.1}/pane), probe {PANES} (1/pane)",
        cold_files as f64 / PANES as f64,
        warm_files as f64 / PANES as f64,
    );

    let mut g = c.benchmark_group("sample_50_panes");
    g.bench_function("warm_cache", |b| {
        let mut s = Sampler::new();
        round(&mut s, &registry, &pids);
        b.iter(|| round(&mut s, &registry, &pids))
    });
    g.bench_function("cold_no_cache", |b| {
        let mut s = Sampler::new().without_cache();
        b.iter(|| round(&mut s, &registry, &pids))
    });
    g.bench_function("probe_only", |b| {
        let mut s = Sampler::new();
        b.iter(|| {
            pids.iter()
                .filter(|pid| s.probe(**pid).is_ok_and(|p| !p.shell_foreground()))
                .count()
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = bench
}
criterion_main!(benches);
