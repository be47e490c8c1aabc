//! Identity: which agent runs in a pane, from process snapshots.
//!
//! Pure: the sampler (in `sidecar/`) reads `/proc`; this module decides.
//!
//! * [`ProcessInfo`] — one process as the sampler saw it; [`ProcSample`] — a
//!   timed snapshot of one pane's tree.
//! * [`candidates_with_source`] — the programs a process really runs, with
//!   interpreters and wrappers (`node`, `bun`, `deno`, `python*`, `uv`,
//!   `npx`, `sh -c`, `env`, nix `-wrapped`, …) unwrapped.
//! * [`match_process`] — which agent one process is, from the manifests'
//!   `[identity]` keys (never a table in this file).
//! * [`resolve_pane`] — the pane's agent: shell → terminal foreground group →
//!   that group's processes, with a bounded walk.
//! * [`IdentityTracker`] — hysteresis over successive resolutions, with the
//!   evidence `tend explain` prints.
//! * [`ProcessTracker`] — alive / CPU / live-child for the detector.
//! * [`SampleScheduler`] — when the sampler should look again.
//!
//! Process titles lie (Claude Code rewrites its own), so the executable
//! image and argv are what count; `comm` is the weakest key.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer};

use crate::engine::ProcessObservation;
use crate::manifest::{IdentityKeys, Registry};

/// The environment variable that forces a process's identity.
pub const ENV_HINT: &str = "TEND_AGENT";

/// Clock ticks per second of `/proc/<pid>/stat` CPU times (USER_HZ) when
/// nothing better is known (recordings; the daemon asks the system).
pub const TICKS_PER_SEC: f64 = 100.0;

// ---------------------------------------------------------------------------
// Snapshot model
// ---------------------------------------------------------------------------

/// One process as the sampler saw it.
///
/// Every field but `pid` may be missing: recordings predate some fields
/// (`pgid`, `tpgid`), and a process can vanish between two reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    #[serde(default, deserialize_with = "nullable")]
    pub ppid: u32,
    /// Process group id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgid: Option<u32>,
    /// The foreground process group of the process's controlling terminal
    /// (`tpgid` in `/proc/<pid>/stat`; `None` without a terminal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpgid: Option<u32>,
    /// Scheduler state letter (`R`, `S`, `Z`, …; empty when unknown).
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
    /// `/proc/<pid>/exe` target (empty when unreadable).
    #[serde(default, deserialize_with = "nullable")]
    pub exe: String,
    /// `/proc/<pid>/comm` (the title a process may set for itself).
    #[serde(default, deserialize_with = "nullable")]
    pub comm: String,
    /// argv.
    #[serde(default, alias = "cmdline", deserialize_with = "nullable")]
    pub argv: Vec<String>,
    /// `TEND_AGENT` from its environment, if set.
    #[serde(default)]
    pub env_agent: Option<String>,
    /// The unwrapped script (see [`script_path`]) with symlinks resolved by
    /// the sampler, e.g. `…/.bin/gemini` → `…/@google/gemini-cli/bundle/gemini.js`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_target: Option<String>,
    /// utime + stime, in clock ticks.
    #[serde(default, deserialize_with = "nullable")]
    pub cpu_ticks: u64,
    /// Start time in clock ticks after boot (tells a reused pid apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ticks: Option<u64>,
    /// Depth below the pane's shell (0 = the shell).
    #[serde(default, deserialize_with = "nullable")]
    pub depth: u32,
}

impl ProcessInfo {
    /// A zombie has ended; it only waits for its parent to reap it.
    pub fn is_zombie(&self) -> bool {
        self.state == "Z" || self.state == "X"
    }
}

/// `null` reads as the default (a process that vanished mid-read).
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A process snapshot of a pane at one time (as in `procs.jsonl`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcSample {
    /// When it was taken.
    pub at: Duration,
    /// Every process under the pane's shell, the shell at depth 0.
    pub procs: Vec<ProcessInfo>,
}

fn secs<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn opt_secs<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

// ---------------------------------------------------------------------------
// Candidates: unwrapping interpreters and wrappers
// ---------------------------------------------------------------------------

/// Where a candidate program name came from (shown by `tend explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The `TEND_AGENT` environment variable.
    Environ,
    /// `argv[i]`, after unwrapping the wrappers before it.
    Argv(usize),
    /// A word of a command string (`sh -c '…'`, `npx -c '…'`, `env -S '…'`).
    Command,
    /// A package named by an option (`npx -p …`, `uvx --from …`).
    PackageOption,
    /// A module run with `python -m`.
    Module,
    /// The unwrapped script with its symlinks resolved.
    ScriptTarget,
    /// `/proc/<pid>/exe`.
    Exe,
    /// `/proc/<pid>/comm`.
    Comm,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Environ => f.write_str("environ"),
            Source::Argv(i) => write!(f, "argv[{i}]"),
            Source::Command => f.write_str("command string"),
            Source::PackageOption => f.write_str("package option"),
            Source::Module => f.write_str("python -m"),
            Source::ScriptTarget => f.write_str("script target"),
            Source::Exe => f.write_str("exe"),
            Source::Comm => f.write_str("comm"),
        }
    }
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One program a process may be running, and where that came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// A path or a name.
    pub value: String,
    /// Where it came from.
    pub source: Source,
}

/// How a wrapper passes control to the real program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wrapper {
    /// `env [-i] [-u N] [NAME=V…] prog`
    Env,
    /// `sh [opts] -c 'string'` or `sh script`
    Shell,
    /// `node [opts] script`, also `bun`/`deno` (with their `run` verbs)
    Node,
    /// `python [opts] script` or `python -m module`
    Python,
    /// `uv run prog`, `uv tool run prog`, `uvx prog`
    Uv,
    /// `npx [-p pkg] prog`, `npm exec`, `pnpm dlx`, `yarn dlx`
    Npx,
    /// `npm`, `pnpm`, `yarn`: wrappers only with an exec-like verb
    PackageManager,
    /// `ruby`/`perl script`
    Script,
    /// `nohup`, `nice`, `timeout`, `exec`, `sudo`, …: run the rest
    Prefix,
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Strips decorations that do not change which program runs: nix's
/// `.foo-wrapped` (and `-wrapped_` variants), a login shell's leading `-`,
/// and versioned interpreter names (`python3.11` → `python`).
fn normalise(name: &str) -> &str {
    let name = name.strip_prefix('-').unwrap_or(name);
    let name = name.strip_suffix("-wrapped_").unwrap_or(name);
    let name = name.strip_suffix("-wrapped").unwrap_or(name);
    let name = name.strip_prefix('.').unwrap_or(name);
    for interp in ["python", "pypy"] {
        if let Some(version) = name.strip_prefix(interp) {
            if version.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return interp;
            }
        }
    }
    name
}

/// The basename without a script or executable extension.
fn stem(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((b, ext))
            if !b.is_empty()
                && matches!(
                    ext,
                    "exe" | "js" | "mjs" | "cjs" | "ts" | "mts" | "py" | "sh" | "bin" | "AppImage"
                ) =>
        {
            b
        }
        _ => name,
    }
}

fn wrapper_kind(word: &str) -> Option<Wrapper> {
    Some(match stem(normalise(basename(word))) {
        "env" => Wrapper::Env,
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "fish" => Wrapper::Shell,
        "node" | "nodejs" | "bun" | "deno" | "tsx" | "ts-node" => Wrapper::Node,
        "python" | "pypy" => Wrapper::Python,
        "uv" | "uvx" => Wrapper::Uv,
        "npx" | "pnpx" | "bunx" | "npx-cli" => Wrapper::Npx,
        "npm" | "pnpm" | "yarn" | "npm-cli" => Wrapper::PackageManager,
        "ruby" | "perl" => Wrapper::Script,
        "nohup" | "setsid" | "time" | "command" | "exec" | "builtin" | "nice" | "timeout"
        | "stdbuf" | "sudo" | "doas" | "chrt" | "ionice" | "taskset" => Wrapper::Prefix,
        _ => return None,
    })
}

/// `NAME=VALUE` (an environment assignment before a program).
fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Splits a shell command string into simple commands (words), roughly as
/// `sh` would: quotes and backslashes are honoured, `;`, `&`, `|`, newlines
/// and `&&`/`||` separate commands. Expansions are left as text: the point
/// is to find the program names, not to run anything.
fn split_commands(s: &str) -> Vec<Vec<String>> {
    let mut cmds = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, cur: &mut Vec<String>| {
        if *in_word {
            cur.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    if n != '\n' {
                        word.push(n);
                    }
                }
            }
            ';' | '&' | '|' | '\n' => {
                end_word(&mut word, &mut in_word, &mut cur);
                if !cur.is_empty() {
                    cmds.push(std::mem::take(&mut cur));
                }
            }
            // `(`/`)` always delimit; `{`/`}` only where a word would
            // start: `(cd x && y)`, `{ a; }`.
            '(' | ')' => {
                end_word(&mut word, &mut in_word, &mut cur);
                if !cur.is_empty() {
                    cmds.push(std::mem::take(&mut cur));
                }
            }
            '{' | '}' if !in_word => {
                if !cur.is_empty() {
                    cmds.push(std::mem::take(&mut cur));
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut cur),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut cur);
    if !cur.is_empty() {
        cmds.push(cur);
    }
    cmds
}

/// How deep wrappers may nest (`env sh -c 'exec node …'` is 3): a bound so
/// that a hostile command line cannot make unwrapping expensive.
const MAX_NESTING: u8 = 8;

struct Unwrapper {
    out: Vec<Candidate>,
    nesting: u8,
}

type Words<'a> = &'a [(String, Source)];

impl Unwrapper {
    fn push(&mut self, value: &str, source: Source) {
        if !value.is_empty() && !self.out.iter().any(|c| c.value == value) {
            self.out.push(Candidate {
                value: value.to_owned(),
                source,
            });
        }
    }

