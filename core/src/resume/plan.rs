//! What a restore does with each remembered run: the pane it goes back
//! to (its place and folder), or a new window where that pane is gone,
//! and the command — or why it is skipped. Three rules hold whatever the
//! facts: a conversation is never resumed into another folder than its
//! own, never twice, and never into a pane where something runs.

use std::collections::HashSet;

use tend_detector::manifest::Resume;
use tend_protocol::{PaneId, SessionId};

use super::{Book, Conversation, Place};

/// A pane as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneNow {
    /// The pane.
    pub pane: PaneId,
    /// Its session.
    pub session_id: SessionId,
    /// Where it is.
    pub place: Place,
    /// The folder its shell is in.
    pub folder: String,
    /// What runs in it.
    pub shell: Shell,
    /// The processes below its shell, as (pid, start in clock ticks): a
    /// run still alive there is no run to restore.
    pub running: Vec<(u32, u64)>,
}

/// Whether a pane takes a command now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shell {
    /// Its shell has the terminal and waits at its prompt.
    AtPrompt,
    /// Something else runs there (what).
    Busy(String),
    /// Not known (why).
    Unknown(String),
}

/// What an agent's store says of a saved conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saved {
    /// It is there, and names this folder.
    Found {
        /// The folder it belongs to.
        folder: String,
    },
    /// It is not there (deleted, or never written: no turn was taken).
    Missing,
    /// The store could not be read (why).
    Unreadable(String),
}

/// What the core knows of a record's agent.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    /// The agent's name for sentences (`Claude Code`).
    pub name: &'a str,
    /// How it resumes, if it does.
    pub resume: Option<&'a Resume>,
}

/// Which records a restore acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// None: list them.
    List,
    /// Every one it can.
    All,
    /// Those whose saved place is one of these (`work:1.0`).
    Places(Vec<String>),
}

impl Choice {
    fn takes(&self, place: &Place) -> bool {
        match self {
            Choice::List => false,
            Choice::All => true,
            Choice::Places(p) => p.iter().any(|p| *p == place.to_string()),
        }
    }
}

/// Where a command goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Typed at the prompt of this pane.
    Pane {
        /// The pane.
        pane: PaneId,
        /// Its place now.
        place: Place,
    },
    /// Typed at the prompt of a new window in this folder, in the session
    /// (made if it is gone too).
    NewWindow {
        /// The session, when it exists.
        session: Option<SessionId>,
        /// Its name.
        session_name: String,
        /// The window's name.
        window_name: String,
        /// The folder.
        folder: String,
    },
}

impl Target {
    /// Where, in words.
    pub fn describe(&self) -> String {
        match self {
            Target::Pane { place, .. } => place.to_string(),
            Target::NewWindow { session_name, .. } => format!("a new window in {session_name}"),
        }
    }
}

/// What a restore does with one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Starts `command` at `target`.
    Resume {
        /// Where.
        target: Target,
        /// The command's words (quoted for the shell by the backend).
        command: Vec<String>,
    },
    /// Leaves it, for this reason.
    Skip(String),
}

/// One record in a restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The record's index in the book.
    pub index: usize,
    /// The record.
    pub conversation: Conversation,
    /// What happens to it.
    pub verdict: Verdict,
    /// The restore acts on it ([`Choice`]).
    pub chosen: bool,
}

/// The records a restore looks at: runs left running when their server
/// or daemon went away, not resumed yet, and not followed by a later run
/// of the same conversation (resumed, quit or running since).
pub fn candidates(book: &Book) -> Vec<usize> {
    let records = book.records();
    let mut out: Vec<usize> = Vec::new();
    for (i, r) in records.iter().enumerate() {
        if !r.left_running() {
            continue;
        }
        let newer = records.iter().enumerate().any(|(j, o)| {
            j != i
                && o.agent == r.agent
                && o.id.is_some()
                && o.id == r.id
                && (o.seen, j) > (r.seen, i)
        });
        if !newer {
            out.push(i);
        }
    }
    out
}

