//! Identity with real processes in a real tmux pane: the procfs sampler
//! reads the pane's tree, the resolver and the hysteresis decide.
//!
//! Every test runs its own tmux server on a private socket
//! (`tmux -L tend-test-…`), killed when the test ends, even on failure.
//! Fake agents are small scripts in a temporary folder that sleep; they are
//! shaped like the real ones (a node script under the package's folder, a
//! python entry point, a symlinked native binary, a shell launcher).
//!
//! `TEND_TEST_REAL_AGENTS=1` adds a tier that runs the real CLIs installed
//! under the folders of `$TEND_AGENT_DIRS` (`:`-separated), else
//! `$AGENTS_DIR` (default `/opt/agents`, see the agentlab's `setup.sh`);
//! it is skipped otherwise.

use crate::support;
use support::shell::{Shell, ShellOptions};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tend_detector::identity::{ChangeReason, SamplePolicy, Source};
use tend_detector::Registry;
use tend_platform::sampler::{PaneWatch, Sampler, WatchUpdate};

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        || Command::new(tool)
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
}

/// One pane under watch: the tmux server, the temp folder, the sampler.
struct Harness {
    tmux: Shell,
    dir: tempfile::TempDir,
    sampler: Sampler,
    registry: Registry,
    watch: PaneWatch,
    start: Instant,
    updates: Vec<WatchUpdate>,
}

impl Harness {
    /// `None` (with a notice) where tmux is not installed.
    fn new(name: &str) -> Option<Harness> {
        Self::with_env(name, &[])
    }

