//! [`PaneDetector`]: one pane's screen, rules, timers and state machine,
//! driven entirely by its inputs (sans-IO, in the manner of `quinn-proto`).
//!
//! Inputs: [`feed`](PaneDetector::feed) (output bytes),
//! [`input`](PaneDetector::input) (the user's keystrokes),
//! [`resize`](PaneDetector::resize), [`observe_process`](PaneDetector::observe_process)
//! and [`tick`](PaneDetector::tick). Each carries the time; the detector never
//! reads a clock. [`poll_timeout`](PaneDetector::poll_timeout) says when it
//! next needs a tick; [`poll_transition`](PaneDetector::poll_transition)
//! hands out state changes.
//!
//! Evaluation happens only when the clock moves past a point, never in the
//! middle of bytes delivered at the same instant, so the result does not
//! depend on how the output was split into reads.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::config::DetectorConfig;
use crate::machine::{Candidate, Current, Machine};
use crate::manifest::{Manifest, RuleState};
use crate::rules::{self, Evidence, ScreenView, Verdict};
use crate::screen::Screen;
use crate::signals::{Progress, PromptMark, Signal};
use crate::state::{Reason, State, Transition, Trigger};

/// What the process sampler saw for the pane's agent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessObservation {
    /// The agent process is still running.
    pub agent_alive: bool,
    /// Its exit code, when known after it ended.
    pub exit_code: Option<i32>,
    /// CPU use of the agent's process group, percent of one core, over the
    /// last sample interval.
    pub cpu_percent: Option<f32>,
    /// The agent has a live child process (a tool running).
    pub live_child: Option<bool>,
}

/// The status of a pane, as published.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// The agent id, when one is identified.
    pub agent: Option<String>,
    /// The state (`None` before the first evidence or with no agent).
    pub state: Option<State>,
    /// The reason, with waiting.
    pub reason: Option<Reason>,
    /// When the state was entered (caller's clock).
    #[serde(serialize_with = "secs")]
    pub since: Duration,
    /// The rule that produced the state.
    pub rule: String,
    /// Its confidence.
    pub confidence: f32,
    /// What produced the state (a screen rule, activity, silence, …).
    pub trigger: Option<Trigger>,
    /// A working run that has been silent past `quiet_after`.
    pub quiet: bool,
    /// How long it has been silent (for the quiet band's clock).
    #[serde(serialize_with = "secs")]
    pub silent_for: Duration,
    /// Counts state changes in this agent run.
    pub state_change_seq: u64,
    /// Counts agent runs in this pane.
    pub run: u64,
    /// The CPU backstop is holding the run in working.
    pub cpu_hold: bool,
    /// The agent process's exit code, once the run has exited and where it
    /// is known (the pane's dead status, or the shell's OSC 133;D mark).
    pub exit_code: Option<i32>,
    /// The agent of the run is still running (false once it has exited:
    /// `agent` then names the agent whose run ended in this pane).
    pub live: bool,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Why the pane is in its state: `tend explain`.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// The current status.
    pub status: Status,
    /// The manifest in use (`bundled:claude.toml` or a path).
    pub manifest: Option<String>,
    /// Whether that manifest's rules were verified on recordings.
    pub verified: Option<bool>,
    /// The winning screen evidence at the last evaluation.
    pub evidence: Option<Evidence>,
    /// Every rule's verdict on the current screen.
    pub verdicts: Vec<Verdict>,
    /// The current title.
    pub title: String,
    /// Alternate screen on.
    pub alternate: bool,
    /// The last transitions, newest last.
    pub recent: Vec<Transition>,
}

const RECENT: usize = 16;

