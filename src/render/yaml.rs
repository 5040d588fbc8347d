//! `-o yaml`: the JSON document written as block YAML, as metalctl's `-o yaml` is its
//! `-o json`. The JSON is read back as YAML (every JSON text is one) by the parser the input
//! side already uses, so the keys keep their order; strings are written double-quoted with
//! the same escapes as the JSON (no control or reordering character reaches a terminal), and
//! numbers, booleans and null as JSON wrote them, which YAML 1.2 reads as the same values.

use std::io::{self, Write};

use saphyr_parser::{Event, Parser, ScalarStyle};

use super::json::safe;

/// A JSON value as the parser hands it over, in document order.
enum Node {
    /// A string (`quoted`) or a number, boolean or null as JSON wrote it.
    Scalar {
        text: String,
        quoted: bool,
    },
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

/// Writes the JSON that `json` writes as YAML.
pub fn from_json(
    out: &mut dyn Write,
    json: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut text = Vec::new();
    json(&mut text)?;
    let text = String::from_utf8(text).map_err(|e| io::Error::other(e.to_string()))?;
    let root = tree(&text)?;
    let mut w = YamlWriter { out };
    w.node(&root, 0)
}

/// Reads the JSON text into a tree of nodes.
fn tree(text: &str) -> io::Result<Node> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<(Node, Option<String>)> = Vec::new();
    let mut root = None;
    while let Some(event) = parser.next_event() {
        let (event, _) = event.map_err(|e| io::Error::other(e.to_string()))?;
        let node = match event {
            Event::SequenceStart(..) => {
                stack.push((Node::Seq(Vec::new()), None));
                continue;
            }
            Event::MappingStart(..) => {
                stack.push((Node::Map(Vec::new()), None));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some((node, _)) => node,
                None => continue,
            },
            Event::Scalar(text, style, ..) => Node::Scalar {
                text: text.into_owned(),
                quoted: style != ScalarStyle::Plain,
            },
            _ => continue,
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some((Node::Seq(items), _)) => items.push(node),
            Some((Node::Map(entries), key)) => match key.take() {
                Some(k) => entries.push((k, node)),
                None => match node {
                    Node::Scalar { text, .. } => *key = Some(text),
                    _ => return Err(io::Error::other("a JSON key that is not a string")),
                },
            },
            Some((Node::Scalar { .. }, _)) => unreachable!("only containers are stacked"),
        }
    }
    root.ok_or_else(|| io::Error::other("no JSON document to write as YAML"))
}

struct YamlWriter<'a> {
    out: &'a mut dyn Write,
}

impl YamlWriter<'_> {
    /// Writes a node that starts a line at `indent`.
    fn node(&mut self, node: &Node, indent: usize) -> io::Result<()> {
        match node {
            Node::Map(entries) if !entries.is_empty() => self.map(entries, indent, None),
            Node::Seq(items) if !items.is_empty() => self.seq(items, indent, None),
            other => {
                self.inline(other)?;
                writeln!(self.out)
            }
        }
    }

    /// A scalar or an empty container on the current line.
    fn inline(&mut self, node: &Node) -> io::Result<()> {
        match node {
            Node::Scalar { text, quoted: true } => self.out.write_all(quoted(text)?.as_bytes()),
            Node::Scalar {
                text,
                quoted: false,
            } => self.out.write_all(literal(text).as_bytes()),
            Node::Map(_) => self.out.write_all(b"{}"),
            Node::Seq(_) => self.out.write_all(b"[]"),
        }
    }

    fn nested(node: &Node) -> bool {
        match node {
            Node::Map(entries) => !entries.is_empty(),
            Node::Seq(items) => !items.is_empty(),
            Node::Scalar { .. } => false,
        }
    }

    /// A mapping at `indent`; its first key goes after `first` (a sequence's `- `) where given.
    fn map(
        &mut self,
        entries: &[(String, Node)],
        indent: usize,
        mut first: Option<&str>,
    ) -> io::Result<()> {
        for (key, value) in entries {
            match first.take() {
                Some(prefix) => self.out.write_all(prefix.as_bytes())?,
                None => write!(self.out, "{:indent$}", "")?,
            }
            let key = key_text(key)?;
            if key.len() > IMPLICIT_KEY_MAX {
                // Too long for an implicit key: `? key` on its line, the value after `:` on
                // the next, at the mapping's indent.
                writeln!(self.out, "? {key}")?;
                write!(self.out, "{:indent$}:", "")?;
            } else {
                write!(self.out, "{key}:")?;
            }
            if Self::nested(value) {
                writeln!(self.out)?;
                self.node(value, indent + 2)?;
            } else {
                self.out.write_all(b" ")?;
                self.inline(value)?;
                writeln!(self.out)?;
            }
        }
        Ok(())
    }

    /// A sequence at `indent`, its items after `- `.
    fn seq(&mut self, items: &[Node], indent: usize, mut first: Option<&str>) -> io::Result<()> {
        for item in items {
            let dash = match first.take() {
                Some(prefix) => format!("{prefix}- "),
                None => format!("{:indent$}- ", ""),
            };
            match item {
                Node::Map(entries) if !entries.is_empty() => {
                    self.map(entries, indent + 2, Some(&dash))?
                }
                Node::Seq(inner) if !inner.is_empty() => {
                    self.seq(inner, indent + 2, Some(&dash))?
                }
                other => {
                    self.out.write_all(dash.as_bytes())?;
                    self.inline(other)?;
                    writeln!(self.out)?;
                }
            }
        }
        Ok(())
    }
}

