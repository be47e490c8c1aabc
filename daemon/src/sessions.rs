//! The agents' session files (`tend_core::session`): the daemon watches the
//! folders of the files the core follows with the platform's own file
//! notifications (the `notify` crate: inotify on Linux, FSEvents on macOS,
//! kqueue on the BSDs), reads a file when it is told to follow it and each
//! time the system says it changed, and hands what it read to the core.
//! Nothing is polled: a folder that cannot be watched yet (not made yet:
//! Claude Code makes a project's folder at its first message) is watched
//! through the nearest folder above it that exists, and tried again when
//! something is made there; only where no folder above it can be watched
//! either is it tried again each second.
//!
//! A file is read only when the user owns it and no one else can write it
//! or any folder above it, never through a symlink, never more than
//! [`MAX_FILE`] + 1 bytes (`tend_core::trust`): anything else is handed in
//! as refused, with why.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use ::notify::{EventKind, RecursiveMode, Watcher};
use tend_core::trust::{self, Kind, Owned};
use tend_core::{FileRead, FollowFile, Input};
use tend_detector::session_file::MAX_FILE;
use tend_protocol::PaneId;

use crate::event::Event;

/// How often a folder that could not be watched, nor any folder above
/// it, is tried again.
const RETRY_EVERY: Duration = Duration::from_secs(1);

enum Msg {
    Follow(Vec<FollowFile>),
    Fs(::notify::Result<::notify::Event>),
    Stop,
}

/// The thread that watches and reads the followed files. Dropped, it is
/// told to stop (not waited for: it may be handing in a read the loop no
/// longer takes, and ends when that fails).
pub struct Sessions {
    tx: mpsc::Sender<Msg>,
}

impl Sessions {
    /// Starts the watcher; what it reads goes to `events`. `None` where
    /// the platform has no file notifications the crate can use (the
    /// screen decides there, as without the files).
    pub fn spawn(events: tokio::sync::mpsc::Sender<Event>) -> Option<Sessions> {
        let (tx, rx) = mpsc::channel();
        let fs_tx = tx.clone();
        let watcher = match ::notify::recommended_watcher(move |res| {
            let _ = fs_tx.send(Msg::Fs(res));
        }) {
            Ok(w) => w,
            Err(e) => {
                crate::say!(
                    "cannot watch the agents' session files ({e}): their panes are read from the screen"
                );
                return None;
            }
        };
        std::thread::Builder::new()
            .name("tend-sessions".into())
            .spawn(move || Follower::new(watcher, events).run(rx))
            .ok()?;
        Some(Sessions { tx })
    }

    /// Follows these files and no others.
    pub fn follow(&self, files: Vec<FollowFile>) {
        let _ = self.tx.send(Msg::Follow(files));
    }
}

impl Drop for Sessions {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
    }
}

/// The watcher thread's state.
struct Follower<W: Watcher> {
    watcher: W,
    events: tokio::sync::mpsc::Sender<Event>,
    /// Followed files, and the pane each speaks for.
    files: BTreeMap<PathBuf, PaneId>,
    /// Folders watched.
    watched: BTreeSet<PathBuf>,
    /// Folders to watch that could not be yet.
    pending: BTreeSet<PathBuf>,
    /// The nearest existing folder above each pending one, watched until
    /// it can be (a folder made there may be, or lead to, one).
    above: BTreeSet<PathBuf>,
}

impl<W: Watcher> Follower<W> {
    fn new(watcher: W, events: tokio::sync::mpsc::Sender<Event>) -> Self {
        Follower {
            watcher,
            events,
            files: BTreeMap::new(),
            watched: BTreeSet::new(),
            pending: BTreeSet::new(),
            above: BTreeSet::new(),
        }
    }

