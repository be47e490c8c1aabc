//! The agents' conversation stores, read for `tend restore` (the core's
//! [`ConversationSource`]): where each agent keeps them is its manifest's
//! `[resume]` table; this reads the files it names.
//!
//! Only what the user owns is read, as OpenSSH's StrictModes reads
//! `~/.ssh`: the agent's folder and every folder above it must belong to
//! the user or to root and be writable by no one else (a root-owned
//! sticky folder such as `/tmp` is fine: no one else can replace what is
//! in it); each file must be the user's, a plain file reached without a
//! symbolic link, writable by no one else, and is read up to a bound. A
//! group may write only when it is the user's own group (a umask of 002).

use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use tend_core::resume::plan::Saved;
use tend_core::resume::Home;
use tend_core::{ConversationSource, LiveFacts};
use tend_detector::identity::ProcessInfo;
use tend_detector::manifest::resume::{agent_home, json_field, json_number, FolderField, Resume};
use tend_detector::session_file;

/// Most of a conversation file read to find its folder (Codex's first
/// line, which holds it, is 22 KB).
const MAX_HEAD: u64 = 256 * 1024;
/// Most of a process's environment read.
const MAX_ENVIRON: u64 = 1024 * 1024;
/// Most folder entries looked at in one walk of a store.
const MAX_VISITS: usize = 20_000;

/// Reads the stores as the user running the daemon.
#[derive(Debug)]
pub struct Stores {
    uid: u32,
    gid: u32,
    /// The daemon's own home: where an agent whose environment cannot be
    /// read keeps its folder.
    home: Option<String>,
    /// Boot time (Unix seconds) and clock ticks per second: a process's
    /// start on the Unix clock.
    boot: Option<u64>,
    hz: f64,
}

impl Stores {
    /// The user's stores; `hz` is the process source's clock ticks per
    /// second.
    pub fn new(hz: f64) -> Stores {
        Stores {
            uid: nix::unistd::getuid().as_raw(),
            gid: nix::unistd::getgid().as_raw(),
            home: std::env::var("HOME").ok().filter(|h| h.starts_with('/')),
            boot: boot_time(),
            hz,
        }
    }

    /// Whether someone other than the user (or root) could have written
    /// what `meta` describes.
    fn foreign(&self, meta: &Metadata, dir: bool) -> Option<String> {
        let mode = meta.mode();
        let sticky_root = dir && meta.uid() == 0 && mode & 0o1000 != 0;
        if meta.uid() != self.uid && meta.uid() != 0 {
            return Some(format!("belongs to uid {}", meta.uid()));
        }
        if mode & 0o002 != 0 && !sticky_root {
            return Some(format!(
                "has mode {:04o}: anyone may write it",
                mode & 0o7777
            ));
        }
        if mode & 0o020 != 0 && meta.gid() != self.gid && !sticky_root {
            return Some(format!(
                "has mode {:04o}: group {} may write it",
                mode & 0o7777,
                meta.gid()
            ));
        }
        if !dir && meta.uid() != self.uid {
            return Some(format!("belongs to uid {}", meta.uid()));
        }
        None
    }

    /// `dir` and every folder above it, checked; the folder as it really
    /// is (links resolved).
    fn trusted_dir(&self, dir: &str) -> Result<PathBuf, String> {
        let real = std::fs::canonicalize(dir).map_err(|e| format!("{dir}: {e}"))?;
        let mut at = PathBuf::from("/");
        for part in std::iter::once(None).chain(real.components().skip(1).map(Some)) {
            if let Some(p) = part {
                at.push(p);
            }
            let meta =
                std::fs::symlink_metadata(&at).map_err(|e| format!("{}: {e}", at.display()))?;
            if !meta.is_dir() {
                return Err(format!("{} is not a folder", at.display()));
            }
            if let Some(why) = self.foreign(&meta, true) {
                return Err(format!("{} {why}, so tend does not read it", at.display()));
            }
        }
        Ok(real)
    }

    /// A file opened to read, if it is the user's own plain file.
    fn open_file(&self, path: &Path) -> Result<File, String> {
        let f = File::options()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let meta = f
            .metadata()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if !meta.is_file() {
            return Err(format!("{} is not a plain file", path.display()));
        }
        if let Some(why) = self.foreign(&meta, false) {
            return Err(format!(
                "{} {why}, so tend does not read it",
                path.display()
            ));
        }
        Ok(f)
    }

