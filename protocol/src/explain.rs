//! `explain`: why a pane is in its state.
//!
//! Three parts of the answer are structures other tend crates define and
//! serialize: the detector's explanation, the identity tracker's evidence
//! and the pane's reporter. They travel as those crates wrote them (a
//! [`Document`]), so that `tend explain --json` shows all of them; the
//! parts a client reads are typed here, each field read leniently.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use tend_vocab::{Authority, IdentifiedBy, Reason, State, Tap};

use crate::pane::PaneView;

/// `explain`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Explained {
    /// The pane's view.
    pub pane: PaneView,
    /// A warning about the agent's version (newer than the manifest's
    /// verified ones).
    pub version_warning: Option<String>,
    /// The versions the agent's rules were verified on.
    pub verified_versions: Option<Vec<String>>,
    /// The detector's explanation: every rule's verdict, the recent
    /// transitions, what the program said through OSC 7501.
    pub explain: Document<Explanation>,
    /// The identity tracker's evidence: which process matched which key.
    pub identity: Document<Identity>,
    /// How the output reaches tend: `pipe`, `polling`, `subscribe`, `none`.
    pub tap: Tap,
    /// The screen as the daemon's emulator holds it, row by row.
    pub screen: Vec<String>,
    /// The pane's self-report book entry (`null` without reports).
    pub report: Value,
    /// Who decides the state, and what the screen alone reads.
    pub authority: AuthorityView,
    /// The pane's usage limit, while its agent shows one, and the last
    /// resume tend made (or refused) there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitExplained>,
}

/// A pane's usage limit as `tend explain` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub struct LimitExplained {
    /// Unix time tend first saw the limit screen (absent once it is gone).
    pub since: Option<i64>,
    /// The words the agent said it resets at.
    pub words: Option<String>,
    /// When it resets (Unix time), read from the words with the user's
    /// zone at `since`.
    pub resets_at: Option<i64>,
    /// Whether and when tend resumes it on its own, in a sentence:
    /// `at 15:01 (in 1m: …), sending "continue"`, `off: [limits] resume is not set`,
    /// `no: someone typed into the pane since`, ….
    pub resume: Option<String>,
    /// The last resume in this pane: what was sent (or why nothing was),
    /// by whom, when.
    pub last: Option<String>,
}

/// Who decides a pane's state, and whether the screen agrees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuthorityView {
    /// `screen`, `report`, `relay` (said `psp` by earlier daemons),
    /// `file` or `osc`.
    pub holder: Authority,
    /// What the screen alone reads.
    pub screen: ScreenReading,
    /// The screen reads the same state and reason.
    pub screen_agrees: bool,
    /// `tend run` answers the program's OSC 7501 queries in this pane: its
    /// reports count.
    pub relay: bool,
    /// The session file the agent keeps (Claude Code's
    /// `sessions/<pid>.json`), while the pane follows one or has read one.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub file: Option<SessionFile>,
}

/// What the daemon read of an agent's session file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionFile {
    /// The file followed (`None`: none now; its process ended, stopped,
    /// or its folder is not known).
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub path: Option<String>,
    /// The status it says (`busy`, `shell`, `waiting`, `idle`), while the
    /// pane takes it.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub status: Option<String>,
    /// What it waits on, in the agent's words.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub waiting_for: Option<String>,
    /// The release that wrote it (or the one whose file was not
    /// understood).
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub version: Option<String>,
    /// What the last read came to (`read: busy`, `not understood: …`, `not
    /// read: …`, `no file`).
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub last: Option<String>,
    /// Why the last file not understood was not (`unknown \`status\` …`).
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub not_understood: Option<String>,
    /// Versions read and taken.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub read: u64,
    /// Versions not understood.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub rejected: u64,
    /// Versions naming another process.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub untied: u64,
    /// Reads refused (another user's file, a symlink, a folder others can
    /// write).
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub refused: u64,
}

/// A state as the screen alone reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ScreenReading {
    /// The state.
    pub state: Option<State>,
    /// The reason, with waiting.
    pub reason: Option<Reason>,
    /// The rule.
    pub rule: String,
}

/// A structure another crate defines, carried as it serialized it;
/// [`Document::read`] gives the part `T` a client reads.
pub struct Document<T> {
    json: Value,
    read: PhantomData<fn() -> T>,
}

impl<T> Document<T> {
    /// `value` as it serializes (`null` if it cannot: a map with keys
    /// that are not strings).
    pub fn new(value: &impl Serialize) -> Self {
        Document::from_json(serde_json::to_value(value).unwrap_or(Value::Null))
    }

    /// A document already in JSON.
    pub fn from_json(json: Value) -> Self {
        Document {
            json,
            read: PhantomData,
        }
    }

    /// The whole structure, as sent.
    pub fn json(&self) -> &Value {
        &self.json
    }
}

impl<T: DeserializeOwned + Default> Document<T> {
    /// The typed part; the default where the structure does not read as
    /// `T` (each field of `T` is lenient, so that is only when it is not
    /// an object at all).
    pub fn read(&self) -> T {
        serde_json::from_value(self.json.clone()).unwrap_or_default()
    }
}

impl<T> std::fmt::Debug for Document<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.json.fmt(f)
    }
}

impl<T> Clone for Document<T> {
    fn clone(&self) -> Self {
        Document::from_json(self.json.clone())
    }
}

impl<T> PartialEq for Document<T> {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json
    }
}

impl<T> Serialize for Document<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(s)
    }
}

impl<'de, T> Deserialize<'de> for Document<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Document::from_json)
    }
}

