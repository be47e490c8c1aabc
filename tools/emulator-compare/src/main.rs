//! Compares the two candidate terminal emulators, `vt100` (in use) and
//! `alacritty_terminal`, on the recorded corpus: correctness against tmux's
//! own screen, parsing speed, and memory per pane.
//!
//! ```text
//! cargo run --release --manifest-path tools/emulator-compare/Cargo.toml -- [CORPUS] [--dump DIR]
//! ```
//!
//! `CORPUS` (or `$TEND_CORPUS`) is a folder of full recordings as
//! `tools/agentlab` writes them: `<agent>/<scenario>/{pane.cast,snapshots.jsonl}`
//! (the copies in `tests/corpus/` keep no snapshots). With `--dump DIR`,
//! the first mismatching snapshots of every recording are written there as
//! side-by-side diffs. The decision this informs is recorded in
//! `docs/decisions/0001-terminal-emulator.md`.
//!
//! * **Correctness.** Each `pane.cast` is fed up to each snapshot's time; the
//!   emulator's visible text (rows right-trimmed, wrapped rows joined as
//!   `capture-pane -J` does) is compared with the snapshot's screen (SGR
//!   stripped), as are the alternate-screen flag, the cursor and the title.
//!   The cast's clock is the time `pipe-pane` delivered the bytes, not the
//!   time tmux applied them, so a second figure allows the cut anywhere
//!   within ±250 ms of the snapshot.
//! * **Speed.** Every recording's output, fed into a fresh 200×50 emulator,
//!   on one thread; the median of several passes.
//! * **Memory.** A counting global allocator gives the live heap bytes of one
//!   pane (fresh, after the alternate screen was used, and after 2,000 lines
//!   of scrollback were pushed through); the resident-set growth of many
//!   such panes cross-checks it.

use std::alloc::System;
use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::test::TermSize;
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi;
use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};
use tend_detector::cast::{Cast, EventKind};
use tend_detector::screen::Screen;
use tend_detector::{DetectorConfig, PaneDetector, Registry};

// ---------------------------------------------------------------------------
// Live heap bytes, counted by an instrumented system allocator.

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn live() -> usize {
    // A realloc's growth or shrinkage is counted in these two already.
    let s = GLOBAL.stats();
    s.bytes_allocated - s.bytes_deallocated
}

/// Resident set size of this process, bytes (Linux; 0 elsewhere).
fn rss() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

// ---------------------------------------------------------------------------
// The emulators behind one interface.

/// What the comparison reads from an emulator.
#[derive(Debug, Clone, PartialEq)]
struct View {
    /// Visible lines, wrapped rows joined, right-trimmed.
    lines: Vec<String>,
    alt: bool,
    /// `(x, y)` as tmux reports it.
    cursor: (u16, u16),
    title: String,
}

trait Emulator {
    const NAME: &'static str;
    fn new(rows: u16, cols: u16) -> Self;
    fn feed(&mut self, bytes: &[u8]);
    fn resize(&mut self, rows: u16, cols: u16);
    fn view(&self) -> View;
}

/// Joins physical rows into logical lines: `rows[i].1` says row `i` wraps
/// into row `i + 1` (what `capture-pane -J` undoes).
fn join_rows(rows: Vec<(String, bool)>) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for (text, wrapped) in rows {
        cur.push_str(&text);
        if !wrapped {
            out.push(cur.trim_end().to_owned());
            cur.clear();
        }
    }
    if !cur.is_empty() {
        out.push(cur.trim_end().to_owned());
    }
    out
}

fn nz(v: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(v).unwrap_or(std::num::NonZeroU16::MIN)
}

/// Title capture for `vt100`.
#[derive(Default)]
struct Vt100Title(String);

impl vt100::Callbacks for Vt100Title {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.0 = String::from_utf8_lossy(title).into_owned();
    }
}

