//! Acting on a user's client: jumping to a pane, messages, menus.
//!
//! These are what a key press leads to. A key binding made with
//! [`action_command`](crate::keys::action_command) passes the client that
//! pressed the key (`#{client_name}`); pass it here so the right terminal
//! moves, whichever client was active last.

use crate::error::{Result, TmuxError};
use crate::escape::{format_escape, format_escape_hash, shell_join, tmux_quote};
use crate::server::Server;
use tend_protocol::ids::PaneId;

/// One entry of a [`Server::display_menu`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MenuItem {
    /// A selectable entry.
    Entry {
        /// The text shown. Plain text: it is escaped, so names in it are
        /// never interpreted, and shortened to 72 characters (tmux shows no
        /// menu wider than the client).
        label: String,
        /// A one-key shortcut (`a`, `1`), or empty for none.
        key: String,
        /// The tmux command string run when chosen (build it with
        /// [`Commands`](crate::command::Commands) or
        /// [`run_shell_command`](crate::escape::run_shell_command)). tmux
        /// expands formats in a menu's commands when it opens the menu;
        /// [`Server::display_menu`] escapes that expansion, so the command
        /// runs exactly as written here.
        command: String,
    },
    /// A greyed-out line (a heading or an explanation).
    Disabled(String),
    /// A separator line.
    Separator,
}

impl Server {
    /// Moves `client` (or the most recently active client, when `None`) to
    /// `pane`: switches to the pane's session, selects its window and makes
    /// it the active pane. Works across sessions.
    pub fn switch_to(&self, client: Option<&str>, pane: PaneId) -> Result<()> {
        let target = pane.to_string();
        let mut switch = vec!["switch-client".to_string()];
        if let Some(c) = client {
            switch.push("-c".into());
            switch.push(c.to_string());
        }
        switch.extend(["-t".to_string(), target.clone()]);
        self.run_many(&[
            switch,
            vec!["select-window".into(), "-t".into(), target.clone()],
            vec!["select-pane".into(), "-t".into(), target],
        ])?;
        Ok(())
    }

    /// Shows `text` in `client`'s status line for `duration_ms`
    /// milliseconds (tmux's `display-time` when `None`). The text is shown
    /// literally: `#` sequences in it are escaped.
    pub fn display_message(
        &self,
        client: Option<&str>,
        text: &str,
        duration_ms: Option<u32>,
    ) -> Result<()> {
        let mut cmd = vec!["display-message".to_string()];
        if let Some(c) = client.filter(|_| self.capabilities().message_to_client) {
            cmd.extend(["-c".to_string(), c.to_string()]);
        }
        if let Some(d) = duration_ms {
            cmd.extend(["-d".to_string(), d.to_string()]);
        }
        cmd.push("--".into());
        cmd.push(format_escape(&single_line(text)));
        self.run(cmd)?;
        Ok(())
    }

    /// Opens a menu on `client`, centred, titled `title` (plain text).
    ///
    /// tmux's client for `display-menu` waits until the user closes the
    /// menu; this returns as soon as the menu is up (or tmux refused it),
    /// and the chosen entry's command runs inside tmux. A menu wider or
    /// taller than the client is not shown (tmux says nothing).
    pub fn display_menu(&self, client: &str, title: &str, items: &[MenuItem]) -> Result<()> {
        if items.is_empty() {
            return Err(TmuxError::Invalid {
                detail: "a menu needs at least one entry".into(),
            });
        }
        let mut cmd = vec![
            "display-menu".to_string(),
            "-c".into(),
            client.to_string(),
            "-T".into(),
            label(title),
            "-x".into(),
            "C".into(),
            "-y".into(),
            "C".into(),
            "--".into(),
        ];
        for item in items {
            match item {
                MenuItem::Entry {
                    label: text,
                    key,
                    command,
                } => {
                    cmd.push(label(text));
                    cmd.push(key.clone());
                    cmd.push(format_escape_hash(command));
                }
                MenuItem::Disabled(text) => {
                    cmd.push(format!("-{}", label(text)));
                    cmd.push(String::new());
                    cmd.push(String::new());
                }
                MenuItem::Separator => cmd.push(String::new()),
            }
        }
        self.run_detached(&cmd, std::time::Duration::from_millis(300))
    }
}

impl Server {
    /// Opens a popup on `client` running `argv` (each word passed to the
    /// shell as one word, whatever it holds: [`shell_join`]), closed when
    /// the program ends (`-E`), `width` and `height` as tmux takes them
    /// (`90%`), titled `title` (plain text, escaped) where the server
    /// takes a title (3.3).
    ///
    /// Like [`Server::display_menu`], this returns once the popup is up
    /// (or tmux refused it: a server without `display-popup`, a client too
    /// small).
    pub fn display_popup(
        &self,
        client: &str,
        argv: &[&str],
        width: &str,
        height: &str,
        title: &str,
    ) -> Result<()> {
        let mut cmd = vec![
            "display-popup".to_string(),
            "-E".into(),
            "-c".into(),
            client.to_string(),
            "-w".into(),
            width.to_string(),
            "-h".into(),
            height.to_string(),
        ];
        if self.server_version().is_none_or(|v| v.at_least(3, 3)) {
            cmd.extend(["-T".to_string(), label(title)]);
        }
        // The shell command is not expanded as a format (3.2a to 3.7c):
        // quoting for the shell is all it needs.
        cmd.push(shell_join(argv));
        self.run_detached(&cmd, std::time::Duration::from_millis(300))
    }
}

/// Longest menu label, in characters: tmux does not show a menu wider than
/// the client, and says nothing.
const MAX_LABEL: usize = 72;

/// A menu label or title: one line, at most [`MAX_LABEL`] characters,
/// formats escaped, and not starting with `-` (which would grey the entry
/// out).
fn label(text: &str) -> String {
    let mut line = single_line(text);
    if line.chars().count() > MAX_LABEL {
        line = line.chars().take(MAX_LABEL - 1).collect();
        line.push('…');
    }
    let escaped = format_escape(&line);
    if escaped.starts_with('-') {
        format!(" {escaped}")
    } else {
        escaped
    }
}

/// Control characters (newlines included) become spaces: a status line
/// message or a menu entry is one line.
fn single_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A tmux command string that moves the client running it to `pane`, for
/// menu entries.
pub fn switch_command(pane: PaneId) -> String {
    let t = tmux_quote(&pane.to_string());
    format!("switch-client -t {t} ; select-window -t {t} ; select-pane -t {t}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(label("-x"), " -x");
        assert_eq!(label("a\nb#{x}"), "a b##{x#}");
        let long = label(&"#".repeat(100));
        assert_eq!(long, format!("{}…", "##".repeat(71)));
        assert_eq!(
            switch_command(PaneId(3)),
            "switch-client -t '%3' ; select-window -t '%3' ; select-pane -t '%3'"
        );
    }
}
