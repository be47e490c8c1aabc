//! The status for tend's zellij plugin: what tmux's status line shows as
//! options, as one payload (`tend-zellij-payload`) that the zellij backend
//! pushes when it changes.

use std::time::Duration;

use tend_attention as attention;
use tend_zellij_payload::{JumpTarget, Status as PluginStatus};

use crate::publish::{PaneRow, RemoteFacts};

/// The status is pushed again this often while nothing changes; the plugin
/// drops it after three times this without a push.
pub const HEARTBEAT: Duration = Duration::from_secs(30);

/// The status the plugin shows, from the rows the tmux backend publishes
/// as options: the sentence, the counts, the worst band, and the jump list
/// in attention order.
pub fn plugin_status(rows: &[PaneRow], remote: &RemoteFacts) -> PluginStatus {
    let bands = crate::publish::bands(rows, remote);
    let (needs, quiet) = crate::publish::demands_and_quiet(&bands);
    let ids: Vec<String> = rows.iter().map(|r| r.pane.0.to_string()).collect();
    let cands: Vec<attention::Candidate<'_>> = rows
        .iter()
        .zip(&ids)
        .filter_map(|(r, id)| {
            Some(attention::Candidate {
                pane: id,
                session: "",
                band: r.band?,
                reason: r.reason,
                since: r.since.unwrap_or(0.0),
            })
        })
        .collect();
    let jump = attention::attention_order(&cands)
        .into_iter()
        .filter_map(|id| {
            let r = rows.iter().zip(&ids).find(|(_, i)| i.as_str() == id)?.0;
            Some(JumpTarget {
                pane: r.pane.0,
                band: r.band.map(|b| b.as_str().to_owned()),
                state: r.state.map(|s| s.as_str().to_owned()),
                reason: r.reason.map(|x| x.as_str().to_owned()),
                agent: r.agent.clone(),
            })
        })
        .collect();
    PluginStatus {
        v: tend_zellij_payload::PAYLOAD_VERSION,
        summary: crate::publish::summary_with_remotes(needs, quiet, remote),
        needs,
        quiet,
        band: attention::rollup(&bands).map(|b| b.as_str().to_owned()),
        ttl: Some(HEARTBEAT.as_secs_f64() * 3.0),
        jump,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tend_attention::Band;
    use tend_protocol::{PaneId, SessionId, WindowId};

    #[test]
    fn the_plugin_status_lists_waiting_panes_in_attention_order() {
        let row = |n: u32, band: Band, reason: Option<tend_detector::Reason>, since: f64| PaneRow {
            pane: PaneId(n),
            window: WindowId(0),
            session: SessionId(0),
            session_name: "s".into(),
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
        };
        let rows = [
            row(1, Band::Working, None, 1.0),
            row(2, Band::Waiting, Some(tend_detector::Reason::Question), 2.0),
            row(3, Band::Waiting, Some(tend_detector::Reason::Approval), 3.0),
        ];
        let s = plugin_status(&rows, &RemoteFacts::default());
        assert_eq!(s.needs, 2);
        assert_eq!(s.summary, "2 agents need you");
        assert_eq!(s.band.as_deref(), Some("waiting"));
        let order: Vec<u32> = s.jump.iter().map(|j| j.pane).collect();
        assert_eq!(
            order,
            [3, 2],
            "approval before a question; working panes are no target"
        );
        assert_eq!(s.ttl, Some(90.0));
    }
}
