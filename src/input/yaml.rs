//! YAML exports: every JSON shape fsmlog reads, as metalctl prints it with `-o yaml` (the
//! default of `machine describe`; keys as in the JSON, since metalctl marshals YAML from the
//! same models): one document, a `---` stream of documents, or a top-level sequence.
//!
//! saphyr's event parser reads the stream; each top-level element (or document) becomes a
//! JSON value as soon as it is complete and is read by the same code as the JSON exports, so
//! a large list is held one machine at a time.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::BufRead;
use std::rc::Rc;

use saphyr_parser::{Event as YamlEvent, Parser, ScalarStyle, ScanError, Tag};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::raw::{LogEvents, RawEvent, RawItem, convert_event};
use crate::event::Event;
use crate::input::context::{FileContext, NotALog};
use crate::input::order::into_time_order;
use crate::input::record::{InputError, Record};
use crate::log::{Format, MachineLog};

/// Whether a text file's first meaningful line opens YAML: `---`, a `%YAML` directive, a
/// `key:` mapping line, a `- key:` sequence item at any indent (`-   key:` as PyYAML's
/// `indent=4` and `yq -I4` write it), or a flow collection (`[{key: …`, `{key: …`).
pub(crate) fn looks_like_yaml(head: &[u8]) -> bool {
    let Some(first) = head
        .split(|&b| b == b'\n')
        .filter_map(|l| std::str::from_utf8(l).ok())
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    else {
        return false;
    };
    if first.starts_with("---") || first.starts_with("%YAML") || is_flow_yaml(first) {
        return true;
    }
    let item = match first.strip_prefix('-') {
        Some(rest) if rest.starts_with([' ', '\t']) => rest.trim_start_matches([' ', '\t']),
        _ => first,
    };
    let key_len = item
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    key_len > 0
        && item.as_bytes()[0].is_ascii_alphabetic()
        && item[key_len..].starts_with(':')
        && matches!(item.as_bytes().get(key_len + 1), None | Some(b' '))
}

/// Whether a line opens a flow collection of mappings with plain keys, `[{id: m, …` or
/// `{id: m, …`, which JSON (whose keys are quoted) never is.
pub(crate) fn is_flow_yaml(line: &str) -> bool {
    let rest = line.trim_start();
    let rest = rest
        .strip_prefix('[')
        .or_else(|| rest.strip_prefix("- "))
        .unwrap_or(rest)
        .trim_start();
    let Some(inner) = rest.strip_prefix('{') else {
        return false;
    };
    let inner = inner.trim_start();
    let key_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    key_len > 0
        && inner.as_bytes()[0].is_ascii_alphabetic()
        && inner[key_len..].trim_start().starts_with(':')
}

/// What went wrong while reading the characters: lines that were not UTF-8 (read with the
/// bad bytes replaced, and named), and a read error that ended the input.
#[derive(Default)]
struct ReadProblems {
    lines: Vec<(usize, String)>,
    fatal: bool,
}

/// The characters of a reader, a line at a time, ending early at metalctl's `Recent last
/// error` line.
struct Chars<R> {
    reader: R,
    line: String,
    bytes: Vec<u8>,
    at: usize,
    lines: usize,
    problems: Rc<RefCell<ReadProblems>>,
    /// The line number of a `Recent last error` line, where reading stopped.
    trailer: Option<usize>,
}

impl<R: BufRead> Chars<R> {
    fn new(reader: R) -> Self {
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
enum Frame {
    Seq(Vec<Value>, Vec<usize>),
    Map(Map<String, Value>, Option<String>),
}

/// A node being built and the anchor it is named by (0: none).
struct Open {
    frame: Frame,
    line: usize,
    anchor: usize,
}

/// One complete top-level element: its value, its first line, and for each sequence inside it
/// (by its path of keys, e.g. `events/log`) the line of each item.
struct Element {
    value: Value,
    line: usize,
    item_lines: HashMap<String, Vec<usize>>,
}

/// Reads YAML events and hands on each top-level element (each item of a top-level
/// sequence, or each document that is not a sequence) as soon as it is complete.
struct Elements<'p> {
    parser: Parser<'p, saphyr_parser::BufferedInput<&'p mut dyn Iterator<Item = char>>>,
    stack: Vec<Open>,
    /// Nodes named by an anchor (`&name`), for the aliases (`*name`) that repeat them.
    anchors: HashMap<usize, Value>,
    /// The path of keys down to the node being built.
    path: Vec<String>,
    item_lines: HashMap<String, Vec<usize>>,
    /// Whether the current document's top level is a sequence.
    in_sequence: bool,
    /// Line offset added to the parser's lines (for the trailer).
    offset: usize,
}

impl<'p> Elements<'p> {
    fn new(chars: &'p mut dyn Iterator<Item = char>, offset: usize) -> Self {
        Elements {
            parser: Parser::new_from_iter(chars),
            stack: Vec::new(),
            anchors: HashMap::new(),
            path: Vec::new(),
            item_lines: HashMap::new(),
            in_sequence: false,
            offset,
        }
    }

