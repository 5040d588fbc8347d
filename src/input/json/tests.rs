//! The JSON readers against hand-made documents: arrays, elements, batches and their errors.
use super::*;
use crate::input::read_reader;
use crate::input::record::InputOptions;

fn event(name: &str, message: &str, second: u32) -> String {
    format!(
        "{{\n        \"event\": \"{name}\",\n        \"message\": \"{message}\",\n        \"time\": \"2025-01-01T00:00:0{second}Z\"\n    }}"
    )
}

/// A `machine logs -o json` file as metalctl prints it: newest first, four-space indent.
fn logs_file(events: &[String], trailer: bool) -> String {
    let mut text = format!("[\n    {}\n]\n", events.join(",\n    "));
    if trailer {
        text.push_str("\nRecent last error (1m ago):\n\n{\n    \"event\": \"PXE Booting\",\n    \"message\": \"[unexpectedly received in state waiting]: x\",\n    \"time\": \"2025-01-01T00:00:09Z\"\n}\n");
    }
    text
}

fn read(text: &str) -> (Vec<MachineLog>, Vec<InputError>) {
    read_from(text.as_bytes())
}

/// The machines and problems read from any reader, as the file `m.json`.
fn read_from(reader: impl std::io::Read) -> (Vec<MachineLog>, Vec<InputError>) {
    let (mut machines, mut errors) = (Vec::new(), Vec::new());
    read_reader(
        reader,
        "m.json",
        &InputOptions::default(),
        &mut |record| match record {
            Record::Machine(log) => machines.push(log),
            Record::Error(err) => errors.push(err),
            _ => {}
        },
    );
    (machines, errors)
}

/// Each event as (name, line), oldest first.
fn lines(log: &MachineLog) -> Vec<(String, usize)> {
    let named = |e: &Event| (e.name.as_str().to_string(), e.line);
    log.events.iter().map(named).collect()
}

#[test]
fn an_indented_event_array_keeps_every_line_and_the_last_error_after_it() {
    let events = [
        event("Waiting", "w", 3),
        event("Registering", "r", 2),
        event("PXE Booting", "p", 1),
    ];
    let (machines, errors) = read(&logs_file(&events, true));
    assert!(errors.is_empty(), "{errors:?}");
    let [log] = &machines[..] else {
        panic!("one machine expected, got {}", machines.len())
    };
    // Elements open on lines 2, 7 and 12; `]` is line 17, the block's heading line 19 and
    // its object opens on line 21.
    let want = [("PXE Booting", 12), ("Registering", 7), ("Waiting", 2)];
    let want: Vec<_> = want.iter().map(|(n, l)| (n.to_string(), *l)).collect();
    assert_eq!(lines(log), want);
    let last = log
        .last_error_event
        .as_ref()
        .expect("the last error is read");
    assert_eq!((last.name.as_str(), last.line), ("PXE Booting", 21));
    // The same array on one line is cut byte by byte: the same events.
    let compact: String = logs_file(&events, true)
        .replace("\n    ", "")
        .replace("\n]", "]");
    let (again, errors) = read(&compact);
    assert!(errors.is_empty(), "{errors:?}");
    let names: Vec<_> = lines(&again[0]).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["PXE Booting", "Registering", "Waiting"]);
}

/// A `machine list -o json` element with what metal-api sends besides the events.
fn machine(id: &str, allocated: bool, nested_id: bool) -> serde_json::Value {
    // Large enough that skimming pays, so that the skim is what reads it.
    let disks: Vec<_> = (0..40)
        .map(|i| serde_json::json!({"name": format!("/dev/sd{i}"), "size": i}))
        .collect();
    let mut hardware = serde_json::json!({
        "nics": [{"name": "eth0", "neighbors": [{"mac": "aa:bb", "events": {"log": []}}]}],
        "disks": disks,
    });
    if nested_id {
        hardware["id"] = "inner".into();
    }
    serde_json::json!({
        "allocation": if allocated { serde_json::json!({"name": "a", "image": {"id": "x"}}) } else { serde_json::Value::Null },
        "bios": {"vendor": "AMI", "version": "3.0a"},
        "events": {
            "crash_loop": false,
            "last_event_time": "2025-01-01T00:00:02Z",
            "log": [
                {"event": "Waiting", "message": "[unexpectedly received in state waiting]: w", "time": "2025-01-01T00:00:02Z"},
                {"event": "PXE Booting", "message": "p", "time": "2025-01-01T00:00:01Z"}
            ]
        },
        "hardware": hardware,
        "id": id,
        "liveliness": "Alive",
        "tags": ["a \"quoted\" tag", "line\nbreak"],
    })
}

/// What a reader makes of each machine, without the lines (which depend on the layout).
fn seen(text: &str) -> Vec<String> {
    let (machines, errors) = read(text);
    assert!(errors.is_empty(), "{errors:?}");
    let show = |m: &MachineLog| {
        let events: Vec<_> = m
            .events
            .iter()
            .map(|e| (e.time, e.name.clone(), e.message.clone(), e.recorded_state))
            .collect();
        format!(
            "{} {:?} {:?} {events:?}",
            m.machine, m.machine_info, m.recorded
        )
    };
    machines.iter().map(show).collect()
}

