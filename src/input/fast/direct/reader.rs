//! The direct reader's tokens: JSON read straight from its bytes, each step checked as
//! strictly as the careful path would check it, `None` wherever it cannot be sure.

use std::borrow::Cow;

use crate::input::raw::lenient::Text;
use crate::input::raw::shapes::RawEvent;
use crate::scan::{leading_spaces, plain_run};

pub(super) struct Reader<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
    /// Line feeds passed by [`Reader::next_line`], where an event's line is counted.
    pub(super) lines: usize,
    /// How deep [`Reader::skip`] is in the value it steps over.
    pub(super) depth: usize,
    /// Whether what only the audit judges by is read ([`ReadMode::Audit`]); else it is
    /// stepped over.
    ///
    /// [`ReadMode::Audit`]: crate::input::record::ReadMode::Audit
    pub(super) audit: bool,
}

/// How deeply nested a value this reader steps over; a deeper one is left to the careful path
/// (each level is a call, and a document of a few hundred kilobytes could otherwise use up the
/// stack).
pub(super) const DEEPEST: usize = 64;

impl<'a> Reader<'a> {
    pub(super) fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text,
            bytes: text.as_bytes(),
            at: 0,
            lines: 0,
            depth: 0,
            audit: false,
        }
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Steps over JSON whitespace; a pretty-printed export is mostly indentation.
    #[inline]
    pub(super) fn space(&mut self) {
        loop {
            self.at += leading_spaces(&self.bytes[self.at..]);
            match self.peek() {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.at += 1,
                _ => return,
            }
        }
    }

    #[inline]
    pub(super) fn eat(&mut self, byte: u8) -> Option<()> {
        self.space();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// After a member's value: `true` for `,` (another follows), `false` for the closing
    /// bracket.
    #[inline]
    pub(super) fn more(&mut self, close: u8) -> Option<bool> {
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
    pub(super) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &[u8]) -> Option<()>,
    ) -> Option<()> {
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
    pub(super) fn key(&mut self) -> Option<&'a [u8]> {
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
    pub(super) fn null(&mut self) -> bool {
        let null = self.bytes[self.at..].starts_with(b"null");
        if null {
            self.at += 4;
        }
        null
    }

    /// A string's text, borrowed where it holds no escape.
    #[inline]
    pub(super) fn string(&mut self) -> Option<Cow<'a, str>> {
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
    pub(super) fn escaped(&mut self, out: &mut String) -> Option<()> {
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
    pub(super) fn text(&mut self) -> Option<Option<Text<'a>>> {
        if self.null() {
            return Some(None);
        }
        self.string().map(|s| Some(Text(s)))
    }

    /// A flag where the careful path reads `Option<bool>`.
    #[inline]
    pub(super) fn flag(&mut self) -> Option<Option<bool>> {
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
    pub(super) fn event(&mut self) -> Option<RawEvent<'a>> {
        let mut event = RawEvent::default();
        self.object(|r, key| {
            match key {
                b"time" => event.time = r.text()?,
                b"event" => event.event = r.text()?.map(Into::into),
                b"message" => event.message = r.text()?,
                _ => r.skip()?,
            }
            Some(())
        })?;
        Some(event)
    }

    /// An event where the careful path reads `Option<RawEvent>`.
    pub(super) fn maybe_event(&mut self) -> Option<Option<RawEvent<'a>>> {
        if self.null() {
            return Some(None);
        }
        self.event().map(Some)
    }

    /// An array of events, or `null` for none.
    pub(super) fn events(&mut self) -> Option<Option<Vec<RawEvent<'a>>>> {
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
    pub(super) fn event_lines(
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
                    b"event" => event.event = value.map(Into::into),
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
    pub(super) fn next_line(&mut self) -> Option<()> {
        self.byte(b'\n')?;
        self.lines += 1;
        self.at += leading_spaces(&self.bytes[self.at..]);
        Some(())
    }

    /// Exactly this byte, next.
    #[inline]
    pub(super) fn byte(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Steps over any value, checking it as strictly as the careful path would.
    pub(super) fn skip(&mut self) -> Option<()> {
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
    pub(super) fn number(&mut self) -> Option<()> {
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
