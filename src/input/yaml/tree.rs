//! YAML's events made into JSON values, one top-level element at a time: saphyr's parser
//! reads the characters (a line at a time, stopping at metalctl's `Recent last error` line),
//! and each element is built as a tree with the lines of its sequences' items.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::BufRead;
use std::rc::Rc;

use saphyr_parser::{Event as YamlEvent, Parser, ScalarStyle, ScanError, Tag};
use serde_json::{Map, Value};

/// What went wrong while reading the characters: lines that were not UTF-8 (read with the
/// bad bytes replaced, and named), and a read error that ended the input.
#[derive(Default)]
pub(super) struct ReadProblems {
    pub(super) lines: Vec<(usize, String)>,
    pub(super) fatal: bool,
}

/// The characters of a reader, a line at a time, ending early at metalctl's `Recent last
/// error` line.
pub(super) struct Chars<R> {
    pub(super) reader: R,
    pub(super) line: String,
    pub(super) bytes: Vec<u8>,
    pub(super) at: usize,
    pub(super) lines: usize,
    pub(super) problems: Rc<RefCell<ReadProblems>>,
    /// The line number of a `Recent last error` line, where reading stopped.
    pub(super) trailer: Option<usize>,
}

impl<R: BufRead> Chars<R> {
    pub(super) fn new(reader: R) -> Self {
        Chars {
            reader,
            line: String::new(),
            bytes: Vec::new(),
            at: 0,
            lines: 0,
            problems: Rc::default(),
            trailer: None,
        }
    }
}

impl<R: BufRead> Iterator for Chars<R> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        loop {
            if let Some(c) = self.line[self.at..].chars().next() {
                self.at += c.len_utf8();
                return Some(c);
            }
            if self.problems.borrow().fatal || self.trailer.is_some() {
                return None;
            }
            self.line.clear();
            self.bytes.clear();
            self.at = 0;
            match self.reader.read_until(b'\n', &mut self.bytes) {
                Ok(0) => return None,
                Ok(_) => {
                    self.lines += 1;
                    match std::str::from_utf8(&self.bytes) {
                        Ok(text) => self.line.push_str(text),
                        Err(_) => {
                            self.line.push_str(&String::from_utf8_lossy(&self.bytes));
                            self.problems.borrow_mut().lines.push((
                                self.lines,
                                "invalid UTF-8; read with the bad bytes replaced".to_string(),
                            ));
                        }
                    }
                    if self.line.starts_with("Recent last error") {
                        self.trailer = Some(self.lines);
                        self.line.clear();
                        return None;
                    }
                }
                Err(err) => {
                    let mut problems = self.problems.borrow_mut();
                    problems
                        .lines
                        .push((self.lines + 1, format!("cannot read: {err}")));
                    problems.fatal = true;
                    return None;
                }
            }
        }
    }
}

/// A node being built, with the lines of the items of its sequences.
pub(super) enum Frame {
    Seq(Vec<Value>, Vec<usize>),
    Map(Map<String, Value>, Option<String>),
}

/// A node being built, the anchor it is named by (0: none), and how many nodes its children
/// hold so far.
pub(super) struct Open {
    frame: Frame,
    line: usize,
    anchor: usize,
    nodes: u64,
}

/// One complete top-level element: its value, its first line, and for each sequence inside it
/// (by its path of keys, e.g. `events/log`) the line of each item.
pub(super) struct Element {
    pub(super) value: Value,
    pub(super) line: usize,
    pub(super) item_lines: HashMap<String, Vec<usize>>,
    /// The line of each of its own keys, where it is a mapping.
    pub(super) key_lines: HashMap<String, usize>,
    /// Each key a mapping inside it repeats (by its path of keys), at the repeat's line.
    pub(super) repeated_keys: Vec<(usize, String)>,
}

