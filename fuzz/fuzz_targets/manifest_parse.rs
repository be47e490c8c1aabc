//! Any text as an agent manifest: `Manifest::parse` reports errors, never
//! panics. Inputs that are not UTF-8 are read lossily (a user's file is
//! read the same way).

#![no_main]

use libfuzzer_sys::fuzz_target;
use tend_detector::Manifest;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(m) = Manifest::parse("fuzz.toml", &text) {
        // A manifest that parses can be evaluated.
        let view = tend_detector::rules::ScreenView::from_text(&text);
        let _ = tend_detector::rules::evaluate(&view, &m);
        let _ = tend_detector::rules::verdicts(&view, &m);
    }
});
