//! One room for each thing, one word for each meaning: the processor-specific code lives in
//! `src/scan/` alone, a record read is taken in by the fleet's intake alone, a source file's
//! name says one thing wherever it stands, and the readers' callback is not called by the
//! output's word.

use std::collections::BTreeMap;
use std::path::Path;

use super::{relative, rust_files};

/// What names processor-specific code: only `src/scan/` may.
const ARCH: [&str; 4] = [
    "std::arch",
    "core::arch",
    "is_x86_feature_detected",
    "target_feature(enable",
];

/// File names several folders may each hold: the module tree's own.
const TREE: [&str; 2] = ["mod.rs", "tests.rs"];

/// File names that stand in two folders today, each read with its folder (`replay/log.rs`
/// beside `log.rs`, `collect/history.rs` beside `diagnose/history.rs`). The list only
/// shrinks: a new file takes a name of its own.
const KNOWN: [&str; 10] = [
    "direct.rs",
    "head.rs",
    "history.rs",
    "judge.rs",
    "lines.rs",
    "log.rs",
    "shapes.rs",
    "source.rs",
    "stream.rs",
    "trace.rs",
];

/// The hand-written SIMD stays in one room, behind safe functions.
#[test]
fn processor_specific_code_is_in_scan_alone() {
    let mut problems = Vec::new();
    for path in rust_files() {
        let name = relative(&path);
        if name.starts_with("src/scan/") || !name.starts_with("src/") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if ARCH.iter().any(|word| line.contains(word)) {
                problems.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Two files of one name in two folders are two meanings of one word (`order.rs` was the
/// order of a listing and of a log's rows), unless the name is the module tree's, a command's
/// (its arguments, its run, its view and its JSON share the word because they share the
/// subject), or one of the few [`KNOWN`].
#[test]
fn a_file_name_means_one_thing() {
    let commands: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .map(|n| n.strip_suffix(".rs").unwrap_or(&n).to_string() + ".rs")
            // How commands begin and end, and the folder's own: no command's name.
            .filter(|n| !["mod.rs", "shared.rs", "job.rs"].contains(&n.as_str()))
            .collect();
    let mut folders: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in rust_files() {
        let name = relative(&path);
        if !name.starts_with("src/") {
            continue;
        }
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        folders.entry(file).or_default().push(name);
    }
    let mut problems = Vec::new();
    for (file, paths) in &folders {
        let shared = TREE.contains(&file.as_str())
            || KNOWN.contains(&file.as_str())
            || commands.contains(file);
        if paths.len() > 1 && !shared {
            problems.push(format!("{file}: {}", paths.join(", ")));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    // The list is kept short: a name no longer doubled leaves it.
    for file in KNOWN {
        let n = folders.get(file).map_or(0, Vec::len);
        assert!(
            n > 1,
            "{file} stands in {n} folder(s) now: take it off KNOWN"
        );
    }
}

/// `Sink` is where output is written (src/sink.rs); the readers hand their records to `emit`.
#[test]
fn the_readers_emit_records_into_no_sink() {
    let mut problems = Vec::new();
    for path in rust_files() {
        let name = relative(&path);
        if !name.starts_with("src/input/") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let words = line.split(|c: char| !c.is_ascii_alphanumeric() && c != '_');
            if words.into_iter().any(|w| w == "sink") {
                problems.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The path a pattern names, for each alternative (`_` for a wildcard).
fn pattern_paths(pat: &syn::Pat, out: &mut Vec<String>) {
    let path = |p: &syn::Path| {
        p.segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("::")
    };
    match pat {
        syn::Pat::TupleStruct(p) => out.push(path(&p.path)),
        syn::Pat::Struct(p) => out.push(path(&p.path)),
        syn::Pat::Path(p) => out.push(path(&p.path)),
        syn::Pat::Wild(_) => out.push("_".to_string()),
        syn::Pat::Or(or) => or.cases.iter().for_each(|c| pattern_paths(c, out)),
        _ => {}
    }
}

/// Every `match` over a reader's records outside test modules: the patterns of its arms.
#[derive(Default)]
struct RecordMatches(Vec<Vec<String>>);

impl<'ast> syn::visit::Visit<'ast> for RecordMatches {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !super::is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        let mut arms = Vec::new();
        for arm in &m.arms {
            pattern_paths(&arm.pat, &mut arms);
        }
        if arms.iter().any(|p| p.starts_with("Record::")) {
            self.0.push(arms);
        }
        syn::visit::visit_expr_match(self, m);
    }
}

/// A record becomes a machine or a problem in one place, the fleet's intake: no fold files a
/// reader's error itself, and none lets a record fall through a wildcard (a silent drop). The
/// readers make records; the follower of a watched history reads a bad line as the sign to
/// read the history again whole.
#[test]
fn a_record_is_taken_in_in_one_place() {
    use syn::visit::Visit;
    let mut problems = Vec::new();
    for path in rust_files() {
        let name = relative(&path);
        let own = ["src/fleet/intake.rs", "src/fleet/follow.rs"];
        if !name.starts_with("src/")
            || name.starts_with("src/input/")
            || own.contains(&name.as_str())
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut matches = RecordMatches::default();
        matches.visit_file(&syn::parse_file(&text).unwrap());
        for arms in matches.0 {
            if arms.iter().any(|p| p == "Record::Error" || p == "_") {
                problems.push(format!("{name}: a match over records with {arms:?}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "records taken in outside fleet::take_in:\n{}",
        problems.join("\n")
    );
}
