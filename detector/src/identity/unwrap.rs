//! Unwrapping: the programs a process really runs behind interpreters and
//! wrappers (`node`, `bun`, `deno`, `python*`, `uv`, `npx`, `sh -c`, `env`,
//! prefixes such as `nohup`), as [`Candidate`]s with where each came from.
//!
//! Separate because it is the largest and most intricate part of identity
//! and knows nothing of manifests: it only says what could be the program.

use super::*;

/// How a wrapper passes control to the real program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wrapper {
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

pub(super) fn wrapper_kind(word: &str) -> Option<Wrapper> {
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
/// modules, package options), the resolved script target, `argv[0]` and the
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::testutil::*;

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
}
