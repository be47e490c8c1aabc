//! Pane, window and session ids: tmux's `%N`, `@N`, `$N` (zellij's
//! terminal panes are numbered too, and share [`PaneId`]).
//!
//! tend names every target by id, never by name: ids are assigned by tmux,
//! never reused while the server lives, survive renames and moves (a pane
//! keeps its `%N` when it moves to another window or session), and contain
//! nothing a parser could misread. Session and window names are chosen by
//! users and programs and may contain anything.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Text that is not an id of the kind asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdError {
    /// What is wrong, and what an id looks like.
    pub detail: String,
}

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for IdError {}

macro_rules! tmux_id {
    ($(#[$doc:meta])* $name:ident, $sigil:literal, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The sigil tmux writes before the number.
            pub const SIGIL: char = $sigil;

            /// The number after the sigil.
            pub fn number(self) -> u32 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}", $sigil, self.0)
            }
        }

        impl FromStr for $name {
            type Err = IdError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let digits = s.strip_prefix($sigil).ok_or_else(|| IdError {
                    detail: format!(
                        "`{s}` is not a tmux {} id: it should look like `{}3`",
                        $what, $sigil
                    ),
                })?;
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(IdError {
                        detail: format!(
                            "`{s}` is not a tmux {} id: it should look like `{}3`",
                            $what, $sigil
                        ),
                    });
                }
                digits.parse::<u32>().map($name).map_err(|_| IdError {
                    detail: format!("`{s}` is not a tmux {} id: the number is too large", $what),
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = String::deserialize(deserializer)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

tmux_id!(
    /// A pane id such as `%3` (`#{pane_id}`).
    PaneId,
    '%',
    "pane"
);
tmux_id!(
    /// A window id such as `@2` (`#{window_id}`).
    WindowId,
    '@',
    "window"
);
tmux_id!(
    /// A session id such as `$1` (`#{session_id}`).
    SessionId,
    '$',
    "session"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let p: PaneId = "%12".parse().unwrap();
        assert_eq!(p, PaneId(12));
        assert_eq!(p.to_string(), "%12");
        assert_eq!("@0".parse::<WindowId>().unwrap().to_string(), "@0");
        assert_eq!("$7".parse::<SessionId>().unwrap(), SessionId(7));
    }

    #[test]
    fn rejects_other_text() {
        for bad in ["", "%", "12", "@1", "%1x", "%-1", "% 1", "%99999999999"] {
            assert!(bad.parse::<PaneId>().is_err(), "{bad:?} parsed");
        }
        assert!("%1".parse::<SessionId>().is_err());
    }

    #[test]
    fn serde_as_strings() {
        let json = serde_json::to_string(&PaneId(4)).unwrap();
        assert_eq!(json, "\"%4\"");
        let back: PaneId = serde_json::from_str(&json).unwrap();
        assert_eq!(back, PaneId(4));
        assert!(serde_json::from_str::<PaneId>("\"@4\"").is_err());
    }
}
