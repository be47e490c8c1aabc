//! Talking to tend's zellij plugin: `zellij pipe`, the zjstatus line, and
//! zellij's permission cache.
//!
//! The plugin (`zellij-plugin/`, crate `tend-zellij`) keeps the last
//! [`PluginStatus`] pushed on the pipe [`PIPE_NAME`] and renders it; the
//! message `next` focuses the next pane of its jump list. The payload is
//! defined once, in `tend-zellij-payload` (`zellij-payload/`), which the
//! plugin depends on too.

use std::fs;
use std::path::{Path, PathBuf};

pub use tend_zellij_payload::{
    JumpTarget, Status as PluginStatus, NEXT_PIPE_NAME, PAYLOAD_VERSION, PIPE_NAME,
};

use crate::error::{Result, ZellijError};
use crate::session::Session;

/// The permissions the plugin asks for, as zellij names them in its
/// permission cache. `ChangeApplicationState` lets it focus panes;
/// receiving pipes and rendering need none.
pub const PLUGIN_PERMISSIONS: &[&str] = &["ChangeApplicationState"];

/// The zjstatus widget tend fills: `{pipe_tend}` in a zjstatus format.
pub const ZJSTATUS_PIPE: &str = "pipe_tend";

/// The pipe name the zjstatus line is sent on. zjstatus reads any pipe's
/// payload; tend's plugin ignores this name.
pub const ZJSTATUS_PIPE_NAME: &str = "tend_zjstatus";

/// The zjstatus pipe protocol line that sets `{pipe_tend}` to `text`:
/// `zjstatus::pipe::pipe_tend::TEXT`. zjstatus splits on `::` and lines, so
/// those are replaced.
pub fn zjstatus_line(text: &str) -> String {
    let clean: String = text
        .replace("::", ": ")
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    format!("zjstatus::pipe::{ZJSTATUS_PIPE}::{clean}")
}

impl Session {
    /// Sends `payload` on the pipe `name` to every plugin of the session
    /// that listens (`zellij pipe --name NAME -- PAYLOAD`). A plugin that
    /// is not loaded is not started.
    ///
    /// zellij holds the command until every plugin has taken the message,
    /// and a plugin still waiting for its permissions takes none: the
    /// session's deadline bounds the wait ([`ZellijError::Timeout`]).
    pub fn pipe_to_plugin(&self, name: &str, payload: &str) -> Result<()> {
        if name.is_empty() {
            return Err(ZellijError::Invalid {
                detail: "a zellij pipe needs a name".into(),
            });
        }
        self.run(&["pipe", "--name", name, "--", payload], None)
            .map(|_| ())
    }

    /// Pushes a status to tend's plugin.
    pub fn push_status(&self, status: &PluginStatus) -> Result<()> {
        self.pipe_to_plugin(PIPE_NAME, &status.to_json())
    }

    /// Hides the plugin's line (for `tend stop`).
    pub fn clear_status(&self) -> Result<()> {
        self.pipe_to_plugin(PIPE_NAME, "clear")
    }

    /// Asks the plugin to focus the next waiting pane, as the key does.
    pub fn plugin_next(&self) -> Result<()> {
        self.pipe_to_plugin(NEXT_PIPE_NAME, "next")
    }

    /// Sets zjstatus's `{pipe_tend}` widget to `text`.
    pub fn push_zjstatus(&self, text: &str) -> Result<()> {
        self.pipe_to_plugin(ZJSTATUS_PIPE_NAME, &zjstatus_line(text))
    }
}

/// Where zellij keeps granted plugin permissions: `permissions.kdl` in its
/// cache directory (`$XDG_CACHE_HOME/zellij`, else `~/.cache/zellij`; on
/// macOS `~/Library/Caches/org.Zellij-Contributors.Zellij`).
pub fn permission_cache_path() -> Option<PathBuf> {
    let cache = if cfg!(target_os = "macos") {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .map(|h| h.join("Library/Caches/org.Zellij-Contributors.Zellij"))
    } else {
        std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|c| c.join("zellij"))
    };
    cache.map(|c| c.join("permissions.kdl"))
}

