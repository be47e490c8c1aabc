//! `tend doctor`: checks every part tend depends on and says what to do
//! about each problem.

use crate::error::ErrorKind;
use std::io::Write;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::target::{ServerArgs, Target};
use crate::client;
use crate::error::CliError;
use tend_protocol::explain::{Explained, SessionFile};
use tend_protocol::reply::Link;
use tend_protocol::{params, PaneView};
use tend_vocab::{LinkState, Tap};

/// Arguments of `tend doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
}

/// The server line: where it is, its version when that differs from the
/// `tmux` binary's, and what that version lacks (tend works around each).
fn server_detail(srv: &tend_tmux::Server, socket: &str) -> String {
    let mut detail = format!("tmux server at {socket}");
    let binary = srv.version().ok();
    if let Some(v) = srv.server_version() {
        if binary.as_ref() != Some(&v) {
            detail.push_str(&format!(
                " runs tmux {} (restart it to use the newer binary)",
                v.raw
            ));
        }
    }
    let missing = srv.capabilities().missing();
    if !missing.is_empty() {
        detail.push_str("; this tmux lacks ");
        detail.push_str(&missing.join("; "));
    }
    detail
}

/// Runs the checks. Exits non-zero when any failed.
pub fn run(server: &ServerArgs, args: &DoctorArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let srv = server.server();
    let target = Target::resolve(server);
    let mut checks = vec![
        tmux_check(&srv),
        server_check(&srv, &target),
        config_check(),
    ];
    let (registry, errors) = crate::manifests::load();
    checks.push(Check {
        name: "manifests",
        ok: errors.is_empty(),
        detail: if errors.is_empty() {
            "bundled and user manifests load".into()
        } else {
            errors
                .iter()
                .map(|e| format!("not used: {e}"))
                .collect::<Vec<_>>()
                .join("; ")
        },
    });
    let problem = state_problem(target.as_ref().ok().map(|t| t.tmux_socket.as_path()));
    checks.push(Check {
        name: "state",
        ok: problem.is_none(),
        detail: problem.unwrap_or_else(|| match crate::paths::state_dir_path() {
            Ok(d) => format!("parks and snoozes are saved in {}", d.display()),
            Err(e) => e.message,
        }),
    });
    if let Ok(t) = &target {
        let running = daemon_checks(t, &registry, &mut checks);
        checks.extend(multiplexer_checks(t, running));
    }
    print_checks(&checks, args.json, out)
}

/// The tmux on `PATH`: there, and new enough.
fn tmux_check(srv: &tend_tmux::Server) -> Check {
    match srv.version() {
        Ok(v) if v.at_least(3, 2) => Check {
            name: "tmux",
            ok: true,
            detail: format!("tmux {}", v.raw),
        },
        Ok(v) => Check {
            name: "tmux",
            ok: false,
            detail: format!(
                "tmux {} is too old: tend needs 3.2 or newer (pane options, run-shell -C)",
                v.raw
            ),
        },
        Err(e) => Check {
            name: "tmux",
            ok: false,
            detail: e.to_string(),
        },
    }
}

/// The server tend serves, as found.
fn server_check(srv: &tend_tmux::Server, target: &Result<Target, CliError>) -> Check {
    match target {
        Ok(t) => Check {
            name: "server",
            ok: true,
            detail: server_detail(srv, &t.tmux_socket.display().to_string()),
        },
        Err(e) => Check {
            name: "server",
            ok: false,
            detail: e.message.clone(),
        },
    }
}

/// `config.toml` reads.
fn config_check() -> Check {
    match crate::config::load() {
        Ok(_) => Check {
            name: "config",
            ok: true,
            detail: crate::config::path().map_or("defaults".into(), |p| {
                if p.exists() {
                    format!("{} is valid", p.display())
                } else {
                    format!("defaults ({} does not exist)", p.display())
                }
            }),
        },
        Err(e) => Check {
            name: "config",
            ok: false,
            detail: e.message,
        },
    }
}

