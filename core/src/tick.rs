//! The pane table's clockwork: timers, identity samples, polls, leases,
//! parks running out, and each pane's effective status with the events
//! its changes make.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use tend_attention::report::{Alive, PaneLife};
use tend_protocol::PaneId;
use tend_protocol::{BusEvent, ReleaseReason, StatusChanged};
use tend_vocab::{Authority, Band, PaneState, State};

use crate::status::{self, EffView};
use crate::{
    trace, CapturePurpose, Core, Effect, MuxJob, TapState, POLL_BUSY, PROCS_KEPT, RECONCILE_EVERY,
    SAVE_EVERY,
};

/// What one round's visits collect, to act on after them.
#[derive(Default)]
struct Round {
    polls: Vec<PaneId>,
    verifies: Vec<PaneId>,
    visited: Vec<PaneId>,
    /// Agents a sample found running (their pid and processes), and panes
    /// whose agent left: their conversations' records (`tend restore`).
    agents_seen: Vec<(
        PaneId,
        String,
        u32,
        Vec<tend_detector::identity::ProcessInfo>,
    )>,
    agents_gone: Vec<PaneId>,
    /// Panes whose processes a full sample read: the session file their
    /// agent keeps is followed again.
    resampled: Vec<PaneId>,
}

impl Core {
    /// Runs timers, samples processes, polls foreign-pipe panes, sends the
    /// jobs whose time has come, lists the panes every [`RECONCILE_EVERY`],
    /// saves the state at most every [`SAVE_EVERY`], and publishes changes. Only panes that received something since the last
    /// call are visited, plus, at the sweep (at least once a second), every
    /// pane that received output, has a deadline due, or whose status the
    /// report book or the parks read against the clock; so the cost per
    /// event does not grow with the number of panes, nor does an idle
    /// pane cost a visit a second. Returns how long until it next wants to
    /// run.
    pub(crate) fn tick(&mut self) -> Duration {
        let now = self.now();
        if now >= self.next_list {
            self.list_due = true;
            self.next_list = now + RECONCILE_EVERY;
        }
        let full = now >= self.next_sweep;
        let ids: Vec<PaneId> = if full {
            self.next_sweep = now + Duration::from_secs(1);
            // Closes the /proc files of processes no longer sampled.
            self.procs.end_round();
            self.sweep_ids(now)
        } else {
            self.touched.drain().collect()
        };
        let mut round = Round::default();
        for id in ids {
            self.visit(id, now, full, &mut round);
        }
        self.after_visits(&mut round);
        let epoch = self.epoch();
        self.run_leases(epoch, full, &mut round.visited);
        self.expire_parks(epoch, full, &mut round.visited);
        self.limit_round(epoch, now);
        for id in round.visited {
            self.refresh(id);
        }
        self.publish_round();
        self.next_wakeup(now)
    }

    /// One pane's visit: its detector's timers, its process watch, its
    /// transitions, the captures it needs, and when it is due again.
    fn visit(&mut self, id: PaneId, now: Duration, full: bool, round: &mut Round) {
        let Some(p) = self.panes.get_mut(&id) else {
            return;
        };
        if !p.seeded {
            return;
        }
        p.det.tick(now);
        trace!(
            self,
            "tick pane={id} state={:?} agent={:?} full={full}",
            p.det.status().state,
            p.det.status().agent
        );
        if p.watch.next_wakeup() <= now {
            self.watch_identity(id, now, round);
        }
        let Some(p) = self.panes.get_mut(&id) else {
            return;
        };
        while let Some(t) = p.det.poll_transition() {
            if t.to != State::Completed {
                p.seen = false;
            }
        }
        // Completing while the user looks at it: seen at once.
        if p.focused && p.det.status().state == Some(State::Completed) {
            p.seen = true;
        }
        if p.check.due().is_some_and(|d| d <= now) {
            p.check.ask();
            round.verifies.push(id);
        }
        let mut due = p.due();
        if p.tap == TapState::Polling {
            // Due its gap after the last poll, not after this visit: other
            // panes' deadlines make sweeps that visit this pane between
            // its polls, and each pushed the poll a whole gap further
            // (a dialog waited up to twice the gap with agents beside it).
            // A working agent is read at the busy pace whatever its screen
            // did lately: the dialog it may draw next often follows a pause
            // (the model thinking) in which the screen stood still.
            let gap = if p.det.status().state == Some(State::Working) {
                POLL_BUSY
            } else {
                p.poll_gap
            };
            let since = p.last_poll.map(|t| self.clock.saturating_duration_since(t));
            let left = match since {
                Some(since) if since < gap => gap - since,
                _ => {
                    p.last_poll = Some(self.clock);
                    round.polls.push(id);
                    gap
                }
            };
            due = due.min(now + left);
        }
        self.next_sweep = self.next_sweep.min(due);
        round.visited.push(id);
    }

