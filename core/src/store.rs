//! The daemon's persistent state as text: parks, snoozes, stop flags,
//! self-reports and the agents' conversations (`tend restore`) survive a
//! restart. The daemon reads and writes the file
//! (atomically, setting aside one it cannot read); this is its format.

use serde_json::{json, Value};
use tend_attention::park::ParkStore;
use tend_attention::report::ReportBook;
use tend_attention::stopflag::StopFlags;

use crate::resume::{Book, Conversation};

/// Version of the file format.
pub const VERSION: u64 = 1;

/// What was loaded.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Parks and snoozes.
    pub parks: ParkStore,
    /// Stop flags.
    pub flags: StopFlags,
    /// Self-reports.
    pub reports: ReportBook,
    /// The agents' conversations.
    pub conversations: Book,
    /// Things the user should hear about (stale parks dropped, a corrupt
    /// file set aside).
    pub warnings: Vec<String>,
    /// The file is there but could not be read (permissions, a folder in
    /// its place): what it holds is unknown, and nothing may be saved
    /// over it until it has been read.
    pub unread: bool,
}

/// The file's text for the current state.
pub fn to_text(
    parks: &ParkStore,
    flags: &StopFlags,
    reports: &ReportBook,
    conversations: &Book,
) -> String {
    let parks: Value = serde_json::from_str(&parks.to_text()).unwrap_or(Value::Null);
    let v = json!({
        "version": VERSION,
        "parks": parks,
        "flags": flags,
        "reports": reports,
        "conversations": conversations.records(),
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// Parses a state file's text. `now` is Unix seconds (stale parks go).
pub fn parse(text: &str, now: u64) -> Result<Loaded, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    match v.get("version").and_then(Value::as_u64) {
        Some(VERSION) => {}
        Some(other) => {
            return Err(format!(
                "written by a different tend (format version {other})"
            ))
        }
        None => return Err("no format version".into()),
    }
    let mut out = Loaded::default();
    if let Some(p) = v.get("parks").filter(|p| !p.is_null()) {
        let (parks, warnings) =
            ParkStore::load(&p.to_string(), now).map_err(|e| format!("parks: {}", e.0))?;
        out.parks = parks;
        out.warnings.extend(warnings);
    }
    if let Some(f) = v.get("flags").filter(|f| !f.is_null()) {
        out.flags = serde_json::from_value(f.clone()).map_err(|e| format!("stop flags: {e}"))?;
    }
    if let Some(r) = v.get("reports").filter(|r| !r.is_null()) {
        out.reports = serde_json::from_value(r.clone()).map_err(|e| format!("reports: {e}"))?;
    }
    if let Some(c) = v.get("conversations").filter(|c| !c.is_null()) {
        // One record a newer or an older tend wrote differently is dropped
        // and said; the rest of the state stays.
        let list = c.as_array().ok_or("conversations: not a list")?;
        let mut records = Vec::with_capacity(list.len());
        for r in list {
            match serde_json::from_value::<Conversation>(r.clone()) {
                Ok(r) => records.push(r),
                Err(e) => out.warnings.push(format!(
                    "a saved conversation cannot be read ({e}) and was dropped"
                )),
            }
        }
        let (book, warnings) = Book::load(records);
        out.conversations = book;
        out.warnings.extend(warnings);
    }
    Ok(out)
}
