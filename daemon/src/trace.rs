//! `TEND_TRACE=<file>`: one line per step of the path a pane's output takes
//! through the daemon (pipe read, feed, evaluation, state change, publish),
//! each with the Unix time in microseconds, so that a delay between an
//! agent's screen and `@tend_state` can be located without a debugger.
//! Off (one relaxed load per call) unless the variable names a file the
//! daemon can append to.

use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

static SINK: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();

fn sink() -> Option<&'static Mutex<std::fs::File>> {
    SINK.get_or_init(|| {
        let path = std::env::var_os("TEND_TRACE")?;
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(f) => Some(Mutex::new(f)),
            Err(e) => {
                crate::say!(
                    "TEND_TRACE={}: cannot open it ({e}); tracing is off",
                    std::path::Path::new(&path).display()
                );
                None
            }
        }
    })
    .as_ref()
}

/// Whether tracing is on (to skip building a line nobody reads).
pub fn on() -> bool {
    sink().is_some()
}

/// Unix time in microseconds.
pub fn now_us() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0)
}

/// Appends `<unix µs> <what>` to the trace file.
pub fn line(what: std::fmt::Arguments<'_>) {
    let Some(m) = sink() else { return };
    let text = format!("{} {}\n", now_us(), what);
    if let Ok(mut f) = m.lock() {
        let _ = f.write_all(text.as_bytes());
    }
}

/// Appends a line the core traced: `at_us` is its own time.
pub fn line_at(at_us: u128, what: &str) {
    let Some(m) = sink() else { return };
    let text = format!("{at_us} {what}\n");
    if let Ok(mut f) = m.lock() {
        let _ = f.write_all(text.as_bytes());
    }
}

/// `trace!("feed {pane} {n}")`: a trace line, built only when tracing is on.
#[macro_export]
macro_rules! trace {
    ($($arg:tt)*) => {
        if $crate::trace::on() {
            $crate::trace::line(format_args!($($arg)*));
        }
    };
}
