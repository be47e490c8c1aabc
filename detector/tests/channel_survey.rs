//! What the agents print beside their screens in a plain pane, with their
//! default settings: the recordings' part of the survey in
//! `docs/ACCURACY.md` (*What each agent says without a wrapper*). Every
//! plain recording (none made under `tend run`) is replayed through tend's
//! own screen, and the signals it reads are held to the survey's claims:
//! no agent sends a desktop notification; Kimi CLI rings the bell when it
//! asks a question, and no agent rings it otherwise; Gemini CLI, Qwen Code
//! 0.24 and Mistral Vibe name their state in the window title.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tend_detector::screen::Screen;
use tend_detector::signals::Signal;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

/// A labelled segment: from `from` to `to` seconds, the state and reason.
struct Segment {
    from: f64,
    to: f64,
    state: String,
    reason: String,
}

struct Recording {
    agent: String,
    name: String,
    segments: Vec<Segment>,
    /// (seconds, signal) in the order the screen read them.
    signals: Vec<(f64, Signal)>,
}

fn load(agent: &str, dir: &Path) -> Option<Recording> {
    let cast = std::fs::read_to_string(dir.join("pane.cast")).ok()?;
    let labels: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("labels.json")).ok()?).ok()?;
    let mut lines = cast.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next()?).ok()?;
    let cols = header["width"].as_u64().unwrap_or(80) as u16;
    let rows = header["height"].as_u64().unwrap_or(24) as u16;
    let mut screen = Screen::new(rows, cols);
    let mut signals = Vec::new();
    for line in lines {
        let Ok(serde_json::Value::Array(ev)) = serde_json::from_str(line) else {
            continue;
        };
        if ev.get(1).and_then(|k| k.as_str()) != Some("o") {
            continue;
        }
        let t = ev[0].as_f64().unwrap_or_default();
        screen.process(ev[2].as_str().unwrap_or_default().as_bytes());
        signals.extend(screen.drain_signals().into_iter().map(|s| (t, s)));
    }
    let timeline = labels["timeline"].as_array()?;
    let end = labels["duration"].as_f64().unwrap_or(f64::MAX);
    let segments = timeline
        .iter()
        .enumerate()
        .map(|(i, e)| Segment {
            from: e["t"].as_f64().unwrap_or_default(),
            to: timeline
                .get(i + 1)
                .and_then(|n| n["t"].as_f64())
                .unwrap_or(end),
            state: e["state"].as_str().unwrap_or_default().to_owned(),
            reason: e["reason"].as_str().unwrap_or_default().to_owned(),
        })
        .collect();
    Some(Recording {
        agent: agent.to_owned(),
        name: dir.file_name()?.to_string_lossy().into_owned(),
        segments,
        signals,
    })
}

/// Every plain recording: those made under `tend run` hold the relay's
/// answers, not what the agent prints in a pane of its own.
fn recordings() -> Vec<Recording> {
    let root = corpus_dir();
    let mut out = Vec::new();
    let Ok(agents) = std::fs::read_dir(&root) else {
        return out;
    };
    let mut agents: Vec<_> = agents.flatten().filter(|e| e.path().is_dir()).collect();
    agents.sort_by_key(|e| e.file_name());
    for agent in agents {
        let name = agent.file_name().to_string_lossy().into_owned();
        let mut dirs: Vec<_> = std::fs::read_dir(agent.path())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().contains("~tend-run"))
            .collect();
        dirs.sort_by_key(|e| e.file_name());
        out.extend(dirs.iter().filter_map(|d| load(&name, &d.path())));
    }
    out
}

fn segment_at(rec: &Recording, t: f64) -> Option<&Segment> {
    rec.segments.iter().find(|s| s.from <= t && t < s.to)
}

/// The title in force at `t`.
fn title_at(rec: &Recording, t: f64) -> Option<&str> {
    rec.signals
        .iter()
        .take_while(|(at, _)| *at <= t)
        .filter_map(|(_, s)| match s {
            Signal::Title(title) => Some(title.as_str()),
            _ => None,
        })
        .last()
}

