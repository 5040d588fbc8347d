//! Trust: nothing lost, nothing counted twice, and no gate passes on nothing (issue 13). Each
//! test is named for the numbered item it covers and runs the binary the way a shell hands it
//! input: pipes, FIFOs, process substitution, symlinks, stdin beside files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use serde_json::Value;

use super::*;

/// Runs `fsmlog ARGS…` with `stdin` and returns (exit code, stdout as JSON, stderr).
fn run_json_stdin(args: &[&str], stdin: &[u8]) -> (i32, Value, String) {
    let output = fsmlog().args(args).write_stdin(stdin).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|err| panic!("stdout is not JSON ({err}): {stdout}"));
    (
        output.status.code().unwrap(),
        json,
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Runs a bash command line with `$FSMLOG` set to the binary (for `<(…)` and pipes).
fn bash(script: &str) -> (i32, String, String) {
    let output = Process::new("bash")
        .args(["-c", script])
        .env("FSMLOG", assert_cmd::cargo::cargo_bin("fsmlog"))
        .current_dir(testdata(""))
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn report(paths: &[&str]) -> Value {
    let mut args = vec!["report", "-o", "json"];
    args.extend_from_slice(paths);
    let (code, json, stderr) = run_json(&args);
    assert_eq!(code, 0, "{stderr}");
    json
}

const LIST: &str = "fleet-v0.42.2/list-json/machines.json";
const TEXT_DIR: &str = "fleet-v0.42.2/text";

// 1. Pipes are read once.

#[test]
fn item_1_process_substitutions_are_read_once() {
    let alone = report(&[arg(&testdata(LIST)), arg(&testdata(TEXT_DIR))]);
    let (code, out, err) = bash(&format!(
        "\"$FSMLOG\" report -o json <(cat {LIST}) <(tail -n +1 {TEXT_DIR}/*.txt)"
    ));
    assert_eq!(code, 0, "{err}");
    let piped: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(piped["inputs"]["machines"], 12);
    assert_eq!(piped["inputs"]["merged_machines"], 12);
    assert_eq!(piped["unexpected"], alone["unexpected"]);
    assert_eq!(piped["inputs"]["duplicates"], alone["inputs"]["duplicates"]);
}

#[test]
fn item_1_dev_stdin_beside_a_file_is_merged() {
    let list = std::fs::read(testdata(LIST)).unwrap();
    let text = testdata(TEXT_DIR);
    let (code, piped, stderr) =
        run_json_stdin(&["report", "-o", "json", "/dev/stdin", arg(&text)], &list);
    assert_eq!(code, 0, "{stderr}");
    let files = report(&[arg(&testdata(LIST)), arg(&text)]);
    assert_eq!(piped["inputs"]["machines"], 12);
    assert_eq!(piped["unexpected"], files["unexpected"]);
}

#[test]
fn item_1_a_fifo_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("export.fifo");
    let made = Process::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let list = std::fs::read(testdata(LIST)).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            // A slow producer: a kilobyte at a time.
            for chunk in list.chunks(1024) {
                f.write_all(chunk).unwrap();
            }
        })
    };
    let text = testdata(TEXT_DIR);
    let (code, out, stderr) = run_json(&["report", "-o", "json", arg(&fifo), arg(&text)]);
    writer.join().unwrap();
    assert_eq!(code, 0, "{stderr}");
    let files = report(&[arg(&testdata(LIST)), arg(&text)]);
    assert_eq!(out["inputs"]["machines"], 12);
    assert_eq!(out["unexpected"], files["unexpected"]);
}

// 2. Symlinks are followed; nothing is skipped in silence; no gate passes on nothing.

#[test]
fn item_2_symlinks_in_a_directory_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    let links = dir.path().join("exports");
    std::fs::create_dir(&links).unwrap();
    std::os::unix::fs::symlink(testdata(LIST), links.join("latest.json")).unwrap();
    std::os::unix::fs::symlink(testdata("fleet-v0.19.0/text"), links.join("older")).unwrap();
    let (code, out, stderr) = run_json(&["check", "-o", "json", arg(&links)]);
    assert_eq!(out["machines"], 24, "{stderr}");
    assert_eq!(
        code, 1,
        "the fleets hold unexpected pairs, so the gate fails: {stderr}"
    );
}

