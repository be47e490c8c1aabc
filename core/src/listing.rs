//! What the multiplexer shows the pane table: listings (panes appear,
//! change and close; clients show panes) and screens (seeds, resyncs,
//! polls).

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use tend_detector::engine::PaneDetector;
use tend_detector::identity::SamplePolicy;
use tend_detector::State;
use tend_protocol::BusEvent;
use tend_protocol::PaneId;

use crate::pane::{ClientInfo, PaneInfo, Pipe, Screen};
use crate::tape::Tape;
use crate::watch::PaneWatch;
use crate::{
    trace, CapturePurpose, Core, Effect, MuxJob, OutputRead, PaneEntry, TapState, TAP_CONNECT_GRACE,
};

impl Core {
    pub(super) fn on_listed(&mut self, panes: Vec<PaneInfo>, clients: Vec<ClientInfo>) {
        // Sessions, windows, focus may all have changed: visit every pane
        // whose row or focus changed (the sweep skips the others: nothing
        // happened to them), and compute what to
        // publish again if the listing differs from the last one (a pane
        // moved to another window or session changes the rollups). An
        // unchanged listing, the common case, publishes nothing: computing
        // every option of 200 panes each second for nothing was a fifth of
        // an idle daemon's time.
        let moved = !self.listed_once
            || clients != self.clients
            || panes.len() != self.panes.len()
            || panes
                .iter()
                .any(|i| self.panes.get(&i.pane_id).is_none_or(|p| p.info != *i));
        if moved {
            self.changed = true;
        }
        self.listed_once = true;
        self.check_guard();
        self.next_sweep = Duration::ZERO;
        let now = self.now();
        let relays = self.relay_pids();
        self.keys_typed(&clients, now);
        self.client_activity
            .retain(|name, _| clients.iter().any(|c| &c.name == name));
        self.clients = clients;
        let live: HashSet<PaneId> = panes.iter().map(|p| p.pane_id).collect();
        let gone: Vec<PaneId> = self
            .panes
            .keys()
            .filter(|id| !live.contains(id))
            .copied()
            .collect();
        for id in gone {
            self.pane_closed(id);
        }
        let mut resized = Vec::new();
        for info in panes {
            let id = info.pane_id;
            if !self.panes.contains_key(&id) {
                self.first_seen(info, now, &relays);
            } else if self.relisted(info, now, &relays) {
                resized.push(id);
            }
        }
        for id in resized {
            self.job(MuxJob::Capture(id, CapturePurpose::Resync));
        }
        self.update_projects();
        self.mark_seen();
        self.conversations_listed();
    }

    /// Keys typed into a pane: tmux has no keystroke hook, but a client's
    /// activity time moves when its user types, and the client shows one
    /// pane. That is the user directing that agent, and it ends a snooze.
    fn keys_typed(&mut self, clients: &[ClientInfo], now: Duration) {
        for c in clients {
            let last = self.client_activity.insert(c.name.clone(), c.activity);
            let typed = last.is_some_and(|l| c.activity > l);
            if let (true, Some(pane)) = (typed, c.pane_id) {
                if let Some(p) = self.panes.get_mut(&pane) {
                    p.det.input(now, b"key");
                    p.tape.input(now, b"key", p.det.screen());
                    self.touched.insert(pane);
                }
                if self.parks.typed(&self.mux.name(pane)) {
                    self.persist = true;
                }
                // Someone is at the limited agent: tend's resume stays out
                // of their way.
                self.limits.typed(&self.mux.name(pane));
            }
        }
    }