    /// A file's first `max` bytes, if it is the user's own plain file.
    fn read_file(&self, path: &Path, max: u64) -> Result<Vec<u8>, String> {
        let f = self.open_file(path)?;
        let mut out = Vec::new();
        f.take(max)
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(out)
    }

    /// The agent's folder, as the manifest's `home` says, read with the
    /// agent's environment.
    fn home_of(&self, resume: &Resume, env: &HashMap<String, String>) -> Option<Home> {
        let (dir, var) = agent_home(&resume.home, |v| env.get(v).cloned(), self.home.as_deref())?;
        Some(Home { dir, var })
    }

    /// The conversation Claude Code's session file names for `agent`, tied
    /// to that very process.
    fn session_file(&self, home: &Path, agent: &ProcessInfo) -> Option<(String, String)> {
        let path = home
            .join(session_file::FOLDER)
            .join(session_file::file_name(agent.pid));
        let bytes = self
            .read_file(&path, session_file::MAX_FILE as u64 + 1)
            .ok()?;
        let file = session_file::parse(&bytes).ok()?;
        session_file::tie(&file, agent.pid, agent.start_ticks).ok()?;
        Some((file.session_id, file.cwd))
    }

    /// The files of the store's pattern under `home` (`id`: only that
    /// conversation's) written at or after `since` (Unix seconds), each
    /// with the id its names hold and its time.
    fn walk(
        &self,
        resume: &Resume,
        home: &Path,
        id: Option<&str>,
        since: u64,
    ) -> Vec<(PathBuf, String, u64)> {
        let names = resume.store.names();
        let is_id = |s: &str| resume.is_id(s);
        let mut found = Vec::new();
        // Each folder reached, with the id a name on the way held.
        let mut level: Vec<(PathBuf, Option<String>)> = vec![(home.to_path_buf(), None)];
        let mut visits = 0usize;
        for (depth, pat) in names.iter().enumerate() {
            let last = depth + 1 == names.len();
            let mut next = Vec::new();
            for (dir, held) in &level {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    visits += 1;
                    if visits > MAX_VISITS {
                        return found;
                    }
                    let name = entry.file_name();
                    let Some(name) = name.to_str() else { continue };
                    // A file written before `since` is passed over before
                    // its name is read for an id.
                    let Ok(meta) = entry.path().symlink_metadata() else {
                        continue;
                    };
                    let at = meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_secs());
                    if last && (!meta.is_file() || at < since) {
                        continue;
                    }
                    let want = id.or(held.as_deref());
                    let Some(got) = resume.store.match_name(pat, name, want, &is_id) else {
                        continue;
                    };
                    let held = if got.is_empty() {
                        held.clone()
                    } else {
                        Some(got)
                    };
                    if last {
                        if self.foreign(&meta, false).is_none() {
                            found.push((entry.path(), held.unwrap_or_default(), at));
                        }
                    } else if meta.is_dir() && self.foreign(&meta, true).is_none() {
                        next.push((entry.path(), held));
                    }
                }
            }
            level = next;
        }
        found
    }

    /// The id a stored file holds: in its name, or inside it.
    fn id_of(&self, resume: &Resume, path: &Path, named: String) -> Option<String> {
        match &resume.store.id {
            None if !named.is_empty() => Some(named),
            None => None,
            Some(pointer) => {
                let head = self.read_file(path, MAX_HEAD).ok()?;
                json_field(&String::from_utf8_lossy(&head), pointer)
            }
        }
        .filter(|id| resume.is_id(id))
    }

    /// The folder a stored conversation belongs to.
    fn folder_of(&self, resume: &Resume, path: &Path) -> Result<String, String> {
        match &resume.store.folder {
            FolderField::Json(pointer) => {
                let head = self.read_file(path, MAX_HEAD)?;
                json_field(&String::from_utf8_lossy(&head), pointer)
                    .ok_or_else(|| format!("{} names no folder", path.display()))
            }
            FolderField::File(beside) => {
                let at = path.parent().unwrap_or(Path::new("/")).join(beside);
                let text = self.read_file(&at, 4096 + 1)?;
                Ok(String::from_utf8_lossy(&text)
                    .trim_end_matches('\n')
                    .to_owned())
            }
            FolderField::Md5Name(_) => Err("only checked, never read".into()),
            FolderField::Column(_) => Err("a database's, read with its row".into()),
        }
    }

    /// The folder a stored conversation belongs to, when it is `folder`;
    /// else what it says instead.
    fn folder_is(&self, resume: &Resume, path: &Path, folder: &str) -> Result<String, String> {
        match &resume.store.folder {
            FolderField::Md5Name(up) => {
                let at = path.parent().unwrap_or(Path::new("/")).join(up);
                let real =
                    std::fs::canonicalize(&at).map_err(|e| format!("{}: {e}", at.display()))?;
                let name = real.file_name().map(|n| n.to_string_lossy().into_owned());
                Ok(
                    if name.as_deref() == Some(md5::hex(folder.as_bytes()).as_str()) {
                        folder.to_owned()
                    } else {
                        format!("another folder (its MD5 is {})", name.unwrap_or_default())
                    },
                )
            }
            _ => self.folder_of(resume, path),
        }
    }

    /// The newest conversation for `folder` written since `since` (that
    /// names process `pid`, where the manifest says where it would).
    fn newest(
        &self,
        resume: &Resume,
        home: &Path,
        folder: &str,
        since: u64,
        pid: u32,
    ) -> Option<String> {
        if resume.store.table.is_some() {
            return self.newest_row(resume, home, folder, since);
        }
        let mut recent = self.walk(resume, home, None, since.saturating_sub(1));
        recent.sort_by_key(|(_, _, at)| std::cmp::Reverse(*at));
        recent.into_iter().find_map(|(path, named, _)| {
            if let Some(pointer) = &resume.live.pid {
                let head = self.read_file(&path, MAX_HEAD).ok()?;
                let named_pid = json_number(&String::from_utf8_lossy(&head), pointer)?;
                if named_pid != u64::from(pid) {
                    return None;
                }
            }
            (self.folder_is(resume, &path, folder).ok()? == folder)
                .then(|| self.id_of(resume, &path, named))
                .flatten()
        })
    }
}

