//! Reading: damaged and foreign files, exit codes, merging, gzip, stdin, time zones.

use serde_json::Value;

use super::*;

// Damage and exit codes.

#[test]
fn damaged_files_are_named_and_the_rest_is_reported() {
    let dir = testdata("damaged");
    let (code, report, stderr) = run_json(&["report", "-o", "json", arg(&dir)]);
    assert_eq!(code, 2);
    for needle in [
        "bad-fields.json:3: invalid RFC 3339 time \"yesterday\"",
        "bad-fields.json:4:41: invalid array element",
        "bad-row.txt:4: invalid RFC 1123 time",
        "truncated-list.json:78:16: invalid JSON: the input ends inside a string",
    ] {
        assert!(stderr.contains(needle), "missing {needle:?} in:\n{stderr}");
    }
    let errors = report["inputs"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 4);
    assert!(errors.iter().all(|e| e["line"].as_u64().unwrap() > 0));
    // The good files are still there: the seed-like machine's Waiting / PXE Booting pair.
    let machines = report["inputs"]["machines"].as_u64().unwrap();
    assert!(machines >= 4, "{machines}");
    assert!(
        report["unexpected"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["state"] == "Phoned Home" && p["event"] == "PXE Booting")
    );
}

#[test]
fn missing_path_is_an_input_error() {
    fsmlog()
        .args(["report", "no/such/file.json"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "no/such/file.json: no such file or directory",
        ));
}

