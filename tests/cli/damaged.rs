//! Damaged, odd and hostile files: each problem named at its file and line, the rest read;
//! content detected whatever its first bytes, encoding or nesting.
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;

// 5. Detection by content, however long the first line.

#[test]
fn a_stream_with_a_long_first_line_is_a_stream() {
    let stream = testdata("odd-exports/long-first-line.ndjson");
    let out = report_of(&[arg(&stream)]);
    assert_eq!(out["inputs"]["formats"]["ndjson"], 1);
    assert_eq!(out["inputs"]["events"], 4);
    // Inside a directory it is read too, so the gate sees the machine.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&stream, dir.path().join("events.ndjson")).unwrap();
    let (code, json, stderr) = run_json(&["check", "-o", "json", arg(dir.path())]);
    assert_eq!(json["machines"], 1, "{stderr}");
    assert_eq!(code, 0, "{stderr}");
}

// 9. The smaller ones.

#[test]
fn a_corrupt_gzip_says_so() {
    let output = fsmlog()
        .args(["report", arg(&testdata("odd-exports/corrupt.json.gz"))])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("cannot decompress (gzip)"), "{stderr}");
    assert!(!stderr.contains("empty"), "{stderr}");
}

#[test]
fn a_machine_without_events_is_a_machine_in_every_format() {
    let dir = testdata("no-events");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().path();
        let (code, out, stderr) = run_json(&["report", "-o", "json", arg(&file)]);
        assert_eq!(code, 0, "{}: {stderr}", file.display());
        assert_eq!(out["inputs"]["machines"], 1, "{}", file.display());
    }
}

#[test]
fn an_odd_field_does_not_lose_the_machine() {
    let out = report_of(&[arg(&testdata("odd-exports/odd-fields.json"))]);
    assert_eq!(out["inputs"]["machines"], 2);
    assert_eq!(out["unexpected"][0]["count"], 2);
    assert_eq!(
        out["unexpected"][0]["examples"],
        serde_json::json!(["4711", "m-repeated"])
    );
}

#[test]
fn fractions_are_printed_as_read() {
    let (_, out, _) = run_json(&[
        "replay",
        "-o",
        "json",
        arg(&testdata("odd-exports/m-fractions.json")),
    ]);
    let times: Vec<&str> = out["machines"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["time"].as_str().unwrap())
        .collect();
    assert_eq!(
        times,
        vec![
            "2025-09-16T10:00:00.500Z",
            "2025-09-16T10:00:01.123456Z",
            "2025-09-16T10:00:02.123456789Z"
        ]
    );
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md"))
        .unwrap();
    assert!(
        docs.contains("as precise as the input"),
        "the JSON docs say how times print"
    );
}

// Item 3: numbered pasted rows are rows; a row behind other text is named.

#[test]
fn numbered_rows_are_read_and_a_buried_row_is_named() {
    let (code, out, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("odd-exports/numbered.md")),
    ]);
    assert_eq!(code, 2, "the buried row is an error: {stderr}");
    assert_eq!(out["inputs"]["machines"], 1);
    assert_eq!(
        out["inputs"]["events"], 5,
        "the rows behind `1. `, `3) `, `(4) `, `10. `"
    );
    // The oldest row was recorded in Waiting, so it counts; the newest arrives there.
    assert_eq!(
        pairs(&out["unexpected"]),
        [("Waiting".into(), "PXE Booting".into(), 2, 1)]
    );
    let errors = out["inputs"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["line"], 9);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("a row after other text (\"Step 6:\")"),
        "{errors:?}"
    );
}

// Item 6: a stream of JSON documents is every document.

#[test]
fn concatenated_and_one_a_line_json_documents_are_every_machine() {
    let fleet = testdata("fleet-v0.42.2");
    let (_, whole, _) = run_json(&["report", "-o", "json", arg(&fleet.join("list-json"))]);
    let (code, lines, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("odd-exports/list-lines.json")),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines["inputs"]["machines"], 12);
    assert_eq!(lines["unexpected"], whole["unexpected"]);
    assert_eq!(lines["inputs"]["events"], whole["inputs"]["events"]);
    let describe = fleet.join("describe-json");
    let three: Vec<PathBuf> = ["043afe87", "2513f57b", "339088e1"]
        .iter()
        .map(|id| {
            std::fs::read_dir(&describe)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| arg(&p.file_name().unwrap()).starts_with(id))
                .unwrap()
        })
        .collect();
    let mut args = vec!["report", "-o", "json"];
    args.extend(three.iter().map(arg));
    let (_, separate, _) = run_json(&args);
    let (code, stream, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("odd-exports/describe-stream.json")),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stream["inputs"]["machines"], 3);
    assert_eq!(stream["unexpected"], separate["unexpected"]);
    assert_eq!(stream["machines"], separate["machines"]);
}

