//! Hysteresis over successive resolutions: [`IdentityTracker`] commits,
//! switches and drops a pane's agent only on agreeing evidence, and keeps
//! the evidence `tend explain` prints. An agent behind a wrapper (`ssh`,
//! `docker exec`, …) whose process the tree cannot show is named from
//! successive readings of the screen ([`ScreenReading`]) with hysteresis
//! of its own: slow to name, slower to drop, and dropped at once when the
//! wrapper ends.
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
    /// Consecutive readings of the screen that must show the same agent's
    /// live UI before an agent behind a wrapper is named from its screen…
    pub screen_commit_readings: u32,
    /// …spread over at least this long (first reading to last): a screen
    /// that shows an agent's UI only for a moment (`cat` of a recording,
    /// `grep` output scrolling past) names nothing.
    pub screen_commit_span: Duration,
    /// Consecutive readings without its UI before an agent named from the
    /// screen is dropped (the wrapper still running)…
    pub screen_drop_readings: u32,
    /// …with the pane silent for at least this long through them: longer
    /// than naming takes, so a screen the markers do not know for a while
    /// (a help page, a menu) does not end the agent's run. The wrapper's
    /// end drops it at once.
    pub screen_drop_span: Duration,
    /// …or, while the pane keeps printing, for at least this long: an agent
    /// that prints its reply as lines (aider) shows no UI while it streams,
    /// and its run must outlast a long reply.
    pub screen_drop_busy_span: Duration,
}

impl Default for HysteresisConfig {
    fn default() -> Self {
        HysteresisConfig {
            commit_after: 2,
            drop_after_misses: 6,
            commit_strong_at_once: true,
            screen_commit_readings: 3,
            screen_commit_span: Duration::from_millis(1500),
            screen_drop_readings: 3,
            screen_drop_span: Duration::from_secs(10),
            screen_drop_busy_span: Duration::from_secs(60),
        }
    }
}

pub use tend_vocab::IdentifiedBy;

