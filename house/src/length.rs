//! How long each function is.

use crate::lex::{code_only, tokens};

/// The longest a function may be, in lines, from its `fn` to its closing
/// brace (`CONTRIBUTING.md`: a function longer than that is a sequence of
/// steps that wants names).
pub const LIMIT: usize = 120;

/// One function: its name, the line of its `fn`, its length in lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// The line of its `fn`, from 1.
    pub line: usize,
    /// From the `fn` line to the closing brace's, both counted.
    pub lines: usize,
}

/// Every function with a body in `src`, nested ones too.
pub fn functions(src: &str) -> Vec<Function> {
    let toks = tokens(&code_only(src));
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.text != "fn" || !toks.get(i + 1).is_some_and(|n| n.is_ident()) {
            continue;
        }
        let Some(open) = body_start(&toks, i + 2) else {
            continue;
        };
        let mut depth = 0;
        let close = toks[open..].iter().position(|t| {
            match t.text.as_str() {
                "{" => depth += 1,
                "}" => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        if let Some(close) = close {
            out.push(Function {
                name: toks[i + 1].text.clone(),
                line: t.line,
                lines: toks[open + close].line - t.line + 1,
            });
        }
    }
    out
}

/// The `{` that opens a function's body, after its signature; `None` for
/// a declaration without a body (`fn f();` in a trait).
fn body_start(toks: &[crate::lex::Token], from: usize) -> Option<usize> {
    let mut parens = 0i32;
    for (j, t) in toks.iter().enumerate().skip(from) {
        match t.text.as_str() {
            "(" | "[" => parens += 1,
            ")" | "]" => parens -= 1,
            "{" if parens == 0 => return Some(j),
            ";" if parens == 0 => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_runs_from_its_fn_to_its_closing_brace() {
        let src = "trait T { fn decl(&self); }\n\
                   fn a<F: Fn(u8) -> u8>(f: F) -> [u8; 2]\nwhere F: Copy\n{\n    let s = \"}\";\n    // }\n    { f(1); }\n    [0; 2]\n}\nfn b() {}\n";
        let f = functions(src);
        let got: Vec<(&str, usize, usize)> = f
            .iter()
            .map(|f| (f.name.as_str(), f.line, f.lines))
            .collect();
        assert_eq!(got, [("a", 2, 8), ("b", 10, 1)]);
    }
}
