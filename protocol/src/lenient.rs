//! Parameters read the way the daemon has always read them.
//!
//! Before the protocol was typed, the daemon looked each parameter up in
//! the request's JSON and took it only when it had the expected type: a
//! pane that is a number, a `lines` that is a string, a key list with a
//! number in it were read as absent (or without the number). Scripts that
//! worked against that keep working, and get the same answers and errors,
//! because every parameter field is read through one of these functions
//! (`#[serde(default, deserialize_with = "…")]`).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A value of the wrong type counts as absent.
pub(crate) fn opt<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

/// A value, or its type's default when absent or not one (a word this
/// version does not know).
pub(crate) fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(opt::<D, T>(d)?.unwrap_or_default())
}

/// Text, or the empty string when absent or not a string.
pub(crate) fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(opt::<D, String>(d)?.unwrap_or_default())
}

/// A flag, false when absent or not a boolean.
pub(crate) fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(opt::<D, bool>(d)?.unwrap_or(false))
}

/// A count, 0 when absent or not a whole number.
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(opt::<D, u64>(d)?.unwrap_or(0))
}

/// A list of strings, keeping only the strings; empty when absent or not a
/// list.
pub(crate) fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(opt_strings(d)?.unwrap_or_default())
}

/// A list of strings, keeping only the strings; `None` when absent or not a
/// list (an empty list is a list).
pub(crate) fn opt_strings<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<String>>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(a) => Some(
            a.into_iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct Sample {
        #[serde(default, deserialize_with = "super::text")]
        pane: String,
        #[serde(default, deserialize_with = "super::opt")]
        lines: Option<u64>,
        #[serde(default, deserialize_with = "super::strings")]
        keys: Vec<String>,
        #[serde(default, deserialize_with = "super::opt_strings")]
        dispatches: Option<Vec<String>>,
    }

    fn read(v: serde_json::Value) -> Sample {
        serde_json::from_value(v).expect("lenient fields never fail")
    }

    #[test]
    fn a_value_of_the_wrong_type_reads_as_absent() {
        let s = read(json!({"pane": 3, "lines": "ten", "keys": "C-c", "dispatches": {}}));
        assert_eq!(s, Sample::default());
        let s = read(json!({"pane": null, "lines": 2.5, "keys": null}));
        assert_eq!(s, Sample::default());
    }

    #[test]
    fn lists_keep_their_strings() {
        let s =
            read(json!({"pane": "%1", "lines": 7, "keys": ["C-c", 1, "Enter"], "dispatches": []}));
        assert_eq!(
            s,
            Sample {
                pane: "%1".into(),
                lines: Some(7),
                keys: vec!["C-c".into(), "Enter".into()],
                dispatches: Some(vec![]),
            }
        );
    }
}
