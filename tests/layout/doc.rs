//! docs/layout.md kept true: its two generated blocks — who imports whom between top-level
//! modules, and every source file with the first sentence of its `//!` — are what the tree
//! holds now. `FSMLOG_BLESS=1 cargo test --test layout` writes them anew.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{name, read_crate, relative, rust_files};

const LAYOUT: &str = "docs/layout.md";

/// The first sentence of a file's `//!` paragraph, or `None` where it has none.
fn first_sentence(text: &str) -> Option<String> {
    let mut sentence = String::new();
    for line in text.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            break;
        };
        let doc = doc.trim();
        if doc.is_empty() {
            break;
        }
        if !sentence.is_empty() {
            sentence.push(' ');
        }
        sentence.push_str(doc);
        if let Some(end) = sentence.find(". ") {
            sentence.truncate(end + 1);
            break;
        }
    }
    (!sentence.is_empty()).then(|| sentence.replace('|', "\\|"))
}

/// Every `.rs` under `src/` with its first sentence; the files without a `//!` apart.
fn files() -> (String, Vec<String>) {
    let mut table = String::from("| file | what it is for (its `//!`) |\n|---|---|\n");
    let mut undocumented = Vec::new();
    for path in rust_files() {
        let rel = relative(&path);
        if !rel.starts_with("src/") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        match first_sentence(&text) {
            Some(sentence) => table.push_str(&format!("| `{rel}` | {sentence} |\n")),
            None => undocumented.push(rel),
        }
    }
    (table, undocumented)
}

/// The arrows between top-level modules, each module's row in the order data flows (a module
/// after every module that imports it).
fn arrows() -> String {
    let krate = read_crate();
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for names in krate.modules.keys().filter(|n| n.len() == 1) {
        imports.entry(name(names)).or_default();
    }
    for (a, b) in krate.arrows() {
        let (Some(a), Some(b)) = (a.first(), b.first()) else {
            continue;
        };
        if a != b {
            imports.entry(a.clone()).or_default().insert(b.clone());
        }
    }
    // Depth: the longest chain of imports below a module; the one-way test rules out circles.
    fn depth(m: &str, imports: &BTreeMap<String, BTreeSet<String>>) -> usize {
        imports.get(m).map_or(0, |i| {
            i.iter().map(|b| 1 + depth(b, imports)).max().unwrap_or(0)
        })
    }
    let mut order: Vec<(&String, &BTreeSet<String>)> = imports.iter().collect();
    order.sort_by_key(|(m, _)| (std::cmp::Reverse(depth(m, &imports)), (*m).clone()));
    let mut table = String::from("| module | imports |\n|---|---|\n");
    for (module, imports) in order {
        let list: Vec<String> = imports.iter().map(|b| format!("`{b}`")).collect();
        let list = if list.is_empty() {
            "nothing of the crate".to_string()
        } else {
            list.join(", ")
        };
        table.push_str(&format!("| `{module}` | {list} |\n"));
    }
    table
}

/// `doc` with the block between `<!-- begin NAME -->` and `<!-- end NAME -->` replaced.
fn replace_block(doc: &str, block: &str, body: &str) -> String {
    let begin = format!("<!-- begin {block} (written by tests/layout/doc.rs) -->\n");
    let end = format!("<!-- end {block} -->");
    let start = doc
        .find(&begin)
        .unwrap_or_else(|| panic!("{LAYOUT} has no `{}`", begin.trim()));
    let stop = doc[start..]
        .find(&end)
        .unwrap_or_else(|| panic!("{LAYOUT} has no `{end}`"))
        + start;
    format!("{}{begin}{body}{}", &doc[..start], &doc[stop..])
}

#[test]
fn the_layout_doc_holds_every_file_and_every_arrow() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(LAYOUT);
    let doc = std::fs::read_to_string(&path).unwrap();
    let (files, undocumented) = files();
    assert!(
        undocumented.is_empty(),
        "without a `//!` saying what the file is for:\n{}",
        undocumented.join("\n")
    );
    let want = replace_block(&doc, "arrows", &arrows());
    let want = replace_block(&want, "files", &files);
    if std::env::var_os("FSMLOG_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    if want != doc {
        let first = want
            .lines()
            .zip(doc.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(doc.lines().count()));
        panic!(
            "{LAYOUT} is not the tree's: first difference at line {}:\n  doc:  {}\n  tree: {}\n\
             (`FSMLOG_BLESS=1 cargo test --test layout` writes it anew; read the diff)",
            first + 1,
            doc.lines().nth(first).unwrap_or(""),
            want.lines().nth(first).unwrap_or("")
        );
    }
}

#[test]
fn a_first_sentence_ends_at_its_full_stop_and_a_pipe_is_escaped() {
    let text = "//! One job: a | b.\n//! Second sentence.\nuse x;\n";
    assert_eq!(first_sentence(text).unwrap(), "One job: a \\| b.");
    let text = "//! Runs over\n//! two lines\n//!\n//! later\n";
    assert_eq!(first_sentence(text).unwrap(), "Runs over two lines");
    assert_eq!(first_sentence("use x;\n"), None);
}
