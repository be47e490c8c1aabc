//! The modules of a crate and which of them use which: the graph whose
//! circles [`circles`] finds.
//!
//! A crate is read from its root file, following `mod x;` to `x.rs` or
//! `x/mod.rs`; an inline module (`mod tests { … }`) is a module of its
//! own, so a test module that uses its parent and a test helper beside it
//! is no circle. What counts as a use of module `m` by module `n`:
//!
//! * a `use` in `n` whose path leads into `m` (`use crate::m::X`,
//!   `use super::*`, `use child::X`);
//! * a path in `n`'s code that does (`crate::m::f()`, `super::m::T`,
//!   `child::f()` for a child module of `n`).
//!
//! A `pub use` (of any visibility) is a re-export: it is not a use by the
//! module that writes it, and a path through it leads to the module that
//! defines the item. A module's own children are not its uses until it
//! names one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::lex::{code_only, tokens, Token};

/// A module's path from the crate root (`[]` is the root).
pub type ModPath = Vec<String>;

/// One use of a module by another, where it is written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Use {
    /// The module that uses.
    pub from: ModPath,
    /// The module used.
    pub to: ModPath,
    /// The file and line of the first such use.
    pub at: (PathBuf, usize),
}

/// What one module declares and re-exports.
#[derive(Debug, Default)]
struct Module {
    children: BTreeSet<String>,
    items: BTreeSet<String>,
    /// `pub use` of one name: the name and the absolute path it stands for.
    reexports: BTreeMap<String, ModPath>,
    /// `pub use path::*`: absolute paths.
    globs: Vec<ModPath>,
    /// Names taken from other crates (`use tend_config::paths`, `pub use
    /// tokio::sync`): a path through one leaves this crate.
    foreign: BTreeSet<String>,
}

/// A crate's modules and the uses between them.
#[derive(Debug, Default)]
pub struct Crate {
    modules: BTreeMap<ModPath, Module>,
    /// Each file module's file and tokens.
    files: Vec<(ModPath, PathBuf, Vec<Token>)>,
}

/// One `use` tree flattened: a path (relative as written), whether it
/// ends in `*`, the name it binds.
struct UsePath {
    segs: Vec<String>,
    glob: bool,
    name: Option<String>,
}

impl Crate {
    /// Reads the crate whose root file is `root` (`src/lib.rs`,
    /// `tests/tests.rs`, …), following its `mod` declarations.
    pub fn read(root: &Path) -> std::io::Result<Crate> {
        let mut krate = Crate::default();
        let mut todo = vec![(Vec::new(), root.to_path_buf())];
        while let Some((path, file)) = todo.pop() {
            let text = std::fs::read_to_string(&file)?;
            let toks = tokens(&code_only(&text));
            for child in krate.declare(&path, &toks) {
                let dir = children_dir(&file, path.is_empty());
                let flat = dir.join(format!("{child}.rs"));
                let nested = dir.join(&child).join("mod.rs");
                let mut p = path.clone();
                p.push(child);
                todo.push((p, if flat.exists() { flat } else { nested }));
            }
            krate.files.push((path, file, toks));
        }
        Ok(krate)
    }