#[test]
fn item_2_a_symlink_loop_is_named_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("exports");
    std::fs::create_dir(&root).unwrap();
    std::fs::copy(testdata("seed-machine.txt"), root.join("seed.txt")).unwrap();
    std::os::unix::fs::symlink(&root, root.join("again")).unwrap();
    std::fs::write(root.join(".hidden.txt"), "not read").unwrap();
    let (code, out, stderr) = run_json(&["report", "-o", "json", arg(&root)]);
    assert_eq!(code, 2);
    assert_eq!(out["inputs"]["machines"], 1);
    assert!(
        stderr.contains("again: symlink loop, not followed"),
        "{stderr}"
    );
    assert!(stderr.contains("skipped"), "{stderr}");
    assert!(stderr.contains(".hidden.txt: hidden"), "{stderr}");
    let skipped = out["inputs"]["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["path"].as_str().unwrap().ends_with(".hidden.txt"))
    );
}

#[test]
fn item_2_a_gate_never_passes_on_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let output = fsmlog().args(["check", arg(&empty)]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("no machine was read"), "{stderr}");
    fsmlog()
        .args(["check", "--allow-empty", arg(&empty)])
        .assert()
        .code(0);
    // A directory of broken links reads nothing either.
    std::os::unix::fs::symlink(dir.path().join("gone.json"), empty.join("latest.json")).unwrap();
    let output = fsmlog().args(["check", arg(&empty)]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("latest.json: broken symlink"), "{stderr}");
    // diff gates too.
    let output = fsmlog()
        .args([
            "diff",
            "--old",
            "metal-api",
            "--new",
            "metal-api",
            arg(&dir.path().join("empty")),
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

// 3. Standard input is merged like any other input.

#[test]
fn item_3_stdin_beside_the_same_file_is_one_fleet() {
    let list = std::fs::read(testdata(LIST)).unwrap();
    let (code, both, stderr) =
        run_json_stdin(&["report", "-o", "json", "-", arg(&testdata(LIST))], &list);
    assert_eq!(code, 0, "{stderr}");
    let alone = report(&[arg(&testdata(LIST))]);
    assert_eq!(both["inputs"]["machines"], 12);
    assert_eq!(both["inputs"]["merged_machines"], 12);
    assert_eq!(both["unexpected"], alone["unexpected"]);
    assert_eq!(both["machines"], alone["machines"]);
}

#[test]
fn item_3_three_records_merge_whatever_the_threads() {
    let list = std::fs::read(testdata(LIST)).unwrap();
    let logs = testdata("fleet-v0.42.2/logs-json");
    let text = testdata(TEXT_DIR);
    let run = |threads: &str| {
        let output = fsmlog()
            .args([
                "report",
                "-o",
                "json",
                "--threads",
                threads,
                "-",
                arg(&logs),
                arg(&text),
            ])
            .write_stdin(list.clone())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        output.stdout
    };
    let one = run("1");
    let four = run("4");
    assert_eq!(one, four);
    let json: Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(json["inputs"]["machines"], 12);
    assert_eq!(
        json["unexpected"],
        report(&[arg(&testdata(LIST))])["unexpected"]
    );
}

// 4. The same machine twice in one file is one machine.

/// Splits each machine's table into an older and a newer day (overlapping by a few rows)
/// and joins them as `tail -n +1 day1/*.txt day2/*.txt` prints them: one file, every machine
/// twice.
fn two_days_in_one_file(dir: &Path) -> PathBuf {
    let mut day1 = String::new();
    let mut day2 = String::new();
    let mut files: Vec<_> = std::fs::read_dir(testdata(TEXT_DIR))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = arg(file.file_name().unwrap());
        let (log, trailer) = match text.find("Recent last error") {
            Some(at) => text.split_at(at),
            None => (text.as_str(), ""),
        };
        let mut lines = log.lines().filter(|l| !l.trim().is_empty());
        let header = lines.next().unwrap();
        let rows: Vec<&str> = lines.collect();
        // Newest first: the newer day holds the first rows, the older the last ones.
        let cut = rows.len() / 2;
        let newer = &rows[..(cut + 2).min(rows.len())];
        let older = &rows[cut.saturating_sub(2)..];
        day1.push_str(&format!(
            "==> day1/{name} <==\n{header}\n{}\n\n",
            older.join("\n")
        ));
        day2.push_str(&format!(
            "==> day2/{name} <==\n{header}\n{}\n\n{trailer}\n",
            newer.join("\n")
        ));
    }
    let joined = dir.join("both-days.txt");
    std::fs::write(&joined, format!("{day1}{day2}")).unwrap();
    joined
}

#[test]
fn item_4_two_days_concatenated_count_once() {
    let dir = tempfile::tempdir().unwrap();
    let joined = two_days_in_one_file(dir.path());
    let concatenated = report(&[arg(&joined)]);
    let original = report(&[arg(&testdata(TEXT_DIR))]);
    assert_eq!(concatenated["inputs"]["machines"], 12);
    assert_eq!(concatenated["inputs"]["merged_machines"], 12);
    assert_eq!(concatenated["unexpected"], original["unexpected"]);
}

#[test]
fn item_4_a_machine_listed_twice_is_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let list: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(testdata(LIST)).unwrap()).unwrap();
    let mut twice = list.clone();
    twice.push(list[3].clone());
    let doubled = dir.path().join("doubled.json");
    std::fs::write(&doubled, serde_json::to_string_pretty(&twice).unwrap()).unwrap();
    let out = report(&[arg(&doubled)]);
    let alone = report(&[arg(&testdata(LIST))]);
    assert_eq!(out["inputs"]["machines"], 12);
    assert_eq!(out["unexpected"], alone["unexpected"]);
}