    /// Unwraps a command line: `words[0]` is the program, which is either
    /// the real one (a candidate) or a wrapper whose options are skipped to
    /// reach the next program.
    fn program(&mut self, words: Words<'_>) {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return;
        }
        let mut i = 0;
        // Leading assignments (`FOO=1 claude` in a command string).
        while words.get(i).is_some_and(|(w, _)| is_assignment(w)) {
            i += 1;
        }
        let Some((prog, src)) = words.get(i) else {
            return;
        };
        let Some(kind) = wrapper_kind(prog) else {
            self.push(prog, *src);
            return;
        };
        let rest = &words[i + 1..];
        match kind {
            Wrapper::Env => self.env(rest),
            Wrapper::Shell => self.shell(rest),
            Wrapper::Node => {
                let verbs: &[&str] = match stem(normalise(basename(prog))) {
                    "bun" => &["run", "x", "exec"],
                    "deno" => &["run", "x"],
                    _ => &[],
                };
                self.interpreter(
                    rest,
                    verbs,
                    &[
                        "-r",
                        "--require",
                        "--import",
                        "--loader",
                        "--experimental-loader",
                        "-C",
                        "--conditions",
                        "--config",
                        "--import-map",
                        "--location",
                        "--cwd",
                        "--title",
                        "--env-file",
                    ],
                    &["-e", "--eval", "-p", "--print"],
                )
            }
            Wrapper::Python => self.python(rest),
            Wrapper::Uv => {
                let uvx = stem(normalise(basename(prog))) == "uvx";
                self.uv(rest, uvx)
            }
            Wrapper::Npx => self.npx(rest),
            Wrapper::PackageManager => {
                // Only `npm exec`/`npm x`/`pnpm dlx`/`yarn dlx` run a package;
                // `npm run build` is npm itself.
                let first = rest.iter().position(|(w, _)| !w.starts_with('-'));
                match first.map(|j| (j, rest[j].0.as_str())) {
                    Some((j, "exec" | "x" | "dlx")) => self.npx(&rest[j + 1..]),
                    _ => self.push(prog, *src),
                }
            }
            Wrapper::Script => self.interpreter(rest, &[], &["-I", "-r"], &["-e", "-E"]),
            Wrapper::Prefix => self.prefix(stem(normalise(basename(prog))), rest),
        }
    }

    /// Parses a command string (`sh -c`, `npx -c`) and unwraps each simple
    /// command in it, `exec`'d ones first: `sleep 1; exec gemini` runs gemini.
    fn command_string(&mut self, s: &str) {
        let cmds = split_commands(s);
        let as_words = |c: &Vec<String>| -> Vec<(String, Source)> {
            c.iter().map(|w| (w.clone(), Source::Command)).collect()
        };
        let execs = cmds
            .iter()
            .filter(|c| c.first().is_some_and(|w| w == "exec"));
        let others = cmds
            .iter()
            .filter(|c| c.first().is_none_or(|w| w != "exec"));
        for c in execs.rev().chain(others).take(16) {
            let saved = self.nesting;
            self.program(&as_words(c));
            self.nesting = saved;
        }
    }

    fn env(&mut self, words: Words<'_>) {
        let mut j = 0;
        while let Some((w, _)) = words.get(j) {
            match w.as_str() {
                "--" => {
                    j += 1;
                    break;
                }
                "-u" | "--unset" | "-C" | "--chdir" | "-P" => j += 2,
                "-S" | "--split-string" => {
                    // `env -S 'node --flag'` (shebang lines): the string is
                    // the program and its options, then the rest follows.
                    let mut split: Vec<(String, Source)> = words
                        .get(j + 1)
                        .map(|(s, _)| {
                            s.split_whitespace()
                                .map(|w| (w.to_owned(), Source::Command))
                                .collect()
                        })
                        .unwrap_or_default();
                    split.extend(words.iter().skip(j + 2).cloned());
                    return self.program(&split);
                }
                w if w.starts_with("-S") && w.len() > 2 => {
                    let mut split: Vec<(String, Source)> = w[2..]
                        .split_whitespace()
                        .map(|w| (w.to_owned(), Source::Command))
                        .collect();
                    split.extend(words.iter().skip(j + 1).cloned());
                    return self.program(&split);
                }
                w if w.starts_with('-') => j += 1,
                w if is_assignment(w) => j += 1,
                _ => break,
            }
        }
        if let Some(rest) = words.get(j..) {
            self.program(rest);
        }
    }

    fn shell(&mut self, words: Words<'_>) {
        let mut j = 0;
        let mut dash_c = false;
        while let Some((w, _)) = words.get(j) {
            match w.as_str() {
                "--" => {
                    j += 1;
                    break;
                }
                "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" => j += 2,
                w if w.starts_with("--") => j += 1,
                w if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 => {
                    // Option clusters like `-lc`, `-ic`, `-ec`.
                    if w[1..].contains('c') {
                        dash_c = true;
                    }
                    j += 1;
                }
                _ => break,
            }
        }
        match words.get(j) {
            Some((cmd, _)) if dash_c => self.command_string(cmd),
            // `sh script args`: the script is the program (it may be a
            // wrapper itself, e.g. a nix `bin/claude` launcher).
            Some(_) => self.program(&words[j..]),
            None => {}
        }
    }

    /// `interp [opts] [verb] script args`: options in `with_value` take the
    /// next word; options in `code` mean there is no script file.
    fn interpreter(
        &mut self,
        words: Words<'_>,
        verbs: &[&str],
        with_value: &[&str],
        code: &[&str],
    ) {
        let mut j = 0;
        let mut verb_seen = false;
        while let Some((w, _)) = words.get(j) {
            if w == "--" {
                j += 1;
                break;
            }
            if code.contains(&w.as_str()) || w == "-" {
                return;
            }
            if with_value.contains(&w.as_str()) {
                j += 2;
                continue;
            }
            if w.starts_with('-') {
                j += 1;
                continue;
            }
            if !verb_seen && verbs.contains(&w.as_str()) {
                verb_seen = true;
                j += 1;
                continue;
            }
            break;
        }
        if let Some(rest) = words.get(j..) {
            self.program(rest);
        }
    }

    fn python(&mut self, words: Words<'_>) {
        let mut j = 0;
        while let Some((w, _)) = words.get(j) {
            if w == "--" {
                j += 1;
                break;
            }
            if w == "-" {
                return;
            }
            if let Some(opts) = w.strip_prefix('-').filter(|o| !o.starts_with('-')) {
                // A cluster like `-Bu`, `-Im`, `-mfoo`, `-Wignore`.
                for (k, c) in opts.char_indices() {
                    let attached = &opts[k + c.len_utf8()..];
                    let value = || {
                        if attached.is_empty() {
                            words.get(j + 1).map(|(v, _)| v.as_str())
                        } else {
                            Some(attached)
                        }
                    };
                    match c {
                        'c' => return,
                        'm' => {
                            if let Some(module) = value() {
                                // `python -m aider.main` runs package `aider`.
                                let top = module.split('.').next().unwrap_or(module);
                                self.push(top, Source::Module);
                            }
                            return;
                        }
                        'W' | 'X' => {
                            if attached.is_empty() {
                                j += 1;
                            }
                            break;
                        }
                        _ => {}
                    }
                }
                j += 1;
                continue;
            }
            if w == "--check-hash-based-pycs" {
                j += 2;
                continue;
            }
            if w.starts_with("--") {
                j += 1;
                continue;
            }
            break;
        }
        if let Some(rest) = words.get(j..) {
            self.program(rest);
        }
    }

    fn uv(&mut self, words: Words<'_>, uvx: bool) {
        let mut j = 0;
        let mut verbs_left = if uvx { 0 } else { 2 };
        let mut from = None;
        while let Some((w, _)) = words.get(j) {
            match w.as_str() {
                "--" => {
                    j += 1;
                    break;
                }
                "--from" => {
                    from = words.get(j + 1).map(|(v, _)| v.clone());
                    j += 2;
                }
                "--with"
                | "-w"
                | "--with-requirements"
                | "--with-editable"
                | "--python"
                | "-p"
                | "--directory"
                | "--project"
                | "--index"
                | "--index-url"
                | "--extra-index-url"
                | "--default-index"
                | "--env-file"
                | "--extra"
                | "--group"
                | "--package"
                | "--cache-dir"
                | "--config-file" => j += 2,
                w if w.starts_with('-') => j += 1,
                "run" | "tool" | "x" if verbs_left > 0 => {
                    verbs_left -= 1;
                    j += 1;
                }
                _ => break,
            }
        }
        if let Some(rest) = words.get(j..) {
            self.program(rest);
        }
        if let Some(pkg) = from {
            self.push(&pkg, Source::PackageOption);
        }
    }

    fn npx(&mut self, words: Words<'_>) {
        let mut j = 0;
        let mut packages = Vec::new();
        while let Some((w, _)) = words.get(j) {
            match w.as_str() {
                "--" => {
                    j += 1;
                    break;
                }
                "-p" | "--package" => {
                    if let Some((v, _)) = words.get(j + 1) {
                        packages.push(v.clone());
                    }
                    j += 2;
                }
                "-c" | "--call" => {
                    if let Some((s, _)) = words.get(j + 1) {
                        self.command_string(s);
                    }
                    j = words.len();
                }
                "--registry" | "--cache" | "--userconfig" | "--workspace" | "-w" => j += 2,
                w if w.starts_with("--package=") => {
                    packages.push(w["--package=".len()..].to_owned());
                    j += 1;
                }
                w if w.starts_with('-') => j += 1,
                _ => break,
            }
        }
        if let Some(rest) = words.get(j..) {
            self.program(rest);
        }
        for p in packages {
            self.push(&p, Source::PackageOption);
        }
    }

    fn prefix(&mut self, name: &str, words: Words<'_>) {
        let with_value: &[&str] = match name {
            "exec" => &["-a"],
            "nice" => &["-n", "--adjustment"],
            "timeout" => &["-s", "--signal", "-k", "--kill-after"],
            "stdbuf" => &["-i", "-o", "-e"],
            "sudo" => &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"],
            "doas" => &["-u", "-C"],
            "ionice" => &["-c", "-n", "-p"],
            _ => &[],
        };
        let mut j = 0;
        while let Some((w, _)) = words.get(j) {
            if w == "--" {
                j += 1;
                break;
            }
            if with_value.contains(&w.as_str()) {
                j += 2;
            } else if w.starts_with('-') || (name == "sudo" && is_assignment(w)) {
                j += 1;
            } else {
                break;
            }
        }
        // Positional arguments before the program.
        let skip = match name {
            "timeout" => 1,                             // DURATION
            "chrt" | "taskset" if j < words.len() => 1, // priority / mask
            _ => 0,
        };
        if let Some(rest) = words.get(j + skip..) {
            self.program(rest);
        }
    }
}