// Item 7: YAML as other printers indent it, and in flow style.

#[test]
fn yaml_of_any_indent_and_flow_style_reads_as_the_list() {
    let (_, list, _) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("fleet-v0.42.2/list-json")),
    ]);
    for yaml in ["yaml/indent-4/machines.yaml", "yaml/flow/machines.yaml"] {
        for forced in [None, Some("list-json")] {
            let mut args = vec!["report", "-o", "json"];
            if let Some(format) = forced {
                args.extend(["--format", format]);
            }
            let file = testdata(yaml);
            args.push(arg(&file));
            let (code, out, stderr) = run_json(&args);
            assert_eq!(code, 0, "{yaml} {forced:?}: {stderr}");
            assert_eq!(out["unexpected"], list["unexpected"], "{yaml}");
            assert_eq!(out["inputs"]["formats"]["list-yaml"], 1, "{yaml}");
        }
    }
    let (code, _, stderr) = stdout_of(&[
        "report",
        "--format",
        "logs-json",
        arg(&testdata("yaml/indent-4/machines.yaml")),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(
            "expected logs-yaml (an event array), but this element is a machine (list-yaml)"
        ),
        "{stderr}"
    );
}

#[test]
fn an_alias_bomb_is_an_error_at_its_line_and_the_rest_is_read() {
    let dir = testdata("bombs/bomb-dir");
    let (code, out, stderr) = capped(&["report", "-o", "json", arg(&dir)]);
    assert_eq!(code, Some(2), "an input error, not a crash: {stderr}");
    assert!(
        stderr.contains("bomb-dir/aliases.yaml:5:") && stderr.contains("aliases repeat"),
        "{stderr}"
    );
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        json["inputs"]["machines"], 1,
        "the seed machine beside it is read"
    );
    assert_eq!(
        pairs(&json["unexpected"]),
        vec![("Waiting".into(), "PXE Booting".into(), 3, 1)]
    );
    let (code, _, stderr) = capped(&[
        "report",
        "-o",
        "json",
        arg(&testdata("bombs/hardware-bomb.yaml")),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("hardware-bomb.yaml:7:"), "{stderr}");
}

#[test]
fn a_list_whose_only_element_is_damaged_holds_no_machine() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.json");
    std::fs::write(&list, "[{\"id\": \"a\", \"events\": {\"log\": [nope]}}]\n").unwrap();
    for args in [&["issues", "--all"][..], &["report"]] {
        let (code, json, err) = run_json(&[args, &["-o", "json", arg(&list)]].concat());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("list.json:1:34:"), "{err}");
        assert_eq!(json["inputs"]["machines"], 0, "{args:?}: no machine `list`");
    }
    let (_, json, _) = run_json(&["issues", "-o", "json", "--all", arg(&list)]);
    assert_eq!(json["machines"], serde_json::json!([]));
}

#[test]
fn file_names_that_differ_in_invalid_utf8_are_two_machines() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let log = "[{\"time\":\"2022-08-22T06:36:15Z\",\"event\":\"PXE Booting\",\"message\":\"[unexpectedly received in state waiting]\"},{\"time\":\"2022-08-22T06:32:44Z\",\"event\":\"Waiting\",\"message\":\"w\"}]\n";
    for name in [&b"m\xff.json"[..], b"m\xfe.json"] {
        let path = dir.path().join(std::ffi::OsStr::from_bytes(name));
        std::fs::write(path, log).unwrap();
    }
    let (code, json, err) = run_json(&["report", "-o", "json", arg(dir.path())]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json["inputs"]["machines"], 2);
    assert_eq!(json["inputs"]["merged_machines"], 0);
    assert_eq!(
        json["unexpected"][0]["examples"],
        serde_json::json!(["m\\xfe", "m\\xff"])
    );
}

#[test]
fn one_bad_byte_in_yaml_loses_no_machine() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(testdata("yaml/list/machines.yaml")).unwrap();
    let line10 = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(9)
        .unwrap()
        .0;
    bytes.insert(line10, 0xff);
    let file = dir.path().join("machines.yaml");
    std::fs::write(&file, bytes).unwrap();
    let (code, out, stderr) = run_json(&["report", "-o", "json", arg(&file)]);
    assert_eq!(code, 2);
    assert_eq!(out["inputs"]["machines"], 12);
    assert!(
        stderr.contains("machines.yaml:10: invalid UTF-8"),
        "{stderr}"
    );
}

