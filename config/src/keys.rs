//! Which keys tend binds, where each setting comes from, and whether they
//! are bound: shared by the daemon (which binds them), `tend start` (which
//! refuses a key tmux does not know before starting) and `tend doctor`
//! (which reports a key that is configured but not bound). The commands
//! tend binds are the daemon's (`tend_daemon::worker`); this reads them
//! back ([`action_of`]).
//!
//! A tmux option (`@tend-key-*` in tmux.conf) wins over `[keys]` in
//! config.toml, which wins over the defaults.

use crate::error::ErrorKind;
use tend_tmux::keys::{
    check_key_name, check_table_name, disables_key, BindReport, KeyAction, ListedBinding,
    KEY_NAME_HELP, KEY_TABLE_OPTION,
};
use tend_tmux::{Scope, Server, TmuxError};

use crate::config::KeysConfig;
use crate::error::{excerpt, quoted, CliError};

/// One action's key, as tend binds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedKey {
    /// The action.
    pub action: KeyAction,
    /// The key table.
    pub table: String,
    /// Where the table was set: `tmux option @tend-key-table` or
    /// `[keys] table in /path/config.toml`.
    pub table_from: String,
    /// The key; `None` when the user asked for none.
    pub key: Option<String>,
    /// Where the key was set.
    pub key_from: String,
}

fn config_setting(field: &str) -> String {
    match crate::config::path() {
        Some(p) => format!("[keys] {field} in {}", p.display()),
        None => format!("[keys] {field} in config.toml"),
    }
}

/// Each action's table and key: tmux options win, then config.toml.
pub fn plan(server: &Server, cfg: &KeysConfig) -> Result<Vec<PlannedKey>, TmuxError> {
    let user_set = |name: &str| -> Result<bool, TmuxError> {
        Ok(server.show_option(Scope::Global, name)?.is_some())
    };
    let table_set = user_set(KEY_TABLE_OPTION)?;
    let mut out = Vec::new();
    for (action, table, key) in server.resolve_keys()? {
        let (table, table_from) = if table_set {
            (table, format!("tmux option {KEY_TABLE_OPTION}"))
        } else {
            (cfg.table.clone(), config_setting("table"))
        };
        let (key, key_from) = if user_set(action.option)? {
            (key, format!("tmux option {}", action.option))
        } else {
            let k = cfg.key_for(action.id);
            (
                (!disables_key(k)).then(|| k.to_owned()),
                config_setting(KeysConfig::field_for(action.id)),
            )
        };
        out.push(PlannedKey {
            action,
            table,
            table_from,
            key,
            key_from,
        });
    }
    Ok(out)
}

/// Which of tend's actions a binding tend made runs, from its command (as
/// the daemon writes it and as `list-keys` prints it back).
pub fn action_of(command: &str) -> Option<&'static str> {
    if command.contains("?@tend_next_session,") {
        Some("next-waiting-session")
    } else if command.contains("?@tend_next_working,") {
        Some("next-working")
    } else if command.contains("?@tend_next,") {
        Some("next-waiting")
    } else if command.contains(" picker ") {
        Some("picker")
    } else {
        None
    }
}

/// `prefix N`, or `"my keys" N` for a table name with a space.
fn place(table: &str, key: &str) -> String {
    if table
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        format!("{table} {key}")
    } else {
        format!("{} {key}", quoted(table))
    }
}

/// Why a key cannot be bound as set, without binding anything: a table or
/// key name that tend or this tmux refuses. `None`: nothing against it.
pub fn refusal(server: &Server, p: &PlannedKey) -> Result<Option<String>, TmuxError> {
    if let Err(why) = check_table_name(&p.table) {
        return Ok(Some(format!(
            "the key table {} ({}): {why}",
            quoted(&p.table),
            p.table_from
        )));
    }
    let Some(key) = &p.key else {
        return Ok(None);
    };
    let words = match check_key_name(key) {
        Err(_) => format!("invalid key: {}", excerpt(key, crate::error::EXCERPT_CHARS)),
        Ok(()) => match server.key_refused(key)? {
            Some(words) => words,
            None => return Ok(None),
        },
    };
    Ok(Some(format!(
        "{} = {} is not a key tmux knows (tmux: {}); {KEY_NAME_HELP}",
        p.key_from,
        quoted(key),
        excerpt(&words, 100)
    )))
}

