//! Naming an agent from its screen (the manifests' `[[identity.screen]]`
//! markers) over every real recording in the corpus, as if each had run
//! behind `ssh`: the screen is read every 500 ms through the identity
//! tracker's hysteresis, with a wrapper in the foreground and no agent
//! process.
//!
//! The bars, for every recording (in-sample and held out):
//!
//! * no reading ever shows another agent's live UI, and no other agent is
//!   ever named;
//! * an agent whose live UI is on the screen for 8 s or more is named,
//!   within 6 s of the UI's first frame where the agent draws its prompt at
//!   once;
//! * once named, it is not dropped while its run lasts (a drop would read
//!   as `exited`);
//! * after it exits (the wrapper still running, the shell's prompt on the
//!   screen for 20 s more), its markers no longer match and it is dropped.
//!
//! The held-out part is measured like the rest, and marked `held`. While
//! writing markers, `TEND_IN_SAMPLE_ONLY=1` leaves it out (markers, like
//! rules, are written against in-sample recordings only), and
//! `TEND_SHOW_MISSES=<agent>/<case>` prints the screens of that recording's
//! run on which its agent's markers do not match.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tend_detector::cast::{Cast, EventKind};
use tend_detector::identity::{
    self, ChangeReason, Foreground, IdentityTracker, Resolution, WrapperKind, WrapperSeen,
};
use tend_detector::rules::{self, ScreenView};
use tend_detector::screen::Screen;
use tend_detector::Registry;

const STEP: f64 = 0.5;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

fn holdout() -> Vec<String> {
    let text = std::fs::read_to_string(corpus_dir().join("SPLIT.toml")).expect("SPLIT.toml");
    let v: toml::Value = toml::from_str(&text).expect("SPLIT.toml is TOML");
    let mut held: Vec<String> = v["holdout"]
        .as_array()
        .expect("holdout")
        .iter()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect();
    let burned: Vec<String> = v
        .get("burned")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| {
            b.as_str()
                .or_else(|| b.get("name").and_then(toml::Value::as_str))
                .map(str::to_owned)
        })
        .collect();
    held.retain(|h| !burned.contains(h));
    held
}

fn recordings() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for agent in std::fs::read_dir(corpus_dir()).expect("corpus").flatten() {
        if !agent.path().is_dir() {
            continue;
        }
        for case in std::fs::read_dir(agent.path())
            .expect("agent dir")
            .flatten()
        {
            if case.path().join("pane.cast").is_file() {
                let name = format!(
                    "{}/{}",
                    agent.file_name().to_string_lossy(),
                    case.file_name().to_string_lossy()
                );
                out.push((name, case.path()));
            }
        }
    }
    out.sort();
    out
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

/// A sample of a pane whose foreground is `ssh`, with no agent process.
fn behind_ssh() -> Resolution {
    Resolution {
        agent: None,
        foreground: Foreground::Group {
            pgid: 9,
            members: 1,
        },
        via_ancestor: false,
        examined: 2,
        truncated: false,
        wrapper: Some(WrapperSeen {
            pid: 9,
            name: "ssh".into(),
            kind: WrapperKind::Remote,
        }),
    }
}

#[derive(Default)]
struct Outcome {
    name: String,
    held: bool,
    /// Seconds of the run (first labelled state to its exit or the end).
    live: f64,
    /// Readings of the run on which the agent's own markers matched.
    own: usize,
    readings: usize,
    /// When it was named, after the run began.
    named_after: Option<f64>,
    /// Readings that showed another agent (with the first such screen).
    foreign: Vec<String>,
    /// Another agent named.
    wrong: Vec<String>,
    /// Drops while the run lasted.
    dropped: Vec<String>,
    /// The run ends with the agent's exit (labelled).
    exits: bool,
    /// Readings after its exit (plus 1 s) on which its markers matched.
    after_exit: usize,
    /// When it was dropped after its exit.
    dropped_after_exit: Option<f64>,
}

fn run(registry: &Registry, name: &str, dir: &Path, held: bool) -> Outcome {
    let cast = Cast::parse(&std::fs::read_to_string(dir.join("pane.cast")).expect("cast"))
        .expect("valid cast");
    let labels: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("labels.json")).expect("labels"))
            .expect("labels json");
    let agent = labels["expected_agent"]
        .as_str()
        .or(labels["agent"].as_str())
        .expect("agent")
        .to_owned();
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
    let mut out = Outcome {
        name: name.to_owned(),
        held,
        exits: exit.is_some(),
        ..Outcome::default()
    };
    let Some(start) = start else {
        return out;
    };
    out.live = (end - start).max(0.0);
    let mut screen = Screen::with_history(cast.header.height, cast.header.width, 0);
    let mut tracker = IdentityTracker::new();
    let res = behind_ssh();
    let mut next = 0.0f64;
    let mut last_output = None;
    let mut events = cast.events.iter().peekable();
    // After an exit the shell's prompt stays on the screen (the wrapper
    // still running): 20 s more of it.
    let total = cast.duration().as_secs_f64() + if exit.is_some() { 20.0 } else { STEP };
    while next <= total {
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
        let view = view_of(&screen);
        let in_run = next >= start && next < end;
        for m in registry.iter() {
            if rules::screen_marker(&view, m).is_some() {
                if m.id == agent {
                    if in_run {
                        out.own += 1;
                    }
                    if exit.is_some_and(|x| next > x + 1.0) {
                        out.after_exit += 1;
                    }
                } else if out.foreign.len() < 3 {
                    let rows: Vec<&str> = view
                        .rows
                        .iter()
                        .map(String::as_str)
                        .filter(|r| !r.trim().is_empty())
                        .collect();
                    out.foreign.push(format!(
                        "t={next:.1} {} (title {:?}):\n{}",
                        m.id,
                        view.title,
                        rows[rows.len().saturating_sub(8)..].join("\n")
                    ));
                }
            }
        }
        if in_run {
            out.readings += 1;
            if std::env::var("TEND_SHOW_MISSES").is_ok_and(|n| n == name)
                && registry
                    .get(&agent)
                    .and_then(|m| rules::screen_marker(&view, m))
                    .is_none()
            {
                let rows: Vec<&str> = view
                    .rows
                    .iter()
                    .map(String::as_str)
                    .filter(|r| !r.trim().is_empty())
                    .collect();
                println!(
                    "MISS t={next:.1} title={:?} alt={}\n{}",
                    view.title,
                    view.alternate,
                    rows[rows.len().saturating_sub(14)..].join("\n")
                );
            }
        }
        let mut reading = identity::read_screen(registry, &view, tracker.screen_named());
        reading.last_output = last_output;
        let at = Duration::from_secs_f64(next);
        if let Some(c) = tracker.observe_with_screen(at, &res, false, Some(&reading)) {
            match (&c.to, c.reason) {
                (Some(a), _) if *a == agent => {
                    out.named_after.get_or_insert(next - start);
                }
                (Some(a), _) => out.wrong.push(format!("t={next:.1} {a}")),
                (None, reason) if next < end - 1.0 => {
                    out.dropped.push(format!("t={next:.1} {reason:?}"));
                }
                (None, ChangeReason::ScreenGone) if exit.is_some() => {
                    out.dropped_after_exit = Some(next - end);
                }
                (None, _) => {}
            }
        }
        next += STEP;
    }
    out
}

