//! Detector throughput over the recorded corpus, and memory per pane.
//!
//! ```text
//! cargo bench -p tend-detector --bench throughput
//! TEND_CORPUS=/path/to/corpus cargo bench -p tend-detector --bench throughput
//! ```
//!
//! The corpus defaults to the recordings in `tests/corpus`.
//!
//! * `detector/screen` — the screen model alone ([`Screen::process`] and
//!   [`Screen::drain_signals`]), every recording into a fresh 200×50 screen.
//! * `detector/pane` — the whole [`PaneDetector`] (screen, rules, timers,
//!   state machine) through [`replay`] with the recording's own clock, each
//!   recording with its agent's bundled manifest; `detector/pane/<agent>`
//!   splits it per agent.
//!
//! * `detector/screen/build_log`, `detector/pane/build_log` — a `cat` of an
//!   8 MB build log, where every line scrolls into the history.
//! * `flood/*` — floods of sequences that cost the emulator much per byte.
//!
//! Throughput is in decimal MB/s of pane output. Before the benchmarks run,
//! a table of memory per pane is printed: the live heap of one pane counted
//! by a global allocator, next to what [`Screen::memory_bytes`] reports.
//! Figures and the machine they came from: `docs/PERFORMANCE.md`.

use std::alloc::System;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, Criterion, Throughput};
use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};
use tend_detector::cast::{Cast, EventKind};
use tend_detector::replay::replay;
use tend_detector::screen::Screen;
use tend_detector::{DetectorConfig, Manifest, PaneDetector, Registry};

// ---------------------------------------------------------------------------
// Live heap bytes, counted by an instrumented system allocator.

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn live() -> usize {
    // A realloc's growth or shrinkage is counted in these two already.
    let s = GLOBAL.stats();
    s.bytes_allocated - s.bytes_deallocated
}

// ---------------------------------------------------------------------------
// Corpus.

struct Recording {
    agent: String,
    cast: Cast,
    bytes: u64,
}

/// `$TEND_CORPUS`, or the recordings in the repository (`tests/corpus`).
fn corpus_root() -> PathBuf {
    std::env::var_os("TEND_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus"))
}

fn load_corpus(root: &Path) -> Vec<Recording> {
    let mut dirs = Vec::new();
    for agent in std::fs::read_dir(root).into_iter().flatten().flatten() {
        for case in std::fs::read_dir(agent.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if case.path().join("pane.cast").is_file() {
                dirs.push(case.path());
            }
        }
    }
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(text) = std::fs::read_to_string(dir.join("pane.cast")) else {
            continue;
        };
        let Ok(cast) = Cast::parse(&text) else {
            continue;
        };
        let agent = dir
            .parent()
            .and_then(Path::file_name)
            .map(|a| a.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bytes = output_bytes(&cast);
        out.push(Recording { agent, cast, bytes });
    }
    out
}

fn output_bytes(cast: &Cast) -> u64 {
    cast.events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Output(b) => b.len() as u64,
            _ => 0,
        })
        .sum()
}

fn run_screen(cast: &Cast) -> Screen {
    let mut s = Screen::new(cast.header.height, cast.header.width);
    for e in &cast.events {
        match &e.kind {
            EventKind::Output(b) => {
                s.process(b);
                black_box(s.drain_signals());
            }
            EventKind::Resize(c, r) => s.resize(*r, *c),
            _ => {}
        }
    }
    s
}

struct Setup {
    registry: Registry,
    cfg: Arc<DetectorConfig>,
    /// One compiled manifest per agent, shared by every pane of that agent
    /// (and with it the regexes' lazy-DFA caches).
    shared: std::collections::BTreeMap<String, Arc<Manifest>>,
}

impl Setup {
    fn new() -> Self {
        let registry = Registry::bundled();
        let shared = registry
            .iter()
            .map(|m| (m.id.clone(), Arc::new(m.clone())))
            .collect();
        Setup {
            registry,
            cfg: Arc::new(DetectorConfig::default()),
            shared,
        }
    }

    /// The shared manifest for `agent` (the first one for an unknown id).
    fn manifest(&self, agent: &str) -> Arc<Manifest> {
        self.shared
            .get(agent)
            .or_else(|| self.shared.values().next())
            .cloned()
            .expect("bundled manifests")
    }

    /// A private copy of `agent`'s manifest, with caches of its own.
    fn fresh_manifest(&self, agent: &str) -> Arc<Manifest> {
        Arc::new(Manifest::clone(&self.manifest(agent)))
    }
}

// ---------------------------------------------------------------------------
// Memory per pane.

const ROWS: u16 = 50;
const COLS: u16 = 200;
const LINES: usize = 2_000;

