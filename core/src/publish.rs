//! What the daemon publishes for the status line: facts about each agent
//! pane, its window and session, and the whole server
//! ([`crate::fact::Fact`]), computed from the pane table as plain data and
//! diffed against what was published last, so the multiplexer only hears
//! changes. The tmux backend names each fact as a `@tend_*` user option
//! (`daemon/src/published.rs` has the table of names).
//!
//! A pane waiting on its usage limit (band `limited`, glyph `⧖`) carries
//! when the limit resets: [`PaneFact::ResetsAt`] (Unix seconds) and
//! [`PaneFact::Reset`] (`15:00`, `Tue 09:00`, in the user's zone);
//! [`GlobalFact::NextReset`] is the soonest of them,
//! [`GlobalFact::Limited`] how many panes are limited.

use std::collections::{BTreeMap, HashMap};

use crate::fact::{Fact, FactUpdate, GlobalFact, PaneFact, SessionFact, WindowFact};
use tend_attention::{self as attention, Band, Candidate};

/// One pane's published facts (input to the rollups).
#[derive(Debug, Clone, PartialEq)]
pub struct PaneRow {
    /// `%N`.
    pub pane: tend_protocol::PaneId,
    /// `@N`.
    pub window: tend_protocol::WindowId,
    /// `$N`.
    pub session: tend_protocol::SessionId,
    /// Session name.
    pub session_name: String,
    /// Agent id.
    pub agent: Option<String>,
    /// State.
    pub state: Option<tend_vocab::State>,
    /// Reason.
    pub reason: Option<tend_vocab::Reason>,
    /// Band.
    pub band: Option<Band>,
    /// Unix seconds the state was entered.
    pub since: Option<f64>,
    /// Marks shown next to the state: `stop pending`, the park's note,
    /// `snoozed`, a reporting agent's lifecycle word.
    pub marks: Option<String>,
    /// The exit code of an agent run that has exited, where known.
    pub exit_code: Option<i32>,
    /// The pane's project (`tend · main`), see [`crate::ProjectSource`].
    pub project: Option<String>,
    /// Waiting on its usage limit: Unix time it resets.
    pub resets_at: Option<i64>,
    /// The same as the user reads the time (`15:00`, `Tue 09:00`).
    pub reset: Option<String>,
}

impl PaneRow {
    /// The row as a jump candidate named `id`, in `session` (none when it
    /// has no band).
    pub fn candidate<'a>(&'a self, id: &'a str, session: &'a str) -> Option<Candidate<'a>> {
        Some(Candidate {
            pane: id,
            session,
            band: self.band?,
            reason: self.reason,
            since: self.since.unwrap_or(0.0),
        })
    }
}

/// One remote pane's facts for the global rollups (remote panes have no
/// local pane, window or session to carry options).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteRow {
    /// `build-box:%3`.
    pub id: String,
    /// The remote's name.
    pub host: String,
    /// `build-box:work`: the remote's session, named apart from local ones.
    pub session_name: String,
    /// Band (`None` while unreachable: no demand on old evidence).
    pub band: Option<Band>,
    /// Reason.
    pub reason: Option<tend_detector::Reason>,
    /// Unix seconds the state was entered.
    pub since: f64,
}

/// Everything about remotes that reaches the global options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemoteFacts {
    /// Their panes.
    pub rows: Vec<RemoteRow>,
    /// Remotes whose link is down.
    pub down: Vec<String>,
}

/// The summary with remotes: `3 agents need you · 1 on build-box`, and
/// `build-box unreachable` for a link that is down.
pub fn summary_with_remotes(demands: usize, quiet: usize, remote: &RemoteFacts) -> String {
    let mut parts: Vec<String> = Vec::new();
    let needs = attention::summary(demands, 0);
    if !needs.is_empty() {
        parts.push(needs);
    }
    let mut per_host: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &remote.rows {
        if r.band.is_some_and(|b| b.is_demand()) {
            *per_host.entry(r.host.as_str()).or_default() += 1;
        }
    }
    for (host, n) in per_host {
        parts.push(format!("{n} on {host}"));
    }
    let quiet = attention::summary(0, quiet);
    if !quiet.is_empty() {
        parts.push(quiet);
    }
    for host in &remote.down {
        parts.push(format!("{host} unreachable"));
    }
    parts.join(" · ")
}

