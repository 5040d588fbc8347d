//! Cuts a JSON byte stream into its values without parsing them, so that a huge top-level array
//! is handed on one element at a time (memory bounded by the largest element) and each element
//! knows the line it starts on for error messages.

use std::cell::Cell;
use std::io::{self, BufRead, Read};

use memchr::memmem;

/// Why a value could not be cut out of the stream.
#[derive(Debug)]
pub enum SplitError {
    Io(io::Error),
    /// The stream is not JSON where a value should start, or ended inside one.
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
}

impl From<io::Error> for SplitError {
    fn from(err: io::Error) -> Self {
        SplitError::Io(err)
    }
}

/// A position in the stream, one-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// The largest value handed out whole; a larger one is an error, so that no input can make
/// memory grow without bound (a machine with 100 events is a few tens of KiB).
pub const MAX_VALUE: usize = 64 << 20;

/// A reader that hands out whole JSON values and tracks lines and columns.
pub struct Splitter<R> {
    reader: Pushback<R>,
    line: usize,
    column: usize,
    bytes_read: u64,
}

impl<R: BufRead> Splitter<R> {
    /// Wraps a buffered reader positioned at the start of the stream.
    pub fn new(reader: R) -> Self {
        Splitter::at(reader, Position { line: 1, column: 1 })
    }

    /// Wraps a reader whose first byte is at `position` of the file.
    pub fn at(reader: R, position: Position) -> Self {
        Splitter {
            reader: Pushback {
                front: Vec::new(),
                at: 0,
                inner: reader,
            },
            line: position.line,
            column: position.column,
            bytes_read: 0,
        }
    }

    /// Where the next byte will be read.
    pub fn position(&self) -> Position {
        Position {
            line: self.line,
            column: self.column,
        }
    }

    /// How many bytes have been consumed so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The next byte without consuming it; `None` at the end.
    pub fn peek(&mut self) -> Result<Option<u8>, SplitError> {
        Ok(self.reader.fill_buf()?.first().copied())
    }

    /// Consumes one byte.
    pub fn bump(&mut self) -> Result<Option<u8>, SplitError> {
        let Some(byte) = self.peek()? else {
            return Ok(None);
        };
        self.reader.consume(1);
        track(
            &mut self.line,
            &mut self.column,
            &mut self.bytes_read,
            &[byte],
        );
        Ok(Some(byte))
    }

