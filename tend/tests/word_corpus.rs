//! Recordings in which the agent reports its own state: the corpus's
//! `<agent>/<scenario>~tend-run@WxH` (and `~tend-run-ssh`), real CLIs
//! recorded under `tend run` (`tools/agentlab/harness.py record --via
//! tend-run`), whose `pane.cast` holds the agent's OSC 7501 reports beside
//! its screens.
//!
//! Each is replayed as `tend replay --json` reads it — the screen's
//! transitions with the agent's word folded in (the word decides while it
//! says something; a visible dialog of the agent still shows) — and, beside
//! it, with the reports cut out of its bytes: what the screen alone reads
//! of the same run. Sampled every 250 ms against the labels outside each
//! boundary's uncertainty window plus 2 s of grace, as
//! `detector/tests/corpus.rs` samples.
//!
//! The bars, with the word, on every such recording (held out or not):
//! ≥ 97 % exact, every labelled approval/question/error caught, never
//! waiting or completed while the label says working, and at most half a
//! second (boundaries included) shown `completed` while the agent still
//! works — the background shell that the screen alone reads as a finished
//! turn.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const GRACE: f64 = 2.0;
const STEP: f64 = 0.25;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

/// The recordings made under `tend run`.
fn recordings() -> Vec<PathBuf> {
    recordings_where(|name| name.contains("~tend-run"))
}

/// The corpus's recordings whose folder name `pick` takes.
fn recordings_where(pick: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for agent in std::fs::read_dir(corpus_dir()).expect("corpus").flatten() {
        let Ok(cases) = std::fs::read_dir(agent.path()) else {
            continue;
        };
        for case in cases.flatten() {
            let name = case.file_name().to_string_lossy().into_owned();
            if pick(&name) && case.path().join("labels.json").is_file() {
                out.push(case.path());
            }
        }
    }
    out.sort();
    out
}

/// The recording's bytes without OSC 7501 (reports and queries).
fn cut_reports(text: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 || !line.contains("7501") {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut ev: Value = serde_json::from_str(line).expect("cast event");
        if let Some(data) = ev[2].as_str() {
            let mut kept = String::new();
            let mut rest = data;
            while let Some(at) = rest.find("\x1b]7501;") {
                kept.push_str(&rest[..at]);
                let tail = &rest[at..];
                let end = [
                    tail.find('\x07').map(|e| e + 1),
                    tail.find("\x1b\\").map(|e| e + 2),
                ]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(tail.len());
                rest = &tail[end..];
            }
            kept.push_str(rest);
            ev[2] = Value::String(kept);
        }
        out.push_str(&ev.to_string());
        out.push('\n');
    }
    out
}

/// (t, state, reason) of each line `tend replay --json` prints.
fn replay(cast: &Path, agent: &str) -> Vec<(f64, String, Option<String>)> {
    let out = Command::new(env!("CARGO_BIN_EXE_tend"))
        .arg("replay")
        .arg(cast)
        .args(["--agent", agent, "--json"])
        .output()
        .expect("tend replay");
    assert!(
        out.status.success(),
        "tend replay {}: {}",
        cast.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            Some((
                v["t"].as_f64()?,
                v["state"].as_str()?.to_owned(),
                v["reason"].as_str().map(str::to_owned),
            ))
        })
        .collect()
}

#[derive(Default, Debug)]
struct Score {
    n: usize,
    exact: usize,
    need: usize,
    caught: usize,
    false_demand: usize,
    /// Seconds shown `completed` while labelled working or waiting.
    false_completed: f64,
    misses: Vec<String>,
}

