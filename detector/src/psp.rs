//! The agent's own word: OSC 7501, the Program Status Protocol (spec
//! revision 0.4).
//!
//! A program tells its terminal what it is doing with
//!
//! ```text
//! ESC ] 7501 ; state=idle|working|blocked|done|error|clear
//!              [:kind=permission|question|auth] [:app=NAME] [:id=CHILD]
//!              [:progress=N] [:msg=BASE64] [:title=BASE64] ST
//! ```
//!
//! (ST is `ESC \` or BEL). It first asks whether the terminal listens with
//! the query `ESC ] 7501 ; ? ST` followed by a DA1 request, and reports
//! only if the query comes back before the DA1 reply. tmux never answers,
//! so inside tmux a program reports only under `tend run`, which answers
//! for the terminal (`tend/src/cli/run/`).
//!
//! This module is the terminal's side, and only reads:
//!
//! * [`Scanner`] finds the sequences in a byte stream, however it is split
//!   into reads (the emulator hands unknown OSCs over too, but cuts them at
//!   1 KiB without saying so; a report may be 4 KiB);
//! * [`parse`] reads one sequence's body, strictly: a report that breaks a
//!   rule or a limit is dropped whole ([`Rejected`]), unknown keys are
//!   ignored;
//! * [`Records`] keeps what the program said: the root record and up to
//!   [`MAX_CHILDREN`] child records (`id=`: its subtasks), each report
//!   replacing its record whole;
//! * [`Tracker`] ties the three to one pane, counts what it dropped, and
//!   reads the records as a [`Reading`]: a state and reason in tend's
//!   vocabulary, the message and the live subtasks.
//!
//! Which of the program's word and the screen decides a pane's status is
//! not decided here but in `tend-attention` (`report/`), like `tend
//! report`'s self-reports.
//!
//! Text a program sends (`msg`, `title`, `app`, `id`) is untrusted: it is
//! checked against the protocol's alphabet and limits, and the decoded
//! `msg` and `title` have their control characters removed ([`clean_text`])
//! before anything keeps them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::state::{Reason, State};

/// The sequence's introducer, `ESC ] 7501 ;`.
pub const PREFIX: &[u8] = b"\x1b]7501;";

/// The query a program sends, and the answer a listening terminal echoes
/// (`ESC ] 7501 ; ? ESC \`).
pub const QUERY_ANSWER: &[u8] = b"\x1b]7501;?\x1b\\";

/// Longest sequence, introducer through ST.
pub const MAX_SEQUENCE: usize = 4096;

/// Longest body (what lies between the introducer and a one-byte ST).
pub const MAX_BODY: usize = MAX_SEQUENCE - PREFIX.len() - 1;

/// Longest key.
pub const MAX_KEY: usize = 16;

/// Longest `msg`, base64-encoded and decoded.
pub const MAX_MSG_ENCODED: usize = 2732;
/// Longest decoded `msg`, in bytes.
pub const MAX_MSG: usize = 2048;

/// Longest `title`, base64-encoded.
pub const MAX_TITLE_ENCODED: usize = 256;
/// Longest decoded `title`, in bytes.
pub const MAX_TITLE: usize = 192;

/// Longest `app`.
pub const MAX_APP: usize = 32;

/// Longest `id`, in all, per `/`-separated segment, and most segments.
pub const MAX_ID: usize = 128;
/// Longest segment of an `id`.
pub const MAX_ID_SEGMENT: usize = 32;
/// Most segments of an `id`.
pub const MAX_ID_DEPTH: usize = 8;

/// Most child records a pane keeps; a report for another one is dropped.
pub const MAX_CHILDREN: usize = 64;

/// Longest text kept for display (after cleaning), in bytes; longer text
/// is cut at a character boundary and ends with `…`.
pub const MAX_SHOWN: usize = 1024;

// ---------------------------------------------------------------------------
// The scanner.

