//! What the status line says once the daemon is gone.
//!
//! A daemon killed with `kill -9` (or crashing) cannot clean up after
//! itself, and the counts it published would stay in the status line as if
//! someone were still keeping them. So tmux itself is asked to clean up: at
//! start the daemon runs
//!
//! ```text
//! run-shell -b 'tend guard --socket CONTROL --token T || exec tmux -S SOCKET if-shell -F COND CLEANUP'
//! ```
//!
//! `tend guard` (one per tmux server, under a `/bin/sh` that tmux runs)
//! connects to the daemon's control socket and blocks reading it. When the
//! daemon dies the kernel closes the connection, the guard fails, and the
//! shell has tmux run [`cleanup_body`] — also when the guard itself was
//! killed, even together with the daemon. The cleanup runs only while `@tend_daemon`
//! still holds the token `T`: a clean `tend stop` removes the option first,
//! and a daemon started since (or a guard installed again) has set its own
//! token, so a late cleanup never wipes what a live daemon published.
//!
//! No process per pane, no `#()` in the status line, no polling: the kernel
//! tells the guard, tmux runs the commands. `docs/decisions/0005-daemon-death.md`
//! has the alternatives.

use tend_tmux::escape::{format_escape_hash, shell_join, tmux_quote};

use crate::published;

/// The global option holding the running daemon's guard token. Published
/// options are trusted only while it is set; the jump keys read it to tell
/// "no agent needs you" from "tend is not running".
pub const DAEMON_OPTION: &str = "@tend_daemon";

/// The global option naming the daemon's control socket, set with
/// [`DAEMON_OPTION`]: `tend run` in a pane finds the daemon to register
/// with there, whatever its own environment says
/// (`tend/src/cli/run.rs`).
pub const CONTROL_OPTION: &str = "@tend_control";

/// `@tend_summary` once the daemon is gone.
pub const NOT_RUNNING: &str = "tend is not running";

/// True for an option the daemon publishes (or [`DAEMON_OPTION`]); not for
/// other `@tend_*` options such as the tap marks.
pub fn is_published(name: &str) -> bool {
    name == DAEMON_OPTION
        || name == CONTROL_OPTION
        || published::pane_options()
            .chain(published::window_options())
            .chain(published::session_options())
            .chain(published::global_options())
            .any(|n| n == name)
}

/// The tmux condition under which the cleanup runs: `@tend_daemon` still
/// holds `token` (the daemon died without `tend stop`).
///
/// `token` must be made of characters that mean nothing to tmux's parser
/// or formats (the daemon's are digits and dots).
pub fn condition(token: &str) -> String {
    format!("#{{==:#{{{DAEMON_OPTION}}},{token}}}")
}

/// The tmux commands of the cleanup: every published option is removed —
/// panes through their windows (`set -wU`), windows and sessions through
/// format loops over every session — `@tend_daemon` goes, and
/// `@tend_summary` says tend is not running.
pub fn cleanup_body() -> String {
    let mut per_window = String::new();
    for name in published::pane_options().chain(published::window_options()) {
        per_window.push_str(&format!("set -wqU -t #{{window_id}} {name} ; "));
    }
    let mut per_session = String::new();
    for name in published::session_options() {
        per_session.push_str(&format!("set -qu -t #{{q:session_id}} {name} ; "));
    }
    let loops = format!("#{{S:{per_session}#{{W:{per_window}}}}}");
    let mut body = String::new();
    for name in published::global_options() {
        body.push_str(&format!("set -gqu {name}\n"));
    }
    body.push_str(&format!("set -gqu {DAEMON_OPTION}\n"));
    body.push_str(&format!("set -gqu {CONTROL_OPTION}\n"));
    body.push_str(&format!("run-shell -C {}\n", tmux_quote(&loops)));
    body.push_str(&format!(
        "set -gq @tend_summary {}",
        tmux_quote(NOT_RUNNING)
    ));
    body
}

