//! Publishing state as user options, and pushing it to the status line.
//!
//! tend writes what the user sees as tmux *user options* (names starting
//! with `@`) at the scope that fits: a pane's state on the pane, rollups on
//! windows and sessions, the summary globally. Status-line formats read them
//! (`#{@tend_needs}`), and [`Server::refresh_clients`] redraws the status
//! lines when something changed, so no `#()` command has to poll.
//!
//! Naming convention: options tend *sets* are named `@tend_…` (underscore)
//! and are all removed by [`Server::remove_tend_options`] on `tend stop`.
//! Options the *user* sets to configure tend are named `@tend-…` (dash, like
//! `@tend-key-next`) and are never removed.
//!
//! Option values are stored verbatim (tmux does not expand formats in
//! values set without `-F`), but they are expanded when a status format
//! shows them with `#{E:@tend_summary}`; use
//! [`format_escape`](crate::escape::format_escape) on names placed in values
//! meant for that.

use std::fmt;

use crate::error::{Result, TmuxError};
use crate::records::nonce;
use crate::server::Server;
use tend_protocol::ids::{PaneId, SessionId, WindowId};

/// Prefix of every option tend sets (and removes on stop).
pub const TEND_OPTION_PREFIX: &str = "@tend_";

/// Where an option lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Global session options (`set -g`): seen by every session's formats.
    Global,
    /// Global window options (`set -gw`).
    GlobalWindow,
    /// Server options (`set -s`).
    Server,
    /// One session (`set -t $N`).
    Session(SessionId),
    /// One window (`set -w -t @N`).
    Window(WindowId),
    /// One pane (`set -p -t %N`; tmux 3.0 or newer).
    Pane(PaneId),
}

impl Scope {
    /// The scope flags and target for `set-option`/`show-options`.
    fn args(self) -> Vec<String> {
        match self {
            Scope::Global => vec!["-g".into()],
            Scope::GlobalWindow => vec!["-gw".into()],
            Scope::Server => vec!["-s".into()],
            Scope::Session(s) => vec!["-t".into(), s.to_string()],
            Scope::Window(w) => vec!["-w".into(), "-t".into(), w.to_string()],
            Scope::Pane(p) => vec!["-p".into(), "-t".into(), p.to_string()],
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Global => write!(f, "global"),
            Scope::GlobalWindow => write!(f, "global window"),
            Scope::Server => write!(f, "server"),
            Scope::Session(s) => write!(f, "session {s}"),
            Scope::Window(w) => write!(f, "window {w}"),
            Scope::Pane(p) => write!(f, "pane {p}"),
        }
    }
}

/// One option change: set `name` to `value` at `scope`, or unset it when
/// `value` is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionUpdate {
    /// Where.
    pub scope: Scope,
    /// The user option name, starting with `@`.
    pub name: String,
    /// The new value; `None` unsets the option at this scope.
    pub value: Option<String>,
}

impl OptionUpdate {
    /// Sets `name` to `value` at `scope`.
    pub fn set(scope: Scope, name: impl Into<String>, value: impl Into<String>) -> OptionUpdate {
        OptionUpdate {
            scope,
            name: name.into(),
            value: Some(value.into()),
        }
    }

    /// Unsets `name` at `scope`.
    pub fn unset(scope: Scope, name: impl Into<String>) -> OptionUpdate {
        OptionUpdate {
            scope,
            name: name.into(),
            value: None,
        }
    }

    fn command(&self) -> Vec<String> {
        let mut cmd = vec!["set-option".to_string(), "-q".to_string()];
        if self.value.is_none() {
            cmd.push("-u".into());
        }
        cmd.extend(self.scope.args());
        // `--` so that a value starting with `-` is not read as a flag.
        cmd.push("--".into());
        cmd.push(self.name.clone());
        if let Some(v) = &self.value {
            cmd.push(v.clone());
        }
        cmd
    }
}

