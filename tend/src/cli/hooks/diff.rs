//! The `--dry-run` output: a unified diff of the configuration file, as
//! `diff -u` and `git apply` read it.

use std::path::Path;

use similar::TextDiff;

/// A unified diff (three lines of context) from `old` to `new`; `None` is a
/// file that does not exist (before an install creates it, after an
/// uninstall removes it) and shows as `/dev/null`.
pub(super) fn unified_diff(old: Option<&str>, new: Option<&str>, path: &Path) -> String {
    let label = |t: Option<&str>| match t {
        Some(_) => path.display().to_string(),
        None => "/dev/null".to_string(),
    };
    let (a, b) = (label(old), label(new));
    let (old, new) = (old.unwrap_or(""), new.unwrap_or(""));
    let diff = TextDiff::from_lines(old, new);
    let mut out = format!("--- {a}\n+++ {b}\n");
    out.push_str(&diff.unified_diff().context_radius(3).to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_has_the_headers_and_hunks_diff_u_writes() {
        let p = Path::new("/x/settings.json");
        let old = "{\n  \"a\": 1\n}\n";
        let new = "{\n  \"a\": 1,\n  \"b\": 2\n}\n";
        assert_eq!(
            unified_diff(Some(old), Some(new), p),
            "--- /x/settings.json\n+++ /x/settings.json\n@@ -1,3 +1,4 @@\n {\n-  \"a\": 1\n+  \"a\": 1,\n+  \"b\": 2\n }\n"
        );
        assert_eq!(
            unified_diff(None, Some("{}\n"), p),
            "--- /dev/null\n+++ /x/settings.json\n@@ -0,0 +1 @@\n+{}\n"
        );
        assert_eq!(
            unified_diff(Some("{}\n"), None, p),
            "--- /x/settings.json\n+++ /dev/null\n@@ -1 +0,0 @@\n-{}\n"
        );
        assert_eq!(
            unified_diff(Some("{}"), Some("{\"a\":1}"), p),
            "--- /x/settings.json\n+++ /x/settings.json\n@@ -1 +1 @@\n-{}\n\\ No newline at end of file\n+{\"a\":1}\n\\ No newline at end of file\n"
        );
        assert_eq!(
            unified_diff(Some("x\n"), Some("x\n"), p),
            "--- /x/settings.json\n+++ /x/settings.json\n"
        );
    }
}
