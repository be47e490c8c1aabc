//! Wrappers: programs that run an agent where the process tree cannot show
//! it (`ssh`, `mosh`, `docker exec`, `kubectl exec`) or that launch it
//! (`nix develop`, `uv run`, `npx`, `mise exec`, a shell script). When
//! the pane's foreground is one of them and no process below it is an
//! agent, the agent may still be named from what the screen shows
//! ([`super::read_screen`], [`super::IdentityTracker`]); nothing else is
//! ever named from its screen.
//!
//! Separate because it is knowledge about wrappers, not agents: no
//! manifest names a wrapper, and this table names no agent.

use super::unwrap::{wrapper_kind, Wrapper};
use super::*;

/// What kind of wrapper a process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WrapperKind {
    /// A remote terminal: `ssh`, `mosh`, `et`, …
    Remote,
    /// A container or machine: `docker exec`, `podman run`, `kubectl exec`,
    /// `lxc exec`, `distrobox enter`, …
    Container,
    /// A local launcher: `nix develop`, `nix-shell`, `uv run`, `npx`,
    /// `pnpm dlx`, `mise exec`, …
    Launcher,
    /// A shell running a script file.
    Script,
}

/// A wrapper the process tree shows in a pane's foreground.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WrapperSeen {
    /// Its process.
    pub pid: u32,
    /// What it is called in sentences: `ssh`, `docker exec`, `nix
    /// develop`, or a script's file name (`start-agent.sh`).
    pub name: String,
    /// Its kind.
    pub kind: WrapperKind,
}

impl WrapperKind {
    /// Remote terminals and containers hide the agent for certain; a
    /// launcher or script only when nothing below it is an agent.
    fn rank(self) -> u8 {
        match self {
            WrapperKind::Remote | WrapperKind::Container => 0,
            WrapperKind::Launcher | WrapperKind::Script => 1,
        }
    }
}

/// The verbs of `prog` that make it a wrapper (`None`: it is one whatever
/// its arguments), and its kind; `None` when `prog` is no wrapper.
fn table(prog: &str) -> Option<(WrapperKind, Option<&'static [&'static str]>)> {
    use WrapperKind::*;
    Some(match prog {
        "ssh" | "autossh" | "mosh" | "mosh-client" | "et" | "dbclient" => (Remote, None),
        "tsh" => (Remote, Some(&["ssh"])),
        "docker" | "podman" | "nerdctl" => (Container, Some(&["exec", "run", "attach", "start"])),
        "docker-compose" | "podman-compose" => (Container, Some(&["exec", "run", "attach"])),
        "kubectl" | "oc" | "kubecolor" => (Container, Some(&["exec", "attach", "run", "debug"])),
        "lxc" | "incus" => (Container, Some(&["exec", "shell", "console"])),
        "lxc-attach" | "distrobox-enter" | "systemd-nspawn" => (Container, None),
        "distrobox" => (Container, Some(&["enter", "run", "ephemeral"])),
        "toolbox" => (Container, Some(&["enter", "run"])),
        "machinectl" => (Container, Some(&["shell", "login"])),
        "multipass" => (Container, Some(&["shell", "exec"])),
        "vagrant" => (Remote, Some(&["ssh"])),
        "nix" => (Launcher, Some(&["develop", "run", "shell"])),
        "nix-shell" => (Launcher, None),
        "devbox" => (Launcher, Some(&["run", "shell"])),
        "devenv" => (Launcher, Some(&["shell"])),
        "uv" => (Launcher, Some(&["run"])),
        "uvx" | "npx" | "pnpx" | "bunx" => (Launcher, None),
        "npm" => (Launcher, Some(&["exec", "x"])),
        "pnpm" | "yarn" => (Launcher, Some(&["dlx", "exec"])),
        "bun" => (Launcher, Some(&["x"])),
        "mise" | "rtx" => (Launcher, Some(&["exec", "x"])),
        "asdf" | "direnv" => (Launcher, Some(&["exec"])),
        _ => return None,
    })
}

/// How many words after the program may hold its verb: options with values
/// come before it (`kubectl -n ns exec`, `docker compose exec`, `uv tool
/// run`).
const VERB_WORDS: usize = 3;

