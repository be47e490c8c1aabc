//! Small things each system does its own way: who is on the other end of
//! a Unix socket, descriptors received over one, and one-shot facts about
//! a process for the command line (`tend start`, notifications, `tend
//! events`).
//!
//! The socket's parts follow the system tend was built for (no backend
//! changes them: Linux has only `SO_PEERCRED`, macOS only `getpeereid`);
//! the process facts follow [`super::backend`].

use std::os::fd::{AsFd, BorrowedFd};

use nix::sys::socket::MsgFlags;

/// The flags `recvmsg` takes a hand-over with: close-on-exec set by the
/// kernel as the descriptors arrive, where the system can (Linux, the
/// BSDs); macOS cannot, and [`after_receive`] sets it.
#[cfg(not(target_vendor = "apple"))]
pub const RECV_CLOEXEC: MsgFlags = MsgFlags::MSG_CMSG_CLOEXEC;
/// The flags `recvmsg` takes a hand-over with (see [`after_receive`]).
#[cfg(target_vendor = "apple")]
pub const RECV_CLOEXEC: MsgFlags = MsgFlags::empty();

/// Makes a descriptor just received close-on-exec where `recvmsg` could
/// not ([`RECV_CLOEXEC`]). Until then a process the daemon starts (a
/// `tmux` command, the guard) could inherit it and hold a pane's pipe
/// open; the window is the few instructions between the two calls.
pub fn after_receive(fd: &impl AsFd) {
    #[cfg(target_vendor = "apple")]
    {
        use nix::fcntl::{fcntl, FcntlArg, FdFlag};
        let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
    }
    #[cfg(not(target_vendor = "apple"))]
    let _ = fd;
}

/// The effective user id of the process at the other end of a connected
/// Unix socket.
pub fn peer_uid(fd: BorrowedFd<'_>) -> std::io::Result<u32> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
        Ok(getsockopt(&fd, PeerCredentials)?.uid())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let (uid, _) = nix::unistd::getpeereid(fd)?;
        Ok(uid.as_raw())
    }
}

/// What the command line asks about one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessFacts {
    /// When it started, in the finest unit the system gives (clock ticks
    /// after boot on Linux, microseconds since the epoch on macOS, seconds
    /// since the epoch elsewhere): comparable between two processes of one
    /// system only.
    pub start: u64,
    /// It has ended and waits for its parent to reap it.
    pub zombie: bool,
}

/// `pid`'s start and state; `None` when it is gone.
pub fn process_facts(pid: u32) -> Option<ProcessFacts> {
    facts_by(super::backend(), pid)
}

fn facts_by(backend: super::Backend, pid: u32) -> Option<ProcessFacts> {
    match backend {
        #[cfg(target_os = "linux")]
        super::Backend::Linux => {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let st = super::linux::procfs::stat::parse_stat(&text)?;
            Some(ProcessFacts {
                start: st.start,
                zombie: st.state == 'Z',
            })
        }
        _ => {
            // The system's own call where it says when (finer than the
            // second), else `sysinfo`.
            let job = super::portable::job_control(pid)?;
            if let Some(start) = job.start {
                return Some(ProcessFacts {
                    start,
                    zombie: job.zombie,
                });
            }
            let one = one_process(pid, sysinfo::ProcessRefreshKind::nothing())?;
            let p = one.process(sysinfo::Pid::from_u32(pid))?;
            Some(ProcessFacts {
                start: p.start_time(),
                zombie: p.status() == sysinfo::ProcessStatus::Zombie,
            })
        }
    }
}

/// Whether `pid`'s environment sets any of `names` (`false` where it
/// cannot be read: another user's process, or a system that hides it).
pub fn environ_has(pid: u32, names: &[&str]) -> bool {
    environ_has_by(super::backend(), pid, names)
}

