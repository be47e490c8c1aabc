//! Remotes over a real OpenSSH server on localhost: a second tmux server
//! (with its own tend daemon, started by the feed) stands in for the
//! remote host. Its waiting agent counts in the local status line, `tend
//! jump` opens a local window attached to it through ssh, and stopping
//! sshd (and its connections) makes it `unreachable` until sshd is back.

use crate::support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use support::{corpus, tend_bin, wait_until, Env};

const SSHD: &str = "/usr/sbin/sshd";
const HOST_ALIAS: &str = "tend-remote-test";

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the tools are here. Missing tools fail the test under CI and
/// skip it loudly elsewhere.
fn tools_or_skip(test: &str) -> bool {
    let mut missing = Vec::new();
    if !Path::new(SSHD).exists() {
        missing.push("sshd (openssh-server)");
    }
    for t in ["ssh", "ssh-keygen"] {
        if !have(t) {
            missing.push(t);
        }
    }
    if !have("tmux") {
        missing.push("tmux");
    }
    if missing.is_empty() {
        return true;
    }
    support::skip(
        test,
        &format!(
            "missing {}; scripts/test.sh installs them",
            missing.join(", ")
        ),
    );
    false
}

/// A private sshd on a free port, with its own host key and an
/// authorized_keys holding one fresh key; an ssh_config naming it.
struct Sshd {
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
}

fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .expect("ssh-keygen");
    assert!(
        out.status.success(),
        "ssh-keygen: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Sshd {
    fn new(dir: &Path) -> Sshd {
        let dir = dir.join("ssh");
        std::fs::create_dir_all(&dir).expect("mkdir ssh");
        keygen(&dir.join("host_key"));
        keygen(&dir.join("client_key"));
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys"))
            .expect("authorized_keys");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let user = String::from_utf8(
            Command::new("id")
                .arg("-un")
                .output()
                .expect("id -un")
                .stdout,
        )
        .expect("user name")
        .trim()
        .to_owned();
        let d = dir.display();
        std::fs::write(
            dir.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\n\
                 AuthorizedKeysFile {d}/authorized_keys\nPidFile {d}/sshd.pid\n\
                 StrictModes no\nUsePAM no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 PermitRootLogin prohibit-password\nLogLevel VERBOSE\n"
            ),
        )
        .expect("sshd_config");
        let host_pub = std::fs::read_to_string(dir.join("host_key.pub")).expect("host key");
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {host_pub}"),
        )
        .expect("known_hosts");
        std::fs::write(
            dir.join("ssh_config"),
            format!(
                "Host {HOST_ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n\
                 IdentityFile {d}/client_key\n  IdentitiesOnly yes\n\
                 UserKnownHostsFile {d}/known_hosts\n  GlobalKnownHostsFile /dev/null\n\
                 StrictHostKeyChecking yes\n  LogLevel ERROR\n"
            ),
        )
        .expect("ssh_config");
        // sshd refuses to start as root without its privilege separation
        // directory (normally made by the service's unit).
        let _ = std::fs::create_dir_all("/run/sshd");
        let mut s = Sshd {
            dir,
            port,
            child: None,
        };
        s.start();
        s
    }

    fn config(&self) -> PathBuf {
        self.dir.join("ssh_config")
    }

    fn ssh_works(&self) -> bool {
        Command::new("ssh")
            .arg("-F")
            .arg(self.config())
            .args(["-o", "BatchMode=yes", HOST_ALIAS, "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn start(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("sshd.log"))
            .expect("sshd log");
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(self.dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start sshd");
        self.child = Some(child);
        let up = wait_until(20, || self.ssh_works());
        assert!(
            up,
            "sshd on port {} does not let the test key in; its log: {}",
            self.port,
            std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
        );
    }

    /// Stops the listener and every connection it forked: each remote
    /// session ends as if the network had gone.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let sessions = sshd_descendants(child.id());
        let _ = child.kill();
        let _ = child.wait();
        for pid in sessions {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The sshd processes below `root` (one per connection, and their
/// privilege-separated children), not the programs they run.
fn sshd_descendants(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut comm: HashMap<u32, String> = HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let ppid: u32 = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        children.entry(ppid).or_default().push(pid);
        comm.insert(
            pid,
            std::fs::read_to_string(e.path().join("comm"))
                .unwrap_or_default()
                .trim()
                .to_owned(),
        );
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for c in children.get(&p).cloned().unwrap_or_default() {
            if comm.get(&c).is_some_and(|n| n.starts_with("sshd")) {
                out.push(c);
                todo.push(c);
            }
        }
    }
    out
}

/// The remote's tend: its own directories and tmux server, as the shell
/// on the far side of ssh runs it.
fn remote_tend_command(remote: &Env) -> String {
    let d = remote.path();
    format!(
        "env XDG_RUNTIME_DIR={} XDG_STATE_HOME={} XDG_CONFIG_HOME={} HOME={} TEND_TMUX_SOCKET={} {}",
        d.join("run").display(),
        d.join("state").display(),
        d.join("config").display(),
        d.join("home").display(),
        remote.name,
        tend_bin()
    )
}

fn remote_pane(env: &Env, id: &str) -> Option<serde_json::Value> {
    let list = env.list_json();
    list.as_array()?.iter().find(|p| p["pane"] == id).cloned()
}

#[test]
fn remote_agent_joins_the_status_line_and_survives_sshd_going_away() {
    if !tools_or_skip("remote_agent_joins_the_status_line_and_survives_sshd_going_away") {
        return;
    }
    let local = Env::new("rlocal");
    let remote = Env::new("rremote");
    let mut sshd = Sshd::new(local.path());

    // The remote machine: an agent waiting for approval.
    let cast = corpus("claude/approval").join("pane.cast");
    let pane = remote.window("main", &remote.play_cmd("claude", &cast, 600));
    let window = remote.tmux_out(&["display-message", "-p", "-t", &pane, "#{window_id}"]);

    let cfg = sshd.config();
    let out = local.tend_ok(&[
        "remote",
        "add",
        "box",
        HOST_ALIAS,
        "--tend-command",
        &remote_tend_command(&remote),
        "--ssh-option=-F",
        &format!("--ssh-option={}", cfg.display()),
    ]);
    assert!(
        out.starts_with("added remote box (tend-remote-test) to "),
        "{out}"
    );
    // Errors name the problem.
    let dup = local.tend(&["remote", "add", "box", "elsewhere"]);
    assert!(
        String::from_utf8_lossy(&dup.stderr).contains("a remote named box exists already"),
        "{}",
        String::from_utf8_lossy(&dup.stderr)
    );
    let bad = local.tend(&["remote", "add", "a:b", "elsewhere"]);
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("`a:b` is not a usable remote name"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let unknown = local.tend(&["remote", "remove", "nope"]);
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no remote named nope"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    // Quick retries, so that the test waits for the recovery, not for
    // the default backoff.
    let file = local.path().join("config/tend/config.toml");
    let mut text = std::fs::read_to_string(&file).expect("config written");
    text.push_str("\n[remote_link]\nkeepalive = \"2s\"\nreconnect_max = \"1s\"\n");
    std::fs::write(&file, text).expect("config");

    local.tend_ok(&["start"]);
    let id = format!("box:{pane}");
    let counted = wait_until(60, || {
        local.global_option("@tend_needs") == "1"
            && local.global_option("@tend_summary") == "1 agent needs you · 1 on box"
    });
    assert!(
        counted,
        "needs {:?}, summary {:?}, remotes {}, list {}",
        local.global_option("@tend_needs"),
        local.global_option("@tend_summary"),
        String::from_utf8_lossy(&local.tend(&["remote", "list", "--json"]).stdout),
        local.list_json()
    );
    let p = remote_pane(&local, &id).expect("the remote pane is listed");
    assert_eq!(p["host"], "box");
    assert_eq!(p["agent"], "claude");
    assert_eq!(p["state"], "waiting");
    assert_eq!(p["reason"], "approval");
    assert_eq!(p["session"], "main");
    let got = local.tend_ok(&["get", &id, "--json"]);
    let got: serde_json::Value = serde_json::from_str(&got).expect("get --json");
    assert_eq!(got["pane"], id.as_str());
    assert_eq!(local.tend_ok(&["next"]).trim(), id);
    let listed = local.tend_ok(&["remote", "list"]);
    assert!(listed.contains("up · 1 agent"), "{listed}");
    // A remote pane refuses what only its own machine can do, saying so.
    let refused = local.tend(&["approve", &id]);
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("is on remote box"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    // The jump: a local window named for the remote session, whose ssh
    // attaches a client to the remote pane.
    local.tend_ok(&["jump"]);
    let attached = wait_until(30, || {
        remote.tmux_out(&[
            "list-clients",
            "-F",
            "#{session_name} #{window_id} #{pane_id}",
        ]) == format!("main {window} {pane}")
    });
    assert!(
        attached,
        "remote clients {:?}, local windows {:?}",
        remote.tmux_out(&[
            "list-clients",
            "-F",
            "#{session_name} #{window_id} #{pane_id}"
        ]),
        local.tmux_out(&[
            "list-windows",
            "-a",
            "-F",
            "#{window_name} #{pane_current_command}"
        ])
    );
    let windows = local.tmux_out(&["list-windows", "-a", "-F", "#{window_name}"]);
    assert_eq!(
        windows.lines().filter(|w| *w == "box:main").count(),
        1,
        "{windows}"
    );
    // Jumping again reuses the window.
    local.tend_ok(&["jump"]);
    let again = wait_until(30, || {
        remote.tmux_out(&["list-clients", "-F", "#{pane_id}"]) == pane
    });
    assert!(again);
    let windows = local.tmux_out(&["list-windows", "-a", "-F", "#{window_name}"]);
    assert_eq!(
        windows.lines().filter(|w| *w == "box:main").count(),
        1,
        "{windows}"
    );

    // sshd and its connections go: the pane stays, unreachable, and makes
    // no demand.
    sshd.stop();
    let down = wait_until(60, || {
        local.global_option("@tend_summary") == "box unreachable"
    });
    assert!(
        down,
        "summary {:?}, list {}",
        local.global_option("@tend_summary"),
        local.list_json()
    );
    assert_eq!(local.global_option("@tend_needs"), "0");
    let p = remote_pane(&local, &id).expect("still listed while unreachable");
    assert_eq!(p["state"], "unreachable");
    assert_eq!(p["band"], "unreachable");
    assert_eq!(p["reason"], serde_json::Value::Null);
    let next = local.tend(&["next"]);
    assert!(
        !next.status.success(),
        "nothing needs you while unreachable"
    );
    // The link's end may read "closed by remote host"; the next attempt
    // finds no sshd, and doctor shows ssh's own words for it.
    let mut doctor = String::new();
    let refused = wait_until(30, || {
        let out = local.tend(&["doctor"]);
        doctor = String::from_utf8_lossy(&out.stdout).into_owned();
        doctor.contains("box (tend-remote-test): unreachable: ")
            && doctor.contains("Connection refused")
    });
    assert!(refused, "{doctor}");

    // sshd is back: the link recovers by itself.
    sshd.start();
    let back = wait_until(60, || {
        local.global_option("@tend_summary") == "1 agent needs you · 1 on box"
    });
    assert!(
        back,
        "summary {:?}, remotes {}",
        local.global_option("@tend_summary"),
        String::from_utf8_lossy(&local.tend(&["remote", "list", "--json"]).stdout)
    );
    assert_eq!(
        remote_pane(&local, &id).expect("listed")["state"],
        "waiting"
    );

    // Removing the remote drops its panes and its link.
    local.tend_ok(&["remote", "remove", "box"]);
    let gone = wait_until(30, || remote_pane(&local, &id).is_none());
    assert!(gone, "{}", local.list_json());
    assert_eq!(local.global_option("@tend_needs"), "0");
}
