//! Reading and editing an agent's hook configuration while keeping the
//! user's text: formatting, key order, line endings and (where the format
//! has them) comments.
//!
//! The file is held as a concrete syntax tree from `jsonc-parser` (see
//! docs/decisions/0010-hooks-config-editing.md): tend's entries are appended
//! and removed as whole items, so an install followed by the matching
//! uninstall gives back the user's file byte for byte. One piece is our own:
//! the library lays out every container it appends to over several lines, so
//! an item for a container written on one line (`{"a":1,"hooks":{…}}`) is
//! spliced in as compact text instead, in that container's own style.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::{
    CstArray, CstContainerNode, CstInputValue, CstNode, CstObject, CstObjectProp, CstRootNode,
};
use jsonc_parser::ParseOptions;
use serde_json::Value;

use super::spec::{Group, Spec};
use super::MARKER;
use crate::error::CliError;

/// `v` as a JSON value, to compare with what the file holds.
fn to_value(v: &CstInputValue) -> Value {
    match v {
        CstInputValue::Null => Value::Null,
        CstInputValue::Bool(b) => Value::Bool(*b),
        CstInputValue::Number(n) => serde_json::from_str(n).unwrap_or(Value::Null),
        CstInputValue::String(s) => Value::String(s.clone()),
        CstInputValue::Array(a) => Value::Array(a.iter().map(to_value).collect()),
        CstInputValue::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), to_value(v))).collect())
        }
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// `v` on one line, keys in their order, for a container written on one line.
fn compact(v: &CstInputValue) -> String {
    match v {
        CstInputValue::Array(a) => {
            format!("[{}]", a.iter().map(compact).collect::<Vec<_>>().join(","))
        }
        CstInputValue::Object(m) => {
            let body: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}:{}", json_str(k), compact(v)))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        other => to_value(other).to_string(),
    }
}

// ---------------------------------------------------------------------------
// Reading.

pub(super) fn bad_file(path: &Path, what: String) -> CliError {
    CliError::new(
        "hooks_config_invalid",
        format!(
            "{}: {what}. tend has not changed the file; fix it (or move it aside) and run the command again",
            path.display()
        ),
    )
}

/// What the agent's parser accepts: plain JSON, plus comments where the
/// agent strips them before reading.
fn parse_options(comments: bool) -> ParseOptions {
    ParseOptions {
        allow_comments: comments,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The byte offset where `node` starts in the document's current text.
fn offset(node: &CstNode) -> usize {
    let mut n = 0;
    let mut cur = node.clone();
    loop {
        n += cur
            .previous_siblings()
            .map(|s| s.to_string().len())
            .sum::<usize>();
        match cur.parent() {
            Some(p) => cur = CstNode::Container(p),
            None => return n,
        }
    }
}

fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(pos)
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

fn kind_name(node: Option<&CstNode>) -> &'static str {
    match node {
        Some(n) if n.as_object().is_some() => "an object",
        Some(n) if n.as_array().is_some() => "an array",
        Some(n) if n.as_string_lit().is_some() => "a string",
        _ => "a number, boolean or null",
    }
}

/// The member `key` of `obj` (the last one, as the agents' parsers read a
/// repeated key).
fn member(obj: &CstObject, key: &str) -> Option<CstObjectProp> {
    obj.properties()
        .into_iter()
        .rev()
        .find(|p| p.decoded_name().as_deref() == Some(key))
}

/// A parsed configuration: its root object and its `hooks` object, if any.
pub(super) struct Doc {
    pub root: CstRootNode,
    pub object: CstObject,
    pub hooks: Option<CstObject>,
}

/// Validates `text` the way the agent reads it (naming line and column on
/// error) and parses it. The document must be an object, and its `hooks`
/// an object.
pub(super) fn parse_checked(text: &str, path: &Path, spec: &Spec) -> Result<Doc, CliError> {
    if !spec.comments {
        // serde_json is what Codex reads its file with, and as strict as
        // the JSON.parse Claude Code uses; its messages name line and column.
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            let hint = if text.contains("//") || text.contains("/*") {
                format!(
                    " (comments are not plain JSON, and {} reads this file as plain JSON: remove them)",
                    spec.display
                )
            } else {
                String::new()
            };
            return Err(bad_file(
                path,
                format!(
                    "invalid JSON at line {}, column {}: {e}{hint}",
                    e.line(),
                    e.column()
                ),
            ));
        }
    }
    let root = CstRootNode::parse(text, &parse_options(spec.comments)).map_err(|e| {
        bad_file(
            path,
            format!(
                "invalid JSON at line {}, column {}: {}",
                e.line_display(),
                e.column_display(),
                e.kind()
            ),
        )
    })?;
    let value = root.value();
    let Some(object) = value.as_ref().and_then(CstNode::as_object) else {
        return Err(bad_file(
            path,
            format!(
                "the file holds {}, expected a JSON object",
                kind_name(value.as_ref())
            ),
        ));
    };
    let hooks = match member(&object, "hooks") {
        None => None,
        Some(prop) => {
            let v = prop.value();
            match v.as_ref().and_then(CstNode::as_object) {
                Some(h) => Some(h),
                None => {
                    return Err(bad_file(
                        path,
                        format!(
                            "\"hooks\" (line {}) is {}, expected an object",
                            line_of(text, offset(&CstNode::Container(prop.into()))),
                            kind_name(v.as_ref())
                        ),
                    ));
                }
            }
        }
    };
    Ok(Doc {
        root,
        object,
        hooks,
    })
}

