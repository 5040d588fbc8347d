//! Skims a pretty-printed JSON object: keeps the members a reader needs and steps over the
//! others (a machine's hardware, IPMI, BIOS, tags) without parsing them, so that the parser
//! only sees what is read.
//!
//! It relies on the shape every pretty printer writes (Go's `MarshalIndent`, `jq`, Python's
//! `json.dumps(indent=…)`): one member per line at one indent, a nested value closing on a
//! line of that same indent. A line that is exactly that indent and a quote then starts a
//! member: a string holds no raw newline, and deeper values are indented further. An object
//! of any other shape is not skimmed, and the caller parses it whole; so is one where a value
//! holds a closing line of its member's indent before its end (nested lines that come back
//! to the member indent). A document crafted so that such lines balance would take a parser
//! to see through, which is what the skim saves: there it trusts the printer.

use crate::input::raw::Member;
use crate::scan::IndentLines;

/// Writes the members of `object` that `choose` keeps into `out`, as one object. `false` when
/// `object` is not of the shape described above (or a key holds an escape); `out` is then
/// of no use and the caller parses `object` whole. A skipped member's value is not checked
/// beyond its shape: a parser that reads only some fields never sees the rest.
pub fn skim(object: &[u8], choose: impl Fn(&[u8]) -> Member, out: &mut Vec<u8>) -> bool {
    out.clear();
    skim_into(object, &choose, out)
}

/// [`skim`], appending to `out`.
fn skim_into(object: &[u8], choose: &dyn Fn(&[u8]) -> Member, out: &mut Vec<u8>) -> bool {
    let Some(body) = object.strip_prefix(b"{\n") else {
        return false;
    };
    let indent = body.iter().take_while(|&&b| b == b' ').count();
    if indent == 0 || body.get(indent) != Some(&b'"') {
        return false;
    }
    // The object closes on a line of its own, less indented than its members.
    let Some(last_newline) = memchr::memrchr(b'\n', body) else {
        return false;
    };
    let closing = &body[last_newline + 1..];
    let closing_indent = closing.len().saturating_sub(1);
    if closing.last() != Some(&b'}')
        || closing_indent >= indent
        || closing[..closing_indent].iter().any(|&b| b != b' ')
    {
        return false;
    }
    let members = &body[..last_newline];
    // Every line of the member indent that closes something closes a member's value: one
    // such line more than there are values of several lines is one inside a value (nested
    // lines that came back to the member indent). They are counted in the same pass that
    // finds the members' lines, as they go by.
    let mut lines = IndentLines::new(members, indent);
    let mut closings = 0;
    // Where the next member's line begins (after its newline).
    let mut next_start = || {
        lines.find_map(|(newline, first)| match first {
            b'"' => Some(newline + 1),
            _ => {
                closings += 1;
                None
            }
        })
    };
    out.push(b'{');
    let mut kept = 0;
    let mut closed = 0;
    let mut next = Some(0);
    while let Some(start) = next {
        next = next_start();
        let line_end = next.map_or(members.len(), |next| next - 1);
        let text = &members[start + indent..line_end];
        let text = match (next, text.strip_suffix(b",")) {
            (Some(_), Some(text)) => text,
            (None, None) => text,
            // A comma missing between members, or one after the last.
            _ => return false,
        };
        let Some((key, value)) = split_member(text) else {
            return false;
        };
        match value_fits(value, indent) {
            Fit::Line => {}
            Fit::Lines => closed += 1,
            Fit::Not => return false,
        }
        let choice = choose(key);
        if matches!(choice, Member::Skip) {
            continue;
        }
        if kept > 0 {
            out.push(b',');
        }
        kept += 1;
        match choice {
            Member::Within(inner) if value.first() == Some(&b'{') => {
                out.extend_from_slice(&text[..text.len() - value.len()]);
                let nested = out.len();
                if !skim_into(value, &inner, out) {
                    out.truncate(nested);
                    out.extend_from_slice(value);
                }
            }
            _ => out.extend_from_slice(text),
        }
    }
    out.push(b'}');
    // The last member was found when no member line followed it: the search has gone through
    // all of them, and counted every closing line.
    closings == closed
}

/// A member's key (without quotes) and value, from `"key": value`; `None` for a key with an
/// escape or anything but `": "` after it.
fn split_member(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = text.strip_prefix(b"\"")?;
    let close = memchr::memchr2(b'"', b'\\', rest)?;
    if rest[close] == b'\\' {
        return None;
    }
    let value = rest[close + 1..].strip_prefix(b":")?.trim_ascii_start();
    Some((&rest[..close], value))
}

/// How a member's value is laid out.
enum Fit {
    /// A scalar, or an empty object or array, on the member's line.
    Line,
    /// An object or array whose last line, at the member's indent, closes it.
    Lines,
    /// Anything else: the object is not of the shape the skim relies on.
    Not,
}

