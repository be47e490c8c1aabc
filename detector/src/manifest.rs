//! Agent manifests: what tend knows about each agent, as reviewed data.
//!
//! One TOML file per agent holds its identity keys (how its processes look)
//! and its prioritised screen rules (what its live UI shows in each state).
//! The bundled manifests live in `detector/agents/` and are compiled into the
//! binary; a user file with the same `id` replaces a bundled one, a new `id`
//! adds an agent. Loading is pure: the caller reads the files.
//!
//! Validation is strict and every error names the file, the rule and the
//! problem, because a manifest that half-loads would silently mis-detect.

use std::collections::BTreeMap;
use std::fmt;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::state::Reason;

/// The manifests compiled into tend, as `(file name, TOML text)`.
pub const BUNDLED: &[(&str, &str)] = &[
    ("claude.toml", include_str!("../agents/claude.toml")),
    ("codex.toml", include_str!("../agents/codex.toml")),
    ("gemini.toml", include_str!("../agents/gemini.toml")),
    ("aider.toml", include_str!("../agents/aider.toml")),
    ("opencode.toml", include_str!("../agents/opencode.toml")),
    ("pi.toml", include_str!("../agents/pi.toml")),
    ("kilo.toml", include_str!("../agents/kilo.toml")),
    ("copilot.toml", include_str!("../agents/copilot.toml")),
    ("cursor.toml", include_str!("../agents/cursor.toml")),
    ("amp.toml", include_str!("../agents/amp.toml")),
    ("goose.toml", include_str!("../agents/goose.toml")),
    ("crush.toml", include_str!("../agents/crush.toml")),
    ("qwen.toml", include_str!("../agents/qwen.toml")),
    ("kimi.toml", include_str!("../agents/kimi.toml")),
    ("droid.toml", include_str!("../agents/droid.toml")),
    ("kiro.toml", include_str!("../agents/kiro.toml")),
    ("cline.toml", include_str!("../agents/cline.toml")),
    ("grok.toml", include_str!("../agents/grok.toml")),
];

/// A manifest failed to load. Names the file, the rule (when one is at
/// fault) and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// File name or path as given by the caller.
    pub file: String,
    /// Rule id, when the problem is in one rule.
    pub rule: Option<String>,
    /// What is wrong and, where it helps, what is expected.
    pub problem: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.rule {
            Some(rule) => write!(f, "{}: rule `{}`: {}", self.file, rule, self.problem),
            None => write!(f, "{}: {}", self.file, self.problem),
        }
    }
}

impl std::error::Error for ManifestError {}

/// What a matching rule says about the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleState {
    /// The agent is busy.
    Working,
    /// The agent waits on the user (a reason is required).
    Waiting,
    /// The agent's normal input prompt is up and no turn is running: `idle`
    /// before the first turn, `completed` after one.
    Ready,
    /// The agent has quit (its goodbye text is on screen).
    Exited,
}

/// Where on the screen a rule looks. Only regions where an agent draws its
/// live UI exist: there is deliberately no "scrollback" region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    /// The bottom N rows of the visible screen, blank rows included.
    BottomLines(u16),
    /// The bottom N non-blank rows of the visible screen.
    BottomNonEmpty(u16),
    /// Rows between the two lowest horizontal rules (the input box).
    PromptBox,
    /// The N non-blank rows above the input box's top rule.
    AbovePromptBox(u16),
    /// Rows below the lowest horizontal rule (footer).
    AfterLastRule,
    /// The OSC 0/2 window title.
    Title,
    /// The OSC 9;4 progress state word (`hidden`, `normal`, `error`,
    /// `indeterminate`, `paused`, or empty when never sent).
    Progress,
    /// The whole visible screen.
    Visible,
    /// The row the cursor is on.
    CursorLine,
    /// The N non-blank rows above the cursor's row.
    AboveCursor(u16),
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Region::BottomLines(n) => write!(f, "bottom_lines:{n}"),
            Region::BottomNonEmpty(n) => write!(f, "bottom_nonempty:{n}"),
            Region::PromptBox => f.write_str("prompt_box"),
            Region::AbovePromptBox(n) => write!(f, "above_prompt_box:{n}"),
            Region::AfterLastRule => f.write_str("after_last_rule"),
            Region::Title => f.write_str("title"),
            Region::Progress => f.write_str("progress"),
            Region::Visible => f.write_str("visible"),
            Region::CursorLine => f.write_str("cursor_line"),
            Region::AboveCursor(n) => write!(f, "above_cursor:{n}"),
        }
    }
}

const REGION_HELP: &str = "expected one of bottom_lines:N, bottom_nonempty:N, prompt_box, \
                           above_prompt_box:N, after_last_rule, cursor_line, above_cursor:N, title, progress, visible";

