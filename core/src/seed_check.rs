//! Checking a seed that pane output may have overlapped.
//!
//! A pane's screen starts from a capture (`capture-pane`), and its output
//! then comes through its pipe. tmux writes a pane's output into the pipe
//! as it reads it, so the pipe can hold bytes the capture already shows:
//! output tmux read before the capture that the daemon reads after it (the
//! tap hands its pipe over some milliseconds after `pipe-pane` installs it,
//! and the event loop reads pipes on its read ticks). Fed on top of the
//! seed, those bytes are drawn twice. An agent redraws its UI with relative
//! cursor moves, so a tail of a frame drawn twice can leave a dialog half
//! overwritten, and a dialog then stays unrecognised for as long as it
//! waits (the last 30 % of Claude Code's approval dialog fed twice reads as
//! work in progress, not as a dialog).
//!
//! Nothing in the stream says where the capture was taken, so the daemon
//! checks instead: output arriving soon after a seed makes the pane
//! *suspect*, and once it has been quiet for [`QUIET`] (no bytes in flight
//! any more) it is captured again and the capture compared with the
//! emulated screen. A difference re-seeds the pane from that capture; the
//! re-seed is checked the same way, at most [`MAX_ROUNDS`] times in a row.

use std::time::Duration;

use tend_detector::screen::Screen;

/// Output this soon after a seed, or after the pane's pipe is handed over,
/// may be bytes the seed already holds (a tap's hand-over can take this
/// long on a loaded machine).
pub const OVERLAP: Duration = Duration::from_secs(2);

/// Quiet after the suspect output before the verifying capture: tmux writes
/// a pane's output to its pipe as it reads it, so by then nothing is in
/// flight.
pub const QUIET: Duration = Duration::from_millis(150);

/// Re-seeds made by verification in a row before the pane is left as it
/// is (a screen tmux and the emulator draw differently would otherwise be
/// captured for ever).
pub const MAX_ROUNDS: u8 = 3;

/// One pane's check: open for a while after each seed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SeedCheck {
    /// Output before this may overlap the seed.
    open_until: Option<Duration>,
    /// The latest output that may have overlapped it.
    suspect: Option<Duration>,
    /// Verifications in a row that found the screen wrong.
    rounds: u8,
}

impl SeedCheck {
    /// The pane was seeded at `at`: first sight, a resync after a gap, or
    /// (`by_check`) a verification that found the screen wrong.
    pub fn seeded(&mut self, at: Duration, by_check: bool) {
        if !by_check {
            self.rounds = 0;
        }
        self.suspect = None;
        self.open(at);
    }

    /// The pane's pipe was handed over at `at`: what it holds was written
    /// before, perhaps before the seed.
    pub fn handed_over(&mut self, at: Duration) {
        self.open(at);
    }

    fn open(&mut self, at: Duration) {
        if self.rounds < MAX_ROUNDS {
            let until = at + OVERLAP;
            self.open_until = Some(self.open_until.map_or(until, |u| u.max(until)));
        }
    }

    /// The pane printed at `at`. Output in the window makes the pane
    /// suspect; once suspect, the check waits for the pane to be quiet
    /// after its latest output, window or not.
    pub fn output(&mut self, at: Duration) {
        if self.suspect.is_some() || self.open_until.is_some_and(|u| at <= u) {
            self.suspect = Some(self.suspect.map_or(at, |s| s.max(at)));
        }
    }

    /// When the verifying capture is due, if one is.
    pub fn due(&self) -> Option<Duration> {
        self.suspect.map(|s| s + QUIET)
    }

    /// The verifying capture was asked for: nothing more is suspect until
    /// the next seed or hand-over (a capture that fails, the pane gone,
    /// leaves nothing waiting).
    pub fn ask(&mut self) {
        self.suspect = None;
        self.open_until = None;
    }

    /// The verifying capture came back as `capture` (the bytes that rebuild
    /// it); returns whether `screen` shows something else, in which case
    /// the caller re-seeds from the capture and calls [`SeedCheck::seeded`].
    pub fn differs(&mut self, capture: &[u8], screen: &Screen) -> bool {
        let (rows, cols) = screen.size();
        let mut truth = Screen::with_history(rows, cols, 0);
        truth.process(capture);
        let differs = truth.alternate() != screen.alternate() || truth.rows() != screen.rows();
        if differs {
            self.rounds = self.rounds.saturating_add(1);
        } else {
            self.rounds = 0;
        }
        differs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn output_soon_after_a_seed_is_checked_once_the_pane_is_quiet() {
        let mut c = SeedCheck::default();
        c.seeded(ms(1000), false);
        assert_eq!(c.due(), None, "nothing printed yet");
        c.output(ms(1020));
        assert_eq!(c.due(), Some(ms(1170)));
        // Printing on, past the window: the check waits for quiet.
        c.output(ms(3100));
        assert_eq!(c.due(), Some(ms(3250)));
        c.ask();
        assert_eq!(c.due(), None, "asked once");
        c.output(ms(3300));
        assert_eq!(c.due(), None, "output after the check is not suspect");
    }

    #[test]
    fn output_long_after_the_seed_is_not_suspect() {
        let mut c = SeedCheck::default();
        c.seeded(ms(1000), false);
        c.output(ms(3001));
        assert_eq!(c.due(), None);
        c.output(ms(3500));
        assert_eq!(c.due(), None);
    }

    #[test]
    fn a_pipe_handed_over_late_opens_the_window_again() {
        let mut c = SeedCheck::default();
        c.seeded(ms(1000), false);
        c.handed_over(ms(4000));
        c.output(ms(4020));
        assert_eq!(c.due(), Some(ms(4170)));
    }

    #[test]
    fn the_check_compares_text_and_which_screen_is_shown() {
        let mut shown = Screen::new(4, 20);
        shown.process(b"one\r\ntwo");
        let mut c = SeedCheck::default();
        assert!(!c.differs(b"\x1b[?1049l\x1b[H\x1b[2Jone\r\ntwo", &shown));
        assert!(c.differs(b"\x1b[?1049l\x1b[H\x1b[2Jone\r\ntwo\r\nthree", &shown));
        assert!(c.differs(b"\x1b[?1049h\x1b[H\x1b[2Jone\r\ntwo", &shown));
    }

    #[test]
    fn re_seeds_stop_after_a_few_rounds_in_a_row() {
        let shown = Screen::new(4, 20);
        let mut c = SeedCheck::default();
        for round in 0..MAX_ROUNDS {
            c.seeded(ms(1000 * u64::from(round)), round > 0);
            c.output(ms(1000 * u64::from(round) + 10));
            assert!(c.due().is_some(), "round {round}");
            c.ask();
            assert!(c.differs(b"never the same", &shown));
        }
        c.seeded(ms(10_000), true);
        c.output(ms(10_010));
        assert_eq!(c.due(), None, "given up");
        // A later seed of its own (a gap) is checked again.
        c.seeded(ms(20_000), false);
        c.output(ms(20_010));
        assert!(c.due().is_some());
        // And a check that finds the screen right starts the count again.
        c.ask();
        assert!(!c.differs(b"", &shown));
        assert_eq!(c.rounds, 0);
    }
}
