//! The house rules, checked over the repository's own sources.

use std::path::{Path, PathBuf};

use tend_house::length::{functions, LIMIT};
use tend_house::modules::{circles, name, Crate};

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