/// What [`Scanner::scan`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found<'a> {
    /// A complete sequence: its body (the bytes between `ESC ] 7501 ;` and
    /// ST). `?` is the query.
    Sequence(&'a [u8]),
    /// A sequence longer than [`MAX_SEQUENCE`]: dropped, and skipped to its
    /// end.
    Oversized,
    /// A sequence cut short by `ESC` followed by anything but `\`, or by
    /// CAN or SUB: dropped.
    Unterminated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScanState {
    /// Outside a sequence; the last `partial` bytes seen were the start of
    /// the introducer.
    Ground { partial: usize },
    /// Inside a body.
    Body,
    /// Inside a body, after `ESC`.
    BodyEsc,
    /// Inside an oversized sequence, skipping to its end.
    Skip,
}

/// Finds OSC 7501 sequences in a byte stream, whatever the reads it
/// arrives in: a sequence split across reads is found once, when its last
/// byte arrives. Memory is bounded by [`MAX_BODY`].
#[derive(Debug, Clone)]
pub struct Scanner {
    state: ScanState,
    body: Vec<u8>,
    finder: memchr::memmem::Finder<'static>,
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner::new()
    }
}

fn is_end(b: u8) -> bool {
    matches!(b, 0x07 | 0x1b | 0x18 | 0x1a)
}

impl Scanner {
    /// A scanner outside any sequence.
    pub fn new() -> Self {
        Scanner {
            state: ScanState::Ground { partial: 0 },
            body: Vec::new(),
            finder: memchr::memmem::Finder::new(PREFIX),
        }
    }

    /// Whether the scanner is inside a sequence (or the start of one).
    pub fn in_sequence(&self) -> bool {
        self.state != ScanState::Ground { partial: 0 }
    }

    /// Forgets a sequence in progress.
    pub fn reset(&mut self) {
        self.state = ScanState::Ground { partial: 0 };
        self.body = Vec::new();
    }

