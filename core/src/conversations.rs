//! The pane table's side of `tend restore`: each agent's conversation kept
//! current from the process samples (its id from the agent's own files,
//! looked up through the [`ConversationSource`]), runs ended only once a
//! listing shows the server outlived them, and the `restore` request
//! answered with [`resume::plan`]'s verdicts and their commands sent to
//! the panes.

use std::time::Duration;

use tend_detector::identity::ProcessInfo;
use tend_protocol::reply::{Restorable, Restored};
use tend_protocol::{params, Error, ErrorCode, PaneId};

use crate::resume::book::Observed;
use crate::resume::plan::{self, Choice, Known, PaneNow, Shell, Step, Verdict};
use crate::resume::{Book, End, Place};
use crate::source::ConversationSource;
use crate::{Core, Effect, MuxJob, PaneEntry, RequestId};

/// How often a running agent's conversation is looked up again: every
/// 30 s (Claude Code's `/clear` starts another); while it is not known
/// yet, also every 2 s in the run's first 10 s (an agent writes its
/// session file just after it starts) and soon after its state changes
/// (Codex writes its conversation at the first turn).
const LOOK_AGAIN: Duration = Duration::from_secs(30);
const LOOK_AGAIN_SOON: Duration = Duration::from_secs(2);
const FIRST_SECONDS: Duration = Duration::from_secs(10);

/// A pane's place, as the book keeps it.
pub(crate) fn place_of(p: &PaneEntry) -> Place {
    Place {
        session: p.info.session_name.clone(),
        window_index: p.info.window_index,
        window_name: p.info.window_name.clone(),
        // A multiplexer that numbers no panes in a window (zellij) has
        // each at 0: its places are never restored (`Backend::restore`).
        pane_index: p.info.pane_index.unwrap_or(0),
    }
}

impl Core {
    /// Sets where the agents' conversation stores are read (the daemon's
    /// files); without one nothing is ever found in a store.
    pub fn set_conversations(&mut self, source: Box<dyn ConversationSource>) {
        self.conversations.source = source;
    }

    /// A full sample of `pane` found `agent` running as process `pid`
    /// (among `procs`): its record is kept current, its conversation
    /// looked up when due.
    pub(crate) fn conversation_seen(
        &mut self,
        pane: PaneId,
        agent: &str,
        pid: u32,
        procs: &[ProcessInfo],
    ) {
        let now = self.now();
        let Some(proc) = procs.iter().find(|p| p.pid == pid) else {
            return;
        };
        let Some(p) = self.panes.get(&pane) else {
            return;
        };
        // The same run seen before: looked up again only when due.
        let has_id = self
            .conversations
            .book
            .live_in(pane)
            .filter(|r| r.pid == pid && r.start_ticks == proc.start_ticks.unwrap_or_default())
            .map(|r| r.id.is_some());
        let last = self.conversations.looked.get(&pane).copied();
        let (due, first) = match (has_id, last) {
            (None, _) | (_, None) => (true, now),
            (Some(known), Some((first, at, seq))) => {
                let soon = !known
                    && now >= at + LOOK_AGAIN_SOON
                    && (now < first + FIRST_SECONDS || p.eff_seq != seq);
                (now >= at + LOOK_AGAIN || soon, first)
            }
        };
        if !due {
            return;
        }
        self.conversations
            .looked
            .insert(pane, (first, now, p.eff_seq));
        let folder = p.info.current_path.clone();
        // Two panes running the agent in one folder: the newest
        // conversation there could be either's.
        let alone = !self.panes.values().any(|o| {
            o.info.pane_id != pane
                && o.watch.agent() == Some(agent)
                && o.info.current_path == folder
        });
        let resume = self.registry.get(agent).and_then(|m| m.resume.clone());
        // A store that names each conversation's process tells panes in
        // one folder apart.
        let newest = alone || resume.as_ref().is_some_and(|r| r.live.pid.is_some());
        let place = place_of(p);
        let facts = resume
            .as_ref()
            .map(|r| self.conversations.source.live(r, proc, &folder, newest))
            .unwrap_or_default();
        let by_argv = resume.as_ref().and_then(|r| r.id_from_argv(&proc.argv));
        let (id, found_by, folder) = match (facts.session_file, by_argv, facts.newest) {
            (Some((id, cwd)), _, _) => (Some(id), "its session file", cwd),
            (None, Some(id), _) => (Some(id), "its command line", folder),
            (None, None, Some(id)) => (Some(id), "the newest in its store for its folder", folder),
            (None, None, None) => (None, "", folder),
        };
        let id = id.filter(|id| resume.as_ref().is_some_and(|r| r.is_id(id)));
        let program = facts.program.filter(|prog| {
            resume
                .as_ref()
                .is_some_and(|r| prog.rsplit('/').next() == Some(r.program()))
        });
        let observed = Observed {
            agent: agent.to_owned(),
            found_by: id.as_ref().map(|_| found_by.to_owned()),
            id,
            folder,
            place,
            // A title a program set for itself leaves empty words behind.
            argv: {
                let mut argv = proc.argv.clone();
                while argv.last().is_some_and(String::is_empty) {
                    argv.pop();
                }
                argv
            },
            program,
            home: facts.home,
            pid,
            start_ticks: proc.start_ticks.unwrap_or_default(),
        };
        if self.conversations.book.observe(pane, observed, self.unix()) {
            self.persist = true;
        }
    }

    /// `pane` no longer shows a running agent: its run ends, once a
    /// listing shows the server alive.
    pub(crate) fn conversation_gone(&mut self, pane: PaneId) {
        self.conversations.book.agent_gone(pane);
        self.conversations.looked.remove(&pane);
    }

