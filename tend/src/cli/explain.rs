//! `tend explain --file SCREEN.txt --agent ID`: every rule's verdict on one
//! screen.

use crate::error::ErrorKind;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use tend_detector::rules::{self, ScreenView};

use std::time::Duration;

use tend_protocol::explain::{Explained, Explanation, Identity};
use tend_protocol::{params, PaneView, TaskView};
use tend_vocab::{Authority, IdentifiedBy, State, Tap};

use super::target::{ServerArgs, Target};
use crate::client;
use crate::error::{read_file, CliError};

/// Arguments of `tend explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A pane id (`%3`) to explain live (needs the daemon).
    pub pane: Option<String>,
    /// A plain-text screen to explain instead of a live pane.
    #[arg(long, conflicts_with = "pane")]
    pub file: Option<PathBuf>,
    /// The agent whose rules to apply (with --file).
    #[arg(long)]
    pub agent: Option<String>,
    /// The window title to assume (with --file).
    #[arg(long)]
    pub title: Option<String>,
    /// Treat the screen as the alternate screen (with --file).
    #[arg(long)]
    pub alternate: bool,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// Explains a live pane through the daemon.
fn live(
    server: &ServerArgs,
    pane: &str,
    args: &ExplainArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let t = Target::resolve(server)?;
    live_at(&t.control, pane, args, out)
}

/// Explains a live pane through the daemon on `control` (`tend pilot`).
pub fn live_at(
    control: &std::path::Path,
    pane: &str,
    args: &ExplainArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let explain = params::Explain {
        pane: pane.to_owned(),
    };
    let v = client::call(control, explain, Duration::from_secs(5))?;
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    if args.json {
        writeln!(out, "{}", client::json_text(&v)).map_err(io)?;
        return Ok(());
    }
    let p = &v.pane;
    let ex = v.explain.read();
    let mut lines = pane_lines(&v);
    lines.extend(limit_lines(&v));
    lines.extend(authority_lines(&v, &ex));
    let tap_words = match v.tap {
        Tap::Pipe => "pipe-pane tap".to_owned(),
        Tap::Polling => {
            "capture-pane polling: another pipe-pane is on this pane, and tend leaves it alone"
                .to_owned()
        }
        other => other.as_str().to_owned(),
    };
    lines.push(format!("output    {tap_words}"));
    // The sampler's evidence: the committed agent, and the process and
    // key of its latest match.
    lines.push(identity_line(&v.identity.read(), p));
    lines.push(format!("identity evidence: {}", v.identity.json()));
    lines.push(format!("title     {}", ex.title));
    lines.extend(rule_lines(&ex));
    lines.extend(unrecognised_line(p));
    lines.push("recent transitions:".to_owned());
    for t in &ex.recent {
        lines.push(format!(
            "  {:>10.3}s {} → {}{} by {} ({})",
            t.at.unwrap_or(0.0),
            dash(t.from),
            dash(t.to),
            t.reason.map(|r| format!("/{r}")).unwrap_or_default(),
            dash(t.rule.as_ref()),
            dash(t.trigger.as_ref())
        ));
    }
    for line in lines {
        writeln!(out, "{line}").map_err(io)?;
    }
    Ok(())
}

/// The pane, its state and band, its agent and version.
fn pane_lines(v: &Explained) -> Vec<String> {
    let p = &v.pane;
    let mut lines = vec![format!(
        "pane      {} (session {}, window {})",
        p.pane, p.session, p.window
    )];
    let state = match (&p.reason, p.exit_code) {
        (Some(r), _) => format!("{}/{r}", dash(p.state)),
        (None, Some(code)) => format!("{} (exit code {code})", dash(p.state)),
        (None, None) => dash(p.state),
    };
    lines.push(format!(
        "state     {state}  band {}  rule {}",
        dash(p.band),
        dash(p.rule.as_ref())
    ));
    let Some(agent) = &p.agent else {
        return lines;
    };
    let how = match p.verified {
        Some(true) => format!(
            "rules verified on recordings of {}",
            v.verified_versions
                .as_ref()
                .map(|a| a.join(", "))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "the real CLI".to_owned())
        ),
        _ => "rules unverified: a dialog shows as waiting/prompt, never as a certain approval, question or error".to_owned(),
    };
    let version = match (&p.version, &p.wrapper) {
        (Some(v), _) => v.clone(),
        // Its package metadata is on the other side of the wrapper.
        (None, Some(w)) if p.identified_by == Some(IdentifiedBy::Screen) => {
            format!("(version unknown: it runs behind {w})")
        }
        (None, _) => "(version unknown)".to_owned(),
    };
    lines.push(format!("agent     {agent} {version} ({how})"));
    if let Some(w) = &v.version_warning {
        lines.push(format!("warning   {w}"));
    }
    lines
}

