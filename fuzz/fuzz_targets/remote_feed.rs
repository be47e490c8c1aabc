//! A remote's feed: any bytes the other machine's `tend events --feed`
//! (or whatever answers in its place) writes. Parsing never panics, and
//! every pane a snapshot keeps has ids that are ids and text without
//! control characters, bounded — what reaches local tmux options, key
//! bindings and window names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tend::remote::feed::{parse_line, Line, MAX_NAME, MAX_PANES, MAX_TEXT};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let Ok(Line::Snapshot(s)) = parse_line(line) else { continue };
        assert!(s.panes.len() <= MAX_PANES);
        for p in &s.panes {
            assert!(p.pane.parse::<tend_tmux::PaneId>().is_ok(), "{:?}", p.pane);
            assert!(p.window.parse::<tend_tmux::WindowId>().is_ok(), "{:?}", p.window);
            assert!(p.session.chars().count() <= MAX_NAME);
            for t in [&p.message, &p.note, &p.stop].into_iter().flatten() {
                assert!(t.chars().count() <= MAX_TEXT);
            }
            for t in [Some(&p.session), p.message.as_ref(), p.note.as_ref(), p.label.as_ref()]
                .into_iter()
                .flatten()
            {
                assert!(!t.chars().any(char::is_control), "{t:?}");
            }
        }
        if let Some(h) = &s.hostname {
            assert!(!h.chars().any(char::is_control));
        }
    }
});
