//! One check per manifest rule: the screen excerpt that motivates the rule
//! (its `example`) must be claimed by exactly that rule — the highest
//! priority rule matching it — so a rule cannot silently be shadowed.

use tend_detector::manifest::{Region, Registry, RuleState};
use tend_detector::rules::{self, ScreenView};

fn view_for(example: &str, region: Region, alt: Option<bool>, default_alt: bool) -> ScreenView {
    let mut view = if matches!(region, Region::Title) {
        ScreenView {
            title: example.trim().to_owned(),
            ..ScreenView::default()
        }
    } else if matches!(region, Region::Progress) {
        ScreenView {
            progress: example.trim().to_owned(),
            ..ScreenView::default()
        }
    } else {
        ScreenView::from_text(example.trim_matches('\n'))
    };
    view.alternate = alt.unwrap_or(default_alt);
    view
}

#[test]
fn every_rule_claims_its_own_example() {
    let (registry, errors) = Registry::load(&[]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut failures = Vec::new();
    let mut checked = 0;
    for m in registry.iter() {
        // Agents drawing on the alternate screen have every rule that does
        // not say otherwise evaluated there.
        let default_alt = m.rules.iter().any(|r| r.alt_screen == Some(false));
        for rule in &m.rules {
            let Some(example) = &rule.example else {
                if m.verified {
                    failures.push(format!("{}: verified rule without an example", rule.id));
                }
                continue;
            };
            checked += 1;
            let view = view_for(example, rule.region, rule.alt_screen, default_alt);
            let verdict = rules::verdicts(&view, m)
                .into_iter()
                .find(|v| v.rule == rule.id)
                .expect("verdict for every rule");
            if !verdict.matched {
                failures.push(format!("{}: does not match its own example", rule.id));
                continue;
            }
            let winner = rules::evaluate(&view, m).expect("a rule matched");
            if winner.rule != rule.id {
                failures.push(format!(
                    "{}: its example is claimed by the higher-priority rule {}",
                    rule.id, winner.rule
                ));
            }
        }
    }
    assert!(checked > 20, "only {checked} examples checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_agent_has_identity_keys_and_rules_cite_sources() {
    let registry = Registry::bundled();
    for m in registry.iter() {
        let k = &m.identity;
        assert!(
            !(k.executables.is_empty() && k.packages.is_empty() && k.comm.is_empty()),
            "{} has no identity keys",
            m.id
        );
        for r in &m.rules {
            assert!(!r.cite.trim().is_empty(), "{} has no cite", r.id);
            if r.state == RuleState::Waiting {
                assert!(r.reason.is_some(), "{} waits without a reason", r.id);
            }
        }
    }
}

/// Every `[actions]` table answers on the example of each rule it names:
/// the screen that motivates the dialog rule yields keys for approve and
/// deny (an `option` is found on it).
#[test]
fn actions_answer_their_rules_examples() {
    use tend_detector::answer::{answer, Action};
    let (registry, _) = Registry::load(&[]);
    let mut checked = Vec::new();
    for m in registry.iter() {
        let Some(actions) = &m.actions else { continue };
        let default_alt = m.rules.iter().any(|r| r.alt_screen == Some(false));
        for id in &actions.answers {
            let rule = m.rules.iter().find(|r| &r.id == id).expect("validated");
            let example = rule
                .example
                .as_deref()
                .unwrap_or_else(|| panic!("{id}: a rule [actions] answers needs an example"));
            let view = view_for(example, rule.region, rule.alt_screen, default_alt);
            for action in [Action::Approve, Action::Deny] {
                let a = answer(&view, m, action)
                    .unwrap_or_else(|e| panic!("{id} {}: {e}", action.as_str()));
                assert!(!a.keys.is_empty(), "{id}");
            }
            checked.push(id.clone());
        }
    }
    checked.sort();
    assert_eq!(
        checked,
        [
            "aider/approval",
            "claude/approval",
            "cline/approval",
            "codex/approval",
            "continue/approval",
            "gemini/approval",
            "grok/approval",
            "kimi/approval",
            "qwen/approval",
            "vibe/approval"
        ]
    );
}
