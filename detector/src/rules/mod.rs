//! Evaluating an agent's screen rules on one screen.
//!
//! A [`ScreenView`] is the plain text the rules may look at: the visible rows,
//! the title, the progress state and whether the alternate screen is on. It
//! never holds scrollback, so no rule can match a stale dialog in history.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use serde::Serialize;

use crate::manifest::{Manifest, Matcher, Region, RegionSource, Rule, RuleState, ScreenMarker};
use crate::state::Reason;

mod memo;

pub use memo::Memo;

/// The parts of a pane a rule may look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScreenView {
    /// Visible rows, top to bottom, right-trimmed.
    pub rows: Vec<String>,
    /// The OSC title.
    pub title: String,
    /// The OSC 9;4 progress word, empty when never sent.
    pub progress: String,
    /// Alternate screen on.
    pub alternate: bool,
    /// Cursor `(row, col)`.
    pub cursor: (u16, u16),
}

impl ScreenView {
    /// A view of plain text (as in `tend explain --file`). A saved screen
    /// has no cursor: it is put on the last drawn row, where an input line
    /// would be.
    pub fn from_text(text: &str) -> Self {
        let mut view = ScreenView {
            rows: text.lines().map(|l| l.trim_end().to_owned()).collect(),
            ..ScreenView::default()
        };
        let last = view.last_nonblank().saturating_sub(1);
        view.cursor = (u16::try_from(last).unwrap_or(u16::MAX), 0);
        view
    }

    fn last_nonblank(&self) -> usize {
        self.rows
            .iter()
            .rposition(|r| !r.trim().is_empty())
            .map_or(0, |i| i + 1)
    }

    /// Indexes of horizontal-rule rows, bottom-most first (at most two).
    fn rule_rows(&self, manifest: &Manifest) -> (Option<usize>, Option<usize>) {
        if manifest.screen.single_line_box {
            let last = self
                .rows
                .iter()
                .rposition(|r| manifest.screen.horizontal_rule.is_match(r));
            return (last, None);
        }
        let mut found = self
            .rows
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, r)| manifest.screen.horizontal_rule.is_match(r))
            .map(|(i, _)| i);
        (found.next(), found.next())
    }

    /// The rows of `region`.
    pub fn region<'a>(&'a self, manifest: &Manifest, region: Region) -> Vec<&'a str> {
        self.region_in(&Layout::of(self, manifest), region)
    }

    /// The rows of `region`, with the input-box rules already located.
    fn region_in<'a>(&'a self, layout: &Layout, region: Region) -> Vec<&'a str> {
        let nonblank = |rows: &'a [String], n: u16| -> Vec<&'a str> {
            let mut out: Vec<&str> = rows
                .iter()
                .rev()
                .filter(|r| !r.trim().is_empty())
                .take(usize::from(n))
                .map(String::as_str)
                .collect();
            out.reverse();
            out
        };
        match region {
            Region::BottomLines(n) => {
                // Blank rows below the last drawn row are not part of the UI
                // (an inline agent's screen is not yet full).
                let end = self.last_nonblank();
                let start = end.saturating_sub(usize::from(n));
                self.rows[start..end].iter().map(String::as_str).collect()
            }
            Region::BottomNonEmpty(n) => nonblank(&self.rows, n),
            Region::PromptBox => match layout.rules {
                (Some(last), _) if layout.single_line_box => {
                    vec![self.rows[last].as_str()]
                }
                (Some(last), Some(prev)) => self.rows[prev + 1..last]
                    .iter()
                    .map(String::as_str)
                    .collect(),
                (Some(last), None) => self.rows[last + 1..].iter().map(String::as_str).collect(),
                _ => Vec::new(),
            },
            Region::AbovePromptBox(n) => match layout.rules {
                (Some(_), Some(top)) | (Some(top), None) => nonblank(&self.rows[..top], n),
                _ => Vec::new(),
            },
            Region::AfterLastRule => match layout.rules {
                (Some(last), _) => self.rows[last + 1..].iter().map(String::as_str).collect(),
                _ => Vec::new(),
            },
            Region::Title => vec![self.title.as_str()],
            Region::Progress => vec![self.progress.as_str()],
            Region::Visible => self.rows.iter().map(String::as_str).collect(),
            Region::CursorLine => self
                .rows
                .get(usize::from(self.cursor.0))
                .map(|r| vec![r.as_str()])
                .unwrap_or_default(),
            Region::AboveCursor(n) => {
                let end = usize::from(self.cursor.0).min(self.rows.len());
                nonblank(&self.rows[..end], n)
            }
        }
    }
}