/// Whether a member's value has the shape the skim relies on: a scalar on the member's line,
/// or an object or array that is empty or closes on a line of the member's indent. That no
/// other line of that indent closes something inside it (a document whose nested lines come
/// back to a member's indent by accident) is checked for all the members at once; one
/// crafted to mislead with brackets in strings would need a parser to see through, which is
/// what the skim saves.
fn value_fits(value: &[u8], indent: usize) -> Fit {
    let close = match value.first() {
        Some(b'{') => b'}',
        Some(b'[') => b']',
        Some(_) if value.contains(&b'\n') => return Fit::Not,
        Some(_) => return Fit::Line,
        None => return Fit::Not,
    };
    if value.len() == 2 {
        return if value[1] == close {
            Fit::Line
        } else {
            Fit::Not
        };
    }
    let Some(last_line) = value.len().checked_sub(indent + 2) else {
        return Fit::Not;
    };
    let tail = &value[last_line..];
    let closes = tail[0] == b'\n'
        && tail[1..=indent].iter().all(|&b| b == b' ')
        && tail[indent + 1] == close;
    if closes { Fit::Lines } else { Fit::Not }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choose(key: &[u8]) -> Member {
        match key {
            b"id" | b"events" => Member::Keep,
            _ => Member::Skip,
        }
    }

    fn skimmed(object: &str) -> Option<String> {
        let mut out = Vec::new();
        skim(object.as_bytes(), choose, &mut out).then(|| String::from_utf8(out).unwrap())
    }

    const MACHINE: &str = "{\n        \"allocation\": {\n            \"name\": \"x\"\n        },\n        \"hardware\": {\n            \"nics\": [\n                {\n                    \"id\": \"not a member\"\n                }\n            ]\n        },\n        \"id\": \"m-1\",\n        \"events\": {\n            \"log\": []\n        },\n        \"tags\": [],\n        \"name\": \"a \\\"quoted\\\" name\"\n    }";

    #[test]
    fn keeps_the_chosen_members_and_steps_over_the_rest() {
        let out = skimmed(MACHINE).expect("the shape fits");
        let want = "{\"id\": \"m-1\",\"events\": {\n            \"log\": []\n        }}";
        assert_eq!(out, want);
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["id"], "m-1");
    }

    fn within(key: &[u8]) -> Member {
        match key {
            b"id" => Member::Keep,
            b"partition" => Member::Within(|key| match key {
                b"id" => Member::Keep,
                _ => Member::Skip,
            }),
            _ => Member::Skip,
        }
    }

    #[test]
    fn a_nested_object_keeps_what_is_chosen_of_it_or_all_of_it_where_its_shape_is_odd() {
        let skim_within = |object: &str| {
            let mut out = Vec::new();
            assert!(skim(object.as_bytes(), within, &mut out), "{object:?}");
            String::from_utf8(out).unwrap()
        };
        let pretty = "{\n    \"id\": \"m\",\n    \"partition\": {\n        \"boot\": {\n            \"k\": \"v\"\n        },\n        \"id\": \"fra\"\n    }\n}";
        assert_eq!(
            skim_within(pretty),
            "{\"id\": \"m\",\"partition\": {\"id\": \"fra\"}}"
        );
        // Inside the partition a nested line comes back to the partition's member indent:
        // the partition is kept whole, for the parser to read.
        let odd = "{\n    \"id\": \"m\",\n    \"partition\": {\n        \"boot\": {\n            \"k\": 1\n        },\n        \"x\": {\n            \"y\": 1\n        }\n        },\n        \"id\": \"fra\"\n    }\n}";
        let partition = &odd[odd.find("{\n        \"boot").unwrap()..odd.len() - 2];
        assert_eq!(
            skim_within(odd),
            format!("{{\"id\": \"m\",\"partition\": {partition}}}")
        );
    }

    #[test]
    fn other_shapes_are_left_to_the_parser() {
        for object in [
            "{\"id\": \"m\", \"events\": {}}",
            "{\r\n        \"id\": \"m\"\r\n    }",
            "{\n        \"id\": \"m\"\n        \"events\": {}\n    }",
            "{\n        \"id\": \"m\",\n    }",
            "{\n        \"hardware\": {\n        \"id\": \"inner\"\n        },\n        \"id\": \"m\"\n    }",
            "{\n        \"i\\u0064\": \"m\"\n    }",
            "{\n        \"id\": \"m\"\n        }",
            "{\n        \"events\": {\n            \"log\": []\n    },\n        \"id\": \"m\"\n    }",
            // A nested object closing at the member indent makes `id` look like a member.
            "{\n        \"id\": \"real\",\n        \"hardware\": {\n            \"a\": {\n                \"b\": 1\n        },\n        \"id\": \"evil\",\n        \"x\": {\n            \"y\": 1\n        }\n        }\n    }",
        ] {
            assert_eq!(skimmed(object), None, "{object:?}");
        }
    }
}
