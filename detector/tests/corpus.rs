//! The detector against recordings of real agent CLIs (`tests/corpus/`).
//!
//! Each recording is replayed exactly as `tend replay` does (pane output
//! plus the process snapshots taken beside it) and the predicted state is
//! sampled every 250 ms against the labelled timeline, outside each
//! boundary's uncertainty window plus 2 s of grace (the same method as
//! `agentlab/replay_score.py`). The bars:
//!
//! * ≥ 97 % exact agreement (state, and reason when waiting) pooled;
//! * ≥ 90 % on every recording;
//! * every labelled approval / question / error segment detected;
//! * never waiting or completed while the label says working.
//!
//! A second test checks that splitting the output at arbitrary byte
//! boundaries gives the same transitions.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::Value;
use tend_detector::cast::{Cast, Event, EventKind};
use tend_detector::identity::ProcessInfo;
use tend_detector::replay::{self, ProcSample};
use tend_detector::{DetectorConfig, Reason, Registry, State, Transition};

const GRACE: f64 = 2.0;
const STEP: f64 = 0.25;

fn corpus_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let local = root.join("tests/corpus");
    if local.is_dir() {
        local
    } else {
        root.join("../shared/corpus")
    }
}

struct Recording {
    name: String,
    cast: Cast,
    procs: Vec<ProcSample>,
    labels: Value,
    agent: String,
}

fn load(dir: &Path) -> Recording {
    let cast = Cast::parse(&std::fs::read_to_string(dir.join("pane.cast")).expect("pane.cast"))
        .expect("valid cast");
    let labels: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("labels.json")).expect("labels"))
            .expect("labels json");
    let mut procs = Vec::new();
    if let Ok(text) = std::fs::read_to_string(dir.join("procs.jsonl")) {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).expect("procs line");
            let list: Vec<ProcessInfo> =
                serde_json::from_value(v["procs"].clone()).expect("process list");
            procs.push(ProcSample {
                at: Duration::from_secs_f64(v["t"].as_f64().expect("t")),
                procs: list,
            });
        }
    }
    let agent = labels["expected_agent"]
        .as_str()
        .or(labels["agent"].as_str())
        .expect("agent")
        .to_owned();
    let name = format!(
        "{}/{}",
        dir.parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy())
            .unwrap_or_default(),
        dir.file_name()
            .map(|s| s.to_string_lossy())
            .unwrap_or_default()
    );
    Recording {
        name,
        cast,
        procs,
        labels,
        agent,
    }
}

fn recordings() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dir = corpus_dir();
    for agent in std::fs::read_dir(&dir).expect("corpus directory").flatten() {
        if !agent.path().is_dir() {
            continue;
        }
        for case in std::fs::read_dir(agent.path())
            .expect("agent dir")
            .flatten()
        {
            if case.path().join("labels.json").is_file() {
                out.push(case.path());
            }
        }
    }
    out.sort();
    out
}

fn run(rec: &Recording, cast: &Cast) -> Vec<Transition> {
    let registry = Registry::bundled();
    let manifest = registry.get(&rec.agent).expect("manifest").clone();
    replay::replay(
        cast,
        Arc::new(manifest),
        &registry,
        Arc::new(DetectorConfig::default()),
        &rec.procs,
    )
}

fn state_at(ts: &[Transition], x: f64) -> (Option<State>, Option<Reason>) {
    let mut cur = (None, None);
    for t in ts {
        if t.at.as_secs_f64() <= x {
            cur = (Some(t.to), t.reason);
        } else {
            break;
        }
    }
    cur
}

#[derive(Default, Debug)]
struct Score {
    n: usize,
    exact: usize,
    false_demand: usize,
    need: usize,
    caught: usize,
    misses: Vec<String>,
}

fn score(rec: &Recording, ts: &[Transition]) -> Score {
    let tl = rec.labels["timeline"].as_array().expect("timeline");
    let duration = rec.labels["duration"]
        .as_f64()
        .unwrap_or_else(|| tl.last().and_then(|b| b["t"].as_f64()).unwrap_or(0.0) + 5.0);
    let unc = |b: &Value| -> (f64, f64) {
        let u = b["unc"].as_array();
        let lo = u
            .and_then(|u| u.first())
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let hi = u
            .and_then(|u| u.get(1))
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        (lo, hi)
    };
    let excluded: Vec<(f64, f64)> = tl[1..]
        .iter()
        .map(|b| {
            let t = b["t"].as_f64().unwrap_or(0.0);
            let (lo, hi) = unc(b);
            (t + lo.min(0.0), t + hi.max(0.0) + GRACE)
        })
        .collect();
    let mut s = Score::default();
    for (i, b) in tl.iter().enumerate() {
        let start = b["t"].as_f64().unwrap_or(0.0);
        let end = tl
            .get(i + 1)
            .and_then(|n| n["t"].as_f64())
            .unwrap_or(duration);
        let Some(label) = b["state"].as_str().and_then(State::parse) else {
            continue;
        };
        let reason = b["reason"].as_str().and_then(Reason::parse);
        let need = label == State::Waiting
            && matches!(
                reason,
                Some(Reason::Approval | Reason::Question | Reason::Error)
            );
        let mut hit = false;
        let mut x = start;
        while x < end {
            let (ps, pr) = state_at(ts, x);
            if need && ps == Some(State::Waiting) && pr == reason {
                hit = true;
            }
            if !excluded.iter().any(|(a, c)| *a <= x && x < *c) {
                s.n += 1;
                let exact = ps == Some(label) && (label != State::Waiting || pr == reason);
                if exact {
                    s.exact += 1;
                } else if s.misses.len() < 6 {
                    s.misses.push(format!(
                        "t={x:.2} label {label}{} got {}{}",
                        reason.map(|r| format!("/{r}")).unwrap_or_default(),
                        ps.map_or("none".into(), |p| p.to_string()),
                        pr.map(|r| format!("/{r}")).unwrap_or_default()
                    ));
                }
                if label == State::Working && matches!(ps, Some(State::Waiting | State::Completed))
                {
                    s.false_demand += 1;
                }
            }
            x += STEP;
        }
        if need {
            s.need += 1;
            s.caught += usize::from(hit);
        }
    }
    s
}

