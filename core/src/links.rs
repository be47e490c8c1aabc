//! Links to remotes, as the core keeps them: where each stands, the last
//! snapshot of its agent panes, and those panes as the rest of tend sees
//! them (`build-box:%3`, `unreachable` while the link is down). The daemon
//! runs the links (one `ssh -T DEST tend events --feed` each, restarted with
//! a doubling wait) when told to ([`Effect::StartLink`]) and reports what
//! they say ([`crate::Input::Remote`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::remote::{LinkConfig, RemoteConfig};
use crate::{Core, Effect, MuxJob};
use tend_protocol::reply;
use tend_protocol::{BusEvent, PaneView, StatusChanged};
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
    fn starting(cfg: &RemoteConfig, generation: u64, unix: f64) -> Link {
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

impl Core {
    /// Starts, stops and restarts links to match `cfg`; returns how many
    /// there are.
    pub(crate) fn apply_remotes(&mut self, cfg: RemotesConfig) -> usize {
        let unix = self.epoch().as_secs_f64();
        let changed_link = self.link_cfg != cfg.link;
        self.link_cfg = cfg.link.clone();
        let before: Vec<String> = self.links.keys().cloned().collect();
        for name in before {
            let keep = cfg
                .remotes
                .get(&name)
                .is_some_and(|r| *r == self.links[&name].cfg && !changed_link);
            if !keep {
                let old = self.remote_views_of(&name);
                self.links.remove(&name);
                self.effects
                    .push_back(Effect::StopLink { name: name.clone() });
                self.remote_events(&name, old, BTreeMap::new());
            }
        }
        for (name, r) in &cfg.remotes {
            if self.links.contains_key(name) {
                continue;
            }
            self.link_gen += 1;
            let link = Link::starting(r, self.link_gen, unix);
            self.effects.push_back(Effect::StartLink {
                name: name.clone(),
                generation: self.link_gen,
                remote: r.clone(),
                link: self.link_cfg.clone(),
                stderr: link.stderr.clone(),
            });
            self.links.insert(name.clone(), link);
        }
        self.changed = true;
        self.links.len()
    }

    /// The views of one remote's panes, by id.
    pub(crate) fn remote_views_of(&self, name: &str) -> BTreeMap<String, PaneView> {
        let Some(link) = self.links.get(name) else {
            return BTreeMap::new();
        };
        link.panes
            .iter()
            .map(|p| {
                let v = view_of(name, link, p);
                (v.pane.clone(), v)
            })
            .collect()
    }

    /// Every remote pane's view.
    pub(crate) fn remote_views(&self) -> Vec<PaneView> {
        self.links
            .keys()
            .flat_map(|n| self.remote_views_of(n).into_values())
            .collect()
    }

    /// Handles what a link reported.
    pub(crate) fn on_remote(&mut self, name: String, generation: u64, ev: LinkEvent) {
        let unix = self.epoch().as_secs_f64();
        let old = self.remote_views_of(&name);
        let Some(link) = self.links.get_mut(&name) else {
            return;
        };
        if link.generation != generation {
            return;
        }
        match ev {
            LinkEvent::Connecting => {
                link.attempts += 1;
                if link.state != LinkState::Down {
                    link.state = LinkState::Connecting;
                }
                return;
            }
            LinkEvent::Snapshot(crate::feed::Snapshot {
                tmux_socket,
                hostname,
                panes,
                dropped,
            }) => {
                if link.state != LinkState::Up {
                    link.since = unix;
                    self.effects
                        .push_back(Effect::Log(format!("remote {name} is up")));
                }
                if dropped > 0 && link.dropped == 0 {
                    self.effects.push_back(Effect::Log(format!(
                        "remote {name} sent {dropped} pane(s) whose ids are not tmux ids; \
                         they are left out (is the remote's tend of another version, or not tend?)"
                    )));
                }
                link.dropped = dropped;
                link.state = LinkState::Up;
                link.ever_up = true;
                link.error = None;
                link.tmux_socket = tmux_socket;
                link.hostname = hostname;
                link.panes = panes;
            }
            LinkEvent::Down { error } => {
                if link.state != LinkState::Down {
                    link.since = unix;
                    self.effects.push_back(Effect::Log(format!(
                        "remote {name} is unreachable: {error}"
                    )));
                }
                link.state = LinkState::Down;
                link.error = Some(error);
            }
        }
        let new = self.remote_views_of(&name);
        self.remote_events(&name, old, new);
        self.changed = true;
    }

    /// Events for what changed among one remote's panes, as a local pane's
    /// changes would be told (notifications read them too).
    fn remote_events(
        &mut self,
        name: &str,
        old: BTreeMap<String, PaneView>,
        new: BTreeMap<String, PaneView>,
    ) {
        let wall = self.epoch().as_secs_f64();
        for (id, v) in &new {
            let before = old.get(id);
            let key = |p: &PaneView| (p.state, p.reason, p.band, p.quiet);
            if before.map(key) == Some(key(v)) {
                continue;
            }
            let display = v
                .agent
                .as_deref()
                .and_then(|a| self.registry.get(a))
                .map(|m| format!("{} on {name}", m.short_name));
            // `unreachable` is no agent's band: the event carries none,
            // which makes no demand.
            let band = |p: Option<&PaneView>| p.and_then(|p| p.band).and_then(PaneBand::agent);
            // The pane view carries the message: the event does not.
            self.events
                .push_back(BusEvent::StatusChanged(Box::new(StatusChanged {
                    pane: id.clone(),
                    host: Some(name.to_owned()),
                    agent: v.agent.clone(),
                    name: display,
                    session: v.session.clone(),
                    window: v.window.clone(),
                    focused: false,
                    state: v.state,
                    reason: v.reason,
                    band: band(Some(v)),
                    prev_band: band(before),
                    quiet: v.quiet,
                    prev_state: before.and_then(|b| b.state),
                    prev_reason: before.and_then(|b| b.reason),
                    rule: v.rule.clone(),
                    authority: v.authority,
                    message: None,
                    state_change_seq: v.state_change_seq,
                    run: v.run,
                    at: wall,
                })));
        }
        for (id, v) in &old {
            if !new.contains_key(id) {
                self.events.push_back(BusEvent::Closed {
                    pane: id.clone(),
                    host: Some(name.to_owned()),
                    agent: v.agent.clone(),
                });
            }
        }
    }

    /// `remotes`: each link's state, for `tend remote list` and `doctor`.
    pub(crate) fn remote_links(&self) -> Vec<reply::Link> {
        self.links
            .iter()
            .map(|(name, l)| reply::Link {
                name: name.clone(),
                dest: l.cfg.dest.clone(),
                state: l.state,
                error: l.error.clone(),
                since: l.since,
                attempts: l.attempts,
                agents: l.panes.len(),
                hostname: l.hostname.clone(),
                tmux_socket: l.tmux_socket.clone(),
                stderr: l.stderr.text(),
                dropped: l.dropped,
            })
            .collect()
    }

    /// The job that shows a remote pane in a local window.
    pub(crate) fn remote_attach(&mut self, id: &str, client: Option<String>) -> Result<(), String> {
        let Some((host, pane)) = crate::remote::split_id(id) else {
            return Err(format!("`{id}` is not a remote pane id like build-box:%3"));
        };
        let Some(link) = self.links.get(host) else {
            return Err(format!("no remote named {host} (see `tend remote list`)"));
        };
        let Some(p) = link.panes.iter().find(|p| p.pane == pane) else {
            return Err(format!("no pane {id} (see `tend list`)"));
        };
        self.job(MuxJob::RemoteAttach {
            client,
            window: crate::remote::window_name(host, &p.session),
            remote: link.cfg.clone(),
            tmux_socket: link.tmux_socket.clone(),
            remote_window: p.window.clone(),
            pane: pane.to_owned(),
        });
        Ok(())
    }
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
