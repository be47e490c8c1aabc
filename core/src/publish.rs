//! What the daemon publishes into tmux: `@tend_*` options at pane, window,
//! session and global scope, computed from the pane table as plain data and
//! diffed against what was published last, so tmux only hears changes.
//!
//! Names never repeat across scopes (except the `@tend_next*` jump targets,
//! where the pane's value is meant to win): a format looks options up pane
//! first, so a window rollup named like a pane option would be shadowed.
//!
//! | scope | options |
//! |---|---|
//! | pane | `@tend_agent`, `@tend_state`, `@tend_reason`, `@tend_band`, `@tend_glyph`, `@tend_since`, `@tend_marks`, `@tend_exit_code`, `@tend_project`, `@tend_resets_at`, `@tend_reset`, `@tend_next`, `@tend_next_session`, `@tend_next_working` |
//! | window | `@tend_window_band`, `@tend_window_glyph` |
//! | session | `@tend_session_band`, `@tend_session_needs` |
//! | global | `@tend_needs`, `@tend_quiet`, `@tend_limited`, `@tend_summary`, `@tend_server_band`, `@tend_next_reset`, `@tend_next`, `@tend_next_working` |
//!
//! A pane waiting on its usage limit (`@tend_band` `limited`, glyph `⧖`)
//! carries when the limit resets: `@tend_resets_at` (Unix seconds) and
//! `@tend_reset` (`15:00`, `Tue 09:00`, in the user's zone);
//! `@tend_next_reset` is the soonest of them (`#{tend_next_reset}` in a
//! status format), `@tend_limited` how many panes are limited.

use std::collections::{BTreeMap, HashMap};

use crate::pane::{OptionUpdate, Scope};
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

/// A jump target as the `@tend_next*` options carry it: a local pane id
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

/// The full option set for the current table. Keys are `(scope, name)`.
/// Jump targets left out for not being pane ids are pushed onto `dropped`
/// (for the log).
pub fn compute(
    rows: &[PaneRow],
    remote: &RemoteFacts,
    dropped: &mut Vec<String>,
) -> BTreeMap<(Scope, String), String> {
    let mut out = Options::default();
    pane_options(&mut out, rows);
    global_options(&mut out, rows, remote);
    jump_options(&mut out, rows, remote, dropped);
    out.0
}

/// The options being built, by scope and name.
#[derive(Default)]
struct Options(BTreeMap<(Scope, String), String>);

impl Options {
    fn put(&mut self, scope: Scope, name: &str, value: String) {
        self.0.insert((scope, name.to_owned()), value);
    }
}

/// Each agent pane's own options, and its window's and session's
/// rollups.
fn pane_options(out: &mut Options, rows: &[PaneRow]) {
    let mut windows: HashMap<tend_protocol::WindowId, Vec<Band>> = HashMap::new();
    let mut sessions: HashMap<tend_protocol::SessionId, Vec<Band>> = HashMap::new();
    let mut session_needs: HashMap<tend_protocol::SessionId, usize> = HashMap::new();
    for r in rows {
        let Some(agent) = &r.agent else { continue };
        let p = Scope::Pane(r.pane);
        out.put(p, "@tend_agent", agent.clone());
        out.put(
            p,
            "@tend_state",
            r.state.map(|s| s.as_str().to_owned()).unwrap_or_default(),
        );
        out.put(
            p,
            "@tend_reason",
            r.reason.map(|x| x.as_str().to_owned()).unwrap_or_default(),
        );
        if let Some(b) = r.band {
            out.put(p, "@tend_band", b.as_str().to_owned());
            out.put(p, "@tend_glyph", glyph(b).to_owned());
            windows.entry(r.window).or_default().push(b);
            sessions.entry(r.session).or_default().push(b);
            if b.is_demand() {
                *session_needs.entry(r.session).or_default() += 1;
            }
        }
        if let Some(s) = r.since {
            out.put(p, "@tend_since", format!("{}", s as i64));
        }
        if let Some(m) = r.marks.as_ref().filter(|m| !m.is_empty()) {
            out.put(p, "@tend_marks", m.clone());
        }
        if let Some(code) = r.exit_code {
            out.put(p, "@tend_exit_code", code.to_string());
        }
        if let (Some(at), Some(text)) = (r.resets_at, &r.reset) {
            out.put(p, "@tend_resets_at", at.to_string());
            out.put(p, "@tend_reset", text.clone());
        }
        // A directory's or a branch's name is nobody's typed text: the
        // backend escapes it ([`OptionUpdate::foreign`]).
        if let Some(proj) = r.project.as_deref().filter(|x| !x.is_empty()) {
            out.put(p, "@tend_project", proj.to_owned());
        }
    }
    for (w, bands) in &windows {
        if let Some(b) = attention::rollup(bands) {
            let w = Scope::Window(*w);
            out.put(w, "@tend_window_band", b.as_str().to_owned());
            out.put(w, "@tend_window_glyph", glyph(b).to_owned());
        }
    }
    for (s, bands) in &sessions {
        let scope = Scope::Session(*s);
        if let Some(b) = attention::rollup(bands) {
            out.put(scope, "@tend_session_band", b.as_str().to_owned());
        }
        let needs = session_needs.get(s).copied().unwrap_or(0);
        out.put(scope, "@tend_session_needs", needs.to_string());
    }
}

