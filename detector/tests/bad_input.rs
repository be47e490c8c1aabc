//! Bad input never panics and never grows memory without bound: invalid
//! UTF-8 and escape-sequence garbage are survived with bounded memory and
//! no panic.
//!
//! * Property tests feed random bytes, nasty escape fragments, resizes to
//!   tiny and large sizes, keystrokes and clock ticks into a [`Screen`] and a
//!   [`PaneDetector`], checking after every step that the history, the
//!   signal buffers and the heap stay under their bounds.
//! * Fixed tests push the big cases through once: 1 MiB lines, a NUL
//!   flood, a CSI with thousands of parameters, absurd CSI parameters,
//!   endless DCS/APC strings, BEL and title floods.
//! * Two tests pin gaps once closed outside this file
//!   (see `docs/PERFORMANCE.md`, "Bad input"): an OSC that is never
//!   terminated, and a resize to tmux's largest window size.
//!
//! The heap is measured with a per-thread counting allocator, so tests
//! running in parallel do not see each other's allocations.
//!
//! More cases: `PROPTEST_CASES=2000 cargo test -p tend-detector --test tests bad_input::`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use tend_detector::cast::Cast;
use tend_detector::screen::Screen;
use tend_detector::{DetectorConfig, Manifest, PaneDetector, Registry};

// ---------------------------------------------------------------------------
// Per-thread live-heap counter.

struct Counting;

thread_local! {
    static NET: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    // `try_with`: never touch a thread-local that is being torn down.
    let _ = NET.try_with(|n| n.set(n.get() + delta));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counter is bookkeeping only and allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator with this layout.
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with this layout.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes allocated and not yet freed by this thread.
fn live() -> isize {
    NET.with(Cell::get)
}

/// The bundled manifests, compiled once for the whole test binary.
fn registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(Registry::bundled)
}

/// The bundled manifests' source text.
fn manifest_texts() -> &'static [String] {
    static TEXTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(|| {
        registry()
            .iter()
            .filter_map(|m| {
                let file = m.source.strip_prefix("bundled:")?;
                std::fs::read_to_string(format!("{}/agents/{file}", env!("CARGO_MANIFEST_DIR")))
                    .ok()
            })
            .collect()
    })
}

/// The first panic of a process (even a caught one, such as `Screen`'s
/// guard around the emulator) allocates the standard library's backtrace
/// caches for good when `RUST_BACKTRACE` is set: pay that before measuring.
fn warm_panic_machinery() {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let _ = std::panic::catch_unwind(|| panic!("warming up the panic machinery"));
    });
}

// ---------------------------------------------------------------------------
// Bounds.

/// Longest line kept in the history (`screen.rs`).
const HISTORY_LINE_MAX: usize = 1_024;
/// Most signals a `Screen` buffers between drains (`screen.rs`).
const SCREEN_SIGNALS_MAX: usize = 256;
/// Most signals a `PaneDetector` buffers between drains (`engine/mod.rs`, `feed`).
const DETECTOR_SIGNALS_MAX: usize = 64;
/// Bytes of a `vt100` cell.
const CELL: usize = 32;
/// Parser state, small buffers, allocator rounding.
const SLACK: usize = 1 << 20;

/// Heap a screen may hold: both grids at the largest size it has had (row
/// buffers keep their capacity when a resize shrinks them), the text of
/// their rows kept for evaluations (at most a cell's bytes a cell), a full
/// history of maximal lines, and slack.
fn screen_bound(max_rows: usize, max_cols: usize, history: usize) -> usize {
    3 * max_rows * max_cols * CELL
        + history * (HISTORY_LINE_MAX + 64)
        + history.next_power_of_two() * 24
        + SLACK
}