/// The daemon answers, with its remotes and panes; whether it runs.
fn daemon_checks(t: &Target, registry: &tend_detector::Registry, checks: &mut Vec<Check>) -> bool {
    let p = match client::call(&t.control, params::Ping {}, Duration::from_secs(2)) {
        Ok(p) => p,
        Err(e) => {
            checks.push(Check {
                name: "daemon",
                ok: false,
                detail: e.message,
            });
            return false;
        }
    };
    checks.push(Check {
        name: "daemon",
        ok: p.protocol == tend_protocol::PROTOCOL_VERSION,
        detail: format!("running, pid {}, protocol {}", p.pid, p.protocol),
    });
    if let Ok(links) = client::call(&t.control, params::Remotes {}, Duration::from_secs(3)) {
        checks.extend(remote_checks(&links));
    }
    if let Ok(mut panes) = client::call(&t.control, params::List {}, Duration::from_secs(3)) {
        // Remote panes are the remote's own business (its doctor).
        panes.retain(|p| p.host.is_none());
        checks.extend(pane_checks(t, registry, &panes));
    }
    true
}

/// What the daemon's panes say: their taps, the watch, their agents,
/// screens no rule reads, who reports its own state.
fn pane_checks(t: &Target, registry: &tend_detector::Registry, panes: &[PaneView]) -> Vec<Check> {
    let mut checks = vec![taps_check(panes)];
    if t.zellij.is_none() {
        let log = crate::paths::log_file(&t.tmux_socket).ok();
        checks.push(watch_check(&t.server, &t.control, panes, log.as_deref()));
    }
    checks.push(agents_check(registry, panes));
    checks.push(screens_check(panes, now_unix()));
    // Who reports its own state (OSC 7501 through `tend run`), and who
    // could.
    let explained: Vec<(String, Explained)> = panes
        .iter()
        .filter(|p| p.agent.is_some())
        .filter_map(|p| {
            let explain = params::Explain {
                pane: p.pane.clone(),
            };
            let v = client::call(&t.control, explain, Duration::from_secs(2)).ok()?;
            Some((p.pane.clone(), v))
        })
        .collect();
    let words: Vec<(String, WordSeen)> = explained
        .iter()
        .map(|(id, v)| (id.clone(), WordSeen::from_explain(v)))
        .collect();
    checks.push(word_check(registry, panes, &words, t.zellij.is_some()));
    // What the agents' session files say, or why not.
    let files: Vec<(String, SessionFile)> = explained
        .into_iter()
        .filter_map(|(id, v)| Some((id, v.authority.file?)))
        .collect();
    checks.push(file_check(registry, panes, &files));
    checks
}

/// How each pane's output reaches tend.
fn taps_check(panes: &[PaneView]) -> Check {
    let with = |tap: Tap| -> Vec<&str> {
        panes
            .iter()
            .filter(|p| p.tap == tap)
            .map(|p| p.pane.as_str())
            .collect()
    };
    let (polling, none) = (with(Tap::Polling), with(Tap::None));
    Check {
        name: "taps",
        ok: none.is_empty(),
        detail: format!(
            "{} panes, {} tapped with pipe-pane{}{}",
            panes.len(),
            with(Tap::Pipe).len(),
            if polling.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} watched by capture-pane polling because another pipe-pane is on them (yours is left alone): {}",
                    polling.len(),
                    polling.join(" ")
                )
            },
            if none.is_empty() {
                String::new()
            } else {
                format!("; not tapped yet: {}", none.join(" "))
            }
        ),
    }
}

