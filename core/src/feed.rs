//! What a remote's feed may say, checked where it arrives.
//!
//! A remote is another machine: whatever runs there — a compromised host,
//! an agent that renames its tmux session, a tend of another version —
//! can put anything into the lines `tend events --feed` writes. Those
//! values travel on into local tmux options (`@tend_next`), key bindings,
//! window names and menus. So nothing of a snapshot is taken as it came:
//!
//! * ids must be ids: a pane `%N`, a window `@N`, a gate `%N`; a pane
//!   whose pane or window id is anything else is dropped whole (and
//!   counted), since everything else about it would hang on a lie;
//! * tend's own words (state, reason, band, tap, authority, …) are read
//!   as `tend-vocab`'s enums: one this version does not know is absent;
//! * other words (agent, rule, version) must be words: lower-case ASCII
//!   letters, digits and `-_./`, bounded; anything else is dropped;
//! * free text (session names, messages, notes, the host name) is kept
//!   without control characters and cut to a bound;
//! * a pane's program's subtasks are at most [`MAX_TASKS`], each with a
//!   word for an id and bounded text;
//! * a snapshot holds at most [`MAX_PANES`] panes (and its line at most
//!   [`MAX_LINE`] bytes, which the link that reads it enforces).
//!
//! What passes can still be any printable text (a session may be called
//! `#(touch x)`): the places that give it to tmux quote it for their
//! context (`tend_tmux::escape`). This module makes sure the ids that
//! become tmux targets and option values are nothing but ids.

use serde_json::Value;
use tend_protocol::{PaneId, WindowId};

use tend_protocol::PaneView;

/// Most panes one snapshot may list; the rest are dropped.
pub const MAX_PANES: usize = 1024;

/// Longest session name, host name or label kept, in characters.
pub const MAX_NAME: usize = 128;

/// Longest message, note or stop text kept, in characters.
pub const MAX_TEXT: usize = 512;

/// Longest word (agent id, state, rule, version), in bytes.
pub const MAX_WORD: usize = 64;

/// Most subtasks kept of one remote pane (a program reports at most 64 of
/// its own; the rest of a remote's are dropped).
pub const MAX_TASKS: usize = 16;

/// Longest line of a feed, in bytes: tend's own snapshot of a thousand
/// agents is about 1 MiB (a listed pane is 500-1000 bytes of JSON); a
/// longer line is not tend's feed.
pub const MAX_LINE: usize = 4 << 20;

/// One snapshot, checked.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// The remote tmux server's socket: an absolute path, or none.
    pub tmux_socket: Option<String>,
    /// The remote's host name, as text.
    pub hostname: Option<String>,
    /// Its panes, every id checked.
    pub panes: Vec<PaneView>,
    /// Panes left out: a bad pane or window id, or past [`MAX_PANES`].
    pub dropped: usize,
}

/// What one line of the feed was.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A snapshot of the remote's panes.
    Snapshot(Snapshot),
    /// Anything else tend's feed writes (a heartbeat): it keeps the link
    /// alive and carries nothing.
    Other,
}

/// Reads one line of the feed. Not JSON: an error naming the problem and
/// the start of the line (cut, without control characters).
pub fn parse_line(line: &str) -> Result<Line, String> {
    let v: Value = serde_json::from_str(line.trim()).map_err(|e| {
        format!(
            "the remote sent something that is not tend's feed ({e}): {}",
            text(line.trim(), 120).unwrap_or_default()
        )
    })?;
    if v.get("event").and_then(Value::as_str) != Some("feed.snapshot") {
        return Ok(Line::Other);
    }
    let mut snap = Snapshot {
        tmux_socket: v
            .get("tmux_socket")
            .and_then(Value::as_str)
            .and_then(socket_path),
        hostname: v
            .get("hostname")
            .and_then(Value::as_str)
            .and_then(|h| text(h, MAX_NAME)),
        ..Snapshot::default()
    };
    let listed = v.get("panes").and_then(Value::as_array);
    for raw in listed.into_iter().flatten() {
        if snap.panes.len() == MAX_PANES {
            snap.dropped += 1;
            continue;
        }
        match serde_json::from_value::<PaneView>(raw.clone())
            .ok()
            .and_then(pane)
        {
            Some(p) => snap.panes.push(p),
            None => snap.dropped += 1,
        }
    }
    Ok(Line::Snapshot(snap))
}

