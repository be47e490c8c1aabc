//! `tend explain --file SCREEN.txt --agent ID`: every rule's verdict on one
//! screen.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use tend_detector::rules::{self, ScreenView};

use std::time::Duration;

use serde_json::{json, Value};

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
    let v = client::call(
        control,
        "explain",
        json!({"pane": pane}),
        Duration::from_secs(5),
    )?;
    let io = |e: std::io::Error| CliError::new("io", format!("cannot write output: {e}"));
    if args.json {
        writeln!(out, "{v}").map_err(io)?;
        return Ok(());
    }
    let p = &v["pane"];
    let s = |x: &Value| x.as_str().unwrap_or("-").to_owned();
    writeln!(
        out,
        "pane      {} (session {}, window {})",
        s(&p["pane"]),
        s(&p["session"]),
        s(&p["window"])
    )
    .map_err(io)?;
    let state = match (p["reason"].as_str(), p["exit_code"].as_i64()) {
        (Some(r), _) => format!("{}/{r}", s(&p["state"])),
        (None, Some(code)) => format!("{} (exit code {code})", s(&p["state"])),
        (None, None) => s(&p["state"]),
    };
    writeln!(
        out,
        "state     {state}  band {}  rule {}",
        s(&p["band"]),
        s(&p["rule"])
    )
    .map_err(io)?;
    if p["agent"].is_string() {
        let how = match p["verified"].as_bool() {
            Some(true) => format!(
                "rules verified on recordings of {}",
                v["verified_versions"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "the real CLI".to_owned())
            ),
            _ => "rules unverified: a dialog shows as waiting/prompt, never as a certain approval, question or error".to_owned(),
        };
        let version = match (p["version"].as_str(), p["wrapper"].as_str()) {
            (Some(v), _) => v.to_owned(),
            // Its package metadata is on the other side of the wrapper.
            (None, Some(w)) if p["identified_by"] == "screen" => {
                format!("(version unknown: it runs behind {w})")
            }
            (None, _) => "(version unknown)".to_owned(),
        };
        writeln!(out, "agent     {} {version} ({how})", s(&p["agent"])).map_err(io)?;
        if let Some(w) = v["version_warning"].as_str() {
            writeln!(out, "warning   {w}").map_err(io)?;
        }
    }
    for line in authority_lines(&v) {
        writeln!(out, "{line}").map_err(io)?;
    }
    let tap = s(&v["tap"]);
    let tap_words = match tap.as_str() {
        "pipe" => "pipe-pane tap".to_owned(),
        "polling" => {
            "capture-pane polling: another pipe-pane is on this pane, and tend leaves it alone"
                .to_owned()
        }
        other => other.to_owned(),
    };
    writeln!(out, "output    {tap_words}").map_err(io)?;
    // The sampler's evidence: the committed agent, and the process and
    // key of its latest match.
    let id = &v["identity"];
    writeln!(out, "{}", identity_line(id, p)).map_err(io)?;
    writeln!(out, "identity evidence: {}", id).map_err(io)?;
    let ex = &v["explain"];
    writeln!(out, "title     {}", s(&ex["title"])).map_err(io)?;
    writeln!(out, "rules (highest priority first):").map_err(io)?;
    for r in ex["verdicts"].as_array().into_iter().flatten() {
        let mark = if r["matched"].as_bool() == Some(true) {
            "MATCH"
        } else if r["skipped"].is_string() {
            "skip "
        } else {
            "  -  "
        };
        writeln!(
            out,
            "  {mark} {:>4}  {:<32} in {}",
            r["priority"],
            s(&r["rule"]),
            s(&r["region"])
        )
        .map_err(io)?;
    }
    if let Some(since) = p["unrecognised_since"].as_f64() {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
            - since;
        writeln!(
            out,
            "unknown   no rule has matched this screen for {:.0} s: the state comes from activity, \
             silence and the process tree; `tend capture {}` saves it as a test case",
            secs.max(0.0),
            s(&p["pane"])
        )
        .map_err(io)?;
    }
    writeln!(out, "recent transitions:").map_err(io)?;
    for t in ex["recent"].as_array().into_iter().flatten() {
        writeln!(
            out,
            "  {:>10.3}s {} → {}{} by {} ({})",
            t["at"].as_f64().unwrap_or(0.0),
            s(&t["from"]),
            s(&t["to"]),
            t["reason"]
                .as_str()
                .map(|r| format!("/{r}"))
                .unwrap_or_default(),
            s(&t["rule"]),
            s(&t["trigger"])
        )
        .map_err(io)?;
    }
    Ok(())
}

