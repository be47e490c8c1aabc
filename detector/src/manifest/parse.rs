//! Parsing and validation: the TOML shape of a manifest file, compiled
//! into a [`Manifest`] with every regex, region, matcher and action key
//! checked, and every error naming the file, the rule and the problem.
//!
//! Separate because the file format and its checks are most of the code,
//! while the rest of the detector only uses the compiled model.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawActions {
    answers: Vec<String>,
    approve: RawActionKeys,
    deny: RawActionKeys,
    #[serde(default)]
    settle_ms: u64,
    cite: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrompt {
    #[serde(default)]
    enter_after_ms: u64,
    cite: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawActionKeys {
    keys: Option<Vec<String>>,
    option: Option<String>,
    #[serde(default)]
    then: Vec<String>,
}

/// A tmux key name as `send-keys` takes it: `Enter`, `Escape`, `y`, `1`,
/// `C-c`. Text, spaces and control characters are not keys.
fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars().count() <= 16
        && !k.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn compile_action_keys(raw: &RawActionKeys, what: &str) -> Result<ActionKeys, String> {
    for k in raw.keys.iter().flatten().chain(&raw.then) {
        if !valid_key(k) {
            return Err(format!(
                "actions.{what}: `{k}` is not a tmux key name (like Enter, Escape, y, 1, C-c)"
            ));
        }
    }
    match (&raw.keys, &raw.option) {
        (Some(keys), None) if !keys.is_empty() && raw.then.is_empty() => {
            Ok(ActionKeys::Keys(keys.clone()))
        }
        (Some(_), None) if !raw.then.is_empty() => Err(format!(
            "actions.{what}: `then` goes with `option`; list every key in `keys`"
        )),
        (None, Some(src)) => {
            let pattern = compile_regex(src).map_err(|e| format!("actions.{what}.option: {e}"))?;
            if pattern.captures_len() < 2 {
                return Err(format!(
                    "actions.{what}.option: `{src}` needs a capture group around the key, e.g. `(\\d+)\\. No`"
                ));
            }
            Ok(ActionKeys::Option {
                pattern,
                then: raw.then.clone(),
            })
        }
        _ => Err(format!(
            "actions.{what} needs exactly one of `keys = [\"1\"]` (at least one key) or \
             `option = 'regex with (the key) in a group'`"
        )),
    }
}

const DEFAULT_RULE_REGEX: &str = r"^\s*[─━═]{8,}\s*$";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    id: String,
    name: String,
    short_name: Option<String>,
    #[serde(default)]
    verified: bool,
    #[serde(default)]
    verified_versions: Vec<String>,
    #[serde(default)]
    reports_own_state: bool,
    unasked_reports_app: Option<String>,
    #[serde(default)]
    unasked_working_settle_ms: u64,
    session_files: Option<String>,
    #[serde(default)]
    identity: RawIdentity,
    #[serde(default)]
    screen: RawScreen,
    #[serde(default, rename = "rule")]
    rules: Vec<RawRule>,
    actions: Option<RawActions>,
    prompt: Option<RawPrompt>,
    resume: Option<resume::RawResume>,
}

/// `[identity]`: the process keys, and the screen markers
/// (`[[identity.screen]]`).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawIdentity {
    #[serde(default)]
    executables: Vec<String>,
    #[serde(default)]
    packages: Vec<String>,
    #[serde(default)]
    comm: Vec<String>,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    screen: Vec<RawMarker>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMarker {
    id: String,
    region: String,
    alt_screen: Option<bool>,
    #[serde(rename = "match")]
    matcher: RawMatcher,
    cite: Option<String>,
    example: Option<String>,
    example_title: Option<String>,
}