/// The wrapper a command line (`words[0]` the program) is, if any.
fn by_words(words: &[String]) -> Option<(WrapperKind, String)> {
    let first = words.first()?;
    let prog = stem(normalise(basename(first)));
    let (kind, verbs) = table(prog)?;
    let Some(verbs) = verbs else {
        return Some((kind, prog.to_owned()));
    };
    words
        .iter()
        .skip(1)
        .filter(|w| !w.starts_with('-'))
        .take(VERB_WORDS)
        .find(|w| verbs.contains(&w.as_str()))
        .map(|verb| (kind, format!("{prog} {verb}")))
}

/// The wrapper one process is, if any: by its program (`argv[0]`, so that
/// `exec -a ssh` and a symlink named `ssh` count), a script an interpreter
/// runs (`sh ./ssh`, perl's `mosh`), or a program a `sh -c` string runs. A
/// shell running a script file is a wrapper of kind
/// [`WrapperKind::Script`]; an interactive shell is none.
pub fn wrapper_of(p: &ProcessInfo) -> Option<WrapperSeen> {
    let seen = |(kind, name): (WrapperKind, String)| WrapperSeen {
        pid: p.pid,
        name,
        kind,
    };
    let words: Vec<String> = if p.argv.is_empty() {
        // A process whose argv could not be read: its image's name.
        vec![basename(&p.exe).to_owned()]
    } else {
        p.argv.clone()
    };
    if let Some(w) = by_words(&words) {
        return Some(seen(w));
    }
    let first = words.first()?;
    let interpreter = wrapper_kind(first);
    let shell = interpreter == Some(Wrapper::Shell);
    if !shell && !matches!(interpreter, Some(Wrapper::Script | Wrapper::Python)) {
        return None;
    }
    // The interpreter's own options, then a `-c` string or a script.
    let mut j = 1;
    let mut dash_c = false;
    while let Some(w) = words.get(j) {
        if w == "--" {
            j += 1;
            break;
        }
        if !(w.starts_with('-') || (shell && w.starts_with('+'))) || w.len() < 2 {
            break;
        }
        if shell && !w.starts_with("--") && w[1..].contains('c') {
            dash_c = true;
        }
        j += if shell && matches!(w.as_str(), "-o" | "+o" | "-O" | "+O") {
            2
        } else {
            1
        };
    }
    let rest = words.get(j..).unwrap_or_default();
    if dash_c {
        // What the command string runs, when that is a wrapper
        // (`sh -c 'ssh devbox'`); a string that runs other things is no
        // wrapper, whatever it prints.
        let cmds = split_commands(rest.first()?);
        return cmds.iter().take(16).find_map(|c| {
            let start = c
                .iter()
                .position(|w| !is_assignment(w) && !matches!(w.as_str(), "exec" | "command"))?;
            by_words(&c[start..]).map(seen)
        });
    }
    let script = rest.first()?;
    if let Some(w) = by_words(rest) {
        // A script named as a wrapper (`sh ~/bin/ssh`, `perl /usr/bin/mosh`).
        return Some(seen(w));
    }
    shell.then(|| WrapperSeen {
        pid: p.pid,
        name: basename(script).to_owned(),
        kind: WrapperKind::Script,
    })
}