/// Reads YAML events and hands on each top-level element (each item of a top-level
/// sequence, or each document that is not a sequence) as soon as it is complete.
pub(super) struct Elements<'p> {
    pub(super) parser: Parser<'p, saphyr_parser::BufferedInput<&'p mut dyn Iterator<Item = char>>>,
    pub(super) stack: Vec<Open>,
    /// Nodes named by an anchor (`&name`), for the aliases (`*name`) that repeat them, with
    /// how many nodes each holds.
    pub(super) anchors: HashMap<usize, (Value, u64)>,
    /// How many nodes the current document's aliases have repeated so far.
    pub(super) repeated: u64,
    /// The path of keys down to the node being built.
    pub(super) path: Vec<String>,
    pub(super) item_lines: HashMap<String, Vec<usize>>,
    /// Whether to note each element's key lines and repeated keys (a rule file's reader).
    pub(super) note_keys: bool,
    key_lines: HashMap<String, usize>,
    repeated_keys: Vec<(usize, String)>,
    /// Whether the current document's top level is a sequence.
    pub(super) in_sequence: bool,
    /// Line offset added to the parser's lines (for the trailer).
    pub(super) offset: usize,
}

impl<'p> Elements<'p> {
    pub(super) fn new(chars: &'p mut dyn Iterator<Item = char>, offset: usize) -> Self {
        Elements {
            parser: Parser::new_from_iter(chars),
            stack: Vec::new(),
            anchors: HashMap::new(),
            repeated: 0,
            path: Vec::new(),
            item_lines: HashMap::new(),
            note_keys: false,
            key_lines: HashMap::new(),
            repeated_keys: Vec::new(),
            in_sequence: false,
            offset,
        }
    }

    /// The next element; `Ok(None)` at the end of the stream.
    pub(super) fn next(&mut self) -> Result<Option<Element>, (usize, usize, String)> {
        loop {
            let Some(result) = self.parser.next_event() else {
                return Ok(None);
            };
            let (event, span) = result.map_err(|e: ScanError| {
                let m = e.marker();
                (m.line() + self.offset, m.col() + 1, e.info().to_string())
            })?;
            let line = span.start.line() + self.offset;
            let node = match event {
                YamlEvent::StreamEnd => return Ok(None),
                YamlEvent::StreamStart | YamlEvent::Nothing => continue,
                YamlEvent::DocumentStart(_) | YamlEvent::DocumentEnd => {
                    self.in_sequence = false;
                    // Anchors are a document's own; what they held is not kept past it.
                    self.repeated = 0;
                    self.anchors.clear();
                    continue;
                }
                YamlEvent::SequenceStart(..) if self.stack.is_empty() && !self.in_sequence => {
                    self.in_sequence = true;
                    continue;
                }
                YamlEvent::SequenceEnd if self.stack.is_empty() => {
                    self.in_sequence = false;
                    continue;
                }
                YamlEvent::SequenceStart(anchor, _) => {
                    self.open(Frame::Seq(Vec::new(), Vec::new()), line, anchor);
                    continue;
                }
                YamlEvent::MappingStart(anchor, _) => {
                    self.open(Frame::Map(Map::new(), None), line, anchor);
                    continue;
                }
                YamlEvent::SequenceEnd | YamlEvent::MappingEnd => {
                    let Some(open) = self.stack.pop() else {
                        continue;
                    };
                    let value = match open.frame {
                        Frame::Seq(items, lines) => {
                            self.item_lines.insert(self.path.join("/"), lines);
                            Value::Array(items)
                        }
                        Frame::Map(map, _) => Value::Object(map),
                    };
                    let nodes = open.nodes + 1;
                    if open.anchor > 0 {
                        self.anchors.insert(open.anchor, (value.clone(), nodes));
                    }
                    (value, open.line, nodes)
                }
                YamlEvent::Scalar(text, style, anchor, tag) => {
                    let value = scalar(&text, style, tag.as_deref());
                    // A long scalar weighs as a node per 64 bytes: repeated, its bytes count.
                    let weight = 1 + text.len() as u64 / 64;
                    if anchor > 0 {
                        self.anchors.insert(anchor, (value.clone(), weight));
                    }
                    (value, line, weight)
                }
                YamlEvent::Alias(anchor) => match self.anchors.get(&anchor) {
                    Some((_, n)) if self.repeated + n > ALIAS_BUDGET => {
                        return Err((
                            line,
                            span.start.col() + 1,
                            format!(
                                "aliases repeat more than {ALIAS_BUDGET} nodes in one document \
                                 (an alias bomb?); reading this file stops here"
                            ),
                        ));
                    }
                    Some((value, n)) => {
                        self.repeated += n;
                        (value.clone(), line, *n)
                    }
                    None => {
                        return Err((
                            line,
                            span.start.col() + 1,
                            "an alias to no anchor".to_string(),
                        ));
                    }
                },
            };
            if let Some(done) = self.place(node.0, node.1, node.2) {
                return Ok(Some(done));
            }
        }
    }

