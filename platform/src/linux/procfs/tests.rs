//! The procfs source on fake trees and on real processes: stat parsing,
//! both ways of finding children, limits, the cache, kept files.

use std::path::Path;

use tend_detector::identity;
use tend_detector::identity::WalkLimits;
use tend_detector::Registry;

use super::*;

#[test]
fn stat_parsing() {
    let line = "4242 (my (weird) prog) S 1 4242 4242 34816 4300 4194560 1 2 3 4 \
                150 50 7 3 20 0 1 0 987654 1000 100 18446744073709551615";
    let st = parse_stat(line).expect("stat");
    assert_eq!(st.comm, "my (weird) prog");
    assert_eq!(
        (st.state, st.ppid, st.pgrp, st.tpgid),
        ('S', 1, 4242, Some(4300))
    );
    assert_eq!(st.ticks, 210);
    assert_eq!(st.start, 987654);
    let no_tty = line.replace(" 34816 4300 ", " 0 -1 ");
    assert_eq!(parse_stat(&no_tty).expect("stat").tpgid, None);
    assert!(parse_stat("garbage").is_none());
    assert!(parse_stat("1 (x) S").is_none());
    // Stopping before the image's addresses: zeros, as for another user's
    // process.
    assert_eq!(st.image, [0; 3]);
    let full = format!("{line} 94740800536576 94740800613305 140721782131312 0 0");
    assert_eq!(
        parse_stat(&full).expect("stat").image,
        [94740800536576, 94740800613305, 140721782131312]
    );
}

/// One fake process: `(pid, ppid, pgrp, comm, argv, exe)`.
pub(crate) type FakeProc<'a> = (u32, u32, u32, &'a str, &'a [&'a str], &'a str);

/// A fake procfs.
pub(crate) fn fake_proc(root: &Path, procs: &[FakeProc<'_>], children_files: bool) {
    for (pid, ppid, pgrp, comm, argv, exe) in procs {
        let dir = root.join(pid.to_string());
        std::fs::create_dir_all(dir.join("task").join(pid.to_string())).expect("mkdir");
        std::fs::write(
            dir.join("stat"),
            format!("{pid} ({comm}) S {ppid} {pgrp} {pgrp} 34816 200 0 0 0 0 0 10 5 0 0 20 0 1 0 {pid}00 0 0"),
        )
        .expect("stat");
        let mut cmdline = argv.join("\0");
        cmdline.push('\0');
        std::fs::write(dir.join("cmdline"), cmdline).expect("cmdline");
        std::fs::write(dir.join("environ"), "A=1\0TEND_AGENT=\0").expect("environ");
        std::os::unix::fs::symlink(exe, dir.join("exe")).expect("exe");
        if children_files {
            let kids: Vec<String> = procs
                .iter()
                .filter(|p| p.1 == *pid)
                .map(|p| p.0.to_string())
                .collect();
            std::fs::write(
                dir.join("task").join(pid.to_string()).join("children"),
                kids.join(" "),
            )
            .expect("children");
        }
    }
}

const TREE: &[FakeProc<'static>] = &[
    (100, 1, 100, "bash", &["-bash"], "/usr/bin/bash"),
    (
        200,
        100,
        200,
        "node",
        &["node", "/x/node_modules/.bin/codex"],
        "/usr/bin/node",
    ),
    (
        201,
        200,
        200,
        "codex",
        &["/x/vendor/codex"],
        "/x/vendor/codex",
    ),
    (300, 1, 300, "other", &["other"], "/usr/bin/other"),
];

#[test]
fn walks_children_files_and_caches() {
    let dir = tempfile::tempdir().expect("tmp");
    fake_proc(dir.path(), TREE, true);
    let mut s = ProcFs::with_root(dir.path());
    let snap = s.sample(100).expect("sample");
    let pids: Vec<u32> = snap.procs.iter().map(|p| p.pid).collect();
    assert_eq!(pids, vec![100, 200, 201]);
    assert_eq!(
        snap.procs[1].argv,
        vec!["node", "/x/node_modules/.bin/codex"]
    );
    assert_eq!(snap.procs[1].tpgid, Some(200));
    assert_eq!(snap.procs[1].depth, 1);
    assert_eq!(snap.procs[2].depth, 2);
    assert_eq!(snap.procs[1].env_agent, None); // empty hint ignored
    assert_eq!(snap.procs[0].cpu_ticks, 15);
    let reg = Registry::bundled();
    let r = identity::resolve_pane(&reg, &snap.procs, &s.limits());
    assert_eq!(
        r.agent.map(|m| (m.agent, m.pid)),
        Some(("codex".into(), 200))
    );
    // Warm: identity fields come from the cache.
    let warm = s.sample(100).expect("sample");
    assert_eq!(warm.stats.cache_hits, 3);
    assert!(
        warm.stats.files_read < snap.stats.files_read,
        "{warm:?} vs {snap:?}"
    );
    assert_eq!(warm.procs, snap.procs);
    // The probe is one read.
    let before = s.files_read();
    let p = s.probe(100).expect("probe");
    assert_eq!(s.files_read() - before, 1);
    assert_eq!(
        p,
        Probe {
            shell_pgid: 100,
            tpgid: Some(200)
        }
    );
    assert!(!p.shell_foreground());
    assert!(matches!(s.sample(999), Err(SampleError::Gone(999))));
}

#[test]
fn scans_without_children_files() {
    let dir = tempfile::tempdir().expect("tmp");
    fake_proc(dir.path(), TREE, false);
    let mut s = ProcFs::with_root(dir.path());
    let snap = s.sample(100).expect("sample");
    let pids: Vec<u32> = snap.procs.iter().map(|p| p.pid).collect();
    assert_eq!(pids, vec![100, 200, 201]);
    assert_eq!(s.mode, ChildrenMode::Scan);
}

#[test]
fn walk_limits_hold() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut tree: Vec<FakeProc<'_>> = vec![(100, 1, 100, "bash", &["bash"], "/usr/bin/bash")];
    for i in 0..30 {
        tree.push((1000 + i, 100, 1000, "make", &["make"], "/usr/bin/make"));
    }
    fake_proc(dir.path(), &tree, true);
    let mut s = ProcFs::with_root(dir.path()).with_limits(WalkLimits {
        max_depth: 4,
        max_procs: 10,
    });
    let snap = s.sample(100).expect("sample");
    assert_eq!(snap.procs.len(), 10);
    assert!(snap.truncated);
}

