//! Errors for people: what happened, and what to do.

use std::fmt;

/// A failure with a stable machine-readable code (for `--json`) and a
/// message that says what happened and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// Stable code, e.g. `file_not_found`, `bad_recording`, `unknown_agent`.
    pub code: &'static str,
    /// What happened and what to do.
    pub message: String,
}

impl CliError {
    /// A new error.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        CliError {
            code,
            message: message.into(),
        }
    }

    /// The JSON form printed under `--json`.
    pub fn to_json(&self) -> String {
        serde_json::json!({"error": {"code": self.code, "message": self.message}}).to_string()
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// Reads a file, with an error that names it and the fix.
pub fn read_file(path: &std::path::Path) -> Result<String, CliError> {
    let bytes = std::fs::read(path).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            "file_not_found"
        } else {
            "file_unreadable"
        };
        CliError::new(code, format!("cannot read {}: {e}", path.display()))
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