    fn open(&mut self, frame: Frame, line: usize, anchor: usize) {
        if let Some(Open {
            frame: Frame::Seq(_, lines),
            ..
        }) = self.stack.last_mut()
        {
            lines.push(line);
        }
        self.stack.push(Open {
            frame,
            line,
            anchor,
            nodes: 0,
        });
    }

    /// Puts a finished node (of `nodes` nodes) into its parent; a node without a parent is an
    /// element.
    fn place(&mut self, value: Value, line: usize, nodes: u64) -> Option<Element> {
        if let Some(parent) = self.stack.last_mut() {
            parent.nodes += nodes;
        }
        let top_level = self.stack.len() == 1;
        match self.stack.last_mut() {
            None => {
                let item_lines = std::mem::take(&mut self.item_lines);
                Some(Element {
                    value,
                    line,
                    item_lines,
                    key_lines: std::mem::take(&mut self.key_lines),
                    repeated_keys: std::mem::take(&mut self.repeated_keys),
                })
            }
            Some(Open {
                frame: Frame::Seq(items, lines),
                ..
            }) => {
                if lines.len() == items.len() {
                    lines.push(line);
                }
                items.push(value);
                None
            }
            Some(Open {
                frame: Frame::Map(map, key),
                ..
            }) => {
                match key.take() {
                    None => {
                        let name = match value {
                            Value::String(s) => s,
                            other => other.to_string(),
                        };
                        if self.note_keys && top_level {
                            self.key_lines.entry(name.clone()).or_insert(line);
                        }
                        self.path.push(name.clone());
                        *key = Some(name);
                    }
                    Some(name) => {
                        // A repeated key keeps its last value, as in the JSON exports; it is
                        // noted for a reader that refuses it (a rule file).
                        if map.insert(name, value).is_some() && self.note_keys {
                            self.repeated_keys.push((line, self.path.join("/")));
                        }
                        self.path.pop();
                    }
                }
                None
            }
        }
    }
}

/// How many nodes a document's aliases may repeat in all. metalctl never writes an alias, and
/// a hand-made file needs few; nested aliases repeat their anchors' nodes exponentially (a
/// few hundred bytes can stand for billions), so past this the file is refused rather than
/// built.
pub(super) const ALIAS_BUDGET: u64 = 100_000;

/// A scalar as JSON: quoted and block scalars are text; plain ones may be null, booleans or
/// numbers (YAML 1.2's core schema), or text.
pub(super) fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    if style != ScalarStyle::Plain || tag.is_some_and(|t| t.suffix == "str") {
        return Value::String(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let numeric = text
        .trim_start_matches(['-', '+'])
        .bytes()
        .all(|b| b.is_ascii_digit())
        && text.bytes().any(|b| b.is_ascii_digit());
    if numeric {
        if let Ok(n) = text.parse::<i64>() {
            return Value::Number(n.into());
        }
        if let Ok(n) = text.parse::<u64>() {
            return Value::Number(n.into());
        }
    }
    Value::String(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_scalars_take_their_type() {
        assert_eq!(scalar("null", ScalarStyle::Plain, None), Value::Null);
        assert_eq!(scalar("true", ScalarStyle::Plain, None), Value::Bool(true));
        assert_eq!(
            scalar("4711", ScalarStyle::Plain, None),
            Value::Number(4711.into())
        );
        assert_eq!(
            scalar("4711", ScalarStyle::DoubleQuoted, None),
            Value::String("4711".into())
        );
        assert_eq!(
            scalar("2022-08-22T06:36:15Z", ScalarStyle::Plain, None),
            Value::String("2022-08-22T06:36:15Z".into())
        );
    }
}
