//! tmux command strings built from separate arguments.
//!
//! Where tmux takes an argument vector ([`Server::run`](crate::Server::run))
//! tend passes one; but key bindings, hooks and menu entries are *command
//! strings* that tmux parses later. A [`Command`] keeps its arguments apart
//! until the last moment and then writes them for that parser
//! ([`Commands::command_string`]: `bind-key`, `set-hook`, `if-shell`, a
//! `display-menu` entry — [`MenuItem`](crate::MenuItem) escapes the menu's
//! expansion). Every argument is single-quoted ([`tmux_quote`]), so `;`,
//! `$`, `~`, `#`, quotes, braces and newlines in a name are text.
//!
//! There is deliberately no way to build a `command-prompt` template: tmux
//! puts the typed text into a template as command text, and 3.3a does it
//! twice, the second time unescaped (a typed `%2` is replaced by the raw
//! text), so no quoting can make it safe. Text the user types is read by
//! tend itself, in a popup (`tend/src/cli/ask.rs`).

use crate::escape::tmux_quote;

/// One tmux command: its name and its arguments, kept apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    parts: Vec<String>,
}

impl Command {
    /// A command named `name` (`set-option`, `run-shell`, …).
    pub fn new(name: &str) -> Command {
        Command {
            parts: vec![name.to_owned()],
        }
    }

    /// Adds an argument, received by the command exactly as given.
    pub fn arg(mut self, arg: impl Into<String>) -> Command {
        self.parts.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.parts.extend(args.into_iter().map(Into::into));
        self
    }
}

/// Commands run one after another (`a ; b`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Commands(Vec<Command>);

impl From<Command> for Commands {
    fn from(c: Command) -> Commands {
        Commands(vec![c])
    }
}

impl Commands {
    /// No commands yet.
    pub fn new() -> Commands {
        Commands::default()
    }

    /// Adds a command after the others.
    pub fn then(mut self, c: Command) -> Commands {
        self.0.push(c);
        self
    }

    /// The command string tmux's parser reads as these commands (a
    /// binding's, a hook's, an `if-shell` branch's or a menu entry's).
    pub fn command_string(&self) -> String {
        self.0
            .iter()
            .map(|c| {
                c.parts
                    .iter()
                    .map(|a| tmux_quote(a))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join(" ; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_strings_quote_every_argument() {
        let c = Commands::from(Command::new("set-option").args(["-p", "-t", "%3", "@x"]))
            .then(Command::new("display-message").arg("it's #{pane_id};"));
        assert_eq!(
            c.command_string(),
            r"'set-option' '-p' '-t' '%3' '@x' ; 'display-message' 'it'\''s #{pane_id};'"
        );
    }

    /// tmux's parser for the strings tend writes (cmd-parse.y's
    /// `yylex_token`, for quotes and backslashes; `;` between commands):
    /// the commands and their arguments.
    fn tmux_parse(s: &str) -> Vec<Vec<String>> {
        #[derive(PartialEq)]
        enum Q {
            None,
            Single,
            Double,
        }
        let mut cmds = vec![Vec::new()];
        let mut word: Option<String> = None;
        let mut q = Q::None;
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            match (&q, c) {
                (Q::Single, '\'') | (Q::Double, '"') => q = Q::None,
                (Q::Single, c) => word.get_or_insert_with(String::new).push(c),
                (Q::None, '\'') => {
                    q = Q::Single;
                    word.get_or_insert_with(String::new);
                }
                (Q::None, '"') => {
                    q = Q::Double;
                    word.get_or_insert_with(String::new);
                }
                (_, '\\') => {
                    let e = match chars.next() {
                        Some('n') => '\n',
                        Some('r') => '\r',
                        Some(e) => e,
                        None => panic!("dangling backslash in {s:?}"),
                    };
                    word.get_or_insert_with(String::new).push(e);
                }
                (Q::Double, '$' | '~') => panic!("unescaped {c} in double quotes: {s:?}"),
                (Q::Double, c) => word.get_or_insert_with(String::new).push(c),
                (Q::None, ' ') => {
                    if let Some(w) = word.take() {
                        cmds.last_mut().expect("a command").push(w);
                    }
                }
                (Q::None, ';') => {
                    assert!(word.is_none(), "`;` inside a word: {s:?}");
                    cmds.push(Vec::new());
                }
                (Q::None, c) => panic!("unquoted {c:?} in {s:?}"),
            }
        }
        assert!(q == Q::None, "unterminated quote in {s:?}");
        if let Some(w) = word {
            cmds.last_mut().expect("a command").push(w);
        }
        cmds
    }

    proptest::proptest! {
        /// Whatever the arguments, tmux receives them as given.
        #[test]
        fn command_strings_arrive_as_built(
            args in proptest::collection::vec(".*", 0..4),
            more in proptest::collection::vec("[%1;'\"#$~\\ a-z]*", 0..4),
        ) {
            let mut first = vec!["set-option".to_owned()];
            first.extend(args.clone());
            let mut second = vec!["run-shell".to_owned()];
            second.extend(more.clone());
            let cmds = Commands::from(Command::new("set-option").args(args))
                .then(Command::new("run-shell").args(more));
            proptest::prop_assert_eq!(tmux_parse(&cmds.command_string()), vec![first, second]);
        }
    }
}
