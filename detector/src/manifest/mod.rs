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
//!
//! This file holds the compiled model (rules, regions, matchers, identity
//! keys, actions); `parse.rs` turns a file into it and `registry.rs` holds
//! the bundled list and the set of loaded manifests. Their public names
//! are re-exported here.

use std::collections::BTreeMap;
use std::fmt;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::state::Reason;
pub use lazy::LazyRegex;

mod lazy;
mod parse;
mod registry;
pub mod resume;

#[cfg(test)]
mod testutil;

pub use registry::{Registry, BUNDLED};
pub use resume::Resume;

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
    /// The region's text (rows joined by `\n`) matches this regex. In
    /// every manifest regex `\b` and `\B` are ASCII word boundaries (see
    /// `parse::ascii_word_boundaries`: a Unicode one makes the matcher slow
    /// on any screen with a non-ASCII character). Compiled when first
    /// used ([`LazyRegex`]).
    Regex(LazyRegex),
    /// At least one row of the region matches this regex on its own.
    LineRegex(LazyRegex),
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
    /// `f` applied to the rows of `region` and to their text joined by
    /// newlines.
    fn with_region(&self, region: Region, f: &mut dyn FnMut(&[&str], &str) -> bool) -> bool;
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
                src.with_region(*region, &mut |rows, joined| m.matches(src, rows, joined))
            }
        }
    }

    /// Calls `f` with each regex of the matcher, inner ones included.
    pub fn each_regex(&self, f: &mut dyn FnMut(&LazyRegex)) {
        match self {
            Matcher::Contains(_) => {}
            Matcher::Regex(r) | Matcher::LineRegex(r) => f(r),
            Matcher::All(ms) | Matcher::Any(ms) => ms.iter().for_each(|m| m.each_regex(f)),
            Matcher::Not(m) | Matcher::In(_, m) => m.each_regex(f),
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
    /// With reason `limit`: where the agent says when its limit resets.
    pub reset: Option<ResetWords>,
    /// With reason `limit`: the keys that go on from this screen (it is a
    /// dialog, "Keep trying"), sent by a resume in place of the text
    /// (`go_on = { keys = ["1"] }`; not the manifest's `[resume]`, which
    /// takes an agent's conversation back up after a restart).
    pub go_on_keys: Option<Vec<String>>,
}

/// Where a limit rule finds the words that say when the limit resets: a
/// regex over a region's rows (joined by newlines, so that words an agent
/// wrapped at the pane's edge are found whole) whose first capture group
/// is the words (`resets (.+)$` → `3pm (UTC)`), read by
/// [`crate::limit::parse_reset`].
///
/// ```toml
/// reset = { region = "above_prompt_box:4", regex = '(?m)\bresets ([^\n]+)$' }
/// ```
///
/// The region defaults to the rule's.
#[derive(Debug, Clone)]
pub struct ResetWords {
    /// Where.
    pub region: Region,
    /// The regex, its first group the words.
    pub pattern: Regex,
}

impl ResetWords {
    /// The words in `text` (a region's rows joined by newlines), with
    /// runs of white space made one space; `None` when they are not there.
    pub fn find(&self, text: &str) -> Option<String> {
        let words = self.pattern.captures(text)?.get(1)?.as_str();
        let words: Vec<&str> = words.split_whitespace().collect();
        (!words.is_empty()).then(|| words.join(" "))
    }
}

/// How an agent's processes are recognised.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct IdentityKeys {
    /// Executable basenames (`/proc/<pid>/exe`, `argv[0]` or an unwrapped
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

/// One complete look of an agent's live UI, by which tend names the agent
/// from the screen when the process tree shows only a wrapper (`ssh`,
/// `docker exec`, a launcher script, …) and no agent process: one
/// `[[identity.screen]]` entry of the manifest.
///
/// ```toml
/// [[identity.screen]]
/// id = "prompt"                       # unique among the agent's markers
/// region = "bottom_nonempty:6"        # where the look is drawn
/// alt_screen = true                   # optional, as for rules
/// cite = "corpus/claude/idle: …"      # the recordings that show it
/// example = """…"""                   # a screen it must name (checked by tests)
/// example_title = "✳ Claude Code"     # that screen's title, when the marker reads it
/// match.all = [ … ]                   # at least two parts of the UI
/// ```
///
/// Any one marker that matches shows the agent; a marker is an `all` of at
/// least two parts of the UI (an input box *and* its footer, a dialog
/// *and* the title), never one word, so that text merely printed (a `cat`
/// of a recording, `grep` output) rarely looks like the live UI — and even
/// then only a wrapper's pane is ever named from its screen, and only after
/// several readings (see `identity::IdentityTracker`).
#[derive(Debug, Clone)]
pub struct ScreenMarker {
    /// `<agent>/screen:<id>`, unique over all manifests.
    pub id: String,
    /// Where the marker looks.
    pub region: Region,
    /// When set, the marker applies only on (true) or off (false) the
    /// alternate screen.
    pub alt_screen: Option<bool>,
    /// What it looks for.
    pub matcher: Matcher,
    /// The recordings that show the agent drawing this look.
    pub cite: String,
    /// A screen this marker must name the agent on (checked by tests).
    pub example: Option<String>,
    /// The window title of that screen, for markers that read it.
    pub example_title: Option<String>,
}

/// Screen layout hints shared by an agent's rules.
#[derive(Debug, Clone)]
pub struct ScreenHints {
    /// Recognises a horizontal rule line (input-box borders).
    pub horizontal_rule: LazyRegex,
    /// True when the input box is a single marker line (matched by
    /// `horizontal_rule`) rather than rows between two rules.
    pub single_line_box: bool,
}

/// A format of session files tend reads (`session_files = "…"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionFiles {
    /// Claude Code's `<config>/sessions/<pid>.json`
    /// ([`crate::session_file`]).
    ClaudeCode,
}

