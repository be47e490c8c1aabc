//! The per-pane screen model: a real terminal emulator (`vt100`) plus the
//! out-of-band signals an agent sends through the same byte stream.
//!
//! Why `vt100`: it exposes the hooks the detector needs (window title,
//! unhandled OSC/CSI, rows scrolled off) without a renderer attached, keeps
//! cells at 32 bytes and needs no event loop. The comparison with
//! `alacritty_terminal` is recorded in `docs/decisions/0001-terminal-emulator.md`.
//!
//! The emulator keeps **no scrollback**: the detector must never read stale
//! history, and a bounded plain-text ring ([`History`]) keeps the
//! lines that scrolled off for `tend read`, at a fraction of the memory.

use std::collections::VecDeque;
use std::num::NonZeroU16;

use crate::signals::{self, Signal};

/// Default number of plain-text lines kept after they scroll off the screen.
pub const DEFAULT_HISTORY_LINES: usize = 2_000;

/// Most text [`History`] holds, in bytes.
const HISTORY_BYTES_MAX: usize = 256 * 1024;

/// Longest line kept in [`History`], in bytes; longer lines are cut.
const HISTORY_LINE_MAX: usize = 1_024;

/// Most signals buffered between two drains; older ones are dropped first.
const MAX_PENDING_SIGNALS: usize = 256;

/// A bounded ring of plain-text lines that scrolled off the main screen.
#[derive(Debug, Default, Clone)]
pub struct History {
    lines: VecDeque<String>,
    capacity: usize,
    /// Bytes of text held (the line cap alone allows 2 MiB of full-width
    /// box-drawing lines; this keeps a pane under its memory budget).
    bytes: usize,
}

impl History {
    fn new(capacity: usize) -> Self {
        Self {
            lines: VecDeque::new(),
            capacity,
            bytes: 0,
        }
    }

    fn push(&mut self, mut line: String) {
        if self.capacity == 0 {
            return;
        }
        if line.len() > HISTORY_LINE_MAX {
            let mut cut = HISTORY_LINE_MAX;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        line.shrink_to_fit();
        while self.lines.len() >= self.capacity
            || (self.bytes + line.len() > HISTORY_BYTES_MAX && !self.lines.is_empty())
        {
            match self.lines.pop_front() {
                Some(old) => self.bytes -= old.len(),
                None => break,
            }
        }
        self.bytes += line.len();
        self.lines.push_back(line);
    }

    /// Lines oldest first.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().map(String::as_str)
    }

    /// Number of lines held.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when nothing has scrolled off yet.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.lines.iter().map(|l| l.capacity() + 24).sum::<usize>()
            + self.lines.capacity() * std::mem::size_of::<String>()
    }
}

/// Everything the emulator reports through its callbacks.
#[derive(Debug, Default)]
struct Capture {
    title: String,
    pending: VecDeque<Signal>,
    /// DEC private mode 2026 (synchronized output) is on: the app is mid-frame.
    synchronized: bool,
    history: History,
}

impl Capture {
    fn push(&mut self, signal: Signal) {
        if self.pending.len() >= MAX_PENDING_SIGNALS {
            self.pending.pop_front();
        }
        self.pending.push_back(signal);
    }
}

impl vt100::Callbacks for Capture {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        let title = String::from_utf8_lossy(title).into_owned();
        if title != self.title {
            self.title.clone_from(&title);
            self.push(Signal::Title(title));
        }
    }

    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.push(Signal::Bell);
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        if let Some(signal) = signals::parse_osc(params) {
            self.push(signal);
        }
    }

    fn unhandled_csi(
        &mut self,
        _: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        if i1 == Some(b'?') && params.iter().any(|p| p.first() == Some(&2026)) {
            match c {
                'h' => self.synchronized = true,
                'l' => self.synchronized = false,
                _ => {}
            }
        }
    }

    fn on_scroll(&mut self, contents: vt100::capture::RowContents<'_>, alternate_screen: bool) {
        // Only the main screen has history worth keeping; an alternate-screen
        // TUI redraws itself and its scrolled rows are frames, not output.
        if !alternate_screen && self.history.capacity > 0 {
            let mut formatted = String::new();
            let mut state = vt100::capture::BasicFormattedCaptureState::new();
            if contents
                .write_formatted_basic(&mut formatted, &mut state)
                .is_ok()
            {
                let line: String = vt100::capture::basic_formatted_to_plain(&formatted).collect();
                self.history.push(line.trim_end().to_owned());
            }
        }
    }
}

