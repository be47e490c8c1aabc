//! Editing a configuration: taking tend's entries out, and appending its
//! matcher groups under their events, so that an install followed by the
//! matching uninstall gives back the user's bytes. Containers written on one
//! line get tend's items spliced in as text in their own style.

use std::path::Path;

use jsonc_parser::cst::{CstContainerNode, CstInputValue, CstNode, CstObjectProp};

use super::cst::{compact, json_str, kind_name, line_of, member, offset};
use super::installed::{event_groups, group_handlers, is_ours};
use super::read::{bad_file, parse_checked};
use crate::cli::hooks::spec::{Group, Spec};
use crate::error::CliError;

/// `text` without any of tend's entries (the user's bytes untouched).
pub(crate) fn remove_ours(text: &str, path: &Path, spec: &Spec) -> Result<String, CliError> {
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
pub(crate) fn insert_groups(
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