/// `vt100` 0.18 configured as tend uses it (no scrollback of its own).
struct Vt100(vt100::Parser<Vt100Title>);

impl Emulator for Vt100 {
    const NAME: &'static str = "vt100 0.18";

    fn new(rows: u16, cols: u16) -> Self {
        Vt100(vt100::Parser::new_with_callbacks(
            nz(rows),
            nz(cols),
            0,
            Vt100Title::default(),
        ))
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.0.process(bytes);
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        self.0.set_size(nz(rows), nz(cols));
    }

    fn view(&self) -> View {
        let s = self.0.screen();
        let (rows, cols) = s.size();
        let mut phys = Vec::with_capacity(usize::from(rows.get()));
        for r in 0..rows.get() {
            let mut text = String::new();
            for c in 0..cols.get() {
                let Some(cell) = s.cell(r, c) else { continue };
                if cell.is_wide_continuation() {
                    continue;
                }
                if cell.has_contents() {
                    text.push_str(cell.contents());
                } else {
                    text.push(' ');
                }
            }
            phys.push((text, s.row_wrapped(r)));
        }
        let (row, col) = s.cursor_position();
        View {
            lines: join_rows(phys),
            alt: s.alternate_screen(),
            cursor: (col, row),
            title: self.0.callbacks().0.clone(),
        }
    }
}

/// Never defers a synchronized update: bytes apply as they arrive, the way
/// tmux's grid (and `vt100`) apply them. The default `StdSyncHandler` reads
/// the wall clock and buffers up to 150 ms of output, which a sans-IO
/// detector cannot use.
#[derive(Default)]
struct NoSync;

impl ansi::Timeout for NoSync {
    fn set_timeout(&mut self, _: Duration) {}
    fn clear_timeout(&mut self) {}
    fn pending_timeout(&self) -> bool {
        false
    }
}

#[derive(Clone, Default)]
struct AlacrittyTitle(Rc<RefCell<String>>);

impl EventListener for AlacrittyTitle {
    fn send_event(&self, event: Event) {
        match event {
            Event::Title(t) => *self.0.borrow_mut() = t,
            Event::ResetTitle => self.0.borrow_mut().clear(),
            _ => {}
        }
    }
}

/// `alacritty_terminal` 0.26 with `history` lines of its own scrollback.
struct Alacritty<const HISTORY: usize> {
    term: Term<AlacrittyTitle>,
    parser: ansi::Processor<NoSync>,
    title: AlacrittyTitle,
}

impl<const HISTORY: usize> Emulator for Alacritty<HISTORY> {
    const NAME: &'static str = "alacritty_terminal 0.26";

    fn new(rows: u16, cols: u16) -> Self {
        let title = AlacrittyTitle::default();
        let config = Config {
            scrolling_history: HISTORY,
            ..Config::default()
        };
        let size = TermSize::new(usize::from(cols.max(1)), usize::from(rows.max(1)));
        Alacritty {
            term: Term::new(config, &size, title.clone()),
            parser: ansi::Processor::new(),
            title,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.term, bytes);
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        self.term.resize(TermSize::new(
            usize::from(cols.max(1)),
            usize::from(rows.max(1)),
        ));
    }

    fn view(&self) -> View {
        let grid = self.term.grid();
        let (rows, cols) = (grid.screen_lines(), grid.columns());
        let mut phys = Vec::with_capacity(rows);
        for r in 0..rows {
            let row = &grid[Line(r as i32)];
            let mut text = String::new();
            for c in 0..cols {
                let cell = &row[Column(c)];
                if cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
                    continue;
                }
                if cell.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
                    text.push(' ');
                    continue;
                }
                text.push(cell.c);
                for z in cell.zerowidth().unwrap_or_default() {
                    text.push(*z);
                }
            }
            let wrapped = row[Column(cols - 1)].flags.contains(Flags::WRAPLINE);
            phys.push((text, wrapped));
        }
        let p = grid.cursor.point;
        // After a character in the last column alacritty keeps the cursor
        // there with a pending-wrap flag; tmux (and vt100) report the column
        // past the edge. Same state, two notations: compare like with like.
        let x = p.column.0 + usize::from(grid.cursor.input_needs_wrap);
        View {
            lines: join_rows(phys),
            alt: self.term.mode().contains(TermMode::ALT_SCREEN),
            cursor: (x as u16, p.line.0.max(0) as u16),
            title: self.title.0.borrow().clone(),
        }
    }
}