/// YAML 1.2 allows an implicit key of at most 1,024 characters; bytes are counted, never
/// fewer than characters, so no reader that counts either refuses the key.
const IMPLICIT_KEY_MAX: usize = 1024;

/// A key as written: plain where YAML reads it back as the same string, else quoted.
fn key_text(key: &str) -> io::Result<String> {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        && !RESERVED.contains(&key.to_ascii_lowercase().as_str());
    if plain {
        Ok(key.to_string())
    } else {
        quoted(key)
    }
}

/// A string double-quoted with the JSON's escapes, and `\u` escapes for what the JSON may
/// leave raw but a YAML stream must not hold (U+FFFE, U+FFFF; a byte-order mark may stay, as
/// YAML 1.2 allows it inside quotes for JSON's sake).
fn quoted(text: &str) -> io::Result<String> {
    let mut json = Vec::new();
    safe::compact(&mut json, text)?;
    let json = String::from_utf8(json).map_err(|e| io::Error::other(e.to_string()))?;
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if matches!(c, '\u{fffe}' | '\u{ffff}') {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// A number, boolean or null as JSON wrote it; a number with an exponent gets a fraction and
/// a signed exponent (`1e-7` as `1.0e-7`), the one form YAML 1.1 readers take for a float
/// too, and the same value in YAML 1.2.
fn literal(text: &str) -> String {
    let number = text.starts_with(|c: char| c == '-' || c.is_ascii_digit());
    let Some(at) = text.find(['e', 'E']).filter(|_| number) else {
        return text.to_string();
    };
    let (mantissa, e, exponent) = (&text[..at], &text[at..at + 1], &text[at + 1..]);
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    let exponent = if exponent.starts_with(['-', '+']) {
        exponent.to_string()
    } else {
        format!("+{exponent}")
    };
    format!("{mantissa}{e}{exponent}")
}

/// Words a YAML reader (1.1 or 1.2) takes for a boolean or null when plain.
const RESERVED: [&str; 11] = [
    "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(json: &str) -> String {
        let mut out = Vec::new();
        from_json(&mut out, |w| w.write_all(json.as_bytes())).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_json_document_as_block_yaml_in_its_order() {
        let json = r#"{"rules": "metal-api", "n": 3, "share": 0.5, "ok": true, "none": null,
            "empty": [], "obj": {}, "pairs": [{"state": "Waiting", "examples": ["a", "b"]}, 7],
            "nested": [[1, 2], []], "yes": "no"}"#;
        assert_eq!(
            yaml(json),
            r#"rules: "metal-api"
"n": 3
share: 0.5
ok: true
none: null
empty: []
obj: {}
pairs:
  - state: "Waiting"
    examples:
      - "a"
      - "b"
  - 7
nested:
  - - 1
    - 2
  - []
"yes": "no"
"#
        );
    }

    #[test]
    fn strings_keep_the_jsons_escapes() {
        // A control character, a bidi override and quotes stay escaped; a string that looks
        // like a number stays a string; a key YAML 1.1 reads as a boolean (`n`) is quoted.
        let got = yaml(r#"{"id": "m\u001b[2J\u202e\"x\"", "n": "12", "k:ey": 1}"#);
        assert_eq!(
            got,
            "id: \"m\\u001b[2J\\u202e\\\"x\\\"\"\n\"n\": \"12\"\n\"k:ey\": 1\n"
        );
    }

    /// The keys of the document's mappings, in order, as `tree` reads the YAML back.
    fn keys(node: &Node, into: &mut Vec<String>) {
        match node {
            Node::Map(entries) => {
                for (key, value) in entries {
                    into.push(key.clone());
                    keys(value, into);
                }
            }
            Node::Seq(items) => items.iter().for_each(|item| keys(item, into)),
            Node::Scalar { .. } => {}
        }
    }

    #[test]
    fn a_key_too_long_for_an_implicit_key_is_an_explicit_one() {
        // 1,022 characters quoted are 1,024: the longest implicit key YAML 1.2 allows.
        let (fits, long) = ("f ".repeat(511), "r#".repeat(1000));
        let json = format!(
            r#"{{"{fits}": 1, "{long}": {{"{long}": [1]}}, "list": [{{"{long}": "v", "k": 2}}]}}"#
        );
        let got = yaml(&json);
        assert_eq!(
            got,
            format!(
                "\"{fits}\": 1\n? \"{long}\"\n:\n  ? \"{long}\"\n  :\n    - 1\n\
                 list:\n  - ? \"{long}\"\n    : \"v\"\n    k: 2\n"
            )
        );
        let mut read = Vec::new();
        keys(&tree(&got).unwrap(), &mut read);
        assert_eq!(read, [&fits, &long, &long, "list", &long, "k"]);
    }

    #[test]
    fn what_a_yaml_stream_must_not_hold_raw_is_escaped() {
        let got = yaml("{\"\u{feff}k\": \"a\u{fffe}\u{ffff}é\"}");
        assert_eq!(got, "\"\u{feff}k\": \"a\\ufffe\\uffffé\"\n");
    }

    #[test]
    fn a_number_with_an_exponent_is_a_float_to_yaml_1_1_too() {
        let got = yaml(r#"[1e-7, 2.5e300, 3E+2, 0.5, -4, 1.5e-7, true, false, null]"#);
        assert_eq!(
            got,
            "- 1.0e-7\n- 2.5e+300\n- 3.0E+2\n- 0.5\n- -4\n- 1.5e-7\n- true\n- false\n- null\n"
        );
    }
}
