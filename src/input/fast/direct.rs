//! A machine of a v1 export read straight from its bytes: metal-api's machine object as
//! metalctl writes it (`id`, an `events` container of `log`, `last_error_event`,
//! `last_event_time` and the two flags, `liveliness`, where it is: `partition`, `rackid`,
//! `size`, `allocation`, and its `state` and `tags`), without a tape and without serde. It is
//! stricter than the careful path (simd-json, then serde_json): anything it does not know for
//! certain — another shape, a number where text is read, an escape it does not decode, a
//! number it would have to judge, damage — answers `None`, and the caller reads the element
//! the careful way, so the answer and its errors stay what they were.

use crate::input::raw::shapes::{RawEvent, RawItem};
use crate::input::record::ReadMode;

mod object;
mod reader;

use reader::Reader;

/// The element's text where it is valid UTF-8, as the careful path requires of every byte,
/// skipped values too. simdutf8 (which simd-json brings along) checks 32 bytes a step, where
/// the standard library's check took a thirtieth of a lean list's instructions.
#[inline]
fn utf8(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

/// The machine the element holds, read as the careful path reads it (what only the audit
/// judges by stepped over unless `mode` is [`ReadMode::Audit`]); `None` where this reader
/// cannot be sure of that.
pub(crate) fn machine(bytes: &[u8], mode: ReadMode) -> Option<RawItem<'_>> {
    let text = utf8(bytes)?;
    let mut r = Reader::new(text);
    r.audit = mode == ReadMode::Audit;
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
        // The fast path reads only strings, so no enum number is lost here.
        event: raw.event.map(|e| e.text),
        message: raw.message,
        ..RawItem::default()
    });
    Some(EventArray {
        line,
        events: events.zip(lines).collect(),
        last_error,
    })
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
