//! The history's compact lines written by hand, byte for byte as serde_json writes them: a day
//! file's event and gap lines and a tail file's machines are a poll's most numerous writes, and
//! serde's serializer cost several times the bytes it wrote (measured: docs/performance.md).
//! Strings are escaped as serde_json escapes them: `"` and `\` with a backslash, `\b \t \n \f
//! \r` by name, every other control character as `\u00xx` (lowercase hex), nothing else.

/// Appends `text` quoted as a JSON string, as serde_json writes it.
pub fn string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    // Most strings need no escape: the readers' plain run finds the first byte that does.
    let first = crate::scan::plain_run(bytes);
    if first == bytes.len() {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut plain = 0;
    for (at, &b) in bytes.iter().enumerate().skip(first) {
        let escaped: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0..0x20 => {
                out.extend_from_slice(&bytes[plain..at]);
                plain = at + 1;
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[plain..at]);
        out.extend_from_slice(escaped);
        plain = at + 1;
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

/// A day file's event line, newline included: `{"machine","time","event","message"}`.
pub fn event_line(out: &mut Vec<u8>, machine: &str, time: &str, event: &str, message: &str) {
    out.extend_from_slice(b"{\"machine\":");
    string(out, machine);
    out.extend_from_slice(b",\"time\":");
    string(out, time);
    out.extend_from_slice(b",\"event\":");
    string(out, event);
    out.extend_from_slice(b",\"message\":");
    string(out, message);
    out.extend_from_slice(b"}\n");
}

/// A day file's gap marker, newline included: `{"machine","time","gap":true}`.
pub fn gap_line(out: &mut Vec<u8>, machine: &str, time: &str) {
    out.extend_from_slice(b"{\"machine\":");
    string(out, machine);
    out.extend_from_slice(b",\"time\":");
    string(out, time);
    out.extend_from_slice(b",\"gap\":true}\n");
}

/// Appends a whole number as serde_json writes it.
pub fn number(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut left = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (left % 10) as u8;
        left /= 10;
        if left == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    /// Every ASCII byte, escapes among plain runs, and text beyond ASCII.
    fn texts() -> Vec<String> {
        let mut texts: Vec<String> = (0u8..128).map(|b| char::from(b).to_string()).collect();
        texts.extend(
            [
                "",
                "plain",
                r#"starting metal-hammer version:"v0.13.2""#,
                "a\\b\"c\u{1}d\u{1f}e\u{7f}f\u{8}\u{c}\n\r\t",
                "ünïcödé \u{2028} 🐧 \u{feff}",
                "\u{0}\u{0}",
            ]
            .map(String::from),
        );
        texts
    }

    #[test]
    fn strings_are_quoted_as_serde_quotes_them() {
        for text in texts() {
            let mut out = Vec::new();
            string(&mut out, &text);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&text).unwrap(),
                "{text:?}"
            );
        }
        for n in [0, 1, -1, i64::MAX, i64::MIN, 1_748_772_297_000_000_123] {
            let mut out = Vec::new();
            number(&mut out, n);
            assert_eq!(out, serde_json::to_vec(&n).unwrap());
        }
    }

    #[derive(Serialize)]
    struct EventLine<'a> {
        machine: &'a str,
        time: &'a str,
        event: &'a str,
        message: &'a str,
    }

    #[derive(Serialize)]
    struct GapLine<'a> {
        machine: &'a str,
        time: &'a str,
        gap: bool,
    }

    #[test]
    fn lines_are_serdes() {
        let texts = texts();
        for (i, text) in texts.iter().enumerate() {
            let other = &texts[(i * 7 + 3) % texts.len()];
            let mut out = Vec::new();
            event_line(&mut out, text, other, "Phoned Home", text);
            let line = EventLine {
                machine: text,
                time: other,
                event: "Phoned Home",
                message: text,
            };
            let mut serde = serde_json::to_vec(&line).unwrap();
            serde.push(b'\n');
            assert_eq!(out, serde);
            out.clear();
            gap_line(&mut out, other, text);
            let line = GapLine {
                machine: other,
                time: text,
                gap: true,
            };
            let mut serde = serde_json::to_vec(&line).unwrap();
            serde.push(b'\n');
            assert_eq!(out, serde);
        }
    }
}
