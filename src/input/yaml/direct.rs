//! A list as metalctl prints it with `-o yaml` (sigs.k8s.io/yaml's block style: `- ` items at
//! the margin, keys sorted, one scalar a line, plain or quoted), read straight from its lines:
//! each top-level item is cut at the next `- ` at the margin, turned into the JSON it spells
//! and read by serde as the JSON exports are, in batches on every core. It declines, from the
//! first item it is not sure of, to saphyr's parser (anchors, tags, comments, block or
//! multi-line scalars, flow collections, keys out of order, tabs, bytes beyond ASCII…); where
//! it answers, it answers as the parser does (`yaml_agrees`, the property tests and the fuzz
//! target check it).

use std::collections::HashMap;
use std::io::{self, BufRead};

use serde::Deserialize;

use super::found::{Found, Place, machine};
use super::tree::scalar;
use crate::input::context::FileContext;
use crate::input::raw::RawItem;
use crate::input::record::{Batch, ReadMode, Record};
use crate::log::{Format, Shape};

/// How far the direct reader came.
pub(super) enum Outcome {
    /// The whole file was read.
    Done,
    /// It declined at `line`: `head` holds the bytes from there on that it read, `error` the
    /// read error after them, if any.
    Rest {
        head: Vec<u8>,
        line: usize,
        error: Option<io::Error>,
    },
}

/// A reader's read error, then the reader: the rest of a file after the bytes the direct
/// reader gives back.
pub(super) struct Then<R> {
    pub(super) error: Option<io::Error>,
    pub(super) reader: R,
}

impl<R: io::Read> io::Read for Then<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.error.take() {
            Some(err) => Err(err),
            None => self.reader.read(buf),
        }
    }
}

impl<R: BufRead> BufRead for Then<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self.error.take() {
            Some(err) => Err(err),
            None => self.reader.fill_buf(),
        }
    }

    fn consume(&mut self, amount: usize) {
        self.reader.consume(amount);
    }
}

/// How many bytes of items a batch collects before it is handed on.
const BATCH_BYTES: usize = 1 << 20;

/// Reads a list item by item while each keeps to metalctl's shape: the first on this thread
/// (it decides what the list holds), the others in batches. Counts the items it read in
/// `read` (for the differential check).
pub(super) fn read_list(
    reader: &mut impl BufRead,
    ctx: &FileContext,
    found: &mut Found,
    read: &mut usize,
    emit: &mut dyn FnMut(Record),
) -> Outcome {
    // The bytes of the item being read, from its first line `item_line` on.
    let mut item = Vec::new();
    let mut item_line = 1;
    let mut batch: Option<ListBatch> = None;
    let mut json = Vec::new();
    fn give_back(
        item: Vec<u8>,
        line: usize,
        error: Option<io::Error>,
        batch: Option<ListBatch>,
        emit: &mut dyn FnMut(Record),
    ) -> Outcome {
        if let Some(open) = batch.filter(|b| !b.items.is_empty()) {
            emit(Record::Batch(Box::new(open)));
        }
        Outcome::Rest {
            head: item,
            line,
            error,
        }
    }
    loop {
        let start = item.len();
        let ended = match reader.read_until(b'\n', &mut item) {
            Ok(0) => true,
            Ok(_) => false,
            Err(err) => {
                // The parser's reading is given the item being read, then the error: what
                // came before the error on its line is not read, and an item the error
                // follows may be cut short, so the parser's reading drops it.
                item.truncate(start);
                let error = io::Error::new(err.kind(), err.to_string());
                return give_back(item, item_line, Some(error), batch, emit);
            }
        };
        let next_item = !ended && item[start..].starts_with(b"- ");
        if start == 0 {
            // Only `---` may come before the first item.
            if next_item {
                continue;
            }
            if item_line == 1 && &item[..] == b"---\n" {
                item.clear();
                item_line = 2;
                continue;
            }
            return give_back(item, item_line, None, batch, emit);
        }
        if !(ended || next_item) {
            continue;
        }
        // An item ends where the next begins, or at the end.
        let Some(done) = Transcoded::of(&item[..start], item_line, &mut json) else {
            return give_back(item, item_line, None, batch, emit);
        };
        match batch.as_mut() {
            None => {
                // The first item decides what the list holds: machines, or the parser
                // reads it.
                let raw = serde_json::from_slice::<RawItem>(&json);
                let kind = raw.as_ref().ok().and_then(RawItem::element_kind);
                let Ok(raw) = raw else {
                    return give_back(item, item_line, None, batch, emit);
                };
                if matches!(kind, None | Some(Format::LogsJson)) {
                    return give_back(item, item_line, None, batch, emit);
                }
                found.element(Ok(raw), item_line, &done.item_lines, true, ctx, emit);
                batch = Some(ListBatch::new(ctx, found));
            }
            Some(open) => {
                open.push(&json, item_line, done.item_lines);
                if open.json.len() >= BATCH_BYTES {
                    let full = std::mem::replace(open, ListBatch::new(ctx, found));
                    emit(Record::Batch(Box::new(full)));
                }
            }
        }
        *read += 1;
        item.drain(..start);
        item_line += done.lines;
        if ended {
            break;
        }
    }
    if let Some(last) = batch.filter(|b| !b.items.is_empty()) {
        emit(Record::Batch(Box::new(last)));
    }
    Outcome::Done
}

