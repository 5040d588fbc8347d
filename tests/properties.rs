//! Property tests for the readers: no input makes them panic, and a machine written in any
//! input format reads back to the same events.

use std::io::Cursor;

use chrono::{DateTime, TimeDelta, Utc};
use fsmlog::{Container, Liveliness, StoredEvent};
use fsmlog::{EventKind, EventName, State, unexpected_message};
use fsmlog::{Exporter, Layout};
use fsmlog::{Format, InputOptions, MachineLog, Record, read_reader};
use proptest::prelude::*;

#[path = "properties/json_values.rs"]
mod json_values;
use json_values::*;

#[path = "properties/stream_lines.rs"]
mod stream_lines;

#[path = "properties/table_rows.rs"]
mod table_rows;

#[path = "properties/yaml_lists.rs"]
mod yaml_lists;

const FORCED: [Option<Format>; 9] = [
    None,
    Some(Format::LogsJson),
    Some(Format::DescribeJson),
    Some(Format::ListJson),
    Some(Format::EventApi),
    Some(Format::ContainerDump),
    Some(Format::V2Json),
    Some(Format::Ndjson),
    Some(Format::Table),
];

fn read_all(bytes: &[u8], name: &str, format: Option<Format>) -> Vec<Record> {
    let options = InputOptions {
        format,
        ..InputOptions::default()
    };
    let mut records = Vec::new();
    read_reader(Cursor::new(bytes), name, &options, &mut |r| records.push(r));
    records
}

/// Bytes that look enough like the formats to get past detection now and then.
fn lookalike() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop::sample::select(vec![
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "\"",
        "\n",
        "  ",
        "\"event\"",
        "\"time\"",
        "\"id\"",
        "\"events\"",
        "\"log\"",
        "\"machine\"",
        "\"uuid\"",
        "\"recentProvisioningEvents\"",
        "\"2025-09-22T12:23:48.063Z\"",
        "\"PXE Booting\"",
        "null",
        "true",
        "1e999",
        "\\u0000",
        "Mon, 22 Aug 2022 06:36:15 UTC",
        "Waiting",
        "| ",
        " |",
        "|---|",
        "==> a.txt <==",
        "Recent last error (1s ago):",
        "TIME  EVENT  MESSAGE",
        "[unexpectedly received in state",
        "\u{fffd}",
        "\t",
    ]);
    prop::collection::vec(pieces, 0..60).prop_map(|p| p.concat().into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        for format in FORCED {
            let _ = read_all(&bytes, "fuzz.json", format);
        }
    }

    #[test]
    fn lookalike_text_never_panics(bytes in lookalike()) {
        for format in FORCED {
            let _ = read_all(&bytes, "fuzz.txt", format);
        }
    }
}

fn kind() -> impl Strategy<Value = EventKind> {
    prop::sample::select(EventKind::ALL.to_vec())
}

/// Messages as metal-stack writes them: printable, no surrounding white space.
fn message() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9:./\"-]([a-zA-Z0-9 :./\"|-]{0,40}[a-zA-Z0-9:./\"-])?|"
}

fn stored_event(spread: i64) -> impl Strategy<Value = (i64, EventKind, String, Option<State>)> {
    (
        0..spread,
        kind(),
        message(),
        prop::option::weighted(0.3, prop::sample::select(State::ALL.to_vec())),
    )
}

prop_compose! {
    /// A container with whole-second times (tables print no fractions), newest first.
    fn container()(
        // Often one or a few distinct seconds, so equal times (kept in stored order) are common.
        mut raw in prop_oneof![Just(1i64), Just(3), Just(100_000)]
            .prop_flat_map(|spread| prop::collection::vec(stored_event(spread), 1..25)),
        error_index in any::<prop::sample::Index>(),
        with_error in any::<bool>(),
        crash_loop in any::<bool>(),
    ) -> Container {
        raw.sort_by_key(|e| std::cmp::Reverse(e.0));
        let start = DateTime::parse_from_rfc3339("2025-09-01T00:00:00Z").unwrap().with_timezone(&Utc);
        let events: Vec<StoredEvent> = raw
            .into_iter()
            .map(|(s, event, message, recorded)| StoredEvent {
                time: start + TimeDelta::seconds(s),
                event,
                message: match recorded {
                    Some(state) => unexpected_message(state, &message),
                    None => message,
                }
                .into(),
            })
            .collect();
        let last_error_event = with_error.then(|| events[error_index.index(events.len())].clone());
        Container {
            last_event_time: Some(events[0].time),
            events: events.into(),
            last_error_event,
            crash_loop,
            failed_machine_reclaim: false,
            liveliness: Liveliness::Alive,
            recorded_crash_loop: None,
        }
    }
}

