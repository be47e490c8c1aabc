//! Open `/proc` files kept for re-reading: a process's `stat`, its `task`
//! directory and its threads' `children` files.
//!
//! Probes read a busy pane's shell `stat` every 200 ms and full samples
//! read every process's `stat`, `task` listing and `children` files each
//! second; opening and closing them was about as much of the daemon's time
//! as reading them. A procfs file read again from offset 0 (`pread`) is
//! generated afresh by the kernel, and a directory rewound is listed
//! afresh, so one open per file is enough.
//!
//! An open `/proc/<pid>` file belongs to that process, not to its number:
//! once the process is gone a read of its `stat` fails (`ESRCH`) and a
//! listing of its `task` directory too (`ENOENT`), also when the number has
//! been given to a new process since. Such a failure closes every file kept
//! for the pid (a dead thread's `children` file reads as empty rather than
//! failing) and the caller opens the path again, so results are what
//! opening each time gave. A thread's `children` file is closed as soon as
//! the thread is no longer listed. Files
//! not read for [`KEEP_ROUNDS`] rounds are closed, and at most a bounded
//! number are kept at a time (see [`default_cap`]).

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use nix::libc;

/// Most files kept open, whatever the descriptor limit allows.
pub(super) const FD_CAP_MAX: usize = 1024;

/// Rounds (the daemon ends one a second) a kept file may go unread before
/// it is closed: longer than the slowest sampling of a quiet pane (16 s),
/// so a pane's files stay open between its samples.
pub(super) const KEEP_ROUNDS: u64 = 32;

/// How many files to keep open at most: [`FD_CAP_MAX`], or a quarter of the
/// soft `RLIMIT_NOFILE` when that is lower, so that the panes' pipes and
/// the control connections always find descriptors.
pub(super) fn default_cap() -> usize {
    use nix::sys::resource::{getrlimit, Resource};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, _)) => usize::try_from(soft / 4)
            .unwrap_or(FD_CAP_MAX)
            .min(FD_CAP_MAX),
        Err(_) => FD_CAP_MAX / 4,
    }
}

/// The files kept for one process.
#[derive(Debug, Default)]
struct PidFiles {
    stat: Option<File>,
    /// The `task` directory, listed with `getdents64` into the sampler's
    /// buffer (`opendir` would hold a 32 KiB buffer per directory).
    task: Option<File>,
    /// `task/<tid>/children` by thread id.
    children: Vec<(u32, File)>,
    /// The round that last read one of them.
    used: u64,
}

impl PidFiles {
    fn count(&self) -> usize {
        usize::from(self.stat.is_some()) + usize::from(self.task.is_some()) + self.children.len()
    }
}

/// Which file of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    Stat,
    Children(u32),
}

/// The kept files, by pid.
#[derive(Debug)]
pub(super) struct FdCache {
    by_pid: HashMap<u32, PidFiles>,
    /// Files open (the sum of [`PidFiles::count`]).
    open: usize,
    cap: usize,
    round: u64,
    /// Reads served by a kept file (what the tests check).
    reused: u64,
}

impl FdCache {
    /// A cache keeping at most `cap` files open (0: none).
    pub(super) fn new(cap: usize) -> Self {
        FdCache {
            by_pid: HashMap::new(),
            open: 0,
            cap,
            round: 0,
            reused: 0,
        }
    }

    /// Files open now.
    pub(super) fn open(&self) -> usize {
        self.open
    }

    /// Reads served without opening a file.
    pub(super) fn reused(&self) -> u64 {
        self.reused
    }

    /// Whether any file of `pid` is kept.
    #[cfg(test)]
    pub(super) fn holds(&self, pid: u32) -> bool {
        self.by_pid.contains_key(&pid)
    }

    fn entry(&mut self, pid: u32) -> &mut PidFiles {
        let round = self.round;
        let e = self.by_pid.entry(pid).or_default();
        e.used = round;
        e
    }

    fn slot(&mut self, pid: u32, which: Which) -> Option<&mut File> {
        let e = self.by_pid.get_mut(&pid)?;
        match which {
            Which::Stat => e.stat.as_mut(),
            Which::Children(tid) => e
                .children
                .iter_mut()
                .find(|(t, _)| *t == tid)
                .map(|(_, f)| f),
        }
    }

    fn take(&mut self, pid: u32, which: Which) -> Option<File> {
        let e = self.by_pid.get_mut(&pid)?;
        let f = match which {
            Which::Stat => e.stat.take(),
            Which::Children(tid) => {
                let i = e.children.iter().position(|(t, _)| *t == tid)?;
                Some(e.children.swap_remove(i).1)
            }
        };
        if f.is_some() {
            self.open -= 1;
        }
        if e.count() == 0 {
            self.by_pid.remove(&pid);
        }
        f
    }