/// Items of a list read straight from their lines, as JSON, not parsed yet.
#[derive(Debug)]
struct ListBatch {
    path: String,
    mode: ReadMode,
    /// The list's machines' shape, as its first item decided.
    shape: Format,
    /// Every item's JSON, one after the other.
    json: Vec<u8>,
    /// Each item's end in `json`, first line, and the lines of its sequences' items.
    items: Vec<(usize, usize, HashMap<String, Vec<usize>>)>,
}

impl ListBatch {
    fn new(ctx: &FileContext, found: &Found) -> ListBatch {
        ListBatch {
            path: ctx.path.clone(),
            mode: ctx.options.mode,
            shape: found.list_format.unwrap_or(Format::ListJson),
            // Room for a whole batch at once: grown step by step, it is copied each time.
            json: Vec::with_capacity(BATCH_BYTES + (BATCH_BYTES >> 3)),
            items: Vec::new(),
        }
    }

    fn push(&mut self, json: &[u8], line: usize, item_lines: HashMap<String, Vec<usize>>) {
        self.json.extend_from_slice(json);
        self.items.push((self.json.len(), line, item_lines));
    }
}

impl Batch for ListBatch {
    /// Reads every item as the parser's reading of the list reads it: serde on the JSON it
    /// spells, and where serde refuses it, the refusal as the parser's value gives it.
    fn parse(&self, emit: &mut dyn FnMut(Record)) {
        let mut start = 0;
        for (end, line, item_lines) in &self.items {
            let json = &self.json[start..*end];
            start = *end;
            let value;
            let item = match serde_json::from_slice::<RawItem>(json) {
                Ok(item) => Ok(item),
                Err(_) => match serde_json::from_slice::<serde_json::Value>(json) {
                    Ok(parsed) => {
                        value = parsed;
                        RawItem::deserialize(&value).map_err(|e| e.to_string())
                    }
                    Err(err) => Err(err.to_string()),
                },
            };
            let item = match item {
                Ok(item) => item,
                Err(err) => {
                    emit(Record::Error(crate::input::record::InputError::at(
                        &self.path,
                        *line,
                        format!("invalid YAML element: {err}"),
                    )));
                    continue;
                }
            };
            // The first item decided the list holds machines: every other is read as one.
            let place = Place {
                path: &self.path,
                line: *line,
                item_lines,
                in_list: true,
                file_machine: None,
            };
            if let Some(log) = machine(item, &place, Some(self.shape), None, self.mode, emit) {
                emit(Record::Machine(log));
            }
        }
    }

    fn shape(&self) -> Option<Shape> {
        Some(Shape {
            format: self.shape,
            yaml: true,
        })
    }
}

/// One item turned into the JSON it spells, with the lines the parser would note.
struct Transcoded {
    /// How many lines it spans.
    lines: usize,
    item_lines: HashMap<String, Vec<usize>>,
}