    /// The next element; `Ok(None)` at the end of the stream.
    fn next(&mut self) -> Result<Option<Element>, (usize, usize, String)> {
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
                    if open.anchor > 0 {
                        self.anchors.insert(open.anchor, value.clone());
                    }
                    (value, open.line)
                }
                YamlEvent::Scalar(text, style, anchor, tag) => {
                    let value = scalar(&text, style, tag.as_deref());
                    if anchor > 0 {
                        self.anchors.insert(anchor, value.clone());
                    }
                    (value, line)
                }
                YamlEvent::Alias(anchor) => match self.anchors.get(&anchor) {
                    Some(value) => (value.clone(), line),
                    None => {
                        return Err((
                            line,
                            span.start.col() + 1,
                            "an alias to no anchor".to_string(),
                        ));
                    }
                },
            };
            if let Some(done) = self.place(node.0, node.1) {
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
        });
    }

    /// Puts a finished node into its parent; a node without a parent is an element.
    fn place(&mut self, value: Value, line: usize) -> Option<Element> {
        match self.stack.last_mut() {
            None => {
                let item_lines = std::mem::take(&mut self.item_lines);
                Some(Element {
                    value,
                    line,
                    item_lines,
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
                        self.path.push(name.clone());
                        *key = Some(name);
                    }
                    Some(name) => {
                        self.path.pop();
                        // A repeated key keeps its last value, as in the JSON exports.
                        map.insert(name, value);
                    }
                }
                None
            }
        }
    }
}

/// A scalar as JSON: quoted and block scalars are text; plain ones may be null, booleans or
/// numbers (YAML 1.2's core schema), or text.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
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