    /// Scans the next bytes of the stream, calling `f` for each sequence
    /// that ends in them.
    pub fn scan(&mut self, mut bytes: &[u8], mut f: impl FnMut(Found<'_>)) {
        while !bytes.is_empty() {
            match self.state {
                ScanState::Ground { partial } if partial > 0 => {
                    let need = &PREFIX[partial..];
                    let n = need.len().min(bytes.len());
                    if bytes[..n] != need[..n] {
                        // Not the introducer after all. `ESC` appears only
                        // first in it, so no introducer starts inside the
                        // bytes matched so far: scan on from here.
                        self.state = ScanState::Ground { partial: 0 };
                        continue;
                    }
                    bytes = &bytes[n..];
                    if n == need.len() {
                        self.state = ScanState::Body;
                        self.body.clear();
                    } else {
                        self.state = ScanState::Ground {
                            partial: partial + n,
                        };
                    }
                }
                ScanState::Ground { .. } => match self.finder.find(bytes) {
                    Some(i) => {
                        bytes = &bytes[i + PREFIX.len()..];
                        self.state = ScanState::Body;
                        self.body.clear();
                    }
                    None => {
                        // The end may be the start of an introducer.
                        let tail = bytes.len().min(PREFIX.len() - 1);
                        let from = bytes.len() - tail;
                        let partial = (from..bytes.len())
                            .find(|&i| PREFIX.starts_with(&bytes[i..]))
                            .map_or(0, |i| bytes.len() - i);
                        self.state = ScanState::Ground { partial };
                        return;
                    }
                },
                ScanState::Body => {
                    let end = bytes.iter().position(|&b| is_end(b));
                    let take = end.unwrap_or(bytes.len());
                    if self.body.len() + take > MAX_BODY {
                        self.body = Vec::new();
                        self.state = ScanState::Skip;
                        f(Found::Oversized);
                        continue;
                    }
                    self.body.extend_from_slice(&bytes[..take]);
                    let Some(i) = end else { return };
                    let b = bytes[i];
                    bytes = &bytes[i + 1..];
                    match b {
                        0x07 => {
                            self.state = ScanState::Ground { partial: 0 };
                            f(Found::Sequence(&self.body));
                            self.body.clear();
                        }
                        0x1b => self.state = ScanState::BodyEsc,
                        _ => {
                            self.state = ScanState::Ground { partial: 0 };
                            self.body.clear();
                            f(Found::Unterminated);
                        }
                    }
                }
                ScanState::BodyEsc => {
                    if bytes[0] == b'\\' {
                        bytes = &bytes[1..];
                        self.state = ScanState::Ground { partial: 0 };
                        f(Found::Sequence(&self.body));
                        self.body.clear();
                    } else {
                        // The `ESC` begins something else, perhaps another
                        // sequence: read on from it.
                        self.state = ScanState::Ground { partial: 1 };
                        self.body.clear();
                        f(Found::Unterminated);
                    }
                }
                ScanState::Skip => match bytes.iter().position(|&b| is_end(b)) {
                    None => return,
                    Some(i) => {
                        self.state = if bytes[i] == 0x1b {
                            ScanState::Ground { partial: 1 }
                        } else {
                            ScanState::Ground { partial: 0 }
                        };
                        bytes = &bytes[i + 1..];
                    }
                },
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Reports in output that had to be dropped.

/// Most sequences [`Salvage`] keeps between two takes; older ones beyond it
/// are counted as [`Rejected::Overrun`].
pub const MAX_SALVAGED: usize = 64;

/// The OSC 7501 sequences in output a reader had to drop.
///
/// A pane that prints faster than tend reads it loses output (the screen
/// is captured again instead), and a report in that output would be lost
/// with it: a program that prints a megabyte and then asks for permission
/// would read `working` for good. The reader scans every byte it reads
/// with one of these, kept or dropped, and keeps each sequence any part of
/// which was dropped; the pane table takes them as the program's word.
/// Memory is bounded: at most [`MAX_SALVAGED`] sequences of at most
/// [`MAX_BODY`] bytes, the oldest given up (and counted) first.
#[derive(Debug, Clone, Default)]
pub struct Salvage {
    scanner: Scanner,
    /// The sequence in progress lost a part to a drop.
    touched: bool,
    kept: std::collections::VecDeque<Vec<u8>>,
    given_up: u64,
}

/// What [`Salvage::take`] hands on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Salvaged {
    /// The sequences' bodies, oldest first.
    pub bodies: Vec<Vec<u8>>,
    /// Sequences given up to the bound.
    pub given_up: u64,
}

impl Salvage {
    /// Scans the next bytes of the stream; `dropped` when they will not
    /// reach the pane table.
    pub fn scan(&mut self, bytes: &[u8], dropped: bool) {
        let Salvage {
            scanner,
            touched,
            kept,
            given_up,
        } = self;
        // The sequence already under way lost a part now or before.
        let mut this_touched = *touched || (dropped && scanner.in_sequence());
        scanner.scan(bytes, |found| {
            if let Found::Sequence(body) = found {
                if this_touched || dropped {
                    if kept.len() == MAX_SALVAGED {
                        kept.pop_front();
                        *given_up += 1;
                    }
                    kept.push_back(body.to_vec());
                }
            }
            // Any later sequence starts within these bytes.
            this_touched = false;
        });
        *touched = scanner.in_sequence() && (dropped || this_touched);
    }

    /// Whether anything waits to be taken.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty() && self.given_up == 0
    }

    /// Hands on what was kept since the last take.
    pub fn take(&mut self) -> Salvaged {
        Salvaged {
            bodies: std::mem::take(&mut self.kept).into(),
            given_up: std::mem::take(&mut self.given_up),
        }
    }
}

// ---------------------------------------------------------------------------
// The parser.

pub use tend_vocab::psp::{Kind, ReportState};

/// One report, as parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// `state`.
    pub state: ReportState,
    /// `kind` (meaningful with `blocked`).
    pub kind: Option<Kind>,
    /// `app`: the program's name for itself.
    pub app: Option<String>,
    /// `id`: a child record's id; `None` for the root record.
    pub id: Option<String>,
    /// `progress`, 0–100.
    pub progress: Option<u8>,
    /// `msg`, decoded and cleaned.
    pub msg: Option<String>,
    /// `title`, decoded and cleaned.
    pub title: Option<String>,
}

/// A sequence's meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// `?`: the program asks whether the terminal listens.
    Query,
    /// A report.
    Report(Report),
}

/// Why a sequence was dropped. Every drop is counted ([`Counters`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rejected {
    /// Longer than [`MAX_SEQUENCE`].
    Oversized,
    /// Cut short before its ST.
    Unterminated,
    /// A part that is not `key=value` with a lower-case key.
    Malformed,
    /// A byte outside the protocol's value alphabet.
    BadValue,
    /// A known key given twice.
    DuplicateKey,
    /// No `state`.
    MissingState,
    /// A `state` the protocol does not have.
    UnknownState,
    /// `msg` or `title` not base64.
    BadBase64,
    /// `msg` or `title` not UTF-8 once decoded.
    BadUtf8,
    /// A field over its limit.
    TooLong,
    /// An `id` that is empty, too deep or with an empty segment.
    BadId,
    /// `progress` not a whole number from 0 to 100.
    BadProgress,
    /// A new child record beyond [`MAX_CHILDREN`].
    TooManyRecords,
    /// In output the reader had to drop (a pane printing faster than tend
    /// reads it), beyond the [`MAX_SALVAGED`] sequences kept from it.
    Overrun,
}

