//! Control requests: the core answers every one but `events` and `guard`
//! (which hold their connection open and are the socket's). Most are
//! answered at once; `wait` and `prompt --wait` when a status change ends
//! them (`waits.rs`); `read` and `answer` when the backend reports what it
//! read or sent (`Input::Done`); `remotes.reload` when the daemon hands in
//! the configuration it read (`Input::Remotes`); a request for a pane no
//! listing has shown yet after the next listings, for up to
//! [`crate::waits::UNLISTED_GRACE`].

use std::time::Duration;

use tend_attention as attention;
use tend_attention::park::{PaneMarks, SnoozeFor};
use tend_attention::report::Report;
use tend_protocol::reply::{self, Reply};
use tend_protocol::PaneId;
use tend_protocol::{params, BusEvent, Error, ErrorCode, PaneView, Request, TaskView};
use tend_vocab::{Authority, PaneBand, PaneState, Reason, State, Tap};

use crate::waits::Until;
use crate::{Core, Effect, MuxJob, OutputRead, PaneEntry, RequestId};

fn task_view(t: &tend_attention::report::Task) -> TaskView {
    TaskView {
        id: t.id.clone(),
        state: t.state,
        kind: t.kind,
        title: t.title.clone(),
        message: t.message.clone(),
        progress: t.progress,
        live: t.live,
    }
}

/// A stop flag as the protocol shows it.
fn stop_flag(f: &tend_attention::stopflag::StopFlag) -> reply::StopFlag {
    reply::StopFlag {
        reason: f.reason.clone(),
        set_by: f.set_by.clone(),
        set_at: f.set_at,
        read_at: f.read_at,
    }
}

impl Core {
    pub(crate) fn view(&self, p: &PaneEntry) -> PaneView {
        let e = p.eff.as_ref();
        // A pane not evaluated yet (just listed, just after a start) still
        // shows its park and snooze: they are the user's, not the screen's.
        let marks = match e {
            Some(e) => PaneMarks {
                parked: e.parked,
                snoozed: e.snoozed,
                note: e.note.clone(),
                until: e.until,
                gate: e.gate.clone(),
            },
            None => self
                .parks
                .marks(&self.mux.name(p.info.pane_id), self.unix()),
        };
        let agent = e.and_then(|e| e.agent.clone());
        // How the pane's agent (live, or the one whose run ended here) was
        // identified.
        let identified = p
            .watch
            .identified()
            .filter(|i| agent.as_deref() == Some(i.agent.as_str()));
        PaneView {
            pane: self.mux.name(p.info.pane_id),
            session: p.info.session_name.clone(),
            window: p.info.window_label.clone(),
            identified_by: identified.map(|i| i.by),
            wrapper: identified.and_then(|i| i.wrapper.clone()),
            agent,
            state: e.and_then(|e| e.state).map(PaneState::from),
            reason: e.and_then(|e| e.reason),
            band: e.and_then(|e| e.band).map(PaneBand::from),
            since: e.and_then(|e| e.state).map(|_| p.eff_since),
            rule: e.and_then(|e| e.state.map(|_| e.rule.clone())),
            quiet: e.is_some_and(|e| e.quiet),
            state_change_seq: p.eff_seq,
            tap: self.tap(p),
            authority: e.map_or(Authority::Screen, |e| e.authority),
            lifecycle: e.and_then(|e| e.lifecycle.clone()),
            message: e.and_then(|e| e.message.clone()),
            tasks: e
                .map(|e| e.tasks.iter().map(task_view).collect())
                .unwrap_or_default(),
            app: e.and_then(|e| e.app.clone()),
            label: e.and_then(|e| e.label.clone()),
            parked: marks.parked,
            note: marks.note,
            gate: marks.gate,
            snoozed: marks.snoozed,
            until: marks.until,
            stop: e.and_then(|e| e.stop.clone()),
            run: p.det.status().run,
            exit_code: e.and_then(|e| e.exit_code),
            verified: e
                .and_then(|e| e.agent.as_deref())
                .and_then(|a| self.registry.get(a))
                .map(|m| m.verified),
            version: p.watch.version().map(str::to_owned),
            unrecognised_since: self.unrecognised_since(p),
            host: None,
            project: p.project.clone(),
            // A target users can type (`work:1.0`), where panes have an
            // index in their window.
            place: p.info.pane_index.map(|pane_index| {
                format!(
                    "{}:{}.{}",
                    p.info.session_name, p.info.window_index, pane_index
                )
            }),
            resets_at: e.and_then(|e| e.resets_at),
            reset_words: e.and_then(|e| e.reset_words.clone()),
        }
    }