/// A pane's screen: the emulator plus the signals seen in its output.
pub struct Screen {
    parser: vt100::Parser<Capture>,
    text: RowText,
}

/// The text of each visible row as last read, with the row version it was
/// read at (vt100 as forked in `vendor/vt100`: a version changes whenever a
/// row may have changed). Reading a 200×50 grid into text is most of an
/// evaluation's cost; with this, an evaluation reads only the rows that
/// changed since the last one.
#[derive(Default)]
struct RowText {
    rows: Vec<String>,
    versions: Vec<u64>,
    scratch: Vec<u64>,
    /// The row being read, reused from row to row.
    line: String,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.size();
        f.debug_struct("Screen")
            .field("rows", &rows)
            .field("cols", &cols)
            .field("alternate", &self.alternate())
            .field("title", &self.title())
            .finish()
    }
}

/// Largest screen side kept: a real pane is far smaller, and a hostile
/// resize to 65535×65535 would otherwise allocate gigabytes.
pub const MAX_SIDE: u16 = 1000;

fn nz(v: u16) -> NonZeroU16 {
    NonZeroU16::new(v.min(MAX_SIDE)).unwrap_or(NonZeroU16::MIN)
}

impl Screen {
    /// A blank screen of `rows` × `cols` (zero is taken as one).
    pub fn new(rows: u16, cols: u16) -> Self {
        Self::with_history(rows, cols, DEFAULT_HISTORY_LINES)
    }

