//! Hysteresis over successive resolutions: [`IdentityTracker`] commits,
//! switches and drops a pane's agent only on agreeing evidence, and keeps
//! the evidence `tend explain` prints.
//!
//! Separate because it is state over time, where resolution is one
//! snapshot.

use super::*;

/// Thresholds of [`IdentityTracker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HysteresisConfig {
    /// Agreeing samples needed to commit a new identity.
    pub commit_after: u32,
    /// Consecutive samples without the committed agent before dropping it.
    pub drop_after_misses: u32,
    /// A pane with no agent commits one at its first sample when the match
    /// is by a key that cannot be a guess (the executable image, an agent's
    /// package path, `TEND_AGENT`), so that the agent is named before it
    /// draws its first screen. Switching from one agent to another, and
    /// matches by process name alone, still need `commit_after` samples.
    pub commit_strong_at_once: bool,
}

impl Default for HysteresisConfig {
    fn default() -> Self {
        HysteresisConfig {
            commit_after: 2,
            drop_after_misses: 6,
            commit_strong_at_once: true,
        }
    }
}

/// Why the committed identity changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeReason {
    /// Enough consecutive samples agreed on a (new) agent.
    Agreed,
    /// The shell holds the terminal again with its prompt visible.
    ShellBack,
    /// Too many consecutive samples without the agent.
    Misses,
}

/// A change of a pane's committed identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdentityChange {
    /// When (the sample's time).
    #[serde(serialize_with = "secs")]
    pub at: Duration,
    /// The agent before (`None`: none).
    pub from: Option<String>,
    /// The agent after (`None`: none).
    pub to: Option<String>,
    /// Why.
    pub reason: ChangeReason,
}

/// A candidate identity not yet committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingIdentity {
    /// The agent the latest samples agree on.
    pub agent: String,
    /// How many consecutive samples agree.
    pub samples: u32,
    /// The latest match.
    pub matched: IdentityMatch,
}

/// What `tend explain` shows about a pane's identity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdentityEvidence {
    /// The committed agent.
    pub agent: Option<String>,
    /// The latest match of the committed agent: which process, which key.
    pub matched: Option<IdentityMatch>,
    /// Since when it is committed.
    #[serde(serialize_with = "opt_secs")]
    pub since: Option<Duration>,
    /// When it was last seen in a sample.
    #[serde(serialize_with = "opt_secs")]
    pub last_seen: Option<Duration>,
    /// Consecutive samples that agree with the committed agent.
    pub agreeing: u32,
    /// Consecutive samples without it.
    pub misses: u32,
    /// A different agent gathering agreement.
    pub pending: Option<PendingIdentity>,
    /// The latest resolution (foreground group, walk size).
    pub last: Option<Resolution>,
    /// The latest change.
    pub last_change: Option<IdentityChange>,
}

#[derive(Debug, Clone)]
struct Committed {
    matched: IdentityMatch,
    since: Duration,
    last_seen: Duration,
    agreeing: u32,
}

/// Hysteresis over successive [`Resolution`]s of one pane: a
/// new identity is committed after `commit_after` consecutive agreeing
/// samples; the committed one is held while evidence disagrees, and
/// dropped when the shell holds the terminal again with its prompt visible
/// or after `drop_after_misses` consecutive samples without it. Pure: time
/// is an input.
#[derive(Debug, Clone, Default)]
pub struct IdentityTracker {
    cfg: HysteresisConfig,
    committed: Option<Committed>,
    pending: Option<PendingIdentity>,
    misses: u32,
    last: Option<Resolution>,
    last_change: Option<IdentityChange>,
}

impl IdentityTracker {
    /// A tracker with the default thresholds.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tracker with other thresholds (at least 1 each).
    pub fn with_config(cfg: HysteresisConfig) -> Self {
        IdentityTracker {
            cfg: HysteresisConfig {
                commit_after: cfg.commit_after.max(1),
                drop_after_misses: cfg.drop_after_misses.max(1),
                commit_strong_at_once: cfg.commit_strong_at_once,
            },
            ..Self::default()
        }
    }

    /// The committed agent.
    pub fn agent(&self) -> Option<&str> {
        self.committed.as_ref().map(|c| c.matched.agent.as_str())
    }

