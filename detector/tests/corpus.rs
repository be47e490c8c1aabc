//! The detector against recordings of real agent CLIs (`tests/corpus/`).
//!
//! Each recording is replayed exactly as `tend replay` does (pane output
//! plus the process snapshots taken beside it) and the predicted state is
//! sampled every 250 ms against the labelled timeline, outside each
//! boundary's uncertainty window plus 2 s of grace. *Exact* means state and
//! (when waiting) reason agree; *coarse* means the reading a user acts on
//! agrees, as the status line counts it: busy (working, directing), needs
//! you (waiting, or a finished turn to review), idle, ended.
//!
//! The corpus is split (`tests/corpus/SPLIT.toml`): rules are written
//! against the in-sample part only, and the held-out part says how tend does
//! on screens it was not written against. The bars:
//!
//! * in-sample: ≥ 97 % exact pooled, ≥ 90 % on every recording (coarse
//!   ≥ 99 % on the few whose screen shows no difference, [`no_screen_evidence`]);
//! * held-out: ≥ 97 % exact and ≥ 99 % coarse pooled, and ≥ 99 % exact on
//!   each agent's part (without [`no_screen_evidence`]'s recordings, held to
//!   coarse ≥ 99 % instead; both figures are printed);
//! * everywhere: every labelled approval / question / error / limit
//!   segment detected, and never waiting or completed while the label says working.
//!
//! Recordings in which the agent reports its own state (OSC 7501, recorded
//! under `tend run`: `<scenario>~tend-run@WxH`) are printed here with what
//! the screen alone reads of them, and held to no bar: there the agent's
//! word decides, and `tend/tests/word_corpus.rs` scores them as
//! `tend replay` reads them, word and screen together.
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

/// `tests/corpus/`, or the folder `TEND_CORPUS` names (a copy being
/// recorded into, say).
fn corpus_dir() -> PathBuf {
    match std::env::var_os("TEND_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus"),
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
    // A folder saved by `tend capture` carries tend's own states as a
    // draft: scored against itself it would prove nothing.
    assert!(
        labels["reviewed"] != Value::Bool(false),
        "{}: labels.json is an unreviewed draft (tend capture): correct its states to what the \
         agent really did, then set \"reviewed\": true",
        dir.display()
    );
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
    Recording {
        name: load_name(dir),
        cast,
        procs,
        labels,
        agent,
    }
}

/// Whether the recording was made under `tend run`, whose relay answers the
/// agent's OSC 7501 query so that its reports are taken. An agent that
/// reports without being asked (Codex 0.171) in a plain pane is read by
/// its screen, as tend reads it there, and held to the bars.
fn under_relay(name: &str) -> bool {
    name.contains("~tend-run")
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
            if case.path().is_dir() {
                for f in ["labels.json", "pane.cast", "meta.json"] {
                    assert!(
                        case.path().join(f).is_file(),
                        "{}: {f} is missing (an incomplete recording)",
                        case.path().display()
                    );
                }
                out.push(case.path());
            }
        }
    }
    out.sort();
    out
}

fn load_name(dir: &Path) -> String {
    format!(
        "{}/{}",
        dir.parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy())
            .unwrap_or_default(),
        dir.file_name()
            .map(|s| s.to_string_lossy())
            .unwrap_or_default()
    )
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

/// The coarse reading a user acts on, as the status line counts it: busy
/// (working, directing), needs you (waiting for any reason, or a finished
/// turn to review: both are in "N agents need you"), idle, ended.
fn coarse(s: Option<State>) -> u8 {
    match s {
        Some(State::Working | State::Directing) => 1,
        Some(State::Waiting | State::Completed) => 2,
        Some(State::Idle) => 3,
        Some(State::Exited) => 4,
        None => 0,
    }
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
    coarse: usize,
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
            // The agent is still starting (not scored): whatever the
            // screen shows then, nothing may ask for the user.
            let mut x = start;
            while x < end {
                if state_at(ts, x).0 == Some(State::Waiting) {
                    s.false_demand += 1;
                }
                x += STEP;
            }
            continue;
        };
        let reason = b["reason"].as_str().and_then(Reason::parse);
        let need = label == State::Waiting
            && matches!(
                reason,
                Some(Reason::Approval | Reason::Question | Reason::Error | Reason::Limit)
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
                if coarse(ps) == coarse(Some(label)) {
                    s.coarse += 1;
                }
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

/// The held-out recordings (`tests/corpus/SPLIT.toml`): no rule was
/// written against them, so their figure is the honest one.
fn holdout() -> Vec<String> {
    let path = corpus_dir().join("SPLIT.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (the corpus split is missing)", path.display()));
    let v: toml::Value = toml::from_str(&text).expect("SPLIT.toml is TOML");
    v["holdout"]
        .as_array()
        .expect("SPLIT.toml: holdout = [ ... ]")
        .iter()
        .map(|x| x.as_str().expect("a case name").to_owned())
        .collect()
}

