//! JSON whose strings never carry a character a terminal acts on: serde_json escapes the C0
//! controls as JSON requires, and this formatter also writes DEL, the C1 controls and the
//! characters that reorder text as `\u` escapes — still the same JSON value, so a program
//! reads back exactly what was in the input, and `cat report.json` is safe.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter, Serializer};

/// Wraps a formatter, escaping more in strings.
struct Safe<F>(F);

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if needs_escape(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                write!(w, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// Writes a value as indented JSON.
pub fn pretty<T: Serialize + ?Sized>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    let mut serializer = Serializer::with_formatter(out, Safe(PrettyFormatter::new()));
    value.serialize(&mut serializer).map_err(io::Error::from)
}

/// Writes a value as JSON on one line.
pub fn compact<T: Serialize + ?Sized>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    let mut serializer = Serializer::with_formatter(out, Safe(CompactFormatter));
    value.serialize(&mut serializer).map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_read_back() {
        let text = "a\u{1b}]0;x\u{7}\u{9b}\u{7f}\u{202e}é";
        let mut out = Vec::new();
        compact(&mut out, &text).unwrap();
        let json = String::from_utf8(out).unwrap();
        assert_eq!(json, "\"a\\u001b]0;x\\u0007\\u009b\\u007f\\u202eé\"");
        assert_eq!(serde_json::from_str::<String>(&json).unwrap(), text);
    }
}
