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
//! edited as text: tend's entries are inserted and removed as whole JSON
//! items, so every byte of the user's own configuration survives an install
//! and the matching uninstall.

use std::io::{Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;

use crate::error::CliError;

/// The shell comment that ends every command tend writes into an agent's
/// hook configuration.
pub const MARKER: &str = "# tend-managed";

/// How long a hook waits for the agent's event on stdin.
const STDIN_WAIT: Duration = Duration::from_millis(1000);
/// How long a hook waits for `tend report` before giving up on it.
const REPORT_WAIT: Duration = Duration::from_millis(1500);
/// The most of the event tend keeps for parsing (the rest is drained).
const STDIN_KEEP: usize = 1 << 20;

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

/// The agents whose hooks tend can install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Agent {
    /// Claude Code (`~/.claude/settings.json`).
    Claude,
    /// OpenAI Codex CLI (`~/.codex/hooks.json`).
    Codex,
    /// Gemini CLI (`~/.gemini/settings.json`).
    Gemini,
}

/// How far tend trusts an agent's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trust {
    /// The hooks report states (working, waiting/approval, done, idle).
    States,
    /// The hooks report the session id only; the screen decides the state.
    Identity,
}

/// One event tend hooks into.
struct EventSpec {
    event: &'static str,
    matcher: Option<&'static str>,
    /// The agent's timeout for the hook, in the agent's unit.
    timeout: u64,
}

struct Spec {
    name: &'static str,
    display: &'static str,
    trust: Trust,
    events: &'static [EventSpec],
    why: &'static str,
}

const CLAUDE: Spec = Spec {
    name: "claude",
    display: "Claude Code",
    trust: Trust::Identity,
    events: &[
        EventSpec {
            event: "SessionStart",
            matcher: None,
            timeout: 5,
        },
        EventSpec {
            event: "SessionEnd",
            matcher: None,
            timeout: 5,
        },
    ],
    why: "Claude Code's hooks fire nothing when you interrupt a turn (Esc) or deny a permission, \
          so a reported state would stick; its hooks report the session id only and the screen \
          stays the authority",
};

const CODEX: Spec = Spec {
    name: "codex",
    display: "Codex",
    trust: Trust::States,
    events: &[
        EventSpec {
            event: "SessionStart",
            matcher: Some("startup|resume|clear"),
            timeout: 5,
        },
        EventSpec {
            event: "UserPromptSubmit",
            matcher: None,
            timeout: 5,
        },
        EventSpec {
            event: "PreToolUse",
            matcher: None,
            timeout: 5,
        },
        EventSpec {
            event: "PermissionRequest",
            matcher: None,
            timeout: 5,
        },
        EventSpec {
            event: "PostToolUse",
            matcher: None,
            timeout: 5,
        },
        EventSpec {
            event: "Stop",
            matcher: None,
            timeout: 5,
        },
        // Codex caps these two at 3 seconds.
        EventSpec {
            event: "Interrupt",
            matcher: None,
            timeout: 3,
        },
        EventSpec {
            event: "SessionEnd",
            matcher: None,
            timeout: 3,
        },
    ],
    why: "Codex's hooks announce permission prompts, what follows them and interrupts, so they \
          report states",
};

const GEMINI: Spec = Spec {
    name: "gemini",
    display: "Gemini CLI",
    trust: Trust::Identity,
    events: &[
        EventSpec {
            event: "SessionStart",
            matcher: None,
            timeout: 5000,
        },
        EventSpec {
            event: "SessionEnd",
            matcher: None,
            timeout: 5000,
        },
    ],
    why: "Gemini CLI's hooks have no interrupt event and no permission-result event (its \
          Notification hook only says a permission prompt opened), so they report the session id \
          only and the screen stays the authority",
};

fn spec(agent: Agent) -> &'static Spec {
    match agent {
        Agent::Claude => &CLAUDE,
        Agent::Codex => &CODEX,
        Agent::Gemini => &GEMINI,
    }
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
    CliError::new("io", format!("cannot write output: {e}"))
}

