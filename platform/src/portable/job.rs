//! [`job_control`]: a process's group and its terminal's foreground group —
//! what decides who holds a pane — which `sysinfo` does not give, and each
//! system answers its own way; with them, in the same call, its start
//! finer than `sysinfo`'s seconds (`tend start` tells a daemon started for
//! a tmux server killed a moment ago from one started for its successor)
//! and whether it is a zombie.
//!
//! * macOS: `proc_pidinfo(PROC_PIDTBSDINFO)` (`pbi_pgid`, `e_tpgid`,
//!   `pbi_start_tv*` in microseconds, `pbi_status`), one call.
//! * Linux: `/proc/<pid>/stat` (fields 3, 5, 8 and 22), one read.
//! * Elsewhere (the BSDs): `getpgid(2)` for the group, no foreground group
//!   and no start: every process below the shell is then considered, as
//!   for a recording made without it (`identity::resolve_pane`), so a job
//!   left in the background can be taken for the pane's agent.

/// A process's job control, as far as the system says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobControl {
    /// Its process group.
    pub pgid: u32,
    /// The foreground group of its controlling terminal (`None`: no
    /// terminal, or the system does not say).
    pub tpgid: Option<u32>,
    /// When it started, in the system's finest unit (clock ticks after
    /// boot on Linux, microseconds since the epoch on macOS): comparable
    /// between processes of one system only. `None` where not said.
    pub start: Option<u64>,
    /// It has ended and waits for its parent to reap it (`false` where not
    /// said).
    pub zombie: bool,
}

/// `pid`'s job control; `None` when the process is gone (or, on systems
/// that refuse, not this user's to ask about).
pub fn job_control(pid: u32) -> Option<JobControl> {
    read(pid)
}

#[cfg(target_os = "linux")]
fn read(pid: u32) -> Option<JobControl> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let st = crate::linux::procfs::stat::parse_stat(&text)?;
    Some(JobControl {
        pgid: st.pgrp,
        tpgid: st.tpgid,
        start: Some(st.start),
        zombie: st.state == 'Z',
    })
}

#[cfg(target_vendor = "apple")]
fn read(pid: u32) -> Option<JobControl> {
    use nix::libc;
    let pid = i32::try_from(pid).ok()?;
    let mut info = std::mem::MaybeUninit::<libc::proc_bsdinfo>::zeroed();
    let size = i32::try_from(std::mem::size_of::<libc::proc_bsdinfo>()).ok()?;
    // SAFETY: proc_pidinfo writes at most `size` bytes into `info`, which
    // is that large and ours for the call.
    let got = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            info.as_mut_ptr().cast(),
            size,
        )
    };
    if got != size {
        return None;
    }
    // SAFETY: zeroed first and filled whole by the kernel (`got == size`);
    // every field is a plain integer or byte array.
    let info = unsafe { info.assume_init() };
    // SZOMB in <sys/proc.h>.
    const SZOMB: u32 = 5;
    Some(JobControl {
        pgid: info.pbi_pgid,
        tpgid: (info.e_tpgid > 0).then_some(info.e_tpgid),
        start: Some(
            info.pbi_start_tvsec
                .saturating_mul(1_000_000)
                .saturating_add(info.pbi_start_tvusec),
        ),
        zombie: info.pbi_status == SZOMB,
    })
}

#[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
fn read(pid: u32) -> Option<JobControl> {
    let raw = i32::try_from(pid).ok()?;
    let pgid = nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(raw))).ok()?;
    Some(JobControl {
        pgid: u32::try_from(pgid.as_raw()).ok()?,
        tpgid: None,
        start: None,
        zombie: false,
    })
}
