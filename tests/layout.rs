//! The house's shape: data flows one way. Every path a source file names into the
//! crate (`use crate::…`, `super::…`, `self::…`, in `use` items and in expressions alike) is
//! an arrow from that file to the file that defines what it names. No arrow may run back up
//! to a module that holds the file (a reader importing from its dispatcher), no arrows may go
//! round in a circle, and no command imports another. Test modules (`#[cfg(test)]`) are left
//! out: they test their parent.
//!
//! `cargo test --test layout -- --nocapture` prints every arrow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

#[path = "layout/doc.rs"]
mod doc;
#[path = "layout/formats.rs"]
mod formats;
#[path = "layout/middle.rs"]
mod middle;
#[path = "layout/words.rs"]
mod words;

/// A module of the crate: its path of names from the root, and the file it lives in.
#[derive(Debug, Clone)]
struct Module {
    names: Vec<String>,
    file: PathBuf,
}

struct Crate {
    /// By path of names.
    modules: BTreeMap<Vec<String>, Module>,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// Reads the module tree from `lib.rs` down, following `mod x;` to `x.rs` or `x/mod.rs`
/// (or a `#[path]`).
fn read_crate() -> Crate {
    let mut modules = BTreeMap::new();
    let mut todo = vec![(Vec::<String>::new(), src().join("lib.rs"))];
    while let Some((names, file)) = todo.pop() {
        let text = std::fs::read_to_string(&file).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let dir = if names.is_empty() || file.ends_with("mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for item in &ast.items {
            let syn::Item::Mod(m) = item else { continue };
            if is_test(&m.attrs) {
                continue;
            }
            let name = m.ident.to_string();
            if m.content.is_some() {
                continue;
            }
            let child = [
                dir.join(format!("{name}.rs")),
                dir.join(&name).join("mod.rs"),
            ]
            .into_iter()
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no file for mod {name} in {}", file.display()));
            let mut child_names = names.clone();
            child_names.push(name);
            todo.push((child_names, child));
        }
        modules.insert(names.clone(), Module { names, file });
    }
    Crate { modules }
}

/// Every path into the crate a file names, outside its test modules.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl Paths {
    fn add_use(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.add_use(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                self.0.push(path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.0.push(path);
            }
            syn::UseTree::Glob(_) => self.0.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.add_use(tree, prefix);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if !is_test(&u.attrs) {
            self.add_use(&u.tree, &mut Vec::new());
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        // A lone `crate`, `super` or `self` is a visibility (`pub(crate)`), not an import.
        if p.segments.len() > 1 {
            self.0
                .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Paths inside macro calls (`$crate::…` in our own macros, `crate::…` in arguments).
        let text = m.tokens.to_string();
        for start in text.match_indices("crate ::").map(|(i, _)| i) {
            let path: Vec<String> = text[start..]
                .split("::")
                .map(|s| s.trim().trim_start_matches('$').to_string())
                .take_while(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .collect();
            self.0.push(path);
        }
        syn::visit::visit_macro(self, m);
    }
}

impl Crate {
    /// The module a path from module `from` leads into: the deepest module it names (an item
    /// of a module is in that module's file).
    fn resolve(&self, from: &[String], path: &[String]) -> Option<Vec<String>> {
        let (mut at, rest): (Vec<String>, &[String]) = match path.first()?.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "super" => {
                let mut at = from.to_vec();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    at.pop()?;
                    rest = &rest[1..];
                }
                (at, rest)
            }
            "self" => (from.to_vec(), &path[1..]),
            _ => return None,
        };
        for name in rest {
            let mut deeper = at.clone();
            deeper.push(name.clone());
            if self.modules.contains_key(&deeper) {
                at = deeper;
            } else {
                break;
            }
        }
        Some(at)
    }

    /// Every arrow: (from module, to module), between different files.
    fn arrows(&self) -> BTreeSet<(Vec<String>, Vec<String>)> {
        let mut arrows = BTreeSet::new();
        for module in self.modules.values() {
            let text = std::fs::read_to_string(&module.file).unwrap();
            let ast = syn::parse_file(&text).unwrap();
            let mut paths = Paths::default();
            paths.visit_file(&ast);
            for path in paths.0 {
                let Some(to) = self.resolve(&module.names, &path) else {
                    continue;
                };
                if to != module.names {
                    arrows.insert((module.names.clone(), to));
                }
            }
        }
        arrows
    }
}

fn name(names: &[String]) -> String {
    if names.is_empty() {
        "crate".to_string()
    } else {
        names.join("::")
    }
}

/// The modules on circles of arrows (strongly connected components of more than one).
fn circles(arrows: &BTreeSet<(Vec<String>, Vec<String>)>) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&Vec<String>, Vec<&Vec<String>>> = BTreeMap::new();
    for (a, b) in arrows {
        next.entry(a).or_default().push(b);
    }
    let nodes: BTreeSet<&Vec<String>> = arrows.iter().flat_map(|(a, b)| [a, b]).collect();
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for m in next.get(n).into_iter().flatten() {
                if seen.insert(*m) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for n in &nodes {
        if done.contains(n) || !reaches[n].contains(n) {
            continue;
        }
        let circle: Vec<String> = nodes
            .iter()
            .filter(|m| reaches[n].contains(*m) && reaches[*m].contains(*n))
            .map(|m| {
                done.insert(*m);
                name(m)
            })
            .collect();
        found.push(circle);
    }
    found
}

#[test]
fn data_flows_one_way() {
    let krate = read_crate();
    assert!(krate.modules.len() > 20, "the module tree was read");
    let arrows = krate.arrows();
    for (a, b) in &arrows {
        println!("{} -> {}", name(a), name(b));
    }
    let mut problems = Vec::new();
    for (a, b) in &arrows {
        if a.starts_with(b) {
            problems.push(format!(
                "{} imports from {}, which holds it: an arrow back up (import from the file that defines it)",
                name(a),
                name(b)
            ));
        }
        // `commands::shared` is how every command ends and `commands::job` how every reading
        // command begins: neither is a command.
        let command = |m: &Vec<String>| {
            m.len() >= 2 && m[0] == "commands" && m[1] != "shared" && m[1] != "job"
        };
        if command(a) && command(b) && a[1] != b[1] {
            problems.push(format!(
                "{} imports {}: no command imports another",
                name(a),
                name(b)
            ));
        }
    }
    for circle in circles(&arrows) {
        problems.push(format!("a circle: {}", circle.join(" ⇄ ")));
    }
    // The layers too: docs/layout.md draws the top-level modules in the order data flows.
    let layers: BTreeSet<(Vec<String>, Vec<String>)> = arrows
        .iter()
        .filter_map(|(a, b)| Some((vec![a.first()?.clone()], vec![b.first()?.clone()])))
        .filter(|(a, b)| a != b)
        .collect();
    for circle in circles(&layers) {
        problems.push(format!("a circle between layers: {}", circle.join(" ⇄ ")));
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_a_circle_and_an_arrow_up() {
    let v = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    let arrows: BTreeSet<_> = [
        (v("a"), v("b")),
        (v("b"), v("c")),
        (v("c"), v("a")),
        (v("c"), v("d")),
    ]
    .into_iter()
    .collect();
    assert_eq!(circles(&arrows), vec![vec!["a", "b", "c"]]);
    let krate = read_crate();
    let from = v("input::table");
    assert_eq!(
        krate.resolve(&from, &v("super::record::MachineLog")),
        Some(v("input::record"))
    );
    assert_eq!(
        krate.resolve(&from, &v("super::FileContext")),
        Some(v("input"))
    );
    assert_eq!(
        krate.resolve(&from, &v("crate::event::Event")),
        Some(v("event"))
    );
}

/// Every Rust file of the crate, its tests, benches, examples and fuzz targets.
fn rust_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut todo: Vec<PathBuf> = ["src", "tests", "benches", "bench", "examples", "fuzz"]
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect();
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    todo.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .display()
        .to_string()
}

/// Only the command line and the commands know clap: the types it parses into are the
/// crate's own (`cli/values.rs` names them for clap).
#[test]
fn clap_stays_in_the_command_line() {
    let mut problems = Vec::new();
    for path in rust_files() {
        let name = relative(&path);
        let allowed = name.starts_with("src/cli/")
            || name.starts_with("src/commands/")
            || name == "src/main.rs"
            || !name.starts_with("src/");
        let text = std::fs::read_to_string(&path).unwrap();
        if !allowed && text.contains("clap") {
            problems.push(format!("{name} names clap"));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Commands hand their output to a sink and what they have to tell to their ending; none
/// prints on its own.
#[test]
fn commands_print_nothing_themselves() {
    let printing = [
        "println!",
        "print!",
        "eprintln!",
        "eprint!",
        "io::stdout",
        "io::stderr",
        "std::process::exit",
    ];
    let mut problems = Vec::new();
    for path in rust_files() {
        let name = relative(&path);
        if !name.starts_with("src/commands/") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            for p in printing {
                if line.contains(p) {
                    problems.push(format!("{name}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// A file past 600 lines has taken on a second job.
#[test]
fn no_file_is_over_600_lines() {
    let mut problems = Vec::new();
    for path in rust_files() {
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        if lines > 600 {
            problems.push(format!("{}: {lines} lines", relative(&path)));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The repository names only what it ships: no reference to a behaviour document that is not
/// in it.
#[test]
fn no_reference_the_repository_cannot_open() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output();
    let Some(output) = output.ok().filter(|o| o.status.success()) else {
        // Not a git checkout (a packaged crate): nothing to look through.
        return;
    };
    let word = ["SP", "EC"].concat();
    let mut problems = Vec::new();
    for name in output.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        let Ok(text) = std::fs::read(root.join(&name)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&text);
        for (n, line) in text.lines().enumerate() {
            if line
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == word)
            {
                problems.push(format!("{name}:{}", n + 1));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}
