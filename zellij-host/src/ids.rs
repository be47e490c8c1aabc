//! Pane ids: zellij's `terminal_N` and `plugin_N`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::ZellijError;

/// A zellij pane id. Terminal and plugin panes are numbered separately, so
/// `terminal_1` and `plugin_1` are different panes.
///
/// Written `terminal_N` / `plugin_N` (the form zellij's CLI accepts and
/// prints); a bare number reads as a terminal pane, as zellij does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PaneId {
    /// A terminal pane (`terminal_N`).
    Terminal(u32),
    /// A plugin pane (`plugin_N`).
    Plugin(u32),
}

impl PaneId {
    /// The number, without saying which kind of pane.
    pub fn number(&self) -> u32 {
        match self {
            PaneId::Terminal(n) | PaneId::Plugin(n) => *n,
        }
    }

    /// True for terminal panes.
    pub fn is_terminal(&self) -> bool {
        matches!(self, PaneId::Terminal(_))
    }
}

impl fmt::Display for PaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaneId::Terminal(n) => write!(f, "terminal_{n}"),
            PaneId::Plugin(n) => write!(f, "plugin_{n}"),
        }
    }
}

impl FromStr for PaneId {
    type Err = ZellijError;

    fn from_str(s: &str) -> Result<PaneId, ZellijError> {
        let s = s.trim();
        let bad = || ZellijError::Invalid {
            detail: format!(
                "`{s}` is not a zellij pane id; write terminal_N, plugin_N or a number \
                 (`zellij action list-panes` shows them)"
            ),
        };
        let (kind, digits) = if let Some(d) = s.strip_prefix("terminal_") {
            ("t", d)
        } else if let Some(d) = s.strip_prefix("plugin_") {
            ("p", d)
        } else {
            ("t", s)
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let n: u32 = digits.parse().map_err(|_| bad())?;
        Ok(if kind == "p" {
            PaneId::Plugin(n)
        } else {
            PaneId::Terminal(n)
        })
    }
}

impl TryFrom<String> for PaneId {
    type Error = ZellijError;

    fn try_from(s: String) -> Result<PaneId, ZellijError> {
        s.parse()
    }
}

impl From<PaneId> for String {
    fn from(p: PaneId) -> String {
        p.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in ["terminal_0", "terminal_12", "plugin_3"] {
            let id: PaneId = s.parse().expect("parses");
            assert_eq!(id.to_string(), s);
        }
        assert_eq!("7".parse::<PaneId>().ok(), Some(PaneId::Terminal(7)));
        assert_eq!(PaneId::Plugin(4).number(), 4);
        assert!(PaneId::Terminal(4).is_terminal());
    }

    #[test]
    fn refuses_garbage_with_advice() {
        for s in [
            "",
            "terminal_",
            "plugin_x",
            "%3",
            "-1",
            "terminal_99999999999",
        ] {
            let err = s.parse::<PaneId>().expect_err(s);
            assert!(err.to_string().contains("list-panes"), "{err}");
        }
    }

    #[test]
    fn serde_uses_the_cli_form() {
        let json = serde_json::to_string(&PaneId::Plugin(2)).expect("serialises");
        assert_eq!(json, "\"plugin_2\"");
        let back: PaneId = serde_json::from_str("\"terminal_5\"").expect("deserialises");
        assert_eq!(back, PaneId::Terminal(5));
    }
}
