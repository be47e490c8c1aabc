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
//! [`crate::daemon::remote`]); ssh, the user's ssh config and agent do
//! everything about reaching the host and authenticating. tend opens no
//! port and stores no credential. `docs/decisions/0008-remotes-over-ssh.md`
//! says why.

use std::path::Path;

use tend_tmux::escape::shell_join;

use crate::error::CliError;

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

// ---- editing config.toml ---------------------------------------------------

fn read_doc(path: &Path) -> Result<toml_edit::DocumentMut, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(CliError::new(
                "bad_config",
                format!("cannot read {}: {e}", path.display()),
            ))
        }
    };
    // The whole file must be a valid configuration before it is changed.
    crate::config::parse(&path.display().to_string(), &text)?;
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| CliError::new("bad_config", format!("{}: {e}", path.display())))
}

fn write_doc(path: &Path, doc: &toml_edit::DocumentMut) -> Result<(), CliError> {
    let text = doc.to_string();
    crate::config::parse(&path.display().to_string(), &text)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::new(
                "bad_config",
                format!("cannot create {}: {e}", dir.display()),
            )
        })?;
    }
    crate::daemon::store::write_atomic(path, &text)
        .map_err(|e| CliError::new("bad_config", e.to_string()))
}

/// Adds `[remotes.NAME]` to the file at `path`, keeping everything else
/// (comments included) as it was.
pub fn add(path: &Path, name: &str, r: &RemoteConfig) -> Result<(), CliError> {
    check_name(name).map_err(|e| CliError::new("bad_remote", e))?;
    r.validate()
        .map_err(|e| CliError::new("bad_remote", format!("remote {name}: {e}")))?;
    let mut doc = read_doc(path)?;
    let remotes = doc
        .entry("remotes")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| {
            CliError::new(
                "bad_config",
                format!("{}: `remotes` is not a table", path.display()),
            )
        })?;
    if remotes.contains_key(name) {
        return Err(CliError::new(
            "duplicate_remote",
            format!(
                "a remote named {name} exists already (see `tend remote list`); remove it first \
                 with `tend remote remove {name}`"
            ),
        ));
    }
    let mut t = toml_edit::Table::new();
    t.insert("dest", toml_edit::value(r.dest.as_str()));
    if let Some(c) = &r.tend_command {
        t.insert("tend_command", toml_edit::value(c.as_str()));
    }
    if !r.ssh_options.is_empty() {
        let mut a = toml_edit::Array::new();
        for o in &r.ssh_options {
            a.push(o.as_str());
        }
        t.insert("ssh_options", toml_edit::value(a));
    }
    remotes.insert(name, toml_edit::Item::Table(t));
    write_doc(path, &doc)
}

/// Removes `[remotes.NAME]`.
pub fn remove(path: &Path, name: &str) -> Result<(), CliError> {
    let mut doc = read_doc(path)?;
    let unknown = || {
        CliError::new(
            "unknown_remote",
            format!("no remote named {name} (see `tend remote list`)"),
        )
    };
    let remotes = doc
        .get_mut("remotes")
        .and_then(|i| i.as_table_mut())
        .ok_or_else(unknown)?;
    remotes.remove(name).ok_or_else(unknown)?;
    if remotes.is_empty() {
        doc.remove("remotes");
    }
    write_doc(path, &doc)
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
    fn add_and_remove_keep_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before =
            "# my settings\n[notifications]\n# quiet at night\nquiet_hours = \"22:00-07:00\"\n";
        std::fs::write(&path, before).unwrap();
        let r = RemoteConfig {
            dest: "me@build".into(),
            tend_command: Some("~/bin/tend".into()),
            ssh_options: vec!["-p".into(), "2222".into()],
        };
        add(&path, "build-box", &r).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            format!(
                "{before}\n[remotes.build-box]\ndest = \"me@build\"\ntend_command = \"~/bin/tend\"\nssh_options = [\"-p\", \"2222\"]\n"
            )
        );
        let cfg = crate::config::parse("c", &text).unwrap();
        assert_eq!(cfg.remotes.get("build-box"), Some(&r));
        let e = add(&path, "build-box", &remote("other")).unwrap_err();
        assert_eq!(e.code, "duplicate_remote");
        let e = add(&path, "bad:name", &remote("other")).unwrap_err();
        assert_eq!(e.code, "bad_remote");
        let e = remove(&path, "nope").unwrap_err();
        assert_eq!(e.code, "unknown_remote");
        remove(&path, "build-box").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
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
