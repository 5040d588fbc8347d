//! The direct reader against the careful path: every machine, event and logs file it reads
//! must read as serde does, and what it cannot be sure of it must decline.

use super::reader::DEEPEST;
use super::*;
use crate::input::raw::lenient::Slot;
use crate::input::raw::shapes::EventsField;
use crate::scan::plain_run;

fn parts(json: &str) -> Option<String> {
    machine(json.as_bytes(), ReadMode::Audit).map(|item| describe(&item))
}

/// What the careful path reads of the same bytes, in the same words.
fn careful(json: &str) -> Option<String> {
    serde_json::from_str::<RawItem>(json)
        .ok()
        .map(|item| describe(&item))
}

fn describe(item: &RawItem) -> String {
    let event = |e: &RawEvent| {
        format!(
            "{:?}/{:?}/{:?}",
            e.time.as_deref(),
            e.event.as_deref(),
            e.message.as_deref()
        )
    };
    let events = match &item.events {
        Slot::Absent => "absent".to_string(),
        Slot::Null => "null".to_string(),
        Slot::Value(EventsField::Block(b)) => format!(
            "log={:?} last_error={:?} last_time={:?} crash={:?} failed={:?}",
            b.log
                .as_ref()
                .map(|l| l.iter().map(event).collect::<Vec<_>>()),
            b.last_error_event.as_ref().map(event),
            b.last_event_time.as_deref(),
            b.crash_loop,
            b.failed_machine_reclaim
        ),
        Slot::Value(EventsField::List(_)) => "list".to_string(),
    };
    let allocation = match item.allocation {
        Slot::Absent => "absent",
        Slot::Null => "null",
        Slot::Value(_) => "value",
    };
    format!(
        "id={:?} liveliness={:?} allocation={allocation} events: {events}",
        item.id.as_deref(),
        item.liveliness.as_deref()
    )
}

#[test]
fn a_pretty_printed_machine_reads_as_the_careful_path_reads_it() {
    let json = r#"{
"allocation": {"name": "x", "sizes": [1, 2.5, -3], "ok": true, "n": null},
"events": {
    "crash_loop": false,
    "failed_machine_reclaim": true,
    "last_error_event": null,
    "last_event_time": "2025-06-23T05:39:40.435Z",
    "log": [
        {
            "event": "Preparing",
            "message": "starting metal-hammer version:\"v0.13.2\" \u00e9 \/ \\",
            "time": "2025-06-23T05:39:40.435Z"
        },
        {"event": "Waiting", "time": "2025-06-23T05:39:41Z", "extra": {"a": [[], {}]}}
    ]
},
"id": "m-1",
"hardware": {"disks": [{"size": 1000204886016}]},
"liveliness": "Alive",
"id": "m-2"
}"#;
    assert_eq!(parts(json), careful(json));
    let item = machine(json.as_bytes(), ReadMode::Audit).unwrap();
    let Slot::Value(EventsField::Block(block)) = &item.events else {
        panic!("a block")
    };
    let log = block.log.as_ref().unwrap();
    assert_eq!(
        log[0].message.as_deref(),
        Some(r#"starting metal-hammer version:"v0.13.2" é / \"#)
    );
}

#[test]
fn what_it_cannot_be_sure_of_goes_the_careful_way() {
    for json in [
        r#"{"id": 42, "events": {}}"#,
        r#"{"id": "m", "events": []}"#,
        r#"{"uuid": "m", "recentProvisioningEvents": {}}"#,
        r#"{"id": "m", "log": []}"#,
        r#"{"id": "m", "events": {"log": [{"time": 1}]}}"#,
        r#"{"id": "m", "events": {"crash_loop": "yes"}}"#,
        r#"{"id": "m", "x": 1e5}"#,
        r#"{"id": "m", "x": 12345678901234567890}"#,
        r#"{"id": "m", "x": 01}"#,
        r#"{"id": "m\ud83d\ude00"}"#,
        r#"{"i\u0064": "m"}"#,
        "{\"id\": \"m\tx\"}",
        r#"{"id": "m", "events": {"log": [}}"#,
        r#"{"id": "m"} x"#,
        r#"{"id": "m",}"#,
    ] {
        assert_eq!(parts(json), None, "{json}");
    }
    assert_eq!(
        machine(b"{\"id\": \"\xff\"}", ReadMode::Audit).map(|i| describe(&i)),
        None
    );
    // Past the first 32 bytes, where the check goes block by block: a stray byte, an
    // overlong form, an encoded surrogate, a sequence cut short, all in a skipped value.
    let pad = "x".repeat(100);
    for bad in [&b"\xff"[..], b"\xc0\xaf", b"\xed\xa0\x80", b"\xe6\xbc"] {
        let mut json = format!("{{\"id\": \"m\", \"note\": \"{pad}").into_bytes();
        json.extend_from_slice(bad);
        json.extend_from_slice(format!("{pad}\"}}").as_bytes());
        assert!(std::str::from_utf8(&json).is_err());
        assert_eq!(
            machine(&json, ReadMode::Audit).map(|i| describe(&i)),
            None,
            "{bad:?}"
        );
        assert!(event(&json).is_none() && event_array(&json).is_none());
    }
    let fine = format!("{{\"id\": \"m\", \"note\": \"{pad}漢é{pad}\"}}");
    assert!(machine(fine.as_bytes(), ReadMode::Audit).is_some());
}