/// Reads one YAML file; `forced` is the JSON shape the user named, if any.
pub(crate) fn read(
    reader: impl BufRead,
    ctx: &FileContext,
    forced: Option<Format>,
    sink: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut chars = Chars::new(reader);
    let problems = Rc::clone(&chars.problems);
    let mut events_array: Option<bool> = forced.map(|f| f == Format::LogsJson);
    let mut log_events = LogEvents {
        yaml: true,
        ..LogEvents::default()
    };
    let mut machines = 0;
    let mut elements = 0;
    let mut list_format: Option<Format> = None;
    let parsed = {
        let mut reading = Elements::new(&mut chars, 0);
        loop {
            let element = match reading.next() {
                Ok(Some(element)) => element,
                Ok(None) => break Ok(()),
                Err(err) => break Err(err),
            };
            if problems.borrow().fatal {
                // The input ended early: the last element may be cut short.
                break Ok(());
            }
            elements += 1;
            let in_list = reading.in_sequence;
            let item = match RawItem::deserialize(&element.value) {
                Ok(item) => item,
                Err(err) => {
                    sink(Record::Error(InputError::at(
                        &ctx.path,
                        element.line,
                        format!("invalid YAML element: {err}"),
                    )));
                    continue;
                }
            };
            let kind = item.element_kind();
            let is_events = match events_array {
                Some(decided) => decided,
                None if kind.is_none() => continue,
                None => *events_array.insert(kind == Some(Format::LogsJson)),
            };
            if is_events {
                log_events.push(item, &ctx.path, element.line, sink);
                continue;
            }
            let shape = if in_list {
                list_format.get_or_insert(match kind {
                    Some(Format::DescribeJson) | None => Format::ListJson,
                    Some(other) => other,
                });
                list_format
            } else {
                None
            };
            let Some(mut parts) = item.into_machine(shape) else {
                sink(Record::Error(InputError::at(
                    &ctx.path,
                    element.line,
                    "not a machine (no `events`, `log` or `recentProvisioningEvents`)",
                )));
                continue;
            };
            if in_list && parts.format == Format::DescribeJson {
                parts.format = Format::ListJson;
            }
            if let Some(forced) = forced
                && forced != parts.format
                && !(forced == Format::ListJson && parts.format == Format::DescribeJson)
            {
                sink(Record::Error(InputError::at(
                    &ctx.path,
                    element.line,
                    format!(
                        "expected {} YAML, but this is {}",
                        forced.name_in(true),
                        parts.format.name_in(true)
                    ),
                )));
                continue;
            }
            let log_path = parts.log_path.join("/");
            let lines = element
                .item_lines
                .get(&log_path)
                .cloned()
                .unwrap_or_default();
            let file_machine = (!in_list).then_some(ctx.machine.as_str());
            let mut line_of = |i: usize| lines.get(i).copied().unwrap_or(element.line);
            if let Some(mut machine) = parts.build(
                &ctx.path,
                element.line,
                file_machine,
                ctx.options.mode,
                &mut line_of,
                sink,
            ) {
                machine.yaml = true;
                machines += 1;
                sink(Record::Machine(machine));
            }
        }
    };
    if let Err((line, column, message)) = parsed {
        sink(Record::Error(InputError {
            path: ctx.path.clone(),
            line,
            column,
            message: format!("invalid YAML: {message}"),
        }));
    }
    for (line, message) in std::mem::take(&mut problems.borrow_mut().lines) {
        sink(Record::Error(InputError::at(&ctx.path, line, message)));
    }
    let last_error = match chars.trailer {
        Some(at) => read_trailer(&mut chars, at, ctx, sink),
        None => None,
    };
    if events_array == Some(true) || last_error.is_some() {
        if log_events.is_a_machine(last_error.is_some()) {
            let mut events = log_events.events;
            into_time_order(&mut events, true);
            let mut log = MachineLog::new(ctx.machine.clone(), &ctx.path, 1, Format::LogsJson);
            log.yaml = true;
            log.events = events;
            log.last_error_event = last_error;
            sink(Record::Machine(log));
        }
        return Ok(());
    }
    if machines == 0 && elements > 0 && events_array.is_none() && forced.is_none() {
        return Err(NotALog(
            "YAML whose documents are neither events nor machines".to_string(),
        ));
    }
    Ok(())
}

/// metalctl's `Recent last error (… ago):` block after a `machine logs -o yaml` document:
/// the last error event, as one more YAML document.
fn read_trailer<R: BufRead>(
    chars: &mut Chars<R>,
    at: usize,
    ctx: &FileContext,
    sink: &mut dyn FnMut(Record),
) -> Option<Event> {
    chars.trailer = None;
    let mut reading = Elements::new(chars, at);
    let element = match reading.next() {
        Ok(Some(element)) => element,
        Ok(None) => return None,
        Err((line, column, message)) => {
            sink(Record::Error(InputError {
                path: ctx.path.clone(),
                line,
                column,
                message: format!("invalid YAML after `Recent last error`: {message}"),
            }));
            return None;
        }
    };
    let converted = RawEvent::deserialize(&element.value)
        .map_err(|e| e.to_string())
        .and_then(convert_event);
    match converted {
        Ok(event) => Some(event.at_line(element.line)),
        Err(message) => {
            sink(Record::Error(InputError::at(
                &ctx.path,
                element.line,
                message,
            )));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_is_told_by_its_first_line() {
        assert!(looks_like_yaml(b"---\nid: x\n"));
        assert!(looks_like_yaml(b"# comment\nallocation: null\n"));
        assert!(looks_like_yaml(b"- event: Waiting\n  time: x\n"));
        assert!(!looks_like_yaml(
            b"Mon, 22 Aug 2022 06:36:15 UTC  Waiting  w\n"
        ));
        assert!(!looks_like_yaml(b"TIME  EVENT  MESSAGE\n"));
        assert!(!looks_like_yaml(b"Hi team: here is the log\n"));
    }

    #[test]
    fn yaml_of_other_printers_is_told_too() {
        assert!(looks_like_yaml(b"-   id: m\n    events:\n"));
        assert!(looks_like_yaml(b"[{id: m, events: {log: []}}]\n"));
        assert!(looks_like_yaml(b"{id: m}\n"));
        assert!(!is_flow_yaml("[{\"id\": \"m\"}]"));
        assert!(!is_flow_yaml("{\"id\": 1}"));
        assert!(!looks_like_yaml(b"-Mon, 22 Aug 2022\n"));
    }

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