impl SessionFiles {
    const HELP: &'static str = "`claude-code`";

    /// The word in a manifest.
    pub fn as_str(&self) -> &'static str {
        match self {
            SessionFiles::ClaudeCode => "claude-code",
        }
    }

    fn parse(s: &str) -> Option<SessionFiles> {
        match s {
            "claude-code" => Some(SessionFiles::ClaudeCode),
            _ => None,
        }
    }
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
    /// The agent reports its own state over OSC 7501 once its terminal
    /// answers the query (`tend run`): `tend doctor` names its panes
    /// that run without the relay.
    pub reports_own_state: bool,
    /// The `app` its OSC 7501 reports name when it prints them without
    /// being asked (Codex: `codex`): such a report counts while the agent
    /// itself holds the pane's terminal, relay or not.
    pub unasked_reports_app: Option<String>,
    /// How long an unasked `working` the screen does not show waits before
    /// it counts (`unasked_working_settle_ms`, at most 2 s; none by
    /// default): for an agent that says `working` and `idle` again within
    /// a moment outside any turn, as Codex does as it starts.
    pub unasked_working_settle: std::time::Duration,
    /// The session files it keeps while it runs, in a format tend reads
    /// ([`crate::session_file`]).
    pub session_files: Option<SessionFiles>,
    /// The file it came from (`bundled:claude.toml` or a path).
    pub source: String,
    /// Process identity keys.
    pub identity: IdentityKeys,
    /// The looks of the agent's live UI that name it from the screen
    /// behind a wrapper (`[[identity.screen]]`); empty: never named so.
    pub screen_identity: Vec<ScreenMarker>,
    /// Layout hints.
    pub screen: ScreenHints,
    /// Rules, highest priority first.
    pub rules: Vec<Rule>,
    /// How to answer the agent's approval dialog from outside its pane
    /// (`tend approve`, `tend deny`, the picker), when known.
    pub actions: Option<Actions>,
    /// How a prompt sent from outside the pane (`tend prompt`) is submitted.
    pub prompt: Prompting,
    /// How its conversations are found and resumed after a restart
    /// (`tend restore`), where the agent keeps them.
    pub resume: Option<Resume>,
}

/// How `tend prompt` submits text to the agent: the manifest's `[prompt]`
/// table.
///
/// ```toml
/// [prompt]
/// enter_after_ms = 500   # the pause between the pasted text and its Enter
/// cite = "live on Continue CLI 1.5.47: an Enter right after a paste joins the paste"
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompting {
    /// How long after the paste the Enter goes (at most 2 s). Zero: at
    /// once, in the same batch of tmux commands. Some agents take an Enter
    /// that arrives right after a paste as part of the pasted text.
    pub enter_after: std::time::Duration,
    /// What shows the pause is needed (empty when there is none).
    pub cite: String,
}

impl Manifest {
    /// Compiles every screen regex now (they wait for their first use
    /// otherwise, [`LazyRegex`]): the first that cannot be, named with
    /// its rule.
    pub fn compile(&self) -> Result<(), ManifestError> {
        let err = |rule: Option<&Rule>, problem: String| ManifestError {
            file: self.source.clone(),
            rule: rule.map(|r| {
                let short = r.id.split_once('/').map_or(r.id.as_str(), |(_, id)| id);
                short.to_owned()
            }),
            problem,
        };
        self.screen
            .horizontal_rule
            .compile()
            .map_err(|e| err(None, format!("screen.horizontal_rule: {e}")))?;
        for rule in &self.rules {
            let mut failed = None;
            rule.matcher.each_regex(&mut |re| {
                if let Err(e) = re.compile() {
                    failed.get_or_insert(format!("invalid regex `{}`: {e}", re.as_str()));
                }
            });
            if let Some(problem) = failed {
                return Err(err(Some(rule), problem));
            }
        }
        Ok(())
    }

