//! A pane's project: the git repository (or linked worktree) its working
//! directory is in, and the branch checked out there (`tend · main`),
//! for `tend list --json` (`project`), `@tend_project` and `tend pilot`.
//!
//! Read from the files git keeps, without running git: the first `.git`
//! above the directory (a folder: a repository; a file holding `gitdir:`:
//! a linked worktree or a submodule), then its `HEAD`. Each directory is
//! looked up once; after that a listing costs one `stat` of its `HEAD` per
//! directory (the branch is read again only when `HEAD` changed).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Directories remembered at most; the cache starts over past this.
const MAX_DIRS: usize = 512;

/// Directories above the working directory looked at for `.git`.
const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone)]
struct Found {
    /// The repository's or worktree's name (its top folder's name).
    name: String,
    /// Its `HEAD` file.
    head: PathBuf,
    /// `HEAD`'s modification time when `branch` was read.
    mtime: Option<SystemTime>,
    /// The branch, or a short commit id when detached.
    branch: Option<String>,
}

/// Projects by working directory.
#[derive(Debug, Default)]
pub struct ProjectCache {
    dirs: HashMap<String, Option<Found>>,
}

impl ProjectCache {
    /// The project of `dir` as shown (`name · branch`, or `name`), `None`
    /// outside a git repository (or for an empty `dir`).
    pub fn project(&mut self, dir: &str) -> Option<String> {
        if dir.is_empty() {
            return None;
        }
        if self.dirs.len() >= MAX_DIRS && !self.dirs.contains_key(dir) {
            self.dirs.clear();
        }
        let found = self
            .dirs
            .entry(dir.to_owned())
            .or_insert_with(|| find(Path::new(dir)))
            .as_mut()?;
        let mtime = std::fs::metadata(&found.head)
            .and_then(|m| m.modified())
            .ok();
        if mtime.is_none() || mtime != found.mtime {
            found.mtime = mtime;
            found.branch = std::fs::read_to_string(&found.head)
                .ok()
                .and_then(|h| branch_of(&h));
        }
        Some(show(&found.name, found.branch.as_deref()))
    }
}

/// `name · branch`, without control characters.
fn show(name: &str, branch: Option<&str>) -> String {
    let clean = |s: &str| -> String { s.chars().filter(|c| !c.is_control()).collect() };
    match branch {
        Some(b) => format!("{} · {}", clean(name), clean(b)),
        None => clean(name),
    }
}

/// The branch `HEAD` names, or the first 7 characters of a detached
/// commit id.
fn branch_of(head: &str) -> Option<String> {
    let head = head.trim();
    if let Some(r) = head.strip_prefix("ref:") {
        let r = r.trim();
        return Some(r.strip_prefix("refs/heads/").unwrap_or(r).to_owned());
    }
    (head.len() >= 7 && head.bytes().all(|b| b.is_ascii_hexdigit())).then(|| head[..7].to_owned())
}

/// The first `.git` at or above `dir`.
fn find(dir: &Path) -> Option<Found> {
    let mut here = Some(dir);
    for _ in 0..MAX_DEPTH {
        let d = here?;
        let dot = d.join(".git");
        if let Ok(meta) = std::fs::metadata(&dot) {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "/".into());
            let git_dir = if meta.is_dir() {
                dot
            } else {
                // A linked worktree or a submodule: `gitdir: <path>`,
                // relative to the folder holding the file.
                let text = std::fs::read_to_string(&dot).ok()?;
                let to = text.lines().next()?.strip_prefix("gitdir:")?.trim();
                d.join(to)
            };
            return Some(Found {
                name,
                head: git_dir.join("HEAD"),
                mtime: None,
                branch: None,
            });
        }
        here = d.parent();
    }
    None
}

impl tend_core::ProjectSource for ProjectCache {
    fn project(&mut self, dir: &str) -> Option<String> {
        ProjectCache::project(self, dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        assert_eq!(branch_of("ref: refs/heads/main\n").as_deref(), Some("main"));
        assert_eq!(
            branch_of("ref: refs/heads/fix/a b\n").as_deref(),
            Some("fix/a b")
        );
        assert_eq!(
            branch_of("0123456789abcdef0123456789abcdef01234567\n").as_deref(),
            Some("0123456")
        );
        assert_eq!(branch_of("garbage"), None);
    }

    #[test]
    fn repositories_worktrees_and_branch_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("shop");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        // A linked worktree, as `git worktree add ../shop-fix` leaves it.
        let wt = tmp.path().join("shop-fix");
        let wt_git = repo.join(".git/worktrees/shop-fix");
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt_git.join("HEAD"), "ref: refs/heads/fix\u{1b}[31m\n").unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();

        let mut c = ProjectCache::default();
        let deep = repo.join("src/deep");
        assert_eq!(
            c.project(deep.to_str().unwrap()).as_deref(),
            Some("shop · main")
        );
        assert_eq!(
            c.project(wt.to_str().unwrap()).as_deref(),
            Some("shop-fix · fix[31m")
        );
        assert_eq!(c.project(tmp.path().to_str().unwrap()), None);
        assert_eq!(c.project(""), None);
        // A checkout elsewhere: read again once HEAD changed.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/release-2\n").unwrap();
        let f = std::fs::File::options()
            .append(true)
            .open(repo.join(".git/HEAD"))
            .unwrap();
        f.set_modified(SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        assert_eq!(
            c.project(deep.to_str().unwrap()).as_deref(),
            Some("shop · release-2")
        );
    }
}
