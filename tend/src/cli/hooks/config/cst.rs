//! Small questions asked of a `jsonc-parser` syntax tree, shared by
//! reading, inspecting and editing: a value as JSON or as one-line text,
//! where a node starts, which line that is, an object's member.

use jsonc_parser::cst::{CstInputValue, CstNode, CstObject, CstObjectProp};
use serde_json::Value;

/// `v` as a JSON value, to compare with what the file holds.
pub(super) fn to_value(v: &CstInputValue) -> Value {
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

pub(super) fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// `v` on one line, keys in their order, for a container written on one line.
pub(super) fn compact(v: &CstInputValue) -> String {
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

/// The byte offset where `node` starts in the document's current text.
pub(super) fn offset(node: &CstNode) -> usize {
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

pub(super) fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(pos)
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

pub(super) fn kind_name(node: Option<&CstNode>) -> &'static str {
    match node {
        Some(n) if n.as_object().is_some() => "an object",
        Some(n) if n.as_array().is_some() => "an array",
        Some(n) if n.as_string_lit().is_some() => "a string",
        _ => "a number, boolean or null",
    }
}

/// The member `key` of `obj` (the last one, as the agents' parsers read a
/// repeated key).
pub(super) fn member(obj: &CstObject, key: &str) -> Option<CstObjectProp> {
    obj.properties()
        .into_iter()
        .rev()
        .find(|p| p.decoded_name().as_deref() == Some(key))
}