    /// Records the modules, items and re-exports a file declares; returns
    /// its file modules' names (`mod x;`).
    fn declare(&mut self, file_mod: &ModPath, toks: &[Token]) -> Vec<String> {
        self.modules.entry(file_mod.clone()).or_default();
        let mut files = Vec::new();
        let mut scope = Scope::new(file_mod);
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i].text;
            let next = toks.get(i + 1).map(|t| t.text.as_str());
            let after = toks.get(i + 2).map(|t| t.text.as_str());
            let here = scope.path();
            match (t.as_str(), next) {
                ("mod", Some(name)) if toks[i + 1].is_ident() => {
                    let mut child = here.clone();
                    child.push(name.to_owned());
                    self.module(&here).children.insert(name.to_owned());
                    self.module(&here).items.insert(name.to_owned());
                    if after == Some("{") {
                        self.module(&child);
                    } else {
                        files.push(name.to_owned());
                    }
                }
                (
                    "struct" | "enum" | "fn" | "trait" | "type" | "const" | "static" | "union",
                    Some(name),
                ) if toks[i + 1].is_ident() => {
                    self.module(&here).items.insert(name.to_owned());
                }
                ("macro_rules", Some("!")) => {
                    if let Some(name) = after {
                        self.module(&here).items.insert(name.to_owned());
                        // `#[macro_export]` puts it at the crate root.
                        if exported(toks, i) {
                            let mut at = here.clone();
                            at.push(name.to_owned());
                            self.module(&Vec::new())
                                .reexports
                                .insert(name.to_owned(), at);
                        }
                    }
                }
                ("use", _) => {
                    let (paths, _) = use_tree(toks, i + 1);
                    let public = is_pub(toks, i);
                    for u in paths {
                        let Some(abs) = self.absolute(&here, &u.segs) else {
                            if let (false, Some(name)) = (u.glob, u.name) {
                                self.module(&here).foreign.insert(name);
                            }
                            continue;
                        };
                        if !public {
                            continue;
                        }
                        let m = self.module(&here);
                        match (u.glob, u.name) {
                            (true, _) => m.globs.push(abs),
                            (false, Some(name)) => {
                                m.reexports.insert(name, abs);
                            }
                            (false, None) => {}
                        }
                    }
                }
                _ => {}
            }
            scope.step(toks, i);
            i += 1;
        }
        files
    }

    fn module(&mut self, path: &ModPath) -> &mut Module {
        self.modules.entry(path.clone()).or_default()
    }

    /// A path as written in module `here`, from the crate root; `None`
    /// for another crate's (or a name this reading cannot place).
    fn absolute(&self, here: &ModPath, segs: &[String]) -> Option<ModPath> {
        let first = segs.first()?;
        let (mut base, rest) = match first.as_str() {
            "crate" => (Vec::new(), &segs[1..]),
            "self" => (here.clone(), &segs[1..]),
            "super" => {
                let mut base = here.clone();
                let mut n = 0;
                while segs.get(n).is_some_and(|s| s == "super") {
                    base.pop()?;
                    n += 1;
                }
                (base, &segs[n..])
            }
            name => {
                let is_child = self
                    .modules
                    .get(here)
                    .is_some_and(|m| m.children.contains(name));
                if !is_child {
                    return None;
                }
                (here.clone(), segs)
            }
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module an absolute path leads to, through re-exports.
    fn target(&self, path: &[String], depth: usize) -> Option<ModPath> {
        if depth > 16 {
            return None;
        }
        let cut = (0..=path.len())
            .rev()
            .find(|&n| self.modules.contains_key(&path[..n]))?;
        let (module, rest) = (&path[..cut], &path[cut..]);
        let m = &self.modules[module];
        let Some(name) = rest.first() else {
            return Some(module.to_vec());
        };
        if m.items.contains(name) {
            return Some(module.to_vec());
        }
        if m.foreign.contains(name) {
            return None;
        }
        if let Some(to) = m.reexports.get(name) {
            let mut via = to.clone();
            via.extend(rest[1..].iter().cloned());
            return self.target(&via, depth + 1);
        }
        for g in &m.globs {
            let mut via = g.clone();
            via.extend(rest.iter().cloned());
            if let Some(t) = self.target(&via, depth + 1) {
                if self.defines(&via) {
                    return Some(t);
                }
            }
        }
        Some(module.to_vec())
    }

    /// Whether `path`'s last name is an item of the module before it.
    fn defines(&self, path: &[String]) -> bool {
        let Some((name, module)) = path.split_last() else {
            return false;
        };
        self.modules
            .get(module)
            .is_some_and(|m| m.items.contains(name) || m.reexports.contains_key(name))
    }

    /// Every use of one module by another, once per pair (the first
    /// place it is written).
    pub fn uses(&self) -> Vec<Use> {
        let mut seen = BTreeMap::new();
        for (file_mod, file, toks) in &self.files {
            for (here, segs, line) in self.paths_in(file_mod, toks) {
                let Some(abs) = self.absolute(&here, &segs) else {
                    continue;
                };
                let Some(to) = self.target(&abs, 0) else {
                    continue;
                };
                if to != here {
                    seen.entry((here, to))
                        .or_insert_with(|| (file.clone(), line));
                }
            }
        }
        seen.into_iter()
            .map(|((from, to), at)| Use { from, to, at })
            .collect()
    }

    /// The paths a file's code uses: each with the module it is written
    /// in (inline modules included) and its line. `pub use` is left out.
    fn paths_in(&self, file_mod: &ModPath, toks: &[Token]) -> Vec<(ModPath, Vec<String>, usize)> {
        let mut out = Vec::new();
        let mut scope = Scope::new(file_mod);
        let mut i = 0;
        while i < toks.len() {
            let here = scope.path();
            if toks[i].text == "use" {
                let (paths, end) = use_tree(toks, i + 1);
                if !is_pub(toks, i) {
                    for u in paths {
                        let mut segs = u.segs;
                        if segs.last().is_some_and(|s| s == "self") {
                            segs.pop();
                        }
                        out.push((here.clone(), segs, toks[i].line));
                    }
                }
                while i < end {
                    scope.step(toks, i);
                    i += 1;
                }
                continue;
            }
            if let Some(segs) = self.path_at(&here, toks, i) {
                out.push((here, segs, toks[i].line));
            }
            scope.step(toks, i);
            i += 1;
        }
        out
    }

    /// A path starting at token `i` that leads into this crate:
    /// `crate::…`, `super::…`, `self::…`, or `child::…`.
    fn path_at(&self, here: &ModPath, toks: &[Token], i: usize) -> Option<Vec<String>> {
        let t = &toks[i];
        if !t.is_ident() || toks.get(i + 1).map(|t| t.text.as_str()) != Some("::") {
            return None;
        }
        if i > 0 && matches!(toks[i - 1].text.as_str(), "::" | "." | "mod") {
            return None;
        }
        let local = matches!(t.text.as_str(), "crate" | "super" | "self")
            || self
                .modules
                .get(here)
                .is_some_and(|m| m.children.contains(&t.text));
        if !local {
            return None;
        }
        let mut segs = vec![t.text.clone()];
        let mut j = i + 1;
        while toks.get(j).map(|t| t.text.as_str()) == Some("::")
            && toks.get(j + 1).is_some_and(Token::is_ident)
        {
            segs.push(toks[j + 1].text.clone());
            j += 2;
        }
        Some(segs)
    }
}

/// Where `mod x;`'s file is looked for: beside the crate's root file or a
/// `mod.rs`, in the folder named after any other file.
fn children_dir(file: &Path, root: bool) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new("."));
    match file.file_stem().and_then(|s| s.to_str()) {
        Some(_) if root => dir.to_path_buf(),
        Some("mod") | None => dir.to_path_buf(),
        Some(stem) => dir.join(stem),
    }
}

