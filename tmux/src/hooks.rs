//! Hooks: learning about new, vanished and focused panes, without touching
//! the user's hooks.
//!
//! tmux hooks are array options: `set-hook -ga hook 'command'` appends an
//! entry, `show-hooks -g` lists them as `hook[index] command`, and
//! `set-hook -gu 'hook[index]'` removes one entry. tend appends its entries
//! (never `set-hook -g` without `-a`, which would replace the user's) and
//! removes only entries whose command contains the [`MARKER`]: tmux keeps
//! the command text, and [`event_command`] ends every tend command with a
//! shell comment carrying the marker.
//!
//! What the hooks report, as measured on tmux 3.3a (formats expanded when
//! the hook runs):
//!
//! | hook | fires when | the pane concerned |
//! |---|---|---|
//! | `after-new-window`, `after-split-window` | a pane is created by these commands | `#{pane_id}` (the new pane) |
//! | `pane-exited` | a pane's process exits and the pane closes | `#{hook_pane}` (`#{pane_id}` is another pane) |
//! | `pane-died` | a pane's process exits with `remain-on-exit` on | `#{hook_pane}` |
//! | `session-created` | a session is created (with its first pane) | `#{pane_id}`, session `#{hook_session}` |
//! | `client-session-changed` | a client switches or attaches to a session | client `#{hook_client}`, its pane `#{pane_id}` |
//! | `session-window-changed` | a session's current window changes | `#{pane_id}` (the window's active pane) |
//! | `window-pane-changed` | a window's active pane changes | `#{pane_id}`, window `#{hook_window}` |
//! | `pane-focus-in` | a pane gains focus (needs `focus-events on`) | `#{hook_pane}` |
//! | `window-layout-changed` | a window or a pane in it is resized, split or rearranged (tmux 3.2a on) | window `#{hook_window}` |
//!
//! `kill-pane`, `kill-window`, `break-pane`, `join-pane` and `respawn-pane`
//! fire none of the pane hooks above: the daemon's periodic reconcile with
//! [`Server::list_panes`] catches them.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Result, TmuxError};
use crate::escape::{run_shell_command, Word};
use crate::server::Server;
use crate::MARKER;

/// Hooks that announce panes appearing and disappearing, so a new pane is
/// tapped at once instead of at the next listing.
pub const PANE_HOOKS: &[&str] = &[
    "after-new-window",
    "after-split-window",
    "pane-exited",
    "pane-died",
    "session-created",
];

/// Hooks that announce what a user looks at (for "seen" and for not
/// notifying about the pane in front of the user).
pub const FOCUS_HOOKS: &[&str] = &[
    "client-session-changed",
    "session-window-changed",
    "window-pane-changed",
    "pane-focus-in",
];

/// The words [`event_command`] appends after the hook name: `key=format`,
/// expanded by tmux when the hook runs. Every format expands to an id or a
/// client name, never to a user-chosen name.
pub const EVENT_FIELDS: &[(&str, &str)] = &[
    ("pane", "#{pane_id}"),
    ("hook_pane", "#{hook_pane}"),
    ("window", "#{window_id}"),
    ("hook_window", "#{hook_window}"),
    ("session", "#{session_id}"),
    ("hook_session", "#{hook_session}"),
    ("client", "#{hook_client}"),
];

/// The hook command tend installs for `hook`: runs `program` (with
/// `args`) in the background as
///
/// ```text
/// program args… <hook> pane=%3 hook_pane=%3 window=@1 hook_window= session=$0 hook_session= client=
/// ```
///
/// (see [`EVENT_FIELDS`]; empty values are passed as `key=`), and carries
/// the [`MARKER`] so that [`Server::remove_hooks`] finds it.
pub fn event_command(program: &str, args: &[&str], hook: &str) -> String {
    let mut words = vec![Word::lit(program)];
    words.extend(args.iter().map(|a| Word::lit(*a)));
    words.push(Word::lit(hook));
    for (key, format) in EVENT_FIELDS {
        words.push(Word::fmt(format!("{key}={format}")));
    }
    run_shell_command(&words, MARKER)
}

/// One entry of a hook array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEntry {
    /// The hook name, e.g. `after-new-window`.
    pub hook: String,
    /// The array index.
    pub index: u32,
    /// The command, as tmux prints it.
    pub command: String,
}

impl HookEntry {
    /// True when tend installed this entry (its command carries the
    /// [`MARKER`]).
    pub fn is_ours(&self) -> bool {
        self.command.contains(MARKER)
    }
}

/// What [`Server::install_hooks`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookReport {
    /// Hooks that now carry tend's entry.
    pub installed: Vec<String>,
    /// Hooks this tmux does not have (older versions); nothing was set.
    pub unsupported: Vec<String>,
}

