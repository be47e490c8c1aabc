//! `capture`: a pane saved as a test case in the corpus layout
//! (`tests/corpus/README.md`). The daemon builds the files; `tend capture`
//! writes them where the user asked, so the daemon never writes outside
//! its own state.

use std::time::Duration;

use serde_json::{json, Value};
use tend_protocol::PaneId;
use tend_vocab::{Authority, State};

use crate::{Core, PaneEntry};
use tend_protocol::reply::Captured;
use tend_protocol::{Error, ErrorCode};

impl Core {
    /// Since when a pane's screen has gone unrecognised (Unix time): its
    /// agent's run is live, no rule of its manifest has matched its screen
    /// for `[detector] unrecognised_after`, and its state is the screen's
    /// to say (an agent reporting its own state is not read from the
    /// screen).
    pub(crate) fn unrecognised_since(&self, p: &PaneEntry) -> Option<f64> {
        let by_screen = p
            .eff
            .as_ref()
            .is_some_and(|e| e.authority == Authority::Screen);
        p.det
            .unrecognised_since()
            .filter(|_| by_screen)
            .map(|d| self.unix_at(d))
    }

    /// The files of a capture of `pane`, as text by file name.
    pub(crate) fn capture(&self, pane: PaneId) -> Result<Captured, Error> {
        let p = &self.panes[&pane];
        let now = self.now();
        let status = p.det.status();
        let pane = self.mux.name(pane);
        let Some(agent) = status.agent.clone() else {
            return Err(Error::new(
                ErrorCode::NoAgent,
                format!(
                    "{pane} runs no agent tend knows, so there is no state to get right; \
                     start the agent in it (or declare it with TEND_AGENT=<id>) and capture again"
                ),
            ));
        };
        let Some(rec) = p.tape.recording(
            now,
            self.unix_at(p.tape.start()),
            &format!("tend capture {pane}"),
        ) else {
            return Err(Error::new(
                ErrorCode::NotSeeded,
                format!("tend has not read {pane}'s screen yet; try again in a moment"),
            ));
        };
        let t0 = self.unix_at(rec.start);
        let rel =
            |d: Duration| (d.saturating_sub(rec.start).as_secs_f64() * 1000.0).round() / 1000.0;
        let (rows, cols) = rec.size;
        let screen = p.det.screen();
        let (cur_row, cur_col) = screen.cursor();
        let (h, w) = screen.size();
        let snapshot = json!({
            "ts": self.unix_at(now),
            "t": rel(now),
            "text": screen.rows().join("\n"),
            "alt": screen.alternate(),
            "cursor": [cur_col, cur_row],
            "cmd": p.info.current_command,
            "dead": p.info.dead,
            "title": screen.title(),
            "size": [w, h],
        });
        // Samples from before the recording's start count from its start:
        // the latest of them says what ran when it began.
        let first_inside = p.procs.iter().position(|(at, _)| *at >= rec.start);
        let keep_from = match first_inside {
            Some(0) => 0,
            Some(i) => i - 1,
            None => p.procs.len().saturating_sub(1),
        };
        let mut procs = String::new();
        for (at, list) in p.procs.iter().skip(keep_from) {
            let list: Vec<Value> = list.iter().map(corpus_process).collect();
            let line = json!({"ts": self.unix_at(*at), "t": rel(*at), "procs": list});
            procs.push_str(&line.to_string());
            procs.push('\n');
        }
        let labels = draft_labels(p, &agent, &rec, t0, now, &rel);
        let version = p.watch.version().map(str::to_owned);
        let (state, reason) = (status.state, status.reason);
        let meta = json!({
            "agent": agent,
            "scenario": "capture",
            "agent_version": version,
            "t0": t0,
            "width": cols,
            "height": rows,
            "size": format!("{cols}x{rows}"),
            "resizes": [],
            "pane": pane,
            "session": p.info.session_name,
            "window": p.info.window_label.clone(),
            "captured_by": "tend capture",
            "tend_version": env!("CARGO_PKG_VERSION"),
            "captured_at": self.unix_at(now),
            "state": state,
            "reason": reason,
            "rule": status.rule,
            "unrecognised_since": self.unrecognised_since(p),
            "tape": {
                "bound_bytes": super::tape::TAPE_BYTES,
                "output_bytes": rec.output_bytes,
                "wraps": rec.wraps,
            },
            "status": "draft",
            "notes": [
                "Captured live by tend: pane.cast starts from tend's own redraw of the screen \
                 (the output before it is not kept), and labels.json holds tend's own states, \
                 unreviewed. Correct the labels against what the agent really did, name the \
                 scenario, and add it under tests/corpus/<agent>/<scenario>@WxH/."
            ],
        });
        let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
        let files = [
            ("pane.cast", rec.cast),
            ("snapshots.jsonl", snapshot.to_string() + "\n"),
            ("procs.jsonl", procs),
            ("labels.json", pretty(&labels)),
            ("meta.json", pretty(&meta)),
        ];
        Ok(Captured {
            pane,
            agent,
            state,
            reason,
            size: format!("{cols}x{rows}"),
            seconds: rel(now),
            wraps: rec.wraps,
            files: files.map(|(name, text)| (name.to_owned(), text)).into(),
        })
    }
}

/// A process as `procs.jsonl` in the corpus has it (`cmdline`, not `argv`).
fn corpus_process(p: &tend_detector::identity::ProcessInfo) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    if let Some(map) = v.as_object_mut() {
        if let Some(argv) = map.remove("argv") {
            map.insert("cmdline".into(), argv);
        }
    }
    v
}

/// tend's own states over the recording, in the corpus labels format,
/// marked as a draft nobody has reviewed.
fn draft_labels(
    p: &PaneEntry,
    agent: &str,
    rec: &super::tape::Recording,
    t0: f64,
    now: Duration,
    rel: &dyn Fn(Duration) -> f64,
) -> Value {
    let recent: Vec<&tend_detector::Transition> = p.det.recent().collect();
    // The state the recording starts in: the last change before it.
    let before = recent.iter().rev().find(|t| t.at <= rec.start);
    let mut timeline = vec![match before {
        Some(t) => json!({
            "t": 0.0,
            "state": t.to.as_str(),
            "reason": t.reason.map(|r| r.as_str()),
            "src": format!("tend:{}", t.rule),
            "unc": [0, 0],
        }),
        None => json!({"t": 0.0, "state": Value::Null, "src": "start", "unc": [0, 0]}),
    }];
    for t in recent.iter().filter(|t| t.at > rec.start) {
        let mut b = json!({
            "t": rel(t.at),
            "state": t.to.as_str(),
            "src": format!("tend:{}", t.rule),
            "unc": [0, 0],
        });
        if let Some(r) = t.reason {
            b["reason"] = json!(r.as_str());
        }
        timeline.push(b);
    }
    let exited = p.det.status().state == Some(State::Exited);
    json!({
        "agent": agent,
        "scenario": "capture",
        "t0": t0,
        "duration": rel(now),
        "expected_agent": agent,
        "timeline": timeline,
        "silent_gaps": [],
        "quiet": [],
        "status": "draft",
        "reviewed": false,
        "notes": [
            format!(
                "A draft: tend's own states as it read the pane (rule in src), not the truth. \
                 Correct each state and time to what the agent really did, then set reviewed \
                 to true.{}",
                if exited { " The agent's run had ended." } else { "" }
            )
        ],
    })
}