#[test]
fn the_same_machines_split_any_way_give_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let joined = two_days_in_one_file(dir.path());
    let list = testdata(LIST);
    let describe = testdata("fleet-v0.42.2/describe-json");
    let table = |json: &Value| json["unexpected"].clone();
    let reference = table(&report(&[arg(&list)]));
    let list_bytes = std::fs::read(&list).unwrap();
    for threads in ["1", "3"] {
        fn with<'a>(threads: &'a str, paths: &[&'a str]) -> Vec<&'a str> {
            let mut args = vec!["report", "-o", "json", "--threads", threads];
            args.extend_from_slice(paths);
            args
        }
        let (_, a, _) = run_json(&with(threads, &[arg(&describe)]));
        let (_, b, _) = run_json_stdin(&with(threads, &["-", arg(&describe)]), &list_bytes);
        let (_, c, _) = run_json(&with(threads, &[arg(&list), arg(&list)]));
        let (_, d, _) = run_json(&with(threads, &[arg(&joined), arg(&list)]));
        for (name, got) in [
            ("per machine", a),
            ("stdin and files", b),
            ("twice", c),
            ("two days", d),
        ] {
            // Tables print whole seconds: compare what they can carry.
            let mut got = table(&got);
            let mut want = reference.clone();
            for pairs in [&mut got, &mut want] {
                for pair in pairs.as_array_mut().unwrap() {
                    for key in ["first_seen", "last_seen"] {
                        let t = pair[key].as_str().unwrap()[..19].to_string();
                        pair[key] = Value::String(t);
                    }
                }
            }
            assert_eq!(got, want, "{name}, --threads {threads}");
        }
    }
}

// 5. Detection by content, however long the first line.

#[test]
fn item_5_a_stream_with_a_long_first_line_is_a_stream() {
    let stream = testdata("trust/long-first-line.ndjson");
    let out = report(&[arg(&stream)]);
    assert_eq!(out["inputs"]["formats"]["ndjson"], 1);
    assert_eq!(out["inputs"]["events"], 4);
    // Inside a directory it is read too, so the gate sees the machine.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&stream, dir.path().join("events.ndjson")).unwrap();
    let (code, json, stderr) = run_json(&["check", "-o", "json", arg(dir.path())]);
    assert_eq!(json["machines"], 1, "{stderr}");
    assert_eq!(code, 0, "{stderr}");
}

// 6. Flags follow time.

