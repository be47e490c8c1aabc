//! Command-line words: splitting a shell command string into commands and
//! words, and the name normalisation (basename, nix `-wrapped`, versioned
//! interpreters, script extensions) every later step compares with.
//!
//! Separate because it is plain string handling with no notion of agents or
//! wrappers; unwrapping and matching both build on it.

pub(super) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Strips decorations that do not change which program runs: nix's
/// `.foo-wrapped` (and `-wrapped_` variants), a login shell's leading `-`,
/// and versioned interpreter names (`python3.11` → `python`).
pub(super) fn normalise(name: &str) -> &str {
    let name = name.strip_prefix('-').unwrap_or(name);
    let name = name.strip_suffix("-wrapped_").unwrap_or(name);
    let name = name.strip_suffix("-wrapped").unwrap_or(name);
    let name = name.strip_prefix('.').unwrap_or(name);
    for interp in ["python", "pypy"] {
        if let Some(version) = name.strip_prefix(interp) {
            if version.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return interp;
            }
        }
    }
    name
}

/// The basename without a script or executable extension.
pub(super) fn stem(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((b, ext))
            if !b.is_empty()
                && matches!(
                    ext,
                    "exe" | "js" | "mjs" | "cjs" | "ts" | "mts" | "py" | "sh" | "bin" | "AppImage"
                ) =>
        {
            b
        }
        _ => name,
    }
}

/// `NAME=VALUE` (an environment assignment before a program).
pub(super) fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Splits a shell command string into simple commands (words), roughly as
/// `sh` would: quotes and backslashes are honoured, `;`, `&`, `|`, newlines
/// and `&&`/`||` separate commands. Expansions are left as text: the point
/// is to find the program names, not to run anything.
pub(super) fn split_commands(s: &str) -> Vec<Vec<String>> {
    let mut cmds = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, cur: &mut Vec<String>| {
        if *in_word {
            cur.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    if n != '\n' {
                        word.push(n);
                    }
                }
            }
            ';' | '&' | '|' | '\n' => {
                end_word(&mut word, &mut in_word, &mut cur);
                if !cur.is_empty() {
                    cmds.push(std::mem::take(&mut cur));
                }
            }
            // `(`/`)` always delimit; `{`/`}` only where a word would
            // start: `(cd x && y)`, `{ a; }`.
            '(' | ')' => {
                end_word(&mut word, &mut in_word, &mut cur);
                if !cur.is_empty() {
                    cmds.push(std::mem::take(&mut cur));
                }
            }
            '{' | '}' if !in_word => {
                if !cur.is_empty() {
                    cmds.push(std::mem::take(&mut cur));
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut cur),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut cur);
    if !cur.is_empty() {
        cmds.push(cur);
    }
    cmds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_string_splitting() {
        assert_eq!(
            split_commands("a 'b c' \"d\\\"e\" f\\ g; h && (i j) | k"),
            vec![
                vec!["a".to_string(), "b c".into(), "d\"e".into(), "f g".into()],
                vec!["h".into()],
                vec!["i".into(), "j".into()],
                vec!["k".into()],
            ]
        );
        assert!(split_commands("").is_empty());
    }
}