/// One pane's detector.
#[derive(Debug)]
pub struct PaneDetector {
    cfg: Arc<DetectorConfig>,
    manifest: Option<Arc<Manifest>>,
    screen: Screen,
    machine: Machine,
    run: u64,
    clock: Duration,
    dirty: bool,
    sync_since: Option<Duration>,
    last_eval: Option<Duration>,
    /// The current evaluation interval (adaptive, see `eval_interval_max`).
    interval: Duration,
    /// Rows the last two evaluations both found written (a spinner's line,
    /// a clock, a full-frame redraw's every row): what keeps changing. While
    /// the interval is grown, output that writes any other row is something
    /// new on screen (a dialog over the spinner, or the question line of one
    /// being drawn) and is read at the base interval, not after the grown
    /// one.
    churn: Vec<bool>,
    /// Rows the last evaluation found written.
    written: Vec<bool>,
    fingerprint: u64,
    last_activity: Option<Duration>,
    /// The unexplained screen change before the latest one.
    prev_activity: Option<Duration>,
    /// The latest screen change no rule explained.
    unexplained_change: Option<Duration>,
    /// The first evaluation of this run's screen, in the current spell of
    /// evaluations none of whose screens a rule matched.
    unmatched_since: Option<Duration>,
    last_output: Option<Duration>,
    suppress_until: Duration,
    last_typing: Option<Duration>,
    evidence: Option<Evidence>,
    progress: Option<Progress>,
    signals: Vec<(Duration, Signal)>,
    // CPU backstop.
    cpu_busy: bool,
    cpu_hold_since: Option<Duration>,
    live_child: Option<bool>,
    working_since: Option<Duration>,
    quiet: bool,
    /// The agent whose run ended in this pane, kept after its identity is
    /// dropped so the pane reads `exited` until a new agent starts.
    ended: Option<String>,
    /// The run's exit code, once known.
    exit_code: Option<i32>,
    /// The code of the run's first OSC 133;D ("command finished") mark:
    /// the shell saying how the agent's command ended.
    finish_code: Option<i32>,
    /// The shell has reported how the agent's command ended (its first
    /// OSC 133;D mark of the run): later marks are other commands'.
    finish_seen: bool,
    recent: std::collections::VecDeque<Transition>,
    out: std::collections::VecDeque<Transition>,
}

/// What kind of keystrokes an input chunk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Mouse reports, focus in/out: never the user typing.
    Passive,
    /// Printable text or editing keys.
    Typing,
    /// Enter: submits.
    Submit,
    /// Escape alone / Ctrl-C: cancels.
    Cancel,
}

/// Classifies a chunk of input sent to the pane.
pub fn classify_input(bytes: &[u8]) -> InputKind {
    // Focus reports: CSI I / CSI O. Mouse: CSI < … M/m (SGR), CSI M xyz (X10).
    let passive = |b: &[u8]| -> bool {
        let mut i = 0;
        let mut any = false;
        while i < b.len() {
            if b[i..].starts_with(b"\x1b[I") || b[i..].starts_with(b"\x1b[O") {
                i += 3;
            } else if b[i..].starts_with(b"\x1b[<") {
                match b[i..].iter().position(|&c| c == b'M' || c == b'm') {
                    Some(end) => i += end + 1,
                    None => return false,
                }
            } else if b[i..].starts_with(b"\x1b[M") && b.len() >= i + 6 {
                i += 6;
            } else {
                return false;
            }
            any = true;
        }
        any
    };
    if bytes.is_empty() || passive(bytes) {
        return InputKind::Passive;
    }
    if bytes.contains(&b'\r') || bytes.contains(&b'\n') {
        return InputKind::Submit;
    }
    if bytes == b"\x1b" || bytes.contains(&0x03) {
        return InputKind::Cancel;
    }
    InputKind::Typing
}

impl PaneDetector {
    /// A detector for a `rows` × `cols` pane with no agent identified yet.
    pub fn new(cfg: Arc<DetectorConfig>, rows: u16, cols: u16) -> Self {
        let machine = Machine::new(&cfg);
        let interval = cfg.eval_interval;
        PaneDetector {
            cfg,
            manifest: None,
            // No history ring: rules never read scrollback (an old
            // dialog in history is not a dialog), and scrollback for people
            // comes from the multiplexer, which keeps it anyway. Keeping one
            // cost up to 256 KiB a pane and re-formatting every scrolled row.
            screen: Screen::with_history(rows, cols, 0),
            machine,
            run: 0,
            clock: Duration::ZERO,
            dirty: false,
            sync_since: None,
            last_eval: None,
            interval,
            churn: Vec::new(),
            written: Vec::new(),
            fingerprint: 0,
            last_activity: None,
            prev_activity: None,
            unexplained_change: None,
            unmatched_since: None,
            last_output: None,
            suppress_until: Duration::ZERO,
            last_typing: None,
            evidence: None,
            progress: None,
            signals: Vec::new(),
            cpu_busy: false,
            cpu_hold_since: None,
            live_child: None,
            working_since: None,
            quiet: false,
            ended: None,
            exit_code: None,
            finish_code: None,
            finish_seen: false,
            recent: Default::default(),
            out: Default::default(),
        }
    }