#[test]
fn item_6_a_stale_flag_does_not_win_over_newer_events() {
    let dir = testdata("trust/stale-flag");
    let old = report(&[arg(&dir.join("m-reclaim.json"))]);
    assert_eq!(old["machines"]["failed_machine_reclaim"][0], "m-reclaim");
    let merged = report(&[arg(&dir)]);
    assert_eq!(merged["inputs"]["merged_machines"], 1);
    assert_eq!(
        merged["machines"]["failed_machine_reclaim"],
        serde_json::json!([]),
        "the newer table shows the machine PXE boot after the reclaim failed"
    );
}

// 7. Rule files never panic.

#[test]
fn item_7_out_of_range_rule_numbers_are_named_with_their_line() {
    for (file, key, line) in [
        (
            "trust/rules-huge-seconds.json",
            "failed_reclaim_seconds",
            22,
        ),
        (
            "trust/rules-beyond-i64.json",
            "buffered_phoned_home_seconds",
            21,
        ),
    ] {
        let rules = testdata(file);
        let output = fsmlog()
            .args([
                "report",
                "--rules",
                arg(&rules),
                arg(&testdata("seed-machine.txt")),
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{file}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.contains(&format!("line {line}: {key} is ")),
            "{file}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        let lint = fsmlog()
            .args(["rules", "lint", arg(&rules)])
            .output()
            .unwrap();
        assert_eq!(lint.status.code(), Some(1), "{file}");
    }
}

// 8. SARIF that GitHub accepts.

/// Microsoft's SARIF Multitool, which `.ci/run` installs under `target/tools`.
fn multitool() -> Option<PathBuf> {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tools/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
    if tool.exists() {
        return Some(tool);
    }
    assert!(
        std::env::var_os("FSMLOG_REQUIRE_TOOLS").is_none(),
        "the SARIF Multitool is missing; .ci/run installs it"
    );
    eprintln!("skipped: the SARIF Multitool is not installed (see .ci/run)");
    None
}

#[test]
fn item_8_sarif_passes_githubs_rules_and_points_at_lines() {
    let Some(tool) = multitool() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(testdata(LIST), d.join("fleet.json")).unwrap();
    std::fs::copy(testdata("trust/new-pair.txt"), d.join("new.txt")).unwrap();
    let run = |args: &[&str]| fsmlog().current_dir(d).args(args).output().unwrap();
    run(&["check", "fleet.json", "--write-baseline", "baseline.json"]);
    let output = run(&[
        "check",
        "fleet.json",
        "new.txt",
        "--baseline",
        "baseline.json",
        "-o",
        "sarif",
    ]);
    assert_eq!(output.status.code(), Some(1));
    std::fs::write(d.join("f.sarif"), &output.stdout).unwrap();
    let status = Process::new(&tool)
        .current_dir(d)
        .args([
            "validate",
            "f.sarif",
            "--rule-kind",
            "Gh;Sarif",
            "--output",
            "report.sarif",
        ])
        .args(["--log", "ForceOverwrite"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let findings: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("report.sarif")).unwrap()).unwrap();
    let findings: Vec<String> = findings["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{} {}", r["ruleId"], r["message"]))
        .collect();
    assert!(findings.is_empty(), "{findings:#?}");
    // Each result points at a file and line that exist.
    let sarif: Value = serde_json::from_slice(&output.stdout).unwrap();
    for result in sarif["runs"][0]["results"].as_array().unwrap() {
        let location = &result["locations"][0]["physicalLocation"];
        let uri = location["artifactLocation"]["uri"].as_str().unwrap();
        let line = location["region"]["startLine"].as_u64().unwrap() as usize;
        let text = std::fs::read_to_string(d.join(uri)).unwrap();
        let shown = text.lines().nth(line - 1).unwrap();
        if result["baselineState"] == "new" {
            // The pair's first occurrence: for Installing in PXE Booting the first of its two
            // rows, not the later one.
            assert_eq!(uri, "new.txt");
            assert!(
                shown.contains(result["properties"]["event"].as_str().unwrap()),
                "{shown}"
            );
            if result["properties"]["state"] == "PXE Booting" {
                assert!(shown.contains("08:10:00"), "{shown}");
            }
        } else {
            assert_eq!(uri, "baseline.json");
            assert!(
                shown.contains(result["properties"]["state"].as_str().unwrap()),
                "{shown}"
            );
        }
    }
}

// 9. The smaller ones.

#[test]
fn item_9_a_corrupt_gzip_says_so() {
    let output = fsmlog()
        .args(["report", arg(&testdata("trust/corrupt.json.gz"))])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("cannot decompress (gzip)"), "{stderr}");
    assert!(!stderr.contains("empty"), "{stderr}");
}

