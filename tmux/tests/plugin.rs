//! The TPM entry `tend.tmux`, run by a real tmux server.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{read, wait_until, TestServer, DEADLINE};
use tend_tmux::escape::{format_escape_hash, shell_quote};

const PLUGIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tend.tmux");

/// A plugin directory with the script and a stand-in `bin/tend` that
/// records how it was called.
fn plugin_dir(t: &TestServer, with_binary: bool) -> std::path::PathBuf {
    let dir = t.path("plugin, with #odd 'name'");
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::copy(PLUGIN, dir.join("tend.tmux")).unwrap();
    if with_binary {
        let record = t.path("called");
        let fake = format!(
            "#!/bin/sh\nprintf '%s|%s\\n' \"$TEND_TMUX_SOCKET\" \"$*\" >> '{}'\n",
            record.display()
        );
        write_exec(&dir.join("bin/tend"), &fake);
    }
    dir
}

fn write_exec(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn plugin_starts_tend_for_this_server() {
    let t = TestServer::start();
    let dir = plugin_dir(&t, true);
    let script = dir.join("tend.tmux");
    t.tmux_ok(&["run-shell", &run_shell_arg(&script)]);
    let socket = t.server.key();
    let expected = format!("{}|start", socket.display());
    assert!(
        wait_until(DEADLINE, || read(&t.path("called")).contains(&expected)),
        "{:?}",
        read(&t.path("called"))
    );
}

#[test]
fn plugin_explains_a_missing_binary() {
    let mut t = TestServer::start();
    let dir = plugin_dir(&t, false);
    let script = dir.join("tend.tmux");
    // Nowhere the script looks may hold a `tend`: a PATH without one, and
    // no cargo directories (CI builds into `$CARGO_TARGET_DIR`, and a
    // developer may have installed tend into `~/.cargo/bin`).
    let empty_home = t.path("empty-home");
    std::fs::create_dir_all(&empty_home).unwrap();
    let empty_home = empty_home.to_string_lossy().into_owned();
    // The tmux under test stays first on that PATH, as a user's own tmux
    // is: the script talks to its server with `tmux`, and a client older
    // than 3.6 cannot talk to a 3.6 or later server at all (3.6's imsg
    // header has a 32-bit length where the old one had 16 bits of length
    // and 16 of flags: the old client's message passing its stdin, flags 1,
    // reads as too long and the server drops the client, which says
    // "server exited unexpectedly"), so the system's tmux would hide the
    // message this test looks for.
    let tmux_dir = std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).find(|d| d.join("tmux").is_file()))
        .expect("a tmux on PATH");
    assert!(
        !tmux_dir.join("tend").exists(),
        "{} holds a tend",
        tmux_dir.display()
    );
    let path = format!("{}:/usr/bin:/bin", tmux_dir.display());
    t.tmux_ok(&["set-environment", "-g", "PATH", &path]);
    t.tmux_ok(&["set-environment", "-g", "HOME", &empty_home]);
    t.tmux_ok(&["set-environment", "-gu", "CARGO_HOME"]);
    t.tmux_ok(&["set-environment", "-gu", "CARGO_TARGET_DIR"]);
    t.attach_client("main");
    t.tmux_ok(&["run-shell", &run_shell_arg(&script)]);
    assert!(wait_until(DEADLINE, || t
        .typescript(0)
        .contains("tend program was not found")));
}

/// `run-shell` takes a shell command and expands formats in it first.
fn run_shell_arg(script: &Path) -> String {
    format_escape_hash(&shell_quote(&script.to_string_lossy()))
}