/// `tend hooks install <agent>`.
pub fn install(args: &ChangeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let spec = spec(args.agent);
    let path = config_path(args.agent)?;
    let exe = tend_exe()?;
    let file = ConfigFile::load(&path)?;
    let desired = desired_groups(args.agent, &exe)?;
    let report = inspect(&file, args.agent, &desired)?;
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
    let cleaned = remove_ours(&file.text, &path)?;
    let new_text = insert_groups(&cleaned, &path, &desired)?;
    // Never write something that does not read back as installed.
    let check = ConfigFile::from_text(&path, new_text.clone(), true)?;
    if inspect(&check, args.agent, &desired)?.overall() != Overall::Installed {
        return Err(CliError::new(
            "hooks_internal",
            format!(
                "tend could not produce a clean install for {}; nothing was written. Please report this with the file attached",
                path.display()
            ),
        ));
    }
    let events: Vec<&str> = spec.events.iter().map(|e| e.event).collect();
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
    let file = ConfigFile::load(&path)?;
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
    let new_text = remove_ours(&file.text, &path)?;
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
        && matches!(
            parse_checked(&new_text, &path)?.kind,
            Kind::Object(ref m) if m.is_empty()
        );
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
                "hooks_write_failed",
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
    let file = ConfigFile::load(&path)?;
    let desired = desired_groups(args.agent, &exe)?;
    let report = inspect(&file, args.agent, &desired)?;
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
    let value: Option<Value> = if file.exists && !file.text.trim().is_empty() {
        serde_json::from_str(&file.text).ok()
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
            "no_home",
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
            "exe",
            format!("cannot find the tend executable to write into the hooks: {e}"),
        )
    })?;
    let s = exe.to_str().ok_or_else(|| {
        CliError::new(
            "exe",
            format!(
                "the tend executable's path {} is not UTF-8; move tend to a plain path and install again",
                exe.display()
            ),
        )
    })?;
    if s.chars().any(char::is_control) {
        return Err(CliError::new(
            "exe",
            format!("the tend executable's path {s:?} holds control characters; move tend to a plain path and install again"),
        ));
    }
    Ok(s.to_string())
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command an installed hook runs. It never fails and never prints:
/// whatever happens (tend gone, daemon not running), the agent sees exit 0
/// and empty output.
pub fn hook_command(exe: &str, agent: &str, event: &str) -> String {
    format!(
        "{} hooks run {agent} {event} >/dev/null 2>&1 || true {MARKER}",
        shell_quote(exe)
    )
}

/// A small ordered JSON value, rendered the way people write settings files.
#[derive(Debug, Clone)]
enum J {
    Obj(Vec<(&'static str, J)>),
    Arr(Vec<J>),
    Str(String),
    Num(u64),
}

impl J {
    fn to_value(&self) -> Value {
        match self {
            J::Obj(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| ((*k).to_string(), v.to_value()))
                    .collect(),
            ),
            J::Arr(a) => Value::Array(a.iter().map(J::to_value).collect()),
            J::Str(s) => Value::String(s.clone()),
            J::Num(n) => Value::from(*n),
        }
    }

    fn pretty(&self, indent: &str, unit: &str) -> String {
        match self {
            J::Obj(m) if !m.is_empty() => {
                let inner = format!("{indent}{unit}");
                let body: Vec<String> = m
                    .iter()
                    .map(|(k, v)| format!("{inner}{}: {}", json_str(k), v.pretty(&inner, unit)))
                    .collect();
                format!("{{\n{}\n{indent}}}", body.join(",\n"))
            }
            J::Arr(a) if !a.is_empty() => {
                let inner = format!("{indent}{unit}");
                let body: Vec<String> = a
                    .iter()
                    .map(|v| format!("{inner}{}", v.pretty(&inner, unit)))
                    .collect();
                format!("[\n{}\n{indent}]", body.join(",\n"))
            }
            _ => self.compact(),
        }
    }

    fn compact(&self) -> String {
        match self {
            J::Obj(m) => {
                let body: Vec<String> = m
                    .iter()
                    .map(|(k, v)| format!("{}:{}", json_str(k), v.compact()))
                    .collect();
                format!("{{{}}}", body.join(","))
            }
            J::Arr(a) => {
                let body: Vec<String> = a.iter().map(J::compact).collect();
                format!("[{}]", body.join(","))
            }
            J::Str(s) => json_str(s),
            J::Num(n) => n.to_string(),
        }
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// The matcher group tend wants under each event, in the agent's format.
fn desired_groups(agent: Agent, exe: &str) -> Result<Vec<(&'static str, J)>, CliError> {
    let spec = spec(agent);
    Ok(spec
        .events
        .iter()
        .map(|e| {
            let command = J::Str(hook_command(exe, spec.name, e.event));
            let handler = match agent {
                Agent::Claude | Agent::Codex => J::Obj(vec![
                    ("type", J::Str("command".into())),
                    ("command", command),
                    ("timeout", J::Num(e.timeout)),
                ]),
                Agent::Gemini => J::Obj(vec![
                    ("name", J::Str(format!("tend-{}", e.event))),
                    ("type", J::Str("command".into())),
                    ("command", command),
                    (
                        "description",
                        J::Str("tend: report this session to the tend status line".into()),
                    ),
                    ("timeout", J::Num(e.timeout)),
                ]),
            };
            let mut group = Vec::new();
            if let Some(m) = e.matcher {
                group.push(("matcher", J::Str(m.into())));
            }
            group.push(("hooks", J::Arr(vec![handler])));
            (e.event, J::Obj(group))
        })
        .collect())
}

// ---------------------------------------------------------------------------
// Reading the file: a JSON scanner that keeps byte spans, so edits touch only
// tend's own items.

#[derive(Debug)]
struct Node {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    Str(String),
    Other,
}

#[derive(Debug)]
struct Member {
    key: String,
    /// Where the key's opening quote is.
    start: usize,
    value: Node,
}

impl Node {
    fn member(&self, key: &str) -> Option<&Member> {
        match &self.kind {
            Kind::Object(m) => m.iter().rev().find(|m| m.key == key),
            _ => None,
        }
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Object(_) => "an object",
            Kind::Array(_) => "an array",
            Kind::Str(_) => "a string",
            Kind::Other => "a number, boolean or null",
        }
    }
}

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while let Some(c) = self.b.get(self.i) {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    fn string(&mut self) -> Option<(String, usize, usize)> {
        self.ws();
        let start = self.i;
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        loop {
            match self.b.get(self.i)? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    break;
                }
                _ => self.i += 1,
            }
        }
        let s: String = serde_json::from_str(self.text.get(start..self.i)?).ok()?;
        Some((s, start, self.i))
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        if depth > 256 {
            return None;
        }
        self.ws();
        let start = self.i;
        match self.b.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                if self.eat(b'}').is_none() {
                    loop {
                        let (key, kstart, _) = self.string()?;
                        self.eat(b':')?;
                        let value = self.value(depth + 1)?;
                        members.push(Member {
                            key,
                            start: kstart,
                            value,
                        });
                        if self.eat(b',').is_some() {
                            continue;
                        }
                        self.eat(b'}')?;
                        break;
                    }
                }
                Some(Node {
                    start,
                    end: self.i,
                    kind: Kind::Object(members),
                })
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                if self.eat(b']').is_none() {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.eat(b',').is_some() {
                            continue;
                        }
                        self.eat(b']')?;
                        break;
                    }
                }
                Some(Node {
                    start,
                    end: self.i,
                    kind: Kind::Array(items),
                })
            }
            b'"' => {
                let (s, start, end) = self.string()?;
                Some(Node {
                    start,
                    end,
                    kind: Kind::Str(s),
                })
            }
            _ => {
                while let Some(c) = self.b.get(self.i) {
                    if matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.i += 1;
                }
                if self.i == start {
                    return None;
                }
                Some(Node {
                    start,
                    end: self.i,
                    kind: Kind::Other,
                })
            }
        }
    }
}