    /// Feeds one sample's resolution, taken at `at`. `shell_prompt_visible`
    /// says the screen shows the shell's prompt (from OSC 133 marks or the
    /// screen model). Returns the change of committed identity, if any.
    pub fn observe(
        &mut self,
        at: Duration,
        res: &Resolution,
        shell_prompt_visible: bool,
    ) -> Option<IdentityChange> {
        self.last = Some(res.clone());
        let change = match &res.agent {
            Some(m) if self.agent() == Some(m.agent.as_str()) => {
                self.pending = None;
                self.misses = 0;
                if let Some(c) = &mut self.committed {
                    c.matched = m.clone();
                    c.last_seen = at;
                    c.agreeing += 1;
                }
                None
            }
            Some(m) => {
                let samples = match &self.pending {
                    Some(p) if p.agent == m.agent => p.samples + 1,
                    _ => 1,
                };
                self.pending = Some(PendingIdentity {
                    agent: m.agent.clone(),
                    samples,
                    matched: m.clone(),
                });
                let needed = if self.committed.is_none()
                    && self.cfg.commit_strong_at_once
                    && m.is_strong()
                {
                    1
                } else {
                    self.cfg.commit_after
                };
                if samples >= needed {
                    let from = self.committed.take().map(|c| c.matched.agent);
                    self.committed = Some(Committed {
                        matched: m.clone(),
                        since: at,
                        last_seen: at,
                        agreeing: samples,
                    });
                    self.pending = None;
                    self.misses = 0;
                    Some(IdentityChange {
                        at,
                        from,
                        to: Some(m.agent.clone()),
                        reason: ChangeReason::Agreed,
                    })
                } else {
                    self.miss(at, res, shell_prompt_visible)
                }
            }
            None => {
                self.pending = None;
                self.miss(at, res, shell_prompt_visible)
            }
        };
        if change.is_some() {
            self.last_change = change.clone();
        }
        change
    }

    /// A sample without the committed agent.
    fn miss(
        &mut self,
        at: Duration,
        res: &Resolution,
        shell_prompt_visible: bool,
    ) -> Option<IdentityChange> {
        let committed = self.committed.as_mut()?;
        committed.agreeing = 0;
        self.misses += 1;
        let reason = if res.shell_foreground() && shell_prompt_visible {
            ChangeReason::ShellBack
        } else if self.misses >= self.cfg.drop_after_misses {
            ChangeReason::Misses
        } else {
            return None;
        };
        let from = self.committed.take().map(|c| c.matched.agent);
        self.misses = 0;
        Some(IdentityChange {
            at,
            from,
            to: None,
            reason,
        })
    }