// ---------------------------------------------------------------------------
// The corpus.

struct Snapshot {
    t: Duration,
    view: View,
    /// The snapshot carried a title (not every recording has one).
    has_title: bool,
}

struct Recording {
    name: String,
    cast: Cast,
    snapshots: Vec<Snapshot>,
}

/// Removes escape sequences (`capture-pane -e` emits SGR only).
fn strip_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // CSI: parameters and intermediates, then a final byte.
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                // OSC: to BEL or ST.
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn load(dir: &Path) -> Option<Recording> {
    let cast = std::fs::read_to_string(dir.join("pane.cast")).ok()?;
    let cast = Cast::parse(&cast).ok()?;
    let snaps = std::fs::read_to_string(dir.join("snapshots.jsonl")).ok()?;
    let mut snapshots = Vec::new();
    for line in snaps.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let t = v["t"].as_f64()?;
        let screen = strip_escapes(v["screen"].as_str()?);
        let mut lines: Vec<String> = screen
            .split('\n')
            .map(|l| l.trim_end().to_owned())
            .collect();
        if screen.ends_with('\n') {
            lines.pop();
        }
        let cursor = (
            v["cursor"][0].as_u64().unwrap_or(0) as u16,
            v["cursor"][1].as_u64().unwrap_or(0) as u16,
        );
        snapshots.push(Snapshot {
            t: Duration::from_secs_f64(t.max(0.0)),
            view: View {
                lines,
                alt: v["alt"].as_bool().unwrap_or(false),
                cursor,
                title: v["title"].as_str().unwrap_or_default().to_owned(),
            },
            has_title: v.get("title").is_some(),
        });
    }
    // Until a program sets a title, tmux shows its default (the host
    // name): the title of the first snapshot, taken before anything ran.
    let default_title = snapshots
        .first()
        .map(|s| s.view.title.clone())
        .unwrap_or_default();
    for s in &mut snapshots {
        if s.view.title == default_title {
            s.view.title.clear();
        }
    }
    let name = format!(
        "{}/{}",
        dir.parent()?.file_name()?.to_string_lossy(),
        dir.file_name()?.to_string_lossy()
    );
    Some(Recording {
        name,
        cast,
        snapshots,
    })
}

fn corpus(root: &Path) -> Vec<Recording> {
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
    dirs.iter().filter_map(|d| load(d)).collect()
}

// ---------------------------------------------------------------------------
// Correctness.

/// Tolerance for the clock skew between `pipe-pane` delivery and capture.
const WINDOW: Duration = Duration::from_millis(250);

#[derive(Default, Clone, Copy)]
struct Score {
    snapshots: usize,
    exact: usize,
    exact_window: usize,
    /// Text, alternate screen and cursor all agree at one cut in the window.
    all_window: usize,
    rows: usize,
    rows_equal: usize,
    alt: usize,
    cursor: usize,
    titled: usize,
    title: usize,
}

impl Score {
    fn add(&mut self, o: &Score) {
        self.snapshots += o.snapshots;
        self.exact += o.exact;
        self.exact_window += o.exact_window;
        self.all_window += o.all_window;
        self.rows += o.rows;
        self.rows_equal += o.rows_equal;
        self.alt += o.alt;
        self.cursor += o.cursor;
        self.titled += o.titled;
        self.title += o.title;
    }
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "—".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / d as f64)
    }
}

