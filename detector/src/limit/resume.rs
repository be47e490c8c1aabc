//! What goes into a pane to go on after its usage limit, and only while
//! the pane still shows the limit: the last look before a resume.

use crate::manifest::Manifest;
use crate::rules::{self, ScreenView};
use crate::state::Reason;

/// What a resume sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// The text, pasted, then Enter: the agent's input box is live under
    /// its limit line.
    Text(String),
    /// Keys (tmux key names): the limit screen is a dialog whose own
    /// answer goes on (Gemini CLI's "Keep trying").
    Keys(Vec<String>),
}

/// The screen no longer shows the agent's limit: what it shows instead,
/// as `tend explain` names it (a rule id), or `None` when no rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAtLimit {
    /// The rule that wins on the screen now.
    pub showing: Option<String>,
}

impl std::fmt::Display for NotAtLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.showing {
            Some(rule) => write!(
                f,
                "no longer shows its usage limit (the screen reads {rule})"
            ),
            None => f.write_str("no longer shows its usage limit (no rule reads the screen)"),
        }
    }
}

/// Checks that `manifest`'s limit rule wins on `view` (a capture taken
/// just now) and says what resumes the agent: the rule's `go_on` keys, or
/// `text`. An unverified manifest's limit rule counts too: the user asked
/// for the resume, and the check is that this rule still wins.
pub fn resume(view: &ScreenView, manifest: &Manifest, text: &str) -> Result<Resume, NotAtLimit> {
    let evidence = rules::evaluate(view, manifest);
    let limit = evidence
        .as_ref()
        .filter(|e| e.reason == Some(Reason::Limit) || e.declared_reason == Some(Reason::Limit));
    let Some(e) = limit else {
        return Err(NotAtLimit {
            showing: evidence.map(|e| e.rule),
        });
    };
    let keys = manifest
        .rules
        .iter()
        .find(|r| r.id == e.rule)
        .and_then(|r| r.go_on_keys.clone());
    Ok(match keys {
        Some(keys) => Resume::Keys(keys),
        None => Resume::Text(text.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest::parse(
            "t.toml",
            r#"
id = "t"
name = "T"
verified = true
[[rule]]
id = "limit"
state = "waiting"
reason = "limit"
priority = 60
region = "bottom_nonempty:4"
cite = "test"
match = { contains = "hit your limit" }
reset = { regex = '(?m)resets (.+)$' }
[[rule]]
id = "dialog-limit"
state = "waiting"
reason = "limit"
priority = 70
region = "bottom_nonempty:4"
cite = "test"
match = { contains = "Keep trying" }
go_on = { keys = ["Enter"] }
[[rule]]
id = "box"
state = "ready"
region = "bottom_nonempty:2"
cite = "test"
match = { line_regex = "^>" }
"#,
        )
        .unwrap()
    }

    #[test]
    fn the_text_or_the_dialogs_keys_and_only_at_the_limit() {
        let m = manifest();
        let at_limit = ScreenView::from_text("You've hit your limit · resets 3pm\n> \n");
        assert_eq!(
            resume(&at_limit, &m, "continue"),
            Ok(Resume::Text("continue".into()))
        );
        let e = rules::evaluate(&at_limit, &m).unwrap();
        assert_eq!(e.reset.as_deref(), Some("3pm"));
        let dialog = ScreenView::from_text("Usage limit reached\n● 1. Keep trying\n  2. Stop\n");
        assert_eq!(
            resume(&dialog, &m, "continue"),
            Ok(Resume::Keys(vec!["Enter".into()]))
        );
        let moved_on = ScreenView::from_text("Sure, here is the poem.\n> \n");
        let refused = resume(&moved_on, &m, "continue").unwrap_err();
        assert_eq!(refused.showing.as_deref(), Some("t/box"));
        assert_eq!(
            refused.to_string(),
            "no longer shows its usage limit (the screen reads t/box)"
        );
        let blank = resume(&ScreenView::from_text("\n"), &m, "go").unwrap_err();
        assert_eq!(
            blank.to_string(),
            "no longer shows its usage limit (no rule reads the screen)"
        );
    }

    #[test]
    fn reset_and_resume_belong_to_limit_rules() {
        let bad = |rule: &str| {
            Manifest::parse(
                "d.toml",
                &format!("id = \"d\"\nname = \"D\"\n[[rule]]\nid = \"r\"\nregion = \"visible\"\ncite = \"x\"\nmatch = {{ contains = \"x\" }}\n{rule}"),
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            bad("state = \"waiting\"\nreason = \"error\"\nreset = { regex = '(x)' }\n"),
            "d.toml: rule `r`: `reset` and `go_on` go with reason `limit` only"
        );
        assert_eq!(
            bad("state = \"waiting\"\nreason = \"limit\"\nreset = { regex = 'resets .+' }\n"),
            "d.toml: rule `r`: reset: `resets .+` needs a capture group around the words that say when, e.g. `resets (.+)$`"
        );
        assert_eq!(
            bad("state = \"waiting\"\nreason = \"limit\"\ngo_on = { keys = [\"keep trying\"] }\n"),
            "d.toml: rule `r`: go_on.keys: `keep trying` is not a tmux key name (like Enter, Escape, y, 1, C-c)"
        );
        assert_eq!(
            bad("state = \"waiting\"\nreason = \"limited\"\n"),
            "d.toml: rule `r`: unknown reason `limited` (expected approval, question, error, prompt or limit)"
        );
    }
}
