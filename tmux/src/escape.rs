//! Quoting for every language tmux parses, so that no name is ever
//! interpreted.
//!
//! A string tend hands to tmux can pass through up to four interpreters, and
//! each has its own escape:
//!
//! | layer | who reads it | special characters | function |
//! |---|---|---|---|
//! | argument vector | tmux's command line (`tmux cmd a b`) | a trailing `;` ends the command | [`argv_arg`] (applied by [`Server::run`](crate::Server::run)) |
//! | command string | tmux's command parser (hook and binding commands, `if-shell` branches, config files) | quotes, `;`, `$VAR`, `~`, `#` comments, `{ }`, `\` | [`tmux_quote`] |
//! | format | format expansion (`display-message`, `display-menu` labels, `status-right`, `run-shell` and `pipe-pane` commands) | `#` (`#{…}`, `#(…)`, `#[…]`, `#S`, …), and `,` `}` inside conditionals | [`format_escape`] |
//! | shell | `/bin/sh -c` (`run-shell`, `pipe-pane`) | everything | [`shell_quote`], [`shell_join`] |
//!
//! Layers nest from the inside out. A session name shown in a
//! `display-message` inside a key binding is first [`format_escape`]d (so that
//! `#{pane_id}` in the name prints as text) and then [`tmux_quote`]d (so that
//! `'` and `;` in it do not end the argument or the command). A path in a
//! `run-shell` command is [`shell_quote`]d, then [`format_escape`]d
//! (`run-shell` expands formats before the shell sees the text), then
//! [`tmux_quote`]d. [`run_shell_command`] does the whole stack for the common
//! case.
//!
//! Never put a name into a shell command, even quoted, through a *format*:
//! `#{session_name}` expands after quoting was applied. Pass ids
//! (`#{pane_id}`, `#{session_id}`), which are made of `%`, `@`, `$` and digits
//! and are safe inside single quotes.

use std::borrow::Cow;

/// Makes `s` safe as one element of tmux's argument vector.
///
/// tmux treats an argument that *ends* in `;` as a command separator and
/// strips the `;` (so `tmux rename-window 'x;'` renames the window to `x`).
/// An argument ending in `\;` has the backslash removed instead. This
/// function inserts a backslash before a trailing `;`, which tmux removes
/// again, so the argument arrives unchanged.
///
/// ```
/// use tend_tmux::escape::argv_arg;
/// assert_eq!(argv_arg("plain"), "plain");
/// assert_eq!(argv_arg("x;"), "x\\;");
/// assert_eq!(argv_arg("x\\;"), "x\\\\;");
/// ```
pub fn argv_arg(s: &str) -> Cow<'_, str> {
    match s.strip_suffix(';') {
        Some(head) => Cow::Owned(format!("{head}\\;")),
        None => Cow::Borrowed(s),
    }
}

/// Quotes `s` as one token for tmux's command parser.
///
/// The result is single-quoted, so `$`, `~`, `#`, `;`, `"`, `{` and `\` are
/// literal. A single quote becomes `'\''` (close, escaped quote, reopen) and
/// a newline is written as `\n` outside the quotes, so the token never spans
/// lines.
///
/// ```
/// use tend_tmux::escape::tmux_quote;
/// assert_eq!(tmux_quote("it's"), r"'it'\''s'");
/// assert_eq!(tmux_quote("a;$b"), "'a;$b'");
/// ```
pub fn tmux_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("'\\''"),
            '\n' => out.push_str("'\\n'"),
            '\r' => out.push_str("'\\r'"),
            _ => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Escapes `s` so that format expansion prints it unchanged.
///
/// `#` becomes `##`, and `,` and `}` become `#,` and `#}` so that the text is
/// also safe inside a conditional such as `#{?cond,TEXT,}`. Apply it to any
/// name, title or message placed in a format: `display-message`, menu
/// labels, `status-right`, and the command of `run-shell` and `pipe-pane`.
///
/// ```
/// use tend_tmux::escape::format_escape;
/// assert_eq!(format_escape("#{pane_id}"), "##{pane_id#}");
/// assert_eq!(format_escape("a,b"), "a#,b");
/// ```
pub fn format_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '#' => out.push_str("##"),
            ',' => out.push_str("#,"),
            '}' => out.push_str("#}"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes `s` for the `#` layer only: `#` becomes `##`.
///
/// Use this (rather than [`format_escape`]) for text that is format-expanded
/// at the top level and must keep its `,` and `}` as typed, such as a shell
/// command given to `run-shell` or `pipe-pane`. At the top level of a format
/// `#,` and `#}` would also work, but the shell command stays readable in
/// `show-hooks` and `list-keys` this way.
pub fn format_escape_hash(s: &str) -> String {
    s.replace('#', "##")
}

/// Quotes `s` as one word for a POSIX shell (`/bin/sh -c`).
///
/// Words made only of characters that no shell treats specially are left
/// bare; anything else is single-quoted with `'` written as `'\''`.
///
/// ```
/// use tend_tmux::escape::shell_quote;
/// assert_eq!(shell_quote("/usr/bin/tend"), "/usr/bin/tend");
/// assert_eq!(shell_quote("$(touch x)"), "'$(touch x)'");
/// assert_eq!(shell_quote("it's"), r"'it'\''s'");
/// assert_eq!(shell_quote(""), "''");
/// ```
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:+,@%".contains(&b));
    if plain {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Joins words into one shell command line, quoting each with
/// [`shell_quote`].
pub fn shell_join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One word of a [`run_shell_command`]: literal text, or a tmux format that
/// tmux expands when the command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// Passed to the program exactly as written.
    Literal(String),
    /// A format such as `#{pane_id}`, expanded by tmux when the command runs,
    /// then single-quoted for the shell. Only use formats that expand to ids,
    /// numbers or client names (never to session/window names or titles,
    /// which could contain `'`).
    Format(String),
}

impl Word {
    /// A literal word.
    pub fn lit(s: impl Into<String>) -> Word {
        Word::Literal(s.into())
    }

    /// A format word.
    pub fn fmt(s: impl Into<String>) -> Word {
        Word::Format(s.into())
    }
}

/// The shell command line `run-shell` is to run, as its argument: literal
/// words shell-quoted and protected from `run-shell`'s format expansion,
/// [`Word::Format`] words left for it to expand, inside single quotes.
/// Give it to `run-shell` as one argument (through
/// [`Command`](crate::command::Command), or [`run_shell_command`]).
pub fn shell_words(words: &[Word]) -> String {
    let mut shell = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            shell.push(' ');
        }
        match w {
            Word::Literal(s) => shell.push_str(&format_escape_hash(&shell_quote(s))),
            Word::Format(f) => {
                shell.push('\'');
                shell.push_str(f);
                shell.push('\'');
            }
        }
    }
    shell
}

