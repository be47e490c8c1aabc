//! Control requests the pane table answers. Long-running methods
//! (`events`, `wait`, `prompt --wait`) are driven by the connection, which
//! uses `get` and the event bus; everything here answers at once, or hands
//! the reply to the backend thread (`read`, `answer`).

use std::time::Duration;

use serde_json::{json, Value};
use tend_attention as attention;
use tend_attention::park::SnoozeFor;
use tend_attention::report::Report;
use tend_detector::{Reason, State};
use tend_tmux::PaneId;
use tokio::sync::oneshot::Sender;

use super::core::{Core, PaneEntry};
use super::worker::Job;
use crate::protocol::{PaneView, Request, Response};

fn text<'a>(params: &'a Value, key: &str) -> Option<&'a str> {
    params.get(key).and_then(Value::as_str)
}

fn task_view(t: &tend_attention::report::Task) -> crate::protocol::TaskView {
    crate::protocol::TaskView {
        id: t.id.clone(),
        state: t.state.to_owned(),
        kind: t.kind.map(str::to_owned),
        title: t.title.clone(),
        message: t.message.clone(),
        progress: t.progress,
        live: t.live,
    }
}

impl Core {
    pub(crate) fn view(&self, p: &PaneEntry) -> PaneView {
        let e = p.eff.as_ref();
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
            window: self.mux.window(&p.info),
            identified_by: identified.map(|i| i.by.as_str().to_owned()),
            wrapper: identified.and_then(|i| i.wrapper.clone()),
            agent,
            state: e.and_then(|e| e.state).map(|s| s.as_str().to_owned()),
            reason: e.and_then(|e| e.reason).map(|r| r.as_str().to_owned()),
            band: e.and_then(|e| e.band).map(|b| b.as_str().to_owned()),
            since: e.and_then(|e| e.state).map(|_| p.eff_since),
            rule: e.and_then(|e| e.state.map(|_| e.rule.clone())),
            quiet: e.is_some_and(|e| e.quiet),
            state_change_seq: p.eff_seq,
            tap: self.tap_word(p).to_owned(),
            authority: e.map_or("screen", |e| e.authority).to_owned(),
            lifecycle: e.and_then(|e| e.lifecycle.clone()),
            message: e.and_then(|e| e.message.clone()),
            tasks: e
                .map(|e| e.tasks.iter().map(task_view).collect())
                .unwrap_or_default(),
            app: e.and_then(|e| e.app.clone()),
            label: e.and_then(|e| e.label.clone()),
            parked: e.is_some_and(|e| e.parked),
            note: e.and_then(|e| e.note.clone()),
            gate: e.and_then(|e| e.gate.clone()),
            snoozed: e.is_some_and(|e| e.snoozed),
            until: e.and_then(|e| e.until),
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
            place: matches!(self.mux, super::mux::Mux::Tmux).then(|| {
                format!(
                    "{}:{}.{}",
                    p.info.session_name, p.info.window_index, p.info.pane_index
                )
            }),
        }
    }

    /// How the pane's output reaches the daemon: tmux's tap state; in
    /// zellij the subscription for the tabs a client looks at (their
    /// window is active), `dump-screen` polling for the rest.
    fn tap_word(&self, p: &PaneEntry) -> &'static str {
        match self.mux {
            super::mux::Mux::Tmux => p.tap.word(),
            super::mux::Mux::Zellij if p.info.window_active => "subscribe",
            super::mux::Mux::Zellij => "polling",
        }
    }

    fn pane_param(&self, params: &Value) -> Result<PaneId, Response> {
        let raw = text(params, "pane").unwrap_or_default();
        if let Some((host, pane)) = crate::remote::split_id(raw) {
            let dest = self
                .links
                .get(host)
                .map_or(host.to_owned(), |l| l.cfg.dest.clone());
            return Err(Response::err(
                0,
                "remote_pane",
                format!(
                    "{raw} is on remote {host}: only list, get, next and jump reach it from here; \
                     run the command there (ssh {dest} tend … {pane})"
                ),
            ));
        }
        let id = self.mux.parse(raw).ok_or_else(|| {
            Response::err(
                0,
                "bad_request",
                format!(
                    "`{raw}` is not a {} pane id like {}",
                    self.mux.word(),
                    self.mux.example()
                ),
            )
        })?;
        if !self.panes.contains_key(&id) {
            return Err(Response::err(
                0,
                "unknown_pane",
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
    fn dialog_settle(
        &self,
        pane: PaneId,
        manifest: &tend_detector::Manifest,
    ) -> std::time::Duration {
        let Some(settle) = manifest.actions.as_ref().map(|a| a.settle) else {
            return std::time::Duration::ZERO;
        };
        let Some(p) = self.panes.get(&pane) else {
            return std::time::Duration::ZERO;
        };
        settle_left(settle, p.eff_since, self.unix_at(self.now()))
    }

    /// What an `answer` request needs: the pane's agent manifest (with
    /// `[actions]`), the action, and whether to send (`dry_run` only
    /// reports the dialog and keys, for the picker).
    fn answer_job(
        &self,
        pane: PaneId,
        p: &Value,
    ) -> Result<
        (
            std::sync::Arc<tend_detector::Manifest>,
            tend_detector::answer::Action,
            bool,
        ),
        Response,
    > {
        let word = text(p, "action").unwrap_or_default();
        let name = self.mux.name(pane);
        let action = tend_detector::answer::Action::parse(word).ok_or_else(|| {
            Response::err(
                0,
                "bad_request",
                format!("action `{word}` is not approve or deny"),
            )
        })?;
        let Some(manifest) = self.panes[&pane].det.manifest().cloned() else {
            return Err(Response::err(
                0,
                "no_agent",
                format!("{name} runs no agent tend knows; nothing was sent"),
            ));
        };
        if manifest.actions.is_none() {
            return Err(Response::err(
                0,
                "no_actions",
                format!(
                    "{name}: tend does not know the keys of {}'s approval dialog (its manifest has no \
                     [actions] table); answer it in its pane",
                    manifest.short_name
                ),
            ));
        }
        let send = !p.get("dry_run").and_then(Value::as_bool).unwrap_or(false);
        Ok((manifest, action, send))
    }

    /// Answers `req`, now or later through the worker.
    pub(crate) fn control(&mut self, req: Request, reply: Sender<Response>) {
        let id = req.id;
        let r = match self.answer(&req) {
            Ok(Some(v)) => Response::ok(id, v),
            Ok(None) => {
                // Deferred: `read` goes through the worker.
                if let (Ok(pane), "read") = (self.pane_param(&req.params), req.method.as_str()) {
                    let lines = req
                        .params
                        .get("lines")
                        .and_then(Value::as_u64)
                        .map(|n| n.min(100_000) as u32);
                    self.job(Job::Read {
                        id,
                        pane,
                        lines,
                        reply,
                    });
                    return;
                }
                if let (Ok(pane), "answer") = (self.pane_param(&req.params), req.method.as_str()) {
                    match self.answer_job(pane, &req.params) {
                        Ok((manifest, action, send)) => {
                            let wait = if send {
                                self.dialog_settle(pane, &manifest)
                            } else {
                                std::time::Duration::ZERO
                            };
                            self.job(Job::Answer {
                                id,
                                pane,
                                manifest,
                                action,
                                send,
                                wait,
                                reply,
                            });
                            return;
                        }
                        Err(e) => {
                            let _ = reply.send(Response { id, ..e });
                            return;
                        }
                    }
                }
                Response::err(id, "bad_request", "malformed request")
            }
            Err(e) => Response { id, ..e },
        };
        let _ = reply.send(r);
    }

    fn answer(&mut self, req: &Request) -> Result<Option<Value>, Response> {
        let p = &req.params;
        match req.method.as_str() {
            "ping" => Ok(Some(json!({
                "protocol": crate::protocol::PROTOCOL_VERSION,
                "version": env!("CARGO_PKG_VERSION"),
                "pid": std::process::id(),
                "panes": self.panes.len(),
                "backend": self.mux.word(),
            }))),
            "list" => {
                let mut views: Vec<PaneView> = self.panes.values().map(|p| self.view(p)).collect();
                views.extend(self.remote_views());
                Ok(Some(serde_json::to_value(views).unwrap_or(Value::Null)))
            }
            "get" if text(p, "pane").and_then(crate::remote::split_id).is_some() => {
                let id = text(p, "pane").unwrap_or_default();
                let v = self
                    .remote_views()
                    .into_iter()
                    .find(|v| v.pane == id)
                    .ok_or_else(|| {
                        Response::err(
                            0,
                            "unknown_pane",
                            format!(
                                "no pane {id} (see `tend list`; `tend remote list` for the link)"
                            ),
                        )
                    })?;
                Ok(Some(serde_json::to_value(v).unwrap_or(Value::Null)))
            }
            "remotes" => Ok(Some(self.remotes_json())),
            "remotes_reload" => {
                let n = self
                    .reload_remotes()
                    .map_err(|e| Response::err(0, "bad_config", e))?;
                Ok(Some(json!({"remotes": n})))
            }
            "goto" => {
                let pane = text(p, "pane").unwrap_or_default().to_owned();
                let client = text(p, "client").map(str::to_owned);
                self.goto(&pane, client)?;
                Ok(Some(json!({"pane": pane})))
            }
            "get" => {
                let pane = self.pane_param(p)?;
                let v = self.panes.get(&pane).map(|e| self.view(e));
                Ok(Some(serde_json::to_value(v).unwrap_or(Value::Null)))
            }
            "status" => {
                let rows = self.rows();
                let remote = self.remote_rows();
                let bands = crate::daemon::publish::bands(&rows, &remote);
                let (demands, quiet) = crate::daemon::publish::demands_and_quiet(&bands);
                let agents = rows.iter().filter(|r| r.agent.is_some()).count() + remote.rows.len();
                Ok(Some(json!({
                    "agents": agents,
                    "needs": demands,
                    "quiet": quiet,
                    "summary": super::publish::summary_with_remotes(demands, quiet, &remote),
                })))
            }
            "next" => self.next(p).map(Some),
            "capture" => {
                let pane = self.pane_param(p)?;
                self.capture(pane).map(Some)
            }
            "explain" => {
                let pane = self.pane_param(p)?;
                let e = &self.panes[&pane];
                let view = self.view(e);
                let warning = match (&view.agent, &view.version) {
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
                let agrees = screen.state.map(|s| s.as_str()) == view.state.as_deref()
                    && screen.reason.map(|r| r.as_str()) == view.reason.as_deref();
                let authority = json!({
                    "holder": view.authority,
                    "screen": {
                        "state": screen.state,
                        "reason": screen.reason,
                        "rule": screen.rule,
                    },
                    "screen_agrees": agrees,
                    // `tend run` answers the program's OSC 7501 query here:
                    // its reports count.
                    "relay": e.watch.relay(),
                });
                Ok(Some(json!({
                    "version_warning": warning,
                    "verified_versions": verified_versions,
                    "pane": view,
                    "explain": e.det.explain(),
                    "identity": e.watch.evidence(),
                    "tap": self.tap_word(e),
                    "screen": e.det.screen().rows(),
                    "report": self.book.reporter(&self.mux.name(pane)),
                    "authority": authority,
                })))
            }
            "read" => {
                let pane = self.pane_param(p)?;
                let lines = p.get("lines").and_then(Value::as_u64).unwrap_or(0);
                let e = &self.panes[&pane];
                let (rows, _) = e.det.screen().size();
                let idle = matches!(
                    e.eff.as_ref().and_then(|v| v.state),
                    Some(State::Idle | State::Completed) | None
                );
                if lines > u64::from(rows) && e.info.alternate_on && !idle {
                    return Err(Response::err(
                        0,
                        "agent_not_idle",
                        format!(
                            "{} draws on the alternate screen and is not idle: reading more than its {rows} visible \
                             lines would page through its own scroll UI. Wait until it is idle, or ask it to write the \
                             output to a file",
                            self.mux.name(pane)
                        ),
                    ));
                }
                Ok(None)
            }
            "stop" => {
                self.stopping = true;
                Ok(Some(json!({"stopping": true})))
            }
            "poke" => {
                self.reconcile();
                Ok(Some(json!({})))
            }
            "report" => self.report(p).map(Some),
            "release" => {
                let pane = self.pane_param(p)?;
                let was = self.book.release(&self.mux.name(pane)).is_some();
                self.dirty(pane);
                Ok(Some(json!({"released": was})))
            }
            "report_metadata" => {
                let pane = self.pane_param(p)?;
                let label = text(p, "label").filter(|l| !l.is_empty());
                self.book.set_label(&self.mux.name(pane), label);
                self.dirty(pane);
                Ok(Some(json!({"label": label})))
            }
            "stop_request" => {
                let pane = self.pane_param(p)?;
                let reason = text(p, "reason").unwrap_or_default();
                let by = text(p, "by").unwrap_or("user");
                let now = self.unix();
                let old = self
                    .flags
                    .request(&self.mux.name(pane), reason, by, now)
                    .map_err(|e| Response::err(0, "bad_request", e.to_string()))?;
                self.dirty(pane);
                let _ = self.bus.send(json!({"event": "pane.stop_requested", "pane": self.mux.name(pane), "reason": reason}));
                Ok(Some(json!({"replaced": old.is_some()})))
            }
            "inbox" => {
                let pane = self.pane_param(p)?;
                let now = self.unix();
                let (flag, event) = self.flags.inbox(&self.mux.name(pane), now);
                let flag = flag.cloned();
                if event.is_some() {
                    self.dirty(pane);
                }
                Ok(Some(json!({"stop": flag})))
            }
            "ack" => {
                let pane = self.pane_param(p)?;
                let now = self.unix();
                let ev = self
                    .flags
                    .ack(&self.mux.name(pane), now)
                    .map_err(|e| Response::err(0, "no_flag", e.to_string()))?;
                self.dirty(pane);
                Ok(Some(
                    serde_json::to_value(format!("{ev:?}")).unwrap_or(Value::Null),
                ))
            }
            "park" => {
                let pane = self.pane_param(p)?;
                let note = text(p, "note").unwrap_or_default();
                let gate = text(p, "gate").filter(|g| !g.is_empty()).map(|g| {
                    self.mux
                        .parse(g)
                        .map_or(g.to_owned(), |id| self.mux.name(id))
                });
                let gate = gate.as_deref();
                if let Some(g) = gate {
                    let gid = self.mux.parse(g).ok_or_else(|| {
                        Response::err(
                            0,
                            "bad_request",
                            format!("gate `{g}` is not a pane id like {}", self.mux.example()),
                        )
                    })?;
                    if !self.panes.contains_key(&gid) {
                        return Err(Response::err(
                            0,
                            "unknown_pane",
                            format!("gate pane {g} does not exist"),
                        ));
                    }
                }
                let now = self.unix();
                self.parks
                    .park(&self.mux.name(pane), note, gate, now)
                    .map_err(|e| Response::err(0, "bad_request", e.to_string()))?;
                self.dirty(pane);
                Ok(Some(json!({"parked": self.mux.name(pane)})))
            }
            "unpark" => {
                let pane = self.pane_param(p)?;
                let was = self.parks.unpark(&self.mux.name(pane)).is_some();
                self.dirty(pane);
                Ok(Some(json!({"unparked": was})))
            }
            "snooze" => {
                let pane = self.pane_param(p)?;
                let length = SnoozeFor::parse(text(p, "for").unwrap_or("30m"))
                    .map_err(|e| Response::err(0, "bad_request", e.to_string()))?;
                let now = self.unix();
                self.parks.snooze(&self.mux.name(pane), length, now);
                self.dirty(pane);
                let until = self.parks.marks(&self.mux.name(pane), now).until;
                Ok(Some(
                    json!({"snoozed": self.mux.name(pane), "until": until}),
                ))
            }
            "unsnooze" => {
                let pane = self.pane_param(p)?;
                let was = self.parks.unsnooze(&self.mux.name(pane)).is_some();
                self.dirty(pane);
                Ok(Some(json!({"unsnoozed": was})))
            }
            "prompt" => self.prompt(p).map(Some),
            "answer" => {
                // Checked here for a quick refusal, again in the worker.
                let pane = self.pane_param(p)?;
                self.answer_job(pane, p)?;
                Ok(None)
            }
            "send_keys" => {
                let pane = self.pane_param(p)?;
                let keys: Vec<String> = p
                    .get("keys")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|k| k.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                if keys.is_empty() {
                    return Err(Response::err(
                        0,
                        "bad_request",
                        "send_keys needs {\"keys\": [\"C-c\", ...]}",
                    ));
                }
                self.job(Job::SendKeys { pane, keys });
                Ok(Some(json!({"sent": true})))
            }
            other => Err(Response::err(
                0,
                "unknown_method",
                format!("unknown method `{other}`"),
            )),
        }
    }

    /// Marks a pane for re-evaluation and persistence after a user action.
    fn dirty(&mut self, pane: PaneId) {
        self.persist = true;
        self.mark_touched(pane);
    }

    fn report(&mut self, p: &Value) -> Result<Value, Response> {
        let pane = self.pane_param(p)?;
        let name = self.mux.name(pane);
        let state = text(p, "state").unwrap_or_default();
        let mut r = Report::new(state);
        if let Some(seq) = p.get("seq").and_then(Value::as_u64) {
            r = r.seq(seq);
        }
        if let Some(reason) = text(p, "reason") {
            r = r.reason(reason);
        }
        if let Some(m) = text(p, "message") {
            r = r.message(m);
        }
        if let Some(every) = text(p, "every") {
            let d = tend_detector::config::parse_duration(every)
                .map_err(|e| Response::err(0, "bad_request", format!("--every: {e}")))?;
            r = r.every(d);
        }
        if let Some(list) = p.get("dispatches").and_then(Value::as_array) {
            let panes: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
            r = r.dispatches(&panes);
        }
        let agent = text(p, "agent")
            .map(str::to_owned)
            .or_else(|| self.panes.get(&pane).and_then(|e| e.det.status().agent));
        if let Some(a) = &agent {
            r = r.agent(a);
        }
        let now = self.epoch();
        let applied = self
            .book
            .apply(now, &name, r)
            .map_err(|e| Response::err(0, "bad_report", e.to_string()))?;
        // A report is the agent reading its board: it marks a stop flag
        // read, and may acknowledge it.
        let ack = p.get("ack").and_then(Value::as_bool).unwrap_or(false);
        let flag_events = self.flags.on_report(&name, now.as_secs(), ack);
        self.dirty(pane);
        let stop = self.flags.get(&name).cloned();
        Ok(json!({
            "from": applied.from,
            "to": applied.to,
            "seq": applied.seq,
            "stop": stop,
            "flag_events": flag_events.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>(),
        }))
    }

    /// Sends a prompt (bracketed paste, then Enter) unless the agent is
    /// blocked or a stop flag is pending. Returns what a caller needs to
    /// tell the next change from the current one.
    fn prompt(&mut self, p: &Value) -> Result<Value, Response> {
        let pane = self.pane_param(p)?;
        let text_in = text(p, "text").unwrap_or_default();
        let name = self.mux.name(pane);
        if text_in.is_empty() {
            return Err(Response::err(0, "bad_request", "prompt needs some text"));
        }
        let e = &self.panes[&pane];
        let view = self.view(e);
        if view.agent.is_none() {
            return Err(Response::err(
                0,
                "no_agent",
                format!("no agent identified in {name}; tend only prompts agents (use send-keys for anything else)"),
            ));
        }
        let eff = e.eff.as_ref();
        if let (Some(State::Waiting), Some(Reason::Approval | Reason::Question)) =
            (eff.and_then(|v| v.state), eff.and_then(|v| v.reason))
        {
            return Err(Response::err(
                0,
                "agent_blocked",
                format!(
                    "{name} is waiting for {}: answer it first (nothing was sent)",
                    eff.and_then(|v| v.reason).map_or("you", |r| r.as_str())
                ),
            ));
        }
        if let Err(e) = self.flags.check_prompt(&self.mux.name(pane)) {
            return Err(Response::err(
                0,
                "stop_pending",
                format!("{e} (nothing was sent)"),
            ));
        }
        let enter = p.get("enter").and_then(Value::as_bool).unwrap_or(true);
        self.job(Job::Paste {
            pane,
            text: text_in.to_owned(),
            enter,
        });
        Ok(
            json!({"sent": true, "state_change_seq": view.state_change_seq, "run": view.run, "pane": view}),
        )
    }

    fn next(&mut self, params: &Value) -> Result<Value, Response> {
        let kind = text(params, "kind").unwrap_or("waiting");
        let from = text(params, "from").map(str::to_owned);
        let client = text(params, "client").map(str::to_owned);
        let jump = params.get("jump").and_then(Value::as_bool).unwrap_or(false);
        let rows = self.rows();
        let remote = self.remote_rows();
        let ids: Vec<String> = rows.iter().map(|r| self.mux.name(r.pane)).collect();
        let cands: Vec<attention::Candidate<'_>> = rows
            .iter()
            .zip(&ids)
            .filter_map(|(r, id)| {
                Some(attention::Candidate {
                    pane: id,
                    session: &r.session_name,
                    band: r.band?,
                    reason: r.reason,
                    since: r.since.unwrap_or(0.0),
                })
            })
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
            .or_else(|| text(params, "session").map(str::to_owned));
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
                if jump {
                    self.goto(&t, client)?;
                }
                Ok(json!({"pane": t, "order": order}))
            }
            None => Err(Response::err(
                0,
                "no_target",
                match kind {
                    "working" => "no agent is working",
                    "session" => "no agent needs you in this session",
                    _ => "no agent needs you",
                },
            )),
        }
    }
}

impl Core {
    /// Moves a client to a pane: a local one with `switch-client`, a remote
    /// one by opening (or reusing) the local window attached to it.
    fn goto(&mut self, pane: &str, client: Option<String>) -> Result<(), Response> {
        if crate::remote::split_id(pane).is_some() {
            if self.mux == super::mux::Mux::Zellij {
                return Err(Response::err(
                    0,
                    "not_in_zellij",
                    format!(
                        "{pane} is on a remote: tend shows remote panes in a local tmux window, \
                         which zellij has no counterpart for; reach it with ssh"
                    ),
                ));
            }
            return self
                .remote_attach(pane, client)
                .map_err(|e| Response::err(0, "unknown_pane", e));
        }
        let id = self.mux.parse(pane).ok_or_else(|| {
            Response::err(
                0,
                "bad_request",
                format!(
                    "`{pane}` is not a pane id like {} or build-box:%3",
                    self.mux.example()
                ),
            )
        })?;
        if !self.panes.contains_key(&id) {
            return Err(Response::err(
                0,
                "unknown_pane",
                format!(
                    "no pane {} on {} (see `tend list`)",
                    self.mux.name(id),
                    self.mux.place()
                ),
            ));
        }
        self.job(Job::Switch { client, pane: id });
        Ok(())
    }
}

/// How long `prompt --wait` gives the agent to react before reporting
/// `agent_prompt_stalled`.
pub const PROMPT_REACTION: Duration = Duration::from_secs(5);

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
