//! Wording: what a pending entry is about, its urgency and rank, and how a
//! burst of entries becomes one [`Notification`] (title, body, the reason
//! named only when every member shares it).
//!
//! Separate because the sentences change for reasons of their own (wording,
//! grouping limits) while the decision of when to notify does not.

use super::*;

/// What one pending entry is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Subject {
    /// Entered (or changed within) a demand band.
    Demand(State, Option<Reason>),
    /// A working run went quiet.
    Quiet,
    /// A gated park released itself.
    Park {
        gate: String,
        note: String,
        gate_gone: bool,
    },
    /// A reporter went gone.
    Gone,
    /// Hit its plan's usage limit; when it resets, as the user reads it.
    Limited(Option<String>),
    /// tend sent this text at the limit's reset.
    Resumed(String),
}

impl Subject {
    pub(super) fn urgency(&self) -> Urgency {
        match self {
            Subject::Demand(State::Waiting, Some(Reason::Error)) => Urgency::Critical,
            Subject::Demand(State::Waiting, _) => Urgency::Normal,
            Subject::Demand(_, _) | Subject::Quiet => Urgency::Low,
            Subject::Limited(_) | Subject::Resumed(_) => Urgency::Low,
            Subject::Park { .. } | Subject::Gone => Urgency::Normal,
        }
    }

    /// Sorts the members of a group: what buys most for a second of
    /// attention first (the jump order), then park releases, gone, quiet,
    /// finished turns.
    pub(super) fn rank(&self) -> u8 {
        match self {
            Subject::Demand(State::Waiting, Some(Reason::Approval)) => 0,
            Subject::Demand(State::Waiting, Some(Reason::Error)) => 1,
            Subject::Demand(State::Waiting, Some(Reason::Question)) => 2,
            Subject::Demand(State::Waiting, _) => 3,
            Subject::Park { .. } => 4,
            Subject::Gone => 5,
            Subject::Resumed(_) => 6,
            Subject::Limited(_) => 7,
            Subject::Quiet => 8,
            Subject::Demand(_, _) => 9,
        }
    }

    /// A status entry (replaced by the pane's next status).
    pub(super) fn is_status(&self) -> bool {
        matches!(
            self,
            Subject::Demand(..) | Subject::Quiet | Subject::Limited(_)
        )
    }
}

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) pane: String,
    pub(super) name: String,
    pub(super) session: Option<String>,
    pub(super) subject: Subject,
    /// What the agent said about its status.
    pub(super) message: Option<String>,
}

/// Longest agent's message in a notification, in bytes.
const MAX_MESSAGE: usize = 160;

impl Entry {
    pub(super) fn sentence(&self) -> String {
        match &self.subject {
            Subject::Demand(state, reason) => bands::sentence(&self.name, *state, *reason),
            Subject::Quiet => bands::sentence(&self.name, State::Working, None),
            Subject::Park { note, .. } => bands::park_released_sentence(&self.pane, note),
            Subject::Gone => bands::gone_sentence(&self.name),
            Subject::Limited(resets) => bands::limit_sentence(&self.name, resets.as_deref()),
            Subject::Resumed(_) => format!("tend resumed {} at its usage limit's reset", self.name),
        }
    }

    /// Where the pane is, and for a park or a reporter why.
    pub(super) fn detail(&self) -> String {
        let place = match &self.session {
            Some(s) if !s.is_empty() => format!("{} in session {s}", self.pane),
            _ => self.pane.clone(),
        };
        match &self.subject {
            Subject::Park {
                gate, gate_gone, ..
            } => {
                if *gate_gone {
                    format!("{place}: its gate {gate} is gone")
                } else {
                    format!("{place}: its gate {gate} is ready")
                }
            }
            Subject::Gone => format!("{place}: it stopped reporting and shows no sign of life"),
            Subject::Resumed(text) => format!(
                "{place}: sent {:?}",
                tend_detector::psp::clean_text(text, MAX_MESSAGE)
            ),
            Subject::Demand(..) => match self
                .message
                .as_deref()
                .map(|m| tend_detector::psp::clean_text(m, MAX_MESSAGE))
                .filter(|m| !m.is_empty())
            {
                Some(m) => format!("{place}: {m}"),
                None => place,
            },
            _ => place,
        }
    }
}

/// Longest list of members in a group's body; the rest are counted.
const MAX_GROUP_LINES: usize = 8;

/// What a name falls back to when the agent is not known.
pub(super) const SOMEONE: &str = "An agent";

/// One notification for a (sorted, non-empty) burst.
pub(super) fn compose(entries: &[Entry]) -> Notification {
    let urgency = entries
        .iter()
        .map(|e| e.subject.urgency())
        .max()
        .unwrap_or(Urgency::Normal);
    let panes = entries.iter().map(|e| e.pane.clone()).collect();
    if let [one] = entries {
        return Notification {
            title: one.sentence(),
            body: one.detail(),
            panes,
            urgency,
        };
    }
    let mut lines: Vec<String> = entries
        .iter()
        .take(MAX_GROUP_LINES)
        .map(|e| format!("{} ({})", e.sentence(), e.detail()))
        .collect();
    if entries.len() > MAX_GROUP_LINES {
        lines.push(format!("and {} more", entries.len() - MAX_GROUP_LINES));
    }
    Notification {
        title: group_title(entries),
        body: lines.join("\n"),
        panes,
        urgency,
    }
}