fn row_matches(a: &[String], b: &[String]) -> (usize, usize) {
    let total = a.len().max(b.len());
    let equal = a.iter().zip(b).filter(|(x, y)| x == y).count();
    (equal, total)
}

fn apply<E: Emulator>(emu: &mut E, kind: &EventKind) {
    match kind {
        EventKind::Output(b) => emu.feed(b),
        EventKind::Resize(c, r) => emu.resize(*r, *c),
        EventKind::Input(_) | EventKind::Marker(_) => {}
    }
}

fn diff(rec: &str, emu: &str, snap: &Snapshot, got: &View) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {rec} t={:.3}s emulator={emu}", snap.t.as_secs_f64());
    let _ = writeln!(
        s,
        "# alt tmux={} emu={}  cursor tmux={:?} emu={:?}  title tmux={:?} emu={:?}",
        snap.view.alt, got.alt, snap.view.cursor, got.cursor, snap.view.title, got.title
    );
    let n = snap.view.lines.len().max(got.lines.len());
    for i in 0..n {
        let a = snap.view.lines.get(i).map_or("<none>", String::as_str);
        let b = got.lines.get(i).map_or("<none>", String::as_str);
        if a != b {
            let _ = writeln!(s, "row {i:2} tmux: {a:?}");
            let _ = writeln!(s, "row {i:2} emu : {b:?}");
        }
    }
    s
}

fn correctness<E: Emulator>(rec: &Recording, dump: Option<&Path>) -> Score {
    let mut emu = E::new(rec.cast.header.height, rec.cast.header.width);
    let events = &rec.cast.events;
    let mut next = 0;
    let mut score = Score::default();
    let mut dumped = 0;
    for snap in &rec.snapshots {
        let lo = snap.t.saturating_sub(WINDOW);
        let hi = snap.t + WINDOW;
        while next < events.len() && events[next].at < lo {
            apply(&mut emu, &events[next].kind);
            next += 1;
        }
        // Cut points inside the window; the one at `t` is the exact figure.
        let mut at_t: Option<View> = None;
        let mut any = false;
        let mut any_all = false;
        loop {
            let v = emu.view();
            any |= v.lines == snap.view.lines;
            any_all |= v.lines == snap.view.lines
                && v.alt == snap.view.alt
                && v.cursor == snap.view.cursor;
            let past_t = next >= events.len() || events[next].at > snap.t;
            if past_t && at_t.is_none() {
                at_t = Some(v);
            }
            if next >= events.len() || events[next].at > hi {
                break;
            }
            apply(&mut emu, &events[next].kind);
            next += 1;
        }
        let got = at_t.unwrap_or_else(|| emu.view());
        let (eq, total) = row_matches(&snap.view.lines, &got.lines);
        let exact = got.lines == snap.view.lines;
        score.snapshots += 1;
        score.exact += usize::from(exact);
        score.exact_window += usize::from(any);
        score.all_window += usize::from(any_all);
        score.rows += total;
        score.rows_equal += eq;
        score.alt += usize::from(got.alt == snap.view.alt);
        score.cursor += usize::from(got.cursor == snap.view.cursor);
        if snap.has_title {
            score.titled += 1;
            score.title += usize::from(got.title == snap.view.title);
        }
        let mismatch = !exact
            || got.alt != snap.view.alt
            || got.cursor != snap.view.cursor
            || (snap.has_title && got.title != snap.view.title);
        if let (Some(dir), true) = (dump, mismatch && dumped < 3) {
            dumped += 1;
            let file = format!(
                "{}-{}-{:07.3}.txt",
                rec.name.replace('/', "-"),
                if E::NAME.starts_with("vt100") {
                    "vt100"
                } else {
                    "alacritty"
                },
                snap.t.as_secs_f64()
            );
            let _ = std::fs::write(dir.join(file), diff(&rec.name, E::NAME, snap, &got));
        }
    }
    score
}

// ---------------------------------------------------------------------------
// Speed.

