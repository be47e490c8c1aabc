//! Shell completions, manual pages and `--help` examples come from the
//! same clap definition as the parser: every command is in them.

use crate::support;

use std::process::Command;

use support::tend_bin;

fn tend(args: &[&str]) -> String {
    let out = Command::new(tend_bin())
        .args(args)
        .output()
        .expect("run tend");
    assert!(
        out.status.success(),
        "tend {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The visible commands, as `tend --help` lists them.
fn commands() -> Vec<String> {
    let help = tend(&["--help"]);
    let list = help
        .split("Commands:\n")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .expect("a command list");
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn completions_name_every_command() {
    let commands = commands();
    assert!(commands.iter().any(|c| c == "approve"), "{commands:?}");
    for shell in ["bash", "zsh", "fish"] {
        let script = tend(&["completions", shell]);
        for c in &commands {
            assert!(
                script.contains(c.as_str()),
                "{shell} completions lack `{c}`"
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tend.bash");
    std::fs::write(&path, tend(&["completions", "bash"])).unwrap();
    let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    // Loaded into bash (called as bash calls it: command, word, previous
    // word), `tend ap<Tab>` offers approve, and `tend ta<Tab>`
    // no hidden command (tap).
    let complete = |word: &str| {
        let script = format!(
            "source '{}'; COMP_WORDS=(tend {word}); COMP_CWORD=1; _tend tend {word} tend; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path.display()
        );
        let out = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(complete("ap"), "approve\n");
    assert_eq!(complete("ta"), "\n");
}

#[test]
fn man_pages_for_tend_and_each_command() {
    let page = tend(&["man"]);
    assert!(page.contains(".TH tend 1"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    let listed = tend(&["man", "--dir", dir.path().to_str().unwrap()]);
    let commands = commands();
    assert_eq!(listed.lines().count(), commands.len() + 1, "{listed}");
    for c in &commands {
        let text = std::fs::read_to_string(dir.path().join(format!("tend-{c}.1")))
            .unwrap_or_else(|e| panic!("tend-{c}.1: {e}"));
        assert!(text.contains(&format!(".TH tend-{c} 1")), "{text}");
    }
    let approve = std::fs::read_to_string(dir.path().join("tend-approve.1")).unwrap();
    assert!(approve.contains("tend approve"), "{approve}");
}

#[test]
fn scripted_commands_show_examples() {
    for c in ["wait", "prompt", "events", "approve", "completions"] {
        let help = tend(&[c, "--help"]);
        let examples = help
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("no examples in tend {c} --help"));
        assert!(
            examples
                .lines()
                .filter(|l| l.trim_start().starts_with(&format!("tend {c}")))
                .count()
                >= 2
                || c == "approve" && examples.contains("tend deny"),
            "tend {c} --help: {examples}"
        );
    }
}

/// `scripts/install-shell-files.sh` (run by `scripts/install.sh`) puts
/// each file where its shell or man looks, for this user.
#[test]
fn install_script_puts_files_where_shells_look() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let root = dir.path().join("root");
    std::fs::create_dir_all(&home).unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install-shell-files.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(tend_bin())
        .arg(&root)
        .env("HOME", &home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for (path, marker) in [
        (".local/share/bash-completion/completions/tend", "_tend()"),
        (".config/fish/completions/tend.fish", "complete -c tend"),
    ] {
        let text = std::fs::read_to_string(home.join(path)).unwrap_or_default();
        assert!(text.contains(marker), "{path}: {text:.200}");
    }
    let said = String::from_utf8_lossy(&out.stdout);
    let zsh = said
        .lines()
        .find_map(|l| l.strip_prefix("zsh completions: "))
        .and_then(|l| l.split(" (").next())
        .expect("where the zsh file went");
    assert!(zsh.starts_with(home.to_str().unwrap()), "{zsh}");
    assert!(std::fs::read_to_string(zsh)
        .unwrap()
        .starts_with("#compdef tend"));
    assert!(root.join("share/man/man1/tend.1").exists());
    assert!(root.join("share/man/man1/tend-approve.1").exists());
}