/// Compiles the `[[identity.screen]]` markers of agent `agent`; errors
/// name the marker (`identity.screen `prompt`: …`).
fn compile_markers(agent: &str, raw: &[RawMarker]) -> Result<Vec<ScreenMarker>, String> {
    let mut out = Vec::with_capacity(raw.len());
    let mut seen = std::collections::HashSet::new();
    for m in raw {
        let name = format!("screen:{}", m.id);
        let fail = |p: String| format!("identity.screen `{}`: {p}", m.id);
        if !valid_id(&m.id) {
            return Err(fail(
                "marker id must be 1–64 characters of a-z, 0-9, `-`, `_`, `.`".into(),
            ));
        }
        if !seen.insert(m.id.clone()) {
            return Err(fail("duplicate marker id".into()));
        }
        let region = Region::parse(&m.region).map_err(fail)?;
        // One word on a screen is not an agent: a marker names at least
        // two parts of the live UI, all of which must be there.
        let parts = m.matcher.all.as_ref().map_or(0, Vec::len);
        if parts < 2 || m.matcher.region.is_some() {
            return Err(fail(
                "a screen marker needs `match.all` with at least two parts of the agent's live UI \
                 (an input box and its footer, a dialog and the title): one word on a screen is not an agent"
                    .into(),
            ));
        }
        let matcher = compile_matcher(&m.matcher, 0).map_err(fail)?;
        let cite = match &m.cite {
            Some(c) if !c.trim().is_empty() => c.clone(),
            _ => {
                return Err(fail(
                    "`cite` is required: name the recordings that show the agent drawing this"
                        .into(),
                ))
            }
        };
        out.push(ScreenMarker {
            id: format!("{agent}/{name}"),
            region,
            alt_screen: m.alt_screen,
            matcher,
            cite,
            example: m.example.clone(),
            example_title: m.example_title.clone(),
        });
    }
    Ok(out)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawScreen {
    horizontal_rule: Option<String>,
    #[serde(default)]
    single_line_box: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    state: String,
    reason: Option<String>,
    #[serde(default)]
    priority: i32,
    confidence: Option<f32>,
    region: String,
    alt_screen: Option<bool>,
    #[serde(rename = "match")]
    matcher: RawMatcher,
    cite: Option<String>,
    example: Option<String>,
    reset: Option<RawReset>,
    go_on: Option<RawGoOn>,
}

/// A limit rule's `reset = { region = "…", regex = '…(the words)…' }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReset {
    region: Option<String>,
    regex: String,
}

/// A limit rule's `go_on = { keys = ["1"] }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGoOn {
    keys: Vec<String>,
}

/// A limit rule's reset words and go-on keys, checked: both only on a
/// `limit` rule, the regex with a group around the words, real key names.
fn compile_limit(
    r: &RawRule,
    reason: Option<Reason>,
    region: Region,
) -> Result<(Option<ResetWords>, Option<Vec<String>>), String> {
    if reason != Some(Reason::Limit) {
        if r.reset.is_some() || r.go_on.is_some() {
            return Err("`reset` and `go_on` go with reason `limit` only".into());
        }
        return Ok((None, None));
    }
    let reset = match &r.reset {
        None => None,
        Some(raw) => {
            let pattern = compile_regex(&raw.regex).map_err(|e| format!("reset: {e}"))?;
            if pattern.captures_len() < 2 {
                return Err(format!(
                    "reset: `{}` needs a capture group around the words that say when, \
                     e.g. `resets (.+)$`",
                    raw.regex
                ));
            }
            let region = match &raw.region {
                Some(r) => Region::parse(r).map_err(|p| format!("reset: {p}"))?,
                None => region,
            };
            Some(ResetWords { region, pattern })
        }
    };
    let go_on = match &r.go_on {
        None => None,
        Some(raw) => {
            if raw.keys.is_empty() {
                return Err("go_on.keys needs at least one key".into());
            }
            if let Some(k) = raw.keys.iter().find(|k| !valid_key(k)) {
                return Err(format!(
                    "go_on.keys: `{k}` is not a tmux key name (like Enter, Escape, y, 1, C-c)"
                ));
            }
            Some(raw.keys.clone())
        }
    };
    Ok((reset, go_on))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMatcher {
    contains: Option<String>,
    regex: Option<String>,
    line_regex: Option<String>,
    all: Option<Vec<RawMatcher>>,
    any: Option<Vec<RawMatcher>>,
    not: Option<Box<RawMatcher>>,
    region: Option<String>,
}

fn compile_regex(src: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(&ascii_word_boundaries(src))
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("invalid regex `{src}`: {e}"))
}

/// A screen rule's regex, its syntax checked now, compiled on first use
/// (`lazy.rs`).
fn lazy_regex(src: &str) -> Result<LazyRegex, String> {
    LazyRegex::new(ascii_word_boundaries(src).into_owned())
        .map_err(|e| format!("invalid regex `{src}`: {e}"))
}

/// `src` with each `\b` and `\B` made an ASCII word boundary
/// (`(?-u:\b)`): a match still ends at a word's edge, but the regex stays
/// on the fast engine. A Unicode `\b` makes the regex crate's DFA give up
/// at the first non-ASCII byte, and an agent's screen has one on nearly
/// every row (`❯`, `⏺`, box drawing); the slower engines it fell back to
/// took a quarter of the time of a whole Claude Code replay. The two
/// differ only next to a non-ASCII letter (`Yesé`), which no rule names.
/// `\b{start}` and the like are left alone.
pub(crate) fn ascii_word_boundaries(src: &str) -> std::borrow::Cow<'_, str> {
    if !src.contains("\\b") && !src.contains("\\B") {
        return src.into();
    }
    let mut out = String::with_capacity(src.len() + 16);
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(b @ ('b' | 'B')) if chars.peek() != Some(&'{') => {
                out.push_str("(?-u:\\");
                out.push(b);
                out.push(')');
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out.into()
}