fn bad_file(path: &Path, what: String) -> CliError {
    CliError::new(
        "hooks_config_invalid",
        format!(
            "{}: {what}. tend has not changed the file; fix it (or move it aside) and run the command again",
            path.display()
        ),
    )
}

/// Validates `text` as JSON (naming line and column on error) and scans it.
/// The document must be an object.
fn parse_checked(text: &str, path: &Path) -> Result<Node, CliError> {
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        let hint = if text.contains("//") || text.contains("/*") {
            " (comments are not plain JSON; tend edits only plain JSON, so remove them or add the hooks by hand as docs/hooks.md shows)"
        } else {
            ""
        };
        return Err(bad_file(
            path,
            format!(
                "invalid JSON at line {}, column {}: {e}{hint}",
                e.line(),
                e.column()
            ),
        ));
    }
    let mut sc = Scanner {
        text,
        b: text.as_bytes(),
        i: 0,
    };
    let root = sc
        .value(0)
        .ok_or_else(|| bad_file(path, "tend could not read its structure".to_string()))?;
    if !matches!(root.kind, Kind::Object(_)) {
        return Err(bad_file(
            path,
            format!(
                "the file holds {}, expected a JSON object",
                root.kind_name()
            ),
        ));
    }
    if let Some(h) = root.member("hooks") {
        if !matches!(h.value.kind, Kind::Object(_)) {
            return Err(bad_file(
                path,
                format!(
                    "\"hooks\" (line {}) is {}, expected an object",
                    line_of(text, h.start),
                    h.value.kind_name()
                ),
            ));
        }
    }
    Ok(root)
}

fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(pos)
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

/// A hook configuration file as read from disk.
struct ConfigFile {
    path: PathBuf,
    exists: bool,
    /// The text; `{}\n` stands in for an absent or blank file.
    text: String,
}