    /// How the pane's output reaches the daemon: its tap's state where the
    /// backend taps each pane; else the subscription for the windows a
    /// client looks at (their window is active), polling for the rest.
    fn tap(&self, p: &PaneEntry) -> Tap {
        match self.backend.output {
            OutputRead::Taps => p.tap.word(),
            OutputRead::ShownLive if p.info.window_active => Tap::Subscribe,
            OutputRead::ShownLive => Tap::Polling,
        }
    }

    pub(crate) fn pane_param(&self, raw: &str) -> Result<PaneId, Error> {
        if let Some((host, pane)) = crate::remote::split_id(raw) {
            let dest = self
                .links
                .get(host)
                .map_or(host.to_owned(), |l| l.cfg.dest.clone());
            return Err(Error::new(
                ErrorCode::RemotePane,
                format!(
                    "{raw} is on remote {host}: only list, get, next and jump reach it from here; \
                     run the command there (ssh {dest} tend … {pane})"
                ),
            ));
        }
        let id = self.mux.parse(raw).ok_or_else(|| {
            Error::new(
                ErrorCode::BadRequest,
                format!(
                    "`{raw}` is not a {} pane id like {}",
                    self.mux.word(),
                    self.mux.example()
                ),
            )
        })?;
        if !self.panes.contains_key(&id) {
            return Err(Error::new(
                ErrorCode::UnknownPane,
                format!(
                    "no pane {} on {} (see `tend list`)",
                    self.mux.name(id),
                    self.mux.place()
                ),
            ));
        }
        Ok(id)
    }

    /// How much longer the pane's current state must last before keys may
    /// go to its dialog (see [`settle_left`]).
    fn dialog_settle(&self, pane: PaneId, manifest: &tend_detector::Manifest) -> Duration {
        let Some(settle) = manifest.actions.as_ref().map(|a| a.settle) else {
            return Duration::ZERO;
        };
        let Some(p) = self.panes.get(&pane) else {
            return Duration::ZERO;
        };
        settle_left(settle, p.eff_since, self.unix_at(self.now()))
    }

    /// Takes request `reply`: answers it now, or keeps it to answer later.
    pub(crate) fn control(&mut self, reply: RequestId, req: Request) {
        let now = self.now();
        self.dispatch(reply, req, Some(now));
    }

    /// Requests kept for a pane no listing showed: asked again once every
    /// listed pane has its first status (a pane just listed is answered as
    /// it is, not as an empty row); those whose grace ran out, a last time.
    pub(crate) fn retry_unlisted(&mut self) {
        let now = self.now();
        for (id, req) in self.waits.unlisted_expired(now) {
            self.dispatch(id, req, None);
        }
        if !self.waits.any_unlisted() {
            return;
        }
        if self.waits.poke_due(now) {
            self.reconcile();
        }
        if self.panes.values().all(|p| p.seeded && p.eff.is_some()) {
            for (id, req, since) in self.waits.take_unlisted() {
                self.dispatch(id, req, Some(since));
            }
        }
    }

    /// [`Core::control`] for a request first asked at `since`: one that
    /// names a pane not listed (yet) waits for the next listings; `None`:
    /// its last try, answered whatever it finds.
    fn dispatch(&mut self, reply: RequestId, req: Request, since: Option<Duration>) {
        let again = req.clone();
        let Some(answer) = self.start(reply, req) else {
            return;
        };
        let unknown = matches!(&answer, Err(e) if e.code == ErrorCode::UnknownPane);
        if let (true, Some(since)) = (unknown, since) {
            let now = self.now();
            if self.waits.unlisted(reply, again, since, now) {
                if since == now {
                    self.reconcile();
                }
                return;
            }
        }
        self.effects.push_back(Effect::Reply {
            id: reply,
            result: answer,
        });
    }

