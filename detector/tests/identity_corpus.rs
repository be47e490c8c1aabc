//! Identity resolution over every real process recording in the corpus
//! (`tests/corpus/<agent>/<scenario>/procs.jsonl`).
//!
//! The recordings have no `pgid`/`tpgid` (the resolver then considers every
//! process below the shell); they do carry the agents' real process shapes:
//! claude's native binary with a rewritten argv, codex's node launcher and
//! native binary and daemons, gemini re-executing itself under node, aider
//! under a venv python.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use tend_detector::identity::{
    self, ChangeReason, IdentityTracker, ProcSample, ProcessInfo, ProcessTracker, WalkLimits,
};
use tend_detector::Registry;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

#[derive(Deserialize)]
struct ProcLine {
    t: f64,
    procs: Vec<ProcessInfo>,
}

#[derive(Deserialize)]
struct ScreenLine {
    t: f64,
    #[serde(default)]
    screen: String,
    #[serde(default)]
    alt: bool,
}

struct Recording {
    name: String,
    expected: String,
    scenario: String,
    samples: Vec<ProcSample>,
    /// The agent exits before the recording ends (its labels end in
    /// `exited`): the `exit` scenario, and agents that quit on Ctrl-C.
    ends_exited: bool,
    /// (time, shell prompt visible): from the screen snapshots where the
    /// recording keeps them, else from the labels (the shell's prompt is
    /// back once the agent has exited).
    prompts: Vec<(f64, bool)>,
}