impl ConfigFile {
    fn load(path: &Path) -> Result<ConfigFile, CliError> {
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|e| {
                    bad_file(
                        path,
                        format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
                    )
                })?;
                ConfigFile::from_text(path, text, true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ConfigFile::from_text(path, String::new(), false)
            }
            Err(e) => Err(CliError::new(
                "file_unreadable",
                format!("cannot read {}: {e}", path.display()),
            )),
        }
    }

    fn from_text(path: &Path, text: String, exists: bool) -> Result<ConfigFile, CliError> {
        let text = if text.trim().is_empty() {
            "{}\n".to_string()
        } else {
            text
        };
        parse_checked(&text, path)?;
        Ok(ConfigFile {
            path: path.to_path_buf(),
            exists,
            text,
        })
    }
}

// ---------------------------------------------------------------------------
// What is installed.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventState {
    Installed,
    Outdated,
    Missing,
}

impl EventState {
    fn label(self) -> &'static str {
        match self {
            EventState::Installed => "installed",
            EventState::Outdated => {
                "outdated (tend's entry differs from what install writes now; install again)"
            }
            EventState::Missing => "not installed",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overall {
    Installed,
    NotInstalled,
    Partial,
}

impl Overall {
    fn label(self) -> &'static str {
        match self {
            Overall::Installed => "installed",
            Overall::NotInstalled => "not installed",
            Overall::Partial => "partially installed",
        }
    }
}

struct InstallReport {
    events: Vec<(&'static str, EventState)>,
    stray: Vec<String>,
}

impl InstallReport {
    fn overall(&self) -> Overall {
        let all = self.events.iter().all(|(_, s)| *s == EventState::Installed);
        let none = self.events.iter().all(|(_, s)| *s == EventState::Missing);
        if all && self.stray.is_empty() {
            Overall::Installed
        } else if none && self.stray.is_empty() {
            Overall::NotInstalled
        } else {
            Overall::Partial
        }
    }
}

fn is_ours(handler: &Node) -> bool {
    matches!(
        handler.member("command").map(|m| &m.value.kind),
        Some(Kind::Str(c)) if c.contains(MARKER)
    )
}

/// The handlers of a matcher group (`{"matcher": …, "hooks": [ … ]}`).
fn group_handlers(group: &Node) -> Option<&Vec<Node>> {
    match &group.member("hooks")?.value.kind {
        Kind::Array(items) => Some(items),
        _ => None,
    }
}

fn inspect(
    file: &ConfigFile,
    agent: Agent,
    desired: &[(&'static str, J)],
) -> Result<InstallReport, CliError> {
    let root = parse_checked(&file.text, &file.path)?;
    let mut events = Vec::new();
    let mut stray = Vec::new();
    let hooks = root.member("hooks").map(|m| &m.value);
    let managed: Vec<&str> = spec(agent).events.iter().map(|e| e.event).collect();
    if let Some(Kind::Object(members)) = hooks.map(|h| &h.kind) {
        for m in members {
            if managed.contains(&m.key.as_str()) {
                continue;
            }
            if let Kind::Array(groups) = &m.value.kind {
                if groups
                    .iter()
                    .filter_map(group_handlers)
                    .flatten()
                    .any(is_ours)
                {
                    stray.push(m.key.clone());
                }
            }
        }
    }
    for (event, want) in desired {
        let groups = match hooks.and_then(|h| h.member(event)).map(|m| &m.value.kind) {
            Some(Kind::Array(g)) => g.as_slice(),
            _ => &[],
        };
        let mut ours_groups = 0;
        let mut ours_handlers = 0;
        let mut equal = false;
        for g in groups {
            let Some(handlers) = group_handlers(g) else {
                continue;
            };
            let n = handlers.iter().filter(|h| is_ours(h)).count();
            if n == 0 {
                continue;
            }
            ours_handlers += n;
            ours_groups += 1;
            if n == handlers.len() {
                let text = file.text.get(g.start..g.end).unwrap_or("");
                if serde_json::from_str::<Value>(text).ok() == Some(want.to_value()) {
                    equal = true;
                }
            }
        }
        let state = if ours_handlers == 0 {
            EventState::Missing
        } else if equal && ours_groups == 1 && ours_handlers == 1 {
            EventState::Installed
        } else {
            EventState::Outdated
        };
        events.push((*event, state));
    }
    Ok(InstallReport { events, stray })
}

// ---------------------------------------------------------------------------
// Editing.

/// The byte ranges that remove the items `remove` (sorted indices) from a
/// container whose items span `spans`, separators included. Removing a run
/// after the first item takes the separator before it, so an item that was
/// appended is removed byte for byte.
fn item_ranges(spans: &[(usize, usize)], remove: &[usize]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < remove.len() {
        let a = remove[k];
        let mut b = a;
        while k + 1 < remove.len() && remove[k + 1] == b + 1 {
            k += 1;
            b += 1;
        }
        k += 1;
        if a > 0 {
            out.push(spans[a - 1].1..spans[b].1);
        } else if b + 1 < spans.len() {
            out.push(spans[a].0..spans[b + 1].0);
        } else if let (Some(f), Some(l)) = (spans.first(), spans.last()) {
            out.push(f.0..l.1);
        }
    }
    out
}

fn member_spans(members: &[Member]) -> Vec<(usize, usize)> {
    members.iter().map(|m| (m.start, m.value.end)).collect()
}

fn node_spans(nodes: &[Node]) -> Vec<(usize, usize)> {
    nodes.iter().map(|n| (n.start, n.end)).collect()
}

fn apply(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by(|a, b| b.0.start.cmp(&a.0.start).then(b.0.end.cmp(&a.0.end)));
    let mut out = text.to_string();
    for (r, s) in edits {
        if r.start <= r.end && r.end <= out.len() {
            out.replace_range(r, &s);
        }
    }
    out
}

/// `text` without any of tend's entries (the user's bytes untouched).
fn remove_ours(text: &str, path: &Path) -> Result<String, CliError> {
    let root = parse_checked(text, path)?;
    let Kind::Object(root_members) = &root.kind else {
        return Ok(text.to_string());
    };
    let Some(hooks_idx) = root_members.iter().rposition(|m| m.key == "hooks") else {
        return Ok(text.to_string());
    };
    let Kind::Object(events) = &root_members[hooks_idx].value.kind else {
        return Ok(text.to_string());
    };
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut drop_events = Vec::new();
    for (ei, ev) in events.iter().enumerate() {
        let Kind::Array(groups) = &ev.value.kind else {
            continue;
        };
        let mut drop_groups = Vec::new();
        let mut inner = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            let Some(handlers) = group_handlers(g) else {
                continue;
            };
            let ours: Vec<usize> = handlers
                .iter()
                .enumerate()
                .filter(|(_, h)| is_ours(h))
                .map(|(i, _)| i)
                .collect();
            if ours.is_empty() {
                continue;
            }
            if ours.len() == handlers.len() {
                drop_groups.push(gi);
            } else {
                inner.extend(item_ranges(&node_spans(handlers), &ours));
            }
        }
        if !groups.is_empty() && drop_groups.len() == groups.len() {
            drop_events.push(ei);
        } else {
            ranges.extend(item_ranges(&node_spans(groups), &drop_groups));
            ranges.extend(inner);
        }
    }
    if !drop_events.is_empty() {
        if drop_events.len() == events.len() {
            if root_members.len() == 1 {
                ranges.push(root.start + 1..root.end - 1);
            } else {
                ranges.extend(item_ranges(&member_spans(root_members), &[hooks_idx]));
            }
        } else {
            ranges.extend(item_ranges(&member_spans(events), &drop_events));
        }
    }
    let edits = ranges.into_iter().map(|r| (r, String::new())).collect();
    Ok(apply(text, edits))
}

/// Leading whitespace of the line `pos` is on, if only whitespace precedes
/// `pos` on that line.
fn line_lead(text: &str, pos: usize) -> Option<&str> {
    let line_start = text.get(..pos)?.rfind('\n').map_or(0, |i| i + 1);
    let lead = text.get(line_start..pos)?;
    lead.chars().all(|c| c == ' ' || c == '\t').then_some(lead)
}

/// Leading whitespace of the line `pos` is on.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text
        .get(..pos)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    let rest = text.get(line_start..).unwrap_or("");
    let n = rest
        .find(|c: char| c != ' ' && c != '\t')
        .unwrap_or(rest.len());
    rest.get(..n).unwrap_or("")
}

/// One new item for a container: an object member (`Some(key)`) or an
/// array element.
type NewItem<'a> = (Option<&'a str>, &'a J);

fn render_item(item: &NewItem<'_>, indent: &str, unit: &str, compact: bool) -> String {
    let value = if compact {
        item.1.compact()
    } else {
        item.1.pretty(indent, unit)
    };
    match item.0 {
        Some(k) if compact => format!("{}:{value}", json_str(k)),
        Some(k) => format!("{}: {value}", json_str(k)),
        None => value,
    }
}

/// The edit that appends `items` to the container `node` (whose items span
/// `spans`), in the container's own layout.
fn append_edit(
    text: &str,
    node: &Node,
    spans: &[(usize, usize)],
    items: &[NewItem<'_>],
    unit: &str,
) -> (Range<usize>, String) {
    if let Some(&(last_start, last_end)) = spans.last() {
        match line_lead(text, last_start) {
            Some(indent) => {
                let s: String = items
                    .iter()
                    .map(|it| format!(",\n{indent}{}", render_item(it, indent, unit, false)))
                    .collect();
                (last_end..last_end, s)
            }
            None => {
                let sep = match spans {
                    [a, b, ..] => text.get(a.1..b.0).unwrap_or(","),
                    _ => ",",
                };
                let sep = if sep.trim() == "," { sep } else { "," };
                let s: String = items
                    .iter()
                    .map(|it| format!("{sep}{}", render_item(it, "", unit, true)))
                    .collect();
                (last_end..last_end, s)
            }
        }
    } else {
        let outer = line_indent(text, node.start);
        let indent = format!("{outer}{unit}");
        let body: Vec<String> = items
            .iter()
            .map(|it| format!("\n{indent}{}", render_item(it, &indent, unit, false)))
            .collect();
        (
            node.start + 1..node.end - 1,
            format!("{}\n{outer}", body.join(",")),
        )
    }
}

/// The file's indentation unit, from its first top-level member (two spaces
/// when it does not tell).
fn indent_unit(text: &str, root: &Node) -> String {
    if let Kind::Object(m) = &root.kind {
        if let Some(first) = m.first() {
            if let Some(lead) = line_lead(text, first.start) {
                if !lead.is_empty() {
                    return lead.to_string();
                }
            }
        }
    }
    "  ".to_string()
}

/// `text` with tend's groups appended under their events.
fn insert_groups(
    text: &str,
    path: &Path,
    desired: &[(&'static str, J)],
) -> Result<String, CliError> {
    let root = parse_checked(text, path)?;
    let unit = indent_unit(text, &root);
    let Kind::Object(root_members) = &root.kind else {
        return Ok(text.to_string());
    };
    let Some(hooks) = root.member("hooks") else {
        let events = J::Obj(
            desired
                .iter()
                .map(|(e, g)| (*e, J::Arr(vec![g.clone()])))
                .collect(),
        );
        let edit = append_edit(
            text,
            &root,
            &member_spans(root_members),
            &[(Some("hooks"), &events)],
            &unit,
        );
        return Ok(apply(text, crlf(text, vec![edit])));
    };
    let Kind::Object(event_members) = &hooks.value.kind else {
        return Ok(text.to_string());
    };
    let mut edits = Vec::new();
    let mut new_events: Vec<(&str, J)> = Vec::new();
    for (event, group) in desired {
        match hooks.value.member(event) {
            Some(m) => {
                let Kind::Array(groups) = &m.value.kind else {
                    return Err(bad_file(
                        path,
                        format!(
                            "\"hooks\".\"{event}\" (line {}) is {}, expected an array of matcher groups",
                            line_of(text, m.start),
                            m.value.kind_name()
                        ),
                    ));
                };
                edits.push(append_edit(
                    text,
                    &m.value,
                    &node_spans(groups),
                    &[(None, group)],
                    &unit,
                ));
            }
            None => new_events.push((event, J::Arr(vec![group.clone()]))),
        }
    }
    if !new_events.is_empty() {
        let items: Vec<NewItem<'_>> = new_events.iter().map(|(e, j)| (Some(*e), j)).collect();
        edits.push(append_edit(
            text,
            &hooks.value,
            &member_spans(event_members),
            &items,
            &unit,
        ));
    }
    Ok(apply(text, crlf(text, edits)))
}

/// Inserted text follows the file's line endings.
fn crlf(text: &str, edits: Vec<(Range<usize>, String)>) -> Vec<(Range<usize>, String)> {
    if !text.contains("\r\n") {
        return edits;
    }
    edits
        .into_iter()
        .map(|(r, s)| (r, s.replace("\r\n", "\n").replace('\n', "\r\n")))
        .collect()
}

// ---------------------------------------------------------------------------
// Writing.

fn resolve_symlink(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// `YYYYmmddTHHMMSSZ` for now, in UTC.
fn timestamp() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Copies `path` to `<path>.tend-backup-<timestamp>` next to it.
fn backup_file(path: &Path) -> Result<PathBuf, CliError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let stamp = timestamp();
    let mut candidate = path.with_file_name(format!("{name}.tend-backup-{stamp}"));
    let mut n = 2;
    while candidate.exists() {
        candidate = path.with_file_name(format!("{name}.tend-backup-{stamp}-{n}"));
        n += 1;
    }
    std::fs::copy(path, &candidate).map_err(|e| {
        CliError::new(
            "hooks_write_failed",
            format!(
                "cannot back up {} to {}: {e}; nothing was changed",
                path.display(),
                candidate.display()
            ),
        )
    })?;
    Ok(candidate)
}

/// Writes `text` to the configuration file (atomically, keeping its mode and
/// following a symlink), backing the old file up first. Returns the backup.
fn write_config(path: &Path, file: &ConfigFile, text: &str) -> Result<Option<PathBuf>, CliError> {
    let target = resolve_symlink(path);
    let fail = |what: String| CliError::new("hooks_write_failed", what);
    let dir = target
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir)
        .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
    let backup = if file.exists {
        Some(backup_file(&target)?)
    } else {
        None
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let tmp = dir.join(format!(".{name}.tend-tmp-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(&target) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, &target)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(format!(
            "cannot write {}: {e}; the file was not changed",
            target.display()
        )));
    }
    Ok(backup)
}

// ---------------------------------------------------------------------------
// The dry-run diff.

enum Op<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

fn diff_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut ops: Vec<Op<'a>> = a[..pre].iter().map(|l| Op::Same(l)).collect();
    if ma.len().saturating_mul(mb.len()) <= 4_000_000 {
        // Longest common subsequence over the changed middle.
        let (n, m) = (ma.len(), mb.len());
        let mut t = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                t[i * (m + 1) + j] = if ma[i] == mb[j] {
                    t[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    t[(i + 1) * (m + 1) + j].max(t[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n && j < m {
            if ma[i] == mb[j] {
                ops.push(Op::Same(ma[i]));
                i += 1;
                j += 1;
            } else if t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1] {
                ops.push(Op::Del(ma[i]));
                i += 1;
            } else {
                ops.push(Op::Add(mb[j]));
                j += 1;
            }
        }
        ops.extend(ma[i..].iter().map(|l| Op::Del(l)));
        ops.extend(mb[j..].iter().map(|l| Op::Add(l)));
    } else {
        ops.extend(ma.iter().map(|l| Op::Del(l)));
        ops.extend(mb.iter().map(|l| Op::Add(l)));
    }
    ops.extend(a[a.len() - suf..].iter().map(|l| Op::Same(l)));
    ops
}

/// A unified diff (three lines of context) from `old` to `new`.
fn unified_diff(old: Option<&str>, new: Option<&str>, path: &Path) -> String {
    let label = |t: Option<&str>| match t {
        Some(_) => path.display().to_string(),
        None => "/dev/null".to_string(),
    };
    let head = format!("--- {}\n+++ {}\n", label(old), label(new));
    let (old, new) = (old.unwrap_or(""), new.unwrap_or(""));
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = diff_ops(&a, &b);
    let mut out = head;
    const CTX: usize = 3;
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| !matches!(o, Op::Same(_)))
        .map(|(i, _)| i)
        .collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CTX);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CTX + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + CTX + 1).min(ops.len());
        // Line numbers at the hunk's start.
        let (mut la, mut lb) = (1, 1);
        for o in &ops[..start] {
            match o {
                Op::Same(_) => {
                    la += 1;
                    lb += 1;
                }
                Op::Del(_) => la += 1,
                Op::Add(_) => lb += 1,
            }
        }
        let na = ops[start..end]
            .iter()
            .filter(|o| !matches!(o, Op::Add(_)))
            .count();
        let nb = ops[start..end]
            .iter()
            .filter(|o| !matches!(o, Op::Del(_)))
            .count();
        let la = if na == 0 { la - 1 } else { la };
        let lb = if nb == 0 { lb - 1 } else { lb };
        out.push_str(&format!("@@ -{la},{na} +{lb},{nb} @@\n"));
        for o in &ops[start..end] {
            let (p, l) = match o {
                Op::Same(l) => (' ', l),
                Op::Del(l) => ('-', l),
                Op::Add(l) => ('+', l),
            };
            out.push(p);
            out.push_str(l);
            if !l.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// What an installed hook runs.

/// Handles one hook event: drains the event from stdin, maps it to a
/// `tend report` (or `tend release`) and runs that for at most a moment.
/// Prints nothing and never fails: the agent must never be disturbed.
pub fn run_hook(args: &RunArgs) {
    std::panic::set_hook(Box::new(|_| {}));
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(args)));
}

fn read_stdin() -> Value {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut keep = Vec::new();
        let mut buf = [0u8; 65_536];
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if keep.len() < STDIN_KEEP {
                        keep.extend_from_slice(&buf[..n]);
                    }
                }
            }
        }
        let _ = tx.send(keep);
    });
    rx.recv_timeout(STDIN_WAIT)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null)
}