/// Whether the attributes before token `i` hold `macro_export`.
fn exported(toks: &[Token], i: usize) -> bool {
    let mut j = i;
    while j >= 2 && toks[j - 1].text == "]" {
        let open = (0..j - 1).rev().find(|&k| toks[k].text == "[");
        let Some(open) = open.filter(|&o| o > 0 && toks[o - 1].text == "#") else {
            return false;
        };
        if toks[open..j].iter().any(|t| t.text == "macro_export") {
            return true;
        }
        j = open - 1;
    }
    false
}

/// Whether the `use` at `i` is a re-export: `pub use`, `pub(crate) use`.
fn is_pub(toks: &[Token], i: usize) -> bool {
    let mut j = i;
    if j > 0 && toks[j - 1].text == ")" {
        while j > 0 && toks[j - 1].text != "(" {
            j -= 1;
        }
        j = j.saturating_sub(1);
    }
    j > 0 && toks[j - 1].text == "pub"
}

/// Reads a `use` tree starting at `i` (after `use`) to its `;`: the
/// paths it names and the index after the `;`.
fn use_tree(toks: &[Token], i: usize) -> (Vec<UsePath>, usize) {
    let mut out = Vec::new();
    let end = (i..toks.len())
        .find(|&j| toks[j].text == ";")
        .unwrap_or(toks.len());
    let leading = toks.get(i).is_some_and(|t| t.text == "::");
    let start = if leading { i + 1 } else { i };
    if !leading {
        tree(&toks[start..end], &[], &mut out);
    }
    (out, end + 1)
}

