//! The records: what ran where, kept current from the pane table, ended
//! only when the server outlives the agent, bounded, and loaded back with
//! anything out of bounds dropped and said.

use tend_protocol::PaneId;

use super::{Conversation, End, Home, Place};

/// Records kept at most: the oldest ended ones go first.
pub const MAX_RECORDS: usize = 200;
/// Longest folder, program or word kept.
pub const MAX_TEXT: usize = 4096;
/// Most words of a command line kept.
pub const MAX_ARGV: usize = 64;
/// Longest name (agent, session, window) kept.
pub const MAX_NAME: usize = 256;

/// What a process sample says runs in a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// The agent.
    pub agent: String,
    /// Its conversation's id, when found this time.
    pub id: Option<String>,
    /// How it was found.
    pub found_by: Option<String>,
    /// Its folder.
    pub folder: String,
    /// The pane's place.
    pub place: Place,
    /// Its command line.
    pub argv: Vec<String>,
    /// The program the shell ran, when it names the agent's.
    pub program: Option<String>,
    /// Its store's folder.
    pub home: Option<Home>,
    /// Its process.
    pub pid: u32,
    /// Its process's start (clock ticks after boot).
    pub start_ticks: u64,
}

/// Every remembered run, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Book {
    records: Vec<Conversation>,
}

impl Book {
    /// An empty book.
    pub fn new() -> Self {
        Book::default()
    }

    /// The records, oldest first.
    pub fn records(&self) -> &[Conversation] {
        &self.records
    }

    /// The run live in `pane`, if one is.
    pub fn live_in(&self, pane: PaneId) -> Option<&Conversation> {
        self.records
            .iter()
            .find(|r| r.pane == Some(pane) && !r.ending)
    }

    /// An agent runs in `pane`: its record is kept current, taken over
    /// from a daemon that saw the same run before, or started. True when
    /// something worth saving changed.
    pub fn observe(&mut self, pane: PaneId, o: Observed, now: u64) -> bool {
        let same_run = |r: &Conversation| r.pid == o.pid && r.start_ticks == o.start_ticks;
        let mut changed = false;
        // Another run in this pane has ended: this one replaced it.
        for r in &mut self.records {
            if r.pane == Some(pane) && !same_run(r) && !r.ending {
                r.ending = true;
            }
        }
        let at = match self
            .records
            .iter()
            .position(|r| r.pane == Some(pane) && same_run(r))
        {
            Some(i) => i,
            None => match self
                .records
                .iter()
                .position(|r| r.left_running() && same_run(r) && r.agent == o.agent)
            {
                Some(i) => {
                    self.records[i].pane = Some(pane);
                    i
                }
                None => {
                    self.records.push(Conversation {
                        agent: o.agent.clone(),
                        id: None,
                        found_by: None,
                        folder: String::new(),
                        place: o.place.clone(),
                        argv: Vec::new(),
                        program: None,
                        home: None,
                        pid: o.pid,
                        start_ticks: o.start_ticks,
                        since: now,
                        seen: now,
                        end: End::Running,
                        pane: Some(pane),
                        ending: false,
                    });
                    changed = true;
                    self.records.len() - 1
                }
            },
        };
        let r = &mut self.records[at];
        let before = r.clone();
        r.ending = false;
        r.end = End::Running;
        r.seen = now;
        if o.id.is_some() {
            r.id = o.id;
            r.found_by = o.found_by;
        }
        r.agent = o.agent;
        r.folder = o.folder;
        r.place = o.place;
        r.argv = o.argv;
        r.program = o.program.or(r.program.take());
        r.home = o.home.or(r.home.take());
        bound(r);
        changed |= Conversation {
            seen: before.seen,
            ..r.clone()
        } != before;
        if changed {
            self.evict();
        }
        changed
    }

    /// The run in `pane` ended, or the pane stopped showing an agent: to
    /// be confirmed by the next listing ([`Book::listed`]).
    pub fn agent_gone(&mut self, pane: PaneId) {
        for r in &mut self.records {
            if r.pane == Some(pane) {
                r.ending = true;
            }
        }
    }

    /// A listing of every pane and its place: a run whose pane is gone
    /// was closed; one whose end was seen ended (the server is alive, so
    /// its death did not end it); the others' places stay current. True
    /// when something worth saving changed.
    pub fn listed(&mut self, panes: &[(PaneId, Place)], now: u64) -> bool {
        let mut changed = false;
        for r in &mut self.records {
            let Some(pane) = r.pane else { continue };
            match panes.iter().find(|(id, _)| *id == pane) {
                None => {
                    r.end = End::Closed { at: now };
                    r.pane = None;
                    changed = true;
                }
                Some(_) if r.ending => {
                    r.end = End::Exited { at: now };
                    r.pane = None;
                    r.ending = false;
                    changed = true;
                }
                Some((_, place)) => {
                    if r.place != *place {
                        r.place = place.clone();
                        changed = true;
                    }
                }
            }
        }
        changed
    }