impl Rejected {
    /// A short word for counters and explain.
    pub fn as_str(&self) -> &'static str {
        match self {
            Rejected::Oversized => "oversized",
            Rejected::Unterminated => "unterminated",
            Rejected::Malformed => "malformed",
            Rejected::BadValue => "bad_value",
            Rejected::DuplicateKey => "duplicate_key",
            Rejected::MissingState => "missing_state",
            Rejected::UnknownState => "unknown_state",
            Rejected::BadBase64 => "bad_base64",
            Rejected::BadUtf8 => "bad_utf8",
            Rejected::TooLong => "too_long",
            Rejected::BadId => "bad_id",
            Rejected::BadProgress => "bad_progress",
            Rejected::TooManyRecords => "too_many_records",
            Rejected::Overrun => "overrun",
        }
    }
}

fn is_value_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b',' | b'+' | b'/' | b'=' | b'-')
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Reads one sequence's body (the bytes between `ESC ] 7501 ;` and ST).
///
/// Strict: `:`-separated `key=value` parts, keys of 1–16 lower-case
/// letters, values from the protocol's alphabet (`A–Z a–z 0–9 _ . , + / =
/// -`), spaces and tabs around either ignored; `state` required; each
/// field within its limit; `msg` and `title` standard base64 of UTF-8.
/// Unknown keys are ignored; a known key given twice, or anything else
/// broken, drops the whole report.
pub fn parse(body: &[u8]) -> Result<Message, Rejected> {
    if trim(body) == b"?" {
        return Ok(Message::Query);
    }
    if body.len() > MAX_BODY {
        return Err(Rejected::Oversized);
    }
    let mut state = None;
    let mut kind = None;
    let mut app = None;
    let mut id = None;
    let mut progress = None;
    let mut msg = None;
    let mut title = None;
    for part in body.split(|&b| b == b':') {
        let eq = part
            .iter()
            .position(|&b| b == b'=')
            .ok_or(Rejected::Malformed)?;
        let key = trim(&part[..eq]);
        let value = trim(&part[eq + 1..]);
        if key.is_empty() || key.len() > MAX_KEY || !key.iter().all(u8::is_ascii_lowercase) {
            return Err(Rejected::Malformed);
        }
        if !value.iter().all(|&b| is_value_byte(b)) {
            return Err(Rejected::BadValue);
        }
        // Both halves are ASCII by now.
        let value = std::str::from_utf8(value).map_err(|_| Rejected::BadValue)?;
        fn once<T>(slot: &mut Option<T>, v: T) -> Result<(), Rejected> {
            match slot.replace(v) {
                Some(_) => Err(Rejected::DuplicateKey),
                None => Ok(()),
            }
        }
        match key {
            b"state" => once(
                &mut state,
                ReportState::parse(value).ok_or(Rejected::UnknownState)?,
            )?,
            b"kind" => once(
                &mut kind,
                match value {
                    "permission" => Kind::Permission,
                    "question" => Kind::Question,
                    "auth" => Kind::Auth,
                    _ => Kind::Other,
                },
            )?,
            b"app" => {
                if value.len() > MAX_APP {
                    return Err(Rejected::TooLong);
                }
                once(&mut app, value.to_owned())?
            }
            b"id" => once(&mut id, parse_id(value)?)?,
            b"progress" => once(&mut progress, parse_progress(value)?)?,
            b"msg" => once(&mut msg, decode_text(value, MAX_MSG_ENCODED, MAX_MSG)?)?,
            b"title" => once(
                &mut title,
                decode_text(value, MAX_TITLE_ENCODED, MAX_TITLE)?,
            )?,
            _ => {}
        }
    }
    let state = state.ok_or(Rejected::MissingState)?;
    Ok(Message::Report(Report {
        state,
        kind: if state == ReportState::Blocked {
            kind
        } else {
            None
        },
        app: app.filter(|a| !a.is_empty()),
        id,
        progress,
        msg: msg.flatten(),
        title: title.flatten(),
    }))
}

