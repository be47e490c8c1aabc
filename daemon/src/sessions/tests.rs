//! The reads and the watch on real files and folders.

use super::*;
use std::os::unix::fs::PermissionsExt;
use std::time::Instant;

fn folder() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
}

fn refused(read: FileRead) -> String {
    match read {
        FileRead::Refused(why) => why,
        other => panic!("read: {other:?}"),
    }
}

#[test]
fn a_file_of_mine_is_read_whole_and_a_long_one_only_so_far() {
    let d = folder();
    let f = d.path().join("4242.json");
    write(&f, "{\"pid\":4242}");
    assert_eq!(read(&f), FileRead::Bytes(b"{\"pid\":4242}".to_vec()));
    write(&f, &"x".repeat(4 * 1024 * 1024));
    match read(&f) {
        FileRead::Bytes(b) => assert_eq!(b.len(), MAX_FILE + 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(read(&d.path().join("1.json")), FileRead::Gone);
    assert_eq!(read(&d.path().join("no/such/1.json")), FileRead::Gone);
}

#[test]
fn a_symlink_a_fifo_and_a_folder_are_never_read() {
    let d = folder();
    let real = d.path().join("real.json");
    write(&real, "{}");
    let link = d.path().join("4242.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    assert_eq!(refused(read(&link)), "it is a symlink");
    let fifo = d.path().join("fifo.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).expect("mkfifo");
    // Opened without blocking, and refused.
    assert_eq!(refused(read(&fifo)), "it is not a regular file");
    let sub = d.path().join("sub.json");
    std::fs::create_dir(&sub).expect("mkdir");
    assert_eq!(refused(read(&sub)), "it is not a regular file");
}

#[test]
fn a_file_or_folder_others_can_write_is_never_read() {
    let d = folder();
    let f = d.path().join("4242.json");
    write(&f, "{}");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o664)).expect("chmod");
    assert_eq!(refused(read(&f)), "others can write it (mode 664)");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let why = refused(read(&f));
    assert!(
        why.starts_with("others can write /") && why.ends_with("(mode 777)"),
        "{why}"
    );
    // Through a symlinked folder, the folder it leads to is what counts.
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let other = folder();
    let via = other.path().join("sessions");
    std::os::unix::fs::symlink(d.path(), &via).expect("symlink");
    assert_eq!(
        read(&via.join("4242.json")),
        FileRead::Bytes(b"{}".to_vec())
    );
}

/// Another user's file: chowned where the tests run as root; elsewhere
/// the rule itself is what `tend_core::trust` tests.
#[test]
fn another_users_file_is_never_read() {
    let d = folder();
    let f = d.path().join("4242.json");
    write(&f, "{}");
    if nix::unistd::geteuid().is_root() {
        nix::unistd::chown(&f, Some(nix::unistd::Uid::from_raw(65534)), None).expect("chown");
        assert_eq!(refused(read(&f)), "it belongs to another user (uid 65534)");
        // And a folder of another user's, even if the file is mine.
        let g = d.path().join("theirs");
        std::fs::create_dir(&g).expect("mkdir");
        let mine = g.join("4242.json");
        write(&mine, "{}");
        nix::unistd::chown(&g, Some(nix::unistd::Uid::from_raw(65534)), None).expect("chown");
        let why = refused(read(&mine));
        assert!(
            why.ends_with("belongs to another user (uid 65534)"),
            "{why}"
        );
    } else {
        let me = nix::unistd::geteuid().as_raw();
        let theirs = Owned {
            uid: me + 1,
            mode: 0o644,
            kind: Kind::File,
        };
        assert!(trust::file(&theirs, me).is_err());
    }
}

/// What the watcher hands in, until `want` has been seen (or 10 s).
fn reads_until(
    rx: &mut tokio::sync::mpsc::Receiver<Event>,
    want: impl Fn(&FileRead) -> bool,
) -> Vec<FileRead> {
    let end = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while Instant::now() < end {
        match rx.try_recv() {
            Ok(Event::Core(Input::SessionFile { read, .. })) => {
                let done = want(&read);
                seen.push(read);
                if done {
                    return seen;
                }
            }
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    panic!("not handed in; seen {seen:?}");
}

#[test]
fn a_followed_file_is_read_at_once_and_on_every_change_until_it_goes() {
    let d = folder();
    let sessions = d.path().join("sessions");
    let f = sessions.join("4242.json");
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let watch = Sessions::spawn(tx).expect("a watcher");
    // The folder does not exist yet: followed once it does.
    watch.follow(vec![FollowFile {
        pane: PaneId(3),
        path: f.to_string_lossy().into_owned(),
    }]);
    assert_eq!(
        reads_until(&mut rx, |r| *r == FileRead::Gone),
        [FileRead::Gone]
    );
    std::fs::create_dir(&sessions).expect("mkdir");
    write(&f, "{\"status\":\"idle\"}");
    reads_until(&mut rx, |r| {
        *r == FileRead::Bytes(b"{\"status\":\"idle\"}".to_vec())
    });
    // Written in place, and by rename as editors and atomic writers do.
    write(&f, "{\"status\":\"busy\"}");
    reads_until(&mut rx, |r| {
        *r == FileRead::Bytes(b"{\"status\":\"busy\"}".to_vec())
    });
    let tmp = sessions.join("4242.json.tmp");
    write(&tmp, "{\"status\":\"shell\"}");
    std::fs::rename(&tmp, &f).expect("rename");
    reads_until(&mut rx, |r| {
        *r == FileRead::Bytes(b"{\"status\":\"shell\"}".to_vec())
    });
    std::fs::remove_file(&f).expect("rm");
    reads_until(&mut rx, |r| *r == FileRead::Gone);
    // No longer followed: a new file is not read.
    watch.follow(Vec::new());
    write(&f, "{\"status\":\"idle\"}");
    std::thread::sleep(Duration::from_millis(200));
    while let Ok(ev) = rx.try_recv() {
        assert!(
            !matches!(ev, Event::Core(Input::SessionFile { ref read, .. }) if *read != FileRead::Gone),
            "read after unfollowing: {ev:?}"
        );
    }
}

#[test]
fn a_file_written_in_place_is_read_when_its_writer_closes_it() {
    use ::notify::event::{
        AccessKind, AccessMode, CreateKind, DataChange, MetadataKind, ModifyKind, RemoveKind,
        RenameMode,
    };
    let read = |k| worth_reading(&k);
    assert!(read(EventKind::Access(AccessKind::Close(
        AccessMode::Write
    ))));
    assert!(!read(EventKind::Access(AccessKind::Open(AccessMode::Any))));
    assert!(!read(EventKind::Access(AccessKind::Close(
        AccessMode::Read
    ))));
    assert!(read(EventKind::Modify(ModifyKind::Name(RenameMode::To))));
    assert!(read(EventKind::Modify(ModifyKind::Metadata(
        MetadataKind::Any
    ))));
    assert!(read(EventKind::Remove(RemoveKind::File)));
    // Half written, where the close is seen; all there is, elsewhere.
    assert_eq!(
        read(EventKind::Modify(ModifyKind::Data(DataChange::Any))),
        !CLOSE_WRITE_SEEN
    );
    assert_eq!(read(EventKind::Create(CreateKind::File)), !CLOSE_WRITE_SEEN);
}

/// A followed file whose folder is not made yet, two levels up: the
/// nearest folder that exists is watched instead (nothing is tried each
/// second), the watch moves down as the folders are made, and the file is
/// read once its folder is there.
#[test]
fn a_folder_not_made_yet_is_watched_through_the_folder_above_it() {
    let d = folder();
    let sessions = d.path().join("projects").join("-work-app");
    let f = sessions.join("4242.json");
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let watcher = ::notify::recommended_watcher(|_| {}).expect("a watcher");
    let mut follower = Follower::new(watcher, tx);
    assert!(follower.follow(vec![FollowFile {
        pane: PaneId(3),
        path: f.to_string_lossy().into_owned(),
    }]));
    assert_eq!(
        reads_until(&mut rx, |r| *r == FileRead::Gone),
        [FileRead::Gone]
    );
    assert!(follower.pending.contains(&sessions));
    assert_eq!(
        follower.above.iter().collect::<Vec<_>>(),
        [&d.path().to_path_buf()]
    );
    assert!(!follower.blind(), "tried again each second");

    let made = |path: &Path| ::notify::Event {
        kind: EventKind::Create(::notify::event::CreateKind::Folder),
        paths: vec![path.to_path_buf()],
        attrs: Default::default(),
    };
    // One level made: the watch moves down to it.
    std::fs::create_dir(d.path().join("projects")).expect("mkdir");
    assert!(follower.leads_to_pending(&made(&d.path().join("projects"))));
    assert!(follower.retry());
    assert_eq!(
        follower.above.iter().collect::<Vec<_>>(),
        [&d.path().join("projects")]
    );
    // Something else made beside it leads nowhere.
    assert!(!follower.leads_to_pending(&made(&d.path().join("other"))));
    // The folder itself, with the file in it: watched, the file read.
    std::fs::create_dir(&sessions).expect("mkdir");
    write(&f, "{\"status\":\"idle\"}");
    assert!(follower.leads_to_pending(&made(&sessions)));
    assert!(follower.retry());
    reads_until(&mut rx, |r| {
        *r == FileRead::Bytes(b"{\"status\":\"idle\"}".to_vec())
    });
    assert!(follower.pending.is_empty());
    assert!(follower.above.is_empty());
    assert!(follower.watched.contains(&sessions));
    assert!(!follower.blind());
}

/// A folder watched as the one above a pending folder, then followed for
/// a file of its own: it keeps its watch when the pending folder no
/// longer needs it, and its file is read on every change.
#[test]
fn a_folder_watched_from_below_and_for_its_own_file_keeps_its_watch() {
    let d = folder();
    let mine = d.path().join("7.json");
    let deep = d.path().join("sessions").join("8.json");
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let (fs_tx, fs_rx) = std::sync::mpsc::channel();
    let watcher = ::notify::recommended_watcher(move |res| {
        let _ = fs_tx.send(res);
    })
    .expect("a watcher");
    let mut follower = Follower::new(watcher, tx);
    let follow = |path: &Path, pane: u32| FollowFile {
        pane: PaneId(pane),
        path: path.to_string_lossy().into_owned(),
    };
    assert!(follower.follow(vec![follow(&deep, 8)]));
    assert!(follower.above.contains(d.path()));
    assert!(follower.follow(vec![follow(&deep, 8), follow(&mine, 7)]));
    assert!(follower.watched.contains(d.path()));
    // The pending folder is made: nothing needs the folder above it now.
    std::fs::create_dir(d.path().join("sessions")).expect("mkdir");
    assert!(follower.retry());
    assert!(follower.above.is_empty());
    // Still watched for its own file: a write there is reported.
    while fs_rx.try_recv().is_ok() {}
    write(&mine, "{\"status\":\"busy\"}");
    let end = Instant::now() + Duration::from_secs(10);
    let mut reported = false;
    while !reported && Instant::now() < end {
        if let Ok(Ok(ev)) = fs_rx.recv_timeout(Duration::from_millis(50)) {
            reported = ev.paths.iter().any(|p| p == &mine);
        }
    }
    assert!(reported, "the folder's watch was dropped");
    while rx.try_recv().is_ok() {}
}