#[test]
fn item_9_detection_does_not_depend_on_how_fast_a_pipe_delivers() {
    let stream = testdata("trust/late-stream.ndjson");
    let (_, at_once, _) = run_json(&["report", "-o", "json", arg(&stream)]);
    assert_eq!(at_once["inputs"]["formats"]["ndjson"], 1);
    assert_eq!(at_once["inputs"]["events"], 5);
    // The same bytes, a line at a time with pauses in between.
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("fsmlog"))
        .args(["report", "-o", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in std::fs::read_to_string(&stream)
        .unwrap()
        .split_inclusive('\n')
    {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let slow: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(slow["unexpected"], at_once["unexpected"]);
    assert_eq!(slow["inputs"]["events"], at_once["inputs"]["events"]);
    assert_eq!(slow["inputs"]["formats"]["ndjson"], 1);
}

#[test]
fn item_9_a_machine_without_events_is_a_machine_in_every_format() {
    let dir = testdata("trust/no-events");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().path();
        let (code, out, stderr) = run_json(&["report", "-o", "json", arg(&file)]);
        assert_eq!(code, 0, "{}: {stderr}", file.display());
        assert_eq!(out["inputs"]["machines"], 1, "{}", file.display());
    }
}

#[test]
fn item_9_files_that_cannot_be_opened_are_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("export.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let (code, out, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&socket),
        arg(&testdata("seed-machine.txt")),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("export.sock: cannot open"), "{stderr}");
    assert_eq!(out["inputs"]["files"], 1);
}

#[test]
fn item_9_markdown_cells_escape_the_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("seed-machine.txt")).unwrap();
    let file = dir.path().join("rack|7.txt");
    std::fs::write(&file, text).unwrap();
    let output = fsmlog()
        .args(["report", "-o", "markdown", arg(&file)])
        .output()
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    let row = out.lines().find(|l| l.contains("PXE Booting")).unwrap();
    assert!(row.contains("rack\\|7"), "{row}");
    // Still eight cells: the id's `|` does not split it.
    assert_eq!(
        row.matches(" | ").count() + row.matches("\\|").count() - 1,
        7,
        "{row}"
    );
}

#[test]
fn item_9_import_go_names_duplicates_by_their_go_lines() {
    let dir = tempfile::tempdir().unwrap();
    let go = "package fsm\n\nfunc Events() fsm.Events {\n\treturn fsm.Events{\n\t\t{\n\t\t\tName: metal.ProvisioningEventWaiting.String(),\n\t\t\tSrc:  []string{states.Registering.String()},\n\t\t\tDst:  states.Waiting.String(),\n\t\t},\n\t\t{\n\t\t\tName: metal.ProvisioningEventWaiting.String(),\n\t\t\tSrc:  []string{states.Registering.String()},\n\t\t\tDst:  states.Waiting.String(),\n\t\t},\n\t}\n}\n";
    let file = dir.path().join("events.go");
    std::fs::write(&file, go).unwrap();
    let output = fsmlog()
        .args(["rules", "import-go", arg(&file)])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(
            "events.go:12:19: duplicate pair (Registering, Waiting), already given at 7:19"
        ),
        "{stderr}"
    );
}

#[test]
fn item_9_an_odd_field_does_not_lose_the_machine() {
    let out = report(&[arg(&testdata("trust/odd-fields.json"))]);
    assert_eq!(out["inputs"]["machines"], 2);
    assert_eq!(out["unexpected"][0]["count"], 2);
    assert_eq!(
        out["unexpected"][0]["examples"],
        serde_json::json!(["4711", "m-repeated"])
    );
}