impl Region {
    fn parse(s: &str) -> Result<Self, String> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (s.trim(), None),
        };
        let count = |arg: Option<&str>| -> Result<u16, String> {
            let a =
                arg.ok_or_else(|| format!("region `{name}` needs a line count, e.g. `{name}:12`"))?;
            match a.parse::<u16>() {
                Ok(n) if (1..=500).contains(&n) => Ok(n),
                _ => Err(format!(
                    "region `{s}`: line count must be a whole number from 1 to 500"
                )),
            }
        };
        let none = |r: Region| -> Result<Region, String> {
            match arg {
                None => Ok(r),
                Some(_) => Err(format!("region `{name}` takes no line count")),
            }
        };
        match name {
            "bottom_lines" => Ok(Region::BottomLines(count(arg)?)),
            "bottom_nonempty" => Ok(Region::BottomNonEmpty(count(arg)?)),
            "above_prompt_box" => Ok(Region::AbovePromptBox(count(arg)?)),
            "prompt_box" => none(Region::PromptBox),
            "after_last_rule" => none(Region::AfterLastRule),
            "title" => none(Region::Title),
            "progress" => none(Region::Progress),
            "visible" => none(Region::Visible),
            "cursor_line" => none(Region::CursorLine),
            "above_cursor" => Ok(Region::AboveCursor(count(arg)?)),
            _ => Err(format!("unknown region `{s}` ({REGION_HELP})")),
        }
    }
}

/// A compiled matcher over the text of a region.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// The region's text contains this string.
    Contains(String),
    /// The region's text (rows joined by `\n`) matches this regex.
    Regex(Regex),
    /// At least one row of the region matches this regex on its own.
    LineRegex(Regex),
    /// Every inner matcher matches.
    All(Vec<Matcher>),
    /// At least one inner matcher matches.
    Any(Vec<Matcher>),
    /// The inner matcher does not match.
    Not(Box<Matcher>),
    /// The inner matcher, applied to another region of the screen.
    In(Region, Box<Matcher>),
}

/// Gives the rows of a region (so a matcher can look elsewhere).
pub trait RegionSource {
    /// The rows of `region`.
    fn rows_of(&self, region: Region) -> Vec<&str>;
}

impl Matcher {
    /// Whether the matcher accepts the region's rows. `src` serves
    /// matchers that look at another region.
    pub fn matches(&self, src: &dyn RegionSource, rows: &[&str], joined: &str) -> bool {
        match self {
            Matcher::Contains(s) => joined.contains(s.as_str()),
            Matcher::Regex(r) => r.is_match(joined),
            Matcher::LineRegex(r) => rows.iter().any(|l| r.is_match(l)),
            Matcher::All(ms) => ms.iter().all(|m| m.matches(src, rows, joined)),
            Matcher::Any(ms) => ms.iter().any(|m| m.matches(src, rows, joined)),
            Matcher::Not(m) => !m.matches(src, rows, joined),
            Matcher::In(region, m) => {
                let rows = src.rows_of(*region);
                let joined = rows.join("\n");
                m.matches(src, &rows, &joined)
            }
        }
    }
}

/// One screen rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// `<agent>/<rule>`, unique over all manifests.
    pub id: String,
    /// What a match means.
    pub state: RuleState,
    /// Why the agent waits (only for `waiting`).
    pub reason: Option<Reason>,
    /// Higher wins; ties keep file order.
    pub priority: i32,
    /// How sure a match is, 0–1; ≥ 0.85 is a strong transition.
    pub confidence: f32,
    /// Where the rule looks.
    pub region: Region,
    /// When set, the rule applies only on (true) or off (false) the
    /// alternate screen.
    pub alt_screen: Option<bool>,
    /// What it looks for.
    pub matcher: Matcher,
    /// The recording or source that motivates the rule.
    pub cite: String,
    /// An excerpt of the screen that this rule must match (checked by tests).
    pub example: Option<String>,
}

/// How an agent's processes are recognised.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct IdentityKeys {
    /// Executable basenames (`/proc/<pid>/exe`, argv[0] or an unwrapped
    /// script path), e.g. `claude`, `codex`.
    #[serde(default)]
    pub executables: Vec<String>,
    /// Package path fragments found in an executable or script path, e.g.
    /// `@anthropic-ai/claude-code`.
    #[serde(default)]
    pub packages: Vec<String>,
    /// `comm` values (15 bytes at most; titles lie, so these are weak).
    #[serde(default)]
    pub comm: Vec<String>,
    /// Other names people launch it by.
    #[serde(default)]
    pub aliases: Vec<String>,
}

