//! What makes a hook tend's: the agents whose hooks tend wires, the
//! command such a hook runs, and the marker that ends it.

use clap::ValueEnum;

/// The agents whose hooks tend can install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Agent {
    /// Claude Code (`~/.claude/settings.json`).
    Claude,
    /// OpenAI Codex CLI (`~/.codex/hooks.json`).
    Codex,
    /// Gemini CLI (`~/.gemini/settings.json`).
    Gemini,
}

/// The shell comment that ends every command tend writes into an agent's
/// hook configuration.
pub const MARKER: &str = "# tend-managed";

pub(super) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command an installed hook runs. It never fails and never prints:
/// whatever happens (tend gone, daemon not running), the agent sees exit 0
/// and empty output.
pub fn hook_command(exe: &str, agent: &str, event: &str) -> String {
    format!(
        "{} hooks run {agent} {event} >/dev/null 2>&1 || true {MARKER}",
        shell_quote(exe)
    )
}
