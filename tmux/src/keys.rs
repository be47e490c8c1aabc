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

/// The server option in which tend records, before it binds anything, the
/// key tables it binds into (`prefix,my%2Ckeys`). `list-keys` prints table
/// names bare, so a name with a space or a quote (`my "tend" keys`, which
/// tmux takes) can only be read back from it when tend knows the name:
/// [`Server::unbind_keys`] finds tend's bindings there after any restart.
/// One of tend's `@tend_*` options, removed at `tend stop`; kept when the
/// daemon dies (its keys stay bound until `tend stop`).
pub const TABLES_RECORD: &str = "@tend_key_tables";

/// Tables in which [`Server::bind_keys`] binds each key for a moment, to
/// read back how this tmux writes it (`-0`, `-1`, …).
const PROBE_TABLE: &str = "tend-managed-probe";

/// A table that never exists: `list-keys -T` with it makes tmux check a
/// key name and list nothing ([`Server::key_refused`]).
const NO_TABLE: &str = "tend-managed-no-such-table";

/// What to write instead of a key name tmux does not know.
pub const KEY_NAME_HELP: &str = "write a key as tmux does: `N`, `M-n` (Alt+n), `C-a` (Ctrl+a), \
     `F5`, `Space`, `C-Space`, or `none` for no key";

/// Checks a key table name before tend binds into it. tmux takes any
/// name (3.2a–3.7c: `bind-key -T 'my "keys"'` works), and `list-keys`
/// prints it bare; tend reads a name with spaces or quotes back through
/// [`TABLES_RECORD`]. Refused: the empty name, and control characters
/// (a newline would split the line `list-keys` prints).
pub fn check_table_name(table: &str) -> std::result::Result<(), String> {
    if table.is_empty() {
        return Err(
            "an empty name is no key table: use `prefix` (keys pressed after the \
                    prefix key) or `root` (keys pressed alone)"
                .into(),
        );
    }
    if table.chars().any(char::is_control) {
        return Err(
            "a key table name cannot hold a control character (tab, newline, …): \
                    use `prefix`, `root`, or a name of printable characters"
                .into(),
        );
    }
    Ok(())
}

/// Key names that tmux knows by name, from 3.2a to 3.7c (compared without
/// case, as tmux does).
const NAMED_KEYS: &[&str] = &[
    "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12", "IC", "Insert",
    "DC", "Delete", "Home", "End", "NPage", "PageDown", "PgDn", "PPage", "PageUp", "PgUp", "Tab",
    "BTab", "Space", "BSpace", "Enter", "Escape", "Up", "Down", "Left", "Right", "KP/", "KP*",
    "KP-", "KP7", "KP8", "KP9", "KP+", "KP4", "KP5", "KP6", "KP1", "KP2", "KP3", "KPEnter", "KP0",
    "KP.", "[NUL]", "[SOH]", "[STX]", "[ETX]", "[EOT]", "[ENQ]", "[ASC]", "[BEL]", "[BS]", "[LF]",
    "[VT]", "[FF]", "[SO]", "[SI]", "[DLE]", "[DC1]", "[DC2]", "[DC3]", "[DC4]", "[NAK]", "[SYN]",
    "[ETB]", "[CAN]", "[EM]", "[SUB]", "[FS]", "[GS]", "[RS]", "[US]",
];

/// Mouse key names: an event, an optional button, a place
/// (`MouseDown1Pane`, `WheelUpStatus`, `DoubleClick3Border`).
const MOUSE_EVENTS: &[&str] = &[
    "MouseDragEnd",
    "MouseDown",
    "MouseUp",
    "MouseDrag",
    "WheelUp",
    "WheelDown",
    "SecondClick",
    "DoubleClick",
    "TripleClick",
];
const MOUSE_PLACES: &[&str] = &[
    "Pane",
    "Status",
    "StatusLeft",
    "StatusRight",
    "StatusDefault",
    "Border",
    "ScrollbarUp",
    "ScrollbarSlider",
    "ScrollbarDown",
];

fn is_mouse_key(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    MOUSE_EVENTS.iter().any(|e| {
        let Some(rest) = lower.strip_prefix(&e.to_ascii_lowercase()) else {
            return false;
        };
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        MOUSE_PLACES.iter().any(|p| rest == p.to_ascii_lowercase())
            || rest
                .strip_prefix("control")
                .is_some_and(|n| n.len() == 1 && n.as_bytes()[0].is_ascii_digit())
    })
}