impl<T: JsonSchema> JsonSchema for Document<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// What a client reads of the detector's explanation (tend-detector's
/// `Explanation`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct Explanation {
    /// The window title.
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub title: String,
    /// Every rule's verdict on the screen, highest priority first.
    #[serde(default, deserialize_with = "list")]
    pub verdicts: Vec<Verdict>,
    /// The last transitions, newest last.
    #[serde(default, deserialize_with = "list")]
    pub recent: Vec<Transition>,
    /// What the program said about itself through OSC 7501, once it said
    /// anything.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub psp: Option<Word>,
}

/// One rule's verdict on the screen.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct Verdict {
    /// The rule's priority.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub priority: Option<i64>,
    /// The rule's id.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub rule: Option<String>,
    /// The region of the screen it reads.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub region: Option<String>,
    /// It matched.
    #[serde(default, deserialize_with = "crate::lenient::flag")]
    pub matched: bool,
    /// Why it was not tried.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub skipped: Option<String>,
}

/// One transition of the pane's state machine.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct Transition {
    /// Seconds on the detector's clock.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub at: Option<f64>,
    /// The state before.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub from: Option<State>,
    /// The state after.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub to: Option<State>,
    /// Its reason, with waiting.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub reason: Option<Reason>,
    /// The rule that made it.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub rule: Option<String>,
    /// What caused it: `screen`, `activity`, `silence`, ….
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub trigger: Option<String>,
}

/// What the program said through OSC 7501.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct Word {
    /// Its reading in tend's vocabulary, while its records say something.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub reading: Option<BTreeMap<String, Value>>,
    /// What was heard.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub counters: Option<WordCounters>,
}

/// What tend heard of a program's OSC 7501.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct WordCounters {
    /// Queries answered.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub queries: Option<u64>,
    /// Reports taken.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub reports: Option<u64>,
    /// Reports dropped, by why.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub dropped: Option<BTreeMap<String, Value>>,
}

impl WordCounters {
    /// How many reports were dropped, all reasons together.
    pub fn dropped_total(&self) -> u64 {
        self.dropped
            .iter()
            .flatten()
            .filter_map(|(_, n)| n.as_u64())
            .sum()
    }
}

/// What a client reads of the identity tracker's evidence (tend-detector's
/// `IdentityEvidence`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct Identity {
    /// The committed agent.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub agent: Option<String>,
    /// How it was identified: `process`, `screen`, `declared`.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub identified_by: Option<IdentifiedBy>,
    /// Samples in a row that agree with it.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub agreeing: Option<u64>,
    /// Its latest match: which process, which key.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub matched: Option<IdentityMatch>,
    /// The latest resolution of the pane's processes.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub last: Option<Resolution>,
    /// The latest change of identity.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub last_change: Option<IdentityChange>,
    /// An agent the screen shows behind a wrapper, gathering readings.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub screen_pending: Option<ScreenPending>,
    /// The latest reading of the screen behind a wrapper.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub screen_reading: Option<ScreenSighting>,
}

/// A process that matched an agent's identity key.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct IdentityMatch {
    /// The process id.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub pid: Option<u64>,
    /// What matched: `image`, `argv`, a package, a screen marker.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub via: Option<String>,
    /// The manifest key.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub key: Option<String>,
    /// The value it matched (the wrapper's name, for a screen match).
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub value: Option<String>,
}

/// A resolution of the pane's foreground processes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct Resolution {
    /// The wrapper in the foreground (`ssh`, `docker exec`), when no agent
    /// process is below it.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub wrapper: Option<Wrapper>,
}

/// A wrapper in a pane's foreground.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct Wrapper {
    /// Its name.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub name: Option<String>,
    /// Its process id.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub pid: Option<u64>,
}

/// A change of identity.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct IdentityChange {
    /// Why: `wrapper_gone`, `screen_gone`, ….
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub reason: Option<String>,
}

/// An agent the screen shows behind a wrapper, not named yet.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct ScreenPending {
    /// The agent.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub agent: Option<String>,
    /// Readings in a row so far.
    #[serde(default, deserialize_with = "crate::lenient::opt")]
    pub readings: Option<u64>,
}

/// The latest reading of a wrapper's screen.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct ScreenSighting {
    /// Agents whose markers matched at once.
    #[serde(default, deserialize_with = "crate::lenient::strings")]
    pub ambiguous: Vec<String>,
}

/// A list whose items each read leniently: an item that does not read
/// (not an object) is left out; a list that is not one is empty.
fn list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    Ok(match Value::deserialize(d)? {
        Value::Array(a) => a
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect(),
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_document_travels_whole_and_reads_in_part() {
        let json = json!({
            "title": "claude",
            "verdicts": [{"priority": 90, "rule": "approval", "region": "live", "matched": true,
                          "skipped": null, "state": "waiting"}],
            "recent": [{"at": 1.5, "from": null, "to": "working", "trigger": "activity",
                        "rule": "builtin/activity"}],
            "psp": {"reading": null, "counters": {"queries": 2, "reports": 1,
                    "dropped": {"TooLong": 3, "BadBase64": 1}}},
            "status": {"quiet": false},
        });
        let doc: Document<Explanation> = Document::from_json(json.clone());
        assert_eq!(serde_json::to_value(&doc).expect("writes"), json);
        let ex = doc.read();
        assert_eq!(ex.title, "claude");
        assert_eq!(ex.verdicts[0].priority, Some(90));
        assert!(ex.verdicts[0].matched);
        assert_eq!(ex.recent[0].from, None);
        assert_eq!(ex.recent[0].trigger.as_deref(), Some("activity"));
        let word = ex.psp.expect("heard");
        assert!(word.reading.is_none());
        assert_eq!(word.counters.expect("counted").dropped_total(), 4);
    }

    #[test]
    fn a_document_that_is_not_an_object_reads_as_nothing() {
        let doc: Document<Identity> = Document::from_json(Value::Null);
        assert_eq!(doc.read(), Identity::default());
    }
}