#[test]
fn a_pretty_list_skimmed_reads_as_the_same_list_parsed_whole() {
    let list = serde_json::Value::Array(vec![
        machine("m-1", true, false),
        machine("m-2", false, false),
        machine("m-3", true, true),
    ]);
    let compact = serde_json::to_string(&list).unwrap();
    let whole = seen(&compact);
    assert_eq!(whole.len(), 3);
    assert!(
        whole[0].starts_with("m-1 MachineInfo { allocated: Some(true)"),
        "{}",
        whole[0]
    );
    assert!(
        whole[1].starts_with("m-2 MachineInfo { allocated: Some(false)"),
        "{}",
        whole[1]
    );
    // Two-space indent as serde and jq print, four as metalctl does.
    let pretty = serde_json::to_string_pretty(&list).unwrap();
    assert_eq!(seen(&pretty), whole);
    assert_eq!(seen(&pretty.replace("\n  ", "\n    ")), whole);
}

#[test]
fn a_bad_event_among_good_ones_is_named_at_its_line_and_the_rest_is_read() {
    let bad = "{\n        \"event\": {\"not\": \"a name\"},\n        \"time\": \"2025-01-01T00:00:02Z\"\n    }".to_string();
    let untimed = "{\n        \"event\": \"Waiting\"\n    }".to_string();
    let events = [
        event("Phoned Home", "h", 5),
        event("Waiting", "w", 4),
        bad,
        untimed,
        event("PXE Booting", "p", 1),
    ];
    let (machines, errors) = read(&logs_file(&events, false));
    let found: Vec<_> = errors.iter().map(|e| e.line).collect();
    // The bad element opens on line 12 and its bad name stands on line 13; the event
    // without a time opens on line 16.
    assert_eq!(found, [13, 16], "{errors:?}");
    assert!(
        errors[0].message.starts_with("invalid array element"),
        "{errors:?}"
    );
    assert_eq!(errors[1].message, "event without `time`");
    let want = [("PXE Booting", 19), ("Waiting", 7), ("Phoned Home", 2)];
    let want: Vec<_> = want.iter().map(|(n, l)| (n.to_string(), *l)).collect();
    assert_eq!(lines(&machines[0]), want);
}

#[test]
fn an_event_array_indented_out_of_step_is_read_as_a_parser_reads_it() {
    // An element that opens at another indent (so that no element line starts it), and a
    // nested object whose lines stand at the element indent: valid JSON that the cut at
    // element lines must not split wrongly.
    let mixed = logs_file(
        &[
            event("Waiting", "w", 4),
            event("Registering", "r", 3),
            event("Preparing", "p", 2),
            event("PXE Booting", "x", 1),
        ],
        false,
    )
    .replacen(
        "\n    {\n        \"event\": \"Preparing\"",
        "\n  {\n        \"event\": \"Preparing\"",
        1,
    );
    let nested = logs_file(
        &[
            event("Registering", "r", 3),
            event("Preparing", "p", 2)
                .replace("\"message\": \"p\",", "\"message\": \"p\",\n        \"extra\": [\n    {\n        \"k\": 1\n    }\n        ],"),
            event("PXE Booting", "x", 1),
        ],
        false,
    );
    for (text, names) in [
        (
            mixed,
            vec!["PXE Booting", "Preparing", "Registering", "Waiting"],
        ),
        (nested, vec!["PXE Booting", "Preparing", "Registering"]),
    ] {
        let (machines, errors) = read(&text);
        assert!(errors.is_empty(), "{errors:?}\n{text}");
        let got: Vec<_> = lines(&machines[0]).into_iter().map(|(n, _)| n).collect();
        assert_eq!(got, names, "{text}");
    }
}

#[test]
fn a_read_error_after_an_event_array_keeps_the_events_before_it() {
    /// The text, then a failing read.
    struct ThenFails<'a>(&'a [u8]);
    impl std::io::Read for ThenFails<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("disk gone"));
            }
            let n = self.0.len().min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let three = [
        event("Waiting", "w", 3),
        event("Registering", "r", 2),
        event("PXE Booting", "p", 1),
    ];
    for events in [&three[..1], &three[..]] {
        let text = logs_file(events, false);
        let (machines, errors) = read_from(ThenFails(text.as_bytes()));
        assert_eq!(machines.len(), 1, "{} events: {errors:?}", events.len());
        assert_eq!(machines[0].events.len(), events.len());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].message.contains("disk gone"), "{errors:?}");
    }
}

#[test]
fn a_list_with_a_machine_opening_out_of_step_keeps_every_machine() {
    let list = serde_json::Value::Array(vec![
        machine("m-1", true, false),
        machine("m-2", false, false),
        machine("m-3", true, false),
        machine("m-4", false, false),
    ]);
    let pretty = serde_json::to_string_pretty(&list).unwrap();
    let whole = seen(&pretty);
    // The third machine opens one column left of the others: no element line starts it, so
    // the cut hands it on with the second.
    let at = pretty
        .match_indices("},\n  {\n")
        .nth(1)
        .expect("a third machine")
        .0;
    let out_of_step = format!("{}}},\n {{\n{}", &pretty[..at], &pretty[at + 7..]);
    assert_eq!(out_of_step.len(), pretty.len() - 1);
    assert_eq!(seen(&out_of_step), whole);
}