/// Screen layout hints shared by an agent's rules.
#[derive(Debug, Clone)]
pub struct ScreenHints {
    /// Recognises a horizontal rule line (input-box borders).
    pub horizontal_rule: Regex,
    /// True when the input box is a single marker line (matched by
    /// `horizontal_rule`) rather than rows between two rules.
    pub single_line_box: bool,
}

/// A loaded, validated agent manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Stable id, e.g. `claude`.
    pub id: String,
    /// Display name, e.g. `Claude Code`.
    pub name: String,
    /// Name used in sentences, e.g. `Claude`.
    pub short_name: String,
    /// Whether the rules were verified on recordings of the real agent.
    pub verified: bool,
    /// The agent versions the rules were verified on (`["0.171.0"]`).
    pub verified_versions: Vec<String>,
    /// The file it came from (`bundled:claude.toml` or a path).
    pub source: String,
    /// Process identity keys.
    pub identity: IdentityKeys,
    /// Layout hints.
    pub screen: ScreenHints,
    /// Rules, highest priority first.
    pub rules: Vec<Rule>,
    /// How to answer the agent's approval dialog from outside its pane
    /// (`tend approve`, `tend deny`, the picker), when known.
    pub actions: Option<Actions>,
}

impl Manifest {
    /// The reason a match of `rule` gives. A manifest whose rules were not
    /// verified on recordings of the real agent may be wrong about what a
    /// dialog is: its approval, question and error rules give `prompt`, so
    /// the pane still says it needs the user, without claiming to know
    /// what for (the rule id still names the dialog it took it for).
    pub fn reason_of(&self, rule: &Rule) -> Option<Reason> {
        match rule.reason {
            Some(Reason::Approval | Reason::Question | Reason::Error) if !self.verified => {
                Some(Reason::Prompt)
            }
            other => other,
        }
    }

    /// The rules were verified on another version than `running`: says so
    /// in a sentence naming the pane (`None` when it is one of them, or
    /// nothing is known to compare).
    pub fn version_warning(&self, running: &str, pane: &str) -> Option<String> {
        if !self.verified
            || self.verified_versions.is_empty()
            || self.verified_versions.iter().any(|v| v == running)
        {
            return None;
        }
        Some(format!(
            "{} {running} runs in {pane}; tend's rules were verified on {}",
            self.name,
            self.verified_versions.join(", ")
        ))
    }
}

/// The keys that answer an agent's approval dialog: the manifest's
/// `[actions]` table.
///
/// ```toml
/// [actions]
/// answers = ["approval"]                              # rule ids of this manifest
/// approve = { keys = ["1"] }                          # tmux key names, sent in order
/// deny = { option = '^\s*(?:❯\s*)?(\d+)\.\s+No\b' }  # the key the dialog shows
/// cite = "corpus/claude/approval: the recorder approved with 1"
/// ```
#[derive(Debug, Clone)]
pub struct Actions {
    /// Full ids (`claude/approval`) of the rules whose dialog these keys
    /// answer: approve and deny are sent only while one of them wins.
    pub answers: Vec<String>,
    /// What approves.
    pub approve: ActionKeys,
    /// What denies.
    pub deny: ActionKeys,
    /// The recording or source the keys come from.
    pub cite: String,
}

/// One answer's keys.
#[derive(Debug, Clone)]
pub enum ActionKeys {
    /// Fixed tmux key names (`send-keys` arguments), sent in order.
    Keys(Vec<String>),
    /// A line regex over the dialog's rows whose first capture group is the
    /// key (the number the dialog shows beside an option), then `then`.
    Option {
        /// The line regex, with one capture group.
        pattern: Regex,
        /// Keys sent after the captured one (e.g. `Enter`).
        then: Vec<String>,
    },
}

