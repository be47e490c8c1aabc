//! Usage limits in the corpus (`tests/corpus/*/limit*`, recorded against
//! the agentlab's plan limits, `tools/agentlab/NOTES.md` "Plan limits"):
//! the words each limit screen shows for its reset read back as the reset
//! the model server set (the label's `resets_at`), and a limit and a plain
//! rate limit are never taken for each other — a 429 the agent retries
//! (`error_429`, `error`) never reads as `waiting/limit`, a limit never as
//! `waiting/error`. `corpus.rs` scores the states themselves.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tend_detector::cast::Cast;
use tend_detector::identity::ProcessInfo;
use tend_detector::limit::parse_reset;
use tend_detector::replay::{self, ProcSample, Replayed};
use tend_detector::{DetectorConfig, Reason, Registry, State};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

/// The recordings whose scenario starts with one of `prefixes`, by name.
fn named(prefixes: &[&str]) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for agent in std::fs::read_dir(corpus()).expect("corpus").flatten() {
        if !agent.path().is_dir() {
            continue;
        }
        for case in std::fs::read_dir(agent.path()).expect("agent").flatten() {
            let file = case.file_name().to_string_lossy().into_owned();
            if case.path().join("labels.json").is_file()
                && prefixes.iter().any(|p| file.starts_with(p))
            {
                let name = format!("{}/{file}", agent.file_name().to_string_lossy());
                out.push((name, case.path()));
            }
        }
    }
    out.sort();
    out
}

struct Run {
    labels: Value,
    /// The Unix time of the recording's start (`t0` of its cast).
    t0: f64,
    replayed: Replayed,
}

fn run(dir: &Path) -> Run {
    let text = std::fs::read_to_string(dir.join("pane.cast")).expect("pane.cast");
    let cast = Cast::parse(&text).expect("a cast");
    let labels: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("labels.json")).expect("labels"))
            .expect("labels json");
    let t0 = cast.header.extra["t0"]
        .as_f64()
        .or(cast.header.timestamp)
        .expect("the cast's start time");
    let procs: Vec<ProcSample> = std::fs::read_to_string(dir.join("procs.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("procs line");
            ProcSample {
                at: Duration::from_secs_f64(v["t"].as_f64().expect("t")),
                procs: serde_json::from_value::<Vec<ProcessInfo>>(v["procs"].clone())
                    .expect("process list"),
            }
        })
        .collect();
    let registry = Registry::bundled();
    let agent = labels["agent"].as_str().expect("agent");
    let manifest = Arc::new(registry.get(agent).expect("manifest").clone());
    let replayed = replay::replay_all(
        &cast,
        manifest,
        &registry,
        Arc::new(DetectorConfig::default()),
        &procs,
    );
    Run {
        labels,
        t0,
        replayed,
    }
}

/// The labelled `waiting(limit)` segments: start, end and the reset.
fn limit_segments(labels: &Value) -> Vec<(f64, f64, Option<i64>)> {
    let tl = labels["timeline"].as_array().expect("timeline");
    let end = labels["duration"].as_f64().unwrap_or(f64::MAX);
    tl.iter()
        .enumerate()
        .filter(|(_, b)| b["reason"] == "limit")
        .map(|(i, b)| {
            let next = tl.get(i + 1).and_then(|n| n["t"].as_f64()).unwrap_or(end);
            (b["t"].as_f64().expect("t"), next, b["resets_at"].as_i64())
        })
        .collect()
}

#[test]
fn the_reset_a_limit_screen_shows_reads_as_the_one_the_server_set() {
    let cases = named(&["limit"]);
    // Claude Code, Codex, Gemini CLI, OpenCode and Pi, each a 5-hour and a
    // weekly limit and a resume, at two sizes at least.
    assert!(cases.len() >= 12, "{} limit recordings", cases.len());
    let mut read = 0;
    for (name, dir) in &cases {
        let r = run(dir);
        for (start, end, want) in limit_segments(&r.labels) {
            // The words the screen shows while the segment lasts (after
            // its start's uncertainty), as the daemon reads them: at the
            // time they appear, in the recording's zone (TZ=UTC).
            let shown: Vec<(f64, &str)> = r
                .replayed
                .resets
                .iter()
                .filter(|(at, _)| at.as_secs_f64() < end)
                .filter_map(|(at, w)| Some((at.as_secs_f64(), w.as_deref()?)))
                .filter(|(at, _)| *at >= start - 1.0)
                .collect();
            match want {
                Some(reset) => {
                    let (at, words) = *shown
                        .first()
                        .unwrap_or_else(|| panic!("{name}: no reset words from t={start:.1}"));
                    let now = (r.t0 + at) as i64;
                    // The agents draw the reset to the minute and drop the
                    // seconds: Gemini CLI adds the server's whole-second
                    // delay to its own clock, so a reset at 10:10:00 can
                    // read "10:09 AM" (gemini/limit@80x24). Within the
                    // minute before the server's reset, never after it.
                    let at_words = parse_reset(words, now, 0)
                        .unwrap_or_else(|| panic!("{name}: {words:?} names no time"));
                    // A span ("in 3 hours 11 minutes", "~191 min") is
                    // counted from the time it appears, and the agents
                    // round it to its last unit: OpenCode rounds the
                    // minutes up, Pi to the nearest. Within a minute of the
                    // server's reset either way.
                    let span = parse_reset(words, now + 1000, 0) == Some(at_words + 1000);
                    let after = if span { 60 } else { 0 };
                    assert!(
                        (reset - 60..=reset + after).contains(&at_words),
                        "{name}: {words:?} at t={at:.1} reads {at_words}, the server's reset is {reset}"
                    );
                    println!("{name}: {words:?} reads {at_words}, the server's reset {reset}");
                    read += 1;
                }
                // The agent names no time (Gemini's daily quota): none read.
                None => {
                    assert!(
                        shown
                            .iter()
                            .all(|(_, w)| parse_reset(w, r.t0 as i64, 0).is_none()),
                        "{name}: {shown:?}"
                    );
                    println!("{name}: no reset named, none read");
                }
            }
        }
    }
    assert!(read >= 10, "{read} resets read");
}

#[test]
fn a_rate_limit_the_agent_retries_never_reads_as_a_usage_limit() {
    let cases = named(&["error"]);
    assert!(cases.len() >= 20, "{} error recordings", cases.len());
    for (name, dir) in &cases {
        let r = run(dir);
        let limit = r
            .replayed
            .transitions
            .iter()
            .find(|t| t.reason == Some(Reason::Limit));
        assert!(limit.is_none(), "{name}: {limit:?}");
    }
}

#[test]
fn a_usage_limit_never_reads_as_an_error() {
    let cases = named(&["limit"]);
    assert!(!cases.is_empty());
    for (name, dir) in &cases {
        let r = run(dir);
        let error = r
            .replayed
            .transitions
            .iter()
            .find(|t| t.to == State::Waiting && t.reason == Some(Reason::Error));
        assert!(error.is_none(), "{name}: {error:?}");
        let limit = r
            .replayed
            .transitions
            .iter()
            .any(|t| t.to == State::Waiting && t.reason == Some(Reason::Limit));
        assert!(limit, "{name}: never read as waiting/limit");
    }
}