    /// Starts on a request: its answer now, or `None` when it comes later
    /// (the backend's, the daemon's, a wait's).
    fn start(&mut self, reply: RequestId, req: Request) -> Option<Result<Reply, Error>> {
        match req {
            Request::RemotesReload(_) => {
                self.effects.push_back(Effect::LoadRemotes { reply });
                None
            }
            Request::Read(p) => match self.read(&p) {
                Ok((pane, lines)) => {
                    self.job(MuxJob::Read { pane, lines, reply });
                    None
                }
                Err(e) => Some(Err(e)),
            },
            Request::Answer(p) => match self.answer_job(&p) {
                Ok(job) => {
                    self.send_answer(job, reply);
                    None
                }
                Err(e) => Some(Err(e)),
            },
            Request::Restore(p) => {
                self.restore_request(reply, p);
                None
            }
            Request::Resume(p) => self.resume_request(reply, p),
            Request::Wait(p) => self.wait(reply, p),
            Request::Prompt(p) if p.wait => self.prompt_and_wait(reply, p),
            other => Some(self.answer(other)),
        }
    }

    /// Hands an answer to the backend, once the dialog is older than its
    /// agent's `settle_ms` (a job on the core's clock, so that the keys
    /// never reach a dialog still being drawn).
    fn send_answer(&mut self, job: AnswerJob, reply: RequestId) {
        let AnswerJob {
            pane,
            manifest,
            action,
            send,
        } = job;
        let wait = if send {
            self.dialog_settle(pane, &manifest)
        } else {
            Duration::ZERO
        };
        let job = MuxJob::Answer {
            pane,
            manifest,
            action,
            send,
            reply,
        };
        if wait.is_zero() {
            self.job(job);
        } else {
            let at = self.now() + wait;
            self.job_at(at, job);
        }
    }

    /// `wait`: at once when the pane is there already, else kept.
    fn wait(&mut self, reply: RequestId, p: params::Wait) -> Option<Result<Reply, Error>> {
        let until = match Until::parse(&p.until) {
            Ok(u) => u,
            Err(e) => return Some(Err(e)),
        };
        let view = match self.pane_view(&p.pane) {
            Ok(v) => v,
            Err(e) => return Some(Err(e)),
        };
        let timeout = p.timeout_ms.map(Duration::from_millis);
        let now = self.now();
        self.waits.wait(reply, view, until, timeout, now)
    }

    /// `prompt --wait`: the prompt now, its answer when the agent has
    /// reacted and reached `until`.
    fn prompt_and_wait(
        &mut self,
        reply: RequestId,
        p: params::Prompt,
    ) -> Option<Result<Reply, Error>> {
        let until = match Until::parse(&p.until) {
            Ok(u) => u,
            Err(e) => return Some(Err(e)),
        };
        let timeout = p.timeout_ms.map(Duration::from_millis);
        match self.prompt(p) {
            Ok(sent) => {
                let now = self.now();
                self.waits.after_prompt(reply, &sent, until, timeout, now);
                None
            }
            Err(e) => Some(Err(e)),
        }
    }

    /// The view of a pane, this machine's or a remote's (`box:%3`).
    fn pane_view(&self, raw: &str) -> Result<PaneView, Error> {
        if crate::remote::split_id(raw).is_some() {
            return self
                .remote_views()
                .into_iter()
                .find(|v| v.pane == raw)
                .ok_or_else(|| {
                    Error::new(
                        ErrorCode::UnknownPane,
                        format!("no pane {raw} (see `tend list`; `tend remote list` for the link)"),
                    )
                });
        }
        let pane = self.pane_param(raw)?;
        Ok(self.view(&self.panes[&pane]))
    }