    /// A pane listed again: what changed of it (its size, its death, its
    /// tap, its process). Whether it was resized and its screen must be
    /// captured again.
    fn relisted(&mut self, info: PaneInfo, now: Duration, relays: &[u32]) -> bool {
        let id = info.pane_id;
        let Some(p) = self.panes.get_mut(&id) else {
            return false;
        };
        let mut resized = false;
        if p.info != info || info.dead {
            self.touched.insert(id);
        }
        if p.info.current_command != info.current_command {
            p.watch.foreground_hint(now);
        }
        let (w, h) = (info.width as u16, info.height as u16);
        if (h, w) != p.det.screen().size() {
            p.det.resize(now, h, w);
            p.tape.resize(now, h, w, p.det.screen());
            // The program redrew for the new size before we
            // heard of it, into the old size: the screen is
            // rebuilt from the multiplexer's, which has it right.
            if p.seeded {
                resized = true;
            }
        }
        if info.dead && p.det.status().state.is_some_and(|s| s != State::Exited) {
            p.det.observe_process(
                now,
                tend_detector::ProcessObservation {
                    agent_alive: false,
                    exit_code: info.dead_status,
                    cpu_percent: None,
                    live_child: None,
                },
            );
        }
        // A tap that was installed but never connected (its
        // process died): install again.
        if p.tap == TapState::Installed
            && self.clock.saturating_duration_since(p.tap_since) > TAP_CONNECT_GRACE
            && info.pipe == Pipe::None
        {
            p.tap = TapState::None;
            self.effects.push_back(Effect::Mux(MuxJob::InstallTap(id)));
        }
        if p.tap == TapState::Installed
            && self.clock.saturating_duration_since(p.tap_since) > TAP_CONNECT_GRACE * 2
            && info.pipe != Pipe::None
        {
            // Marked as ours but nobody connects: treat as foreign
            // rather than tear down a pipe we cannot prove is ours.
            p.tap = TapState::Polling;
        }
        // The pane's process was not known at first sight (zellij
        // finds it in /proc, where a starting pane may not be yet),
        // or the pane was given a new one (`respawn-pane -k`): the
        // watch follows the process the pane runs now.
        if info.pane_pid != 0 && p.info.pane_pid != info.pane_pid {
            p.watch.forget_exit(self.procs.as_mut());
            p.watch = PaneWatch::new(
                info.pane_pid,
                id.number().into(),
                now,
                SamplePolicy::default(),
                self.procs.ticks_per_sec(),
            );
            p.watch.set_relays(relays);
        }
        p.info = info;
        resized
    }

    /// A pane seen for the first time: its detector, its process watch,
    /// its tap (installed now unless one is there), its seed capture.
    fn first_seen(&mut self, info: PaneInfo, now: Duration, relays: &[u32]) {
        let id = info.pane_id;
        let det = PaneDetector::new(self.cfg.clone(), info.height as u16, info.width as u16);
        let mut watch = PaneWatch::new(
            info.pane_pid,
            id.number().into(),
            now,
            SamplePolicy::default(),
            self.procs.ticks_per_sec(),
        );
        watch.set_relays(relays);
        // A tap may have said hello before this first listing (a
        // restarted daemon: the old taps reconnect at once).
        let conn = self
            .conns
            .iter()
            .filter(|(_, p)| **p == id)
            .map(|(c, _)| *c)
            .max();
        let tap = if conn.is_some() {
            TapState::Connected
        } else if info.pipe == Pipe::Other {
            TapState::Polling
        } else if info.pipe == Pipe::Tend {
            TapState::Installed
        } else if self.backend.output != OutputRead::Taps {
            // A backend without taps (zellij): the screens come from its
            // subscription and polls, with nothing to ask for first.
            TapState::Polling
        } else {
            // Tapped at once, beside the seed: a restarted daemon
            // holds every pane's pipe after one tmux invocation.
            self.job(MuxJob::InstallTap(id));
            TapState::Installed
        };
        self.panes.insert(
            id,
            PaneEntry {
                info,
                det,
                watch,
                tap,
                conn,
                tap_since: self.clock,
                seeded: false,
                check: Default::default(),
                seen: false,
                last_poll: None,
                poll_gap: crate::POLL_EVERY,
                last_polled: None,
                focused: false,
                eff: None,
                eff_since: self.start_wall + now.as_secs_f64(),
                eff_seq: 0,
                announced: None,
                tape: Tape::new(),
                procs: VecDeque::new(),
                project: None,
                session: Default::default(),
                word_hold: None,
            },
        );
        self.job(MuxJob::Capture(id, CapturePurpose::Seed));
    }

    /// Each agent pane's project, from its working directory: a lookup per
    /// new directory, one `stat` per directory and listing after that.
    fn update_projects(&mut self) {
        let mut seen: std::collections::HashMap<&str, Option<String>> = Default::default();
        let mut changed = false;
        for p in self.panes.values_mut() {
            if p.eff.as_ref().is_none_or(|e| e.agent.is_none()) {
                continue;
            }
            let dir = p.info.current_path.as_str();
            let project = seen
                .entry(dir)
                .or_insert_with(|| self.projects.project(dir))
                .clone();
            if p.project != project {
                p.project = project;
                changed = true;
            }
        }
        if changed {
            self.changed = true;
        }
    }

    /// A pane vanished: its run ends, gated parks on it release.
    pub(super) fn pane_closed(&mut self, id: PaneId) {
        let Some(mut p) = self.panes.remove(&id) else {
            return;
        };
        p.watch.forget_exit(self.procs.as_mut());
        let name = self.mux.name(id);
        self.events.push_back(BusEvent::Closed {
            pane: name.clone(),
            host: None,
            agent: p.det.status().agent,
        });
        for r in self.parks.pane_gone(&name) {
            self.park_released(r);
        }
        self.book.forget(&name);
        self.flags.forget(&name);
        self.limits.closed(&name);
        self.last_resume.remove(&name);
        self.persist = true;
        self.changed = true;
    }