fn parse_id(value: &str) -> Result<String, Rejected> {
    if value.len() > MAX_ID {
        return Err(Rejected::TooLong);
    }
    let segments = value.split('/');
    let mut n = 0;
    for s in segments {
        n += 1;
        if s.is_empty() || s.len() > MAX_ID_SEGMENT || n > MAX_ID_DEPTH {
            return Err(Rejected::BadId);
        }
    }
    Ok(value.to_owned())
}

fn parse_progress(value: &str) -> Result<u8, Rejected> {
    if value.is_empty() || value.len() > 3 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Rejected::BadProgress);
    }
    match value.parse::<u8>() {
        Ok(n) if n <= 100 => Ok(n),
        _ => Err(Rejected::BadProgress),
    }
}

/// Decodes a base64 text field and cleans it (`None`: empty once cleaned).
fn decode_text(value: &str, max_encoded: usize, max: usize) -> Result<Option<String>, Rejected> {
    if value.len() > max_encoded {
        return Err(Rejected::TooLong);
    }
    let bytes = base64_decode(value.as_bytes()).ok_or(Rejected::BadBase64)?;
    if bytes.len() > max {
        return Err(Rejected::TooLong);
    }
    let text = String::from_utf8(bytes).map_err(|_| Rejected::BadUtf8)?;
    let text = clean_text(&text, MAX_SHOWN);
    Ok((!text.is_empty()).then_some(text))
}