fn check_history(s: &Screen, capacity: usize) -> Result<(), TestCaseError> {
    let h = s.history();
    prop_assert!(h.len() <= capacity, "history {} > {capacity}", h.len());
    for line in h.lines() {
        prop_assert!(
            line.len() <= HISTORY_LINE_MAX,
            "history line of {} bytes",
            line.len()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Inputs.

/// Escape sequences and byte soup that have broken terminal emulators.
fn fragments() -> Vec<Vec<u8>> {
    let mut f: Vec<Vec<u8>> = [
        // Cursor, regions, repeats, inserts and deletes with absurd counts.
        &b"\x1b[99999999;99999999H"[..],
        b"\x1b[0;0H",
        b"\x1b[1;99999999r",
        b"\x1b[99999999;1r",
        b"\x1b[0;0r",
        b"\x1b[r",
        b"x\x1b[999999999b",
        b"\x1b[99999999@",
        b"\x1b[99999999L",
        b"\x1b[99999999M",
        b"\x1b[99999999P",
        b"\x1b[99999999X",
        b"\x1b[99999999S",
        b"\x1b[99999999T",
        b"\x1b[99999999A",
        b"\x1b[99999999C",
        b"\x1b[99999999G",
        b"\x1b[99999999d",
        b"\x1b[99999999I",
        b"\x1b[99999999Z",
        b"\x1b[3J",
        b"\x1b[2J",
        b"\x1b[K",
        b"\x1b[8;9999;9999t",
        b"\x1b[38;2;999;999;999;48;5;999m",
        b"\x1b[38:2::1:2:3m",
        // Modes.
        b"\x1b[?1049h",
        b"\x1b[?1049l",
        b"\x1b[?47h",
        b"\x1b[?1047l",
        b"\x1b[?6h",
        b"\x1b[?7l",
        b"\x1b[4h",
        b"\x1b[?2026h",
        b"\x1b[?2026l",
        b"\x1bc",
        b"\x1b#8",
        b"\x1b7",
        b"\x1b8",
        b"\x1bM",
        b"\x1bD",
        b"\x1bE",
        b"\x1b(0",
        b"\x1b(B",
        // OSC: titles, notifications, progress, marks, hyperlinks; some
        // terminated by BEL, some by ST, some never.
        b"\x1b]0;",
        b"\x1b]2;a title\x07",
        b"\x1b]0;\xff\xfe\x07",
        b"\x1b]9;4;1;50\x07",
        b"\x1b]9;4;9;99999\x1b\\",
        b"\x1b]9;4;1;-5\x07",
        b"\x1b]9;notify me\x07",
        b"\x1b]777;notify;t;b;c\x07",
        b"\x1b]777\x07",
        b"\x1b]99;i=1;x\x1b\\",
        b"\x1b]133;A\x07",
        b"\x1b]133;D;99999999999\x07",
        b"\x1b]8;;http://x\x1b\\",
        b"\x1b];;;;;;;;;;;;;;;;;;;;;;;;;;;;;;\x07",
        // DCS, APC, PM, SOS, left open.
        b"\x1bP",
        b"\x1bPq#0;2;0;0;0",
        b"\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA",
        b"\x1b^",
        b"\x1bX",
        // Truncated sequences.
        b"\x1b",
        b"\x1b[",
        b"\x1b[?",
        b"\x1b[>",
        b"\x1b[1;",
        b"\x1b]",
        // 8-bit C1 controls.
        b"\x9b31m",
        b"\x9d0;t\x9c",
        b"\x90q\x9c",
        // Text: wide, combining, emoji, controls.
        "日本語".as_bytes(),
        "e\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}".as_bytes(),
        "👩\u{200d}👩\u{200d}👧 👍🏽 ❤\u{fe0f}".as_bytes(),
        "\u{17d8}\u{1f600}".as_bytes(),
        b"\r\n",
        b"\n\n\n\n\n\n\n\n\n\n",
        b"\x08\x08\x08",
        b"\t\t\t",
        b"\x07",
        b"\x00\x00\x00",
        b"\x18\x1a",
        // Invalid UTF-8.
        b"\xff\xfe",
        b"\xe6\x97",
        b"\xc0\xaf",
        b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80",
        b"\xf0\x9f\x98",
    ]
    .iter()
    .map(|b| b.to_vec())
    .collect();
    // A CSI with thousands of parameters.
    let mut csi = b"\x1b[".to_vec();
    csi.extend("1;".repeat(5_000).bytes());
    csi.push(b'm');
    f.push(csi);
    f
}

fn chunk() -> impl Strategy<Value = Vec<u8>> {
    let frags = fragments();
    prop_oneof![
        4 => prop::collection::vec(any::<u8>(), 0..512),
        4 => prop::sample::select(frags.clone()),
        2 => prop::collection::vec(prop::sample::select(frags), 1..24).prop_map(|v| v.concat()),
        2 => "[ -~]{0,300}".prop_map(String::into_bytes),
        1 => "\\PC{0,100}".prop_map(String::into_bytes),
    ]
}

/// `(rows, cols)`: zero, tiny, ordinary, large (up to `large` cells a side).
fn size(large: u16) -> impl Strategy<Value = (u16, u16)> {
    prop_oneof![
        1 => Just((0, 0)),
        2 => (0u16..=3, 0u16..=3),
        4 => (4u16..=80, 10u16..=300),
        1 => (large / 2..=large / 2 + large / 4, large / 2..=large),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Output(Vec<u8>),
    Input(Vec<u8>),
    Resize(u16, u16),
    /// Milliseconds to advance the clock by.
    Tick(u16),
    /// Read the signals (a caller that sometimes forgets to).
    Drain,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => chunk().prop_map(Op::Output),
        2 => prop_oneof![
            Just(b"y".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\x1b".to_vec()),
            Just(b"\x03".to_vec()),
            Just(b"\x1b[<0;10;10M".to_vec()),
            Just(b"\x1b[I".to_vec()),
            prop::collection::vec(any::<u8>(), 0..16),
        ]
        .prop_map(Op::Input),
        1 => size(400).prop_map(|(r, c)| Op::Resize(r, c)),
        3 => any::<u16>().prop_map(Op::Tick),
        1 => Just(Op::Drain),
    ]
}

// ---------------------------------------------------------------------------
// Property tests.

const PROP_HISTORY: usize = 64;

proptest! {
    // 64 cases by default (the suite runs unoptimised too); more with
    // PROPTEST_CASES.
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The screen model alone: bytes and resizes.
    #[test]
    fn screen_survives_garbage(
        start in size(1000),
        steps in prop::collection::vec(prop_oneof![
            6 => chunk().prop_map(Op::Output),
            1 => size(1000).prop_map(|(r, c)| Op::Resize(r, c)),
            1 => Just(Op::Drain),
        ], 1..40),
    ) {
        warm_panic_machinery();
        let base = live();
        let mut s = Screen::with_history(start.0, start.1, PROP_HISTORY);
        let (mut max_rows, mut max_cols) = (usize::from(start.0.max(1)), usize::from(start.1.max(1)));
        for step in &steps {
            match step {
                Op::Output(b) => s.process(b),
                Op::Resize(r, c) => {
                    s.resize(*r, *c);
                    max_rows = max_rows.max(usize::from((*r).max(1)));
                    max_cols = max_cols.max(usize::from((*c).max(1)));
                }
                Op::Drain => {
                    prop_assert!(s.drain_signals().len() <= SCREEN_SIGNALS_MAX);
                }
                Op::Input(_) | Op::Tick(_) => {}
            }
            let (rows, cols) = s.size();
            prop_assert!(rows >= 1 && cols >= 1);
            prop_assert_eq!(s.rows().len(), usize::from(rows));
            // Reading only the changed rows gives what reading all gives.
            let all = s.rows();
            prop_assert_eq!(s.rows_updated(), &all[..]);
            check_history(&s, PROP_HISTORY)?;
            let bound = screen_bound(max_rows, max_cols, PROP_HISTORY);
            prop_assert!(s.memory_bytes() <= bound, "memory_bytes {} > {bound}", s.memory_bytes());
            let held = (live() - base).max(0) as usize;
            prop_assert!(held <= bound, "heap {held} > {bound} after {step:?}");
            let _ = s.title();
            let _ = s.cursor();
        }
        prop_assert!(s.drain_signals().len() <= SCREEN_SIGNALS_MAX);
    }

    /// The whole detector: output, keystrokes, resizes, clock, agent changes.
    #[test]
    fn detector_survives_garbage(
        agent in prop::sample::select(registry().ids()),
        steps in prop::collection::vec(op(), 1..60),
        switch_at in any::<prop::sample::Index>(),
    ) {
        let manifest = Arc::new(registry().get(agent).expect("bundled").clone());
        let mut d = PaneDetector::new(Arc::new(DetectorConfig::default()), 50, 200);
        let mut now = Duration::ZERO;
        d.set_agent(now, Some(manifest.clone()));
        let switch = switch_at.index(steps.len());
        let (mut max_rows, mut max_cols) = (50usize, 200usize);
        for (i, step) in steps.iter().enumerate() {
            if i == switch {
                // The agent goes away and comes back: a new run.
                d.set_agent(now, None);
                d.set_agent(now, Some(manifest.clone()));
            }
            match step {
                Op::Output(b) => d.feed(now, b),
                Op::Input(b) => d.input(now, b),
                Op::Resize(r, c) => {
                    d.resize(now, *r, *c);
                    max_rows = max_rows.max(usize::from((*r).max(1)));
                    max_cols = max_cols.max(usize::from((*c).max(1)));
                }
                Op::Tick(ms) => {
                    now += Duration::from_millis(u64::from(*ms));
                    d.tick(now);
                }
                Op::Drain => {
                    prop_assert!(d.drain_signals().len() <= DETECTOR_SIGNALS_MAX);
                }
            }
            if let Some(next) = d.poll_timeout() {
                prop_assert!(next >= now, "timer in the past: {next:?} < {now:?}");
            }
            let mut transitions = 0;
            while d.poll_transition().is_some() {
                transitions += 1;
                prop_assert!(transitions <= 1_000, "transition queue runs away");
            }
            let bound = screen_bound(max_rows, max_cols, tend_detector::screen::DEFAULT_HISTORY_LINES);
            prop_assert!(d.screen().memory_bytes() <= bound);
            let _ = d.status();
        }
        now += Duration::from_secs(3_600);
        d.tick(now);
        let _ = d.explain();
        prop_assert!(d.drain_signals().len() <= DETECTOR_SIGNALS_MAX);
    }

    /// Manifest text: arbitrary, and bundled manifests with bytes changed.
    #[test]
    fn manifest_parse_never_panics(
        text in "\\PC{0,400}",
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
    ) {
        let _ = Manifest::parse("fuzz.toml", &text);
        let texts = manifest_texts();
        prop_assume!(!texts.is_empty());
        let mut bytes = texts[which.index(texts.len())].clone().into_bytes();
        for (at, b) in &edits {
            let i = at.index(bytes.len());
            bytes[i] = *b;
        }
        let _ = Manifest::parse("fuzz.toml", &String::from_utf8_lossy(&bytes));
    }

    /// Recordings from a bug report can be anything.
    #[test]
    fn cast_parse_never_panics(text in "\\PC{0,400}", lines in prop::collection::vec("\\[[-0-9.e]{0,12}, ?\"[oirmx]\", ?\"[^\"]{0,20}\"\\]", 0..8)) {
        let _ = Cast::parse(&text);
        let with_header = format!("{{\"version\": 2, \"width\": 80, \"height\": 24}}\n{}", lines.join("\n"));
        let _ = Cast::parse(&with_header);
    }
}

// ---------------------------------------------------------------------------
// Fixed cases, each pushed through once at full size.

/// Feeds `bytes` to a 200x50 screen in 64 KiB reads and returns it with the
/// heap it holds.
fn feed_screen(bytes: &[u8]) -> (Screen, usize) {
    warm_panic_machinery();
    let base = live();
    let mut s = Screen::new(50, 200);
    for c in bytes.chunks(64 << 10) {
        s.process(c);
    }
    let held = (live() - base).max(0) as usize;
    (s, held)
}

fn assert_bounded(what: &str, bytes: &[u8]) -> Screen {
    let (s, held) = feed_screen(bytes);
    let bound = screen_bound(50, 200, tend_detector::screen::DEFAULT_HISTORY_LINES);
    assert!(held <= bound, "{what}: heap {held} > {bound}");
    assert!(
        s.memory_bytes() <= bound,
        "{what}: memory_bytes {}",
        s.memory_bytes()
    );
    assert!(s.history().len() <= tend_detector::screen::DEFAULT_HISTORY_LINES);
    assert!(s.history().lines().all(|l| l.len() <= HISTORY_LINE_MAX));
    assert_eq!(s.rows().len(), 50);
    s
}

const MIB: usize = 1 << 20;

#[test]
fn one_mebibyte_lines() {
    let line = vec![b'a'; MIB];
    assert_bounded("1 MiB line, no newline", &line);
    let mut lines = Vec::new();
    for _ in 0..3 {
        lines.extend_from_slice(&line);
        lines.extend_from_slice(b"\r\n");
    }
    let s = assert_bounded("3 lines of 1 MiB", &lines);
    // Rows that scrolled off are kept up to the line cap and the byte cap
    // (256 KiB of text), whichever comes first.
    assert!(s.history().len() <= tend_detector::screen::DEFAULT_HISTORY_LINES);
    assert!(s.history().len() > 1000, "{}", s.history().len());
    assert!(s.history().lines().map(str::len).sum::<usize>() <= 256 * 1024);
    // A wide-character line and a line of 22-byte cells (base + combining
    // marks): history lines are cut at their byte cap, on a char boundary.
    let wide = "日".repeat(MIB / 3);
    assert_bounded("1 MiB of wide characters", wide.as_bytes());
    let heavy =
        "e\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}\u{307}\u{308}\u{309}\u{30a}".repeat(MIB / 21);
    let s = assert_bounded("1 MiB of combining marks", heavy.as_bytes());
    assert!(s.history().lines().any(|l| l.len() > 200));
}

#[test]
fn nul_flood() {
    let s = assert_bounded("4 MiB of NUL", &vec![0u8; 4 * MIB]);
    assert!(s.rows().iter().all(String::is_empty));
}

#[test]
fn csi_with_thousands_of_parameters() {
    let mut b = b"\x1b[".to_vec();
    b.extend("1;".repeat(100_000).bytes());
    b.extend_from_slice(b"mtext\x1b[");
    b.extend("9999999999999999999;".repeat(10_000).bytes());
    b.extend_from_slice(b"Hmore");
    let s = assert_bounded("CSI with 100,000 parameters", &b);
    // The SGR was applied and "text" printed; the CUP went to the
    // bottom-right corner, so "more" wrapped and scrolled "text" off.
    assert_eq!(s.history().lines().last(), Some("text"));
    assert_eq!(s.rows()[49], "ore");
}

#[test]
fn absurd_csi_parameters() {
    let mut b = Vec::new();
    for seq in [
        &b"\x1b[99999999;99999999H@"[..],
        b"\x1b[1;99999999r\x1b[99999999;1r\x1b[0;0r",
        b"x\x1b[999999999b",
        b"\x1b[99999999@\x1b[99999999L\x1b[99999999M\x1b[99999999P",
        b"\x1b[99999999X\x1b[99999999S\x1b[99999999T",
        b"\x1b[8;65535;65535t",
        b"\x1b[1;1Hend",
    ] {
        b.extend_from_slice(seq);
    }
    let s = assert_bounded("absurd CSI parameters", &b);
    assert_eq!(s.size(), (50, 200), "a CSI must never resize the model");
    // The cursor went to the bottom-right corner, not past it.
    assert!(s.rows()[0].starts_with("end"));
}

#[test]
fn endless_dcs_apc_pm_sos() {
    for (what, intro) in [
        ("DCS", &b"\x1bPq"[..]),
        ("APC", b"\x1b_G"),
        ("PM", b"\x1b^"),
        ("SOS", b"\x1bX"),
    ] {
        let mut b = intro.to_vec();
        b.extend(std::iter::repeat_n(b'a', 4 * MIB));
        assert_bounded(what, &b);
    }
}

#[test]
fn signal_floods_keep_buffers_bounded() {
    // Screen: at most its cap between drains, the newest kept.
    let mut s = Screen::new(50, 200);
    s.process(&vec![0x07; 100_000]);
    let mut titles = Vec::new();
    for i in 0..10_000 {
        titles.extend_from_slice(format!("\x1b]0;t{i}\x07\x1b]9;4;1;{}\x07", i % 100).as_bytes());
    }
    s.process(&titles);
    let drained = s.drain_signals();
    assert!(drained.len() <= SCREEN_SIGNALS_MAX, "{}", drained.len());
    assert!(s.drain_signals().is_empty());
    assert_eq!(s.title(), "t9999");

    // Detector: at most its cap between drains.
    let registry = Registry::bundled();
    let m = Arc::new(registry.get("claude").expect("bundled").clone());
    let mut d = PaneDetector::new(Arc::new(DetectorConfig::default()), 50, 200);
    d.set_agent(Duration::ZERO, Some(m));
    for i in 0..1_000u64 {
        d.feed(Duration::from_millis(i), &titles[..4_000]);
        d.feed(Duration::from_millis(i), &[0x07; 100]);
    }
    let drained = d.drain_signals();
    assert!(drained.len() <= DETECTOR_SIGNALS_MAX, "{}", drained.len());
}

#[test]
fn history_is_bounded_by_lines_and_line_length() {
    let mut b = Vec::new();
    for i in 0..10_000 {
        b.extend_from_slice(format!("line {i}\r\n").as_bytes());
    }
    let s = assert_bounded("10,000 short lines", &b);
    assert_eq!(
        s.history().len(),
        tend_detector::screen::DEFAULT_HISTORY_LINES
    );
    assert_eq!(s.history().lines().last(), Some("line 9950"));
    // Scrolling on the alternate screen never reaches the history.
    let mut alt = b"\x1b[?1049h".to_vec();
    alt.extend_from_slice(&b);
    let (s, _) = feed_screen(&alt);
    assert!(s.history().is_empty());
}

/// `vt100` 0.18.1 panics (an `unwrap` on a missing cell in
/// `Screen::text_cleanup`) when a VS16 emoji widened in the last column of
/// the bottom row is overwritten. An agent's full-width footer ending in
/// `⚠️` is enough. The screen must survive it and recover on the next
/// redraw.
#[test]
fn wide_emoji_in_the_last_column_is_survived() {
    warm_panic_machinery();
    let mut s = Screen::new(50, 200);
    s.process(b"\x1b]0;kept\x07");
    // The rows read before the crash must not be taken for the new
    // emulator's rows, which are numbered afresh.
    s.process(b"\x1b[Hbefore");
    assert_eq!(s.rows_updated()[0], "before");
    let crash = format!(
        "\x1b[50;1H{}\u{26a0}\u{fe0f}\x1b[49;1H{}",
        "a".repeat(199),
        "b".repeat(200)
    );
    s.process(crash.as_bytes());
    assert_eq!(s.size(), (50, 200));
    assert_eq!(s.title(), "kept");
    // Since the vt100 fork the emulator itself survives: nothing was lost.
    assert_eq!(s.rows()[48], "b".repeat(200));
    s.process(b"\x1b[H\x1b[2Jredrawn");
    assert_eq!(s.rows()[0], "redrawn");
    assert_eq!(s.rows_updated().to_vec(), s.rows());
    // One-column panes hit the same family of bugs.
    let mut s = Screen::new(1, 1);
    s.process("\u{2764}\u{fe0f}\x1b[@\u{2764}\u{fe0f}\x1b[99999999@x".as_bytes());
    assert_eq!(s.size(), (1, 1));
}

/// `vt100` widens rows with `Vec::resize` and never shrinks them, so one
/// column more used to double both grids; `Screen::resize` compacts.
#[test]
fn widening_resize_keeps_grids_exact() {
    let base = live();
    let mut s = Screen::new(50, 199);
    s.process(b"\x1b[?1049hframe\x1b[?1049l text");
    s.resize(50, 200);
    s.resize(50, 400);
    s.resize(50, 200);
    let held = (live() - base).max(0) as usize;
    let grids = 2 * 50 * 200 * CELL;
    assert!(
        held <= grids + grids / 20,
        "heap {held} for grids of {grids}"
    );
    assert_eq!(s.rows()[0], " text");
}

// ---------------------------------------------------------------------------
// Gaps the fuzzing and property tests found, kept as regression tests.

/// `CSI n b` repeats the last character: tmux prints at most the columns
/// left on the line, and so does the model since the vt100 fork (9 bytes
/// used to print 65,535 characters).
#[test]
fn repeat_is_clamped_to_the_line() {
    let mut s = Screen::new(3, 10);
    s.process(b"ab\x1b[65535b");
    assert_eq!(s.rows(), ["abbbbbbbbb", "", ""]);
    s.process(b"\r\nx\x1b[3b");
    assert_eq!(s.rows()[1], "xxxx");
}

/// An OSC that never ends: everything after `ESC ]` is buffered by the
/// parser. With `vt100`'s default `std` feature, `vte` keeps that buffer in
/// a `Vec` with no cap (64 MiB in, 128 MiB held; then a 64 MiB title).
/// Fixed by `vt100 = { ..., default-features = false }` (a 1 KiB array) and
/// keeping `alacritty_terminal`, which turns `vte/std` back on, out of the
/// workspace (`tools/emulator-compare` is a workspace of its own).
#[test]
fn unterminated_osc_is_bounded() {
    let mut b = b"\x1b]0;".to_vec();
    b.extend(std::iter::repeat_n(b'a', 16 * MIB));
    let (mut s, held) = feed_screen(&b);
    assert!(
        held <= screen_bound(50, 200, 0),
        "heap {held} after a 16 MiB OSC"
    );
    s.process(b"\x07");
    assert!(
        s.title().len() <= 4_096,
        "title of {} bytes",
        s.title().len()
    );
}

/// tmux allows windows up to 10000x10000; a resize there made `vt100`
/// allocate 3 GiB per grid (8 s), and `u16::MAX` squared aborted the
/// process on allocation failure. `Screen::new`/`Screen::resize` clamp the
/// model to `MAX_SIDE` a side.
#[test]
fn resize_to_the_largest_sizes_is_clamped() {
    let mut s = Screen::new(50, 200);
    s.resize(u16::MAX, u16::MAX);
    s.process(b"hello\x1b[?1049hworld");
    assert!(s.memory_bytes() <= 256 * MIB, "{}", s.memory_bytes());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A session file (`tend_detector::session_file`) of any bytes is read
    /// or rejected, never a panic; what it keeps is cut to its limits.
    #[test]
    fn session_file_survives_garbage(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        use tend_detector::session_file::{parse, MAX_CWD, MAX_WORDS};
        if let Ok(f) = parse(&bytes) {
            prop_assert!(f.cwd.len() <= MAX_CWD);
            prop_assert!(f.waiting_for.map_or(0, |w| w.len()) <= MAX_WORDS);
        }
    }

    /// A real file with one field given a random JSON value: read or
    /// rejected, never a panic.
    #[test]
    fn session_file_survives_any_field_value(
        field in prop::sample::select(vec!["pid", "procStart", "sessionId", "cwd", "version",
                                           "kind", "status", "waitingFor", "name",
                                           "statusUpdatedAt"]),
        value in prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(|f| serde_json::json!(f)),
            ".{0,300}".prop_map(serde_json::Value::from),
            Just(serde_json::json!([1, {"a": null}])),
        ],
    ) {
        let mut v: serde_json::Value = serde_json::from_str(
            r#"{"pid":4242,"sessionId":"s","cwd":"/w","procStart":"1","version":"2.1.332",
                "kind":"interactive","status":"waiting","waitingFor":"permission prompt"}"#,
        ).unwrap();
        v[field] = value;
        let _ = tend_detector::session_file::parse(v.to_string().as_bytes());
    }
}