impl ActionKeys {
    /// The keys to send for a dialog showing `rows`, or `None` when an
    /// `option` is not on them.
    pub fn resolve(&self, rows: &[&str]) -> Option<Vec<String>> {
        match self {
            ActionKeys::Keys(k) => Some(k.clone()),
            ActionKeys::Option { pattern, then } => {
                let key = rows
                    .iter()
                    .find_map(|r| pattern.captures(r).and_then(|c| c.get(1)))?
                    .as_str()
                    .to_owned();
                let mut keys = vec![key];
                keys.extend(then.iter().cloned());
                Some(keys)
            }
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawActions {
    answers: Vec<String>,
    approve: RawActionKeys,
    deny: RawActionKeys,
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
    identity: IdentityKeys,
    #[serde(default)]
    screen: RawScreen,
    #[serde(default, rename = "rule")]
    rules: Vec<RawRule>,
    actions: Option<RawActions>,
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
    regex::RegexBuilder::new(src)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("invalid regex `{src}`: {e}"))
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
        return Ok(Matcher::Regex(compile_regex(r)?));
    }
    if let Some(r) = &raw.line_regex {
        return Ok(Matcher::LineRegex(compile_regex(r)?));
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
        let horizontal_rule = compile_regex(
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
                (None, RuleState::Waiting) => {
                    return Err(err(
                        Some(rid),
                        "a waiting rule needs a reason (approval, question, error or prompt)".into(),
                    ))
                }
                (None, _) => None,
                (Some(_), s) if s != RuleState::Waiting => {
                    return Err(err(Some(rid), "only waiting rules take a reason".into()))
                }
                (Some(reason), _) => Some(Reason::parse(reason).ok_or_else(|| {
                    err(
                        Some(rid),
                        format!("unknown reason `{reason}` (expected approval, question, error or prompt)"),
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
                    cite,
                })
            }
        };
        if !raw.verified && !raw.verified_versions.is_empty() {
            return Err(err(
                None,
                "verified_versions names the versions the rules were verified on: set \
                 `verified = true` too, or remove it"
                    .into(),
            ));
        }
        // Stable: equal priorities keep file order.
        rules.sort_by_key(|r| std::cmp::Reverse(r.priority));
        let short_name = raw.short_name.unwrap_or_else(|| raw.name.clone());
        Ok(Manifest {
            id: raw.id,
            name: raw.name,
            short_name,
            verified: raw.verified,
            verified_versions: raw.verified_versions,
            source: file.to_owned(),
            identity: raw.identity,
            screen: ScreenHints {
                horizontal_rule,
                single_line_box: raw.screen.single_line_box,
            },
            rules,
            actions,
        })
    }
}

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
            match Manifest::parse(&format!("bundled:{file}"), text) {
                Ok(m) => {
                    agents.insert(m.id.clone(), m);
                }
                Err(e) => errors.push(e),
            }
        }
        for (file, text) in user {
            match Manifest::parse(file, text) {
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

    const GOOD: &str = r#"
id = "demo"
name = "Demo Agent"
[identity]
executables = ["demo"]
[[rule]]
id = "spin"
state = "working"
region = "bottom_lines:5"
cite = "unit test"
match = { contains = "esc to interrupt" }
"#;

    fn parse_err(text: &str) -> String {
        Manifest::parse("demo.toml", text).unwrap_err().to_string()
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
    fn verified_versions_and_the_warning() {
        let reg = Registry::bundled();
        let codex = reg.get("codex").unwrap();
        assert_eq!(codex.verified_versions, vec!["0.171.0".to_owned()]);
        assert_eq!(codex.version_warning("0.171.0", "%3"), None);
        assert_eq!(
            codex.version_warning("0.172.0", "%3").as_deref(),
            Some("Codex 0.172.0 runs in %3; tend's rules were verified on 0.171.0")
        );
        for (id, v) in [
            ("claude", "2.1.332"),
            ("gemini", "0.61.0"),
            ("aider", "0.86.2"),
            ("qwen", "0.15.10"),
            ("opencode", "1.18.33"),
            ("kilo", "7.7.7"),
            ("grok", "0.0.34"),
        ] {
            assert_eq!(
                reg.get(id).unwrap().verified_versions,
                vec![v.to_owned()],
                "{id}"
            );
        }
        // An unverified manifest was verified on no version: nothing to compare.
        let kimi = reg.get("kimi").unwrap();
        assert!(!kimi.verified && kimi.verified_versions.is_empty());
        assert_eq!(kimi.version_warning("1.0.0", "%1"), None);
        assert_eq!(
            parse_err("id = \"x\"\nname = \"X\"\nverified_versions = [\"1\"]\n"),
            "demo.toml: verified_versions names the versions the rules were verified on: set `verified = true` too, or remove it"
        );
    }

    #[test]
    fn bundled_manifests_all_load() {
        let (reg, errors) = Registry::load(&[]);
        assert!(errors.is_empty(), "{errors:?}");
        for id in [
            "claude", "codex", "gemini", "aider", "opencode", "pi", "kilo", "copilot", "cursor",
            "amp", "goose", "crush", "qwen", "kimi", "droid", "kiro", "cline", "grok",
        ] {
            assert!(reg.get(id).is_some(), "missing bundled manifest {id}");
        }
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
            "demo.toml: rule `spin`: a waiting rule needs a reason (approval, question, error or prompt)"
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
        assert!(Manifest::parse("demo.toml", GOOD)
            .unwrap()
            .actions
            .is_none());
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
            fn rows_of(&self, _: Region) -> Vec<&str> {
                Vec::new()
            }
        }
        let rows = ["a", "b Yes"];
        assert!(m.matches(&NoSrc, &rows, &rows.join("\n")));
        let rows = ["a", "b Yes", "No"];
        assert!(!m.matches(&NoSrc, &rows, &rows.join("\n")));
    }
}