    /// A pane's process watch, when due: a sample or a probe (and the
    /// screen, for an agent behind a wrapper), the agent it names, what
    /// the detector learns of its processes.
    fn watch_identity(&mut self, id: PaneId, now: Duration, round: &mut Round) {
        let Some(p) = self.panes.get_mut(&id) else {
            return;
        };
        let prompt_visible = matches!(p.det.status().state, None | Some(State::Exited));
        // The screen, for an agent behind a wrapper (`ssh`, …).
        let up = p.watch.poll_reading(
            self.procs.as_mut(),
            &self.registry,
            now,
            prompt_visible,
            Some(&p.det),
        );
        if let Some(change) = &up.change {
            // One shared manifest per agent: each copy would carry its own
            // compiled regex caches.
            let manifest = change.to.as_ref().and_then(|a| {
                if !self.manifests.contains_key(a) {
                    let m = Arc::new(self.registry.get(a)?.clone());
                    self.manifests.insert(a.clone(), m);
                }
                self.manifests.get(a).cloned()
            });
            trace!(self, "agent pane={id} to={:?}", change.to);
            p.det.set_agent(now, manifest);
            p.seen = false;
            if change.to.is_none() {
                // The agent's run is over: its reports end with it.
                self.book.release(&self.mux.name(id));
                round.agents_gone.push(id);
            }
        }
        if let Some(obs) = up.observation {
            p.det.observe_process(now, obs);
        }
        if up.sampled && !up.relay && crate::channel::unasked_app(&p.watch, &p.det).is_none() {
            // No `tend run` answers for the pane's terminal, so no program
            // there was asked for OSC 7501 reports, and no agent that
            // reports unasked holds the terminal: whatever the pane printed
            // as one (a `cat` of a log, a program that ignores the
            // handshake) is not its word.
            p.det.forget_reports();
        }
        if up.sampled {
            round.resampled.push(id);
        }
        if let Some(procs) = up.procs {
            let running = up.resolution.as_ref().and_then(|r| r.agent.as_ref());
            if let Some(m) = running.filter(|m| p.watch.agent() == Some(&m.agent)) {
                round
                    .agents_seen
                    .push((id, m.agent.clone(), m.pid, procs.clone()));
            }
            if p.procs.len() == PROCS_KEPT {
                p.procs.pop_front();
            }
            p.procs.push_back((now, procs));
        }
    }

    /// What the visits found: conversations' records (`tend restore`),
    /// the captures asked for.
    fn after_visits(&mut self, round: &mut Round) {
        for id in std::mem::take(&mut round.agents_gone) {
            self.conversation_gone(id);
        }
        for (id, agent, pid, procs) in std::mem::take(&mut round.agents_seen) {
            self.conversation_seen(id, &agent, pid, &procs);
        }
        // The session file each sampled pane's agent keeps, if any.
        for id in std::mem::take(&mut round.resampled) {
            self.retarget_session(id);
        }
        self.sync_follows();
        for id in std::mem::take(&mut round.polls) {
            self.job(MuxJob::Capture(id, CapturePurpose::Poll));
        }
        for id in std::mem::take(&mut round.verifies) {
            trace!(self, "verify pane={id}");
            self.job(MuxJob::Capture(id, CapturePurpose::Verify));
        }
    }

    /// Leases, quiet and gone of self-reporting agents, when one falls due
    /// (or at the sweep); the panes they change are visited.
    fn run_leases(&mut self, epoch: Duration, full: bool, visited: &mut Vec<PaneId>) {
        if !(self.book.next_deadline().is_some_and(|d| d <= epoch) || full) {
            return;
        }
        let changes = {
            let panes = &self.panes;
            let mux = self.mux;
            let alive = |pane: &str| -> Alive {
                let Some(p) = mux.parse(pane).and_then(|id| panes.get(&id)) else {
                    return Alive::NONE;
                };
                let st = p.det.status();
                let silent = st.silent_for;
                let last_output = epoch.checked_sub(silent).filter(|_| st.state.is_some());
                Alive {
                    last_output,
                    cpu_busy: st.cpu_hold,
                    life: match p.eff.as_ref().and_then(|e| e.band) {
                        Some(Band::Quiet) => PaneLife::Quiet,
                        Some(Band::Exited) | None => PaneLife::Gone,
                        _ => PaneLife::Live,
                    },
                }
            };
            self.book.tick(epoch, &alive)
        };
        for c in changes {
            self.events.push_back(BusEvent::ReportChanged {
                pane: c.pane.clone(),
                from: c.from,
                to: c.to,
                notify: c.notify,
            });
            visited.extend(self.mux.parse(&c.pane));
            self.persist = true;
        }
    }