    /// Record `index` was resumed into `into`: never again.
    pub fn resumed(&mut self, index: usize, into: String, now: u64) {
        if let Some(r) = self.records.get_mut(index) {
            r.end = End::Resumed { at: now, into };
        }
    }

    /// Records as a saved file held them: those out of bounds are dropped
    /// and said, the newest [`MAX_RECORDS`] kept. None is live.
    pub fn load(records: Vec<Conversation>) -> (Book, Vec<String>) {
        let mut warnings = Vec::new();
        let mut kept = Vec::new();
        for mut r in records {
            let before = r.clone();
            bound(&mut r);
            if r != before || r.agent.is_empty() {
                warnings.push(format!(
                    "a saved conversation of {:?} was out of bounds and was dropped",
                    truncated(&r.agent)
                ));
                continue;
            }
            r.pane = None;
            r.ending = false;
            kept.push(r);
        }
        let mut book = Book { records: kept };
        book.evict();
        (book, warnings)
    }

    /// Takes the records of `saved` (a state file read late) for runs this
    /// book does not hold; what it holds (newer) stays.
    pub fn merge_missing(&mut self, saved: Book) {
        let mut older: Vec<Conversation> = saved
            .records
            .into_iter()
            .filter(|s| {
                !self
                    .records
                    .iter()
                    .any(|r| r.pid == s.pid && r.start_ticks == s.start_ticks && r.agent == s.agent)
            })
            .collect();
        older.append(&mut self.records);
        self.records = older;
        self.evict();
    }

    /// Keeps at most [`MAX_RECORDS`]: the oldest that no longer run go
    /// first, then the oldest left running; live ones stay.
    fn evict(&mut self) {
        while self.records.len() > MAX_RECORDS {
            let oldest = |pick: &dyn Fn(&Conversation) -> bool| {
                self.records
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| pick(r))
                    .min_by_key(|(_, r)| r.seen)
                    .map(|(i, _)| i)
            };
            let Some(i) =
                oldest(&|r| r.end != End::Running).or_else(|| oldest(&|r| r.pane.is_none()))
            else {
                return;
            };
            self.records.remove(i);
        }
    }
}

fn truncated(s: &str) -> String {
    s.chars().take(40).collect()
}

