//! Reading which agent's live UI a screen shows, from the manifests'
//! `[[identity.screen]]` markers: the evidence that names an agent behind
//! a wrapper (`ssh`, `docker exec`, …) whose process the tree cannot show.
//!
//! Separate because it reads a screen, where the rest of identity reads
//! processes; [`IdentityTracker`] decides over successive readings.

use super::*;
use crate::manifest::RuleState;
use crate::rules::{self, ScreenView};

/// Which agent one reading of a screen shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScreenReading {
    /// The agent whose live UI is on the screen, if exactly one agent's is.
    pub sighting: Option<Sighting>,
    /// Agents whose markers all matched this screen at once: none is
    /// named from it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ambiguous: Vec<String>,
    /// When the pane last printed (the caller's clock; set by the caller):
    /// an agent named from its screen is dropped sooner once the pane is
    /// silent without its UI than while it prints.
    #[serde(serialize_with = "opt_secs")]
    pub last_output: Option<Duration>,
}

/// An agent's live UI on a screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sighting {
    /// The agent.
    pub agent: String,
    /// The marker that matched (`claude/screen:prompt`), or for the agent
    /// already named, one of its own state rules (`claude/approval`): a
    /// screen its rules still read keeps it named.
    pub by: String,
    /// `by` is a state rule, not a marker: it keeps a named agent, never
    /// names one.
    pub by_rule: bool,
}

/// Reads `view` for the agents' screen markers. `named` is the agent the
/// pane is named after from its screen, if any: its markers are tried
/// first, and a screen its state rules read (the first that matches, not
/// counting rules that read only the title, is not an exit rule) counts as
/// showing it too — a dialog or a half-typed prompt no
/// marker describes does not unname it.
pub fn read_screen(registry: &Registry, view: &ScreenView, named: Option<&str>) -> ScreenReading {
    let mut found: Vec<(&str, &str)> = registry
        .iter()
        .filter_map(|m| rules::screen_marker(view, m).map(|k| (m.id.as_str(), k.id.as_str())))
        .collect();
    if let Some(agent) = named {
        if let Some(&(a, by)) = found.iter().find(|(a, _)| *a == agent) {
            return ScreenReading {
                sighting: Some(Sighting {
                    agent: a.to_owned(),
                    by: by.to_owned(),
                    by_rule: false,
                }),
                ambiguous: Vec::new(),
                last_output: None,
            };
        }
        // The first of its state rules that matches the screen's rows, if
        // it is not an exit rule (a title outlives the program that set
        // it, so rules that read only the title do not count).
        let rule = registry
            .get(agent)
            .filter(|_| found.is_empty())
            .into_iter()
            .flat_map(|m| rules::verdicts(view, m))
            .find(|v| v.matched && v.region != "title" && v.region != "progress")
            .filter(|v| v.state != RuleState::Exited);
        if let Some(v) = rule {
            return ScreenReading {
                sighting: Some(Sighting {
                    agent: agent.to_owned(),
                    by: v.rule,
                    by_rule: true,
                }),
                ambiguous: Vec::new(),
                last_output: None,
            };
        }
    }
    if found.len() > 1 {
        found.sort_unstable();
        return ScreenReading {
            sighting: None,
            ambiguous: found.into_iter().map(|(a, _)| a.to_owned()).collect(),
            last_output: None,
        };
    }
    ScreenReading {
        sighting: found.pop().map(|(agent, by)| Sighting {
            agent: agent.to_owned(),
            by: by.to_owned(),
            by_rule: false,
        }),
        ambiguous: Vec::new(),
        last_output: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::testutil::*;

    const CLAUDE_IDLE: &str = "
 ▐▛███▛█   Claude Code v2.1.332
────────────────────────────────────────
❯
────────────────────────────────────────
  ⏸ manual mode on · ? for shortcuts";

    const CLAUDE_DIALOG: &str = "
 Do you want to proceed?
 ❯ 1. Yes
   2. Yes, and always allow access to build/ from this project
   4. No
 Esc to cancel · Tab to amend";

    fn view(text: &str, title: &str, alternate: bool) -> ScreenView {
        let mut v = ScreenView::from_text(text.trim_matches('\n'));
        v.title = title.into();
        v.alternate = alternate;
        v
    }

    fn seen(r: &ScreenReading) -> Option<(&str, &str, bool)> {
        r.sighting
            .as_ref()
            .map(|s| (s.agent.as_str(), s.by.as_str(), s.by_rule))
    }

    #[test]
    fn the_live_ui_names_its_agent() {
        let r = read_screen(&reg(), &view(CLAUDE_IDLE, "✳ Claude Code", true), None);
        assert_eq!(seen(&r), Some(("claude", "claude/screen:prompt", false)));
        let r = read_screen(&reg(), &view(CLAUDE_DIALOG, "✳ Claude Code", true), None);
        assert_eq!(seen(&r), Some(("claude", "claude/screen:dialog", false)));
    }

    #[test]
    fn printed_text_is_not_the_live_ui() {
        // The same rows as plain text (a saved screen `cat` to the
        // terminal, `grep` output): no title, not the alternate screen.
        for text in [CLAUDE_IDLE, CLAUDE_DIALOG] {
            assert_eq!(
                read_screen(&reg(), &view(text, "", false), None),
                ScreenReading::default()
            );
            assert_eq!(
                read_screen(&reg(), &view(text, "", true), None),
                ScreenReading::default()
            );
        }
        // The title alone (it outlives the program that set it).
        let shell = "me@devbox:~$ ls\nnotes.txt\nme@devbox:~$";
        assert_eq!(
            read_screen(&reg(), &view(shell, "✳ Claude Code", false), None),
            ScreenReading::default()
        );
    }

    #[test]
    fn the_named_agents_own_rules_keep_it() {
        // The dialog without the title (the terminal dropped it): no marker
        // matches, but Claude's approval rule reads it.
        let v = view(CLAUDE_DIALOG, "", true);
        assert_eq!(seen(&read_screen(&reg(), &v, None)), None);
        let r = read_screen(&reg(), &v, Some("claude"));
        assert_eq!(seen(&r), Some(("claude", "claude/approval", true)));
        // The shell back after Claude left its alternate screen: its exit
        // rule wins, nothing keeps it.
        let v = view("me@devbox:~$ claude\nme@devbox:~$", "✳ Claude Code", false);
        assert_eq!(
            read_screen(&reg(), &v, Some("claude")),
            ScreenReading::default()
        );
    }

    #[test]
    fn two_agents_at_once_name_neither() {
        let fork = format!(
            "id = \"claude-fork\"\nname = \"Fork\"\n[identity]\nexecutables = [\"fork\"]\n{}",
            r#"[[identity.screen]]
id = "prompt"
region = "prompt_box"
alt_screen = true
cite = "unit test"
match.all = [ { line_regex = '^❯' }, { region = "title", regex = 'Claude Code$' } ]
"#
        );
        let (registry, errors) = Registry::load(&[("fork.toml".into(), fork)]);
        assert!(errors.is_empty(), "{errors:?}");
        let v = view(CLAUDE_IDLE, "✳ Claude Code", true);
        let r = read_screen(&registry, &v, None);
        assert_eq!(seen(&r), None);
        assert_eq!(r.ambiguous, ["claude", "claude-fork"]);
        // The agent already named keeps its name.
        let r = read_screen(&registry, &v, Some("claude"));
        assert_eq!(seen(&r), Some(("claude", "claude/screen:prompt", false)));
    }
}