#[test]
fn yaml_aliases_repeat_their_anchor() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "m.yaml",
        "- time: 2025-09-16T10:00:00Z\n  event: Waiting\n  message: &m waiting for allocation\n- time: 2025-09-16T10:05:00Z\n  event: Waiting\n  message: *m\n",
    );
    let out = run_json(&["replay", "-o", "json", arg(&file)]).1;
    assert_eq!(
        out["machines"][0]["steps"][1]["message"],
        "waiting for allocation"
    );
}

#[test]
fn no_machine_appears_before_the_first_section_header() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "tail.txt",
        "$ tail -n +1 day1/*.txt\n==> day1/m-a.txt <==\nTIME  EVENT  MESSAGE\nTue, 16 Sep 2025 10:31:10 UTC   Preparing   starting metal-hammer\n==> day1/m-b.txt <==\nTue, 16 Sep 2025 10:31:10 UTC   Preparing   starting metal-hammer\n",
    );
    let out = run_json(&["report", "-o", "json", arg(&file)]).1;
    assert_eq!(out["inputs"]["machines"], 2);
    assert_eq!(
        out["inputs"]["skipped_lines"], 0,
        "the command line before any machine"
    );
    // A pasted note before the sections is prose, not an error.
    let pasted = write(
        dir.path(),
        "pasted.txt",
        "Hi team, the logs below:\n==> m-a <==\nTue, 16 Sep 2025 10:31:10 UTC Preparing starting metal-hammer\n",
    );
    let (code, out, stderr) = run_json(&["report", "-o", "json", arg(&pasted)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["inputs"]["machines"], 1);
}

#[test]
fn a_byte_order_mark_does_not_hide_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend(std::fs::read(testdata("odd-exports/long-first-line.ndjson")).unwrap());
    let file = dir.path().join("events.ndjson");
    std::fs::write(&file, bytes).unwrap();
    let out = run_json(&["report", "-o", "json", arg(&file)]).1;
    assert_eq!(out["inputs"]["formats"]["ndjson"], 1);
    assert_eq!(out["inputs"]["events"], 4);
}

#[test]
fn a_pasted_row_matches_its_json_twin() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let json = write(
        d,
        "m.json",
        r#"[{"time": "2022-08-22T06:36:15Z", "event": "PXE Booting", "message": "[unexpectedly received in state waiting]: machine sent  extended dhcp request"},
 {"time": "2022-08-22T06:32:44Z", "event": "Waiting", "message": "waiting for allocation"}]"#,
    );
    let pasted = write(
        d,
        "m.md",
        "> Mon, 22 Aug 2022 06:36:15 UTC PXE Booting [unexpectedly received in state waiting]: machine sent extended dhcp request\n> Mon, 22 Aug 2022 06:32:44 UTC Waiting waiting for allocation\n",
    );
    let out = run_json(&["report", "-o", "json", arg(&json), arg(&pasted)]).1;
    assert_eq!(out["inputs"]["duplicates"], 2);
    assert_eq!(out["unexpected"][0]["count"], 1);
}

#[test]
fn utf16_without_a_byte_order_mark_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("seed-machine.txt")).unwrap();
    let bytes: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let file = dir.path().join("m.txt");
    std::fs::write(&file, bytes).unwrap();
    let (_, _, stderr) = stdout_of(&["report", arg(&file)]);
    assert!(
        stderr.contains("UTF-16 without a byte-order mark"),
        "{stderr}"
    );
}

/// A value nested tens of thousands deep, where the reader that goes straight from the bytes
/// steps over it, is left to the careful path instead of using up the stack: in a machine of
/// a list, and in the `Recent last error` block after a `machine logs` array (found by review).
#[test]
fn a_deeply_nested_value_is_read_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("{}{}", "[".repeat(30_000), "]".repeat(30_000));
    let list = write(
        dir.path(),
        "list.json",
        &format!(r#"[{{"id":"m","events":{{"log":[]}},"x":{deep}}}]"#),
    );
    let logs = write(
        dir.path(),
        "m.json",
        &format!(
            "[\n    {{\n        \"event\": \"Waiting\",\n        \"time\": \"2025-01-01T00:00:01Z\"\n    }}\n]\n\nRecent last error (1h ago):\n\n{{\"event\": \"Waiting\", \"time\": \"2025-01-01T00:00:00Z\", \"x\": {deep}}}\n"
        ),
    );
    for file in [&list, &logs] {
        let (code, out, stderr) = run_json(&["report", "-o", "json", arg(file)]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(out["inputs"]["machines"], 1, "{stderr}");
    }
}