/// A group's headline: names what the members share, and only that.
fn group_title(entries: &[Entry]) -> String {
    let n = entries.len();
    let demands: Option<Vec<(State, Option<Reason>)>> = entries
        .iter()
        .map(|e| match e.subject {
            Subject::Demand(s, r) => Some((s, r)),
            _ => None,
        })
        .collect();
    if let Some(members) = demands {
        if let Some(s) = bands::group_sentence(&members) {
            return s;
        }
    }
    let all = |f: fn(&Subject) -> bool| entries.iter().all(|e| f(&e.subject));
    if all(|s| matches!(s, Subject::Park { .. })) {
        format!("{n} parks were released")
    } else if all(|s| *s == Subject::Gone) {
        format!("{n} agents are gone")
    } else if all(|s| *s == Subject::Quiet) {
        bands::quiet_sentence(n).unwrap_or_default()
    } else if all(|s| matches!(s, Subject::Limited(_))) {
        format!("{n} agents hit their usage limit")
    } else if all(|s| matches!(s, Subject::Resumed(_))) {
        format!("tend resumed {n} agents at their usage limits' reset")
    } else {
        format!("{n} agents want your attention")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::testutil::*;

    #[test]
    fn wording_for_each_reason() {
        let cases = [
            (
                change("%1", "Codex", State::Waiting, Some(Reason::Question)),
                "Codex asked a question",
                Urgency::Normal,
            ),
            (
                change("%1", "Grok", State::Waiting, Some(Reason::Error)),
                "Grok is blocked by an error",
                Urgency::Critical,
            ),
            (
                change("%1", "Aider", State::Waiting, Some(Reason::Prompt)),
                "Aider is waiting for input",
                Urgency::Normal,
            ),
            (
                change("%1", "Claude", State::Completed, None),
                "Claude finished",
                Urgency::Low,
            ),
        ];
        for (c, title, urgency) in cases {
            let mut n = Notifier::new(Policy::default());
            n.handle(ms(0), NOON, Happening::Status(c));
            let out = run(&mut n, 0, 300);
            assert_eq!(out.len(), 1, "{title}");
            assert_eq!(out[0].title, title);
            assert_eq!(out[0].urgency, urgency);
        }
    }

    #[test]
    fn the_agents_message_is_in_the_body() {
        let mut n = Notifier::new(Policy::default());
        let mut c = change("%1", "Claude", State::Waiting, Some(Reason::Approval));
        c.message = Some("approve Bash:\n rm -rf ./build\x1b[31m".into());
        n.handle(ms(0), NOON, Happening::Status(c));
        let out = run(&mut n, 0, 300);
        assert_eq!(out[0].title, "Claude is waiting for approval");
        assert_eq!(
            out[0].body,
            "%1 in session main: approve Bash: rm -rf ./build[31m"
        );
        let mut c = change("%2", "Claude", State::Completed, None);
        c.message = Some("x".repeat(500));
        n.handle(ms(400), NOON, Happening::Status(c));
        let out = run(&mut n, 400, 700);
        assert!(out[0].body.len() <= "%2 in session main: ".len() + MAX_MESSAGE);
    }

    #[test]
    fn a_mixed_group_names_no_reason() {
        let mut n = Notifier::new(Policy::default());
        n.handle(ms(0), NOON, waiting("%1", "Claude", Reason::Question));
        n.handle(ms(10), NOON, waiting("%2", "Grok", Reason::Error));
        n.handle(ms(20), NOON, waiting("%3", "Codex", Reason::Approval));
        let out = run(&mut n, 0, 300);
        assert_eq!(out[0].title, "3 agents need you");
        // Most urgent first, in the jump order; the loudest urgency wins.
        assert_eq!(out[0].panes, vec!["%3", "%2", "%1"]);
        assert_eq!(out[0].urgency, Urgency::Critical);
    }

    #[test]
    fn large_groups_are_counted_and_zero_window_sends_at_once() {
        let mut n = Notifier::new(Policy::default());
        for i in 0..12 {
            n.handle(
                ms(0),
                NOON,
                waiting(&format!("%{i}"), "Claude", Reason::Approval),
            );
        }
        let out = run(&mut n, 0, 300);
        assert_eq!(out[0].title, "12 agents are waiting for approval");
        assert_eq!(out[0].body.lines().count(), MAX_GROUP_LINES + 1);
        assert_eq!(out[0].body.lines().last(), Some("and 4 more"));
        assert_eq!(out[0].panes.len(), 12);

        let mut n = Notifier::new(Policy {
            group_window: Duration::ZERO,
            ..Policy::default()
        });
        n.handle(ms(5), NOON, waiting("%1", "Claude", Reason::Approval));
        assert!(n.poll_notification().is_some());
        assert_eq!(n.poll_timeout(), None);
    }

    #[test]
    fn one_line_for_a_status_line() {
        let n = Notification {
            title: "2 agents need you".into(),
            body: "Claude is waiting for approval (%1)\nCodex asked a question (%2)".into(),
            panes: vec!["%1".into(), "%2".into()],
            urgency: Urgency::Normal,
        };
        assert_eq!(
            n.one_line(),
            "2 agents need you · Claude is waiting for approval (%1) · Codex asked a question (%2)"
        );
    }
}