/// The wrapper in a pane's foreground whose agent the process tree does
/// not show: among `fg` (the foreground group's processes) and what runs
/// below them in `visited` (the walk, with depths), the shallowest remote
/// terminal or container, else the shallowest launcher or script — and
/// only when no process below it is an agent. `None` otherwise.
pub(super) fn foreground_wrapper(
    registry: &Registry,
    visited: &[(&ProcessInfo, u32)],
    fg: &[(&ProcessInfo, u32)],
) -> Option<WrapperSeen> {
    let mut children: HashMap<u32, Vec<&ProcessInfo>> = HashMap::new();
    for (p, _) in visited {
        children.entry(p.ppid).or_default().push(p);
    }
    // The foreground's processes and everything below them.
    let mut scope: Vec<(&ProcessInfo, u32)> = Vec::new();
    let mut seen: HashSet<u32> = HashSet::new();
    let depth: HashMap<u32, u32> = visited.iter().map(|(p, d)| (p.pid, *d)).collect();
    let mut stack: Vec<&ProcessInfo> = fg.iter().map(|(p, _)| *p).collect();
    while let Some(p) = stack.pop() {
        if !seen.insert(p.pid) || p.is_zombie() {
            continue;
        }
        scope.push((p, depth.get(&p.pid).copied().unwrap_or(0)));
        stack.extend(children.get(&p.pid).into_iter().flatten().copied());
    }
    scope.sort_by_key(|(p, d)| (*d, p.pid));
    let wrapper = scope
        .iter()
        .filter_map(|(p, _)| wrapper_of(p))
        .min_by_key(|w| w.kind.rank())?;
    // An agent anywhere below the foreground (in a session of its own,
    // e.g. under `script` or `sudo`'s pty) is a local agent, not one the
    // screen should name.
    let local_agent = scope
        .iter()
        .any(|(p, _)| match_process(registry, p).is_some());
    (!local_agent).then_some(wrapper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::testutil::*;

    /// A command line and the wrapper it is (`None`: none).
    type Case<'a> = (&'a [&'a str], Option<(WrapperKind, &'a str)>);

    fn wrapper(argv: &[&str]) -> Option<(WrapperKind, String)> {
        wrapper_of(&p("/usr/bin/x", "x", argv)).map(|w| (w.kind, w.name))
    }

    #[test]
    fn remote_terminals_and_containers() {
        use WrapperKind::*;
        let cases: &[Case] = &[
            (&["ssh", "devbox"], Some((Remote, "ssh"))),
            (
                &["/usr/bin/ssh", "-t", "dev", "claude"],
                Some((Remote, "ssh")),
            ),
            (&["mosh-client", "-#", "dev"], Some((Remote, "mosh-client"))),
            (&["perl", "/usr/bin/mosh", "dev"], Some((Remote, "mosh"))),
            (
                &["docker", "exec", "-it", "box", "claude"],
                Some((Container, "docker exec")),
            ),
            (
                &["docker", "compose", "exec", "app", "sh"],
                Some((Container, "docker exec")),
            ),
            (
                &["podman", "run", "--rm", "-it", "img"],
                Some((Container, "podman run")),
            ),
            (
                &["kubectl", "-n", "ns", "exec", "-it", "pod", "--", "codex"],
                Some((Container, "kubectl exec")),
            ),
            (
                &["distrobox", "enter", "dev"],
                Some((Container, "distrobox enter")),
            ),
            // Not wrappers: the same programs doing something else.
            (&["docker", "ps"], None),
            (&["kubectl", "get", "pods"], None),
            (&["ssh-agent", "-s"], None),
        ];
        for (argv, want) in cases {
            let want = want.map(|(k, n)| (k, n.to_owned()));
            assert_eq!(wrapper(argv), want, "{argv:?}");
        }
    }

    #[test]
    fn launchers_scripts_and_command_strings() {
        use WrapperKind::*;
        let cases: &[Case] = &[
            (
                &["nix", "develop", "-c", "my-agent"],
                Some((Launcher, "nix develop")),
            ),
            (
                &["nix-shell", "--run", "agent"],
                Some((Launcher, "nix-shell")),
            ),
            (&["uv", "run", "agent"], Some((Launcher, "uv run"))),
            (&["npx", "-y", "some-agent"], Some((Launcher, "npx"))),
            (&["pnpm", "dlx", "some-agent"], Some((Launcher, "pnpm dlx"))),
            (
                &["mise", "exec", "--", "agent"],
                Some((Launcher, "mise exec")),
            ),
            (
                &["/bin/bash", "./start-agent.sh", "--fast"],
                Some((Script, "start-agent.sh")),
            ),
            // A script whose name is a wrapper's: that wrapper.
            (&["/bin/sh", "/tmp/x/ssh", "devbox"], Some((Remote, "ssh"))),
            (
                &["sh", "-c", "cd /w && exec ssh -t dev claude"],
                Some((Remote, "ssh")),
            ),
            (
                &["sh", "-c", "FOO=1 docker exec -it box claude"],
                Some((Container, "docker exec")),
            ),
            // Not wrappers: interactive shells, command strings that run
            // other things (whatever they print), plain programs.
            (&["-bash"], None),
            (&["bash", "-l"], None),
            (&["sh", "-c", "cat screen.txt; sleep 100"], None),
            (&["npm", "run", "build"], None),
            (&["uv", "pip", "list"], None),
            (&["cat", "recording.txt"], None),
            (&["python3", "server.py"], None),
        ];
        for (argv, want) in cases {
            let want = want.map(|(k, n)| (k, n.to_owned()));
            assert_eq!(wrapper(argv), want, "{argv:?}");
        }
    }
}