    /// Skips white space and returns the next byte without consuming it.
    pub fn skip_whitespace(&mut self) -> Result<Option<u8>, SplitError> {
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(None);
            }
            let mut used = 0;
            let mut found = None;
            for &byte in buf {
                if matches!(byte, b' ' | b'\t' | b'\r' | b'\n') {
                    used += 1;
                } else {
                    found = Some(byte);
                    break;
                }
            }
            track(
                &mut self.line,
                &mut self.column,
                &mut self.bytes_read,
                &buf[..used],
            );
            self.reader.consume(used);
            if found.is_some() {
                return Ok(found);
            }
        }
    }

    /// Consumes the rest of the current line (for the text between metalctl's JSON documents),
    /// at most 64 KiB of it.
    pub fn read_line(&mut self, out: &mut Vec<u8>) -> Result<(), SplitError> {
        let before = out.len();
        io::Read::take(&mut self.reader, 64 << 10).read_until(b'\n', out)?;
        track(
            &mut self.line,
            &mut self.column,
            &mut self.bytes_read,
            &out[before..],
        );
        Ok(())
    }

    /// Consumes the rest of the current line into `out` when it starts with `prefix`;
    /// otherwise leaves the input as it was.
    pub fn line_starting_with(
        &mut self,
        prefix: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, SplitError> {
        let (line, column, bytes_read) = (self.line, self.column, self.bytes_read);
        let mut text = Vec::new();
        self.read_line(&mut text)?;
        if text.starts_with(prefix) {
            out.extend_from_slice(&text);
            return Ok(true);
        }
        self.reader.put_back(text);
        (self.line, self.column, self.bytes_read) = (line, column, bytes_read);
        Ok(false)
    }

    fn syntax(&self, message: impl Into<String>) -> SplitError {
        SplitError::Syntax {
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }

    /// Expects `byte` after optional white space and consumes it.
    pub fn expect(&mut self, byte: u8) -> Result<(), SplitError> {
        match self.skip_whitespace()? {
            Some(found) if found == byte => {
                self.bump()?;
                Ok(())
            }
            Some(found) => Err(self.syntax(format!(
                "expected `{}`, found `{}`",
                byte as char,
                printable(found)
            ))),
            None => Err(self.syntax(format!("expected `{}`, found the end", byte as char))),
        }
    }

    /// Appends the next whole JSON value to `out` and returns where it started.
    ///
    /// Strings and nesting are tracked but nothing is validated beyond that: the element is
    /// parsed afterwards, which gives the precise error.
    pub fn read_value(&mut self, out: &mut Vec<u8>) -> Result<Position, SplitError> {
        let Some(first) = self.skip_whitespace()? else {
            return Err(self.syntax("expected a JSON value, found the end"));
        };
        let start = self.position();
        match first {
            b'{' | b'[' | b'"' => self.read_nested(out)?,
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => self.read_scalar(out)?,
            other => {
                return Err(self.syntax(format!(
                    "expected a JSON value, found `{}`",
                    printable(other)
                )));
            }
        }
        Ok(start)
    }

    fn read_scalar(&mut self, out: &mut Vec<u8>) -> Result<(), SplitError> {
        while let Some(byte) = self.peek()? {
            if matches!(byte, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                break;
            }
            if out.len() >= MAX_VALUE {
                return Err(self.syntax(format!(
                    "a single JSON value is larger than {} MiB; not read",
                    MAX_VALUE >> 20
                )));
            }
            out.push(byte);
            self.bump()?;
        }
        Ok(())
    }

    fn read_nested(&mut self, out: &mut Vec<u8>) -> Result<(), SplitError> {
        let mut scan = Scan::default();
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                let what = if scan.in_string {
                    "a string"
                } else {
                    "a value"
                };
                return Err(self.syntax(format!("the input ends inside {what} (truncated?)")));
            }
            let end = scan.advance(buf);
            let used = end.unwrap_or(buf.len());
            out.extend_from_slice(&buf[..used]);
            track(
                &mut self.line,
                &mut self.column,
                &mut self.bytes_read,
                &buf[..used],
            );
            self.reader.consume(used);
            if out.len() > MAX_VALUE {
                return Err(self.syntax(format!(
                    "a single JSON value is larger than {} MiB; not read",
                    MAX_VALUE >> 20
                )));
            }
            if end.is_some() {
                return Ok(());
            }
        }
    }
}

/// A buffered reader with bytes put back in front of it: what a fast cut read past the end
/// of an array.
struct Pushback<R> {
    front: Vec<u8>,
    at: usize,
    inner: R,
}

impl<R> Pushback<R> {
    /// Puts `bytes` back, to be read before anything else.
    fn put_back(&mut self, mut bytes: Vec<u8>) {
        if self.at < self.front.len() {
            bytes.extend_from_slice(&self.front[self.at..]);
        }
        self.front = bytes;
        self.at = 0;
    }
}

impl<R: BufRead> Read for Pushback<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at >= self.front.len() {
            // A buffered reader hands a large read straight through once its buffer is empty.
            return self.inner.read(buf);
        }
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Pushback<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at < self.front.len() {
            return Ok(&self.front[self.at..]);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        if self.at < self.front.len() {
            self.at += amount;
            if self.at >= self.front.len() {
                self.front = Vec::new();
                self.at = 0;
            }
        } else {
            self.inner.consume(amount);
        }
    }
}

/// How far the scan of one nested value has come, kept across buffer refills.
///
/// Only the value's own kind of bracket is counted: inside an object, brackets of arrays are
/// balanced if the JSON is valid, and if it is not, parsing the value names the error.
#[derive(Debug, Default)]
struct Scan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The value's opening and closing bracket, or none for a bare string.
    brackets: Option<(u8, u8)>,
}