    /// Answers every request the table answers at once.
    fn answer(&mut self, req: Request) -> Result<Reply, Error> {
        match req {
            Request::Ping(_) => Ok(self.pong().into()),
            Request::List(_) => {
                let mut views: Vec<PaneView> = self.panes.values().map(|p| self.view(p)).collect();
                views.extend(self.remote_views());
                Ok(views.into())
            }
            Request::Get(p) => self.pane_view(&p.pane).map(Reply::from),
            Request::Remotes(_) => Ok(self.remote_links().into()),
            Request::Goto(p) => {
                self.goto(&p.pane, p.client)?;
                Ok(reply::Moved { pane: p.pane }.into())
            }
            Request::Status(_) => Ok(self.overview().into()),
            Request::Next(p) => self.next(p).map(Reply::from),
            Request::Capture(p) => {
                let pane = self.pane_param(&p.pane)?;
                self.capture(pane).map(Reply::from)
            }
            Request::Explain(p) => {
                let pane = self.pane_param(&p.pane)?;
                Ok(self.explain(pane).into())
            }
            Request::Stop(_) => {
                self.stopping = true;
                Ok(reply::Stopping { stopping: true }.into())
            }
            Request::Poke(_) => {
                self.reconcile();
                Ok(reply::Empty {}.into())
            }
            Request::Report(p) => self.report(p).map(Reply::from),
            Request::Release(p) => self.release(&p.pane).map(Reply::from),
            Request::ReportMetadata(p) => self.label(p).map(Reply::from),
            Request::StopRequest(p) => self.stop_request(p).map(Reply::from),
            Request::Inbox(p) => self.inbox(&p.pane).map(Reply::from),
            Request::Ack(p) => self.ack(&p.pane).map(Reply::from),
            Request::Park(p) => self.park(p).map(Reply::from),
            Request::Unpark(p) => self.unpark(&p.pane).map(Reply::from),
            Request::Snooze(p) => self.snooze(p).map(Reply::from),
            Request::Unsnooze(p) => self.unsnooze(&p.pane).map(Reply::from),
            Request::Prompt(p) => self.prompt(p).map(Reply::from),
            Request::SendKeys(p) => self.send_keys(p).map(Reply::from),
            // `start` hands these on (to the backend thread, to the
            // daemon's configuration reader, to the waits, to the restore)
            // and never asks here.
            Request::Read(_)
            | Request::Answer(_)
            | Request::RemotesReload(_)
            | Request::Restore(_)
            | Request::Resume(_)
            | Request::Wait(_) => Err(Error::new(
                ErrorCode::DaemonError,
                format!("`{}` is answered later, not at once", req.method()),
            )),
            // The connection serves these itself (`ipc`): they hold it open.
            Request::Events(_) | Request::Guard(_) | Request::Relay(_) => Err(Error::new(
                ErrorCode::UnknownMethod,
                format!("unknown method `{}`", req.method()),
            )),
        }
    }

    /// `ping`: who answers.
    fn pong(&self) -> reply::Pong {
        reply::Pong {
            protocol: tend_protocol::PROTOCOL_VERSION,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            pid: self.token_id,
            panes: self.panes.len(),
            backend: self.mux.word().to_owned(),
        }
    }

    /// `release`: the pane's reports are forgotten.
    fn release(&mut self, raw: &str) -> Result<reply::Released, Error> {
        let pane = self.pane_param(raw)?;
        let released = self.book.release(&self.mux.name(pane)).is_some();
        self.dirty(pane);
        Ok(reply::Released { released })
    }

    /// `report_metadata`: the pane's label.
    fn label(&mut self, p: params::ReportMetadata) -> Result<reply::Labelled, Error> {
        let pane = self.pane_param(&p.pane)?;
        let label = p.label.filter(|l| !l.is_empty());
        self.book.set_label(&self.mux.name(pane), label.as_deref());
        self.dirty(pane);
        Ok(reply::Labelled { label })
    }

    /// `stop_request`: a stop flag for the pane's agent, and its event.
    fn stop_request(&mut self, p: params::StopRequest) -> Result<reply::FlagSet, Error> {
        let pane = self.pane_param(&p.pane)?;
        let by = p.by.as_deref().unwrap_or("user");
        let now = self.unix();
        let old = self
            .flags
            .request(&self.mux.name(pane), &p.reason, by, now)
            .map_err(|e| Error::new(ErrorCode::BadRequest, e.to_string()))?;
        self.dirty(pane);
        self.events.push_back(BusEvent::StopRequested {
            pane: self.mux.name(pane),
            reason: p.reason,
        });
        Ok(reply::FlagSet {
            replaced: old.is_some(),
        })
    }

    /// `inbox`: the pane's stop flag, now read.
    fn inbox(&mut self, raw: &str) -> Result<reply::Flags, Error> {
        let pane = self.pane_param(raw)?;
        let now = self.unix();
        let (flag, event) = self.flags.inbox(&self.mux.name(pane), now);
        let stop = flag.map(stop_flag);
        if event.is_some() {
            self.dirty(pane);
        }
        Ok(reply::Flags { stop })
    }

    /// `ack`: the pane's agent acknowledges its stop flag.
    fn ack(&mut self, raw: &str) -> Result<reply::Acknowledged, Error> {
        let pane = self.pane_param(raw)?;
        let now = self.unix();
        let ev = self
            .flags
            .ack(&self.mux.name(pane), now)
            .map_err(|e| Error::new(ErrorCode::NoFlag, e.to_string()))?;
        self.dirty(pane);
        Ok(reply::Acknowledged(format!("{ev:?}")))
    }