#[test]
fn item_9_fractions_are_printed_as_read() {
    let (_, out, _) = run_json(&[
        "replay",
        "-o",
        "json",
        arg(&testdata("trust/m-fractions.json")),
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

// A file reached twice is read once, whichever way it is reached: a hard link and a symlink
// in the directory walked, the directory named twice, a file named beside its directory.
// Files found in a directory learn their identity as they are read, so this is also the
// pass that is made again once a file turns out to be one read already.

#[test]
fn a_file_reached_twice_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let logs = testdata("fleet-v0.42.2/logs-json");
    let mut names: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    for name in &names {
        std::fs::copy(logs.join(name), fleet.join(name)).unwrap();
    }
    let once = report(&[arg(&fleet)]);
    assert_eq!(once["inputs"]["files"], names.len());
    let first = fleet.join(&names[0]);
    std::fs::hard_link(&first, fleet.join("zz-hard.json")).unwrap();
    std::os::unix::fs::symlink(&first, fleet.join("zz-soft.json")).unwrap();
    for paths in [
        vec![arg(&fleet)],
        vec![arg(&fleet), arg(&fleet)],
        vec![arg(&first), arg(&fleet)],
        vec![arg(&fleet), arg(&first)],
    ] {
        for command in [&["report", "-o", "json"][..], &["issues", "-o", "json"]] {
            let mut args = command.to_vec();
            args.extend(&paths);
            let (code, out, stderr) = run_json(&args);
            assert_eq!(code, 0, "{paths:?}: {stderr}");
            let inputs = &out["inputs"];
            assert_eq!(inputs["files"], names.len(), "{paths:?}");
            assert_eq!(inputs["machines"], once["inputs"]["machines"], "{paths:?}");
            let twice = inputs["skipped"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| {
                    s["reason"]
                        .as_str()
                        .unwrap()
                        .starts_with("the same file as ")
                })
                .count();
            // Both links, and every file of a directory named a second time.
            let expected = 2 + if paths.len() == 2 && paths[1] == paths[0] {
                names.len() + 2
            } else if paths.len() == 2 {
                1
            } else {
                0
            };
            assert_eq!(twice, expected, "{paths:?}: {stderr}");
        }
        let mut args = vec!["report", "-o", "json"];
        args.extend(&paths);
        let (_, out, _) = run_json(&args);
        assert_eq!(out["unexpected"], once["unexpected"], "{paths:?}");
    }
    // `replay` streams, so it learns every identity before it reads: the same machines.
    let output = fsmlog()
        .args(["replay", "-o", "ndjson", arg(&fleet), arg(&first)])
        .output()
        .unwrap();
    let alone = fsmlog()
        .args(["replay", "-o", "ndjson", arg(&fleet)])
        .output()
        .unwrap();
    assert_eq!(output.stdout, alone.stdout);
    assert!(String::from_utf8_lossy(&output.stderr).contains("the same file as"));
}

// Standard input named twice beside a directory (found by review): the pass that learns the
// directory's files' identities read both `-` at once, and each got part of the stream. What
// is known to be a repeat before reading is never read a second time.
#[test]
fn standard_input_named_twice_beside_a_directory_is_read_once() {
    let list = std::fs::read(testdata(LIST)).unwrap();
    let dir = testdata(TEXT_DIR);
    let text = report(&[arg(&testdata(LIST)), arg(&dir)]);
    for _ in 0..6 {
        for args in [
            vec!["report", "-o", "json", "-", arg(&dir), "-"],
            vec!["report", "-o", "json", "-", "/dev/stdin", arg(&dir)],
        ] {
            let (code, out, stderr) = run_json_stdin(&args, &list);
            assert_eq!(code, 0, "{args:?}: {stderr}");
            assert_eq!(out["inputs"]["errors"], serde_json::json!([]), "{args:?}");
            assert_eq!(out["inputs"]["machines"], text["inputs"]["machines"]);
            assert_eq!(
                out["inputs"]["events"], text["inputs"]["events"],
                "{args:?}"
            );
            assert!(stderr.contains("the same file as -"), "{stderr}");
        }
    }
}
