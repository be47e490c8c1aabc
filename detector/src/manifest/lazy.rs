//! A screen rule's regex, compiled the first time a screen is matched
//! against it.
//!
//! A daemon holds every bundled manifest (identity needs them all), but
//! a server runs a few kinds of agent: compiled up front, the 200
//! screen-rule patterns of the bundled manifests were compiled in every
//! daemon, most for agents no pane ran (compiled when first used, a
//! daemon watching four kinds of agent holds 3.3–3.5 MB less, measured
//! in `docs/PERFORMANCE.md`; its four agents' 54 patterns take 1.9 MB). A pattern's syntax
//! is still checked when its manifest is read; a user's manifest is
//! compiled whole then too (`Registry::load`), so a pattern over the
//! size limit is refused with the rest of the file's errors, and the
//! bundled ones are compiled by a test.

use std::fmt;
use std::sync::{Arc, OnceLock};

use regex::Regex;

/// Largest compiled program a manifest's regex may make.
const SIZE_LIMIT: usize = 1 << 20;

/// A regex compiled on first use, shared by every clone (the daemon
/// clones a manifest for the panes running its agent).
#[derive(Clone)]
pub struct LazyRegex(Arc<Inner>);

struct Inner {
    /// The pattern as compiled (its word boundaries made ASCII).
    pattern: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    /// `pattern`, its syntax checked now and compiled on first use.
    pub(crate) fn new(pattern: String) -> Result<Self, String> {
        regex_syntax::Parser::new()
            .parse(&pattern)
            .map_err(|e| e.to_string())?;
        Ok(LazyRegex(Arc::new(Inner {
            pattern,
            compiled: OnceLock::new(),
        })))
    }

    /// Compiles it now (if not yet): the error a pattern over the size
    /// limit makes.
    pub(crate) fn compile(&self) -> Result<&Regex, String> {
        if let Some(r) = self.0.compiled.get() {
            return Ok(r);
        }
        let r = build(&self.0.pattern)?;
        Ok(self.0.compiled.get_or_init(|| r))
    }

    /// Whether `text` matches. A pattern that cannot be compiled (only a
    /// bundled one could get here unchecked, and a test compiles every
    /// one of those) matches nothing.
    pub fn is_match(&self, text: &str) -> bool {
        let r = self.0.compiled.get_or_init(|| {
            build(&self.0.pattern).unwrap_or_else(|_| build(NOTHING).expect("matches nothing"))
        });
        r.is_match(text)
    }

    /// The pattern.
    pub fn as_str(&self) -> &str {
        &self.0.pattern
    }

    /// Whether it has been compiled.
    pub fn compiled(&self) -> bool {
        self.0.compiled.get().is_some()
    }
}

/// A pattern no text matches.
const NOTHING: &str = r"[^\s\S]";

fn build(pattern: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| e.to_string())
}

impl fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.0.pattern).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_on_first_match_and_shared_by_clones() {
        let a = LazyRegex::new(r"(?i)\bdo you want\b".into()).expect("valid");
        let b = a.clone();
        assert!(!a.compiled() && !b.compiled());
        assert!(b.is_match("Do you want to proceed?"));
        assert!(a.compiled());
        assert!(!a.is_match("no"));
    }

    #[test]
    fn bad_syntax_is_refused_at_once() {
        let e = LazyRegex::new("(unclosed".into()).expect_err("invalid");
        assert!(e.contains("unclosed"), "{e}");
    }

    #[test]
    fn over_the_size_limit_is_an_error_when_compiled_and_matches_nothing() {
        let huge = LazyRegex::new(r"\w{1000}\w{1000}\w{1000}".into()).expect("valid syntax");
        assert!(huge.compile().is_err());
        assert!(!huge.is_match(&"a".repeat(4000)));
    }
}