    /// The agent in this pane changed (identity committed or dropped).
    /// A different agent, or the same one after it exited, starts a new run.
    pub fn set_agent(&mut self, now: Duration, manifest: Option<Arc<Manifest>>) {
        self.catch_up(now, true);
        let same = match (&self.manifest, &manifest) {
            (Some(a), Some(b)) => a.id == b.id,
            (None, None) => true,
            _ => false,
        };
        let exited = self.machine.current().state == Some(State::Exited);
        if same && !exited {
            self.manifest = manifest;
            return;
        }
        if manifest.is_none() && self.manifest.is_some() && !exited {
            // Identity dropped while the run was live: it has ended.
            self.propose(
                now,
                Candidate {
                    state: State::Exited,
                    reason: None,
                    rule: "builtin/agent-gone".into(),
                    confidence: 1.0,
                    trigger: Trigger::Process,
                },
            );
        }
        if manifest.is_none() {
            // Keep naming the agent whose run ended here: the pane reads
            // `exited` (with its code) until a new agent starts. A run that
            // never showed the agent's UI (`claude --version`, a start-up
            // failure printed before any screen) leaves no trace.
            if let Some(old) = self.manifest.as_ref().filter(|_| self.machine.ui_seen()) {
                self.ended = Some(old.id.clone());
            }
        }
        self.manifest = manifest;
        if self.manifest.is_some() {
            self.ended = None;
            self.new_run();
            self.unmatched_since = None;
            self.evidence = None;
            self.dirty = true;
        }
    }

    /// Starts a new agent run in this pane (a fresh state machine).
    fn new_run(&mut self) {
        self.machine = Machine::new(&self.cfg);
        self.run += 1;
        self.working_since = None;
        self.quiet = false;
        self.cpu_hold_since = None;
        self.exit_code = None;
        self.finish_code = None;
        self.finish_seen = false;
    }

    /// The manifest in use.
    pub fn manifest(&self) -> Option<&Arc<Manifest>> {
        self.manifest.as_ref()
    }

    /// Feeds pane output that arrived at `now`.
    pub fn feed(&mut self, now: Duration, bytes: &[u8]) {
        self.catch_up(now, false);
        if bytes.is_empty() {
            return;
        }
        self.screen.process(bytes);
        if self.interval > self.cfg.eval_interval {
            // Backed off on a screen that keeps redrawing the same rows:
            // a row outside them is new content, read at the base interval
            // (a dialog drawn during a spinner otherwise waits up to
            // `eval_interval_max` for its evaluation).
            let churn = &self.churn;
            let mut fresh = false;
            self.screen
                .rows_pending(|i| fresh |= !churn.get(i).copied().unwrap_or(false));
            if fresh {
                self.interval = self.cfg.eval_interval;
            }
        }
        for s in self.screen.drain_signals() {
            if let Signal::Progress(p) = &s {
                self.progress = Some(*p);
            }
            if let Signal::Prompt(PromptMark::CommandFinished(code)) = &s {
                // The shell reports how the foreground command ended; the
                // first report since the agent started is the agent's own
                // (the shell prints none while the agent holds the
                // terminal). Later ones are the commands run at the prompt
                // after it (`ls`, `false`): not the agent's exit code.
                if (self.manifest.is_some() || self.ended.is_some()) && !self.finish_seen {
                    self.finish_seen = true;
                    self.finish_code = *code;
                }
            }
            if self.signals.len() < 64 {
                self.signals.push((now, s));
            }
        }
        if self.screen.synchronized() {
            self.sync_since.get_or_insert(now);
        } else {
            self.sync_since = None;
        }
        self.last_output = Some(now);
        self.dirty = true;
    }

    /// Rebuilds the screen from a capture (`capture-pane` after a gap, or
    /// the first sight of a pane). The redraw is not activity.
    pub fn seed(&mut self, now: Duration, bytes: &[u8]) {
        self.catch_up(now, false);
        self.suppress_until = self.suppress_until.max(now + self.cfg.echo_window);
        self.feed(now, bytes);
    }