impl IdentityMatch {
    /// How this match identifies its agent.
    pub fn identified_by(&self) -> IdentifiedBy {
        match self.via.as_str() {
            "env" => IdentifiedBy::Declared,
            "screen" => IdentifiedBy::Screen,
            _ => IdentifiedBy::Process,
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
    /// The wrapper an agent was named behind from its screen ended (or
    /// left the terminal): the wrapper's end is the agent's.
    WrapperGone,
    /// The screen has not shown the live UI of the agent named from it for
    /// `screen_drop_readings` readings, the pane silent for
    /// `screen_drop_span` (or printing for `screen_drop_busy_span`).
    ScreenGone,
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

/// An agent whose live UI the screen shows behind a wrapper, not yet
/// named from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScreenPending {
    /// The agent.
    pub agent: String,
    /// The marker of the latest reading.
    pub by: String,
    /// Consecutive readings that showed it.
    pub readings: u32,
    /// The first of them.
    #[serde(serialize_with = "secs")]
    pub since: Duration,
}

/// Readings without the live UI of the agent named from the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ScreenAbsent {
    /// Consecutive readings without it.
    pub readings: u32,
    /// The first of them.
    #[serde(serialize_with = "secs")]
    pub since: Duration,
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
    /// How the committed agent was identified.
    pub identified_by: Option<IdentifiedBy>,
    /// An agent the screen shows behind a wrapper, gathering readings.
    pub screen_pending: Option<ScreenPending>,
    /// Readings without the UI of the agent named from the screen.
    pub screen_absent: Option<ScreenAbsent>,
    /// The latest reading of the screen (taken only while a wrapper holds
    /// the terminal and no agent process is found).
    pub screen_reading: Option<ScreenReading>,
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
/// or after `drop_after_misses` consecutive samples without it.
///
/// Behind a wrapper ([`Resolution::wrapper`]: `ssh`, `docker exec`, … in
/// the foreground, no agent process below it) the screen is read instead
/// ([`observe_with_screen`](Self::observe_with_screen)): an agent is
/// named after `screen_commit_readings` consecutive readings showing its
/// live UI over at least `screen_commit_span`, held while its UI (or a
/// screen its own rules read) is there, and dropped after
/// `screen_drop_readings` readings without it, the pane silent for
/// `screen_drop_span` (or printing for `screen_drop_busy_span`) — or at
/// once when the wrapper is no longer in the foreground. A process found
/// later wins over the screen. Nothing but a wrapper's pane is ever named
/// from its screen. Pure: time is an input.
#[derive(Debug, Clone, Default)]
pub struct IdentityTracker {
    cfg: HysteresisConfig,
    committed: Option<Committed>,
    pending: Option<PendingIdentity>,
    misses: u32,
    last: Option<Resolution>,
    last_change: Option<IdentityChange>,
    screen_pending: Option<ScreenPending>,
    screen_absent: Option<ScreenAbsent>,
    screen_reading: Option<ScreenReading>,
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
                screen_commit_readings: cfg.screen_commit_readings.max(1),
                screen_drop_readings: cfg.screen_drop_readings.max(1),
                ..cfg
            },
            ..Self::default()
        }
    }

    /// The committed agent.
    pub fn agent(&self) -> Option<&str> {
        self.committed.as_ref().map(|c| c.matched.agent.as_str())
    }

    /// The agent named from the screen, if the committed one was.
    pub fn screen_named(&self) -> Option<&str> {
        self.committed
            .as_ref()
            .filter(|c| c.matched.identified_by() == IdentifiedBy::Screen)
            .map(|c| c.matched.agent.as_str())
    }

    /// Whether a sample resolved as `res` wants a reading of the screen
    /// ([`read_screen`], then [`observe_with_screen`](Self::observe_with_screen)):
    /// a wrapper holds the terminal, no agent process is found, and no
    /// agent is named by its process.
    pub fn needs_screen(&self, res: &Resolution) -> bool {
        res.agent.is_none()
            && res.wrapper.is_some()
            && (self.committed.is_none() || self.screen_named().is_some())
    }

    /// An identity is gathering agreement (by its process, or by readings
    /// of the screen): the next sample is wanted soon. (The readings that
    /// drop an agent named from the screen take the usual schedule: a drop
    /// waits for seconds of silence anyway.)
    pub fn unsettled(&self) -> bool {
        self.pending.is_some() || self.screen_pending.is_some()
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
        self.observe_with_screen(at, res, shell_prompt_visible, None)
    }

    /// [`observe`](Self::observe) with a reading of the screen taken at
    /// the same time, when [`needs_screen`](Self::needs_screen) asked for
    /// one (`None`: not read).
    pub fn observe_with_screen(
        &mut self,
        at: Duration,
        res: &Resolution,
        shell_prompt_visible: bool,
        screen: Option<&ScreenReading>,
    ) -> Option<IdentityChange> {
        self.last = Some(res.clone());
        if let Some(r) = screen {
            self.screen_reading = Some(r.clone());
        }
        let by_screen = self.screen_named().is_some();
        if res.agent.is_none() {
            let change = match (&res.wrapper, screen) {
                (Some(w), Some(r)) if self.committed.is_none() || by_screen => {
                    self.pending = None;
                    Some(self.observe_screen(at, w, r))
                }
                // Not read this time: the agent named from it holds.
                (Some(_), None) if by_screen => Some(None),
                // The wrapper is gone or has left the terminal.
                (None, _) if by_screen => {
                    let from = self.committed.take().map(|c| c.matched.agent);
                    self.misses = 0;
                    Some(Some(IdentityChange {
                        at,
                        from,
                        to: None,
                        reason: ChangeReason::WrapperGone,
                    }))
                }
                _ => None,
            };
            if let Some(change) = change {
                if change.is_some() {
                    self.last_change = change.clone();
                }
                if self.committed.is_none() {
                    self.screen_absent = None;
                }
                return change;
            }
        }
        // A process speaks (or nothing does): the screen's readings start
        // again when it next asks.
        self.screen_pending = None;
        self.screen_absent = None;
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

    /// One reading of the screen behind wrapper `w`, with no agent named
    /// by its process.
    fn observe_screen(
        &mut self,
        at: Duration,
        w: &WrapperSeen,
        r: &ScreenReading,
    ) -> Option<IdentityChange> {
        let named = self.screen_named().map(str::to_owned);
        match &r.sighting {
            Some(s) if named.as_deref() == Some(s.agent.as_str()) => {
                self.screen_pending = None;
                self.screen_absent = None;
                self.misses = 0;
                if let Some(c) = &mut self.committed {
                    c.matched.pid = w.pid;
                    w.name.clone_into(&mut c.matched.value);
                    if !s.by_rule {
                        s.by.clone_into(&mut c.matched.key);
                    }
                    c.last_seen = at;
                    c.agreeing += 1;
                }
                None
            }
            Some(s) if !s.by_rule => {
                let p = match self.screen_pending.take() {
                    Some(p) if p.agent == s.agent => ScreenPending {
                        readings: p.readings + 1,
                        by: s.by.clone(),
                        ..p
                    },
                    _ => ScreenPending {
                        agent: s.agent.clone(),
                        by: s.by.clone(),
                        readings: 1,
                        since: at,
                    },
                };
                if p.readings >= self.cfg.screen_commit_readings
                    && at.saturating_sub(p.since) >= self.cfg.screen_commit_span
                {
                    let from = self.committed.take().map(|c| c.matched.agent);
                    self.committed = Some(Committed {
                        matched: IdentityMatch {
                            agent: p.agent.clone(),
                            pid: w.pid,
                            via: "screen".into(),
                            key: p.by.clone(),
                            source: Source::Screen,
                            value: w.name.clone(),
                        },
                        since: at,
                        last_seen: at,
                        agreeing: p.readings,
                    });
                    self.screen_absent = None;
                    self.misses = 0;
                    return Some(IdentityChange {
                        at,
                        from,
                        to: Some(p.agent),
                        reason: ChangeReason::Agreed,
                    });
                }
                self.screen_pending = Some(p);
                self.screen_miss(at, r.last_output)
            }
            _ => {
                self.screen_pending = None;
                self.screen_miss(at, r.last_output)
            }
        }
    }

    /// A reading without the live UI of the agent named from the screen;
    /// `last_output`: when the pane last printed.
    fn screen_miss(
        &mut self,
        at: Duration,
        last_output: Option<Duration>,
    ) -> Option<IdentityChange> {
        let committed = self.committed.as_mut()?;
        committed.agreeing = 0;
        let absent = match self.screen_absent {
            Some(a) => ScreenAbsent {
                readings: a.readings + 1,
                ..a
            },
            None => ScreenAbsent {
                readings: 1,
                since: at,
            },
        };
        self.misses = absent.readings;
        let quiet_since = last_output.map_or(absent.since, |o| o.max(absent.since));
        if absent.readings >= self.cfg.screen_drop_readings
            && (at.saturating_sub(quiet_since) >= self.cfg.screen_drop_span
                || at.saturating_sub(absent.since) >= self.cfg.screen_drop_busy_span)
        {
            let from = self.committed.take().map(|c| c.matched.agent);
            self.screen_absent = None;
            self.misses = 0;
            return Some(IdentityChange {
                at,
                from,
                to: None,
                reason: ChangeReason::ScreenGone,
            });
        }
        self.screen_absent = Some(absent);
        None
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
            identified_by: self.committed.as_ref().map(|c| c.matched.identified_by()),
            screen_pending: self.screen_pending.clone(),
            screen_absent: self.screen_absent,
            screen_reading: self.screen_reading.clone(),
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
            wrapper: None,
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
            wrapper: None,
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

    /// A sample with `ssh` in the foreground and no agent process.
    fn res_ssh(pid: u32) -> Resolution {
        let mut r = res_none(false);
        r.wrapper = Some(WrapperSeen {
            pid,
            name: "ssh".into(),
            kind: WrapperKind::Remote,
        });
        r
    }

    /// A reading of the screen showing `agent` (`None`: no agent), with
    /// the pane last printing at `out`.
    fn reading(agent: Option<&str>, out: Option<Duration>) -> ScreenReading {
        ScreenReading {
            sighting: agent.map(|a| Sighting {
                agent: a.into(),
                by: format!("{a}/screen:prompt"),
                by_rule: false,
            }),
            ambiguous: Vec::new(),
            last_output: out,
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn named_from_the_screen_after_three_readings_over_a_second_and_a_half() {
        let mut t = IdentityTracker::new();
        let ssh = res_ssh(40);
        let claude = reading(Some("claude"), None);
        assert!(t.needs_screen(&ssh));
        assert_eq!(
            t.observe_with_screen(ms(0), &ssh, false, Some(&claude)),
            None
        );
        assert_eq!(
            t.observe_with_screen(ms(300), &ssh, false, Some(&claude)),
            None
        );
        // Three readings, but only 0.6 s apart: not yet.
        assert_eq!(
            t.observe_with_screen(ms(600), &ssh, false, Some(&claude)),
            None
        );
        assert_eq!(
            t.evidence()
                .screen_pending
                .map(|p| (p.agent, p.readings, p.since)),
            Some(("claude".into(), 3, ms(0)))
        );
        let c = t
            .observe_with_screen(ms(1500), &ssh, false, Some(&claude))
            .expect("named");
        assert_eq!(
            (c.from, c.to.as_deref(), c.reason),
            (None, Some("claude"), ChangeReason::Agreed)
        );
        let e = t.evidence();
        assert_eq!(e.identified_by, Some(IdentifiedBy::Screen));
        let m = e.matched.expect("match");
        assert_eq!(
            (
                m.pid,
                m.via.as_str(),
                m.key.as_str(),
                m.source,
                m.value.as_str()
            ),
            (40, "screen", "claude/screen:prompt", Source::Screen, "ssh")
        );
        assert_eq!(t.screen_named(), Some("claude"));
    }

    #[test]
    fn a_screen_that_shows_an_agent_only_for_a_moment_names_nothing() {
        let mut t = IdentityTracker::new();
        let ssh = res_ssh(40);
        let claude = reading(Some("claude"), None);
        let nothing = reading(None, None);
        // Readings must be consecutive: one without the UI starts again.
        t.observe_with_screen(s(1), &ssh, false, Some(&claude));
        t.observe_with_screen(s(2), &ssh, false, Some(&claude));
        t.observe_with_screen(s(3), &ssh, false, Some(&nothing));
        assert_eq!(t.evidence().screen_pending, None);
        t.observe_with_screen(s(4), &ssh, false, Some(&claude));
        assert_eq!(
            t.observe_with_screen(s(5), &ssh, false, Some(&claude)),
            None
        );
        assert_eq!(t.agent(), None);
        // …and agree on one agent: another agent's UI starts again too.
        let codex = reading(Some("codex"), None);
        t.observe_with_screen(s(6), &ssh, false, Some(&codex));
        assert_eq!(
            t.evidence().screen_pending.map(|p| (p.agent, p.readings)),
            Some(("codex".into(), 1))
        );
        // An ambiguous reading (two agents' markers at once) names none.
        let both = ScreenReading {
            sighting: None,
            ambiguous: vec!["kilo".into(), "opencode".into()],
            last_output: None,
        };
        for i in 7..20 {
            assert_eq!(t.observe_with_screen(s(i), &ssh, false, Some(&both)), None);
        }
        assert_eq!(t.agent(), None);
    }

    #[test]
    fn a_pane_without_a_wrapper_is_never_named_from_its_screen() {
        // `cat` of a recording in the foreground, or the shell itself: the
        // screen shows Claude's live UI on every reading, for a minute.
        let claude = reading(Some("claude"), None);
        for res in [res_none(false), res_none(true)] {
            let mut t = IdentityTracker::new();
            assert!(!t.needs_screen(&res));
            for i in 0..60 {
                assert_eq!(t.observe_with_screen(s(i), &res, true, Some(&claude)), None);
            }
            assert_eq!(t.agent(), None);
            assert_eq!(t.evidence().screen_pending, None);
        }
        // A process named an agent is not renamed from the screen either.
        let mut t = IdentityTracker::new();
        t.observe(s(1), &res_agent("codex", 5), false);
        let mut with_codex_and_ssh = res_agent("codex", 5);
        with_codex_and_ssh.wrapper = res_ssh(40).wrapper;
        assert!(!t.needs_screen(&with_codex_and_ssh));
        assert!(!t.needs_screen(&res_ssh(40)), "named by its process");
        for i in 2..7 {
            t.observe_with_screen(s(i), &res_ssh(40), false, Some(&claude));
        }
        assert_eq!(t.agent(), Some("codex"));
        assert_eq!(t.evidence().screen_pending, None);
    }

    /// Claude named from the screen behind `ssh` (pid 40) at 1.5 s.
    fn named_claude() -> IdentityTracker {
        let mut t = IdentityTracker::new();
        let claude = reading(Some("claude"), None);
        for at in [0, 500, 1000, 1500] {
            t.observe_with_screen(ms(at), &res_ssh(40), false, Some(&claude));
        }
        assert_eq!(t.screen_named(), Some("claude"));
        t
    }

    #[test]
    fn dropped_only_after_its_ui_is_gone_longer_than_naming_took() {
        let mut t = named_claude();
        let ssh = res_ssh(40);
        let nothing = reading(None, Some(s(2)));
        // Gone on three readings within 10 s of silence: held.
        for at in [3, 6, 11] {
            assert_eq!(
                t.observe_with_screen(s(at), &ssh, false, Some(&nothing)),
                None
            );
        }
        assert_eq!(t.agent(), Some("claude"));
        assert_eq!(
            t.evidence().screen_absent,
            Some(ScreenAbsent {
                readings: 3,
                since: s(3)
            })
        );
        // Its UI back: the count starts again.
        let claude = reading(Some("claude"), Some(s(12)));
        assert_eq!(
            t.observe_with_screen(s(12), &ssh, false, Some(&claude)),
            None
        );
        assert_eq!(t.evidence().screen_absent, None);
        assert_eq!(t.evidence().agreeing, 1);
        let nothing = reading(None, Some(s(12)));
        for at in [14, 18] {
            assert_eq!(
                t.observe_with_screen(s(at), &ssh, false, Some(&nothing)),
                None
            );
        }
        // Three readings, 10 s silent since the first of them: dropped.
        let c = t
            .observe_with_screen(s(24), &ssh, false, Some(&nothing))
            .expect("dropped");
        assert_eq!(
            (c.from.as_deref(), c.to, c.reason),
            (Some("claude"), None, ChangeReason::ScreenGone)
        );
        assert_eq!(t.agent(), None);
    }

    #[test]
    fn a_pane_that_keeps_printing_without_the_ui_is_held_longer() {
        // An agent that prints its reply as lines (aider) shows no UI while
        // it streams: silence counts from the last output.
        let mut t = named_claude();
        let ssh = res_ssh(40);
        for at in (3..60).step_by(3) {
            let printing = reading(None, Some(s(at)));
            assert_eq!(
                t.observe_with_screen(s(at), &ssh, false, Some(&printing)),
                None,
                "{at}"
            );
        }
        assert_eq!(t.agent(), Some("claude"));
        // A minute without its UI drops it, printing or not.
        let c = t
            .observe_with_screen(s(63), &ssh, false, Some(&reading(None, Some(s(63)))))
            .expect("dropped");
        assert_eq!(c.reason, ChangeReason::ScreenGone);
    }

    #[test]
    fn held_while_its_own_rules_read_the_screen() {
        let mut t = named_claude();
        let by_rule = ScreenReading {
            sighting: Some(Sighting {
                agent: "claude".into(),
                by: "claude/working-footer".into(),
                by_rule: true,
            }),
            ambiguous: Vec::new(),
            last_output: None,
        };
        for at in 2..40 {
            assert_eq!(
                t.observe_with_screen(s(at), &res_ssh(40), false, Some(&by_rule)),
                None
            );
        }
        assert_eq!(t.agent(), Some("claude"));
        // The key stays the marker that named it.
        assert_eq!(
            t.evidence().matched.map(|m| m.key),
            Some("claude/screen:prompt".into())
        );
        // A rule never names an agent: only markers do.
        let mut t = IdentityTracker::new();
        for at in 0..10 {
            t.observe_with_screen(s(at), &res_ssh(40), false, Some(&by_rule));
        }
        assert_eq!(t.agent(), None);
    }

    #[test]
    fn the_wrappers_end_is_the_agents() {
        let mut t = named_claude();
        // Not read this time (the caller had no screen): held.
        assert_eq!(t.observe_with_screen(s(2), &res_ssh(40), false, None), None);
        // The shell holds the terminal again, prompt visible or not.
        let c = t
            .observe_with_screen(s(3), &res_none(true), false, None)
            .expect("dropped");
        assert_eq!(
            (c.from.as_deref(), c.to, c.reason),
            (Some("claude"), None, ChangeReason::WrapperGone)
        );
        // Another group without a wrapper (the user suspended ssh and runs
        // vim): the same.
        let mut t = named_claude();
        let c = t.observe(s(3), &res_none(false), false).expect("dropped");
        assert_eq!(c.reason, ChangeReason::WrapperGone);
    }

    #[test]
    fn a_process_wins_over_the_screen() {
        // Named from the screen behind `nix develop`, then seen as a
        // process: the same agent, now by its process.
        let mut t = named_claude();
        assert_eq!(t.observe(s(3), &res_agent("claude", 7), false), None);
        assert_eq!(t.evidence().identified_by, Some(IdentifiedBy::Process));
        assert_eq!(t.screen_named(), None);
        // Another agent's process switches as any process would.
        let mut t = named_claude();
        assert_eq!(t.observe(s(3), &res_agent("codex", 8), false), None);
        let c = t
            .observe(s(4), &res_agent("codex", 8), false)
            .expect("switch");
        assert_eq!(
            (c.from.as_deref(), c.to.as_deref()),
            (Some("claude"), Some("codex"))
        );
    }

    #[test]
    fn custom_thresholds() {
        let mut t = IdentityTracker::with_config(HysteresisConfig {
            commit_after: 1,
            drop_after_misses: 1,
            commit_strong_at_once: false,
            ..HysteresisConfig::default()
        });
        assert!(t.observe(s(1), &res_agent("amp", 5), false).is_some());
        assert!(t.observe(s(2), &res_none(false), false).is_some());
    }
}
