//! A pane's state and band as tend lists them: an agent's, or
//! `unreachable` for a remote pane whose link is down (its last state is
//! old evidence and must not make a demand).

use crate::{Band, State};

/// A listed pane's state: its agent's [`State`], or `unreachable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PaneState {
    /// A remote pane whose link is down: nothing is known of it now.
    Unreachable,
    /// Its agent's state.
    #[serde(untagged)]
    Agent(State),
}

/// A listed pane's band: its agent's [`Band`], or `unreachable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PaneBand {
    /// A remote pane whose link is down: never a demand.
    Unreachable,
    /// Its agent's band.
    #[serde(untagged)]
    Agent(Band),
}

impl PaneState {
    /// The agent's state; `None` while unreachable.
    pub fn agent(self) -> Option<State> {
        match self {
            PaneState::Agent(s) => Some(s),
            PaneState::Unreachable => None,
        }
    }

    /// The word: the state's, or `unreachable`.
    pub fn as_str(&self) -> &'static str {
        match self {
            PaneState::Agent(s) => s.as_str(),
            PaneState::Unreachable => "unreachable",
        }
    }

    /// The value whose word is exactly `s`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "unreachable" => Some(PaneState::Unreachable),
            s => State::parse(s).map(PaneState::Agent),
        }
    }
}

impl PaneBand {
    /// The agent's band; `None` while unreachable.
    pub fn agent(self) -> Option<Band> {
        match self {
            PaneBand::Agent(b) => Some(b),
            PaneBand::Unreachable => None,
        }
    }

    /// The word: the band's, or `unreachable`.
    pub fn as_str(&self) -> &'static str {
        match self {
            PaneBand::Agent(b) => b.as_str(),
            PaneBand::Unreachable => "unreachable",
        }
    }

    /// The value whose word is exactly `s`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "unreachable" => Some(PaneBand::Unreachable),
            s => Band::parse(s).map(PaneBand::Agent),
        }
    }
}

impl From<State> for PaneState {
    fn from(s: State) -> Self {
        PaneState::Agent(s)
    }
}

impl From<Band> for PaneBand {
    fn from(b: Band) -> Self {
        PaneBand::Agent(b)
    }
}

impl PartialEq<State> for PaneState {
    fn eq(&self, other: &State) -> bool {
        *self == PaneState::Agent(*other)
    }
}

impl PartialEq<Band> for PaneBand {
    fn eq(&self, other: &Band) -> bool {
        *self == PaneBand::Agent(*other)
    }
}

impl std::fmt::Display for PaneState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::fmt::Display for PaneBand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_state_is_one_word_either_way() {
        for (v, word) in [
            (PaneState::Unreachable, "unreachable"),
            (PaneState::Agent(State::Waiting), "waiting"),
        ] {
            let json = serde_json::to_string(&v).expect("writes");
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<PaneState>(&json).expect("reads"), v);
            assert_eq!(v.to_string(), word);
            assert_eq!(PaneState::parse(word), Some(v));
        }
        assert_eq!(PaneBand::parse("unreachable"), Some(PaneBand::Unreachable));
        assert_eq!(PaneBand::parse("quiet"), Some(Band::Quiet.into()));
        assert_eq!(PaneState::parse("Waiting"), None);
        let b: PaneBand = serde_json::from_str("\"ready_for_review\"").expect("reads");
        assert_eq!(b, Band::ReadyForReview);
        assert_eq!(
            serde_json::to_string(&PaneBand::Unreachable).expect("writes"),
            "\"unreachable\""
        );
        assert!(serde_json::from_str::<PaneState>("\"asleep\"").is_err());
    }
}