/// The server's counts, summary and band, remotes' panes included, and
/// its panes at their usage limit with the soonest reset.
fn global_options(out: &mut Options, rows: &[PaneRow], remote: &RemoteFacts) {
    let bands = bands(rows, remote);
    let (demands, quiet) = demands_and_quiet(&bands);
    out.put(Scope::Global, "@tend_needs", demands.to_string());
    out.put(Scope::Global, "@tend_quiet", quiet.to_string());
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
    out.put(Scope::Global, "@tend_limited", limited.to_string());
    out.put(
        Scope::Global,
        "@tend_next_reset",
        soonest.clone().unwrap_or_default(),
    );
    let mut summary = summary_with_remotes(demands, quiet, remote);
    if let Some(l) = attention::limited_sentence(limited, soonest.as_deref()) {
        if !summary.is_empty() {
            summary.push_str(" · ");
        }
        summary.push_str(&l);
    }
    out.put(Scope::Global, "@tend_summary", summary);
    out.put(
        Scope::Global,
        "@tend_server_band",
        attention::rollup(&bands)
            .map(|b| b.as_str().to_owned())
            .unwrap_or_default(),
    );
}

/// Jump targets. Per pane: where "next" goes from that pane (so a key
/// bound to `switch-client -t '#{@tend_next}'` cycles without spawning a
/// process); globally: the first target.
fn jump_options(
    out: &mut Options,
    rows: &[PaneRow],
    remote: &RemoteFacts,
    dropped: &mut Vec<String>,
) {
    let pane_ids: Vec<String> = rows.iter().map(|r| r.pane.to_string()).collect();
    let cands = candidates(rows, &pane_ids, remote);
    let order = attention::attention_order(&cands);
    let working = attention::working_order(&cands);
    let next = attention::next_after(&order, None);
    out.put(Scope::Global, "@tend_next", jump_target(next, dropped));
    let next = attention::next_after(&working, None);
    out.put(
        Scope::Global,
        "@tend_next_working",
        jump_target(next, dropped),
    );
    for (r, id) in rows.iter().zip(&pane_ids) {
        let p = Scope::Pane(r.pane);
        let next = attention::next_after(&order, Some(id));
        out.put(p, "@tend_next", jump_target(next, dropped));
        let next = attention::next_after(&working, Some(id));
        out.put(p, "@tend_next_working", jump_target(next, dropped));
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
        out.put(p, "@tend_next_session", jump_target(next, dropped));
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
/// instead of starting a tmux process of their own: agents starting work,
/// or working on. Nothing anyone must act on waits: an update that shows a
/// pane in a band other than `working` (a dialog, a finished turn, a quiet
/// agent, an exit), gives an exit code, changes a count of agents that
/// need the user, or removes an option goes out at once.
pub fn can_wait(updates: &[OptionUpdate]) -> bool {
    updates.iter().all(|u| {
        let Some(value) = &u.value else {
            return false;
        };
        match u.name.as_str() {
            "@tend_band" => value == Band::Working.as_str(),
            "@tend_state" => value == "working",
            "@tend_needs" | "@tend_quiet" | "@tend_summary" | "@tend_session_needs" => false,
            "@tend_limited" | "@tend_next_reset" => false,
            // How an agent ended arrives after the exit itself: `tend get`
            // has it at once, so the pane's options must too.
            "@tend_exit_code" => false,
            _ => true,
        }
    })
}

/// The updates that turn `old` into `new` (sets for new or changed values,
/// in `new`'s order, then unsets for vanished keys, in `old`'s order).
/// Both maps are walked once side by side, allocating only for what
/// changed: the daemon diffs every option of every pane at each change.
pub fn diff(
    old: &BTreeMap<(Scope, String), String>,
    new: &BTreeMap<(Scope, String), String>,
) -> Vec<OptionUpdate> {
    let mut ups = Vec::new();
    let mut gone = Vec::new();
    let mut prev = old.iter().peekable();
    for ((scope, name), value) in new {
        let key = (*scope, name.as_str());
        while let Some(((s, n), _)) = prev.next_if(|((s, n), _)| (*s, n.as_str()) < key) {
            gone.push(OptionUpdate::unset(*s, n.clone()));
        }
        match prev.next_if(|((s, n), _)| (*s, n.as_str()) == key) {
            Some((_, v)) if v == value => {}
            _ => ups.push(OptionUpdate::set(*scope, name.clone(), value.clone())),
        }
    }
    gone.extend(prev.map(|((s, n), _)| OptionUpdate::unset(*s, n.clone())));
    ups.extend(gone);
    ups
}

/// Every band shown, local panes and remote ones: what the counts and the
/// worst band are made of (the options here, the zellij plugin's status,
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
        let get = |s: Scope, n: &str| set.get(&(s, n.to_owned())).cloned();
        assert_eq!(get(Scope::Global, "@tend_needs").as_deref(), Some("2"));
        assert_eq!(get(Scope::Global, "@tend_quiet").as_deref(), Some("1"));
        assert_eq!(
            get(Scope::Global, "@tend_summary").as_deref(),
            Some("2 agents need you · 1 agent has gone quiet")
        );
        // Approval before question.
        assert_eq!(get(Scope::Global, "@tend_next").as_deref(), Some("%3"));
        assert_eq!(
            get(Scope::Pane(PaneId(3)), "@tend_next").as_deref(),
            Some("%1")
        );
        assert_eq!(
            get(Scope::Pane(PaneId(1)), "@tend_next").as_deref(),
            Some("%4")
        );
        assert_eq!(
            get(Scope::Pane(PaneId(2)), "@tend_next_session").as_deref(),
            Some("%1")
        );
        assert_eq!(
            get(Scope::Window(WindowId(1)), "@tend_window_band").as_deref(),
            Some("waiting")
        );
        assert_eq!(
            get(Scope::Session(SessionId(2)), "@tend_session_needs").as_deref(),
            Some("1")
        );
        assert_eq!(
            get(Scope::Global, "@tend_next_working").as_deref(),
            Some("%4")
        );
        assert_eq!(
            get(Scope::Global, "@tend_server_band").as_deref(),
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
        let get = |s: Scope, n: &str| set.get(&(s, n.to_owned())).cloned();
        assert_eq!(get(Scope::Global, "@tend_needs").as_deref(), Some("2"));
        assert_eq!(
            get(Scope::Global, "@tend_summary").as_deref(),
            Some("2 agents need you · 1 on build-box · vm unreachable")
        );
        // Approval (remote) before question (local).
        assert_eq!(
            get(Scope::Global, "@tend_next").as_deref(),
            Some("build-box:%3")
        );
        assert_eq!(
            get(Scope::Pane(PaneId(1)), "@tend_next").as_deref(),
            Some("build-box:%3")
        );
        assert_eq!(
            get(Scope::Global, "@tend_next_working").as_deref(),
            Some("build-box:%4")
        );
        // An unreachable remote alone still says so.
        let down = RemoteFacts {
            rows: vec![],
            down: vec!["vm".into()],
        };
        let set = compute(&[], &down, &mut Vec::new());
        assert_eq!(
            set.get(&(Scope::Global, "@tend_summary".to_owned()))
                .cloned()
                .as_deref(),
            Some("vm unreachable")
        );
    }

    #[test]
    fn only_work_starting_or_going_on_waits_for_the_listing() {
        let p = Scope::Pane(PaneId(1));
        let w = Scope::Window(WindowId(1));
        let working = vec![
            OptionUpdate::set(p, "@tend_state", "working"),
            OptionUpdate::set(p, "@tend_band", "working"),
            OptionUpdate::set(p, "@tend_glyph", "◐"),
            OptionUpdate::set(p, "@tend_since", "1796180000"),
            OptionUpdate::set(w, "@tend_window_band", "working"),
            OptionUpdate::set(Scope::Global, "@tend_next_working", "%1"),
            OptionUpdate::set(Scope::Global, "@tend_server_band", "working"),
        ];
        assert!(can_wait(&working));
        let urgent = [
            OptionUpdate::set(p, "@tend_state", "waiting"),
            OptionUpdate::set(p, "@tend_band", "ready_for_review"),
            OptionUpdate::set(p, "@tend_band", "quiet"),
            OptionUpdate::set(Scope::Global, "@tend_needs", "0"),
            OptionUpdate::set(Scope::Global, "@tend_summary", ""),
            OptionUpdate::set(Scope::Session(SessionId(0)), "@tend_session_needs", "1"),
            OptionUpdate::unset(p, "@tend_next"),
            OptionUpdate::set(p, "@tend_exit_code", "0"),
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
        a.insert((Scope::Global, "@tend_needs".to_owned()), "1".to_owned());
        a.insert(
            (Scope::Pane(PaneId(1)), "@tend_state".to_owned()),
            "working".to_owned(),
        );
        let mut b = BTreeMap::new();
        b.insert((Scope::Global, "@tend_needs".to_owned()), "2".to_owned());
        let d = diff(&a, &b);
        assert_eq!(
            d,
            vec![
                OptionUpdate::set(Scope::Global, "@tend_needs", "2"),
                OptionUpdate::unset(Scope::Pane(PaneId(1)), "@tend_state"),
            ]
        );
        assert!(diff(&b, &b).is_empty());
        // Keys on both sides of the one kept, at several scopes.
        let key = |s: Scope, n: &str| (s, n.to_owned());
        let old: BTreeMap<_, _> = [
            (key(Scope::Global, "@tend_a"), "1".to_owned()),
            (key(Scope::Global, "@tend_c"), "3".to_owned()),
            (
                key(Scope::Pane(PaneId(2)), "@tend_state"),
                "idle".to_owned(),
            ),
            (
                key(Scope::Pane(PaneId(9)), "@tend_state"),
                "idle".to_owned(),
            ),
        ]
        .into();
        let new: BTreeMap<_, _> = [
            (key(Scope::Global, "@tend_b"), "2".to_owned()),
            (key(Scope::Global, "@tend_c"), "3".to_owned()),
            (
                key(Scope::Pane(PaneId(2)), "@tend_state"),
                "working".to_owned(),
            ),
        ]
        .into();
        assert_eq!(
            diff(&old, &new),
            vec![
                OptionUpdate::set(Scope::Global, "@tend_b", "2"),
                OptionUpdate::set(Scope::Pane(PaneId(2)), "@tend_state", "working"),
                OptionUpdate::unset(Scope::Global, "@tend_a"),
                OptionUpdate::unset(Scope::Pane(PaneId(9)), "@tend_state"),
            ]
        );
    }
}