const PASSES: usize = 7;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn total_output(corpus: &[Recording]) -> usize {
    corpus
        .iter()
        .flat_map(|r| &r.cast.events)
        .map(|e| match &e.kind {
            EventKind::Output(b) => b.len(),
            _ => 0,
        })
        .sum()
}

/// Median MB/s (10^6 bytes) of feeding every recording into a fresh
/// emulator built by `make`, driven by `feed`.
fn speed<T>(
    corpus: &[Recording],
    make: impl Fn(u16, u16) -> T,
    feed: impl Fn(&mut T, &EventKind),
) -> f64 {
    let bytes = total_output(corpus) as f64;
    let mut rates = Vec::new();
    for _ in 0..PASSES {
        let start = Instant::now();
        for rec in corpus {
            let mut emu = make(rec.cast.header.height, rec.cast.header.width);
            for e in &rec.cast.events {
                feed(&mut emu, &e.kind);
            }
            std::hint::black_box(&emu);
        }
        rates.push(bytes / start.elapsed().as_secs_f64() / 1e6);
    }
    median(rates)
}

/// A `cat` of an 8 MB build log: 80-column lines with a coloured level,
/// delivered in 4 KiB reads.
fn log_workload() -> Recording {
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
    let bytes = text.into_bytes();
    let events = bytes
        .chunks(4096)
        .map(|c| tend_detector::cast::Event {
            at: Duration::ZERO,
            kind: EventKind::Output(c.to_vec()),
        })
        .collect();
    Recording {
        name: "synthetic/build-log".into(),
        cast: Cast {
            header: tend_detector::cast::Header {
                version: 2,
                width: COLS,
                height: ROWS,
                timestamp: None,
                extra: Default::default(),
            },
            events,
        },
        snapshots: Vec::new(),
    }
}

// ---------------------------------------------------------------------------
// Memory.

/// 2,000 lines of coloured text, then a screenful, so 2,000 lines have
/// scrolled off a 50-row screen.
fn scrollback_text(lines: usize) -> Vec<u8> {
    let mut s = String::new();
    for i in 0..lines {
        let _ = write!(
            s,
            "\x1b[32m{i:05}\x1b[0m  src/engine.rs: fn evaluate(&mut self, at: Duration) — \
             view, fingerprint, rules::evaluate, decide ({i} of {lines})\r\n"
        );
    }
    s.into_bytes()
}

/// A full-screen TUI frame drawn on the alternate screen, then left.
fn alternate_frame(rows: u16, cols: u16) -> Vec<u8> {
    let mut s = String::from("\x1b[?1049h\x1b[H\x1b[2J");
    for r in 1..=rows {
        let _ = write!(s, "\x1b[{r};1H\x1b[38;5;{}m", r % 200);
        s.extend(std::iter::repeat_n('─', usize::from(cols)));
    }
    s.push_str("\x1b[?1049l");
    s.into_bytes()
}

struct MemRow {
    fresh: usize,
    alt: usize,
    scrolled: usize,
    reported: Option<usize>,
}

const ROWS: u16 = 50;
const COLS: u16 = 200;
const SCROLLBACK: usize = 2_000;
const RSS_PANES: usize = 100;

/// What is measured: one pane's live heap in this process, or (in a child
/// process of its own, so nothing freed earlier is reused) the resident-set
/// growth of `RSS_PANES` panes.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Live,
    Rss,
}