/// `working: 1 background task (Run the long command)`: a state and the
/// live subtasks of the program that reported it.
pub fn state_with_tasks(pane: &Value) -> String {
    let s = |x: &Value| x.as_str().unwrap_or("-").to_owned();
    let mut state = match pane["reason"].as_str() {
        Some(r) => format!("{}/{r}", s(&pane["state"])),
        None => s(&pane["state"]),
    };
    let live: Vec<&Value> = pane["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["live"].as_bool() == Some(true))
        .collect();
    if !live.is_empty() {
        let names: Vec<String> = live
            .iter()
            .map(|t| {
                t["title"]
                    .as_str()
                    .or(t["message"].as_str())
                    .map_or_else(|| s(&t["id"]), str::to_owned)
            })
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
fn authority_lines(v: &Value) -> Vec<String> {
    let p = &v["pane"];
    let a = &v["authority"];
    let s = |x: &Value| x.as_str().unwrap_or("-").to_owned();
    let word = &v["explain"]["psp"];
    let mut out = Vec::new();
    let holder = a["holder"]
        .as_str()
        .or(p["authority"].as_str())
        .unwrap_or("screen");
    match holder {
        "psp" => out.push(format!(
            "authority psp: the agent's own word (OSC 7501, answered by tend run){}",
            p["app"]
                .as_str()
                .map(|app| format!(", from {app}"))
                .unwrap_or_default()
        )),
        "report" => out.push(format!(
            "authority report: the agent's own reports (tend report){}",
            p["lifecycle"]
                .as_str()
                .map(|l| format!(", {l}"))
                .unwrap_or_default()
        )),
        _ if a["relay"] == true && word["reading"].is_object() => out.push(
            "authority screen: a dialog of the agent is on the screen, over its own word (OSC 7501)"
                .to_owned(),
        ),
        _ if p["lifecycle"].is_string() && p["lifecycle"] != "gone" => out.push(
            "authority screen: a dialog of the agent is on the screen, over its reports".to_owned(),
        ),
        _ => out.push("authority screen (no self-report)".to_owned()),
    }
    if holder != "screen" {
        out.push(format!("word      {}", state_with_tasks(p)));
        let sc = &a["screen"];
        if sc.is_object() {
            let seen = match (sc["state"].as_str(), sc["reason"].as_str()) {
                (Some(st), Some(r)) => format!("{st}/{r}"),
                (Some(st), None) => st.to_owned(),
                (None, _) => "nothing".to_owned(),
            };
            let verdict = if a["screen_agrees"] == true {
                "it agrees"
            } else {
                "it disagrees; the agent's word holds (only a visible dialog of the agent would override it)"
            };
            out.push(format!(
                "screen    reads {seen} (rule {}): {verdict}",
                s(&sc["rule"])
            ));
        }
    }
    if let Some(m) = p["message"].as_str() {
        out.push(format!("message   {m}"));
    }
    if word.is_object() {
        let c = &word["counters"];
        let dropped: u64 = c["dropped"]
            .as_object()
            .map(|m| m.values().filter_map(Value::as_u64).sum())
            .unwrap_or(0);
        let trust = if a["relay"] == true {
            "tend run answers its queries"
        } else {
            "no tend run answers for this terminal, so its reports are not taken"
        };
        out.push(format!(
            "osc 7501  {} queries, {} reports taken, {dropped} dropped; {trust}",
            c["queries"].as_u64().unwrap_or(0),
            c["reports"].as_u64().unwrap_or(0),
        ));
    }
    out
}

/// The `identity` line: which agent, and how it was identified — by its
/// process, declared by `TEND_AGENT`, or named from the screen behind a
/// wrapper.
fn identity_line(id: &Value, pane: &Value) -> String {
    let s = |x: &Value| x.as_str().unwrap_or("-").to_owned();
    let m = &id["matched"];
    let pid = m["pid"]
        .as_u64()
        .map(|x| x.to_string())
        .unwrap_or_else(|| "-".into());
    let agreeing = id["agreeing"].as_u64().unwrap_or(0);
    // The wrapper the latest sample found in the foreground.
    let wrapper = &id["last"]["wrapper"];
    match id["agent"].as_str() {
        Some(agent) if id["identified_by"] == "screen" => format!(
            "identity  {agent} named from the screen; the process tree shows {} (pid {pid}), not the agent: \
             its live UI matched `{}` ({agreeing} readings in a row), and the end of {} is the agent's exit",
            s(&m["value"]),
            s(&m["key"]),
            s(&m["value"]),
        ),
        Some(agent) => format!(
            "identity  {agent} (pid {pid}, {} `{}`, {agreeing} agreeing samples){}",
            s(&m["via"]),
            s(&m["key"]),
            if id["identified_by"] == "declared" {
                "; declared by TEND_AGENT"
            } else {
                ""
            }
        ),
        None if pane["state"] == "exited" && pane["identified_by"] == "screen" => format!(
            "identity  none: {} {} named from the screen has {} (the pane reads exited until the next agent starts); screen rules are not applied",
            s(&pane["agent"]),
            match pane["wrapper"].as_str() {
                Some(w) => format!("behind {w}"),
                None => "behind a wrapper".into(),
            },
            if id["last_change"]["reason"] == "wrapper_gone" {
                "ended with it"
            } else {
                "left the screen"
            }
        ),
        None if pane["state"] == "exited" => "identity  none: the agent's process has ended (the pane reads exited until the next agent starts); screen rules are not applied".to_owned(),
        None if wrapper.is_object() => {
            let seen = match &id["screen_pending"] {
                p if p.is_object() => format!(
                    "the screen shows {}'s live UI ({} readings in a row so far; it is named after several)",
                    s(&p["agent"]),
                    p["readings"].as_u64().unwrap_or(0),
                ),
                _ => match id["screen_reading"]["ambiguous"].as_array() {
                    Some(a) if !a.is_empty() => format!(
                        "the screen matches several agents' markers at once ({})",
                        a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
                    ),
                    _ => "the screen shows no agent's live UI".to_owned(),
                },
            };
            format!(
                "identity  none yet: the process tree shows {} (pid {}) and no agent process below it; {seen}",
                s(&wrapper["name"]),
                wrapper["pid"].as_u64().map(|x| x.to_string()).unwrap_or_else(|| "-".into()),
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
                "bad_request",
                "name a pane (`tend explain %3`) or a saved screen (`tend explain --file SCREEN.txt --agent ID`)",
            )),
        };
    };
    let (registry, errors) = crate::manifests::load();
    for e in &errors {
        eprintln!("tend: warning: manifest not used: {e}");
    }
    let agent = args.agent.as_deref().ok_or_else(|| {
        CliError::new(
            "missing_agent",
            format!(
                "--file needs --agent ID, one of: {}",
                registry.ids().join(", ")
            ),
        )
    })?;
    let manifest = registry.get(agent).ok_or_else(|| {
        CliError::new(
            "unknown_agent",
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
    let io = |e: std::io::Error| CliError::new("io", format!("cannot write output: {e}"));
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
