//! What a pane showed lately, kept so that `tend capture` can save it as a
//! recording that replays to the pane's state.
//!
//! A tape is a **checkpoint** — the pane's screen re-drawn as ANSI bytes by
//! the emulator ([`Screen::checkpoint`]) at one moment — followed by the
//! events since: output, keys typed, resizes. Replaying the checkpoint on a
//! blank screen of its size, then the events, rebuilds the screen the
//! detector saw, so the retained bytes are always replayable on their own.
//! When the events would pass [`TAPE_BYTES`], the tape starts over from a
//! new checkpoint of the screen as it is now (after the output that did
//! not fit): the oldest output is dropped, never the screen it built.
//!
//! Bound per pane: [`TAPE_BYTES`] of events in use (each event's
//! bookkeeping counted at its size) plus one checkpoint (a screen's cells
//! with their attributes: a few KiB for 80×24, up to ~40 KiB for a busy
//! 200×50). Allocated, the events take at most twice that (vectors grow by
//! doubling; only a stream of one-byte reads comes near it). The tape
//! lives in memory only, while the daemon runs.

use std::time::Duration;

use tend_detector::screen::Screen;

/// Most bytes of events a tape keeps after its checkpoint.
pub const TAPE_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Output,
    Input,
    /// (rows, cols)
    Resize(u16, u16),
}

/// One event: its kind, when (ms after the checkpoint), and where its
/// bytes end in [`Tape::bytes`] (they start where the previous one's end).
#[derive(Debug, Clone, Copy)]
struct Mark {
    at_ms: u32,
    end: u32,
    kind: Kind,
}

const MARK_COST: usize = std::mem::size_of::<Mark>();

/// A pane's recent output, replayable from its checkpoint.
#[derive(Debug, Default)]
pub struct Tape {
    /// When the checkpoint was taken (daemon clock).
    start: Duration,
    /// (rows, cols) at the checkpoint.
    size: (u16, u16),
    /// The screen at `start`, as bytes; empty until the pane is seeded.
    checkpoint: Vec<u8>,
    bytes: Vec<u8>,
    marks: Vec<Mark>,
    /// Checkpoints taken: the seed, a resync after a gap, and one each time
    /// the events filled the bound.
    checkpoints: u64,
    /// Checkpoints taken because the bound was reached.
    wraps: u64,
}

/// What a capture saves, on the tape's clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// The asciicast v2 text.
    pub cast: String,
    /// (rows, cols) the recording starts at.
    pub size: (u16, u16),
    /// Daemon-clock time of the recording's zero.
    pub start: Duration,
    /// How many times the tape started over from a checkpoint because its
    /// bytes filled the bound.
    pub wraps: u64,
    /// Bytes of output after the checkpoint.
    pub output_bytes: usize,
}

impl Tape {
    /// An empty tape: nothing is kept until [`Tape::checkpoint`].
    pub fn new() -> Self {
        Self::default()
    }

    /// When the checkpoint was taken (daemon clock).
    pub fn start(&self) -> Duration {
        self.start
    }

    /// Whether the pane has been seeded.
    pub fn started(&self) -> bool {
        !self.checkpoint.is_empty()
    }

    /// Starts over from `screen` as it is at `at` (the pane's seed, a
    /// resync after lost output, or the bound reached).
    pub fn checkpoint(&mut self, at: Duration, screen: &Screen) {
        self.start = at;
        self.size = screen.size();
        self.checkpoint = screen.checkpoint();
        self.checkpoint.shrink_to_fit();
        self.bytes.clear();
        self.marks.clear();
        self.checkpoints += 1;
    }

    fn ms(&self, at: Duration) -> u32 {
        u32::try_from(at.saturating_sub(self.start).as_millis()).unwrap_or(u32::MAX)
    }

    /// Adds an event; `false` when it does not fit under the bound.
    fn push(&mut self, at: Duration, kind: Kind, data: &[u8]) -> bool {
        if !self.started() {
            return true;
        }
        let used = self.bytes.len() + data.len() + (self.marks.len() + 1) * MARK_COST;
        if used > TAPE_BYTES {
            return false;
        }
        let needed = self.bytes.len() + data.len();
        if needed > self.bytes.capacity() {
            // Doubling, but never past the bound.
            let want = (self.bytes.capacity() * 2).clamp(needed, TAPE_BYTES.max(needed));
            self.bytes.reserve_exact(want - self.bytes.len());
        }
        self.bytes.extend_from_slice(data);
        if self.marks.len() == self.marks.capacity() {
            let most = TAPE_BYTES / MARK_COST;
            let more = self
                .marks
                .capacity()
                .clamp(4, most.saturating_sub(self.marks.len()).max(1));
            self.marks.reserve_exact(more);
        }
        let mark = Mark {
            at_ms: self.ms(at),
            end: self.bytes.len() as u32,
            kind,
        };
        self.marks.push(mark);
        true
    }

    /// Output that arrived at `at`, after the detector's screen took it
    /// (`screen` shows it already: a checkpoint taken now includes it).
    pub fn output(&mut self, at: Duration, data: &[u8], screen: &Screen) {
        if !self.push(at, Kind::Output, data) {
            self.wraps += 1;
            self.checkpoint(at, screen);
        }
    }