/// The multiplexer's side: its pane list, the status line, hooks, keys.
fn multiplexer_checks(t: &Target, running: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    if t.zellij.is_none() && !running {
        // tend cannot work on a tmux whose pane list it cannot read,
        // running or not.
        if let Err(e) = t.server.list_panes() {
            checks.push(unreadable_panes(&t.server, &e));
        }
    }
    if t.zellij.is_none() {
        checks.push(status_check(&t.server));
    }
    let hooks = t
        .server
        .list_hooks()
        .map(|h| h.into_iter().filter(|e| e.is_ours()).count())
        .unwrap_or(0);
    checks.push(Check {
        name: "hooks",
        ok: true,
        detail: format!("{hooks} tend hook entries installed (next to yours)"),
    });
    if t.zellij.is_none() {
        let keys = crate::config::load().map(|c| c.keys).unwrap_or_default();
        let log = crate::paths::log_file(&t.tmux_socket).ok();
        let (ok, detail) = crate::keys::doctor_check(&t.server, &keys, running, log.as_deref());
        checks.push(Check {
            name: "keys",
            ok,
            detail,
        });
    }
    checks
}

/// The checks as lines (or JSON); an error when any failed.
fn print_checks(checks: &[Check], json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let failed = checks.iter().filter(|c| !c.ok).count();
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    if json {
        let v: Vec<_> = checks
            .iter()
            .map(|c| json!({"check": c.name, "ok": c.ok, "detail": c.detail}))
            .collect();
        writeln!(out, "{}", json!({"ok": failed == 0, "checks": v})).map_err(io)?;
    } else {
        for c in checks {
            writeln!(
                out,
                "{} {:<10} {}",
                if c.ok { "ok  " } else { "FAIL" },
                c.name,
                c.detail
            )
            .map_err(io)?;
        }
    }
    if failed > 0 {
        return Err(CliError::new(
            ErrorKind::Doctor,
            format!("{failed} check(s) failed"),
        ));
    }
    Ok(())
}

/// What is wrong with the state folder (parks, snoozes) or the state
/// file of the server at `tmux_socket`, with the fix; `None` when tend can
/// read and write both (or they do not exist yet: tend creates them).
pub(crate) fn state_problem(tmux_socket: Option<&std::path::Path>) -> Option<String> {
    use nix::unistd::{access, AccessFlags};
    let dir = match crate::paths::state_dir_path() {
        Ok(d) => d,
        Err(e) => return Some(e.message),
    };
    match std::fs::symlink_metadata(&dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            return Some(format!(
                "cannot reach {} ({e}): parks and snoozes are neither restored nor saved; \
                 make its parents searchable (`chmod u+x` on each)",
                dir.display()
            ))
        }
        Ok(_) => {}
    }
    // Not a folder, another owner, open permissions.
    if let Err(e) = crate::paths::state_dir() {
        return Some(e.message);
    }
    if let Some(w) = crate::paths::readable_by_others(&dir) {
        return Some(w);
    }
    if let Err(e) = access(
        &dir,
        AccessFlags::R_OK | AccessFlags::W_OK | AccessFlags::X_OK,
    ) {
        return Some(format!(
            "{} cannot be used ({}): parks and snoozes are neither restored nor saved. Run \
             `chmod u+rwx {}`",
            dir.display(),
            std::io::Error::from(e),
            dir.display()
        ));
    }
    let file = crate::paths::state_file_in(&dir, tmux_socket?);
    if file.exists() {
        if let Err(e) = access(&file, AccessFlags::R_OK | AccessFlags::W_OK) {
            return Some(format!(
                "{} cannot be read or written ({}): saved parks and snoozes do not apply. Run \
                 `chmod u+rw {}`",
                file.display(),
                std::io::Error::from(e),
                file.display()
            ));
        }
    }
    None
}

/// tend cannot read tmux's pane list: it watches nothing.
fn unreadable_panes(server: &tend_tmux::Server, e: &tend_tmux::TmuxError) -> Check {
    let version = server.version().map_or_else(|_| "?".to_owned(), |v| v.raw);
    Check {
        name: "watch",
        ok: false,
        detail: format!(
            "tend cannot read the pane list of this tmux ({version}), so it watches no pane: \
             {}. Use a tmux whose pane list tend reads (it is tested with 3.3a), and report \
             this message with the output of `tmux -V`",
            crate::error::excerpt(&e.to_string(), 300)
        ),
    }
}