#[test]
fn a_logs_file_gives_each_event_with_its_line_and_the_last_error_after_it() {
    // Line 1 blank, the array opens on line 2, events open on lines 3 and 8.
    let file = "\n[\n    {\n        \"event\": \"Waiting\",\n        \"message\": \"w\",\n        \"time\": \"2025-01-01T00:00:01Z\"\n    },\n    {\n        \"event\": \"Alive\",\n        \"time\": null\n    }\n]\n\nRecent last error (1h ago):\n\n{\n    \"event\": \"Crashed\",\n    \"time\": \"2025-01-01T00:00:00Z\"\n}\n";
    let array = event_array(file.as_bytes()).unwrap();
    assert_eq!(array.line, 2);
    let read: Vec<_> = array
        .events
        .iter()
        .map(|(e, line)| (e.event.as_deref(), e.time.as_deref(), *line))
        .collect();
    assert_eq!(
        read,
        [
            (Some("Waiting"), Some("2025-01-01T00:00:01Z"), 3),
            (Some("Alive"), None, 8)
        ]
    );
    let (last, line) = array.last_error.unwrap();
    assert_eq!((last.event.as_deref(), line), (Some("Crashed"), 16));
    // Not the shape read straight: the careful path reads these.
    for other in [
        file.replace('\n', "\r\n"),
        "[]".to_string(),
        "[\n]".to_string(),
        r#"[{"event": "Alive", "time": "2025-01-01T00:00:00Z"}]"#.to_string(),
        file.replace("Recent last error", "Recent error"),
        format!("{file}[]"),
        file.replace("\"message\"", "\"extra\""),
    ] {
        assert!(event_array(other.as_bytes()).is_none(), "{other}");
    }
}

#[test]
fn a_value_nested_deeper_than_it_steps_over_is_left_to_the_careful_path() {
    let nested = |depth: usize| {
        format!(
            r#"{{"id": "m", "x": {}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    assert!(parts(&nested(DEEPEST)).is_some());
    assert_eq!(parts(&nested(DEEPEST + 1)), None);
    assert!(
        careful(&nested(DEEPEST + 1)).is_some(),
        "the careful path reads it"
    );
}

#[test]
fn null_and_absent_are_told_apart() {
    for json in [
        r#"{"id": "m", "events": null, "allocation": null}"#,
        r#"{"id": "m"}"#,
        r#"{"id": null, "events": {"log": null, "last_error_event": {"event": "Crashed", "time": "2025-01-01T00:00:00Z"}}}"#,
        r#"{}"#,
    ] {
        assert_eq!(parts(json), careful(json), "{json}");
        assert!(parts(json).is_some(), "{json}");
    }
}

#[test]
fn plain_runs_stop_at_quotes_escapes_and_controls() {
    assert_eq!(plain_run(b"abcdefghijklmnop\"x"), 16);
    assert_eq!(plain_run(b"abc\\d"), 3);
    assert_eq!(plain_run(b"abcdefgh\x01ij"), 8);
    assert_eq!(
        plain_run("é ü ß 漢字 and more\"".as_bytes()),
        "é ü ß 漢字 and more".len()
    );
    assert_eq!(plain_run(b""), 0);
}
