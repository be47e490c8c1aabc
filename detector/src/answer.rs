//! Answering an agent's approval dialog from outside its pane: which keys,
//! and only while the dialog is on the screen.
//!
//! Sans-IO: the caller captures the pane's screen right before sending,
//! asks [`answer`] whether that screen still shows a dialog the agent's
//! `[actions]` answer, and sends the keys it returns. Nothing here sends.

use std::fmt;

use crate::manifest::{Manifest, Region};
use crate::rules::{self, ScreenView};

/// Approve or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Say yes once (the dialog's first, one-time option).
    Approve,
    /// Say no.
    Deny,
}

impl Action {
    /// `approve` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Approve => "approve",
            Action::Deny => "deny",
        }
    }

    /// Parses `approve` or `deny`.
    pub fn parse(s: &str) -> Option<Action> {
        match s {
            "approve" => Some(Action::Approve),
            "deny" => Some(Action::Deny),
            _ => None,
        }
    }
}

/// A dialog on the screen, and the keys that give an answer to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The rule that recognised the dialog (`claude/approval`).
    pub rule: String,
    /// The dialog's own text: its rows, blank and border-only rows left out.
    pub dialog: Vec<String>,
    /// tmux key names to send, in order.
    pub keys: Vec<String>,
}

/// Why no keys may be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The agent's manifest has no `[actions]` table.
    NoActions {
        /// The agent.
        agent: String,
    },
    /// The screen does not show a dialog the actions answer now.
    NoDialog {
        /// The agent.
        agent: String,
        /// The rule that wins on the screen instead, if any.
        showing: Option<String>,
    },
    /// The dialog is there but the option to press is not on it.
    NoOption {
        /// The agent.
        agent: String,
        /// Approve or deny.
        action: Action,
    },
}

impl Refusal {
    /// A stable code for the protocol.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::NoActions { .. } => "no_actions",
            Refusal::NoDialog { .. } => "no_dialog",
            Refusal::NoOption { .. } => "no_option",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NoActions { agent } => write!(
                f,
                "tend does not know the keys of {agent}'s approval dialog (its manifest has no \
                 [actions] table); answer it in its pane"
            ),
            Refusal::NoDialog { agent, showing } => write!(
                f,
                "{agent} is not showing an approval dialog right now (the screen matches {}); \
                 nothing was sent",
                showing.as_deref().unwrap_or("no rule")
            ),
            Refusal::NoOption { agent, action } => write!(
                f,
                "{agent}'s dialog shows no option to {}; nothing was sent. Answer it in its pane",
                action.as_str()
            ),
        }
    }
}

impl std::error::Error for Refusal {}

/// The dialog's rows as shown to a user elsewhere: the rule's region
/// (with a few rows above a one-line prompt), without blank rows, lines of
/// box-drawing only, and box borders.
fn dialog_text(view: &ScreenView, manifest: &Manifest, region: Region) -> Vec<String> {
    let mut rows: Vec<&str> = Vec::new();
    if region == Region::CursorLine {
        rows.extend(view.region(manifest, Region::AboveCursor(4)));
    }
    rows.extend(view.region(manifest, region));
    let border = |c: char| "│┃║╭╮╰╯─━═╌┄▄▀▐▌".contains(c);
    rows.iter()
        .map(|r| r.trim_matches(|c: char| c.is_whitespace() || border(c)))
        .filter(|r| !r.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The keys that give `action` to the dialog on `view`, or why none may be
/// sent: the highest-priority matching rule must be one the manifest's
/// `[actions]` answer, and an `option` must be on the dialog.
pub fn answer(view: &ScreenView, manifest: &Manifest, action: Action) -> Result<Answer, Refusal> {
    let agent = manifest.short_name.clone();
    let Some(actions) = &manifest.actions else {
        return Err(Refusal::NoActions { agent });
    };
    let showing = rules::evaluate(view, manifest).map(|e| e.rule);
    let Some(rule) = showing
        .as_ref()
        .filter(|r| actions.answers.contains(r))
        .and_then(|r| manifest.rules.iter().find(|x| &x.id == r))
    else {
        return Err(Refusal::NoDialog { agent, showing });
    };
    let dialog_rows = view.region(manifest, rule.region);
    let keys = match action {
        Action::Approve => &actions.approve,
        Action::Deny => &actions.deny,
    }
    .resolve(&dialog_rows)
    .ok_or(Refusal::NoOption { agent, action })?;
    Ok(Answer {
        rule: rule.id.clone(),
        dialog: dialog_text(view, manifest, rule.region),
        keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Registry;

    const CLAUDE: &str = " ● I'll remove the build directory.
────────────────────────────────
 Bash command
   rm -rf ./build
 Do you want to proceed?
 ❯ 1. Yes
   2. Yes, and always allow access to build/ from this project
   4. No
 Esc to cancel · Tab to amend
";

    #[test]
    fn claude_dialog_keys() {
        let reg = Registry::bundled();
        let m = reg.get("claude").unwrap();
        let view = ScreenView::from_text(CLAUDE);
        let yes = answer(&view, m, Action::Approve).unwrap();
        assert_eq!(yes.rule, "claude/approval");
        assert_eq!(yes.keys, ["1"]);
        assert_eq!(
            yes.dialog,
            [
                "● I'll remove the build directory.",
                "Bash command",
                "rm -rf ./build",
                "Do you want to proceed?",
                "❯ 1. Yes",
                "2. Yes, and always allow access to build/ from this project",
                "4. No",
                "Esc to cancel · Tab to amend",
            ]
        );
        assert_eq!(answer(&view, m, Action::Deny).unwrap().keys, ["4"]);
        // An edit dialog numbers its No 3.
        let edit = CLAUDE.replace("   4. No", "   3. No");
        assert_eq!(
            answer(&ScreenView::from_text(&edit), m, Action::Deny)
                .unwrap()
                .keys,
            ["3"]
        );
        // No "No" on it: nothing to press.
        let no_no = CLAUDE.replace("   4. No\n", "");
        assert_eq!(
            answer(&ScreenView::from_text(&no_no), m, Action::Deny),
            Err(Refusal::NoOption {
                agent: "Claude".into(),
                action: Action::Deny
            })
        );
    }

    #[test]
    fn refusals() {
        let reg = Registry::bundled();
        let m = reg.get("claude").unwrap();
        let idle = ScreenView::from_text("────────\n❯ \n────────\n  ? for shortcuts\n");
        let r = answer(&idle, m, Action::Approve).unwrap_err();
        assert_eq!(r.code(), "no_dialog");
        assert!(r.to_string().contains("nothing was sent"), "{r}");
        let goose = reg.get("goose").unwrap();
        assert_eq!(
            answer(&idle, goose, Action::Approve).unwrap_err().code(),
            "no_actions"
        );
        assert_eq!(Action::parse("deny"), Some(Action::Deny));
        assert_eq!(Action::parse("yes"), None);
    }

    #[test]
    fn aider_prompt_keys() {
        let reg = Registry::bundled();
        let m = reg.get("aider").unwrap();
        let view = ScreenView::from_text(
            "rm -rf ./build\nRun shell command? (Y)es/(N)o/(D)on't ask again [Yes]: ",
        );
        let a = answer(&view, m, Action::Deny).unwrap();
        assert_eq!(a.keys, ["n", "Enter"]);
        assert_eq!(
            a.dialog,
            [
                "rm -rf ./build",
                "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:"
            ]
        );
    }
}
