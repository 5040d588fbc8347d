//! Table lines as metalctl prints them, and the ways they go astray: the fast path that reads
//! metalctl's own rows must hand on what the careful classifier's reading of every line does.

use proptest::prelude::*;

/// A time at a row's start: mostly metalctl's fixed width, otherwise a field out of range, of
/// another width, a zone known, the user's (`--tz XST`, and `utc` bent to +01:00), numeric or
/// unknown, a fraction, RFC 3339, or damage.
fn time() -> impl Strategy<Value = String> {
    let fixed = (
        prop::sample::select(vec!["Mon", "Tue", "Xyz", "mon", "Mo1"]),
        prop::sample::select(vec!["01", "22", "29", "31", "00", "32", "2", "1x"]),
        prop::sample::select(vec!["Aug", "Feb", "aug", "SEP", "Foo", "Au"]),
        prop::sample::select(vec!["2022", "2024", "2023", "0000", "9999", "202"]),
        prop::sample::select(vec![
            "06:36:15",
            "23:59:59",
            "00:00:00",
            "24:00:00",
            "23:60:00",
            "23:59:60",
            "6:36:15",
            "06:36:15.25",
            "06:3x:15",
        ]),
        prop::sample::select(vec![
            "UTC", "utc", "CEST", "XST", "xst", "GMT", "Z", "+0200", "-0130", "+03", "+9999",
            "+123", "TOOLONG", "FOO", "UT1",
        ]),
    )
        .prop_map(|(wd, d, m, y, hms, z)| format!("{wd}, {d} {m} {y} {hms} {z}"));
    prop_oneof![
        6 => fixed,
        1 => prop::sample::select(vec![
            "22 Aug 2022 06:36:15 UTC",
            "2020-09-17T07:29:22.780Z",
            "Mon,  22 Aug 2022 06:36:15 UTC",
            "Mon, 22 Aug 2022 06:36:15",
            "Mon, 22 Aug 2022 06:36:15 UTCX",
            "Mon, 22 Aug 2022 06:36:15 UTC,",
        ])
        .prop_map(str::to_string),
    ]
}

/// What follows the time: the gap, the event and the message, in the shapes tables and
/// pastes give them.
fn after_time() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["  ", "   ", "\t", " ", "", "  \t", "x"]),
        prop::sample::select(vec![
            "PXE Booting",
            "Phoned Home",
            "Waiting",
            "Booting New Kernel",
            "booting new kernel",
            "MACHINE_PROVISIONING_EVENT_TYPE_ALIVE",
            "Bogus",
            "Two words",
            "",
        ]),
        prop::sample::select(vec!["  ", "    ", "\t", " ", ""]),
        prop::sample::select(vec![
            "",
            "machine sent extended dhcp request",
            "[unexpectedly received in state waiting]: machine sent extended dhcp request",
            "[unexpectedly received in bogus]: x",
            "boot into  distribution kernel",
            "caf\u{e9} \u{1F600}",
            "a | b",
        ]),
        prop::sample::select(vec!["", "  ", "\u{a0}", "\r", " \u{3000}"]),
    )
        .prop_map(|(gap, event, gap2, message, end)| format!("{gap}{event}{gap2}{message}{end}"))
}

/// One line: mostly a row, otherwise a header, a section, a last-error line, prose, an
/// indent, a marker, a Markdown row or rule, or a blank line.
fn line() -> impl Strategy<Value = String> {
    let row = (
        prop::sample::select(vec![
            "", "", "", "", "  ", "\u{a0}", "- ", "> ", "1. ", "| ", "Step 6: ",
        ]),
        time(),
        after_time(),
    )
        .prop_map(|(lead, t, rest)| format!("{lead}{t}{rest}"));
    prop_oneof![
        8 => row,
        1 => prop::sample::select(vec![
            "TIME                            EVENT           MESSAGE",
            "TIME  EVENT  MESSAGE",
            "==> m-1.txt <==",
            "==> m-2.txt <==",
            "Recent last error (1s ago):",
            "Here is the log:",
            "metalctl machine logs m-1",
            "|---|---|---|",
            "",
            "   ",
            "\u{fffd}",
        ])
        .prop_map(str::to_string),
    ]
}

/// A table file: lines joined by `\n` (now and then `\r\n`), with or without a last `\n`,
/// now and then with a byte that is not UTF-8.
pub fn table() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(line(), 0..24),
        prop::bool::ANY,
        prop::bool::ANY,
        prop::option::weighted(0.1, any::<usize>()),
    )
        .prop_map(|(lines, crlf, last, bad)| {
            let mut text = lines.join(if crlf { "\r\n" } else { "\n" });
            if last {
                text.push('\n');
            }
            let mut bytes = text.into_bytes();
            // A byte that is no UTF-8 somewhere: the batch is then checked line by line.
            if let Some(at) = bad {
                bytes.insert(at % (bytes.len() + 1), 0xff);
            }
            bytes
        })
}