/// Live bytes of one pane at three points; or RSS growth per pane (printed).
fn memory<T>(
    mode: Mode,
    make: impl Fn() -> T,
    feed: impl Fn(&mut T, &[u8]),
    reported: impl Fn(&T) -> Option<usize>,
) -> MemRow {
    let alt = alternate_frame(ROWS, COLS);
    let text = scrollback_text(SCROLLBACK + usize::from(ROWS));
    if mode == Mode::Rss {
        let before = rss();
        let mut panes = Vec::with_capacity(RSS_PANES);
        for _ in 0..RSS_PANES {
            let mut p = make();
            feed(&mut p, &alt);
            feed(&mut p, &text);
            panes.push(p);
        }
        println!("{}", rss().saturating_sub(before) / RSS_PANES);
        std::hint::black_box(&panes);
        std::process::exit(0);
    }
    let base = live();
    let mut one = make();
    let fresh = live() - base;
    feed(&mut one, &alt);
    let after_alt = live() - base;
    feed(&mut one, &text);
    let scrolled = live() - base;
    let rep = reported(&one);
    MemRow {
        fresh,
        alt: after_alt,
        scrolled,
        reported: rep,
    }
}

const MODELS: [&str; 6] = [
    "vt100 0.18, no scrollback (as tend configures it)",
    "vt100 0.18 with 2,000 rows of its own scrollback",
    "tend `Screen` (vt100 + 2,000-line plain-text history)",
    "tend `PaneDetector` (`Screen` + rules + state; claude manifest)",
    "alacritty_terminal 0.26, no scrollback",
    "alacritty_terminal 0.26, 2,000 rows of scrollback",
];

fn measure_model(idx: usize, mode: Mode) -> MemRow {
    match idx {
        0 => memory(mode, || Vt100::new(ROWS, COLS), |e, b| e.feed(b), |_| None),
        1 => memory(
            mode,
            || {
                Vt100(vt100::Parser::new_with_callbacks(
                    nz(ROWS),
                    nz(COLS),
                    SCROLLBACK,
                    Vt100Title::default(),
                ))
            },
            |e, b| e.feed(b),
            |_| None,
        ),
        2 => memory(
            mode,
            || Screen::new(ROWS, COLS),
            |s, b| s.process(b),
            |s| Some(s.memory_bytes()),
        ),
        3 => {
            let registry = Registry::bundled();
            let manifest = Arc::new(
                registry
                    .get("claude")
                    .cloned()
                    .expect("bundled claude manifest"),
            );
            let cfg = Arc::new(DetectorConfig::default());
            memory(
                mode,
                || {
                    let mut d = PaneDetector::new(cfg.clone(), ROWS, COLS);
                    d.set_agent(Duration::ZERO, Some(manifest.clone()));
                    d
                },
                |d, b| {
                    d.feed(Duration::ZERO, b);
                    d.tick(Duration::from_secs(1));
                },
                |d| Some(d.screen().memory_bytes()),
            )
        }
        4 => memory(
            mode,
            || Alacritty::<0>::new(ROWS, COLS),
            |e, b| e.feed(b),
            |_| None,
        ),
        _ => memory(
            mode,
            || Alacritty::<SCROLLBACK>::new(ROWS, COLS),
            |e, b| e.feed(b),
            |_| None,
        ),
    }
}

/// RSS growth per pane of model `idx`, measured in a fresh child process.
fn rss_per_pane(idx: usize) -> Option<usize> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .args(["--rss", &idx.to_string()])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

// ---------------------------------------------------------------------------
// Screen to text: what the detector pays at every evaluation.

/// Median time to turn the visible screen into right-trimmed rows.
fn time_rows<T>(emu: &T, rows: impl Fn(&T) -> Vec<String>) -> Duration {
    const N: u32 = 500;
    let mut times = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        for _ in 0..N {
            std::hint::black_box(rows(emu));
        }
        times.push(start.elapsed().as_secs_f64() / f64::from(N));
    }
    Duration::from_secs_f64(median(times))
}

/// `vt100` rows the way `Screen::rows` builds them (a trimmed copy).
fn vt100_rows_copy(p: &Vt100) -> Vec<String> {
    let (_, cols) = p.0.screen().size();
    p.0.screen()
        .rows(0, cols.get())
        .map(|r| r.trim_end().to_owned())
        .collect()
}