#[test]
fn unknown_rule_set_lists_the_known_ones() {
    fsmlog()
        .args(["report", "--rules", "metal-api-v9", "x"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("metal-api-v0.19.3"));
}

#[test]
fn bad_usage_exits_2() {
    fsmlog().args(["report"]).assert().code(2);
    fsmlog().args(["frobnicate"]).assert().code(2);
}

#[test]
fn named_non_log_file_is_an_error_but_found_one_is_skipped() {
    let samples = testdata("SAMPLES.md");
    fsmlog()
        .args(["report", arg(&samples)])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a machine log"));
    // expected.json sits beside the format folders: walking the fleet skips it and says so.
    let fleet = testdata("fleet-v0.42.2/list-json");
    let expected = testdata("fleet-v0.42.2/expected.json");
    fsmlog()
        .args(["report", arg(&fleet), arg(&expected)])
        .assert()
        .code(2);
}

#[test]
fn a_directory_of_good_damaged_and_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let copy = |from: &str, to: &str| std::fs::copy(testdata(from), d.join(to)).unwrap();
    copy("fleet-v0.42.2/list-json/machines.json", "good-list.json");
    copy(
        "fleet-v0.19.0/text/63c1eeb5-1996-429e-a05f-084a98869567.txt",
        "good-63c1eeb5.txt",
    );
    // Damage, one kind per file.
    let list = std::fs::read(testdata("fleet-v0.19.0/list-json/machines.json")).unwrap();
    std::fs::write(d.join("truncated.json"), &list[..list.len() / 2]).unwrap();
    std::fs::write(
        d.join("bad-utf8.txt"),
        b"Mon, 22 Aug 2022 06:32:44 UTC   Waiting   waiting\nMon, 22 Aug 2022 06:36:15 UTC   PXE Booting   caf\xe9\n",
    )
    .unwrap();
    std::fs::write(d.join("blob.bin"), [0x7f, b'E', b'L', b'F', 0, 0, 1, 2]).unwrap();
    std::fs::write(d.join("empty.json"), b"").unwrap();
    let mut long = b"Mon, 22 Aug 2022 06:32:44 UTC   Waiting   waiting\n".to_vec();
    long.extend(std::iter::repeat_n(b'x', 3 << 20));
    long.extend(b"\nMon, 22 Aug 2022 06:36:15 UTC   PXE Booting   dhcp\n");
    std::fs::write(d.join("long-line.txt"), long).unwrap();
    std::fs::write(
        d.join("column-missing.txt"),
        "Mon, 22 Aug 2022 06:32:44 UTC   Waiting   waiting\nMon, 22 Aug 2022 06:36:15 UTC\n",
    )
    .unwrap();
    std::fs::write(
        d.join("no-time.json"),
        "[\n {\"event\": \"Waiting\", \"message\": \"w\", \"time\": \"2025-09-22T12:23:48Z\"},\n {\"event\": \"Waiting\", \"message\": \"w\"}\n]\n",
    )
    .unwrap();
    // Not logs at all: reported as skipped, with a hint.
    std::fs::write(d.join("notes.md"), "# notes\n\nnothing to see\n").unwrap();
    copy("fleet-v0.42.2/expected.json", "expected.json");

    let (code, report, stderr) = run_json(&["report", "-o", "json", arg(&d)]);
    assert_eq!(code, 2, "{stderr}");
    let errors = report["inputs"]["errors"].as_array().unwrap();
    let error_of = |file: &str| {
        errors
            .iter()
            .find(|e| e["path"].as_str().unwrap().ends_with(file))
            .unwrap_or_else(|| panic!("no error for {file}: {errors:?}"))
    };
    assert!(error_of("truncated.json")["line"].as_u64().unwrap() > 1);
    assert!(error_of("truncated.json")["column"].as_u64().is_some());
    assert_eq!(error_of("bad-utf8.txt")["line"], 2);
    assert_eq!(error_of("blob.bin")["line"], 1);
    assert_eq!(error_of("empty.json")["message"], "the file is empty");
    assert_eq!(error_of("long-line.txt")["line"], 2);
    assert_eq!(error_of("column-missing.txt")["line"], 2);
    assert_eq!(error_of("no-time.json")["line"], 3);
    assert!(
        error_of("no-time.json")["message"]
            .as_str()
            .unwrap()
            .contains("without `time`")
    );
    let skipped: Vec<&str> = report["inputs"]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert!(
        skipped.iter().any(|p| p.ends_with("notes.md")),
        "{skipped:?}"
    );
    assert!(
        skipped.iter().any(|p| p.ends_with("expected.json")),
        "{skipped:?}"
    );
    assert!(stderr.contains("use --format"), "{stderr}");
    // The good files are all there: 12 machines of the list, the table, the half list's whole
    // machines, and the partly readable tables.
    let (read, accounted) = accounting(&report);
    assert_eq!(read, accounted);
    let unexpected = pairs(&report["unexpected"]);
    assert!(
        unexpected
            .iter()
            .any(|p| p.0 == "Preparing" && p.1 == "Preparing" && p.2 == 24)
    );
    assert!(
        unexpected
            .iter()
            .any(|p| p.0 == "Phoned Home" && p.1 == "PXE Booting")
    );
}

#[test]
fn unknown_events_are_counted_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m1.json");
    std::fs::write(
        &path,
        r#"[
 {"event": "Foo", "message": "", "time": "2025-09-22T12:23:49Z"},
 {"event": "Waiting", "message": "w", "time": "2025-09-22T12:23:48Z"},
 {"event": "Foo", "message": "", "time": "2025-09-22T12:23:47Z"},
 {"event": "Registering", "message": "r", "time": "2025-09-22T12:23:46Z"}
]"#,
    )
    .unwrap();
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 0);
    assert_eq!(
        report["inputs"]["unknown_events"],
        serde_json::json!([{"event": "Foo", "count": 2, "machines": 1}])
    );
    assert_eq!(report["inputs"]["events"], 4);
    assert_eq!(report["inputs"]["replayed"], 2);
    assert_eq!(report["unexpected"], serde_json::json!([]));
    fsmlog()
        .args(["report", arg(&path)])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "unknown event \"Foo\" ×2 on 1 machine",
        ));
}

