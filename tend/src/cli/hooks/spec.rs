//! The per-agent hook tables (`tend/hooks/<agent>.toml`): which events
//! tend wires, with what matcher and timeout, and how far it trusts them.
//! They are data so that a change to an agent's hook surface is a change to
//! one small file, reviewed like the detector's manifests.

use std::sync::OnceLock;

use jsonc_parser::cst::CstInputValue;
use serde::Deserialize;

use super::agent::{hook_command, Agent};

/// The bundled tables, by file name.
pub(super) const TABLES: &[(&str, &str)] = &[
    ("claude.toml", include_str!("../../../hooks/claude.toml")),
    ("codex.toml", include_str!("../../../hooks/codex.toml")),
    ("gemini.toml", include_str!("../../../hooks/gemini.toml")),
];

/// How far tend trusts an agent's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Trust {
    /// The hooks report states (working, waiting/approval, done, idle).
    States,
    /// The hooks report the session id only; the screen decides the state.
    Identity,
}

/// How a handler entry is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Handler {
    /// `{"type", "command", "timeout"}` (Claude Code, Codex).
    Plain,
    /// `{"name", "type", "command", "description", "timeout"}` (Gemini CLI).
    Gemini,
}

/// One event tend hooks into.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EventSpec {
    pub event: String,
    pub matcher: Option<String>,
    /// The agent's timeout for the hook, in the agent's unit.
    pub timeout: u64,
}

/// One agent's table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Spec {
    pub name: String,
    pub display: String,
    pub trust: Trust,
    pub why: String,
    pub handler: Handler,
    /// Whether the agent's configuration format allows comments.
    #[serde(default)]
    pub comments: bool,
    pub events: Vec<EventSpec>,
}

fn parse(file: &str, text: &str) -> Result<Spec, String> {
    let spec: Spec = toml::from_str(text).map_err(|e| format!("tend/hooks/{file}: {e}"))?;
    if spec.events.is_empty() {
        return Err(format!("tend/hooks/{file}: no [[events]]"));
    }
    Ok(spec)
}

fn all() -> &'static [Spec] {
    static SPECS: OnceLock<Vec<Spec>> = OnceLock::new();
    SPECS.get_or_init(|| {
        TABLES
            .iter()
            .map(|(file, text)| {
                // The tables are compiled in and every one is parsed by the
                // unit test below, so a broken table never leaves the build.
                parse(file, text).unwrap_or_else(|e| panic!("bundled hook table: {e}"))
            })
            .collect()
    })
}

/// The table of `agent`.
pub(super) fn spec(agent: Agent) -> &'static Spec {
    let name = match agent {
        Agent::Claude => "claude",
        Agent::Codex => "codex",
        Agent::Gemini => "gemini",
    };
    all()
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no bundled hook table for {name}"))
}

/// tend's matcher group for one event, in the agent's format.
pub(super) struct Group {
    pub event: String,
    pub value: CstInputValue,
}

/// The matcher group tend wants under each event.
pub(super) fn desired_groups(spec: &Spec, exe: &str) -> Vec<Group> {
    let s = |v: &str| CstInputValue::String(v.to_string());
    spec.events
        .iter()
        .map(|e| {
            let command = s(&hook_command(exe, &spec.name, &e.event));
            let timeout = CstInputValue::from(e.timeout);
            let handler = match spec.handler {
                Handler::Plain => vec![
                    ("type".to_string(), s("command")),
                    ("command".to_string(), command),
                    ("timeout".to_string(), timeout),
                ],
                Handler::Gemini => vec![
                    ("name".to_string(), s(&format!("tend-{}", e.event))),
                    ("type".to_string(), s("command")),
                    ("command".to_string(), command),
                    (
                        "description".to_string(),
                        s("tend: report this session to the tend status line"),
                    ),
                    ("timeout".to_string(), timeout),
                ],
            };
            let mut group = Vec::new();
            if let Some(m) = &e.matcher {
                group.push(("matcher".to_string(), s(m)));
            }
            group.push((
                "hooks".to_string(),
                CstInputValue::Array(vec![CstInputValue::Object(handler)]),
            ));
            Group {
                event: e.event.clone(),
                value: CstInputValue::Object(group),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_table_parses() {
        for (file, text) in TABLES {
            let spec = parse(file, text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(format!("{}.toml", spec.name), *file);
            let mut events: Vec<&str> = spec.events.iter().map(|e| e.event.as_str()).collect();
            events.sort_unstable();
            events.dedup();
            assert_eq!(events.len(), spec.events.len(), "{file}: an event twice");
        }
        for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
            let _ = spec(agent);
        }
    }

    #[test]
    fn tables_say_what_the_agents_need() {
        let codex = spec(Agent::Codex);
        assert_eq!(codex.trust, Trust::States);
        assert_eq!(
            codex.events[0].matcher.as_deref(),
            Some("startup|resume|clear")
        );
        let timeout = |e: &str| {
            codex
                .events
                .iter()
                .find(|x| x.event == e)
                .map(|x| x.timeout)
        };
        assert_eq!(timeout("Interrupt"), Some(3));
        assert_eq!(timeout("Stop"), Some(5));
        assert_eq!(spec(Agent::Claude).trust, Trust::Identity);
        let gemini = spec(Agent::Gemini);
        assert_eq!((gemini.handler, gemini.comments), (Handler::Gemini, true));
        assert_eq!(gemini.events[0].timeout, 5000);
        assert!(!spec(Agent::Claude).comments && !codex.comments);
    }
}