/// The verdict of one rule on one screen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Rule id.
    pub rule: String,
    /// Rule priority.
    pub priority: i32,
    /// The state it would give.
    pub state: RuleState,
    /// The reason it would give (see [`Manifest::reason_of`]).
    pub reason: Option<Reason>,
    /// The reason the rule declares, when an unverified manifest's rule
    /// gives `prompt` in its place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared_reason: Option<Reason>,
    /// Did it match.
    pub matched: bool,
    /// Why it was not evaluated (e.g. wrong screen), if so.
    pub skipped: Option<String>,
    /// Region it looked at.
    pub region: String,
}

/// The strongest screen evidence: the highest-priority matching rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// Rule id.
    pub rule: String,
    /// The state it gives.
    pub state: RuleState,
    /// The reason, for waiting (see [`Manifest::reason_of`]).
    pub reason: Option<Reason>,
    /// The reason the rule declares, when an unverified manifest's rule
    /// gives `prompt` in its place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared_reason: Option<Reason>,
    /// Its confidence.
    pub confidence: f32,
    /// A limit rule's words for when the limit resets (`9:37am (UTC)`),
    /// as the screen shows them (see [`crate::manifest::ResetWords`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset: Option<String>,
}

/// Where the input box's rules are on one screen, for one manifest:
/// located once per evaluation, not once per rule.
struct Layout {
    rules: (Option<usize>, Option<usize>),
    single_line_box: bool,
}

impl Layout {
    fn of(view: &ScreenView, manifest: &Manifest) -> Layout {
        Layout {
            rules: view.rule_rows(manifest),
            single_line_box: manifest.screen.single_line_box,
        }
    }
}

struct Source<'a> {
    view: &'a ScreenView,
    layout: Layout,
    /// Each region's rows and their text joined, read once per evaluation
    /// (for the rules and for matchers that look at another region): a
    /// manifest's rules look at a few regions between them, and reading
    /// and joining a region again for every rule cost as much as some of
    /// the rules' matching. Shared (`Rc`) so that no borrow is held while
    /// a matcher reads another region.
    texts: RefCell<Vec<(Region, Rc<RegionText<'a>>)>>,
}

/// A region's rows and their text joined by newlines.
struct RegionText<'a> {
    rows: Vec<&'a str>,
    joined: String,
}

impl<'a> Source<'a> {
    fn new(view: &'a ScreenView, manifest: &Manifest) -> Self {
        Source {
            view,
            layout: Layout::of(view, manifest),
            texts: RefCell::new(Vec::new()),
        }
    }

    fn text(&self, region: Region) -> Rc<RegionText<'a>> {
        if let Some((_, t)) = self.texts.borrow().iter().find(|(r, _)| *r == region) {
            return t.clone();
        }
        let rows = self.view.region_in(&self.layout, region);
        let joined = rows.join("\n");
        let text = Rc::new(RegionText { rows, joined });
        self.texts.borrow_mut().push((region, text.clone()));
        text
    }
}

impl RegionSource for Source<'_> {
    fn with_region(&self, region: Region, f: &mut dyn FnMut(&[&str], &str) -> bool) -> bool {
        let text = self.text(region);
        f(&text.rows, &text.joined)
    }
}

fn rule_matches(src: &Source<'_>, rule: &Rule) -> Result<bool, String> {
    look_matches(src, rule.alt_screen, rule.region, &rule.matcher)
}

