//! What a chunk of the user's keystrokes is: typing, a submit, a cancel, or
//! only mouse and focus reports (which make a TUI repaint but are not the
//! user doing anything).

/// What kind of keystrokes an input chunk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Mouse reports, focus in/out: never the user typing.
    Passive,
    /// Printable text or editing keys.
    Typing,
    /// Enter: submits.
    Submit,
    /// Escape alone / Ctrl-C: cancels.
    Cancel,
}

/// Classifies a chunk of input sent to the pane.
pub fn classify_input(bytes: &[u8]) -> InputKind {
    // Focus reports: CSI I / CSI O. Mouse: CSI < … M/m (SGR), CSI M xyz (X10).
    let passive = |b: &[u8]| -> bool {
        let mut i = 0;
        let mut any = false;
        while i < b.len() {
            if b[i..].starts_with(b"\x1b[I") || b[i..].starts_with(b"\x1b[O") {
                i += 3;
            } else if b[i..].starts_with(b"\x1b[<") {
                match b[i..].iter().position(|&c| c == b'M' || c == b'm') {
                    Some(end) => i += end + 1,
                    None => return false,
                }
            } else if b[i..].starts_with(b"\x1b[M") && b.len() >= i + 6 {
                i += 6;
            } else {
                return false;
            }
            any = true;
        }
        any
    };
    if bytes.is_empty() || passive(bytes) {
        return InputKind::Passive;
    }
    if bytes.contains(&b'\r') || bytes.contains(&b'\n') {
        return InputKind::Submit;
    }
    if bytes == b"\x1b" || bytes.contains(&0x03) {
        return InputKind::Cancel;
    }
    InputKind::Typing
}