    fn with_env(name: &str, env: &[(&str, String)]) -> Option<Harness> {
        let dir = tempfile::tempdir().expect("temp dir");
        let bin = dir.path().join("bin");
        let venv = dir.path().join("venv/bin");
        std::fs::create_dir_all(&bin).expect("bin");
        std::fs::create_dir_all(&venv).expect("venv");
        let path = [bin, venv];
        let opts = ShellOptions {
            home: Some(dir.path()),
            path: &path,
            env,
        };
        let tmux = Shell::start(&format!("identity-{name}"), &opts)?;
        let start = Instant::now();
        let watch = PaneWatch::new(
            tmux.pane_pid(),
            0,
            Duration::ZERO,
            SamplePolicy::default(),
            Sampler::ticks_per_sec(),
        );
        Some(Harness {
            tmux,
            dir,
            sampler: Sampler::new(),
            registry: Registry::bundled(),
            watch,
            start,
            updates: Vec::new(),
        })
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes an executable file.
    fn script(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
        set_mode(&p, 0o755);
        p
    }

    /// One sample now.
    fn step(&mut self) -> WatchUpdate {
        let at = self.start.elapsed();
        let prompt = self.tmux.prompt_visible();
        let up = self
            .watch
            .sample_now(&mut self.sampler, &self.registry, at, prompt);
        self.updates.push(up.clone());
        up
    }

    /// Samples every 100 ms until `pred` holds; panics after `secs`.
    fn until(
        &mut self,
        secs: u64,
        what: &str,
        mut pred: impl FnMut(&WatchUpdate, &PaneWatch) -> bool,
    ) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let up = self.step();
            if pred(&up, &self.watch) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}\nlast: {:#?}\nevidence: {:#?}\nscreen:\n{}",
                self.updates.last(),
                self.watch.evidence(),
                self.tmux.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until `agent` is committed and returns nothing; the evidence
    /// is then checked by the caller.
    fn expect_agent(&mut self, agent: &str) {
        self.until(15, &format!("identity {agent}"), |_, w| w.agent().is_some());
        assert_eq!(
            self.watch.agent(),
            Some(agent),
            "evidence: {:#?}",
            self.watch.evidence()
        );
        // Committed at the first sample that names it by image, package
        // path or TEND_AGENT; by process name alone after two.
        let e = self.watch.evidence();
        let strong = e.matched.as_ref().is_some_and(|m| m.is_strong());
        assert!(e.agreeing >= if strong { 1 } else { 2 }, "{e:#?}");
        // It was committed exactly once, to this agent.
        let changes: Vec<_> = self
            .updates
            .iter()
            .filter_map(|u| u.change.clone())
            .collect();
        assert_eq!(changes.len(), 1, "{changes:#?}");
        assert_eq!(changes[0].to.as_deref(), Some(agent));
        assert_eq!(changes[0].reason, ChangeReason::Agreed);
    }
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The real python interpreter (not a version manager's shim script).
fn python() -> Option<String> {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (!p.is_empty()).then_some(p)
}

/// A copy of a native binary (`sleep`) under another name.
fn copy_native(dst: &Path) {
    let sleep = ["/usr/bin/sleep", "/bin/sleep"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("sleep");
    std::fs::create_dir_all(dst.parent().expect("parent")).expect("mkdir");
    std::fs::copy(std::fs::canonicalize(sleep).expect("sleep path"), dst).expect("copy");
    set_mode(dst, 0o755);
}

const NODE_SLEEPS: &str = "setInterval(() => {}, 1000);\n";

#[test]
fn node_script_in_the_claude_package_is_claude() {
    if !have("node") {
        support::skip("identity_tmux", "node is not installed");
        return;
    }
    let Some(mut h) = Harness::new("node-claude") else {
        return;
    };
    let cli = h.script("node_modules/@anthropic-ai/claude-code/cli.js", NODE_SLEEPS);
    h.tmux.type_line(&format!("node {}", cli.display()));
    h.expect_agent("claude");
    let m = h.watch.evidence().matched.expect("match");
    assert_eq!(
        (m.via.as_str(), m.key.as_str()),
        ("package", "@anthropic-ai/claude-code")
    );
    assert_eq!(m.source, Source::Argv(1));
    assert_ne!(m.pid, h.watch.shell_pid());
}

#[test]
fn python_entry_point_named_aider() {
    let Some(py) = python() else {
        support::skip("identity_tmux", "python3 is not installed");
        return;
    };
    let Some(mut h) = Harness::new("py-aider") else {
        return;
    };
    h.script(
        "venv/bin/aider",
        &format!("#!{py}\nimport time\ntime.sleep(1000)\n"),
    );
    h.tmux.type_line("aider --yes-always");
    h.expect_agent("aider");
    let m = h.watch.evidence().matched.expect("match");
    assert_eq!(m.via, "executable");
    assert_eq!(m.source, Source::Argv(1), "{m:?}");
}

#[test]
fn symlinked_binary_named_codex() {
    let Some(mut h) = Harness::new("symlink-codex") else {
        return;
    };
    let native = h.path("vendor/x86_64-unknown-linux-musl/native-tool");
    copy_native(&native);
    std::os::unix::fs::symlink(&native, h.path("bin/codex")).expect("symlink");
    h.tmux.type_line("codex 1000");
    h.expect_agent("codex");
    let m = h.watch.evidence().matched.expect("match");
    assert_eq!((m.via.as_str(), m.key.as_str()), ("executable", "codex"));
    // The image is the link's target; argv and comm name the link.
    let snap = h.sampler.sample(h.watch.shell_pid()).expect("sample");
    let p = snap.procs.iter().find(|p| p.pid == m.pid).expect("process");
    assert!(p.exe.ends_with("/native-tool"), "{p:?}");
    assert_eq!(p.comm, "codex");
}

#[test]
fn npm_bin_symlink_is_resolved_to_the_package() {
    if !have("node") {
        support::skip("identity_tmux", "node is not installed");
        return;
    }
    let Some(mut h) = Harness::new("npm-bin") else {
        return;
    };
    let target = h.script(
        "node_modules/@openai/codex/bin/codex.js",
        &format!("#!/usr/bin/env node\n{NODE_SLEEPS}"),
    );
    let link = h.path("node_modules/.bin/cx");
    std::fs::create_dir_all(link.parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink("../@openai/codex/bin/codex.js", &link).expect("symlink");
    h.tmux.type_line(&link.display().to_string());
    h.expect_agent("codex");
    let m = h.watch.evidence().matched.expect("match");
    // Nothing in argv names codex: only the link's target does.
    assert_eq!(
        (m.via.as_str(), m.source),
        ("package", Source::ScriptTarget),
        "{m:?}"
    );
    let target = std::fs::canonicalize(target).expect("target");
    assert_eq!(m.value, target.display().to_string());
}

#[test]
fn sh_c_exec_gemini() {
    let Some(mut h) = Harness::new("sh-gemini") else {
        return;
    };
    h.script("bin/gemini", "#!/bin/sh\nsleep 1000\n");
    h.tmux.type_line("sh -c 'exec gemini --yolo'");
    h.expect_agent("gemini");
    let m = h.watch.evidence().matched.expect("match");
    assert_eq!((m.via.as_str(), m.key.as_str()), ("executable", "gemini"));
    // The shell script itself, not its `sleep` child.
    let snap = h.sampler.sample(h.watch.shell_pid()).expect("sample");
    let p = snap.procs.iter().find(|p| p.pid == m.pid).expect("process");
    assert_eq!(p.depth, 1, "{snap:#?}");
}

#[test]
fn a_process_that_renames_itself_keeps_its_identity() {
    let Some(py) = python() else {
        support::skip("identity_tmux", "python3 is not installed");
        return;
    };
    let Some(mut h) = Harness::new("title") else {
        return;
    };
    // prctl(PR_SET_NAME) changes comm (the title `ps` and tmux show).
    h.script(
        "venv/bin/aider",
        &format!(
            "#!{py}\nimport ctypes, time\nctypes.CDLL(None).prctl(15, b'vim', 0, 0, 0)\ntime.sleep(1000)\n"
        ),
    );
    h.tmux.type_line("aider");
    h.expect_agent("aider");
    let pid = h.watch.evidence().matched.expect("match").pid;
    // The rename has happened by now (the identity did not depend on it).
    h.until(10, "comm renamed", |u, _| {
        u.resolution.is_some()
            && std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "vim")
    });
    assert_eq!(h.watch.agent(), Some("aider"));
    let m = h.watch.evidence().matched.expect("match");
    assert_eq!(m.source, Source::Argv(1));
}

#[test]
fn exec_a_title_does_not_hide_the_image() {
    let Some(mut h) = Harness::new("exec-a") else {
        return;
    };
    let native = h.path("node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    copy_native(&native);
    h.tmux.type_line(&format!(
        "bash -c 'exec -a fake-title {} 1000'",
        native.display()
    ));
    h.expect_agent("claude");
    // The first sample may catch `bash -c` before its exec (its argv names
    // the same program, a strong match that commits at once); once the
    // exec has happened the image must still name it, whatever argv[0] says.
    h.until(5, "a sample after the exec", |_, w| {
        w.evidence()
            .matched
            .is_some_and(|m| m.source == Source::Exe)
    });
    let m = h.watch.evidence().matched.expect("match");
    assert_eq!(
        (m.via.as_str(), m.source),
        ("package", Source::Exe),
        "{m:?}"
    );
    let snap = h.sampler.sample(h.watch.shell_pid()).expect("sample");
    let p = snap.procs.iter().find(|p| p.pid == m.pid).expect("process");
    assert_eq!(p.argv.first().map(String::as_str), Some("fake-title"));
}

#[test]
fn env_hint_on_a_plain_sleep() {
    let Some(mut h) = Harness::new("env-hint") else {
        return;
    };
    h.tmux.type_line("TEND_AGENT=claude sleep 1000");
    h.expect_agent("claude");
    let m = h.watch.evidence().matched.expect("match");
    assert_eq!(
        (m.via.as_str(), m.key.as_str()),
        ("env", "TEND_AGENT=claude")
    );
}

#[test]
fn a_background_agent_is_not_the_pane_agent() {
    if !have("node") {
        support::skip("identity_tmux", "node is not installed");
        return;
    }
    let Some(mut h) = Harness::new("background") else {
        return;
    };
    let cli = h.script("node_modules/@anthropic-ai/claude-code/cli.js", NODE_SLEEPS);
    h.tmux.type_line(&format!("node {} &", cli.display()));
    // Wait until the background job is in the tree, then keep sampling.
    h.until(10, "the background node", |u, _| {
        u.resolution.as_ref().is_some_and(|r| r.examined >= 2)
    });
    for _ in 0..5 {
        let up = h.step();
        let r = up.resolution.expect("resolution");
        assert!(r.shell_foreground(), "{r:?}");
        assert!(r.agent.is_none(), "{r:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(h.watch.agent(), None);
    h.tmux.type_line("kill %1");
}

#[test]
fn identity_drops_when_the_shell_comes_back() {
    if !have("node") {
        support::skip("identity_tmux", "node is not installed");
        return;
    }
    let Some(mut h) = Harness::new("shell-back") else {
        return;
    };
    let cli = h.script(
        "node_modules/@anthropic-ai/claude-code/cli.js",
        "setTimeout(() => process.exit(0), 3000);\n",
    );
    h.tmux.type_line(&format!("node {}", cli.display()));
    h.expect_agent("claude");
    assert!(
        h.updates
            .iter()
            .any(|u| u.observation.as_ref().is_some_and(|o| o.agent_alive)),
        "the detector heard the agent alive"
    );
    h.until(15, "the identity dropped", |u, _| u.change.is_some());
    let change = h
        .updates
        .iter()
        .rev()
        .find_map(|u| u.change.clone())
        .expect("change");
    assert_eq!(
        (change.from.as_deref(), change.to.as_deref()),
        (Some("claude"), None)
    );
    assert_eq!(change.reason, ChangeReason::ShellBack);
    assert!(
        h.updates
            .iter()
            .any(|u| u.observation.as_ref().is_some_and(|o| !o.agent_alive)),
        "the detector heard the agent end"
    );
    // It stays dropped while the shell holds the terminal.
    for _ in 0..3 {
        let up = h.step();
        assert!(up.resolution.expect("resolution").shell_foreground());
    }
    assert_eq!(h.watch.agent(), None);
}

#[test]
fn the_schedule_samples_on_foreground_change() {
    let Some(mut h) = Harness::new("schedule") else {
        return;
    };
    h.tmux.type_line("TEND_AGENT=codex sleep 1000");
    // Drive the pane with `poll` only (as the daemon does): the probe sees
    // the new foreground group and the schedule samples at once, then
    // confirms.
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut samples = 0;
    let mut probes = 0;
    while h.watch.agent().is_none() {
        assert!(
            Instant::now() < deadline,
            "no identity: {:#?}",
            h.watch.evidence()
        );
        let at = h.start.elapsed();
        h.watch.on_output(at);
        let up = h.watch.poll(&mut h.sampler, &h.registry, at, false);
        samples += usize::from(up.sampled);
        probes += usize::from(up.probed);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(h.watch.agent(), Some("codex"));
    assert!(samples <= 8, "sampled {samples} times");
    println!("schedule: {probes} probes, {samples} samples");
}

#[test]
fn a_printing_agent_is_not_probed_and_its_end_is_reported_by_the_kernel() {
    let Some(mut h) = Harness::new("exitwatch") else {
        return;
    };
    h.tmux.type_line("TEND_AGENT=codex sleep 1000");
    h.until(15, "identity codex", |_, w| w.agent().is_some());
    // The agent prints steadily (as a working one does): with its job's
    // end watched by a pidfd, no probe of the shell is taken.
    let leader = {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let at = h.start.elapsed();
            h.watch.on_output(at);
            h.watch.poll(&mut h.sampler, &h.registry, at, false);
            if let Some(pid) = h.sampler.exits.watching(0) {
                break pid;
            }
            assert!(Instant::now() < deadline, "the job's end is not watched");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    assert_ne!(leader, h.tmux.pane_pid(), "the job, not the shell");
    let mut probes = 0;
    for _ in 0..20 {
        let at = h.start.elapsed();
        h.watch.on_output(at);
        probes += usize::from(h.watch.poll(&mut h.sampler, &h.registry, at, false).probed);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(probes, 0, "a second of printing probed the shell");
    assert!(h.sampler.exits.take_ended().is_empty(), "still running");
    // The agent ends: the kernel says so, and the next poll samples the
    // shell back in the foreground.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(leader as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let ended = loop {
        let ended = h.sampler.exits.take_ended();
        if !ended.is_empty() {
            break ended;
        }
        assert!(Instant::now() < deadline, "the end was not reported");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(ended, [0]);
    let at = h.start.elapsed();
    h.watch.exit_seen(at);
    let up = h.watch.poll(&mut h.sampler, &h.registry, at, true);
    assert!(up.sampled, "the end is sampled at once");
    // The shell takes its terminal back once it has reaped the job, which
    // can come after the kernel said the job ended: a sample between the
    // two still finds the ended job in the foreground (and its end is
    // reported again). Once the shell is back, nothing is watched.
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.sampler.exits.watching(0).is_some() {
        assert!(
            Instant::now() < deadline,
            "still watching {:?} ten seconds after the job ended",
            h.sampler.exits.watching(0)
        );
        std::thread::sleep(Duration::from_millis(20));
        let at = h.start.elapsed();
        if !h.sampler.exits.take_ended().is_empty() {
            h.watch.exit_seen(at);
        }
        h.watch.poll(&mut h.sampler, &h.registry, at, true);
    }
}

/// The opt-in tier: the real agent CLIs, where installed.
#[test]
fn real_agents_are_identified() {
    if std::env::var("TEND_TEST_REAL_AGENTS").as_deref() != Ok("1") {
        println!("identity_tmux: real agents skipped (set TEND_TEST_REAL_AGENTS=1)");
        return;
    }
    let dirs = support::offline::agent_dirs();
    // (agent, program under an agents dir, npm package whose version the
    // daemon must read, when it is one)
    let agents = [
        ("claude", "node_modules/.bin/claude", None),
        ("codex", "node_modules/.bin/codex", None),
        ("gemini", "node_modules/.bin/gemini", None),
        ("aider", "venv/bin/aider", None),
        // Pi renames itself to `pi` (argv and comm) once it has loaded: the
        // version comes from the script while it shows, else from the
        // program the shell ran. Pi 1.x is published under a new name
        // (below); 0.73 and older under this one.
        (
            "pi",
            "node_modules/.bin/pi",
            Some("node_modules/@mariozechner/pi-coding-agent/package.json"),
        ),
        ("qwen", "node_modules/.bin/qwen", None),
        ("opencode", "node_modules/.bin/opencode", None),
        ("kilo", "node_modules/.bin/kilo", None),
        (
            "grok",
            "node_modules/.bin/grok",
            Some("node_modules/@vibe-kit/grok-cli/package.json"),
        ),
        (
            "continue",
            "node_modules/.bin/cn",
            Some("node_modules/@continuedev/cli/package.json"),
        ),
        // Kimi CLI renames its process 'Kimi Code' (comm and argv).
        ("kimi", "venv/bin/kimi", None),
        // Mistral Vibe's launcher execs its Rust TUI, `vibe-rs`.
        ("vibe", "venv/bin/vibe", None),
        // Cline CLI 3: a node wrapper that runs the Bun-compiled binary of
        // @cline/cli-linux-x64 (same version) in the pane.
        (
            "cline",
            "node_modules/.bin/cline",
            Some("node_modules/@cline/cli-linux-x64/package.json"),
        ),
    ];
    let mut ran = 0;
    for (agent, rel, package) in agents {
        let Some(base) = dirs.iter().find(|d| d.join(rel).exists()) else {
            support::skip(
                "identity_tmux",
                &format!(
                    "{agent} ({rel}) is not installed in {}",
                    std::env::join_paths(&dirs)
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_default()
                ),
            );
            continue;
        };
        let exe = base.join(rel);
        // Pi 1.x moved to @earendil-works (the package whose version the
        // daemon must read is the one installed).
        let package = package.map(|p| {
            let moved = p.replace("@mariozechner/", "@earendil-works/");
            if !base.join(p).exists() && base.join(&moved).exists() {
                moved
            } else {
                p.to_owned()
            }
        });
        // Offline: every model endpoint points at a closed local port,
        // dummy keys, first-run questions answered, no telemetry or update
        // checks (the same set-up as the exit_live tier).
        let env = support::offline::agent_env();
        let Some(mut h) = Harness::with_env(&format!("real-{agent}"), &env) else {
            return;
        };
        let home = h.dir.path().to_path_buf();
        support::offline::configure(&home, &home, &dirs);
        // The folder's own `node_modules/.bin` first on PATH, as for a user
        // who installed there: a `#!/usr/bin/env node` CLI then runs on
        // the Node installed beside it (Pi 1.x needs Node 22; setup.sh
        // installs one there).
        h.tmux.type_line(&format!(
            "PATH={}:$PATH {}",
            base.join("node_modules/.bin").display(),
            exe.display()
        ));
        h.until(45, &format!("real {agent}"), |_, w| w.agent().is_some());
        assert_eq!(h.watch.agent(), Some(agent), "{:#?}", h.watch.evidence());
        println!(
            "identity_tmux: real {agent}: {:?}, version {:?}",
            h.watch.evidence().matched,
            h.watch.version()
        );
        if let Some(package) = package {
            let meta = std::fs::read_to_string(base.join(&package))
                .unwrap_or_else(|e| panic!("{}: {e}", base.join(&package).display()));
            let v: serde_json::Value = serde_json::from_str(&meta).expect("package.json");
            assert_eq!(
                h.watch.version(),
                v["version"].as_str(),
                "{agent}'s version from its package metadata"
            );
        }
        ran += 1;
    }
    println!("identity_tmux: {ran} real agents identified");
    assert!(
        ran > 0,
        "TEND_TEST_REAL_AGENTS=1 but no agent CLI was found in {dirs:?}: install them with \
         tools/agentlab/setup.sh, or point TEND_AGENT_DIRS / AGENTS_DIR at their folders"
    );
}