/// Every rule's verdict on the screen, highest priority first.
fn rule_lines(ex: &Explanation) -> Vec<String> {
    let mut lines = vec!["rules (highest priority first):".to_owned()];
    for r in &ex.verdicts {
        let mark = if r.matched {
            "MATCH"
        } else if r.skipped.is_some() {
            "skip "
        } else {
            "  -  "
        };
        // The priority as JSON writes it (no padding), as this line always
        // showed it.
        let priority = r
            .priority
            .map_or_else(|| "null".to_owned(), |n| n.to_string());
        lines.push(format!(
            "  {mark} {priority}  {:<32} in {}",
            dash(r.rule.as_ref()),
            dash(r.region.as_ref())
        ));
    }
    lines
}

/// How long no rule has read the pane's screen, when that has lasted.
fn unrecognised_line(p: &PaneView) -> Option<String> {
    let since = p.unrecognised_since?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
        - since;
    Some(format!(
        "unknown   no rule has matched this screen for {:.0} s: the state comes from activity, \
         silence and the process tree; `tend capture {}` saves it as a test case",
        secs.max(0.0),
        p.pane
    ))
}

/// The pane's usage limit (when it resets, in the agent's words) and
/// whether tend resumes it, or the last resume it made there.
fn limit_lines(v: &Explained) -> Vec<String> {
    let Some(l) = &v.limit else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    if l.since.is_some() {
        let reset = match l.resets_at {
            Some(at) => super::limits::reset_text(
                at,
                super::limits::unix_now(),
                super::limits::utc_offset(),
            ),
            None => "at a time tend cannot read".to_owned(),
        };
        let words = l
            .words
            .as_ref()
            .map(|w| format!(" (the agent says {w:?})"))
            .unwrap_or_default();
        lines.push(format!("limit     resets {reset}{words}"));
    }
    if let Some(r) = &l.resume {
        lines.push(format!("resume    {r}"));
    }
    if let Some(last) = &l.last {
        lines.push(format!("resumed   {last}"));
    }
    lines
}

/// The word, or `-` without one.
fn dash(x: Option<impl std::fmt::Display>) -> String {
    x.map_or_else(|| "-".to_owned(), |x| x.to_string())
}

/// `working: 1 background task (Run the long command)`: a state and the
/// live subtasks of the program that reported it.
pub fn state_with_tasks(pane: &PaneView) -> String {
    let s = dash(pane.state);
    let mut state = match &pane.reason {
        Some(r) => format!("{s}/{r}"),
        None => s,
    };
    let live: Vec<&TaskView> = pane.tasks.iter().filter(|t| t.live).collect();
    if !live.is_empty() {
        let names: Vec<&str> = live
            .iter()
            .map(|t| t.title.as_deref().or(t.message.as_deref()).unwrap_or(&t.id))
            .collect();
        state.push_str(&format!(
            ": {} background task{} ({})",
            live.len(),
            if live.len() == 1 { "" } else { "s" },
            names.join(", ")
        ));
    }
    state
}