/// (time, event, message as stored) of a read log, newest first like a container.
fn read_back(log: &MachineLog) -> Vec<(DateTime<Utc>, EventKind, String)> {
    log.events
        .iter()
        .rev()
        .map(|e| {
            let EventName::Known(kind) = e.name else {
                panic!("unknown {:?}", e.name)
            };
            (e.time, kind, e.recorded_message())
        })
        .collect()
}

fn layouts() -> [(Layout, &'static str); 11] {
    [
        (Layout::LogsJson, "m1.json"),
        (Layout::DescribeJson, "x.json"),
        (Layout::ListJson, "x.json"),
        (Layout::EventApi, "m1.json"),
        (Layout::ContainerDump, "x.json"),
        (Layout::V2Json, "x.json"),
        (Layout::Ndjson, "x.ndjson"),
        (Layout::Table, "m1.txt"),
        (Layout::Markdown, "m1.md"),
        (Layout::ConcatTable, "x.txt"),
        (Layout::ListYaml, "x.yaml"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_container_reads_back_from_every_layout(c in container()) {
        let want: Vec<_> = c.events.iter().map(|e| (e.time, e.event, e.message.to_string())).collect();
        for (layout, name) in layouts() {
            let mut exporter = Exporter::new(layout, Vec::new());
            exporter.machine("m1", &c).unwrap();
            let bytes = exporter.finish().unwrap();
            let records = read_all(&bytes, name, None);
            let mut machines = Vec::new();
            for record in records {
                match record {
                    Record::Machine(log) => machines.push(log),
                    other => prop_assert!(false, "{layout:?}: {other:?}\n{}", String::from_utf8_lossy(&bytes)),
                }
            }
            prop_assert_eq!(machines.len(), 1, "{:?}", layout);
            let log = &machines[0];
            prop_assert_eq!(&log.machine, "m1");
            // Equal times may come back in either stored order from a raw stream; compare as sets
            // there, in order everywhere else.
            let mut got = read_back(log);
            let mut want = want.clone();
            if layout == Layout::Ndjson {
                got.sort();
                want.sort();
            }
            prop_assert_eq!(got, want, "{:?}", layout);
            if layout != Layout::Ndjson {
                let got_error = log.last_error_event.as_ref().map(|e| (e.time, e.recorded_message()));
                let want_error = c.last_error_event.as_ref().map(|e| (e.time, e.message.to_string()));
                prop_assert_eq!(got_error, want_error, "{:?}", layout);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// The reader that takes a machine straight from its bytes gives what the careful path
    /// (simd-json, then serde_json) gives, or declines and leaves the element to it.
    #[test]
    fn a_machine_read_straight_from_its_bytes_is_the_careful_paths(bytes in machine_bytes()) {
        prop_assert_ne!(
            fsmlog::direct_agrees(&bytes),
            Some(false),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// A `machine logs -o json` file read whole straight from its bytes gives the records the
    /// careful path gives, in the same order, or is declined and left to it untouched.
    #[test]
    fn a_logs_file_read_straight_from_its_bytes_is_the_careful_paths(bytes in logs_bytes()) {
        prop_assert_ne!(
            fsmlog::whole_log_agrees(&bytes),
            Some(false),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
}

/// Every machine of a generated fleet, lean or with what the v1 API holds besides events, is
/// read straight from its bytes as metalctl prints it: the careful path is the exception.
#[test]
fn metalctls_printing_is_read_straight_from_the_bytes() {
    let rules = fsmlog::Ruleset::resolve("metal-api").unwrap();
    for index in 0..200 {
        let m = fsmlog::sim::fleet::machine(7, index, 30, &rules);
        let extra = if index % 2 == 0 {
            fsmlog::sim::details::details(7, index)
        } else {
            serde_json::Map::new()
        };
        let mut exporter = Exporter::new(Layout::DescribeJson, Vec::new());
        exporter.machine_with(&m.id, &m.container, &extra).unwrap();
        let bytes = exporter.finish().unwrap();
        assert_eq!(
            fsmlog::direct_agrees(&bytes),
            Some(true),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
}

/// Every `machine logs -o json` file of a generated fleet, with its `Recent last error`
/// block where the machine has one, is read straight from its bytes, as the careful path
/// reads it.
#[test]
fn metalctls_logs_files_are_read_straight_from_the_bytes() {
    let rules = fsmlog::Ruleset::resolve("metal-api").unwrap();
    let mut trailers = 0;
    for index in 0..200 {
        let m = fsmlog::sim::fleet::machine(7, index, 30, &rules);
        let mut exporter = Exporter::new(Layout::LogsJson, Vec::new());
        exporter.machine(&m.id, &m.container).unwrap();
        let bytes = exporter.finish().unwrap();
        trailers += usize::from(bytes.windows(17).any(|w| w == b"Recent last error"));
        assert_eq!(
            fsmlog::whole_log_agrees(&bytes),
            Some(true),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
    assert!(trailers > 20, "only {trailers} files with a last error");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The same for an element of a `machine logs -o json` array: an event, or what is no
    /// event there.
    #[test]
    fn an_event_read_straight_from_its_bytes_is_the_careful_paths(bytes in machine_bytes()) {
        let event = {
            let value: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
            match value.as_ref().and_then(|v| v["events"]["log"].get(0)) {
                Some(e) => serde_json::to_vec_pretty(e).unwrap(),
                None => bytes.clone(),
            }
        };
        prop_assert_ne!(
            fsmlog::direct_agrees(&event),
            Some(false),
            "{}",
            String::from_utf8_lossy(&event)
        );
    }
}

/// A `machine list` whose machines may hold a nested value with lines at the element indent
/// (valid JSON, indented out of step): one that opens `[{` on a member's line, closes at the
/// element indent and opens again there, the later objects maybe with an `id` of their own.
fn list_with_lines_at_the_element_indent() -> impl Strategy<Value = String> {
    let machine = (any::<bool>(), 0usize..3, any::<bool>(), 1usize..3);
    prop::collection::vec(machine, 1..6).prop_map(|machines| {
        let mut out = String::from("[\n");
        for (i, (odd, objects, with_id, events)) in machines.iter().enumerate() {
            out += &format!("    {{\n        \"id\": \"m{i}\",\n");
            if *odd {
                out += "        \"hw\": [{\n            \"a\": 1\n    }";
                for k in 0..*objects {
                    out += ",\n    {\n";
                    if *with_id {
                        out += &format!("        \"id\": \"phantom{i}-{k}\",\n");
                    }
                    out += "        \"events\": {\"log\": []}\n    }";
                }
                out += "],\n";
            }
            out += "        \"events\": {\n            \"log\": [\n";
            for e in 0..*events {
                out += &format!(
                    "                {{\n                    \"time\": \"2025-09-01T00:0{}:00Z\",\n                    \"event\": \"Waiting\",\n                    \"message\": \"w\"\n                }}{}\n",
                    events - e,
                    if e + 1 < *events { "," } else { "" }
                );
            }
            out += "            ]\n        }\n    }";
            out += if i + 1 < machines.len() { ",\n" } else { "\n" };
        }
        out + "]\n"
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A list is read as a JSON parser reads it, however its nested values are indented.
    #[test]
    fn a_list_is_read_as_a_parser_reads_it(text in list_with_lines_at_the_element_indent()) {
        let parsed: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        let ids: Vec<String> = parsed.iter().map(|m| m["id"].as_str().unwrap().to_string()).collect();
        let mut read = Vec::new();
        for record in read_all(text.as_bytes(), "list.json", None) {
            match record {
                Record::Machine(log) => read.push(log.machine),
                other => prop_assert!(false, "{other:?} in {text}"),
            }
        }
        prop_assert_eq!(read, ids, "{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// metalctl's rows read on the fast path hand on exactly what the careful classifier's
    /// reading of every line does: machines, events, problems, in the same order.
    #[test]
    fn a_table_read_on_the_fast_path_is_the_careful_paths(bytes in table_rows::table()) {
        prop_assert!(fsmlog::table_agrees(&bytes), "{:?}", String::from_utf8_lossy(&bytes));
    }
}

/// Every table of a generated fleet, as `machine logs` prints it, as `tail -n +1` joins them,
/// and as Markdown, and every table among the test data and the samples, reads on the fast
/// path as the careful classifier reads it.
#[test]
fn metalctls_tables_read_on_the_fast_path_as_the_careful_path_reads_them() {
    let rules = fsmlog::Ruleset::resolve("metal-api").unwrap();
    for layout in [Layout::Table, Layout::ConcatTable, Layout::Markdown] {
        let mut exporter = Exporter::new(layout, Vec::new());
        for index in 0..50 {
            let m = fsmlog::sim::fleet::machine(7, index, 30, &rules);
            exporter.machine(&m.id, &m.container).unwrap();
        }
        let bytes = exporter.finish().unwrap();
        assert!(fsmlog::table_agrees(&bytes), "{}", layout.name());
    }
    let mut files = 0;
    for root in ["testdata", "../shared/samples"] {
        let Ok(entries) = walkdir_txt(std::path::Path::new(root)) else {
            continue;
        };
        for path in entries {
            let bytes = std::fs::read(&path).unwrap();
            assert!(fsmlog::table_agrees(&bytes), "{}", path.display());
            files += 1;
        }
    }
    assert!(files > 10, "only {files} tables read");
}

/// The `.txt` files under a directory, at any depth.
fn walkdir_txt(root: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut found = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "txt") {
                found.push(path);
            }
        }
    }
    Ok(found)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A YAML list read straight from its lines hands on what saphyr's parser's reading of
    /// the whole file does, however it strays from metalctl's printing (or it declines).
    #[test]
    fn a_yaml_list_read_straight_from_its_lines_is_the_parsers(bytes in yaml_lists::changed_list()) {
        prop_assert_ne!(fsmlog::yaml_agrees(&bytes), Some(false), "{}", String::from_utf8_lossy(&bytes));
    }
}

/// metalctl's YAML lists are read straight from their lines, as the parser reads them: the
/// generated ones, and the test data's; no other YAML file reads differently.
#[test]
fn metalctls_yaml_lists_are_read_straight_from_their_lines() {
    for seed in 0..4 {
        let text = yaml_lists::metalctl_list(seed, 40);
        assert_eq!(fsmlog::yaml_agrees(text.as_bytes()), Some(true), "{text}");
    }
    // Keys Go reads as one, in either order (the parser's mapping holds them sorted, and the
    // last one read wins), and a key repeated.
    for (first, second) in [("ID", "id"), ("id", "ID"), ("id", "id")] {
        let text = format!(
            "---\n- events:\n    log: []\n  id: m-1\n- {first}: m-2\n  events:\n    log: []\n  {second}: m-3\n"
        );
        assert_eq!(fsmlog::yaml_agrees(text.as_bytes()), Some(true), "{text}");
    }
    // An item nested deeper than serde_json reads JSON, where a string is expected.
    for depth in [127, 200] {
        let mut text = "---\n- events:\n    log: []\n  id: m-1\n- events:\n    log:\n    - event: Waiting\n      message:\n".to_string();
        for level in 0..depth {
            text.push_str(&" ".repeat(8 + 2 * level));
            text.push_str("a:\n");
        }
        text.push_str(&" ".repeat(8 + 2 * depth));
        text.push_str("b: c\n  id: m-2\n");
        assert_eq!(fsmlog::yaml_agrees(text.as_bytes()), Some(true), "{depth}");
    }
    let list = std::fs::read("testdata/yaml/list/machines.yaml").unwrap();
    assert_eq!(fsmlog::yaml_agrees(&list), Some(true));
    for root in ["testdata", "../shared/samples"] {
        let mut todo = vec![std::path::PathBuf::from(root)];
        while let Some(dir) = todo.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for path in entries.map(|e| e.unwrap().path()) {
                if path.is_dir() {
                    todo.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                    let bytes = std::fs::read(&path).unwrap();
                    assert_ne!(
                        fsmlog::yaml_agrees(&bytes),
                        Some(false),
                        "{}",
                        path.display()
                    );
                }
            }
        }
    }
}
