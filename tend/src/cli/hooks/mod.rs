//! `tend hooks install|uninstall|status <agent>`: wires an agent's own hook
//! system to `tend report`.
//!
//! Which events are wired, and why some agents only report their session id,
//! is documented in `docs/hooks.md`. In short: an agent whose hooks announce
//! both the end of a permission prompt and a user interrupt (Codex) reports
//! its states; one whose hooks stay silent on an interrupt or a denial
//! (Claude Code, Gemini CLI) reports its session identity only, and the
//! screen stays the authority for its state.
//!
//! Every entry tend writes runs `'<absolute tend>' hooks run <agent> <event>`
//! and ends in the shell comment [`MARKER`], which is how `uninstall` and
//! `status` tell tend's entries from the user's. The configuration files are
//! edited as text (`config.rs`): tend's entries are inserted and removed as
//! whole JSON items, so every byte of the user's own configuration survives
//! an install and the matching uninstall.
//!
//! The modules: `spec` the per-agent tables (`tend/hooks/*.toml`),
//! `config` reading and editing the file, `write` backing it up and writing
//! it, `diff` the `--dry-run` output, `run` what an installed hook runs.

use crate::error::ErrorKind;
use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::Value;

use crate::error::CliError;

mod agent;
mod config;
mod diff;
mod run;
mod spec;
mod write;

pub use agent::{hook_command, Agent, MARKER};
use config::{insert_groups, inspect, parse_checked, remove_ours, ConfigFile, Overall};
use diff::unified_diff;
pub use run::{report_args, run_hook};
use spec::{desired_groups, spec, Spec, Trust};
use write::{backup_file, write_config};

/// Arguments of `tend hooks`.
#[derive(Debug, Args)]
pub struct HooksArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: HooksAction,
}

/// The `tend hooks` subcommands.
#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Add tend's entries to the agent's hook configuration (idempotent; the
    /// file is backed up before it changes).
    Install(ChangeArgs),
    /// Remove tend's entries, leaving the rest of the file as it was.
    Uninstall(ChangeArgs),
    /// Show, per event, whether tend's entries are installed.
    Status(StatusArgs),
    /// What an installed hook runs: reads the agent's event on stdin and
    /// passes it on to `tend report`. Prints nothing and always exits 0.
    #[command(hide = true)]
    Run(RunArgs),
}

/// Arguments of `tend hooks install` and `tend hooks uninstall`.
#[derive(Debug, Args)]
pub struct ChangeArgs {
    /// The agent whose hooks to change.
    pub agent: Agent,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `tend hooks status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The agent whose hooks to inspect.
    pub agent: Agent,
}

/// Arguments of the hidden `tend hooks run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The agent that ran the hook.
    pub agent: String,
    /// The agent's event name (e.g. `Stop`).
    pub event: String,
}

// ---------------------------------------------------------------------------
// Entry points.

/// Runs `tend hooks …`.
pub fn run(args: &HooksArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.action {
        HooksAction::Install(a) => install(a, out),
        HooksAction::Uninstall(a) => uninstall(a, out),
        HooksAction::Status(a) => status(a, out),
        HooksAction::Run(a) => {
            run_hook(a);
            Ok(())
        }
    }
}

fn io_err(e: std::io::Error) -> CliError {
    CliError::new(ErrorKind::Io, format!("cannot write output: {e}"))
}

/// `tend hooks install <agent>`.
pub fn install(args: &ChangeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let spec = spec(args.agent);
    let path = config_path(args.agent)?;
    let exe = tend_exe()?;
    let file = ConfigFile::load(&path, spec)?;
    let desired = desired_groups(spec, &exe);
    let report = inspect(&file, spec, &desired)?;
    if report.overall() == Overall::Installed {
        writeln!(
            out,
            "{}: tend's hooks are already installed in {}; nothing changed",
            spec.name,
            path.display()
        )
        .map_err(io_err)?;
        return notes(args.agent, &file, out);
    }
    let cleaned = remove_ours(&file.text, &path, spec)?;
    let new_text = insert_groups(&cleaned, &path, spec, &desired)?;
    // Never write something that does not read back as installed.
    let check = ConfigFile::from_text(&path, new_text.clone(), true, spec)?;
    if inspect(&check, spec, &desired)?.overall() != Overall::Installed {
        return Err(CliError::new(
            ErrorKind::HooksInternal,
            format!(
                "tend could not produce a clean install for {}; nothing was written. Please report this with the file attached",
                path.display()
            ),
        ));
    }
    let events: Vec<&str> = spec.events.iter().map(|e| e.event.as_str()).collect();
    if args.dry_run {
        let old = file.exists.then_some(file.text.as_str());
        out.write_all(unified_diff(old, Some(&new_text), &path).as_bytes())
            .map_err(io_err)?;
        writeln!(
            out,
            "{}: dry run, nothing written (would wire {} in {})",
            spec.name,
            events.join(", "),
            path.display()
        )
        .map_err(io_err)?;
        return Ok(());
    }
    let backup = write_config(&path, &file, &new_text)?;
    writeln!(
        out,
        "{}: installed tend's hooks for {} in {}",
        spec.name,
        events.join(", "),
        path.display()
    )
    .map_err(io_err)?;
    if let Some(b) = backup {
        writeln!(out, "  backup of the previous file: {}", b.display()).map_err(io_err)?;
    }
    writeln!(out, "  {}", trust_line(spec)).map_err(io_err)?;
    notes(args.agent, &check, out)
}

