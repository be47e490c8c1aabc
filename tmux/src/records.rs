//! Reading tabular answers (`list-panes -F`, `display -p`) safely.
//!
//! tmux escapes control characters in session and window names, but not in
//! everything: `#{pane_current_command}` is the raw process name, and a
//! program can name itself `a\x1fb\nc`. A fixed separator such as `\x1f` or
//! a newline could therefore be forged by any program in a pane.
//!
//! Each query therefore uses separators that carry a fresh random nonce: a
//! field separator `\x1f<nonce>` and a record terminator `\x1e<nonce>` (tmux
//! adds the newline). A name cannot contain a nonce chosen after the name was
//! set, so splitting on them is exact whatever the names contain.
//!
//! tmux 3.4 and 3.5a print a command's output with control characters made
//! visible (`\036` for the byte 0x1e; 3.6a went back to printing it as it
//! is). The separators then arrive as `\037<nonce>` and `\036<nonce>`, which
//! a name cannot forge either (the nonce is still fresh); [`Records::split`]
//! takes whichever form the output holds. Values keep tmux's escapes there:
//! a tab in a name reads as `\t`. Ids, numbers and flags never hold one.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::TmuxError;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A random-enough token: not predictable by a program that set a name
/// before the query was built.
pub(crate) fn nonce() -> String {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    if let Ok(d) = SystemTime::now().duration_since(UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    format!("{:016x}", h.finish())
}

/// A set of format fields with nonce separators.
#[derive(Debug, Clone)]
pub(crate) struct Records {
    fs: String,
    rs: String,
    fields: Vec<&'static str>,
}

impl Records {
    /// Fields are format variable names (`pane_id`, `@tend_tap`), written
    /// without `#{}`.
    pub(crate) fn new(fields: &[&'static str]) -> Records {
        let n = nonce();
        Records {
            fs: format!("\u{1f}{n}"),
            rs: format!("\u{1e}{n}"),
            fields: fields.to_vec(),
        }
    }

    /// The `-F` format.
    pub(crate) fn format(&self) -> String {
        let mut f = String::new();
        for (i, name) in self.fields.iter().enumerate() {
            if i > 0 {
                f.push_str(&self.fs);
            }
            f.push_str("#{");
            f.push_str(name);
            f.push('}');
        }
        f.push_str(&self.rs);
        f
    }

    /// The record terminator as it appears in the output.
    pub(crate) fn terminator(&self) -> String {
        format!("{}\n", self.rs)
    }

    /// The field separator and record terminator as `out` holds them: as
    /// written, or made visible by tmux 3.4 and 3.5a (see the module docs).
    fn separators_in(&self, out: &str) -> (String, String) {
        let term = self.terminator();
        if out.contains(&term) {
            return (self.fs.clone(), term);
        }
        let visible = |s: &str| s.replace('\u{1f}', "\\037").replace('\u{1e}', "\\036");
        let escaped = visible(&term);
        if out.contains(&escaped) {
            (visible(&self.fs), escaped)
        } else {
            (self.fs.clone(), term)
        }
    }

    /// Splits output into records; text after the last terminator is
    /// returned separately (a following command's output, or nothing).
    pub(crate) fn split<'a>(
        &'a self,
        out: &'a str,
        what: &str,
    ) -> Result<(Vec<Record<'a>>, &'a str), TmuxError> {
        let (fs, term) = self.separators_in(out);
        let mut records = Vec::new();
        let mut rest = out;
        while let Some(end) = rest.find(&term) {
            let body = &rest[..end];
            let values: Vec<&str> = body.split(fs.as_str()).collect();
            if values.len() != self.fields.len() {
                return Err(TmuxError::Parse {
                    what: what.to_string(),
                    detail: format!(
                        "expected {} fields, found {}",
                        self.fields.len(),
                        values.len()
                    ),
                });
            }
            records.push(Record {
                fields: &self.fields,
                values,
            });
            rest = &rest[end + term.len()..];
        }
        Ok((records, rest))
    }

    /// Splits output that must consist of records only.
    pub(crate) fn parse<'a>(
        &'a self,
        out: &'a str,
        what: &str,
    ) -> Result<Vec<Record<'a>>, TmuxError> {
        let (records, rest) = self.split(out, what)?;
        if !rest.trim().is_empty() {
            return Err(TmuxError::Parse {
                what: what.to_string(),
                detail: "unexpected text after the last record".to_string(),
            });
        }
        Ok(records)
    }
}

/// One record: values by field name.
#[derive(Debug)]
pub(crate) struct Record<'a> {
    fields: &'a [&'static str],
    values: Vec<&'a str>,
}

impl<'a> Record<'a> {
    /// The raw value of a field (empty when tmux does not know it).
    pub(crate) fn get(&self, name: &str) -> &'a str {
        self.fields
            .iter()
            .position(|f| *f == name)
            .and_then(|i| self.values.get(i).copied())
            .unwrap_or("")
    }

    /// A field as an owned string.
    pub(crate) fn string(&self, name: &str) -> String {
        self.get(name).to_string()
    }

    /// A flag field: `1` is true, anything else false.
    pub(crate) fn flag(&self, name: &str) -> bool {
        self.get(name) == "1"
    }

    /// A number; 0 when empty or unreadable (fields a given tmux version
    /// does not know expand to nothing).
    pub(crate) fn num<T: std::str::FromStr + Default>(&self, name: &str) -> T {
        self.get(name).parse().unwrap_or_default()
    }

    /// An optional number: `None` when empty or unreadable.
    pub(crate) fn opt_num<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        self.get(name).parse().ok()
    }

    /// A required typed value (ids).
    pub(crate) fn id<T: std::str::FromStr<Err = tend_protocol::ids::IdError>>(
        &self,
        name: &str,
        what: &str,
    ) -> Result<T, TmuxError> {
        self.get(name)
            .parse()
            .map_err(|e: tend_protocol::ids::IdError| TmuxError::Parse {
                what: what.to_string(),
                detail: format!("field {name}: {e}"),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_values_survive() {
        let r = Records::new(&["a", "b"]);
        let fs = r.fs.clone();
        let out = format!(
            "x\u{1f}y\nz{fs}b1{t}second{fs}\u{1e}\n{t}tail",
            t = r.terminator()
        );
        let (recs, rest) = r.split(&out, "test").unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].get("a"), "x\u{1f}y\nz");
        assert_eq!(recs[0].get("b"), "b1");
        assert_eq!(recs[1].get("a"), "second");
        assert_eq!(recs[1].get("b"), "\u{1e}\n");
        assert_eq!(rest, "tail");
    }

    #[test]
    fn separators_made_visible_by_tmux_3_4_are_read() {
        let r = Records::new(&["a", "b"]);
        let fs = r.fs.replace('\u{1f}', "\\037");
        let t = r.terminator().replace('\u{1e}', "\\036");
        // A name holding the visible form without the nonce splits nothing.
        let out = format!("%1{fs}x\\037y\\036z{t}%2{fs}b{t}");
        let (recs, rest) = r.split(&out, "test").unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].get("a"), "%1");
        assert_eq!(recs[0].get("b"), "x\\037y\\036z");
        assert_eq!(recs[1].get("b"), "b");
        assert_eq!(rest, "");
    }

    #[test]
    fn nonces_differ() {
        assert_ne!(Records::new(&["a"]).format(), Records::new(&["a"]).format());
    }

    #[test]
    fn wrong_field_count_is_an_error() {
        let r = Records::new(&["a", "b"]);
        let out = format!("only{}", r.terminator());
        assert!(r.parse(&out, "test").is_err());
    }
}