/// Standard base64 (`A–Z a–z 0–9 + /`), padded or not; the unused bits of
/// the last character must be zero. `None` for anything else.
pub fn base64_decode(s: &[u8]) -> Option<Vec<u8>> {
    fn sextet(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let data = match s.iter().position(|&c| c == b'=') {
        Some(p) => {
            // Padding: only at the end, making a multiple of four, at most
            // two.
            let pad = &s[p..];
            if s.len() % 4 != 0 || pad.len() > 2 || pad.iter().any(|&c| c != b'=') {
                return None;
            }
            &s[..p]
        }
        None => s,
    };
    if data.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(data.len() / 4 * 3 + 2);
    for chunk in data.chunks(4) {
        let mut acc = 0u32;
        for &c in chunk {
            acc = (acc << 6) | sextet(c)?;
        }
        match chunk.len() {
            4 => out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]),
            3 => {
                if acc & 0b11 != 0 {
                    return None;
                }
                out.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]);
            }
            2 => {
                if acc & 0b1111 != 0 {
                    return None;
                }
                out.push((acc >> 4) as u8);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Standard base64 with padding (for programs and tests that report).
pub fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// How a character of untrusted text is shown: line breaks and tabs as a
/// space; control characters (escape sequences' introducers among them)
/// and the invisible marks that reorder or hide text (bidi overrides,
/// zero-width marks) not at all. Every place that draws agent text uses
/// it ([`clean_text`], the fleet view).
pub fn shown(c: char) -> Option<char> {
    match c {
        '\n' | '\r' | '\t' => Some(' '),
        c if c.is_control() => None,
        '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}' => None,
        c => Some(c),
    }
}

/// Text fit to show: control characters (and the invisible formatting
/// ones that reorder or hide text: bidi overrides, zero-width marks)
/// removed, line breaks and tabs made spaces, runs of spaces made one, the
/// ends trimmed, and cut to `max` bytes at a character boundary (ending
/// with `…` when cut).
pub fn clean_text(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    let mut space = false;
    for c in s.chars() {
        let Some(c) = shown(c) else {
            continue;
        };
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    if out.len() > max {
        let mut cut = max.saturating_sub('…'.len_utf8());
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

// ---------------------------------------------------------------------------
// The records.

/// One record: the root (the program) or a child (a subtask).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    /// Its state (never `clear`).
    pub state: ReportState,
    /// What it waits on, when blocked.
    pub kind: Option<Kind>,
    /// The program's name for itself.
    pub app: Option<String>,
    /// Progress, 0–100.
    pub progress: Option<u8>,
    /// The message.
    pub msg: Option<String>,
    /// The title.
    pub title: Option<String>,
    /// When it entered its state (caller's clock).
    #[serde(serialize_with = "secs")]
    pub since: Duration,
    /// When it was last reported.
    #[serde(serialize_with = "secs")]
    pub at: Duration,
}

impl Record {
    /// A live subtask: still working or waiting on the user.
    pub fn is_live(&self) -> bool {
        matches!(self.state, ReportState::Working | ReportState::Blocked)
    }

    fn from_report(now: Duration, r: Report, old: Option<&Record>) -> Self {
        let since = match old {
            Some(o) if o.state == r.state && o.kind == r.kind => o.since,
            _ => now,
        };
        Record {
            state: r.state,
            kind: r.kind,
            app: r.app,
            progress: r.progress,
            msg: r.msg,
            title: r.title,
            since,
            at: now,
        }
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// What a program has said: its root record and its children's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Records {
    /// The root record (`None`: none, or cleared).
    pub root: Option<Record>,
    /// Child records by id.
    pub children: BTreeMap<String, Record>,
}

impl Records {
    /// Applies a report at `now`: it replaces its record whole; `clear`
    /// removes the record and its subtree (`id=a` removes `a/…` too), or
    /// every record without `id`.
    pub fn apply(&mut self, now: Duration, r: Report) -> Result<(), Rejected> {
        match (&r.id, r.state) {
            (None, ReportState::Clear) => {
                self.root = None;
                self.children.clear();
            }
            (Some(id), ReportState::Clear) => {
                let sub = format!("{id}/");
                self.children
                    .retain(|k, _| k != id && !k.starts_with(sub.as_str()));
            }
            (None, _) => {
                let rec = Record::from_report(now, r, self.root.as_ref());
                self.root = Some(rec);
            }
            (Some(id), _) => {
                let id = id.clone();
                let old = self.children.get(&id);
                if old.is_none() && self.children.len() >= MAX_CHILDREN {
                    return Err(Rejected::TooManyRecords);
                }
                let rec = Record::from_report(now, r, old);
                self.children.insert(id, rec);
            }
        }
        Ok(())
    }

    /// No record at all.
    pub fn is_empty(&self) -> bool {
        self.root.is_none() && self.children.is_empty()
    }

    /// The live subtasks.
    pub fn live_children(&self) -> impl Iterator<Item = (&String, &Record)> {
        self.children.iter().filter(|(_, r)| r.is_live())
    }
}

/// One subtask as listed (`tend list --json`'s `tasks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Task {
    /// Its id.
    pub id: String,
    /// Its state (`working`, `blocked`, `done`, …).
    pub state: ReportState,
    /// What it waits on, when blocked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    /// Its title.
    pub title: Option<String>,
    /// Its message.
    pub message: Option<String>,
    /// Progress, 0–100.
    pub progress: Option<u8>,
    /// Still working or waiting on the user.
    pub live: bool,
}

/// What the program's word says, in tend's vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reading {
    /// The state.
    pub state: State,
    /// The reason, with waiting.
    pub reason: Option<Reason>,
    /// The rule-like name of what decided it (`psp/blocked:permission`,
    /// `psp/done+tasks`).
    pub rule: String,
    /// The message: the deciding record's `msg`, else its `title`.
    pub message: Option<String>,
    /// The program's name for itself.
    pub app: Option<String>,
    /// Every subtask, live first.
    pub tasks: Vec<Task>,
    /// How many of them are live.
    pub live_tasks: usize,
    /// When the deciding record entered its state.
    #[serde(serialize_with = "secs")]
    pub since: Duration,
}

impl Records {
    /// The records read as a state:
    ///
    /// | root | | state |
    /// |---|---|---|
    /// | `idle` | | idle |
    /// | `working` | | working |
    /// | `blocked` | `kind=permission`, `question`, `auth`, none | waiting/approval, question, error, prompt |
    /// | `error` | | waiting/error |
    /// | `done` | | completed — working while a subtask is live |
    /// | none | a live subtask | working |
    /// | none | no live subtask | nothing: the screen decides |
    ///
    /// A blocked subtask of a root that is not blocked or failed makes the
    /// pane wait on the user for it.
    pub fn reading(&self) -> Option<Reading> {
        let mut tasks: Vec<Task> = self
            .children
            .iter()
            .map(|(id, r)| Task {
                id: id.clone(),
                state: r.state,
                kind: r.kind,
                title: r.title.clone(),
                message: r.msg.clone(),
                progress: r.progress,
                live: r.is_live(),
            })
            .collect();
        tasks.sort_by_key(|t| !t.live);
        let live_tasks = tasks.iter().filter(|t| t.live).count();
        let blocked_child = self
            .children
            .iter()
            .filter(|(_, r)| r.state == ReportState::Blocked)
            .min_by_key(|(_, r)| r.since);
        let text = |r: &Record| r.msg.clone().or_else(|| r.title.clone());
        let app = self
            .root
            .as_ref()
            .and_then(|r| r.app.clone())
            .or_else(|| self.children.values().find_map(|r| r.app.clone()));
        let reading = |state, reason, rule: String, message, since| Reading {
            state,
            reason,
            rule,
            message,
            app: app.clone(),
            tasks: tasks.clone(),
            live_tasks,
            since,
        };
        let Some(root) = &self.root else {
            if let Some((id, c)) = blocked_child {
                return Some(reading(
                    State::Waiting,
                    Some(Kind::reason(c.kind)),
                    format!("psp/task-blocked:{}", kind_word(c.kind)),
                    text(c).or_else(|| Some(format!("task {id}"))),
                    c.since,
                ));
            }
            let first = self.live_children().map(|(_, r)| r.since).min()?;
            return Some(reading(
                State::Working,
                None,
                "psp/tasks".into(),
                None,
                first,
            ));
        };
        if let (Some((id, c)), ReportState::Idle | ReportState::Working | ReportState::Done) =
            (blocked_child, root.state)
        {
            return Some(reading(
                State::Waiting,
                Some(Kind::reason(c.kind)),
                format!("psp/task-blocked:{}", kind_word(c.kind)),
                text(c).or_else(|| Some(format!("task {id}"))),
                c.since,
            ));
        }
        let (state, reason, rule) = match root.state {
            ReportState::Idle => (State::Idle, None, "psp/idle".to_owned()),
            ReportState::Working => (State::Working, None, "psp/working".to_owned()),
            ReportState::Blocked => (
                State::Waiting,
                Some(Kind::reason(root.kind)),
                format!("psp/blocked:{}", kind_word(root.kind)),
            ),
            ReportState::Error => (State::Waiting, Some(Reason::Error), "psp/error".to_owned()),
            ReportState::Done if live_tasks > 0 => {
                (State::Working, None, "psp/done+tasks".to_owned())
            }
            ReportState::Done => (State::Completed, None, "psp/done".to_owned()),
            // Never stored.
            ReportState::Clear => return None,
        };
        Some(reading(state, reason, rule, text(root), root.since))
    }
}

fn kind_word(k: Option<Kind>) -> &'static str {
    k.map_or("none", |k| k.as_str())
}

// ---------------------------------------------------------------------------
// One pane's tracker.

/// What a pane's program sent, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Queries (`?`).
    pub queries: u64,
    /// Reports taken.
    pub reports: u64,
    /// Sequences dropped, by why.
    pub dropped: BTreeMap<Rejected, u64>,
}