    fn run(mut self, rx: mpsc::Receiver<Msg>) {
        loop {
            let msg = if self.blind() {
                rx.recv_timeout(RETRY_EVERY)
            } else {
                rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
            };
            let alive = match msg {
                Ok(Msg::Follow(files)) => self.follow(files),
                Ok(Msg::Fs(Ok(ev))) => {
                    (!self.leads_to_pending(&ev) || self.retry()) && self.changed(&ev)
                }
                // The system dropped events (an overflow): read them all.
                Ok(Msg::Fs(Err(_))) => self.read_all(),
                Ok(Msg::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => false,
                Err(mpsc::RecvTimeoutError::Timeout) => self.retry(),
            };
            if !alive {
                return;
            }
        }
    }

    /// Follows `files`: watches their folders, forgets the others, reads
    /// each new one at once. False once the daemon is gone.
    fn follow(&mut self, files: Vec<FollowFile>) -> bool {
        let now: BTreeMap<PathBuf, PaneId> = files
            .into_iter()
            .map(|f| (PathBuf::from(f.path), f.pane))
            .collect();
        let fresh: Vec<(PathBuf, PaneId)> = now
            .iter()
            .filter(|(path, pane)| self.files.get(*path) != Some(pane))
            .map(|(p, id)| (p.clone(), *id))
            .collect();
        self.files = now;
        let folders: BTreeSet<PathBuf> = self.files.keys().filter_map(|p| folder_of(p)).collect();
        for gone in self
            .watched
            .difference(&folders)
            .cloned()
            .collect::<Vec<_>>()
        {
            let _ = self.watcher.unwatch(&gone);
            self.watched.remove(&gone);
            // Its watch is gone, whatever else it was watched for.
            self.above.remove(&gone);
        }
        self.pending.retain(|f| folders.contains(f));
        for f in folders {
            if !self.watched.contains(&f) {
                self.watch(f);
            }
        }
        self.watch_above();
        fresh
            .into_iter()
            .all(|(path, pane)| self.send(pane, &path, read(&path)))
    }

    /// Watches the nearest existing folder above each pending one (not
    /// those already watched for their own files), and no other.
    fn watch_above(&mut self) {
        let want: BTreeSet<PathBuf> = self
            .pending
            .iter()
            .filter_map(|f| nearest_existing_above(f))
            .filter(|a| !self.watched.contains(a))
            .collect();
        for gone in self.above.difference(&want).cloned().collect::<Vec<_>>() {
            // A folder watched for its own files since keeps its watch.
            if !self.watched.contains(&gone) {
                let _ = self.watcher.unwatch(&gone);
            }
            self.above.remove(&gone);
        }
        for a in want {
            if !self.above.contains(&a)
                && self.watcher.watch(&a, RecursiveMode::NonRecursive).is_ok()
            {
                self.above.insert(a);
            }
        }
    }

    /// Whether some pending folder has no watched folder above it: then
    /// the loop tries again each second.
    fn blind(&self) -> bool {
        self.pending.iter().any(|f| {
            nearest_existing_above(f)
                .is_none_or(|a| !self.above.contains(&a) && !self.watched.contains(&a))
        })
    }

    /// Whether `ev` made (or moved in, or took away) a pending folder or
    /// one on the way to it.
    fn leads_to_pending(&self, ev: &::notify::Event) -> bool {
        !self.pending.is_empty()
            && !matches!(ev.kind, EventKind::Access(_))
            && ev
                .paths
                .iter()
                .any(|p| self.pending.iter().any(|f| f.starts_with(p)))
    }

    fn watch(&mut self, folder: PathBuf) {
        match self.watcher.watch(&folder, RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.pending.remove(&folder);
                self.watched.insert(folder);
            }
            Err(_) => {
                self.pending.insert(folder);
            }
        }
    }

    /// Folders that could not be watched: once they can, their files are
    /// read; the others are watched through the folder above them that
    /// exists now.
    fn retry(&mut self) -> bool {
        let alive = self.retry_pending();
        self.watch_above();
        alive
    }

