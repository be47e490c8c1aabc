//! `tend capture %N [DIR]`: saves a pane as a test case in the corpus
//! layout (`tests/corpus/README.md`), for a state tend got wrong.

use crate::error::ErrorKind;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use serde_json::json;
use tend_protocol::params;

use super::target::{ServerArgs, Target};
use crate::client;
use crate::error::CliError;

/// The files a capture writes, in order.
pub const FILES: [&str; 5] = [
    "pane.cast",
    "snapshots.jsonl",
    "procs.jsonl",
    "labels.json",
    "meta.json",
];

/// Arguments of `tend capture`.
#[derive(Debug, Args)]
#[command(after_help = "\
The directory holds pane.cast (the pane's recent output, starting from tend's own redraw of \
the screen: at most 64 KiB of output is kept per pane), snapshots.jsonl (the screen now), \
procs.jsonl (the last process samples), labels.json (tend's own states: a draft to correct) \
and meta.json. It may show what the pane showed and the command lines that ran there: read \
it before you share it.

Examples:
  tend capture %7                      # ./tend-capture-<agent>-<time>/
  tend capture %7 bug-approval         # a directory of your choice (new or empty)
  tend replay bug-approval/pane.cast   # what tend reads from it")]
pub struct CaptureArgs {
    /// The pane, `%N`.
    pub pane: String,
    /// Where to save it: a new or empty directory (default
    /// `./tend-capture-<agent>-<UTC time>/`).
    pub dir: Option<PathBuf>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

fn io(e: std::io::Error) -> CliError {
    CliError::new(ErrorKind::Io, format!("cannot write output: {e}"))
}

/// `YYYYmmdd-HHMMSS` in UTC.
fn stamp(unix: u64) -> String {
    let (days, secs) = (unix / 86_400, unix % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Makes `dir` ready to hold a capture: created if missing, refused if it
/// holds anything (a capture never mixes with other files).
fn prepare(dir: &Path) -> Result<(), CliError> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(CliError::new(
                    ErrorKind::DirNotEmpty,
                    format!(
                        "{} exists and is not empty; nothing was written. Name a new or empty \
                         directory: tend capture %N DIR",
                        dir.display()
                    ),
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| {
                CliError::new(
                    ErrorKind::Io,
                    format!(
                        "cannot create {}: {e}; name another directory",
                        dir.display()
                    ),
                )
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Err(CliError::new(
            ErrorKind::DirNotEmpty,
            format!(
                "{} is a file; nothing was written. Name a new or empty directory",
                dir.display()
            ),
        )),
        Err(e) => Err(CliError::new(
            ErrorKind::Io,
            format!("cannot read {}: {e}; name another directory", dir.display()),
        )),
    }
}

/// Runs the command.
pub fn run(server: &ServerArgs, args: &CaptureArgs, out: &mut dyn Write) -> Result<(), CliError> {
    // A directory named by the user is checked before the daemon is asked,
    // so that a refusal costs nothing.
    if let Some(dir) = &args.dir {
        if dir.exists() {
            prepare(dir)?;
        }
    }
    let t = Target::resolve(server)?;
    run_at(&t.control, args, out)
}

/// `tend capture` through the daemon on `control` (`tend pilot`).
pub fn run_at(
    control: &std::path::Path,
    args: &CaptureArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if let Some(dir) = &args.dir {
        if dir.exists() {
            prepare(dir)?;
        }
    }
    let capture = params::Capture {
        pane: args.pane.clone(),
    };
    let v = client::call(control, capture, Duration::from_secs(10))?;
    let agent = v.agent.as_str();
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            // Only characters that need no quoting in a shell.
            let agent: String = agent
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            PathBuf::from(format!("tend-capture-{agent}-{}", stamp(now)))
        }
    };
    prepare(&dir)?;
    for name in FILES {
        let text = v.files.get(name).ok_or_else(|| {
            CliError::new(
                ErrorKind::BadAnswer,
                format!(
                    "the daemon's capture lacks {name}; restart it (tend stop; tend start) so that \
                     it runs this version of tend"
                ),
            )
        })?;
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| {
            CliError::new(
                ErrorKind::Io,
                format!("cannot write {}: {e}", path.display()),
            )
        })?;
    }
    let state = match (&v.state, &v.reason) {
        (Some(s), Some(r)) => format!("{s}/{r}"),
        (Some(s), None) => s.to_string(),
        _ => "no state".to_owned(),
    };
    if args.json {
        let mut summary = serde_json::to_value(&v).unwrap_or_default();
        if let Some(m) = summary.as_object_mut() {
            m.remove("files");
            m.insert("dir".into(), json!(dir.display().to_string()));
        }
        return writeln!(out, "{summary}").map_err(io);
    }
    let (seconds, wraps) = (v.seconds, v.wraps);
    writeln!(
        out,
        "saved {} ({agent}, {state}, {}) to {}: the last {seconds:.1} s of its output{}",
        v.pane,
        v.size,
        dir.display(),
        if wraps > 0 {
            " (from tend's redraw of the screen: older output is not kept)"
        } else {
            ""
        }
    )
    .map_err(io)?;
    let cast = dir.join("pane.cast");
    writeln!(
        out,
        "replay it:   tend replay {}\n\
         then correct {} (tend's own states, unreviewed), name the scenario and add the folder \
         as tests/corpus/{agent}/<scenario>@<cols>x<rows>/ — or attach it to an issue (read it \
         first: it holds what the pane showed)",
        cast.display(),
        dir.join("labels.json").display()
    )
    .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_dates() {
        assert_eq!(stamp(0), "19700101-000000");
        assert_eq!(stamp(951_782_400), "20000229-000000");
        assert_eq!(stamp(1_796_159_708), "20261201-211508");
    }

    #[test]
    fn a_non_empty_dir_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("keep.txt"), "mine").expect("write");
        let e = prepare(dir.path()).expect_err("refused");
        assert_eq!(e.code(), "dir_not_empty");
        assert!(e.message.contains("not empty"), "{}", e.message);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("keep.txt")).expect("kept"),
            "mine"
        );
        let fresh = dir.path().join("new/deeper");
        prepare(&fresh).expect("created");
        assert!(fresh.is_dir());
        prepare(&fresh).expect("empty is fine");
    }
}
