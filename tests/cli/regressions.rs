//! Regressions found in review, one test each, named for what went wrong.

use std::path::Path;
use std::process::Command as Process;

use serde_json::Value;

use super::*;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn an_event_a_record_holds_twice_stays_twice_when_merged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let table = write(
        d,
        "m.txt",
        "TIME  EVENT  MESSAGE\n\
         Tue, 16 Sep 2025 10:31:10 UTC   Crashed   [unexpectedly received in state crashing]: oops\n\
         Tue, 16 Sep 2025 10:31:10 UTC   Crashed   [unexpectedly received in state crashing]: oops\n\
         Tue, 16 Sep 2025 10:31:09 UTC   Crashed   oops\n\
         Tue, 16 Sep 2025 10:31:00 UTC   Preparing   starting metal-hammer\n",
    );
    let older = write(
        d,
        "m-older.txt",
        "Tue, 16 Sep 2025 09:00:00 UTC   PXE Booting   x\n",
    );
    let alone = run_json(&["report", "-o", "json", arg(&table)]).1;
    let merged = run_json(&[
        "report",
        "-o",
        "json",
        "--machine-id",
        "m",
        arg(&table),
        arg(&older),
    ])
    .1;
    assert_eq!(alone["unexpected"][0]["count"], 2);
    assert_eq!(merged["unexpected"][0]["count"], 2);
    assert_eq!(merged["inputs"]["duplicates"], 0);
}

#[test]
fn exports_that_do_not_overlap_join_without_a_false_pair() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Two exports of one machine, days apart: what happened between them is not in either.
    let day1 = write(
        d,
        "m-day1.txt",
        "Tue, 16 Sep 2025 10:02:00 UTC   Waiting       waiting for allocation\n\
         Tue, 16 Sep 2025 10:01:00 UTC   Registering   start registering\n",
    );
    let day2 = write(
        d,
        "m-day2.txt",
        "Thu, 18 Sep 2025 10:02:00 UTC   Waiting       waiting for allocation\n\
         Thu, 18 Sep 2025 10:01:00 UTC   Registering   start registering\n",
    );
    let out = run_json(&[
        "report",
        "-o",
        "json",
        "--machine-id",
        "m",
        arg(&day1),
        arg(&day2),
    ])
    .1;
    assert_eq!(out["inputs"]["merged_machines"], 1);
    assert_eq!(
        out["unexpected"],
        serde_json::json!([]),
        "no Registering in Waiting at the join"
    );
}

#[test]
fn a_gate_that_read_nothing_says_failed_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path();
    let (code, json, _) = run_json(&["check", "-o", "json", arg(empty)]);
    assert_eq!(code, 2);
    assert_eq!(json["passed"], false);
    let (_, table, _) = stdout_of(&["check", arg(empty)]);
    assert!(table.starts_with("FAILED: no machine was read"), "{table}");
    let (_, junit, _) = stdout_of(&["check", "-o", "junit", arg(empty)]);
    assert!(junit.contains(r#"failures="1""#), "{junit}");
    let (_, sarif, _) = stdout_of(&["check", "-o", "sarif", arg(empty)]);
    let sarif: Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        false
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
    bytes.extend(std::fs::read(testdata("trust/long-first-line.ndjson")).unwrap());
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
fn replay_on_a_terminal_shows_whole_ids() {
    let dir = tempfile::tempdir().unwrap();
    let log = testdata("fleet-v0.42.2/logs-json/2513f57b-4054-4b51-93e8-0c67992d646d.json");
    for id in [
        "2513f57b-4054-4b51-93e8-0c67992d646d",
        "2513f57b-4054-4b51-93e8-0c67992d646e",
    ] {
        std::fs::copy(&log, dir.path().join(format!("{id}.json"))).unwrap();
    }
    let bin = assert_cmd::cargo::cargo_bin("fsmlog");
    let command = format!("'{}' replay '{}'", bin.display(), dir.path().display());
    let output = Process::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("COLUMNS", "120")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let shown = String::from_utf8(output.stdout).unwrap();
    assert!(
        shown.contains("machine 2513f57b-4054-4b51-93e8-0c67992d646d ·"),
        "{shown}"
    );
    assert!(
        shown.contains("machine 2513f57b-4054-4b51-93e8-0c67992d646e ·"),
        "{shown}"
    );
}

#[test]
fn a_symlink_to_itself_is_named_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("self");
    std::os::unix::fs::symlink(&link, &link).unwrap();
    let (_, _, stderr) = stdout_of(&["report", arg(&link)]);
    assert!(stderr.contains("self: symlink loop"), "{stderr}");
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

#[test]
fn a_machines_mention_pings_nobody_in_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "@admin.txt",
        "Mon, 22 Aug 2022 06:36:15 UTC   PXE Booting   [unexpectedly received in state waiting]: x\n",
    );
    let (_, md, _) = stdout_of(&["report", "-o", "markdown", arg(&file)]);
    assert!(md.contains("&#64;admin"), "{md}");
    assert!(!md.contains("@admin"), "{md}");
}

