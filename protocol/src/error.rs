//! Why the daemon refused a request: a stable code and a sentence for
//! people.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A refusal: what went wrong ([`ErrorCode`], stable, for scripts) and a
/// message that says what happened and what to do about it
/// (`no pane %9 on this tmux server (see `tend list`)`). On the wire it is
/// the response's `error` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Error {
    /// Stable code, e.g. `unknown_pane`, `bad_request`.
    pub code: ErrorCode,
    /// What happened and what to do, for people.
    pub message: String,
}

impl Error {
    /// A refusal with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The stable codes of the daemon's refusals. A code a client does not know
/// (from a newer daemon) reads as [`ErrorCode::DaemonError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// No such pane (or gate pane); `tend list` shows the panes.
    UnknownPane,
    /// The request or one of its parameters cannot be used.
    BadRequest,
    /// No method by that name.
    UnknownMethod,
    /// `next`: no pane to go to.
    NoTarget,
    /// A tmux command failed.
    Tmux,
    /// A zellij action failed.
    Zellij,
    /// A wait ran out of time (which does not prove a prompt was not
    /// delivered).
    Timeout,
    /// `prompt`: the agent waits for an approval or an answer; nothing was
    /// sent.
    AgentBlocked,
    /// `prompt --wait`: nothing changed within 5 s of the prompt.
    AgentPromptStalled,
    /// The agent a wait was pinned to exited, was replaced or its pane
    /// closed.
    AgentNotRunning,
    /// `read`: more than the screen of a busy agent on the alternate
    /// screen.
    AgentNotIdle,
    /// `prompt`: a stop flag is pending; nothing was sent.
    StopPending,
    /// The pane runs no agent tend knows.
    NoAgent,
    /// `ack`: no stop flag to acknowledge.
    NoFlag,
    /// `report`: the report cannot be taken (an old sequence number, an
    /// unknown state).
    BadReport,
    /// The daemon belongs to another user.
    Forbidden,
    /// `answer`: the agent's dialog is not on the screen; nothing was sent.
    NoDialog,
    /// `answer`: the agent's manifest has no `[actions]` table.
    NoActions,
    /// `answer`: the dialog has no option for the action.
    NoOption,
    /// `answer`: the pane is in copy mode, which would take the keys.
    PaneInMode,
    /// The pane is on a remote, where only `list`, `get`, `next` and `jump`
    /// reach it from here.
    RemotePane,
    /// `config.toml` cannot be read.
    BadConfig,
    /// `capture`: tend has not read the pane's screen yet.
    NotSeeded,
    /// A remote pane cannot be shown in zellij.
    NotInZellij,
    /// `events`: as many event streams are open as the daemon keeps; close
    /// some and ask again.
    TooMany,
    /// `resume`: the pane does not show its agent's usage limit (any
    /// more); nothing was sent.
    NotAtLimit,
    /// The daemon failed, is shutting down, or sent a code this client does
    /// not know.
    #[serde(other)]
    DaemonError,
}

impl ErrorCode {
    /// Every code, in the order above.
    pub const ALL: [ErrorCode; 27] = [
        ErrorCode::UnknownPane,
        ErrorCode::BadRequest,
        ErrorCode::UnknownMethod,
        ErrorCode::NoTarget,
        ErrorCode::Tmux,
        ErrorCode::Zellij,
        ErrorCode::Timeout,
        ErrorCode::AgentBlocked,
        ErrorCode::AgentPromptStalled,
        ErrorCode::AgentNotRunning,
        ErrorCode::AgentNotIdle,
        ErrorCode::StopPending,
        ErrorCode::NoAgent,
        ErrorCode::NoFlag,
        ErrorCode::BadReport,
        ErrorCode::Forbidden,
        ErrorCode::NoDialog,
        ErrorCode::NoActions,
        ErrorCode::NoOption,
        ErrorCode::PaneInMode,
        ErrorCode::RemotePane,
        ErrorCode::BadConfig,
        ErrorCode::NotSeeded,
        ErrorCode::NotInZellij,
        ErrorCode::TooMany,
        ErrorCode::NotAtLimit,
        ErrorCode::DaemonError,
    ];

    /// The code as the wire spells it: `unknown_pane`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownPane => "unknown_pane",
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::UnknownMethod => "unknown_method",
            ErrorCode::NoTarget => "no_target",
            ErrorCode::Tmux => "tmux",
            ErrorCode::Zellij => "zellij",
            ErrorCode::Timeout => "timeout",
            ErrorCode::AgentBlocked => "agent_blocked",
            ErrorCode::AgentPromptStalled => "agent_prompt_stalled",
            ErrorCode::AgentNotRunning => "agent_not_running",
            ErrorCode::AgentNotIdle => "agent_not_idle",
            ErrorCode::StopPending => "stop_pending",
            ErrorCode::NoAgent => "no_agent",
            ErrorCode::NoFlag => "no_flag",
            ErrorCode::BadReport => "bad_report",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NoDialog => "no_dialog",
            ErrorCode::NoActions => "no_actions",
            ErrorCode::NoOption => "no_option",
            ErrorCode::PaneInMode => "pane_in_mode",
            ErrorCode::RemotePane => "remote_pane",
            ErrorCode::BadConfig => "bad_config",
            ErrorCode::NotSeeded => "not_seeded",
            ErrorCode::NotInZellij => "not_in_zellij",
            ErrorCode::TooMany => "too_many",
            ErrorCode::NotAtLimit => "not_at_limit",
            ErrorCode::DaemonError => "daemon_error",
        }
    }

    /// The code spelt `word`, if there is one.
    pub fn parse(word: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == word)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_spelt_as_serde_spells_it() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).expect("a code serializes");
            assert_eq!(json, code.as_str());
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            let back: ErrorCode = serde_json::from_value(json).expect("and reads back");
            assert_eq!(back, code);
        }
    }

    #[test]
    fn a_code_this_client_does_not_know_reads_as_daemon_error() {
        let e: Error = serde_json::from_str(r#"{"code":"from_the_future","message":"m"}"#)
            .expect("an unknown code still reads");
        assert_eq!(e.code, ErrorCode::DaemonError);
        assert_eq!(e.to_string(), "m");
    }
}
