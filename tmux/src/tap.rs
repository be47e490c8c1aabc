//! Taps: `pipe-pane -IO` into tend, without ever touching a user's pipe.
//!
//! tmux allows one pipe per pane, does not report a pipe's command, and
//! closes whatever pipe is open when `pipe-pane` runs without a command (or
//! with `-o` on an open pipe). So tend:
//!
//! * installs a tap only on a pane whose `#{pane_pipe}` is 0, checked and
//!   installed in one `if-shell -F` so that nothing can slip in between;
//! * marks each tap it installs with the pane option `@tend_tap` (holding the
//!   tap's shell command), set in the same step. The mark survives a daemon
//!   restart, and [`Pane::tap`](crate::Pane::tap) reports it;
//! * closes a pipe only when the pane carries the mark, again checked and
//!   done in one step.
//!
//! A mark goes stale when the pipe closes without tend closing it (the
//! reader died, or the user closed or replaced the pipe): the mark stays.
//! The daemon clears the mark when it sees its pipe close, and before it
//! taps a pane again (see
//! [`Pane::has_stale_tap_mark`](crate::Pane::has_stale_tap_mark)).

use crate::command::{Command, Commands};
use crate::error::{Result, TmuxError};
use crate::escape::format_escape_hash;
use crate::server::{Printing, Server};
use tend_protocol::ids::PaneId;

/// The pane option that marks tend's tap; its value is the tap's command.
pub const TAP_OPTION: &str = "@tend_tap";

/// What [`Server::install_tap`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TapOutcome {
    /// The pane had no pipe; tend's tap is now installed.
    Installed,
    /// The pane already has a tap installed by tend, running `command`
    /// (perhaps by an earlier daemon). Nothing was changed.
    AlreadyTapped {
        /// The shell command of the existing tap.
        command: String,
    },
    /// The pane has someone else's pipe. Nothing was changed: the pane must
    /// be watched by polling `capture-pane` instead.
    Foreign,
}

impl Server {
    /// Installs `pipe-pane -IO` with `shell_command` on `pane`, unless a
    /// pipe is already open there.
    ///
    /// `shell_command` is a `/bin/sh` command line (build it with
    /// [`shell_join`](crate::escape::shell_join)); it reads the pane's
    /// output on its standard input. tmux would expand `#` formats in it;
    /// this function escapes them, so the command runs exactly as given.
    ///
    /// `-I` as well as `-O`: tmux then also reads the pipe, and so notices
    /// at once when the last holder of its other end closes it, and closes
    /// the pipe itself (with `-O` alone, tmux 3.3a notices only when the
    /// pane next prints, so a silent pane keeps a dead pipe open). Whatever
    /// is written to the pipe reaches the pane as input: a tap never writes
    /// to it (its standard output is the pipe too).
    ///
    /// The reader must never stall: tmux buffers a stalled pipe without
    /// bound.
    pub fn install_tap(&self, pane: PaneId, shell_command: &str) -> Result<TapOutcome> {
        let out = self.run(install_tap_command(pane, shell_command)?)?;
        let printing = self.capabilities().printing;
        tap_outcome(pane, out.strip_suffix('\n').unwrap_or(&out), printing)
    }

    /// [`Server::install_tap`] on several panes in one tmux invocation (a
    /// daemon starting on a server with many panes taps them all at once).
    /// A pane that vanished meanwhile makes tmux skip the rest: then each
    /// pane is tried on its own.
    pub fn install_taps(&self, taps: &[(PaneId, String)]) -> Vec<(PaneId, Result<TapOutcome>)> {
        let commands: Result<Vec<Vec<String>>> = taps
            .iter()
            .map(|(pane, cmd)| install_tap_command(*pane, cmd))
            .collect();
        if taps.len() > 1 {
            if let Ok(out) = commands.and_then(|c| self.run_many(&c)) {
                let printing = self.capabilities().printing;
                let lines: Vec<&str> = out.lines().collect();
                if lines.len() == taps.len() {
                    return taps
                        .iter()
                        .zip(lines)
                        .map(|((pane, _), line)| (*pane, tap_outcome(*pane, line, printing)))
                        .collect();
                }
            }
        }
        taps.iter()
            .map(|(pane, cmd)| (*pane, self.install_tap(*pane, cmd)))
            .collect()
    }