/// Whether the daemon watches every pane the tmux server has: a tmux whose
/// pane list the daemon cannot read (its format output escaped) leaves
/// every pane unwatched while each check above looks well.
fn watch_check(
    server: &tend_tmux::Server,
    control: &std::path::Path,
    listed: &[PaneView],
    log: Option<&std::path::Path>,
) -> Check {
    let in_tmux = match server.list_panes() {
        Ok(p) => p,
        Err(e) => return unreadable_panes(server, &e),
    };
    let mut ids: Vec<String> = in_tmux.iter().map(|p| p.pane_id.to_string()).collect();
    ids.sort();
    ids.dedup();
    let missing = |listed: &[PaneView]| -> Vec<String> {
        ids.iter()
            .filter(|id| !listed.iter().any(|p| p.pane == **id))
            .cloned()
            .collect()
    };
    let mut unwatched = missing(listed);
    if !unwatched.is_empty() {
        // A pane opened a moment ago is listed on the daemon's next look.
        std::thread::sleep(Duration::from_millis(1_000));
        if let Ok(again) = client::call(control, params::List {}, Duration::from_secs(3)) {
            unwatched = missing(&again);
        }
    }
    let log = log.map_or_else(|| "its log".into(), |l| l.display().to_string());
    if unwatched.is_empty() {
        Check {
            name: "watch",
            ok: true,
            detail: format!("tend watches all {} panes of the tmux server", ids.len()),
        }
    } else if unwatched.len() == ids.len() {
        Check {
            name: "watch",
            ok: false,
            detail: format!(
                "tmux has {} panes and tend watches none of them: the daemon cannot read this \
                 tmux's pane list, or cannot reach the server. Its log ({log}) says why; \
                 `tend stop && tend start` after fixing it",
                ids.len()
            ),
        }
    } else {
        Check {
            name: "watch",
            ok: false,
            detail: format!(
                "tend does not watch {} of the {} panes: {} ({log} says why)",
                unwatched.len(),
                ids.len(),
                unwatched.join(" ")
            ),
        }
    }
}

/// Whether tend shows in the status line: globally, and in every session
/// (a session may have its own `status-right`).
fn status_check(server: &tend_tmux::Server) -> Check {
    let fix = "put a placeholder in your status line, e.g. \
               `set -g status-right '#{tend_status}%H:%M'` in ~/.tmux.conf, then run `tend start` \
               (or remove `set -g @tend-status off`, and tend adds its own segment)";
    let sessions = server
        .run(["list-sessions", "-F", "#{session_id} #{session_name}"])
        .unwrap_or_default();
    let mut blind = Vec::new();
    let mut seen = 0;
    for line in sessions.lines() {
        let (id, name) = line.split_once(' ').unwrap_or((line, line));
        seen += 1;
        if !server.status_shows_tend(Some(id)).unwrap_or(true) {
            blind.push(name.to_string());
        }
    }
    match server.status_shows_tend(None) {
        Err(e) => Check {
            name: "status",
            ok: false,
            detail: format!("cannot read the status line options: {e}"),
        },
        Ok(_) if seen > 0 && blind.len() == seen => Check {
            name: "status",
            ok: false,
            detail: format!("nothing of tend is visible in the status line: {fix}"),
        },
        Ok(false) if seen == 0 => Check {
            name: "status",
            ok: false,
            detail: format!("nothing of tend is visible in the status line: {fix}"),
        },
        Ok(_) if !blind.is_empty() => Check {
            name: "status",
            ok: false,
            detail: format!(
                "nothing of tend is visible in the status line of session(s) {} \
                 (their own status-left/status-right override the global ones): {fix}",
                blind.join(", ")
            ),
        },
        Ok(_) => Check {
            name: "status",
            ok: true,
            detail: "the status line shows tend's options".into(),
        },
    }
}