#[test]
fn the_same_machine_in_several_inputs_is_one_machine() {
    let list = testdata("fleet-v0.19.0/list-json");
    let logs = testdata("fleet-v0.19.0/logs-json");
    let text = testdata("fleet-v0.19.0/text");
    let (code, alone, _) = run_json(&["report", "-o", "json", arg(&list)]);
    assert_eq!(code, 0);
    let (code, merged, _) = run_json(&["report", "-o", "json", arg(&list), arg(&logs), arg(&text)]);
    assert_eq!(code, 0);
    assert_eq!(merged["inputs"]["machines"], 12);
    assert_eq!(merged["inputs"]["merged_machines"], 12);
    // Every event of the logs and tables is also in the list: all of them are duplicates.
    assert_eq!(
        merged["inputs"]["duplicates"].as_u64().unwrap(),
        2 * alone["inputs"]["events"].as_u64().unwrap()
    );
    assert_eq!(merged["unexpected"], alone["unexpected"]);
    let (read, accounted) = accounting(&merged);
    assert_eq!(read, accounted);
}

#[test]
fn every_export_format_gives_the_same_unexpected_table() {
    // Tables print whole seconds, so times are compared to the second; the raw stream holds
    // events metal-api swallowed and is not an export, so it is left out.
    let formats = [
        "logs-json",
        "describe-json",
        "list-json",
        "event-api",
        "container-dump",
        "v2-json",
        "text",
        "markdown",
        "concat-text",
    ];
    for fleet in FLEETS {
        for rules in RULE_SETS {
            let mut tables = Vec::new();
            for format in formats {
                let dir = testdata(&format!("{fleet}/{format}"));
                let (_, report, _) =
                    run_json(&["report", "-o", "json", "--rules", rules, arg(&dir)]);
                let mut table = report["unexpected"].clone();
                for pair in table.as_array_mut().unwrap() {
                    // Where the machines are is only in machine objects (and the bundled
                    // ones were generated with racks of their own).
                    pair.as_object_mut().unwrap().remove("where");
                    for key in ["first_seen", "last_seen"] {
                        let t = pair[key].as_str().unwrap();
                        pair[key] = Value::from(&t[..19]);
                    }
                }
                tables.push((format, table));
            }
            for (format, table) in &tables[1..] {
                assert_eq!(
                    table, &tables[0].1,
                    "{fleet} {rules}: {format} vs logs-json"
                );
            }
        }
    }
}

#[test]
fn forced_format_that_does_not_fit_is_an_error() {
    let list = testdata("fleet-v0.42.2/list-json/machines.json");
    fsmlog()
        .args(["report", "--format", "v2-json", arg(&list)])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("expected v2-json JSON"));
    let text = testdata("seed-machine.txt");
    fsmlog()
        .args(["report", "--format", "list-json", arg(&text)])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("expected list-json JSON"));
}

#[test]
fn gzipped_input_is_read() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seed.txt.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(&std::fs::read(testdata("seed-machine.txt")).unwrap())
        .unwrap();
    gz.finish().unwrap();
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 0);
    assert_eq!(report["unexpected"][0]["count"], 3);
    assert_eq!(
        report["unexpected"][0]["examples"],
        serde_json::json!(["seed"])
    );
}

#[test]
fn tz_flag_resolves_an_unknown_zone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.txt");
    std::fs::write(
        &path,
        "Mon, 22 Aug 2022 11:36:15 XST   PXE Booting   dhcp\nMon, 22 Aug 2022 11:32:44 XST   Waiting   waiting\n",
    )
    .unwrap();
    fsmlog()
        .args(["report", arg(&path)])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--tz XST=+HHMM"));
    let (code, report, _) = run_json(&["report", "-o", "json", "--tz", "XST=+0500", arg(&path)]);
    assert_eq!(code, 0);
    assert_eq!(
        report["unexpected"][0]["first_seen"],
        "2022-08-22T06:36:15Z"
    );
}

#[test]
fn output_does_not_depend_on_thread_count() {
    let root = testdata("");
    let one = fsmlog()
        .args(["report", "-o", "json", "--threads", "1", arg(&root)])
        .output()
        .unwrap();
    let many = fsmlog()
        .args(["report", "-o", "json", "--threads", "4", arg(&root)])
        .output()
        .unwrap();
    assert_eq!(one.stdout, many.stdout);
    assert!(!one.stdout.is_empty());
}