/// One conversation of a store that is a database.
struct Row {
    id: String,
    folder: String,
    /// When it was last written, Unix milliseconds.
    written_ms: i64,
    /// A sub-conversation (the agent's own task).
    child: bool,
}

impl Stores {
    /// The conversations of the store's database under `home` (none where
    /// there is no database yet): the database and its write-ahead log,
    /// each the user's own file.
    fn rows(&self, resume: &Resume, home: &Path) -> Result<Vec<Row>, String> {
        let (Some(table), FolderField::Column(folder)) =
            (&resume.store.table, &resume.store.folder)
        else {
            return Ok(Vec::new());
        };
        let path = home.join(&resume.store.files);
        let main = match self.open_file(&path) {
            Ok(f) => f,
            Err(_) if !path.exists() => return Ok(Vec::new()),
            Err(why) => return Err(why),
        };
        let wal_path = PathBuf::from(format!("{}-wal", path.display()));
        let wal = if wal_path.exists() {
            let wal = self.read_file(&wal_path, sqlite::MAX_WAL + 1)?;
            if wal.len() as u64 > sqlite::MAX_WAL {
                return Err(format!(
                    "{} is larger than {} MiB, so tend does not read it",
                    wal_path.display(),
                    sqlite::MAX_WAL >> 20
                ));
            }
            wal
        } else {
            Vec::new()
        };
        let db = sqlite::Db::open(main, wal).map_err(|e| format!("{} {e}", path.display()))?;
        let mut want = vec![
            table.id.as_str(),
            folder.as_str(),
            table.written_ms.as_str(),
        ];
        want.extend(table.child_of.as_deref());
        let rows = db
            .rows(&table.name, &want)
            .map_err(|e| format!("{} {e}", path.display()))?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let text = |i: usize| match r.get(i) {
                    Some(sqlite::Value::Text(t)) => Some(t.clone()),
                    _ => None,
                };
                Some(Row {
                    id: text(0).filter(|id| resume.is_id(id))?,
                    folder: text(1)?,
                    written_ms: match r.get(2) {
                        Some(sqlite::Value::Int(t)) => *t,
                        _ => 0,
                    },
                    child: r.get(3).is_some_and(|v| *v != sqlite::Value::Null),
                })
            })
            .collect())
    }

    /// The conversation of `folder` written last, at or after `since`
    /// (Unix seconds), in a store that is a database; not a
    /// sub-conversation.
    fn newest_row(&self, resume: &Resume, home: &Path, folder: &str, since: u64) -> Option<String> {
        let since_ms = i64::try_from(since.saturating_sub(1)).ok()? * 1000;
        self.rows(resume, home)
            .ok()?
            .into_iter()
            .filter(|r| !r.child && r.folder == folder && r.written_ms >= since_ms)
            .max_by_key(|r| r.written_ms)
            .map(|r| r.id)
    }
}

