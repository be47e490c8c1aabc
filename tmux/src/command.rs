//! tmux command strings built from separate arguments, for each place tmux
//! parses one.
//!
//! Where tmux takes an argument vector ([`Server::run`](crate::Server::run))
//! tend passes one; but key bindings, hooks, menu entries and
//! `command-prompt` templates are *command strings* that tmux parses later,
//! sometimes after one more expansion of its own. A [`Command`] keeps its
//! arguments apart until the last moment and then writes them for exactly
//! one of those places:
//!
//! | method | the string is given to | what tmux does to it before parsing |
//! |---|---|---|
//! | [`Commands::command_string`] | `bind-key`, `set-hook`, `if-shell`, a `display-menu` entry ([`MenuItem`](crate::MenuItem) escapes the menu's expansion) | nothing |
//! | [`Commands::prompt_template`] | `command-prompt`'s template | puts the typed text in for `%%%` (and for `%1`, `%%`) |
//!
//! Every argument is single-quoted ([`tmux_quote`]), so `;`, `$`, `~`,
//! `#`, quotes, braces and newlines in a name are text. For a template,
//! each `%` of an argument is written `%''` — two quoted pieces that tmux's
//! parser joins again — so that no argument can hold the `%1` or `%%` that
//! `command-prompt` would replace (a pane id such as `%12` did: its `%1`
//! became the typed note). The typed text itself goes in as `"%%%"`, which
//! tmux fills with `"`, `\`, `$`, `;` and `~` escaped for double quotes.

use crate::escape::tmux_quote;

/// One piece of a [`Command`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// An argument, exactly as the command must receive it.
    Arg(String),
    /// The text typed at a `command-prompt` (only in a template).
    PromptInput,
}

/// One tmux command: its name and its arguments, kept apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    parts: Vec<Part>,
}

impl Command {
    /// A command named `name` (`set-option`, `run-shell`, …).
    pub fn new(name: &str) -> Command {
        Command {
            parts: vec![Part::Arg(name.to_owned())],
        }
    }

    /// Adds an argument, received by the command exactly as given.
    pub fn arg(mut self, arg: impl Into<String>) -> Command {
        self.parts.push(Part::Arg(arg.into()));
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.parts
            .extend(args.into_iter().map(|a| Part::Arg(a.into())));
        self
    }