impl Transcoded {
    /// `text`, an item from its `- ` to the next, as JSON into `json`; `None` where it is not
    /// metalctl's shape.
    fn of(text: &[u8], line: usize, json: &mut Vec<u8>) -> Option<Transcoded> {
        json.clear();
        // Printable ASCII only (and so UTF-8), checked in one pass over the item.
        if !text
            .iter()
            .all(|&b| (0x20..0x7f).contains(&b) || b == b'\n')
        {
            return None;
        }
        let text = std::str::from_utf8(text).ok()?;
        let mut lines = Vec::with_capacity(64);
        let mut start = 0;
        while start < text.len() {
            let end =
                memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
            let body = &text[start..end];
            start = end + 1;
            let bytes = body.as_bytes();
            // No trailing space, no blank line, no comment line.
            if bytes.last()? == &b' ' {
                return None;
            }
            let indent = bytes.iter().take_while(|&&b| b == b' ').count();
            if bytes[indent] == b'#' {
                return None;
            }
            lines.push((indent, &body[indent..]));
        }
        let mut reader = Items {
            lines,
            at: 0,
            first: line,
            json,
            path: Vec::new(),
            item_lines: HashMap::new(),
            depth: 0,
        };
        reader.item(0)?;
        (reader.at == reader.lines.len()).then_some(Transcoded {
            lines: reader.lines.len(),
            item_lines: reader.item_lines,
        })
    }
}

