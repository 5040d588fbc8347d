//! Each output format declared once: every enum of a command's `-o` formats is written by a
//! `formats!` table in `src/render/format.rs`, which the command line reads; no such enum is
//! written by hand, anywhere else, or named to clap one value at a time in a `values!` list.

use syn::visit::Visit;

use super::{relative, rust_files};

/// Where the output formats are declared.
const HOME: &str = "src/render/format.rs";

/// Enums named `…Format` that are not a command's `-o` formats: the input formats, and the
/// text formats a view prints in.
const NOT_OUTPUT: [(&str, &str); 2] = [("src/log.rs", "Format"), (HOME, "TextFormat")];

/// What one file declares and invokes that the rule looks at.
#[derive(Default)]
struct Seen {
    /// Enums written as items, by name.
    enums: Vec<String>,
    /// Macro invocations: the macro's name and the first name inside it.
    macros: Vec<(String, Option<String>)>,
}

impl<'ast> Visit<'ast> for Seen {
    fn visit_item_enum(&mut self, e: &'ast syn::ItemEnum) {
        self.enums.push(e.ident.to_string());
        syn::visit::visit_item_enum(self, e);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let name = m.path.segments.last().map(|s| s.ident.to_string());
        // Doc comments come first as `#[doc = …]`; the name after them is the type's.
        let first = m
            .parse_body_with(|input: syn::parse::ParseStream| {
                input.call(syn::Attribute::parse_outer)?;
                let name: syn::Ident = input.parse()?;
                input.step(|cursor| {
                    let mut rest = *cursor;
                    while let Some((_, next)) = rest.token_tree() {
                        rest = next;
                    }
                    Ok(((), rest))
                })?;
                Ok(name.to_string())
            })
            .ok();
        if let Some(name) = name {
            self.macros.push((name, first));
        }
    }
}

/// Whether an enum `name` declared in `file` is a command's output formats.
fn is_output_format(file: &str, name: &str) -> bool {
    name.ends_with("Format") && !NOT_OUTPUT.contains(&(file, name))
}

/// Whether a type named `name` elsewhere is one: the names the exceptions declare are not.
fn names_output_format(name: &str) -> bool {
    name.ends_with("Format") && !NOT_OUTPUT.iter().any(|(_, n)| *n == name)
}

/// What breaks the rule in `files` (path relative to the crate, source text).
fn problems(files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut tables = 0;
    for (file, text) in files {
        if !file.starts_with("src/") {
            continue;
        }
        let ast = syn::parse_file(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut seen = Seen::default();
        seen.visit_file(&ast);
        for name in &seen.enums {
            if is_output_format(file, name) {
                problems.push(format!(
                    "{file}: enum {name} written by hand, not by a formats! table in {HOME}"
                ));
            }
        }
        for (mac, first) in &seen.macros {
            match (mac.as_str(), first) {
                ("formats", _) if file == HOME => tables += 1,
                ("formats", _) => problems.push(format!("{file}: formats! outside {HOME}")),
                ("values", Some(name)) if names_output_format(name) => problems.push(format!(
                    "{file}: values!({name} …) names an output format again; clap reads its table"
                )),
                _ => {}
            }
        }
    }
    if tables == 0 && files.iter().any(|(f, _)| f == HOME) {
        problems.push(format!("{HOME}: no formats! table"));
    }
    problems
}

#[test]
fn each_output_format_is_declared_once() {
    let files: Vec<(String, String)> = rust_files()
        .iter()
        .map(|p| (relative(p), std::fs::read_to_string(p).unwrap()))
        .collect();
    let problems = problems(&files);
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The shape before issue 37: the enum written in render/format.rs and its names and help
/// again in cli/values.rs.
#[test]
fn the_checker_sees_a_format_declared_twice() {
    let file = |path: &str, text: &str| (path.to_string(), text.to_string());
    let twice = [
        file(
            HOME,
            "/// Output formats of `diff`.\npub enum DiffFormat { Table, Json }\n\
             pub enum TextFormat { Table }",
        ),
        file(
            "src/cli/values.rs",
            "values!(DiffFormat { Table = \"table\", Json = \"json\" });\n\
             values!(Format { Ndjson = \"ndjson\" });",
        ),
        file("src/log.rs", "pub enum Format { Ndjson }"),
        file("src/cli/watch.rs", "enum LogFormat { Text }"),
    ];
    let found = problems(&twice);
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(found[0].contains("enum DiffFormat written by hand"));
    assert!(found[1].contains("values!(DiffFormat"));
    assert!(found[2].contains("src/cli/watch.rs: enum LogFormat"));
    assert!(found[3].contains("no formats! table"));

    let once = [
        file(
            HOME,
            "formats!(\n/// Output formats of `diff`.\nDiffFormat { Table = \"table\" });",
        ),
        file("src/cli/values.rs", "from_tables!(DiffFormat);"),
        file("src/log.rs", "pub enum Format { Ndjson }"),
    ];
    assert_eq!(problems(&once), Vec::<String>::new());
}