/// Removes CSI/OSC escape sequences (enough for the recorded screens).
fn strip_escapes(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for n in chars.by_ref() {
                    if ('@'..='~').contains(&n) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(n) = chars.next() {
                    if n == '\u{7}' || (n == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn load(dir: &Path) -> Recording {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    let meta: serde_json::Value = serde_json::from_str(&read("meta.json")).unwrap_or_default();
    let labels: serde_json::Value = serde_json::from_str(&read("labels.json")).unwrap_or_default();
    let expected = labels["expected_agent"]
        .as_str()
        .or(meta["agent"].as_str())
        .unwrap_or_default()
        .to_owned();
    let ps1 = meta["env"]["PS1"]
        .as_str()
        .unwrap_or("$ ")
        .trim_end()
        .to_owned();
    let mut samples = Vec::new();
    for (i, line) in read("procs.jsonl").lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: ProcLine = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}: line {}: {e}", dir.display(), i + 1));
        samples.push(ProcSample {
            at: Duration::from_secs_f64(l.t.max(0.0)),
            // Through a `tend run` relay, as the daemon sees the pane.
            procs: identity::look_through_relay(l.procs, identity::is_relay).0,
        });
    }
    let mut prompts = Vec::new();
    for line in read("snapshots.jsonl").lines() {
        if let Ok(s) = serde_json::from_str::<ScreenLine>(line) {
            let text = strip_escapes(&s.screen);
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            prompts.push((s.t, !s.alt && last.trim_end().starts_with(&ps1)));
        }
    }
    if prompts.is_empty() {
        for b in labels["timeline"].as_array().into_iter().flatten() {
            if let (Some(t), Some(state)) = (b["t"].as_f64(), b["state"].as_str()) {
                prompts.push((t, state == "exited"));
            }
        }
    }
    let ends_exited = labels["timeline"]
        .as_array()
        .and_then(|t| t.last())
        .is_some_and(|b| b["state"] == "exited");
    Recording {
        ends_exited,
        name: dir
            .strip_prefix(dir.parent().and_then(Path::parent).unwrap_or(dir))
            .unwrap_or(dir)
            .display()
            .to_string(),
        expected,
        scenario: meta["scenario"].as_str().unwrap_or_default().to_owned(),
        samples,
        prompts,
    }
}

fn recordings() -> Option<Vec<Recording>> {
    let root = corpus_dir();
    let mut out = Vec::new();
    let mut agents: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .collect();
    agents.sort_by_key(|e| e.file_name());
    for agent in agents.iter().filter(|e| e.path().is_dir()) {
        let mut scenarios: Vec<_> = std::fs::read_dir(agent.path()).ok()?.flatten().collect();
        scenarios.sort_by_key(|e| e.file_name());
        for sc in scenarios {
            if sc.path().join("procs.jsonl").is_file() && !behind_ssh(&sc.path()) {
                out.push(load(&sc.path()));
            }
        }
    }
    Some(out)
}

/// A recording of an agent reached through `ssh` (`harness.py record --via
/// ssh|script-ssh`): the pane's tree shows only the wrapper, never the
/// agent (`wrapper_corpus.rs` replays those).
fn behind_ssh(dir: &Path) -> bool {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap_or_default())
            .unwrap_or_default();
    meta["via"].as_str().is_some_and(|v| v.contains("ssh"))
}

/// The prompt visibility at time `t`: the latest reading at or before it.
fn prompt_at(rec: &Recording, t: Duration) -> bool {
    let t = t.as_secs_f64();
    rec.prompts
        .iter()
        .filter(|(at, _)| *at <= t)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .is_some_and(|(_, v)| *v)
}

/// Whether a sample shows a live process below the shell other than the
/// harness's start-up `sleep`.
fn has_agent_process(s: &ProcSample) -> bool {
    s.procs
        .iter()
        .any(|p| p.depth > 0 && !p.argv.is_empty() && p.argv[0] != "sleep")
}

#[test]
fn every_sample_resolves_to_the_expected_agent() {
    let Some(recs) = recordings() else { return };
    assert!(!recs.is_empty(), "corpus folder has no recordings");
    let registry = Registry::bundled();
    let mut checked = 0;
    for rec in &recs {
        assert!(!rec.expected.is_empty(), "{}: no expected agent", rec.name);
        let mut with_agent = 0;
        let mut resolved = 0;
        for s in &rec.samples {
            let r = identity::resolve_pane(&registry, &s.procs, &WalkLimits::default());
            if let Some(m) = &r.agent {
                assert_eq!(
                    m.agent, rec.expected,
                    "{} at {:?}: resolved {m:?} from {:?}",
                    rec.name, s.at, s.procs
                );
                // The match is the agent's own process, not a tool below it.
                let p = s
                    .procs
                    .iter()
                    .find(|p| p.pid == m.pid)
                    .expect("matched pid in sample");
                // (Under `tend run` two deeper: below the relay and its
                // session's leader.)
                let deepest = if rec.name.contains("~tend-run") { 4 } else { 2 };
                assert!(
                    p.depth >= 1 && p.depth <= deepest,
                    "{}: matched at depth {}",
                    rec.name,
                    p.depth
                );
            }
            // A process caught mid-exec or mid-exit (its image not there)
            // is excused: nothing names it yet, or any more. So is a fork
            // caught before its exec, which still shows its parent's image
            // and arguments (the pane's `bash -c "sleep 0.6; exec …"` about
            // to run `sleep`, in claude/limit@120x40's first sample).
            let shell = s.procs.iter().find(|p| p.depth == 0);
            let unexeced_fork = |p: &ProcessInfo| {
                shell.is_some_and(|sh| p.exe == sh.exe && p.argv == sh.argv && p.ppid == sh.pid)
            };
            let in_transition = s
                .procs
                .iter()
                .any(|p| p.depth == 1 && (p.exe.is_empty() || unexeced_fork(p)));
            if has_agent_process(s) && !(in_transition && r.agent.is_none()) {
                with_agent += 1;
                resolved += usize::from(r.agent.is_some());
            }
            // The legacy entry point agrees.
            assert_eq!(
                identity::resolve(&registry, &s.procs).map(|m| m.agent),
                r.agent.map(|m| m.agent)
            );
            checked += 1;
        }
        assert!(with_agent > 0, "{}: no sample shows the agent", rec.name);
        // Apart from processes caught mid-exec or mid-exit (excused above),
        // every sample resolves.
        assert!(
            resolved == with_agent,
            "{}: only {resolved} of {with_agent} samples resolved",
            rec.name
        );
        println!(
            "{}: {resolved}/{with_agent} samples → {}",
            rec.name, rec.expected
        );
    }
    println!(
        "identity_corpus: {} recordings, {checked} samples",
        recs.len()
    );
}

#[test]
fn hysteresis_commits_the_agent_and_drops_it_when_it_exits() {
    let Some(recs) = recordings() else { return };
    let registry = Registry::bundled();
    for rec in &recs {
        let mut tracker = IdentityTracker::new();
        let mut changes = Vec::new();
        let mut first_seen = None;
        for (i, s) in rec.samples.iter().enumerate() {
            let r = identity::resolve_pane(&registry, &s.procs, &WalkLimits::default());
            if r.agent.is_some() && first_seen.is_none() {
                first_seen = Some(i);
            }
            if let Some(c) = tracker.observe(s.at, &r, prompt_at(rec, s.at)) {
                changes.push((i, c));
            }
        }
        let (i, first) = changes
            .first()
            .unwrap_or_else(|| panic!("{}: never committed", rec.name));
        assert_eq!(
            first.to.as_deref(),
            Some(rec.expected.as_str()),
            "{}",
            rec.name
        );
        // A match by image, package path or TEND_AGENT commits at the
        // first sample that shows it; a process name alone at the second.
        let strong = first
            .to
            .as_ref()
            .and_then(|_| {
                rec.samples.get(first_seen.unwrap_or(0)).and_then(|s| {
                    identity::resolve_pane(&registry, &s.procs, &WalkLimits::default()).agent
                })
            })
            .is_some_and(|m| m.is_strong());
        assert_eq!(
            Some(*i),
            first_seen.map(|f| if strong { f } else { f + 1 }),
            "{}: committed at the first strong sample (else the second)",
            rec.name
        );
        assert!(
            changes
                .iter()
                .all(|(_, c)| c.to.is_none() || c.to.as_deref() == Some(&rec.expected)),
            "{}: committed another agent: {changes:?}",
            rec.name
        );
        if rec.scenario == "exit" || rec.ends_exited {
            let (_, last) = changes.last().expect("changes");
            assert_eq!(last.to, None, "{}: still committed after exit", rec.name);
            assert_eq!(last.reason, ChangeReason::ShellBack, "{}", rec.name);
            assert_eq!(tracker.agent(), None);
        } else {
            assert_eq!(changes.len(), 1, "{}: flapped: {changes:?}", rec.name);
            assert_eq!(tracker.agent(), Some(rec.expected.as_str()), "{}", rec.name);
            let e = tracker.evidence();
            assert!(e.agreeing >= 2, "{}: {e:?}", rec.name);
            let m = e.matched.expect("evidence");
            assert!(!m.key.is_empty() && !m.via.is_empty());
        }
    }
}

#[test]
fn process_tracker_sees_the_agent_alive_and_gone() {
    let Some(recs) = recordings() else { return };
    let registry = Registry::bundled();
    for rec in &recs {
        let mut t = ProcessTracker::default();
        let obs: Vec<_> = rec
            .samples
            .iter()
            .filter_map(|s| t.observe(&registry, &rec.expected, s))
            .collect();
        assert!(
            obs.iter().any(|o| o.agent_alive),
            "{}: never alive",
            rec.name
        );
        // CPU is seen where the recording shows some: an agent may start
        // between two samples and use none while it waits (Pi 1.6.0 took
        // 0.35 s of CPU to start, then nothing up to its exit: exit-v1.6.0).
        let used_cpu = rec.samples.windows(2).any(|w| {
            w[1].procs.iter().any(|p| {
                p.depth > 0
                    && w[0]
                        .procs
                        .iter()
                        .any(|q| q.pid == p.pid && q.cpu_ticks < p.cpu_ticks)
            })
        });
        assert!(
            !used_cpu || obs.iter().any(|o| o.cpu_percent.is_some_and(|c| c > 0.0)),
            "{}: no CPU seen",
            rec.name
        );
        if rec.scenario == "exit" || rec.ends_exited {
            assert!(
                !obs.last().expect("obs").agent_alive,
                "{}: alive after exit",
                rec.name
            );
        }
        if rec.scenario == "long_tool" {
            assert!(
                obs.iter().any(|o| o.live_child == Some(true)),
                "{}: the long tool was not seen",
                rec.name
            );
        }
        if rec.scenario.starts_with("idle") {
            // An agent's own start-up helpers may come and go (codex's
            // app-server probes a shell's environment once); a tool held
            // for three samples in a row is a tool.
            let held = obs
                .windows(3)
                .any(|w| w.iter().all(|o| o.live_child == Some(true)));
            assert!(!held, "{}: a tool while idle", rec.name);
        }
    }
}
