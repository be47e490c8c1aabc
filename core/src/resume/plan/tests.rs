use tend_detector::Registry;

use super::*;
use crate::resume::book::Observed;
use crate::resume::{End, Home};

const A: &str = "eb34e611-e881-43e1-9a20-021e02493a45";
const B: &str = "01a249fd-2644-7f41-a48c-d21dd5072d95";

fn place(session: &str, w: u32, p: u32) -> Place {
    Place {
        session: session.into(),
        window_index: w,
        window_name: "agent".into(),
        pane_index: p,
    }
}

fn run(pid: u32, id: Option<&str>, folder: &str, at: Place) -> Observed {
    Observed {
        agent: "claude".into(),
        id: id.map(str::to_owned),
        found_by: Some("session file".into()),
        folder: folder.into(),
        place: at,
        argv: vec!["node".into(), "/opt/claude/cli.js".into()],
        program: None,
        home: Some(Home {
            dir: "/home/u/.claude".into(),
            var: None,
        }),
        pid,
        start_ticks: u64::from(pid) * 10,
    }
}

/// A book saved by a daemon whose server then died, loaded by the next.
fn left(runs: Vec<Observed>) -> Book {
    let mut b = Book::new();
    for (i, o) in runs.into_iter().enumerate() {
        b.observe(PaneId(i as u32), o, 100 + i as u64);
    }
    Book::load(b.records().to_vec()).0
}

fn pane(n: u32, at: Place, folder: &str, shell: Shell) -> PaneNow {
    PaneNow {
        pane: PaneId(n),
        session_id: SessionId(7),
        place: at,
        folder: folder.into(),
        shell,
        running: Vec::new(),
    }
}

struct World {
    reg: Registry,
    stores: Vec<(String, Saved)>,
}

impl World {
    fn new() -> Self {
        World {
            reg: Registry::bundled(),
            stores: Vec::new(),
        }
    }

    fn with(mut self, id: &str, saved: Saved) -> Self {
        self.stores.push((id.into(), saved));
        self
    }

    fn plan(&self, book: &Book, panes: &[PaneNow], choice: Choice) -> Vec<Step> {
        let known = |agent: &str| {
            let m = self.reg.get(agent)?;
            Some(Known {
                name: &m.name,
                resume: m.resume.as_ref(),
            })
        };
        let mut saved = |c: &Conversation, _: &Resume| {
            self.stores
                .iter()
                .find(|(id, _)| Some(id.as_str()) == c.id.as_deref())
                .map_or(Saved::Missing, |(_, s)| s.clone())
        };
        plan(book, panes, &choice, &known, &mut saved)
    }
}

fn found(folder: &str) -> Saved {
    Saved::Found {
        folder: folder.into(),
    }
}

fn skipped(step: &Step) -> &str {
    match &step.verdict {
        Verdict::Skip(why) => why,
        v => panic!("not skipped: {v:?}"),
    }
}

#[test]
fn a_conversation_goes_back_to_its_pane_at_a_prompt_in_its_folder() {
    let book = left(vec![run(10, Some(A), "/w", place("work", 1, 0))]);
    let panes = [pane(3, place("work", 1, 0), "/w", Shell::AtPrompt)];
    let steps = World::new()
        .with(A, found("/w"))
        .plan(&book, &panes, Choice::All);
    assert_eq!(steps.len(), 1);
    assert!(steps[0].chosen);
    assert_eq!(
        steps[0].verdict,
        Verdict::Resume {
            target: Target::Pane {
                pane: PaneId(3),
                place: place("work", 1, 0)
            },
            command: vec!["claude".into(), "--resume".into(), A.into()],
        }
    );
}

#[test]
fn the_command_runs_the_program_that_started_it_with_its_store() {
    let mut o = run(10, Some(A), "/w", place("work", 1, 0));
    o.program = Some("/opt/agents/bin/claude".into());
    o.home = Some(Home {
        dir: "/cfg/claude".into(),
        var: Some("CLAUDE_CONFIG_DIR".into()),
    });
    let book = left(vec![o]);
    let panes = [pane(3, place("work", 1, 0), "/w", Shell::AtPrompt)];
    let steps = World::new()
        .with(A, found("/w"))
        .plan(&book, &panes, Choice::All);
    let Verdict::Resume { command, .. } = &steps[0].verdict else {
        panic!("{:?}", steps[0].verdict)
    };
    assert_eq!(
        command,
        &[
            "env",
            "CLAUDE_CONFIG_DIR=/cfg/claude",
            "/opt/agents/bin/claude",
            "--resume",
            A
        ]
    );
    // A program that is not the agent's own is not run: the manifest's word.
    let mut o = run(10, Some(A), "/w", place("work", 1, 0));
    o.program = Some("/tmp/evil".into());
    let steps = World::new()
        .with(A, found("/w"))
        .plan(&left(vec![o]), &panes, Choice::All);
    let Verdict::Resume { command, .. } = &steps[0].verdict else {
        panic!()
    };
    assert_eq!(command[0], "claude");
}

