//! A one-line question in a tmux popup: the park note and the stop reason
//! typed at the picker's agent menu.
//!
//! Why not tmux's `command-prompt`: it hands the typed text to tmux as part
//! of a command template, and tmux 3.3a puts the text into that template a
//! second time, unescaped (its prompt callback appends the answer to the
//! template's arguments twice, so a typed `%2` is replaced by the raw text
//! and `%2" ; run-shell "…" ; #` runs a command). No quoting survives a
//! second substitution, so the text must never reach a template at all: the
//! popup runs `tend key … ask-note` directly (`display-popup` takes an
//! argument vector, 3.2a to 3.7c, with no shell and no format in between),
//! tend reads the keys itself and sends the text to the daemon as data.
//!
//! [`LineEditor`] is the pure part: bytes from the terminal in, the line
//! and its outcome out. Escape sequences are dropped whole — arrows, and the
//! terminal's own answers to queries that tmux passes into a new popup on
//! some versions (`ESC P>|tmux 3.3a ESC \`, `ESC [?1;2c`) — so they never
//! become text; a paste arrives as text, its line breaks as spaces.

use std::io::{Read, Write};

use vte::{Params, Parser, Perform};

/// Longest answer, in characters: a note or a reason is a sentence, and
/// the daemon bounds what it keeps.
pub const MAX_CHARS: usize = 500;

/// How a question ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Enter: the text as typed (never empty).
    Answered(String),
    /// Esc, Ctrl-C, or Enter on an empty line.
    Cancelled,
}

/// The line being typed, fed with what the terminal sends.
pub struct LineEditor {
    parser: Parser,
    keys: Keys,
    text: String,
}

impl Default for LineEditor {
    fn default() -> Self {
        LineEditor {
            parser: Parser::new(),
            keys: Keys::default(),
            text: String::new(),
        }
    }
}

impl LineEditor {
    /// The text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes one read's bytes; the outcome once the line is done. A read
    /// of a lone ESC is the Esc key (a sequence arrives in one read).
    pub fn feed(&mut self, bytes: &[u8]) -> Option<Outcome> {
        if bytes == [0x1b] {
            return Some(Outcome::Cancelled);
        }
        self.parser.advance(&mut self.keys, bytes);
        for key in std::mem::take(&mut self.keys.seen) {
            match key {
                Key::Char(c) => {
                    if self.text.chars().count() < MAX_CHARS {
                        self.text.push(c);
                    }
                }
                Key::Backspace => {
                    self.text.pop();
                }
                Key::ClearLine => self.text.clear(),
                Key::DeleteWord => {
                    let kept = self.text.trim_end().len();
                    self.text.truncate(kept);
                    let cut = self.text.rfind(' ').map_or(0, |i| i + 1);
                    self.text.truncate(cut);
                }
                Key::Enter if self.text.trim().is_empty() => return Some(Outcome::Cancelled),
                Key::Enter => return Some(Outcome::Answered(self.text.clone())),
                Key::Cancel => return Some(Outcome::Cancelled),
            }
        }
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Char(char),
    Backspace,
    ClearLine,
    DeleteWord,
    Enter,
    Cancel,
}

/// What the parser saw, as keys.
#[derive(Default)]
struct Keys {
    seen: Vec<Key>,
    /// Inside a bracketed paste (`ESC [200~` … `ESC [201~`).
    pasting: bool,
    /// Just after `ESC O`: the next character belongs to the sequence.
    shifted: bool,
}

impl Perform for Keys {
    fn print(&mut self, c: char) {
        if std::mem::take(&mut self.shifted) {
            // The key of an `ESC O x` sequence (an arrow in application
            // mode, F1-F4): not text.
            return;
        }
        match c {
            '\u{7f}' => self.seen.push(Key::Backspace),
            c if c.is_control() => {}
            c => self.seen.push(Key::Char(c)),
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _: bool, byte: u8) {
        self.shifted = intermediates.is_empty() && byte == b'O';
    }

    fn execute(&mut self, byte: u8) {
        let key = match byte {
            b'\r' | b'\n' if self.pasting => Key::Char(' '),
            b'\t' => Key::Char(' '),
            b'\r' | b'\n' => Key::Enter,
            0x7f | 0x08 => Key::Backspace,
            0x15 => Key::ClearLine,
            0x17 => Key::DeleteWord,
            0x03 | 0x04 | 0x07 => Key::Cancel,
            _ => return,
        };
        self.seen.push(key);
    }

    fn csi_dispatch(&mut self, params: &Params, _: &[u8], _: bool, action: char) {
        // Only the paste's brackets matter; every other sequence (arrows,
        // function keys, answers to queries) is dropped whole.
        if action == '~' {
            match params.iter().next().and_then(|p| p.first()) {
                Some(200) => self.pasting = true,
                Some(201) => self.pasting = false,
                _ => {}
            }
        }
    }
}

/// Asks `label` in the terminal this process runs in (the popup), and
/// returns the answer. The terminal is put back however it ends.
pub fn ask(label: &str) -> std::io::Result<Outcome> {
    use ratatui::crossterm::terminal;
    terminal::enable_raw_mode()?;
    let restore = Restore;
    let mut out = std::io::stdout();
    // Bracketed paste on, so that a pasted line break is not an Enter.
    out.write_all(b"\x1b[?2004h")?;
    let mut editor = LineEditor::default();
    draw(&mut out, label, editor.text())?;
    let mut stdin = std::io::stdin();
    let mut buf = [0u8; 4096];
    let outcome = loop {
        let n = stdin.read(&mut buf)?;
        if n == 0 {
            break Outcome::Cancelled;
        }
        if let Some(o) = editor.feed(&buf[..n]) {
            break o;
        }
        draw(&mut out, label, editor.text())?;
    };
    out.write_all(b"\x1b[?2004l")?;
    drop(restore);
    Ok(outcome)
}

/// Shows a sentence under the question and waits for a key, so that a
/// refusal is read before the popup closes.
pub fn tell(sentence: &str) -> std::io::Result<()> {
    use ratatui::crossterm::terminal;
    let mut out = std::io::stdout();
    write!(out, "\r\n{}\r\n(any key closes this)", sanitize(sentence))?;
    out.flush()?;
    terminal::enable_raw_mode()?;
    let restore = Restore;
    let mut buf = [0u8; 64];
    let _ = std::io::stdin().read(&mut buf)?;
    drop(restore);
    Ok(())
}

/// Puts the terminal back to how it was (cooked mode).
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = ratatui::crossterm::terminal::disable_raw_mode();
    }
}

