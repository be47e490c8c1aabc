//! Agents recorded behind a real wrapper: the corpus's
//! `<agent>/<scenario>~<via>@WxH` recordings, made with
//! `tools/agentlab/harness.py record --via ssh|script|script-ssh` (the real
//! CLIs reached through `ssh localhost` to a private sshd, through a
//! `#!/bin/sh` script that runs them as a child, or through a script that
//! runs `ssh localhost`).
//!
//! Each recording's process tree (`procs.jsonl`, with `pgid` and `tpgid`)
//! is resolved as the daemon resolves a pane, every 500 ms with the latest
//! sample; when a wrapper holds the terminal and no agent process is found
//! (the tracker asks for it), the screen replayed from `pane.cast` up to
//! that moment is read for the agents' `[[identity.screen]]` markers, and
//! the identity tracker decides. Unlike `screen_identity.rs`, which puts a
//! stand-in `ssh` in front of every recording, the wrapper here is the one
//! the recording's tree really shows.
//!
//! The bars, for every such recording (in-sample and held out):
//!
//! * through `ssh` (`~ssh`, `~script-ssh`): the tree shows the wrapper in
//!   the foreground and no agent below it, and the agent is named from its
//!   screen;
//! * through a script running the agent as a child (`~script`): the agent
//!   is below `sh run-agent.sh` and named by its process;
//! * under `tend run` (`~tend-run`; `~tend-run-ssh` is behind ssh as
//!   above): the tree, seen through the relay as the daemon sees it, shows
//!   the agent, named by its process;
//! * never another agent, and once named not dropped while its run lasts.
//!
//! It prints, per recording, how the agent was named and how long after
//! its run began (the first labelled state); held-out recordings
//! (`tests/corpus/SPLIT.toml`) are marked `held`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tend_detector::cast::{Cast, EventKind};
use tend_detector::identity::{
    self, IdentifiedBy, IdentityTracker, ProcSample, ProcessInfo, WalkLimits,
};
use tend_detector::rules::ScreenView;
use tend_detector::screen::Screen;
use tend_detector::Registry;

const STEP: f64 = 0.5;

fn corpus_dir() -> PathBuf {
    match std::env::var_os("TEND_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus"),
    }
}

fn holdout() -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(corpus_dir().join("SPLIT.toml")) else {
        return Vec::new();
    };
    let v: toml::Value = toml::from_str(&text).expect("SPLIT.toml is TOML");
    let list = |key: &str| -> Vec<String> {
        v.get(key)
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect()
    };
    let burned = list("burned");
    list("holdout")
        .into_iter()
        .filter(|h| !burned.contains(h))
        .collect()
}

/// The recordings made behind a wrapper: (name, folder, via).
fn recordings() -> Vec<(String, PathBuf, String)> {
    let mut out = Vec::new();
    for agent in std::fs::read_dir(corpus_dir()).expect("corpus").flatten() {
        if !agent.path().is_dir() {
            continue;
        }
        for case in std::fs::read_dir(agent.path())
            .expect("agent dir")
            .flatten()
        {
            let Ok(text) = std::fs::read_to_string(case.path().join("meta.json")) else {
                continue;
            };
            let meta: Value = serde_json::from_str(&text).expect("meta.json");
            if let Some(via) = meta["via"].as_str() {
                let name = format!(
                    "{}/{}",
                    agent.file_name().to_string_lossy(),
                    case.file_name().to_string_lossy()
                );
                out.push((name, case.path(), via.to_owned()));
            }
        }
    }
    out.sort();
    out
}

fn samples(dir: &Path) -> Vec<ProcSample> {
    let text = std::fs::read_to_string(dir.join("procs.jsonl")).expect("procs.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("procs line");
            let procs: Vec<ProcessInfo> =
                serde_json::from_value(v["procs"].clone()).expect("process list");
            ProcSample {
                at: Duration::from_secs_f64(v["t"].as_f64().expect("t").max(0.0)),
                // Through a `tend run` relay (`~tend-run`, `~tend-run-ssh`),
                // as the daemon sees the pane.
                procs: identity::look_through_relay(procs, identity::is_relay).0,
            }
        })
        .collect()
}

fn view_of(s: &Screen) -> ScreenView {
    ScreenView {
        rows: s.rows(),
        title: s.title().to_owned(),
        progress: String::new(),
        alternate: s.alternate(),
        cursor: s.cursor(),
    }
}

#[derive(Default)]
struct Outcome {
    /// Seconds of the run (first labelled state to its exit or the end).
    live: f64,
    /// Samples in the run whose tree showed a wrapper and no agent.
    wrapper_samples: usize,
    /// Samples in the run whose tree showed the agent.
    agent_samples: usize,
    /// The wrappers the tree showed (name, kind).
    wrappers: Vec<String>,
    /// When it was named, after the run began, and how.
    named_after: Option<(f64, IdentifiedBy)>,
    /// Another agent named.
    wrong: Vec<String>,
    /// Drops while the run lasted.
    dropped: Vec<String>,
    /// Readings of the screen taken.
    readings: usize,
}