/// A hook configuration file as read from disk.
pub(super) struct ConfigFile {
    pub path: PathBuf,
    pub exists: bool,
    /// The text; `{}\n` stands in for an absent or blank file.
    pub text: String,
    /// What the agent reads from it (comments dropped).
    pub value: Option<Value>,
}

impl ConfigFile {
    pub fn load(path: &Path, spec: &Spec) -> Result<ConfigFile, CliError> {
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|e| {
                    bad_file(
                        path,
                        format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
                    )
                })?;
                ConfigFile::from_text(path, text, true, spec)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ConfigFile::from_text(path, String::new(), false, spec)
            }
            Err(e) => Err(CliError::new(
                "file_unreadable",
                format!("cannot read {}: {e}", path.display()),
            )),
        }
    }

    pub fn from_text(
        path: &Path,
        text: String,
        exists: bool,
        spec: &Spec,
    ) -> Result<ConfigFile, CliError> {
        let text = if text.trim().is_empty() {
            "{}\n".to_string()
        } else {
            text
        };
        let doc = parse_checked(&text, path, spec)?;
        Ok(ConfigFile {
            path: path.to_path_buf(),
            exists,
            value: doc.root.to_serde_value(),
            text,
        })
    }
}

// ---------------------------------------------------------------------------
// What is installed.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EventState {
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
pub(super) enum Overall {
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

pub(super) struct InstallReport {
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

fn is_ours(handler: &CstNode) -> bool {
    handler
        .as_object()
        .and_then(|h| member(&h, "command"))
        .and_then(|c| c.value())
        .and_then(|v| v.as_string_lit())
        .and_then(|s| s.decoded_value().ok())
        .is_some_and(|c| c.contains(MARKER))
}

/// The handlers of a matcher group (`{"matcher": …, "hooks": [ … ]}`).
fn group_handlers(group: &CstNode) -> Option<Vec<CstNode>> {
    let hooks = member(&group.as_object()?, "hooks")?.array_value()?;
    Some(hooks.elements())
}

/// The matcher groups under an event (none when it is not an array).
fn event_groups(prop: &CstObjectProp) -> Option<CstArray> {
    prop.array_value()
}

pub(super) fn inspect(
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

// ---------------------------------------------------------------------------
// Editing.

/// `text` without any of tend's entries (the user's bytes untouched).
pub(super) fn remove_ours(text: &str, path: &Path, spec: &Spec) -> Result<String, CliError> {
    let doc = parse_checked(text, path, spec)?;
    let Some(hooks) = &doc.hooks else {
        return Ok(text.to_string());
    };
    let events = hooks.properties();
    let mut drop_events = Vec::new();
    let mut drop_items: Vec<CstNode> = Vec::new();
    for ev in &events {
        let Some(groups) = event_groups(ev).map(|a| a.elements()) else {
            continue;
        };
        let mut drop_groups = Vec::new();
        let mut inner = Vec::new();
        for g in &groups {
            let Some(handlers) = group_handlers(g) else {
                continue;
            };
            let ours: Vec<CstNode> = handlers.iter().filter(|h| is_ours(h)).cloned().collect();
            if ours.is_empty() {
                continue;
            }
            if ours.len() == handlers.len() {
                drop_groups.push(g.clone());
            } else {
                inner.extend(ours);
            }
        }
        if !groups.is_empty() && drop_groups.len() == groups.len() {
            drop_events.push(ev.clone());
        } else {
            drop_items.extend(drop_groups);
            drop_items.extend(inner);
        }
    }
    for item in drop_items {
        item.remove();
    }
    if !drop_events.is_empty() {
        if drop_events.len() == events.len() {
            if let Some(p) = member(&doc.object, "hooks") {
                p.remove();
            }
        } else {
            for ev in drop_events {
                ev.remove();
            }
        }
    }
    Ok(doc.root.to_string())
}

/// A container that took tend's items as spliced text.
#[derive(Clone, PartialEq, Eq)]
enum Target {
    /// The root object (which had no `hooks`).
    Root,
    /// The groups of one event (or the `hooks` object, for a new event).
    Event(String),
}

/// A container written on one line (with at least one item), which the
/// library would spread over several: the text to splice in before its
/// closing bracket, in its own style (`,` or `, ` between items).
fn compact_insert(
    container: &CstContainerNode,
    items: &[(Option<&str>, &CstInputValue)],
) -> Option<(usize, String)> {
    let node = CstNode::Container(container.clone());
    let text = node.to_string();
    let elems = node.children_exclude_trivia_and_tokens();
    if text.contains('\n') || elems.is_empty() {
        return None;
    }
    let start = offset(&node);
    let sep = match elems.as_slice() {
        [a, b, ..] => {
            let from = offset(a) + a.to_string().len() - start;
            let to = offset(b) - start;
            text.get(from..to)
                .filter(|s| s.trim() == ",")
                .unwrap_or(",")
                .to_string()
        }
        _ => ",".to_string(),
    };
    let body: String = items
        .iter()
        .map(|(k, v)| match k {
            Some(k) => format!("{sep}{}:{}", json_str(k), compact(v)),
            None => format!("{sep}{}", compact(v)),
        })
        .collect();
    Some((start + text.len() - 1, body))
}

/// `text` with tend's groups appended under their events.
pub(super) fn insert_groups(
    text: &str,
    path: &Path,
    spec: &Spec,
    desired: &[Group],
) -> Result<String, CliError> {
    // First the containers written on one line, as text; then the rest
    // through the tree, on the spliced text.
    let (spliced, done) = splice_compact(text, path, spec, desired)?;
    if done.contains(&Target::Root) {
        return Ok(spliced);
    }
    let doc = parse_checked(&spliced, path, spec)?;
    let Some(hooks) = &doc.hooks else {
        doc.object.append("hooks", events_object(desired.iter()));
        return Ok(doc.root.to_string());
    };
    let mut new_events = Vec::new();
    for g in desired {
        let target = Target::Event(g.event.clone());
        match member(hooks, &g.event) {
            Some(p) => {
                if done.contains(&target) {
                    continue;
                }
                let Some(groups) = event_groups(&p) else {
                    return Err(not_an_array(&spliced, path, &p, &g.event));
                };
                groups.append(g.value.clone());
            }
            None => new_events.push(g),
        }
    }
    for g in new_events {
        hooks.append(&g.event, CstInputValue::Array(vec![g.value.clone()]));
    }
    Ok(doc.root.to_string())
}

fn events_object<'a>(groups: impl Iterator<Item = &'a Group>) -> CstInputValue {
    CstInputValue::Object(
        groups
            .map(|g| (g.event.clone(), CstInputValue::Array(vec![g.value.clone()])))
            .collect(),
    )
}

fn not_an_array(text: &str, path: &Path, p: &CstObjectProp, event: &str) -> CliError {
    let v = p.value();
    bad_file(
        path,
        format!(
            "\"hooks\".\"{event}\" (line {}) is {}, expected an array of matcher groups",
            line_of(text, offset(&CstNode::Container(p.clone().into()))),
            kind_name(v.as_ref())
        ),
    )
}

/// The insertions into containers written on one line, applied to `text`,
/// and which targets they served.
fn splice_compact(
    text: &str,
    path: &Path,
    spec: &Spec,
    desired: &[Group],
) -> Result<(String, Vec<Target>), CliError> {
    let doc = parse_checked(text, path, spec)?;
    let mut edits: Vec<(usize, String)> = Vec::new();
    let mut done = Vec::new();
    match &doc.hooks {
        None => {
            let events = events_object(desired.iter());
            if let Some(e) = compact_insert(
                &CstContainerNode::Object(doc.object.clone()),
                &[(Some("hooks"), &events)],
            ) {
                edits.push(e);
                done.push(Target::Root);
            }
        }
        Some(hooks) => {
            let mut new_events = Vec::new();
            for g in desired {
                match member(hooks, &g.event) {
                    Some(p) => {
                        let Some(groups) = event_groups(&p) else {
                            return Err(not_an_array(text, path, &p, &g.event));
                        };
                        if let Some(e) =
                            compact_insert(&CstContainerNode::Array(groups), &[(None, &g.value)])
                        {
                            edits.push(e);
                            done.push(Target::Event(g.event.clone()));
                        }
                    }
                    None => new_events.push((
                        g.event.as_str(),
                        CstInputValue::Array(vec![g.value.clone()]),
                    )),
                }
            }
            if !new_events.is_empty() {
                let items: Vec<(Option<&str>, &CstInputValue)> =
                    new_events.iter().map(|(e, v)| (Some(*e), v)).collect();
                if let Some(e) = compact_insert(&CstContainerNode::Object(hooks.clone()), &items) {
                    edits.push(e);
                    done.extend(new_events.iter().map(|(e, _)| Target::Event(e.to_string())));
                }
            }
        }
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (at, s) in edits {
        if out.is_char_boundary(at) {
            out.insert_str(at, &s);
        }
    }
    Ok((out, done))
}

#[cfg(test)]
mod tests {
    use super::super::spec::{desired_groups, spec};
    use super::super::Agent;
    use super::*;

    fn p() -> PathBuf {
        PathBuf::from("/x/settings.json")
    }

    fn install(text: &str, agent: Agent) -> String {
        let s = spec(agent);
        let desired = desired_groups(s, "/opt/tend");
        let cleaned = remove_ours(text, &p(), s).unwrap_or_else(|e| panic!("{}", e.message));
        insert_groups(&cleaned, &p(), s, &desired).unwrap_or_else(|e| panic!("{}", e.message))
    }

    fn uninstall(text: &str, agent: Agent) -> String {
        remove_ours(text, &p(), spec(agent)).unwrap_or_else(|e| panic!("{}", e.message))
    }

    #[test]
    fn round_trip_keeps_user_bytes() {
        let user = "{\n    \"model\": \"x\",\n    \"hooks\": {\n        \"SessionStart\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}\n        ]\n    }\n}\n";
        let installed = install(user, Agent::Claude);
        assert!(installed.contains(MARKER));
        assert!(serde_json::from_str::<Value>(&installed).is_ok());
        assert_eq!(uninstall(&installed, Agent::Claude), user);
    }

    #[test]
    fn compact_file_round_trips() {
        let user = r#"{"a":1,"b":[2]}"#;
        let installed = install(user, Agent::Codex);
        assert!(!installed.contains('\n'), "stays on one line: {installed}");
        assert!(
            serde_json::from_str::<Value>(&installed).is_ok(),
            "{installed}"
        );
        assert_eq!(uninstall(&installed, Agent::Codex), user);
    }

    #[test]
    fn compact_containers_keep_their_separator() {
        let user = "{\n  \"hooks\": {\"Stop\": [], \"SessionEnd\": [{\"hooks\": []}]}\n}\n";
        let installed = install(user, Agent::Claude);
        assert_eq!(
            installed,
            "{\n  \"hooks\": {\"Stop\": [], \"SessionEnd\": [{\"hooks\": []},{\"hooks\":[{\"type\":\"command\",\"command\":\"'/opt/tend' hooks run claude SessionEnd >/dev/null 2>&1 || true # tend-managed\",\"timeout\":5}]}], \"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"'/opt/tend' hooks run claude SessionStart >/dev/null 2>&1 || true # tend-managed\",\"timeout\":5}]}]}\n}\n"
        );
        assert_eq!(uninstall(&installed, Agent::Claude), user);
    }

    /// The layout the library gives tend's entries: the file's own indent
    /// unit, after the user's items, in the file's line endings.
    #[test]
    fn new_entries_follow_the_files_layout() {
        let user = "{\r\n    \"model\": \"x\"\r\n}\r\n";
        let installed = install(user, Agent::Claude);
        let want = "{\r\n    \"model\": \"x\",\r\n    \"hooks\": {\r\n        \"SessionStart\": [\r\n            {\r\n                \"hooks\": [\r\n                    {\r\n                        \"type\": \"command\",\r\n                        \"command\": \"'/opt/tend' hooks run claude SessionStart >/dev/null 2>&1 || true # tend-managed\",\r\n                        \"timeout\": 5\r\n                    }\r\n                ]\r\n            }\r\n        ],\r\n        \"SessionEnd\": [\r\n            {\r\n                \"hooks\": [\r\n                    {\r\n                        \"type\": \"command\",\r\n                        \"command\": \"'/opt/tend' hooks run claude SessionEnd >/dev/null 2>&1 || true # tend-managed\",\r\n                        \"timeout\": 5\r\n                    }\r\n                ]\r\n            }\r\n        ]\r\n    }\r\n}\r\n";
        assert_eq!(installed, want);
        assert_eq!(uninstall(&installed, Agent::Claude), user);
    }

    /// Gemini CLI strips comments from its settings, so tend keeps them;
    /// the other agents read plain JSON and a comment is refused.
    #[test]
    fn comments_are_kept_where_the_format_has_them() {
        let user = "{\n  // my theme\n  \"theme\": \"GitHub\", /* dark */\n  \"hooks\": {\n    // mine\n    \"SessionEnd\": [\n      {\"hooks\": [{\"name\": \"n\", \"type\": \"command\", \"command\": \"x\"}]} // keep\n    ]\n  }\n}\n";
        let installed = install(user, Agent::Gemini);
        assert!(installed.contains("// my theme") && installed.contains("// keep"));
        assert_eq!(uninstall(&installed, Agent::Gemini), user);
        let e = match remove_ours(user, &p(), spec(Agent::Claude)) {
            Err(e) => e.message,
            Ok(t) => panic!("accepted a comment for Claude Code: {t}"),
        };
        assert!(e.contains("line 2") && e.contains("comments"), "{e}");
    }

    #[test]
    fn wrong_shapes_name_the_line() {
        let s = spec(Agent::Claude);
        let err = |t: &str| match parse_checked(t, &p(), s) {
            Err(e) => e.message,
            Ok(_) => panic!("accepted {t}"),
        };
        assert!(err("[1]").contains("holds an array, expected a JSON object"));
        let e = err("{\n  \"a\": 1,\n  \"hooks\": 3\n}");
        assert!(
            e.contains("\"hooks\" (line 3) is a number, boolean or null"),
            "{e}"
        );
        let d = desired_groups(s, "/t");
        let e = match insert_groups("{\"hooks\": {\n\"SessionEnd\": {}}}", &p(), s, &d) {
            Err(e) => e.message,
            Ok(t) => panic!("accepted {t}"),
        };
        assert!(
            e.contains("\"hooks\".\"SessionEnd\" (line 2) is an object"),
            "{e}"
        );
    }

    /// A user's settings (their own keys and hooks, some on tend's events)
    /// in one of the layouts people use.
    fn user_file() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let events = [
            "SessionStart",
            "Stop",
            "PreToolUse",
            "SessionEnd",
            "Interrupt",
        ];
        (
            proptest::sample::subsequence(events.to_vec(), 0..=events.len()),
            any::<bool>(),
            0usize..4,
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(evs, model, layout, crlf, newline_at_end)| {
                let mut v = serde_json::json!({});
                if model {
                    v["model"] = "opus".into();
                }
                if !evs.is_empty() {
                    let mut hooks = serde_json::Map::new();
                    for e in evs {
                        let group = serde_json::json!([{"hooks": [
                            {"type": "command", "command": format!("echo {e}")}]}]);
                        hooks.insert(e.to_string(), group);
                    }
                    v["hooks"] = Value::Object(hooks);
                }
                let text = match layout {
                    0 => v.to_string(),
                    n => {
                        let unit: &[u8] = [b"  ".as_slice(), b"    ", b"\t"][n - 1];
                        let mut out = Vec::new();
                        let f = serde_json::ser::PrettyFormatter::with_indent(unit);
                        let mut ser = serde_json::Serializer::with_formatter(&mut out, f);
                        serde::Serialize::serialize(&v, &mut ser).unwrap_or_default();
                        String::from_utf8(out).unwrap_or_default()
                    }
                };
                let text = if newline_at_end { text + "\n" } else { text };
                if crlf {
                    text.replace('\n', "\r\n")
                } else {
                    text
                }
            })
    }

    proptest::proptest! {
        #[test]
        fn install_then_uninstall_gives_the_file_back(user in user_file()) {
            for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
                let installed = install(&user, agent);
                let v: Value = serde_json::from_str(&installed)
                    .unwrap_or_else(|e| panic!("{e}: {installed}"));
                let n = spec(agent).events.len();
                proptest::prop_assert_eq!(installed.matches(MARKER).count(), n);
                let hooks = v["hooks"].as_object().map_or(0, |h| h.len());
                proptest::prop_assert!(hooks >= n, "{}", installed);
                // The file's line endings, throughout.
                let crlf = installed.matches("\r\n").count();
                if user.contains("\r\n") {
                    proptest::prop_assert_eq!(crlf, installed.matches('\n').count());
                } else {
                    proptest::prop_assert_eq!(crlf, 0);
                }
                proptest::prop_assert_eq!(uninstall(&installed, agent), user.clone());
            }
        }
    }
}
