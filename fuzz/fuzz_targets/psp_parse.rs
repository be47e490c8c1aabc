//! OSC 7501 (the Program Status Protocol) as tend reads it: any bytes,
//! cut into reads at points taken from the input, through the scanner, the
//! parser and one pane's records. Never panics; the records stay within
//! their limits; the scanner finds the same sequences however the stream
//! is cut; and every body it finds parses or is rejected, never both ways.
//!
//! Layout: the first byte is how many cuts to make (at most 8), the next
//! that many bytes are where (as fractions of the rest), and the rest is the
//! stream. The stream is also parsed whole as one body.

#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tend_detector::psp::{self, Found, Scanner, Tracker, MAX_CHILDREN};

fn found(chunks: &[&[u8]]) -> Vec<Option<Vec<u8>>> {
    let mut sc = Scanner::new();
    let mut out = Vec::new();
    for c in chunks {
        sc.scan(c, |f| {
            out.push(match f {
                Found::Sequence(b) => Some(b.to_vec()),
                Found::Oversized | Found::Unterminated => None,
            })
        });
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 9).min(rest.len());
    let (cuts, stream) = rest.split_at(n);
    let _ = psp::parse(stream);

    let mut at: Vec<usize> = cuts
        .iter()
        .map(|&c| usize::from(c) * stream.len() / 255)
        .collect();
    at.sort_unstable();
    let mut chunks = Vec::new();
    let mut last = 0;
    for a in at {
        chunks.push(&stream[last..a]);
        last = a;
    }
    chunks.push(&stream[last..]);
    assert_eq!(found(&chunks), found(&[stream]));

    let mut t = Tracker::new();
    for (i, c) in chunks.iter().enumerate() {
        t.feed(Duration::from_millis(i as u64), c);
    }
    assert!(t.records().children.len() <= MAX_CHILDREN);
    if let Some(r) = t.reading() {
        assert!(r.message.as_ref().is_none_or(|m| m.len() <= psp::MAX_SHOWN));
        assert!(r.tasks.len() <= MAX_CHILDREN);
    }
    let _ = t.summary();
});
