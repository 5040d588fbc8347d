//! Raw streams in parts: rotated, cut anywhere, overlapping, given in any order, with ties
//! and fractions at the seams, and with a collector's gap markers. The parts answer as the
//! whole stream; input with blank lines before it reads as without them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{arg, pairs, report_of, run_json, stdout_of, testdata, write};

/// A line of machine `m`'s stream.
fn line(machine: &str, time: &str, event: &str, message: &str) -> String {
    format!(
        "{{\"machine\":\"{machine}\",\"time\":\"2025-09-01T{time}\",\"event\":\"{event}\",\"message\":\"{message}\"}}\n"
    )
}

/// A gap marker of machine `m`.
fn gap(machine: &str, time: &str) -> String {
    format!("{{\"machine\":\"{machine}\",\"time\":\"2025-09-01T{time}\",\"gap\":true}}\n")
}

/// What must not change however a stream is cut: the pairs, the machines flagged, and the
/// events and gaps counted.
type Answer = (Vec<(String, String, u64, u64)>, Value, [Value; 5]);

/// The [`Answer`] of `report -o json` over `paths`.
fn answer(paths: &[&Path]) -> Answer {
    let json = report_of(&paths.iter().map(arg).collect::<Vec<_>>());
    let inputs = &json["inputs"];
    (
        pairs(&json["unexpected"]),
        json["machines"].clone(),
        ["events", "replayed", "rejected", "gaps", "gap_machines"].map(|k| inputs[k].clone()),
    )
}

#[test]
fn logrotate_parts_with_a_tie_at_the_seam_answer_as_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let older = line("m", "00:00:30Z", "Installing", "i")
        + &line("m", "00:00:50Z", "Booting New Kernel", "b")
        + &line("m", "00:01:00Z", "Phoned Home", "ph")
        + &line("m", "00:02:00Z", "Planned Reboot", "reboot");
    let newer = line("m", "00:02:00Z", "PXE Booting", "dhcp")
        + &line("m", "00:03:00Z", "Preparing", "hammer");
    let whole = write(dir.path(), "whole.ndjson", &(older.clone() + &newer));
    // logrotate's names: `events.ndjson.1` is older, but `events.ndjson` sorts first.
    let one = write(dir.path(), "events.ndjson.1", &older);
    let current = write(dir.path(), "events.ndjson", &newer);
    let expected = answer(&[&whole]);
    assert_eq!(expected.0, vec![], "a planned reboot, then its PXE boot");
    assert_eq!(answer(&[&one, &current]), expected);
    assert_eq!(answer(&[&current, &one]), expected);
}

/// Two machines interleaved: whole seconds with ties, one second with and without a
/// fraction, a gap marker; each machine's first and last instant holds one event (parts
/// that lie wholly at one instant shared with another part could be either's).
fn interleaved() -> Vec<String> {
    vec![
        line("a", "00:00:00Z", "PXE Booting", "dhcp"),
        line("b", "00:00:05Z", "Phoned Home", "ph"),
        line("a", "00:00:10Z", "Preparing", "hammer"),
        line("a", "00:00:10.300Z", "Preparing", "hammer"),
        line("a", "00:01:00Z", "Phoned Home", "ph"),
        gap("b", "00:01:30Z"),
        line("b", "00:01:30Z", "PXE Booting", "dhcp"),
        line("a", "00:02:00Z", "Planned Reboot", "reboot"),
        line("a", "00:02:00Z", "PXE Booting", "dhcp"),
        line("b", "00:02:00Z", "Preparing", "hammer"),
        line("b", "00:02:00Z", "Registering", "r"),
        line("a", "00:03:00Z", "Preparing", "hammer"),
        line("b", "00:04:00Z", "Waiting", "w"),
    ]
}

/// Every order of `n` parts.
fn orders(n: usize) -> Vec<Vec<usize>> {
    if n == 1 {
        return vec![vec![0]];
    }
    let mut all = Vec::new();
    for rest in orders(n - 1) {
        for at in 0..=rest.len() {
            let mut order = rest.clone();
            order.insert(at, n - 1);
            all.push(order);
        }
    }
    all
}

