//! `tend replay FILE.cast`: the detector over a recording, and the
//! program's own word (OSC 7501 reports) in it, with one authority at a
//! time as the daemon has it.

use crate::error::ErrorKind;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tend_attention::report::{Authority, Reading, ReportBook, ScreenStatus, Word};
use tend_detector::cast::Cast;
use tend_detector::identity::{self, ProcessInfo};
use tend_detector::replay::{self, ProcSample};
use tend_detector::{DetectorConfig, Reason, Registry, State, Transition, Trigger};

use crate::error::{read_file, CliError};

/// Arguments of `tend replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The asciicast v2 recording.
    pub file: PathBuf,
    /// The agent in the recording (default: resolved from the process
    /// snapshots recorded beside it, `procs.jsonl`).
    #[arg(long)]
    pub agent: Option<String>,
    /// One JSON object per transition and line.
    #[arg(long)]
    pub json: bool,
    /// Process snapshots (JSON lines `{"t": secs, "procs": [...]}`); by
    /// default `procs.jsonl` beside the recording is used when present.
    #[arg(long, conflicts_with = "no_procs")]
    pub procs: Option<PathBuf>,
    /// Ignore process snapshots: screen evidence only.
    #[arg(long)]
    pub no_procs: bool,
}

/// Parses `procs.jsonl`: one `{"t": seconds, "procs": [ProcessInfo…]}` per line.
pub fn parse_procs(text: &str, path: &Path) -> Result<Vec<ProcSample>, CliError> {
    #[derive(serde::Deserialize)]
    struct Line {
        t: f64,
        procs: Vec<ProcessInfo>,
    }
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let l: Line = serde_json::from_str(line).map_err(|e| {
            CliError::new(
                ErrorKind::BadProcs,
                format!(
                    "{} line {}: not a process snapshot ({e}); pass --no-procs to replay the screen alone",
                    path.display(),
                    i + 1
                ),
            )
        })?;
        if l.t.is_finite() && l.t >= 0.0 {
            out.push(ProcSample {
                at: Duration::from_secs_f64(l.t),
                procs: l.procs,
            });
        }
    }
    out.sort_by_key(|s| s.at);
    Ok(out)
}

/// One transition as a JSON line (the documented `--json` format).
pub fn transition_json(t: &Transition) -> serde_json::Value {
    serde_json::json!({
        "t": (t.at.as_secs_f64() * 1000.0).round() / 1000.0,
        "state": t.to.as_str(),
        "reason": t.reason.map(|r| r.as_str()),
        "rule": t.rule,
        "confidence": t.confidence,
        "trigger": t.trigger,
        "from": t.from.map(|s| s.as_str()),
    })
}

/// One line of a replay: a screen transition while the screen decides, or
/// a change of the effective state the program's own word made.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// The screen detector's transition, as it decides.
    Screen(Transition),
    /// The effective state changed because of the program's word: it
    /// took over (`authority: psp`), or let go (`authority: screen`, the
    /// screen's state at that moment), or a dialog on screen overrode it.
    Word {
        /// When.
        at: Duration,
        /// Effective state before.
        from: Option<State>,
        /// Effective state now.
        state: State,
        /// Its reason.
        reason: Option<Reason>,
        /// `psp/…`, or the screen's rule.
        rule: String,
        /// `report` (the word), or the screen's trigger.
        trigger: Trigger,
        /// Who decides now.
        authority: Authority,
        /// The word's message.
        message: Option<String>,
    },
}

