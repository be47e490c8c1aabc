//! Out-of-band signals carried in a pane's output: window titles, desktop
//! notifications (OSC 9, 777, 99), progress (OSC 9;4) and shell-integration
//! prompt marks (OSC 133).
//!
//! The parsing of escape sequences themselves is the emulator's (so a
//! sequence split across reads is assembled exactly once); this module only
//! gives meaning to the parameters of an OSC the emulator did not handle.

use serde::Serialize;

/// OSC 9;4 progress states (ConEmu / Windows Terminal convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Progress {
    /// `9;4;0`: no progress shown.
    Hidden,
    /// `9;4;1;N`: N percent.
    Normal(u8),
    /// `9;4;2;N`: error.
    Error(u8),
    /// `9;4;3`: indeterminate (busy).
    Indeterminate,
    /// `9;4;4;N`: paused / warning.
    Paused(u8),
}

impl Progress {
    /// A short word for rules and explain output.
    pub fn word(&self) -> &'static str {
        match self {
            Progress::Hidden => "hidden",
            Progress::Normal(_) => "normal",
            Progress::Error(_) => "error",
            Progress::Indeterminate => "indeterminate",
            Progress::Paused(_) => "paused",
        }
    }
}

/// OSC 133 (FinalTerm) semantic prompt marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptMark {
    /// `A`: a prompt starts.
    PromptStart,
    /// `B`: the prompt ends, user input starts.
    CommandStart,
    /// `C`: the command runs, its output starts.
    OutputStart,
    /// `D[;code]`: the command finished.
    CommandFinished(Option<i32>),
}

/// A signal seen in the output stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Signal {
    /// OSC 0 / OSC 2 window title.
    Title(String),
    /// OSC 9 / 777 / 99 desktop notification.
    Notification {
        /// Title, where the protocol carries one.
        title: Option<String>,
        /// Body text.
        body: String,
    },
    /// OSC 9;4 progress.
    Progress(Progress),
    /// OSC 133 prompt mark.
    Prompt(PromptMark),
    /// BEL.
    Bell,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn number(b: Option<&&[u8]>) -> u8 {
    b.and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| s.parse::<u32>().ok())
        .map(|n| n.min(100) as u8)
        .unwrap_or(0)
}

