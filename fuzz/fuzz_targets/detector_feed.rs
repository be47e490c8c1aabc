//! Bytes into a `PaneDetector` running a bundled manifest: output,
//! keystrokes, resizes and clock ticks decoded from the input. Never panics;
//! signal buffers and the screen model stay bounded. (Panics raised inside
//! `vt100` are let through to `Screen`'s guard, which contains them.)
//!
//! Layout: the first byte picks the agent; then records of a tag byte and a
//! length byte followed by that many bytes:
//! tag % 8 = 0..=4 output, 5 keystrokes, 6 resize (rows, cols from the first
//! two payload bytes, so at most 255x255: a bigger size is a known gap, see
//! docs/PERFORMANCE.md), 7 clock tick (milliseconds from the payload).

#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tend_detector::{DetectorConfig, Manifest, PaneDetector, Registry};

fn manifests() -> &'static [Arc<Manifest>] {
    static M: OnceLock<Vec<Arc<Manifest>>> = OnceLock::new();
    M.get_or_init(|| {
        // libfuzzer-sys aborts on every panic, even a caught one. `Screen`
        // contains the emulator's own panics by design (vt100 0.18.1 has
        // some on wide characters): let those unwind to it; anything else
        // is still a crash.
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_vt100 = info
                .location()
                .is_some_and(|l| l.file().contains("/vt100-"));
            if !in_vt100 {
                abort(info);
            }
        }));
        Registry::bundled().iter().cloned().map(Arc::new).collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, mut rest)) = data.split_first() else {
        return;
    };
    let all = manifests();
    let manifest = all[usize::from(pick) % all.len()].clone();
    let mut d = PaneDetector::new(Arc::new(DetectorConfig::default()), 50, 200);
    let mut now = Duration::ZERO;
    d.set_agent(now, Some(manifest));
    while let [tag, len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let (payload, next) = tail.split_at(n);
        rest = next;
        match tag % 8 {
            0..=4 => d.feed(now, payload),
            5 => d.input(now, payload),
            6 => {
                let rows = u16::from(payload.first().copied().unwrap_or(0));
                let cols = u16::from(payload.get(1).copied().unwrap_or(0));
                d.resize(now, rows, cols);
            }
            _ => {
                let ms = payload
                    .iter()
                    .fold(0u64, |a, &b| (a << 8 | u64::from(b)) % 3_600_000);
                now += Duration::from_millis(ms);
                d.tick(now);
            }
        }
        while d.poll_transition().is_some() {}
        assert!(
            d.drain_signals().len() <= 64,
            "detector signal buffer overflow"
        );
        let (rows, cols) = d.screen().size();
        let grids = 2 * usize::from(rows) * usize::from(cols) * 32;
        assert!(
            d.screen().memory_bytes() <= grids + (4 << 20),
            "screen model too big"
        );
    }
    d.tick(now + Duration::from_secs(3_600));
    let _ = d.explain();
});