#[test]
fn no_agent_sends_a_notification_with_its_default_settings() {
    let recs = recordings();
    if recs.is_empty() {
        eprintln!("no corpus at {}: skipped", corpus_dir().display());
        return;
    }
    let sent: Vec<_> = recs
        .iter()
        .filter(|r| {
            r.signals
                .iter()
                .any(|(_, s)| matches!(s, Signal::Notification { .. }))
        })
        .map(|r| format!("{}/{}", r.agent, r.name))
        .collect();
    assert!(sent.is_empty(), "notifications in {sent:?}");
}

#[test]
fn kimi_rings_the_bell_when_it_asks_and_no_agent_rings_it_otherwise() {
    let recs = recordings();
    if recs.is_empty() {
        return;
    }
    let mut kimi_questions = 0;
    for rec in &recs {
        let bells: Vec<f64> = rec
            .signals
            .iter()
            .filter(|(_, s)| *s == Signal::Bell)
            .map(|(t, _)| *t)
            .collect();
        let asks = rec.agent == "kimi" && rec.name.starts_with("question");
        if !asks {
            assert!(
                bells.is_empty(),
                "{}/{}: bell at {bells:?}",
                rec.agent,
                rec.name
            );
            continue;
        }
        kimi_questions += 1;
        assert_eq!(bells.len(), 1, "{}: bells at {bells:?}", rec.name);
        // The bell comes with the question (0.02 to 0.03 s after the
        // model's last byte in the three recordings): within the
        // labelled question, or within the label's own 0.5 s uncertainty
        // before it.
        let asked = rec
            .segments
            .iter()
            .find(|s| s.state == "waiting" && s.reason == "question")
            .expect("a labelled question");
        assert!(
            bells[0] >= asked.from - 0.5 && bells[0] < asked.to,
            "{}: bell at {} s, question labelled {}–{} s",
            rec.name,
            bells[0],
            asked.from,
            asked.to
        );
    }
    assert!(
        kimi_questions >= 3,
        "Kimi's question recordings: {kimi_questions}"
    );
}

/// The title's first word while the labels say working, and while they
/// say waiting on an approval or a question.
const STATE_TITLES: &[(&str, &str, &str, &str)] = &[
    // (agent, recordings whose name contains, working, waiting)
    ("gemini", "", "✦", "✋"),
    ("qwen", "-v0.24.4", "◐\u{fe0e}", "✳\u{fe0e}"),
    ("vibe", "", ">>", "?"),
];

#[test]
fn gemini_qwen_and_vibe_name_their_state_in_the_title() {
    let recs = recordings();
    if recs.is_empty() {
        return;
    }
    let mut checked: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for rec in &recs {
        let Some(&(agent, _, working, waiting)) = STATE_TITLES
            .iter()
            .find(|(a, tag, ..)| *a == rec.agent && rec.name.contains(tag))
        else {
            continue;
        };
        if rec.name.contains('~') {
            continue; // behind a wrapper: the wrapper's title
        }
        for seg in &rec.segments {
            let want = match (seg.state.as_str(), seg.reason.as_str()) {
                ("working", _) => working,
                ("waiting", "approval" | "question") => waiting,
                _ => continue,
            };
            // The middle of a segment of at least a second: away from
            // the boundaries, which the title follows at its own pace.
            if seg.to - seg.from < 1.0 {
                continue;
            }
            let mid = (seg.from + seg.to) / 2.0;
            let title = title_at(rec, mid).unwrap_or_default();
            let entry = checked.entry(agent).or_default();
            entry.0 += 1;
            if title.split_whitespace().next() != Some(want) {
                entry.1 += 1;
                wrong.push(format!(
                    "{agent}/{} at {mid:.1} s ({} {}): title {title:?}",
                    rec.name,
                    seg.state,
                    segment_at(rec, mid).map_or("", |s| s.reason.as_str())
                ));
            }
        }
    }
    eprintln!("segments checked (checked, wrong): {checked:?}");
    for (agent, ..) in STATE_TITLES {
        assert!(
            checked.get(agent).is_some_and(|c| c.0 >= 10),
            "{agent}: too few segments checked: {checked:?}"
        );
    }
    assert!(
        wrong.is_empty(),
        "titles that do not name the state:\n{}",
        wrong.join("\n")
    );
}