#[test]
fn a_raw_stream_cut_at_every_line_into_two_or_three_parts_in_any_order_is_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let lines = interleaved();
    let n = lines.len();
    let whole = write(dir.path(), "whole.ndjson", &lines.concat());
    let expected = answer(&[&whole]);
    // Checked by hand: a's two Preparing of one second are Preparing/Preparing (its later
    // Preparing after a planned reboot clears the crash loop); b's gap keeps its Phoned Home
    // and PXE Booting apart.
    let preparing = ("Preparing".to_string(), "Preparing".to_string(), 1, 1);
    assert_eq!(expected.0, vec![preparing]);
    assert_eq!(expected.2, [12, 12, 0, 1, 1].map(Value::from));
    let mut cuts: Vec<Vec<usize>> = (1..n).map(|a| vec![a]).collect();
    cuts.extend((1..n).flat_map(|a| (a + 1..n).map(move |b| vec![a, b])));
    for cut in cuts {
        let mut bounds = vec![0];
        bounds.extend(&cut);
        bounds.push(n);
        // Named newest first, as logrotate names them, so that path order is wrong.
        let parts: Vec<PathBuf> = bounds
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let name = format!("events.ndjson.{}", bounds.len() - 2 - i);
                write(dir.path(), &name, &lines[w[0]..w[1]].concat())
            })
            .collect();
        for order in orders(parts.len()) {
            let given: Vec<&Path> = order.iter().map(|&i| parts[i].as_path()).collect();
            assert_eq!(answer(&given), expected, "cut {cut:?}, order {order:?}");
        }
        for part in parts {
            std::fs::remove_file(part).unwrap();
        }
    }
}

#[test]
fn a_line_given_twice_counts_once_in_one_file_and_in_two() {
    let dir = tempfile::tempdir().unwrap();
    let stream = testdata("fleet-v0.42.2/ndjson/events.ndjson");
    let text = std::fs::read_to_string(&stream).unwrap();
    let twice = write(dir.path(), "twice.ndjson", &text.repeat(2));
    let a = write(dir.path(), "a.ndjson", &text);
    let b = write(dir.path(), "b.ndjson", &text);
    let once = report_of(&[arg(&stream)]);
    let lines = text.lines().count() as u64;
    for json in [report_of(&[arg(&twice)]), report_of(&[arg(&a), arg(&b)])] {
        assert_eq!(json["inputs"]["events"], 2 * lines);
        assert_eq!(json["inputs"]["duplicates"], lines);
        assert_eq!(json["inputs"]["replayed"], once["inputs"]["replayed"]);
        assert_eq!(json["unexpected"], once["unexpected"]);
    }
}

#[test]
fn one_second_with_and_without_a_fraction_is_two_events_in_two_parts() {
    let dir = tempfile::tempdir().unwrap();
    let first = line("m", "00:00:00Z", "PXE Booting", "dhcp");
    let whole_second = line("m", "00:00:10Z", "Preparing", "hammer");
    let fraction = line("m", "00:00:10.300Z", "Preparing", "hammer");
    let one = write(
        dir.path(),
        "one.ndjson",
        &(first.clone() + &whole_second + &fraction),
    );
    let a = write(dir.path(), "a.ndjson", &(first + &whole_second));
    let b = write(dir.path(), "b.ndjson", &fraction);
    let expected = answer(&[&one]);
    assert_eq!(expected.0[0].0, "Preparing");
    assert_eq!(expected.0[0].1, "Preparing");
    assert_eq!(expected.1["crash_loop"], serde_json::json!(["m"]));
    assert_eq!(answer(&[&a, &b]), expected);
    assert_eq!(answer(&[&b, &a]), expected);
}