    /// The user typed `bytes` into the pane at `now`.
    pub fn input(&mut self, now: Duration, bytes: &[u8]) {
        self.catch_up(now, false);
        let kind = classify_input(bytes);
        if kind == InputKind::Passive {
            // Scrolling and focus reports make TUIs repaint: not activity.
            self.suppress_until = self.suppress_until.max(now + self.cfg.echo_window);
            return;
        }
        self.last_typing = Some(now);
        self.interval = self.cfg.eval_interval;
        self.suppress_until = self.suppress_until.max(now + self.cfg.echo_window);
        let cur = self.machine.current().clone();
        match kind {
            InputKind::Typing => {
                let may_direct = matches!(cur.state, Some(State::Idle | State::Completed))
                    || (cur.state == Some(State::Waiting) && cur.reason == Some(Reason::Prompt));
                if may_direct {
                    self.propose(
                        now,
                        Candidate {
                            state: State::Directing,
                            reason: None,
                            rule: "builtin/typing".into(),
                            confidence: 0.9,
                            trigger: Trigger::Input,
                        },
                    );
                }
            }
            InputKind::Submit | InputKind::Cancel => {
                // Released: the next screen decides (a submit usually shows
                // the agent working at once).
                if cur.state == Some(State::Directing) {
                    self.last_typing = None;
                    self.dirty = true;
                }
            }
            InputKind::Passive => {}
        }
    }

    /// The pane was resized at `now`.
    pub fn resize(&mut self, now: Duration, rows: u16, cols: u16) {
        self.catch_up(now, false);
        if (rows, cols) != self.screen.size() {
            self.screen.resize(rows, cols);
            self.interval = self.cfg.eval_interval;
            self.suppress_until = self.suppress_until.max(now + self.cfg.resize_grace);
            self.dirty = true;
        }
    }

    /// What the process sampler saw at `now`.
    pub fn observe_process(&mut self, now: Duration, obs: ProcessObservation) {
        self.catch_up(now, false);
        if let Some(cpu) = obs.cpu_percent {
            if cpu >= self.cfg.cpu_high {
                self.cpu_busy = true;
            } else if cpu < self.cfg.cpu_low {
                self.cpu_busy = false;
            }
        }
        self.live_child = obs.live_child.or(self.live_child);
        if !obs.agent_alive && self.manifest.is_some() {
            self.exit_code = obs.exit_code.or(self.exit_code);
            let rule = match obs.exit_code {
                Some(code) => format!("builtin/process-exit:{code}"),
                None => "builtin/process-exit".into(),
            };
            self.propose(
                now,
                Candidate {
                    state: State::Exited,
                    reason: None,
                    rule,
                    confidence: 1.0,
                    trigger: Trigger::Process,
                },
            );
        }
        self.run_timers(now);
    }

    /// Advances the clock to `now`, evaluating and firing timers due by then.
    pub fn tick(&mut self, now: Duration) {
        self.catch_up(now, true);
    }

    /// The next time the detector needs [`tick`](Self::tick), if any.
    pub fn poll_timeout(&self) -> Option<Duration> {
        let mut next: Option<Duration> = None;
        let mut at = |d: Duration| {
            let d = d.max(self.clock);
            next = Some(next.map_or(d, |n| n.min(d)));
        };
        if self.dirty {
            at(self.eval_deadline());
        }
        if self.manifest.is_some() {
            if let Some(d) = self.machine.lock_until() {
                at(d);
            }
            let cur = self.machine.current();
            match cur.state {
                Some(State::Working) => {
                    if self.evidence.is_none() && self.machine.ui_seen() {
                        if let Some(d) = self.silence_deadline() {
                            at(d);
                        }
                    }
                    if !self.quiet {
                        if let Some(d) = self.quiet_deadline() {
                            at(d);
                        }
                    }
                }
                Some(State::Directing) => {
                    if let Some(t) = self.last_typing {
                        at(t + self.cfg.directing_hold);
                    }
                }
                Some(State::Waiting) if self.live_child == Some(false) => {
                    at(self.silence_anchor() + self.cfg.watchdog);
                }
                _ => {}
            }
        }
        next
    }

    /// Takes the next state change.
    pub fn poll_transition(&mut self) -> Option<Transition> {
        self.out.pop_front()
    }

    /// Takes the signals (titles, notifications, progress, marks) seen.
    pub fn drain_signals(&mut self) -> Vec<(Duration, Signal)> {
        std::mem::take(&mut self.signals)
    }

