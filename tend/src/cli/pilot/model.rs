//! The fleet view's pure parts: which rows, in what order, and the words
//! on them. No terminal, no socket, no clock (the time is passed in).

use std::collections::HashMap;

use tend_attention::{self as attention, Candidate};
use tend_vocab::{Band, PaneBand, Reason};

use tend_protocol::PaneView;

/// Every band, in the attention crate's order (most urgent first).
pub const BANDS: [Band; 11] = [
    Band::Blocked,
    Band::Waiting,
    Band::Quiet,
    Band::ReadyForReview,
    Band::Limited,
    Band::Working,
    Band::Parked,
    Band::Snoozed,
    Band::Finished,
    Band::Idle,
    Band::Exited,
];

/// The filter key of each band, in [`BANDS`] order: `1` blocked … `0`
/// exited, and `l` for the limited band (added later: the digits kept
/// their bands).
pub const BAND_KEYS: [char; 11] = ['1', '2', '3', '4', 'l', '5', '6', '7', '8', '9', '0'];

/// A band's short name for people.
pub fn band_label(b: Band) -> &'static str {
    match b {
        Band::ReadyForReview => "ready for review",
        other => other.as_str(),
    }
}

/// The pane's agent's band (none for a remote while unreachable).
fn band_of(p: &PaneView) -> Option<Band> {
    p.band.and_then(PaneBand::agent)
}

/// The group a row is shown in: a band's index in [`BANDS`], or
/// `BANDS.len()` for a pane with no band (a remote while unreachable).
pub fn group_of(p: &PaneView) -> usize {
    band_of(p)
        .and_then(|b| BANDS.iter().position(|x| *x == b))
        .unwrap_or(BANDS.len())
}

/// The rows shown: agent panes only, grouped by band in the attention
/// order, and within a band as the status line's jump key orders them
/// (approval, error, question, prompt; the longest wait first), the
/// others the longest in their state first.
pub fn order(panes: &[PaneView]) -> Vec<usize> {
    let shown: Vec<usize> = (0..panes.len())
        .filter(|&i| panes[i].agent.is_some())
        .collect();
    let cands: Vec<Candidate<'_>> = shown
        .iter()
        .filter_map(|&i| {
            let p = &panes[i];
            Some(Candidate {
                pane: p.pane.as_str(),
                session: p.session.as_str(),
                band: band_of(p)?,
                reason: p.reason,
                since: p.since.unwrap_or(f64::MAX),
            })
        })
        .collect();
    let rank: HashMap<&str, usize> = attention::attention_order(&cands)
        .into_iter()
        .enumerate()
        .map(|(i, p)| (p, i))
        .collect();
    let mut out = shown;
    out.sort_by(|&a, &b| {
        let (pa, pb) = (&panes[a], &panes[b]);
        let ra = rank.get(pa.pane.as_str()).copied().unwrap_or(usize::MAX);
        let rb = rank.get(pb.pane.as_str()).copied().unwrap_or(usize::MAX);
        group_of(pa)
            .cmp(&group_of(pb))
            .then(ra.cmp(&rb))
            .then(
                pa.since
                    .unwrap_or(f64::MAX)
                    .total_cmp(&pb.since.unwrap_or(f64::MAX)),
            )
            .then(pa.pane.cmp(&pb.pane))
    });
    out
}

/// How many agent rows each band holds, in [`BANDS`] order.
pub fn counts(panes: &[PaneView]) -> [usize; 11] {
    let mut n = [0; 11];
    for p in panes.iter().filter(|p| p.agent.is_some()) {
        if let Some(i) = BANDS.iter().position(|b| Some(*b) == band_of(p)) {
            n[i] += 1;
        }
    }
    n
}

/// The footer's sentences, kept apart as on the status line: how many
/// agents need you, how many have gone quiet, how many wait on their usage
/// limit (and when the first resets, in the zone `offset` seconds east of
/// UTC, counting down from `now`).
pub fn sentences(panes: &[PaneView], now: f64, offset: i32) -> Vec<String> {
    let c = counts(panes);
    let demands: usize = BANDS
        .iter()
        .zip(c)
        .filter(|(b, _)| b.is_demand())
        .map(|(_, n)| n)
        .sum();
    let quiet = c[2];
    let limited = c[4];
    let soonest = panes
        .iter()
        .filter(|p| band_of(p) == Some(Band::Limited))
        .filter_map(|p| p.resets_at)
        .min()
        .map(|at| {
            format!(
                "{} (in {})",
                tend_detector::limit::local_clock(at, now as i64, offset),
                tend_detector::limit::countdown(at - now as i64)
            )
        });
    [
        attention::demand_sentence(demands),
        attention::quiet_sentence(quiet),
        attention::limited_sentence(limited, soonest.as_deref()),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A length of time, short: `12s`, `3m`, `2h`, `2h 5m`, `3d`.
pub fn span(secs: f64) -> String {
    let s = if secs.is_finite() && secs > 0.0 {
        secs as u64
    } else {
        0
    };
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 if (s % 3600) / 60 == 0 => format!("{}h", s / 3600),
        3600..=86_399 => format!("{}h {}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d", s / 86_400),
    }
}

/// The reason badge: approval, question, error and a usage limit print
/// one.
pub fn badge(p: &PaneView) -> Option<&'static str> {
    match p.reason? {
        r @ (Reason::Approval | Reason::Question | Reason::Error | Reason::Limit) => {
            Some(r.as_str())
        }
        Reason::Prompt => None,
    }
}