#[test]
fn a_gap_marker_keeps_the_events_on_either_side_from_making_a_pair() {
    let dir = tempfile::tempdir().unwrap();
    let before = line("m", "00:01:00Z", "Phoned Home", "ph");
    let after = line("m", "00:03:00Z", "PXE Booting", "dhcp");
    let plain = write(dir.path(), "plain.ndjson", &(before.clone() + &after));
    let phoned_pxe = ("Phoned Home".to_string(), "PXE Booting".to_string(), 1, 1);
    assert_eq!(answer(&[&plain]).0, vec![phoned_pxe]);
    let json = report_of(&[arg(&plain)]);
    assert!(
        json["inputs"].get("gaps").is_none(),
        "no marker, no new field"
    );
    // The marker first in the file, with a message; the same marker twice is one gap.
    let marker = "{\"machine\":\"m\",\"time\":\"2025-09-01T00:02:00Z\",\"gap\":true,\"message\":\"poll missed\"}\n";
    let text = marker.to_string() + &before + marker + &after + &gap("n", "00:00:00Z");
    let gapped = write(dir.path(), "gapped.ndjson", &text);
    let json = report_of(&[arg(&gapped)]);
    assert_eq!(json["unexpected"], serde_json::json!([]));
    assert_eq!(json["inputs"]["events"], 2, "a marker is no event");
    assert_eq!(json["inputs"]["gaps"], 2);
    assert_eq!(json["inputs"]["gap_machines"], 2);
    let (code, text, _) = stdout_of(&["report", "--color", "never", arg(&gapped)]);
    assert_eq!(code, 0);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with(" · 2 gaps on 2 machines"),
        "{text}"
    );
    let (_, plain_text, _) = stdout_of(&["report", "--color", "never", arg(&plain)]);
    assert!(!plain_text.contains("gap"), "{plain_text}");
    // A marker that names an event is no marker.
    let odd = write(
        dir.path(),
        "odd.ndjson",
        &(before
            + "{\"machine\":\"m\",\"time\":\"2025-09-01T00:02:00Z\",\"gap\":true,\"event\":\"Alive\"}\n"),
    );
    let (code, _, stderr) = run_json(&["report", "-o", "json", arg(&odd)]);
    assert_eq!(code, 2);
    assert!(stderr.contains("odd.ndjson:2: a gap marker"), "{stderr}");
}

#[test]
fn blank_lines_past_the_head_before_any_format_are_looked_past() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = [
        "fleet-v0.42.2/ndjson/events.ndjson",
        "fleet-v0.42.2/list-json/machines.json",
        "fleet-v0.42.2/text/043afe87-2ce5-45b2-824a-4b04924cf73f.txt",
        "fleet-v0.42.2/logs-json/043afe87-2ce5-45b2-824a-4b04924cf73f.json",
        "yaml/describe/043afe87-2ce5-45b2-824a-4b04924cf73f.yaml",
    ];
    let blanks = [
        "\n".repeat(300 << 10),
        " ".repeat(300 << 10) + "\n",
        "\t\r\n".repeat(100 << 10),
    ];
    for input in inputs {
        let original = testdata(input);
        let name = original.file_name().unwrap().to_str().unwrap();
        let expected = report_of(&[arg(&original)]);
        for blank in &blanks {
            let text = std::fs::read_to_string(&original).unwrap();
            let padded = write(dir.path(), name, &(blank.clone() + &text));
            let got = report_of(&[arg(&padded)]);
            assert_eq!(got["unexpected"], expected["unexpected"], "{input}");
            assert_eq!(
                got["inputs"]["machines"], expected["inputs"]["machines"],
                "{input}"
            );
            assert_eq!(
                got["inputs"]["events"], expected["inputs"]["events"],
                "{input}"
            );
        }
    }
    // Lines are still counted from the file's first: a damaged line is named where it is.
    let broken = write(
        dir.path(),
        "broken.json",
        &("\n".repeat(300 << 10) + "[{\"id\": }]\n"),
    );
    let (code, _, stderr) = run_json(&["report", "-o", "json", arg(&broken)]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&format!("broken.json:{}:", (300 << 10) + 1)),
        "{stderr}"
    );
    let empty = write(dir.path(), "empty.json", &"\n".repeat(300 << 10));
    let (code, _, stderr) = run_json(&["report", "-o", "json", arg(&empty)]);
    assert_eq!(code, 2);
    assert!(stderr.contains("the file is empty"), "{stderr}");
}