    /// `unpark`.
    fn unpark(&mut self, raw: &str) -> Result<reply::Unparked, Error> {
        let pane = self.pane_param(raw)?;
        let unparked = self.parks.unpark(&self.mux.name(pane)).is_some();
        self.dirty(pane);
        Ok(reply::Unparked { unparked })
    }

    /// `snooze`: the pane's demands hidden for a while.
    fn snooze(&mut self, p: params::Snooze) -> Result<reply::Snoozed, Error> {
        let pane = self.pane_param(&p.pane)?;
        let length = SnoozeFor::parse(p.length.as_deref().unwrap_or("30m"))
            .map_err(|e| Error::new(ErrorCode::BadRequest, e.to_string()))?;
        let now = self.unix();
        self.parks.snooze(&self.mux.name(pane), length, now);
        self.dirty(pane);
        let until = self.parks.marks(&self.mux.name(pane), now).until;
        Ok(reply::Snoozed {
            snoozed: self.mux.name(pane),
            until,
        })
    }

    /// `unsnooze`.
    fn unsnooze(&mut self, raw: &str) -> Result<reply::Unsnoozed, Error> {
        let pane = self.pane_param(raw)?;
        let unsnoozed = self.parks.unsnooze(&self.mux.name(pane)).is_some();
        self.dirty(pane);
        Ok(reply::Unsnoozed { unsnoozed })
    }

    /// `send_keys`: keys to any pane.
    fn send_keys(&mut self, p: params::SendKeys) -> Result<reply::Sent, Error> {
        let pane = self.pane_param(&p.pane)?;
        if p.keys.is_empty() {
            return Err(Error::new(
                ErrorCode::BadRequest,
                "send_keys needs {\"keys\": [\"C-c\", ...]}",
            ));
        }
        self.job(MuxJob::SendKeys { pane, keys: p.keys });
        Ok(reply::Sent { sent: true })
    }

    /// `status`: the summary sentence and its counts.
    fn overview(&self) -> reply::Overview {
        let rows = self.rows();
        let remote = self.remote_rows();
        let bands = crate::publish::bands(&rows, &remote);
        let (needs, quiet) = crate::publish::demands_and_quiet(&bands);
        let agents = rows.iter().filter(|r| r.agent.is_some()).count() + remote.rows.len();
        reply::Overview {
            agents,
            needs,
            quiet,
            summary: super::publish::summary_with_remotes(needs, quiet, &remote),
        }
    }

    /// `explain`: the pane's view, the detector's explanation, the identity
    /// evidence, the screen, and who decides.
    fn explain(&self, pane: PaneId) -> tend_protocol::explain::Explained {
        use tend_protocol::explain::{AuthorityView, Document, Explained, ScreenReading};
        let e = &self.panes[&pane];
        let view = self.view(e);
        let version_warning = match (&view.agent, &view.version) {
            (Some(a), Some(v)) => self
                .registry
                .get(a)
                .and_then(|m| m.version_warning(v, &view.pane)),
            _ => None,
        };
        let verified_versions = view
            .agent
            .as_deref()
            .and_then(|a| self.registry.get(a))
            .map(|m| m.verified_versions.clone());
        // Who decides, and what the screen alone reads.
        let screen = e.det.status();
        let screen_agrees =
            screen.state.map(PaneState::from) == view.state && screen.reason == view.reason;
        let authority = AuthorityView {
            holder: view.authority,
            screen: ScreenReading {
                state: screen.state,
                reason: screen.reason,
                rule: screen.rule,
            },
            screen_agrees,
            // `tend run` answers the program's OSC 7501 query here: its
            // reports count.
            relay: e.watch.relay(),
            file: e.session.seen(),
        };
        Explained {
            version_warning,
            verified_versions,
            pane: view,
            explain: Document::new(&e.det.explain()),
            identity: Document::new(&e.watch.evidence()),
            tap: self.tap(e),
            screen: e.det.screen().rows(),
            report: serde_json::to_value(self.book.reporter(&self.mux.name(pane)))
                .unwrap_or_default(),
            authority,
            limit: self.limit_explained(&self.mux.name(pane)),
        }
    }

