//! Keys from the terminal, for tend's own screens (the fleet view, the
//! picker's one-line questions): bytes in, key events out.
//!
//! Why not crossterm's reader: it takes what it does not know for keys. A
//! terminal's answers to queries arrive on the same input as the keys —
//! and tmux 3.3a passes the answers a client's terminal gives late (its
//! version, `ESC P >|tmux 3.3a ESC \`, and `ESC [?1;2c`) to a popup that
//! has just opened, as if typed. crossterm reads `ESC P` as Alt-P and the
//! rest as letters: in the fleet view `t` opened the prompt and the
//! answers were typed into it. Here the bytes go through a terminal
//! parser (`vte`, the one vt100 uses), so every escape sequence is one
//! unit: the keys tend knows become keys, anything else — answers, unknown
//! keys — is dropped whole and never becomes text.

use std::io::Read;
use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use vte::{Params, Parser, Perform};

/// A key, or the start or end of a paste (`ESC [200~`, `ESC [201~`):
/// inside a paste, a line break is text, not Enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typed {
    /// A key.
    Key(KeyEvent),
    /// A paste begins.
    PasteStart,
    /// A paste ends.
    PasteEnd,
}

/// Turns the terminal's bytes into keys, whatever reads they arrive in.
pub struct Decoder {
    parser: Parser,
    out: Keys,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            parser: Parser::new(),
            out: Keys::default(),
        }
    }
}

impl Decoder {
    /// The keys in one read. A read of a lone ESC is the Esc key (a
    /// sequence arrives in one read; the parser would wait for the rest).
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Typed> {
        if bytes == [0x1b] {
            return vec![key(KeyCode::Esc)];
        }
        self.parser.advance(&mut self.out, bytes);
        std::mem::take(&mut self.out.seen)
    }
}

/// Waits up to `timeout` for the terminal on standard input, and decodes
/// what it sent (nothing when it sent nothing in time).
pub fn read(decoder: &mut Decoder, timeout: Duration) -> std::io::Result<Vec<Typed>> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    let ms = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::from(ms)) {
        Ok(0) => return Ok(Vec::new()),
        Ok(_) => {}
        Err(nix::errno::Errno::EINTR) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    }
    let mut buf = [0u8; 4096];
    let n = stdin.lock().read(&mut buf)?;
    if n == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the terminal closed",
        ));
    }
    Ok(decoder.feed(&buf[..n]))
}

fn key(code: KeyCode) -> Typed {
    Typed::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(c: char) -> Typed {
    Typed::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

#[derive(Default)]
struct Keys {
    seen: Vec<Typed>,
    /// Just after `ESC O`: the next character names the key (an arrow in
    /// application mode, F1-F4).
    shifted: bool,
}

impl Perform for Keys {
    fn print(&mut self, c: char) {
        if std::mem::take(&mut self.shifted) {
            let code = match c {
                'A' => KeyCode::Up,
                'B' => KeyCode::Down,
                'C' => KeyCode::Right,
                'D' => KeyCode::Left,
                'H' => KeyCode::Home,
                'F' => KeyCode::End,
                _ => return,
            };
            self.seen.push(key(code));
            return;
        }
        match c {
            '\u{7f}' => self.seen.push(key(KeyCode::Backspace)),
            c if c.is_control() => {}
            c => self.seen.push(key(KeyCode::Char(c))),
        }
    }

    fn execute(&mut self, byte: u8) {
        let typed = match byte {
            b'\r' | b'\n' => key(KeyCode::Enter),
            b'\t' => key(KeyCode::Tab),
            0x08 => key(KeyCode::Backspace),
            0x01..=0x1a => ctrl(char::from(b'a' + byte - 1)),
            _ => return,
        };
        self.seen.push(typed);
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _: bool, byte: u8) {
        self.shifted = intermediates.is_empty() && byte == b'O';
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _: bool, action: char) {
        // `ESC [ ? … c`, `ESC [ > … c` and the like are answers, not keys.
        if !intermediates.is_empty() {
            return;
        }
        let first = params.iter().next().and_then(|p| p.first().copied());
        let code = match (action, first) {
            ('A', _) => KeyCode::Up,
            ('B', _) => KeyCode::Down,
            ('C', _) => KeyCode::Right,
            ('D', _) => KeyCode::Left,
            ('H', _) => KeyCode::Home,
            ('F', _) => KeyCode::End,
            ('Z', _) => KeyCode::BackTab,
            ('~', Some(1 | 7)) => KeyCode::Home,
            ('~', Some(4 | 8)) => KeyCode::End,
            ('~', Some(3)) => KeyCode::Delete,
            ('~', Some(5)) => KeyCode::PageUp,
            ('~', Some(6)) => KeyCode::PageDown,
            ('~', Some(200)) => return self.seen.push(Typed::PasteStart),
            ('~', Some(201)) => return self.seen.push(Typed::PasteEnd),
            _ => return,
        };
        self.seen.push(key(code));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(chunks: &[&[u8]]) -> Vec<Typed> {
        let mut d = Decoder::default();
        chunks.iter().flat_map(|c| d.feed(c)).collect()
    }

    fn chars(s: &str) -> Vec<Typed> {
        s.chars().map(|c| key(KeyCode::Char(c))).collect()
    }

    #[test]
    fn the_terminals_answers_are_never_keys() {
        // tmux 3.3a's version and device attributes, handed to a popup
        // as if typed (whole, or cut anywhere).
        let answers =
            b"\x1bP>|tmux 3.3a\x1b\\\x1b[?1;2c\x1b[>0;10;1c\x1b]11;rgb:0000/0000/0000\x07";
        assert_eq!(codes(&[answers]), vec![]);
        for cut in 1..answers.len() {
            let (a, b) = answers.split_at(cut);
            if a == [0x1b] {
                continue; // a lone ESC in its own read is the Esc key
            }
            assert_eq!(codes(&[a, b]), vec![], "cut at {cut}");
        }
        assert_eq!(codes(&[b"\x1bP>|tmux 3.3a\x1b\\t"]), chars("t"));
    }

    #[test]
    fn keys_the_views_use() {
        assert_eq!(
            codes(&[b"\x1b[A\x1b[B\x1bOA\x1b[5~\x1b[6~\x1b[H\x1b[4~\r\x7f\t"]),
            vec![
                key(KeyCode::Up),
                key(KeyCode::Down),
                key(KeyCode::Up),
                key(KeyCode::PageUp),
                key(KeyCode::PageDown),
                key(KeyCode::Home),
                key(KeyCode::End),
                key(KeyCode::Enter),
                key(KeyCode::Backspace),
                key(KeyCode::Tab),
            ]
        );
        assert_eq!(
            codes(&[b"\x03\x15\x17"]),
            vec![ctrl('c'), ctrl('u'), ctrl('w')]
        );
        assert_eq!(codes(&[b"\x1b"]), vec![key(KeyCode::Esc)]);
        assert_eq!(codes(&["aé%2".as_bytes()]), chars("aé%2"));
        assert_eq!(
            codes(&[b"\x1b[200~x\ry\x1b[201~"]),
            [
                vec![Typed::PasteStart],
                chars("x"),
                vec![key(KeyCode::Enter)],
                chars("y"),
                vec![Typed::PasteEnd]
            ]
            .concat()
        );
    }
}