/// The restore: every candidate with its verdict. `known` names a
/// record's agent and how it resumes; `saved` asks its store about a
/// conversation (only for one that would otherwise be resumed).
pub fn plan<'a>(
    book: &'a Book,
    panes: &[PaneNow],
    choice: &Choice,
    known: &dyn Fn(&str) -> Option<Known<'a>>,
    saved: &mut dyn FnMut(&Conversation, &Resume) -> Saved,
) -> Vec<Step> {
    let mut taken: HashSet<PaneId> = HashSet::new();
    // Panes a run lives in now take nothing.
    taken.extend(book.records().iter().filter_map(|r| r.pane));
    let mut steps = Vec::new();
    // The newest first: where two want one pane, it is theirs.
    // A run whose process still lives (the daemon restarted, not the
    // server) is not over: the daemon takes it over at its next sample.
    let alive = |r: &Conversation| {
        panes
            .iter()
            .any(|p| p.running.contains(&(r.pid, r.start_ticks)))
    };
    let mut order: Vec<usize> = candidates(book)
        .into_iter()
        .filter(|&i| !alive(&book.records()[i]))
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(book.records()[i].seen));
    for i in order {
        let r = &book.records()[i];
        let verdict = decide(book, r, panes, &mut taken, known, saved);
        steps.push(Step {
            index: i,
            conversation: r.clone(),
            chosen: choice.takes(&r.place),
            verdict,
        });
    }
    steps.sort_by_key(|s| s.index);
    steps
}

fn decide<'a>(
    book: &Book,
    r: &Conversation,
    panes: &[PaneNow],
    taken: &mut HashSet<PaneId>,
    known: &dyn Fn(&str) -> Option<Known<'a>>,
    saved: &mut dyn FnMut(&Conversation, &Resume) -> Saved,
) -> Verdict {
    let skip = Verdict::Skip;
    let Some(k) = known(&r.agent) else {
        return skip(format!("tend knows no agent `{}` any more", r.agent));
    };
    let Some(resume) = k.resume else {
        return skip(format!("{} has no conversation tend can resume", k.name));
    };
    let Some(id) = r.id.as_deref().filter(|id| resume.is_id(id)) else {
        return skip(format!("{} did not say which conversation it held", k.name));
    };
    if let Some(live) = book
        .records()
        .iter()
        .find(|o| o.pane.is_some() && o.agent == r.agent && o.id.as_deref() == Some(id))
    {
        return skip(format!("the conversation runs already, in {}", live.place));
    }
    if has_control(&r.folder) || r.folder.is_empty() {
        return skip("its folder's name cannot be typed safely".into());
    }
    let target = match target(r, panes, taken) {
        Ok(t) => t,
        Err(why) => return skip(why),
    };
    match saved(r, resume) {
        Saved::Found { folder } if folder == r.folder => {}
        Saved::Found { folder } => {
            return skip(format!(
                "{}'s store says the conversation belongs to {folder}, not {}",
                k.name, r.folder
            ))
        }
        Saved::Missing => {
            return skip(format!(
                "the conversation is not in {}'s store (removed, or no turn was taken)",
                k.name
            ))
        }
        Saved::Unreadable(why) => return skip(why),
    }
    let program = r
        .program
        .as_deref()
        .filter(|p| !has_control(p) && p.rsplit('/').next() == Some(resume.program()));
    let env = r
        .home
        .as_ref()
        .and_then(|h| Some((h.var.as_deref()?, h.dir.as_str())))
        .filter(|(_, dir)| !has_control(dir));
    if let Target::Pane { pane, .. } = &target {
        taken.insert(*pane);
    }
    Verdict::Resume {
        target,
        command: resume.command_for(id, program, env),
    }
}

/// The pane a record goes back to: its place, in its folder, at a prompt;
/// the same window name there; or a new window where neither is left.
fn target(r: &Conversation, panes: &[PaneNow], taken: &HashSet<PaneId>) -> Result<Target, String> {
    let same = |p: &PaneNow, by_name: bool| {
        p.place.session == r.place.session
            && p.place.pane_index == r.place.pane_index
            && if by_name {
                p.place.window_name == r.place.window_name
            } else {
                p.place.window_index == r.place.window_index
            }
            && p.folder == r.folder
            && !taken.contains(&p.pane)
    };
    let found = panes
        .iter()
        .find(|p| same(p, false))
        .or_else(|| panes.iter().find(|p| same(p, true)));
    match found {
        Some(p) => match &p.shell {
            Shell::AtPrompt => Ok(Target::Pane {
                pane: p.pane,
                place: p.place.clone(),
            }),
            Shell::Busy(what) => Err(format!("{} runs in {}", what, p.place)),
            Shell::Unknown(why) => Err(format!("{}: {why}", p.place)),
        },
        None => Ok(Target::NewWindow {
            session: panes
                .iter()
                .find(|p| p.place.session == r.place.session)
                .map(|p| p.session_id),
            session_name: r.place.session.clone(),
            window_name: r.place.window_name.clone(),
            folder: r.folder.clone(),
        }),
    }
}

fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

#[cfg(test)]
mod tests;