impl Counters {
    /// Sequences dropped in all.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.values().sum()
    }

    fn drop(&mut self, why: Rejected) {
        *self.dropped.entry(why).or_default() += 1;
    }
}

/// One pane's OSC 7501 reader: scanner, records and counters.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    scanner: Scanner,
    records: Records,
    counters: Counters,
    last_query: Option<Duration>,
    last_report: Option<Duration>,
    /// A report changed the records since [`Tracker::take_changed`].
    changed: bool,
}

/// What `tend explain` shows of a pane's program's word.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The records.
    pub records: Records,
    /// The reading, when there is one.
    pub reading: Option<Reading>,
    /// What was received and dropped.
    pub counters: Counters,
    /// When the program last asked whether the terminal listens.
    pub last_query: Option<f64>,
    /// When it last reported.
    pub last_report: Option<f64>,
}

impl Tracker {
    /// A tracker with nothing received.
    pub fn new() -> Self {
        Tracker::default()
    }

    /// Reads output that arrived at `now`.
    pub fn feed(&mut self, now: Duration, bytes: &[u8]) {
        let (scanner, mut taker) = self.split();
        scanner.scan(bytes, |found| match found {
            Found::Oversized => taker.counters.drop(Rejected::Oversized),
            Found::Unterminated => taker.counters.drop(Rejected::Unterminated),
            Found::Sequence(body) => taker.take(now, body),
        });
    }

