//! A machine of a v1 export read straight from its bytes: metal-api's machine object as
//! metalctl writes it (`id`, an `events` container of `log`, `last_error_event`,
//! `last_event_time` and the two flags, `liveliness`, where it is: `partition`, `rackid`,
//! `size`, `allocation`), without a tape and without serde. It is stricter than the careful path (simd-json, then serde_json): anything
//! it does not know for certain — another shape, a number where text is read, an escape it
//! does not decode, a number it would have to judge, damage — answers `None`, and the caller
//! reads the element the careful way, so the answer and its errors stay what they were.

use std::borrow::Cow;

use super::runs::{leading_spaces, plain_run};
use crate::input::raw::lenient::{Loose, Slot, Text};
use crate::input::raw::shapes::{
    EventsField, RawAllocation, RawEvent, RawEventBlock, RawItem, RawRef,
};

/// The element's text where it is valid UTF-8, as the careful path requires of every byte,
/// skipped values too. simdutf8 (which simd-json brings along) checks 32 bytes a step, where
/// the standard library's check took a thirtieth of a lean list's instructions.
#[inline]
fn utf8(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

/// The machine the element holds, read as the careful path reads it; `None` where this
/// reader cannot be sure of that.
pub(crate) fn machine(bytes: &[u8]) -> Option<RawItem<'_>> {
    let text = utf8(bytes)?;
    let mut r = Reader::new(text);
    r.space();
    let item = r.item()?;
    r.space();
    (r.at == bytes.len()).then_some(item)
}

/// An element of a `machine logs -o json` array read straight from its bytes: an event
/// object (`time`, `event`, `message`), as the careful path reads it; `None` where this
/// reader cannot be sure of that (a machine where an event should be among them).
pub(crate) fn event(bytes: &[u8]) -> Option<RawItem<'_>> {
    let text = utf8(bytes)?;
    let mut r = Reader::new(text);
    r.space();
    let mut item = RawItem::default();
    r.object(|r, key| {
        match key {
            b"time" => item.time = r.text()?,
            b"event" => item.event = r.text()?,
            b"message" => item.message = r.text()?,
            key if RawItem::KEYS.iter().any(|k| k.as_bytes() == key) => return None,
            _ => r.skip()?,
        }
        Some(())
    })?;
    r.space();
    (r.at == bytes.len()).then_some(item)
}

/// A `machine logs -o json` file as [`event_array`] reads it.
pub(crate) struct EventArray<'a> {
    /// The line the array opens on.
    pub line: usize,
    /// Each event with the line its `{` is on.
    pub events: Vec<(RawItem<'a>, usize)>,
    /// metalctl's `Recent last error (… ago):` block after the array, with its line.
    pub last_error: Option<(RawEvent<'a>, usize)>,
}

/// A whole `machine logs -o json` file read straight from its bytes: the array printed a
/// member a line as metalctl prints it, then at most metalctl's `Recent last error` block,
/// then nothing but white space. `None` for anything else (one line, CRLF, an empty array,
/// another document after it, a key this reader does not take): the file is then read the
/// careful way from its start.
pub(crate) fn event_array(bytes: &[u8]) -> Option<EventArray<'_>> {
    // A list or a machine is told by its first key before the whole file is checked.
    let open = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    let head = bytes[open..].strip_prefix(b"[\n")?;
    let head = head.trim_ascii_start().strip_prefix(b"{\n")?;
    let first_key = head.trim_ascii_start();
    if ![&b"\"event\""[..], b"\"message\"", b"\"time\""]
        .iter()
        .any(|key| first_key.starts_with(key))
    {
        return None;
    }
    let text = utf8(bytes)?;
    let mut r = Reader::new(text);
    let line_at = |at: usize| 1 + memchr::memchr_iter(b'\n', &bytes[..at]).count();
    r.space();
    let line = line_at(r.at);
    r.byte(b'[')?;
    if r.peek()? != b'\n' {
        return None;
    }
    let mut events = Vec::with_capacity(bytes.len() / 120 + 1);
    let mut lines = Vec::with_capacity(events.capacity());
    r.event_lines(&mut events, |passed| lines.push(line + passed))?;
    r.space();
    let mut last_error = None;
    if bytes[r.at..].starts_with(b"Recent last error") {
        // As the careful path reads it: the rest of that line (at most 64 KiB of it), then
        // an event object.
        let end = memchr::memchr(b'\n', &bytes[r.at..]).filter(|&n| n < 64 << 10)?;
        r.at += end + 1;
        r.space();
        if r.peek()? != b'{' {
            return None;
        }
        let at = line_at(r.at);
        last_error = Some((r.event()?, at));
        r.space();
    }
    if r.at != bytes.len() || lines.len() != events.len() {
        return None;
    }
    let events = events.into_iter().map(|raw| RawItem {
        time: raw.time,
        event: raw.event,
        message: raw.message,
        ..RawItem::default()
    });
    Some(EventArray {
        line,
        events: events.zip(lines).collect(),
        last_error,
    })
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// Line feeds passed by [`Reader::next_line`], where an event's line is counted.
    lines: usize,
    /// How deep [`Reader::skip`] is in the value it steps over.
    depth: usize,
}