impl Scan {
    /// Scans `buf`; returns the length up to and including the value's last byte once the
    /// value is complete. `memchr` skips strings and the white space between structure, the
    /// hot path on real (indented) exports.
    fn advance(&mut self, buf: &[u8]) -> Option<usize> {
        let mut i = 0;
        while i < buf.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                let k = memchr::memchr2(b'"', b'\\', &buf[i..])?;
                i += k;
                if buf[i] == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                i += 1;
                continue;
            }
            let (open, close) = match self.brackets {
                Some(pair) => pair,
                None => {
                    let pair = match buf[i] {
                        b'[' => (b'[', b']'),
                        b'{' => (b'{', b'}'),
                        // A bare string: no brackets to count.
                        _ => (0, 0),
                    };
                    *self.brackets.insert(pair)
                }
            };
            let k = memchr::memchr3(b'"', open, close, &buf[i..])?;
            i += k;
            match buf[i] {
                b'"' => self.in_string = true,
                b if b == open => self.depth += 1,
                _ => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
            }
            i += 1;
        }
        None
    }
}

/// Moves a position over consumed bytes. Columns count bytes, as serde_json's do.
fn track(line: &mut usize, column: &mut usize, bytes_read: &mut u64, bytes: &[u8]) {
    *bytes_read += bytes.len() as u64;
    match memchr::memrchr(b'\n', bytes) {
        Some(last) => {
            *line += memchr::memchr_iter(b'\n', bytes).count();
            *column = bytes.len() - last;
        }
        None => *column += bytes.len(),
    }
}

fn printable(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        (byte as char).to_string()
    } else {
        format!("\\x{byte:02x}")
    }
}

/// The values of a piece of an array that holds more than one (`a, b`), each with where it
/// starts; `None` unless the piece is two or more whole values and commas.
pub fn values_in(piece: &[u8], start: Position) -> Option<Vec<(Vec<u8>, Position)>> {
    let mut scan = Splitter::at(piece, start);
    let mut values = Vec::new();
    loop {
        let mut value = Vec::new();
        let at = scan.read_value(&mut value).ok()?;
        values.push((value, at));
        match scan.skip_whitespace().ok()? {
            Some(b',') => {
                scan.bump().ok()?;
            }
            None if values.len() > 1 => return Some(values),
            _ => return None,
        }
    }
}

/// Reads a top-level array element by element, calling `each` with the element and its start.
pub fn for_each_element<R: BufRead>(
    splitter: &mut Splitter<R>,
    each: impl FnMut(&[u8], Position) -> Result<(), SplitError>,
) -> Result<(), SplitError> {
    for_each_element_fast(splitter, &Cell::new(false), each)
}

/// Like [`for_each_element`], but once `fast` is set (by `each`, when it knows the array is
/// the whole document) a pretty-printed array is cut at its element lines instead of scanned
/// byte by byte; see [`indented_elements`].
pub fn for_each_element_fast<R: BufRead>(
    splitter: &mut Splitter<R>,
    fast: &Cell<bool>,
    mut each: impl FnMut(&[u8], Position) -> Result<(), SplitError>,
) -> Result<(), SplitError> {
    splitter.expect(b'[')?;
    let mut element = Vec::new();
    if splitter.skip_whitespace()? == Some(b']') {
        splitter.bump()?;
        return Ok(());
    }
    loop {
        element.clear();
        let start = splitter.read_value(&mut element)?;
        each(&element, start)?;
        match splitter.skip_whitespace()? {
            Some(b',') => {
                splitter.bump()?;
                if fast.get()
                    && let Some(indent) = splitter.element_indent()?
                    && indented_elements(splitter, &indent, &mut each)?
                {
                    return Ok(());
                }
            }
            Some(b']') => {
                splitter.bump()?;
                return Ok(());
            }
            Some(other) => {
                return Err(splitter.syntax(format!(
                    "expected `,` or `]` after an array element, found `{}`",
                    printable(other)
                )));
            }
            None => return Err(splitter.syntax("the array is not closed (truncated?)")),
        }
    }
}

impl<R: BufRead> Splitter<R> {
    /// After an element's comma: the indent of the next element when it starts on a line of
    /// its own that holds nothing but the indent and `{` (as pretty printers write arrays).
    fn element_indent(&mut self) -> Result<Option<Vec<u8>>, SplitError> {
        let buf = self.reader.fill_buf()?;
        let Some(rest) = buf.strip_prefix(b"\n") else {
            return Ok(None);
        };
        let indent = rest
            .iter()
            .position(|&b| b != b' ' && b != b'\t')
            .unwrap_or(rest.len());
        if indent == 0 || !rest[indent..].starts_with(b"{\n") {
            return Ok(None);
        }
        Ok(Some(rest[..indent].to_vec()))
    }
}