    /// Takes the sequences saved from output the reader dropped at `now`
    /// ([`Salvage`]), as if they had been read, and counts those it gave
    /// up. The stream itself was broken by the drop: a sequence under way
    /// is forgotten (its whole is among these, when it ended in the drop).
    pub fn feed_salvaged(&mut self, now: Duration, salvaged: &Salvaged) {
        let (scanner, mut taker) = self.split();
        scanner.reset();
        for _ in 0..salvaged.given_up {
            taker.counters.drop(Rejected::Overrun);
        }
        for body in &salvaged.bodies {
            taker.take(now, body);
        }
    }

    /// The scanner, and what a sequence's body changes.
    fn split(&mut self) -> (&mut Scanner, Taker<'_>) {
        let Tracker {
            scanner,
            records,
            counters,
            last_query,
            last_report,
            changed,
        } = self;
        let taker = Taker {
            records,
            counters,
            last_query,
            last_report,
            changed,
        };
        (scanner, taker)
    }

    /// Output was lost between what was fed and what comes next: a
    /// sequence under way will not be completed.
    pub fn stream_broken(&mut self) {
        self.scanner.reset();
    }

    /// Forgets every record (the program ended, or the shell is back); the
    /// counters stay.
    pub fn forget(&mut self) {
        if !self.records.is_empty() {
            self.records = Records::default();
            self.changed = true;
        }
    }

    /// The records.
    pub fn records(&self) -> &Records {
        &self.records
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// When the program last asked whether the terminal listens.
    pub fn last_query(&self) -> Option<Duration> {
        self.last_query
    }

    /// The records read as a state (`None`: no word to go by).
    pub fn reading(&self) -> Option<Reading> {
        self.records.reading()
    }

    /// Whether the records changed since the last call.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Whether the records changed since [`Tracker::take_changed`].
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// For `tend explain`.
    pub fn summary(&self) -> Summary {
        Summary {
            records: self.records.clone(),
            reading: self.reading(),
            counters: self.counters.clone(),
            last_query: self.last_query.map(|d| d.as_secs_f64()),
            last_report: self.last_report.map(|d| d.as_secs_f64()),
        }
    }
}

/// The part of a [`Tracker`] one sequence's body changes.
struct Taker<'a> {
    records: &'a mut Records,
    counters: &'a mut Counters,
    last_query: &'a mut Option<Duration>,
    last_report: &'a mut Option<Duration>,
    changed: &'a mut bool,
}

impl Taker<'_> {
    fn take(&mut self, now: Duration, body: &[u8]) {
        match parse(body) {
            Ok(Message::Query) => {
                self.counters.queries += 1;
                *self.last_query = Some(now);
            }
            Ok(Message::Report(r)) => match self.records.apply(now, r) {
                Ok(()) => {
                    self.counters.reports += 1;
                    *self.last_report = Some(now);
                    *self.changed = true;
                }
                Err(why) => self.counters.drop(why),
            },
            Err(why) => self.counters.drop(why),
        }
    }
}

/// Writes a report as a program would (for tests and examples): fields in
/// the protocol's order, `msg` and `title` base64-encoded, ended by
/// `ESC \`.
pub fn encode(r: &Report) -> Vec<u8> {
    let mut s = format!("state={}", r.state.as_str());
    if let Some(k) = r.kind {
        s.push_str(&format!(":kind={}", k.as_str()));
    }
    if let Some(a) = &r.app {
        s.push_str(&format!(":app={a}"));
    }
    if let Some(i) = &r.id {
        s.push_str(&format!(":id={i}"));
    }
    if let Some(p) = r.progress {
        s.push_str(&format!(":progress={p}"));
    }
    if let Some(m) = &r.msg {
        s.push_str(&format!(":msg={}", base64_encode(m.as_bytes())));
    }
    if let Some(t) = &r.title {
        s.push_str(&format!(":title={}", base64_encode(t.as_bytes())));
    }
    let mut out = PREFIX.to_vec();
    out.extend_from_slice(s.as_bytes());
    out.extend_from_slice(b"\x1b\\");
    out
}

#[cfg(test)]
mod tests;
