//! The careful scan: a reader that hands out whole JSON values, byte by byte through strings
//! and nesting, and knows the line and column of every one.

use std::io::{self, BufRead, Read};

use super::pushback::Pushback;

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
}

impl<R: BufRead> Splitter<R> {
    /// Wraps a buffered reader positioned at the start of the stream.
    pub fn new(reader: R) -> Self {
        Splitter::at(reader, Position { line: 1, column: 1 })
    }

    /// Wraps a reader whose first byte is at `position` of the file.
    pub fn at(reader: R, position: Position) -> Self {
        Splitter {
            reader: Pushback::new(reader),
            line: position.line,
            column: position.column,
        }
    }

    /// Where the next byte will be read.
    pub fn position(&self) -> Position {
        Position {
            line: self.line,
            column: self.column,
        }
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
        track(&mut self.line, &mut self.column, &[byte]);
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
            track(&mut self.line, &mut self.column, &buf[..used]);
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
        track(&mut self.line, &mut self.column, &out[before..]);
        Ok(())
    }

    /// Consumes the rest of the current line into `out` when it starts with `prefix`;
    /// otherwise leaves the input as it was.
    pub fn line_starting_with(
        &mut self,
        prefix: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, SplitError> {
        let (line, column) = (self.line, self.column);
        let mut text = Vec::new();
        self.read_line(&mut text)?;
        if text.starts_with(prefix) {
            out.extend_from_slice(&text);
            return Ok(true);
        }
        self.hand_back(text, Position { line, column }, None);
        Ok(false)
    }

    pub(super) fn syntax(&self, message: impl Into<String>) -> SplitError {
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
            track(&mut self.line, &mut self.column, &buf[..used]);
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

impl<R: BufRead> Splitter<R> {
    /// The bytes buffered ahead of the position, without consuming them.
    pub(super) fn buffered(&mut self) -> io::Result<&[u8]> {
        self.reader.fill_buf()
    }

    /// Reads bytes past the position without tracking them: whoever reads so hands back what
    /// it does not use, with where it stands ([`Splitter::hand_back`]).
    pub(super) fn read_raw(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }

    /// Puts bytes back to be read next, the first of them at `at`, and an error to be met
    /// once they are read.
    pub(super) fn hand_back(&mut self, bytes: Vec<u8>, at: Position, error: Option<io::Error>) {
        self.reader.put_back(bytes, error);
        (self.line, self.column) = (at.line, at.column);
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
fn track(line: &mut usize, column: &mut usize, bytes: &[u8]) {
    match memchr::memrchr(b'\n', bytes) {
        Some(last) => {
            *line += memchr::memchr_iter(b'\n', bytes).count();
            *column = bytes.len() - last;
        }
        None => *column += bytes.len(),
    }
}

pub(super) fn printable(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        (byte as char).to_string()
    } else {
        format!("\\x{byte:02x}")
    }
}
