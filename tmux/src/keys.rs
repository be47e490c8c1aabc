//! Key bindings: tend's keys, the user's overrides, and clean removal.
//!
//! tend binds four actions in the prefix table by default. The default keys
//! are unbound in a default tmux (3.3a `list-keys`) and are not used by the
//! widely installed plugins (tpm `I` `U`, pain-control `H` `J` `K` `L`,
//! sessionist `C` `X` `S` `g`, yank `y` `Y`, fzf `F`, logging `P`,
//! resurrect `C-s` `C-r`, sensible `C-n` `C-p` `a` `R`):
//!
//! | action | option | default | mnemonic |
//! |---|---|---|---|
//! | next agent waiting on you | `@tend-key-next` | `prefix N` | **N**ext |
//! | next waiting in this session | `@tend-key-next-session` | `prefix T` | **T**his session |
//! | next working agent | `@tend-key-working` | `prefix W` | **W**orking |
//! | agent picker | `@tend-key-picker` | `prefix A` | **A**gents |
//!
//! A user changes a key with `set -g @tend-key-next 'M-n'`, disables one
//! with `set -g @tend-key-next none` (or an empty value), and moves all of
//! them to another table with `set -g @tend-key-table root`.
//!
//! tend never replaces a binding it did not make: a key the user (or tmux's
//! defaults) already bound is reported in [`BindReport::kept`] and left
//! alone. Every binding tend makes carries the [`MARKER`] in its command and
//! a note (`tmux list-keys -N` and `prefix ?` show it), and
//! [`Server::unbind_keys`] removes exactly those.

use crate::error::{Result, TmuxError};
use crate::escape::{run_shell_command, Word};
use crate::options::Scope;
use crate::server::Server;
use crate::MARKER;

/// The option naming the key table for tend's keys (default `prefix`).
pub const KEY_TABLE_OPTION: &str = "@tend-key-table";

/// One action tend offers on a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAction {
    /// The action's id, passed to the command by [`action_command`].
    pub id: &'static str,
    /// The user option that overrides the key.
    pub option: &'static str,
    /// The key when the option is not set.
    pub default_key: &'static str,
    /// The note shown by `list-keys -N`.
    pub note: &'static str,
}

/// tend's key actions, with their default keys.
pub const KEY_ACTIONS: &[KeyAction] = &[
    KeyAction {
        id: "next-waiting",
        option: "@tend-key-next",
        default_key: "N",
        note: "tend: jump to the next agent waiting on you",
    },
    KeyAction {
        id: "next-waiting-session",
        option: "@tend-key-next-session",
        default_key: "T",
        note: "tend: jump to the next agent waiting in this session",
    },
    KeyAction {
        id: "next-working",
        option: "@tend-key-working",
        default_key: "W",
        note: "tend: jump to the next working agent",
    },
    KeyAction {
        id: "picker",
        option: "@tend-key-picker",
        default_key: "A",
        note: "tend: pick an agent",
    },
];

/// The command for a key action: runs `program args… <action> client=…
/// pane=… session=…` in the background, with the client that pressed the
/// key, its current pane and session, and the [`MARKER`].
pub fn action_command(program: &str, args: &[&str], action: &str) -> String {
    let mut words = vec![Word::lit(program)];
    words.extend(args.iter().map(|a| Word::lit(*a)));
    words.push(Word::lit(action));
    words.push(Word::fmt("client=#{client_name}"));
    words.push(Word::fmt("pane=#{pane_id}"));
    words.push(Word::fmt("session=#{session_id}"));
    run_shell_command(&words, MARKER)
}

/// A binding to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The key table (`prefix`, `root`, …).
    pub table: String,
    /// The key, in tmux's notation (`N`, `M-n`, `C-Space`, `F5`).
    pub key: String,
    /// The note shown by `list-keys -N`.
    pub note: String,
    /// The tmux command string; must contain the [`MARKER`].
    pub command: String,
}

/// A binding as `list-keys` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedBinding {
    /// The key table.
    pub table: String,
    /// The key, unescaped (as `bind-key` takes it).
    pub key: String,
    /// Whether the key repeats (`bind-key -r`).
    pub repeat: bool,
    /// The command as tmux prints it.
    pub command: String,
}

impl ListedBinding {
    /// True when tend made this binding.
    pub fn is_ours(&self) -> bool {
        self.command.contains(MARKER)
    }
}

/// What [`Server::bind_keys`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BindReport {
    /// `(table, key)` pairs now bound to tend's commands.
    pub bound: Vec<(String, String)>,
    /// Keys left alone because something else is bound to them: the
    /// existing binding.
    pub kept: Vec<ListedBinding>,
    /// Keys tmux refused (not a key name it knows): `(key, tmux's words)`.
    pub invalid: Vec<(String, String)>,
}

/// Parses one `list-keys` line:
/// `bind-key [-r] -T table key command…`, columns padded with spaces.
fn parse_binding(line: &str) -> Option<ListedBinding> {
    let mut rest = line.trim_start().strip_prefix("bind-key")?;
    let next = |rest: &mut &str| -> Option<String> {
        let s = rest.trim_start();
        let end = s.find(' ').unwrap_or(s.len());
        let tok = s[..end].to_string();
        *rest = &s[end..];
        (!tok.is_empty()).then_some(tok)
    };
    let mut repeat = false;
    let mut table = None;
    let key = loop {
        let tok = next(&mut rest)?;
        match tok.as_str() {
            "-r" => repeat = true,
            "-T" => table = Some(next(&mut rest)?),
            "-N" => return None,
            _ => break tok,
        }
    };
    Some(ListedBinding {
        table: table?,
        key: unescape_key(&key),
        repeat,
        command: rest.trim().to_string(),
    })
}