/// The programs a process really runs, most specific first: the unwrapped
/// program words (argv after wrappers, `sh -c` strings, `python -m`
/// modules, package options), the resolved script target, argv[0] and the
/// executable image. `comm` is not included: it is a title, matched last
/// and only against `comm` keys.
pub fn candidates_with_source(p: &ProcessInfo) -> Vec<Candidate> {
    let mut u = Unwrapper {
        out: Vec::new(),
        nesting: 0,
    };
    let words: Vec<(String, Source)> = p
        .argv
        .iter()
        .enumerate()
        .map(|(i, a)| (a.clone(), Source::Argv(i)))
        .collect();
    u.program(&words);
    if let Some(t) = &p.script_target {
        u.push(t, Source::ScriptTarget);
    }
    if let Some(a0) = p.argv.first() {
        if wrapper_kind(a0).is_none() {
            u.push(a0, Source::Argv(0));
        }
    }
    u.push(&p.exe, Source::Exe);
    u.out
}

/// The candidate values of [`candidates_with_source`].
pub fn candidates(p: &ProcessInfo) -> Vec<String> {
    candidates_with_source(p)
        .into_iter()
        .map(|c| c.value)
        .collect()
}

/// The script the sampler should resolve symlinks of: the first unwrapped
/// program word taken from argv after a wrapper (an interpreter runs it) or
/// from a command string. `None` when the process runs no script.
pub fn script_path(p: &ProcessInfo) -> Option<Candidate> {
    candidates_with_source(p)
        .into_iter()
        .find(|c| matches!(c.source, Source::Argv(i) if i > 0) || c.source == Source::Command)
}

// ---------------------------------------------------------------------------
// Matching one process
// ---------------------------------------------------------------------------

/// Which key of which manifest matched a process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdentityMatch {
    /// Agent id.
    pub agent: String,
    /// The process that matched.
    pub pid: u32,
    /// Which kind of key matched: `env`, `package`, `executable`, `comm`.
    pub via: String,
    /// The key value.
    pub key: String,
    /// Where the matched text came from (`exe`, `argv[1]`, …).
    pub source: Source,
    /// The matched text (a path or a name).
    pub value: String,
}

impl IdentityMatch {
    /// Matched by a key that names the agent beyond doubt (`TEND_AGENT`,
    /// the agent's package path, its executable), not by a process name
    /// alone: such a match commits an identity at its first sample.
    pub fn is_strong(&self) -> bool {
        matches!(self.via.as_str(), "env" | "package" | "executable")
    }
}

/// `key` occurs in `text` as a path fragment: not glued to other name
/// characters before it, and followed by an end, a separator or a version
/// (`@openai/codex-linux-x64`, `aider-chat==0.86` match; `my-aider-chat`
/// does not).
fn contains_package(text: &str, key: &str) -> bool {
    if key.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(off) = text[from..].find(key) {
        let start = from + off;
        let end = start + key.len();
        let before_ok = key.starts_with('/')
            || text[..start]
                .chars()
                .next_back()
                .is_none_or(|c| matches!(c, '/' | ':' | ' ' | '=' | '"' | '\''));
        let after_ok = key.ends_with('/')
            || text[end..].chars().next().is_none_or(|c| {
                matches!(
                    c,
                    '/' | '@' | '-' | '_' | '=' | '.' | '<' | '>' | '~' | '[' | ' '
                )
            });
        if before_ok && after_ok {
            return true;
        }
        from = start + key.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Which key of `keys` one candidate matches, if any: packages first (the
/// most specific), then executable names and aliases.
fn match_candidate(keys: &IdentityKeys, c: &Candidate) -> Option<(&'static str, String)> {
    if c.source != Source::Module {
        if let Some(pkg) = keys.packages.iter().find(|k| contains_package(&c.value, k)) {
            return Some(("package", pkg.clone()));
        }
    }
    let base = normalise(basename(&c.value));
    let base_stem = stem(base);
    keys.executables
        .iter()
        .chain(keys.aliases.iter())
        .find(|e| base == e.as_str() || base_stem == e.as_str())
        .map(|e| ("executable", e.clone()))
}

/// Which agent a single process is, if any.
///
/// `TEND_AGENT` (naming a known agent) wins; then each candidate of
/// [`candidates_with_source`] in order against every manifest; `comm` last.
pub fn match_process(registry: &Registry, p: &ProcessInfo) -> Option<IdentityMatch> {
    if let Some(id) = p.env_agent.as_deref().map(str::trim) {
        if registry.get(id).is_some() {
            return Some(IdentityMatch {
                agent: id.to_owned(),
                pid: p.pid,
                via: "env".into(),
                key: format!("{ENV_HINT}={id}"),
                source: Source::Environ,
                value: id.to_owned(),
            });
        }
    }
    let found = |c: &Candidate| {
        registry.iter().find_map(|m| {
            match_candidate(&m.identity, c).map(|(via, key)| IdentityMatch {
                agent: m.id.clone(),
                pid: p.pid,
                via: via.into(),
                key,
                source: c.source,
                value: c.value.clone(),
            })
        })
    };
    if let Some(m) = candidates_with_source(p).iter().find_map(found) {
        return Some(m);
    }
    let comm = normalise(p.comm.trim());
    if comm.is_empty() {
        return None;
    }
    registry.iter().find_map(|m| {
        m.identity
            .comm
            .iter()
            .find(|c| c.as_str() == comm)
            .map(|c| IdentityMatch {
                agent: m.id.clone(),
                pid: p.pid,
                via: "comm".into(),
                key: c.clone(),
                source: Source::Comm,
                value: p.comm.clone(),
            })
    })
}

// ---------------------------------------------------------------------------
// Resolving a pane
// ---------------------------------------------------------------------------

/// Bounds on the walk below the pane's shell: a fork bomb or a build with
/// thousands of workers must not make sampling expensive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WalkLimits {
    /// Deepest level visited (the shell is 0). The corpus needs 5 (codex →
    /// daemon → bash → tool).
    pub max_depth: u32,
    /// Most processes visited.
    pub max_procs: usize,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits {
            max_depth: 8,
            max_procs: 64,
        }
    }
}

/// Who holds the pane's terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Foreground {
    /// Not known: the snapshot has no `tpgid` (older recordings), or the
    /// shell is gone. Every process below the shell is considered.
    Unknown,
    /// The pane's shell (its own group holds the terminal).
    Shell,
    /// Another process group.
    Group {
        /// Its id.
        pgid: u32,
        /// How many of its processes the walk found.
        members: usize,
    },
}

/// What one snapshot says about a pane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolution {
    /// The agent, with the key that matched.
    pub agent: Option<IdentityMatch>,
    /// Who holds the terminal.
    pub foreground: Foreground,
    /// The agent was found as an ancestor of the foreground group (it runs
    /// a child that took the terminal, e.g. an editor).
    pub via_ancestor: bool,
    /// Processes the walk visited.
    pub examined: usize,
    /// The walk stopped at a limit.
    pub truncated: bool,
}

impl Resolution {
    /// The pane's shell holds the terminal (the agent, if any, is gone).
    pub fn shell_foreground(&self) -> bool {
        self.foreground == Foreground::Shell
    }
}