#[test]
fn cache_sweeps_forget_old_processes() {
    let dir = tempfile::tempdir().expect("tmp");
    fake_proc(dir.path(), TREE, true);
    let mut s = ProcFs::with_root(dir.path());
    s.sample(100).expect("sample");
    assert_eq!(s.cache.len(), 3);
    for _ in 0..=CACHE_KEEP_SWEEPS {
        s.sweep();
    }
    assert!(s.cache.is_empty());
}

/// A shim named as the program it runs (`python3`, as pyenv, asdf and mise
/// install them) execs it: the pid, the start time and the comm stay, the
/// image moves, and what the process runs is read again.
#[test]
fn an_exec_keeping_the_comm_is_read_again() {
    let dir = tempfile::tempdir().expect("tmp");
    let shim: &[FakeProc<'_>] = &[
        (100, 1, 100, "bash", &["-bash"], "/usr/bin/bash"),
        (
            200,
            100,
            200,
            "python3",
            &["/bin/sh", "/shims/python3", "agent.py"],
            "/usr/bin/dash",
        ),
    ];
    fake_proc(dir.path(), shim, true);
    let p200 = dir.path().join("200");
    let stat = |image: &str| {
        let text = format!(
            "200 (python3) S 100 200 200 34816 200 0 0 0 0 0 10 5 0 0 20 0 1 0 20000 0 0 0 {image} 0"
        );
        std::fs::write(p200.join("stat"), text).expect("stat");
    };
    stat("1000 2000 3000");
    let mut s = ProcFs::with_root(dir.path());
    let argv = |s: &mut ProcFs| s.sample(100).expect("sample").procs[1].argv.clone();
    assert_eq!(argv(&mut s), ["/bin/sh", "/shims/python3", "agent.py"]);
    // The exec.
    std::fs::write(p200.join("cmdline"), "/usr/bin/python3\0agent.py\0").expect("cmdline");
    std::fs::remove_file(p200.join("exe")).expect("exe");
    std::os::unix::fs::symlink("/usr/bin/python3.11", p200.join("exe")).expect("exe");
    // The same image: the cache answers (nothing is read again).
    assert_eq!(argv(&mut s), ["/bin/sh", "/shims/python3", "agent.py"]);
    // Another image: read again.
    stat("5000 6000 7000");
    let snap = s.sample(100).expect("sample");
    assert_eq!(snap.procs[1].argv, ["/usr/bin/python3", "agent.py"]);
    assert_eq!(snap.procs[1].exe, "/usr/bin/python3.11");
    assert_eq!(snap.stats.cache_hits, 1, "only the shell from the cache");
    // An image the kernel does not show (a zombie): the cache answers.
    stat("0 0 0");
    std::fs::write(p200.join("cmdline"), "").expect("cmdline");
    let snap = s.sample(100).expect("sample");
    assert_eq!(snap.procs[1].argv, ["/usr/bin/python3", "agent.py"]);
    assert_eq!(snap.stats.cache_hits, 2);
}