    /// A blank screen keeping at most `history` scrolled-off lines.
    pub fn with_history(rows: u16, cols: u16, history: usize) -> Self {
        let capture = Capture {
            history: History::new(history),
            ..Capture::default()
        };
        Self {
            parser: vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 0, capture),
            text: RowText::default(),
        }
    }

    /// Feeds raw pane output. Any bytes are accepted; nothing here can panic
    /// on malformed input.
    ///
    /// `vt100` 0.18.1 panicked on some wide-character edge cases (a VS16
    /// emoji such as `⚠️` widened in the last column of the bottom row, then
    /// overwritten; `tests/bad_input.rs`), fixed in the fork in
    /// `vendor/vt100`. Should the emulator panic on anything else, the
    /// screen starts over blank at the same size — title, history and
    /// pending signals kept — and the program's next redraw fills it again.
    pub fn process(&mut self, bytes: &[u8]) {
        let parser = &mut self.parser;
        let run = std::panic::AssertUnwindSafe(|| parser.process(bytes));
        if std::panic::catch_unwind(run).is_err() {
            let (rows, cols) = self.parser.screen().size();
            let capture = std::mem::take(self.parser.callbacks_mut());
            self.parser = vt100::Parser::new_with_callbacks(rows, cols, 0, capture);
            // The new emulator numbers its rows afresh.
            self.text = RowText::default();
        }
    }

    /// Resizes the emulator (a pane resize, never activity by itself).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let cols_before = self.size().1;
        self.parser.set_size(nz(rows), nz(cols));
        if self.size().1 != cols_before {
            // vt100 widens each row with `Vec::resize` (its capacity doubles)
            // and never shrinks one: a pane widened by a single column would
            // hold twice its grids. A clone has exact capacities.
            let compact = self.parser.screen().clone();
            *self.parser.screen_mut() = compact;
        }
    }

    /// `(rows, cols)`.
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    /// Whether the alternate screen is active.
    pub fn alternate(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// Cursor `(row, col)`.
    pub fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    /// The last OSC 0/2 title.
    pub fn title(&self) -> &str {
        &self.parser.callbacks().title
    }

    /// Whether a synchronized update (DEC 2026) is in progress.
    pub fn synchronized(&self) -> bool {
        self.parser.callbacks().synchronized
    }

    /// Takes the signals seen since the last call.
    pub fn drain_signals(&mut self) -> Vec<Signal> {
        std::mem::take(&mut self.parser.callbacks_mut().pending).into()
    }

    /// The visible rows as plain text, right-trimmed, top to bottom.
    pub fn rows(&self) -> Vec<String> {
        let (_, cols) = self.size();
        self.parser
            .screen()
            .rows(0, cols)
            .map(|r| r.trim_end().to_owned())
            .collect()
    }

    /// The same as [`Screen::rows`], reading only the rows that changed
    /// since the last call.
    pub fn rows_updated(&mut self) -> &[String] {
        let mut rows = std::mem::take(&mut self.text.rows);
        self.refresh_rows(&mut rows);
        self.text.rows = rows;
        &self.text.rows
    }

    /// Brings `rows`, the caller's copy of the rows' text (kept from call
    /// to call), up to the screen, re-reading only the rows written since
    /// the last call. Returns whether the text of any row, or the number
    /// of rows, differs from what the last call left: rows only re-drawn
    /// with the same text (a spinner frame that ends where it began, a
    /// full-frame redraw of the same screen) do not count. A screen has one
    /// such copy: the versions that say which of its rows are current are
    /// the screen's (and [`Screen::rows_updated`] keeps its own copy, for
    /// callers that have none).
    pub fn refresh_rows(&mut self, rows: &mut Vec<String>) -> bool {
        let (_, cols) = self.size();
        let text = &mut self.text;
        self.parser.screen_mut().row_versions(&mut text.scratch);
        let n = text.scratch.len();
        let mut changed = rows.len() != n;
        rows.resize_with(n, String::new);
        text.versions.resize(n, 0);
        let screen = self.parser.screen();
        for (i, &version) in text.scratch.iter().enumerate() {
            if text.versions[i] == version {
                continue;
            }
            text.versions[i] = version;
            text.line.clear();
            screen.write_row_contents(i as u16, 0, cols, &mut text.line);
            let row = text.line.trim_end();
            if rows[i] != row {
                row.clone_into(&mut rows[i]);
                changed = true;
            }
        }
        changed
    }

    /// Takes the rows written since the last [`Screen::refresh_rows`] that
    /// still hold the text `rows` (that call's copy) has for them as read:
    /// a screen rebuilt from a capture writes every row, and only the rows
    /// whose text changed are news. Attributes are not compared, as
    /// [`Screen::refresh_rows`] does not. A screen whose number of rows
    /// differs from `rows` is left as it is (every row counts).
    pub fn absorb_rewrites(&mut self, rows: &[String]) {
        let (_, cols) = self.size();
        let text = &mut self.text;
        self.parser.screen_mut().row_versions(&mut text.scratch);
        if text.scratch.len() != rows.len() || text.versions.len() != rows.len() {
            return;
        }
        let screen = self.parser.screen();
        for (i, &version) in text.scratch.iter().enumerate() {
            if text.versions[i] == version {
                continue;
            }
            text.line.clear();
            screen.write_row_contents(i as u16, 0, cols, &mut text.line);
            if text.line.trim_end() == rows[i] {
                text.versions[i] = version;
            }
        }
    }

    /// Bytes that draw this screen on a blank terminal of the same size:
    /// which screen is active (main or alternate), the title, every
    /// visible cell with its attributes, the cursor and the input modes.
    /// A recording that starts with them replays from this screen on (what
    /// `tend capture` keeps instead of output older than its bound). The
    /// main screen's cells behind an active alternate screen are not
    /// kept: no rule reads them until the agent leaves, and it redraws
    /// then.
    pub fn checkpoint(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(if self.alternate() {
            b"\x1b[?1049h"
        } else {
            b"\x1b[?1049l"
        });
        out.extend_from_slice(b"\x1b]2;");
        out.extend(self.title().bytes().filter(|b| !b.is_ascii_control()));
        out.extend_from_slice(b"\x07");
        out.extend_from_slice(self.parser.screen().state_formatted().as_bytes());
        out
    }

    /// Calls `f` with the index of each row written since the last
    /// [`Screen::rows_updated`] (its text may have changed): one version
    /// compare a row, no text read.
    pub fn rows_pending(&mut self, mut f: impl FnMut(usize)) {
        let text = &mut self.text;
        self.parser.screen_mut().row_versions(&mut text.scratch);
        for (i, &version) in text.scratch.iter().enumerate() {
            if text.versions.get(i) != Some(&version) {
                f(i);
            }
        }
    }

    /// Plain-text lines that scrolled off the main screen, oldest first.
    pub fn history(&self) -> &History {
        &self.parser.callbacks().history
    }

    /// Bytes held by this screen model: the grids' cells (blank rows hold
    /// none), the row text [`Screen::rows_updated`] keeps (a detector keeps
    /// its own, see [`Screen::refresh_rows`]), the history.
    pub fn memory_bytes(&self) -> usize {
        let text = &self.text;
        self.parser.screen().heap_bytes()
            + text.rows.iter().map(String::capacity).sum::<usize>()
            + (text.rows.capacity() * std::mem::size_of::<String>())
            + (text.versions.capacity() + text.scratch.capacity()) * 8
            + text.line.capacity()
            + self.history().heap_bytes()
            + std::mem::size_of::<Self>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a checkpoint must carry over: text, colours, cursor, which
    /// screen, title.
    fn same_screen(a: &Screen, b: &Screen) {
        assert_eq!(a.rows(), b.rows());
        assert_eq!(a.cursor(), b.cursor());
        assert_eq!(a.alternate(), b.alternate());
        assert_eq!(a.title(), b.title());
        assert_eq!(
            a.parser.screen().contents_formatted(),
            b.parser.screen().contents_formatted()
        );
    }

    #[test]
    fn a_checkpoint_redraws_the_screen_on_a_blank_one() {
        let cases: [&[u8]; 3] = [
            b"\x1b]0;\xe2\x9c\xb3 Claude Code\x07$ ls\r\n\x1b[1;31mred\x1b[0m plain \xe2\x94\x82 wide \xe4\xb8\xad\r\nlast",
            b"main text\x1b[?1049h\x1b[H\x1b[2J\x1b[7mDo you want to proceed?\x1b[0m\x1b[5;3H> 1. Yes\x1b[3;1H",
            b"\x1b[?1049h alt\x1b[?1049lback on main\x1b[?2004h\x1b[?1000h",
        ];
        for bytes in cases {
            let mut live = Screen::new(6, 30);
            live.process(bytes);
            let mut again = Screen::new(6, 30);
            // Whatever was on the blank screen before does not matter.
            again.process(b"junk junk\x1b]2;old\x07");
            again.process(&live.checkpoint());
            same_screen(&live, &again);
            // And output after the checkpoint lands in the same places.
            live.process(b"\r\nmore\x1b[2;2Hx");
            again.process(b"\r\nmore\x1b[2;2Hx");
            same_screen(&live, &again);
        }
    }

    #[test]
    fn a_redraw_leaves_pending_only_the_rows_whose_text_changed() {
        let mut s = Screen::new(4, 20);
        let mut seen = Vec::new();
        s.process(b"one\r\ntwo\r\nthree");
        assert!(s.refresh_rows(&mut seen));
        // The whole screen again, one row different.
        s.process(b"\x1b[H\x1b[2Jone\r\n\x1b[1mTWO\x1b[0m\r\nthree");
        let mut written = Vec::new();
        s.rows_pending(|i| written.push(i));
        assert_eq!(written, [0, 1, 2, 3], "a redraw writes every row");
        s.absorb_rewrites(&seen);
        let mut pending = Vec::new();
        s.rows_pending(|i| pending.push(i));
        assert_eq!(pending, [1]);
        assert!(s.refresh_rows(&mut seen));
        assert_eq!(seen[1], "TWO");
        // Rows the caller's copy does not match in number: all stay.
        s.process(b"\x1b[H\x1b[2Jone");
        s.absorb_rewrites(&seen[..2]);
        let mut all = Vec::new();
        s.rows_pending(|i| all.push(i));
        assert_eq!(all, [0, 1, 2, 3]);
    }

    #[test]
    fn text_and_title() {
        let mut s = Screen::new(5, 20);
        s.process(b"\x1b]0;hello\x07abc\r\ndef");
        assert_eq!(s.title(), "hello");
        assert_eq!(&s.rows()[..2], &["abc".to_owned(), "def".to_owned()]);
        assert_eq!(s.drain_signals(), vec![Signal::Title("hello".into())]);
        assert!(s.drain_signals().is_empty());
    }

    #[test]
    fn alternate_screen_and_history() {
        let mut s = Screen::new(2, 10);
        s.process(b"one\r\ntwo\r\nthree");
        assert_eq!(s.history().lines().collect::<Vec<_>>(), vec!["one"]);
        s.process(b"\x1b[?1049h");
        assert!(s.alternate());
        assert_eq!(s.rows(), vec![String::new(), String::new()]);
        s.process(b"x\r\ny\r\nz");
        // Alternate-screen scrolling never reaches history.
        assert_eq!(s.history().len(), 1);
        s.process(b"\x1b[?1049l");
        assert!(!s.alternate());
        assert_eq!(s.rows(), vec!["two".to_owned(), "three".to_owned()]);
    }

    #[test]
    fn csi_s_and_u_save_and_restore_the_cursor() {
        // OpenCode's start-up (1.18): save, probe at the top-left, restore,
        // save, enter the alternate screen; its exit leaves it. The shell's
        // next prompt goes on the line after the command, as in tmux.
        let mut s = Screen::new(4, 20);
        s.process(b"$ one\r\n$ two\r\n$ opencode\r\n");
        s.process(b"\x1b[s\x1b[H\x1b[6n\x1b[u\x1b[s\x1b[?1049h\x1b[H\x1b[2Jtui");
        s.process(b"\x1b[?1049l$ ");
        assert_eq!(s.cursor(), (3, 2));
        assert_eq!(s.rows(), ["$ one", "$ two", "$ opencode", "$"]);
        // The kitty keyboard protocol's `CSI ? u` (query) and `CSI < u`
        // (pop) are not a restore.
        s.process(b"\x1b[s\x1b[1;1H\x1b[?u\x1b[<u");
        assert_eq!(s.cursor(), (0, 0));
    }

    #[test]
    fn synchronized_output_mode() {
        let mut s = Screen::new(2, 10);
        s.process(b"\x1b[?2026h");
        assert!(s.synchronized());
        s.process(b"\x1b[?2026l");
        assert!(!s.synchronized());
    }

    #[test]
    fn wide_characters_take_two_cells() {
        let mut s = Screen::new(2, 6);
        s.process("日本x".as_bytes());
        assert_eq!(s.cursor(), (0, 5));
        assert_eq!(s.rows()[0], "日本x");
    }

    #[test]
    fn resize_keeps_content() {
        let mut s = Screen::new(3, 10);
        s.process(b"abc");
        s.resize(5, 20);
        assert_eq!(s.size(), (5, 20));
        assert_eq!(s.rows()[0], "abc");
        s.resize(0, 0);
        assert_eq!(s.size(), (1, 1));
    }

    #[test]
    fn garbage_never_panics() {
        let mut s = Screen::new(4, 8);
        s.process(&[
            0xff, 0xfe, 0x1b, b'[', b'9', b'9', b'9', b'9', b'9', b'9', b'9', b'9', b'H',
        ]);
        s.process(b"\x1b[99999999999;99999999999r\x1b]9;4;99999\x07\x1b]");
        s.process(&vec![0u8; 10_000]);
        let _ = s.rows();
    }

    /// Bytes of one 200-column row of cells.
    const ROW: usize = 200 * 32;
    /// Bytes of a row written only in its first 16 columns (a row holds its
    /// cells up to the last one written, 16 at least).
    const SHORT: usize = 16 * 32;

    #[test]
    fn blank_rows_hold_no_cells() {
        let mut s = Screen::with_history(50, 200, 0);
        let fresh = s.memory_bytes();
        assert!(fresh < ROW, "a blank 200×50 screen holds {fresh} bytes");
        s.process(b"one\r\ntwo\r\nthree");
        let three = s.memory_bytes() - fresh;
        assert_eq!(three, 3 * SHORT);
        // An alternate-screen program: the shell's three rows stay, the
        // alternate grid holds only the rows drawn on it.
        s.process(b"\x1b[?1049h\x1b[H\x1b[2J");
        let grid = s.memory_bytes();
        assert!(grid - fresh - three < ROW, "the alternate grid's row table");
        s.process(b"\x1b[10;1Hdialog\x1b[12;1H> ");
        assert_eq!(s.memory_bytes() - grid, 2 * SHORT);
        // A line drawn to the last column holds the whole row.
        s.process(&[b'x'; 198]); // after "> ", to the last column
        assert_eq!(s.memory_bytes() - grid, SHORT + ROW);
        // Clearing frees the rows again.
        s.process(b"\x1b[2J");
        assert_eq!(s.memory_bytes(), grid);
        s.process(b"\x1b[?1049l");
        assert_eq!(s.rows()[..3], ["one", "two", "three"]);
    }

    #[test]
    fn updated_rows_follow_every_change() {
        let mut s = Screen::with_history(4, 10, 0);
        assert_eq!(s.rows_updated(), ["", "", "", ""]);
        s.process(b"a\r\nb");
        assert_eq!(s.rows_updated(), ["a", "b", "", ""]);
        // Scrolling moves rows: each keeps its text under its new index.
        s.process(b"\r\nc\r\nd\r\ne");
        assert_eq!(s.rows_updated(), ["b", "c", "d", "e"]);
        // The alternate grid numbers its rows from the same counter.
        s.process(b"\x1b[?1049h\x1b[Hx");
        assert_eq!(s.rows_updated(), ["x", "", "", ""]);
        s.process(b"\x1b[?1049l");
        assert_eq!(s.rows_updated(), ["b", "c", "d", "e"]);
        // In-place edits, erases, inserts.
        s.process(b"\x1b[2;1HC\x1b[3;1H\x1b[K\x1b[1;1H\x1b[2@");
        assert_eq!(s.rows_updated().to_vec(), s.rows());
        assert_eq!(s.rows_updated(), ["  b", "C", "", "e"]);
        // Resizes add and drop rows.
        s.resize(6, 12);
        assert_eq!(s.rows_updated().to_vec(), s.rows());
        s.resize(2, 3);
        assert_eq!(s.rows_updated().to_vec(), s.rows());
        // A full reset (ESC c) builds vt100's screen anew; its rows must not
        // reuse the numbers of the rows read before.
        s.process(b"\x1bc*");
        assert_eq!(s.rows_updated(), ["*", ""]);
    }

    #[test]
    fn refreshed_rows_say_whether_any_text_changed() {
        let mut s = Screen::with_history(3, 10, 0);
        let mut rows = Vec::new();
        assert!(
            s.refresh_rows(&mut rows),
            "the first read counts as a change"
        );
        assert_eq!(rows, ["", "", ""]);
        assert!(!s.refresh_rows(&mut rows));
        s.process(b"* Working\r\n> ");
        assert!(s.refresh_rows(&mut rows));
        assert_eq!(rows, ["* Working", ">", ""]);
        // The same frame drawn again (an Ink redraw): rows written, no text changed.
        s.process(b"\x1b[H\x1b[2K* Working\r\n\x1b[2K> ");
        assert!(!s.refresh_rows(&mut rows));
        // A spinner frame.
        s.process(b"\x1b[1;1H+");
        assert!(s.refresh_rows(&mut rows));
        assert_eq!(rows, ["+ Working", ">", ""]);
        // A resize changes the number of rows.
        s.resize(2, 10);
        assert!(s.refresh_rows(&mut rows));
        assert_eq!(rows, s.rows());
    }
}