/// Records in zellij's permission cache that the plugin at `plugin_path`
/// (absolute, as zellij expands the `file:` URL) holds `permissions`, so
/// zellij grants them without asking. Other plugins' entries are kept; an
/// existing entry for the same path is replaced. zellij reads the file
/// when a plugin asks, so this works for sessions that already run.
pub fn grant_permissions(
    cache_file: &Path,
    plugin_path: &Path,
    permissions: &[&str],
) -> Result<()> {
    if !plugin_path.is_absolute() {
        return Err(ZellijError::Invalid {
            detail: format!(
                "the plugin path {} must be absolute: zellij keys its permission cache by \
                 the expanded path",
                plugin_path.display()
            ),
        });
    }
    let io = |what: String| move |e| ZellijError::Io { what, source: e };
    let existing = match fs::read_to_string(cache_file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(format!("read {}", cache_file.display()))(e)),
    };
    let key = kdl_string(&plugin_path.to_string_lossy());
    let mut text = remove_node(&existing, &key);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&key);
    text.push_str(" {\n");
    for p in permissions {
        text.push_str("    ");
        text.push_str(p);
        text.push('\n');
    }
    text.push_str("}\n");
    if let Some(dir) = cache_file.parent() {
        fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
    }
    fs::write(cache_file, text).map_err(io(format!("write {}", cache_file.display())))
}

/// A KDL string literal.
fn kdl_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text` without the top-level node named `key` (a quoted name at the
/// start of a line, up to its closing brace), in the layout zellij writes.
fn remove_node(text: &str, key: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    let mut depth = 0i32;
    for line in text.lines() {
        if !skipping && line.trim_start().starts_with(key) {
            let after = line.trim_start()[key.len()..].trim_start();
            if after.starts_with('{') || after.is_empty() {
                skipping = true;
                depth = 0;
            }
        }
        if skipping {
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            if depth <= 0 && line.contains('}') {
                skipping = false;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zjstatus_lines_are_safe() {
        assert_eq!(
            zjstatus_line("2 agents need you"),
            "zjstatus::pipe::pipe_tend::2 agents need you"
        );
        assert_eq!(
            zjstatus_line("a::b\nc"),
            "zjstatus::pipe::pipe_tend::a: b c"
        );
    }

    #[test]
    fn cache_path_follows_xdg() {
        // Only checks the shape; the environment is the test runner's.
        if let Some(p) = permission_cache_path() {
            assert!(p.ends_with("permissions.kdl"));
        }
    }

    #[test]
    fn grants_merge_with_other_plugins() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let cache = tmp.path().join("zellij/permissions.kdl");
        fs::create_dir_all(cache.parent().expect("parent")).expect("mkdir");
        fs::write(
            &cache,
            "\"/other/zjstatus.wasm\" {\n    ReadApplicationState\n}\n\"/p/tend.wasm\" {\n    OpenFiles\n}\n",
        )
        .expect("seed");
        grant_permissions(&cache, Path::new("/p/tend.wasm"), PLUGIN_PERMISSIONS).expect("grants");
        grant_permissions(&cache, Path::new("/p/tend.wasm"), PLUGIN_PERMISSIONS).expect("again");
        let text = fs::read_to_string(&cache).expect("reads");
        assert_eq!(
            text,
            "\"/other/zjstatus.wasm\" {\n    ReadApplicationState\n}\n\"/p/tend.wasm\" {\n    ChangeApplicationState\n}\n"
        );
    }

    #[test]
    fn grants_need_absolute_paths() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let err = grant_permissions(&tmp.path().join("p.kdl"), Path::new("tend.wasm"), &[])
            .expect_err("relative");
        assert!(err.to_string().contains("absolute"));
    }

    #[test]
    fn kdl_strings_escape() {
        assert_eq!(kdl_string(r#"/a "b"\c"#), r#""/a \"b\"\\c""#);
    }
}
