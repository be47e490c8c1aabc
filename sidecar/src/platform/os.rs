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
    /// When it started, in the backend's unit (clock ticks after boot on
    /// Linux, seconds since the epoch with `sysinfo`): comparable between
    /// two processes of one backend only.
    pub start: u64,
    /// It has ended and waits for its parent to reap it.
    pub zombie: bool,
}

/// `pid`'s start and state; `None` when it is gone.
pub fn process_facts(pid: u32) -> Option<ProcessFacts> {
    match super::backend() {
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
    let set = |kv: &[u8]| {
        names.iter().any(|n| {
            kv.strip_prefix(n.as_bytes())
                .is_some_and(|rest| rest.first() == Some(&b'='))
        })
    };
    match super::backend() {
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
    match super::backend() {
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