/// Folds the screen's transitions and the program's word into what the
/// daemon would show, line by line. With no word in the recording the
/// lines are the transitions, unchanged.
pub fn effective_lines(
    agent: &str,
    transitions: &[Transition],
    words: &[(Duration, Option<Reading>)],
    channel: Authority,
) -> Vec<Line> {
    let book = ReportBook::default();
    let mut out = Vec::new();
    let mut screen: Option<&Transition> = None;
    let mut word: Option<Word> = None;
    let mut shown: Option<(State, Option<Reason>, Authority)> = None;
    let (mut i, mut j) = (0, 0);
    while i < transitions.len() || j < words.len() {
        let take_screen = match (transitions.get(i), words.get(j)) {
            (Some(t), Some((at, _))) => t.at <= *at,
            (Some(_), None) => true,
            _ => false,
        };
        let at = if take_screen {
            screen = transitions.get(i);
            i += 1;
            screen.map_or(Duration::ZERO, |t| t.at)
        } else {
            let (at, w) = &words[j];
            word = w.clone().map(|r| Word::new(r, channel));
            j += 1;
            *at
        };
        let status = ScreenStatus {
            agent: Some(agent),
            state: screen.map(|t| t.to),
            reason: screen.and_then(|t| t.reason),
            from_rule: screen.is_some_and(|t| t.trigger == Trigger::Screen),
        };
        let e = book.effective_with(at, "replay", &status, word.as_ref());
        let Some(state) = e.state else { continue };
        let now = (state, e.reason, e.authority);
        if take_screen
            && e.authority == Authority::Screen
            && shown.is_none_or(|s| s.2 == Authority::Screen)
        {
            if let Some(t) = screen {
                out.push(Line::Screen(t.clone()));
            }
        } else if shown != Some(now) {
            let (rule, trigger) = match (e.authority, &word, screen) {
                (a, Some(w), _) if a == w.channel => (w.reading.rule.clone(), Trigger::Report),
                (_, _, Some(t)) => (t.rule.clone(), t.trigger),
                _ => continue,
            };
            out.push(Line::Word {
                at,
                from: shown.map(|s| s.0),
                state,
                reason: e.reason,
                rule,
                trigger,
                authority: e.authority,
                message: e.message.clone(),
            });
        }
        shown = Some(now);
    }
    out
}

/// One replay line as a JSON line: a transition as [`transition_json`];
/// a line of the program's word with its `authority` and `message`.
pub fn line_json(l: &Line) -> serde_json::Value {
    match l {
        Line::Screen(t) => transition_json(t),
        Line::Word {
            at,
            from,
            state,
            reason,
            rule,
            trigger,
            authority,
            message,
        } => serde_json::json!({
            "t": (at.as_secs_f64() * 1000.0).round() / 1000.0,
            "state": state.as_str(),
            "reason": reason.map(|r| r.as_str()),
            "rule": rule,
            "confidence": 1.0,
            "trigger": trigger,
            "from": from.map(|s| s.as_str()),
            "authority": authority.as_str(),
            "message": message,
        }),
    }
}

/// Runs the command.
pub fn run(args: &ReplayArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let text = read_file(&args.file)?;
    let cast = Cast::parse(&text).map_err(|e| {
        CliError::new(
            ErrorKind::BadRecording,
            format!(
                "{}: {e}; expected an asciicast v2 recording",
                args.file.display()
            ),
        )
    })?;
    let (registry, errors) = crate::manifests::load();
    for e in &errors {
        tend_config::say!("warning: manifest not used: {e}");
    }
    let (procs_path, procs) = process_samples(args)?;
    let Some(agent) = args
        .agent
        .clone()
        .or_else(|| resolve_agent(&registry, &procs))
    else {
        return no_agent(args, &registry, procs_path.is_some(), out);
    };
    let manifest = registry.get(&agent).cloned().ok_or_else(|| {
        CliError::new(
            ErrorKind::UnknownAgent,
            format!(
                "no manifest for agent `{agent}`; known agents: {}",
                registry.ids().join(", ")
            ),
        )
    })?;
    let replayed = replay::replay_all(
        &cast,
        Arc::new(manifest),
        &registry,
        Arc::new(DetectorConfig::default()),
        &procs,
    );
    let (words, channel) = word_channel(&manifest_of(&registry, &agent), &procs, replayed.words);
    let lines = effective_lines(&agent, &replayed.transitions, &words, channel);
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    for l in &lines {
        if args.json {
            writeln!(out, "{}", line_json(l)).map_err(io)?;
        } else {
            writeln!(out, "{}", line_text(l)).map_err(io)?;
        }
    }
    Ok(())
}

/// The recording's process snapshots (`--procs`, else `procs.jsonl` beside
/// it, unless `--no-procs`), and where they came from.
fn process_samples(
    args: &ReplayArgs,
) -> Result<(Option<std::path::PathBuf>, Vec<ProcSample>), CliError> {
    let path = match (&args.procs, args.no_procs) {
        (_, true) => None,
        (Some(p), _) => Some(p.clone()),
        (None, false) => {
            let p = args.file.with_file_name("procs.jsonl");
            p.exists().then_some(p)
        }
    };
    let procs = match &path {
        Some(p) => parse_procs(&read_file(p)?, p)?,
        None => Vec::new(),
    };
    Ok((path, procs))
}