    /// A listing came: runs whose end was seen ended, closed panes'
    /// closed, places kept current; restores that waited for it answered.
    pub(crate) fn conversations_listed(&mut self) {
        let places: Vec<(PaneId, Place)> = self
            .panes
            .values()
            .map(|p| (p.info.pane_id, place_of(p)))
            .collect();
        if self.conversations.book.listed(&places, self.unix()) {
            self.persist = true;
        }
        self.conversations
            .looked
            .retain(|pane, _| places.iter().any(|(id, _)| id == pane));
        for (id, p) in std::mem::take(&mut self.restores_waiting) {
            self.restore_request(id, p);
        }
    }

    /// The saved conversations, for the state file.
    pub(crate) fn conversation_book(&self) -> &Book {
        &self.conversations.book
    }

    /// Takes the conversations a daemon before saved.
    pub(crate) fn restore_conversations(&mut self, book: Book) {
        self.conversations.book = book;
    }

    /// `restore`: answered once the panes were listed (a restore right
    /// after the server started must see them).
    pub(crate) fn restore_request(&mut self, reply: RequestId, p: params::Restore) {
        if !self.backend.restore {
            self.effects.push_back(Effect::Reply {
                id: reply,
                result: Err(Error::new(
                    ErrorCode::BadRequest,
                    "tend restore works in tmux only: zellij brings its sessions back itself \
                     (session resurrection)",
                )),
            });
            return;
        }
        if !self.listed_once {
            self.restores_waiting.push((reply, p));
            return;
        }
        let choice = if p.all {
            Choice::All
        } else if !p.places.is_empty() {
            Choice::Places(p.places.clone())
        } else {
            Choice::List
        };
        let panes = self.panes_now();
        let steps = {
            let registry = &self.registry;
            let known = |agent: &str| {
                registry.get(agent).map(|m| Known {
                    name: m.name.as_str(),
                    resume: m.resume.as_ref(),
                })
            };
            let source = &mut self.conversations.source;
            let mut saved = |c: &crate::resume::Conversation, r: &_| match &c.home {
                Some(home) => source.saved(r, home, c.id.as_deref().unwrap_or_default(), &c.folder),
                None => plan::Saved::Unreadable(
                    "where the agent keeps its conversations was not found when it ran".into(),
                ),
            };
            plan::plan(
                &self.conversations.book,
                &panes,
                &choice,
                &known,
                &mut saved,
            )
        };
        let act = !p.dry_run;
        let now = self.unix();
        let mut out = Vec::with_capacity(steps.len());
        for step in steps {
            let started = act && step.chosen && matches!(step.verdict, Verdict::Resume { .. });
            if started {
                if let Verdict::Resume { target, command } = &step.verdict {
                    self.conversations
                        .book
                        .resumed(step.index, target.describe(), now);
                    self.job(MuxJob::Resume {
                        target: target.clone(),
                        command: command.clone(),
                    });
                    self.persist = true;
                }
            }
            out.push(self.restorable(step, started));
        }
        let resumed_before = self
            .conversations
            .book
            .records()
            .iter()
            .filter(|r| matches!(r.end, End::Resumed { .. }))
            .count()
            .saturating_sub(out.iter().filter(|r| r.started).count());
        self.effects.push_back(Effect::Reply {
            id: reply,
            result: Ok(Restored {
                conversations: out,
                resumed_before,
                dry_run: p.dry_run,
            }
            .into()),
        });
    }

    fn restorable(&self, step: Step, started: bool) -> Restorable {
        let c = step.conversation;
        let name = self
            .registry
            .get(&c.agent)
            .map_or_else(|| c.agent.clone(), |m| m.name.clone());
        let (command, target, skipped) = match step.verdict {
            Verdict::Resume { target, command } => (Some(command), Some(target.describe()), None),
            Verdict::Skip(why) => (None, None, Some(why)),
        };
        Restorable {
            agent: c.agent,
            name,
            id: c.id,
            folder: c.folder,
            place: c.place.to_string(),
            window_name: c.place.window_name,
            argv: c.argv,
            seen: c.seen,
            command,
            target,
            started,
            skipped,
        }
    }

    /// Every pane as a restore sees it: its place, folder, and whether its
    /// shell waits at its prompt (asked of the process source now).
    fn panes_now(&mut self) -> Vec<PaneNow> {
        let mut out = Vec::with_capacity(self.panes.len());
        for p in self.panes.values() {
            let shell = if p.info.dead {
                Shell::Busy("nothing (the pane is dead)".into())
            } else if p.info.in_mode {
                Shell::Busy("copy mode".into())
            } else if let Some(agent) = p.watch.agent() {
                Shell::Busy(agent.to_owned())
            } else {
                match self.procs.probe(p.info.pane_pid) {
                    Ok(probe) if probe.shell_foreground() => Shell::AtPrompt,
                    Ok(_) => Shell::Busy(if p.info.current_command.is_empty() {
                        "a program".to_owned()
                    } else {
                        p.info.current_command.clone()
                    }),
                    Err(e) => Shell::Unknown(format!("its shell cannot be read ({e})")),
                }
            };
            let running = match shell {
                Shell::AtPrompt => Vec::new(),
                _ => self
                    .procs
                    .sample(p.info.pane_pid)
                    .map(|s| {
                        s.procs
                            .iter()
                            .map(|q| (q.pid, q.start_ticks.unwrap_or_default()))
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            out.push(PaneNow {
                pane: p.info.pane_id,
                session_id: p.info.session_id,
                place: place_of(p),
                folder: p.info.current_path.clone(),
                shell,
                running,
            });
        }
        out
    }
}