#[test]
fn table_output_reads_well() {
    let seed = testdata("seed-machine.txt");
    fsmlog()
        .args(["report", arg(&seed)])
        .assert()
        .success()
        .stdout(predicates::str::contains("Waiting"))
        .stdout(predicates::str::contains(
            "metal-api's crash-loop flag (1): seed-machine",
        ))
        .stdout(predicates::str::contains(
            "10 events (10 replayed, 0 rejected, 0 unknown, 0 duplicates)",
        ));
}

#[test]
fn machine_id_flag_names_a_single_machine_file() {
    let seed = testdata("seed-machine.txt");
    let (_, out, _) = run_json(&["report", "-o", "json", "--machine-id", "m-42", arg(&seed)]);
    assert_eq!(
        out["unexpected"][0]["examples"],
        serde_json::json!(["m-42"])
    );
}

#[test]
fn stdin_is_read_with_dash() {
    let seed = std::fs::read(testdata("seed-machine.txt")).unwrap();
    let (code, out, _) = {
        let output = fsmlog()
            .args(["report", "-o", "json", "-"])
            .write_stdin(seed)
            .output()
            .unwrap();
        (
            output.status.code().unwrap(),
            serde_json::from_slice::<Value>(&output.stdout).unwrap(),
            (),
        )
    };
    assert_eq!(code, 0);
    assert_eq!(out["unexpected"][0]["count"], 3);
}

// Regressions found in review.

#[test]
fn a_truncated_list_keeps_the_machines_before_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    let list = std::fs::read(testdata("fleet-v0.42.2/list-json/machines.json")).unwrap();
    let path = dir.path().join("cut.json");
    std::fs::write(&path, &list[..list.len() - 200]).unwrap();
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 2);
    assert_eq!(report["inputs"]["machines"], 11);
    assert_eq!(report["inputs"]["errors"].as_array().unwrap().len(), 1);
}

#[test]
fn a_stream_with_a_damaged_first_line_is_still_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.ndjson");
    std::fs::write(
        &path,
        "{\"machine\": \"m1\", \"time\": \"2025-09-22T12:00:00Z\", \"event\": \"Waiting\"\n\
         {\"machine\": \"m1\", \"id\": \"x\", \"time\": \"2025-09-22T12:01:00Z\", \"event\": \"PXE Booting\", \"message\": \"dhcp\"}\n\
         {\"machine_id\": \"m2\", \"time\": \"2025-09-22T12:02:00Z\", \"event\": \"Waiting\"}\n",
    )
    .unwrap();
    let (code, report, stderr) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(report["inputs"]["machines"], 2);
    assert_eq!(report["inputs"]["formats"]["ndjson"], 1);
    assert_eq!(report["inputs"]["errors"][0]["line"], 1);
}

#[test]
fn gzip_is_recognised_on_standard_input() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(testdata("seed-machine.txt")).unwrap())
        .unwrap();
    let output = fsmlog()
        .args(["report", "-o", "json", "-"])
        .write_stdin(gz.finish().unwrap())
        .output()
        .unwrap();
    assert!(output.status.success());
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["unexpected"][0]["count"], 3);
}

#[test]
fn text_that_starts_with_a_bracket_is_skipped_not_damaged() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    std::fs::write(dir.path().join("README.md"), "[![CI](x)](y)\n\ntext\n").unwrap();
    std::fs::copy(testdata("seed-machine.txt"), dir.path().join("seed.txt")).unwrap();
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&dir.path())]);
    assert_eq!(code, 0);
    assert_eq!(report["inputs"]["skipped"].as_array().unwrap().len(), 2);
    assert_eq!(report["inputs"]["machines"], 1);
}