/// Interprets the `;`-separated parameters of an OSC the emulator left
/// unhandled. Unknown OSCs yield `None`.
pub fn parse_osc(params: &[&[u8]]) -> Option<Signal> {
    let (code, rest) = params.split_first()?;
    match *code {
        b"9" => {
            if rest.first() == Some(&&b"4"[..]) {
                let state = rest.get(1).copied().unwrap_or(b"0");
                let value = number(rest.get(2));
                let progress = match state {
                    b"0" => Progress::Hidden,
                    b"1" => Progress::Normal(value),
                    b"2" => Progress::Error(value),
                    b"3" => Progress::Indeterminate,
                    b"4" => Progress::Paused(value),
                    _ => return None,
                };
                return Some(Signal::Progress(progress));
            }
            // iTerm2-style `OSC 9 ; body`; the body may itself contain `;`.
            let body = rest.iter().map(|p| text(p)).collect::<Vec<_>>().join(";");
            Some(Signal::Notification { title: None, body })
        }
        b"777" => {
            // `OSC 777 ; notify ; title ; body`
            if rest.first() != Some(&&b"notify"[..]) {
                return None;
            }
            let title = rest.get(1).map(|t| text(t));
            let body = rest
                .get(2..)
                .unwrap_or_default()
                .iter()
                .map(|p| text(p))
                .collect::<Vec<_>>()
                .join(";");
            Some(Signal::Notification { title, body })
        }
        b"99" => {
            // kitty: `OSC 99 ; metadata ; payload`. Only plain payloads are
            // interpreted; `p=title` chunks become the title.
            let meta = rest.first().map(|m| text(m)).unwrap_or_default();
            // `p=?` asks the terminal which notifications it supports
            // (OpenTUI's `i=opentui-notifications:p=?`, printed at start
            // by OpenCode, Kilo Code and Cline CLI): a query, no
            // notification.
            if meta.split(':').any(|kv| kv == "p=?") {
                return None;
            }
            let payload = rest
                .get(1..)
                .unwrap_or_default()
                .iter()
                .map(|p| text(p))
                .collect::<Vec<_>>()
                .join(";");
            if meta.split(':').any(|kv| kv == "p=title") {
                Some(Signal::Notification {
                    title: Some(payload),
                    body: String::new(),
                })
            } else {
                Some(Signal::Notification {
                    title: None,
                    body: payload,
                })
            }
        }
        b"133" => {
            let mark = rest.first()?;
            let mark = match mark.first()? {
                b'A' => PromptMark::PromptStart,
                b'B' => PromptMark::CommandStart,
                b'C' => PromptMark::OutputStart,
                b'D' => PromptMark::CommandFinished(
                    rest.get(1)
                        .and_then(|c| std::str::from_utf8(c).ok())
                        .and_then(|c| c.parse().ok()),
                ),
                _ => return None,
            };
            Some(Signal::Prompt(mark))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::Screen;

    fn signals(bytes: &[u8]) -> Vec<Signal> {
        let mut s = Screen::new(5, 40);
        s.process(bytes);
        s.drain_signals()
    }

    #[test]
    fn titles_osc0_and_osc2() {
        assert_eq!(
            signals(b"\x1b]0;\xe2\x9c\xb3 Claude Code\x07\x1b]2;other\x1b\\"),
            vec![
                Signal::Title("✳ Claude Code".into()),
                Signal::Title("other".into())
            ]
        );
    }

    #[test]
    fn notifications() {
        assert_eq!(
            signals(b"\x1b]9;Build done; all green\x07"),
            vec![Signal::Notification {
                title: None,
                body: "Build done; all green".into()
            }]
        );
        assert_eq!(
            signals(b"\x1b]777;notify;Claude;Needs you\x07"),
            vec![Signal::Notification {
                title: Some("Claude".into()),
                body: "Needs you".into()
            }]
        );
        assert_eq!(
            signals(b"\x1b]99;i=1:d=0;Hello\x1b\\"),
            vec![Signal::Notification {
                title: None,
                body: "Hello".into()
            }]
        );
    }

    #[test]
    fn a_kitty_capability_query_is_no_notification() {
        // What OpenCode 1.18.33, Kilo Code 7.7.7 and Cline CLI 3.0.65
        // print as they start (every recording of the three holds it).
        assert_eq!(
            signals(b"\x1b]99;i=opentui-notifications:p=?;\x1b\\"),
            vec![]
        );
        assert_eq!(signals(b"\x1b]99;p=?;\x07"), vec![]);
    }

    #[test]
    fn progress() {
        assert_eq!(
            signals(b"\x1b]9;4;1;42\x07\x1b]9;4;3\x07\x1b]9;4;0\x07\x1b]9;4;2;999\x07"),
            vec![
                Signal::Progress(Progress::Normal(42)),
                Signal::Progress(Progress::Indeterminate),
                Signal::Progress(Progress::Hidden),
                Signal::Progress(Progress::Error(100)),
            ]
        );
    }

    #[test]
    fn prompt_marks() {
        assert_eq!(
            signals(b"\x1b]133;A\x07$ \x1b]133;B\x07ls\x1b]133;C\x07\x1b]133;D;2\x07"),
            vec![
                Signal::Prompt(PromptMark::PromptStart),
                Signal::Prompt(PromptMark::CommandStart),
                Signal::Prompt(PromptMark::OutputStart),
                Signal::Prompt(PromptMark::CommandFinished(Some(2))),
            ]
        );
    }

    #[test]
    fn split_sequences_are_assembled_once() {
        let mut s = Screen::new(5, 40);
        s.process(b"\x1b]0;he");
        s.process(b"llo\x07\x1b]9;4");
        s.process(b";3\x07");
        assert_eq!(
            s.drain_signals(),
            vec![
                Signal::Title("hello".into()),
                Signal::Progress(Progress::Indeterminate)
            ]
        );
    }
}