fn environ_has_by(backend: super::Backend, pid: u32, names: &[&str]) -> bool {
    let set = |kv: &[u8]| {
        names.iter().any(|n| {
            kv.strip_prefix(n.as_bytes())
                .is_some_and(|rest| rest.first() == Some(&b'='))
        })
    };
    match backend {
        #[cfg(target_os = "linux")]
        super::Backend::Linux => std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(set)),
        _ => {
            let kind =
                sysinfo::ProcessRefreshKind::nothing().with_environ(sysinfo::UpdateKind::Always);
            one_process(pid, kind).is_some_and(|one| {
                one.process(sysinfo::Pid::from_u32(pid))
                    .is_some_and(|p| p.environ().iter().any(|kv| set(kv.as_encoded_bytes())))
            })
        }
    }
}

/// This machine's name (empty when it cannot be read).
pub fn host_name() -> String {
    host_name_by(super::backend())
}

fn host_name_by(backend: super::Backend) -> String {
    match backend {
        #[cfg(target_os = "linux")]
        super::Backend::Linux => std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_default(),
        _ => sysinfo::System::host_name().unwrap_or_default(),
    }
}

/// A `sysinfo` list holding `pid` alone, read as `kind` says.
fn one_process(pid: u32, kind: sysinfo::ProcessRefreshKind) -> Option<sysinfo::System> {
    let mut one = sysinfo::System::new();
    let pid = sysinfo::Pid::from_u32(pid);
    one.refresh_processes_specifics(sysinfo::ProcessesToUpdate::Some(&[pid]), true, kind);
    one.process(pid).is_some().then_some(one)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::super::Backend;
    use super::*;

    /// Waits until the new program's environment is in place: `spawn`
    /// returns once the child's exec is past its point of no return, before
    /// the kernel has laid out the new stack, and until then the
    /// environment reads empty (seen on a loaded machine).
    fn exec_done(pid: u32) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::fs::read(format!("/proc/{pid}/environ")).map_or(true, |e| e.is_empty()) {
            assert!(
                std::time::Instant::now() < deadline,
                "{pid}: no environment"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    #[test]
    fn both_backends_say_the_same_of_a_process() {
        let mut older = std::process::Command::new("sleep")
            .arg("300")
            .env("TEND_MARK", "1")
            .spawn()
            .expect("sleep");
        exec_done(older.id());
        // Later by at least a clock tick, whatever the machine's speed.
        let first = facts_by(Backend::Linux, older.id()).expect("facts").start;
        let mut newer = loop {
            let c = std::process::Command::new("sleep")
                .arg("300")
                .spawn()
                .expect("sleep");
            if facts_by(Backend::Linux, c.id()).is_some_and(|f| f.start > first) {
                exec_done(c.id());
                break c;
            }
            let mut c = c;
            let _ = c.kill();
            let _ = c.wait();
        };
        for b in [Backend::Linux, Backend::Portable] {
            let a = facts_by(b, older.id()).expect("facts");
            let n = facts_by(b, newer.id()).expect("facts");
            assert!(a.start < n.start, "{b}: {a:?} {n:?}");
            assert!(!a.zombie, "{b}");
            assert!(environ_has_by(b, older.id(), &["TEND_MARK"]), "{b}");
            assert!(!environ_has_by(b, older.id(), &["TEND_MAR"]), "{b}");
            assert!(!environ_has_by(b, newer.id(), &["TEND_MARK"]), "{b}");
        }
        // Ended, not reaped: a zombie for both; reaped: gone for both.
        older.kill().expect("kill");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !facts_by(Backend::Linux, older.id()).is_some_and(|f| f.zombie) {
            assert!(std::time::Instant::now() < deadline, "no zombie");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(facts_by(Backend::Portable, older.id()).is_some_and(|f| f.zombie));
        older.wait().expect("wait");
        for b in [Backend::Linux, Backend::Portable] {
            assert_eq!(facts_by(b, older.id()), None, "{b}");
        }
        let _ = newer.kill();
        let _ = newer.wait();
        assert_eq!(
            host_name_by(Backend::Portable),
            host_name_by(Backend::Linux)
        );
    }
}