fn compile_matcher(raw: &RawMatcher, depth: usize) -> Result<Matcher, String> {
    if depth > 8 {
        return Err("matchers nested deeper than 8 levels".into());
    }
    if let Some(region) = &raw.region {
        let region = Region::parse(region)?;
        let inner = RawMatcher {
            region: None,
            contains: raw.contains.clone(),
            regex: raw.regex.clone(),
            line_regex: raw.line_regex.clone(),
            all: raw.all.as_ref().map(|v| v.iter().map(clone_raw).collect()),
            any: raw.any.as_ref().map(|v| v.iter().map(clone_raw).collect()),
            not: raw.not.as_ref().map(|b| Box::new(clone_raw(b))),
        };
        return Ok(Matcher::In(
            region,
            Box::new(compile_matcher(&inner, depth + 1)?),
        ));
    }
    let set = [
        raw.contains.is_some(),
        raw.regex.is_some(),
        raw.line_regex.is_some(),
        raw.all.is_some(),
        raw.any.is_some(),
        raw.not.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if set != 1 {
        return Err(format!(
            "a matcher needs exactly one of contains, regex, line_regex, all, any, not (found {set})"
        ));
    }
    let group = |items: &Vec<RawMatcher>, name: &str| -> Result<Vec<Matcher>, String> {
        if items.is_empty() {
            return Err(format!("`{name}` needs at least one matcher"));
        }
        items
            .iter()
            .map(|m| compile_matcher(m, depth + 1))
            .collect()
    };
    if let Some(s) = &raw.contains {
        if s.is_empty() {
            return Err("`contains` needs a non-empty string".into());
        }
        return Ok(Matcher::Contains(s.clone()));
    }
    if let Some(r) = &raw.regex {
        return Ok(Matcher::Regex(lazy_regex(r)?));
    }
    if let Some(r) = &raw.line_regex {
        return Ok(Matcher::LineRegex(lazy_regex(r)?));
    }
    if let Some(items) = &raw.all {
        return Ok(Matcher::All(group(items, "all")?));
    }
    if let Some(items) = &raw.any {
        return Ok(Matcher::Any(group(items, "any")?));
    }
    match &raw.not {
        Some(inner) => Ok(Matcher::Not(Box::new(compile_matcher(inner, depth + 1)?))),
        None => Err("empty matcher".into()),
    }
}

fn clone_raw(r: &RawMatcher) -> RawMatcher {
    RawMatcher {
        contains: r.contains.clone(),
        regex: r.regex.clone(),
        line_regex: r.line_regex.clone(),
        all: r.all.as_ref().map(|v| v.iter().map(clone_raw).collect()),
        any: r.any.as_ref().map(|v| v.iter().map(clone_raw).collect()),
        not: r.not.as_ref().map(|b| Box::new(clone_raw(b))),
        region: r.region.clone(),
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.chars().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' || c == '.'
        })
}

