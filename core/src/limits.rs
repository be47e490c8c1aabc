//! Usage limits in the pane table: each pane's limit read from its screen
//! (with the user's zone), the reset that turns `limited` into a demand,
//! and the resume — at the reset on its own (`[limits] resume`) or by
//! `tend resume` — through a last look at the screen on the backend
//! ([`MuxJob::LimitResume`], [`check`]).
//!
//! The decisions (when, whether) are `tend_attention::limit`'s; this file
//! wires them to panes, jobs, events, the log and `tend explain`.

use std::sync::Arc;

use tend_attention::limit::{Hold, LimitChange, ResumePolicy};
use tend_detector::limit::{self, NotAtLimit, Resume};
use tend_detector::Manifest;
use tend_protocol::explain::LimitExplained;
use tend_protocol::reply::Resumed;
use tend_protocol::{BusEvent, Error, ErrorCode, PaneId};

use crate::answer::Captured;
pub use crate::input::{ResumeBy, ResumeOutcome};
use crate::status::LimitFacts;
use crate::{Core, Effect, MuxJob, RequestId};

/// The text a `tend resume` sends when it names none and `[limits]
/// resume` is not set.
pub const DEFAULT_RESUME_TEXT: &str = "continue";

/// The backend's last look before a resume: is the agent's limit still on
/// the screen just captured, and what goes on from it (`text`, or the keys
/// of its limit dialog). `pane` names the pane in messages.
pub fn check(
    pane: &str,
    screen: Captured,
    manifest: &Manifest,
    text: &str,
) -> Result<Resume, Error> {
    if screen.in_mode {
        return Err(crate::answer::in_copy_mode(pane));
    }
    let view = crate::answer::view_of(screen);
    limit::resume(&view, manifest, text).map_err(|e: NotAtLimit| {
        Error::new(
            ErrorCode::NotAtLimit,
            format!("{pane} {e}; nothing was sent"),
        )
    })
}

impl Core {
    /// Reads `id`'s limit from its screen now (before the pane's band is
    /// folded): what the fold takes of it.
    pub(crate) fn limit_facts(&mut self, id: PaneId) -> LimitFacts {
        let name = self.mux.name(id);
        let wall = self.epoch().as_secs_f64();
        let (at_limit, words) = match self.panes.get(&id) {
            Some(p) => (p.det.at_limit(), p.det.reset_words().map(str::to_owned)),
            None => (false, None),
        };
        let change = self
            .limits
            .observe(&name, wall, at_limit, words.as_deref(), self.utc_offset);
        if let Some(c) = change {
            let l = self.limits.get(&name);
            let line = match (c, l) {
                (LimitChange::Ended, _) => format!("{name} left its usage limit"),
                (_, Some(l)) => format!(
                    "{name} shows its usage limit{}",
                    match (l.resets_at, &l.words) {
                        (Some(at), _) => format!(", resetting at {}", self.clock_text(at)),
                        (None, Some(w)) => format!(" (\"{w}\" names no time tend reads)"),
                        (None, None) => String::new(),
                    }
                ),
                (_, None) => String::new(),
            };
            if !line.is_empty() {
                self.effects.push_back(Effect::Log(line));
            }
        }
        let l = self.limits.get(&name);
        LimitFacts {
            reset_passed: l.is_some_and(|l| l.reset_passed(wall)),
            resets_at: l.and_then(|l| l.resets_at),
            words: l.and_then(|l| l.words.clone()),
        }
    }

    /// A reset as the user reads it (`15:00`, `Tue 09:00`).
    pub(crate) fn clock_text(&self, at: i64) -> String {
        limit::local_clock(at, self.unix() as i64, self.utc_offset)
    }