    /// Parks and snoozes running out (or at the sweep).
    fn expire_parks(&mut self, epoch: Duration, full: bool, visited: &mut Vec<PaneId>) {
        let due = self
            .parks
            .next_deadline()
            .is_some_and(|d| d <= epoch.as_secs());
        if !(due || full) {
            return;
        }
        for pane in self.parks.expire(epoch.as_secs()) {
            visited.extend(self.mux.parse(&pane));
            self.persist = true;
        }
    }

    /// Usage limits: resumes that fell due go out; a reset to come brings
    /// the sweep (which visits every limited pane: its band moves) forward
    /// to it.
    fn limit_round(&mut self, epoch: Duration, now: Duration) {
        if let Some(at) = self.limit_timers() {
            let wait = Duration::from_secs_f64((at - epoch.as_secs_f64()).max(0.0));
            self.next_sweep = self.next_sweep.min(now + wait);
        }
    }

    /// What changed goes out, with the listing when one is due (one
    /// multiplexer call).
    fn publish_round(&mut self) {
        let list = std::mem::take(&mut self.list_due);
        let updates = if self.changed || (self.held && list) {
            self.changed = false;
            self.publish(list)
        } else {
            None
        };
        match updates {
            Some((updates, clients)) => self.job(MuxJob::Publish {
                updates,
                clients,
                list,
            }),
            None if list => self.job(MuxJob::List),
            None => {}
        }
    }

    /// The jobs whose time has come, the state file when it may be
    /// written; how long until the table wants to run again.
    fn next_wakeup(&mut self, now: Duration) -> Duration {
        let mut next = self.next_sweep.min(self.next_list);
        if let Some(at) = self.send_due_jobs(now) {
            next = next.min(at);
        }
        if self.persist {
            match self.last_save.map(|t| t + SAVE_EVERY).filter(|&t| t > now) {
                Some(at) => next = next.min(at),
                None => {
                    self.persist = false;
                    self.last_save = Some(now);
                    let text = self.state_text();
                    self.effects.push_back(Effect::Persist(text));
                }
            }
        }
        next.saturating_sub(now).max(Duration::from_millis(2))
    }

    /// The panes the sweep visits. A pane with no output since the last
    /// sweep, nothing typed, no process sample, detector timer or poll due,
    /// and no report, park or snooze is skipped: its status cannot have
    /// changed. Its detector's clock still moves to `now` (what it says
    /// about silence stays current), and its next deadline still bounds
    /// the next sweep.
    pub(super) fn sweep_ids(&mut self, now: Duration) -> Vec<PaneId> {
        let mut ids: HashSet<PaneId> = self.touched.drain().collect();
        ids.extend(self.fed.drain());
        let mux = self.mux;
        let marked = self
            .book
            .panes()
            .map(|(n, _)| n)
            .chain(self.parks.parks().map(|(n, _)| n))
            .chain(self.parks.snoozes().map(|(n, _)| n))
            .chain(self.limits.iter().map(|(n, _)| n))
            .filter_map(|n| mux.parse(n));
        ids.extend(marked);
        for (id, p) in self.panes.iter_mut() {
            if ids.contains(id) {
                continue;
            }
            let due = p.due();
            if due <= now || p.tap == TapState::Polling || !p.seeded {
                ids.insert(*id);
            } else {
                p.det.tick(now);
                self.next_sweep = self.next_sweep.min(due);
            }
        }
        ids.into_iter().collect()
    }