    /// `read`: the pane and how many lines, unless more than the screen of
    /// a busy agent on the alternate screen is asked for.
    fn read(&self, p: &params::Read) -> Result<(PaneId, Option<u32>), Error> {
        let pane = self.pane_param(&p.pane)?;
        let lines = p.lines.unwrap_or(0);
        let e = &self.panes[&pane];
        let (rows, _) = e.det.screen().size();
        let idle = matches!(
            e.eff.as_ref().and_then(|v| v.state),
            Some(State::Idle | State::Completed) | None
        );
        if lines > u64::from(rows) && e.info.alternate_on && !idle {
            return Err(Error::new(
                ErrorCode::AgentNotIdle,
                format!(
                    "{} draws on the alternate screen and is not idle: reading more than its {rows} visible \
                     lines would page through its own scroll UI. Wait until it is idle, or ask it to write the \
                     output to a file",
                    self.mux.name(pane)
                ),
            ));
        }
        Ok((pane, p.lines.map(|n| n.min(100_000) as u32)))
    }

    /// What an `answer` request needs: the pane's agent manifest (with
    /// `[actions]`), the action, and whether to send (`dry_run` only
    /// reports the dialog and keys, for the picker).
    fn answer_job(&self, p: &params::Answer) -> Result<AnswerJob, Error> {
        let pane = self.pane_param(&p.pane)?;
        let name = self.mux.name(pane);
        let action = tend_detector::answer::Action::parse(&p.action).ok_or_else(|| {
            Error::new(
                ErrorCode::BadRequest,
                format!("action `{}` is not approve or deny", p.action),
            )
        })?;
        let Some(manifest) = self.panes[&pane].det.manifest().cloned() else {
            return Err(Error::new(
                ErrorCode::NoAgent,
                format!("{name} runs no agent tend knows; nothing was sent"),
            ));
        };
        if manifest.actions.is_none() {
            return Err(Error::new(
                ErrorCode::NoActions,
                format!(
                    "{name}: tend does not know the keys of {}'s approval dialog (its manifest has no \
                     [actions] table); answer it in its pane",
                    manifest.short_name
                ),
            ));
        }
        Ok(AnswerJob {
            pane,
            manifest,
            action,
            send: !p.dry_run,
        })
    }

    /// Marks a pane for re-evaluation and persistence after a user action.
    fn dirty(&mut self, pane: PaneId) {
        self.persist = true;
        self.mark_touched(pane);
    }

    fn park(&mut self, p: params::Park) -> Result<reply::Parked, Error> {
        let pane = self.pane_param(&p.pane)?;
        let gate = p.gate.filter(|g| !g.is_empty()).map(|g| {
            self.backend
                .mux
                .parse(&g)
                .map_or(g.clone(), |id| self.mux.name(id))
        });
        if let Some(g) = &gate {
            let gid = self.mux.parse(g).ok_or_else(|| {
                Error::new(
                    ErrorCode::BadRequest,
                    format!("gate `{g}` is not a pane id like {}", self.mux.example()),
                )
            })?;
            if !self.panes.contains_key(&gid) {
                return Err(Error::new(
                    ErrorCode::UnknownPane,
                    format!("gate pane {g} does not exist"),
                ));
            }
        }
        let now = self.unix();
        self.parks
            .park(&self.mux.name(pane), &p.note, gate.as_deref(), now)
            .map_err(|e| Error::new(ErrorCode::BadRequest, e.to_string()))?;
        self.dirty(pane);
        Ok(reply::Parked {
            parked: self.mux.name(pane),
        })
    }

    fn report(&mut self, p: params::Report) -> Result<reply::Reported, Error> {
        let pane = self.pane_param(&p.pane)?;
        let name = self.mux.name(pane);
        let mut r = Report::new(&p.state);
        if let Some(seq) = p.seq {
            r = r.seq(seq);
        }
        if let Some(reason) = &p.reason {
            r = r.reason(reason);
        }
        if let Some(m) = &p.message {
            r = r.message(m);
        }
        if let Some(every) = &p.every {
            let d = tend_detector::config::parse_duration(every)
                .map_err(|e| Error::new(ErrorCode::BadRequest, format!("--every: {e}")))?;
            r = r.every(d);
        }
        if let Some(list) = &p.dispatches {
            let panes: Vec<&str> = list.iter().map(String::as_str).collect();
            r = r.dispatches(&panes);
        }
        let agent = p
            .agent
            .or_else(|| self.panes.get(&pane).and_then(|e| e.det.status().agent));
        if let Some(a) = &agent {
            r = r.agent(a);
        }
        let now = self.epoch();
        let applied = self
            .book
            .apply(now, &name, r)
            .map_err(|e| Error::new(ErrorCode::BadReport, e.to_string()))?;
        // A report is the agent reading its board: it marks a stop flag
        // read, and may acknowledge it.
        let flag_events = self.flags.on_report(&name, now.as_secs(), p.ack);
        self.dirty(pane);
        Ok(reply::Reported {
            from: applied.from,
            to: applied.to,
            seq: applied.seq,
            stop: self.flags.get(&name).map(stop_flag),
            flag_events: flag_events.iter().map(|e| format!("{e:?}")).collect(),
        })
    }

