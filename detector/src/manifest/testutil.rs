//! Helpers shared by the manifest unit tests: a small valid manifest and
//! the error text of a bad one.

use super::*;

pub(super) const GOOD: &str = r#"
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

pub(super) fn parse_err(text: &str) -> String {
    Manifest::parse("demo.toml", text).unwrap_err().to_string()
}