/// Checks a key name without asking tmux, as tmux reads it (key-string.c,
/// 3.2a to 3.7c): modifiers (`C-`, `M-`, `S-`, `^`), then one character
/// or a key's name (`F5`, `Space`, `MouseDown1Pane`, `User3`), or a
/// character's code (`0x41`). Anything some tmux of those versions takes
/// passes; the tmux that binds the key has the last word (a refusal there
/// is in [`BindReport::invalid`]). `none` (no key) is the caller's to
/// handle first.
pub fn check_key_name(key: &str) -> std::result::Result<(), String> {
    if is_key_name(key) {
        Ok(())
    } else {
        Err(format!("tmux knows no key by that name; {KEY_NAME_HELP}"))
    }
}

fn is_key_name(s: &str) -> bool {
    if s.chars().any(char::is_control) {
        return false;
    }
    if s.eq_ignore_ascii_case("any") {
        return true;
    }
    if let Some(hex) = s.strip_prefix("0x") {
        // sscanf("%x"): spaces, a sign, then at least one hex digit.
        let hex = hex.trim_start_matches(' ');
        let hex = hex.strip_prefix(['+', '-']).unwrap_or(hex);
        return hex.starts_with(|c: char| c.is_ascii_hexdigit());
    }
    let mut rest = s;
    if rest.len() > 1 && rest.starts_with('^') {
        rest = &rest[1..];
    }
    loop {
        let b = rest.as_bytes();
        if b.len() < 2 || b[1] != b'-' {
            break;
        }
        if !matches!(b[0], b'C' | b'c' | b'M' | b'm' | b'S' | b's') {
            return false;
        }
        rest = &rest[2..];
    }
    let mut chars = rest.chars();
    match (chars.next(), chars.next()) {
        (None, _) => false,
        // One character: ASCII (not a control character) or any other.
        (Some(_), None) => true,
        (Some(_), Some(_)) => {
            NAMED_KEYS.iter().any(|n| n.eq_ignore_ascii_case(rest))
                || is_mouse_key(rest)
                || rest.strip_prefix("User").is_some_and(|n| {
                    let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
                    digits.parse::<u32>().is_ok_and(|u| u <= 1000)
                })
        }
    }
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
    /// `(table, key)` pairs now bound to tend's commands, the key as tmux
    /// writes it.
    pub bound: Vec<(String, String)>,
    /// Keys left alone because something else is bound to them: the
    /// existing binding.
    pub kept: Vec<ListedBinding>,
    /// Keys not bound: `(key, why)` — tmux's own words for a key it does
    /// not know, or why tend would not bind it.
    pub invalid: Vec<(String, String)>,
}