fn in_multiplexer() -> bool {
    ["TMUX_PANE", "ZELLIJ_PANE_ID"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

fn dispatch(args: &RunArgs) {
    // Always read the event, so the agent's write to our stdin never fails.
    let input = read_stdin();
    if !in_multiplexer() {
        return;
    }
    let Some(report) = report_args(&args.agent, &args.event, &input) else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let Ok(mut child) = Process::new(exe)
        .args(&report)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return;
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) if started.elapsed() >= REPORT_WAIT => {
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

fn truncate(s: &str, max: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn session_message(agent: &str, input: &Value) -> Vec<String> {
    match input.get("session_id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => vec![
            "--message".into(),
            format!("{agent} session {}", truncate(id, 80)),
        ],
        _ => Vec::new(),
    }
}

/// The `tend` arguments for one agent event, or `None` for events tend does
/// not act on. Public for tests and documentation.
pub fn report_args(agent: &str, event: &str, input: &Value) -> Option<Vec<String>> {
    let report = |state: &str| vec!["report".to_string(), state.to_string()];
    let args = match (agent, event) {
        // Session identity only: a display label, which never takes the
        // authority from the screen (a report would).
        ("claude" | "gemini", "SessionStart") => {
            let label = match input.get("session_id").and_then(Value::as_str) {
                Some(id) if !id.is_empty() => format!("{agent} session {}", truncate(id, 80)),
                _ => format!("{agent} session"),
            };
            vec!["report-metadata".to_string(), label]
        }
        ("claude" | "gemini", "SessionEnd") => vec!["report-metadata".to_string(), String::new()],
        // Codex reports its states.
        ("codex", "SessionStart") => {
            let mut a = report("idle");
            a.extend(session_message(agent, input));
            a
        }
        ("codex", "UserPromptSubmit" | "PreToolUse" | "PostToolUse") => report("working"),
        ("codex", "PermissionRequest") => {
            let mut a = report("waiting");
            a.extend(["--reason".to_string(), "approval".to_string()]);
            let tool = input
                .get("tool_name")
                .and_then(Value::as_str)
                .unwrap_or("a tool");
            let ti = input.get("tool_input");
            let what = ti
                .and_then(|t| t.get("description"))
                .and_then(Value::as_str)
                .or_else(|| ti.and_then(|t| t.get("command")).and_then(Value::as_str));
            let text = match what {
                Some(w) if !w.trim().is_empty() => format!("approve {tool}: {w}"),
                _ => format!("approve {tool}"),
            };
            a.extend(["--message".to_string(), truncate(&text, 120)]);
            a
        }
        ("codex", "Stop") => report("done"),
        ("codex", "Interrupt") => report("idle"),
        ("codex", "SessionEnd") => vec!["release".to_string()],
        _ => return None,
    };
    Some(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> PathBuf {
        PathBuf::from("/x/settings.json")
    }

    #[test]
    fn item_ranges_take_the_separator_before() {
        let spans = [(1, 3), (5, 7), (9, 11)];
        assert_eq!(item_ranges(&spans, &[2]), vec![7..11]);
        assert_eq!(item_ranges(&spans, &[1, 2]), vec![3..11]);
        assert_eq!(item_ranges(&spans, &[0]), vec![1..5]);
        assert_eq!(item_ranges(&spans, &[0, 2]), vec![1..5, 7..11]);
    }

    #[test]
    fn round_trip_keeps_user_bytes() {
        let user = "{\n    \"model\": \"x\",\n    \"hooks\": {\n        \"SessionStart\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}\n        ]\n    }\n}\n";
        let desired = desired_groups(Agent::Claude, "/opt/tend").unwrap_or_default();
        let installed = insert_groups(user, &p(), &desired).unwrap_or_default();
        assert!(installed.contains(MARKER));
        assert!(serde_json::from_str::<Value>(&installed).is_ok());
        let back = remove_ours(&installed, &p()).unwrap_or_default();
        assert_eq!(back, user);
    }

    #[test]
    fn compact_file_round_trips() {
        let user = r#"{"a":1,"b":[2]}"#;
        let desired = desired_groups(Agent::Codex, "/opt/tend").unwrap_or_default();
        let installed = insert_groups(user, &p(), &desired).unwrap_or_default();
        assert!(
            serde_json::from_str::<Value>(&installed).is_ok(),
            "{installed}"
        );
        assert_eq!(remove_ours(&installed, &p()).unwrap_or_default(), user);
    }

    #[test]
    fn timestamp_is_well_formed() {
        let t = timestamp();
        assert_eq!(t.len(), 16, "{t}");
        assert!(t.starts_with("20"));
        assert!(t.ends_with('Z'));
    }

    #[test]
    fn codex_permission_request_says_what() {
        let input = serde_json::json!({"session_id": "s", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build"}});
        let a = report_args("codex", "PermissionRequest", &input).unwrap_or_default();
        assert_eq!(
            a,
            [
                "report",
                "waiting",
                "--reason",
                "approval",
                "--message",
                "approve Bash: rm -rf build"
            ]
        );
        assert_eq!(report_args("codex", "Nope", &input), None);
        assert_eq!(
            report_args("claude", "SessionStart", &input).unwrap_or_default(),
            ["report-metadata", "claude session s"]
        );
        assert_eq!(
            report_args("gemini", "SessionEnd", &input).unwrap_or_default(),
            ["report-metadata", ""]
        );
    }

    #[test]
    fn shell_quote_survives_quotes() {
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
    }
}