    /// Sends a prompt (bracketed paste, then Enter) unless the agent is
    /// blocked or a stop flag is pending. Returns what a caller needs to
    /// tell the next change from the current one.
    fn prompt(&mut self, p: params::Prompt) -> Result<reply::Prompted, Error> {
        let pane = self.pane_param(&p.pane)?;
        let name = self.mux.name(pane);
        if p.text.is_empty() {
            return Err(Error::new(ErrorCode::BadRequest, "prompt needs some text"));
        }
        let e = &self.panes[&pane];
        let view = self.view(e);
        if view.agent.is_none() {
            return Err(Error::new(
                ErrorCode::NoAgent,
                format!("no agent identified in {name}; tend only prompts agents (use send-keys for anything else)"),
            ));
        }
        let eff = e.eff.as_ref();
        if let (Some(State::Waiting), Some(Reason::Approval | Reason::Question)) =
            (eff.and_then(|v| v.state), eff.and_then(|v| v.reason))
        {
            return Err(Error::new(
                ErrorCode::AgentBlocked,
                format!(
                    "{name} is waiting for {}: answer it first (nothing was sent)",
                    eff.and_then(|v| v.reason).map_or("you", |r| r.as_str())
                ),
            ));
        }
        if let Err(e) = self.flags.check_prompt(&self.mux.name(pane)) {
            return Err(Error::new(
                ErrorCode::StopPending,
                format!("{e} (nothing was sent)"),
            ));
        }
        // Some agents take an Enter right after a paste as part of it: their
        // manifest's `[prompt]` says how long to wait, and the table sends
        // the Enter when that time comes.
        let pause = e
            .det
            .manifest()
            .map(|m| m.prompt.enter_after)
            .unwrap_or_default();
        let enter = p.enter.unwrap_or(true);
        self.job(MuxJob::Paste {
            pane,
            text: p.text,
            enter: enter && pause.is_zero(),
        });
        if enter && !pause.is_zero() {
            let at = self.now() + pause;
            self.job_at(
                at,
                MuxJob::SendKeys {
                    pane,
                    keys: vec!["Enter".into()],
                },
            );
        }
        Ok(reply::Prompted {
            sent: true,
            state_change_seq: view.state_change_seq,
            run: view.run,
            pane: view,
        })
    }

