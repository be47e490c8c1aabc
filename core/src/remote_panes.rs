//! The remotes' panes in the pane table: links started, stopped and
//! restarted to match the configuration, what they report, the events of
//! their panes (as a local pane's changes would be told), and the answers
//! about them (`remotes`, showing a remote pane). The links themselves
//! are `links.rs`.

use std::collections::BTreeMap;

use tend_protocol::reply;
use tend_protocol::{BusEvent, PaneView, StatusChanged};
use tend_vocab::PaneBand;

use crate::links::{view_of, Link, LinkEvent, LinkState, RemotesConfig};
use crate::{Core, Effect, MuxJob};

impl Core {
    /// The remotes as configured now (`Err`: what kept the configuration
    /// from being read); `reply`, when a `remotes.reload` asked, gets the
    /// answer.
    pub(crate) fn remotes(
        &mut self,
        config: Result<RemotesConfig, String>,
        reply: Option<crate::RequestId>,
    ) {
        let result = match config {
            Ok(cfg) => Ok(reply::Reloaded {
                remotes: self.apply_remotes(cfg),
            }
            .into()),
            Err(e) => Err(tend_protocol::Error::new(
                tend_protocol::ErrorCode::BadConfig,
                e,
            )),
        };
        match (reply, result) {
            (Some(id), result) => self.effects.push_back(Effect::Reply { id, result }),
            (None, Err(e)) => self.log(format!("no remotes: {}", e.message)),
            (None, Ok(_)) => {}
        }
    }

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
                    resets_at: v.resets_at,
                    resets: None,
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