/// `vt100` rows trimmed in place (no second allocation per row).
fn vt100_rows_in_place(p: &Vt100) -> Vec<String> {
    let (_, cols) = p.0.screen().size();
    p.0.screen()
        .rows(0, cols.get())
        .map(|mut r| {
            r.truncate(r.trim_end().len());
            r
        })
        .collect()
}

/// `alacritty_terminal` rows from its cells.
fn alacritty_rows<const H: usize>(a: &Alacritty<H>) -> Vec<String> {
    let grid = a.term.grid();
    let cols = grid.columns();
    (0..grid.screen_lines())
        .map(|r| {
            let row = &grid[Line(r as i32)];
            let mut text = String::with_capacity(cols);
            for c in 0..cols {
                let cell = &row[Column(c)];
                if cell
                    .flags
                    .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
                {
                    continue;
                }
                text.push(cell.c);
                for z in cell.zerowidth().unwrap_or_default() {
                    text.push(*z);
                }
            }
            text.truncate(text.trim_end().len());
            text
        })
        .collect()
}

fn kib(b: usize) -> String {
    format!("{:.0} KiB", b as f64 / 1024.0)
}

// ---------------------------------------------------------------------------

fn main() {
    let mut args = std::env::args().skip(1);
    let mut root: Option<PathBuf> = None;
    let mut dump: Option<PathBuf> = None;
    while let Some(a) = args.next() {
        if a == "--rss" {
            let idx = args.next().and_then(|i| i.parse().ok()).unwrap_or(0);
            measure_model(idx, Mode::Rss);
            return;
        }
        if a == "--dump" {
            dump = args.next().map(PathBuf::from);
        } else {
            root = Some(PathBuf::from(a));
        }
    }
    let root = root
        .or_else(|| std::env::var_os("TEND_CORPUS").map(PathBuf::from));
    let Some(root) = root else {
        eprintln!(
            "which recordings? pass a folder of full recordings (with snapshots.jsonl), \
             as tools/agentlab records them, or set TEND_CORPUS"
        );
        std::process::exit(2);
    };
    if let Some(d) = &dump {
        let _ = std::fs::create_dir_all(d);
    }
    let corpus = corpus(&root);
    if corpus.is_empty() {
        eprintln!("no recordings under {}", root.display());
        std::process::exit(2);
    }
    let bytes = total_output(&corpus);
    println!(
        "corpus: {} recordings, {} snapshots, {:.2} MB of output ({})\n",
        corpus.len(),
        corpus.iter().map(|r| r.snapshots.len()).sum::<usize>(),
        bytes as f64 / 1e6,
        root.display()
    );

    // Correctness.
    println!("## Correctness against tmux 3.3a `capture-pane -p -e -J`\n");
    println!(
        "| recording | snaps | vt100 exact | ±250ms | +cursor ±250ms | rows | alt | cursor | title \
         | alacritty exact | ±250ms | +cursor ±250ms | rows | alt | cursor | title |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let (mut tv, mut ta) = (Score::default(), Score::default());
    for rec in &corpus {
        let v = correctness::<Vt100>(rec, dump.as_deref());
        let a = correctness::<Alacritty<0>>(rec, dump.as_deref());
        tv.add(&v);
        ta.add(&a);
        println!(
            "| {} | {} | {} |",
            rec.name,
            v.snapshots,
            cells(&v) + " | " + &cells(&a)
        );
    }
    println!(
        "| **all** | {} | {} |\n",
        tv.snapshots,
        cells(&tv) + " | " + &cells(&ta)
    );

    // Speed.
    let log = log_workload();
    println!(
        "## Speed: fresh {COLS}x{ROWS} screens, one thread, MB/s (median of 3 x {PASSES} passes)\n"
    );
    println!(
        "Workloads: the corpus ({:.2} MB, mostly Gemini's full-frame redraws); a `cat` of a \
         {:.0} MB build log (80-column coloured lines, every line scrolls).\n",
        bytes as f64 / 1e6,
        total_output(std::slice::from_ref(&log)) as f64 / 1e6
    );
    let feed_vt = |e: &mut Vt100, k: &EventKind| apply(e, k);
    let feed_al = |e: &mut Alacritty<0>, k: &EventKind| apply(e, k);
    let feed_screen = |s: &mut Screen, k: &EventKind| match k {
        EventKind::Output(b) => {
            s.process(b);
            s.drain_signals();
        }
        EventKind::Resize(c, r) => s.resize(*r, *c),
        _ => {}
    };
    println!("| emulator | corpus | build log |\n|---|---:|---:|");
    let log = std::slice::from_ref(&log);
    for (name, which) in [
        ("vt100 0.18 (bare parser)", 0),
        ("alacritty_terminal 0.26 (Term + Processor)", 1),
        (
            "tend `Screen` (vt100 + signal callbacks + 2,000-line history)",
            2,
        ),
    ] {
        let mut rates = [Vec::new(), Vec::new()];
        // Three rounds, each emulator in turn, so drift on a noisy machine
        // hits all of them.
        for _ in 0..3 {
            for (i, work) in [&corpus[..], log].into_iter().enumerate() {
                rates[i].push(match which {
                    0 => speed(work, Vt100::new, feed_vt),
                    1 => speed(work, Alacritty::<0>::new, feed_al),
                    _ => speed(work, Screen::new, feed_screen),
                });
            }
        }
        let [c, l] = rates;
        println!("| {name} | {:.0} | {:.0} |", median(c), median(l));
    }
    println!();

    // Screen to text.
    if let Some(rec) = corpus
        .iter()
        .filter(|r| r.name.starts_with("gemini/"))
        .max_by_key(|r| r.snapshots.len())
    {
        let mut v = Vt100::new(rec.cast.header.height, rec.cast.header.width);
        let mut a = Alacritty::<0>::new(rec.cast.header.height, rec.cast.header.width);
        for e in &rec.cast.events {
            apply(&mut v, &e.kind);
            apply(&mut a, &e.kind);
        }
        println!(
            "## Screen to text: one {COLS}x{ROWS} screen (end of {}) to trimmed rows, median\n",
            rec.name
        );
        println!("| extraction | µs |\n|---|---:|");
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "| vt100 `rows()` + trimmed copy (tend's `Screen::rows`) | {:.1} |",
            us(time_rows(&v, vt100_rows_copy))
        );
        println!(
            "| vt100 `rows()` trimmed in place | {:.1} |",
            us(time_rows(&v, vt100_rows_in_place))
        );
        println!(
            "| alacritty_terminal cells | {:.1} |\n",
            us(time_rows(&a, alacritty_rows::<0>))
        );
    }

    // Memory.
    println!(
        "## Memory per pane ({COLS}x{ROWS}; live heap from a counting allocator; \
         RSS growth over {RSS_PANES} panes in a process of their own)\n"
    );
    println!(
        "| model | fresh | after alt screen | + 2,000 lines scrolled | RSS/pane | memory_bytes() |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (idx, name) in MODELS.iter().enumerate() {
        let r = measure_model(idx, Mode::Live);
        let rss = rss_per_pane(idx);
        println!(
            "| {name} | {} | {} | {} | {} | {} |",
            kib(r.fresh),
            kib(r.alt),
            kib(r.scrolled),
            rss.map_or_else(|| "—".to_owned(), kib),
            r.reported.map_or_else(|| "—".to_owned(), kib)
        );
    }
}

fn cells(s: &Score) -> String {
    format!(
        "{} | {} | {} | {} | {} | {} | {}",
        pct(s.exact, s.snapshots),
        pct(s.exact_window, s.snapshots),
        pct(s.all_window, s.snapshots),
        pct(s.rows_equal, s.rows),
        pct(s.alt, s.snapshots),
        pct(s.cursor, s.snapshots),
        pct(s.title, s.titled)
    )
}
