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
//!
//! The files: this one holds the detector and its inputs; `input.rs` what
//! a chunk of keystrokes is; `clock.rs` what falls due when (evaluation,
//! silence, quiet, the watchdog) and catching up to an input's time;
//! `evaluate.rs` reading the screen and turning what the rules found into a
//! state; `status.rs` what the detector says about the pane (`tend list`,
//! `tend explain`).

use std::sync::Arc;
use std::time::Duration;

use crate::config::DetectorConfig;
use crate::machine::{Candidate, Machine};
use crate::manifest::Manifest;
use crate::psp;
use crate::rules::{self, Evidence, ScreenView};
use crate::screen::Screen;
use crate::signals::{Progress, PromptMark, Signal};
use crate::state::{Reason, State, Transition, Trigger};

mod clock;
mod evaluate;
mod input;
mod status;

pub use input::{classify_input, InputKind};
pub use status::{Explanation, Status};

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
    /// The screen as the last evaluation read it: the next one compares
    /// the screen with it to say whether anything changed, and copies only
    /// the rows that did.
    seen: ScreenView,
    /// What the last evaluations read of each region and what each rule
    /// made of it: a rule whose regions read the same is not matched again.
    memo: rules::Memo,
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
    /// The process sampler saw this run's process gone: only the process
    /// coming back starts another run, since the screen the agent left
    /// behind still shows its UI.
    process_gone: bool,
    recent: std::collections::VecDeque<Transition>,
    out: std::collections::VecDeque<Transition>,
    /// What the program said about itself through OSC 7501 (read from the
    /// same bytes as the screen; which of the two decides is the caller's
    /// business, see `tend-attention`'s `report/`).
    psp: psp::Tracker,
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
            seen: ScreenView::default(),
            memo: rules::Memo::default(),
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
            process_gone: false,
            recent: Default::default(),
            out: Default::default(),
            psp: psp::Tracker::new(),
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
        if self.manifest.is_some() {
            // The run ended, or another agent took the pane: what the
            // program said about itself ends with it. (An agent named
            // after it started keeps what it said before it was named.)
            self.psp.forget();
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
        self.process_gone = false;
    }

    /// The manifest in use.
    pub fn manifest(&self) -> Option<&Arc<Manifest>> {
        self.manifest.as_ref()
    }

    /// Feeds pane output that arrived at `now`.
    pub fn feed(&mut self, now: Duration, bytes: &[u8]) {
        self.feed_drawn(now, bytes, false);
    }

    /// Feeds a whole screen redrawn from a capture of it at `now` (a pane
    /// read by polling, or a screen the multiplexer pushes): the bytes
    /// write every row, so rows rewritten with the text they had are taken
    /// as read. Otherwise every row would be churn (written at each of the
    /// last two evaluations), a dialog's new rows too, and an evaluation
    /// backed off on a screen that kept its evidence would wait up to
    /// `eval_interval_max` after the capture that brought the dialog.
    pub fn feed_redrawn(&mut self, now: Duration, bytes: &[u8]) {
        self.feed_drawn(now, bytes, true);
    }

    fn feed_drawn(&mut self, now: Duration, bytes: &[u8], redrawn: bool) {
        self.catch_up(now, false);
        if bytes.is_empty() {
            return;
        }
        self.screen.process(bytes);
        if redrawn {
            self.screen.absorb_rewrites(&self.seen.rows);
        }
        let mut shell_prompt = false;
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
            shell_prompt |= s == Signal::Prompt(PromptMark::PromptStart);
            if let Signal::Prompt(PromptMark::CommandFinished(code)) = &s {
                // The shell reports how the foreground command ended; the
                // first report since the agent started is the agent's own
                // (the shell prints none while the agent holds the
                // terminal). Later ones are the commands run at the prompt
                // after it (`ls`, `false`): not the agent's exit code.
                // Nor is a mark read before the agent's UI was: the
                // prompt's own report from before the agent started,
                // whose bytes reached tend after the process sample that
                // named the agent (a loaded machine delays the tap).
                let ours = self.manifest.is_some() || self.ended.is_some();
                if ours && !self.finish_seen && self.machine.ui_seen() {
                    self.finish_seen = true;
                    self.finish_code = *code;
                }
            }
            if self.signals.len() < 64 {
                self.signals.push((now, s));
            }
        }
        if shell_prompt {
            // The shell shows its prompt again: whatever program reported
            // is no longer in the foreground.
            self.psp.forget();
        }
        self.psp.feed(now, bytes);
        if self.screen.synchronized() {
            self.sync_since.get_or_insert(now);
        } else {
            self.sync_since = None;
        }
        self.last_output = Some(now);
        self.dirty = true;
    }

    /// Output of the pane was dropped after what was fed (a capture will
    /// put the screen right): the program's word starts afresh.
    pub fn output_dropped(&mut self) {
        self.psp.stream_broken();
    }

    /// Takes the OSC 7501 sequences saved from output that had to be
    /// dropped at `now` (see [`psp::Salvage`]): the program's word, which
    /// a drop must not lose. The screen is not touched (the capture that
    /// follows a drop puts it right).
    pub fn feed_salvaged(&mut self, now: Duration, salvaged: &psp::Salvaged) {
        self.catch_up(now, false);
        self.psp.feed_salvaged(now, salvaged);
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
    ///
    /// The program in the pane learns of a resize (SIGWINCH) before tend
    /// does (tend hears of it from the multiplexer a moment later), so its
    /// redraw for the new size may already have arrived, drawn into the old
    /// size. The screen changes since the last evaluation, and unexplained
    /// changes within the grace before `now`, are taken for that redraw: not
    /// activity. (The adapter rebuilds the screen from the multiplexer's
    /// after a resize; see the daemon's listing.)
    pub fn resize(&mut self, now: Duration, rows: u16, cols: u16) {
        if (rows, cols) == self.screen.size() {
            self.catch_up(now, false);
            return;
        }
        self.suppress_until = self.suppress_until.max(now + self.cfg.resize_grace);
        self.catch_up(now, false);
        let recent =
            |t: Option<Duration>| t.is_some_and(|t| now.saturating_sub(t) <= self.cfg.resize_grace);
        if recent(self.unexplained_change) {
            self.unexplained_change = None;
        }
        if recent(self.prev_activity) {
            self.prev_activity = None;
        }
        let since = now.saturating_sub(self.cfg.resize_grace);
        if self
            .machine
            .retract_activity(now, since, "builtin/resize-redraw")
        {
            if self.machine.current().state != Some(State::Working) {
                self.working_since = None;
            }
            self.take_transitions();
        }
        self.screen.resize(rows, cols);
        self.interval = self.cfg.eval_interval;
        self.dirty = true;
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
        let exited = self.machine.current().state == Some(State::Exited);
        if obs.agent_alive && exited && self.process_gone && self.manifest.is_some() {
            // The process that ended is back (started again before the
            // identity was dropped): a new run, read from the screen.
            self.new_run();
            self.dirty = true;
        }
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
            // Exited is reachable from every state, at full confidence.
            self.process_gone = true;
            self.psp.forget();
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
        if self.psp.changed() {
            // The program's word changed: the caller reads it at once.
            at(self.clock);
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

    /// When the pane last printed (fed or seeded), by the caller's clock.
    pub fn last_output(&self) -> Option<Duration> {
        self.last_output
    }

    /// What the pane's program said about itself (OSC 7501).
    pub fn psp(&self) -> &psp::Tracker {
        &self.psp
    }

    /// Forgets what the pane's program said about itself: the caller knows
    /// it is no longer there, or that no terminal answered it (see
    /// `tend run`).
    pub fn forget_reports(&mut self) {
        self.psp.forget();
    }
}