/// The `run-shell -b` that starts the guard, as an argument vector for
/// tmux: `/bin/sh` runs the guard and, when it fails (the daemon died
/// without saying `bye`, or the guard itself was killed), runs the cleanup
/// through the tmux client `tmux_bin` on `socket`. Output goes nowhere: tmux
/// would show a background job's output in a pane.
///
/// `run-shell -b`, not `if-shell -b`: tmux waits for `if-shell` jobs before
/// it exits, so `kill-server` would hang until the daemon noticed.
pub fn install_command(
    tend_bin: &str,
    control: &str,
    token: &str,
    tmux_bin: &str,
    socket: &str,
) -> Vec<String> {
    let cleanup = shell_join(&[
        tmux_bin,
        "-S",
        socket,
        "if-shell",
        "-F",
        &condition(token),
        &cleanup_body(),
    ]);
    let script = format!(
        "exec >/dev/null 2>&1; {} || exec {cleanup}",
        shell_join(&[tend_bin, "guard", "--socket", control, "--token", token])
    );
    vec!["run-shell".into(), "-b".into(), format_escape_hash(&script)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::{compute, PaneRow};
    use tend_attention::Band;
    use tend_protocol::{PaneId, SessionId, WindowId};
    use tend_tmux::Scope;

    /// Every option the daemon publishes is one the cleanup removes: a new
    /// published option cannot be left behind after a crash unnoticed.
    #[test]
    fn cleanup_covers_every_published_option() {
        let row = |p: u32, band: Band| PaneRow {
            pane: PaneId(p),
            window: WindowId(p),
            session: SessionId(p),
            session_name: format!("s{p}"),
            agent: Some("claude".into()),
            state: Some(tend_vocab::State::Waiting),
            reason: Some(tend_vocab::Reason::Approval),
            band: Some(band),
            since: Some(10.0),
            marks: Some("parked".into()),
            exit_code: Some(0),
            project: Some("tend · main".into()),
            resets_at: None,
            reset: None,
        };
        let limited = PaneRow {
            reason: Some(tend_detector::Reason::Limit),
            resets_at: Some(1_800_000_000),
            reset: Some("08:00".into()),
            ..row(3, Band::Limited)
        };
        let set = compute(
            &[row(1, Band::Waiting), row(2, Band::Quiet), limited],
            &crate::publish::RemoteFacts::default(),
            &mut Vec::new(),
        );
        let body = cleanup_body();
        for fact in set.keys() {
            let (scope, name) = published::option(*fact);
            let removal = match scope {
                Scope::Pane(_) | Scope::Window(_) => format!("set -wqU -t #{{window_id}} {name} ;"),
                Scope::Session(_) => format!("set -qu -t #{{q:session_id}} {name} ;"),
                Scope::Global => format!("set -gqu {name}\n"),
                other => panic!("published at an unexpected scope {other:?}: {name}"),
            };
            assert!(body.contains(&removal), "{scope:?} {name}");
            assert!(is_published(name), "{name}");
        }
        assert!(!is_published("@tend_tap"));
    }

    #[test]
    fn cleanup_is_conditional_on_the_token() {
        assert_eq!(condition("123.4.5"), "#{==:#{@tend_daemon},123.4.5}");
        let c = cleanup_body();
        assert!(c.starts_with("set -gqu @tend_needs\n"));
        assert!(c.contains("set -gqu @tend_daemon\n"));
        assert!(c.ends_with("set -gq @tend_summary 'tend is not running'"));
        assert!(c.contains(
            "run-shell -C '#{S:set -qu -t #{q:session_id} @tend_session_band ; \
             set -qu -t #{q:session_id} @tend_session_needs ; \
             #{W:set -wqU -t #{window_id} @tend_agent ; "
        ));
    }

    #[test]
    fn guard_runs_the_cleanup_only_when_it_fails_and_escapes_formats() {
        let cmd = install_command(
            "/opt/te#nd/tend",
            "/run/c.sock",
            "1.2.0",
            "/usr/bin/tmux",
            "/tmp/s",
        );
        assert_eq!(cmd[..2], ["run-shell", "-b"]);
        assert!(
            cmd[2].starts_with(
                "exec >/dev/null 2>&1; '/opt/te##nd/tend' guard --socket /run/c.sock \
                 --token 1.2.0 || exec /usr/bin/tmux -S /tmp/s if-shell -F \
                 '##{==:##{@tend_daemon},1.2.0}' "
            ),
            "{}",
            cmd[2]
        );
    }
}