#[test]
fn never_into_another_folder() {
    let book = left(vec![run(10, Some(A), "/w", place("work", 1, 0))]);
    // Its place holds a shell in another folder: a new window in its own.
    let panes = [pane(3, place("work", 1, 0), "/elsewhere", Shell::AtPrompt)];
    let steps = World::new()
        .with(A, found("/w"))
        .plan(&book, &panes, Choice::All);
    assert_eq!(
        steps[0].verdict,
        Verdict::Resume {
            target: Target::NewWindow {
                session: Some(SessionId(7)),
                session_name: "work".into(),
                window_name: "agent".into(),
                folder: "/w".into(),
            },
            command: vec!["claude".into(), "--resume".into(), A.into()],
        }
    );
    // The store says the conversation is another folder's.
    let steps = World::new()
        .with(A, found("/other"))
        .plan(&book, &panes, Choice::All);
    assert_eq!(
        skipped(&steps[0]),
        "Claude Code's store says the conversation belongs to /other, not /w"
    );
}

#[test]
fn never_twice() {
    let mut book = left(vec![run(10, Some(A), "/w", place("work", 1, 0))]);
    let panes = [pane(3, place("work", 1, 0), "/w", Shell::AtPrompt)];
    let w = World::new().with(A, found("/w"));
    let steps = w.plan(&book, &panes, Choice::All);
    assert!(matches!(steps[0].verdict, Verdict::Resume { .. }));
    book.resumed(steps[0].index, "work:1.0".into(), 200);
    assert_eq!(
        book.records()[0].end,
        End::Resumed {
            at: 200,
            into: "work:1.0".into()
        }
    );
    assert!(w.plan(&book, &panes, Choice::All).is_empty());
    // Saved and loaded again, still resumed.
    let (book, _) = Book::load(book.records().to_vec());
    assert!(w.plan(&book, &panes, Choice::All).is_empty());
}

#[test]
fn never_into_a_pane_where_something_runs() {
    let book = left(vec![run(10, Some(A), "/w", place("work", 1, 0))]);
    let panes = [pane(
        3,
        place("work", 1, 0),
        "/w",
        Shell::Busy("vim".into()),
    )];
    let steps = World::new()
        .with(A, found("/w"))
        .plan(&book, &panes, Choice::All);
    assert_eq!(skipped(&steps[0]), "vim runs in work:1.0");
    let panes = [pane(
        3,
        place("work", 1, 0),
        "/w",
        Shell::Unknown("its processes cannot be read".into()),
    )];
    let steps = World::new()
        .with(A, found("/w"))
        .plan(&book, &panes, Choice::All);
    assert_eq!(skipped(&steps[0]), "work:1.0: its processes cannot be read");
}

#[test]
fn a_window_of_the_same_name_is_its_place_after_a_renumbering() {
    let book = left(vec![run(10, Some(A), "/w", place("work", 1, 0))]);
    let mut moved = place("work", 4, 0);
    moved.window_name = "agent".into();
    let mut other = place("work", 1, 0);
    other.window_name = "logs".into();
    let panes = [
        pane(3, other, "/elsewhere", Shell::AtPrompt),
        pane(5, moved.clone(), "/w", Shell::AtPrompt),
    ];
    let steps = World::new()
        .with(A, found("/w"))
        .plan(&book, &panes, Choice::All);
    assert!(matches!(
        &steps[0].verdict,
        Verdict::Resume {
            target: Target::Pane {
                pane: PaneId(5),
                ..
            },
            ..
        }
    ));
}

#[test]
fn a_gone_session_is_made_again() {
    let book = left(vec![run(10, Some(A), "/w", place("gone", 1, 0))]);
    let panes = [pane(3, place("work", 1, 0), "/w", Shell::AtPrompt)];
    let steps = World::new()
        .with(A, found("/w"))
        .plan(&book, &panes, Choice::All);
    assert!(matches!(
        &steps[0].verdict,
        Verdict::Resume {
            target: Target::NewWindow { session: None, session_name, .. },
            ..
        } if session_name == "gone"
    ));
}

#[test]
fn what_cannot_be_resumed_is_said() {
    let panes = [pane(3, place("work", 1, 0), "/w", Shell::AtPrompt)];
    let w = World::new().with(A, Saved::Missing).with(
        B,
        Saved::Unreadable("~/.claude/projects is another user's".into()),
    );
    let book = left(vec![run(10, None, "/w", place("work", 1, 0))]);
    assert_eq!(
        skipped(&w.plan(&book, &panes, Choice::All)[0]),
        "Claude Code did not say which conversation it held"
    );
    let book = left(vec![run(10, Some(A), "/w", place("work", 1, 0))]);
    assert_eq!(
        skipped(&w.plan(&book, &panes, Choice::All)[0]),
        "the conversation is not in Claude Code's store (removed, or no turn was taken)"
    );
    let book = left(vec![run(10, Some(B), "/w", place("work", 1, 0))]);
    assert_eq!(
        skipped(&w.plan(&book, &panes, Choice::All)[0]),
        "~/.claude/projects is another user's"
    );
    // An agent with no resume knowledge.
    let mut o = run(10, Some(A), "/w", place("work", 1, 0));
    o.agent = "amp".into();
    assert_eq!(
        skipped(&w.plan(&left(vec![o]), &panes, Choice::All)[0]),
        "Amp has no conversation tend can resume"
    );
}

