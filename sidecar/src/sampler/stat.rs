//! Parsing `/proc/<pid>/stat`: the few fields the sampler uses.

/// The fields of `/proc/<pid>/stat` the sampler uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stat {
    pub(super) comm: String,
    pub(super) state: char,
    pub(super) ppid: u32,
    pub(super) pgrp: u32,
    /// `-1` (no terminal) becomes `None`.
    pub(super) tpgid: Option<u32>,
    /// utime + stime + cutime + cstime: a reaped child's time moves into its
    /// parent's `cutime`, so a tree's total stays monotonic.
    pub(super) ticks: u64,
    pub(super) start: u64,
}

/// Parses `/proc/<pid>/stat`. `comm` sits in parentheses and may contain
/// spaces and parentheses itself, so the fields after it are found from the
/// last `)`.
pub(super) fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_owned();
    let f: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    let tpgid = f.get(5).and_then(|v| v.parse::<i64>().ok())?;
    Some(Stat {
        comm,
        state: f.first()?.chars().next()?,
        ppid: u32::try_from(num(1)?).ok()?,
        pgrp: u32::try_from(num(2)?).ok()?,
        tpgid: u32::try_from(tpgid).ok().filter(|t| *t > 0),
        ticks: num(11)? + num(12)? + num(13).unwrap_or(0) + num(14).unwrap_or(0),
        start: num(19)?,
    })
}
