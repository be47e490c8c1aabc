//! The whole status in one piece, for a backend that shows it as one
//! payload rather than as options (zellij's plugin): the sentence, the
//! counts, the worst band and the jump list in attention order, in the
//! core's own words. The zellij backend turns it into its plugin's payload
//! (`daemon/src/zellij.rs`); the core knows nothing of that format.

use tend_attention::{self as attention, Band};
use tend_protocol::PaneId;
use tend_vocab::{Reason, State};

use crate::publish::{PaneRow, RemoteFacts};

/// The status line's content in one piece.
#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    /// The sentence the status line shows (`2 agents need you`).
    pub summary: String,
    /// How many panes need the user.
    pub needs: usize,
    /// How many runs are quiet.
    pub quiet: usize,
    /// The worst band, if any pane has one.
    pub band: Option<Band>,
    /// The panes to jump to, most urgent first.
    pub jump: Vec<JumpTarget>,
}

/// One pane of [`Overview::jump`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JumpTarget {
    /// The pane.
    pub pane: PaneId,
    /// Its band.
    pub band: Option<Band>,
    /// Its agent's state.
    pub state: Option<State>,
    /// Why it waits.
    pub reason: Option<Reason>,
    /// Its agent.
    pub agent: Option<String>,
}

/// The overview of `rows` (the rows the tmux backend publishes as
/// options) and the remotes' facts.
pub fn overview(rows: &[PaneRow], remote: &RemoteFacts) -> Overview {
    let bands = crate::publish::bands(rows, remote);
    let (needs, quiet) = crate::publish::demands_and_quiet(&bands);
    let ids: Vec<String> = rows.iter().map(|r| r.pane.0.to_string()).collect();
    let cands: Vec<attention::Candidate<'_>> = rows
        .iter()
        .zip(&ids)
        .filter_map(|(r, id)| r.candidate(id, ""))
        .collect();
    let jump = attention::attention_order(&cands)
        .into_iter()
        .filter_map(|id| {
            let r = rows.iter().zip(&ids).find(|(_, i)| i.as_str() == id)?.0;
            Some(JumpTarget {
                pane: r.pane,
                band: r.band,
                state: r.state,
                reason: r.reason,
                agent: r.agent.clone(),
            })
        })
        .collect();
    Overview {
        summary: crate::publish::summary_with_remotes(needs, quiet, remote),
        needs,
        quiet,
        band: attention::rollup(&bands),
        jump,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overview_lists_waiting_panes_in_attention_order() {
        let row = |n: u32, band: Band, reason: Option<Reason>, since: f64| {
            let mut r = crate::publish::tests::row(n, 0, 0, band, reason, since);
            r.session_name = "s".into();
            r
        };
        let rows = [
            row(1, Band::Working, None, 1.0),
            row(2, Band::Waiting, Some(Reason::Question), 2.0),
            row(3, Band::Waiting, Some(Reason::Approval), 3.0),
        ];
        let o = overview(&rows, &RemoteFacts::default());
        assert_eq!(o.needs, 2);
        assert_eq!(o.summary, "2 agents need you");
        assert_eq!(o.band, Some(Band::Waiting));
        let order: Vec<PaneId> = o.jump.iter().map(|j| j.pane).collect();
        assert_eq!(
            order,
            [PaneId(3), PaneId(2)],
            "approval before a question; working panes are no target"
        );
        assert_eq!(
            o.jump[0],
            JumpTarget {
                pane: PaneId(3),
                band: Some(Band::Waiting),
                state: Some(State::Waiting),
                reason: Some(Reason::Approval),
                agent: Some("claude".into()),
            }
        );
    }
}