    /// The screen model.
    pub fn screen(&self) -> &Screen {
        &self.screen
    }

    /// The current status.
    pub fn status(&self) -> Status {
        let cur: &Current = self.machine.current();
        let live = self.manifest.is_some();
        // A run that ended keeps its agent and `exited` until the next one.
        let identified = live || self.ended.is_some();
        let exited = cur.state == Some(State::Exited);
        Status {
            agent: self
                .manifest
                .as_ref()
                .map(|m| m.id.clone())
                .or_else(|| self.ended.clone()),
            state: if identified { cur.state } else { None },
            reason: if identified { cur.reason } else { None },
            since: cur.since,
            rule: cur.rule.clone(),
            confidence: cur.confidence,
            trigger: cur.trigger,
            quiet: self.quiet,
            silent_for: self.clock.saturating_sub(self.silence_anchor()),
            state_change_seq: cur.seq,
            run: self.run,
            cpu_hold: self.cpu_hold_since.is_some(),
            exit_code: if exited {
                self.exit_code.or(self.finish_code)
            } else {
                None
            },
            live: live && !exited,
        }
    }

    /// Every rule's verdict on the current screen, and why the pane is in
    /// its state.
    pub fn explain(&self) -> Explanation {
        let view = self.view();
        Explanation {
            status: self.status(),
            manifest: self.manifest.as_ref().map(|m| m.source.clone()),
            verified: self.manifest.as_ref().map(|m| m.verified),
            evidence: self.evidence.clone(),
            verdicts: self
                .manifest
                .as_ref()
                .map(|m| rules::verdicts(&view, m))
                .unwrap_or_default(),
            title: self.screen.title().to_owned(),
            alternate: self.screen.alternate(),
            recent: self.recent.iter().cloned().collect(),
        }
    }

    /// Since when no rule of the agent's manifest has matched the screen
    /// (`None`: the last evaluation found a rule, there is no live run, or
    /// it has not been evaluated yet): the earliest evaluation of an
    /// unbroken spell of evaluations that all found no rule. Meanwhile the
    /// state comes only from fallback evidence (activity, silence, the
    /// process tree, typing). A run that has exited is not counted: its
    /// screen is the shell's.
    pub fn unmatched_since(&self) -> Option<Duration> {
        let live = self.manifest.is_some() && self.machine.current().state != Some(State::Exited);
        self.unmatched_since.filter(|_| live)
    }

    /// [`unmatched_since`](Self::unmatched_since), once that spell has
    /// lasted `unrecognised_after` by the detector's clock: a screen the
    /// manifest does not know, worth capturing as a test case.
    pub fn unrecognised_since(&self) -> Option<Duration> {
        self.unmatched_since()
            .filter(|s| self.clock.saturating_sub(*s) >= self.cfg.unrecognised_after)
    }

    /// The last state changes (up to 16), oldest first.
    pub fn recent(&self) -> impl Iterator<Item = &Transition> {
        self.recent.iter()
    }

    /// The plain-text view the rules see.
    pub fn view(&self) -> ScreenView {
        self.view_of(self.screen.rows())
    }

    /// The view for an evaluation: the same, reading only the rows that
    /// changed since the last evaluation.
    fn updated_view(&mut self) -> ScreenView {
        let rows = self.screen.rows_updated().to_vec();
        self.view_of(rows)
    }

    fn view_of(&self, rows: Vec<String>) -> ScreenView {
        ScreenView {
            rows,
            title: self.screen.title().to_owned(),
            progress: self
                .progress
                .map(|p| p.word().to_owned())
                .unwrap_or_default(),
            alternate: self.screen.alternate(),
            cursor: self.screen.cursor(),
        }
    }

    fn eval_deadline(&self) -> Duration {
        let mut d = match self.last_eval {
            Some(last) => last + self.interval,
            None => Duration::ZERO,
        };
        if let Some(since) = self.sync_since {
            // Mid-frame: wait for the frame to end, but not forever.
            d = d.max(since + self.cfg.sync_max);
        }
        d.max(self.clock)
    }

    fn silence_anchor(&self) -> Duration {
        let a = self.last_activity.unwrap_or(Duration::ZERO);
        match self.working_since {
            Some(w) if self.machine.current().state == Some(State::Working) => a.max(w),
            _ => a.max(self.machine.current().since),
        }
    }