    fn retry_pending(&mut self) -> bool {
        for f in self.pending.clone() {
            self.watch(f.clone());
            if self.watched.contains(&f) {
                let files: Vec<(PathBuf, PaneId)> = self
                    .files
                    .iter()
                    .filter(|(p, _)| folder_of(p).as_ref() == Some(&f))
                    .map(|(p, id)| (p.clone(), *id))
                    .collect();
                for (path, pane) in files {
                    if !self.send(pane, &path, read(&path)) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// A change in a watched folder: the followed files it names are read
    /// again, when the change is one worth reading ([`worth_reading`]).
    fn changed(&mut self, ev: &::notify::Event) -> bool {
        if ev.need_rescan() {
            return self.read_all();
        }
        if !worth_reading(&ev.kind) {
            return true;
        }
        let hits: Vec<(PathBuf, PaneId)> = ev
            .paths
            .iter()
            .filter_map(|p| Some((p.clone(), *self.files.get(p)?)))
            .collect();
        hits.into_iter()
            .all(|(path, pane)| self.send(pane, &path, read(&path)))
    }

    fn read_all(&mut self) -> bool {
        let all: Vec<(PathBuf, PaneId)> =
            self.files.iter().map(|(p, id)| (p.clone(), *id)).collect();
        all.into_iter()
            .all(|(path, pane)| self.send(pane, &path, read(&path)))
    }

    /// Hands a read to the core; false once the daemon is gone.
    fn send(&self, pane: PaneId, path: &Path, read: FileRead) -> bool {
        let input = Input::SessionFile {
            pane,
            path: path.to_string_lossy().into_owned(),
            read,
        };
        self.events.blocking_send(Event::Core(input)).is_ok()
    }
}

/// Whether a change is one to read the file after. Claude Code 2.1.332
/// rewrites its file in place (open with truncation, write, close: one
/// `IN_MODIFY`, one `IN_CLOSE_WRITE` under inotify), so a read at the
/// modification may find it empty or half written: where the system says
/// when a writer closed the file (inotify), that is when it is read, and
/// modifications are not. A file renamed into place, removed, or whose
/// owner or mode changed is read at once; opens and reads (tend's own
/// among them) are not changes.
fn worth_reading(kind: &EventKind) -> bool {
    use ::notify::event::{AccessKind, AccessMode, ModifyKind};
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Data(_)) | EventKind::Create(_) => !CLOSE_WRITE_SEEN,
        EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any | EventKind::Other => true,
    }
}

/// The system says when a writer closes a file (inotify's
/// `IN_CLOSE_WRITE`); elsewhere a modification is all it says.
const CLOSE_WRITE_SEEN: bool = cfg!(any(target_os = "linux", target_os = "android"));

fn folder_of(path: &Path) -> Option<PathBuf> {
    path.parent().map(Path::to_path_buf)
}

/// The nearest folder above `folder` that exists.
fn nearest_existing_above(folder: &Path) -> Option<PathBuf> {
    folder
        .ancestors()
        .skip(1)
        .find(|a| a.is_dir())
        .map(Path::to_path_buf)
}

/// `stat`'s words, for `tend_core::trust`.
fn owned(m: &std::fs::Metadata) -> Owned {
    let t = m.file_type();
    let kind = if t.is_symlink() {
        Kind::Symlink
    } else if t.is_file() {
        Kind::File
    } else if t.is_dir() {
        Kind::Folder
    } else {
        Kind::Other
    };
    Owned {
        uid: m.uid(),
        mode: m.mode(),
        kind,
    }
}

/// Reads `path` if the user may trust it (see the module's doc): every
/// folder above it, resolved, the user's or root's and closed to others;
/// the file itself opened without following a symlink, then checked on
/// the open file (what is read is what was checked); at most
/// [`MAX_FILE`] + 1 bytes.
pub fn read(path: &Path) -> FileRead {
    let me = nix::unistd::geteuid().as_raw();
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return FileRead::Refused("not a file's path".to_owned());
    };
    let dir = match std::fs::canonicalize(dir) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return FileRead::Gone,
        Err(e) => return FileRead::Refused(format!("its folder cannot be read: {e}")),
    };
    for f in dir.ancestors() {
        let verdict = std::fs::symlink_metadata(f)
            .map_err(|e| format!("{} cannot be read: {e}", f.display()))
            .and_then(|m| trust::folder(&f.to_string_lossy(), &owned(&m), me));
        if let Err(why) = verdict {
            return FileRead::Refused(why);
        }
    }
    let file = File::options()
        .read(true)
        .custom_flags(libc_flags())
        .open(dir.join(name));
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return FileRead::Gone,
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return FileRead::Refused("it is a symlink".to_owned())
        }
        Err(e) => return FileRead::Refused(format!("it cannot be opened: {e}")),
    };
    let verdict = file
        .metadata()
        .map_err(|e| format!("it cannot be read: {e}"))
        .and_then(|m| trust::file(&owned(&m), me));
    if let Err(why) = verdict {
        return FileRead::Refused(why);
    }
    let mut bytes = Vec::new();
    match file.take(MAX_FILE as u64 + 1).read_to_end(&mut bytes) {
        Ok(_) => FileRead::Bytes(bytes),
        Err(e) => FileRead::Refused(format!("it cannot be read: {e}")),
    }
}

/// Never through a symlink; a FIFO put in its place does not block.
fn libc_flags() -> i32 {
    nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC
}

#[cfg(test)]
mod tests;