/// Walks the tree below the root breadth-first within `limits`; returns the
/// visited processes with their depth, and whether a limit cut the walk.
fn walk<'a>(
    root: &'a ProcessInfo,
    procs: &'a [ProcessInfo],
    limits: &WalkLimits,
) -> (Vec<(&'a ProcessInfo, u32)>, bool) {
    let mut children: HashMap<u32, Vec<&ProcessInfo>> = HashMap::new();
    for p in procs {
        if p.pid != root.pid {
            children.entry(p.ppid).or_default().push(p);
        }
    }
    for v in children.values_mut() {
        v.sort_by_key(|p| p.pid);
    }
    let mut out = vec![(root, 0u32)];
    let mut seen: HashSet<u32> = HashSet::from([root.pid]);
    let mut truncated = false;
    let mut i = 0;
    while i < out.len() {
        let (p, d) = out[i];
        i += 1;
        for c in children.get(&p.pid).into_iter().flatten() {
            if d + 1 > limits.max_depth || out.len() >= limits.max_procs {
                truncated = true;
                break;
            }
            if seen.insert(c.pid) {
                out.push((c, d + 1));
            }
        }
    }
    (out, truncated)
}

/// Shallowest first, then by pid (deterministic).
fn by_depth(mut v: Vec<(&ProcessInfo, u32)>) -> Vec<(&ProcessInfo, u32)> {
    v.sort_by_key(|(p, d)| (*d, p.pid));
    v
}

/// The pane's shell in a snapshot: a process whose parent is not in the
/// snapshot (the shell's parent is the multiplexer) and that is not an
/// orphan adopted by init (recordings list the daemons an agent leaves
/// behind at depth 0 too); depth 0 breaks ties.
pub fn find_root(procs: &[ProcessInfo]) -> Option<&ProcessInfo> {
    let pids: HashSet<u32> = procs.iter().map(|p| p.pid).collect();
    let top = |p: &&ProcessInfo| !pids.contains(&p.ppid);
    procs
        .iter()
        .filter(top)
        .find(|p| p.depth == 0 && p.ppid != 1)
        .or_else(|| procs.iter().filter(top).find(|p| p.ppid != 1))
        .or_else(|| procs.iter().find(|p| p.depth == 0))
        .or_else(|| procs.iter().find(top))
}

/// Which agent runs in a pane, from one snapshot of its tree (the shell at
/// depth 0).
///
/// The terminal's foreground group (`tpgid`) says who holds the pane: its
/// processes are matched shallowest first; when none matches, their
/// ancestors below the shell are tried (an agent that handed the terminal
/// to a child). The shell itself counts only when it holds the terminal and
/// is itself an agent (a pane started as `exec claude`); a `TEND_AGENT`
/// inherited by an interactive shell does not make the shell an agent.
/// Without `tpgid` (older recordings) every process below the shell is
/// considered, shallowest first.
pub fn resolve_pane(registry: &Registry, procs: &[ProcessInfo], limits: &WalkLimits) -> Resolution {
    let Some(root) = find_root(procs) else {
        return Resolution {
            agent: None,
            foreground: Foreground::Unknown,
            via_ancestor: false,
            examined: 0,
            truncated: false,
        };
    };
    let (visited, truncated) = walk(root, procs, limits);
    let mut res = Resolution {
        agent: None,
        foreground: Foreground::Unknown,
        via_ancestor: false,
        examined: visited.len(),
        truncated,
    };
    let tpgid = root
        .tpgid
        .or_else(|| visited.iter().find_map(|(p, _)| p.tpgid));
    let Some(tpgid) = tpgid else {
        // No terminal information: anything below the shell, shallowest
        // first. With nothing below it, the shell holds the terminal.
        let below: Vec<_> = visited
            .iter()
            .copied()
            .filter(|(p, d)| *d > 0 && !p.is_zombie())
            .collect();
        if below.is_empty() {
            res.foreground = Foreground::Shell;
            res.agent = root_agent(registry, root);
            if res.agent.is_some() {
                res.foreground = Foreground::Unknown;
            }
            return res;
        }
        res.agent = by_depth(below)
            .into_iter()
            .find_map(|(p, _)| match_process(registry, p));
        return res;
    };
    let members: Vec<_> = visited
        .iter()
        .copied()
        .filter(|(p, _)| p.pgid == Some(tpgid) && !p.is_zombie())
        .collect();
    if root.pgid == Some(tpgid) {
        // The shell's own group holds the terminal: the shell is at its
        // prompt (or runs a builtin); an agent only if the pane's root
        // process is itself one (`exec claude`).
        res.foreground = Foreground::Shell;
        if let Some(m) = root_agent(registry, root) {
            res.agent = Some(m);
            res.foreground = Foreground::Group {
                pgid: tpgid,
                members: members.len(),
            };
        }
        return res;
    }
    res.foreground = Foreground::Group {
        pgid: tpgid,
        members: members.len(),
    };
    res.agent = by_depth(members.clone())
        .into_iter()
        .find_map(|(p, _)| match_process(registry, p));
    if res.agent.is_none() {
        // An agent that gave the terminal to a child (an editor, a pager):
        // walk up from each member to the shell.
        let index: HashMap<u32, (&ProcessInfo, u32)> =
            visited.iter().map(|(p, d)| (p.pid, (*p, *d))).collect();
        let mut ancestors: Vec<(&ProcessInfo, u32)> = Vec::new();
        for (m, _) in &members {
            let mut cur = index.get(&m.ppid);
            // The walk is a tree from the root, so this ends; the bound is
            // for a snapshot whose parent links loop (pid reuse mid-read).
            let mut hops = 0;
            while let Some(&(p, d)) = cur {
                if p.pid == root.pid || hops > limits.max_depth {
                    break;
                }
                ancestors.push((p, d));
                cur = index.get(&p.ppid);
                hops += 1;
            }
        }
        // Deepest ancestor first: the closest owner of the foreground child.
        ancestors.sort_by_key(|(p, d)| (std::cmp::Reverse(*d), p.pid));
        ancestors.dedup_by_key(|(p, _)| p.pid);
        res.agent = ancestors
            .into_iter()
            .find_map(|(p, _)| match_process(registry, p));
        res.via_ancestor = res.agent.is_some();
    }
    res
}

/// The pane's root process as an agent: by image and argv only, or by a
/// `TEND_AGENT` hint when the root is not an interactive shell (a shell
/// that merely inherited the hint is still a shell).
fn root_agent(registry: &Registry, root: &ProcessInfo) -> Option<IdentityMatch> {
    let m = match_process(registry, root)?;
    let runs_something = |w: &String| {
        let option = w.starts_with('-') || w.starts_with('+');
        // A script argument, or `-c` in an option cluster (`-lc`).
        !option || (w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
    };
    let interactive_shell = root.argv.first().is_some_and(|a| {
        wrapper_kind(a) == Some(Wrapper::Shell) && !root.argv.iter().skip(1).any(runs_something)
    });
    if m.via == "env" && interactive_shell {
        // Look past the hint at the image and argv.
        let mut bare = root.clone();
        bare.env_agent = None;
        return match_process(registry, &bare);
    }
    Some(m)
}

/// The agent among a pane's processes (the shell at depth 0): the
/// foreground group's agent, see [`resolve_pane`], with default limits.
pub fn resolve(registry: &Registry, procs: &[ProcessInfo]) -> Option<IdentityMatch> {
    resolve_pane(registry, procs, &WalkLimits::default()).agent
}

// ---------------------------------------------------------------------------
// Hysteresis
// ---------------------------------------------------------------------------

/// Thresholds of [`IdentityTracker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HysteresisConfig {
    /// Agreeing samples needed to commit a new identity.
    pub commit_after: u32,
    /// Consecutive samples without the committed agent before dropping it.
    pub drop_after_misses: u32,
    /// A pane with no agent commits one at its first sample when the match
    /// is by a key that cannot be a guess (the executable image, an agent's
    /// package path, `TEND_AGENT`), so that the agent is named before it
    /// draws its first screen. Switching from one agent to another, and
    /// matches by process name alone, still need `commit_after` samples.
    pub commit_strong_at_once: bool,
}

impl Default for HysteresisConfig {
    fn default() -> Self {
        HysteresisConfig {
            commit_after: 2,
            drop_after_misses: 6,
            commit_strong_at_once: true,
        }
    }
}

/// Why the committed identity changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeReason {
    /// Enough consecutive samples agreed on a (new) agent.
    Agreed,
    /// The shell holds the terminal again with its prompt visible.
    ShellBack,
    /// Too many consecutive samples without the agent.
    Misses,
}

/// A change of a pane's committed identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdentityChange {
    /// When (the sample's time).
    #[serde(serialize_with = "secs")]
    pub at: Duration,
    /// The agent before (`None`: none).
    pub from: Option<String>,
    /// The agent after (`None`: none).
    pub to: Option<String>,
    /// Why.
    pub reason: ChangeReason,
}

/// A candidate identity not yet committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingIdentity {
    /// The agent the latest samples agree on.
    pub agent: String,
    /// How many consecutive samples agree.
    pub samples: u32,
    /// The latest match.
    pub matched: IdentityMatch,
}

/// What `tend explain` shows about a pane's identity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdentityEvidence {
    /// The committed agent.
    pub agent: Option<String>,
    /// The latest match of the committed agent: which process, which key.
    pub matched: Option<IdentityMatch>,
    /// Since when it is committed.
    #[serde(serialize_with = "opt_secs")]
    pub since: Option<Duration>,
    /// When it was last seen in a sample.
    #[serde(serialize_with = "opt_secs")]
    pub last_seen: Option<Duration>,
    /// Consecutive samples that agree with the committed agent.
    pub agreeing: u32,
    /// Consecutive samples without it.
    pub misses: u32,
    /// A different agent gathering agreement.
    pub pending: Option<PendingIdentity>,
    /// The latest resolution (foreground group, walk size).
    pub last: Option<Resolution>,
    /// The latest change.
    pub last_change: Option<IdentityChange>,
}

#[derive(Debug, Clone)]
struct Committed {
    matched: IdentityMatch,
    since: Duration,
    last_seen: Duration,
    agreeing: u32,
}

/// Hysteresis over successive [`Resolution`]s of one pane: a
/// new identity is committed after `commit_after` consecutive agreeing
/// samples; the committed one is held while evidence disagrees, and
/// dropped when the shell holds the terminal again with its prompt visible
/// or after `drop_after_misses` consecutive samples without it. Pure: time
/// is an input.
#[derive(Debug, Clone, Default)]
pub struct IdentityTracker {
    cfg: HysteresisConfig,
    committed: Option<Committed>,
    pending: Option<PendingIdentity>,
    misses: u32,
    last: Option<Resolution>,
    last_change: Option<IdentityChange>,
}

impl IdentityTracker {
    /// A tracker with the default thresholds.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tracker with other thresholds (at least 1 each).
    pub fn with_config(cfg: HysteresisConfig) -> Self {
        IdentityTracker {
            cfg: HysteresisConfig {
                commit_after: cfg.commit_after.max(1),
                drop_after_misses: cfg.drop_after_misses.max(1),
                commit_strong_at_once: cfg.commit_strong_at_once,
            },
            ..Self::default()
        }
    }

    /// The committed agent.
    pub fn agent(&self) -> Option<&str> {
        self.committed.as_ref().map(|c| c.matched.agent.as_str())
    }

    /// Feeds one sample's resolution, taken at `at`. `shell_prompt_visible`
    /// says the screen shows the shell's prompt (from OSC 133 marks or the
    /// screen model). Returns the change of committed identity, if any.
    pub fn observe(
        &mut self,
        at: Duration,
        res: &Resolution,
        shell_prompt_visible: bool,
    ) -> Option<IdentityChange> {
        self.last = Some(res.clone());
        let change = match &res.agent {
            Some(m) if self.agent() == Some(m.agent.as_str()) => {
                self.pending = None;
                self.misses = 0;
                if let Some(c) = &mut self.committed {
                    c.matched = m.clone();
                    c.last_seen = at;
                    c.agreeing += 1;
                }
                None
            }
            Some(m) => {
                let samples = match &self.pending {
                    Some(p) if p.agent == m.agent => p.samples + 1,
                    _ => 1,
                };
                self.pending = Some(PendingIdentity {
                    agent: m.agent.clone(),
                    samples,
                    matched: m.clone(),
                });
                let needed = if self.committed.is_none()
                    && self.cfg.commit_strong_at_once
                    && m.is_strong()
                {
                    1
                } else {
                    self.cfg.commit_after
                };
                if samples >= needed {
                    let from = self.committed.take().map(|c| c.matched.agent);
                    self.committed = Some(Committed {
                        matched: m.clone(),
                        since: at,
                        last_seen: at,
                        agreeing: samples,
                    });
                    self.pending = None;
                    self.misses = 0;
                    Some(IdentityChange {
                        at,
                        from,
                        to: Some(m.agent.clone()),
                        reason: ChangeReason::Agreed,
                    })
                } else {
                    self.miss(at, res, shell_prompt_visible)
                }
            }
            None => {
                self.pending = None;
                self.miss(at, res, shell_prompt_visible)
            }
        };
        if change.is_some() {
            self.last_change = change.clone();
        }
        change
    }

    /// A sample without the committed agent.
    fn miss(
        &mut self,
        at: Duration,
        res: &Resolution,
        shell_prompt_visible: bool,
    ) -> Option<IdentityChange> {
        let committed = self.committed.as_mut()?;
        committed.agreeing = 0;
        self.misses += 1;
        let reason = if res.shell_foreground() && shell_prompt_visible {
            ChangeReason::ShellBack
        } else if self.misses >= self.cfg.drop_after_misses {
            ChangeReason::Misses
        } else {
            return None;
        };
        let from = self.committed.take().map(|c| c.matched.agent);
        self.misses = 0;
        Some(IdentityChange {
            at,
            from,
            to: None,
            reason,
        })
    }

    /// The evidence behind the current identity.
    pub fn evidence(&self) -> IdentityEvidence {
        IdentityEvidence {
            agent: self.agent().map(str::to_owned),
            matched: self.committed.as_ref().map(|c| c.matched.clone()),
            since: self.committed.as_ref().map(|c| c.since),
            last_seen: self.committed.as_ref().map(|c| c.last_seen),
            agreeing: self.committed.as_ref().map_or(0, |c| c.agreeing),
            misses: self.misses,
            pending: self.pending.clone(),
            last: self.last.clone(),
            last_change: self.last_change.clone(),
        }
    }
}