    /// The evidence behind the current identity.
    pub fn evidence(&self) -> IdentityEvidence {
        IdentityEvidence {
            agent: self.agent().map(str::to_owned),
            matched: self.committed.as_ref().map(|c| c.matched.clone()),
            since: self.committed.as_ref().map(|c| c.since),
            last_seen: self.committed.as_ref().map(|c| c.last_seen),
            agreeing: self.committed.as_ref().map_or(0, |c| c.agreeing),
            misses: self.misses,
            pending: self.pending.clone(),
            last: self.last.clone(),
            last_change: self.last_change.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::testutil::*;

    fn res_agent(agent: &str, pid: u32) -> Resolution {
        Resolution {
            agent: Some(IdentityMatch {
                agent: agent.into(),
                pid,
                via: "executable".into(),
                key: agent.into(),
                source: Source::Argv(0),
                value: agent.into(),
            }),
            foreground: Foreground::Group {
                pgid: pid,
                members: 1,
            },
            via_ancestor: false,
            examined: 2,
            truncated: false,
        }
    }

    fn res_none(shell: bool) -> Resolution {
        Resolution {
            agent: None,
            foreground: if shell {
                Foreground::Shell
            } else {
                Foreground::Group {
                    pgid: 9,
                    members: 1,
                }
            },
            via_ancestor: false,
            examined: 1,
            truncated: false,
        }
    }

    /// The thresholds without the strong first commit.
    fn two_samples() -> IdentityTracker {
        IdentityTracker::with_config(HysteresisConfig {
            commit_strong_at_once: false,
            ..HysteresisConfig::default()
        })
    }

    fn res_comm(agent: &str, pid: u32) -> Resolution {
        let mut r = res_agent(agent, pid);
        if let Some(m) = &mut r.agent {
            m.via = "comm".into();
        }
        r
    }

    #[test]
    fn a_strong_match_commits_at_the_first_sample() {
        let mut t = IdentityTracker::new();
        let c = t
            .observe(s(1), &res_agent("claude", 5), false)
            .expect("commit at once");
        assert_eq!(
            (c.from, c.to, c.reason),
            (None, Some("claude".into()), ChangeReason::Agreed)
        );
        // A name alone needs two samples.
        let mut t = IdentityTracker::new();
        assert_eq!(t.observe(s(1), &res_comm("aider", 5), false), None);
        assert!(t.observe(s(2), &res_comm("aider", 5), false).is_some());
        // Switching agents needs two samples, strong or not.
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("claude", 5), false);
        assert_eq!(t.observe(s(2), &res_agent("codex", 6), false), None);
        assert_eq!(t.agent(), Some("claude"));
        assert!(t.observe(s(3), &res_agent("codex", 6), false).is_some());
    }

    #[test]
    fn commits_after_two_agreeing_samples() {
        let mut t = two_samples();
        assert_eq!(t.observe(s(1), &res_agent("claude", 5), false), None);
        assert_eq!(t.agent(), None);
        assert_eq!(t.evidence().pending.map(|p| p.samples), Some(1));
        let c = t
            .observe(s(2), &res_agent("claude", 5), false)
            .expect("commit");
        assert_eq!(
            (c.from, c.to, c.reason),
            (None, Some("claude".into()), ChangeReason::Agreed)
        );
        assert_eq!(t.agent(), Some("claude"));
        let e = t.evidence();
        assert_eq!(e.agreeing, 2);
        assert_eq!(e.since, Some(s(2)));
        let m = e.matched.expect("match");
        assert_eq!(
            (m.pid, m.via.as_str(), m.key.as_str()),
            (5, "executable", "claude")
        );
        t.observe(s(3), &res_agent("claude", 5), false);
        assert_eq!(t.evidence().agreeing, 3);
    }

    #[test]
    fn agreement_must_be_consecutive() {
        let mut t = two_samples();
        t.observe(s(1), &res_agent("claude", 5), false);
        t.observe(s(2), &res_none(false), false);
        assert_eq!(t.observe(s(3), &res_agent("claude", 5), false), None);
        assert_eq!(t.agent(), None);
        t.observe(s(4), &res_agent("codex", 6), false);
        assert_eq!(t.observe(s(5), &res_agent("claude", 5), false), None);
        assert_eq!(t.agent(), None);
    }

    #[test]
    fn holds_while_evidence_disagrees_then_switches() {
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("claude", 5), false);
        t.observe(s(2), &res_agent("claude", 5), false);
        // One sample says codex, some say nothing: claude holds.
        assert_eq!(t.observe(s(3), &res_agent("codex", 6), false), None);
        assert_eq!(t.observe(s(4), &res_none(false), false), None);
        assert_eq!(t.agent(), Some("claude"));
        let e = t.evidence();
        assert_eq!((e.misses, e.agreeing), (2, 0));
        // Two agreeing codex samples switch.
        assert_eq!(t.observe(s(5), &res_agent("codex", 6), false), None);
        assert_eq!(
            t.evidence().pending.map(|p| (p.agent, p.samples)),
            Some(("codex".into(), 1))
        );
        let c = t
            .observe(s(6), &res_agent("codex", 6), false)
            .expect("switch");
        assert_eq!(
            (c.from.as_deref(), c.to.as_deref()),
            (Some("claude"), Some("codex"))
        );
        assert_eq!(t.evidence().misses, 0);
    }

    #[test]
    fn drops_when_the_shell_is_back_with_its_prompt() {
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("aider", 5), false);
        t.observe(s(2), &res_agent("aider", 5), false);
        // The shell holds the terminal but its prompt is not visible yet
        // (the agent's last frame is on screen): hold.
        assert_eq!(t.observe(s(3), &res_none(true), false), None);
        assert_eq!(t.agent(), Some("aider"));
        let c = t.observe(s(4), &res_none(true), true).expect("drop");
        assert_eq!(
            (c.from.as_deref(), c.to, c.reason),
            (Some("aider"), None, ChangeReason::ShellBack)
        );
        assert_eq!(t.agent(), None);
        assert_eq!(
            t.evidence().last_change.map(|c| c.reason),
            Some(ChangeReason::ShellBack)
        );
        // A visible prompt with another group in the foreground drops nothing.
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("aider", 5), false);
        t.observe(s(2), &res_agent("aider", 5), false);
        assert_eq!(t.observe(s(3), &res_none(false), true), None);
    }

    #[test]
    fn drops_after_six_consecutive_misses() {
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("gemini", 5), false);
        t.observe(s(2), &res_agent("gemini", 5), false);
        for i in 0..5 {
            assert_eq!(t.observe(s(3 + i), &res_none(false), false), None);
        }
        // A hit resets the count.
        t.observe(s(8), &res_agent("gemini", 5), false);
        for i in 0..5 {
            assert_eq!(t.observe(s(9 + i), &res_none(false), false), None);
        }
        let c = t.observe(s(14), &res_none(false), false).expect("drop");
        assert_eq!(c.reason, ChangeReason::Misses);
        assert_eq!(t.agent(), None);
    }

    #[test]
    fn custom_thresholds() {
        let mut t = IdentityTracker::with_config(HysteresisConfig {
            commit_after: 1,
            drop_after_misses: 1,
            commit_strong_at_once: false,
        });
        assert!(t.observe(s(1), &res_agent("amp", 5), false).is_some());
        assert!(t.observe(s(2), &res_none(false), false).is_some());
    }
}