    /// Reads `which` of `pid` into `buf` (at most `max` bytes) through its
    /// kept file, or opens `path` and, with `keep`, keeps it. A kept file
    /// whose read fails is closed and `path` opened again.
    pub(super) fn read(
        &mut self,
        pid: u32,
        which: Which,
        path: &Path,
        keep: bool,
        buf: &mut Vec<u8>,
        max: usize,
    ) -> io::Result<()> {
        if let Some(f) = self.slot(pid, which) {
            if pread_all(f, buf, max).is_ok() {
                self.entry(pid);
                self.reused += 1;
                return Ok(());
            }
            // Gone (ESRCH), or the number now names another process: what
            // the path holds now is the answer. A `stat` that fails means
            // the process is gone, and every file kept for it is stale (a
            // dead thread's `children` reads as empty, not as an error).
            match which {
                Which::Stat => self.forget(pid),
                Which::Children(_) => drop(self.take(pid, which)),
            }
        }
        let f = File::open(path)?;
        pread_all(&f, buf, max)?;
        if keep && self.open < self.cap {
            let e = self.entry(pid);
            match which {
                Which::Stat => e.stat = Some(f),
                Which::Children(tid) => e.children.push((tid, f)),
            }
            self.open += 1;
        }
        Ok(())
    }

    /// The entry names of `pid`'s directory `path` (its `task` directory),
    /// through a kept, rewound handle where there is one. `buf` is scratch.
    pub(super) fn list(
        &mut self,
        pid: u32,
        path: &Path,
        keep: bool,
        buf: &mut Vec<u8>,
    ) -> io::Result<Vec<String>> {
        if let Some(dir) = self.by_pid.get(&pid).and_then(|e| e.task.as_ref()) {
            if let Ok(names) = list_dir(dir, buf) {
                self.entry(pid);
                self.reused += 1;
                return Ok(names);
            }
            // The process is gone: so is everything kept for it.
            self.forget(pid);
        }
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(path)?;
        let names = list_dir(&dir, buf)?;
        if keep && self.open < self.cap {
            self.entry(pid).task = Some(dir);
            self.open += 1;
        }
        Ok(names)
    }

    /// Closes the `children` files of `pid`'s threads not in `tids` (threads
    /// that ended).
    pub(super) fn retain_threads(&mut self, pid: u32, tids: &[u32]) {
        let Some(e) = self.by_pid.get_mut(&pid) else {
            return;
        };
        let before = e.children.len();
        e.children.retain(|(t, _)| tids.contains(t));
        self.open -= before - e.children.len();
        if e.count() == 0 {
            self.by_pid.remove(&pid);
        }
    }

    /// Closes every file of `pid` (it is gone).
    pub(super) fn forget(&mut self, pid: u32) {
        if let Some(e) = self.by_pid.remove(&pid) {
            self.open -= e.count();
        }
    }

    /// Ends a round: closes the files of processes not read for
    /// [`KEEP_ROUNDS`] rounds.
    pub(super) fn end_round(&mut self) {
        self.round += 1;
        let keep_after = self.round.saturating_sub(KEEP_ROUNDS);
        let mut closed = 0;
        self.by_pid.retain(|_, e| {
            let keep = e.used >= keep_after;
            if !keep {
                closed += e.count();
            }
            keep
        });
        self.open -= closed;
    }
}

/// Reads `f` from offset 0 into `buf`, at most `max` bytes.
fn pread_all(f: &File, buf: &mut Vec<u8>, max: usize) -> io::Result<()> {
    buf.clear();
    loop {
        let len = buf.len();
        if len >= max {
            return Ok(());
        }
        // Most of these files fit in one page; a longer one grows the
        // buffer a page at a time up to `max`.
        let want = (max - len).min(buf.capacity().saturating_sub(len).max(4096));
        buf.resize(len + want, 0);
        match f.read_at(&mut buf[len..], len as u64) {
            Ok(0) => {
                buf.truncate(len);
                return Ok(());
            }
            Ok(n) => buf.truncate(len + n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(len),
            Err(e) => {
                buf.clear();
                return Err(e);
            }
        }
    }
}

/// The names in a directory, `.` and `..` left out, read from its start
/// (the kernel lists a `/proc` directory afresh from offset 0).
fn list_dir(dir: &File, buf: &mut Vec<u8>) -> io::Result<Vec<String>> {
    let fd = dir.as_raw_fd();
    // SAFETY: `fd` is open for as long as `dir` is borrowed; lseek reads no
    // memory of ours.
    if unsafe { libc::lseek(fd, 0, libc::SEEK_SET) } < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.clear();
    buf.resize(4096, 0);
    let mut names = Vec::new();
    loop {
        // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`,
        // which is valid and exclusively ours for the call.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                fd,
                buf.as_mut_ptr().cast::<libc::c_void>(),
                buf.len(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let n = usize::try_from(n).unwrap_or(0).min(buf.len());
        if n == 0 {
            return Ok(names);
        }
        // Records: d_ino (8), d_off (8), d_reclen (2), d_type (1), then the
        // name, NUL-terminated, padded to d_reclen.
        let mut at = 0;
        while at + 19 <= n {
            let reclen = usize::from(u16::from_ne_bytes([buf[at + 16], buf[at + 17]]));
            if reclen < 19 || at + reclen > n {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a directory record out of bounds",
                ));
            }
            let raw = &buf[at + 19..at + reclen];
            let name = raw.split(|b| *b == 0).next().unwrap_or(raw);
            if name != b"." && name != b".." {
                names.push(String::from_utf8_lossy(name).into_owned());
            }
            at += reclen;
        }
    }
}