/// Where the kernel hides the image (zeros in `stat`, as some sandboxes
/// do), a process read inside its exec has an empty cmdline: that empty
/// argv is not kept, and the next sample reads what the process runs.
#[test]
fn an_empty_argv_is_read_again_where_the_image_is_hidden() {
    let dir = tempfile::tempdir().expect("tmp");
    let tree: &[FakeProc<'_>] = &[
        (100, 1, 100, "bash", &["-bash"], "/usr/bin/bash"),
        (
            200,
            100,
            200,
            "sleep",
            &["/bin/sh", "/x/sleep"],
            "/usr/bin/dash",
        ),
    ];
    fake_proc(dir.path(), tree, true);
    let p200 = dir.path().join("200");
    // `fake_proc` writes a stat without the image fields: zeros.
    std::fs::write(p200.join("cmdline"), "").expect("cmdline");
    let mut s = ProcFs::with_root(dir.path());
    assert!(s.sample(100).expect("sample").procs[1].argv.is_empty());
    std::fs::write(p200.join("cmdline"), "/bin/sh\0/x/sleep\0").expect("cmdline");
    let snap = s.sample(100).expect("sample");
    assert_eq!(snap.procs[1].argv, ["/bin/sh", "/x/sleep"]);
    // Once read, it is kept.
    let snap = s.sample(100).expect("sample");
    assert_eq!(snap.stats.cache_hits, 2);
}

/// A real child process of the test, killed and reaped on drop.
struct Child(std::process::Child);

impl Child {
    fn spawn(cmd: &[&str]) -> Child {
        let c = std::process::Command::new(cmd[0])
            .args(&cmd[1..])
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?} for the test: {e}"));
        Child(c)
    }
    fn pid(&self) -> u32 {
        self.0.id()
    }
    /// Kills and reaps it: its pid is gone from /proc.
    fn end(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.end();
    }
}

#[test]
fn stat_files_are_kept_reread_and_closed_when_the_process_ends() {
    let mut child = Child::spawn(&["sleep", "60"]);
    let pid = child.pid();
    let mut s = ProcFs::new().with_fd_cap(16);
    let first = s.probe(pid).expect("probe");
    assert_eq!((s.open_files(), s.reused_reads()), (1, 0));
    assert!(s.fds.holds(pid));
    // The same file, read again from offset 0: the same answer, no open.
    let before = s.files_read();
    assert_eq!(s.probe(pid).expect("probe"), first);
    assert_eq!(s.files_read() - before, 1);
    assert_eq!((s.open_files(), s.reused_reads()), (1, 1));
    // Two samples (the first finds out how children are listed): its
    // `task` directory and its thread's `children` file are kept too.
    s.sample(pid).expect("sample");
    s.sample(pid).expect("sample");
    assert_eq!(s.open_files(), 3);
    // Ended and reaped: the kept `stat` fails, the path is gone, and every
    // file kept for the process is closed.
    child.end();
    assert!(matches!(s.probe(pid), Err(SampleError::Gone(p)) if p == pid));
    assert_eq!(s.open_files(), 0);
    assert!(!s.fds.holds(pid));
}

