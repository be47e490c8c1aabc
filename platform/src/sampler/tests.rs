//! The sampler's own part: agents' versions from package metadata, and
//! the program the shell ran (through the Linux source over a fake
//! `/proc`).

use tend_detector::Registry;

use super::*;

#[test]
fn agent_versions_from_package_metadata() {
    let dir = std::env::temp_dir().join(format!("tend-versions-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let nm = dir.join("node_modules");
    let write = |rel: &str, text: &str| {
        let f = dir.join(rel);
        std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
        std::fs::write(f, text).expect("write");
    };
    write(
        "node_modules/@openai/codex/package.json",
        r#"{"name": "@openai/codex", "version": "0.172.0"}"#,
    );
    write("node_modules/@openai/codex-linux-x64/vendor/bin/codex", "");
    write(
        "venv/lib/python3.11/site-packages/aider_chat-0.86.2.dist-info/METADATA",
        "Metadata-Version: 2.4\nName: aider-chat\nVersion: 0.86.2\n\nbody\n",
    );
    write("venv/bin/aider", "");
    let reg = Registry::bundled();
    let mut s = Sampler::new();
    let exe = nm.join("@openai/codex-linux-x64/vendor/bin/codex");
    let exe = exe.to_string_lossy();
    let codex = reg.get("codex").expect("codex");
    assert_eq!(s.agent_version(codex, &[&exe]).as_deref(), Some("0.172.0"));
    // Cached: the second look reads nothing.
    let before = s.files_read();
    assert_eq!(s.agent_version(codex, &[&exe]).as_deref(), Some("0.172.0"));
    assert_eq!(s.files_read(), before);
    let aider = reg.get("aider").expect("aider");
    let script = dir.join("venv/bin/aider");
    assert_eq!(
        s.agent_version(aider, &["/usr/bin/python3.11", &script.to_string_lossy()])
            .as_deref(),
        Some("0.86.2")
    );
    // Not an agent's package: nothing.
    let claude = reg.get("claude").expect("claude");
    assert_eq!(s.agent_version(claude, &[&exe]), None);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(target_os = "linux")]
#[test]
fn a_renamed_agent_is_found_by_the_program_the_shell_ran() {
    // Pi: argv `pi`, image node; only `_` (set by bash) names the
    // `.bin/pi` link into the package.
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("proc");
    crate::linux::procfs::tests::fake_proc(
        &root,
        &[(40, 1, 40, "pi", &["pi"], "/usr/bin/node")],
        true,
    );
    let pkg = dir
        .path()
        .join("node_modules/@mariozechner/pi-coding-agent");
    std::fs::create_dir_all(pkg.join("dist")).expect("mkdir");
    std::fs::write(pkg.join("dist/cli.js"), "").expect("cli");
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name": "@mariozechner/pi-coding-agent", "version": "0.73.1"}"#,
    )
    .expect("package.json");
    let bin = dir.path().join("node_modules/.bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(
        "../@mariozechner/pi-coding-agent/dist/cli.js",
        bin.join("pi"),
    )
    .expect("link");
    std::fs::write(
        root.join("40/environ"),
        format!("A=1\0_={}\0", bin.join("pi").display()),
    )
    .expect("environ");
    let reg = Registry::bundled();
    let pi = reg.get("pi").expect("pi");
    let mut s = Sampler::with_root(&root);
    assert_eq!(s.agent_version(pi, &["pi", "/usr/bin/node"]), None);
    let launched = s.launched_program(40).expect("the program the shell ran");
    assert!(
        launched.ends_with("/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"),
        "{launched}"
    );
    assert_eq!(s.agent_version(pi, &[&launched]).as_deref(), Some("0.73.1"));
    // Another agent's package is not read from it.
    let claude = reg.get("claude").expect("claude");
    assert_eq!(s.agent_version(claude, &[&launched]), None);
    // No `_`, or a relative one: nothing.
    std::fs::write(root.join("40/environ"), "A=1\0_=pi\0").expect("environ");
    assert_eq!(s.launched_program(40), None);
}