/// Text printed by a program that is not an identified agent never has a
/// state: says so, and succeeds.
fn no_agent(
    args: &ReplayArgs,
    registry: &Registry,
    had_procs: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let why = if had_procs {
        "its process snapshots name no agent"
    } else {
        "there are no process snapshots beside it (procs.jsonl)"
    };
    let msg = format!(
        "{}: no agent was identified ({why}), so no state is reported; \
         pass --agent ID to read it with an agent's rules, one of: {}",
        args.file.display(),
        registry.ids().join(", ")
    );
    if args.json {
        tend_config::say!("{msg}");
        return Ok(());
    }
    writeln!(out, "{msg}")
        .map_err(|e| CliError::new(ErrorKind::Io, format!("cannot write output: {e}")))
}

/// One line of the plain output: a transition of the screen's, or a change
/// the program's own word made.
fn line_text(l: &Line) -> String {
    match l {
        Line::Word {
            at,
            from,
            state,
            reason,
            rule,
            authority,
            message,
            ..
        } => {
            let to = match reason {
                Some(r) => format!("{state}/{r}"),
                None => state.to_string(),
            };
            let from = from.map_or("—".to_owned(), |s| s.to_string());
            let said = message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            format!(
                "{:>9.3}s  {:<9} → {:<18} {rule} ({}{said})",
                at.as_secs_f64(),
                from,
                to,
                match authority {
                    Authority::Relay => "the agent's own word, OSC 7501 through tend run",
                    Authority::Osc => "the agent's own word, OSC 7501 printed unasked",
                    Authority::File => "the agent's own word, its session file",
                    Authority::Screen | Authority::Report => "the screen decides again",
                }
            )
        }
        Line::Screen(t) => {
            let state = match t.reason {
                Some(r) => format!("{}/{}", t.to, r),
                None => t.to.to_string(),
            };
            let from = t.from.map_or("—".to_owned(), |s| s.to_string());
            format!(
                "{:>9.3}s  {:<9} → {:<18} {} ({}, {:.2})",
                t.at.as_secs_f64(),
                from,
                state,
                t.rule,
                serde_json::to_value(t.trigger)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                t.confidence
            )
        }
    }
}

fn manifest_of(registry: &Registry, agent: &str) -> Option<tend_detector::Manifest> {
    registry.get(agent).cloned()
}

/// Which channel the recording's OSC 7501 reports came by, as the daemon
/// would take them: through a `tend run` relay its process snapshots show
/// (`psp`), else printed unasked by an agent whose manifest says it does
/// so, only those naming it (`osc`). A recording without snapshots that
/// show either keeps its reports as `psp`, as before.
fn word_channel(
    manifest: &Option<tend_detector::Manifest>,
    procs: &[ProcSample],
    words: Vec<(Duration, Option<Reading>)>,
) -> (Vec<(Duration, Option<Reading>)>, Authority) {
    let relay = procs
        .iter()
        .any(|s| identity::look_through_relay(s.procs.clone(), identity::is_relay).1);
    let app = manifest
        .as_ref()
        .and_then(|m| m.unasked_reports_app.clone());
    let settle = manifest
        .as_ref()
        .map_or(Duration::ZERO, |m| m.unasked_working_settle);
    match app {
        Some(app) if !relay => {
            let named: Vec<(Duration, Option<Reading>)> = words
                .into_iter()
                .map(|(at, w)| (at, w.filter(|r| r.app.as_deref() == Some(app.as_str()))))
                .collect();
            (held_back(named, settle), Authority::Osc)
        }
        _ => (words, Authority::Relay),
    }
}