/// A jump target as the `next` facts carry it: a local pane id
/// (`%3`) or a remote one (`build-box:%3`), else nothing.
///
/// The jump keys paste this value into the command they run (tmux takes
/// no format in a `-t` target, so the key expands it with `run-shell -C`,
/// which parses the result as a command). Only an id may get there: a
/// value of any other shape — which the feed and the config already keep
/// out — is dropped here too, the last step before tmux, and pushed on
/// `dropped` for the core to say.
pub fn jump_target(target: Option<&str>, dropped: &mut Vec<String>) -> String {
    let Some(t) = target else {
        return String::new();
    };
    let is_id = t.parse::<tend_protocol::PaneId>().is_ok() || crate::remote::split_id(t).is_some();
    if is_id {
        t.to_owned()
    } else {
        dropped.push(t.chars().take(80).collect());
        String::new()
    }
}

/// A glyph per band for compact status lines.
pub fn glyph(band: Band) -> &'static str {
    match band {
        Band::Blocked => "✖",
        Band::Waiting => "●",
        Band::Quiet => "…",
        Band::ReadyForReview => "✔",
        Band::Limited => "⧖",
        Band::Working => "◐",
        Band::Parked => "⏸",
        Band::Snoozed => "z",
        Band::Finished => "✓",
        Band::Idle => "○",
        Band::Exited => "·",
    }
}

/// Every fact for the current table, with its value.
/// Jump targets left out for not being pane ids are pushed onto `dropped`
/// (for the log).
pub fn compute(
    rows: &[PaneRow],
    remote: &RemoteFacts,
    dropped: &mut Vec<String>,
) -> BTreeMap<Fact, String> {
    let mut out = Facts::default();
    pane_facts(&mut out, rows);
    global_facts(&mut out, rows, remote);
    jump_facts(&mut out, rows, remote, dropped);
    out.0
}

/// The facts being built.
#[derive(Default)]
struct Facts(BTreeMap<Fact, String>);

impl Facts {
    fn pane(&mut self, pane: tend_protocol::PaneId, fact: PaneFact, value: String) {
        self.0.insert(Fact::Pane(pane, fact), value);
    }

    fn global(&mut self, fact: GlobalFact, value: String) {
        self.0.insert(Fact::Global(fact), value);
    }
}

/// Each agent pane's own options, and its window's and session's
/// rollups.
fn pane_facts(out: &mut Facts, rows: &[PaneRow]) {
    let mut windows: HashMap<tend_protocol::WindowId, Vec<Band>> = HashMap::new();
    let mut sessions: HashMap<tend_protocol::SessionId, Vec<Band>> = HashMap::new();
    let mut session_needs: HashMap<tend_protocol::SessionId, usize> = HashMap::new();
    for r in rows {
        let Some(agent) = &r.agent else { continue };
        let p = r.pane;
        out.pane(p, PaneFact::Agent, agent.clone());
        out.pane(
            p,
            PaneFact::State,
            r.state.map(|s| s.as_str().to_owned()).unwrap_or_default(),
        );
        out.pane(
            p,
            PaneFact::Reason,
            r.reason.map(|x| x.as_str().to_owned()).unwrap_or_default(),
        );
        if let Some(b) = r.band {
            out.pane(p, PaneFact::Band, b.as_str().to_owned());
            out.pane(p, PaneFact::Glyph, glyph(b).to_owned());
            windows.entry(r.window).or_default().push(b);
            sessions.entry(r.session).or_default().push(b);
            if b.is_demand() {
                *session_needs.entry(r.session).or_default() += 1;
            }
        }
        if let Some(s) = r.since {
            out.pane(p, PaneFact::Since, format!("{}", s as i64));
        }
        if let Some(m) = r.marks.as_ref().filter(|m| !m.is_empty()) {
            out.pane(p, PaneFact::Marks, m.clone());
        }
        if let Some(code) = r.exit_code {
            out.pane(p, PaneFact::ExitCode, code.to_string());
        }
        if let (Some(at), Some(text)) = (r.resets_at, &r.reset) {
            out.pane(p, PaneFact::ResetsAt, at.to_string());
            out.pane(p, PaneFact::Reset, text.clone());
        }
        // A directory's or a branch's name is nobody's typed text: the
        // backend escapes it ([`Fact::is_foreign_text`]).
        if let Some(proj) = r.project.as_deref().filter(|x| !x.is_empty()) {
            out.pane(p, PaneFact::Project, proj.to_owned());
        }
    }
    for (w, bands) in &windows {
        if let Some(b) = attention::rollup(bands) {
            let fact = |f| Fact::Window(*w, f);
            out.0.insert(fact(WindowFact::Band), b.as_str().to_owned());
            out.0.insert(fact(WindowFact::Glyph), glyph(b).to_owned());
        }
    }
    for (s, bands) in &sessions {
        let fact = |f| Fact::Session(*s, f);
        if let Some(b) = attention::rollup(bands) {
            out.0.insert(fact(SessionFact::Band), b.as_str().to_owned());
        }
        let needs = session_needs.get(s).copied().unwrap_or(0);
        out.0.insert(fact(SessionFact::Needs), needs.to_string());
    }
}