    fn silence_deadline(&self) -> Option<Duration> {
        let base = self.silence_anchor() + self.cfg.settle;
        if self.cpu_busy || self.cpu_hold_since.is_some() {
            // Held by CPU; the hold itself expires.
            let since = self.cpu_hold_since.unwrap_or(base);
            return Some(if self.cpu_busy {
                since + self.cfg.cpu_backstop_max
            } else {
                base
            });
        }
        Some(base)
    }

    fn quiet_deadline(&self) -> Option<Duration> {
        Some(self.silence_anchor() + self.cfg.quiet_after)
    }

    /// Runs everything due up to `now` (inclusive when `inclusive`, so that
    /// bytes arriving at one instant are never split by an evaluation).
    fn catch_up(&mut self, now: Duration, inclusive: bool) {
        let now = now.max(self.clock);
        for _ in 0..64 {
            let Some(d) = self.poll_timeout() else { break };
            if d > now || (!inclusive && d == now) {
                break;
            }
            let before = (
                self.dirty,
                self.last_eval,
                self.machine.current().seq,
                self.quiet,
                self.cpu_hold_since,
            );
            self.clock = self.clock.max(d);
            if self.dirty && d >= self.eval_deadline() {
                self.evaluate(d);
            }
            self.run_timers(d);
            let after = (
                self.dirty,
                self.last_eval,
                self.machine.current().seq,
                self.quiet,
                self.cpu_hold_since,
            );
            if before == after {
                // Nothing was due after all (e.g. a lock that already
                // expired): step past it.
                self.clock = self.clock.max(d);
                if self.poll_timeout() == Some(d) {
                    break;
                }
            }
        }
        self.clock = now;
    }