    /// Recomputes one pane's effective status; emits events for changes.
    pub(crate) fn refresh(&mut self, id: PaneId) {
        let epoch = self.epoch();
        let unix = epoch.as_secs();
        let limit = self.limit_facts(id);
        let Some(p) = self.panes.get(&id) else { return };
        let name = self.mux.name(id);
        let st = p.det.status();
        let marks = self.parks.marks(&name, unix);
        let stop = self.flags.get(&name).map(|f| f.word());
        let book = &self.book;
        let word = crate::channel::word(&p.watch, &p.det, &p.session, self.now(), &st);
        let word_hold = crate::channel::held_until(&p.watch, &p.det, self.now(), &st);
        let fold = |seen: bool| {
            status::fold(
                &st,
                word.as_ref(),
                |screen| book.effective_with(epoch, &name, screen, word.as_ref()),
                &marks,
                seen,
                stop.clone(),
                &limit,
            )
        };
        let mut seen = p.seen;
        let mut view = fold(seen);
        let old = p.eff.clone();
        if word.is_some()
            && view.authority != Authority::Screen
            && old.as_ref().and_then(|o| o.state) != view.state
        {
            // The agent's own word moved the state, not the screen's
            // transitions (which is what `seen` follows): a turn it says is
            // done is new to the user unless they are looking at it now.
            let now_seen = view.state == Some(State::Completed) && p.focused;
            if now_seen != seen {
                seen = now_seen;
                view = fold(seen);
            }
        }
        let changed_key = old.as_ref().map(EffView::key) != Some(view.key());
        let wall = self.start_wall + self.now().as_secs_f64();
        let resets_text = view.resets_at.map(|at| self.clock_text(at));
        self.announce(id, &name, st.agent.clone().filter(|_| st.live));
        let mut gate_move = None;
        if let Some(p) = self.panes.get_mut(&id) {
            p.seen = seen;
            p.word_hold = word_hold;
            if changed_key {
                trace!(
                    self,
                    "state pane={name} state={:?} reason={:?} rule={:?}",
                    view.state,
                    view.reason,
                    view.rule
                );
                let prev_state = old.as_ref().and_then(|o| o.state);
                if prev_state != view.state || old.as_ref().and_then(|o| o.reason) != view.reason {
                    p.eff_seq += 1;
                    p.eff_since = wall;
                    if let Some(to) = view.state {
                        gate_move = Some((prev_state, to));
                    }
                }
                let display = view
                    .agent
                    .as_deref()
                    .and_then(|a| self.registry.get(a))
                    .map(|m| m.short_name.clone());
                self.events
                    .push_back(BusEvent::StatusChanged(Box::new(StatusChanged {
                        pane: name.clone(),
                        host: None,
                        agent: view.agent.clone(),
                        name: display,
                        session: p.info.session_name.clone(),
                        window: p.info.window_label.clone(),
                        focused: p.focused,
                        state: view.state.map(PaneState::from),
                        reason: view.reason,
                        band: view.band,
                        prev_band: old.as_ref().and_then(|o| o.band),
                        quiet: view.quiet,
                        prev_state: prev_state.map(PaneState::from),
                        prev_reason: old.as_ref().and_then(|o| o.reason),
                        rule: Some(view.rule.clone()),
                        authority: view.authority,
                        message: Some(view.message.clone()),
                        state_change_seq: p.eff_seq,
                        run: st.run,
                        at: wall,
                        resets_at: view.resets_at,
                        resets: resets_text.clone(),
                    })));
                self.changed = true;
            } else if old.as_ref() != Some(&view) {
                self.changed = true;
            }
            p.eff = Some(view);
        }
        // A park gated on this pane releases the first time it goes from
        // busy to ready.
        if let Some((from, to)) = gate_move {
            for r in self.parks.gate_transition(&name, from, to) {
                self.park_released(r);
            }
        }
    }

    /// An agent is announced while it runs and released when its run ends
    /// (the pane keeps naming it, as `exited`, until the next agent):
    /// `agent_now` is the one running now.
    fn announce(&mut self, id: PaneId, name: &str, agent_now: Option<String>) {
        let Some(p) = self.panes.get_mut(&id) else {
            return;
        };
        if p.announced == agent_now {
            return;
        }
        if let Some(a) = p.announced.take() {
            self.events.push_back(BusEvent::AgentReleased {
                pane: name.to_owned(),
                agent: a,
            });
        }
        if let Some(a) = &agent_now {
            self.events.push_back(BusEvent::AgentDetected {
                pane: name.to_owned(),
                agent: a.clone(),
            });
        }
        p.announced = agent_now;
    }

    pub(crate) fn park_released(&mut self, r: tend_attention::park::ParkReleased) {
        let reason = match r.reason {
            tend_attention::park::ReleaseReason::GateReady => ReleaseReason::GateReady,
            tend_attention::park::ReleaseReason::GateGone => ReleaseReason::GateGone,
        };
        self.events.push_back(BusEvent::ParkReleased {
            pane: r.pane.clone(),
            gate: r.gate,
            note: r.note,
            reason,
        });
        self.persist = true;
        self.changed = true;
        self.touched.extend(self.mux.parse(&r.pane));
    }
}
