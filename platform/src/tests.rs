//! The two backends against each other on real processes: the same tree
//! read the same way, the same environment, the same exit reported.
//! (`tend/tests/platform.rs` does it again in a real terminal, where
//! the foreground group is known.)

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use tend_detector::identity::ProcessInfo;
use tend_testkit::{poll_until, wait_for};

use super::linux::ProcFs;
use super::portable::SysProcs;
use super::{ticks_per_sec, ExitWatch, ProcReader};

/// A child of the test, killed and reaped on drop.
struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What both backends must agree on about a process: everything but its
/// CPU time (the portable one does not count reaped children) and its
/// start below the second (`sysinfo` has seconds).
type Seen = (
    u32,
    u32,
    Option<u32>,
    Option<u32>,
    bool,
    String,
    String,
    Vec<String>,
    Option<String>,
    Option<String>,
    u32,
    Option<u64>,
);

fn seen(procs: &[ProcessInfo]) -> Vec<Seen> {
    let hz = ticks_per_sec() as u64;
    procs
        .iter()
        .map(|p| {
            (
                p.pid,
                p.ppid,
                p.pgid,
                p.tpgid,
                // Whether it is a zombie: running or sleeping changes from
                // one read to the next (a job just started reads `R`).
                p.state == "Z",
                p.comm.clone(),
                p.exe.clone(),
                p.argv.clone(),
                p.env_agent.clone(),
                p.script_target.clone(),
                p.depth,
                p.start_ticks.map(|t| t / hz),
            )
        })
        .collect()
}

/// Both sources, the portable one taking its list of every process at
/// each sample.
fn sources() -> (ProcFs, SysProcs) {
    (
        ProcFs::new(),
        SysProcs::new().with_list_fresh(Duration::ZERO),
    )
}

