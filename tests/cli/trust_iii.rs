//! Answers a gate can act on blind: a raw stream split over files, hostile YAML, Go spelt
//! another way, long logs, ids that look like options, nested JSON at the element indent,
//! `--out` under `/dev`, damaged lists, file names that are not UTF-8, metrics labels and the
//! build script. Each test failed before its fix.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;

/// The bundled raw stream's lines, oldest first.
fn stream_lines() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(testdata("fleet-v0.42.2/ndjson/events.ndjson")).unwrap();
    let mut lines: Vec<(String, String)> = text
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            (v["time"].as_str().unwrap().to_string(), line.to_string())
        })
        .collect();
    lines.sort();
    lines
}

/// A report's unexpected pairs, its event count, and the exit code of `check` on the same.
type Answer = (Vec<(String, String, u64, u64)>, u64, i32);

/// The answer of a report over `paths`.
fn answer(paths: &[PathBuf]) -> Answer {
    let mut args = vec!["report", "-o", "json"];
    args.extend(paths.iter().map(|p| arg(p)));
    let (code, json, stderr) = run_json(&args);
    assert_eq!(code, 0, "{stderr}");
    let (check, _, _) = stdout_of(&[&["check"], &args[3..]].concat());
    (
        pairs(&json["unexpected"]),
        json["inputs"]["events"].as_u64().unwrap(),
        check,
    )
}

fn write_lines(path: &Path, lines: &[&(String, String)]) {
    let text: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn daily_files_of_a_raw_stream_answer_as_the_whole_stream() {
    let dir = tempfile::tempdir().unwrap();
    let line = |i: u32, day: u32, event: &str| {
        format!(
            "{{\"machine\":\"m1\",\"time\":\"2025-09-0{day}T00:0{i}:00Z\",\"event\":\"{event}\"}}\n"
        )
    };
    let day1: String = ["PXE Booting", "Preparing", "Registering", "Waiting"]
        .iter()
        .enumerate()
        .map(|(i, e)| line(i as u32, 1, e))
        .collect();
    let day2 = line(0, 2, "PXE Booting") + &line(1, 2, "Preparing");
    std::fs::write(dir.path().join("day1.ndjson"), &day1).unwrap();
    std::fs::write(dir.path().join("day2.ndjson"), &day2).unwrap();
    std::fs::write(dir.path().join("both.ndjson"), day1 + &day2).unwrap();
    let both = answer(&[dir.path().join("both.ndjson")]);
    let days = answer(&[
        dir.path().join("day1.ndjson"),
        dir.path().join("day2.ndjson"),
    ]);
    let waiting_pxe = ("Waiting".to_string(), "PXE Booting".to_string(), 1, 1);
    assert_eq!(both.0, vec![waiting_pxe]);
    assert_eq!(both.2, 1, "the gate fails on the whole stream");
    assert_eq!(days, both, "and on its two days");
}

#[test]
fn the_bundled_stream_split_by_time_or_shuffled_answers_as_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let lines = stream_lines();
    let whole = dir.path().join("whole.ndjson");
    write_lines(&whole, &lines.iter().collect::<Vec<_>>());
    let expected = answer(std::slice::from_ref(&whole));
    assert!(expected.0.len() >= 2, "the stream has unexpected pairs");
    // Cuts by time just before each unexpected event (where a seam would hide it) and at
    // every tenth of the stream, each file given first and last.
    let (_, replayed, _) = stdout_of(&["replay", "-o", "ndjson", arg(&whole)]);
    let mut cuts: Vec<usize> = (1..10).map(|tenth| lines.len() * tenth / 10).collect();
    for machine in replayed.lines() {
        let machine: Value = serde_json::from_str(machine).unwrap();
        for step in machine["steps"].as_array().unwrap() {
            if step["verdict"] == "unexpected" {
                let time = step["time"].as_str().unwrap();
                cuts.push(lines.iter().position(|(t, _)| t.as_str() >= time).unwrap());
            }
        }
    }
    assert!(
        cuts.len() >= 9 + 8,
        "the stream's unexpected events are cut before"
    );
    for cut in cuts {
        let (a, b) = (dir.path().join("a.ndjson"), dir.path().join("b.ndjson"));
        write_lines(&a, &lines[..cut].iter().collect::<Vec<_>>());
        write_lines(&b, &lines[cut..].iter().collect::<Vec<_>>());
        assert_eq!(answer(&[a.clone(), b.clone()]), expected, "cut at {cut}");
        assert_eq!(answer(&[b, a]), expected, "cut at {cut}, later file first");
    }
    // Each line to one of three files by a fixed shuffle, the files in every order.
    let mut parts: [Vec<&(String, String)>; 3] = Default::default();
    for (i, line) in lines.iter().enumerate() {
        parts[(i * 7919 + i / 3) % 3].push(line);
    }
    let files: Vec<PathBuf> = (0..3)
        .map(|i| dir.path().join(format!("part{i}.ndjson")))
        .collect();
    for (file, part) in files.iter().zip(&parts) {
        write_lines(file, part);
    }
    for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
        let given: Vec<PathBuf> = order.iter().map(|&i| files[i].clone()).collect();
        assert_eq!(answer(&given), expected, "order {order:?}");
    }
}