/// Parses one `list-keys` line: `bind-key [-r] -T table key command…`,
/// columns padded with spaces. `known` are table names that may hold
/// spaces: `list-keys` prints table names bare, so only a known name can be
/// told from the key after it (the longest known name that fits wins);
/// any other name ends at the first space.
fn parse_binding(line: &str, known: &[String]) -> Option<ListedBinding> {
    let mut rest = line.trim_start().strip_prefix("bind-key")?;
    let mut repeat = false;
    loop {
        rest = rest.trim_start_matches(' ');
        if let Some(r) = rest.strip_prefix("-r ") {
            repeat = true;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("-T ") {
            rest = r;
            break;
        } else {
            // `-N` (notes) or something else: not a binding line.
            return None;
        }
    }
    let table = known
        .iter()
        .filter(|t| {
            !t.is_empty()
                && rest
                    .strip_prefix(t.as_str())
                    .is_some_and(|after| after.starts_with(' '))
        })
        .max_by_key(|t| t.len())
        .cloned()
        .or_else(|| {
            let end = rest.find(' ')?;
            Some(rest[..end].to_string())
        })?;
    let after = rest[table.len()..].trim_start_matches(' ');
    let end = after.find(' ').unwrap_or(after.len());
    let key = &after[..end];
    if table.is_empty() || key.is_empty() {
        return None;
    }
    Some(ListedBinding {
        table,
        key: unescape_key(key),
        repeat,
        command: after[end..].trim().to_string(),
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

/// True when a setting's value asks for no key (`none`, `off`, empty, …).
pub fn disables_key(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "" | "none" | "off" | "no" | "false" | "0"
    )
}

/// [`TABLES_RECORD`]'s value: names joined by `,`, with `%` and `,`
/// written `%25` and `%2C` (tmux may show control characters escaped, so
/// the record holds none).
fn encode_tables(tables: &[String]) -> String {
    tables
        .iter()
        .map(|t| t.replace('%', "%25").replace(',', "%2C"))
        .collect::<Vec<_>>()
        .join(",")
}

fn decode_tables(value: &str) -> Vec<String> {
    value
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut out = String::with_capacity(p.len());
            let mut rest = p;
            while let Some(i) = rest.find('%') {
                out.push_str(&rest[..i]);
                let code = rest.get(i + 1..i + 3);
                match code {
                    Some("25") => out.push('%'),
                    Some("2C") => out.push(','),
                    _ => {
                        out.push('%');
                        rest = &rest[i + 1..];
                        continue;
                    }
                }
                rest = &rest[i + 3..];
            }
            out.push_str(rest);
            out
        })
        .collect()
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
                Some(v) if disables_key(&v) => None,
                Some(v) => Some(v.trim().to_string()),
                None => Some(action.default_key.to_string()),
            };
            keys.push((*action, table.clone(), key));
        }
        Ok(keys)
    }

    /// The key tables tend recorded binding into ([`TABLES_RECORD`]).
    pub fn recorded_key_tables(&self) -> Result<Vec<String>> {
        Ok(self
            .show_option(Scope::Server, TABLES_RECORD)?
            .map(|v| decode_tables(&v))
            .unwrap_or_default())
    }

    /// Every binding in `table`, or in all tables when `table` is `None`.
    /// Tables named in [`TABLES_RECORD`] (and `table`) are read exactly,
    /// spaces and quotes included.
    pub fn list_bindings(&self, table: Option<&str>) -> Result<Vec<ListedBinding>> {
        let mut known = self.recorded_key_tables()?;
        known.extend(table.map(str::to_string));
        // The whole listing, filtered here: tmux 3.7 shows a `list-keys -T`
        // that finds one binding as a message instead of printing it.
        let out = self.run(["list-keys"])?;
        Ok(out
            .lines()
            .filter_map(|l| parse_binding(l, &known))
            .filter(|b| table.is_none_or(|t| b.table == t))
            .collect())
    }

    /// `None` when this tmux knows `key` as a key name, else tmux's words
    /// (`invalid key: #(touch x)`). Changes nothing: it asks `list-keys`
    /// about the key in a table that does not exist.
    pub fn key_refused(&self, key: &str) -> Result<Option<String>> {
        match self.run(["list-keys", "-T", NO_TABLE, "--", key]) {
            Ok(_) => Ok(None),
            Err(TmuxError::Failed { stderr, .. }) => {
                let words = stderr.trim();
                if words.starts_with(&format!("table {NO_TABLE}")) {
                    Ok(None)
                } else {
                    Ok(Some(words.to_string()))
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Binds keys, never replacing a binding tend did not make (those are
    /// reported in [`BindReport::kept`]). Re-binding tend's own keys is fine.
    ///
    /// A key is compared as tmux writes it (`C-M-x` is `M-C-x` in 3.3a,
    /// `0x41` is `A`): each is bound for a moment in a probe table of its
    /// own and read back, so a user's binding spelt differently is still
    /// theirs. A key tmux does not know fails there, before any real table
    /// is touched. The tables are recorded in [`TABLES_RECORD`] first, so
    /// that [`Server::unbind_keys`] finds them whatever happens next.
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
        let mut report = BindReport::default();
        let mut todo = Vec::new();
        for b in bindings {
            match check_table_name(&b.table) {
                Ok(()) => todo.push(b),
                Err(why) => report
                    .invalid
                    .push((b.key.clone(), format!("key table {:?}: {why}", b.table))),
            }
        }
        let mut tables = self.recorded_key_tables()?;
        let before = tables.len();
        for b in &todo {
            if !tables.contains(&b.table) {
                tables.push(b.table.clone());
            }
        }
        if tables.len() != before {
            self.set_option(Scope::Server, TABLES_RECORD, &encode_tables(&tables))?;
        }

        let mut probed = Vec::new();
        for (i, b) in todo.into_iter().enumerate() {
            let probe = format!("{PROBE_TABLE}-{i}");
            let cmd = [
                "bind-key",
                "-T",
                probe.as_str(),
                "--",
                b.key.as_str(),
                b.command.as_str(),
            ];
            match self.run(cmd) {
                Ok(_) => probed.push((b, probe)),
                Err(TmuxError::Failed { stderr, .. }) => report
                    .invalid
                    .push((b.key.clone(), stderr.trim().to_string())),
                Err(e) => return Err(e),
            }
        }
        let listed = self.list_bindings(None);
        let unprobe: Vec<Vec<&str>> = probed
            .iter()
            .map(|(_, p)| vec!["unbind-key", "-a", "-T", p.as_str()])
            .collect();
        let unprobed = self.run_many(&unprobe);
        let existing = listed?;
        unprobed?;

        let mut taken: Vec<(&str, String, &str)> = Vec::new();
        for (b, probe) in probed {
            let key = existing
                .iter()
                .find(|e| e.table == probe)
                .map_or_else(|| b.key.clone(), |e| e.key.clone());
            if let Some(other) = existing
                .iter()
                .find(|e| e.table == b.table && e.key == key && !e.is_ours())
            {
                report.kept.push(other.clone());
                continue;
            }
            if let Some((_, _, note)) = taken.iter().find(|(t, k, _)| *t == b.table && *k == key) {
                report.invalid.push((
                    b.key.clone(),
                    format!("the same key as \"{note}\"; give each its own key"),
                ));
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
                Ok(_) => {
                    report.bound.push((b.table.clone(), key.clone()));
                    taken.push((b.table.as_str(), key, b.note.as_str()));
                }
                Err(TmuxError::Failed { stderr, .. }) => report
                    .invalid
                    .push((b.key.clone(), stderr.trim().to_string())),
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }

    /// Removes every binding tend made, in every table (the recorded ones
    /// read exactly), and nothing else. Returns how many were removed. A
    /// binding that cannot be removed does not keep the others: they go
    /// one by one, and the first refusal is returned after.
    pub fn unbind_keys(&self) -> Result<usize> {
        let tables = self.recorded_key_tables()?;
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
        if self.run_many(&commands).is_err() {
            let mut refused = None;
            for c in &commands {
                if let Err(e) = self.run(c) {
                    refused.get_or_insert(e);
                }
            }
            if let Some(e) = refused {
                return Err(e);
            }
        }
        if !tables.is_empty() {
            self.unset_option(Scope::Server, TABLES_RECORD)?;
        }
        Ok(commands.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_list_keys() {
        let none: &[String] = &[];
        let b = parse_binding(
            "bind-key    -T prefix       N                    run-shell -b \"x ## tend-managed\"",
            none,
        )
        .unwrap();
        assert_eq!((b.table.as_str(), b.key.as_str()), ("prefix", "N"));
        assert!(b.is_ours() && !b.repeat);
        let b = parse_binding(
            "bind-key -r -T prefix       Up                   select-pane -U",
            none,
        )
        .unwrap();
        assert!(b.repeat && !b.is_ours());
        assert_eq!(b.command, "select-pane -U");
        let b = parse_binding(
            "bind-key    -T prefix       \\;                   last-pane",
            none,
        )
        .unwrap();
        assert_eq!(b.key, ";");
        let b = parse_binding("bind-key    -T prefix       \\\\ x", none).unwrap();
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
        assert!(parse_binding("garbage", none).is_none());
        assert!(parse_binding("bind-key -N x", none).is_none());
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
        assert!(disables_key("none") && disables_key("") && disables_key(" Off "));
        assert!(!disables_key("M-n"));
    }

    #[test]
    fn table_names_with_spaces_and_quotes_are_read_when_known() {
        // What tmux 3.3a prints for tables `my "tend" keys` and `my`, and
        // what 3.7 prints (a two-column repeat flag).
        let known = vec!["my \"tend\" keys".to_string(), "my".to_string()];
        let b = parse_binding(
            "bind-key    -T my \"tend\" keys N                    run-shell -C \"#{@tend-managed}\"",
            &known,
        )
        .unwrap();
        assert_eq!(
            (b.table.as_str(), b.key.as_str(), b.command.as_str()),
            ("my \"tend\" keys", "N", "run-shell -C \"#{@tend-managed}\"")
        );
        let b = parse_binding(
            "bind-key    -T my             T                    display-message user",
            &known,
        )
        .unwrap();
        assert_eq!((b.table.as_str(), b.key.as_str()), ("my", "T"));
        let b = parse_binding("bind-key -r -T it's mine \"M-#\" x", &["it's mine".into()]).unwrap();
        assert_eq!((b.table.as_str(), b.key.as_str()), ("it's mine", "M-#"));
        assert!(b.repeat);
        let b = parse_binding("bind-key  -T prefix N x", none_known()).unwrap();
        assert_eq!((b.table.as_str(), b.key.as_str()), ("prefix", "N"));
        // Unknown, such a table cannot be told from its key: first word.
        let b = parse_binding("bind-key    -T my table N x", none_known()).unwrap();
        assert_eq!((b.table.as_str(), b.key.as_str()), ("my", "table"));
    }

    fn none_known() -> &'static [String] {
        &[]
    }

    #[test]
    fn the_table_record_round_trips() {
        let tables: Vec<String> = ["prefix", "a,b", "100%", "my \"t\" x", "%2C"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let text = encode_tables(&tables);
        assert_eq!(text, "prefix,a%2Cb,100%25,my \"t\" x,%252C");
        assert_eq!(decode_tables(&text), tables);
        assert!(decode_tables("").is_empty());
        assert_eq!(decode_tables("x%zz"), ["x%zz"]);
    }

    #[test]
    fn table_names() {
        assert_eq!(check_table_name("prefix"), Ok(()));
        assert_eq!(check_table_name("my \"tend\" keys"), Ok(()));
        assert_eq!(check_table_name("#(touch x)"), Ok(()));
        assert!(check_table_name("")
            .unwrap_err()
            .starts_with("an empty name is no key table"));
        assert!(check_table_name("a\nb")
            .unwrap_err()
            .contains("control character"));
    }

    #[test]
    fn key_names_as_tmux_reads_them() {
        for ok in [
            "N",
            "n",
            "M-n",
            "C-a",
            "c-a",
            "^a",
            "^",
            "C-M-x",
            "M-C-S-Up",
            "S-Up",
            "F5",
            "f12",
            "Space",
            "C-Space",
            "space",
            "BSpace",
            "Enter",
            "Escape",
            "Tab",
            "BTab",
            "IC",
            "Insert",
            "PgUp",
            "KPEnter",
            "KP*",
            "-",
            "C--",
            "\"",
            "#",
            "M-#",
            ";",
            "M-;",
            "é",
            "M-é",
            "Ω",
            "0x41",
            "0xe9",
            "Any",
            "User0",
            "User1000",
            "MouseDown1Pane",
            "mousedown1pane",
            "WheelUpStatus",
            "DoubleClick3Border",
            "MouseDragEnd1StatusLeft",
            "MouseDown7ScrollbarSlider",
            "MouseDown1Control9",
            "[NUL]",
            "C-%",
        ] {
            assert_eq!(check_key_name(ok), Ok(()), "{ok:?}");
        }
        for bad in [
            "#(touch x)",
            "",
            "NN",
            "nope",
            "a b",
            " N",
            "N ",
            "C-",
            "M-",
            "--",
            "x-y",
            "Q-a",
            "éa",
            "0x",
            "0xzz",
            "User",
            "User1001",
            "MouseDown1",
            "MouseDown1Nowhere",
            "F13",
            "\t",
            "C-\n",
            "None",
            "$(reboot)",
            "`id`",
        ] {
            let e = check_key_name(bad).unwrap_err();
            assert_eq!(
                e,
                "tmux knows no key by that name; write a key as tmux does: `N`, `M-n` \
                 (Alt+n), `C-a` (Ctrl+a), `F5`, `Space`, `C-Space`, or `none` for no key",
                "{bad:?}"
            );
        }
    }
}