/// One level of a use tree: `a::b::{c, d::e as f, g::*}`.
fn tree(toks: &[Token], prefix: &[String], out: &mut Vec<UsePath>) {
    let mut segs = prefix.to_vec();
    let mut j = 0;
    while j < toks.len() {
        let t = toks[j].text.as_str();
        match t {
            "::" | "," => j += 1,
            "*" => {
                out.push(UsePath {
                    segs: segs.clone(),
                    glob: true,
                    name: None,
                });
                return;
            }
            "{" => {
                let close = matching(toks, j);
                for part in split_top(&toks[j + 1..close]) {
                    tree(part, &segs, out);
                }
                return;
            }
            "as" => {
                let name = toks.get(j + 1).map(|t| t.text.clone());
                out.push(UsePath {
                    segs,
                    glob: false,
                    name: name.filter(|n| n != "_"),
                });
                return;
            }
            _ => {
                segs.push(t.to_owned());
                j += 1;
            }
        }
    }
    // `use a::{self}` binds `a`.
    let name = segs
        .last()
        .cloned()
        .filter(|n| n != "self")
        .or_else(|| segs.iter().rev().nth(1).cloned());
    if !segs.is_empty() {
        out.push(UsePath {
            segs,
            glob: false,
            name,
        });
    }
}