/// Writes `text` to `dir/name`, gzipped where the name ends in `.gz` (as logrotate's
/// `compress` leaves `events.ndjson.2.gz`).
fn write_part(dir: &Path, name: &str, text: &str) -> PathBuf {
    use std::io::Write;
    if !name.ends_with(".gz") {
        return write(dir, name, text);
    }
    let path = dir.join(name);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    path
}

/// `report -o json` over `paths`: the answer, and the notes in JSON and on stderr.
fn answer_and_notes(paths: &[&Path]) -> (Answer, Value, String) {
    let args: Vec<&str> = ["report", "-o", "json"]
        .into_iter()
        .chain(paths.iter().map(arg))
        .collect();
    let (code, json, stderr) = run_json(&args);
    assert_eq!(code, 0, "{stderr}");
    (answer(paths), json["inputs"]["notes"].clone(), stderr)
}

#[test]
fn a_late_line_in_the_newer_rotated_part_answers_as_the_whole() {
    // The review's stream: a planned reboot, its PXE boot in the same second, then a
    // buffered Phoned Home of five seconds before, which the newer part holds.
    let older = line("m", "00:02:00Z", "Planned Reboot", "");
    let newer =
        line("m", "00:02:00Z", "PXE Booting", "") + &line("m", "00:01:55Z", "Phoned Home", "late");
    let dir = tempfile::tempdir().unwrap();
    let whole = write(dir.path(), "whole", &(older.clone() + &newer));
    let expected = answer(&[&whole]);
    // Checked by hand: Phoned Home, Planned Reboot, PXE Booting — nothing unexpected.
    assert_eq!(expected.0, vec![]);
    assert_eq!(expected.2[0], 3);
    let namings = [
        ("events.ndjson.1", "events.ndjson"),
        ("events.ndjson.2.gz", "events.ndjson.1"),
        ("events.ndjson-20250901", "events.ndjson-20250902"),
        ("events.ndjson-2025090123.gz", "events.ndjson"),
        ("2025-09-01.ndjson", "2025-09-02.ndjson"),
    ];
    for (i, (old_name, new_name)) in namings.into_iter().enumerate() {
        let sub = dir.path().join(i.to_string());
        std::fs::create_dir(&sub).unwrap();
        let old = write_part(&sub, old_name, &older);
        let new = write_part(&sub, new_name, &newer);
        for given in [[&old, &new], [&new, &old]] {
            let given = given.map(PathBuf::as_path);
            let (got, notes, stderr) = answer_and_notes(&given);
            assert_eq!(got, expected, "{old_name} {new_name}");
            assert_eq!(notes, serde_json::json!([]), "{old_name} {new_name}");
            assert!(!stderr.contains("note"), "{stderr}");
        }
    }
}