fn check_name(name: &str) -> Result<()> {
    let ok = name.len() > 1
        && name.starts_with('@')
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "[]'\"\\".contains(c));
    if ok {
        Ok(())
    } else {
        Err(TmuxError::Invalid {
            detail: format!(
                "`{name}` is not a user option name: it must start with `@` and contain no \
                 spaces, quotes, brackets or backslashes"
            ),
        })
    }
}

/// Parses `show-options` output: the option name is the first word of a
/// line. Values are quoted by tmux and cannot start a line of their own.
fn option_names(out: &str) -> impl Iterator<Item = &str> {
    out.lines()
        .filter_map(|l| l.split(' ').next())
        .filter(|n| n.starts_with(TEND_OPTION_PREFIX))
}

/// The commands of [`Server::publish`]: the updates in order, then a
/// status redraw of each client.
pub(crate) fn publish_commands(
    updates: &[OptionUpdate],
    clients: &[String],
) -> Result<Vec<Vec<String>>> {
    for u in updates {
        check_name(&u.name)?;
    }
    let mut commands: Vec<Vec<String>> = updates.iter().map(OptionUpdate::command).collect();
    commands.extend(
        clients
            .iter()
            .filter(|c| !c.is_empty())
            .map(|c| vec!["refresh-client".into(), "-S".into(), "-t".into(), c.clone()]),
    );
    Ok(commands)
}

impl Server {
    /// Applies option changes, batched into as few tmux invocations as
    /// possible.
    ///
    /// Targets that vanished meanwhile (a pane closed) are skipped silently:
    /// tmux's `set-option -q` ignores them. Option names must start with `@`.
    pub fn set_options(&self, updates: &[OptionUpdate]) -> Result<()> {
        self.publish(updates, &[])
    }

    /// Sets one user option.
    pub fn set_option(&self, scope: Scope, name: &str, value: &str) -> Result<()> {
        self.set_options(&[OptionUpdate::set(scope, name, value)])
    }

    /// Unsets one user option at one scope.
    pub fn unset_option(&self, scope: Scope, name: &str) -> Result<()> {
        self.set_options(&[OptionUpdate::unset(scope, name)])
    }

    /// The value of an option set at exactly this scope (not inherited), or
    /// `None` when it is not set there.
    pub fn show_option(&self, scope: Scope, name: &str) -> Result<Option<String>> {
        check_name(name)?;
        let mut cmd = vec!["show-options".to_string(), "-q".into(), "-v".into()];
        cmd.extend(scope.args());
        cmd.push("--".into());
        cmd.push(name.to_string());
        // tmux prints the value and a newline, or nothing when unset.
        let out = match self.run(&cmd) {
            Err(e) if e.is_target_gone() => return Ok(None),
            other => other?,
        };
        let Some(printed) = out.strip_suffix('\n') else {
            return Ok(None);
        };
        self.capabilities()
            .printing
            .unprint(printed)
            .map(Some)
            .ok_or_else(|| unreadable(name, printed))
    }

    /// Every `@tend-*` option the user set globally (`set -g`), by name:
    /// tend's settings, such as `@tend-key-next`.
    pub fn user_settings(&self) -> Result<Vec<(String, String)>> {
        let names: Vec<String> = self
            .run(["show-options", "-g"])?
            .lines()
            .filter_map(|l| l.split(' ').next())
            .filter(|n| n.starts_with("@tend-") && check_name(n).is_ok())
            .map(str::to_string)
            .collect();
        let mut settings = Vec::new();
        for name in names {
            if let Some(value) = self.show_option(Scope::Global, &name)? {
                settings.push((name, value));
            }
        }
        Ok(settings)
    }