/// The server's counts, summary and band, remotes' panes included, and
/// its panes at their usage limit with the soonest reset.
fn global_facts(out: &mut Facts, rows: &[PaneRow], remote: &RemoteFacts) {
    let bands = bands(rows, remote);
    let (demands, quiet) = demands_and_quiet(&bands);
    out.global(GlobalFact::Needs, demands.to_string());
    out.global(GlobalFact::Quiet, quiet.to_string());
    let limited = rows
        .iter()
        .filter(|r| r.band == Some(Band::Limited))
        .count();
    let soonest = rows
        .iter()
        .filter(|r| r.band == Some(Band::Limited))
        .filter_map(|r| Some((r.resets_at?, r.reset.as_ref()?)))
        .min_by_key(|(at, _)| *at)
        .map(|(_, text)| text.clone());
    out.global(GlobalFact::Limited, limited.to_string());
    out.global(GlobalFact::NextReset, soonest.clone().unwrap_or_default());
    let mut summary = summary_with_remotes(demands, quiet, remote);
    if let Some(l) = attention::limited_sentence(limited, soonest.as_deref()) {
        if !summary.is_empty() {
            summary.push_str(" · ");
        }
        summary.push_str(&l);
    }
    out.global(GlobalFact::Summary, summary);
    out.global(
        GlobalFact::ServerBand,
        attention::rollup(&bands)
            .map(|b| b.as_str().to_owned())
            .unwrap_or_default(),
    );
}

/// Jump targets. Per pane: where "next" goes from that pane (so tmux's
/// key bound to `switch-client -t '#{@tend_next}'` cycles without spawning
/// a process); globally: the first target.
fn jump_facts(out: &mut Facts, rows: &[PaneRow], remote: &RemoteFacts, dropped: &mut Vec<String>) {
    let pane_ids: Vec<String> = rows.iter().map(|r| r.pane.to_string()).collect();
    let cands = candidates(rows, &pane_ids, remote);
    let order = attention::attention_order(&cands);
    let working = attention::working_order(&cands);
    let next = attention::next_after(&order, None);
    out.global(GlobalFact::Next, jump_target(next, dropped));
    let next = attention::next_after(&working, None);
    out.global(GlobalFact::NextWorking, jump_target(next, dropped));
    for (r, id) in rows.iter().zip(&pane_ids) {
        let p = r.pane;
        let next = attention::next_after(&order, Some(id));
        out.pane(p, PaneFact::Next, jump_target(next, dropped));
        let next = attention::next_after(&working, Some(id));
        out.pane(p, PaneFact::NextWorking, jump_target(next, dropped));
        let in_session: Vec<&str> = order
            .iter()
            .copied()
            .filter(|p| {
                cands
                    .iter()
                    .any(|c| c.pane == *p && c.session == r.session_name)
            })
            .collect();
        let next = attention::next_after(&in_session, Some(id));
        out.pane(p, PaneFact::NextSession, jump_target(next, dropped));
    }
}