    /// Keys typed into the pane (what the detector was told).
    pub fn input(&mut self, at: Duration, data: &[u8], screen: &Screen) {
        if !self.push(at, Kind::Input, data) {
            self.wraps += 1;
            self.checkpoint(at, screen);
        }
    }

    /// The pane was resized to `rows` × `cols` (the screen already was).
    pub fn resize(&mut self, at: Duration, rows: u16, cols: u16, screen: &Screen) {
        if !self.push(at, Kind::Resize(rows, cols), &[]) {
            self.wraps += 1;
            self.checkpoint(at, screen);
        }
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.checkpoint.capacity() + self.bytes.capacity() + self.marks.capacity() * MARK_COST
    }

    /// The tape as an asciicast v2 recording: the checkpoint at 0, every
    /// event since, and a marker `capture` at `now` (so that a replay runs
    /// the detector's timers up to the moment of the capture). `t0` is the
    /// Unix time of the checkpoint. `None` before the pane was seeded.
    pub fn recording(&self, now: Duration, t0: f64, title: &str) -> Option<Recording> {
        if !self.started() {
            return None;
        }
        let (rows, cols) = self.size;
        let header = serde_json::json!({
            "version": 2,
            "width": cols,
            "height": rows,
            "timestamp": t0.floor() as u64,
            "t0": t0,
            "env": {"TERM": "tmux-256color"},
            "title": title,
        });
        let mut out = header.to_string();
        out.push('\n');
        let mut line = |at_ms: u32, code: &str, data: &str| {
            let t = f64::from(at_ms) / 1000.0;
            out.push_str(&serde_json::json!([t, code, data]).to_string());
            out.push('\n');
        };
        line(0, "o", &String::from_utf8_lossy(&self.checkpoint));
        // asciicast data is text: a character split between two reads is
        // carried into the next output event; bytes that are no UTF-8 at all
        // read as U+FFFD, as the emulator shows them.
        let mut carry: Vec<u8> = Vec::new();
        let mut begin = 0usize;
        for m in &self.marks {
            let data = &self.bytes[begin..m.end as usize];
            begin = m.end as usize;
            match m.kind {
                Kind::Output => {
                    carry.extend_from_slice(data);
                    let text = take_text(&mut carry);
                    if !text.is_empty() {
                        line(m.at_ms, "o", &text);
                    }
                }
                Kind::Input => line(m.at_ms, "i", &String::from_utf8_lossy(data)),
                Kind::Resize(r, c) => line(m.at_ms, "r", &format!("{c}x{r}")),
            }
        }
        if !carry.is_empty() {
            let at = self.marks.last().map_or(0, |m| m.at_ms);
            line(at, "o", &String::from_utf8_lossy(&carry));
        }
        let end = self.ms(now).max(self.marks.last().map_or(0, |m| m.at_ms));
        line(end, "m", "capture");
        Some(Recording {
            cast: out,
            size: self.size,
            start: self.start,
            wraps: self.wraps,
            output_bytes: self.bytes.len(),
        })
    }
}