/// `tend start`: a key set to a name tmux does not know is an error
/// before the daemon starts, as a bad config.toml is (it would be left
/// unbound without a word).
pub fn check_for_start(server: &Server, cfg: &KeysConfig) -> Result<(), CliError> {
    let plan = plan(server, cfg).map_err(|e| {
        CliError::new(
            ErrorKind::Tmux,
            format!("cannot read tend's key options: {e}"),
        )
    })?;
    let mut problems = Vec::new();
    for p in &plan {
        if let Some(why) = refusal(server, p)
            .map_err(|e| CliError::new(ErrorKind::Tmux, format!("cannot check key names: {e}")))?
        {
            problems.push(why);
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(CliError::new(
        ErrorKind::BadKey,
        format!("{}; then run `tend start` again", problems.join("; ")),
    ))
}

/// The daemon's log lines for what binding left undone: keys kept for the
/// user's own binding and keys tmux or tend refused.
pub fn report_lines(report: &BindReport) -> Vec<String> {
    let mut out = Vec::new();
    for k in &report.kept {
        out.push(format!(
            "key {} is bound to `{}`, which is not tend's: left alone, so that action has no key \
             (choose another in config.toml [keys] or with set -g @tend-key-…)",
            place(&k.table, &k.key),
            excerpt(&k.command, 80)
        ));
    }
    for (key, why) in &report.invalid {
        out.push(format!(
            "key {} not bound: {}",
            quoted(key),
            excerpt(why, crate::error::EXCERPT_CHARS)
        ));
    }
    out
}

/// `tend doctor`'s keys check: each action's key bound by tend, or why
/// not. `running`: whether the daemon (which binds them) runs.
pub fn doctor_check(
    server: &Server,
    cfg: &KeysConfig,
    running: bool,
    log: Option<&std::path::Path>,
) -> (bool, String) {
    let plan = match plan(server, cfg) {
        Ok(p) => p,
        Err(e) => return (false, format!("cannot read tend's key options: {e}")),
    };
    let listed = match server.list_bindings(None) {
        Ok(l) => l,
        Err(e) => return (false, format!("cannot list key bindings: {e}")),
    };
    let mut bound = Vec::new();
    let mut problems = Vec::new();
    for p in &plan {
        let Some(key) = &p.key else {
            continue;
        };
        let what = p.action.note.trim_start_matches("tend: ");
        if let Some(b) = listed
            .iter()
            .find(|b| b.is_ours() && action_of(&b.command) == Some(p.action.id))
        {
            bound.push(place(&b.table, &b.key));
            continue;
        }
        let why = match refusal(server, p) {
            Ok(Some(why)) => why,
            Err(e) => format!("cannot check it: {e}"),
            Ok(None) => {
                let theirs: Option<&ListedBinding> = listed
                    .iter()
                    .find(|b| !b.is_ours() && b.table == p.table && b.key == *key);
                match theirs {
                    Some(b) => format!(
                        "{} is bound to `{}`, which is not tend's (left alone): choose another \
                         key ({}), or none",
                        place(&b.table, &b.key),
                        excerpt(&b.command, 80),
                        p.key_from
                    ),
                    // The daemon binds them: not running, nothing to say
                    // beyond the daemon check.
                    None if !running => continue,
                    None => format!(
                        "{} ({}) is not bound; the daemon's log{} says why",
                        place(&p.table, key),
                        p.key_from,
                        log.map_or(String::new(), |l| format!(" {}", l.display()))
                    ),
                }
            }
        };
        problems.push(format!("\"{what}\": {why}"));
    }
    if !problems.is_empty() {
        return (false, problems.join("; "));
    }
    if bound.is_empty() {
        let detail = if running || plan.iter().all(|p| p.key.is_none()) {
            "no tend key bindings (every key set to none)".to_owned()
        } else {
            "no tend key bindings (tend is not running)".to_owned()
        };
        return (true, detail);
    }
    (
        true,
        format!("{} tend key bindings: {}", bound.len(), bound.join(", ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_quote_odd_tables() {
        assert_eq!(place("prefix", "N"), "prefix N");
        assert_eq!(place("my \"t\"", "N"), "\"my \\\"t\\\"\" N");
    }

    #[test]
    fn report_lines_name_the_key_and_the_fix() {
        let report = BindReport {
            bound: vec![],
            kept: vec![ListedBinding {
                table: "prefix".into(),
                key: "W".into(),
                repeat: false,
                command: "display-message mine".into(),
            }],
            invalid: vec![("#(x)".into(), "unknown key: #(x)".into())],
        };
        assert_eq!(
            report_lines(&report),
            [
                "key prefix W is bound to `display-message mine`, which is not tend's: left \
                 alone, so that action has no key (choose another in config.toml [keys] or with \
                 set -g @tend-key-…)",
                "key \"#(x)\" not bound: unknown key: #(x)"
            ]
        );
    }
}
