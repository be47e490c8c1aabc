//! A pane's evaluations reuse what the last ones read ([`rules::Memo`]):
//! over every recording in the corpus, the memo's evaluation gives
//! exactly what a fresh one gives, at every 50 ms step of the replay (the
//! daemon's base evaluation interval), for the recording's own agent and
//! for one other manifest (rules that do not match, read by a memo too).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tend_detector::cast::{Cast, EventKind};
use tend_detector::rules::{self, Memo, ScreenView};
use tend_detector::screen::Screen;
use tend_detector::{Manifest, Registry};

const STEP: Duration = Duration::from_millis(50);

fn recordings() -> Vec<(String, PathBuf)> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut out = Vec::new();
    for agent in std::fs::read_dir(&corpus).expect("corpus").flatten() {
        for case in std::fs::read_dir(agent.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if case.path().join("pane.cast").is_file() {
                let agent = agent.file_name().to_string_lossy().into_owned();
                out.push((agent, case.path()));
            }
        }
    }
    out.sort();
    out
}

/// The screen as the detector reads it (a progress word only in the
/// recordings that send one: each rule looks at it as text like any
/// other region).
fn view_of(s: &mut Screen, progress: &str) -> ScreenView {
    ScreenView {
        rows: s.rows_updated().to_vec(),
        title: s.title().to_owned(),
        progress: progress.to_owned(),
        alternate: s.alternate(),
        cursor: s.cursor(),
    }
}

/// Replays `dir` and compares the two evaluations at every step; returns
/// the number of steps compared.
fn replay(dir: &Path, manifests: &[Arc<Manifest>]) -> usize {
    let text = std::fs::read_to_string(dir.join("pane.cast")).expect("pane.cast");
    let cast = Cast::parse(&text).expect("valid cast");
    let mut screen = Screen::with_history(cast.header.height, cast.header.width, 0);
    let mut memos: Vec<Memo> = manifests.iter().map(|_| Memo::default()).collect();
    let mut events = cast.events.iter().peekable();
    let (mut at, mut steps) = (Duration::ZERO, 0);
    let mut progress = String::new();
    while at <= cast.duration() + STEP {
        while let Some(ev) = events.next_if(|e| e.at <= at) {
            match &ev.kind {
                EventKind::Output(b) => screen.process(b),
                EventKind::Resize(c, r) => screen.resize(*r, *c),
                _ => {}
            }
        }
        for s in screen.drain_signals() {
            if let tend_detector::signals::Signal::Progress(p) = s {
                p.word().clone_into(&mut progress);
            }
        }
        let view = view_of(&mut screen, &progress);
        for (m, memo) in manifests.iter().zip(&mut memos) {
            let fresh = rules::evaluate(&view, m);
            let kept = rules::evaluate_with(&view, m, memo);
            assert_eq!(
                kept,
                fresh,
                "{} at {:.2}s, manifest {}",
                dir.display(),
                at.as_secs_f64(),
                m.id
            );
        }
        steps += 1;
        at += STEP;
    }
    steps
}

#[test]
fn the_memo_gives_what_a_fresh_evaluation_gives_on_every_recording() {
    let registry = Registry::bundled();
    let shared = |id: &str| Arc::new(registry.get(id).expect("bundled manifest").clone());
    let (claude, codex) = (shared("claude"), shared("codex"));
    let mut steps = 0;
    let mut played = 0;
    for (agent, dir) in recordings() {
        let Some(own) = registry.get(&agent) else {
            continue;
        };
        let other = if agent == "claude" { &codex } else { &claude };
        steps += replay(&dir, &[Arc::new(own.clone()), other.clone()]);
        played += 1;
    }
    println!("{played} recordings, {steps} steps, every evaluation the same");
    assert!(played > 100, "only {played} recordings found");
}
