//! Enough of SQLite's file format (<https://www.sqlite.org/fileformat2.html>)
//! to list one table's rows, for the agents that keep their conversations
//! in a database (OpenCode's `opencode.db`, Kilo Code's `kilo.db`): the
//! main file, with the committed frames of its write-ahead log over it, as
//! SQLite's own recovery reads them.
//!
//! Written here rather than linking SQLite: the C library built from
//! source (rusqlite's `bundled`) added 16 s to a debug build and 134 s to
//! a release build of this workspace on a loaded 2-core machine, and the
//! system's library is not on every machine that builds tend (decision
//! 0021). Read-only, and bounded: at most [`MAX_PAGE_READS`] pages and
//! [`MAX_WAL`] of log per query; a page that does not parse ends the
//! query with an error, never a panic (the agent may be writing).

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Most pages read for one query (64 MiB of 4 KiB pages).
pub(crate) const MAX_PAGE_READS: usize = 16_384;
/// Largest write-ahead log read.
pub(crate) const MAX_WAL: u64 = 64 << 20;
/// Most of one row read (its overflow pages followed up to here).
const MAX_PAYLOAD: usize = 1 << 20;
/// Deepest b-tree walked.
const MAX_DEPTH: usize = 24;
/// Most rows listed.
const MAX_ROWS: usize = 200_000;

/// One column of a row, as far as tend reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Text(String),
    /// A float, a blob, or what lies past the part of the row read.
    Other,
}

/// An open database: its main file and its log's committed pages.
pub(crate) struct Db {
    main: File,
    page_size: usize,
    usable: usize,
    /// Page number → where its newest committed copy starts in `wal`.
    logged: HashMap<u32, usize>,
    wal: Vec<u8>,
    reads: Cell<usize>,
}

