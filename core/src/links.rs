//! Links to remotes, as the core keeps them: where each stands, the last
//! snapshot of its agent panes, and those panes as the rest of tend sees
//! them (`build-box:%3`, `unreachable` while the link is down). The daemon
//! runs the links (one `ssh -T DEST tend events --feed` each, restarted with
//! a doubling wait) when told to ([`crate::Effect::StartLink`]) and reports
//! what they say ([`crate::Input::Remote`]); `remote_panes.rs` is what the
//! core does with it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::remote::{LinkConfig, RemoteConfig};
use tend_protocol::PaneView;
use tend_vocab::{PaneBand, PaneState};

/// How much of ssh's stderr is kept per link, for `tend doctor`.
pub const STDERR_KEEP: usize = 4096;

/// What a link reports.
#[derive(Debug)]
pub enum LinkEvent {
    /// ssh was started.
    Connecting,
    /// The remote's agent panes, whole, checked by
    /// [`crate::feed`] (ids as the remote knows them, `%3`).
    Snapshot(crate::feed::Snapshot),
    /// The link ended: what ssh said, or how it exited.
    Down {
        /// The error.
        error: String,
    },
}

pub use tend_vocab::LinkState;

/// One remote's link, as the pane table keeps it.
#[derive(Debug)]
pub struct Link {
    /// Its configuration.
    pub cfg: RemoteConfig,
    /// Counts restarts of the task, so a stopped task's late events are
    /// ignored.
    pub generation: u64,
    /// Where it stands.
    pub state: LinkState,
    /// Whether a snapshot ever arrived since the link was last up (its panes
    /// are known).
    pub ever_up: bool,
    /// The last error.
    pub error: Option<String>,
    /// Unix time of the last state change.
    pub since: f64,
    /// The remote tmux server's socket.
    pub tmux_socket: Option<String>,
    /// The remote's host name.
    pub hostname: Option<String>,
    /// The last snapshot's panes (remote ids).
    pub panes: Vec<PaneView>,
    /// The tail of ssh's stderr, written by the link's task.
    pub stderr: StderrTail,
    /// How many times ssh was started.
    pub attempts: u64,
    /// Panes the last snapshot listed that were left out (ids that are
    /// not ids, or too many): see [`crate::feed`].
    pub dropped: usize,
}

/// The tail of a link's ssh stderr, for `tend doctor`: written by the
/// link's task as ssh speaks, read when asked, at most [`STDERR_KEEP`]
/// bytes. (A shared buffer rather than an input per line: ssh's words
/// change no state, and are read only for `remotes`.)
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<String>>);

impl StderrTail {
    /// Appends `text`, dropping the oldest beyond [`STDERR_KEEP`].
    pub fn push(&self, text: &str) {
        let Ok(mut b) = self.0.lock() else { return };
        b.push_str(text);
        if b.len() > STDERR_KEEP {
            let mut cut = b.len() - STDERR_KEEP;
            while !b.is_char_boundary(cut) {
                cut += 1;
            }
            b.drain(..cut);
        }
    }

    /// What is kept.
    pub fn text(&self) -> String {
        self.0.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The last line that says something.
    pub fn last_line(&self) -> String {
        self.text()
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .unwrap_or_default()
    }
}

impl Link {
    /// A link starting now (`unix`), not connected yet.
    pub(crate) fn starting(cfg: &RemoteConfig, generation: u64, unix: f64) -> Link {
        Link {
            cfg: cfg.clone(),
            generation,
            state: LinkState::Connecting,
            ever_up: false,
            error: None,
            since: unix,
            tmux_socket: None,
            hostname: None,
            panes: Vec::new(),
            stderr: StderrTail::default(),
            attempts: 0,
            dropped: 0,
        }
    }
}

/// The remotes part of the configuration, as the daemon read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemotesConfig {
    /// `[remotes.NAME]`, by name.
    pub remotes: BTreeMap<String, RemoteConfig>,
    /// `[remote_link]`.
    pub link: LinkConfig,
}

/// A remote pane as the rest of tend sees it: its id prefixed with the
/// remote's name, `host` set, and while the link is not up, `unreachable`
/// instead of the last state (old evidence must not make a demand).
pub fn view_of(name: &str, link: &Link, p: &PaneView) -> PaneView {
    let mut v = p.clone();
    v.pane = format!("{name}:{}", p.pane);
    v.host = Some(name.to_owned());
    if link.state != LinkState::Up {
        v.state = Some(PaneState::Unreachable);
        v.reason = None;
        v.band = Some(PaneBand::Unreachable);
        v.quiet = false;
        v.rule = Some("remote/unreachable".into());
        v.since = Some(link.since);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use tend_vocab::{Band, Reason, State};

    #[test]
    fn unreachable_panes_stay_listed_and_make_no_demand() {
        let mut link = Link {
            cfg: RemoteConfig {
                dest: "box".into(),
                tend_command: None,
                ssh_options: vec![],
            },
            generation: 1,
            state: LinkState::Up,
            ever_up: true,
            error: None,
            since: 100.0,
            tmux_socket: None,
            hostname: None,
            panes: vec![],
            stderr: StderrTail::default(),
            attempts: 1,
            dropped: 0,
        };
        let p = PaneView {
            pane: "%3".into(),
            session: "work".into(),
            window: "@1".into(),
            agent: Some("claude".into()),
            state: Some(State::Waiting.into()),
            reason: Some(Reason::Approval),
            band: Some(Band::Waiting.into()),
            since: Some(50.0),
            ..PaneView::default()
        };
        let up = view_of("box", &link, &p);
        assert_eq!(up.pane, "box:%3");
        assert_eq!(up.host.as_deref(), Some("box"));
        assert_eq!(up.state, Some(State::Waiting.into()));
        assert_eq!(up.band, Some(Band::Waiting.into()));
        link.state = LinkState::Down;
        let down = view_of("box", &link, &p);
        assert_eq!(down.pane, "box:%3");
        assert_eq!(down.agent.as_deref(), Some("claude"));
        assert_eq!(down.state, Some(PaneState::Unreachable));
        assert_eq!(down.band, Some(PaneBand::Unreachable));
        assert_eq!(down.reason, None);
        assert_eq!(down.since, Some(100.0));
        // Reconnecting after a failure is still unreachable.
        link.state = LinkState::Connecting;
        assert_eq!(
            view_of("box", &link, &p).state,
            Some(PaneState::Unreachable)
        );
    }
}

#[cfg(test)]
mod tail_tests {
    use super::*;

    #[test]
    fn stderr_tail_is_bounded() {
        let tail = StderrTail::default();
        for i in 0..1000 {
            tail.push(&format!("line {i} é\n"));
        }
        let b = tail.text();
        assert!(b.len() <= STDERR_KEEP);
        assert!(b.ends_with("line 999 é\n"));
        assert_eq!(tail.last_line(), "line 999 é");
    }
}