fn text_lines(lines: usize, line: impl Fn(usize) -> String) -> Vec<u8> {
    let mut s = String::new();
    for i in 0..lines {
        s.push_str(&line(i));
        s.push_str("\r\n");
    }
    s.into_bytes()
}

/// Live heap bytes of a pane built by `make` and fed `input`, and what
/// `memory_bytes()` says about it.
fn measure(make: impl Fn() -> PaneDetector, input: &[&[u8]]) -> (usize, usize, usize) {
    let base = live();
    let mut d = make();
    for (i, b) in input.iter().enumerate() {
        d.feed(Duration::from_millis(100 * i as u64), b);
    }
    d.tick(Duration::from_secs(60));
    let counted = live() - base;
    let reported = d.screen().memory_bytes();
    let history = d.screen().history().len();
    drop(d);
    (counted, reported, history)
}

/// Live heap bytes of a pane after a whole recording, fed with its clock.
fn replayed(rec: &Recording, manifest: Arc<Manifest>, setup: &Setup) -> (usize, usize) {
    let base = live();
    let mut d = PaneDetector::new(
        setup.cfg.clone(),
        rec.cast.header.height,
        rec.cast.header.width,
    );
    d.set_agent(Duration::ZERO, Some(manifest));
    for e in &rec.cast.events {
        match &e.kind {
            EventKind::Output(b) => d.feed(e.at, b),
            EventKind::Resize(c, r) => d.resize(e.at, *r, *c),
            _ => {}
        }
    }
    d.tick(rec.cast.duration() + Duration::from_secs(30));
    black_box(d.drain_signals());
    (live() - base, d.screen().memory_bytes())
}

fn kib(b: usize) -> String {
    format!("{:.0} KiB", b as f64 / 1024.0)
}