fn be16(b: &[u8], at: usize) -> Option<usize> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?) as usize)
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// A SQLite varint at `at`: its value and length.
fn varint(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for i in 0..9 {
        let byte = *b.get(at + i)?;
        if i == 8 {
            return Some(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// The log's running checksum over `data` (pairs of 32-bit words).
fn checksum(mut s: (u32, u32), data: &[u8], big_endian: bool) -> (u32, u32) {
    for c in data.chunks_exact(8) {
        let word = |w: &[u8]| {
            let w: [u8; 4] = w.try_into().unwrap_or_default();
            if big_endian {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        };
        s.0 = s.0.wrapping_add(word(&c[..4])).wrapping_add(s.1);
        s.1 = s.1.wrapping_add(word(&c[4..])).wrapping_add(s.0);
    }
    s
}

/// The committed pages of a write-ahead log: for each page, where its
/// newest copy starts. Frames count up to the last commit before the
/// first frame whose salt or checksum does not follow (one being written,
/// or left from before the log restarted).
pub(crate) fn wal_pages(wal: &[u8], page_size: usize) -> HashMap<u32, usize> {
    let mut pages = HashMap::new();
    let big_endian = match be32(wal, 0) {
        Some(0x377f_0682) => false,
        Some(0x377f_0683) => true,
        _ => return pages,
    };
    if be32(wal, 8).map(|p| p as usize) != Some(page_size) {
        return pages;
    }
    let Some(head) = wal.get(..32) else {
        return pages;
    };
    let mut sum = checksum((0, 0), &head[..24], big_endian);
    if Some(sum) != be32(head, 24).zip(be32(head, 28)) {
        return pages;
    }
    let mut pending = Vec::new();
    let mut at = 32;
    while let Some(frame) = wal.get(at..at + 24 + page_size) {
        if frame[8..16] != head[16..24] {
            break;
        }
        sum = checksum(sum, &frame[..8], big_endian);
        sum = checksum(sum, &frame[24..], big_endian);
        if Some(sum) != be32(frame, 16).zip(be32(frame, 20)) {
            break;
        }
        pending.push((be32(frame, 0).unwrap_or(0), at + 24));
        if be32(frame, 4).unwrap_or(0) != 0 {
            pages.extend(pending.drain(..));
        }
        at += 24 + page_size;
    }
    pages
}

impl Db {
    /// The database in `main`, with its log `wal` (its bytes, at most
    /// [`MAX_WAL`]) over it.
    pub(crate) fn open(main: File, wal: Vec<u8>) -> Result<Db, String> {
        let mut head = [0u8; 100];
        // A database not yet checkpointed has only its log.
        let from_main = main.metadata().map_err(|e| e.to_string())?.len() > 0;
        if from_main && main.read_exact_at(&mut head, 0).is_err() {
            return Err("is not a SQLite database".into());
        }
        let page_size = if from_main {
            if &head[..16] != b"SQLite format 3\0" {
                return Err("is not a SQLite database".into());
            }
            match be16(&head, 16) {
                Some(1) => 65_536,
                Some(n) => n,
                None => 0,
            }
        } else {
            be32(&wal, 8).map_or(0, |p| p as usize)
        };
        if !(512..=65_536).contains(&page_size) || !page_size.is_power_of_two() {
            return Err(format!("has a page size of {page_size}"));
        }
        let reserved = if from_main { head[20] as usize } else { 0 };
        if from_main && be32(&head, 56).is_some_and(|e| e > 1) {
            return Err("is not UTF-8 (tend reads only UTF-8 databases)".into());
        }
        let logged = wal_pages(&wal, page_size);
        Ok(Db {
            main,
            page_size,
            usable: page_size.saturating_sub(reserved),
            logged,
            wal,
            reads: Cell::new(0),
        })
    }

    /// Page `n` (from 1), its newest committed copy.
    fn page(&self, n: u32) -> Result<Vec<u8>, String> {
        let reads = self.reads.get() + 1;
        self.reads.set(reads);
        if reads > MAX_PAGE_READS {
            return Err(format!("needs more than {MAX_PAGE_READS} pages read"));
        }
        if n == 0 {
            return Err("names page 0".into());
        }
        if let Some(&at) = self.logged.get(&n) {
            return Ok(self.wal[at..at + self.page_size].to_vec());
        }
        let mut page = vec![0u8; self.page_size];
        self.main
            .read_exact_at(&mut page, u64::from(n - 1) * self.page_size as u64)
            .map_err(|e| format!("page {n}: {e}"))?;
        Ok(page)
    }

    /// Every row of the table whose b-tree starts at page `root`, each
    /// column decoded, with its rowid.
    fn scan(&self, root: u32, row: &mut dyn FnMut(i64, Vec<Value>)) -> Result<(), String> {
        let mut todo = vec![(root, 0usize)];
        let mut seen = HashSet::new();
        let mut rows = 0usize;
        while let Some((n, depth)) = todo.pop() {
            if depth > MAX_DEPTH || !seen.insert(n) {
                return Err(format!("page {n} is reached twice or too deep"));
            }
            let page = self.page(n)?;
            let bad = || format!("page {n} does not parse");
            let head = if n == 1 { 100 } else { 0 };
            let kind = *page.get(head).ok_or_else(bad)?;
            let cells = be16(&page, head + 3).ok_or_else(bad)?;
            let (pointers, leaf) = match kind {
                13 => (head + 8, true),
                5 => (head + 12, false),
                _ => return Err(format!("page {n} is no table page (kind {kind})")),
            };
            // Children go on the stack last first: rows come in rowid order.
            if !leaf {
                todo.push((be32(&page, head + 8).ok_or_else(bad)?, depth + 1));
            }
            let mut children = Vec::new();
            for i in 0..cells {
                let at = be16(&page, pointers + 2 * i).ok_or_else(bad)?;
                if !leaf {
                    children.push((be32(&page, at).ok_or_else(bad)?, depth + 1));
                    continue;
                }
                rows += 1;
                if rows > MAX_ROWS {
                    return Err(format!("has more than {MAX_ROWS} rows"));
                }
                let (size, a) = varint(&page, at).ok_or_else(bad)?;
                let (rowid, b) = varint(&page, at + a).ok_or_else(bad)?;
                let payload = self.payload(&page, at + a + b, size).ok_or_else(bad)?;
                row(rowid as i64, record(&payload).ok_or_else(bad)?);
            }
            todo.extend(children.into_iter().rev());
        }
        Ok(())
    }

    /// A cell's payload of `size` bytes starting at `at` (the part on the
    /// page, then its overflow pages), at most [`MAX_PAYLOAD`].
    fn payload(&self, page: &[u8], at: usize, size: u64) -> Option<Vec<u8>> {
        let u = self.usable;
        let size = usize::try_from(size).ok()?;
        let most = u - 35;
        let local = if size <= most {
            size
        } else {
            let min = (u - 12) * 32 / 255 - 23;
            let k = min + (size - min) % (u - 4);
            if k <= most {
                k
            } else {
                min
            }
        };
        let mut out = page.get(at..at + local)?.to_vec();
        let want = size.min(MAX_PAYLOAD);
        let mut next = if size > local {
            be32(page, at + local)?
        } else {
            0
        };
        while out.len() < want && next != 0 {
            let over = self.page(next).ok()?;
            next = be32(&over, 0)?;
            let take = (u - 4).min(want - out.len());
            out.extend_from_slice(over.get(4..4 + take)?);
        }
        Some(out)
    }

    /// The rows of `table`, each with the columns `want` in that order
    /// (a column the table lacks: `Null`).
    pub(crate) fn rows(&self, table: &str, want: &[&str]) -> Result<Vec<Vec<Value>>, String> {
        let (root, columns) = self.table(table)?;
        let at: Vec<Option<&(String, bool)>> = want
            .iter()
            .map(|w| columns.iter().find(|(c, _)| c.eq_ignore_ascii_case(w)))
            .collect();
        let index = |name: &str| columns.iter().position(|(c, _)| c == name);
        let mut out = Vec::new();
        self.scan(root, &mut |rowid, values| {
            let pick = |c: &Option<&(String, bool)>| match c {
                Some((_, true)) => Value::Int(rowid),
                Some((name, false)) => index(name)
                    .and_then(|i| values.get(i).cloned())
                    .unwrap_or(Value::Null),
                None => Value::Null,
            };
            out.push(at.iter().map(pick).collect());
        })?;
        Ok(out)
    }

    /// Where table `name` starts, and its columns (each: its name, and
    /// whether it is the rowid under another name).
    fn table(&self, name: &str) -> Result<(u32, Vec<(String, bool)>), String> {
        let mut found = None;
        self.scan(1, &mut |_, v| {
            let is = |i: usize, s: &str| matches!(v.get(i), Some(Value::Text(t)) if t.eq_ignore_ascii_case(s));
            if is(0, "table") && is(1, name) {
                if let (Some(Value::Int(root)), Some(Value::Text(sql))) = (v.get(3), v.get(4)) {
                    found = Some((*root, sql.clone()));
                }
            }
        })?;
        let (root, sql) = found.ok_or_else(|| format!("has no table `{name}`"))?;
        let root = u32::try_from(root).map_err(|_| format!("table `{name}` has no pages"))?;
        if sql.to_ascii_uppercase().contains("WITHOUT ROWID") {
            return Err(format!("table `{name}` is WITHOUT ROWID (not read)"));
        }
        Ok((root, columns(&sql)))
    }
}

/// A record's values (<https://www.sqlite.org/fileformat2.html#record_format>).
fn record(payload: &[u8]) -> Option<Vec<Value>> {
    let (head, mut at) = varint(payload, 0)?;
    let head = usize::try_from(head).ok()?;
    let mut types = Vec::new();
    while at < head {
        let (t, n) = varint(payload, at)?;
        types.push(t);
        at += n;
    }
    let mut body = head;
    let mut values = Vec::with_capacity(types.len());
    for t in types {
        let size = match t {
            0 | 8 | 9 => 0,
            1..=4 => t as usize,
            5 => 6,
            6 | 7 => 8,
            10 | 11 => return None,
            n => usize::try_from((n - 12) / 2).ok()?,
        };
        let bytes = payload.get(body..body.checked_add(size)?);
        values.push(match (t, bytes) {
            (0, _) => Value::Null,
            (8, _) => Value::Int(0),
            (9, _) => Value::Int(1),
            (1..=6, Some(b)) => {
                let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
                let mut w = [fill; 8];
                w[8 - b.len()..].copy_from_slice(b);
                Value::Int(i64::from_be_bytes(w))
            }
            (n, Some(b)) if n >= 13 && n % 2 == 1 => match std::str::from_utf8(b) {
                Ok(s) => Value::Text(s.to_owned()),
                Err(_) => Value::Other,
            },
            _ => Value::Other,
        });
        body += size;
    }
    Some(values)
}

/// The columns a `CREATE TABLE` statement declares, in order: each name
/// (quotes taken off), and whether it is an `INTEGER PRIMARY KEY` (the
/// rowid, which the record leaves empty).
fn columns(sql: &str) -> Vec<(String, bool)> {
    let (Some(open), Some(close)) = (sql.find('('), sql.rfind(')')) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for def in split_top(sql.get(open + 1..close).unwrap_or("")) {
        let def = def.trim();
        let (name, rest) = match def.chars().next() {
            Some(q @ ('`' | '"' | '[')) => {
                let end = if q == '[' { ']' } else { q };
                let body = &def[1..];
                match body.find(end) {
                    Some(i) => (body[..i].to_owned(), &body[i + 1..]),
                    None => break,
                }
            }
            _ => {
                let i = def.find(char::is_whitespace).unwrap_or(def.len());
                let word = &def[..i];
                let upper = word.to_ascii_uppercase();
                if ["CONSTRAINT", "PRIMARY", "FOREIGN", "UNIQUE", "CHECK"].contains(&upper.as_str())
                {
                    break;
                }
                (word.to_owned(), &def[i..])
            }
        };
        let words: Vec<String> = rest
            .split_whitespace()
            .map(str::to_ascii_uppercase)
            .collect();
        let rowid = words.first().is_some_and(|t| t == "INTEGER")
            && words.windows(2).any(|w| w[0] == "PRIMARY" && w[1] == "KEY")
            && !words.iter().any(|w| w == "DESC");
        out.push((name, rowid));
    }
    out
}

/// `text` split at the commas outside parentheses and quotes.
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '[') => quote = Some(']'),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_take_one_to_nine_bytes() {
        assert_eq!(varint(&[0x05], 0), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9], 0), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81], 0), None);
    }

    #[test]
    fn records_give_integers_text_and_nulls() {
        // Header of 5 bytes: null, a 1-byte int, text of 3, int 1; body.
        let rec = [5, 0, 1, 19, 9, 0xfe, b'a', b'b', b'c'];
        assert_eq!(
            record(&rec),
            Some(vec![
                Value::Null,
                Value::Int(-2),
                Value::Text("abc".into()),
                Value::Int(1)
            ])
        );
        // Text that runs past what was read is not made up.
        assert_eq!(
            record(&[2, 19, b'a']),
            Some(vec![Value::Other]),
            "cut short"
        );
        assert_eq!(record(&[2, 10]), None, "a reserved type");
    }

    #[test]
    fn a_create_table_gives_its_columns() {
        let sql =
            "CREATE TABLE `session` (\n `id` text PRIMARY KEY,\n `directory` text NOT NULL,\n \
                   \"a,b\" text DEFAULT 'x, y',\n n integer primary key,\n d numeric(10, 2),\n \
                   CONSTRAINT `fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`))";
        assert_eq!(
            columns(sql),
            [
                ("id".to_owned(), false),
                ("directory".to_owned(), false),
                ("a,b".to_owned(), false),
                ("n".to_owned(), true),
                ("d".to_owned(), false)
            ]
        );
    }

    #[test]
    fn a_log_counts_only_to_its_last_commit() {
        // A log of two frames for page 2, the second not committed.
        let ps = 512;
        let mut wal = Vec::new();
        wal.extend(0x377f_0682u32.to_be_bytes());
        wal.extend(3_007_000u32.to_be_bytes());
        wal.extend((ps as u32).to_be_bytes());
        wal.extend([0u8; 4]);
        wal.extend([1, 2, 3, 4, 5, 6, 7, 8]);
        let mut sum = checksum((0, 0), &wal[..24], false);
        wal.extend(sum.0.to_be_bytes());
        wal.extend(sum.1.to_be_bytes());
        for (fill, commit) in [(0xaa, 3u32), (0xbb, 0)] {
            let mut head = Vec::new();
            head.extend(2u32.to_be_bytes());
            head.extend(commit.to_be_bytes());
            head.extend([1, 2, 3, 4, 5, 6, 7, 8]);
            let page = vec![fill; ps];
            sum = checksum(sum, &head[..8], false);
            sum = checksum(sum, &page, false);
            head.extend(sum.0.to_be_bytes());
            head.extend(sum.1.to_be_bytes());
            wal.extend(head);
            wal.extend(page);
        }
        let pages = wal_pages(&wal, ps);
        assert_eq!(pages.len(), 1);
        assert_eq!(wal[pages[&2]], 0xaa, "the committed copy");
        // A frame whose checksum breaks the chain ends the log there.
        let mut broken = wal.clone();
        broken[32 + 24] ^= 1;
        assert!(wal_pages(&broken, ps).is_empty());
        assert!(wal_pages(&wal, 1024).is_empty(), "another page size");
    }
}