/// Cuts a record down to the bounds (an observed one) — a loaded one that
/// changes is dropped instead.
fn bound(r: &mut Conversation) {
    let cut = |s: &mut String, max: usize| {
        if s.len() > max {
            let mut end = max;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
        }
    };
    cut(&mut r.agent, MAX_NAME);
    cut(&mut r.place.session, MAX_NAME);
    cut(&mut r.place.window_name, MAX_NAME);
    cut(&mut r.folder, MAX_TEXT);
    if r.id
        .as_ref()
        .is_some_and(|id| id.len() > tend_detector::manifest::resume::MAX_ID)
    {
        r.id = None;
    }
    r.argv.truncate(MAX_ARGV);
    for w in &mut r.argv {
        cut(w, MAX_TEXT);
    }
    if r.program.as_ref().is_some_and(|p| p.len() > MAX_TEXT) {
        r.program = None;
    }
    if r.home.as_ref().is_some_and(|h| h.dir.len() > MAX_TEXT) {
        r.home = None;
    }
    if let Some(f) = r.found_by.as_mut() {
        cut(f, MAX_NAME);
    }
    if let End::Resumed { into, .. } = &mut r.end {
        cut(into, MAX_NAME * 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn place(session: &str, w: u32, p: u32) -> Place {
        Place {
            session: session.into(),
            window_index: w,
            window_name: "agent".into(),
            pane_index: p,
        }
    }

    fn seen(pid: u32, id: Option<&str>) -> Observed {
        Observed {
            agent: "claude".into(),
            id: id.map(str::to_owned),
            found_by: id.map(|_| "session file".to_owned()),
            folder: "/w".into(),
            place: place("work", 0, 0),
            argv: vec!["claude".into()],
            program: None,
            home: None,
            pid,
            start_ticks: 1000 + u64::from(pid),
        }
    }

    #[test]
    fn a_run_is_recorded_once_and_its_id_kept_when_a_lookup_finds_none() {
        let mut b = Book::new();
        assert!(b.observe(PaneId(1), seen(10, None), 100));
        assert!(b.observe(PaneId(1), seen(10, Some("a")), 101));
        assert!(
            !b.observe(PaneId(1), seen(10, None), 102),
            "only `seen` moved"
        );
        assert_eq!(b.records().len(), 1);
        assert_eq!(b.records()[0].id.as_deref(), Some("a"));
        assert_eq!(b.records()[0].seen, 102);
        assert_eq!(b.live_in(PaneId(1)).map(|r| r.pid), Some(10));
    }

    #[test]
    fn an_end_counts_only_once_a_listing_shows_the_server_alive() {
        let mut b = Book::new();
        b.observe(PaneId(1), seen(10, Some("a")), 100);
        b.observe(PaneId(2), seen(20, Some("b")), 100);
        b.agent_gone(PaneId(1));
        // The server died before a listing: both were left running.
        let saved = b.clone();
        let (loaded, warnings) = Book::load(saved.records().to_vec());
        assert!(warnings.is_empty());
        assert!(loaded.records().iter().all(Conversation::left_running));
        // It lived on: pane 1's agent exited, pane 2 was closed.
        assert!(b.listed(&[(PaneId(1), place("work", 0, 0))], 105));
        assert_eq!(b.records()[0].end, End::Exited { at: 105 });
        assert_eq!(b.records()[1].end, End::Closed { at: 105 });
        assert!(!b.records().iter().any(Conversation::left_running));
    }

    #[test]
    fn a_new_run_in_the_pane_ends_the_one_before() {
        let mut b = Book::new();
        b.observe(PaneId(1), seen(10, Some("a")), 100);
        b.observe(PaneId(1), seen(11, Some("b")), 101);
        b.listed(&[(PaneId(1), place("work", 0, 0))], 102);
        assert_eq!(b.records()[0].end, End::Exited { at: 102 });
        assert_eq!(b.records()[1].end, End::Running);
        assert_eq!(
            b.live_in(PaneId(1)).and_then(|r| r.id.as_deref()),
            Some("b")
        );
    }

    #[test]
    fn a_daemon_started_later_takes_the_same_run_over() {
        let mut b = Book::new();
        b.observe(PaneId(1), seen(10, Some("a")), 100);
        let (mut later, _) = Book::load(b.records().to_vec());
        assert!(later.records()[0].left_running());
        later.observe(PaneId(7), seen(10, Some("a")), 200);
        assert_eq!(later.records().len(), 1);
        assert_eq!(later.records()[0].pane, Some(PaneId(7)));
        assert!(!later.records()[0].left_running());
    }

    #[test]
    fn places_follow_the_pane() {
        let mut b = Book::new();
        b.observe(PaneId(1), seen(10, None), 100);
        assert!(b.listed(&[(PaneId(1), place("renamed", 3, 1))], 101));
        assert_eq!(b.records()[0].place, place("renamed", 3, 1));
        assert!(!b.listed(&[(PaneId(1), place("renamed", 3, 1))], 102));
    }

    #[test]
    fn the_book_is_bounded_and_keeps_what_runs() {
        let mut b = Book::new();
        for i in 0..(MAX_RECORDS as u32 + 50) {
            b.observe(PaneId(i), seen(i, Some("x")), u64::from(i));
            if i % 2 == 0 {
                b.agent_gone(PaneId(i));
            }
        }
        let panes: Vec<(PaneId, Place)> = (0..(MAX_RECORDS as u32 + 50))
            .map(|i| (PaneId(i), place("work", 0, 0)))
            .collect();
        b.listed(&panes, 1_000);
        b.observe(PaneId(9_999), seen(9_999, Some("y")), 1_001);
        assert_eq!(b.records().len(), MAX_RECORDS);
        let running = b.records().iter().filter(|r| r.end == End::Running).count();
        assert_eq!(running, MAX_RECORDS / 2 + 25 + 1, "every running one kept");
    }

    #[test]
    fn out_of_bounds_records_are_dropped_when_loaded_and_cut_when_observed() {
        let mut b = Book::new();
        let mut o = seen(10, Some("a"));
        o.folder = "/".repeat(MAX_TEXT + 10);
        o.argv = vec!["w".into(); MAX_ARGV + 3];
        b.observe(PaneId(1), o, 100);
        assert_eq!(b.records()[0].folder.len(), MAX_TEXT);
        assert_eq!(b.records()[0].argv.len(), MAX_ARGV);
        let mut bad = b.records()[0].clone();
        bad.place.session = "s".repeat(MAX_NAME + 1);
        let good = b.records()[0].clone();
        let (loaded, warnings) = Book::load(vec![bad, good]);
        assert_eq!(loaded.records().len(), 1);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
    }
}