    /// The limits' part of a tick: resumes that fell due go out; says on
    /// the Unix clock when something next falls due (a reset, which moves
    /// a band, or a resume).
    pub(crate) fn limit_timers(&mut self) -> Option<f64> {
        let wall = self.epoch().as_secs_f64();
        for name in self.limits.due(wall, &self.limit_resume) {
            let Some(id) = self.mux.parse(&name) else {
                continue;
            };
            let text = self.limit_resume.text.clone().unwrap_or_default();
            if let Err(e) = self.start_resume(id, &text, ResumeBy::Reset, None) {
                // Not sent, and never tried again for this limit.
                self.limits.resumed(&name, wall);
                self.resume_refused(&name, ResumeBy::Reset, &e.message);
            }
        }
        self.limits.next_wakeup(wall, &self.limit_resume)
    }

    /// Starts a resume of `id` with `text`: `tend prompt`'s checks (an
    /// agent, no stop flag pending), then the backend's last look and the
    /// keys ([`MuxJob::LimitResume`]). The limit counts as resumed from here on,
    /// whatever the look finds: never twice for one limit.
    pub(crate) fn start_resume(
        &mut self,
        id: PaneId,
        text: &str,
        by: ResumeBy,
        reply: Option<RequestId>,
    ) -> Result<(), Error> {
        let name = self.mux.name(id);
        let manifest: Option<Arc<Manifest>> =
            self.panes.get(&id).and_then(|p| p.det.manifest().cloned());
        let Some(manifest) = manifest else {
            return Err(Error::new(
                ErrorCode::NoAgent,
                format!("no agent identified in {name}; tend only resumes agents"),
            ));
        };
        if self.limits.get(&name).is_none() {
            return Err(Error::new(
                ErrorCode::NotAtLimit,
                format!("{name} does not show a usage limit; nothing was sent"),
            ));
        }
        if text.trim().is_empty() {
            return Err(Error::new(ErrorCode::BadRequest, "resume needs some text"));
        }
        if let Err(e) = self.flags.check_prompt(&name) {
            return Err(Error::new(
                ErrorCode::StopPending,
                format!("{e} (nothing was sent)"),
            ));
        }
        self.limits.resumed(&name, self.epoch().as_secs_f64());
        self.job(MuxJob::LimitResume {
            pane: id,
            manifest,
            text: text.to_owned(),
            by,
            reply,
        });
        Ok(())
    }

    /// `resume`: `None` once the backend has the job (its look answers),
    /// the refusal otherwise. The text: the request's, else `[limits]
    /// resume`, else `continue`.
    pub(crate) fn resume_request(
        &mut self,
        reply: RequestId,
        p: tend_protocol::params::Resume,
    ) -> Option<Result<tend_protocol::reply::Reply, Error>> {
        let text = p
            .text
            .or_else(|| self.limit_resume.text.clone())
            .unwrap_or_else(|| DEFAULT_RESUME_TEXT.to_owned());
        let started = self
            .pane_param(&p.pane)
            .and_then(|pane| self.start_resume(pane, &text, ResumeBy::User, Some(reply)));
        started.err().map(Err)
    }

