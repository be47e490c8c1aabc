//! What of tend's is installed in a configuration: per event installed,
//! outdated or missing, and tend's entries left on events it no longer
//! manages. Recognising tend's handlers (by [`MARKER`]) is shared with
//! editing.

use jsonc_parser::cst::{CstArray, CstNode, CstObject, CstObjectProp};

use super::cst::{member, to_value};
use super::read::{parse_checked, ConfigFile};
use crate::cli::hooks::agent::MARKER;
use crate::cli::hooks::spec::{Group, Spec};
use crate::error::CliError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventState {
    Installed,
    Outdated,
    Missing,
}

impl EventState {
    pub fn label(self) -> &'static str {
        match self {
            EventState::Installed => "installed",
            EventState::Outdated => {
                "outdated (tend's entry differs from what install writes now; install again)"
            }
            EventState::Missing => "not installed",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overall {
    Installed,
    NotInstalled,
    Partial,
}

impl Overall {
    pub fn label(self) -> &'static str {
        match self {
            Overall::Installed => "installed",
            Overall::NotInstalled => "not installed",
            Overall::Partial => "partially installed",
        }
    }
}

pub(crate) struct InstallReport {
    pub events: Vec<(String, EventState)>,
    pub stray: Vec<String>,
}

impl InstallReport {
    pub fn overall(&self) -> Overall {
        let all = self.events.iter().all(|(_, s)| *s == EventState::Installed);
        let none = self.events.iter().all(|(_, s)| *s == EventState::Missing);
        if all && self.stray.is_empty() {
            Overall::Installed
        } else if none && self.stray.is_empty() {
            Overall::NotInstalled
        } else {
            Overall::Partial
        }
    }
}

pub(super) fn is_ours(handler: &CstNode) -> bool {
    handler
        .as_object()
        .and_then(|h| member(&h, "command"))
        .and_then(|c| c.value())
        .and_then(|v| v.as_string_lit())
        .and_then(|s| s.decoded_value().ok())
        .is_some_and(|c| c.contains(MARKER))
}

/// The handlers of a matcher group (`{"matcher": …, "hooks": [ … ]}`).
pub(super) fn group_handlers(group: &CstNode) -> Option<Vec<CstNode>> {
    let hooks = member(&group.as_object()?, "hooks")?.array_value()?;
    Some(hooks.elements())
}

/// The matcher groups under an event (none when it is not an array).
pub(super) fn event_groups(prop: &CstObjectProp) -> Option<CstArray> {
    prop.array_value()
}

pub(crate) fn inspect(
    file: &ConfigFile,
    spec: &Spec,
    desired: &[Group],
) -> Result<InstallReport, CliError> {
    let doc = parse_checked(&file.text, &file.path, spec)?;
    let mut events = Vec::new();
    let mut stray = Vec::new();
    let managed: Vec<&str> = spec.events.iter().map(|e| e.event.as_str()).collect();
    let props = doc
        .hooks
        .as_ref()
        .map(CstObject::properties)
        .unwrap_or_default();
    for p in &props {
        let Some(key) = p.decoded_name() else {
            continue;
        };
        if managed.contains(&key.as_str()) {
            continue;
        }
        let groups = event_groups(p).map(|a| a.elements()).unwrap_or_default();
        if groups
            .iter()
            .filter_map(group_handlers)
            .flatten()
            .any(|h| is_ours(&h))
        {
            stray.push(key);
        }
    }
    for want in desired {
        let groups = doc
            .hooks
            .as_ref()
            .and_then(|h| member(h, &want.event))
            .and_then(|p| event_groups(&p))
            .map(|a| a.elements())
            .unwrap_or_default();
        let want_value = to_value(&want.value);
        let (mut ours_groups, mut ours_handlers, mut equal) = (0, 0, false);
        for g in &groups {
            let Some(handlers) = group_handlers(g) else {
                continue;
            };
            let n = handlers.iter().filter(|h| is_ours(h)).count();
            if n == 0 {
                continue;
            }
            ours_handlers += n;
            ours_groups += 1;
            if n == handlers.len() && g.to_serde_value().as_ref() == Some(&want_value) {
                equal = true;
            }
        }
        let state = if ours_handlers == 0 {
            EventState::Missing
        } else if equal && ours_groups == 1 && ours_handlers == 1 {
            EventState::Installed
        } else {
            EventState::Outdated
        };
        events.push((want.event.clone(), state));
    }
    Ok(InstallReport { events, stray })
}
