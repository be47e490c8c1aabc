//! Parsing `/proc/<pid>/stat`: the few fields the sampler uses.

/// The fields of `/proc/<pid>/stat` the sampler uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) comm: String,
    pub(crate) state: char,
    pub(crate) ppid: u32,
    pub(crate) pgrp: u32,
    /// `-1` (no terminal) becomes `None`.
    pub(crate) tpgid: Option<u32>,
    /// utime + stime + cutime + cstime: a reaped child's time moves into its
    /// parent's `cutime`, so a tree's total stays monotonic.
    pub(crate) ticks: u64,
    pub(crate) start: u64,
    /// Where the process image's code and stack start and its code ends
    /// (`startcode`, `endcode`, `startstack`): an `exec` keeps the pid,
    /// the start time and, through a shim named as the program it runs
    /// (`python3` → `python3`), the comm, but maps a new image, and with
    /// address-space randomisation these move at every `exec`. Zeros when
    /// the kernel does not say (another user's process, a zombie) or the
    /// line stops before them (fake trees).
    pub(crate) image: [u64; 3],
}

/// Parses `/proc/<pid>/stat`. `comm` sits in parentheses and may contain
/// spaces and parentheses itself, so the fields after it are found from the
/// last `)`.
pub(crate) fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_owned();
    // The fields after `comm`, numbered from 0 (state): read in one pass up
    // to the last one used (startstack, 25), none collected. A probe reads
    // one of these for every printing pane five times a second.
    let mut f = text.get(close + 1..)?.split_whitespace();
    let state = f.next()?.chars().next()?;
    let num = |v: Option<&str>| v.and_then(|v| v.parse::<u64>().ok());
    let ppid = u32::try_from(num(f.next())?).ok()?;
    let pgrp = u32::try_from(num(f.next())?).ok()?;
    let tpgid = f.nth(2).and_then(|v| v.parse::<i64>().ok())?; // field 5
    let utime = num(f.nth(5))?; // field 11
    let stime = num(f.next())?;
    let cutime = num(f.next()).unwrap_or(0);
    let cstime = num(f.next()).unwrap_or(0);
    let start = num(f.nth(4))?; // field 19
    let startcode = num(f.nth(3)).unwrap_or(0); // field 23
    let endcode = num(f.next()).unwrap_or(0);
    let startstack = num(f.next()).unwrap_or(0);
    Some(Stat {
        comm,
        state,
        ppid,
        pgrp,
        tpgid: u32::try_from(tpgid).ok().filter(|t| *t > 0),
        ticks: utime + stime + cutime + cstime,
        start,
        image: [startcode, endcode, startstack],
    })
}