/// How deeply nested a value this reader steps over; a deeper one is left to the careful path
/// (each level is a call, and a document of a few hundred kilobytes could otherwise use up the
/// stack).
const DEEPEST: usize = 64;

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text,
            bytes: text.as_bytes(),
            at: 0,
            lines: 0,
            depth: 0,
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Steps over JSON whitespace; a pretty-printed export is mostly indentation.
    #[inline]
    fn space(&mut self) {
        loop {
            self.at += leading_spaces(&self.bytes[self.at..]);
            match self.peek() {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.at += 1,
                _ => return,
            }
        }
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.space();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// After a member's value: `true` for `,` (another follows), `false` for the closing
    /// bracket.
    #[inline]
    fn more(&mut self, close: u8) -> Option<bool> {
        self.space();
        match self.peek()? {
            b',' => {
                self.at += 1;
                Some(true)
            }
            b if b == close => {
                self.at += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// The members of an object, each key handed to `member` with the reader at its value.
    #[inline]
    fn object(&mut self, mut member: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        self.space();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.space();
            let key = self.key()?;
            self.eat(b':')?;
            self.space();
            member(self, key)?;
            if !self.more(b'}')? {
                return Some(());
            }
        }
    }

    /// A key without escapes (a key with one is read the careful way).
    #[inline]
    fn key(&mut self) -> Option<&'a [u8]> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.at + 1;
        let end = start + plain_run(&self.bytes[start..]);
        (self.bytes.get(end)? == &b'"').then(|| {
            self.at = end + 1;
            &self.bytes[start..end]
        })
    }

    /// `null`, consumed; `false` (nothing consumed) for anything else.
    #[inline]
    fn null(&mut self) -> bool {
        let null = self.bytes[self.at..].starts_with(b"null");
        if null {
            self.at += 4;
        }
        null
    }

    /// A string's text, borrowed where it holds no escape.
    #[inline]
    fn string(&mut self) -> Option<Cow<'a, str>> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.at + 1;
        let end = start + plain_run(&self.bytes[start..]);
        match *self.bytes.get(end)? {
            b'"' => {
                self.at = end + 1;
                Some(Cow::Borrowed(&self.text[start..end]))
            }
            b'\\' => {
                let mut out = String::with_capacity(end - start + 16);
                out.push_str(&self.text[start..end]);
                self.at = end;
                self.escaped(&mut out)?;
                Some(Cow::Owned(out))
            }
            _ => None,
        }
    }

    /// The rest of a string from its first escape on, decoded into `out`.
    fn escaped(&mut self, out: &mut String) -> Option<()> {
        loop {
            match *self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => {
                    let escape = *self.bytes.get(self.at + 1)?;
                    let c = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hex = self.text.get(self.at + 2..self.at + 6)?;
                            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                                return None;
                            }
                            // A surrogate (half of a pair, or alone) is left to the careful
                            // path, which judges it.
                            char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
                        }
                        _ => return None,
                    };
                    out.push(c);
                    self.at += if escape == b'u' { 6 } else { 2 };
                }
                _ => {
                    let start = self.at;
                    let end = start + plain_run(&self.bytes[start..]);
                    if end == start {
                        return None;
                    }
                    out.push_str(&self.text[start..end]);
                    self.at = end;
                }
            }
        }
    }

    /// Text where the careful path reads `Option<Text>`: a string, or `null` for none.
    #[inline]
    fn text(&mut self) -> Option<Option<Text<'a>>> {
        if self.null() {
            return Some(None);
        }
        self.string().map(|s| Some(Text(s)))
    }

    /// A flag where the careful path reads `Option<bool>`.
    #[inline]
    fn flag(&mut self) -> Option<Option<bool>> {
        let rest = &self.bytes[self.at..];
        let (value, len) = if rest.starts_with(b"true") {
            (Some(true), 4)
        } else if rest.starts_with(b"false") {
            (Some(false), 5)
        } else if rest.starts_with(b"null") {
            (None, 4)
        } else {
            return None;
        };
        self.at += len;
        Some(value)
    }

    /// One event object.
    fn event(&mut self) -> Option<RawEvent<'a>> {
        let mut event = RawEvent::default();
        self.object(|r, key| {
            match key {
                b"time" => event.time = r.text()?,
                b"event" => event.event = r.text()?,
                b"message" => event.message = r.text()?,
                _ => r.skip()?,
            }
            Some(())
        })?;
        Some(event)
    }

    /// An event where the careful path reads `Option<RawEvent>`.
    fn maybe_event(&mut self) -> Option<Option<RawEvent<'a>>> {
        if self.null() {
            return Some(None);
        }
        self.event().map(Some)
    }

    /// An array of events, or `null` for none.
    fn events(&mut self) -> Option<Option<Vec<RawEvent<'a>>>> {
        if self.null() {
            return Some(None);
        }
        self.eat(b'[')?;
        // A pretty-printed event takes some 130 bytes; sized once, not grown event by event.
        let mut events = Vec::with_capacity(self.bytes.len().saturating_sub(self.at) / 160 + 1);
        if self.peek() == Some(b'\n') {
            let open = self.at;
            if self.event_lines(&mut events, |_| {}).is_some() {
                return Some(Some(events));
            }
            // Not printed a member a line: read token by token.
            self.at = open;
            events.clear();
        }
        self.space();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(Some(events));
        }
        loop {
            self.space();
            events.push(self.event()?);
            if !self.more(b']')? {
                return Some(Some(events));
            }
        }
    }

    /// The events of an array printed one member a line, as metalctl prints them, from the
    /// line feed after `[` to the `]`: a line `{`, a line `"key": value,` per member (the
    /// last without the comma), a line `}` or `},`. Anything else answers `None`, and the
    /// array is read token by token.
    fn event_lines(
        &mut self,
        events: &mut Vec<RawEvent<'a>>,
        mut opened: impl FnMut(usize),
    ) -> Option<()> {
        loop {
            self.next_line()?;
            opened(self.lines);
            self.byte(b'{')?;
            let mut event = RawEvent::default();
            loop {
                self.next_line()?;
                let key = self.key()?;
                self.byte(b':')?;
                self.byte(b' ')?;
                let value = if self.null() {
                    None
                } else {
                    Some(Text(self.string()?))
                };
                match key {
                    b"time" => event.time = value,
                    b"event" => event.event = value,
                    b"message" => event.message = value,
                    _ => return None,
                }
                if self.peek() != Some(b',') {
                    break;
                }
                self.at += 1;
            }
            events.push(event);
            self.next_line()?;
            self.byte(b'}')?;
            if self.peek() == Some(b',') {
                self.at += 1;
                continue;
            }
            self.next_line()?;
            return self.byte(b']');
        }
    }

    /// A line feed and the next line's indentation.
    #[inline]
    fn next_line(&mut self) -> Option<()> {
        self.byte(b'\n')?;
        self.lines += 1;
        self.at += leading_spaces(&self.bytes[self.at..]);
        Some(())
    }

    /// Exactly this byte, next.
    #[inline]
    fn byte(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// metal-api's event container.
    fn block(&mut self) -> Option<RawEventBlock<'a>> {
        let mut block = RawEventBlock::default();
        self.object(|r, key| {
            match key {
                b"log" => block.log = r.events()?,
                b"last_error_event" => block.last_error_event = r.maybe_event()?,
                b"last_event_time" => block.last_event_time = r.text()?,
                b"crash_loop" => block.crash_loop = r.flag()?,
                b"failed_machine_reclaim" => block.failed_machine_reclaim = r.flag()?,
                _ => r.skip()?,
            }
            Some(())
        })?;
        Some(block)
    }

    /// An object named by its `id` (`partition`, `size`, `image`), or `null`.
    fn reference(&mut self) -> Option<Option<RawRef<'a>>> {
        if self.null() {
            return Some(None);
        }
        let mut reference = RawRef::default();
        self.object(|r, key| match key {
            b"id" => r.text().map(|id| reference.id = Loose(id)),
            _ => r.skip(),
        })?;
        Some(Some(reference))
    }

    /// A machine's allocation, of which who has it is read.
    fn allocation(&mut self) -> Option<RawAllocation<'a>> {
        let mut allocation = RawAllocation::default();
        self.object(|r, key| {
            match key {
                b"hostname" => allocation.hostname = Loose(r.text()?),
                b"project" => allocation.project = Loose(r.text()?),
                b"role" => allocation.role = Loose(r.text()?),
                b"image" => allocation.image = Loose(r.reference()?),
                _ => r.skip()?,
            }
            Some(())
        })?;
        Some(allocation)
    }

    /// The machine object: the members the careful path reads of a machine, and any other key
    /// it reads (another format's) sends the element there.
    fn item(&mut self) -> Option<RawItem<'a>> {
        let mut item = RawItem::default();
        self.object(|r, key| {
            match key {
                b"id" => item.id = r.text()?,
                b"liveliness" => item.liveliness = r.text()?,
                b"events" => {
                    item.events = if r.null() {
                        Slot::Null
                    } else if r.peek()? == b'{' {
                        Slot::Value(EventsField::Block(r.block()?))
                    } else {
                        return None;
                    }
                }
                b"allocation" => {
                    item.allocation = if r.null() {
                        Slot::Null
                    } else {
                        Slot::Value(Loose(Some(r.allocation()?)))
                    }
                }
                b"partition" => item.partition = Loose(r.reference()?),
                b"size" => item.size = Loose(r.reference()?),
                b"rackid" | b"rack" => item.rack = Loose(r.text()?),
                key if RawItem::KEYS.iter().any(|k| k.as_bytes() == key) => return None,
                _ => r.skip()?,
            }
            Some(())
        })?;
        Some(item)
    }

    /// Steps over any value, checking it as strictly as the careful path would.
    fn skip(&mut self) -> Option<()> {
        self.space();
        match self.peek()? {
            b'{' | b'[' if self.depth == DEEPEST => None,
            b'{' => {
                self.depth += 1;
                self.object(|r, _| r.skip())?;
                self.depth -= 1;
                Some(())
            }
            b'[' => {
                self.depth += 1;
                self.at += 1;
                self.space();
                if self.peek()? == b']' {
                    self.at += 1;
                    self.depth -= 1;
                    return Some(());
                }
                loop {
                    self.skip()?;
                    if !self.more(b']')? {
                        self.depth -= 1;
                        return Some(());
                    }
                }
            }
            b'"' => self.string().map(drop),
            b't' | b'f' => self.flag().map(drop),
            b'n' => self.null().then_some(()),
            _ => self.number(),
        }
    }

    /// A number a parser takes without judging it: an integer of up to 18 digits, with or
    /// without a fraction. An exponent or a longer integer (which parsers read differently,
    /// or refuse) is left to the careful path.
    fn number(&mut self) -> Option<()> {
        let rest = &self.bytes[self.at..];
        let mut i = usize::from(rest.first() == Some(&b'-'));
        let digits = rest[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 18 || (digits > 1 && rest[i] == b'0') {
            return None;
        }
        i += digits;
        if rest.get(i) == Some(&b'.') {
            let fraction = rest[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if fraction == 0 {
                return None;
            }
            i += 1 + fraction;
        }
        if matches!(rest.get(i), Some(b'e' | b'E')) {
            return None;
        }
        self.at += i;
        Some(())
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
