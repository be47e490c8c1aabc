//! asciicast v2 recordings: parse (from text) and write.
//!
//! A recording is a JSON header line then one JSON array per event:
//! `[seconds, "o" | "i" | "r" | "m", data]`. Bug reports become test
//! fixtures in this format (`tend record` writes it, `tend replay` reads it).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The header line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Format version; 2.
    pub version: u32,
    /// Columns.
    pub width: u16,
    /// Rows.
    pub height: u16,
    /// Unix time of the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<f64>,
    /// Anything else (env, title, t0, …), kept as is.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// One event.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// Output from the program.
    Output(Vec<u8>),
    /// Input from the user.
    Input(Vec<u8>),
    /// Terminal resized to `(cols, rows)`.
    Resize(u16, u16),
    /// A marker with a label.
    Marker(String),
}

/// A timed event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Time since the start.
    pub at: Duration,
    /// What happened.
    pub kind: EventKind,
}

/// A parsed recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Cast {
    /// The header.
    pub header: Header,
    /// Events in time order.
    pub events: Vec<Event>,
}

/// A line of a recording could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CastError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for CastError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.problem)
    }
}

impl std::error::Error for CastError {}

fn parse_resize(s: &str) -> Option<(u16, u16)> {
    let (c, r) = s.split_once('x')?;
    Some((c.trim().parse().ok()?, r.trim().parse().ok()?))
}

impl Cast {
    /// Parses asciicast v2 text. Unknown event codes are skipped (the format
    /// allows them); malformed lines are errors naming the line.
    pub fn parse(text: &str) -> Result<Cast, CastError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, first) = lines.next().ok_or(CastError {
            line: 1,
            problem: "empty file: an asciicast v2 recording starts with a JSON header line".into(),
        })?;
        let header: Header = serde_json::from_str(first).map_err(|e| CastError {
            line: 1,
            problem: format!("not an asciicast v2 header: {e}"),
        })?;
        if header.version != 2 {
            return Err(CastError {
                line: 1,
                problem: format!(
                    "asciicast version {} is not supported (only 2)",
                    header.version
                ),
            });
        }
        let mut events = Vec::new();
        let mut last = Duration::ZERO;
        for (i, line) in lines {
            let err = |problem: String| CastError {
                line: i + 1,
                problem,
            };
            let (t, code, data): (f64, String, String) = serde_json::from_str(line)
                .map_err(|e| err(format!("not an event `[time, code, data]`: {e}")))?;
            if !t.is_finite() || t < 0.0 {
                return Err(err(format!("bad time {t}")));
            }
            // Times never go backwards; a clock hiccup is clamped.
            let at = Duration::from_secs_f64(t).max(last);
            last = at;
            let kind = match code.as_str() {
                "o" => EventKind::Output(data.into_bytes()),
                "i" => EventKind::Input(data.into_bytes()),
                "r" => {
                    let (c, r) = parse_resize(&data)
                        .ok_or_else(|| err(format!("resize `{data}` is not COLSxROWS")))?;
                    EventKind::Resize(c, r)
                }
                "m" => EventKind::Marker(data),
                _ => continue,
            };
            events.push(Event { at, kind });
        }
        Ok(Cast { header, events })
    }

    /// The time of the last event.
    pub fn duration(&self) -> Duration {
        self.events.last().map_or(Duration::ZERO, |e| e.at)
    }
}

/// Formats one event line.
pub fn event_line(at: Duration, code: &str, data: &str) -> String {
    serde_json::to_string(&(at.as_secs_f64(), code, data)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_event_kinds() {
        let text = "{\"version\": 2, \"width\": 80, \"height\": 24, \"t0\": 5.5}\n\
                    [0.5, \"o\", \"hi\\u001b[1m\"]\n[0.6, \"i\", \"y\"]\n[0.7, \"r\", \"100x30\"]\n\
                    [0.8, \"m\", \"mark\"]\n[0.9, \"x\", \"ignored\"]\n";
        let c = Cast::parse(text).unwrap();
        assert_eq!(c.header.width, 80);
        assert_eq!(c.header.extra["t0"], 5.5);
        assert_eq!(
            c.events.iter().map(|e| e.kind.clone()).collect::<Vec<_>>(),
            vec![
                EventKind::Output(b"hi\x1b[1m".to_vec()),
                EventKind::Input(b"y".to_vec()),
                EventKind::Resize(100, 30),
                EventKind::Marker("mark".into()),
            ]
        );
        assert_eq!(c.duration(), Duration::from_secs_f64(0.8));
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(Cast::parse("").unwrap_err().line, 1);
        let e =
            Cast::parse("{\"version\": 2, \"width\": 8, \"height\": 2}\n[1, \"o\"]\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("line 2: not an event"));
        let e = Cast::parse("{\"version\": 1, \"width\": 8, \"height\": 2}").unwrap_err();
        assert!(e.problem.contains("version 1"));
        let e = Cast::parse("{\"version\": 2, \"width\": 8, \"height\": 2}\n[1, \"r\", \"big\"]")
            .unwrap_err();
        assert!(e.problem.contains("COLSxROWS"));
    }
}