/// Byte ranks for finding lines of pretty-printed JSON by their indent and first byte. The
/// default ranks take a space for a rare byte, so a searcher would stop at every line; here
/// spaces and newlines are the common bytes, and the byte after the indent is what is sought.
struct IndentedJson;

impl memchr::arch::all::packedpair::HeuristicFrequencyRank for IndentedJson {
    fn rank(&self, byte: u8) -> u8 {
        match byte {
            b' ' => 255,
            b'\n' => 250,
            _ => 100,
        }
    }
}

/// A searcher for a line's start (`\n`, an indent, a byte) in pretty-printed JSON.
pub fn line_finder(needle: &[u8]) -> memmem::Finder<'static> {
    memmem::FinderBuilder::new()
        .build_forward_with_ranker(IndentedJson, needle)
        .into_owned()
}

/// How much a cut-out element may grow before the careful scan takes over.
const FAST_LIMIT: usize = 8 << 20;

/// How much of an array the cut reads at once.
const READ_AHEAD: usize = 1 << 20;

thread_local! {
    /// The cut's read buffer, kept for the next array this thread cuts.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Cuts the rest of a pretty-printed array at its element lines: a line that is exactly
/// `INDENT{` starts the next element. Such a line cannot occur inside a string (JSON strings
/// hold no raw newline) nor, in a consistently indented document, deeper inside a value. The
/// search is `memmem`, far cheaper than looking at every byte. A piece that does not end on
/// an `INDENT}` line (an element on one line, a nested line at the element indent) is put
/// back and read by the careful scan, `false` then, and the caller reads on carefully. A
/// piece that holds two elements (the second opened at another indent) is handed on as one;
/// whoever fails to parse it splits it with [`values_in`]. So any valid document is read as
/// a parser reads it.
/// What follows the last element line (the last element and `]`) goes through the careful
/// scan, and `true` says the array is read.
fn indented_elements<R: BufRead>(
    splitter: &mut Splitter<R>,
    indent: &[u8],
    mut each: impl FnMut(&[u8], Position) -> Result<(), SplitError>,
) -> Result<bool, SplitError> {
    let mut separator = b"\n".to_vec();
    separator.extend_from_slice(indent);
    separator.extend_from_slice(b"{\n");
    // A piece cut out whole ends with its closing brace on a line of the same indent.
    let mut closing = b"\n".to_vec();
    closing.extend_from_slice(indent);
    closing.push(b'}');
    let finder = line_finder(&separator);
    // `pending[begin..filled]` starts with a separator; its first byte is at `line` (a
    // newline). The input is read straight into `pending` (a buffered reader would copy it
    // once more). The buffer is kept, initialised, from array to array on this thread, so
    // reading into it costs no clearing; it is taken, not borrowed, as a thread helping with
    // other work while it waits may cut another array meanwhile.
    let mut pending = SPARE.with(|spare| spare.take());
    if pending.len() < READ_AHEAD {
        pending = vec![0; READ_AHEAD];
    }
    let mut filled = 0;
    let mut begin = 0;
    let mut line = splitter.line;
    let mut searched = 1;
    let mut read_error = None;
    loop {
        let found = if begin + searched < filled {
            finder.find(&pending[begin + searched..filled])
        } else {
            None
        };
        if let Some(k) = found {
            let next = begin + searched + k;
            let open = begin + 1 + indent.len();
            let start = Position {
                line: line + 1,
                column: indent.len() + 1,
            };
            let piece = &pending[open..next];
            let element = piece
                .trim_ascii_end()
                .strip_suffix(b",")
                .map(<[u8]>::trim_ascii_end)
                .filter(|e| e.ends_with(&closing));
            let Some(element) = element else {
                // Not the shape this cut relies on: the careful scan reads on from here, and
                // names any mistake.
                let rest = pending[open..filled].to_vec();
                keep_spare(pending);
                splitter.bytes_read -= rest.len() as u64;
                (splitter.line, splitter.column) = (start.line, start.column);
                splitter.reader.put_back(rest);
                return Ok(false);
            };
            each(element, start)?;
            line += memchr::memchr_iter(b'\n', &pending[begin..next]).count();
            begin = next;
            searched = 1;
            continue;
        }
        searched = (filled - begin).saturating_sub(separator.len() - 1).max(1);
        if filled - begin > FAST_LIMIT {
            break;
        }
        if begin > 0 && begin >= filled / 2 {
            pending.copy_within(begin..filled, 0);
            filled -= begin;
            begin = 0;
        }
        if filled == pending.len() {
            pending.resize(pending.len() * 2, 0);
        }
        let n = match splitter.reader.read(&mut pending[filled..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => {
                // What is pending is still handed out before the error is named.
                read_error = Some(err);
                break;
            }
        };
        filled += n;
        splitter.bytes_read += n as u64;
    }
    let tail = io::Cursor::new(pending[begin..filled].to_vec());
    keep_spare(pending);
    if let Some(err) = read_error {
        let mut rest = Splitter::at(tail, Position { line, column: 1 });
        let _ = careful_rest(&mut rest, &mut each);
        return Err(SplitError::Io(err));
    }
    // The last element and `]`: the careful scan, on the pending bytes put back in front of
    // the rest of the input, so that what follows the array is the caller's to read.
    let tail = tail.into_inner();
    splitter.bytes_read -= tail.len() as u64;
    splitter.line = line;
    splitter.column = 1;
    splitter.reader.put_back(tail);
    careful_rest(splitter, &mut each)?;
    Ok(true)
}

/// Keeps the cut's buffer for the next array on this thread, unless a huge element grew it.
fn keep_spare(pending: Vec<u8>) {
    if pending.len() <= 4 * READ_AHEAD {
        SPARE.with(|spare| spare.replace(pending));
    }
}

/// The rest of an array after a comma, scanned byte by byte up to its `]`.
fn careful_rest<R: BufRead>(
    rest: &mut Splitter<R>,
    each: &mut impl FnMut(&[u8], Position) -> Result<(), SplitError>,
) -> Result<(), SplitError> {
    let mut element = Vec::new();
    loop {
        element.clear();
        let start = rest.read_value(&mut element)?;
        each(&element, start)?;
        match rest.skip_whitespace()? {
            Some(b',') => {
                rest.bump()?;
            }
            Some(b']') => {
                rest.bump()?;
                return Ok(());
            }
            Some(other) => {
                return Err(rest.syntax(format!(
                    "expected `,` or `]` after an array element, found `{}`",
                    printable(other)
                )));
            }
            None => return Err(rest.syntax("the array is not closed (truncated?)")),
        }
    }
}

/// The start lines of the elements of the array found by following `path` through nested
/// objects (`["events", "log"]`); empty when the path leads nowhere.
pub fn element_lines_at(text: &[u8], path: &[&str]) -> Result<Vec<usize>, SplitError> {
    let Some((key, rest)) = path.split_first() else {
        return Ok(Vec::new());
    };
    let mut splitter = Splitter::new(text);
    splitter.expect(b'{')?;
    let mut scratch = Vec::new();
    loop {
        match splitter.skip_whitespace()? {
            Some(b'}') | None => return Ok(Vec::new()),
            Some(b',') => {
                splitter.bump()?;
                continue;
            }
            _ => {}
        }
        scratch.clear();
        splitter.read_value(&mut scratch)?;
        let name: String = serde_json::from_slice(&scratch).unwrap_or_default();
        splitter.expect(b':')?;
        if name == *key {
            if rest.is_empty() {
                if splitter.skip_whitespace()? != Some(b'[') {
                    return Ok(Vec::new());
                }
                let mut lines = Vec::new();
                for_each_element(&mut splitter, |_, start| {
                    lines.push(start.line);
                    Ok(())
                })?;
                return Ok(lines);
            }
            scratch.clear();
            let start = splitter.read_value(&mut scratch)?;
            let inner = element_lines_at(&scratch, rest)?;
            return Ok(inner.into_iter().map(|l| l + start.line - 1).collect());
        }
        scratch.clear();
        splitter.read_value(&mut scratch)?;
    }
}

#[cfg(test)]
mod tests {
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
        for_each_element_fast(&mut splitter, &Cell::new(true), |bytes, start| {
            out.push((String::from_utf8(bytes.to_vec()).unwrap(), start.line));
            Ok(())
        })?;
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
        let trailing =
            "[\n    {\n        \"a\": 1\n    },\n    {\n        \"b\": 2\n    }\n]\nextra\n";
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
            for_each_element_fast(&mut splitter, &Cell::new(true), |_, start| {
                lines.push(start.line);
                Ok(())
            })
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
}