fn run(registry: &Registry, dir: &Path, agent: &str) -> Outcome {
    let cast = Cast::parse(&std::fs::read_to_string(dir.join("pane.cast")).expect("cast"))
        .expect("valid cast");
    let labels: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("labels.json")).expect("labels"))
            .expect("labels json");
    let ps1 = "acc$";
    let timeline = labels["timeline"].as_array().cloned().unwrap_or_default();
    let start = timeline
        .iter()
        .find(|e| e["state"].is_string())
        .and_then(|e| e["t"].as_f64());
    let exit = timeline
        .iter()
        .find(|e| e["state"] == "exited")
        .and_then(|e| e["t"].as_f64());
    let end = exit.unwrap_or_else(|| cast.duration().as_secs_f64());
    let mut out = Outcome::default();
    let Some(start) = start else {
        return out;
    };
    out.live = (end - start).max(0.0);
    let procs = samples(dir);
    let mut screen = Screen::with_history(cast.header.height, cast.header.width, 0);
    let mut tracker = IdentityTracker::new();
    let mut events = cast.events.iter().peekable();
    let mut last_output = None;
    let mut next = 0.0f64;
    while next <= cast.duration().as_secs_f64() {
        while let Some(ev) = events.next_if(|e| e.at.as_secs_f64() <= next) {
            match &ev.kind {
                EventKind::Output(b) => {
                    screen.process(b);
                    last_output = Some(ev.at);
                }
                EventKind::Resize(c, r) => screen.resize(*r, *c),
                _ => {}
            }
        }
        let at = Duration::from_secs_f64(next);
        // The latest process sample at or before now.
        let Some(sample) = procs.iter().rev().find(|s| s.at <= at) else {
            next += STEP;
            continue;
        };
        let res = identity::resolve_pane(registry, &sample.procs, &WalkLimits::default());
        let in_run = next >= start && next < end;
        if in_run {
            if res.agent.is_some() {
                out.agent_samples += 1;
            } else if let Some(w) = &res.wrapper {
                out.wrapper_samples += 1;
                let seen = format!("{} ({:?})", w.name, w.kind);
                if !out.wrappers.contains(&seen) {
                    out.wrappers.push(seen);
                }
            }
        }
        let view = view_of(&screen);
        let prompt = !view.alternate
            && view
                .rows
                .iter()
                .rev()
                .find(|r| !r.trim().is_empty())
                .is_some_and(|r| r.trim_start().starts_with(ps1));
        let reading = tracker.needs_screen(&res).then(|| {
            out.readings += 1;
            let mut r = identity::read_screen(registry, &view, tracker.screen_named());
            r.last_output = last_output;
            r
        });
        if let Some(c) = tracker.observe_with_screen(at, &res, prompt, reading.as_ref()) {
            match &c.to {
                Some(a) if a == agent => {
                    let by = tracker
                        .evidence()
                        .identified_by
                        .unwrap_or(IdentifiedBy::Process);
                    out.named_after.get_or_insert((next - start, by));
                }
                Some(a) => out.wrong.push(format!("t={next:.1} {a}")),
                None if in_run && next < end - 1.0 => {
                    out.dropped.push(format!("t={next:.1} {:?}", c.reason));
                }
                None => {}
            }
        }
        next += STEP;
    }
    out
}

#[test]
fn agents_recorded_behind_wrappers_are_named() {
    let registry = Registry::bundled();
    let held = holdout();
    let recs = recordings();
    if recs.is_empty() {
        println!("no recording behind a wrapper in the corpus");
        return;
    }
    let mut failures = Vec::new();
    let mut table = String::new();
    let mut counts = [[0usize; 2]; 2]; // [in-sample, held][recordings, named]
    for (name, dir, via) in &recs {
        let agent = name.split('/').next().unwrap_or_default();
        let is_held = held.contains(name);
        let o = run(&registry, dir, agent);
        let behind_ssh = via.contains("ssh");
        table.push_str(&format!(
            "{:<46} {:>4} run {:>5.1}s  tree: {} wrapper / {} agent samples {}  named {}  screen read {}x\n",
            name,
            if is_held { "held" } else { "" },
            o.live,
            o.wrapper_samples,
            o.agent_samples,
            if o.wrappers.is_empty() {
                String::new()
            } else {
                format!("[{}]", o.wrappers.join(", "))
            },
            o.named_after
                .map(|(t, by)| format!("by {} after {t:.1}s", by.as_str()))
                .unwrap_or_else(|| "never".into()),
            o.readings,
        ));
        let k = usize::from(is_held);
        counts[k][0] += 1;
        counts[k][1] += usize::from(o.named_after.is_some());
        if behind_ssh {
            if o.agent_samples > 0 {
                failures.push(format!(
                    "{name}: the tree shows an agent process in {} samples (the recording is not \
                     behind a wrapper)",
                    o.agent_samples
                ));
            }
            if o.wrapper_samples == 0 || !o.wrappers.iter().all(|w| w.starts_with("ssh")) {
                failures.push(format!(
                    "{name}: the tree's wrapper is {:?}, not ssh",
                    o.wrappers
                ));
            }
            match o.named_after {
                Some((_, IdentifiedBy::Screen)) => {}
                other => failures.push(format!(
                    "{name}: not named from its screen behind ssh ({other:?})"
                )),
            }
        } else {
            match o.named_after {
                Some((_, IdentifiedBy::Process)) => {}
                other => failures.push(format!(
                    "{name}: not named by its process below the script ({other:?})"
                )),
            }
        }
        if !o.wrong.is_empty() {
            failures.push(format!("{name}: named another agent: {:?}", o.wrong));
        }
        if !o.dropped.is_empty() {
            failures.push(format!("{name}: dropped during its run: {:?}", o.dropped));
        }
    }
    println!(
        "{table}named: in-sample {}/{} recordings, held-out {}/{}",
        counts[0][1], counts[0][0], counts[1][1], counts[1][0]
    );
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}
