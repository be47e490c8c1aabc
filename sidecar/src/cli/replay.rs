//! `tend replay FILE.cast`: the detector over a recording.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tend_detector::cast::Cast;
use tend_detector::identity::{self, ProcessInfo};
use tend_detector::replay::{self, ProcSample};
use tend_detector::{DetectorConfig, Registry, Transition};

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
                "bad_procs",
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

/// Runs the command.
pub fn run(args: &ReplayArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let text = read_file(&args.file)?;
    let cast = Cast::parse(&text).map_err(|e| {
        CliError::new(
            "bad_recording",
            format!(
                "{}: {e}; expected an asciicast v2 recording",
                args.file.display()
            ),
        )
    })?;
    let (registry, errors) = crate::manifests::load();
    for e in &errors {
        eprintln!("tend: warning: manifest not used: {e}");
    }
    let procs_path = match (&args.procs, args.no_procs) {
        (_, true) => None,
        (Some(p), _) => Some(p.clone()),
        (None, false) => {
            let p = args.file.with_file_name("procs.jsonl");
            p.exists().then_some(p)
        }
    };
    let procs = match &procs_path {
        Some(p) => parse_procs(&read_file(p)?, p)?,
        None => Vec::new(),
    };
    let agent = match &args.agent {
        Some(a) => a.clone(),
        None => match resolve_agent(&registry, &procs) {
            Some(a) => a,
            None => {
                // Text printed by a program that is not an identified agent
                // never has a state: say so, and succeed.
                let why = if procs_path.is_some() {
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
                    eprintln!("tend: {msg}");
                } else {
                    writeln!(out, "{msg}")
                        .map_err(|e| CliError::new("io", format!("cannot write output: {e}")))?;
                }
                return Ok(());
            }
        },
    };
    let manifest = registry.get(&agent).cloned().ok_or_else(|| {
        CliError::new(
            "unknown_agent",
            format!(
                "no manifest for agent `{agent}`; known agents: {}",
                registry.ids().join(", ")
            ),
        )
    })?;
    let transitions = replay::replay(
        &cast,
        Arc::new(manifest),
        &registry,
        Arc::new(DetectorConfig::default()),
        &procs,
    );
    let io = |e: std::io::Error| CliError::new("io", format!("cannot write output: {e}"));
    for t in &transitions {
        if args.json {
            writeln!(out, "{}", transition_json(t)).map_err(io)?;
        } else {
            let state = match t.reason {
                Some(r) => format!("{}/{}", t.to, r),
                None => t.to.to_string(),
            };
            let from = t.from.map_or("—".to_owned(), |s| s.to_string());
            writeln!(
                out,
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
            .map_err(io)?;
        }
    }
    Ok(())
}

fn resolve_agent(registry: &Registry, procs: &[ProcSample]) -> Option<String> {
    procs
        .iter()
        .find_map(|s| identity::resolve(registry, &s.procs))
        .map(|m| m.agent)
}