/// Runs fsmlog with its address space capped at 1 GiB: (exit code, stdout, stderr).
fn capped(args: &[&str]) -> (Option<i32>, String, String) {
    let bin = assert_cmd::cargo::cargo_bin("fsmlog");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 1048576; exec \"$0\" \"$@\"")
        .arg(bin)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn trust(rel: &str) -> PathBuf {
    testdata("trust-iii").join(rel)
}

#[test]
fn an_alias_bomb_is_an_error_at_its_line_and_the_rest_is_read() {
    let dir = trust("bomb-dir");
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
    let (code, _, stderr) = capped(&["report", "-o", "json", arg(&trust("hardware-bomb.yaml"))]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("hardware-bomb.yaml:7:"), "{stderr}");
}

/// The Waiting entry of metal-api v0.42.2's `events.go`, as `events_go` writes it.
const WAITING: &str = "\t\t\tName: metal.ProvisioningEventWaiting.String(), // a comment\n\t\t\tSrc: []string{\n\t\t\t\tstates.Registering.String(),\n\t\t\t\tstates.Initial.String(),\n\t\t\t},";

fn import_go(dir: &Path, go: &str) -> (i32, Value, String) {
    let file = dir.join("events.go");
    std::fs::write(&file, go).unwrap();
    let (code, out, err) = stdout_of(&["rules", "import-go", arg(&file)]);
    (code, serde_json::from_str(&out).unwrap_or(Value::Null), err)
}

fn waiting_from(rules: &Value) -> Vec<String> {
    let rows = rules["transitions"].as_array().unwrap();
    let row = rows.iter().find(|r| r["event"] == "Waiting").unwrap();
    let from = row["from"].as_array().unwrap();
    from.iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn import_go_reads_every_go_spelling_of_a_state_or_an_event() {
    let dir = tempfile::tempdir().unwrap();
    let go = events_go("metal-api-v0.42.2");
    assert!(go.contains(WAITING), "the entry to change is there");
    let spelt = WAITING
        .replace(
            "metal.ProvisioningEventWaiting.String()",
            "string(metal.ProvisioningEventWaiting)",
        )
        .replace(
            "states.Initial.String(),",
            "states.Initial.String(), string(states.PXEBooting), \"State Preparing\",",
        );
    let (code, rules, err) = import_go(dir.path(), &go.replace(WAITING, &spelt));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        waiting_from(&rules),
        ["Registering", "Initial", "PXE Booting", "Preparing"]
    );
    // An event as its string.
    let literal = WAITING.replace("metal.ProvisioningEventWaiting.String()", "\"Waiting\"");
    let (code, rules, err) = import_go(dir.path(), &go.replace(WAITING, &literal));
    assert_eq!(code, 0, "{err}");
    assert_eq!(waiting_from(&rules), ["Registering", "Initial"]);
}

#[test]
fn import_go_refuses_what_it_cannot_read_naming_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let go = events_go("metal-api-v0.42.2");
    let line = 1 + go[..go.find(WAITING).unwrap()].matches('\n').count();
    for (item, says) in [
        // The event's name is no state's string: looplab would never match it.
        ("\"PXE Booting\"", "is no state metal-api has"),
        ("states.Waiting", "cannot read `states.Waiting` as a state"),
        ("fmt.Sprint(states.Waiting)", "cannot read"),
        ("string(states.Limbo)", "unknown state states.Limbo"),
    ] {
        let odd = WAITING.replace(
            "states.Initial.String(),",
            &format!("states.Initial.String(), {item},"),
        );
        let (code, _, err) = import_go(dir.path(), &go.replace(WAITING, &odd));
        assert_eq!(code, 2, "{item} is refused");
        // Src's third line: four tabs, then `states.Initial.String(), ` (25 characters).
        let at = format!("events.go:{}:30: ", line + 3);
        assert!(err.contains(&at) && err.contains(says), "{item}: {err}");
    }
    let odd = WAITING.replace("metal.ProvisioningEventWaiting.String()", "waitingEvent");
    let (code, _, err) = import_go(dir.path(), &go.replace(WAITING, &odd));
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!(
            "events.go:{line}:10: cannot read `waitingEvent` as an event"
        )),
        "{err}"
    );
}

#[test]
fn no_id_becomes_an_option_of_a_suggested_command() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dash.ndjson");
    let mut text = String::new();
    for id in [
        "-uhttp://evil.example:8080",
        "--url=http://evil.example",
        "m-plain",
    ] {
        for (time, event) in [("00:00", "Waiting"), ("05:00", "PXE Booting")] {
            text += &format!(
                "{{\"machine\":\"{id}\",\"time\":\"2025-09-01T00:{time}Z\",\"event\":\"{event}\"}}\n"
            );
        }
    }
    std::fs::write(&file, text).unwrap();
    for format in ["table", "markdown"] {
        let (code, out, err) = stdout_of(&["explain", "-o", format, arg(&file)]);
        assert_eq!(code, 0, "{err}");
        let commands: Vec<&str> = out
            .lines()
            .filter_map(|l| l.split("metalctl machine logs ").nth(1))
            .map(|rest| rest.split("   #").next().unwrap())
            .collect();
        assert_eq!(
            commands,
            [
                "-- '--url=http://evil.example'",
                "-- -uhttp://evil.example:8080",
                "m-plain"
            ],
            "{format}: {out}"
        );
    }
}