/// The panes the jump order chooses from: this machine's (named by
/// `pane_ids`) and the remotes'.
fn candidates<'a>(
    rows: &'a [PaneRow],
    pane_ids: &'a [String],
    remote: &'a RemoteFacts,
) -> Vec<Candidate<'a>> {
    rows.iter()
        .zip(pane_ids)
        .filter_map(|(r, id)| {
            Some(Candidate {
                pane: id.as_str(),
                session: r.session_name.as_str(),
                band: r.band?,
                reason: r.reason,
                since: r.since.unwrap_or(0.0),
            })
        })
        .chain(remote.rows.iter().filter_map(|r| {
            Some(Candidate {
                pane: r.id.as_str(),
                session: r.session_name.as_str(),
                band: r.band?,
                reason: r.reason,
                since: r.since,
            })
        }))
        .collect()
}

/// Whether `updates` may wait for the next listing (up to a second)
/// instead of starting a multiplexer process of their own: agents starting
/// work, or working on. Nothing anyone must act on waits: an update that
/// shows a pane in a band other than `working` (a dialog, a finished turn,
/// a quiet agent, an exit), gives an exit code, changes a count of agents
/// that need the user, or withdraws a fact goes out at once.
pub fn can_wait(updates: &[FactUpdate]) -> bool {
    updates.iter().all(|u| {
        let Some(value) = &u.value else {
            return false;
        };
        match u.fact {
            Fact::Pane(_, PaneFact::Band) => value == Band::Working.as_str(),
            Fact::Pane(_, PaneFact::State) => value == tend_vocab::State::Working.as_str(),
            Fact::Global(GlobalFact::Needs | GlobalFact::Quiet | GlobalFact::Summary)
            | Fact::Session(_, SessionFact::Needs) => false,
            Fact::Global(GlobalFact::Limited | GlobalFact::NextReset) => false,
            // How an agent ended arrives after the exit itself: `tend get`
            // has it at once, so the pane's facts must too.
            Fact::Pane(_, PaneFact::ExitCode) => false,
            _ => true,
        }
    })
}

/// The updates that turn `old` into `new` (sets for new or changed values,
/// in `new`'s order, then unsets for vanished facts, in `old`'s order).
/// Both maps are walked once side by side, allocating only for what
/// changed: the daemon diffs every fact of every pane at each change.
pub fn diff(old: &BTreeMap<Fact, String>, new: &BTreeMap<Fact, String>) -> Vec<FactUpdate> {
    let mut ups = Vec::new();
    let mut gone = Vec::new();
    let mut prev = old.iter().peekable();
    for (fact, value) in new {
        while let Some((f, _)) = prev.next_if(|(f, _)| *f < fact) {
            gone.push(FactUpdate::unset(*f));
        }
        match prev.next_if(|(f, _)| *f == fact) {
            Some((_, v)) if v == value => {}
            _ => ups.push(FactUpdate::set(*fact, value.clone())),
        }
    }
    gone.extend(prev.map(|(f, _)| FactUpdate::unset(*f)));
    ups.extend(gone);
    ups
}

/// Every band shown, local panes and remote ones: what the counts and the
/// worst band are made of (the facts here, the zellij plugin's status,
/// `tend status`).
pub(crate) fn bands(rows: &[PaneRow], remote: &RemoteFacts) -> Vec<Band> {
    rows.iter()
        .filter_map(|r| r.band)
        .chain(remote.rows.iter().filter_map(|r| r.band))
        .collect()
}