/// The index of the `}` that closes the `{` at `open`.
fn matching(toks: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// The comma-separated parts of a brace group's inside.
fn split_top(toks: &[Token]) -> Vec<&[Token]> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (j, t) in toks.iter().enumerate() {
        match t.text.as_str() {
            "{" => depth += 1,
            "}" => depth -= 1,
            "," if depth == 0 => {
                parts.push(&toks[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    parts.push(&toks[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// The inline modules open at a point of a file.
struct Scope {
    file_mod: ModPath,
    /// Each open inline module and the brace depth inside it.
    open: Vec<(String, usize)>,
    depth: usize,
    /// An inline module whose `{` is at this token index.
    pending: Option<(String, usize)>,
}

impl Scope {
    fn new(file_mod: &ModPath) -> Scope {
        Scope {
            file_mod: file_mod.clone(),
            open: Vec::new(),
            depth: 0,
            pending: None,
        }
    }

    fn path(&self) -> ModPath {
        let mut p = self.file_mod.clone();
        p.extend(self.open.iter().map(|(n, _)| n.clone()));
        p
    }

    /// Moves past token `i`.
    fn step(&mut self, toks: &[Token], i: usize) {
        match toks[i].text.as_str() {
            "mod" if toks.get(i + 2).is_some_and(|t| t.text == "{") => {
                self.pending = Some((toks[i + 1].text.clone(), i + 2));
            }
            "{" => {
                self.depth += 1;
                if let Some((name, at)) = self.pending.take() {
                    if at == i {
                        self.open.push((name, self.depth));
                    } else {
                        self.pending = Some((name, at));
                    }
                }
            }
            "}" => {
                if self.open.last().is_some_and(|(_, d)| *d == self.depth) {
                    self.open.pop();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            _ => {}
        }
    }
}

/// The circles among `uses`: each a list of modules that depend on each
/// other, with the uses that close it (Tarjan's strongly connected
/// components, those of more than one module).
pub fn circles(uses: &[Use]) -> Vec<Vec<Use>> {
    let mut nodes: Vec<&ModPath> = uses.iter().flat_map(|u| [&u.from, &u.to]).collect();
    nodes.sort();
    nodes.dedup();
    let index = |p: &ModPath| nodes.binary_search(&p).unwrap_or(0);
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for u in uses {
        next[index(&u.from)].push(index(&u.to));
    }
    let comps = tarjan(&next);
    comps
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            uses.iter()
                .filter(|u| c.contains(&index(&u.from)) && c.contains(&index(&u.to)))
                .cloned()
                .collect()
        })
        .collect()
}

/// Strongly connected components of a graph given as successor lists.
fn tarjan(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.next[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(comp);
        }
    }
    let n = next.len();
    let mut s = State {
        next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// A module path as Rust writes it: `crate::links`.
pub fn name(p: &ModPath) -> String {
    std::iter::once("crate")
        .chain(p.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate written into a fresh folder: `(file, text)` pairs, the
    /// first its root.
    fn krate(files: &[(&str, &str)]) -> Crate {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tend-house-{}-{n}", std::process::id()));
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
            std::fs::write(&path, text).expect("write");
        }
        let k = Crate::read(&dir.join(files[0].0)).expect("reads");
        std::fs::remove_dir_all(&dir).ok();
        k
    }

    fn pairs(k: &Crate) -> Vec<(String, String)> {
        k.uses()
            .into_iter()
            .map(|u| (name(&u.from), name(&u.to)))
            .collect()
    }

    fn circle_names(k: &Crate) -> Vec<Vec<String>> {
        circles(&k.uses())
            .iter()
            .map(|c| c.iter().map(|u| name(&u.from)).collect())
            .collect()
    }

    #[test]
    fn a_parent_and_a_child_that_use_each_other_are_a_circle() {
        let k = krate(&[
            (
                "lib.rs",
                "mod links;\nuse crate::links::Link;\npub struct Core { l: Link }\n",
            ),
            (
                "links.rs",
                "use crate::Core;\npub struct Link;\nimpl Core {}\n",
            ),
        ]);
        assert_eq!(
            pairs(&k),
            [
                ("crate".into(), "crate::links".into()),
                ("crate::links".into(), "crate".into())
            ]
        );
        assert_eq!(circle_names(&k), [["crate", "crate::links"]]);
    }

    #[test]
    fn a_facade_is_no_use_and_a_path_through_it_reaches_the_definer() {
        let k = krate(&[
            (
                "lib.rs",
                "mod effect;\nmod tick;\npub use effect::Effect;\npub(crate) use tick::*;\n",
            ),
            ("effect.rs", "pub enum Effect { A }\n"),
            ("tick.rs", "use crate::Effect;\npub fn tick() {}\n"),
        ]);
        assert_eq!(pairs(&k), [("crate::tick".into(), "crate::effect".into())]);
        assert!(circle_names(&k).is_empty());
    }

    #[test]
    fn paths_in_code_count_and_comments_do_not_and_inline_modules_are_their_own() {
        let k = krate(&[
            (
                "lib.rs",
                "mod a;\nmod b;\n/// See [`crate::b::B`].\npub fn f() { a::g(); }\n",
            ),
            (
                "a.rs",
                "pub fn g() { let s = \"crate::b\"; super::b::h(); }\n\
                 #[cfg(test)]\nmod tests { use super::*; use crate::b; }\n",
            ),
            (
                "b.rs",
                "pub fn h() {}\n#[cfg(test)]\nmod tests { use super::super::a; }\n",
            ),
        ]);
        assert_eq!(
            pairs(&k),
            [
                ("crate".into(), "crate::a".into()),
                ("crate::a".into(), "crate::b".into()),
                ("crate::a::tests".into(), "crate::a".into()),
                ("crate::a::tests".into(), "crate::b".into()),
                ("crate::b::tests".into(), "crate::a".into()),
            ]
        );
        assert!(circle_names(&k).is_empty());
    }

    #[test]
    fn an_exported_macro_belongs_to_the_module_that_defines_it() {
        let k = krate(&[
            (
                "lib.rs",
                "mod say;\nmod worker;\npub fn run() { worker::go(); }\n",
            ),
            (
                "say.rs",
                "/// Says.\n#[macro_export]\nmacro_rules! say { () => {} }\n",
            ),
            ("worker.rs", "pub fn go() { crate::say!(); }\n"),
        ]);
        assert_eq!(
            pairs(&k),
            [
                ("crate".into(), "crate::worker".into()),
                ("crate::worker".into(), "crate::say".into()),
            ]
        );
    }

    #[test]
    fn a_path_through_another_crate_s_module_leaves_the_crate() {
        let k = krate(&[
            (
                "lib.rs",
                "mod worker;\npub use tend_platform::sampler;\nuse tend_config::paths;\n\
                 pub fn run() { worker::go(); }\n",
            ),
            (
                "worker.rs",
                "use crate::sampler::Sampler;\npub fn go() { crate::paths::state_dir(); }\n",
            ),
        ]);
        assert_eq!(pairs(&k), [("crate".into(), "crate::worker".into())]);
    }

    #[test]
    fn a_glob_of_the_parent_is_a_use_of_it() {
        let k = krate(&[
            (
                "report/mod.rs",
                "mod word;\nuse word::Word;\npub struct Book;\n",
            ),
            ("report/word.rs", "use super::*;\npub struct Word;\n"),
        ]);
        assert_eq!(circle_names(&k), [["crate", "crate::word"]]);
    }
}