/// `tend hooks uninstall <agent>`.
pub fn uninstall(args: &ChangeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let spec = spec(args.agent);
    let path = config_path(args.agent)?;
    let file = ConfigFile::load(&path, spec)?;
    if !file.exists {
        writeln!(
            out,
            "{}: {} does not exist; nothing to remove",
            spec.name,
            path.display()
        )
        .map_err(io_err)?;
        return Ok(());
    }
    let new_text = remove_ours(&file.text, &path, spec)?;
    if new_text == file.text {
        writeln!(
            out,
            "{}: no tend hooks in {}; nothing changed",
            spec.name,
            path.display()
        )
        .map_err(io_err)?;
        return Ok(());
    }
    // A file that held only tend's entries goes away, as it was before
    // install created it (a symlink's target is kept, holding `{}`).
    let is_link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
    let now_empty = !is_link
        && parse_checked(&new_text, &path, spec)?
            .object
            .properties()
            .is_empty();
    if args.dry_run {
        if now_empty {
            out.write_all(unified_diff(Some(&file.text), None, &path).as_bytes())
                .map_err(io_err)?;
        } else {
            out.write_all(unified_diff(Some(&file.text), Some(&new_text), &path).as_bytes())
                .map_err(io_err)?;
        }
        writeln!(
            out,
            "{}: dry run, nothing written{}",
            spec.name,
            if now_empty {
                format!(
                    " (would remove {}: it holds only tend's hooks)",
                    path.display()
                )
            } else {
                String::new()
            }
        )
        .map_err(io_err)?;
        return Ok(());
    }
    if now_empty {
        let backup = backup_file(&path)?;
        std::fs::remove_file(&path).map_err(|e| {
            CliError::new(
                ErrorKind::HooksWriteFailed,
                format!("cannot remove {}: {e}", path.display()),
            )
        })?;
        writeln!(
            out,
            "{}: removed tend's hooks; {} held nothing else and was removed (backup: {})",
            spec.name,
            path.display(),
            backup.display()
        )
        .map_err(io_err)?;
        return Ok(());
    }
    let backup = write_config(&path, &file, &new_text)?;
    writeln!(
        out,
        "{}: removed tend's hooks from {}",
        spec.name,
        path.display()
    )
    .map_err(io_err)?;
    if let Some(b) = backup {
        writeln!(out, "  backup of the previous file: {}", b.display()).map_err(io_err)?;
    }
    Ok(())
}

/// `tend hooks status <agent>`.
pub fn status(args: &StatusArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let spec = spec(args.agent);
    let path = config_path(args.agent)?;
    let exe = tend_exe()?;
    let file = ConfigFile::load(&path, spec)?;
    let desired = desired_groups(spec, &exe);
    let report = inspect(&file, spec, &desired)?;
    writeln!(
        out,
        "{} hooks ({}): {}",
        spec.name,
        path.display(),
        report.overall().label()
    )
    .map_err(io_err)?;
    for (event, state) in &report.events {
        writeln!(out, "  {event:<18} {}", state.label()).map_err(io_err)?;
    }
    for event in &report.stray {
        writeln!(
            out,
            "  {event:<18} stray tend entry (not used; install or uninstall removes it)"
        )
        .map_err(io_err)?;
    }
    writeln!(out, "  {}", trust_line(spec)).map_err(io_err)?;
    notes(args.agent, &file, out)
}

fn trust_line(spec: &Spec) -> String {
    match spec.trust {
        Trust::States => format!(
            "trust: states ({} reports working, waiting/approval, done and idle): {}",
            spec.display, spec.why
        ),
        Trust::Identity => format!("trust: session identity only: {}", spec.why),
    }
}