impl Manifest {
    /// Parses and validates one manifest. `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, ManifestError> {
        let err = |rule: Option<&str>, problem: String| ManifestError {
            file: file.to_owned(),
            rule: rule.map(str::to_owned),
            problem,
        };
        let raw: RawManifest =
            toml::from_str(text).map_err(|e| err(None, format!("not a valid manifest: {e}")))?;
        if !valid_id(&raw.id) {
            return Err(err(
                None,
                format!(
                    "agent id `{}` must be 1–64 characters of a-z, 0-9, `-`, `_`, `.`",
                    raw.id
                ),
            ));
        }
        let screen_identity =
            compile_markers(&raw.id, &raw.identity.screen).map_err(|p| err(None, p))?;
        // Compiled with the screen rules that read it (when first used).
        let horizontal_rule = lazy_regex(
            raw.screen
                .horizontal_rule
                .as_deref()
                .unwrap_or(DEFAULT_RULE_REGEX),
        )
        .map_err(|p| err(None, format!("screen.horizontal_rule: {p}")))?;
        let mut rules = Vec::with_capacity(raw.rules.len());
        let mut seen = std::collections::HashSet::new();
        for r in &raw.rules {
            let rid = r.id.as_str();
            if !valid_id(rid) {
                return Err(err(
                    Some(rid),
                    "rule id must be 1–64 characters of a-z, 0-9, `-`, `_`, `.`".into(),
                ));
            }
            if !seen.insert(rid.to_owned()) {
                return Err(err(Some(rid), "duplicate rule id".into()));
            }
            let state = match r.state.as_str() {
                "working" => RuleState::Working,
                "waiting" => RuleState::Waiting,
                "ready" => RuleState::Ready,
                "exited" => RuleState::Exited,
                other => {
                    return Err(err(
                        Some(rid),
                        format!(
                            "unknown state `{other}` (expected working, waiting, ready or exited)"
                        ),
                    ))
                }
            };
            let reason = match (&r.reason, state) {
                (None, RuleState::Waiting) => return Err(err(
                    Some(rid),
                    "a waiting rule needs a reason (approval, question, error, prompt or limit)"
                        .into(),
                )),
                (None, _) => None,
                (Some(_), s) if s != RuleState::Waiting => {
                    return Err(err(Some(rid), "only waiting rules take a reason".into()))
                }
                (Some(reason), _) => Some(Reason::parse(reason).ok_or_else(|| {
                    err(
                        Some(rid),
                        format!(
                            "unknown reason `{reason}` (expected approval, question, error, prompt \
                             or limit)"
                        ),
                    )
                })?),
            };
            let confidence = r.confidence.unwrap_or(0.9);
            if !(0.0..=1.0).contains(&confidence) {
                return Err(err(
                    Some(rid),
                    format!("confidence {confidence} is not between 0 and 1"),
                ));
            }
            let region = Region::parse(&r.region).map_err(|p| err(Some(rid), p))?;
            let matcher = compile_matcher(&r.matcher, 0).map_err(|p| err(Some(rid), p))?;
            let (reset, go_on_keys) =
                compile_limit(r, reason, region).map_err(|p| err(Some(rid), p))?;
            let cite =
                match &r.cite {
                    Some(c) if !c.trim().is_empty() => c.clone(),
                    _ => return Err(err(
                        Some(rid),
                        "`cite` is required: name the recording or source that motivates the rule"
                            .into(),
                    )),
                };
            rules.push(Rule {
                id: format!("{}/{}", raw.id, rid),
                state,
                reason,
                priority: r.priority,
                confidence,
                region,
                alt_screen: r.alt_screen,
                matcher,
                cite,
                example: r.example.clone(),
                reset,
                go_on_keys,
            });
        }
        let actions = match &raw.actions {
            None => None,
            Some(a) => {
                if a.answers.is_empty() {
                    return Err(err(
                        None,
                        "actions.answers needs the id of at least one approval rule".into(),
                    ));
                }
                let mut answers = Vec::new();
                for id in &a.answers {
                    let full = format!("{}/{id}", raw.id);
                    match rules.iter().find(|r| r.id == full) {
                        Some(r) if r.state == RuleState::Waiting => answers.push(full),
                        Some(_) => {
                            return Err(err(
                                None,
                                format!("actions.answers: rule `{id}` is not a waiting rule"),
                            ))
                        }
                        None => {
                            return Err(err(
                                None,
                                format!("actions.answers: no rule `{id}` in this manifest"),
                            ))
                        }
                    }
                }
                let cite = match &a.cite {
                    Some(c) if !c.trim().is_empty() => c.clone(),
                    _ => return Err(err(
                        None,
                        "actions.cite is required: name the recording or source the keys come from"
                            .into(),
                    )),
                };
                Some(Actions {
                    answers,
                    approve: compile_action_keys(&a.approve, "approve")
                        .map_err(|p| err(None, p))?,
                    deny: compile_action_keys(&a.deny, "deny").map_err(|p| err(None, p))?,
                    settle: std::time::Duration::from_millis(a.settle_ms.min(5_000)),
                    cite,
                })
            }
        };
        let prompt = match &raw.prompt {
            None => Prompting::default(),
            Some(p) => match &p.cite {
                Some(c) if !c.trim().is_empty() => Prompting {
                    enter_after: std::time::Duration::from_millis(p.enter_after_ms.min(2_000)),
                    cite: c.clone(),
                },
                _ => {
                    return Err(err(
                        None,
                        "prompt.cite is required: name the recording or the live check that \
                         shows the agent needs it"
                            .into(),
                    ))
                }
            },
        };
        let resume = raw
            .resume
            .as_ref()
            .map(resume::RawResume::compile)
            .transpose()
            .map_err(|p| err(None, p))?;
        if !raw.verified && !raw.verified_versions.is_empty() {
            return Err(err(
                None,
                "verified_versions names the versions the rules were verified on: set \
                 `verified = true` too, or remove it"
                    .into(),
            ));
        }
        let session_files = match raw.session_files.as_deref() {
            None => None,
            Some(f) => Some(SessionFiles::parse(f).ok_or_else(|| {
                err(
                    None,
                    format!(
                        "session_files `{f}` is not a format tend reads: expected {}",
                        SessionFiles::HELP
                    ),
                )
            })?),
        };
        let unasked_reports_app = match raw.unasked_reports_app {
            Some(a) if a.is_empty() || a.len() > 32 || !a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.') => {
                return Err(err(
                    None,
                    format!("unasked_reports_app `{a}`: the `app` an OSC 7501 report names, 1 to 32 letters, digits, `-`, `_` or `.`"),
                ))
            }
            a => a,
        };
        let unasked_working_settle = match raw.unasked_working_settle_ms {
            0 => std::time::Duration::ZERO,
            _ if unasked_reports_app.is_none() => {
                return Err(err(
                    None,
                    "unasked_working_settle_ms: only for an agent that prints its reports unasked (set unasked_reports_app too)".into(),
                ))
            }
            ms if ms > 2_000 => {
                return Err(err(
                    None,
                    format!("unasked_working_settle_ms = {ms}: at most 2000 (a turn's `working` held longer than that would show late)"),
                ))
            }
            ms => std::time::Duration::from_millis(ms),
        };
        // Stable: equal priorities keep file order.
        rules.sort_by_key(|r| std::cmp::Reverse(r.priority));
        let short_name = raw.short_name.unwrap_or_else(|| raw.name.clone());
        Ok(Manifest {
            id: raw.id,
            name: raw.name,
            short_name,
            verified: raw.verified,
            verified_versions: raw.verified_versions,
            reports_own_state: raw.reports_own_state,
            unasked_reports_app,
            unasked_working_settle,
            session_files,
            source: file.to_owned(),
            identity: IdentityKeys {
                executables: raw.identity.executables,
                packages: raw.identity.packages,
                comm: raw.identity.comm,
                aliases: raw.identity.aliases,
            },
            screen_identity,
            screen: ScreenHints {
                horizontal_rule,
                single_line_box: raw.screen.single_line_box,
            },
            rules,
            actions,
            prompt,
            resume,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::testutil::*;

    const WAITS: &str = r#"
[[rule]]
id = "ask"
state = "waiting"
reason = "approval"
region = "bottom_lines:5"
cite = "unit test"
match = { contains = "Proceed?" }
"#;

    #[test]
    fn word_boundaries_become_ascii_and_nothing_else_changes() {
        assert_eq!(
            ascii_word_boundaries(r"^\s*1\.\s+Yes\b"),
            r"^\s*1\.\s+Yes(?-u:\b)"
        );
        assert_eq!(ascii_word_boundaries(r"\Bx\b"), r"(?-u:\B)x(?-u:\b)");
        // An escaped backslash before `b`, and `\b{start}`, are not boundaries to change.
        assert_eq!(ascii_word_boundaries(r"a\\b"), r"a\\b");
        assert_eq!(ascii_word_boundaries(r"\b{start}x"), r"\b{start}x");
        assert_eq!(ascii_word_boundaries(r"\d+ tokens"), r"\d+ tokens");
        let r = compile_regex(r"(?i)^\s*esc to cancel\b").unwrap();
        assert!(r.is_match("  Esc to cancel · Tab to amend"));
        assert!(r.is_match("  esc to cancel"));
        assert!(!r.is_match("  esc to cancelled"));
        // Still a boundary after a word, whatever follows it.
        let r = compile_regex(r"\bAPI Error\b").unwrap();
        assert!(r.is_match("● API Error: 529 ⎿ overloaded"));
        assert!(r.is_match("⏺API Error❯"));
        assert!(!r.is_match("XAPI Error"));
    }

    #[test]
    fn good_manifest_loads() {
        let m = Manifest::parse("demo.toml", GOOD).unwrap();
        assert_eq!(m.id, "demo");
        assert_eq!(m.short_name, "Demo Agent");
        assert_eq!(m.rules[0].id, "demo/spin");
        assert_eq!(m.rules[0].region, Region::BottomLines(5));
        assert!((m.rules[0].confidence - 0.9).abs() < f32::EPSILON);
    }

    #[test]
    fn errors_name_file_rule_and_problem() {
        assert_eq!(
            parse_err(&GOOD.replace("bottom_lines:5", "bottom:5")),
            "demo.toml: rule `spin`: unknown region `bottom:5` (expected one of bottom_lines:N, \
             bottom_nonempty:N, prompt_box, above_prompt_box:N, after_last_rule, cursor_line, above_cursor:N, \
             title, progress, visible)"
        );
        assert_eq!(
            parse_err(&GOOD.replace("state = \"working\"", "state = \"waiting\"")),
            "demo.toml: rule `spin`: a waiting rule needs a reason (approval, question, error, prompt or limit)"
        );
        assert_eq!(
            parse_err(&GOOD.replace("{ contains = \"esc to interrupt\" }", "{ regex = \"(\" }")),
            "demo.toml: rule `spin`: invalid regex `(`: regex parse error:\n    (\n    ^\nerror: unclosed group"
        );
        assert_eq!(
            parse_err(&GOOD.replace("cite = \"unit test\"\n", "")),
            "demo.toml: rule `spin`: `cite` is required: name the recording or source that motivates the rule"
        );
        assert_eq!(
            parse_err(&GOOD.replace("{ contains = \"esc to interrupt\" }", "{ contains = \"a\", regex = \"b\" }")),
            "demo.toml: rule `spin`: a matcher needs exactly one of contains, regex, line_regex, all, any, not (found 2)"
        );
        assert_eq!(
            parse_err(&GOOD.replace("bottom_lines:5", "bottom_lines:0")),
            "demo.toml: rule `spin`: region `bottom_lines:0`: line count must be a whole number from 1 to 500"
        );
        assert_eq!(
            parse_err(&GOOD.replace("id = \"demo\"", "id = \"Demo!\"")),
            "demo.toml: agent id `Demo!` must be 1–64 characters of a-z, 0-9, `-`, `_`, `.`"
        );
        let dup = format!("{GOOD}\n[[rule]]\nid = \"spin\"\nstate = \"ready\"\nregion = \"title\"\ncite = \"x\"\nmatch = {{ contains = \"y\" }}\n");
        assert_eq!(parse_err(&dup), "demo.toml: rule `spin`: duplicate rule id");
        assert!(parse_err(
            &GOOD
                .replace("priority", "prio")
                .replace("region =", "colour = 1\nregion =")
        )
        .starts_with("demo.toml: not a valid manifest: "));
        assert!(parse_err("id = ").starts_with("demo.toml: not a valid manifest: "));
    }

    const MARKER: &str = r#"
[[identity.screen]]
id = "prompt"
region = "bottom_nonempty:4"
alt_screen = true
cite = "unit test"
example_title = "Demo"
example = "> \nfooter"
match.all = [ { line_regex = '^> ' }, { region = "title", contains = "Demo" } ]
"#;

    #[test]
    fn the_agents_word_channels_load_and_are_checked() {
        let with = |extra: &str| {
            GOOD.replace(
                "name = \"Demo Agent\"",
                &format!("name = \"Demo Agent\"\n{extra}"),
            )
        };
        let m = Manifest::parse(
            "demo.toml",
            &with("session_files = \"claude-code\"\nunasked_reports_app = \"demo-cli\""),
        )
        .unwrap();
        assert_eq!(m.session_files, Some(SessionFiles::ClaudeCode));
        assert_eq!(m.unasked_reports_app.as_deref(), Some("demo-cli"));
        let plain = Manifest::parse("demo.toml", GOOD).unwrap();
        assert_eq!(
            (plain.session_files, plain.unasked_reports_app),
            (None, None)
        );
        assert_eq!(
            parse_err(&with("session_files = \"cursor\"")),
            "demo.toml: session_files `cursor` is not a format tend reads: expected `claude-code`"
        );
        assert!(parse_err(&with("unasked_reports_app = \"a b\"")).contains("1 to 32 letters"));
        // The hold of an unasked `working`: none unless said, only with
        // unasked reports, at most 2 s.
        assert_eq!(m.unasked_working_settle, std::time::Duration::ZERO);
        let held = Manifest::parse(
            "demo.toml",
            &with("unasked_reports_app = \"demo-cli\"\nunasked_working_settle_ms = 300"),
        )
        .unwrap();
        assert_eq!(
            held.unasked_working_settle,
            std::time::Duration::from_millis(300)
        );
        assert!(parse_err(&with("unasked_working_settle_ms = 300"))
            .contains("set unasked_reports_app too"));
        assert!(parse_err(&with(
            "unasked_reports_app = \"demo-cli\"\nunasked_working_settle_ms = 2001"
        ))
        .contains("at most 2000"));
        assert_eq!(
            crate::Registry::bundled()
                .get("codex")
                .map(|m| m.unasked_working_settle),
            Some(std::time::Duration::from_millis(300))
        );
        // The bundled ones: Claude Code keeps session files; Codex and
        // Mistral Vibe print their reports unasked.
        let r = crate::Registry::bundled();
        assert_eq!(
            r.get("claude").and_then(|m| m.session_files),
            Some(SessionFiles::ClaudeCode)
        );
        let unasked: Vec<(&str, &str)> = r
            .iter()
            .filter_map(|m| Some((m.id.as_str(), m.unasked_reports_app.as_deref()?)))
            .collect();
        assert_eq!(unasked, [("codex", "codex"), ("vibe", "vibe")]);
    }

    #[test]
    fn screen_markers_load() {
        let m = Manifest::parse("demo.toml", &format!("{GOOD}{MARKER}")).unwrap();
        assert_eq!(m.identity.executables, ["demo"]);
        let [k] = m.screen_identity.as_slice() else {
            panic!("one marker: {:?}", m.screen_identity);
        };
        assert_eq!(
            (k.id.as_str(), k.region, k.alt_screen, k.cite.as_str()),
            (
                "demo/screen:prompt",
                Region::BottomNonEmpty(4),
                Some(true),
                "unit test"
            )
        );
        assert_eq!(k.example_title.as_deref(), Some("Demo"));
        assert!(Manifest::parse("demo.toml", GOOD)
            .unwrap()
            .screen_identity
            .is_empty());
    }

    #[test]
    fn bad_screen_markers_are_named() {
        let with = |marker: &str| parse_err(&format!("{GOOD}{marker}"));
        assert_eq!(
            with(&MARKER.replace(
                "match.all = [ { line_regex = '^> ' }, { region = \"title\", contains = \"Demo\" } ]",
                "match = { line_regex = '^> ' }"
            )),
            "demo.toml: identity.screen `prompt`: a screen marker needs `match.all` with at least two \
             parts of the agent's live UI (an input box and its footer, a dialog and the title): one \
             word on a screen is not an agent"
        );
        assert_eq!(
            with(&MARKER.replace("{ region = \"title\", contains = \"Demo\" } ", "")),
            with(&MARKER.replace(
                "match.all = [ { line_regex = '^> ' }, { region = \"title\", contains = \"Demo\" } ]",
                "match = { line_regex = '^> ' }"
            )),
            "one part in `all` is one part"
        );
        assert_eq!(
            with(&MARKER.replace("cite = \"unit test\"\n", "")),
            "demo.toml: identity.screen `prompt`: `cite` is required: name the recordings that show the agent drawing this"
        );
        assert_eq!(
            with(&MARKER.replace("bottom_nonempty:4", "bottom:4")),
            "demo.toml: identity.screen `prompt`: unknown region `bottom:4` (expected one of bottom_lines:N, \
             bottom_nonempty:N, prompt_box, above_prompt_box:N, after_last_rule, cursor_line, above_cursor:N, \
             title, progress, visible)"
        );
        assert_eq!(
            with(&format!("{MARKER}{MARKER}")),
            "demo.toml: identity.screen `prompt`: duplicate marker id"
        );
        assert!(with(&MARKER.replace("alt_screen", "alternate"))
            .starts_with("demo.toml: not a valid manifest: "));
    }

    #[test]
    fn actions_load_and_resolve() {
        let text = format!(
            "{GOOD}{WAITS}\n[actions]\nanswers = [\"ask\"]\napprove = {{ keys = [\"y\", \"Enter\"] }}\n\
             deny = {{ option = '^\\s*(\\d+)\\.\\s+No\\b', then = [\"Enter\"] }}\ncite = \"unit test\"\n"
        );
        let m = Manifest::parse("demo.toml", &text).unwrap();
        let a = m.actions.unwrap();
        assert_eq!(a.answers, ["demo/ask"]);
        let rows = ["Proceed?", " 1. Yes", " 3. No, thanks"];
        assert_eq!(a.approve.resolve(&rows).unwrap(), ["y", "Enter"]);
        assert_eq!(a.deny.resolve(&rows).unwrap(), ["3", "Enter"]);
        assert_eq!(a.deny.resolve(&["Proceed?", " 1. Yes"]), None);
        assert_eq!(
            a.settle,
            std::time::Duration::ZERO,
            "no settle_ms: keys go at once"
        );
        let settled = Manifest::parse("demo.toml", &format!("{text}settle_ms = 800\n")).unwrap();
        assert_eq!(
            settled.actions.unwrap().settle,
            std::time::Duration::from_millis(800)
        );
        let capped = Manifest::parse("demo.toml", &format!("{text}settle_ms = 60000\n")).unwrap();
        assert_eq!(
            capped.actions.unwrap().settle,
            std::time::Duration::from_secs(5)
        );
        assert!(Manifest::parse("demo.toml", GOOD)
            .unwrap()
            .actions
            .is_none());
    }

    #[test]
    fn prompt_pause_loads_capped_and_cited() {
        use std::time::Duration;
        assert_eq!(
            Manifest::parse("demo.toml", GOOD).unwrap().prompt,
            Prompting::default(),
            "no [prompt]: the Enter goes with the paste"
        );
        let with =
            |table: &str| Manifest::parse("demo.toml", &format!("{GOOD}\n[prompt]\n{table}"));
        let m = with("enter_after_ms = 500\ncite = \"live check\"\n").unwrap();
        assert_eq!(
            (m.prompt.enter_after, m.prompt.cite.as_str()),
            (Duration::from_millis(500), "live check")
        );
        let capped = with("enter_after_ms = 90000\ncite = \"c\"\n").unwrap();
        assert_eq!(capped.prompt.enter_after, Duration::from_secs(2));
        assert_eq!(
            parse_err(&format!("{GOOD}\n[prompt]\nenter_after_ms = 500\n")),
            "demo.toml: prompt.cite is required: name the recording or the live check that \
             shows the agent needs it"
        );
        assert!(
            with("enter_after = 500\ncite = \"c\"\n").is_err(),
            "unknown keys refused"
        );
    }

    #[test]
    fn bad_actions_are_named() {
        let with = |table: &str| parse_err(&format!("{GOOD}{WAITS}\n[actions]\n{table}"));
        let ok_keys =
            "approve = { keys = [\"1\"] }\ndeny = { keys = [\"Escape\"] }\ncite = \"t\"\n";
        assert_eq!(
            with(&format!("answers = [\"spin\"]\n{ok_keys}")),
            "demo.toml: actions.answers: rule `spin` is not a waiting rule"
        );
        assert_eq!(
            with(&format!("answers = [\"nope\"]\n{ok_keys}")),
            "demo.toml: actions.answers: no rule `nope` in this manifest"
        );
        assert_eq!(
            with(&format!("answers = []\n{ok_keys}")),
            "demo.toml: actions.answers needs the id of at least one approval rule"
        );
        assert_eq!(
            with("answers = [\"ask\"]\napprove = { keys = [\"1\"] }\ndeny = { keys = [\"Escape\"] }\n"),
            "demo.toml: actions.cite is required: name the recording or source the keys come from"
        );
        assert_eq!(
            with("answers = [\"ask\"]\napprove = { keys = [\"rm -rf /\"] }\ndeny = { keys = [\"n\"] }\ncite = \"t\"\n"),
            "demo.toml: actions.approve: `rm -rf /` is not a tmux key name (like Enter, Escape, y, 1, C-c)"
        );
        assert_eq!(
            with("answers = [\"ask\"]\napprove = { keys = [\"1\"], option = \"(1)\" }\ndeny = { keys = [\"n\"] }\ncite = \"t\"\n"),
            "demo.toml: actions.approve needs exactly one of `keys = [\"1\"]` (at least one key) or \
             `option = 'regex with (the key) in a group'`"
        );
        assert_eq!(
            with("answers = [\"ask\"]\napprove = { keys = [\"1\"] }\ndeny = { option = \"No\" }\ncite = \"t\"\n"),
            "demo.toml: actions.deny.option: `No` needs a capture group around the key, e.g. `(\\d+)\\. No`"
        );
        assert!(with("answers = [\"ask\"]\napprove = { keys = [\"1\"] }\ndeny = { keys = [\"n\"] }\ncite = \"t\"\nextra = 1\n")
            .starts_with("demo.toml: not a valid manifest: "));
    }

    #[test]
    fn matchers_combine() {
        let m = compile_matcher(
            &toml::from_str::<RawMatcher>(
                r#"all = [ { contains = "Yes" }, { not = { line_regex = "^No$" } }, { any = [ { regex = "a\nb" }, { contains = "zzz" } ] } ]"#,
            )
            .unwrap(),
            0,
        )
        .unwrap();
        struct NoSrc;
        impl RegionSource for NoSrc {
            fn with_region(&self, _: Region, f: &mut dyn FnMut(&[&str], &str) -> bool) -> bool {
                f(&[], "")
            }
        }
        let rows = ["a", "b Yes"];
        assert!(m.matches(&NoSrc, &rows, &rows.join("\n")));
        let rows = ["a", "b Yes", "No"];
        assert!(!m.matches(&NoSrc, &rows, &rows.join("\n")));
    }
}