    fn next(&mut self, p: params::Next) -> Result<reply::Target, Error> {
        let kind = p.kind.as_deref().unwrap_or("waiting");
        let from = p.from;
        let rows = self.rows();
        let remote = self.remote_rows();
        let ids: Vec<String> = rows.iter().map(|r| self.mux.name(r.pane)).collect();
        let cands: Vec<attention::Candidate<'_>> = rows
            .iter()
            .zip(&ids)
            .filter_map(|(r, id)| r.candidate(id, &r.session_name))
            .chain(remote.rows.iter().filter_map(|r| {
                Some(attention::Candidate {
                    pane: &r.id,
                    session: &r.session_name,
                    band: r.band?,
                    reason: r.reason,
                    since: r.since,
                })
            }))
            .collect();
        let session = from
            .as_deref()
            .and_then(|f| rows.iter().zip(&ids).find(|(_, id)| id.as_str() == f))
            .map(|(r, _)| r.session_name.clone())
            .or_else(|| {
                let f = from.as_deref()?;
                remote
                    .rows
                    .iter()
                    .find(|r| r.id == f)
                    .map(|r| r.session_name.clone())
            })
            .or(p.session);
        let order: Vec<&str> = match kind {
            "working" => attention::working_order(&cands),
            "agent" => {
                let mut all: Vec<&str> = cands.iter().map(|c| c.pane).collect();
                // Local panes by number, then each remote's.
                all.sort_by_key(|p| {
                    let (host, id) = crate::remote::split_id(p).unwrap_or(("", p));
                    (
                        host,
                        self.mux.parse(id).map_or_else(
                            || id.trim_start_matches('%').parse::<u32>().unwrap_or(0),
                            |p| p.0,
                        ),
                    )
                });
                all
            }
            "session" => attention::attention_order(&cands)
                .into_iter()
                .filter(|p| {
                    cands
                        .iter()
                        .any(|c| c.pane == *p && Some(c.session) == session.as_deref())
                })
                .collect(),
            _ => attention::attention_order(&cands),
        };
        let target = attention::next_after(&order, from.as_deref()).map(str::to_owned);
        match target {
            Some(t) => {
                let order = order.iter().map(|o| (*o).to_owned()).collect();
                if p.jump {
                    self.goto(&t, p.client)?;
                }
                Ok(reply::Target { pane: t, order })
            }
            None => Err(Error::new(
                ErrorCode::NoTarget,
                match kind {
                    "working" => "no agent is working",
                    "session" => "no agent needs you in this session",
                    _ => "no agent needs you",
                },
            )),
        }
    }
}

/// What an `answer` job needs.
struct AnswerJob {
    pane: PaneId,
    manifest: std::sync::Arc<tend_detector::Manifest>,
    action: tend_detector::answer::Action,
    send: bool,
}

impl Core {
    /// Moves a client to a pane: a local one with `switch-client`, a remote
    /// one by opening (or reusing) the local window attached to it.
    fn goto(&mut self, pane: &str, client: Option<String>) -> Result<(), Error> {
        if crate::remote::split_id(pane).is_some() {
            if !self.backend.remote_windows {
                return Err(Error::new(
                    ErrorCode::NotInZellij,
                    format!(
                        "{pane} is on a remote: tend shows remote panes in a local tmux window, \
                         which {} has no counterpart for; reach it with ssh",
                        self.mux.word()
                    ),
                ));
            }
            return self
                .remote_attach(pane, client)
                .map_err(|e| Error::new(ErrorCode::UnknownPane, e));
        }
        let id = self.mux.parse(pane).ok_or_else(|| {
            Error::new(
                ErrorCode::BadRequest,
                format!(
                    "`{pane}` is not a pane id like {} or build-box:%3",
                    self.mux.example()
                ),
            )
        })?;
        if !self.panes.contains_key(&id) {
            return Err(Error::new(
                ErrorCode::UnknownPane,
                format!(
                    "no pane {} on {} (see `tend list`)",
                    self.mux.name(id),
                    self.mux.place()
                ),
            ));
        }
        self.job(MuxJob::Switch { client, pane: id });
        Ok(())
    }
}

/// What is left of an agent's `settle` (its `settle_ms`) when the pane's
/// state has held since `since` at `now` (Unix seconds). tend sees a dialog
/// a little after the agent draws it, so counting from the state's start is
/// on the safe side. A clock that went backwards, or a time that is not a
/// number, counts as no time held.
fn settle_left(settle: std::time::Duration, since: f64, now: f64) -> std::time::Duration {
    let held = now - since;
    let held = if held.is_finite() {
        held.clamp(0.0, 3600.0)
    } else {
        0.0
    };
    settle.saturating_sub(std::time::Duration::from_secs_f64(held))
}

#[cfg(test)]
mod tests {
    use super::settle_left;
    use std::time::Duration;

    #[test]
    fn keys_wait_for_what_is_left_of_the_settle_time() {
        let settle = Duration::from_millis(500);
        let t = 1_800_000_000.0;
        assert_eq!(settle_left(settle, t, t), settle);
        assert_eq!(settle_left(settle, t, t + 0.25), Duration::from_millis(250));
        assert_eq!(settle_left(settle, t, t + 0.5), Duration::ZERO);
        assert_eq!(settle_left(settle, t, t + 7200.0), Duration::ZERO);
        // A clock that went backwards, or no time at all: the whole wait.
        assert_eq!(settle_left(settle, t, t - 3.0), settle);
        assert_eq!(settle_left(settle, f64::NAN, t), settle);
        assert_eq!(settle_left(Duration::ZERO, t, t), Duration::ZERO);
    }
}