    /// Adds the text the user types at a `command-prompt` as one argument
    /// (only [`Commands::prompt_template`] can write this).
    pub fn prompt_input(mut self) -> Command {
        self.parts.push(Part::PromptInput);
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
    /// binding's, a hook's or an `if-shell` branch's).
    ///
    /// # Panics
    ///
    /// When a command holds [`Command::prompt_input`]: only a template has
    /// typed text to put in (a programming error, not an input error).
    pub fn command_string(&self) -> String {
        self.write(|part| match part {
            Part::Arg(a) => tmux_quote(a),
            Part::PromptInput => panic!("typed text outside a command-prompt template"),
        })
    }

    /// A `command-prompt` template (see the module docs). The typed text
    /// must appear exactly once.
    ///
    /// # Panics
    ///
    /// When no command or more than one holds [`Command::prompt_input`]
    /// (tmux replaces only the first `%%`: a second would be left as `%%`).
    pub fn prompt_template(&self) -> String {
        let inputs = self
            .0
            .iter()
            .flat_map(|c| &c.parts)
            .filter(|p| **p == Part::PromptInput)
            .count();
        assert_eq!(inputs, 1, "a template puts the typed text in once");
        self.write(|part| match part {
            Part::Arg(a) => tmux_quote(a).replace('%', "%''"),
            Part::PromptInput => "\"%%%\"".to_owned(),
        })
    }

    fn write(&self, mut part: impl FnMut(&Part) -> String) -> String {
        self.0
            .iter()
            .map(|c| c.parts.iter().map(&mut part).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join(" ; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tmux's `cmd_template_replace` (cmd.c, the same in 3.2a and 3.7c),
    /// written again to check templates without a server: `%1` or the
    /// first `%%` is replaced by the typed text, `%%%` with `"\$;~`
    /// escaped by a backslash.
    fn template_replace(template: &str, typed: &str) -> String {
        let t: Vec<char> = template.chars().collect();
        let mut out = String::new();
        let mut replaced = false;
        let mut i = 0;
        while i < t.len() {
            let c = t[i];
            i += 1;
            if c == '%' {
                let next = t.get(i).copied();
                let numbered = next == Some('1');
                if numbered || (next == Some('%') && !replaced) {
                    if !numbered {
                        replaced = true;
                    }
                    i += 1;
                    let quoted = t.get(i) == Some(&'%');
                    if quoted {
                        i += 1;
                    }
                    for ch in typed.chars() {
                        if quoted && "\"\\$;~".contains(ch) {
                            out.push('\\');
                        }
                        out.push(ch);
                    }
                    continue;
                }
            }
            out.push(c);
        }
        out
    }

    #[test]
    fn command_strings_quote_every_argument() {
        let c = Commands::from(Command::new("set-option").args(["-p", "-t", "%3", "@x"]))
            .then(Command::new("display-message").arg("it's #{pane_id};"));
        assert_eq!(
            c.command_string(),
            r"'set-option' '-p' '-t' '%3' '@x' ; 'display-message' 'it'\''s #{pane_id};'"
        );
    }

    #[test]
    fn a_template_keeps_pane_ids_and_takes_the_typed_text_once() {
        let c = Commands::from(
            Command::new("set-option")
                .args(["-p", "-t", "%12", "@tend-input-note"])
                .prompt_input(),
        )
        .then(Command::new("run-shell").args(["-b", "tend key pane=%12 %%"]));
        let t = c.prompt_template();
        assert!(!t.contains("%1") && t.matches("%%").count() == 1, "{t}");
        for typed in ["plain note", "it's \"x\" $HOME; ~ \\", "%1 %% %%%"] {
            let filled = template_replace(&t, typed);
            // The pane id survives; the typed text arrives once, in
            // double quotes, with what would end them escaped.
            assert!(filled.contains("'%''12'"), "{filled}");
            let escaped: String = typed
                .chars()
                .flat_map(|c| {
                    let esc = "\"\\$;~".contains(c).then_some('\\');
                    esc.into_iter().chain([c])
                })
                .collect();
            assert_eq!(
                filled.matches(&format!("\"{escaped}\"")).count(),
                1,
                "{filled}"
            );
        }
        assert_eq!(
            template_replace(&t, "a;b"),
            "'set-option' '-p' '-t' '%''12' '@tend-input-note' \"a\\;b\" ; \
             'run-shell' '-b' 'tend key pane=%''12 %''%'''"
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
        /// Whatever the arguments and the typed text, tmux receives the
        /// arguments as given and the typed text as one argument.
        #[test]
        fn templates_arrive_as_built(
            args in proptest::collection::vec(".*", 0..4),
            more in proptest::collection::vec("[%1;'\"#$~\\ a-z]*", 0..4),
            typed in "[^\\x00\n]*",
        ) {
            let cmds = Commands::from(Command::new("set-option").args(args.clone()).prompt_input())
                .then(Command::new("run-shell").args(more.clone()));
            let filled = template_replace(&cmds.prompt_template(), &typed);
            let mut first = vec!["set-option".to_owned()];
            first.extend(args.clone());
            first.push(typed.clone());
            let mut second = vec!["run-shell".to_owned()];
            second.extend(more.clone());
            proptest::prop_assert_eq!(tmux_parse(&filled), vec![first.clone(), second.clone()]);
            let plain = Commands::from(Command::new("set-option").args(args))
                .then(Command::new("run-shell").args(more));
            first.pop();
            proptest::prop_assert_eq!(tmux_parse(&plain.command_string()), vec![first, second]);
        }
    }

    #[test]
    #[should_panic(expected = "once")]
    fn a_template_without_input_is_a_bug() {
        let _ = Commands::from(Command::new("list-keys")).prompt_template();
    }
}
