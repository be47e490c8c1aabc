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
//! [`LineEditor`] is the pure part: the terminal's keys in
//! ([`super::keyboard`], where escape sequences — arrows, and the
//! terminal's own answers that tmux 3.3a passes into a new popup — are
//! dropped whole and never become text), the line and its outcome out. A
//! paste arrives as text, its line breaks as spaces.

use std::io::Write;

use ratatui::crossterm::event::{KeyCode, KeyModifiers};

use super::keyboard::{Decoder, Typed};

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
#[derive(Default)]
pub struct LineEditor {
    decoder: Decoder,
    text: String,
    pasting: bool,
}

impl LineEditor {
    /// The text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes one read's bytes; the outcome once the line is done.
    pub fn feed(&mut self, bytes: &[u8]) -> Option<Outcome> {
        let typed = self.decoder.feed(bytes);
        self.take(typed)
    }

    /// Takes decoded keys; the outcome once the line is done.
    pub fn take(&mut self, typed: Vec<Typed>) -> Option<Outcome> {
        for t in typed {
            let k = match t {
                Typed::PasteStart => {
                    self.pasting = true;
                    continue;
                }
                Typed::PasteEnd => {
                    self.pasting = false;
                    continue;
                }
                Typed::Key(k) => k,
            };
            let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
            match k.code {
                KeyCode::Enter | KeyCode::Tab if self.pasting => self.push(' '),
                KeyCode::Tab => self.push(' '),
                KeyCode::Char(c) if !ctrl => self.push(c),
                KeyCode::Backspace => {
                    self.text.pop();
                }
                KeyCode::Char('u') => self.text.clear(),
                KeyCode::Char('w') => {
                    let kept = self.text.trim_end().len();
                    self.text.truncate(kept);
                    let cut = self.text.rfind(' ').map_or(0, |i| i + 1);
                    self.text.truncate(cut);
                }
                KeyCode::Enter if self.text.trim().is_empty() => return Some(Outcome::Cancelled),
                KeyCode::Enter => return Some(Outcome::Answered(self.text.clone())),
                KeyCode::Esc | KeyCode::Char('c' | 'd' | 'g') => return Some(Outcome::Cancelled),
                _ => {}
            }
        }
        None
    }

    fn push(&mut self, c: char) {
        if self.text.chars().count() < MAX_CHARS {
            self.text.push(c);
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
    let outcome = loop {
        let typed = match super::keyboard::read(
            &mut editor.decoder,
            std::time::Duration::from_secs(3600),
        ) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break Outcome::Cancelled,
            Err(e) => return Err(e),
        };
        if let Some(o) = editor.take(typed) {
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
    let _ = std::io::Read::read(&mut std::io::stdin(), &mut buf)?;
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