/// One check per remote: up, or which remote fails and ssh's own words.
fn remote_checks(links: &[Link]) -> Vec<Check> {
    links
        .iter()
        .map(|l| {
            let (name, dest) = (&l.name, &l.dest);
            let up = l.state == LinkState::Up;
            let mut detail = format!("{name} ({dest}): {}", super::remote::link_words(l));
            if !up {
                let stderr = &l.stderr;
                // The error is ssh's last line already: the lines before it.
                let error = l.error.as_deref().unwrap_or_default().trim();
                let tail: Vec<&str> = stderr
                    .lines()
                    .filter(|x| !x.trim().is_empty() && x.trim() != error)
                    .collect();
                let tail = &tail[tail.len().saturating_sub(3)..];
                if !tail.is_empty() {
                    detail.push_str(&format!("; ssh said: {}", tail.join(" / ")));
                }
                detail.push_str(&format!(
                    "; try `ssh {dest} tend events --feed` by hand. tend tries again by itself"
                ));
            }
            Check {
                name: "remote",
                ok: up,
                detail,
            }
        })
        .collect()
}

/// Arguments of `tend config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `tend config`: the effective configuration (defaults plus the file),
/// and where the file is.
pub fn config(args: &ConfigArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let cfg = crate::config::load()?;
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    if args.json {
        let v =
            serde_json::to_value(&cfg).map_err(|e| CliError::new(ErrorKind::Io, e.to_string()))?;
        writeln!(out, "{v}").map_err(io)?;
        return Ok(());
    }
    let path = crate::config::path();
    writeln!(
        out,
        "# effective configuration (defaults, then {})",
        path.as_ref().map_or("no file".into(), |p| {
            if p.exists() {
                p.display().to_string()
            } else {
                format!("{}, which does not exist", p.display())
            }
        })
    )
    .map_err(io)?;
    let text =
        toml::to_string_pretty(&cfg).map_err(|e| CliError::new(ErrorKind::Io, e.to_string()))?;
    write!(out, "{text}").map_err(io)?;
    Ok(())
}

fn now_unix() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `2m10s`, `45s`, `1h03m`.
fn span(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// Panes whose screen no rule of their agent's manifest has matched for a
/// while (`unrecognised_since`): their state is a guess from activity and
/// silence. Worth knowing and worth a test case, not a failure.
fn screens_check(panes: &[PaneView], now: f64) -> Check {
    let odd: Vec<String> = panes
        .iter()
        .filter_map(|p| {
            let since = p.unrecognised_since?;
            Some(format!(
                "{} ({}, {}:{}) — no rule has matched its screen for {}; `tend capture {}` saves it as a test case",
                p.pane,
                p.agent.as_deref().unwrap_or("?"),
                p.session,
                p.window,
                span(now - since),
                p.pane
            ))
        })
        .collect();
    Check {
        name: "screens",
        ok: true,
        detail: if odd.is_empty() {
            "every agent's screen is one its rules know".to_owned()
        } else {
            odd.join("; ")
        },
    }
}

/// What the daemon saw of a pane's OSC 7501 traffic (`tend explain`).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct WordSeen {
    /// A `tend run` relay holds the pane's terminal.
    relay: bool,
    /// Queries the program sent (`ESC ] 7501 ; ?`).
    queries: u64,
    /// Reports read from it.
    reports: u64,
}

impl WordSeen {
    fn from_explain(v: &Explained) -> WordSeen {
        let c = v
            .explain
            .read()
            .psp
            .and_then(|w| w.counters)
            .unwrap_or_default();
        WordSeen {
            relay: v.authority.relay,
            queries: c.queries.unwrap_or(0),
            reports: c.reports.unwrap_or(0),
        }
    }
}