/// Samples `pid` with fresh sources of both backends until they agree
/// (the kernel once answered an empty `cmdline` for a settled process on a
/// loaded machine, and the Linux source keeps what it read per process
/// image); the two samples, which differ at the deadline only when the
/// backends do.
fn agreeing(
    pid: u32,
    limits: tend_detector::identity::WalkLimits,
) -> (
    tend_core::source::PaneSnapshot,
    tend_core::source::PaneSnapshot,
) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (linux, portable) = sources();
        let (mut linux, mut portable) = (linux.with_limits(limits), portable.with_limits(limits));
        let a = linux.sample(pid).expect("linux");
        let b = portable.sample(pid).expect("portable");
        if seen(&a.procs) == seen(&b.procs) || Instant::now() >= deadline {
            return (a, b);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn both_backends_read_the_same_tree() {
    // A shell with three jobs: one carrying the agent hint, one a script
    // run by its interpreter through a link (the link is resolved).
    let dir = tempfile::tempdir().expect("tmp");
    let script = dir.path().join("job.sh");
    std::fs::write(&script, "sleep 302\n").expect("script");
    let link = dir.path().join("link.sh");
    std::os::unix::fs::symlink(&script, &link).expect("link");
    let sh = Kid(Command::new("sh")
        .arg("-c")
        .arg(format!(
            "TEND_AGENT=claude sleep 300 & sleep 301 & sh {} & wait",
            link.display()
        ))
        .spawn()
        .expect("sh"));
    let pid = sh.0.id();
    let (mut linux, mut portable) = sources();
    // Polls until every job has exec'd (nothing here is timed).
    let settled = |procs: &[ProcessInfo]| {
        procs.len() == 5
            && procs
                .iter()
                .filter(|p| p.comm == "sleep" && p.argv.first().is_some_and(|a| a == "sleep"))
                .count()
                == 3
    };
    assert!(
        poll_until(Duration::from_secs(30), Duration::from_millis(5), || {
            settled(&linux.sample(pid).expect("sample").procs)
        }),
        "the jobs never started"
    );
    let (a, b) = agreeing(pid, Default::default());
    assert_eq!(seen(&b.procs), seen(&a.procs));
    assert_eq!((a.truncated, b.truncated), (false, false));
    assert_eq!(b.stats.processes, 5);
    // The script's job: `sh link.sh`, resolved to the file.
    let job = a
        .procs
        .iter()
        .find(|p| p.argv.get(1).is_some_and(|a| a.ends_with("link.sh")))
        .expect("the script's job");
    let real = std::fs::canonicalize(&script).expect("canonical");
    assert_eq!(
        job.script_target.as_deref(),
        Some(real.to_string_lossy().as_ref())
    );
    // The hint, from the environment of the process that carries it.
    let hinted = a
        .procs
        .iter()
        .find(|p| p.env_agent.is_some())
        .expect("hinted");
    assert_eq!(hinted.argv, ["sleep", "300"]);
    for source in [&mut linux as &mut dyn ProcReader, &mut portable] {
        assert_eq!(
            source.env_var(hinted.pid, "TEND_AGENT").as_deref(),
            Some("claude")
        );
        assert_eq!(source.env_var(hinted.pid, "TEND_NOTHING"), None);
    }
    // The probe: the same group, and no terminal here.
    assert_eq!(
        portable.probe(pid).expect("probe"),
        linux.probe(pid).expect("probe")
    );
    assert_eq!(portable.probe(pid).expect("probe").tpgid, None);
}

#[test]
fn both_backends_hold_the_walk_limits() {
    let sh = Kid(Command::new("sh")
        .arg("-c")
        .arg("sleep 300 & sleep 301 & sleep 302 & wait")
        .spawn()
        .expect("sh"));
    let pid = sh.0.id();
    let limits = tend_detector::identity::WalkLimits {
        max_depth: 4,
        max_procs: 3,
    };
    let mut linux = ProcFs::new().with_limits(limits);
    assert!(
        poll_until(Duration::from_secs(30), Duration::from_millis(5), || {
            let procs = linux.sample(pid).expect("sample").procs;
            procs.iter().filter(|p| p.comm == "sleep").count() >= 2
        }),
        "the jobs never started"
    );
    let (a, b) = agreeing(pid, limits);
    assert_eq!(a.procs.len(), 3);
    assert!(a.truncated && b.truncated);
    assert_eq!(seen(&b.procs), seen(&a.procs));
}

#[test]
fn a_shell_that_is_gone_is_gone_for_both() {
    let mut c = Command::new("true").spawn().expect("true");
    let pid = c.id();
    c.wait().expect("wait");
    let (mut linux, mut portable) = sources();
    for source in [&mut linux as &mut dyn ProcReader, &mut portable] {
        assert!(matches!(
            source.sample(pid),
            Err(tend_core::source::SampleError::Gone(p)) if p == pid
        ));
        assert!(matches!(
            source.probe(pid),
            Err(tend_core::source::SampleError::Gone(p)) if p == pid
        ));
    }
}

#[test]
fn both_exit_watches_report_a_real_exit_once() {
    let mut a = Kid(Command::new("sleep").arg("300").spawn().expect("sleep"));
    let b = Kid(Command::new("sleep").arg("300").spawn().expect("sleep"));
    let mut pidfd = ExitWatch::pidfd();
    let mut liveness = ExitWatch::liveness();
    assert!(!pidfd.polled() && liveness.polled());
    assert!(pidfd.doorbell().is_some() && liveness.doorbell().is_none());
    for w in [&mut pidfd, &mut liveness] {
        assert!(w.watch(7, a.0.id()));
        assert!(w.watch(9, b.0.id()));
        assert_eq!(w.watching(7), Some(a.0.id()));
        assert!(w.take_ended().is_empty(), "both alive");
    }
    // Ended and reaped (a zombie still exists for `kill(pid, 0)`).
    a.0.kill().expect("kill");
    a.0.wait().expect("wait");
    for w in [&mut pidfd, &mut liveness] {
        let ended = wait_for(Duration::from_secs(10), "the end to be reported", || {
            let ended = w.take_ended();
            (!ended.is_empty()).then_some(ended)
        });
        assert_eq!(ended, [7]);
        assert_eq!(w.watching(7), None, "reported once, then forgotten");
        assert!(w.take_ended().is_empty());
        assert_eq!(w.watching(9), Some(b.0.id()));
        // A process already gone is not watched.
        assert!(!w.watch(7, a.0.id()));
        w.unwatch(9);
        assert_eq!(w.watching(9), None);
    }
    // The disabled watch watches nothing.
    assert!(!ExitWatch::disabled().watch(1, std::process::id()));
}
