//! The bundled list and the [`Registry`]: the manifests compiled into tend
//! (one `detector/agents/<id>.toml` each) and user files over them.
//!
//! Separate because adding an agent means adding its line here, and loading
//! the set has rules of its own (a user file with the same `id` replaces a
//! bundled one, a bad file is reported and skipped).

use super::*;

/// The manifests compiled into tend, as `(file name, TOML text)`.
pub const BUNDLED: &[(&str, &str)] = &[
    ("claude.toml", include_str!("../../agents/claude.toml")),
    ("codex.toml", include_str!("../../agents/codex.toml")),
    ("gemini.toml", include_str!("../../agents/gemini.toml")),
    ("aider.toml", include_str!("../../agents/aider.toml")),
    ("opencode.toml", include_str!("../../agents/opencode.toml")),
    ("pi.toml", include_str!("../../agents/pi.toml")),
    ("kilo.toml", include_str!("../../agents/kilo.toml")),
    ("copilot.toml", include_str!("../../agents/copilot.toml")),
    ("cursor.toml", include_str!("../../agents/cursor.toml")),
    ("amp.toml", include_str!("../../agents/amp.toml")),
    ("goose.toml", include_str!("../../agents/goose.toml")),
    ("crush.toml", include_str!("../../agents/crush.toml")),
    ("qwen.toml", include_str!("../../agents/qwen.toml")),
    ("kimi.toml", include_str!("../../agents/kimi.toml")),
    ("droid.toml", include_str!("../../agents/droid.toml")),
    ("kiro.toml", include_str!("../../agents/kiro.toml")),
    ("cline.toml", include_str!("../../agents/cline.toml")),
    ("grok.toml", include_str!("../../agents/grok.toml")),
    ("continue.toml", include_str!("../../agents/continue.toml")),
    ("vibe.toml", include_str!("../../agents/vibe.toml")),
];

/// How a bundled manifest's file is named (`bundled:claude.toml`).
const BUNDLED_PREFIX: &str = "bundled:";

/// All known agents: bundled manifests, then user files over them.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    agents: BTreeMap<String, Manifest>,
}

impl Registry {
    /// The bundled manifests alone.
    pub fn bundled() -> Self {
        let (registry, errors) = Self::load(&[]);
        debug_assert!(errors.is_empty(), "bundled manifests must load: {errors:?}");
        registry
    }

    /// Bundled manifests, then `user` files `(path, text)` over them. Invalid
    /// user files are reported and skipped (never half-used); the bundled
    /// manifest of the same id stays in force.
    pub fn load(user: &[(String, String)]) -> (Self, Vec<ManifestError>) {
        let mut agents = BTreeMap::new();
        let mut errors = Vec::new();
        for (file, text) in BUNDLED {
            match Manifest::parse(&format!("{BUNDLED_PREFIX}{file}"), text) {
                Ok(m) => {
                    agents.insert(m.id.clone(), m);
                }
                Err(e) => errors.push(e),
            }
        }
        for (file, text) in user {
            // A user's file is compiled whole now, so that a pattern too big
            // to compile refuses it with the rest of its errors rather than
            // a rule never matching later; the bundled ones wait for their
            // first use (`lazy.rs`), and a test compiles every one of them.
            match Manifest::parse(file, text).and_then(|m| m.compile().map(|()| m)) {
                Ok(m) => {
                    agents.insert(m.id.clone(), m);
                }
                Err(e) => errors.push(e),
            }
        }
        (Registry { agents }, errors)
    }

    /// The manifest for `id`.
    pub fn get(&self, id: &str) -> Option<&Manifest> {
        self.agents.get(id)
    }

    /// Every manifest, by id.
    pub fn iter(&self) -> impl Iterator<Item = &Manifest> {
        self.agents.values()
    }

    /// Agent ids.
    pub fn ids(&self) -> Vec<&str> {
        self.agents.keys().map(String::as_str).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::testutil::*;

    /// A bundled manifest's regexes are compiled when first used, so this
    /// is where one over the size limit is found.
    #[test]
    fn every_bundled_screen_regex_compiles() {
        let mut count = 0;
        for m in Registry::bundled().iter() {
            if let Err(e) = m.compile() {
                panic!("{e}");
            }
            m.rules
                .iter()
                .for_each(|rule| rule.matcher.each_regex(&mut |_| count += 1));
        }
        assert!(count > 100, "only {count} regexes found");
    }

    /// Reading the manifests compiles none of their screen rules: a
    /// daemon compiles those of the agents its panes run.
    #[test]
    fn bundled_screen_regexes_wait_for_their_first_use() {
        let registry = Registry::bundled();
        for m in registry.iter() {
            for rule in &m.rules {
                rule.matcher
                    .each_regex(&mut |re| assert!(!re.compiled(), "{} compiled", rule.id));
            }
        }
    }

    #[test]
    fn bundled_manifests_all_load() {
        let (reg, errors) = Registry::load(&[]);
        assert!(errors.is_empty(), "{errors:?}");
        for id in [
            "claude", "codex", "gemini", "aider", "opencode", "pi", "kilo", "copilot", "cursor",
            "amp", "goose", "crush", "qwen", "kimi", "droid", "kiro", "cline", "grok", "continue",
            "vibe",
        ] {
            assert!(reg.get(id).is_some(), "missing bundled manifest {id}");
        }
    }

    #[test]
    fn user_file_overrides_and_bad_file_is_reported() {
        let user = vec![
            (
                "/u/claude.toml".to_owned(),
                GOOD.replace("\"demo\"", "\"claude\""),
            ),
            ("/u/broken.toml".to_owned(), "id = 3".to_owned()),
        ];
        let (reg, errors) = Registry::load(&user);
        assert_eq!(reg.get("claude").unwrap().source, "/u/claude.toml");
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].file, "/u/broken.toml");
    }

    /// A user's manifest is compiled whole when read: a pattern too big to
    /// compile refuses the file then, with the rule that holds it, and the
    /// bundled manifest of the same id stays in force.
    #[test]
    fn a_user_regex_too_big_to_compile_refuses_the_file() {
        let big = GOOD.replace("\"demo\"", "\"claude\"").replace(
            "{ contains = \"esc to interrupt\" }",
            r"{ regex = '\w{1000}\w{1000}\w{1000}' }",
        );
        let (reg, errors) = Registry::load(&[("/u/claude.toml".to_owned(), big)]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].rule.as_deref(), Some("spin"));
        assert!(errors[0].problem.contains("size limit"), "{}", errors[0]);
        assert_eq!(reg.get("claude").unwrap().source, "bundled:claude.toml");
    }
}