impl ConversationSource for Stores {
    fn live(
        &mut self,
        resume: &Resume,
        agent: &ProcessInfo,
        folder: &str,
        newest: bool,
    ) -> LiveFacts {
        let env = environ_of(agent);
        let home = self.home_of(resume, &env);
        let dir = home.as_ref().and_then(|h| self.trusted_dir(&h.dir).ok());
        let program = env.get("_").filter(|p| p.starts_with('/')).cloned();
        let session_file = match &dir {
            Some(d) if resume.live.session_file => self.session_file(d, agent),
            _ => None,
        };
        let started = match (self.boot, agent.start_ticks) {
            (Some(boot), Some(t)) if self.hz > 0.0 => Some(boot + (t as f64 / self.hz) as u64),
            _ => None,
        };
        let newest = match (&dir, started) {
            (Some(d), Some(since)) if newest && resume.live.newest && session_file.is_none() => {
                self.newest(resume, d, folder, since, agent.pid)
            }
            _ => None,
        };
        LiveFacts {
            home,
            program,
            session_file,
            newest,
        }
    }

    fn saved(&mut self, resume: &Resume, home: &Home, id: &str, folder: &str) -> Saved {
        let dir = match self.trusted_dir(&home.dir) {
            Ok(d) => d,
            Err(why) if Path::new(&home.dir).exists() => return Saved::Unreadable(why),
            Err(_) => return Saved::Missing,
        };
        if resume.store.table.is_some() {
            return match self.rows(resume, &dir) {
                Ok(rows) => rows
                    .into_iter()
                    .find(|r| r.id == id)
                    .map_or(Saved::Missing, |r| Saved::Found { folder: r.folder }),
                Err(why) => Saved::Unreadable(why),
            };
        }
        // Where the name does not hold the id, each file is asked.
        let Some(path) = self
            .walk(resume, &dir, Some(id), 0)
            .into_iter()
            .find(|(path, named, _)| self.id_of(resume, path, named.clone()).as_deref() == Some(id))
            .map(|(path, _, _)| path)
        else {
            return Saved::Missing;
        };
        match self.folder_is(resume, &path, folder) {
            Ok(folder) => Saved::Found { folder },
            Err(why) => Saved::Unreadable(why),
        }
    }
}

/// The variables the agent was started with: its own environment, and
/// where a variable is missing there its parent's (the pane's shell).
/// A program that sets its process title (Kimi CLI's `Kimi Code`) may
/// write the title over its environment's first variables.
fn environ_of(agent: &ProcessInfo) -> HashMap<String, String> {
    let mut env = environ(agent.pid);
    if agent.ppid > 1 {
        for (k, v) in environ(agent.ppid) {
            env.entry(k).or_insert(v);
        }
    }
    env
}

/// The variables of process `pid`'s environment (Linux; elsewhere none).
fn environ(pid: u32) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Ok(f) = File::open(format!("/proc/{pid}/environ")) else {
        return out;
    };
    let mut bytes = Vec::new();
    if f.take(MAX_ENVIRON).read_to_end(&mut bytes).is_err() {
        return out;
    }
    for pair in bytes.split(|b| *b == 0) {
        let Ok(pair) = std::str::from_utf8(pair) else {
            continue;
        };
        if let Some((k, v)) = pair.split_once('=') {
            out.insert(k.to_owned(), v.to_owned());
        }
    }
    out
}

/// The boot time, Unix seconds (Linux: `btime` in `/proc/stat`).
fn boot_time() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

mod md5;
mod sqlite;

#[cfg(test)]
mod tests;