/// Which agents report their own state (a `tend run` relay holds the
/// pane's terminal and the agent's OSC 7501 reports were read), which run
/// under the relay without reporting, and which could report but run
/// without it. Never a failure: the screen decides where the word is
/// missing.
fn word_check(
    registry: &tend_detector::Registry,
    panes: &[PaneView],
    words: &[(String, WordSeen)],
    zellij: bool,
) -> Check {
    let mut reporting = Vec::new();
    let mut silent = Vec::new();
    let mut could = Vec::new();
    for p in panes {
        let Some(agent) = p.agent.as_deref() else {
            continue;
        };
        let w = words
            .iter()
            .find(|(id, _)| *id == p.pane)
            .map(|(_, w)| *w)
            .unwrap_or_default();
        if w.relay && w.reports > 0 {
            reporting.push(format!("{} {agent} ({} reports)", p.pane, w.reports));
        } else if w.relay {
            silent.push(format!(
                "{} {agent} ({})",
                p.pane,
                if w.queries > 0 {
                    "asked, no report yet"
                } else {
                    "it has not asked: it may not speak OSC 7501"
                }
            ));
        } else if !zellij
            && p.tap == Tap::Pipe
            && registry.get(agent).is_some_and(|m| m.reports_own_state)
        {
            could.push(format!("{} {agent}", p.pane));
        }
    }
    let mut parts = Vec::new();
    if !reporting.is_empty() {
        parts.push(format!(
            "reporting its own state through tend run: {}",
            reporting.join(", ")
        ));
    }
    if !silent.is_empty() {
        parts.push(format!(
            "under tend run, not reporting: {}",
            silent.join(", ")
        ));
    }
    if !could.is_empty() {
        parts.push(format!(
            "could report its own state under tend run (`tend run -- AGENT`, or `tend shell-init`): {}",
            could.join(", ")
        ));
    }
    Check {
        name: "word",
        ok: true,
        detail: if parts.is_empty() {
            if zellij {
                "no agent reports its own state (under zellij tend reads rendered screens, so the screen decides)".to_owned()
            } else {
                "no agent reports its own state, and none that could runs".to_owned()
            }
        } else {
            parts.join("; ")
        },
    }
}

/// What each agent's session file says (Claude Code's
/// `sessions/<pid>.json`), or why the pane is read from the screen
/// instead: a file not understood names the version that wrote it. Never
/// a failure: the screen decides where the file does not.
fn file_check(
    registry: &tend_detector::Registry,
    panes: &[PaneView],
    files: &[(String, SessionFile)],
) -> Check {
    let mut parts = Vec::new();
    for (id, f) in files {
        let Some(p) = panes.iter().find(|p| p.pane == *id) else {
            continue;
        };
        let agent = p.agent.as_deref().unwrap_or("?");
        let manifest = registry.get(agent);
        let name = manifest.map_or(agent, |m| m.name.as_str());
        let part = match (&f.not_understood, &f.status, &f.last) {
            (Some(why), _, Some(last)) if last.starts_with("not understood") => {
                let known = manifest
                    .map(|m| m.verified_versions.join(", "))
                    .unwrap_or_default();
                format!(
                    "{id} {agent}: its session file was not understood ({why}); tend reads the format \
                     of {name} {known}: the screen decides"
                )
            }
            (_, Some(status), _) => format!(
                "{id} {agent}: {status}{}{}",
                f.waiting_for
                    .as_deref()
                    .map(|w| format!(" on a {w}"))
                    .unwrap_or_default(),
                f.version
                    .as_deref()
                    .map(|v| format!(" ({name} {v})"))
                    .unwrap_or_default()
            ),
            (_, None, Some(last)) => format!("{id} {agent}: {last}; the screen decides"),
            (_, None, None) => continue,
        };
        parts.push(part);
    }
    Check {
        name: "session files",
        ok: true,
        detail: if parts.is_empty() {
            "no agent that keeps a session file runs".to_owned()
        } else {
            parts.join("; ")
        },
    }
}