    fn evaluate(&mut self, at: Duration) {
        self.dirty = false;
        self.last_eval = Some(at);
        // The rows this evaluation re-reads, and of those the ones the
        // evaluation before re-read too (see `churn`). Not kept any longer:
        // over a whole turn they would come to hold every row the turn ever
        // wrote, a dialog's rows included.
        let (churn, written) = (&mut self.churn, &mut self.written);
        churn.clear();
        let before = std::mem::take(written);
        self.screen.rows_pending(|i| {
            if written.len() <= i {
                written.resize(i + 1, false);
                churn.resize(i + 1, false);
            }
            written[i] = true;
            churn[i] = before.get(i).copied().unwrap_or(false);
        });
        let view = self.updated_view();
        let fp = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            view.rows.hash(&mut h);
            view.title.hash(&mut h);
            view.cursor.hash(&mut h);
            h.finish()
        };
        let changed = fp != self.fingerprint && at >= self.suppress_until;
        self.fingerprint = fp;
        let Some(manifest) = self.manifest.clone() else {
            if changed {
                self.last_activity = Some(at);
            }
            return;
        };
        let evidence = rules::evaluate(&view, &manifest);
        // Same evidence again: read less often; anything new: read at once.
        self.interval = if evidence == self.evidence {
            (self.interval * 2).clamp(self.cfg.eval_interval, self.cfg.eval_interval_max)
        } else {
            self.cfg.eval_interval
        };
        self.evidence = evidence;
        match self.evidence {
            None => {
                self.unmatched_since.get_or_insert(at);
            }
            Some(_) => self.unmatched_since = None,
        }
        if changed {
            self.last_activity = Some(at);
            // Only changes no rule explains count towards "activity": the
            // agent redrawing a screen a rule already claims (echo at its
            // prompt, a spinner) is that rule's business.
            self.prev_activity = match self.evidence {
                None => self.unexplained_change.replace(at),
                Some(_) => {
                    self.unexplained_change = None;
                    None
                }
            };
        }
        self.decide(at);
    }

    /// Turns the last evidence (or its absence) into a candidate.
    fn decide(&mut self, at: Duration) {
        let cur_state = self.machine.current().state;
        let candidate = match &self.evidence {
            Some(e) => {
                let state = match e.state {
                    RuleState::Working => State::Working,
                    RuleState::Waiting => State::Waiting,
                    RuleState::Ready => self.machine.ready_state(),
                    RuleState::Exited => State::Exited,
                };
                // Goodbye text (or the shell's screen) before the agent's own
                // UI was ever seen is the shell about to start it, not an exit.
                if e.state == RuleState::Exited && !self.machine.ui_seen() {
                    return;
                }
                // The same agent's UI back, unmistakably, after its run
                // ended: it was started again (an exit and a restart faster
                // than the process sampler notices). That is a new run.
                if cur_state == Some(State::Exited)
                    && e.state != RuleState::Exited
                    && e.confidence >= self.cfg.strong_confidence
                {
                    self.new_run();
                    return self.decide(at);
                }
                if e.state != RuleState::Exited {
                    self.machine.saw_ui();
                }
                // Typing keeps directing until the agent shows something
                // other than its prompt.
                if cur_state == Some(State::Directing)
                    && e.state == RuleState::Ready
                    && self.directing_live(at)
                {
                    return;
                }
                Some(Candidate {
                    state,
                    reason: e.reason,
                    rule: e.rule.clone(),
                    confidence: e.confidence,
                    trigger: Trigger::Screen,
                })
            }
            None => {
                // One repaint is not work (a cursor moved, an Enter echoed):
                // activity is two screen changes within the window.
                let active = self
                    .prev_activity
                    .is_some_and(|a| at.saturating_sub(a) <= self.cfg.activity_window);
                if active && cur_state != Some(State::Directing) {
                    Some(Candidate {
                        state: State::Working,
                        reason: None,
                        rule: "builtin/activity".into(),
                        confidence: 0.5,
                        trigger: Trigger::Activity,
                    })
                } else {
                    None
                }
            }
        };
        if let Some(c) = candidate {
            self.propose(at, c);
        }
    }

    fn directing_live(&self, at: Duration) -> bool {
        self.last_typing
            .is_some_and(|t| at < t + self.cfg.directing_hold)
    }

    fn run_timers(&mut self, at: Duration) {
        if self.manifest.is_none() {
            return;
        }
        let cur = self.machine.current().clone();
        // A lock that expired may let the last evidence through now.
        if self.machine.lock_until().is_some_and(|d| at >= d) {
            self.machine.expire_lock(at);
            self.decide(at);
        }
        match cur.state {
            Some(State::Working) => {
                let anchor = self.silence_anchor();
                let silent = at.saturating_sub(anchor);
                if !self.quiet && silent >= self.cfg.quiet_after {
                    self.quiet = true;
                }
                // Silence asks nothing of the user before the agent's UI is
                // up: it is still starting (a slow machine, a cold cache).
                if self.evidence.is_none() && silent >= self.cfg.settle && self.machine.ui_seen() {
                    if self.cpu_busy {
                        let since = *self.cpu_hold_since.get_or_insert(at);
                        if at < since + self.cfg.cpu_backstop_max {
                            return;
                        }
                    }
                    self.propose(
                        at,
                        Candidate {
                            state: State::Waiting,
                            reason: Some(Reason::Prompt),
                            rule: "builtin/silence".into(),
                            confidence: 0.5,
                            trigger: Trigger::Silence,
                        },
                    );
                }
            }
            Some(State::Directing) if !self.directing_live(at) => {
                // Released: back to what the screen shows.
                {
                    let state = self.machine.ready_state();
                    let rule = self
                        .evidence
                        .as_ref()
                        .map_or_else(|| "builtin/typing-ended".to_owned(), |e| e.rule.clone());
                    self.propose(
                        at,
                        Candidate {
                            state,
                            reason: None,
                            rule,
                            confidence: 0.9,
                            trigger: Trigger::Input,
                        },
                    );
                }
            }
            Some(State::Waiting)
                if self.live_child == Some(false)
                    && at.saturating_sub(self.silence_anchor()) >= self.cfg.watchdog =>
            {
                self.propose(
                    at,
                    Candidate {
                        state: State::Idle,
                        reason: None,
                        rule: "builtin/watchdog".into(),
                        confidence: 0.5,
                        trigger: Trigger::Watchdog,
                    },
                );
            }
            _ => {}
        }
    }

    fn propose(&mut self, at: Duration, c: Candidate) {
        if self.machine.propose(at, c) {
            while let Some(t) = self.machine.poll_transition() {
                if t.to == State::Working {
                    self.working_since = Some(at);
                    self.quiet = false;
                    self.cpu_hold_since = None;
                } else {
                    self.cpu_hold_since = None;
                    self.quiet = false;
                }
                if self.recent.len() == RECENT {
                    self.recent.pop_front();
                }
                self.recent.push_back(t.clone());
                self.out.push_back(t);
            }
        }
    }
}