    /// Every `@tend_*` option set at any scope: global, global window,
    /// server, each session, each window and each pane.
    pub fn list_tend_options(&self) -> Result<Vec<(Scope, String)>> {
        let panes = self.list_panes()?;
        let mut scopes = vec![Scope::Global, Scope::GlobalWindow, Scope::Server];
        let mut seen = std::collections::BTreeSet::new();
        for p in &panes {
            for s in [
                Scope::Session(p.session_id),
                Scope::Window(p.window_id),
                Scope::Pane(p.pane_id),
            ] {
                if seen.insert(s) {
                    scopes.push(s);
                }
            }
        }
        // One invocation: a numbered marker line before each scope's listing.
        // Printable (tmux 3.4 and 3.5a print control bytes as `\036`); the
        // fresh nonce is what no option value can hold.
        let marker = format!("tend-scope-{}:", nonce());
        let mut commands = Vec::new();
        for (i, scope) in scopes.iter().enumerate() {
            commands.push(vec![
                "display-message".to_string(),
                "-p".into(),
                format!("{marker}{i}"),
            ]);
            let mut show = vec!["show-options".to_string(), "-q".into()];
            show.extend(scope.args());
            commands.push(show);
        }
        let out = self.run_batch_skipping_gone(&commands)?;
        let mut found = Vec::new();
        for section in out.split(&marker).skip(1) {
            let (index, listing) = section.split_once('\n').unwrap_or((section, ""));
            let Some(scope) = index
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|i| scopes.get(i))
            else {
                continue;
            };
            for name in option_names(listing) {
                found.push((*scope, name.to_string()));
            }
        }
        Ok(found)
    }

    /// Unsets every `@tend_*` option at every scope (for `tend stop`). The
    /// user's `@tend-*` settings stay. Returns how many were removed.
    pub fn remove_tend_options(&self) -> Result<usize> {
        let found = self.list_tend_options()?;
        let updates: Vec<OptionUpdate> = found
            .iter()
            .map(|(scope, name)| OptionUpdate::unset(*scope, name.clone()))
            .collect();
        self.set_options(&updates)?;
        Ok(updates.len())
    }

    /// Applies `updates` and redraws the status line of `clients`, in one
    /// tmux invocation (what the daemon does at each change: one process,
    /// not one to set and two to find and refresh the clients). A client
    /// that detached meanwhile is skipped, like a vanished pane or window.
    pub fn publish(&self, updates: &[OptionUpdate], clients: &[String]) -> Result<()> {
        let commands = publish_commands(updates, clients)?;
        self.run_batch_skipping_gone(&commands)?;
        Ok(())
    }

    /// Redraws the status line of every attached client
    /// (`refresh-client -S`), so that changed options show at once. Control
    /// mode clients are skipped. Returns how many clients were refreshed.
    pub fn refresh_clients(&self) -> Result<usize> {
        let clients: Vec<String> = self
            .list_clients()?
            .into_iter()
            .filter(|c| !c.control_mode && !c.name.is_empty())
            .map(|c| c.name)
            .collect();
        self.publish(&[], &clients)?;
        Ok(clients.len())
    }
}

/// An option value this tmux prints ambiguously (see
/// [`Printing::unprint`](crate::server::Printing::unprint)).
pub(crate) fn unreadable(name: &str, printed: &str) -> TmuxError {
    TmuxError::Unreadable {
        detail: format!(
            "{name} holds a backslash, which this tmux (3.4 or 3.5a) prints the same way as \
             its own escapes; tend cannot read it exactly and leaves it alone (printed as {:?})",
            printed.chars().take(80).collect::<String>()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("@tend_state").is_ok());
        for bad in ["tend", "@", "@a b", "@a\nb", "@x'", "status-right"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn commands() {
        let u = OptionUpdate::set(Scope::Pane(PaneId(3)), "@tend_state", "-waiting");
        assert_eq!(
            u.command(),
            [
                "set-option",
                "-q",
                "-p",
                "-t",
                "%3",
                "--",
                "@tend_state",
                "-waiting"
            ]
        );
        let u = OptionUpdate::unset(Scope::Session(SessionId(0)), "@tend_needs");
        assert_eq!(
            u.command(),
            ["set-option", "-q", "-u", "-t", "$0", "--", "@tend_needs"]
        );
    }

    #[test]
    fn listing_names() {
        let out = "@tend_a \"x\\n@tend_fake\"\n@tend-key-next N\n@other 1\n@tend_b 2\n";
        assert_eq!(
            option_names(out).collect::<Vec<_>>(),
            ["@tend_a", "@tend_b"]
        );
    }
}