/// `list-keys` writes keys the way tmux's parser reads them: `\;`, `C-\\`,
/// `"M-#"`, `'M-"'`. `bind-key` given through an argument vector wants
/// them bare.
fn unescape_key(key: &str) -> String {
    if key.len() >= 2 && key.starts_with('\'') && key.ends_with('\'') {
        return key[1..key.len() - 1].to_string();
    }
    let inner = if key.len() >= 2 && key.starts_with('"') && key.ends_with('"') {
        &key[1..key.len() - 1]
    } else {
        key
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// True when an option value disables a key.
fn disabled(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "" | "none" | "off" | "no" | "false" | "0"
    )
}

impl Server {
    /// The keys to bind: each action with its table and key after the
    /// user's `@tend-key-*` overrides, or `None` where the user disabled it.
    pub fn resolve_keys(&self) -> Result<Vec<(KeyAction, String, Option<String>)>> {
        let table = self
            .show_option(Scope::Global, KEY_TABLE_OPTION)?
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "prefix".to_string());
        let mut keys = Vec::new();
        for action in KEY_ACTIONS {
            let key = match self.show_option(Scope::Global, action.option)? {
                Some(v) if disabled(&v) => None,
                Some(v) => Some(v.trim().to_string()),
                None => Some(action.default_key.to_string()),
            };
            keys.push((*action, table.clone(), key));
        }
        Ok(keys)
    }

    /// Every binding in `table`, or in all tables when `table` is `None`.
    pub fn list_bindings(&self, table: Option<&str>) -> Result<Vec<ListedBinding>> {
        let out = match table {
            Some(t) => match self.run(["list-keys", "-T", t]) {
                Ok(out) => out,
                // An empty (never used) table does not exist yet.
                Err(TmuxError::Failed { stderr, .. }) if stderr.contains("doesn't exist") => {
                    String::new()
                }
                Err(e) => return Err(e),
            },
            None => self.run(["list-keys"])?,
        };
        Ok(out.lines().filter_map(parse_binding).collect())
    }

    /// Binds keys, never replacing a binding tend did not make (those are
    /// reported in [`BindReport::kept`]). Re-binding tend's own keys is fine.
    pub fn bind_keys(&self, bindings: &[Binding]) -> Result<BindReport> {
        if let Some(b) = bindings.iter().find(|b| !b.command.contains(MARKER)) {
            return Err(TmuxError::Invalid {
                detail: format!(
                    "the command for key {} does not contain the marker `{MARKER}`, so tend \
                     could not remove it again",
                    b.key
                ),
            });
        }
        let existing = self.list_bindings(None)?;
        let mut report = BindReport::default();
        for b in bindings {
            if let Some(other) = existing
                .iter()
                .find(|e| e.table == b.table && e.key == b.key && !e.is_ours())
            {
                report.kept.push(other.clone());
                continue;
            }
            let cmd = [
                "bind-key",
                "-N",
                b.note.as_str(),
                "-T",
                b.table.as_str(),
                "--",
                b.key.as_str(),
                b.command.as_str(),
            ];
            match self.run(cmd) {
                Ok(_) => report.bound.push((b.table.clone(), b.key.clone())),
                Err(TmuxError::Failed { stderr, .. }) => report
                    .invalid
                    .push((b.key.clone(), stderr.trim().to_string())),
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }

    /// Removes every binding tend made, in every table, and nothing else.
    /// Returns how many were removed.
    pub fn unbind_keys(&self) -> Result<usize> {
        let commands: Vec<Vec<String>> = self
            .list_bindings(None)?
            .into_iter()
            .filter(ListedBinding::is_ours)
            .map(|b| {
                vec![
                    "unbind-key".into(),
                    "-T".into(),
                    b.table,
                    "--".into(),
                    b.key,
                ]
            })
            .collect();
        self.run_many(&commands)?;
        Ok(commands.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_list_keys() {
        let b = parse_binding(
            "bind-key    -T prefix       N                    run-shell -b \"x ## tend-managed\"",
        )
        .unwrap();
        assert_eq!((b.table.as_str(), b.key.as_str()), ("prefix", "N"));
        assert!(b.is_ours() && !b.repeat);
        let b = parse_binding("bind-key -r -T prefix       Up                   select-pane -U")
            .unwrap();
        assert!(b.repeat && !b.is_ours());
        assert_eq!(b.command, "select-pane -U");
        let b =
            parse_binding("bind-key    -T prefix       \\;                   last-pane").unwrap();
        assert_eq!(b.key, ";");
        let b = parse_binding("bind-key    -T prefix       \\\\ x").unwrap();
        assert_eq!(b.key, "\\");
        for (printed, key) in [
            ("C-\\\\", "C-\\"),
            ("\"M-#\"", "M-#"),
            ("'M-\"'", "M-\""),
            ("\"M-;\"", "M-;"),
            ("M-Space", "M-Space"),
            ("\\\"", "\""),
        ] {
            assert_eq!(unescape_key(printed), key, "{printed}");
        }
        assert!(parse_binding("garbage").is_none());
    }

    #[test]
    fn defaults_are_distinct() {
        let mut keys: Vec<_> = KEY_ACTIONS.iter().map(|a| a.default_key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), KEY_ACTIONS.len());
        assert!(KEY_ACTIONS
            .iter()
            .all(|a| a.option.starts_with("@tend-key-")));
    }

    #[test]
    fn disabling_values() {
        assert!(disabled("none") && disabled("") && disabled(" Off "));
        assert!(!disabled("M-n"));
    }
}