/// The lines of one item (indent, and what follows it) being turned into JSON.
struct Items<'t, 'j> {
    lines: Vec<(usize, &'t str)>,
    /// The next line to read.
    at: usize,
    /// The first line's number.
    first: usize,
    json: &'j mut Vec<u8>,
    /// The keys down to the node being read.
    path: Vec<&'t str>,
    item_lines: HashMap<String, Vec<usize>>,
    /// How many collections the node being read is inside.
    depth: usize,
}

/// How deep collections may nest: metalctl's machines nest six deep; serde_json refuses JSON
/// nested past 128, and a deeper item would take this reader's stack.
const MAX_DEPTH: usize = 64;

impl<'t> Items<'t, '_> {
    /// The next line, if it is at `indent` and begins a sequence item: what follows `- `.
    fn dash_at(&self, indent: usize) -> Option<&'t str> {
        let &(at, body) = self.lines.get(self.at)?;
        (at == indent).then(|| body.strip_prefix("- "))?
    }

    /// A sequence's item at `indent` (the current line, `- …`), after which the next line is
    /// read.
    fn item(&mut self, indent: usize) -> Option<()> {
        let rest = self.dash_at(indent)?;
        if key_of(rest).is_some() {
            self.mapping(indent + 2, Some(rest))
        } else {
            self.at += 1;
            self.value(rest)?;
            self.after_scalar(indent)
        }
    }

    /// A block sequence at `indent`: items while the next line is `- ` at that indent.
    fn sequence(&mut self, indent: usize) -> Option<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let mut lines = Vec::new();
        self.json.push(b'[');
        while self.dash_at(indent).is_some() {
            if !lines.is_empty() {
                self.json.push(b',');
            }
            lines.push(self.first + self.at);
            self.item(indent)?;
        }
        self.json.push(b']');
        self.item_lines.insert(self.path.join("/"), lines);
        self.depth -= 1;
        Some(())
    }

    /// A block mapping whose keys are at `indent`; its first entry is `inline` after a `- `.
    fn mapping(&mut self, indent: usize, inline: Option<&'t str>) -> Option<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.json.push(b'{');
        let mut previous: Option<&str> = None;
        let mut entry = inline;
        loop {
            let body = match entry.take() {
                Some(body) => body,
                None => match self.lines.get(self.at) {
                    Some(&(at, body)) if at == indent && !body.starts_with("- ") => body,
                    Some(&(at, _)) if at > indent => return None,
                    _ => break,
                },
            };
            self.at += 1;
            let (key, rest) = key_of(body)?;
            // Sorted keys, each once: the order a JSON object's members are read in, the
            // same whether or not a key repeats.
            if previous.is_some_and(|p| !before(p.as_bytes(), key.as_bytes())) {
                return None;
            }
            if previous.is_some() {
                self.json.push(b',');
            }
            previous = Some(key);
            self.json.push(b'"');
            self.json.extend_from_slice(key.as_bytes());
            self.json.extend_from_slice(b"\":");
            self.path.push(key);
            if rest.is_empty() {
                // A collection on the lines below: a sequence at the key's indent (go-yaml's
                // way) or deeper, or a mapping deeper.
                match self.lines.get(self.at) {
                    Some(&(at, body)) if at >= indent && body.starts_with("- ") => {
                        self.sequence(at)?
                    }
                    Some(&(at, _)) if at > indent => self.mapping(at, None)?,
                    _ => return None,
                }
            } else {
                self.value(rest.strip_prefix(' ')?)?;
                self.after_scalar(indent)?;
            }
            self.path.pop();
        }
        self.json.push(b'}');
        self.depth -= 1;
        Some(())
    }

    /// After a scalar on a line whose node is at `indent`: the next line is no deeper (a
    /// deeper one would continue the scalar).
    fn after_scalar(&self, indent: usize) -> Option<()> {
        match self.lines.get(self.at) {
            Some(&(at, _)) if at > indent => None,
            _ => Some(()),
        }
    }

    /// A scalar, or an empty flow collection, written as JSON.
    fn value(&mut self, text: &str) -> Option<()> {
        match text.as_bytes().first()? {
            b'\'' => {
                let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
                // Every quote inside is doubled, `''` for one; a lone one ends the scalar
                // before the line does.
                if inner.replace("''", "").contains('\'') {
                    return None;
                }
                self.string(&inner.replace("''", "'"));
            }
            b'"' => {
                let inner = text.strip_prefix('"')?.strip_suffix('"')?;
                if inner.contains(['"', '\\']) {
                    return None;
                }
                self.string(inner);
            }
            _ if text == "[]" => {
                self.json.extend_from_slice(b"[]");
                self.item_lines.insert(self.path.join("/"), Vec::new());
            }
            _ if text == "{}" => self.json.extend_from_slice(b"{}"),
            &first => {
                // A plain scalar, in block context, that ends at its line's end.
                let bytes = text.as_bytes();
                let breaks = bytes
                    .windows(2)
                    .any(|w| (w[0] == b':' && w[1] == b' ') || (w[0] == b' ' && w[1] == b'#'));
                if b"-?:,[]{}#&*!|>'\"%@` ".contains(&first) || breaks || text.ends_with(':') {
                    return None;
                }
                if matches!(
                    first,
                    b'0'..=b'9' | b'+' | b'.' | b'~' | b'n' | b'N' | b't' | b'T' | b'f' | b'F'
                ) {
                    let value = scalar(text, saphyr_parser::ScalarStyle::Plain, None);
                    if let serde_json::Value::String(text) = value {
                        self.string(&text);
                    } else {
                        self.json.extend_from_slice(value.to_string().as_bytes());
                    }
                } else {
                    self.string(text);
                }
            }
        }
        Some(())
    }

    /// Printable ASCII as a JSON string.
    fn string(&mut self, text: &str) {
        let mut bytes = text.as_bytes();
        self.json.push(b'"');
        while let Some(at) = memchr::memchr2(b'"', b'\\', bytes) {
            self.json.extend_from_slice(&bytes[..at]);
            self.json.extend_from_slice(&[b'\\', bytes[at]]);
            bytes = &bytes[at + 1..];
        }
        self.json.extend_from_slice(bytes);
        self.json.push(b'"');
    }
}

/// `key:` and what follows it, where a line is a mapping entry with a plain key that reads
/// as the same text (no number, null or boolean).
fn key_of(body: &str) -> Option<(&str, &str)> {
    let end = body
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))?;
    let (key, rest) = body.split_at(end);
    let rest = rest.strip_prefix(':')?;
    let first = *key.as_bytes().first()?;
    let special = matches!(key.len(), 4 | 5)
        && matches!(
            key,
            "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
        );
    (first.is_ascii_alphabetic() && !special && (rest.is_empty() || rest.starts_with(' ')))
        .then_some((key, rest))
}

/// Whether key `a` sorts before key `b`, byte by byte (as a JSON object's keys are held):
/// short keys, compared without a call.
fn before(a: &[u8], b: &[u8]) -> bool {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x < y;
        }
    }
    a.len() < b.len()
}
