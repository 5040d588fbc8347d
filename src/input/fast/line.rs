//! A raw stream's line read straight from its bytes: `{"machine":…,"time":…,"event":…,
//! "message":…}` printed compactly, as a collector writes it (or with `machine_id` or `id`
//! for `machine`, in any order), without serde. Anything else — another key (`gap`), a key
//! twice, two ids, a value that is not a string, an escape of a surrogate, a control
//! character, a space between tokens, invalid UTF-8 — answers `None`, and the line is read
//! the careful way (serde), so the answer and its errors stay the same.

use std::borrow::Cow;

use crate::input::raw::RawEvent;
use crate::input::raw::lenient::{EnumText, Text};
use crate::scan::plain_run;

/// The machine a stream line names and its event, as serde reads them; `None` where this
/// reader cannot be sure of that. `bytes` is the line without surrounding white space.
pub(crate) fn stream_line(bytes: &[u8]) -> Option<(Text<'_>, RawEvent<'_>)> {
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let b = text.as_bytes();
    if b.first() != Some(&b'{') || b.last() != Some(&b'}') {
        return None;
    }
    if let Some(line) = collectors_line(text) {
        return Some(line);
    }
    let (mut machine, mut machine_id, mut id) = (None, None, None);
    let (mut time, mut event, mut message) = (None, None, None);
    let mut at = 1;
    loop {
        let key = match string(text, &mut at)? {
            Cow::Borrowed(key) => key,
            // A key with an escape is serde's to decode.
            Cow::Owned(_) => return None,
        };
        if b.get(at) != Some(&b':') {
            return None;
        }
        at += 1;
        let value = string(text, &mut at)?;
        let slot = match key {
            "machine" => &mut machine,
            "machine_id" => &mut machine_id,
            "id" => &mut id,
            "time" => &mut time,
            "event" => &mut event,
            "message" => &mut message,
            _ => return None,
        };
        // serde keeps a repeated key's last value; rare enough to leave to it.
        if slot.replace(value).is_some() {
            return None;
        }
        match b.get(at) {
            Some(b',') => at += 1,
            Some(b'}') if at + 1 == b.len() => break,
            _ => return None,
        }
    }
    // serde takes the first of `machine`, `machine_id` and `id` that is there; one alone
    // is that one.
    let machine = match (machine, machine_id, id) {
        (Some(m), None, None) | (None, Some(m), None) | (None, None, Some(m)) => m,
        _ => return None,
    };
    Some((
        Text(machine),
        RawEvent {
            time: time.map(Text),
            event: event.map(|e| EnumText::from(Text(e))),
            message: message.map(Text),
        },
    ))
}

/// A line as `fsmlog collect` writes it, its keys in its order (`machine`, `time`, `event`,
/// `message`): each key a comparison of bytes where the general loop reads it as a string.
/// `None` for anything else, which the general loop reads (as it reads this one alike).
fn collectors_line(text: &str) -> Option<(Text<'_>, RawEvent<'_>)> {
    let b = text.as_bytes();
    let mut at = 0;
    let mut value = |key: &[u8]| {
        if !b[at..].starts_with(key) {
            return None;
        }
        at += key.len();
        string(text, &mut at)
    };
    let machine = value(b"{\"machine\":")?;
    let time = value(b",\"time\":")?;
    let event = value(b",\"event\":")?;
    let message = value(b",\"message\":")?;
    if at + 1 != b.len() {
        return None;
    }
    Some((
        Text(machine),
        RawEvent {
            time: Some(Text(time)),
            event: Some(EnumText::from(Text(event))),
            message: Some(Text(message)),
        },
    ))
}

/// The string at `at`, `at` moved past it: borrowed where it holds no escape, decoded where
/// it holds escapes serde decodes alike; `None` for a control character, a surrogate escape
/// (serde pairs them, or rejects one alone) or an escape serde rejects.
pub(crate) fn string<'a>(text: &'a str, at: &mut usize) -> Option<Cow<'a, str>> {
    let b = text.as_bytes();
    if b.get(*at) != Some(&b'"') {
        return None;
    }
    let start = *at + 1;
    let mut end = start + plain_run(&b[start..]);
    if b.get(end) == Some(&b'"') {
        *at = end + 1;
        // Both ends are at a `"`, so at character boundaries.
        return Some(Cow::Borrowed(&text[start..end]));
    }
    let mut out = String::with_capacity(end - start + 16);
    out.push_str(&text[start..end]);
    loop {
        match b.get(end)? {
            b'"' => break,
            b'\\' => {
                let decoded = match b.get(end + 1)? {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        let hex = text.get(end + 2..end + 6)?;
                        if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                            return None;
                        }
                        // A surrogate is half a pair (or an error): serde's to judge.
                        char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
                    }
                    _ => return None,
                };
                out.push(decoded);
                // `\uXXXX` is six bytes, every other escape two.
                end += if b[end + 1] == b'u' { 6 } else { 2 };
            }
            // A control character: serde rejects it.
            _ => return None,
        }
        let run = plain_run(&b[end..]);
        out.push_str(&text[end..end + run]);
        end += run;
    }
    *at = end + 1;
    Some(Cow::Owned(out))
}