/// Warnings about things outside tend's entries that keep them from running.
fn notes(agent: Agent, file: &ConfigFile, out: &mut dyn Write) -> Result<(), CliError> {
    let mut lines = Vec::new();
    let value: Option<&Value> = if file.exists {
        file.value.as_ref()
    } else {
        None
    };
    match agent {
        Agent::Claude => {
            if value
                .as_ref()
                .and_then(|v| v.get("disableAllHooks"))
                .and_then(Value::as_bool)
                == Some(true)
            {
                lines.push(
                    "note: \"disableAllHooks\" is true in this file, so Claude Code runs no hooks"
                        .to_string(),
                );
            }
        }
        Agent::Codex => {
            lines.push(
                "note: Codex runs new or changed hooks only after you trust them: open /hooks in Codex once and trust tend's entries"
                    .to_string(),
            );
            if let Some(dir) = file.path.parent() {
                let toml_path = dir.join("config.toml");
                if let Ok(text) = std::fs::read_to_string(&toml_path) {
                    match text.parse::<toml::Table>() {
                        Ok(t) => {
                            let features = t.get("features").and_then(|f| f.as_table());
                            let off = |k: &str| {
                                features.and_then(|f| f.get(k)).and_then(|v| v.as_bool())
                                    == Some(false)
                            };
                            if off("hooks") || off("codex_hooks") {
                                lines.push(format!(
                                    "note: hooks are turned off in {} ([features] hooks = false); tend's entries do not run until you turn them on",
                                    toml_path.display()
                                ));
                            }
                            if t.contains_key("hooks") {
                                lines.push(format!(
                                    "note: {} also has inline [hooks]; Codex loads both and warns at startup",
                                    toml_path.display()
                                ));
                            }
                        }
                        Err(e) => lines.push(format!(
                            "note: could not check {} for [features] hooks: {}",
                            toml_path.display(),
                            e.to_string().lines().next().unwrap_or("invalid TOML")
                        )),
                    }
                }
            }
        }
        Agent::Gemini => {
            let flag = |a: &str, b: &str| {
                value
                    .as_ref()
                    .and_then(|v| v.get(a))
                    .and_then(|v| v.get(b))
                    .and_then(Value::as_bool)
            };
            if flag("hooksConfig", "enabled") == Some(false)
                || flag("tools", "enableHooks") == Some(false)
            {
                lines.push(
                    "note: the hooks system is turned off in this file (hooksConfig.enabled / tools.enableHooks), so Gemini CLI runs no hooks"
                        .to_string(),
                );
            }
            let disabled: Vec<String> = value
                .as_ref()
                .and_then(|v| v.get("hooks"))
                .and_then(|h| h.get("disabled"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .filter(|n| n.starts_with("tend-"))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            if !disabled.is_empty() {
                lines.push(format!(
                    "note: hooks.disabled lists {}; Gemini CLI skips them",
                    disabled.join(", ")
                ));
            }
        }
    }
    for l in lines {
        writeln!(out, "  {l}").map_err(io_err)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Where the files are and what goes in them.

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn home() -> Result<PathBuf, CliError> {
    env_path("HOME").ok_or_else(|| {
        CliError::new(
            ErrorKind::NoHome,
            "HOME is not set, so tend cannot find the agent's configuration; set HOME and run the command again",
        )
    })
}

/// The hook configuration file of an agent, honouring the agent's own
/// override of its configuration directory.
pub fn config_path(agent: Agent) -> Result<PathBuf, CliError> {
    Ok(match agent {
        Agent::Claude => match env_path("CLAUDE_CONFIG_DIR") {
            Some(d) => d.join("settings.json"),
            None => home()?.join(".claude").join("settings.json"),
        },
        Agent::Codex => match env_path("CODEX_HOME") {
            Some(d) => d.join("hooks.json"),
            None => home()?.join(".codex").join("hooks.json"),
        },
        Agent::Gemini => match env_path("GEMINI_CLI_HOME") {
            Some(d) => d.join(".gemini").join("settings.json"),
            None => home()?.join(".gemini").join("settings.json"),
        },
    })
}

fn tend_exe() -> Result<String, CliError> {
    let exe = std::env::current_exe().map_err(|e| {
        CliError::new(
            ErrorKind::Exe,
            format!("cannot find the tend executable to write into the hooks: {e}"),
        )
    })?;
    let s = exe.to_str().ok_or_else(|| {
        CliError::new(
            ErrorKind::Exe,
            format!(
                "the tend executable's path {} is not UTF-8; move tend to a plain path and install again",
                exe.display()
            ),
        )
    })?;
    if s.chars().any(char::is_control) {
        return Err(CliError::new(
            ErrorKind::Exe,
            format!("the tend executable's path {s:?} holds control characters; move tend to a plain path and install again"),
        ));
    }
    Ok(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::agent::shell_quote;
    use super::*;

    #[test]
    fn shell_quote_survives_quotes() {
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
    }

    #[test]
    fn hook_command_ends_in_the_marker() {
        assert_eq!(
            hook_command("/opt/tend", "codex", "Stop"),
            "'/opt/tend' hooks run codex Stop >/dev/null 2>&1 || true # tend-managed"
        );
    }
}