#[test]
fn parts_whose_order_neither_names_nor_times_tell_are_named_in_a_note() {
    let dir = tempfile::tempdir().unwrap();
    // The same parts under names that are no rotations of one file.
    let older = write(
        dir.path(),
        "b.ndjson",
        &line("m", "00:02:00Z", "Planned Reboot", ""),
    );
    let newer = write(
        dir.path(),
        "a.ndjson",
        &(line("m", "00:02:00Z", "PXE Booting", "") + &line("m", "00:01:55Z", "Phoned Home", "")),
    );
    for given in [[&older, &newer], [&newer, &older]] {
        let given = given.map(PathBuf::as_path);
        let (_, notes, stderr) = answer_and_notes(&given);
        let (a, b) = (arg(&newer), arg(&older));
        assert_eq!(notes.as_array().unwrap().len(), 1, "{notes}");
        assert_eq!(notes[0]["path"], a);
        assert_eq!(notes[0]["line"], 1, "the PXE boot's line");
        let said = format!(
            "fsmlog: note: {a}:1: machine m: events of the same time (2025-09-01T00:02:00Z) \
             in {a} and {b} are ordered by neither names nor times"
        );
        assert!(stderr.contains(&said), "{stderr}");
        assert!(stderr.contains("or give one stream"), "{stderr}");
    }
    // Three parts of the review (`/tmp/rv/t2`): the two of one instant each are named.
    let head = line("m", "00:01:00Z", "Phoned Home", "");
    let p0 = write(dir.path(), "p0", &head);
    let p1 = write(
        dir.path(),
        "p1",
        &line("m", "00:02:00Z", "Planned Reboot", ""),
    );
    let p2 = write(dir.path(), "p2", &line("m", "00:02:00Z", "PXE Booting", ""));
    let (_, notes, _) = answer_and_notes(&[&p0, &p1, &p2]);
    assert_eq!(notes.as_array().unwrap().len(), 1, "{notes}");
    let message = notes[0]["message"].as_str().unwrap();
    assert!(
        message.contains(arg(&p1)) && message.contains(arg(&p2)),
        "{message}"
    );
    assert!(!message.contains(arg(&p0)), "{message}");
}

#[test]
fn a_stream_with_late_lines_cut_at_every_line_into_rotated_parts_in_any_order_is_the_whole() {
    // Each machine's reboot and PXE boot share a second; a buffered line of each arrives
    // after newer ones.
    let lines = [
        line("a", "00:01:00Z", "Phoned Home", "ph"),
        line("b", "00:00:05Z", "Phoned Home", "ph"),
        line("a", "00:02:00Z", "Planned Reboot", ""),
        line("b", "00:02:00Z", "PXE Booting", "dhcp"),
        line("a", "00:02:00Z", "PXE Booting", "dhcp"),
        line("a", "00:01:58Z", "Phoned Home", "buffered"),
        line("b", "00:01:59Z", "Planned Reboot", "late"),
        line("a", "00:03:00Z", "Preparing", "hammer"),
        line("b", "00:03:00Z", "Preparing", "hammer"),
    ];
    let n = lines.len();
    let dir = tempfile::tempdir().unwrap();
    let whole = write(dir.path(), "whole.ndjson", &lines.concat());
    let expected = answer(&[&whole]);
    // Checked by hand: a is Phoned Home twice, Planned Reboot, PXE Booting, Preparing; b is
    // Phoned Home, Planned Reboot, PXE Booting, Preparing: nothing unexpected.
    assert_eq!(expected.0, vec![]);
    assert_eq!(expected.2[0], 9);
    let mut cuts: Vec<Vec<usize>> = (1..n).map(|a| vec![a]).collect();
    cuts.extend((1..n).flat_map(|a| (a + 1..n).map(move |b| vec![a, b])));
    for cut in cuts {
        let mut bounds = vec![0];
        bounds.extend(&cut);
        bounds.push(n);
        let names = ["events.ndjson.2.gz", "events.ndjson.1", "events.ndjson"];
        let parts: Vec<PathBuf> = bounds
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let name = names[names.len() + 1 - bounds.len() + i];
                write_part(dir.path(), name, &lines[w[0]..w[1]].concat())
            })
            .collect();
        for order in orders(parts.len()) {
            let given: Vec<&Path> = order.iter().map(|&i| parts[i].as_path()).collect();
            let (got, notes, _) = answer_and_notes(&given);
            assert_eq!(got, expected, "cut {cut:?}, order {order:?}");
            assert_eq!(notes, serde_json::json!([]), "cut {cut:?}");
        }
        for part in parts {
            std::fs::remove_file(part).unwrap();
        }
    }
}