/// How many of `bands` need the user, and how many are quiet.
pub(crate) fn demands_and_quiet(bands: &[Band]) -> (usize, usize) {
    let demands = bands.iter().filter(|b| b.is_demand()).count();
    let quiet = bands.iter().filter(|b| **b == Band::Quiet).count();
    (demands, quiet)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use tend_detector::Reason;
    use tend_protocol::{PaneId, SessionId, WindowId};

    pub(crate) fn row(
        p: u32,
        w: u32,
        s: u32,
        band: Band,
        reason: Option<Reason>,
        since: f64,
    ) -> PaneRow {
        PaneRow {
            pane: PaneId(p),
            window: WindowId(w),
            session: SessionId(s),
            session_name: format!("s{s}"),
            agent: Some("claude".into()),
            state: Some(tend_vocab::State::Waiting),
            reason,
            band: Some(band),
            since: Some(since),
            marks: None,
            exit_code: None,
            project: None,
            resets_at: None,
            reset: None,
        }
    }

    #[test]
    fn a_jump_target_that_is_no_pane_id_is_left_out_and_noted() {
        let mut dropped = Vec::new();
        assert_eq!(jump_target(Some("%3"), &mut dropped), "%3");
        assert_eq!(jump_target(Some("box:%3"), &mut dropped), "box:%3");
        assert_eq!(jump_target(None, &mut dropped), "");
        assert!(dropped.is_empty());
        assert_eq!(jump_target(Some("x;kill-server"), &mut dropped), "");
        assert_eq!(dropped, ["x;kill-server"]);
    }

    #[test]
    fn rollups_counts_and_jumps() {
        let rows = vec![
            row(1, 1, 1, Band::Waiting, Some(Reason::Question), 10.0),
            row(2, 1, 1, Band::Working, None, 5.0),
            row(3, 2, 2, Band::Waiting, Some(Reason::Approval), 20.0),
            row(4, 2, 2, Band::Quiet, None, 1.0),
        ];
        let set = compute(&rows, &RemoteFacts::default(), &mut Vec::new());
        let get = |f: Fact| set.get(&f).cloned();
        assert_eq!(get(Fact::Global(GlobalFact::Needs)).as_deref(), Some("2"));
        assert_eq!(get(Fact::Global(GlobalFact::Quiet)).as_deref(), Some("1"));
        assert_eq!(
            get(Fact::Global(GlobalFact::Summary)).as_deref(),
            Some("2 agents need you · 1 agent has gone quiet")
        );
        // Approval before question.
        assert_eq!(get(Fact::Global(GlobalFact::Next)).as_deref(), Some("%3"));
        assert_eq!(
            get(Fact::Pane(PaneId(3), PaneFact::Next)).as_deref(),
            Some("%1")
        );
        assert_eq!(
            get(Fact::Pane(PaneId(1), PaneFact::Next)).as_deref(),
            Some("%4")
        );
        assert_eq!(
            get(Fact::Pane(PaneId(2), PaneFact::NextSession)).as_deref(),
            Some("%1")
        );
        assert_eq!(
            get(Fact::Window(WindowId(1), WindowFact::Band)).as_deref(),
            Some("waiting")
        );
        assert_eq!(
            get(Fact::Session(SessionId(2), SessionFact::Needs)).as_deref(),
            Some("1")
        );
        assert_eq!(
            get(Fact::Global(GlobalFact::NextWorking)).as_deref(),
            Some("%4")
        );
        assert_eq!(
            get(Fact::Global(GlobalFact::ServerBand)).as_deref(),
            Some("waiting")
        );
    }

    #[test]
    fn remotes_join_the_counts_and_jumps() {
        let rows = vec![row(1, 1, 1, Band::Waiting, Some(Reason::Question), 10.0)];
        let remote = RemoteFacts {
            rows: vec![
                RemoteRow {
                    id: "build-box:%3".into(),
                    host: "build-box".into(),
                    session_name: "build-box:work".into(),
                    band: Some(Band::Waiting),
                    reason: Some(Reason::Approval),
                    since: 20.0,
                },
                RemoteRow {
                    id: "build-box:%4".into(),
                    host: "build-box".into(),
                    session_name: "build-box:work".into(),
                    band: Some(Band::Working),
                    reason: None,
                    since: 20.0,
                },
            ],
            down: vec!["vm".into()],
        };
        let set = compute(&rows, &remote, &mut Vec::new());
        let get = |f: Fact| set.get(&f).cloned();
        assert_eq!(get(Fact::Global(GlobalFact::Needs)).as_deref(), Some("2"));
        assert_eq!(
            get(Fact::Global(GlobalFact::Summary)).as_deref(),
            Some("2 agents need you · 1 on build-box · vm unreachable")
        );
        // Approval (remote) before question (local).
        assert_eq!(
            get(Fact::Global(GlobalFact::Next)).as_deref(),
            Some("build-box:%3")
        );
        assert_eq!(
            get(Fact::Pane(PaneId(1), PaneFact::Next)).as_deref(),
            Some("build-box:%3")
        );
        assert_eq!(
            get(Fact::Global(GlobalFact::NextWorking)).as_deref(),
            Some("build-box:%4")
        );
        // An unreachable remote alone still says so.
        let down = RemoteFacts {
            rows: vec![],
            down: vec!["vm".into()],
        };
        let set = compute(&[], &down, &mut Vec::new());
        assert_eq!(
            set.get(&Fact::Global(GlobalFact::Summary))
                .cloned()
                .as_deref(),
            Some("vm unreachable")
        );
    }

    #[test]
    fn only_work_starting_or_going_on_waits_for_the_listing() {
        let p = PaneId(1);
        let w = WindowId(1);
        let working = vec![
            FactUpdate::set(Fact::Pane(p, PaneFact::State), "working"),
            FactUpdate::set(Fact::Pane(p, PaneFact::Band), "working"),
            FactUpdate::set(Fact::Pane(p, PaneFact::Glyph), "◐"),
            FactUpdate::set(Fact::Pane(p, PaneFact::Since), "1796180000"),
            FactUpdate::set(Fact::Window(w, WindowFact::Band), "working"),
            FactUpdate::set(Fact::Global(GlobalFact::NextWorking), "%1"),
            FactUpdate::set(Fact::Global(GlobalFact::ServerBand), "working"),
        ];
        assert!(can_wait(&working));
        let urgent = [
            FactUpdate::set(Fact::Pane(p, PaneFact::State), "waiting"),
            FactUpdate::set(Fact::Pane(p, PaneFact::Band), "ready_for_review"),
            FactUpdate::set(Fact::Pane(p, PaneFact::Band), "quiet"),
            FactUpdate::set(Fact::Global(GlobalFact::Needs), "0"),
            FactUpdate::set(Fact::Global(GlobalFact::Summary), ""),
            FactUpdate::set(Fact::Session(SessionId(0), SessionFact::Needs), "1"),
            FactUpdate::unset(Fact::Pane(p, PaneFact::Next)),
            FactUpdate::set(Fact::Pane(p, PaneFact::ExitCode), "0"),
        ];
        for u in urgent {
            let mut ups = working.clone();
            ups.push(u.clone());
            assert!(!can_wait(&ups), "{u:?}");
        }
    }

    #[test]
    fn diff_sets_and_unsets() {
        let mut a = BTreeMap::new();
        a.insert(Fact::Global(GlobalFact::Needs), "1".to_owned());
        a.insert(Fact::Pane(PaneId(1), PaneFact::State), "working".to_owned());
        let mut b = BTreeMap::new();
        b.insert(Fact::Global(GlobalFact::Needs), "2".to_owned());
        let d = diff(&a, &b);
        assert_eq!(
            d,
            vec![
                FactUpdate::set(Fact::Global(GlobalFact::Needs), "2"),
                FactUpdate::unset(Fact::Pane(PaneId(1), PaneFact::State)),
            ]
        );
        assert!(diff(&b, &b).is_empty());
        // Keys on both sides of the one kept, at several scopes.
        let old: BTreeMap<_, _> = [
            (Fact::Global(GlobalFact::Needs), "1".to_owned()),
            (Fact::Global(GlobalFact::Limited), "3".to_owned()),
            (Fact::Pane(PaneId(2), PaneFact::State), "idle".to_owned()),
            (Fact::Pane(PaneId(9), PaneFact::State), "idle".to_owned()),
        ]
        .into();
        let new: BTreeMap<_, _> = [
            (Fact::Global(GlobalFact::Quiet), "2".to_owned()),
            (Fact::Global(GlobalFact::Limited), "3".to_owned()),
            (Fact::Pane(PaneId(2), PaneFact::State), "working".to_owned()),
        ]
        .into();
        assert_eq!(
            diff(&old, &new),
            vec![
                FactUpdate::set(Fact::Global(GlobalFact::Quiet), "2"),
                FactUpdate::set(Fact::Pane(PaneId(2), PaneFact::State), "working"),
                FactUpdate::unset(Fact::Global(GlobalFact::Needs)),
                FactUpdate::unset(Fact::Pane(PaneId(9), PaneFact::State)),
            ]
        );
    }
}