// ---------------------------------------------------------------------------
// Process observations for the detector
// ---------------------------------------------------------------------------

/// Turns successive snapshots into what the detector needs about one agent:
/// alive, CPU of its process tree, live tool children. Pure; used by replay
/// and the daemon.
#[derive(Debug)]
pub struct ProcessTracker {
    ticks_per_sec: f64,
    seen_alive: bool,
    /// (time, root pid, ticks) of the previous sample.
    last: Option<(Duration, u32, u64)>,
}

impl Default for ProcessTracker {
    fn default() -> Self {
        Self::with_ticks_per_sec(TICKS_PER_SEC)
    }
}

impl ProcessTracker {
    /// A tracker for a system whose CPU times count `hz` ticks per second.
    pub fn with_ticks_per_sec(hz: f64) -> Self {
        ProcessTracker {
            ticks_per_sec: if hz.is_finite() && hz > 0.0 {
                hz
            } else {
                TICKS_PER_SEC
            },
            seen_alive: false,
            last: None,
        }
    }

    /// Observes a snapshot for the agent `agent`; `None` until the agent
    /// has been seen alive once (so a pane still starting is not "exited").
    pub fn observe(
        &mut self,
        registry: &Registry,
        agent: &str,
        sample: &ProcSample,
    ) -> Option<ProcessObservation> {
        let is_agent = |p: &ProcessInfo| {
            !p.is_zombie() && match_process(registry, p).is_some_and(|m| m.agent == agent)
        };
        let found = sample
            .procs
            .iter()
            .filter(|p| p.depth > 0 && is_agent(p))
            .min_by_key(|p| (p.depth, p.pid))
            .or_else(|| {
                // A pane started as `exec agent`: the root is the agent.
                find_root(&sample.procs).filter(|p| {
                    is_agent(p) && match_process(registry, p).is_some_and(|m| m.via != "env")
                })
            });
        let Some(root) = found else {
            self.last = None;
            return if self.seen_alive {
                self.seen_alive = false;
                Some(ProcessObservation {
                    agent_alive: false,
                    exit_code: None,
                    cpu_percent: None,
                    live_child: None,
                })
            } else {
                None
            };
        };
        self.seen_alive = true;
        // The agent's subtree: its group and whatever it spawned, including
        // daemons in their own session (codex's app-server runs its tools).
        let mut children: HashMap<u32, Vec<&ProcessInfo>> = HashMap::new();
        for p in &sample.procs {
            children.entry(p.ppid).or_default().push(p);
        }
        let mut ticks = 0u64;
        let mut stack = vec![root];
        let mut seen = HashSet::new();
        let mut tools = 0usize;
        while let Some(p) = stack.pop() {
            if !seen.insert(p.pid) {
                continue;
            }
            ticks += p.cpu_ticks;
            for c in children.get(&p.pid).into_iter().flatten() {
                // The agent re-executed (gemini relaunches under node) or its
                // daemon is not a tool; a child that only inherited
                // `TEND_AGENT` is one.
                let itself = !c.is_zombie()
                    && match_process(registry, c)
                        .is_some_and(|m| m.agent == agent && m.via != "env");
                if !itself && !c.is_zombie() {
                    tools += 1;
                }
                stack.push(c);
            }
        }
        let cpu = match self.last {
            Some((t0, pid0, k0)) if pid0 == root.pid && sample.at > t0 && ticks >= k0 => {
                let secs = (sample.at - t0).as_secs_f64();
                Some(((ticks - k0) as f64 / self.ticks_per_sec / secs * 100.0) as f32)
            }
            _ => None,
        };
        self.last = Some((sample.at, root.pid, ticks));
        Some(ProcessObservation {
            agent_alive: true,
            exit_code: None,
            cpu_percent: cpu,
            live_child: Some(tools > 0),
        })
    }
}

// ---------------------------------------------------------------------------
// When to sample
// ---------------------------------------------------------------------------

/// Timing of [`SampleScheduler`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SamplePolicy {
    /// Shortest gap between two cheap foreground probes (one `stat` read)
    /// triggered by output.
    pub probe_gap: Duration,
    /// Shortest gap between two full samples triggered by output.
    pub output_gap: Duration,
    /// Delay of the confirming sample after a change (hysteresis needs two
    /// agreeing samples to commit).
    pub confirm: Duration,
    /// The back-off starts here…
    pub base: Duration,
    /// …and doubles up to here while nothing changes and nothing is output.
    pub max: Duration,
    /// While no agent is committed, output is followed by probes every
    /// `launch_probe_gap` for this long: a command typed at the shell
    /// echoes its Enter and then often prints nothing for a second or two
    /// while it starts (node, python), and the agent should be named
    /// before it draws its first screen.
    pub launch_window: Duration,
    /// The probe gap inside the launch window.
    pub launch_probe_gap: Duration,
}

impl Default for SamplePolicy {
    fn default() -> Self {
        SamplePolicy {
            probe_gap: Duration::from_millis(200),
            output_gap: Duration::from_secs(1),
            confirm: Duration::from_millis(300),
            base: Duration::from_secs(1),
            max: Duration::from_secs(16),
            launch_window: Duration::from_secs(3),
            launch_probe_gap: Duration::from_millis(100),
        }
    }
}

/// Decides when a pane is sampled: at once when its foreground
/// group changes, soon after new output, and otherwise with an interval
/// that backs off. Pure: the caller reports output, probes and samples
/// with their times and asks what is due.
#[derive(Debug, Clone)]
pub struct SampleScheduler {
    policy: SamplePolicy,
    interval: Duration,
    next_sample: Duration,
    last_probe: Option<Duration>,
    output_since_probe: bool,
    tpgid: Option<Option<u32>>,
    /// The latest output, for the launch window.
    last_output: Option<Duration>,
    /// No agent is committed: watch for one being launched.
    watching_launch: bool,
}

impl SampleScheduler {
    /// A scheduler whose first sample is due at `now`.
    pub fn new(policy: SamplePolicy, now: Duration) -> Self {
        SampleScheduler {
            policy,
            interval: policy.base,
            next_sample: now,
            last_probe: None,
            output_since_probe: false,
            tpgid: None,
            last_output: None,
            watching_launch: true,
        }
    }

    /// Whether to watch closely for a launch after output (no agent is
    /// committed in the pane).
    pub fn watch_launch(&mut self, on: bool) {
        self.watching_launch = on;
    }

    /// The probe gap due at `at`, if the launch window applies.
    fn launch_gap(&self, at: Duration) -> Option<Duration> {
        let o = self.last_output?;
        (self.watching_launch && at <= o + self.policy.launch_window)
            .then_some(self.policy.launch_probe_gap)
    }

    /// The pane printed something at `at`.
    pub fn on_output(&mut self, at: Duration) {
        self.output_since_probe = true;
        self.last_output = Some(at);
        self.interval = self.policy.base;
        self.next_sample = self.next_sample.min(at + self.policy.output_gap);
    }

    /// Whether a cheap foreground probe (the shell's `tpgid`) is due.
    pub fn probe_due(&self, at: Duration) -> bool {
        match self.last_probe {
            None => true,
            Some(t) => {
                (self.output_since_probe && at >= t + self.policy.probe_gap)
                    || self.launch_gap(at).is_some_and(|g| at >= t + g)
                    || at >= t + self.policy.base
            }
        }
    }

    /// A probe at `at` read foreground group `tpgid`; returns whether it
    /// changed (a full sample is then due at once).
    pub fn probed(&mut self, at: Duration, tpgid: Option<u32>) -> bool {
        self.last_probe = Some(at);
        self.output_since_probe = false;
        let changed = self.tpgid.is_some_and(|old| old != tpgid);
        self.tpgid = Some(tpgid);
        if changed {
            self.next_sample = at;
            self.interval = self.policy.base;
        }
        changed
    }

    /// Whether a full sample is due.
    pub fn sample_due(&self, at: Duration) -> bool {
        at >= self.next_sample
    }

    /// A full sample was taken at `at`; `changed` says its resolution
    /// differed from the previous one (then a confirming sample follows
    /// soon; otherwise the interval backs off).
    pub fn sampled(&mut self, at: Duration, tpgid: Option<u32>, changed: bool) {
        self.tpgid = Some(tpgid);
        self.last_probe = Some(at);
        self.output_since_probe = false;
        if changed {
            self.interval = self.policy.base;
            self.next_sample = at + self.policy.confirm;
        } else {
            self.next_sample = at + self.interval;
            self.interval = (self.interval * 2).min(self.policy.max);
        }
    }