/// Who decides the pane's state, what the agent said, and whether the
/// screen agrees.
fn authority_lines(v: &Explained, ex: &Explanation) -> Vec<String> {
    let p = &v.pane;
    let a = &v.authority;
    let word = ex.psp.as_ref();
    let mut out = Vec::new();
    // `psp`, what a daemon of an earlier release called the relay, reads
    // as `relay` (tend-vocab's Authority).
    match a.holder {
        Authority::Relay => out.push(format!(
            "authority relay: the agent's own word (OSC 7501, answered by tend run){}",
            p.app
                .as_deref()
                .map(|app| format!(", from {app}"))
                .unwrap_or_default()
        )),
        Authority::File => out.push(format!(
            "authority file: the agent's own word, in the session file it keeps{}",
            a.file
                .as_ref()
                .and_then(|f| f.path.as_deref())
                .map(|p| format!(" ({p})"))
                .unwrap_or_default()
        )),
        Authority::Osc => out.push(format!(
            "authority osc: the agent's own word (OSC 7501, printed unasked while it holds the terminal){}",
            p.app
                .as_deref()
                .map(|app| format!(", from {app}"))
                .unwrap_or_default()
        )),
        Authority::Report => out.push(format!(
            "authority report: the agent's own reports (tend report){}",
            p.lifecycle
                .as_deref()
                .map(|l| format!(", {l}"))
                .unwrap_or_default()
        )),
        _ if a.relay && word.is_some_and(|w| w.reading.is_some()) => out.push(
            "authority screen: a dialog of the agent is on the screen, over its own word (OSC 7501)"
                .to_owned(),
        ),
        _ if a.file.as_ref().is_some_and(|f| f.status.is_some()) => out.push(
            "authority screen: the agent's screen shows what its session file does not (a dialog, or how its turn ended)"
                .to_owned(),
        ),
        _ if p.lifecycle.as_deref().is_some_and(|l| l != "gone") => out.push(
            "authority screen: a dialog of the agent is on the screen, over its reports".to_owned(),
        ),
        _ => out.push("authority screen (no self-report)".to_owned()),
    }
    if a.holder != Authority::Screen {
        out.push(format!("word      {}", state_with_tasks(p)));
        let sc = &a.screen;
        let seen = match (&sc.state, &sc.reason) {
            (Some(st), Some(r)) => format!("{st}/{r}"),
            (Some(st), None) => st.to_string(),
            (None, _) => "nothing".to_owned(),
        };
        let verdict = if a.screen_agrees {
            "it agrees"
        } else {
            "it disagrees; the agent's word holds (only a visible dialog of the agent would override it)"
        };
        out.push(format!(
            "screen    reads {seen} (rule {}): {verdict}",
            sc.rule
        ));
    }
    if let Some(m) = &p.message {
        out.push(format!("message   {m}"));
    }
    if let Some(f) = &a.file {
        out.push(file_line(f));
    }
    if let Some(word) = word {
        let c = word.counters.clone().unwrap_or_default();
        let trust = if a.relay {
            "tend run answers its queries"
        } else {
            "no tend run answers for this terminal, so its reports are not taken"
        };
        // Why each was dropped: `overrun` is a report in output tend
        // could not keep up with, beyond what it saves from a drop.
        let why: Vec<String> = c
            .dropped
            .iter()
            .flatten()
            .filter_map(|(k, v)| v.as_u64().filter(|n| *n > 0).map(|n| format!("{k} {n}")))
            .collect();
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join(", "))
        };
        out.push(format!(
            "osc 7501  {} queries, {} reports taken, {} dropped{why}; {trust}",
            c.queries.unwrap_or(0),
            c.reports.unwrap_or(0),
            c.dropped_total(),
        ));
    }
    out
}

/// The `file` line: the session file the agent keeps, what it says or why
/// it is not taken, and what was dropped.
fn file_line(f: &tend_protocol::explain::SessionFile) -> String {
    let says = match (&f.status, &f.waiting_for) {
        (Some(s), Some(w)) => format!("says {s} ({w})"),
        (Some(s), None) => format!("says {s}"),
        (None, _) => f
            .last
            .clone()
            .unwrap_or_else(|| "nothing read yet".to_owned()),
    };
    let version = f
        .version
        .as_deref()
        .map(|v| format!(", written by {v}"))
        .unwrap_or_default();
    let path = f.path.as_deref().unwrap_or("none followed now");
    format!(
        "file      {path}: {says}{version}; {} read, {} not understood, {} of another process, {} refused",
        f.read, f.rejected, f.untied, f.refused
    )
}

/// The `identity` line: which agent, and how it was identified — by its
/// process, declared by `TEND_AGENT`, or named from the screen behind a
/// wrapper.
fn identity_line(id: &Identity, pane: &PaneView) -> String {
    let s = |x: Option<&String>| x.cloned().unwrap_or_else(|| "-".to_owned());
    let m = id.matched.clone().unwrap_or_default();
    let pid = m.pid.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
    let agreeing = id.agreeing.unwrap_or(0);
    let by = id.identified_by;
    // The wrapper the latest sample found in the foreground.
    let wrapper = id.last.as_ref().and_then(|l| l.wrapper.as_ref());
    let exited = pane.state == Some(State::Exited.into());
    match id.agent.as_deref() {
        Some(agent) if by == Some(IdentifiedBy::Screen) => format!(
            "identity  {agent} named from the screen; the process tree shows {} (pid {pid}), not the agent: \
             its live UI matched `{}` ({agreeing} readings in a row), and the end of {} is the agent's exit",
            s(m.value.as_ref()),
            s(m.key.as_ref()),
            s(m.value.as_ref()),
        ),
        Some(agent) => format!(
            "identity  {agent} (pid {pid}, {} `{}`, {agreeing} agreeing samples){}",
            s(m.via.as_ref()),
            s(m.key.as_ref()),
            if by == Some(IdentifiedBy::Declared) {
                "; declared by TEND_AGENT"
            } else {
                ""
            }
        ),
        None if exited && pane.identified_by == Some(IdentifiedBy::Screen) => format!(
            "identity  none: {} {} named from the screen has {} (the pane reads exited until the next agent starts); screen rules are not applied",
            s(pane.agent.as_ref()),
            match &pane.wrapper {
                Some(w) => format!("behind {w}"),
                None => "behind a wrapper".into(),
            },
            if id.last_change.as_ref().and_then(|c| c.reason.as_deref()) == Some("wrapper_gone") {
                "ended with it"
            } else {
                "left the screen"
            }
        ),
        None if exited => "identity  none: the agent's process has ended (the pane reads exited until the next agent starts); screen rules are not applied".to_owned(),
        None if wrapper.is_some() => {
            let seen = match (&id.screen_pending, &id.screen_reading) {
                (Some(p), _) => format!(
                    "the screen shows {}'s live UI ({} readings in a row so far; it is named after several)",
                    s(p.agent.as_ref()),
                    p.readings.unwrap_or(0),
                ),
                (None, Some(r)) if !r.ambiguous.is_empty() => format!(
                    "the screen matches several agents' markers at once ({})",
                    r.ambiguous.join(", ")
                ),
                _ => "the screen shows no agent's live UI".to_owned(),
            };
            let w = wrapper.cloned().unwrap_or_default();
            format!(
                "identity  none yet: the process tree shows {} (pid {}) and no agent process below it; {seen}",
                s(w.name.as_ref()),
                w.pid.map(|x| x.to_string()).unwrap_or_else(|| "-".into()),
            )
        }
        None => "identity  none: no agent process found in the pane's foreground group (nor a wrapper such as ssh or docker exec whose screen shows one); screen rules are not applied".to_owned(),
    }
}