/// Parses `show-hooks` output: `hook[index] command` lines; lines with a
/// bare hook name are hooks without entries.
fn parse_hooks(out: &str) -> (Vec<HookEntry>, BTreeSet<String>) {
    let mut entries = BTreeMap::new();
    let mut names = BTreeSet::new();
    for line in out.lines() {
        let (head, command) = line.split_once(' ').unwrap_or((line, ""));
        match head.split_once('[') {
            Some((hook, rest)) => {
                let Some(index) = rest.strip_suffix(']').and_then(|i| i.parse::<u32>().ok()) else {
                    continue;
                };
                names.insert(hook.to_string());
                entries.insert(
                    (hook.to_string(), index),
                    HookEntry {
                        hook: hook.to_string(),
                        index,
                        command: command.to_string(),
                    },
                );
            }
            None if !head.is_empty() && command.is_empty() => {
                names.insert(head.to_string());
            }
            None => {}
        }
    }
    (entries.into_values().collect(), names)
}

impl Server {
    /// `show-hooks -g` and `show-hooks -gw`: session and window hooks.
    fn show_hooks(&self) -> Result<String> {
        match self.run_many(&[["show-hooks", "-g"], ["show-hooks", "-gw"]]) {
            Ok(out) => Ok(out),
            // Versions without window hooks in their own table.
            Err(TmuxError::Failed { .. }) => self.run(["show-hooks", "-g"]),
            Err(e) => Err(e),
        }
    }

    /// The hook names this tmux knows.
    pub fn supported_hooks(&self) -> Result<BTreeSet<String>> {
        Ok(parse_hooks(&self.show_hooks()?).1)
    }

    /// Every global hook entry, the user's and tend's.
    pub fn list_hooks(&self) -> Result<Vec<HookEntry>> {
        Ok(parse_hooks(&self.show_hooks()?).0)
    }

    /// Installs tend's hook entries: for each `(hook, command)`, appends
    /// `command` to `hook` with `set-hook -ga`, after removing any entry tend
    /// installed there before (so calling it again does not duplicate).
    /// The user's entries are untouched.
    ///
    /// Every command must contain the [`MARKER`] (build it with
    /// [`event_command`] or [`run_shell_command`]),
    /// otherwise tend could not remove it later. Hooks this tmux does not
    /// know are skipped and reported.
    pub fn install_hooks(&self, hooks: &[(&str, String)]) -> Result<HookReport> {
        if let Some((hook, _)) = hooks.iter().find(|(_, c)| !c.contains(MARKER)) {
            return Err(TmuxError::Invalid {
                detail: format!(
                    "the command for hook {hook} does not contain the marker `{MARKER}`, \
                     so tend could not remove it again"
                ),
            });
        }
        let (entries, supported) = parse_hooks(&self.show_hooks()?);
        let mut report = HookReport::default();
        let mut commands: Vec<Vec<String>> = Vec::new();
        for (hook, command) in hooks {
            if !supported.contains(*hook) {
                report.unsupported.push(hook.to_string());
                continue;
            }
            for e in entries.iter().filter(|e| e.hook == *hook && e.is_ours()) {
                commands.push(unset_entry(e));
            }
            commands.push(vec![
                "set-hook".into(),
                "-ga".into(),
                hook.to_string(),
                command.clone(),
            ]);
            report.installed.push(hook.to_string());
        }
        self.run_many(&commands)?;
        Ok(report)
    }

    /// Removes every hook entry tend installed (those carrying the
    /// [`MARKER`]), and nothing else. Returns how many were removed.
    pub fn remove_hooks(&self) -> Result<usize> {
        let commands: Vec<Vec<String>> = self
            .list_hooks()?
            .iter()
            .filter(|e| e.is_ours())
            .map(unset_entry)
            .collect();
        self.run_many(&commands)?;
        Ok(commands.len())
    }
}

fn unset_entry(e: &HookEntry) -> Vec<String> {
    vec![
        "set-hook".into(),
        "-gu".into(),
        format!("{}[{}]", e.hook, e.index),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_show_hooks() {
        let out = "after-bind-key\n\
                   after-new-window[0] display-message -p \"user\"\n\
                   after-new-window[3] run-shell -b \"tend hook ## tend-managed\"\n\
                   pane-exited\n\
                   pane-exited[0] x\n";
        let (entries, names) = parse_hooks(out);
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[1].index, 3);
        assert!(entries[1].is_ours());
        assert!(!entries[0].is_ours());
        assert!(names.contains("after-bind-key") && names.contains("pane-exited"));
    }

    #[test]
    fn event_command_carries_marker_and_ids_only() {
        let c = event_command("/usr/bin/tend", &["hook-event"], "after-new-window");
        assert!(c.contains(MARKER));
        assert!(c.starts_with("run-shell -b '"));
        assert!(c.contains("pane=#{pane_id}"));
        assert!(!c.contains("session_name"));
    }
}