#[test]
fn an_empty_event_array_with_a_last_error_is_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m1.json");
    std::fs::write(
        &path,
        "[]\n\nRecent last error (1h ago):\n\n{\"event\": \"PXE Booting\", \"message\": \"[unexpectedly received in state waiting]: dhcp\", \"time\": \"2025-09-22T12:00:00Z\"}\n",
    )
    .unwrap();
    let (code, report, stderr) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(report["inputs"]["machines"], 1);
    assert_eq!(
        pairs(&report["unexpected"]),
        vec![("Waiting".to_string(), "PXE Booting".to_string(), 1, 1)]
    );
}

#[test]
fn a_file_full_of_bad_rows_names_a_hundred_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.txt");
    let mut text = String::from("Mon, 22 Aug 2022 06:32:44 UTC   Waiting   waiting\n");
    for _ in 0..1000 {
        text.push_str("Mon, 32 Aug 2022 06:36:15 UTC   Waiting   bad day\n");
    }
    std::fs::write(&path, text).unwrap();
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 2);
    let errors = report["inputs"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 101);
    assert!(errors.iter().any(|e| {
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("900 more problems not listed")
    }));
}

#[test]
fn numeric_zones_as_go_prints_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.md");
    std::fs::write(
        &path,
        "| TIME | EVENT | MESSAGE |\n|---|---|---|\n| Mon, 22 Aug 2022 09:36:15 +03 | PXE Booting | dhcp |\n| Mon, 22 Aug 2022 06:36:15 +-130 | Waiting | w |\n",
    )
    .unwrap();
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 2);
    assert_eq!(report["inputs"]["errors"][0]["line"], 4);
    assert_eq!(report["inputs"]["events"], 1);
}

// Regressions found in the second review.

#[test]
fn a_one_line_element_in_a_pretty_list_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let list = std::fs::read_to_string(testdata("fleet-v0.42.2/list-json/machines.json")).unwrap();
    let machines: Value = serde_json::from_str(&list).unwrap();
    // The third machine written on one line, the rest as metalctl prints them.
    let pretty: Vec<String> = machines
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let text = if i == 2 {
                serde_json::to_string(m).unwrap()
            } else {
                serde_json::to_string_pretty(m).unwrap()
            };
            text.lines()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let path = dir.path().join("mixed.json");
    std::fs::write(&path, format!("[\n{}\n]\n", pretty.join(",\n"))).unwrap();
    let (code, report, stderr) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(report["inputs"]["machines"], 12);
}

#[test]
fn a_gzip_file_with_trailing_garbage_keeps_its_machines() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("list.json.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(testdata("fleet-v0.42.2/list-json/machines.json")).unwrap())
        .unwrap();
    let mut bytes = gz.finish().unwrap();
    bytes.extend([0u8; 512]);
    std::fs::write(&path, bytes).unwrap();
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 2);
    assert_eq!(report["inputs"]["machines"], 12);
}

#[test]
fn a_garbage_line_early_in_a_stream_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let stream = std::fs::read_to_string(testdata("fleet-v0.42.2/ndjson/events.ndjson")).unwrap();
    let mut lines: Vec<&str> = stream.lines().collect();
    lines.insert(2, "garbage line");
    let path = dir.path().join("s.ndjson");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 2);
    assert_eq!(report["inputs"]["machines"], 12);
    assert_eq!(report["inputs"]["errors"][0]["line"], 3);
}

#[test]
fn a_line_that_only_looks_like_a_section_header_is_not_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("==> a.txt <==\n");
    // Over one batch of rows, so the odd line falls where a batch may end.
    for i in 0..20_000 {
        let minute = i % 60;
        text.push_str(&format!(
            "Mon, 22 Aug 2022 06:{minute:02}:15 UTC   Planned Reboot   {}\n",
            "x".repeat(40)
        ));
    }
    text.push_str("==> oops\n");
    text.push_str("Mon, 22 Aug 2022 07:00:00 UTC   Planned Reboot   after\n");
    let path = dir.path().join("tables.txt");
    std::fs::write(&path, text).unwrap();
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&path)]);
    assert_eq!(code, 2);
    assert_eq!(report["inputs"]["machines"], 1);
    assert_eq!(report["inputs"]["errors"].as_array().unwrap().len(), 1);
}
