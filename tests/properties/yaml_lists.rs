//! YAML lists as metalctl prints them, and the ways they go astray: the direct reader must
//! hand on what saphyr's parser's reading of the whole file does, or decline.

use fsmlog::{Exporter, Layout};
use proptest::prelude::*;

/// A list of a few generated machines as `metalctl machine list -o yaml` prints it, some
/// with what the v1 API holds besides events.
pub fn metalctl_list(seed: u64, machines: u64) -> String {
    let rules = fsmlog::Ruleset::resolve("metal-api").unwrap();
    let mut exporter = Exporter::new(Layout::ListYaml, Vec::new());
    for index in 0..machines {
        let m = fsmlog::sim::fleet::machine(seed, index, 12, &rules);
        let extra = if index % 2 == 0 {
            fsmlog::sim::details::details(seed, index)
        } else {
            serde_json::Map::new()
        };
        exporter.machine_with(&m.id, &m.container, &extra).unwrap();
    }
    String::from_utf8(exporter.finish().unwrap()).unwrap()
}

/// What a change puts in: lines and pieces of YAML that metalctl does not print, or prints
/// elsewhere.
fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "- id: m-x",
        "- event: Waiting",
        "  - event: Waiting",
        "  id: m-y",
        "  id: 42",
        "  id: null",
        "  aaa: &a x",
        "  zzz: *a",
        "  zzz: !!str 5",
        "  zzz: |",
        "    block",
        "  zzz: 'it''s'",
        "  zzz: 'lone ' quote'",
        "  zzz: \"dq\"",
        "  zzz: \"d\\\"q\"",
        "  zzz: [a, b]",
        "  zzz: {a: b}",
        "  zzz: []",
        "  zzz: {}",
        "  zzz: a: b",
        "  zzz: a #c",
        "  zzz: -5",
        "  zzz: +5",
        "  zzz: 007",
        "  zzz: TRUE",
        "  zzz: ~",
        "  zzz:",
        "    continued",
        "# comment",
        "---",
        "...",
        "%YAML 1.2",
        "Recent last error (1h ago):",
        "",
        "  ",
        "\t",
        "caf\u{e9}",
        "\r",
        " ",
        ":",
        "'",
    ])
}

/// A scalar in one of YAML's ways of writing it, metalctl's and others.
fn scalar() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "'it''s'",
        "'lone ' quote'",
        "'a''",
        "''",
        "'unterminated",
        "'''",
        "\"dq\"",
        "\"d\\\"q\"",
        "\"\"",
        "\"a'b\"",
        "[]",
        "{}",
        "[a]",
        "{a: b}",
        "a: b",
        "a #c",
        "a#c",
        "-5",
        "+5",
        "007",
        "1.5",
        ".5",
        "TRUE",
        "True",
        "tRUE",
        "~",
        "null",
        "Null",
        "nULL",
        "yes",
        "0x1F",
        "1e3",
        "a:",
        "a:b",
        "&a x",
        "*a",
        "!!str 5",
        "|",
        ">",
        "@x",
        "`x",
        "%x",
        "a  b",
        "x ",
        " x",
        "caf\u{e9}",
        "a\tb",
        "-",
        "- x",
        "? x",
        ",x",
        "!x",
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "2025-09-16T18:17:24.303Z",
        "Waiting",
        "PXE Booting",
        "'[unexpectedly received in state waiting]: x'",
        "a\\b",
        "a\"b",
        "(x)",
        "/x",
        ".x",
        "_x",
        "+",
        "~x",
        "n",
        "t",
        "f",
        "F",
    ])
}

/// A key, metalctl's or one that reads otherwise.
fn key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "id", "Id", "ID", "aa", "zz", "null", "True", "1a", "_x", "a-b", "a b", "'q'", "\"q\"",
        "log", "events", "time", "event", "message", "uuid", "~", "x:",
    ])
}

/// A change to one line: a line put in before it, the line taken out, its indent moved by a
/// space or two, a piece put at its end, or its value or key written another way.
#[derive(Debug, Clone)]
pub enum Change {
    Insert(usize, &'static str),
    Remove(usize),
    Indent(usize, bool),
    Append(usize, &'static str),
    Value(usize, &'static str),
    Key(usize, &'static str),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => (any::<usize>(), scalar()).prop_map(|(at, v)| Change::Value(at, v)),
        1 => (any::<usize>(), key()).prop_map(|(at, k)| Change::Key(at, k)),
        1 => (any::<usize>(), piece()).prop_map(|(at, p)| Change::Insert(at, p)),
        1 => any::<usize>().prop_map(Change::Remove),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(at, more)| Change::Indent(at, more)),
        1 => (any::<usize>(), piece()).prop_map(|(at, p)| Change::Append(at, p)),
    ]
}

/// A metalctl list with a few changes made.
pub fn changed_list() -> impl Strategy<Value = Vec<u8>> {
    (0..4u64, 1..4u64, prop::collection::vec(change(), 0..4)).prop_map(
        |(seed, machines, changes)| {
            let text = metalctl_list(seed, machines);
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            for change in changes {
                let n = lines.len().max(1);
                match change {
                    Change::Insert(at, piece) => {
                        lines.insert(at % (n + 1).min(lines.len() + 1), piece.to_string())
                    }
                    Change::Remove(at) if !lines.is_empty() => {
                        lines.remove(at % n);
                    }
                    Change::Indent(at, more) if !lines.is_empty() => {
                        let line = &mut lines[at % n];
                        if more {
                            line.insert(0, ' ');
                        } else if line.starts_with(' ') {
                            line.remove(0);
                        }
                    }
                    Change::Append(at, piece) if !lines.is_empty() => lines[at % n].push_str(piece),
                    // The value after `key: ` (or `- `), or the key before `:`.
                    Change::Value(at, value) if !lines.is_empty() => {
                        let line = &mut lines[at % n];
                        let cut = line
                            .find(": ")
                            .map(|i| i + 2)
                            .or_else(|| line.find("- ").map(|i| i + 2));
                        if let Some(cut) = cut {
                            line.truncate(cut);
                            line.push_str(value);
                        }
                    }
                    Change::Key(at, key) if !lines.is_empty() => {
                        let line = &mut lines[at % n];
                        let start = line.len() - line.trim_start_matches([' ', '-']).len();
                        if let Some(colon) = line[start..].find(':') {
                            line.replace_range(start..start + colon, key);
                        }
                    }
                    _ => {}
                }
            }
            let mut text = lines.join("\n");
            text.push('\n');
            text.into_bytes()
        },
    )
}