#[test]
fn out_under_dev_is_replaced_atomically_unless_it_names_a_descriptor() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (_, expected, _) = stdout_of(&["report", "-o", "openmetrics", arg(&fleet)]);
    let dir = tempfile::tempdir_in(shm).unwrap();
    let prom = dir.path().join("x.prom");
    for round in 0..2 {
        let (code, _, err) = stdout_of(&[
            "report",
            "-o",
            "openmetrics",
            "--out",
            arg(&prom),
            arg(&fleet),
        ]);
        assert_eq!(code, 0, "round {round}: {err}");
        assert_eq!(
            std::fs::read_to_string(&prom).unwrap(),
            expected,
            "round {round}"
        );
    }
    // A device is written straight, and /dev/stderr, a descriptor, is appended to.
    let (code, _, err) = stdout_of(&["report", "-o", "csv", "--out", "/dev/null", arg(&fleet)]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = stdout_of(&["report", "-o", "csv", "--out", "/dev/stderr", arg(&fleet)]);
    assert_eq!(code, 0);
    assert!(out.is_empty() && err.starts_with("State,Event,"), "{err}");
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

/// Runs `cargo build -v` in `dir` and returns its stderr.
fn cargo_build(dir: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["build", "-v", "--offline"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("FSMLOG_COMMIT")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

#[test]
fn the_build_script_watches_only_what_exists() {
    // A crate of the build script alone, in a fresh `git init` (no packed refs, no commit).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs"),
        root.join("build.rs"),
    )
    .unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() {\n    println!(\"{}\", env!(\"FSMLOG_COMMIT\"));\n}\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    git(root, &["init", "-q"]);
    assert!(!root.join(".git/packed-refs").exists());
    let first = cargo_build(root);
    assert!(first.contains("Compiling tiny"), "{first}");
    let second = cargo_build(root);
    assert!(
        second.contains("Fresh tiny"),
        "a second build is a no-op: {second}"
    );
    // The first commit makes the branch: the build names it.
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "first"]);
    let third = cargo_build(root);
    assert!(third.contains("Compiling tiny"), "{third}");
    let version = std::process::Command::new(root.join("target/debug/tiny"))
        .output()
        .unwrap();
    let version = String::from_utf8(version.stdout).unwrap();
    assert_ne!(version.trim(), "commit unknown");
    assert!(cargo_build(root).contains("Fresh tiny"));
}

#[test]
fn a_metrics_label_is_the_machines_id() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.json");
    std::fs::write(
        &list,
        r#"[{"id": "m-back\\slash\\", "events": {"log": [{"time": "2025-09-01T00:00:00Z", "event": "Waiting", "message": "w"}]}}]"#,
    )
    .unwrap();
    let (_, json, _) = run_json(&["issues", "-o", "json", "--all", arg(&list)]);
    assert_eq!(json["machines"][0]["machine"], r"m-back\slash\");
    let (code, text, err) = stdout_of(&["issues", "-o", "openmetrics", arg(&list)]);
    assert_eq!(code, 0, "{err}");
    // The exposition's `\\` is one backslash: the label reads back as the id.
    assert!(text.contains(r#"machineid="m-back\\slash\\""#), "{text}");
}

#[test]
fn review_a_long_scalar_repeated_counts_its_bytes_and_a_doubled_field_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = dir.path().join("big.yaml");
    let mut text = format!("- id: m1\n  hw: &a \"{}\"\n  more:\n", "x".repeat(1 << 20));
    text += &"  - *a\n".repeat(20_000);
    std::fs::write(&yaml, text).unwrap();
    let (code, _, err) = capped(&["report", "-o", "json", arg(&yaml)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("aliases repeat"), "{err}");
    let go = events_go("metal-api-v0.42.2");
    let twice = WAITING.replace(
        "\t\t\tSrc: []string{",
        "\t\t\tSrc: []string{states.Initial.String()},\n\t\t\tSrc: []string{",
    );
    let (code, _, err) = import_go(dir.path(), &go.replace(WAITING, &twice));
    assert_eq!(code, 2);
    assert!(err.contains("`Src` given twice"), "{err}");
    // A descriptor however it is spelt is appended to.
    let log = dir.path().join("o");
    std::fs::write(&log, "keep\n").unwrap();
    let out = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("fsmlog"))
        .args(["report", "-o", "csv", "--out", "/dev/fd//1"])
        .arg(testdata("seed-machine.txt"))
        .stdout(out)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .starts_with("keep\nState,")
    );
}