/// A matcher over a region, on (or off) the alternate screen as asked.
fn look_matches(
    src: &Source<'_>,
    alt_screen: Option<bool>,
    region: Region,
    matcher: &Matcher,
) -> Result<bool, String> {
    if let Some(want) = alt_screen {
        if want != src.view.alternate {
            return Err(format!(
                "applies only {} the alternate screen",
                if want { "on" } else { "off" }
            ));
        }
    }
    Ok(src.with_region(region, &mut |rows, joined| {
        matcher.matches(src, rows, joined)
    }))
}

/// The first of the manifest's screen-identity markers
/// (`[[identity.screen]]`) that matches the screen, if any: the screen
/// shows the agent's live UI.
pub fn screen_marker<'m>(view: &ScreenView, manifest: &'m Manifest) -> Option<&'m ScreenMarker> {
    if manifest.screen_identity.is_empty() {
        return None;
    }
    let src = Source::new(view, manifest);
    manifest
        .screen_identity
        .iter()
        .find(|m| look_matches(&src, m.alt_screen, m.region, &m.matcher).unwrap_or(false))
}

/// The rule's own reason, when the manifest gives `prompt` in its place.
fn downgraded(manifest: &Manifest, rule: &Rule) -> Option<Reason> {
    rule.reason.filter(|r| Some(*r) != manifest.reason_of(rule))
}

/// The first (highest-priority) matching rule, without evaluating the rest.
pub fn evaluate(view: &ScreenView, manifest: &Manifest) -> Option<Evidence> {
    let src = Source::new(view, manifest);
    manifest
        .rules
        .iter()
        .find(|r| rule_matches(&src, r).unwrap_or(false))
        .map(|r| evidence(&src, manifest, r))
}

/// The same as [`evaluate`], matching again only the rules whose regions
/// changed since `memo` last saw them (see [`Memo`]): a pane keeps one
/// memo from evaluation to evaluation.
pub fn evaluate_with(
    view: &ScreenView,
    manifest: &Arc<Manifest>,
    memo: &mut Memo,
) -> Option<Evidence> {
    memo.begin(manifest, view.alternate);
    let src = Source::new(view, manifest);
    let winner = manifest.rules.iter().enumerate().find(|(i, r)| {
        memo.verdict(&src, *i).unwrap_or_else(|| {
            let matched = rule_matches(&src, r).unwrap_or(false);
            memo.keep(*i, matched);
            matched
        })
    });
    winner.map(|(_, r)| evidence(&src, manifest, r))
}

/// The evidence of a rule that matched.
fn evidence(src: &Source<'_>, manifest: &Manifest, r: &Rule) -> Evidence {
    Evidence {
        rule: r.id.clone(),
        state: r.state,
        reason: manifest.reason_of(r),
        declared_reason: downgraded(manifest, r),
        confidence: r.confidence,
        reset: r
            .reset
            .as_ref()
            .and_then(|w| w.find(&src.text(w.region).joined)),
    }
}