    /// The reason a match of `rule` gives. A manifest whose rules were not
    /// verified on recordings of the real agent may be wrong about what a
    /// dialog is: its approval, question, error and limit rules give `prompt`, so
    /// the pane still says it needs the user, without claiming to know
    /// what for (the rule id still names the dialog it took it for).
    pub fn reason_of(&self, rule: &Rule) -> Option<Reason> {
        match rule.reason {
            Some(Reason::Approval | Reason::Question | Reason::Error | Reason::Limit)
                if !self.verified =>
            {
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

/// The numeric parts of a version (`1.6.0` → `[1, 6, 0]`; a pre-release or
/// build suffix after `-` or `+` is dropped), `None` when a part is not a
/// number.
fn version_parts(v: &str) -> Option<Vec<u64>> {
    let core = v.trim().trim_start_matches('v');
    let core = core.split(['-', '+']).next().unwrap_or_default();
    core.split('.').map(|p| p.parse().ok()).collect()
}

impl Manifest {
    /// The newest version the rules were verified on (by number, not by
    /// its place in the list).
    pub fn newest_verified(&self) -> Option<&str> {
        self.verified_versions
            .iter()
            .filter_map(|v| Some((version_parts(v)?, v.as_str())))
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, v)| v)
    }

    /// `running` is newer than every version the rules were verified on:
    /// the agent may have changed its screens since, so its states may be
    /// read wrong. Says so in a sentence naming the agent by its id (`pi
    /// 1.6.0: verified up to 0.73.1; …`); `None` for a verified version, an
    /// older one, an unverified manifest or a version that is not a number.
    pub fn drift_warning(&self, running: &str) -> Option<String> {
        if !self.verified {
            return None;
        }
        let newest = self.newest_verified()?;
        if version_parts(running)? <= version_parts(newest)? {
            return None;
        }
        Some(format!(
            "{} {running}: verified up to {newest}; states may be wrong — tend capture helps",
            self.id
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
/// settle_ms = 800                                     # the dialog's age before keys go
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
    /// How long the dialog must have been on the screen before keys are
    /// sent (`settle_ms`, at most 5 s): some agents ignore or only half take
    /// keys that arrive right after a dialog appears, so that a key typed
    /// ahead for the prompt cannot answer a dialog the user has not seen.
    pub settle: std::time::Duration,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::testutil::*;

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
            ("opencode", "1.18.33"),
            ("kilo", "7.7.7"),
            ("grok", "0.0.34"),
            ("continue", "1.5.47"),
            ("kimi", "1.51.0"),
            ("vibe", "3.0.2"),
            ("cline", "3.0.65"),
        ] {
            assert_eq!(
                reg.get(id).unwrap().verified_versions,
                vec![v.to_owned()],
                "{id}"
            );
        }
        assert_eq!(
            reg.get("qwen").unwrap().verified_versions,
            vec!["0.15.10".to_owned(), "0.24.4".to_owned()]
        );
        // Newer than the newest verified version: drifted. Older, equal or
        // unreadable: not.
        assert_eq!(
            codex.drift_warning("0.172.0").as_deref(),
            Some("codex 0.172.0: verified up to 0.171.0; states may be wrong — tend capture helps")
        );
        assert_eq!(codex.drift_warning("0.171.0"), None);
        assert_eq!(codex.drift_warning("0.99.9"), None);
        assert_eq!(codex.drift_warning("nightly"), None);
        assert_eq!(
            codex.drift_warning("v1.0.0-beta.1").as_deref(),
            Some("codex v1.0.0-beta.1: verified up to 0.171.0; states may be wrong — tend capture helps")
        );
        // An unverified manifest was verified on no version: nothing to compare.
        assert_eq!(amp_drift(&reg), None);
        let amp = reg.get("amp").unwrap();
        assert!(!amp.verified && amp.verified_versions.is_empty());
        assert_eq!(amp.version_warning("1.0.0", "%1"), None);
        assert_eq!(
            parse_err("id = \"x\"\nname = \"X\"\nverified_versions = [\"1\"]\n"),
            "demo.toml: verified_versions names the versions the rules were verified on: set `verified = true` too, or remove it"
        );
    }

    fn amp_drift(reg: &Registry) -> Option<String> {
        reg.get("amp").unwrap().drift_warning("99.0.0")
    }

    #[test]
    fn the_agents_that_report_their_own_state_say_so_in_their_manifests() {
        let reg = Registry::bundled();
        let mut reporting: Vec<&str> = reg
            .iter()
            .filter(|m| m.reports_own_state)
            .map(|m| m.id.as_str())
            .collect();
        reporting.sort_unstable();
        assert_eq!(reporting, ["claude", "codex", "crush", "pi", "vibe"]);
    }

    #[test]
    fn the_newest_verified_version_is_the_highest_number() {
        let mut m = Registry::bundled().get("codex").unwrap().clone();
        m.verified_versions = vec!["0.73.1".into(), "1.6.0".into(), "0.9.0".into()];
        assert_eq!(m.newest_verified(), Some("1.6.0"));
        assert_eq!(m.drift_warning("1.6.0"), None);
        assert_eq!(m.drift_warning("0.80.0"), None);
        assert!(m.drift_warning("1.10.0").is_some());
    }
}