#[test]
fn dot_labels_break_lines_as_dot_does() {
    let (code, dot, _) = stdout_of(&[
        "graph",
        "-o",
        "dot",
        arg(&testdata("fleet-v0.42.2/list-json")),
    ]);
    assert_eq!(code, 0);
    assert!(dot.contains(r#"[label="Waiting\n9 now"]"#), "{dot}");
    assert!(!dot.contains("u{a}"), "{dot}");
}

#[test]
fn a_window_that_ends_before_it_begins_is_refused() {
    let fleet = testdata("fleet-v0.19.0/describe-json");
    for command in ["check", "report", "explain", "diff", "graph"] {
        let mut args = vec![command];
        if command == "diff" {
            args.extend(["--old", "metal-api-v0.19.0", "--new", "metal-api-v0.42.2"]);
        }
        args.extend([
            "--since",
            "2025-09-27",
            "--until",
            "2025-09-20",
            arg(&fleet),
        ]);
        let (code, out, stderr) = stdout_of(&args);
        assert_eq!(code, 2, "{command}: {out}");
        assert!(
            stderr.contains("the window is empty"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn a_graph_of_nothing_read_is_no_picture() {
    let (code, out, stderr) = stdout_of(&["graph", "-o", "svg", "/nonexistent/fleet"]);
    assert_eq!(code, 2);
    assert!(
        out.is_empty(),
        "no rule-set picture in place of the fleet's: {out}"
    );
    assert!(stderr.contains("/nonexistent/fleet"), "{stderr}");
}

#[test]
fn a_trend_over_a_long_span_says_how_many_periods_a_bar_holds() {
    let dir = tempfile::tempdir().unwrap();
    // Two occurrences (on two machines) five years apart: 1,827 days in at most 20 bars of
    // 92 days (1,827 / 20 = 91.35), or 262 ISO weeks in bars of 14 (262 / 20 = 13.1).
    for (name, date) in [
        ("m1.txt", "Tue, 01 Jan 2030"),
        ("m2.txt", "Wed, 01 Jan 2025"),
    ] {
        write(
            dir.path(),
            name,
            &format!(
                "{date} 00:00:00 UTC   PXE Booting   [unexpectedly received in state waiting]: x\n"
            ),
        );
    }
    let dir = arg(dir.path());
    let (_, csv, _) = stdout_of(&["report", "--by", "day", "-o", "csv", dir]);
    let header = csv.lines().next().unwrap();
    assert!(header.ends_with(",Per 92 days,Verdict"), "{header}");
    let (_, csv, _) = stdout_of(&["report", "--by", "week", "-o", "csv", dir]);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",Per 14 weeks,Verdict"),
        "{csv}"
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