#[test]
fn hostile_saved_text_never_reaches_a_command() {
    let panes = [pane(3, place("work", 1, 0), "/w", Shell::AtPrompt)];
    let w = World::new().with("x; rm -rf ~", found("/w"));
    let book = left(vec![run(
        10,
        Some("x; rm -rf ~"),
        "/w",
        place("work", 1, 0),
    )]);
    assert_eq!(
        skipped(&w.plan(&book, &panes, Choice::All)[0]),
        "Claude Code did not say which conversation it held"
    );
    let book = left(vec![run(10, Some(A), "/w\n", place("work", 1, 0))]);
    let w = World::new().with(A, found("/w\n"));
    assert_eq!(
        skipped(&w.plan(&book, &panes, Choice::All)[0]),
        "its folder's name cannot be typed safely"
    );
}

#[test]
fn a_conversation_running_now_or_later_is_not_resumed() {
    // Left running by the last server, and taken up by hand since.
    let mut b = Book::new();
    b.observe(PaneId(1), run(10, Some(A), "/w", place("work", 1, 0)), 100);
    let (mut b, _) = Book::load(b.records().to_vec());
    b.observe(PaneId(4), run(11, Some(A), "/w", place("work", 2, 0)), 300);
    let panes = [
        pane(3, place("work", 1, 0), "/w", Shell::AtPrompt),
        pane(4, place("work", 2, 0), "/w", Shell::Busy("claude".into())),
    ];
    let w = World::new().with(A, found("/w"));
    assert!(w.plan(&b, &panes, Choice::All).is_empty(), "a later run");
    // Two left running with one id: only the later one.
    let (b2, _) = Book::load(b.records().to_vec());
    let steps = w.plan(&b2, &panes, Choice::All);
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].conversation.pid, 11);
}

#[test]
fn one_pane_takes_one_conversation_the_newest() {
    // Two servers ago A ran at work:1.0; the last server ran B there.
    let older = left(vec![run(10, Some(A), "/w", place("work", 1, 0))]);
    let mut nb = older.clone();
    nb.observe(PaneId(2), run(11, Some(B), "/w", place("work", 1, 0)), 500);
    let (nb, _) = Book::load(nb.records().to_vec());
    let panes = [pane(3, place("work", 1, 0), "/w", Shell::AtPrompt)];
    let steps =
        World::new()
            .with(A, found("/w"))
            .with(B, found("/w"))
            .plan(&nb, &panes, Choice::All);
    assert_eq!(steps.len(), 2);
    let target = |s: &Step| match &s.verdict {
        Verdict::Resume { target, .. } => target.describe(),
        v => panic!("{v:?}"),
    };
    assert_eq!(steps[0].conversation.id.as_deref(), Some(A));
    assert_eq!(target(&steps[0]), "a new window in work");
    assert_eq!(target(&steps[1]), "work:1.0");
}

#[test]
fn a_choice_of_places_picks_those() {
    let book = left(vec![
        run(10, Some(A), "/w", place("work", 1, 0)),
        run(11, Some(B), "/w", place("work", 2, 0)),
    ]);
    let panes = [
        pane(3, place("work", 1, 0), "/w", Shell::AtPrompt),
        pane(4, place("work", 2, 0), "/w", Shell::AtPrompt),
    ];
    let w = World::new().with(A, found("/w")).with(B, found("/w"));
    let chosen =
        |c: Choice| -> Vec<bool> { w.plan(&book, &panes, c).iter().map(|s| s.chosen).collect() };
    assert_eq!(chosen(Choice::List), [false, false]);
    assert_eq!(chosen(Choice::All), [true, true]);
    assert_eq!(
        chosen(Choice::Places(vec!["work:2.0".into()])),
        [false, true]
    );
}

#[test]
fn a_run_whose_process_lives_on_is_no_run_to_restore() {
    // The daemon stopped and started again; the server and the agent lived.
    let book = left(vec![run(10, Some(A), "/w", place("work", 1, 0))]);
    let mut busy = pane(3, place("work", 1, 0), "/w", Shell::Busy("claude".into()));
    busy.running = vec![(1, 5), (10, 100)];
    let w = World::new().with(A, found("/w"));
    assert!(w.plan(&book, &[busy.clone()], Choice::All).is_empty());
    // The same pid started at another time is another process.
    busy.running = vec![(10, 101)];
    assert_eq!(
        skipped(&w.plan(&book, &[busy], Choice::All)[0]),
        "claude runs in work:1.0"
    );
}