/// Runs the command.
pub fn run(server: &ServerArgs, args: &ExplainArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let Some(file) = &args.file else {
        return match &args.pane {
            Some(p) => live(server, p, args, out),
            None => Err(CliError::new(
                ErrorKind::BadRequest,
                "name a pane (`tend explain %3`) or a saved screen (`tend explain --file SCREEN.txt --agent ID`)",
            )),
        };
    };
    let (registry, errors) = crate::manifests::load();
    for e in &errors {
        tend_config::say!("warning: manifest not used: {e}");
    }
    let agent = args.agent.as_deref().ok_or_else(|| {
        CliError::new(
            ErrorKind::MissingAgent,
            format!(
                "--file needs --agent ID, one of: {}",
                registry.ids().join(", ")
            ),
        )
    })?;
    let manifest = registry.get(agent).ok_or_else(|| {
        CliError::new(
            ErrorKind::UnknownAgent,
            format!(
                "no manifest for agent `{agent}`; known agents: {}",
                registry.ids().join(", ")
            ),
        )
    })?;
    let text = read_file(file)?;
    let mut view = ScreenView::from_text(&text);
    view.title = args.title.clone().unwrap_or_default();
    view.alternate = args.alternate;
    let verdicts = rules::verdicts(&view, manifest);
    let winner = rules::evaluate(&view, manifest);
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    if args.json {
        let v = serde_json::json!({
            "agent": manifest.id,
            "manifest": manifest.source,
            "verified": manifest.verified,
            "evidence": winner,
            "verdicts": verdicts,
        });
        writeln!(out, "{v}").map_err(io)?;
        return Ok(());
    }
    writeln!(
        out,
        "agent     {} ({}; {})",
        manifest.id,
        manifest.source,
        if manifest.verified {
            "verified on recordings"
        } else {
            "unverified"
        }
    )
    .map_err(io)?;
    match &winner {
        Some(e) => {
            let state = match e.reason {
                Some(r) => format!("{:?}/{}", e.state, r).to_lowercase(),
                None => format!("{:?}", e.state).to_lowercase(),
            };
            writeln!(out, "evidence  {state} by rule {} (confidence {:.2})", e.rule, e.confidence).map_err(io)?;
            if let Some(declared) = e.declared_reason {
                writeln!(out, "          the rule reads this as {declared}, but {}'s rules are unverified: tend says only that it needs you", manifest.short_name).map_err(io)?;
            }
        }
        None => writeln!(
            out,
            "evidence  none: no rule matched. tend never reads that as idle; a live pane would stay in its state, or go working/waiting on activity and silence"
        )
        .map_err(io)?,
    }
    writeln!(out, "rules (highest priority first):").map_err(io)?;
    for v in &verdicts {
        let mark = if v.matched {
            "MATCH"
        } else if v.skipped.is_some() {
            "skip "
        } else {
            "  -  "
        };
        let state = match (v.reason, v.declared_reason) {
            (Some(r), Some(d)) => format!("{:?}/{r} (rule: {d})", v.state).to_lowercase(),
            (Some(r), None) => format!("{:?}/{}", v.state, r).to_lowercase(),
            (None, _) => format!("{:?}", v.state).to_lowercase(),
        };
        write!(
            out,
            "  {mark} {:>4}  {:<32} {:<18} in {}",
            v.priority, v.rule, state, v.region
        )
        .map_err(io)?;
        if let Some(why) = &v.skipped {
            write!(out, " ({why})").map_err(io)?;
        }
        writeln!(out).map_err(io)?;
    }
    Ok(())
}
