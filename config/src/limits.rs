//! `[limits]` in `config.toml`: what tend types into an agent's pane when
//! its plan's usage limit resets. Off unless `resume` is set:
//!
//! ```toml
//! [limits]
//! resume = "continue"   # the text sent at the reset (absent or "": never on its own)
//! margin = "2s"         # how long after the reset it goes (default 2s)
//! ```
//!
//! The decision (when, whether) is `tend_attention::limit`'s; `tend
//! resume %3` does it by hand whatever this says.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tend_attention::limit::{ResumePolicy, DEFAULT_MARGIN};
use tend_detector::config::{dur, format_duration};

use crate::error::quoted;

/// `[limits]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// The text sent into a limited agent's pane at its reset, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// How long after the reset it is sent. Default 2 s
    /// (`tend_attention::limit::DEFAULT_MARGIN`).
    #[serde(with = "dur")]
    pub margin: Duration,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            resume: None,
            margin: DEFAULT_MARGIN,
        }
    }
}

/// Longest resume text: a word to go on, not a prompt file.
const MAX_TEXT: usize = 500;
/// Longest margin after a reset.
const MAX_MARGIN: Duration = Duration::from_secs(3600);

impl LimitsConfig {
    /// Checks values; names the key and the problem.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(text) = &self.resume {
            if text.chars().count() > MAX_TEXT {
                return Err(format!(
                    "resume: {} characters; a resume is a word to go on (at most {MAX_TEXT})",
                    text.chars().count()
                ));
            }
            if text.chars().any(char::is_control) {
                return Err(format!(
                    "resume = {}: a control character (a newline, a tab) in it would be typed \
                     too; write the text on one line (tend presses Enter after it)",
                    quoted(text)
                ));
            }
        }
        if self.margin > MAX_MARGIN {
            return Err(format!(
                "margin = {}: use at most {}",
                format_duration(self.margin),
                format_duration(MAX_MARGIN)
            ));
        }
        Ok(())
    }

    /// The policy for the core: `resume = ""` is off, as absent is.
    pub fn policy(&self) -> ResumePolicy {
        ResumePolicy {
            text: self
                .resume
                .as_ref()
                .filter(|t| !t.trim().is_empty())
                .cloned(),
            margin: self.margin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LimitsConfig, String> {
        crate::config::parse("config.toml", text)
            .map(|c| c.limits)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn resume_is_off_unless_set() {
        assert_eq!(parse("").unwrap().policy(), ResumePolicy::default());
        assert_eq!(
            parse("[limits]\nresume = \"\"\n").unwrap().policy().text,
            None
        );
        let on = parse("[limits]\nresume = \"continue\"\nmargin = \"5s\"\n").unwrap();
        assert_eq!(
            on.policy(),
            ResumePolicy {
                text: Some("continue".into()),
                margin: Duration::from_secs(5),
            }
        );
    }

    #[test]
    fn a_bad_value_names_its_key() {
        assert_eq!(
            parse("[limits]\nresume = \"go\\non\"\n").unwrap_err(),
            "config.toml: [limits] resume = \"go\\non\": a control character (a newline, a tab) \
             in it would be typed too; write the text on one line (tend presses Enter after it)"
        );
        assert_eq!(
            parse("[limits]\nmargin = \"2h\"\n").unwrap_err(),
            "config.toml: [limits] margin = 2h: use at most 1h"
        );
        assert!(parse("[limits]\nresumes = \"x\"\n")
            .unwrap_err()
            .contains("unknown field `resumes`"));
    }
}
