//! Raw stream lines as a collector writes them, and the ways they go astray: the reader that
//! takes a line straight from its bytes must hand on what serde's reading of every line does.

use proptest::prelude::*;

/// A JSON string member's value: plain text, or text serde must decode or reject.
fn value() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "\"m-1\"",
        "\"m-2\"",
        "\"\"",
        "\"Phoned Home\"",
        "\"PXE Booting\"",
        "\"Waiting\"",
        "\"Bogus\"",
        "\"2025-09-01T00:00:00Z\"",
        "\"2025-09-01T00:00:00.5Z\"",
        "\"2025-09-01T00:00:00.123456789Z\"",
        "\"2025-09-01T00:00:01Z\"",
        "\"2025-09-01T02:00:00+02:00\"",
        "\"2025-13-01T00:00:00Z\"",
        "\"[unexpectedly received in state Waiting]: Phoned Home\"",
        "\"caf\u{e9} \u{1F600}\"",
        "\"a\\\"b\"",
        "\"a\\nb\"",
        "\"\\u006d-1\"",
        "\"tab\there\"",
        "42",
        "null",
        "true",
        "\"unterminated",
    ])
    .prop_map(str::to_string)
}

/// A member: one of the four keys mostly, now and then another or a gap marker's.
fn member() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "machine",
        "machine",
        "time",
        "time",
        "event",
        "event",
        "message",
        "message",
        "machine_id",
        "id",
        "gap",
        "other",
        "mach\\u0069ne",
    ]);
    (
        key,
        value(),
        prop::sample::select(vec![":", ":", ":", " : "]),
    )
        .prop_map(|(k, v, colon)| format!("\"{k}\"{colon}{v}"))
}

/// One line: mostly a well-formed event of two machines around one instant, otherwise its
/// members reordered, repeated, spaced, or a gap marker, damage, an empty line, CRLF.
fn line() -> impl Strategy<Value = String> {
    let plain = (
        prop::sample::select(vec!["m-1", "m-2", "m-\u{e9}"]),
        prop::sample::select(vec![
            "2025-09-01T00:00:00Z",
            "2025-09-01T00:00:00.5Z",
            "2025-09-01T00:00:01Z",
        ]),
        prop::sample::select(vec!["PXE Booting", "Preparing", "Waiting", "Phoned Home"]),
        prop::sample::select(vec!["", "m", "m2"]),
    )
        .prop_map(|(m, t, e, msg)| {
            format!(
                "{{\"machine\":\"{m}\",\"time\":\"{t}\",\"event\":\"{e}\",\"message\":\"{msg}\"}}"
            )
        });
    // The collector's keys in its order, each value any of the above (escapes, numbers,
    // null, an unterminated string): the reader's shortcut for that order must agree too.
    let in_order = (value(), value(), value(), value()).prop_map(|(m, t, e, msg)| {
        format!("{{\"machine\":{m},\"time\":{t},\"event\":{e},\"message\":{msg}}}")
    });
    let members =
        prop::collection::vec(member(), 0..6).prop_map(|m| format!("{{{}}}", m.join(",")));
    let gap = prop::sample::select(vec![
        "{\"machine\":\"m-1\",\"time\":\"2025-09-01T00:00:00.5Z\",\"gap\":true}",
        "{\"machine\":\"m-2\",\"time\":\"2025-09-01T00:00:01Z\",\"gap\":true,\"event\":\"Waiting\"}",
    ])
    .prop_map(str::to_string);
    let odd = prop::sample::select(vec![
        "",
        "   ",
        "{",
        "}",
        "not json",
        "{\"machine\":\"m-1\"} {}",
        " {\"machine\":\"m-1\",\"time\":\"2025-09-01T00:00:00Z\",\"event\":\"Waiting\"} ",
        "{\"machine\":\"m-1\",\"time\":\"2025-09-01T00:00:00Z\",\"event\":\"Waiting\",}",
        "{\"machine\":\"m-1\",\"time\":\"2025-09-01T00:00:00Z\",\"event\":\"Waiting\"}\r",
        "{\"machine\":\"m\u{0}\",\"time\":\"2025-09-01T00:00:00Z\",\"event\":\"Waiting\"}",
    ])
    .prop_map(str::to_string);
    prop_oneof![6 => plain, 3 => in_order, 3 => members, 1 => gap, 1 => odd]
}

/// A stream of such lines, now and then a byte of it broken (invalid UTF-8, a cut line).
fn stream() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(line(), 0..40),
        prop::option::of((
            any::<prop::sample::Index>(),
            prop::sample::select(vec![0xffu8, b'"', b'\n', b'\\']),
        )),
        any::<bool>(),
    )
        .prop_map(|(lines, damage, last_newline)| {
            let mut bytes = lines.join("\n").into_bytes();
            if last_newline && !bytes.is_empty() {
                bytes.push(b'\n');
            }
            if let Some((at, byte)) = damage.filter(|_| !bytes.is_empty()) {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// A raw stream read with its lines straight from their bytes hands on the records
    /// (machines, events, lines, problems, in order) that reading each line with serde does.
    #[test]
    fn a_stream_read_straight_from_its_bytes_is_the_careful_paths(bytes in stream()) {
        prop_assert!(fsmlog::stream_agrees(&bytes), "{}", String::from_utf8_lossy(&bytes));
    }
}