#[test]
fn a_sample_keeps_the_tree_files_and_rounds_close_unread_ones() {
    // `sh` runs `sleep` as its child (the `; true` keeps it from exec'ing).
    let sh = Child::spawn(&["sh", "-c", "sleep 60; true"]);
    let mut s = ProcFs::new().with_fd_cap(64);
    // Polls until `sleep` runs below `sh` (nothing here is timed).
    let exec_done = |snap: &PaneSnapshot| snap.procs.len() == 2 && snap.procs[1].comm == "sleep";
    for _ in 0..10_000 {
        if exec_done(&s.sample(sh.pid()).expect("sample")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // The first walk found out how children are listed; from now on every
    // file is kept.
    let cold = s.sample(sh.pid()).expect("sample");
    assert!(exec_done(&cold), "{cold:?}");
    let open = s.open_files();
    // `stat`, `task` and one `children` file for each of the two.
    assert_eq!(open, 6);
    let reused = s.reused_reads();
    let warm = s.sample(sh.pid()).expect("sample");
    // The same processes (their state and CPU time may move between reads).
    let what = |snap: &PaneSnapshot| -> Vec<(u32, String, Vec<String>, Option<u64>)> {
        snap.procs
            .iter()
            .map(|p| (p.pid, p.comm.clone(), p.argv.clone(), p.start_ticks))
            .collect()
    };
    assert_eq!(what(&warm), what(&cold));
    assert_eq!(s.reused_reads() - reused, 6);
    assert_eq!(s.open_files(), open);
    for _ in 0..fds::KEEP_ROUNDS {
        s.end_round();
    }
    assert_eq!(s.open_files(), open, "read within the last rounds");
    s.end_round();
    assert_eq!(s.open_files(), 0);
}

#[test]
fn kept_files_stop_at_the_cap() {
    let kids: Vec<Child> = (0..3).map(|_| Child::spawn(&["sleep", "60"])).collect();
    let mut s = ProcFs::new().with_fd_cap(2);
    for k in &kids {
        s.probe(k.pid()).expect("probe");
    }
    assert_eq!(s.open_files(), 2);
    assert!(!s.fds.holds(kids[2].pid()));
    // Past the cap a read still works, opening its file each time.
    let reused = s.reused_reads();
    s.probe(kids[2].pid()).expect("probe");
    assert_eq!(s.reused_reads(), reused);
    assert_eq!(s.open_files(), 2);
    // Without a cap nothing is kept.
    let mut none = ProcFs::new().with_fd_cap(0);
    none.probe(kids[0].pid()).expect("probe");
    assert_eq!(none.open_files(), 0);
    // Fake trees never keep files.
    assert_eq!(ProcFs::with_root("/nonexistent").fds.open(), 0);
    assert!(fds::default_cap() <= fds::FD_CAP_MAX);
}

/// The same with a real shim and a real `exec`: a script named `sleep`
/// (its comm) waits for a line, then execs `/bin/sleep` (comm `sleep`).
#[test]
fn a_real_shim_exec_is_seen() {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tmp");
    let shim = dir.path().join("sleep");
    std::fs::write(&shim, "#!/bin/sh\nread go\nexec /bin/sleep 60\n").expect("shim");
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut child = std::process::Command::new(&shim)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("shim");
    let pid = child.id();
    let mut s = ProcFs::new();
    // Right after the spawn the kernel may still be inside the shim's exec
    // (comm set, an empty cmdline): wait until the shell runs it.
    let mut first = s.sample(pid).expect("sample").procs[0].clone();
    for _ in 0..10_000 {
        if !first.argv.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        first = s.sample(pid).expect("sample").procs[0].clone();
    }
    assert_eq!(first.comm, "sleep");
    assert_eq!(first.argv, ["/bin/sh", &shim.to_string_lossy()]);
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"go\n").expect("write");
    // Polls until the exec is seen (nothing here is timed).
    let mut now = first.clone();
    for _ in 0..10_000 {
        now = s.sample(pid).expect("sample").procs[0].clone();
        if now.argv != first.argv {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!((now.pid, now.start_ticks), (first.pid, first.start_ticks));
    assert_eq!(now.comm, "sleep");
    assert_eq!(now.argv, ["/bin/sleep", "60"]);
}