/// The row's clock, in the words of its band: `waiting 3m`,
/// `quiet · 12m`, `parked: <note>`, `snoozed · 25m left`, and for a usage
/// limit the time to its reset, counting down: `resets in 2h 14m`.
pub fn clock(p: &PaneView, now: f64) -> String {
    let age = p.since.map(|s| span(now - s));
    let age = age.as_deref().unwrap_or("");
    match band_of(p) {
        Some(Band::Parked) => match p.note.as_deref().map(|n| sanitize(n, 60)) {
            Some(n) if !n.is_empty() => format!("parked: {n}"),
            _ => "parked".into(),
        },
        Some(Band::Snoozed) => match p.until {
            Some(u) => format!("snoozed · {} left", span(u as f64 - now)),
            None => "snoozed until you type".into(),
        },
        Some(Band::Quiet) => format!("quiet · {age}"),
        Some(Band::Limited) => match p.resets_at {
            Some(at) => format!(
                "resets in {}",
                tend_detector::limit::countdown(at - now as i64)
            ),
            None => format!("limited {age}, no reset named"),
        },
        Some(Band::Waiting) if p.reason == Some(Reason::Limit) => match p.resets_at {
            Some(at) => format!("reset {} ago", span(now - at as f64)),
            None => format!("waiting {age}"),
        },
        Some(Band::Blocked | Band::Waiting) => format!("waiting {age}"),
        Some(Band::ReadyForReview) => format!("done {age} ago"),
        Some(Band::Working) => format!("working {age}"),
        Some(Band::Finished) => format!("finished {age} ago"),
        Some(Band::Idle) => format!("idle {age}"),
        Some(Band::Exited) => match p.exit_code {
            Some(c) => format!("exited ({c}) {age} ago"),
            None => format!("exited {age} ago"),
        },
        None => p.state.map_or_else(|| "-".into(), |s| s.to_string()),
    }
}

/// The agent and its version: `claude 2.1.3`.
pub fn agent_label(p: &PaneView) -> String {
    let agent = sanitize(p.agent.as_deref().unwrap_or("-"), 24);
    match p.version.as_deref() {
        Some(v) => format!("{agent} {}", sanitize(v, 16)),
        None => agent,
    }
}

/// Where the pane is: `session:window.pane`, or the remote's name and the
/// pane there.
pub fn place(p: &PaneView) -> String {
    let s = match (&p.host, &p.place) {
        (Some(h), _) => format!("{h} {}", p.pane.split_once(':').map_or("", |x| x.1)),
        (None, Some(pl)) => pl.clone(),
        (None, None) => format!("{} {}", p.session, p.pane),
    };
    sanitize(&s, 40)
}

/// Text from an agent, a name or a note, made safe to draw
/// ([`tend_detector::psp::shown`]), its spacing kept (screen rows keep
/// their layout); at most `max` characters (`…` marks a cut).
pub fn sanitize(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max * 4));
    for (n, c) in s.chars().filter_map(tend_detector::psp::shown).enumerate() {
        if n == max {
            out.pop();
            out.push('…');
            return out;
        }
        out.push(c);
    }
    out
}

