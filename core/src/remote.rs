//! Remotes in the configuration (`[remotes.NAME]`, `[remote_link]`) and
//! their pane ids (`build-box:%3`): the typed sections the daemon reads
//! from `config.toml` and hands in ([`crate::Input::Remotes`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tend_detector::config::{dur, format_duration};

/// One remote in `[remotes.NAME]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteConfig {
    /// The ssh destination (`host`, `user@host`, a `Host` alias).
    pub dest: String,
    /// How the remote shell runs tend (default `tend`): a shell command
    /// prefix, e.g. `~/.cargo/bin/tend` or `TEND_TMUX_SOCKET=work tend`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tend_command: Option<String>,
    /// Options given to ssh before the destination (`["-F", "cfg"]`,
    /// `["-p", "2222"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ssh_options: Vec<String>,
}

pub use tend_protocol::FEED_HEARTBEAT;

/// `[remote_link]`: how links are kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkConfig {
    /// ssh's `ServerAliveInterval`: a silent link is declared dead after
    /// three of these. Default 10s.
    #[serde(with = "dur")]
    pub keepalive: Duration,
    /// The longest wait between reconnection attempts (the wait doubles
    /// from one second up to this). Default 30s.
    #[serde(with = "dur")]
    pub reconnect_max: Duration,
    /// The longest the remote's feed may say nothing (its first snapshot
    /// after ssh starts, then a snapshot or a heartbeat every 15s): past
    /// it the link gives up on this ssh and connects again. ssh's
    /// keepalive cannot see a remote whose login shell or `tend` hangs:
    /// the connection itself is alive. Default 45s.
    #[serde(with = "dur")]
    pub feed_silence: Duration,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            keepalive: Duration::from_secs(10),
            reconnect_max: Duration::from_secs(30),
            feed_silence: Duration::from_secs(45),
        }
    }
}

impl LinkConfig {
    /// Checks values; names the key and the problem.
    pub fn validate(&self) -> Result<(), String> {
        if self.keepalive < Duration::from_secs(1) {
            return Err(format!(
                "keepalive = {}: ssh counts it in whole seconds; use at least 1s",
                format_duration(self.keepalive)
            ));
        }
        if self.reconnect_max < Duration::from_millis(100) {
            return Err(format!(
                "reconnect_max = {}: use at least 100ms",
                format_duration(self.reconnect_max)
            ));
        }
        if self.feed_silence < FEED_HEARTBEAT * 2 {
            return Err(format!(
                "feed_silence = {}: a quiet remote writes a heartbeat every {}; use at least {}",
                format_duration(self.feed_silence),
                format_duration(FEED_HEARTBEAT),
                format_duration(FEED_HEARTBEAT * 2)
            ));
        }
        Ok(())
    }

    /// The first wait after a failed link.
    pub fn first_backoff(&self) -> Duration {
        Duration::from_secs(1).min(self.reconnect_max)
    }
}

impl RemoteConfig {
    /// Checks the destination and options.
    pub fn validate(&self) -> Result<(), String> {
        check_dest(&self.dest)?;
        if let Some(c) = &self.tend_command {
            if c.trim().is_empty() {
                return Err("tend_command is empty; leave it out to run `tend`".into());
            }
        }
        Ok(())
    }

    /// The remote shell's tend command.
    pub fn tend(&self) -> &str {
        self.tend_command.as_deref().unwrap_or("tend")
    }
}

/// A remote's name: it prefixes its pane ids (`build-box:%3`), so no `:`,
/// `%` or space; a letter or digit first.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a usable remote name: use up to 32 letters, digits, `-`, `_` or `.`, \
             starting with a letter or digit (it prefixes pane ids, as in {}:%3)",
            if name.is_empty() { "NAME" } else { "build-box" }
        ))
    }
}

fn check_dest(dest: &str) -> Result<(), String> {
    if dest.is_empty() {
        return Err("dest is empty: give an ssh destination such as me@build-box".into());
    }
    if dest.starts_with('-') {
        return Err(format!(
            "dest `{dest}` starts with `-`, which ssh would read as an option; put options in \
             ssh_options (--ssh-option)"
        ));
    }
    if dest.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "dest `{dest}` contains a space or control character; give one ssh destination"
        ));
    }
    Ok(())
}

/// Splits a remote pane id, `build-box:%3`, into the remote's name and its
/// pane id there. Local ids (`%3`) give `None`.
pub fn split_id(id: &str) -> Option<(&str, &str)> {
    let (host, pane) = id.split_once(':')?;
    let pane_is_id = pane.parse::<tend_protocol::PaneId>().is_ok();
    (check_name(host).is_ok() && pane_is_id).then_some((host, pane))
}

/// The name of the local window that shows a remote session (one per
/// remote session, reused by every jump into it).
pub fn window_name(host: &str, session: &str) -> String {
    format!("{host}:{session}")
}
