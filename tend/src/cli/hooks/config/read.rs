//! Reading a hook configuration the way the agent reads it: plain JSON (or
//! JSON with comments where the agent strips them), an object whose
//! `hooks` is an object, and an error that names the line otherwise.

use crate::error::ErrorKind;
use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstNode, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::Value;

use super::cst::{kind_name, line_of, member, offset};
use crate::cli::hooks::spec::Spec;
use crate::error::CliError;

pub(super) fn bad_file(path: &Path, what: String) -> CliError {
    CliError::new(
        ErrorKind::HooksConfigInvalid,
        format!(
            "{}: {what}. tend has not changed the file; fix it (or move it aside) and run the command again",
            path.display()
        ),
    )
}

/// What the agent's parser accepts: plain JSON, plus comments where the
/// agent strips them before reading.
fn parse_options(comments: bool) -> ParseOptions {
    ParseOptions {
        allow_comments: comments,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// A parsed configuration: its root object and its `hooks` object, if any.
pub(crate) struct Doc {
    pub root: CstRootNode,
    pub object: CstObject,
    pub hooks: Option<CstObject>,
}

/// Validates `text` the way the agent reads it (naming line and column on
/// error) and parses it. The document must be an object, and its `hooks`
/// an object.
pub(crate) fn parse_checked(text: &str, path: &Path, spec: &Spec) -> Result<Doc, CliError> {
    if !spec.comments {
        // serde_json is what Codex reads its file with, and as strict as
        // the JSON.parse Claude Code uses; its messages name line and column.
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            let hint = if text.contains("//") || text.contains("/*") {
                format!(
                    " (comments are not plain JSON, and {} reads this file as plain JSON: remove them)",
                    spec.display
                )
            } else {
                String::new()
            };
            return Err(bad_file(
                path,
                format!(
                    "invalid JSON at line {}, column {}: {e}{hint}",
                    e.line(),
                    e.column()
                ),
            ));
        }
    }
    let root = CstRootNode::parse(text, &parse_options(spec.comments)).map_err(|e| {
        bad_file(
            path,
            format!(
                "invalid JSON at line {}, column {}: {}",
                e.line_display(),
                e.column_display(),
                e.kind()
            ),
        )
    })?;
    let value = root.value();
    let Some(object) = value.as_ref().and_then(CstNode::as_object) else {
        return Err(bad_file(
            path,
            format!(
                "the file holds {}, expected a JSON object",
                kind_name(value.as_ref())
            ),
        ));
    };
    let hooks = match member(&object, "hooks") {
        None => None,
        Some(prop) => {
            let v = prop.value();
            match v.as_ref().and_then(CstNode::as_object) {
                Some(h) => Some(h),
                None => {
                    return Err(bad_file(
                        path,
                        format!(
                            "\"hooks\" (line {}) is {}, expected an object",
                            line_of(text, offset(&CstNode::Container(prop.into()))),
                            kind_name(v.as_ref())
                        ),
                    ));
                }
            }
        }
    };
    Ok(Doc {
        root,
        object,
        hooks,
    })
}

/// A hook configuration file as read from disk.
pub(crate) struct ConfigFile {
    pub path: PathBuf,
    pub exists: bool,
    /// The text; `{}\n` stands in for an absent or blank file.
    pub text: String,
    /// What the agent reads from it (comments dropped).
    pub value: Option<Value>,
}

impl ConfigFile {
    pub fn load(path: &Path, spec: &Spec) -> Result<ConfigFile, CliError> {
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|e| {
                    bad_file(
                        path,
                        format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
                    )
                })?;
                ConfigFile::from_text(path, text, true, spec)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ConfigFile::from_text(path, String::new(), false, spec)
            }
            Err(e) => Err(CliError::new(
                ErrorKind::FileUnreadable,
                format!("cannot read {}: {e}", path.display()),
            )),
        }
    }

    pub fn from_text(
        path: &Path,
        text: String,
        exists: bool,
        spec: &Spec,
    ) -> Result<ConfigFile, CliError> {
        let text = if text.trim().is_empty() {
            "{}\n".to_string()
        } else {
            text
        };
        let doc = parse_checked(&text, path, spec)?;
        Ok(ConfigFile {
            path: path.to_path_buf(),
            exists,
            value: doc.root.to_serde_value(),
            text,
        })
    }
}
