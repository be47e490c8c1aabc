//! Rust source as code only, and as tokens.

/// The source with every comment and the inside of every string and
/// character literal blanked (spaces; newlines kept, so line numbers
/// hold). Lifetimes and labels (`'a`) are code and stay.
pub fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let end = match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => line_comment_end(&c, i),
            '/' if c.get(i + 1) == Some(&'*') => block_comment_end(&c, i),
            '"' => string_end(&c, i),
            '\'' => char_end(&c, i),
            'r' | 'b' | 'c' if starts_token(&c, i) => raw_string_end(&c, i),
            _ => None,
        };
        match end {
            Some(end) => {
                out.extend(c[i..end].iter().map(|&ch| blank(ch)));
                i = end;
            }
            None => {
                out.push(c[i]);
                i += 1;
            }
        }
    }
    out
}

fn blank(ch: char) -> char {
    if ch == '\n' {
        '\n'
    } else {
        ' '
    }
}

fn starts_token(c: &[char], i: usize) -> bool {
    i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

fn line_comment_end(c: &[char], i: usize) -> Option<usize> {
    Some((i..c.len()).find(|&j| c[j] == '\n').unwrap_or(c.len()))
}

/// Block comments nest.
fn block_comment_end(c: &[char], i: usize) -> Option<usize> {
    let (mut depth, mut j) = (0usize, i);
    while j < c.len() {
        if c[j] == '/' && c.get(j + 1) == Some(&'*') {
            depth += 1;
            j += 2;
        } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return Some(j);
            }
        } else {
            j += 1;
        }
    }
    Some(c.len())
}

fn string_end(c: &[char], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < c.len() {
        match c[j] {
            '\\' => j += 2,
            '"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    Some(c.len())
}

/// `'x'`, `'\n'`, `'\u{1F600}'`; `None` for a lifetime or a label.
fn char_end(c: &[char], i: usize) -> Option<usize> {
    match c.get(i + 1) {
        Some('\\') => (i + 3..c.len()).find(|&j| c[j] == '\'').map(|j| j + 1),
        Some(_) if c.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

/// `r"…"`, `r#"…"#`, `br"…"`, `cr#"…"#`.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if c[j] != 'r' {
        j += 1;
        if c.get(j) != Some(&'r') {
            return None;
        }
    }
    j += 1;
    let hashes = c[j..].iter().take_while(|&&ch| ch == '#').count();
    j += hashes;
    if c.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < c.len() {
        if c[j] == '"'
            && c[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}

/// One token of code: an identifier (keywords included), `::`, or any
/// other single character that is not white space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// Its text.
    pub text: String,
    /// Its line, from 1.
    pub line: usize,
}

impl Token {
    /// An identifier or keyword.
    pub fn is_ident(&self) -> bool {
        self.text
            .chars()
            .next()
            .is_some_and(|ch| ch.is_alphabetic() || ch == '_')
    }
}

/// The tokens of code (the output of [`code_only`]). Numbers count as
/// identifiers' kin only so far as they start with a letter: `1u8` is `1`
/// then `u8`, which no rule here reads.
pub fn tokens(code: &str) -> Vec<Token> {
    let c: Vec<char> = code.chars().collect();
    let (mut out, mut line, mut i) = (Vec::new(), 1, 0);
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Token {
                text: c[start..i].iter().collect(),
                line,
            });
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(Token {
                text: "::".into(),
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                text: ch.to_string(),
                line,
            });
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_literals_are_blanked_and_lines_kept() {
        let src = "use crate::a; // crate::b\n/* crate::c /* nested */ crate::d */ let s = \"crate::e\\\"\";\nlet r = r#\"crate::f\"#; let ch = '\"'; fn f<'a>(x: &'a str) {}\n";
        let code = code_only(src);
        assert_eq!(code.lines().count(), src.lines().count());
        assert!(code.contains("use crate::a;"));
        for hidden in ["crate::b", "crate::c", "crate::d", "crate::e", "crate::f"] {
            assert!(!code.contains(hidden), "{hidden} in {code}");
        }
        assert!(code.contains("fn f<'a>(x: &'a str) {}"), "{code}");
    }

    #[test]
    fn tokens_carry_their_lines() {
        let t = tokens("use crate::x;\nfn y() {}");
        let texts: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            ["use", "crate", "::", "x", ";", "fn", "y", "(", ")", "{", "}"]
        );
        assert_eq!((t[0].line, t[5].line), (1, 2));
        assert!(t[1].is_ident() && !t[2].is_ident());
    }
}
