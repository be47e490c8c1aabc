//! The two platform backends against each other in a real terminal: an
//! interactive bash in a tmux pane on a private socket, running a
//! foreground job and a background one. Both backends must read the same
//! tree with the same groups (the foreground group is known only in a
//! terminal), probe the same foreground group, and report the foreground
//! job's end; a sampler of each names the same agent.
//!
//! Linux only: elsewhere only the portable backend is built.
#![cfg(target_os = "linux")]

use crate::support;
use support::shell::{Shell, ShellOptions};

use std::time::{Duration, Instant};

use tend_detector::identity::{ProcessInfo, SamplePolicy};
use tend_detector::Registry;
use tend_platform::linux::ProcFs;
use tend_platform::portable::SysProcs;
use tend_platform::sampler::{PaneWatch, Sampler};
use tend_platform::{ExitWatch, ProcReader};
use tend_testkit::{poll_until, wait_for};

/// What both backends must agree on about a process (not its CPU time:
/// the portable one does not count reaped children; its start to the
/// second: `sysinfo` has seconds; of its state, whether it is a zombie:
/// running or sleeping changes between two reads).
fn seen(procs: &[ProcessInfo]) -> Vec<String> {
    let hz = tend_platform::ticks_per_sec() as u64;
    procs
        .iter()
        .map(|p| {
            format!(
                "{} ppid={} pgid={:?} tpgid={:?} zombie={} comm={} exe={} argv={:?} hint={:?} \
                 depth={} start={:?}",
                p.pid,
                p.ppid,
                p.pgid,
                p.tpgid,
                p.is_zombie(),
                p.comm,
                p.exe,
                p.argv,
                p.env_agent,
                p.depth,
                p.start_ticks.map(|t| t / hz)
            )
        })
        .collect()
}

/// Polls until `done` holds for the Linux backend's sample of the pane
/// (nothing here is timed; the deadline only ends a hung test).
fn until(linux: &mut ProcFs, shell: u32, what: &str, done: impl Fn(&[ProcessInfo]) -> bool) {
    assert!(
        poll_until(Duration::from_secs(30), Duration::from_millis(20), || done(
            &linux.sample(shell).expect("sample").procs
        )),
        "never: {what}"
    );
}

/// Samples the pane with fresh sources of both backends until they agree
/// (the kernel once answered an empty `cmdline` for a settled process on a
/// loaded machine, and the Linux source keeps what it read per process
/// image); at the deadline, the two lists, which then differ.
fn agreeing(shell: u32) -> (Vec<String>, Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let a = seen(&ProcFs::new().sample(shell).expect("linux").procs);
        let b = seen(
            &SysProcs::new()
                .with_list_fresh(Duration::ZERO)
                .sample(shell)
                .expect("portable")
                .procs,
        );
        if a == b || Instant::now() >= deadline {
            return (a, b);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn both_backends_read_a_terminal_the_same_way() {
    let Some(t) = Shell::start("platform-tree", &ShellOptions::default()) else {
        return;
    };
    let shell = t.pane_pid();
    let mut linux = ProcFs::new();
    let mut portable = SysProcs::new().with_list_fresh(Duration::ZERO);
    // A background job, then a foreground pipeline carrying the hint.
    t.type_line("sleep 300 &");
    t.type_line("TEND_AGENT=codex sleep 301 | cat");
    until(&mut linux, shell, "both jobs", |procs| {
        procs.len() == 4 && procs.iter().all(|p| p.comm != "bash" || p.pid == shell)
    });
    let (seen_linux, seen_portable) = agreeing(shell);
    assert_eq!(seen_portable, seen_linux);
    let a = linux.sample(shell).expect("linux");
    // The terminal's foreground group is the pipeline's, for both.
    let fg = a
        .procs
        .iter()
        .find(|p| p.argv == ["sleep", "301"])
        .expect("the foreground sleep");
    assert_eq!(fg.tpgid, fg.pgid);
    assert_eq!(fg.env_agent.as_deref(), Some("codex"));
    let probe = linux.probe(shell).expect("probe");
    assert_eq!(portable.probe(shell).expect("probe"), probe);
    assert_eq!(probe.tpgid, fg.pgid);
    assert!(!probe.shell_foreground());
    // The foreground job ends: both exit watches say so, by the pane's key.
    let leader = fg.pgid.expect("group");
    let mut pidfd = ExitWatch::pidfd();
    let mut liveness = ExitWatch::liveness();
    assert!(pidfd.watch(3, leader) && liveness.watch(3, leader));
    assert!(pidfd.take_ended().is_empty() && liveness.take_ended().is_empty());
    t.cmd(&["send-keys", "-t", "%0", "C-c"]);
    for w in [&mut pidfd, &mut liveness] {
        let ended = wait_for(Duration::from_secs(10), "the end to be reported", || {
            let ended = w.take_ended();
            (!ended.is_empty()).then_some(ended)
        });
        assert_eq!(ended, [3]);
    }
    // The shell holds its terminal again, for both.
    until(&mut linux, shell, "the prompt back", |procs| {
        procs.len() == 2
    });
    let probe = linux.probe(shell).expect("probe");
    assert!(probe.shell_foreground());
    assert_eq!(portable.probe(shell).expect("probe"), probe);
    let (seen_linux, seen_portable) = agreeing(shell);
    assert_eq!(seen_portable, seen_linux);
}

#[test]
fn a_sampler_of_each_backend_names_the_same_agent() {
    let Some(t) = Shell::start("platform-agent", &ShellOptions::default()) else {
        return;
    };
    let shell = t.pane_pid();
    t.type_line("TEND_AGENT=claude sleep 300");
    let registry = Registry::bundled();
    let start = Instant::now();
    for mut sampler in [Sampler::with_root("/proc"), Sampler::portable()] {
        let backend = sampler.backend();
        let mut watch = PaneWatch::new(
            shell,
            0,
            start.elapsed(),
            SamplePolicy::default(),
            Sampler::ticks_per_sec(),
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while watch.agent().is_none() {
            assert!(Instant::now() < deadline, "{backend}: no agent named");
            let at = start.elapsed();
            watch.on_output(at);
            watch.poll(&mut sampler, &registry, at, false);
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(watch.agent(), Some("claude"), "{backend}");
        let m = watch.evidence().matched.expect("match");
        assert_eq!(
            (m.via.as_str(), m.key.as_str()),
            ("env", "TEND_AGENT=claude")
        );
    }
}