/// The question and the end of the text that fits, on one line.
fn draw(out: &mut impl Write, label: &str, text: &str) -> std::io::Result<()> {
    let width = ratatui::crossterm::terminal::size().map_or(60, |(w, _)| usize::from(w));
    let room = width.saturating_sub(label.chars().count() + 2).max(1);
    let shown: String = {
        let chars: Vec<char> = text.chars().collect();
        let skip = chars.len().saturating_sub(room - 1);
        chars[skip..].iter().collect()
    };
    write!(out, "\r\x1b[2K{label} {}", sanitize(&shown))?;
    out.flush()
}

/// A line without control characters, for the terminal.
fn sanitize(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(chunks: &[&[u8]]) -> (Option<Outcome>, String) {
        let mut e = LineEditor::default();
        for c in chunks {
            if let Some(o) = e.feed(c) {
                return (Some(o), e.text().to_owned());
            }
        }
        (None, e.text().to_owned())
    }

    #[test]
    fn what_is_typed_arrives_exactly_percent_signs_and_quotes_included() {
        let text = "a %2 b %% %1 %%% \"; run-shell \"touch x\" ; # $(id) 'q' ~ \\ é";
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(b'\r');
        assert_eq!(typed(&[&bytes]).0, Some(Outcome::Answered(text.to_owned())));
    }

    #[test]
    fn the_terminals_answers_and_arrow_keys_never_become_text() {
        let (o, text) = typed(&[
            b"\x1bP>|tmux 3.3a\x1b\\",
            b"\x1b[?1;2c",
            b"ok",
            b"\x1b[D\x1b[A\x1bOA",
            b"!\r",
        ]);
        assert_eq!(o, Some(Outcome::Answered("ok!".into())));
        assert_eq!(text, "ok!");
    }

    #[test]
    fn a_paste_keeps_its_line_breaks_as_spaces_and_does_not_submit() {
        let (o, text) = typed(&[b"\x1b[200~one\rtwo\nthree\x1b[201~"]);
        assert_eq!(o, None);
        assert_eq!(text, "one two three");
    }

    #[test]
    fn editing_keys_edit_and_esc_or_ctrl_c_cancel() {
        assert_eq!(typed(&[b"abc\x7f\x7fz"]).1, "az");
        assert_eq!(typed(&[b"one two  \x17"]).1, "one ");
        assert_eq!(typed(&[b"one two\x15x"]).1, "x");
        assert_eq!(typed(&[b"abc", b"\x1b"]).0, Some(Outcome::Cancelled));
        assert_eq!(typed(&[b"abc\x03"]).0, Some(Outcome::Cancelled));
        assert_eq!(typed(&[b"   \r"]).0, Some(Outcome::Cancelled));
    }

    #[test]
    fn the_answer_is_bounded() {
        let long = "y".repeat(MAX_CHARS + 50);
        assert_eq!(typed(&[long.as_bytes()]).1.chars().count(), MAX_CHARS);
    }
}
