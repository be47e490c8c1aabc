//! Resolving a pane: from the pane's shell through the terminal's
//! foreground group to the agent among that group's processes, with a
//! bounded walk.
//!
//! Separate because it works on a whole process tree at one instant, where
//! matching looks at one process and the trackers at successive samples.

use super::unwrap::{wrapper_kind, Wrapper};
use super::*;

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
    /// With no agent found: the wrapper in the foreground (`ssh`, `docker
    /// exec`, `nix develop`, a script) below which no process is an agent,
    /// so the agent may run where the process tree cannot show it. Only
    /// such a pane is ever named from its screen
    /// ([`IdentityTracker::observe_with_screen`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapper: Option<WrapperSeen>,
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
            wrapper: None,
        };
    };
    let (visited, truncated) = walk(root, procs, limits);
    let mut res = Resolution {
        agent: None,
        foreground: Foreground::Unknown,
        via_ancestor: false,
        examined: visited.len(),
        truncated,
        wrapper: None,
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
        } else if let Some(w) =
            wrapper_of(root).and_then(|_| wrapper::foreground_wrapper(registry, &visited, &members))
        {
            // A pane started as a wrapper (`tmux new-window 'ssh dev'`):
            // its root is not a shell at a prompt.
            res.wrapper = Some(w);
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
    if res.agent.is_none() {
        res.wrapper = wrapper::foreground_wrapper(registry, &visited, &members);
    }
    res
}

/// The pane's root process as an agent: by image and argv only, or by a
/// `TEND_AGENT` hint when the root is not an interactive shell (a shell
/// that merely inherited the hint is still a shell). [`ProcessTracker`]
/// follows the same process.
pub(super) fn root_agent(registry: &Registry, root: &ProcessInfo) -> Option<IdentityMatch> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::testutil::*;

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
    fn a_wrapper_in_the_foreground_without_an_agent_below_it() {
        let wrapper = |r: &Resolution| r.wrapper.as_ref().map(|w| (w.pid, w.name.clone(), w.kind));
        // `ssh devbox` typed at the shell: the agent runs over there.
        let r = resolve_with(&pane(
            Some(200),
            vec![proc(200, 100, 200, &["ssh", "devbox"])],
        ));
        assert!(r.agent.is_none());
        assert_eq!(wrapper(&r), Some((200, "ssh".into(), WrapperKind::Remote)));
        // A script that runs `docker exec` (same group, no job control):
        // the container is named, not the script.
        let r = resolve_with(&pane(
            Some(200),
            vec![
                proc(200, 100, 200, &["/bin/bash", "./dev.sh"]),
                proc(201, 200, 200, &["docker", "exec", "-it", "box", "claude"]),
            ],
        ));
        assert_eq!(
            wrapper(&r),
            Some((201, "docker exec".into(), WrapperKind::Container))
        );
        // A launcher whose agent is a local child: named by its process.
        let r = resolve_with(&pane(
            Some(200),
            vec![
                proc(200, 100, 200, &["nix", "develop", "-c", "claude"]),
                claude_proc(201, 200, 200),
            ],
        ));
        assert_eq!(r.agent.map(|m| m.pid), Some(201));
        assert_eq!(r.wrapper, None);
        // An agent below the wrapper in a session of its own (`script`,
        // sudo's pty): a local agent, so not one for the screen to name.
        let r = resolve_with(&pane(
            Some(200),
            vec![
                proc(200, 100, 200, &["/bin/sh", "./run.sh"]),
                claude_proc(201, 200, 201),
            ],
        ));
        assert!(r.agent.is_none());
        assert_eq!(r.wrapper, None);
    }

    #[test]
    fn no_wrapper_unless_it_holds_the_terminal() {
        // `cat` of a recording, `grep`, a pager: no wrapper.
        for argv in [
            &["cat", "pane.txt"][..],
            &["grep", "-r", "claude", "."],
            &["less", "x"],
        ] {
            let r = resolve_with(&pane(Some(200), vec![proc(200, 100, 200, argv)]));
            assert_eq!(r.wrapper, None, "{argv:?}");
        }
        // A tunnel in the background while the shell holds the terminal.
        let r = resolve_with(&pane(
            Some(100),
            vec![proc(200, 100, 200, &["ssh", "-N", "tunnel"])],
        ));
        assert!(r.shell_foreground());
        assert_eq!(r.wrapper, None);
        // A pane whose own process prints and sleeps (`sh -c 'cat …; sleep'`).
        let mut root = proc(
            100,
            50,
            100,
            &["sh", "-c", "cat x.txt; sleep 2; exec sleep 100"],
        );
        root.tpgid = Some(100);
        let mut sleep = proc(101, 100, 100, &["sleep", "2"]);
        sleep.tpgid = Some(100);
        let r = resolve_with(&[root, sleep]);
        assert!(r.shell_foreground());
        assert_eq!(r.wrapper, None);
    }

    #[test]
    fn a_pane_started_as_a_wrapper() {
        // `tmux new-window 'ssh devbox'`: the pane's own process is ssh.
        let mut root = proc(100, 50, 100, &["ssh", "devbox"]);
        root.tpgid = Some(100);
        let r = resolve_with(&[root]);
        assert!(!r.shell_foreground());
        assert_eq!(
            r.wrapper.map(|w| (w.pid, w.name)),
            Some((100, "ssh".into()))
        );
        // A pane started as a shell is still a shell at its prompt.
        let r = resolve_with(&pane(Some(100), vec![]));
        assert!(r.shell_foreground());
        assert_eq!(r.wrapper, None);
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
}