/// Builds a tmux command string `run-shell -b '<program and words>'` that
/// runs a program in the background without blocking tmux.
///
/// Literal words are shell-quoted and then protected from format expansion;
/// [`Word::Format`] words are expanded by tmux (so `#{pane_id}` arrives as
/// `%3`) inside single quotes. A trailing shell comment `# <marker>` makes
/// the command recognisable in `show-hooks` and `list-keys` output, which is
/// how tend later removes exactly the hooks and bindings it installed (see
/// [`MARKER`](crate::MARKER)).
///
/// The result is a command string for tmux's parser: give it to `set-hook`,
/// `bind-key` or `if-shell` as one argument.
pub fn run_shell_command(words: &[Word], marker: &str) -> String {
    let mut shell = shell_words(words);
    if !marker.is_empty() {
        shell.push_str(" ## ");
        shell.push_str(&format_escape_hash(marker));
    }
    format!("run-shell -b {}", tmux_quote(&shell))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names that must never be interpreted by any layer.
    const HOSTILE: &[&str] = &[
        "it's \"x\" #{pane_id} ; $(touch /tmp/pwned)",
        "'",
        "\"",
        "#{session_name}",
        "#(touch /tmp/pwned)",
        "#[fg=red]",
        ";",
        "x;",
        "x\\;",
        "\\",
        "$HOME",
        "~root",
        "{",
        "a\nb",
        "`id`",
        "%if 1",
    ];

    /// A small model of tmux's single-quote handling: the inverse of
    /// [`tmux_quote`], written from tmux's parser rules (single quotes are
    /// literal; outside them `\'` is a quote and `\n` a newline).
    fn tmux_unquote(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        let mut quoted = false;
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '\'') => quoted = false,
                (true, c) => out.push(c),
                (false, '\'') => quoted = true,
                (false, '\\') => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('r') => out.push('\r'),
                    Some(c) => out.push(c),
                    None => panic!("dangling backslash"),
                },
                (false, c) => panic!("unquoted {c:?} in {s:?}"),
            }
        }
        assert!(!quoted, "unterminated quote in {s:?}");
        out
    }

    #[test]
    fn tmux_quote_round_trips() {
        for name in HOSTILE {
            let q = tmux_quote(name);
            assert!(!q.contains('\n'), "{q:?} spans lines");
            assert_eq!(&tmux_unquote(&q), name);
        }
    }

    #[test]
    fn format_escape_has_no_live_sequences() {
        for name in HOSTILE {
            let e = format_escape(name);
            // Every '#' is followed by one of the escape characters.
            let b = e.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'#' {
                    assert!(matches!(b.get(i + 1), Some(b'#' | b',' | b'}')), "{e:?}");
                    i += 2;
                } else {
                    assert!(b[i] != b',' && b[i] != b'}', "{e:?}");
                    i += 1;
                }
            }
        }
    }

    #[test]
    fn shell_quote_is_single_word() {
        for name in HOSTILE {
            let q = shell_quote(name);
            assert!(q.starts_with('\'') && q.ends_with('\''), "{q:?}");
        }
        assert_eq!(
            shell_join(&["tend", "tap", "--pane", "%3"]),
            "tend tap --pane %3"
        );
    }

    #[test]
    fn argv_trailing_semicolons() {
        assert_eq!(argv_arg(";"), "\\;");
        assert_eq!(argv_arg("a;b"), "a;b");
        assert_eq!(argv_arg(""), "");
    }

    #[test]
    fn run_shell_command_shape() {
        let cmd = run_shell_command(
            &[
                Word::lit("/opt/my #1/tend"),
                Word::lit("hook"),
                Word::fmt("#{pane_id}"),
            ],
            "tend-managed",
        );
        assert_eq!(
            cmd,
            "run-shell -b ''\\''/opt/my ##1/tend'\\'' hook '\\''#{pane_id}'\\'' ## tend-managed'"
        );
        assert_eq!(
            tmux_unquote(cmd.strip_prefix("run-shell -b ").unwrap()),
            "'/opt/my ##1/tend' hook '#{pane_id}' ## tend-managed"
        );
    }
}