/// Which agents run, whether their rules were verified, and on which
/// version: a different version is worth knowing, not a failure.
fn agents_check(registry: &tend_detector::Registry, panes: &[PaneView]) -> Check {
    let mut parts = Vec::new();
    let mut warnings = Vec::new();
    for p in panes {
        let Some(agent) = p.agent.as_deref() else {
            continue;
        };
        let manifest = registry.get(agent);
        let how = match (p.verified, manifest.is_some_and(|m| m.verified)) {
            (Some(true), _) | (None, true) => "verified",
            _ => "unverified: dialogs show as waiting/prompt",
        };
        let version = p.version.as_deref().unwrap_or("version unknown");
        parts.push(format!("{} {agent} {version} ({how})", p.pane));
        if let (Some(m), Some(v)) = (manifest, p.version.as_deref()) {
            // Newer than every verified version: the agent has drifted from
            // the screens its rules know (another, older version is only
            // worth a note).
            match m.drift_warning(v) {
                Some(drift) => warnings.push(format!("{drift} ({})", p.pane)),
                None => warnings.extend(
                    m.version_warning(v, &p.pane)
                        .map(|w| format!("{w}: read its states with care")),
                ),
            }
        }
    }
    let mut detail = if parts.is_empty() {
        "no agent running".to_owned()
    } else {
        parts.join("; ")
    };
    for w in warnings {
        detail.push_str(&format!("; {w}"));
    }
    Check {
        name: "agents",
        ok: true,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_as_people_say_them() {
        assert_eq!(span(0.4), "0s");
        assert_eq!(span(45.0), "45s");
        assert_eq!(span(130.2), "2m10s");
        assert_eq!(span(3_780.0), "1h03m");
    }

    #[test]
    fn an_agent_newer_than_its_verified_versions_is_named_as_drifted() {
        let registry = tend_detector::Registry::bundled();
        let pane = |id: &str, agent: &str, version: &str| PaneView {
            pane: id.into(),
            session: "work".into(),
            window: "@1".into(),
            agent: Some(agent.into()),
            version: Some(version.into()),
            ..PaneView::default()
        };
        let codex = registry.get("codex").unwrap();
        let verified = codex.newest_verified().unwrap().to_owned();
        // The verified version: nothing to say.
        let c = agents_check(&registry, &[pane("%1", "codex", &verified)]);
        assert!(c.ok);
        assert_eq!(c.detail, format!("%1 codex {verified} (verified)"));
        // A newer one: named as drifted, with what helps.
        let c = agents_check(&registry, &[pane("%2", "codex", "999.0.0")]);
        assert!(c.ok, "a drifted agent is worth knowing, not a failure");
        assert_eq!(
            c.detail,
            format!(
                "%2 codex 999.0.0 (verified); codex 999.0.0: verified up to {verified}; \
                 states may be wrong — tend capture helps (%2)"
            )
        );
        // An older one: the plain version note.
        let c = agents_check(&registry, &[pane("%3", "codex", "0.1.0")]);
        assert!(c.detail.ends_with(&format!(
            "Codex 0.1.0 runs in %3; tend's rules were verified on {verified}: read its states with care"
        )));
        assert!(!c.detail.contains("verified up to"));
    }

    #[test]
    fn panes_that_report_and_panes_that_could_are_named() {
        let pane = |id: &str, agent: Option<&str>, tap: Tap| PaneView {
            pane: id.into(),
            session: "work".into(),
            window: "@1".into(),
            agent: agent.map(Into::into),
            tap,
            ..PaneView::default()
        };
        let panes = [
            pane("%1", Some("claude"), Tap::Pipe),
            pane("%2", Some("claude"), Tap::Pipe),
            pane("%3", Some("aider"), Tap::Pipe),
            pane("%4", Some("aider"), Tap::Pipe),
            pane("%5", Some("claude"), Tap::Polling),
            pane("%6", None, Tap::Pipe),
        ];
        let words = [
            (
                "%1".to_owned(),
                WordSeen {
                    relay: true,
                    queries: 1,
                    reports: 5,
                },
            ),
            (
                "%3".to_owned(),
                WordSeen {
                    relay: true,
                    ..WordSeen::default()
                },
            ),
        ];
        let c = word_check(&tend_detector::Registry::bundled(), &panes, &words, false);
        assert!(c.ok, "never a failure");
        assert_eq!(
            c.detail,
            "reporting its own state through tend run: %1 claude (5 reports); \
             under tend run, not reporting: %3 aider (it has not asked: it may not speak OSC 7501); \
             could report its own state under tend run (`tend run -- AGENT`, or `tend shell-init`): %2 claude"
        );
        // Nothing to say.
        let c = word_check(&tend_detector::Registry::bundled(), &panes[2..], &[], false);
        assert_eq!(
            c.detail,
            "no agent reports its own state, and none that could runs"
        );
        // zellij: the screen decides; no pane could.
        let c = word_check(&tend_detector::Registry::bundled(), &panes[1..2], &[], true);
        assert!(c.detail.contains("under zellij"), "{}", c.detail);
    }

    #[test]
    fn session_files_say_what_they_say_or_why_not() {
        let pane = |id: &str| PaneView {
            pane: id.into(),
            agent: Some("claude".into()),
            ..PaneView::default()
        };
        let panes = [pane("%1"), pane("%2"), pane("%3")];
        let files = [
            (
                "%1".to_owned(),
                SessionFile {
                    status: Some("waiting".into()),
                    waiting_for: Some("permission prompt".into()),
                    version: Some("2.1.332".into()),
                    last: Some("read: waiting".into()),
                    ..SessionFile::default()
                },
            ),
            (
                "%2".to_owned(),
                SessionFile {
                    version: Some("2.2.0".into()),
                    last: Some(
                        "not understood: unknown `status` `thinking` (written by 2.2.0)".into(),
                    ),
                    not_understood: Some("unknown `status` `thinking` (written by 2.2.0)".into()),
                    rejected: 1,
                    ..SessionFile::default()
                },
            ),
            (
                "%3".to_owned(),
                SessionFile {
                    last: Some("not read: it is a symlink".into()),
                    refused: 1,
                    ..SessionFile::default()
                },
            ),
        ];
        let c = file_check(&tend_detector::Registry::bundled(), &panes, &files);
        assert!(c.ok, "never a failure");
        assert_eq!(
            c.detail,
            "%1 claude: waiting on a permission prompt (Claude Code 2.1.332); \
             %2 claude: its session file was not understood (unknown `status` `thinking` \
             (written by 2.2.0)); tend reads the format of Claude Code 2.1.332: the screen decides; \
             %3 claude: not read: it is a symlink; the screen decides"
        );
        let none = file_check(&tend_detector::Registry::bundled(), &panes, &[]);
        assert_eq!(none.detail, "no agent that keeps a session file runs");
    }

    #[test]
    fn unrecognised_screens_are_listed_with_the_capture_command() {
        let pane = |id: &str, since: Option<f64>| PaneView {
            pane: id.into(),
            session: "work".into(),
            window: "@2".into(),
            agent: Some("claude".into()),
            unrecognised_since: since,
            ..PaneView::default()
        };
        let none = screens_check(&[pane("%1", None)], 1_000.0);
        assert!(none.ok);
        assert_eq!(none.detail, "every agent's screen is one its rules know");
        let c = screens_check(&[pane("%1", None), pane("%7", Some(870.0))], 1_000.0);
        assert!(c.ok);
        assert_eq!(
            c.detail,
            "%7 (claude, work:@2) — no rule has matched its screen for 2m10s; \
             `tend capture %7` saves it as a test case"
        );
    }
}