/// The longest prefix of `buf` that is text, taken out of it; an
/// incomplete character at its end stays in `buf`.
fn take_text(buf: &mut Vec<u8>) -> String {
    let mut text = String::new();
    let mut rest: &[u8] = buf;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                text.push_str(s);
                rest = &[];
                break;
            }
            Err(e) => {
                let (ok, bad) = rest.split_at(e.valid_up_to());
                text.push_str(std::str::from_utf8(ok).unwrap_or_default());
                match e.error_len() {
                    Some(n) => {
                        text.push('\u{FFFD}');
                        rest = &bad[n..];
                    }
                    None => {
                        rest = bad;
                        break;
                    }
                }
            }
        }
    }
    let keep = rest.to_vec();
    *buf = keep;
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use tend_detector::cast::{Cast, EventKind};

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A fresh screen fed the recording, as `tend replay` feeds it.
    fn replayed(rec: &Recording) -> Screen {
        let cast = Cast::parse(&rec.cast).expect("a valid cast");
        let mut s = Screen::new(cast.header.height, cast.header.width);
        for ev in &cast.events {
            match &ev.kind {
                EventKind::Output(b) => s.process(b),
                EventKind::Resize(c, r) => s.resize(*r, *c),
                EventKind::Input(_) | EventKind::Marker(_) => {}
            }
        }
        s
    }

    /// Feeds `chunks` to a live screen and its tape; the tape's recording
    /// must rebuild the same screen.
    fn check(chunks: &[&[u8]]) -> Recording {
        let mut live = Screen::new(10, 40);
        live.process(b"before the seed\r\n$ ");
        let mut tape = Tape::new();
        tape.checkpoint(ms(1_000), &live);
        for (i, c) in chunks.iter().enumerate() {
            let at = ms(1_000 + 10 * i as u64);
            live.process(c);
            tape.output(at, c, &live);
            assert!(tape.bytes.len() + tape.marks.len() * MARK_COST <= TAPE_BYTES);
        }
        let rec = tape.recording(ms(9_000), 1.0e9, "t").expect("seeded");
        let again = replayed(&rec);
        assert_eq!(again.rows(), live.rows());
        assert_eq!(again.cursor(), live.cursor());
        assert_eq!(again.alternate(), live.alternate());
        assert_eq!(again.title(), live.title());
        rec
    }

    #[test]
    fn nothing_is_kept_before_the_seed() {
        let s = Screen::new(5, 10);
        let mut tape = Tape::new();
        tape.output(ms(5), b"early", &s);
        assert_eq!(tape.memory_bytes(), 0);
        assert_eq!(tape.recording(ms(10), 0.0, "t"), None);
    }

    #[test]
    fn a_short_tape_keeps_every_event_after_its_seed() {
        let rec = check(&[
            b"\x1b]0;agent\x07hello ",
            b"world\r\n",
            b"\x1b[1;32mok\x1b[0m",
        ]);
        assert_eq!(rec.wraps, 0);
        assert_eq!(rec.output_bytes, 36);
        assert_eq!(rec.start, ms(1_000));
        let cast = Cast::parse(&rec.cast).expect("cast");
        let times: Vec<Duration> = cast.events.iter().map(|e| e.at).collect();
        assert_eq!(times, [ms(0), ms(0), ms(10), ms(20), ms(8_000)]);
        assert_eq!(
            cast.events.last().map(|e| &e.kind),
            Some(&EventKind::Marker("capture".into()))
        );
    }

    #[test]
    fn a_wrapped_tape_still_rebuilds_the_screen() {
        // 200 KiB of scrolling lines, a dialog on the alternate screen, then
        // more chunks: the bound is passed several times.
        let line: Vec<u8> = (0..100u32)
            .flat_map(|i| format!("line {i:04} of noise ──────────\r\n").into_bytes())
            .collect();
        let mut chunks: Vec<&[u8]> = vec![line.as_slice(); 60];
        chunks.push(b"\x1b[?1049h\x1b[H\x1b[2J\x1b]2;ask\x07Do you want to proceed?\r\n> 1. Yes");
        chunks.push(b"\r\n  2. No");
        let rec = check(&chunks);
        assert!(rec.wraps >= 3, "{}", rec.wraps);
        assert!(rec.output_bytes <= TAPE_BYTES);
    }

    #[test]
    fn a_character_split_between_reads_is_whole_in_the_recording() {
        let chunks: [&[u8]; 3] = [b"caf\xc3", b"\xa9 \xe2\x94", b"\x82 x\xff y"];
        let mut live = Screen::new(10, 40);
        let mut tape = Tape::new();
        tape.checkpoint(ms(0), &live);
        for (i, c) in chunks.iter().enumerate() {
            live.process(c);
            tape.output(ms(10 * i as u64), c, &live);
        }
        let rec = tape.recording(ms(100), 0.0, "t").expect("seeded");
        let cast = Cast::parse(&rec.cast).expect("cast");
        let outs: Vec<Vec<u8>> = cast
            .events
            .iter()
            .skip(1)
            .filter_map(|e| match &e.kind {
                EventKind::Output(b) => Some(b.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            outs,
            [
                b"caf".to_vec(),
                "\u{e9} ".as_bytes().to_vec(),
                "\u{2502} x\u{FFFD} y".as_bytes().to_vec()
            ]
        );
        // The same screen as the whole output read at once.
        let mut whole = Screen::new(10, 40);
        whole.process(b"caf\xc3\xa9 \xe2\x94\x82 x\xef\xbf\xbd y");
        assert_eq!(replayed(&rec).rows(), whole.rows());
    }

    #[test]
    fn tiny_reads_stay_within_twice_the_bound() {
        let mut live = Screen::new(10, 40);
        let mut tape = Tape::new();
        tape.checkpoint(ms(0), &live);
        let checkpoint = tape.memory_bytes();
        for i in 0..200_000u64 {
            live.process(b"x");
            tape.output(ms(i), b"x", &live);
            assert!(tape.bytes.len() + tape.marks.len() * MARK_COST <= TAPE_BYTES);
        }
        assert!(tape.wraps >= 10, "{}", tape.wraps);
        let events = tape.memory_bytes() - tape.checkpoint.capacity();
        assert!(events <= 2 * TAPE_BYTES, "{events}");
        assert!(checkpoint > 0);
    }

    #[test]
    fn resizes_and_keys_are_events() {
        let mut live = Screen::new(10, 40);
        let mut tape = Tape::new();
        tape.checkpoint(ms(0), &live);
        live.resize(5, 20);
        tape.resize(ms(100), 5, 20, &live);
        tape.input(ms(200), b"key", &live);
        live.process(b"small now");
        tape.output(ms(300), b"small now", &live);
        let rec = tape.recording(ms(300), 0.0, "t").expect("seeded");
        let cast = Cast::parse(&rec.cast).expect("cast");
        let kinds: Vec<EventKind> = cast.events.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(kinds[1], EventKind::Resize(20, 5));
        assert_eq!(kinds[2], EventKind::Input(b"key".to_vec()));
        assert_eq!(replayed(&rec).rows(), live.rows());
    }
}
