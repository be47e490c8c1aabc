//! The house rules, checked over the repository's own sources.

use std::path::{Path, PathBuf};

use tend_house::length::{functions, LIMIT};
use tend_house::modules::{circles, name, Crate};
use tend_house::reach::names_from;

/// The repository's top folder.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("house/ sits in the repository")
        .to_path_buf()
}

/// Every crate root of the workspace's members and the zellij plugin:
/// `src/lib.rs`, `src/main.rs`, `tests/tests.rs`, each bench.
fn crate_roots() -> Vec<PathBuf> {
    let root = repo();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let members = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("a members list");
    let mut dirs: Vec<PathBuf> = members
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|m| root.join(m))
        .collect();
    dirs.push(root.join("zellij-plugin"));
    let mut out = Vec::new();
    for dir in dirs {
        for file in ["src/lib.rs", "src/main.rs", "tests/tests.rs"] {
            let f = dir.join(file);
            if f.exists() {
                out.push(f);
            }
        }
        if let Ok(benches) = std::fs::read_dir(dir.join("benches")) {
            out.extend(
                benches
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "rs")),
            );
        }
    }
    assert!(out.len() > 20, "found only {out:?}");
    out
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let mut found = Vec::new();
    for root in crate_roots() {
        let krate = Crate::read(&root).expect("the crate reads");
        for circle in circles(&krate.uses()) {
            let uses: Vec<String> = circle
                .iter()
                .map(|u| {
                    let at = u.at.0.strip_prefix(repo()).unwrap_or(&u.at.0);
                    format!(
                        "{} uses {} ({}:{})",
                        name(&u.from),
                        name(&u.to),
                        at.display(),
                        u.at.1
                    )
                })
                .collect();
            let rel = root
                .strip_prefix(repo())
                .unwrap_or(&root)
                .display()
                .to_string();
            let mut modules: Vec<String> = circle.iter().map(|u| name(&u.from)).collect();
            modules.sort();
            modules.dedup();
            found.push(format!(
                "in {rel} ({}):\n  {}",
                modules.join(" "),
                uses.join("\n  ")
            ));
        }
    }
    assert!(
        found.is_empty(),
        "import circles (move what both sides need into a module of its own, \
         or pass it in):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_function_on_the_main_paths_is_longer_than_the_limit() {
    let mut long = Vec::new();
    for dir in ["core", "daemon", "tend/src"] {
        for file in rust_files(&repo().join(dir)) {
            let text = std::fs::read_to_string(&file).expect("reads");
            for f in functions(&text).into_iter().filter(|f| f.lines > LIMIT) {
                let rel = file.strip_prefix(repo()).unwrap_or(&file).display();
                long.push(format!("{rel}:{} {} ({} lines)", f.line, f.name, f.lines));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LIMIT} lines (split them into named steps):\n{}",
        long.join("\n")
    );
}

/// What `tend/src` may take from `tend_daemon`: the entry points that make
/// the binary the daemon's parts (`tend daemon`, `tend tap`, and `tend
/// stop`'s clean-up when no daemon is left). Everything else the commands
/// learn from a running daemon travels in `tend-protocol`'s types.
const DAEMON_ENTRY_POINTS: [&str; 4] = ["run", "Options", "run_tap", "clean_up"];

#[test]
fn the_command_line_takes_only_the_daemons_entry_points() {
    let mut reached = Vec::new();
    for file in rust_files(&repo().join("tend/src")) {
        let text = std::fs::read_to_string(&file).expect("reads");
        let rel = file
            .strip_prefix(repo())
            .unwrap_or(&file)
            .display()
            .to_string();
        for n in names_from(&text, "tend_daemon") {
            if !DAEMON_ENTRY_POINTS.contains(&n.name.as_str()) {
                reached.push(format!("{rel}:{} tend_daemon::{}", n.line, n.name));
            }
        }
        for n in names_from(&text, "tend_core") {
            reached.push(format!("{rel}:{} tend_core::{}", n.line, n.name));
        }
    }
    assert!(
        reached.is_empty(),
        "tend/src reaches into the daemon (ask the daemon over tend-protocol, \
         or move what both need into tend-config):\n{}",
        reached.join("\n")
    );
    let manifest = std::fs::read_to_string(repo().join("tend/Cargo.toml")).expect("reads");
    let deps = manifest
        .split("\n[")
        .find(|s| s.starts_with("dependencies]"))
        .expect("tend has dependencies");
    assert!(
        !deps
            .lines()
            .any(|l| l.trim_start().starts_with("tend-core")),
        "tend depends on tend-core, which the command line does not use"
    );
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