fn memory_report(corpus: &[Recording], setup: &Setup) {
    let manifest = setup.manifest("claude");
    let make = || {
        let mut d = PaneDetector::new(setup.cfg.clone(), ROWS, COLS);
        d.set_agent(Duration::ZERO, Some(manifest.clone()));
        d
    };
    let alt: &[u8] = b"\x1b[?1049h\x1b[2J\x1b[Hframe\x1b[?1049l";
    let prose = text_lines(LINES + usize::from(ROWS), |i| {
        format!(
            "\x1b[32m{i:05}\x1b[0m  src/engine.rs: fn evaluate(&mut self, at: Duration) -- view, \
             fingerprint, rules::evaluate, decide"
        )
    });
    let full_ascii = text_lines(LINES + usize::from(ROWS), |i| {
        let mut l = format!("{i:05} ");
        while l.len() < usize::from(COLS) {
            l.push_str("abcdefghij");
        }
        l.truncate(usize::from(COLS));
        l
    });
    let full_box = text_lines(LINES + usize::from(ROWS), |_| {
        "─".repeat(usize::from(COLS)) // 3 bytes a cell
    });
    let cases: Vec<(&str, Vec<&[u8]>)> = vec![
        ("fresh 200x50 pane", vec![]),
        ("after the alternate screen was used", vec![alt]),
        ("+ 2,000 lines of ~90-column text", vec![alt, &prose]),
        (
            "+ 2,000 full 200-column ASCII lines",
            vec![alt, &full_ascii],
        ),
        (
            "+ 2,000 full 200-column box-drawing lines",
            vec![alt, &full_box],
        ),
    ];
    // Warm the shared manifest's regex caches: they are paid once per
    // manifest, not per pane (reported separately below).
    for (_, input) in &cases {
        measure(make, input);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nMemory per pane (PaneDetector, {COLS}x{ROWS}, which keeps no history ring: the \
         {LINES}-line cases print that much and keep none of it; live heap counted by the \
         global allocator)\n"
    );
    let _ = writeln!(out, "| case | live heap | memory_bytes() | history lines |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for (name, input) in &cases {
        let (counted, reported, history) = measure(make, input);
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {history} |",
            kib(counted),
            kib(reported)
        );
    }
    // Every corpus recording replayed into a pane: the largest pane, and what
    // a private copy of the manifest adds (its regexes' lazy-DFA caches).
    for rec in corpus {
        replayed(rec, setup.manifest(&rec.agent), setup);
    }
    let mut worst = (0usize, 0usize, "");
    let mut caches: std::collections::BTreeMap<&str, usize> = Default::default();
    for rec in corpus {
        let (counted, reported) = replayed(rec, setup.manifest(&rec.agent), setup);
        if counted > worst.0 {
            worst = (counted, reported, rec.agent.as_str());
        }
        let (private, _) = replayed(rec, setup.fresh_manifest(&rec.agent), setup);
        let extra = caches.entry(rec.agent.as_str()).or_default();
        *extra = (*extra).max(private.saturating_sub(counted));
    }
    if !corpus.is_empty() {
        let _ = writeln!(
            out,
            "| largest pane after a corpus recording ({}) | {} | {} | |",
            worst.2,
            kib(worst.0),
            kib(worst.1)
        );
        let _ = writeln!(
            out,
            "\nA private copy of a manifest adds its regexes' caches to the pane: {}",
            caches
                .iter()
                .map(|(a, b)| format!("{a} {}", kib(*b)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!("{out}");
}

// ---------------------------------------------------------------------------
// Throughput.

fn throughput(c: &mut Criterion) {
    let root = corpus_root();
    let corpus = load_corpus(&root);
    let setup = Setup::new();
    memory_report(&corpus, &setup);
    if corpus.is_empty() {
        eprintln!(
            "no recordings under {} (set TEND_CORPUS); skipping throughput",
            root.display()
        );
        return;
    }
    let total: u64 = corpus.iter().map(|r| r.bytes).sum();
    let recorded: Duration = corpus.iter().map(|r| r.cast.duration()).sum();
    println!(
        "corpus: {} recordings, {:.2} MB of output, {:.0} s of recorded time ({})\n",
        corpus.len(),
        total as f64 / 1e6,
        recorded.as_secs_f64(),
        root.display()
    );
    let manifests: Vec<Arc<Manifest>> = corpus.iter().map(|r| setup.manifest(&r.agent)).collect();

    let mut g = c.benchmark_group("detector");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(15));
    g.throughput(Throughput::BytesDecimal(total));
    g.bench_function("screen", |b| {
        b.iter(|| {
            for rec in &corpus {
                black_box(run_screen(&rec.cast));
            }
        })
    });
    g.bench_function("pane", |b| {
        b.iter(|| {
            for (rec, m) in corpus.iter().zip(&manifests) {
                black_box(replay(
                    &rec.cast,
                    m.clone(),
                    &setup.registry,
                    setup.cfg.clone(),
                    &[],
                ));
            }
        })
    });
    g.bench_function("pane_burst", |b| {
        b.iter(|| {
            for (rec, m) in corpus.iter().zip(&manifests) {
                black_box(burst(&rec.cast, m, &setup));
            }
        })
    });
    let mut agents: Vec<&str> = corpus.iter().map(|r| r.agent.as_str()).collect();
    agents.dedup();
    for agent in agents {
        let part: Vec<(&Recording, &Arc<Manifest>)> = corpus
            .iter()
            .zip(&manifests)
            .filter(|(r, _)| r.agent == agent)
            .collect();
        g.throughput(Throughput::BytesDecimal(
            part.iter().map(|(r, _)| r.bytes).sum(),
        ));
        g.bench_function(format!("pane/{agent}"), |b| {
            b.iter(|| {
                for (rec, m) in &part {
                    black_box(replay(
                        &rec.cast,
                        (*m).clone(),
                        &setup.registry,
                        setup.cfg.clone(),
                        &[],
                    ));
                }
            })
        });
    }
    g.finish();

    // One evaluation (screen to text, fingerprint, rules, state machine) of
    // a full 200x50 screen: Gemini's inline UI after its longest recording.
    // `evaluation`: nothing visible changed (only the rows that changed are
    // read again, so this is the floor); `evaluation_spinner`: one row
    // changed, as when a working agent's spinner turns; `evaluation_full`:
    // every row changed (a full-frame redraw).
    let mut g = c.benchmark_group("detector");
    g.sample_size(30);
    if let Some(rec) = corpus
        .iter()
        .filter(|r| r.agent == "gemini")
        .max_by_key(|r| r.bytes)
        .or_else(|| corpus.first())
    {
        let m = setup.manifest(&rec.agent);
        let mut d = PaneDetector::new(
            setup.cfg.clone(),
            rec.cast.header.height,
            rec.cast.header.width,
        );
        d.set_agent(Duration::ZERO, Some(m));
        for e in &rec.cast.events {
            if let EventKind::Output(b) = &e.kind {
                d.feed(e.at, b);
            }
        }
        let mut now = rec.cast.duration() + Duration::from_secs(60);
        d.tick(now);
        let step = setup.cfg.eval_interval;
        // Every row rewritten with what it shows (the same text, so the
        // rules see the same screen), as a full-frame redraw does.
        let frame = d.view().rows.join("\r\n");
        let mut eval = |name: &str, bytes: &dyn Fn(u64) -> Vec<u8>| {
            let mut i = 0u64;
            g.bench_function(name, |b| {
                b.iter(|| {
                    i += 1;
                    now += step;
                    d.feed(now, &bytes(i));
                    now += step;
                    d.tick(now);
                    while let Some(t) = d.poll_transition() {
                        black_box(t);
                    }
                })
            });
        };
        // An SGR reset changes nothing visible but marks the screen dirty:
        // the tick runs exactly one evaluation.
        eval("evaluation", &|_| b"\x1b[0m".to_vec());
        let spinner = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
        eval("evaluation_spinner", &|i| {
            format!("\x1b7\x1b[1;1H{}\x1b8", spinner[i as usize % 10]).into_bytes()
        });
        eval("evaluation_full", &|_| {
            format!("\x1b[H{frame}").into_bytes()
        });
    }
    g.finish();
}

/// The whole detector on a recording's output delivered at one instant (a
/// burst such as `cat` of a large file): parsing dominates, the screen is
/// evaluated once.
fn burst(cast: &Cast, manifest: &Arc<Manifest>, setup: &Setup) -> PaneDetector {
    let mut d = PaneDetector::new(setup.cfg.clone(), cast.header.height, cast.header.width);
    d.set_agent(Duration::ZERO, Some(manifest.clone()));
    let t = Duration::from_secs(1);
    for e in &cast.events {
        match &e.kind {
            EventKind::Output(b) => d.feed(t, b),
            EventKind::Resize(c, r) => d.resize(t, *r, *c),
            _ => {}
        }
    }
    d.tick(t + Duration::from_secs(1));
    d
}

/// A `cat` of an 8 MB build log: 80-column lines with a coloured level,
/// every one of which scrolls into the history.
fn build_log() -> Vec<u8> {
    let mut text = String::new();
    let mut i = 0usize;
    while text.len() < 8_000_000 {
        let level = [
            "\x1b[32mINFO\x1b[0m",
            "\x1b[33mWARN\x1b[0m",
            "\x1b[2mDEBUG\x1b[0m",
        ][i % 3];
        let fill = "abcdefghijklmnopqrstuvwxyz0123456789";
        let _ = write!(
            text,
            "{i:>7} [{level}] compiling crate_{} v0.{}.{} (/src/crate_{}) {}\r\n",
            i % 97,
            i % 13,
            i % 7,
            i % 97,
            &fill[..(i * 7) % fill.len()]
        );
        i += 1;
    }
    text.into_bytes()
}

/// Output shapes other than the corpus: scrolling text, and floods of
/// sequences that cost the emulator much per byte.
fn other_output(c: &mut Criterion) {
    let setup = Setup::new();
    let manifest = setup.manifest("aider");
    let log = build_log();
    let mut g = c.benchmark_group("detector");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::BytesDecimal(log.len() as u64));
    g.bench_function("screen/build_log", |b| {
        b.iter(|| {
            let mut s = Screen::new(ROWS, COLS);
            for chunk in log.chunks(4096) {
                s.process(chunk);
                black_box(s.drain_signals());
            }
            s
        })
    });
    g.bench_function("pane/build_log", |b| {
        b.iter(|| {
            // 4 KiB reads arriving 1 ms apart: 8 s of output.
            let mut d = PaneDetector::new(setup.cfg.clone(), ROWS, COLS);
            d.set_agent(Duration::ZERO, Some(manifest.clone()));
            for (i, chunk) in log.chunks(4096).enumerate() {
                let now = Duration::from_millis(i as u64);
                while let Some(t) = d.poll_timeout().filter(|t| *t < now) {
                    d.tick(t);
                }
                d.feed(now, chunk);
            }
            d
        })
    });
    g.finish();

    let mut g = c.benchmark_group("flood");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let floods: [(&str, &[u8], usize); 5] = [
        ("newline", b"\n", 256 << 10),
        ("bell", b"\x07", 256 << 10),
        ("erase_display", b"\x1b[2J", 64 << 10),
        ("title", b"\x1b]0;a\x07\x1b]0;b\x07", 256 << 10),
        // CSI b repeats the last character up to 65,535 times.
        ("repeat_65535", b"x\x1b[65535b", 900),
    ];
    for (name, unit, len) in floods {
        let bytes: Vec<u8> = unit
            .iter()
            .copied()
            .cycle()
            .take(len / unit.len() * unit.len())
            .collect();
        g.throughput(Throughput::BytesDecimal(bytes.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut s = Screen::new(ROWS, COLS);
                s.process(&bytes);
                black_box(s.drain_signals());
                s
            })
        });
    }
    g.finish();
}

criterion_group!(benches, throughput, other_output);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
