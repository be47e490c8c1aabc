//! What a crate's sources name of another crate: the first name after
//! `other::` in each path (`tend_daemon::run(..)` names `run`), and each
//! name of a group (`use tend_daemon::{run, Options}` names both). A
//! rename (`use tend_daemon as d;`) names `self`, which no allowed list
//! holds: a path through an alias cannot be followed.

use crate::lex::{code_only, tokens, Token};

/// One name taken from the other crate, and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The name after `other::` (`self` for the crate itself).
    pub name: String,
    /// Its line, from 1.
    pub line: usize,
}

/// Every name `src` takes from crate `other` (as Rust spells it:
/// `tend_daemon`).
pub fn names_from(src: &str, other: &str) -> Vec<Named> {
    let toks = tokens(&code_only(src));
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.text != other || i > 0 && toks[i - 1].text == "::" {
            continue;
        }
        match (toks.get(i + 1), toks.get(i + 2)) {
            (Some(sep), Some(next)) if sep.text == "::" && next.text == "{" => {
                out.extend(group(&toks[i + 3..]));
            }
            (Some(sep), Some(next)) if sep.text == "::" && next.is_ident() => out.push(Named {
                name: next.text.clone(),
                line: next.line,
            }),
            _ => out.push(Named {
                name: "self".into(),
                line: t.line,
            }),
        }
    }
    out
}

/// The first name of each item of a `{ .. }` group, from just after its
/// `{` to the matching `}`.
fn group(toks: &[Token]) -> Vec<Named> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for t in toks {
        match t.text.as_str() {
            "{" => depth += 1,
            "}" if depth == 0 => break,
            "}" => depth -= 1,
            "," if depth == 0 => {
                item_start = true;
                continue;
            }
            _ if item_start && depth == 0 && t.is_ident() => out.push(Named {
                name: t.text.clone(),
                line: t.line,
            }),
            _ => {}
        }
        item_start = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<String> {
        names_from(src, "tend_daemon")
            .into_iter()
            .map(|n| n.name)
            .collect()
    }

    #[test]
    fn paths_groups_and_renames_are_read() {
        assert_eq!(
            names("fn f() { tend_daemon::run(o); let x: tend_daemon::Options; }"),
            ["run", "Options"]
        );
        assert_eq!(
            names("use tend_daemon::{keys::plan, Options, tap::{a, b}};"),
            ["keys", "Options", "tap"]
        );
        assert_eq!(names("use tend_daemon as d;"), ["self"]);
        assert_eq!(
            names("// tend_daemon::worker\nlet s = \"tend_daemon::x\"; a::tend_daemon::y();"),
            Vec::<String>::new(),
            "comments, literals and a path's inner segment are not names"
        );
    }

    #[test]
    fn lines_are_kept() {
        let n = names_from(
            "\n\nuse tend_daemon::{\n  run,\n  Options };",
            "tend_daemon",
        );
        assert_eq!(
            n.iter().map(|n| n.line).collect::<Vec<_>>(),
            [4, 5],
            "{n:?}"
        );
    }
}