#[test]
fn agents_behind_a_wrapper_are_named_from_their_screens() {
    let registry = Registry::bundled();
    let held = holdout();
    let with_markers: Vec<String> = registry
        .iter()
        .filter(|m| !m.screen_identity.is_empty())
        .map(|m| m.id.clone())
        .collect();
    let mut failures = Vec::new();
    let mut table = String::new();
    let (mut n_in, mut named_in, mut n_held, mut named_held) = (0, 0, 0, 0);
    for (name, dir) in recordings() {
        let agent = name.split('/').next().unwrap_or_default().to_owned();
        let is_held = held.contains(&name);
        if is_held && std::env::var_os("TEND_IN_SAMPLE_ONLY").is_some() {
            continue;
        }
        let o = run(&registry, &name, &dir, is_held);
        if !with_markers.contains(&agent) {
            assert!(o.foreign.is_empty(), "{name}: {}", o.foreign.join("\n"));
            continue;
        }
        let share = if o.readings == 0 {
            0.0
        } else {
            o.own as f64 / o.readings as f64 * 100.0
        };
        table.push_str(&format!(
            "{:<34} {:>5} run {:>6.1}s  markers on {:>5.1} % of it  named after {}{}\n",
            o.name,
            if o.held { "held" } else { "" },
            o.live,
            share,
            o.named_after
                .map(|t| format!("{t:.1}s"))
                .unwrap_or_else(|| "-".into()),
            if o.exits {
                format!(
                    "  exit: markers on {} readings after it, dropped {}",
                    o.after_exit,
                    o.dropped_after_exit
                        .map(|t| format!("{t:.1}s after it"))
                        .unwrap_or_else(|| "never".into())
                )
            } else {
                String::new()
            }
        ));
        if o.held {
            n_held += 1;
            named_held += usize::from(o.named_after.is_some());
        } else {
            n_in += 1;
            named_in += usize::from(o.named_after.is_some());
        }
        if !o.foreign.is_empty() {
            failures.push(format!(
                "{name}: another agent's markers match:\n{}",
                o.foreign.join("\n")
            ));
        }
        if !o.wrong.is_empty() {
            failures.push(format!("{name}: named another agent: {:?}", o.wrong));
        }
        if !o.dropped.is_empty() {
            failures.push(format!("{name}: dropped during its run: {:?}", o.dropped));
        }
        if o.exits && o.named_after.is_some() && o.after_exit > 0 {
            failures.push(format!(
                "{name}: its markers match {} readings after it exited",
                o.after_exit
            ));
        }
        if o.exits && o.named_after.is_some() && o.dropped_after_exit.is_none() {
            failures.push(format!(
                "{name}: still named 20 s after it exited behind a running wrapper"
            ));
        }
        if o.live >= 8.0 && o.named_after.is_none() {
            failures.push(format!("{name}: never named in a {:.0} s run", o.live));
        }
    }
    println!(
        "{table}named: in-sample {named_in}/{n_in} recordings, held-out {named_held}/{n_held}"
    );
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}

/// A marker's example is named by it, and by no other agent's marker.
#[test]
fn every_marker_names_its_own_example_and_no_other() {
    let registry = Registry::bundled();
    let mut failures = Vec::new();
    let mut checked = 0;
    for m in registry.iter() {
        for marker in &m.screen_identity {
            let Some(example) = &marker.example else {
                failures.push(format!("{}: no example", marker.id));
                continue;
            };
            checked += 1;
            let mut view = ScreenView::from_text(example.trim_matches('\n'));
            view.title = marker.example_title.clone().unwrap_or_default();
            view.alternate = marker.alt_screen.unwrap_or(false);
            let reading = identity::read_screen(&registry, &view, None);
            match reading.sighting {
                Some(s) if s.agent == m.id => {}
                other => failures.push(format!(
                    "{}: its example reads as {other:?} (ambiguous: {:?})",
                    marker.id, reading.ambiguous
                )),
            }
        }
    }
    assert!(checked >= 9, "only {checked} markers checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