#[test]
fn corpus_agreement_with_labels() {
    let dirs = recordings();
    assert!(
        dirs.len() >= 28,
        "expected the whole corpus, found {} recordings",
        dirs.len()
    );
    let (mut n, mut exact) = (0, 0);
    let mut failures = Vec::new();
    let mut table = String::new();
    for dir in &dirs {
        let rec = load(dir);
        let ts = run(&rec, &rec.cast);
        let s = score(&rec, &ts);
        let share = s.exact as f64 / s.n.max(1) as f64;
        table.push_str(&format!(
            "{:<28} n={:>4} exact={:.3} caught={}/{} false_demand={} {}\n",
            rec.name,
            s.n,
            share,
            s.caught,
            s.need,
            s.false_demand,
            s.misses.join("; ")
        ));
        n += s.n;
        exact += s.exact;
        if share < 0.90 {
            failures.push(format!("{}: {:.1} % < 90 %", rec.name, share * 100.0));
        }
        if s.caught < s.need {
            failures.push(format!(
                "{}: a labelled approval/question/error segment was never detected",
                rec.name
            ));
        }
        if s.false_demand > 0 {
            failures.push(format!(
                "{}: {} samples waiting/completed while working",
                rec.name, s.false_demand
            ));
        }
    }
    let pooled = exact as f64 / n.max(1) as f64;
    println!("{table}POOLED n={n} exact={pooled:.4}");
    if pooled < 0.97 {
        failures.push(format!("pooled agreement {:.2} % < 97 %", pooled * 100.0));
    }
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}

/// Splits every output event at the given fractions (same timestamp).
fn split(cast: &Cast, cuts: &[f64]) -> Cast {
    let mut events = Vec::with_capacity(cast.events.len() * 2);
    for (i, ev) in cast.events.iter().enumerate() {
        match &ev.kind {
            EventKind::Output(b) if b.len() > 1 => {
                let f = cuts[i % cuts.len()];
                let at = ((b.len() as f64) * f) as usize;
                let at = at.clamp(1, b.len() - 1);
                events.push(Event {
                    at: ev.at,
                    kind: EventKind::Output(b[..at].to_vec()),
                });
                events.push(Event {
                    at: ev.at,
                    kind: EventKind::Output(b[at..].to_vec()),
                });
            }
            _ => events.push(ev.clone()),
        }
    }
    Cast {
        header: cast.header.clone(),
        events,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, .. ProptestConfig::default() })]

    #[test]
    fn chunking_does_not_change_transitions(
        cuts in proptest::collection::vec(0.0f64..1.0, 1..16),
        which in 0usize..4,
    ) {
        let names = ["claude/approval", "codex/question", "aider/question", "gemini/approval"];
        let dir = corpus_dir().join(names[which]);
        let rec = load(&dir);
        let whole = run(&rec, &rec.cast);
        let pieces = run(&rec, &split(&rec.cast, &cuts));
        prop_assert_eq!(whole, pieces);
    }
}

/// Quitting an agent and starting it again before the process sampler sees
/// the gap: the second run is detected as a new run, not stuck in exited.
#[test]
fn a_restarted_agent_starts_a_new_run() {
    let exit = load(&corpus_dir().join("claude/exit"));
    let idle = load(&corpus_dir().join("claude/idle"));
    let offset = exit.cast.duration() + Duration::from_secs(1);
    let mut events = exit.cast.events.clone();
    events.extend(idle.cast.events.iter().map(|e| Event {
        at: e.at + offset,
        kind: e.kind.clone(),
    }));
    let both = Cast {
        header: exit.cast.header.clone(),
        events,
    };
    let registry = Registry::bundled();
    let manifest = Arc::new(registry.get("claude").expect("claude").clone());
    // Screen only: no process snapshots, as when the restart is quick.
    let ts = replay::replay(
        &both,
        manifest,
        &registry,
        Arc::new(DetectorConfig::default()),
        &[],
    );
    let states: Vec<State> = ts.iter().map(|t| t.to).collect();
    let exited = states
        .iter()
        .position(|s| *s == State::Exited)
        .expect("the first run exits");
    assert_eq!(
        states[exited + 1..].first(),
        Some(&State::Idle),
        "{states:?}"
    );
}
