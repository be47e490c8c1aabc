//! Trust by ownership, as OpenSSH's `StrictModes`: a file an agent keeps
//! counts only if the user owns it, it is a regular file reached without a
//! symlink, and no one else can write it or any folder above it. Pure: the
//! daemon states what it found (`stat`), this says whether to read.

/// What `stat` says of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owned {
    /// Its owner.
    pub uid: u32,
    /// Its permission bits (and the sticky bit).
    pub mode: u32,
    /// What it is.
    pub kind: Kind,
}

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A symbolic link (never followed to the file).
    Symlink,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

const GROUP_OR_OTHERS_WRITE: u32 = 0o022;
const STICKY: u32 = 0o1000;

/// Whether the file `file` may be read by user `me`: a regular file (not a
/// symlink), owned by `me`, that no one else can write. The error says why
/// not, for `tend explain`.
pub fn file(file: &Owned, me: u32) -> Result<(), String> {
    match file.kind {
        Kind::File => {}
        Kind::Symlink => return Err("it is a symlink".to_owned()),
        Kind::Folder | Kind::Other => return Err("it is not a regular file".to_owned()),
    }
    if file.uid != me {
        return Err(format!("it belongs to another user (uid {})", file.uid));
    }
    if file.mode & GROUP_OR_OTHERS_WRITE != 0 {
        return Err(format!(
            "others can write it (mode {:o})",
            file.mode & 0o7777
        ));
    }
    Ok(())
}

/// Whether folder `folder` (one of the file's folders, as resolved) may
/// hold a file user `me` trusts: owned by `me` or root, and no one else can
/// write it — except a root-owned folder with the sticky bit (`/tmp`),
/// where no one can remove or rename what another user made.
pub fn folder(path: &str, folder: &Owned, me: u32) -> Result<(), String> {
    if folder.kind != Kind::Folder {
        return Err(format!("{path} is not a folder"));
    }
    if folder.uid != me && folder.uid != 0 {
        return Err(format!(
            "{path} belongs to another user (uid {})",
            folder.uid
        ));
    }
    let shared = folder.mode & GROUP_OR_OTHERS_WRITE != 0;
    if shared && !(folder.uid == 0 && folder.mode & STICKY != 0) {
        return Err(format!(
            "others can write {path} (mode {:o})",
            folder.mode & 0o7777
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u32 = 1000;

    fn owned(uid: u32, mode: u32, kind: Kind) -> Owned {
        Owned { uid, mode, kind }
    }

    #[test]
    fn a_file_counts_only_if_mine_regular_and_not_writable_by_others() {
        assert_eq!(file(&owned(ME, 0o644, Kind::File), ME), Ok(()));
        assert_eq!(file(&owned(ME, 0o600, Kind::File), ME), Ok(()));
        assert_eq!(
            file(&owned(1001, 0o644, Kind::File), ME),
            Err("it belongs to another user (uid 1001)".into())
        );
        assert_eq!(
            file(&owned(0, 0o644, Kind::File), ME),
            Err("it belongs to another user (uid 0)".into())
        );
        assert_eq!(
            file(&owned(ME, 0o664, Kind::File), ME),
            Err("others can write it (mode 664)".into())
        );
        assert_eq!(
            file(&owned(ME, 0o646, Kind::File), ME),
            Err("others can write it (mode 646)".into())
        );
        assert_eq!(
            file(&owned(ME, 0o777, Kind::Symlink), ME),
            Err("it is a symlink".into())
        );
        assert_eq!(
            file(&owned(ME, 0o644, Kind::Other), ME),
            Err("it is not a regular file".into())
        );
    }

    #[test]
    fn a_folder_counts_if_mine_or_roots_and_closed_or_sticky() {
        let ok = |uid, mode| folder("/x", &owned(uid, mode, Kind::Folder), ME);
        assert_eq!(ok(ME, 0o755), Ok(()));
        assert_eq!(ok(0, 0o755), Ok(()));
        // /tmp: root's, sticky.
        assert_eq!(ok(0, 0o1777), Ok(()));
        assert_eq!(ok(0, 0o777), Err("others can write /x (mode 777)".into()));
        // Sticky but another user's: that user can replace what is in it.
        assert_eq!(
            ok(1001, 0o1777),
            Err("/x belongs to another user (uid 1001)".into())
        );
        assert_eq!(
            ok(ME, 0o1777),
            Err("others can write /x (mode 1777)".into())
        );
        assert_eq!(ok(ME, 0o775), Err("others can write /x (mode 775)".into()));
        assert_eq!(
            folder("/x", &owned(ME, 0o755, Kind::File), ME),
            Err("/x is not a folder".into())
        );
    }
}