/// The last `n` lines of a screen that hold something, sanitised.
pub fn tail(rows: &[String], n: usize, width: usize) -> Vec<String> {
    let end = rows
        .iter()
        .rposition(|r| !r.trim().is_empty())
        .map_or(0, |i| i + 1);
    rows[..end]
        .iter()
        .skip(end.saturating_sub(n))
        .map(|r| sanitize(r.trim_end(), width))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(id: &str, band: &str, reason: Option<&str>, since: f64) -> PaneView {
        PaneView {
            pane: id.into(),
            session: "s".into(),
            agent: Some("claude".into()),
            state: Some(tend_vocab::State::Waiting.into()),
            reason: reason.and_then(Reason::parse),
            band: PaneBand::parse(band),
            since: Some(since),
            ..PaneView::default()
        }
    }

    #[test]
    fn rows_go_by_band_then_by_the_jump_keys_ranking() {
        let panes = vec![
            pane("%1", "working", None, 10.0),
            pane("%2", "waiting", Some("prompt"), 5.0),
            pane("%3", "waiting", Some("question"), 50.0),
            pane("%4", "blocked", Some("error"), 90.0),
            pane("%5", "waiting", Some("approval"), 80.0),
            pane("%6", "exited", None, 1.0),
            pane("%7", "waiting", Some("approval"), 20.0),
            pane("%8", "parked", None, 1.0),
            pane("%9", "working", None, 3.0),
            PaneView {
                pane: "%10".into(),
                ..PaneView::default()
            },
        ];
        let ids: Vec<&str> = order(&panes)
            .into_iter()
            .map(|i| panes[i].pane.as_str())
            .collect();
        assert_eq!(ids, ["%4", "%7", "%5", "%3", "%2", "%9", "%1", "%8", "%6"]);
        let c = counts(&panes);
        assert_eq!((c[0], c[1], c[5], c[10]), (1, 4, 2, 1));
        assert_eq!(sentences(&panes, 0.0, 0), ["5 agents need you"]);
        let quiet = vec![
            pane("%1", "quiet", None, 1.0),
            pane("%2", "blocked", None, 1.0),
        ];
        assert_eq!(
            sentences(&quiet, 0.0, 0),
            ["1 agent needs you", "1 agent has gone quiet"]
        );
    }

    #[test]
    fn a_limited_agent_counts_down_to_its_reset() {
        let now = 10_000.0;
        let mut p = pane("%4", "limited", Some("limit"), now - 60.0);
        p.resets_at = Some(now as i64 + 2 * 3600 + 14 * 60 + 30);
        assert_eq!(clock(&p, now), "resets in 2h 14m");
        assert_eq!(clock(&p, now + 3600.0), "resets in 1h 14m");
        assert_eq!(badge(&p), Some("limit"));
        let panes = vec![p.clone(), pane("%5", "waiting", Some("approval"), now)];
        // 10 000 s after the epoch is 02:46:40 UTC; the reset 05:01.
        assert_eq!(
            sentences(&panes, now, 0),
            [
                "1 agent needs you",
                "1 agent limited until 05:01 (in 2h 14m)"
            ]
        );
        // Listed apart from the demands, above the working agents.
        let mut all = panes.clone();
        all.push(pane("%6", "working", None, now));
        let ids: Vec<&str> = order(&all)
            .into_iter()
            .map(|i| all[i].pane.as_str())
            .collect();
        assert_eq!(ids, ["%5", "%4", "%6"]);
        // Past its reset it waits for a word, and says since when.
        p.band = Some(Band::Waiting.into());
        assert_eq!(clock(&p, now + 9000.0), "reset 15m ago");
        p.resets_at = None;
        p.band = Some(Band::Limited.into());
        assert_eq!(clock(&p, now), "limited 1m, no reset named");
    }

    #[test]
    fn clocks_speak_the_bands_words() {
        let now = 10_000.0;
        let mut p = pane("%1", "waiting", Some("approval"), now - 185.0);
        assert_eq!(clock(&p, now), "waiting 3m");
        assert_eq!(badge(&p), Some("approval"));
        p.reason = Some(Reason::Prompt);
        assert_eq!(badge(&p), None);
        p.band = PaneBand::parse("quiet");
        p.since = Some(now - 720.0);
        assert_eq!(clock(&p, now), "quiet · 12m");
        p.band = PaneBand::parse("parked");
        p.note = Some("after lunch\u{1b}[2J".into());
        assert_eq!(clock(&p, now), "parked: after lunch[2J");
        p.band = PaneBand::parse("snoozed");
        p.until = Some(now as u64 + 1500);
        assert_eq!(clock(&p, now), "snoozed · 25m left");
        p.until = None;
        assert_eq!(clock(&p, now), "snoozed until you type");
        p.band = PaneBand::parse("exited");
        p.exit_code = Some(2);
        p.since = Some(now - 7500.0);
        assert_eq!(clock(&p, now), "exited (2) 2h 5m ago");
        assert_eq!(span(3600.0 * 49.0), "2d");
        assert_eq!(span(-3.0), "0s");
    }

    #[test]
    fn agent_text_is_drawn_without_control_characters() {
        assert_eq!(sanitize("a\u{1b}]0;x\u{7}b\tc\u{202e}d", 80), "a]0;xb cd");
        assert_eq!(sanitize("abcdef", 4), "abc…");
        assert_eq!(sanitize("abcd", 4), "abcd");
        let rows: Vec<String> = ["one", "two\u{1b}[31m", "", "three  ", "", ""]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(tail(&rows, 3, 80), ["two[31m", "", "three"]);
        let mut p = pane("%3", "waiting", None, 0.0);
        p.version = Some("2.1\n3".into());
        p.place = Some("work:2.1".into());
        assert_eq!(agent_label(&p), "claude 2.1 3");
        assert_eq!(place(&p), "work:2.1");
        p.host = Some("box".into());
        p.pane = "box:%3".into();
        assert_eq!(place(&p), "box %3");
    }
}