/// Every rule's verdict, in priority order (for `tend explain`).
pub fn verdicts(view: &ScreenView, manifest: &Manifest) -> Vec<Verdict> {
    let src = Source::new(view, manifest);
    manifest
        .rules
        .iter()
        .map(|r| {
            let (matched, skipped) = match rule_matches(&src, r) {
                Ok(m) => (m, None),
                Err(why) => (false, Some(why)),
            };
            Verdict {
                rule: r.id.clone(),
                priority: r.priority,
                state: r.state,
                reason: manifest.reason_of(r),
                declared_reason: downgraded(manifest, r),
                matched,
                skipped,
                region: r.region.to_string(),
            }
        })
        .collect()
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
[[rule]]
id = "box"
state = "ready"
region = "prompt_box"
cite = "test"
match = { line_regex = "^❯" }
[[rule]]
id = "above"
state = "working"
priority = 5
region = "above_prompt_box:1"
cite = "test"
match = { contains = "esc to interrupt" }
"#,
        )
        .unwrap()
    }

    #[test]
    fn regions() {
        let m = manifest();
        let view = ScreenView::from_text(
            "old stuff\nesc to interrupt\n\n──────────\n❯ hi\n──────────\n  footer\n\n",
        );
        assert_eq!(view.region(&m, Region::PromptBox), vec!["❯ hi"]);
        assert_eq!(
            view.region(&m, Region::AbovePromptBox(1)),
            vec!["esc to interrupt"]
        );
        assert_eq!(view.region(&m, Region::AfterLastRule), vec!["  footer", ""]);
        assert_eq!(
            view.region(&m, Region::BottomLines(2)),
            vec!["──────────", "  footer"]
        );
        assert_eq!(
            view.region(&m, Region::BottomNonEmpty(2)),
            vec!["──────────", "  footer"]
        );
        let e = evaluate(&view, &m).unwrap();
        assert_eq!(e.rule, "t/above");
        let v = verdicts(&view, &m);
        assert!(v.iter().all(|v| v.matched));
    }

    #[test]
    fn no_rules_no_region() {
        let m = manifest();
        let view = ScreenView::from_text("just text\n");
        assert!(view.region(&m, Region::PromptBox).is_empty());
        assert!(view.region(&m, Region::AbovePromptBox(3)).is_empty());
        assert!(evaluate(&view, &m).is_none());
    }

    fn dialogs(verified: bool) -> Manifest {
        Manifest::parse(
            "d.toml",
            &format!(
                r#"
id = "d"
name = "D"
verified = {verified}
[[rule]]
id = "approve"
state = "waiting"
reason = "approval"
priority = 30
region = "bottom_lines:3"
cite = "test"
match = {{ contains = "Allow?" }}
[[rule]]
id = "ask"
state = "waiting"
reason = "question"
priority = 20
region = "bottom_lines:3"
cite = "test"
match = {{ contains = "Which one?" }}
[[rule]]
id = "fail"
state = "waiting"
reason = "error"
priority = 10
region = "bottom_lines:3"
cite = "test"
match = {{ contains = "rate limited" }}
[[rule]]
id = "more"
state = "waiting"
reason = "prompt"
priority = 5
region = "bottom_lines:3"
cite = "test"
match = {{ contains = "Press enter" }}
[[rule]]
id = "busy"
state = "working"
region = "bottom_lines:3"
cite = "test"
match = {{ contains = "Thinking" }}
"#
            ),
        )
        .unwrap()
    }

    #[test]
    fn unverified_dialogs_need_the_user_without_saying_what_for() {
        let cases = [
            ("Allow?\n", "d/approve", Reason::Approval),
            ("Which one?\n", "d/ask", Reason::Question),
            ("rate limited\n", "d/fail", Reason::Error),
        ];
        let unverified = dialogs(false);
        let verified = dialogs(true);
        for (text, rule, declared) in cases {
            let view = ScreenView::from_text(text);
            let e = evaluate(&view, &unverified).unwrap();
            assert_eq!(e.rule, rule);
            assert_eq!(e.state, RuleState::Waiting);
            assert_eq!(e.reason, Some(Reason::Prompt));
            assert_eq!(e.declared_reason, Some(declared));
            let e = evaluate(&view, &verified).unwrap();
            assert_eq!(e.rule, rule);
            assert_eq!(e.reason, Some(declared));
            assert_eq!(e.declared_reason, None);
        }
        // A prompt stays a prompt, activity stays activity: nothing to
        // downgrade, nothing declared.
        let e = evaluate(&ScreenView::from_text("Press enter\n"), &unverified).unwrap();
        assert_eq!((e.reason, e.declared_reason), (Some(Reason::Prompt), None));
        let e = evaluate(&ScreenView::from_text("Thinking\n"), &unverified).unwrap();
        assert_eq!(
            (e.state, e.reason, e.declared_reason),
            (RuleState::Working, None, None)
        );
        // `explain` shows the same.
        let v = verdicts(&ScreenView::from_text("Allow?\n"), &unverified);
        assert_eq!(v[0].rule, "d/approve");
        assert!(v[0].matched);
        assert_eq!(v[0].reason, Some(Reason::Prompt));
        assert_eq!(v[0].declared_reason, Some(Reason::Approval));
        assert_eq!(v[3].reason, Some(Reason::Prompt));
        assert_eq!(v[3].declared_reason, None);
    }
}