/// Unasked reports as the daemon takes them: a `working` counts once it
/// has lasted `settle` (the manifest's `unasked_working_settle_ms`) unless the screen already
/// shows it (when the screen does, the two agree and the lines are the
/// same either way); until then the screen decides. So each starts that
/// much later here, the screen deciding meanwhile, and one that ends
/// sooner (Codex's flash as it starts) is the screen's throughout.
fn held_back(
    words: Vec<(Duration, Option<Reading>)>,
    settle: Duration,
) -> Vec<(Duration, Option<Reading>)> {
    if settle.is_zero() {
        return words;
    }
    let mut out: Vec<(Duration, Option<Reading>)> = Vec::with_capacity(words.len());
    for (i, (at, w)) in words.iter().enumerate() {
        let working = w.as_ref().is_some_and(|r| r.state == State::Working);
        if !working {
            out.push((*at, w.clone()));
            continue;
        }
        out.push((*at, None));
        let from = *at + settle;
        if words.get(i + 1).is_none_or(|(next, _)| *next > from) {
            out.push((from, w.clone()));
        }
    }
    out
}

fn resolve_agent(registry: &Registry, procs: &[ProcSample]) -> Option<String> {
    procs
        .iter()
        .find_map(|s| {
            identity::resolve(
                registry,
                &identity::look_through_relay(s.procs.clone(), identity::is_relay).0,
            )
        })
        .map(|m| m.agent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tend_detector::psp::{self, Records};

    fn t(at: u64, to: State, reason: Option<Reason>, trigger: Trigger) -> Transition {
        Transition {
            at: Duration::from_secs(at),
            from: None,
            from_reason: None,
            to,
            reason,
            trigger,
            rule: format!("claude/{to}"),
            confidence: 0.9,
        }
    }

    fn word(bodies: &[&str]) -> Option<Reading> {
        let mut r = Records::default();
        for b in bodies {
            if let Ok(psp::Message::Report(rep)) = psp::parse(b.as_bytes()) {
                r.apply(Duration::ZERO, rep).unwrap();
            }
        }
        r.reading()
    }

    fn brief(l: &Line) -> (u64, State, &'static str) {
        match l {
            Line::Screen(t) => (t.at.as_secs(), t.to, "screen-transition"),
            Line::Word {
                at,
                state,
                authority,
                ..
            } => (at.as_secs(), *state, authority.as_str()),
        }
    }

    #[test]
    fn without_reports_the_lines_are_the_transitions() {
        let ts = vec![
            t(1, State::Idle, None, Trigger::Screen),
            t(2, State::Working, None, Trigger::Activity),
            t(9, State::Completed, None, Trigger::Screen),
        ];
        let lines = effective_lines("claude", &ts, &[], Authority::Relay);
        assert_eq!(
            lines,
            ts.iter().cloned().map(Line::Screen).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_word_holds_until_it_is_cleared() {
        let ts = vec![
            t(1, State::Idle, None, Trigger::Screen),
            t(2, State::Working, None, Trigger::Activity),
            // The screen reads completed while a background task runs.
            t(7, State::Completed, None, Trigger::Screen),
            // An approval dialog shows.
            t(8, State::Waiting, Some(Reason::Approval), Trigger::Screen),
            t(9, State::Working, None, Trigger::Activity),
            t(30, State::Idle, None, Trigger::Screen),
        ];
        let task = "state=working:id=b:title=UnVu";
        let words = vec![
            (Duration::from_secs(2), word(&["state=working"])),
            (
                Duration::from_secs(5),
                word(&["state=working", task, "state=done"]),
            ),
            (Duration::from_secs(23), word(&["state=done"])),
            (Duration::from_secs(25), None),
        ];
        let lines = effective_lines("claude", &ts, &words, Authority::Relay);
        assert_eq!(
            lines.iter().map(brief).collect::<Vec<_>>(),
            vec![
                (1, State::Idle, "screen-transition"),
                (2, State::Working, "screen-transition"),
                // The word takes over at once (the screen agrees).
                (2, State::Working, "relay"),
                // The dialog overrides it, then the word holds again.
                (8, State::Waiting, "screen"),
                (9, State::Working, "relay"),
                // Done once the task is cleared; then the screen again.
                (23, State::Completed, "relay"),
                (25, State::Working, "screen"),
                (30, State::Idle, "screen-transition"),
            ]
        );
        let json = line_json(&lines[5]);
        assert_eq!(json["rule"], "psp/done");
        assert_eq!(json["authority"], "relay");
        assert_eq!(json["trigger"], "report");
    }
}