    /// A completion is seen when a client shows the pane: it is the active
    /// pane of the window a client is on. Reading through the CLI does not
    /// count.
    pub(super) fn mark_seen(&mut self) {
        let mut focused: HashSet<PaneId> = HashSet::new();
        for c in &self.clients {
            if let Some(p) = c.pane_id {
                focused.insert(p);
            }
        }
        for (id, p) in self.panes.iter_mut() {
            let (was_focused, was_seen) = (p.focused, p.seen);
            p.focused = focused.contains(id);
            if p.focused && p.det.status().state == Some(State::Completed) {
                p.seen = true;
            }
            if (was_focused, was_seen) != (p.focused, p.seen) {
                self.touched.insert(*id);
            }
        }
    }

    pub(super) fn on_captured(&mut self, pane: PaneId, cap: Screen, purpose: CapturePurpose) {
        let now = self.now();
        let Some(p) = self.panes.get_mut(&pane) else {
            return;
        };
        // A backend that pushes screens (zellij's subscription) may send one
        // before the seed: the seed starts the pane's screen.
        if purpose == CapturePurpose::Poll && !p.seeded {
            return;
        }
        let mut bytes = Vec::with_capacity(cap.text.len() + 64);
        match purpose {
            CapturePurpose::Poll => {
                // The title counts too: a capture does not carry it, and a
                // static screen may change only its title.
                let key = format!("{}\u{0}{}", p.info.title, cap.text);
                if p.last_polled.as_deref() == Some(key.as_str()) {
                    p.poll_gap = (p.poll_gap * 2).min(crate::POLL_EVERY);
                    trace!(self, "captured pane={pane} changed=false");
                    return;
                }
                p.last_polled = Some(key);
                p.poll_gap = crate::POLL_BUSY;
                trace!(self, "captured pane={pane} changed=true");
            }
            CapturePurpose::Seed | CapturePurpose::Resync | CapturePurpose::Verify => {}
        }
        // Rebuild the screen: main screen first, alternate when on.
        if cap.alternate_on {
            bytes.extend_from_slice(b"\x1b[?1049h");
        } else {
            bytes.extend_from_slice(b"\x1b[?1049l");
        }
        // tmux keeps the title the program set (OSC 0/2); a capture does
        // not carry it.
        bytes.extend_from_slice(b"\x1b]2;");
        bytes.extend(p.info.title.bytes().filter(|b| !b.is_ascii_control()));
        bytes.extend_from_slice(b"\x07");
        bytes.extend_from_slice(b"\x1b[0m\x1b[H\x1b[2J");
        for (i, line) in cap.text.lines().enumerate() {
            if i > 0 {
                bytes.extend_from_slice(b"\r\n");
            }
            bytes.extend_from_slice(line.as_bytes());
        }
        bytes.extend_from_slice(
            format!("\x1b[0m\x1b[{};{}H", cap.cursor_y + 1, cap.cursor_x + 1).as_bytes(),
        );
        let (h, w) = (cap.height as u16, cap.width as u16);
        if purpose == CapturePurpose::Verify
            && (h, w) == p.det.screen().size()
            && !p.check.differs(&bytes, p.det.screen())
        {
            trace!(self, "verified pane={pane} same=true");
            return;
        }
        if (h, w) != p.det.screen().size() {
            p.det.resize(now, h, w);
            p.tape.resize(now, h, w, p.det.screen());
        }
        match purpose {
            CapturePurpose::Poll => {
                p.det.feed_redrawn(now, &bytes);
                p.tape.output(now, &bytes, p.det.screen());
            }
            // The tape starts (again) from the screen the capture rebuilt:
            // output before it was never seen, or was lost.
            _ => {
                if purpose == CapturePurpose::Verify {
                    trace!(self, "verified pane={pane} same=false");
                }
                p.det.seed(now, &bytes);
                p.tape.checkpoint(now, p.det.screen());
                p.check.seeded(now, purpose == CapturePurpose::Verify);
            }
        }
        self.touched.insert(pane);
        if purpose == CapturePurpose::Seed {
            p.seeded = true;
            match p.tap {
                TapState::None => self.job(MuxJob::InstallTap(pane)),
                TapState::Installed | TapState::Connected | TapState::Polling => {}
            }
        }
    }
}
