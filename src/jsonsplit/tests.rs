//! The cuts agree with the careful scan on every shape, buffer size and damage.

use std::cell::Cell;

use super::array::for_each_element;
use super::indented::READ_AHEAD;
use super::*;

fn elements(text: &str) -> Result<Vec<(String, usize)>, SplitError> {
    let mut splitter = Splitter::new(text.as_bytes());
    let mut out = Vec::new();
    for_each_element(&mut splitter, |bytes, start| {
        out.push((String::from_utf8(bytes.to_vec()).unwrap(), start.line));
        Ok(())
    })?;
    Ok(out)
}

#[test]
fn splits_elements_with_their_lines() {
    let got = elements("[\n {\"a\": \"}]\\\"\"},\n [1, [2]],\n 3\n]").unwrap();
    assert_eq!(
        got,
        vec![
            ("{\"a\": \"}]\\\"\"}".to_string(), 2),
            ("[1, [2]]".to_string(), 3),
            ("3".to_string(), 4)
        ]
    );
}

#[test]
fn values_split_the_same_across_any_buffer_boundaries() {
    let text = "[{\"a\": \"x\\\\\\\"}]\"}, \"s\\\"]\", [[1], {\"b\": []}], true]";
    let whole = elements(text).unwrap();
    for capacity in 1..8 {
        let reader = std::io::BufReader::with_capacity(capacity, text.as_bytes());
        let mut splitter = Splitter::new(reader);
        let mut got = Vec::new();
        for_each_element(&mut splitter, |bytes, start| {
            got.push((String::from_utf8(bytes.to_vec()).unwrap(), start.line));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, whole, "capacity {capacity}");
    }
    assert_eq!(whole.len(), 4);
    assert_eq!(whole[0].0, "{\"a\": \"x\\\\\\\"}]\"}");
}

fn fast_elements(text: &str, capacity: usize) -> Result<Vec<(String, usize)>, SplitError> {
    let reader = std::io::BufReader::with_capacity(capacity, text.as_bytes());
    let mut splitter = Splitter::new(reader);
    let mut out = Vec::new();
    for_each_element_cut(
        &mut splitter,
        &Cell::new(Cutting::AtElementLines),
        |bytes, start| {
            out.push((String::from_utf8(bytes.to_vec()).unwrap(), start.line));
            Ok(())
        },
    )?;
    if splitter.skip_whitespace()?.is_some() {
        return Err(splitter.syntax("unexpected content after the array"));
    }
    Ok(out)
}

#[test]
fn indented_arrays_cut_the_same_as_the_careful_scan() {
    let pretty = "[\n    {\n        \"a\": \"x\\n    {\\n\",\n        \"b\": [\n            {\n                \"c\": 1\n            }\n        ]\n    },\n    {\n        \"d\": \"}\"\n    },\n    {\n        \"e\": 2\n    }\n]\n";
    let careful = elements(pretty).unwrap();
    assert_eq!(careful.len(), 3);
    for capacity in [1, 2, 7, 64, 4096] {
        assert_eq!(
            fast_elements(pretty, capacity).unwrap(),
            careful,
            "capacity {capacity}"
        );
    }
    let two_spaces = pretty.replace("    ", "  ");
    assert_eq!(
        fast_elements(&two_spaces, 16).unwrap(),
        elements(&two_spaces).unwrap()
    );
}

#[test]
fn indented_arrays_report_damage_and_trailing_content() {
    let truncated = "[\n    {\n        \"a\": 1\n    },\n    {\n        \"b\": 2\n    },\n    {\n        \"c\": ";
    assert!(matches!(
        fast_elements(truncated, 8),
        Err(SplitError::Syntax { line: 9, .. })
    ));
    let trailing = "[\n    {\n        \"a\": 1\n    },\n    {\n        \"b\": 2\n    }\n]\nextra\n";
    match fast_elements(trailing, 4096) {
        Err(SplitError::Syntax { line, message, .. }) => {
            assert_eq!(line, 9);
            assert!(message.contains("unexpected content"), "{message}");
        }
        other => panic!("expected an error, got {other:?}"),
    }
    let no_comma = "[\n    {\n        \"a\": 1\n    },\n    {\n        \"b\": 2\n    }\n    {\n        \"c\": 3\n    }\n]";
    // The careful scan names line 8, where `{` stands instead of `,`.
    match (fast_elements(no_comma, 4096), elements(no_comma)) {
        (
            Err(SplitError::Syntax { line: fast, .. }),
            Err(SplitError::Syntax { line: careful, .. }),
        ) => assert_eq!((fast, careful), (8, 8)),
        other => panic!("expected two errors, got {other:?}"),
    }
    // Elements on one line, at another indent, or scalars, among indented ones.
    let mixed = "[\n    {\n        \"a\": 1\n    },\n    {\n        \"b\": 2\n    },\n    {\"c\": 3}, {},\n      {\"d\": 4}, null,\n    {\n        \"e\": 5\n    },\n    {\n        \"f\": 6\n    }\n]\n";
    assert_eq!(
        fast_elements(mixed, 4096).unwrap(),
        elements(mixed).unwrap()
    );
    assert_eq!(elements(mixed).unwrap().len(), 8);
}

#[test]
fn valid_arrays_indented_out_of_step_cut_as_the_careful_scan_cuts_them() {
    // An element opening at another indent (no element line starts it), and a nested
    // object whose lines stand at the element indent.
    let glued = "[\n    {\n        \"a\": 1\n    },\n    {\n        \"b\": 2\n    },\n  {\n        \"c\": 3\n    },\n    {\n        \"d\": 4\n    }\n]\n";
    let nested = "[\n    {\n        \"a\": 1\n    },\n    {\n        \"b\": [\n    {\n        \"k\": 1\n    }\n        ]\n    },\n    {\n        \"c\": 3\n    }\n]\n";
    for (text, count) in [(glued, 4), (nested, 3)] {
        let careful = elements(text).unwrap();
        assert_eq!(careful.len(), count);
        for capacity in [1, 7, 4096] {
            // The cut may hand on two elements as one piece; a piece that fails to parse
            // is split by `values_in`.
            let fast: Vec<_> = fast_elements(text, capacity)
                .unwrap()
                .into_iter()
                .flat_map(|(piece, line)| {
                    let at = Position { line, column: 5 };
                    match values_in(piece.as_bytes(), at) {
                        Some(values) => values
                            .into_iter()
                            .map(|(v, at)| (String::from_utf8(v).unwrap(), at.line))
                            .collect(),
                        None => vec![(piece, line)],
                    }
                })
                .collect();
            assert_eq!(fast, careful, "{text}");
        }
    }
    assert_eq!(
        values_in(b"{\"a\": 1}", Position { line: 1, column: 1 }),
        None
    );
    assert_eq!(
        values_in(b"{\"a\": 1}, {", Position { line: 1, column: 1 }),
        None
    );
}

#[test]
fn an_element_larger_than_the_read_ahead_is_cut_whole() {
    let big = "x".repeat(READ_AHEAD + READ_AHEAD / 2);
    let pretty = format!(
        "[\n    {{\n        \"a\": 1\n    }},\n    {{\n        \"big\": \"{big}\"\n    }},\n    {{\n        \"c\": 3\n    }}\n]\n"
    );
    let careful = elements(&pretty).unwrap();
    assert_eq!(careful.len(), 3);
    assert_eq!(fast_elements(&pretty, 4096).unwrap(), careful);
    // Again on the same thread, with the buffer the first cut grew and kept.
    assert_eq!(fast_elements(&pretty, 100_000).unwrap(), careful);
}

#[test]
fn what_follows_an_indented_array_is_left_to_the_caller() {
    let text = "[\n    {\n        \"a\": 1\n    },\n    {\n        \"b\": 2\n    }\n]\n\nRecent last error:\n{\"c\": 3}\n";
    for capacity in [1, 3, 16, 4096] {
        let reader = std::io::BufReader::with_capacity(capacity, text.as_bytes());
        let mut splitter = Splitter::new(reader);
        let mut lines = Vec::new();
        for_each_element_cut(
            &mut splitter,
            &Cell::new(Cutting::AtElementLines),
            |_, start| {
                lines.push(start.line);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(lines, [2, 5], "capacity {capacity}");
        assert_eq!(splitter.skip_whitespace().unwrap(), Some(b'R'));
        assert_eq!(
            splitter.position(),
            Position {
                line: 10,
                column: 1
            }
        );
        let mut heading = Vec::new();
        splitter.read_line(&mut heading).unwrap();
        assert_eq!(heading, b"Recent last error:\n");
        let mut value = Vec::new();
        assert_eq!(splitter.read_value(&mut value).unwrap().line, 11);
        assert_eq!(value, b"{\"c\": 3}");
        assert_eq!(splitter.skip_whitespace().unwrap(), None);
    }
}

#[test]
fn empty_array_has_no_elements() {
    assert!(elements("  [ ] ").unwrap().is_empty());
}

#[test]
fn truncated_array_is_a_syntax_error_with_line() {
    match elements("[\n{\"a\": 1},\n{\"b\": ") {
        Err(SplitError::Syntax { line, .. }) => assert_eq!(line, 3),
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

#[test]
fn finds_element_lines_under_a_key() {
    let text = b"{\"name\": \"x [\",\n \"rows\": [\n {\"a\":1},\n {\"b\":2}\n ]}";
    assert_eq!(element_lines_at(text, &["rows"]).unwrap(), vec![3, 4]);
    let nested = b"{\"id\": 1,\n \"events\": {\"x\": [], \"log\": [\n {},\n\n {}]}}";
    assert_eq!(
        element_lines_at(nested, &["events", "log"]).unwrap(),
        vec![3, 5]
    );
}

#[test]
fn a_piece_is_one_value_only_when_its_brackets_close_at_its_end() {
    use super::structure::one_value;
    assert!(one_value(b"{\n    \"a\": [1, {\"b\": \"}]\\\"{\"}]\n}"));
    assert!(one_value(b"{}"));
    // Open at the end: a nested value whose closing line stood at the element indent.
    assert!(!one_value(b"{\n    \"hw\": [{\n        \"a\": 1\n}"));
    // Closed before the end: two elements, or a nested value's rest after its `}`.
    assert!(!one_value(b"{\"a\": 1}, {\"b\": 2}"));
    assert!(!one_value(
        b"{\"id\": \"phantom\"}],\n    \"events\": {}\n}"
    ));
    // An unclosed string, and a quote escaped at a sixteen-byte boundary.
    assert!(!one_value(b"{\"a\": \"}"));
    let escaped = format!("{{\"{}\\\"}}\": 1}}", "x".repeat(13));
    assert!(one_value(escaped.as_bytes()));
}

#[test]
fn a_nested_value_with_lines_at_the_element_indent_is_read_whole() {
    // The second element's `hw` closes and opens objects at the element indent: the cut
    // must not take its lines for elements (Python and jq read m1, m2, m3).
    let text = "[\n    {\n        \"id\": \"m1\"\n    },\n    {\n        \"id\": \"m2\",\n        \"hw\": [{\n            \"a\": 1\n    },\n    {\n        \"id\": \"phantom\"\n    }],\n        \"x\": 2\n    },\n    {\n        \"id\": \"m3\"\n    }\n]\n";
    let careful = elements(text).unwrap();
    assert_eq!(careful.len(), 3);
    for capacity in [1, 7, 64, 4096] {
        assert_eq!(
            fast_elements(text, capacity).unwrap(),
            careful,
            "capacity {capacity}"
        );
    }
}