    /// Closes tend's tap on `pane`, if the pane carries tend's mark.
    /// Returns whether a tap was removed. A user's pipe is never closed.
    pub fn remove_tap(&self, pane: PaneId) -> Result<bool> {
        let out = self.run(remove_tap_command(pane))?;
        Ok(out.trim_end() == "removed")
    }

    /// Closes tend's taps on every pane (for `tend stop`). Panes that vanish
    /// meanwhile are skipped. Returns how many taps were removed.
    pub fn remove_all_taps(&self) -> Result<usize> {
        let commands: Vec<Vec<String>> = self
            .list_panes()?
            .iter()
            .filter(|p| p.tap.is_some())
            .map(|p| remove_tap_command(p.pane_id))
            .collect();
        let out = self.run_batch_skipping_gone(&commands)?;
        Ok(out.lines().filter(|l| *l == "removed").count())
    }

    /// Removes tend's mark from `pane` without touching any pipe. The tap
    /// process calls this when its input ends (its pipe was closed); the
    /// daemon calls it for marks left on panes without a pipe.
    pub fn clear_tap_mark(&self, pane: PaneId) -> Result<()> {
        let target = pane.to_string();
        self.run(["set-option", "-p", "-u", "-t", &target, TAP_OPTION])?;
        Ok(())
    }
}

/// `if-shell -F -t %N '#{pane_pipe}' 'display -p busy:…' 'pipe-pane -IO … ; set -p @tend_tap … ; display -p installed'`
fn install_tap_command(pane: PaneId, shell_command: &str) -> Result<Vec<String>> {
    if shell_command.trim().is_empty() {
        return Err(TmuxError::Invalid {
            detail: "a tap needs a command to pipe the pane's output into".into(),
        });
    }
    let target = pane.to_string();
    let busy = Command::new("display-message").args([
        "-p",
        "-t",
        target.as_str(),
        &format!("busy:#{{{TAP_OPTION}}}"),
    ]);
    // pipe-pane expands formats in its command: `#` doubled; the mark is
    // the command as written.
    let install = Commands::from(Command::new("pipe-pane").args([
        "-IO",
        "-t",
        target.as_str(),
        &format_escape_hash(shell_command),
    ]))
    .then(Command::new("set-option").args(["-p", "-t", target.as_str(), TAP_OPTION, shell_command]))
    .then(Command::new("display-message").args(["-p", "installed"]));
    Ok(vec![
        "if-shell".into(),
        "-F".into(),
        "-t".into(),
        target,
        "#{pane_pipe}".into(),
        Commands::from(busy).command_string(),
        install.command_string(),
    ])
}

/// What one line of an install's answer says. The mark is read back as
/// [`Pane::tap`](crate::Pane::tap) is: exactly where this tmux printed it
/// with escapes (3.4 writes `\$x` for the `$x` of a path, 3.4 and 3.5a
/// `\037` for a control character) and that is certain.
fn tap_outcome(pane: PaneId, out: &str, printing: Printing) -> Result<TapOutcome> {
    if out == "installed" {
        return Ok(TapOutcome::Installed);
    }
    match out.strip_prefix("busy:") {
        Some("") => Ok(TapOutcome::Foreign),
        Some(printed) => Ok(TapOutcome::AlreadyTapped {
            command: printing
                .unprint(printed)
                .unwrap_or_else(|| printed.to_owned()),
        }),
        None => Err(TmuxError::Parse {
            what: format!("installing the tap on {pane}"),
            detail: format!("unexpected answer `{out}`"),
        }),
    }
}

/// `if-shell -F -t %N '#{@tend_tap}' 'pipe-pane -t %N ; set -pu … ; display -p removed'`
fn remove_tap_command(pane: PaneId) -> Vec<String> {
    let target = pane.to_string();
    let remove = Commands::from(Command::new("pipe-pane").args(["-t", target.as_str()]))
        .then(Command::new("set-option").args(["-p", "-u", "-t", target.as_str(), TAP_OPTION]))
        .then(Command::new("display-message").args(["-p", "removed"]));
    vec![
        "if-shell".into(),
        "-F".into(),
        "-t".into(),
        target,
        format!("#{{{TAP_OPTION}}}"),
        remove.command_string(),
    ]
}