fn score(labels: &Value, preds: &[(f64, String, Option<String>)]) -> Score {
    let at = |x: f64| {
        preds
            .iter()
            .take_while(|p| p.0 <= x)
            .last()
            .map(|p| (p.1.as_str(), p.2.as_deref()))
            .unwrap_or(("", None))
    };
    let tl = labels["timeline"].as_array().expect("timeline");
    let dur = labels["duration"].as_f64().expect("duration");
    let unc = |b: &Value, i: usize| b["unc"][i].as_f64().unwrap_or(0.0);
    let excl: Vec<(f64, f64)> = tl[1..]
        .iter()
        .map(|b| {
            let t = b["t"].as_f64().unwrap_or(0.0);
            (t + unc(b, 0).min(0.0), t + unc(b, 1).max(0.0) + GRACE)
        })
        .collect();
    let mut s = Score::default();
    for (i, b) in tl.iter().enumerate() {
        let Some(st) = b["state"].as_str() else {
            continue;
        };
        let rs = b["reason"].as_str();
        let start = b["t"].as_f64().unwrap_or(0.0);
        let end = tl.get(i + 1).and_then(|n| n["t"].as_f64()).unwrap_or(dur);
        let need = st == "waiting" && matches!(rs, Some("approval" | "question" | "error"));
        let mut hit = false;
        let mut x = start;
        while x < end {
            let (ps, pr) = at(x);
            if need && ps == "waiting" && pr == rs {
                hit = true;
            }
            if matches!(st, "working" | "waiting") && ps == "completed" {
                s.false_completed += STEP;
            }
            if !excl.iter().any(|&(a, c)| a <= x && x < c) {
                s.n += 1;
                let ok = ps == st && (st != "waiting" || pr == rs);
                s.exact += usize::from(ok);
                if st == "working" && matches!(ps, "waiting" | "completed") {
                    s.false_demand += 1;
                }
                if !ok && s.misses.len() < 3 {
                    s.misses.push(format!("t={x:.2} label {st} got {ps}"));
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
fn word_corpus_agreement_with_labels() {
    let dirs = recordings();
    if dirs.is_empty() {
        println!("word_corpus: no recording made under tend run");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let mut table = String::new();
    let (mut n, mut ex, mut n_screen, mut ex_screen) = (0, 0, 0, 0);
    let (mut fc, mut fc_screen) = (0.0, 0.0);
    for dir in &dirs {
        let name = format!(
            "{}/{}",
            dir.parent().unwrap().file_name().unwrap().to_string_lossy(),
            dir.file_name().unwrap().to_string_lossy()
        );
        let labels: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("labels.json")).expect("labels"),
        )
        .expect("labels json");
        let agent = labels["expected_agent"].as_str().expect("agent").to_owned();
        let cast = dir.join("pane.cast");
        let word = score(&labels, &replay(&cast, &agent));
        let alone = tmp.path().join(format!("{}.cast", name.replace('/', "_")));
        std::fs::write(
            &alone,
            cut_reports(&std::fs::read_to_string(&cast).expect("cast")),
        )
        .expect("write");
        let screen = score(&labels, &replay(&alone, &agent));
        let share = |s: &Score| s.exact as f64 / s.n.max(1) as f64;
        table.push_str(&format!(
            "{name:<40} n={:>3} word: exact={:.3} caught={}/{} false_demand={} false_completed={:.1}s | \
             screen alone: exact={:.3} caught={}/{} false_demand={} false_completed={:.1}s {}\n",
            word.n,
            share(&word),
            word.caught,
            word.need,
            word.false_demand,
            word.false_completed,
            share(&screen),
            screen.caught,
            screen.need,
            screen.false_demand,
            screen.false_completed,
            word.misses.join("; ")
        ));
        (n, ex, n_screen, ex_screen) = (
            n + word.n,
            ex + word.exact,
            n_screen + screen.n,
            ex_screen + screen.exact,
        );
        fc += word.false_completed;
        fc_screen += screen.false_completed;
        if share(&word) < 0.97 {
            failures.push(format!(
                "{name}: {:.1} % exact < 97 %",
                share(&word) * 100.0
            ));
        }
        if word.caught < word.need {
            failures.push(format!("{name}: a labelled dialog was never read"));
        }
        if word.false_demand > 0 {
            failures.push(format!(
                "{name}: {} samples waiting/completed while working",
                word.false_demand
            ));
        }
        if word.false_completed > 0.5 {
            failures.push(format!(
                "{name}: completed for {:.1} s while the agent still worked",
                word.false_completed
            ));
        }
    }
    println!(
        "{table}POOLED {} recordings: with the word exact={:.4} false_completed={:.1}s; \
         the screen alone exact={:.4} false_completed={:.1}s",
        dirs.len(),
        ex as f64 / n.max(1) as f64,
        fc,
        ex_screen as f64 / n_screen.max(1) as f64,
        fc_screen
    );
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}

/// Codex and Mistral Vibe print their OSC 7501 reports unasked (`app=codex`,
/// `app=vibe`: their manifests' `unasked_reports_app`), and tend takes them
/// while the agent holds the pane's terminal (authority `osc`): every
/// plain recording of each (no relay, no wrapper) replayed with its
/// reports and without them. The figures of both are printed; the bars:
/// every labelled approval, question and error caught, never waiting or
/// completed while the label says working, and never fewer exact samples
/// than the screen alone reads.
#[test]
fn unasked_reports_agreement_with_labels() {
    let registry = tend_detector::Registry::bundled();
    let agents: Vec<String> = registry
        .iter()
        .filter(|m| m.unasked_reports_app.is_some())
        .map(|m| m.id.clone())
        .collect();
    assert_eq!(agents, ["codex", "vibe"], "the agents that report unasked");
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let mut table = String::new();
    for agent in &agents {
        let dirs: Vec<PathBuf> = recordings_where(|name| !name.contains('~'))
            .into_iter()
            .filter(|d| d.parent().and_then(|a| a.file_name()) == Some(agent.as_ref()))
            .collect();
        assert!(!dirs.is_empty(), "no plain recording of {agent}");
        let (mut n, mut ex, mut ex_screen, mut caught, mut need, mut caught_screen) =
            (0, 0, 0, 0, 0, 0);
        for dir in &dirs {
            let name = format!("{agent}/{}", dir.file_name().unwrap().to_string_lossy());
            let labels: Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join("labels.json")).expect("labels"),
            )
            .expect("labels json");
            let cast = dir.join("pane.cast");
            let word = score(&labels, &replay(&cast, agent));
            let alone = tmp.path().join(format!("{}.cast", name.replace('/', "_")));
            std::fs::write(
                &alone,
                cut_reports(&std::fs::read_to_string(&cast).expect("cast")),
            )
            .expect("write");
            let screen = score(&labels, &replay(&alone, agent));
            table.push_str(&format!(
                "{name:<34} n={:>3} osc: exact={:>3} caught={}/{} false_demand={} | \
                 screen alone: exact={:>3} caught={}/{} false_demand={} {}\n",
                word.n,
                word.exact,
                word.caught,
                word.need,
                word.false_demand,
                screen.exact,
                screen.caught,
                screen.need,
                screen.false_demand,
                word.misses.join("; ")
            ));
            n += word.n;
            ex += word.exact;
            ex_screen += screen.exact;
            caught += word.caught;
            caught_screen += screen.caught;
            need += word.need;
            if word.caught < word.need {
                failures.push(format!("{name}: a labelled dialog was never read"));
            }
            if word.false_demand > 0 {
                failures.push(format!(
                    "{name}: {} samples waiting/completed while working",
                    word.false_demand
                ));
            }
            if word.exact < screen.exact {
                failures.push(format!(
                    "{name}: {} exact samples with its reports, {} from the screen alone",
                    word.exact, screen.exact
                ));
            }
        }
        table.push_str(&format!(
            "POOLED {} {agent} recordings, n={n}: with its unasked reports exact={:.4} \
             caught={caught}/{need}; the screen alone exact={:.4} caught={caught_screen}/{need}\n",
            dirs.len(),
            ex as f64 / n.max(1) as f64,
            ex_screen as f64 / n.max(1) as f64,
        ));
    }
    println!("{table}");
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}