/// Recordings (by name prefix) whose screen holds nothing that tells the
/// labelled state from the one tend reads, each with what was looked for
/// (`SPLIT.toml`'s `[no_screen_evidence]`, written by
/// `tools/agentlab/split.py`). They are held to coarse ≥ 99 % instead of
/// the exact bars and stay in the pooled figures.
fn no_screen_evidence() -> Vec<(String, String)> {
    let path = corpus_dir().join("SPLIT.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let v: toml::Value = toml::from_str(&text).expect("SPLIT.toml is TOML");
    v.get("no_screen_evidence")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flatten()
        .map(|(prefix, why)| {
            let why = why.as_str().expect("no_screen_evidence: a reason");
            (prefix.clone(), why.to_owned())
        })
        .collect()
}

/// Figures of one part of the corpus.
#[derive(Default)]
struct Part {
    n: usize,
    exact: usize,
    coarse: usize,
    need: usize,
    caught: usize,
    recordings: usize,
}

impl Part {
    fn add(&mut self, s: &Score) {
        self.n += s.n;
        self.exact += s.exact;
        self.coarse += s.coarse;
        self.need += s.need;
        self.caught += s.caught;
        self.recordings += 1;
    }
    fn exact(&self) -> f64 {
        self.exact as f64 / self.n.max(1) as f64
    }
    fn coarse(&self) -> f64 {
        self.coarse as f64 / self.n.max(1) as f64
    }
    fn line(&self, name: &str) -> String {
        format!(
            "{name}: {} recordings, n={} exact={:.4} coarse={:.4} caught={}/{}",
            self.recordings,
            self.n,
            self.exact(),
            self.coarse(),
            self.caught,
            self.need
        )
    }
}

#[test]
fn corpus_agreement_with_labels() {
    let dirs = recordings();
    let holdout = holdout();
    let unreadable = no_screen_evidence();
    let names: Vec<String> = dirs.iter().map(|d| load_name(d)).collect();
    for h in &holdout {
        assert!(
            names.contains(h),
            "SPLIT.toml names {h}, which is not in the corpus"
        );
    }
    // Two threads: the replays are independent and CI has two cores.
    let scores: Vec<(String, (Score, bool))> = std::thread::scope(|scope| {
        let halves: Vec<_> = [0usize, 1]
            .iter()
            .map(|&k| {
                let dirs = &dirs;
                scope.spawn(move || {
                    dirs.iter()
                        .skip(k)
                        .step_by(2)
                        .map(|dir| {
                            let rec = load(dir);
                            let ts = run(&rec, &rec.cast);
                            (rec.name.clone(), (score(&rec, &ts), under_relay(&rec.name)))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(String, (Score, bool))> = halves
            .into_iter()
            .flat_map(|h| h.join().expect("replay thread"))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    });
    let (mut seen, mut held) = (Part::default(), Part::default());
    // Each agent's held-out part on its own: one agent's misses must not
    // hide in the others' figures.
    let mut held_by_agent: std::collections::BTreeMap<String, Part> = Default::default();
    // The same without the recordings of no_screen_evidence: what the
    // per-agent bar holds.
    let mut held_readable: std::collections::BTreeMap<String, Part> = Default::default();
    let mut failures = Vec::new();
    if dirs.len() < 84 {
        failures.push(format!(
            "expected the whole corpus (84 recordings or more), found {}",
            dirs.len()
        ));
    }
    let mut table = String::new();
    let mut word_table = String::new();
    for (name, (s, word)) in &scores {
        let is_held = holdout.contains(name);
        if *word {
            word_table.push_str(&format!(
                "{}{:<34} n={:>4} exact={:.3} coarse={:.3} caught={}/{} false_demand={} (the screen alone)\n",
                if is_held { "H " } else { "  " },
                name,
                s.n,
                s.exact as f64 / s.n.max(1) as f64,
                s.coarse as f64 / s.n.max(1) as f64,
                s.caught,
                s.need,
                s.false_demand,
            ));
            continue;
        }
        let share = s.exact as f64 / s.n.max(1) as f64;
        table.push_str(&format!(
            "{}{:<34} n={:>4} exact={:.3} coarse={:.3} caught={}/{} false_demand={} {}\n",
            if is_held { "H " } else { "  " },
            name,
            s.n,
            share,
            s.coarse as f64 / s.n.max(1) as f64,
            s.caught,
            s.need,
            s.false_demand,
            s.misses.join("; ")
        ));
        let coarse = s.coarse as f64 / s.n.max(1) as f64;
        let unreadable = unreadable
            .iter()
            .find(|(prefix, _)| name.starts_with(prefix.as_str()))
            .map(|(_, why)| why);
        // Held to the reading a user acts on instead of the exact one.
        if let Some(why) = unreadable.filter(|_| coarse < 0.99) {
            failures.push(format!(
                "{name}: coarse {:.1} % < 99 % (exact is not held here: {why})",
                coarse * 100.0
            ));
        }
        if is_held {
            held.add(s);
            let agent = name.split('/').next().unwrap_or(name);
            held_by_agent.entry(agent.to_owned()).or_default().add(s);
            if unreadable.is_none() {
                held_readable.entry(agent.to_owned()).or_default().add(s);
            }
        } else {
            seen.add(s);
            if unreadable.is_none() && share < 0.90 {
                failures.push(format!("{name}: {:.1} % < 90 %", share * 100.0));
            }
        }
        if s.caught < s.need {
            failures.push(format!(
                "{name}: a labelled approval/question/error/limit segment was never detected"
            ));
        }
        if s.false_demand > 0 {
            failures.push(format!(
                "{name}: {} samples waiting/completed while working, or waiting while it started",
                s.false_demand
            ));
        }
    }
    let per_agent: String = held_by_agent
        .iter()
        .map(|(agent, part)| {
            let mut line = format!("  {}\n", part.line(&format!("held out, {agent}")));
            if let Some(readable) = held_readable.get(agent).filter(|r| r.n != part.n) {
                line.push_str(&format!(
                    "  {}\n",
                    readable.line(&format!("held out, {agent}, where its screen tells"))
                ));
            }
            line
        })
        .collect();
    println!(
        "{table}{}\n{}\n{per_agent}",
        seen.line("IN-SAMPLE"),
        held.line("HELD-OUT")
    );
    if !word_table.is_empty() {
        println!("Agents that report their own state, read by the screen alone (no bar here; tend/tests/word_corpus.rs):\n{word_table}");
    }
    if seen.exact() < 0.97 {
        failures.push(format!(
            "in-sample exact agreement {:.2} % < 97 %",
            seen.exact() * 100.0
        ));
    }
    if held.exact() < 0.97 {
        failures.push(format!(
            "held-out exact agreement {:.2} % < 97 %",
            held.exact() * 100.0
        ));
    }
    for (agent, part) in &held_readable {
        if part.exact() < 0.99 {
            failures.push(format!(
                "{agent}: held-out exact agreement {:.2} % < 99 %",
                part.exact() * 100.0
            ));
        }
    }
    if held.coarse() < 0.99 {
        failures.push(format!(
            "held-out coarse agreement {:.2} % < 99 %",
            held.coarse() * 100.0
        ));
    }
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}

/// No rule may be written against a held-out recording: no manifest cites one.
#[test]
fn no_rule_cites_a_held_out_recording() {
    let agents = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents");
    let holdout = holdout();
    for entry in std::fs::read_dir(&agents).expect("agents dir").flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("manifest");
        for h in &holdout {
            assert!(
                !text.contains(h.as_str()),
                "{} cites the held-out recording {h}",
                entry.path().display()
            );
        }
    }
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
