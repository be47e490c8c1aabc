//! Remotes: other machines whose agents join this status line.
//!
//! A remote is a name and an ssh destination in `config.toml`:
//!
//! ```toml
//! [remotes.build-box]
//! dest = "me@build-box"            # anything `ssh` takes: a Host from ~/.ssh/config too
//! tend_command = "~/.cargo/bin/tend"   # optional: how the remote shell runs tend
//! ssh_options = ["-F", "/path/to/ssh_config"]   # optional: put before DEST
//! ```
//!
//! The daemon keeps one `ssh -T DEST tend events --feed` per remote (see
//! [`crate::remote`]); ssh, the user's ssh config and agent do
//! everything about reaching the host and authenticating. tend opens no
//! port and stores no credential. `docs/decisions/0008-remotes-over-ssh.md`
//! says why.

use tend_tmux::escape::shell_join;

pub use tend_core::feed;

pub use tend_core::remote::{
    check_name, split_id, window_name, LinkConfig, RemoteConfig, FEED_HEARTBEAT,
};

/// The ssh program: `$TEND_SSH` (a program, as `GIT_SSH`), else `ssh`.
pub fn ssh_program() -> String {
    std::env::var("TEND_SSH")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "ssh".into())
}

/// The feed link: `ssh -T -o BatchMode=yes … DEST '<tend> events --feed'`.
/// BatchMode: a link in the background can never ask for a password; a
/// host that needs one fails, and `tend doctor` shows ssh's words.
pub fn feed_argv(r: &RemoteConfig, link: &LinkConfig) -> Vec<String> {
    let mut v = vec![
        ssh_program(),
        "-T".into(),
        "-o".into(),
        "BatchMode=yes".into(),
        "-o".into(),
        format!("ServerAliveInterval={}", link.keepalive.as_secs().max(1)),
        "-o".into(),
        "ServerAliveCountMax=3".into(),
        "-o".into(),
        format!("ConnectTimeout={}", link.keepalive.as_secs().max(1) * 3),
    ];
    v.extend(r.ssh_options.iter().cloned());
    v.push(r.dest.clone());
    // The remote shell reads this line: the tend command is the user's
    // own shell text, the rest is fixed.
    v.push(format!("{} events --feed", r.tend()));
    v
}

/// The command a local window runs to show a remote pane: a tmux client on
/// the remote server, attached to the pane's session, its window and pane
/// selected.
pub fn attach_argv(
    r: &RemoteConfig,
    tmux_socket: Option<&str>,
    window: &str,
    pane: &str,
) -> Vec<String> {
    let mut v = vec![ssh_program(), "-t".into()];
    v.extend(r.ssh_options.iter().cloned());
    v.push(r.dest.clone());
    let mut tmux: Vec<String> = vec!["tmux".into()];
    if let Some(s) = tmux_socket {
        tmux.push("-S".into());
        tmux.push(s.into());
    }
    for w in [
        "attach-session",
        "-t",
        pane,
        ";",
        "select-window",
        "-t",
        window,
        ";",
        "select-pane",
        "-t",
        pane,
    ] {
        tmux.push(w.into());
    }
    v.push(shell_join(&tmux));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn remote(dest: &str) -> RemoteConfig {
        RemoteConfig {
            dest: dest.into(),
            tend_command: None,
            ssh_options: vec![],
        }
    }

    #[test]
    fn names_and_ids() {
        for ok in ["build-box", "vm1", "a.b_c"] {
            assert_eq!(check_name(ok), Ok(()));
        }
        for bad in ["", "-x", "a:b", "a b", "%3", &"x".repeat(33)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert_eq!(split_id("build-box:%3"), Some(("build-box", "%3")));
        assert_eq!(split_id("%3"), None);
        assert_eq!(split_id("main:1"), None);
        assert!(remote("-oProxyCommand=x").validate().is_err());
        assert!(remote("a b").validate().is_err());
    }

    #[test]
    fn commands() {
        let r = RemoteConfig {
            dest: "box".into(),
            tend_command: Some("TEND_TMUX_SOCKET=w tend".into()),
            ssh_options: vec!["-F".into(), "/c".into()],
        };
        let link = LinkConfig::default();
        let feed = feed_argv(&r, &link);
        assert_eq!(feed[1], "-T");
        assert_eq!(&feed[feed.len() - 4..feed.len() - 2], ["-F", "/c"]);
        assert_eq!(feed[feed.len() - 2], "box");
        assert_eq!(
            feed[feed.len() - 1],
            "TEND_TMUX_SOCKET=w tend events --feed"
        );
        let a = attach_argv(&r, Some("/tmp/tmux-0/x y"), "@2", "%3");
        assert_eq!(
            a[a.len() - 1],
            "tmux -S '/tmp/tmux-0/x y' attach-session -t %3 ';' select-window -t @2 ';' select-pane -t %3"
        );
    }

    #[test]
    fn a_feed_silence_shorter_than_two_heartbeats_is_refused() {
        let mut link = LinkConfig::default();
        assert_eq!(link.feed_silence, Duration::from_secs(45));
        assert_eq!(link.validate(), Ok(()));
        link.feed_silence = Duration::from_secs(29);
        assert_eq!(
            link.validate(),
            Err(
                "feed_silence = 29s: a quiet remote writes a heartbeat every 15s; use at least 30s"
                    .into()
            )
        );
        link.feed_silence = Duration::from_secs(30);
        assert_eq!(link.validate(), Ok(()));
    }
}