/// One pane of a snapshot, or `None` when its ids are not ids.
pub fn pane(mut p: PaneView) -> Option<PaneView> {
    p.pane = p.pane.parse::<PaneId>().ok()?.to_string();
    p.window = p.window.parse::<WindowId>().ok()?.to_string();
    p.session = text(&p.session, MAX_NAME).unwrap_or_default();
    p.agent = p.agent.as_deref().and_then(word);
    p.wrapper = p.wrapper.as_deref().and_then(|t| text(t, MAX_NAME));
    p.rule = p.rule.as_deref().and_then(word);
    p.version = p.version.as_deref().and_then(word);
    p.lifecycle = p.lifecycle.as_deref().and_then(|t| text(t, MAX_NAME));
    p.label = p.label.as_deref().and_then(|t| text(t, MAX_NAME));
    p.message = p.message.as_deref().and_then(|t| text(t, MAX_TEXT));
    p.note = p.note.as_deref().and_then(|t| text(t, MAX_TEXT));
    p.stop = p.stop.as_deref().and_then(|t| text(t, MAX_TEXT));
    p.gate = p
        .gate
        .as_deref()
        .and_then(|g| g.parse::<PaneId>().ok())
        .map(|g| g.to_string());
    p.project = p.project.as_deref().and_then(|t| text(t, MAX_NAME));
    p.place = p.place.as_deref().and_then(|t| text(t, MAX_NAME));
    p.app = p.app.as_deref().and_then(word);
    p.tasks.truncate(MAX_TASKS);
    p.tasks.retain_mut(task);
    p.since = p.since.filter(|s| s.is_finite());
    p.unrecognised_since = p.unrecognised_since.filter(|s| s.is_finite());
    // A remote's pane is that remote's: it names no host of its own (the
    // link sets it).
    p.host = None;
    Some(p)
}

/// One subtask of a remote pane, checked in place; `false` drops it (an
/// id that is not a word: it names the task in a menu and in `tend list`).
fn task(t: &mut tend_protocol::TaskView) -> bool {
    let Some(id) = text(&t.id, MAX_WORD).filter(|i| !i.contains(char::is_whitespace)) else {
        return false;
    };
    t.id = id;
    t.title = t.title.as_deref().and_then(|x| text(x, MAX_NAME));
    t.message = t.message.as_deref().and_then(|x| text(x, MAX_TEXT));
    t.progress = t.progress.filter(|p| *p <= 100);
    true
}

/// A word: lower-case ASCII letters, digits and `-_./`, at most
/// [`MAX_WORD`] bytes. Agent ids, states, bands, rule ids and versions
/// are all words (`claude`, `waiting`, `claude/approval`, `2.1.3`).
pub fn word(s: &str) -> Option<String> {
    let ok = !s.is_empty()
        && s.len() <= MAX_WORD
        && s.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.' | b'/')
        });
    ok.then(|| s.to_owned())
}

/// Free text: control characters (C0, DEL, C1) removed, cut to `max`
/// characters with `…`; `None` when nothing is left.
pub fn text(s: &str, max: usize) -> Option<String> {
    let mut out = String::new();
    for (n, c) in s.chars().filter(|c| !c.is_control()).enumerate() {
        if n == max {
            out.pop();
            out.push('…');
            break;
        }
        out.push(c);
    }
    (!out.trim().is_empty()).then_some(out)
}