    /// What the backend's resume did: the log, the bus (and so the
    /// notification), `tend explain`, the answer to `tend resume`.
    pub(crate) fn resume_done(&mut self, id: PaneId, outcome: ResumeOutcome) {
        let name = self.mux.name(id);
        let agent = self
            .panes
            .get(&id)
            .and_then(|p| p.det.status().agent)
            .unwrap_or_default();
        let resets_at = self.limits.get(&name).and_then(|l| l.resets_at);
        let result = match outcome.result {
            Ok(sent) => {
                // An agent that takes an Enter right after a paste as part
                // of it: the backend pasted only, the Enter comes here.
                let pause = self
                    .panes
                    .get(&id)
                    .and_then(|p| p.det.manifest())
                    .map(|m| m.prompt.enter_after)
                    .unwrap_or_default();
                if matches!(sent, Resume::Text(_)) && !pause.is_zero() {
                    let at = self.now() + pause;
                    self.job_at(
                        at,
                        MuxJob::SendKeys {
                            pane: id,
                            keys: vec!["Enter".into()],
                        },
                    );
                }
                let (text, keys) = match sent {
                    Resume::Text(t) => (Some(t), Vec::new()),
                    Resume::Keys(k) => (None, k),
                };
                let what = match (&text, keys.is_empty()) {
                    (Some(t), _) => format!("sent \"{}\"", t.escape_debug()),
                    (None, false) => format!("pressed {}", keys.join(" ")),
                    (None, true) => "sent nothing".to_owned(),
                };
                let line = match outcome.by {
                    ResumeBy::Reset => {
                        format!("resumed {name} ({agent}) at its usage limit's reset: {what}")
                    }
                    ResumeBy::User => format!("resumed {name} ({agent}) by hand: {what}"),
                };
                self.effects.push_back(Effect::Log(line.clone()));
                self.last_resume.insert(name.clone(), (self.unix(), line));
                self.events.push_back(BusEvent::Resumed {
                    pane: name.clone(),
                    agent: Some(agent.clone()),
                    by: outcome.by.as_str().to_owned(),
                    text: text.clone(),
                    keys: keys.clone(),
                    refused: None,
                    resets_at,
                });
                Ok(Resumed {
                    pane: name,
                    agent,
                    text,
                    keys,
                }
                .into())
            }
            Err(e) => {
                self.resume_refused(&name, outcome.by, &e.message);
                Err(e)
            }
        };
        if let Some(id) = outcome.reply {
            self.effects.push_back(Effect::Reply { id, result });
        }
    }

    fn resume_refused(&mut self, name: &str, by: ResumeBy, why: &str) {
        let line = format!("did not resume {name}: {why}");
        self.effects.push_back(Effect::Log(line.clone()));
        self.last_resume
            .insert(name.to_owned(), (self.unix(), line));
        self.events.push_back(BusEvent::Resumed {
            pane: name.to_owned(),
            agent: None,
            by: by.as_str().to_owned(),
            text: None,
            keys: Vec::new(),
            refused: Some(why.to_owned()),
            resets_at: self.limits.get(name).and_then(|l| l.resets_at),
        });
    }

    /// `tend explain`'s part on the pane's limit.
    pub(crate) fn limit_explained(&self, name: &str) -> Option<LimitExplained> {
        let last = self
            .last_resume
            .get(name)
            .map(|(at, line)| format!("{line} (at {})", self.clock_text(*at as i64)));
        let l = self.limits.get(name);
        if l.is_none() && last.is_none() {
            return None;
        }
        let wall = self.epoch().as_secs_f64();
        let resume = l.map(|_| match self.limits.hold(name, wall, &self.limit_resume) {
            None => "now".to_owned(),
            Some(Hold::Until(at)) => format!(
                "at {} (in {}: after the last second of the reset the agent names, and the margin), \
                 sending {:?}",
                self.clock_text(at),
                limit::countdown(at - wall as i64),
                self.limit_resume.text.as_deref().unwrap_or_default()
            ),
            Some(Hold::Off) => {
                "off: [limits] resume is not set in config.toml (tend resume does it by hand)".into()
            }
            Some(Hold::NoReset) => "no: the agent named no time tend reads".into(),
            Some(Hold::Typed) => "no: someone typed into the pane since the limit came".into(),
            Some(Hold::Done(at)) => format!("done at {}", self.clock_text(at as i64)),
        });
        Some(LimitExplained {
            since: l.map(|l| l.since as i64),
            words: l.and_then(|l| l.words.clone()),
            resets_at: l.and_then(|l| l.resets_at),
            resume,
            last,
        })
    }

    /// The resume settings in force.
    pub fn resume_policy(&self) -> &ResumePolicy {
        &self.limit_resume
    }

    /// The user's zone changed (a daylight-saving change): limits read
    /// from now on use `offset` seconds east of UTC.
    pub fn set_utc_offset(&mut self, offset: i32) {
        self.utc_offset = offset;
    }
}