    /// When the next probe or sample is due, whichever is first (for the
    /// caller's timer).
    pub fn next_wakeup(&self) -> Duration {
        let probe = self.last_probe.map_or(Duration::ZERO, |t| {
            let mut gap = if self.output_since_probe {
                self.policy.probe_gap
            } else {
                self.policy.base
            };
            if let Some(g) = self.launch_gap(t + self.policy.launch_probe_gap) {
                gap = gap.min(g);
            }
            t + gap
        });
        probe.min(self.next_sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parsing the bundled manifests compiles many regexes: once per run.
    fn reg() -> Registry {
        static REG: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
        REG.get_or_init(Registry::bundled).clone()
    }

    fn p(exe: &str, comm: &str, argv: &[&str]) -> ProcessInfo {
        ProcessInfo {
            pid: 10,
            exe: exe.into(),
            comm: comm.into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            depth: 1,
            ..Default::default()
        }
    }

    /// The agent and the key kind a process matches.
    fn id(pr: ProcessInfo) -> Option<(String, String)> {
        match_process(&reg(), &pr).map(|m| (m.agent, m.via))
    }

    fn agent(pr: ProcessInfo) -> Option<String> {
        match_process(&reg(), &pr).map(|m| m.agent)
    }

    #[test]
    fn corpus_shapes() {
        assert_eq!(
            agent(p(
                "/opt/agents/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
                "claude",
                &["claude"]
            )),
            Some("claude".into())
        );
        assert_eq!(
            agent(p(
                "/usr/bin/node",
                "node",
                &["node", "/opt/agents/node_modules/.bin/codex"]
            )),
            Some("codex".into())
        );
        assert_eq!(
            agent(p(
                "/usr/bin/node",
                "node",
                &[
                    "/usr/bin/node",
                    "--max-old-space-size=12052",
                    "/opt/node_modules/.bin/gemini"
                ]
            )),
            Some("gemini".into())
        );
        assert_eq!(
            agent(p(
                "/root/.pyenv/versions/3.11.7/bin/python3.11",
                "aider",
                &["/opt/venv/bin/python3", "/opt/venv/bin/aider"]
            )),
            Some("aider".into())
        );
        assert_eq!(
            agent(p(
                "/usr/bin/bash",
                "bash",
                &["bash", "-c", "exec gemini --yolo"]
            )),
            Some("gemini".into())
        );
        assert_eq!(agent(p("/usr/bin/vim", "vim", &["vim", "claude.md"])), None);
        assert_eq!(agent(p("/usr/bin/cat", "cat", &["cat", "notes"])), None);
    }

    #[test]
    fn node_scripts_and_options() {
        let m = match_process(
            &reg(),
            &p(
                "/usr/bin/node",
                "node",
                &[
                    "node",
                    "--no-warnings",
                    "--require",
                    "/tmp/hook.js",
                    "/x/node_modules/@anthropic-ai/claude-code/cli.js",
                    "--resume",
                ],
            ),
        )
        .expect("claude");
        assert_eq!(m.agent, "claude");
        assert_eq!(m.via, "package");
        assert_eq!(m.source, Source::Argv(4));
        // `node -e` runs code, not a script: its arguments are not programs.
        assert_eq!(
            agent(p("/usr/bin/node", "node", &["node", "-e", "claude"])),
            None
        );
        assert_eq!(
            agent(p("/usr/bin/node", "node", &["node", "server.js", "claude"])),
            None
        );
    }

    #[test]
    fn bun_and_deno() {
        assert_eq!(
            agent(p(
                "/home/u/.bun/bin/bun",
                "bun",
                &[
                    "bun",
                    "run",
                    "/x/node_modules/@google/gemini-cli/bundle/gemini.js"
                ]
            )),
            Some("gemini".into())
        );
        assert_eq!(
            agent(p(
                "/home/u/.bun/bin/bun",
                "bun",
                &["bunx", "@openai/codex@latest"]
            )),
            Some("codex".into())
        );
        assert_eq!(
            agent(p(
                "/usr/bin/deno",
                "deno",
                &["deno", "run", "-A", "npm:@google/gemini-cli"]
            )),
            Some("gemini".into())
        );
    }

    #[test]
    fn python_forms() {
        let py = "/usr/bin/python3.12";
        assert_eq!(
            agent(p(
                py,
                "python3",
                &["python3.12", "-u", "-X", "dev", "/v/bin/aider", "--yes"]
            )),
            Some("aider".into())
        );
        let m = match_process(&reg(), &p(py, "python3", &["python3", "-m", "aider.main"]))
            .expect("aider");
        assert_eq!((m.agent.as_str(), m.source), ("aider", Source::Module));
        assert_eq!(
            agent(p(py, "python3", &["python", "-Im", "aider"])),
            Some("aider".into())
        );
        // `-c` is code: `import claude` names no program.
        assert_eq!(
            agent(p(py, "python3", &["python3", "-c", "import claude"])),
            None
        );
        assert_eq!(
            agent(p(
                py,
                "python3",
                &["python3", "/x/site-packages/aider/__main__.py"]
            )),
            Some("aider".into())
        );
    }

    #[test]
    fn uv_and_uvx() {
        let uv = "/home/u/.local/bin/uv";
        assert_eq!(
            agent(p(uv, "uv", &["uv", "run", "aider", "--model", "x"])),
            Some("aider".into())
        );
        assert_eq!(
            agent(p(
                uv,
                "uv",
                &["uv", "tool", "run", "--python", "3.12", "aider"]
            )),
            Some("aider".into())
        );
        let m = match_process(
            &reg(),
            &p(uv, "uvx", &["uvx", "--from", "aider-chat", "aider-x"]),
        )
        .expect("aider");
        assert_eq!(
            (m.via.as_str(), m.source),
            ("package", Source::PackageOption)
        );
        assert_eq!(agent(p(uv, "uv", &["uv", "run", "pytest"])), None);
    }

    #[test]
    fn npx_and_package_managers() {
        let node = "/usr/bin/node";
        assert_eq!(
            agent(p(
                node,
                "npm exec",
                &["npx", "-y", "@anthropic-ai/claude-code"]
            )),
            Some("claude".into())
        );
        assert_eq!(
            agent(p(
                node,
                "npm exec",
                &["npx", "-p", "@google/gemini-cli", "run-it"]
            )),
            Some("gemini".into())
        );
        assert_eq!(
            agent(p(node, "npm exec", &["npm", "exec", "--", "@openai/codex"])),
            Some("codex".into())
        );
        assert_eq!(
            agent(p(
                node,
                "node",
                &["node", "/usr/lib/node_modules/npm/bin/npx-cli.js", "codex"]
            )),
            Some("codex".into())
        );
        assert_eq!(agent(p(node, "npm run", &["npm", "run", "claude"])), None);
    }

    #[test]
    fn sh_c_strings() {
        let sh = "/usr/bin/dash";
        assert_eq!(
            agent(p(sh, "sh", &["sh", "-c", "exec gemini --yolo"])),
            Some("gemini".into())
        );
        assert_eq!(
            agent(p(
                sh,
                "sh",
                &["bash", "-lc", "cd '/my repo' && claude --continue"]
            )),
            Some("claude".into())
        );
        assert_eq!(
            agent(p(
                sh,
                "sh",
                &["sh", "-c", "FOO=1 exec -a title env BAR=2 codex"]
            )),
            Some("codex".into())
        );
        // A shell running a script: the script is the program.
        assert_eq!(
            agent(p(sh, "sh", &["/bin/sh", "/tmp/x/bin/gemini", "--yolo"])),
            Some("gemini".into())
        );
        // Arguments of ordinary programs are not programs.
        assert_eq!(
            agent(p(sh, "sh", &["sh", "-c", "grep claude notes.txt"])),
            None
        );
        assert_eq!(
            agent(p(sh, "sh", &["sh", "-c", "echo 'exec claude'"])),
            None
        );
        // An interactive shell runs nothing yet.
        assert_eq!(agent(p("/usr/bin/bash", "bash", &["-bash"])), None);
    }

    #[test]
    fn env_forms() {
        assert_eq!(
            agent(p(
                "/usr/bin/node",
                "node",
                &[
                    "env",
                    "-i",
                    "-u",
                    "X",
                    "A=1",
                    "node",
                    "/x/node_modules/.bin/codex"
                ]
            )),
            Some("codex".into())
        );
        // `#!/usr/bin/env -S node --flags` shebang lines.
        assert_eq!(
            agent(p(
                "/usr/bin/node",
                "node",
                &[
                    "/usr/bin/env",
                    "-S node --no-warnings",
                    "/x/node_modules/@anthropic-ai/claude-code/cli.js"
                ]
            )),
            Some("claude".into())
        );
        assert_eq!(
            agent(p(
                "/usr/bin/node",
                "node",
                &[
                    "/usr/bin/env",
                    "-S",
                    "node --no-warnings",
                    "/x/node_modules/.bin/gemini"
                ]
            )),
            Some("gemini".into())
        );
    }

    #[test]
    fn prefixes() {
        assert_eq!(
            agent(p(
                "/x/claude",
                "claude",
                &["nohup", "nice", "-n", "5", "timeout", "-s", "INT", "1h", "claude"]
            )),
            Some("claude".into())
        );
    }

    #[test]
    fn nix_wrapped() {
        assert_eq!(
            agent(p(
                "/nix/store/aaa-nodejs-22/bin/node",
                "node",
                &[
                    "/nix/store/aaa-nodejs-22/bin/node",
                    "/nix/store/bbb-claude-code-1.0/bin/.claude-wrapped"
                ]
            )),
            Some("claude".into())
        );
        assert_eq!(
            agent(p(
                "/nix/store/ccc-codex-0.1/bin/.codex-wrapped",
                ".codex-wrapped",
                &["codex"]
            )),
            Some("codex".into())
        );
        assert_eq!(
            agent(p(
                "/nix/store/ccc-codex-0.1/bin/.codex-wrapped",
                ".codex-wrapped",
                &["/nix/store/ccc-codex-0.1/bin/.codex-wrapped"]
            )),
            Some("codex".into())
        );
    }

    #[test]
    fn symlink_targets_from_the_sampler() {
        let mut pr = p(
            "/usr/bin/node",
            "node",
            &["node", "/x/node_modules/.bin/cx"],
        );
        assert_eq!(agent(pr.clone()), None);
        assert_eq!(
            script_path(&pr).map(|c| c.value).as_deref(),
            Some("/x/node_modules/.bin/cx")
        );
        pr.script_target = Some("/x/node_modules/@openai/codex/bin/codex.js".into());
        let m = match_process(&reg(), &pr).expect("codex");
        assert_eq!(
            (m.agent.as_str(), m.source),
            ("codex", Source::ScriptTarget)
        );
        // A symlinked binary: argv[0] names the link, exe the target.
        assert_eq!(
            agent(p(
                "/x/vendor/native-linux-x64",
                "codex",
                &["codex", "--yolo"]
            )),
            Some("codex".into())
        );
        assert_eq!(
            script_path(&p("/bin/sleep", "sleep", &["sleep", "5"])),
            None
        );
    }

    #[test]
    fn env_hint_forces_identity() {
        let mut pr = p("/usr/bin/sleep", "sleep", &["sleep", "1000"]);
        pr.env_agent = Some("claude".into());
        let m = match_process(&reg(), &pr).expect("claude");
        assert_eq!(
            (m.via.as_str(), m.key.as_str()),
            ("env", "TEND_AGENT=claude")
        );
        // It wins over other keys…
        let mut pr = p(
            "/usr/bin/node",
            "node",
            &["node", "/x/node_modules/.bin/codex"],
        );
        pr.env_agent = Some("gemini".into());
        assert_eq!(agent(pr), Some("gemini".into()));
        // …but an unknown id is ignored.
        let mut pr = p("/usr/bin/sleep", "sleep", &["sleep", "1"]);
        pr.env_agent = Some("no-such-agent".into());
        assert_eq!(agent(pr), None);
    }

    #[test]
    fn titles_lie_image_and_argv_do_not() {
        // A process that renamed its comm: argv still says aider.
        assert_eq!(
            id(p(
                "/usr/bin/python3.11",
                "vim",
                &["python3", "/v/bin/aider"]
            )),
            Some(("aider".into(), "executable".into()))
        );
        // `exec -a fake` on the native claude binary: the image path wins.
        let m = match_process(
            &reg(),
            &p(
                "/x/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
                "claude.exe",
                &["fake-title"],
            ),
        )
        .expect("claude");
        assert_eq!((m.via.as_str(), m.source), ("package", Source::Exe));
        // comm alone is the weakest key, used only when nothing else names
        // a program.
        assert_eq!(
            id(p("/usr/bin/python3.11", "aider", &[])),
            Some(("aider".into(), "comm".into()))
        );
        // argv that names a program beats comm.
        assert_eq!(
            agent(p(
                "/usr/bin/python3.11",
                "aider",
                &["python3", "/x/other.py"]
            )),
            Some("aider".into())
        );
        assert_eq!(
            agent(p("/usr/bin/top", "claude", &["top"])),
            Some("claude".into())
        );
    }

    #[test]
    fn package_keys_need_boundaries() {
        assert!(contains_package(
            "/x/@openai/codex-linux-x64/codex",
            "@openai/codex"
        ));
        assert!(contains_package("aider-chat==0.86", "aider-chat"));
        assert!(contains_package(
            "npm:@google/gemini-cli",
            "@google/gemini-cli"
        ));
        assert!(!contains_package("/x/my-aider-chat/tool", "aider-chat"));
        assert!(!contains_package("/x/@openai/codexify", "@openai/codex"));
    }

    #[test]
    fn command_string_splitting() {
        assert_eq!(
            split_commands("a 'b c' \"d\\\"e\" f\\ g; h && (i j) | k"),
            vec![
                vec!["a".to_string(), "b c".into(), "d\"e".into(), "f g".into()],
                vec!["h".into()],
                vec!["i".into(), "j".into()],
                vec!["k".into()],
            ]
        );
        assert!(split_commands("").is_empty());
    }

    // --- resolution ------------------------------------------------------

    /// A process with group `pgid`, below `ppid`.
    fn proc(pid: u32, ppid: u32, pgid: u32, argv: &[&str]) -> ProcessInfo {
        ProcessInfo {
            pid,
            ppid,
            pgid: Some(pgid),
            exe: format!("/usr/bin/{}", argv.first().map_or("x", |a| basename(a))),
            comm: argv
                .first()
                .map_or("x", |a| basename(a))
                .chars()
                .take(15)
                .collect(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            state: "S".into(),
            ..Default::default()
        }
    }

    /// A pane: the shell (pid 100) and `rest`, with terminal group `tpgid`.
    fn pane(tpgid: Option<u32>, rest: Vec<ProcessInfo>) -> Vec<ProcessInfo> {
        // The shell's parent is the multiplexer, outside the snapshot.
        let mut shell = proc(100, 50, 100, &["-bash"]);
        shell.depth = 0;
        let mut out = vec![shell];
        out.extend(rest);
        for p in &mut out {
            p.tpgid = tpgid;
        }
        out
    }

    fn claude_proc(pid: u32, ppid: u32, pgid: u32) -> ProcessInfo {
        proc(
            pid,
            ppid,
            pgid,
            &["node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"],
        )
    }

    fn resolve_with(procs: &[ProcessInfo]) -> Resolution {
        resolve_pane(&reg(), procs, &WalkLimits::default())
    }

    #[test]
    fn foreground_group_decides() {
        let procs = pane(Some(200), vec![claude_proc(200, 100, 200)]);
        let r = resolve_with(&procs);
        assert_eq!(r.agent.map(|m| m.pid), Some(200));
        assert_eq!(
            r.foreground,
            Foreground::Group {
                pgid: 200,
                members: 1
            }
        );

        // An agent in the background (`claude &`) while the shell holds
        // the terminal is not the pane's agent.
        let procs = pane(Some(100), vec![claude_proc(200, 100, 200)]);
        let r = resolve_with(&procs);
        assert!(r.agent.is_none());
        assert!(r.shell_foreground());

        // A foreground `vim` while an agent runs in the background.
        let procs = pane(
            Some(300),
            vec![
                claude_proc(200, 100, 200),
                proc(300, 100, 300, &["vim", "x"]),
            ],
        );
        let r = resolve_with(&procs);
        assert!(r.agent.is_none());
        assert!(!r.shell_foreground());
    }

    #[test]
    fn shallowest_member_wins_and_tools_do_not() {
        let procs = pane(
            Some(200),
            vec![
                proc(200, 100, 200, &["node", "/x/node_modules/.bin/gemini"]),
                proc(
                    201,
                    200,
                    200,
                    &[
                        "node",
                        "--max-old-space-size=1",
                        "/x/node_modules/.bin/gemini",
                    ],
                ),
                proc(202, 201, 200, &["bash", "-c", "codex --version"]),
            ],
        );
        let r = resolve_with(&procs);
        let m = r.agent.expect("gemini");
        assert_eq!((m.agent.as_str(), m.pid), ("gemini", 200));
    }

    #[test]
    fn agent_that_gave_the_terminal_to_a_child() {
        let procs = pane(
            Some(300),
            vec![
                claude_proc(200, 100, 200),
                proc(300, 200, 300, &["vim", "/tmp/msg"]),
            ],
        );
        let r = resolve_with(&procs);
        assert_eq!(r.agent.map(|m| m.agent), Some("claude".into()));
        assert!(r.via_ancestor);
    }

    #[test]
    fn pane_started_as_the_agent() {
        // `tmux new-window claude`: the pane's root is the agent.
        let mut root = claude_proc(100, 50, 100);
        root.depth = 0;
        root.tpgid = Some(100);
        let r = resolve_with(&[root]);
        assert!(!r.shell_foreground());
        assert_eq!(r.agent.map(|m| m.agent), Some("claude".into()));
    }

    #[test]
    fn inherited_hint_does_not_make_the_shell_an_agent() {
        let mut procs = pane(Some(100), vec![]);
        procs[0].env_agent = Some("claude".into());
        let r = resolve_with(&procs);
        assert!(r.agent.is_none());
        assert!(r.shell_foreground());
        // …but `TEND_AGENT=claude sleep` in the foreground is claude.
        let mut sleep = proc(200, 100, 200, &["sleep", "1000"]);
        sleep.env_agent = Some("claude".into());
        let mut procs = pane(Some(200), vec![sleep]);
        procs[0].env_agent = Some("claude".into());
        let r = resolve_with(&procs);
        assert_eq!(r.agent.map(|m| (m.pid, m.via)), Some((200, "env".into())));
    }

    #[test]
    fn walk_is_bounded() {
        // A chain 12 deep with the agent at the bottom.
        let mut rest = Vec::new();
        for i in 0..11 {
            rest.push(proc(
                200 + i,
                if i == 0 { 100 } else { 199 + i },
                200,
                &["sh", "-c", "x"],
            ));
        }
        rest.push(claude_proc(300, 210, 200));
        let procs = pane(Some(200), rest);
        let r = resolve_with(&procs);
        assert!(r.truncated);
        assert!(r.agent.is_none());
        assert_eq!(r.examined, 9); // the shell and 8 levels

        // Many siblings: the count limit holds.
        let rest: Vec<_> = (0..200)
            .map(|i| proc(1000 + i, 100, 500, &["make"]))
            .collect();
        let r = resolve_with(&pane(Some(500), rest));
        assert!(r.truncated);
        assert_eq!(r.examined, WalkLimits::default().max_procs);
    }

    #[test]
    fn without_terminal_information() {
        // Recordings have no pgid/tpgid: anything below the shell counts.
        let mut procs = pane(None, vec![claude_proc(200, 100, 0)]);
        for p in &mut procs {
            p.pgid = None;
        }
        let r = resolve_with(&procs);
        assert_eq!(r.agent.map(|m| m.agent), Some("claude".into()));
        assert_eq!(r.foreground, Foreground::Unknown);
        // The shell alone: it holds the terminal.
        let r = resolve_with(&procs[..1]);
        assert!(r.shell_foreground());
        // A zombie agent is gone.
        procs[1].state = "Z".into();
        assert!(resolve_with(&procs).agent.is_none());
    }

    // --- hysteresis ------------------------------------------------------

    fn res_agent(agent: &str, pid: u32) -> Resolution {
        Resolution {
            agent: Some(IdentityMatch {
                agent: agent.into(),
                pid,
                via: "executable".into(),
                key: agent.into(),
                source: Source::Argv(0),
                value: agent.into(),
            }),
            foreground: Foreground::Group {
                pgid: pid,
                members: 1,
            },
            via_ancestor: false,
            examined: 2,
            truncated: false,
        }
    }

    fn res_none(shell: bool) -> Resolution {
        Resolution {
            agent: None,
            foreground: if shell {
                Foreground::Shell
            } else {
                Foreground::Group {
                    pgid: 9,
                    members: 1,
                }
            },
            via_ancestor: false,
            examined: 1,
            truncated: false,
        }
    }

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    /// The thresholds without the strong first commit.
    fn two_samples() -> IdentityTracker {
        IdentityTracker::with_config(HysteresisConfig {
            commit_strong_at_once: false,
            ..HysteresisConfig::default()
        })
    }

    fn res_comm(agent: &str, pid: u32) -> Resolution {
        let mut r = res_agent(agent, pid);
        if let Some(m) = &mut r.agent {
            m.via = "comm".into();
        }
        r
    }

    #[test]
    fn a_strong_match_commits_at_the_first_sample() {
        let mut t = IdentityTracker::new();
        let c = t
            .observe(s(1), &res_agent("claude", 5), false)
            .expect("commit at once");
        assert_eq!(
            (c.from, c.to, c.reason),
            (None, Some("claude".into()), ChangeReason::Agreed)
        );
        // A name alone needs two samples.
        let mut t = IdentityTracker::new();
        assert_eq!(t.observe(s(1), &res_comm("aider", 5), false), None);
        assert!(t.observe(s(2), &res_comm("aider", 5), false).is_some());
        // Switching agents needs two samples, strong or not.
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("claude", 5), false);
        assert_eq!(t.observe(s(2), &res_agent("codex", 6), false), None);
        assert_eq!(t.agent(), Some("claude"));
        assert!(t.observe(s(3), &res_agent("codex", 6), false).is_some());
    }

    #[test]
    fn commits_after_two_agreeing_samples() {
        let mut t = two_samples();
        assert_eq!(t.observe(s(1), &res_agent("claude", 5), false), None);
        assert_eq!(t.agent(), None);
        assert_eq!(t.evidence().pending.map(|p| p.samples), Some(1));
        let c = t
            .observe(s(2), &res_agent("claude", 5), false)
            .expect("commit");
        assert_eq!(
            (c.from, c.to, c.reason),
            (None, Some("claude".into()), ChangeReason::Agreed)
        );
        assert_eq!(t.agent(), Some("claude"));
        let e = t.evidence();
        assert_eq!(e.agreeing, 2);
        assert_eq!(e.since, Some(s(2)));
        let m = e.matched.expect("match");
        assert_eq!(
            (m.pid, m.via.as_str(), m.key.as_str()),
            (5, "executable", "claude")
        );
        t.observe(s(3), &res_agent("claude", 5), false);
        assert_eq!(t.evidence().agreeing, 3);
    }

    #[test]
    fn agreement_must_be_consecutive() {
        let mut t = two_samples();
        t.observe(s(1), &res_agent("claude", 5), false);
        t.observe(s(2), &res_none(false), false);
        assert_eq!(t.observe(s(3), &res_agent("claude", 5), false), None);
        assert_eq!(t.agent(), None);
        t.observe(s(4), &res_agent("codex", 6), false);
        assert_eq!(t.observe(s(5), &res_agent("claude", 5), false), None);
        assert_eq!(t.agent(), None);
    }

    #[test]
    fn holds_while_evidence_disagrees_then_switches() {
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("claude", 5), false);
        t.observe(s(2), &res_agent("claude", 5), false);
        // One sample says codex, some say nothing: claude holds.
        assert_eq!(t.observe(s(3), &res_agent("codex", 6), false), None);
        assert_eq!(t.observe(s(4), &res_none(false), false), None);
        assert_eq!(t.agent(), Some("claude"));
        let e = t.evidence();
        assert_eq!((e.misses, e.agreeing), (2, 0));
        // Two agreeing codex samples switch.
        assert_eq!(t.observe(s(5), &res_agent("codex", 6), false), None);
        assert_eq!(
            t.evidence().pending.map(|p| (p.agent, p.samples)),
            Some(("codex".into(), 1))
        );
        let c = t
            .observe(s(6), &res_agent("codex", 6), false)
            .expect("switch");
        assert_eq!(
            (c.from.as_deref(), c.to.as_deref()),
            (Some("claude"), Some("codex"))
        );
        assert_eq!(t.evidence().misses, 0);
    }

    #[test]
    fn drops_when_the_shell_is_back_with_its_prompt() {
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("aider", 5), false);
        t.observe(s(2), &res_agent("aider", 5), false);
        // The shell holds the terminal but its prompt is not visible yet
        // (the agent's last frame is on screen): hold.
        assert_eq!(t.observe(s(3), &res_none(true), false), None);
        assert_eq!(t.agent(), Some("aider"));
        let c = t.observe(s(4), &res_none(true), true).expect("drop");
        assert_eq!(
            (c.from.as_deref(), c.to, c.reason),
            (Some("aider"), None, ChangeReason::ShellBack)
        );
        assert_eq!(t.agent(), None);
        assert_eq!(
            t.evidence().last_change.map(|c| c.reason),
            Some(ChangeReason::ShellBack)
        );
        // A visible prompt with another group in the foreground drops nothing.
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("aider", 5), false);
        t.observe(s(2), &res_agent("aider", 5), false);
        assert_eq!(t.observe(s(3), &res_none(false), true), None);
    }

    #[test]
    fn drops_after_six_consecutive_misses() {
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("gemini", 5), false);
        t.observe(s(2), &res_agent("gemini", 5), false);
        for i in 0..5 {
            assert_eq!(t.observe(s(3 + i), &res_none(false), false), None);
        }
        // A hit resets the count.
        t.observe(s(8), &res_agent("gemini", 5), false);
        for i in 0..5 {
            assert_eq!(t.observe(s(9 + i), &res_none(false), false), None);
        }
        let c = t.observe(s(14), &res_none(false), false).expect("drop");
        assert_eq!(c.reason, ChangeReason::Misses);
        assert_eq!(t.agent(), None);
    }

    #[test]
    fn custom_thresholds() {
        let mut t = IdentityTracker::with_config(HysteresisConfig {
            commit_after: 1,
            drop_after_misses: 1,
            commit_strong_at_once: false,
        });
        assert!(t.observe(s(1), &res_agent("amp", 5), false).is_some());
        assert!(t.observe(s(2), &res_none(false), false).is_some());
    }

    // --- process tracker ---------------------------------------------------

    fn sample(at: u64, procs: Vec<ProcessInfo>) -> ProcSample {
        let mut procs = procs;
        // Depth from the parent chain (the shell is pid 100).
        let parents: HashMap<u32, u32> = procs.iter().map(|p| (p.pid, p.ppid)).collect();
        for p in &mut procs {
            let mut d = 0;
            let mut cur = p.pid;
            while cur != 100 {
                match parents.get(&cur) {
                    Some(pp) => {
                        cur = *pp;
                        d += 1;
                    }
                    None => break,
                }
            }
            p.depth = d;
        }
        ProcSample { at: s(at), procs }
    }

    #[test]
    fn process_tracker_cpu_and_children() {
        let reg = reg();
        let mut t = ProcessTracker::default();
        let shell = proc(100, 50, 100, &["bash"]);
        let before = sample(1, vec![shell.clone()]);
        assert_eq!(t.observe(&reg, "claude", &before), None, "not started yet");
        let mut c = claude_proc(200, 100, 200);
        c.cpu_ticks = 100;
        assert_eq!(
            t.observe(&reg, "claude", &sample(2, vec![shell.clone(), c.clone()])),
            Some(ProcessObservation {
                agent_alive: true,
                exit_code: None,
                cpu_percent: None,
                live_child: Some(false)
            })
        );
        c.cpu_ticks = 150;
        let mut tool = proc(300, 200, 300, &["bash", "-c", "make"]);
        tool.cpu_ticks = 50;
        let obs = t
            .observe(
                &reg,
                "claude",
                &sample(3, vec![shell.clone(), c.clone(), tool.clone()]),
            )
            .expect("obs");
        assert_eq!(obs.cpu_percent, Some(100.0));
        assert_eq!(obs.live_child, Some(true));
        // A zombie tool is not live.
        tool.state = "Z".into();
        let obs = t
            .observe(
                &reg,
                "claude",
                &sample(4, vec![shell.clone(), c.clone(), tool]),
            )
            .expect("obs");
        assert_eq!(obs.live_child, Some(false));
        // A new agent process: no CPU delta across pids.
        let mut c2 = claude_proc(201, 100, 201);
        c2.cpu_ticks = 500;
        let obs = t
            .observe(&reg, "claude", &sample(5, vec![shell.clone(), c2]))
            .expect("obs");
        assert_eq!(obs.cpu_percent, None);
        // Gone.
        let obs = t
            .observe(&reg, "claude", &sample(6, vec![shell]))
            .expect("obs");
        assert!(!obs.agent_alive);
    }

    #[test]
    fn inherited_hint_children_are_tools() {
        let reg = reg();
        let mut t = ProcessTracker::default();
        let mut agent = proc(200, 100, 200, &["sleep", "1000"]);
        agent.env_agent = Some("claude".into());
        let mut child = proc(201, 200, 200, &["sleep", "5"]);
        child.env_agent = Some("claude".into());
        let obs = t
            .observe(
                &reg,
                "claude",
                &sample(1, vec![proc(100, 50, 100, &["bash"]), agent, child]),
            )
            .expect("obs");
        assert_eq!(obs.live_child, Some(true));
    }

    // --- scheduling ------------------------------------------------------

    #[test]
    fn scheduler_backs_off_and_wakes_on_output_and_changes() {
        let pol = SamplePolicy::default();
        let mut sch = SampleScheduler::new(pol, s(0));
        assert!(sch.sample_due(s(0)));
        sch.sampled(s(0), Some(100), false);
        // Back-off: 1, 2, 4, 8, 16, 16 s.
        let mut at = s(0);
        let mut gaps = Vec::new();
        for _ in 0..6 {
            let next = sch.next_wakeup().max(at);
            // Probes at the base interval do not change anything.
            let mut t = at;
            while !sch.sample_due(t) {
                if sch.probe_due(t) {
                    assert!(!sch.probed(t, Some(100)));
                }
                t += Duration::from_millis(100);
            }
            assert!(next <= t);
            gaps.push((t - at).as_secs());
            sch.sampled(t, Some(100), false);
            at = t;
        }
        assert_eq!(gaps, vec![1, 2, 4, 8, 16, 16]);
        // Output: a sample within output_gap, back-off reset.
        sch.on_output(at + s(1));
        assert!(sch.sample_due(at + s(2)));
        sch.sampled(at + s(2), Some(100), false);
        assert!(!sch.sample_due(at + s(2) + Duration::from_millis(900)));
        assert!(sch.sample_due(at + s(3)));
        // A probe that sees a new foreground group: a sample at once, and
        // a confirming one soon after it.
        let t = at + s(3);
        sch.sampled(t, Some(100), false);
        sch.on_output(t + Duration::from_millis(50));
        let probe_at = t + Duration::from_millis(250);
        assert!(sch.probe_due(probe_at));
        assert!(sch.probed(probe_at, Some(555)));
        assert!(sch.sample_due(probe_at));
        sch.sampled(probe_at, Some(555), true);
        assert!(!sch.sample_due(probe_at + Duration::from_millis(200)));
        assert!(sch.sample_due(probe_at + pol.confirm));
    }

    #[test]
    fn a_launch_is_watched_closely_after_output_with_no_agent() {
        let ms = Duration::from_millis;
        let pol = SamplePolicy::default();
        let mut sch = SampleScheduler::new(pol, s(0));
        sch.sampled(s(0), Some(100), false);
        sch.sampled(s(10), Some(100), false);
        // The Enter of `claude` is echoed; a probe right after it still
        // sees the shell (the agent is not exec'd yet).
        sch.on_output(s(10) + ms(300));
        assert!(sch.probe_due(s(10) + ms(300)));
        sch.probed(s(10) + ms(300), Some(100));
        // Silence while it starts: probes every 100 ms for 3 s.
        assert_eq!(sch.next_wakeup(), s(10) + ms(400));
        assert!(sch.probe_due(s(10) + ms(400)));
        assert!(sch.probed(s(10) + ms(400), Some(555)));
        assert!(sch.sample_due(s(10) + ms(400)));
        // With an agent committed the window does not apply.
        sch.sampled(s(10) + ms(400), Some(555), false);
        sch.watch_launch(false);
        sch.on_output(s(11));
        sch.probed(s(11), Some(555));
        assert!(!sch.probe_due(s(11) + ms(100)));
        // Past the window, back to the base interval.
        sch.watch_launch(true);
        sch.probed(s(15), Some(555));
        assert!(!sch.probe_due(s(15) + ms(100)));
        assert!(sch.probe_due(s(16)));
    }
}