/// The remote tmux socket: an absolute path without control characters,
/// at most 4096 bytes (it is given to the remote's own tmux, through ssh,
/// as one quoted word).
fn socket_path(s: &str) -> Option<String> {
    (s.starts_with('/') && s.len() <= 4096 && !s.chars().any(char::is_control))
        .then(|| s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(panes: Value) -> Snapshot {
        let line = serde_json::json!({
            "event": "feed.snapshot",
            "hostname": "box",
            "tmux_socket": "/tmp/tmux-0/default",
            "panes": panes,
        })
        .to_string();
        match parse_line(&line) {
            Ok(Line::Snapshot(s)) => s,
            other => panic!("not a snapshot: {other:?}"),
        }
    }

    fn view(pane: &str, session: &str) -> Value {
        serde_json::json!({
            "pane": pane, "session": session, "window": "@1",
            "agent": "claude", "state": "waiting", "reason": "approval",
            "band": "waiting", "rule": "claude/approval", "since": 5.0,
        })
    }

    #[test]
    fn a_pane_id_that_is_not_an_id_drops_the_pane() {
        let s = snapshot(serde_json::json!([
            view("%9\";run-shell \"touch /tmp/x\";display-message \"", "work"),
            view("%9 ", "work"),
            view("9", "work"),
            view("%-1", "work"),
            view("%99999999999", "work"),
            view("%3", "work"),
        ]));
        assert_eq!(s.dropped, 5);
        assert_eq!(s.panes.len(), 1);
        assert_eq!(s.panes[0].pane, "%3");
        assert_eq!(s.panes[0].rule.as_deref(), Some("claude/approval"));
    }

    #[test]
    fn a_bad_window_id_drops_the_pane() {
        let mut v = view("%3", "work");
        v["window"] = Value::String("@1; kill-server".into());
        let s = snapshot(serde_json::json!([v]));
        assert_eq!((s.panes.len(), s.dropped), (0, 1));
    }

    #[test]
    fn names_keep_their_text_without_control_characters() {
        // A hostile name is still a name: it is shown (quoted where it
        // lands), not dropped; control bytes that could drive a terminal
        // or end a line in tmux's protocol are removed.
        let s = snapshot(serde_json::json!([view(
            "%3",
            "rs#(touch /tmp/y)\n\u{1b}[2J\u{9b}x"
        )]));
        assert_eq!(s.panes[0].session, "rs#(touch /tmp/y)[2Jx");
        let long = "é".repeat(100_000);
        let s = snapshot(serde_json::json!([view("%3", &long)]));
        assert_eq!(s.panes[0].session.chars().count(), MAX_NAME);
        assert!(s.panes[0].session.ends_with('…'));
    }

    #[test]
    fn words_that_are_not_words_are_dropped() {
        let mut v = view("%3", "work");
        v["agent"] = Value::String("claude;rm".into());
        v["state"] = Value::String("#{pane_id}".into());
        v["band"] = Value::String("x".repeat(65));
        v["gate"] = Value::String("%4'".into());
        v["host"] = Value::String("elsewhere".into());
        v["identified_by"] = Value::String("Screen!".into());
        v["wrapper"] = Value::String("ssh\u{1b}]0;x\u{7}".into());
        let s = snapshot(serde_json::json!([v]));
        let p = &s.panes[0];
        assert_eq!(p.identified_by, None);
        assert_eq!(p.wrapper.as_deref(), Some("ssh]0;x"));
        assert_eq!(p.agent, None);
        assert_eq!(p.state, None);
        assert_eq!(p.band, None);
        assert_eq!(p.gate, None);
        assert_eq!(p.host, None);
        assert_eq!(p.reason, Some(tend_vocab::Reason::Approval));
    }

    #[test]
    fn every_other_field_is_bounded_and_without_control_characters() {
        let mut v = view("%3", "work");
        v["project"] = Value::String(format!(
            "tend \u{1b}]52;c;ZXZpbA==\u{7} · {}",
            "m".repeat(10_000)
        ));
        v["place"] = Value::String("work:1.0\u{1b}[2J".into());
        v["app"] = Value::String("Codex App\n".into());
        let task = |id: &str| {
            serde_json::json!({
                "id": id, "state": "working", "live": true, "progress": 250,
                "title": format!("\u{1b}[31m{}", "t".repeat(100_000)),
                "message": "x\u{9b}y",
            })
        };
        let mut tasks: Vec<Value> = vec![task("bash 1"), task("")];
        tasks.extend((0..MAX_TASKS + 40).map(|i| task(&format!("t{i}"))));
        v["tasks"] = Value::Array(tasks);
        let s = snapshot(serde_json::json!([v]));
        let p = &s.panes[0];
        let project = p.project.as_deref().expect("project kept");
        assert!(project.starts_with("tend ]52;c;ZXZpbA== · m"), "{project}");
        assert_eq!(project.chars().count(), MAX_NAME);
        assert_eq!(p.place.as_deref(), Some("work:1.0[2J"));
        assert_eq!(p.app, None, "not a word");
        // The first MAX_TASKS, less the two whose ids are not words.
        assert_eq!(p.tasks.len(), MAX_TASKS - 2);
        for t in &p.tasks {
            assert!(word(&t.id).is_some(), "{}", t.id);
            let title = t.title.as_deref().expect("title");
            assert_eq!(title.chars().count(), MAX_NAME);
            assert!(!title.contains('\u{1b}'));
            assert_eq!(t.message.as_deref(), Some("xy"));
            assert_eq!(t.progress, None);
        }
    }

    #[test]
    fn the_socket_must_be_an_absolute_path() {
        let line = r#"{"event":"feed.snapshot","tmux_socket":"x;touch y","hostname":"a\u0007b","panes":[]}"#;
        let Ok(Line::Snapshot(s)) = parse_line(line) else {
            panic!("not a snapshot")
        };
        assert_eq!(s.tmux_socket, None);
        assert_eq!(s.hostname.as_deref(), Some("ab"));
    }

    #[test]
    fn a_snapshot_lists_at_most_max_panes() {
        let panes: Vec<Value> = (0..MAX_PANES + 5)
            .map(|i| view(&format!("%{i}"), "w"))
            .collect();
        let s = snapshot(Value::Array(panes));
        assert_eq!((s.panes.len(), s.dropped), (MAX_PANES, 5));
    }

    proptest::proptest! {
        /// Whatever a remote puts in a snapshot's fields, what is kept has
        /// ids that are ids and names without control characters.
        #[test]
        fn whatever_the_remote_sends_ids_are_ids(
            pane in "(%[0-9]{1,3}|.{0,12})",
            window in "(@[0-9]{1,3}|.{0,12})",
            session in ".{0,40}",
            agent in ".{0,12}",
            gate in ".{0,6}",
        ) {
            let mut v = view(&pane, &session);
            v["window"] = Value::String(window);
            v["agent"] = Value::String(agent);
            v["gate"] = Value::String(gate);
            let s = snapshot(serde_json::json!([v]));
            proptest::prop_assert_eq!(s.panes.len() + s.dropped, 1);
            for p in &s.panes {
                proptest::prop_assert!(p.pane.parse::<PaneId>().is_ok());
                proptest::prop_assert!(p.window.parse::<WindowId>().is_ok());
                proptest::prop_assert!(!p.session.chars().any(char::is_control));
                if let Some(g) = &p.gate {
                    proptest::prop_assert!(g.parse::<PaneId>().is_ok());
                }
                if let Some(a) = &p.agent {
                    proptest::prop_assert!(word(a).is_some());
                }
            }
        }

        /// Any line at all: an error, another line, or a snapshot; never a
        /// panic.
        #[test]
        fn any_line_parses_or_is_refused(line in ".{0,200}") {
            let _ = parse_line(&line);
        }
    }

    #[test]
    fn other_lines_are_not_snapshots_and_garbage_is_an_error() {
        assert_eq!(parse_line(r#"{"event":"feed.heartbeat"}"#), Ok(Line::Other));
        let e =
            parse_line(&format!("\u{1b}]0;x\u{7}{}", "a".repeat(10_000))).expect_err("not JSON");
        assert!(e.len() < 300, "{e}");
        assert!(!e.contains('\u{1b}'), "{e:?}");
    }
}
