//! Strings from input are shown as the text they are: hidden and reordering characters
//! escaped, Markdown and CSV cells guarded, suggested commands safe to paste.
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use serde_json::{Value, json};

use super::*;

#[test]
fn markdown_cells_escape_the_pipe() {
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

// Item 4: every character that hides or reorders text is shown escaped.

/// Every character the fixture hides in ids, messages and event names.
const HIDDEN: [char; 33] = [
    '\u{ad}',
    '\u{34f}',
    '\u{61c}',
    '\u{115f}',
    '\u{1160}',
    '\u{180e}',
    '\u{200b}',
    '\u{200c}',
    '\u{200d}',
    '\u{200e}',
    '\u{200f}',
    '\u{2028}',
    '\u{2029}',
    '\u{202a}',
    '\u{202b}',
    '\u{202c}',
    '\u{202d}',
    '\u{202e}',
    '\u{2060}',
    '\u{2066}',
    '\u{2067}',
    '\u{2068}',
    '\u{2069}',
    '\u{3164}',
    '\u{feff}',
    '\u{ffa0}',
    '\u{e0001}',
    '\u{e0041}',
    '\u{e007f}',
    '\u{1b}',
    '\u{7f}',
    '\u{85}',
    '\u{9b}',
];

#[test]
fn no_output_shows_a_hidden_character_raw() {
    let fixture = testdata("hostile-names/invisible.json");
    let fixture = arg(&fixture);
    let diff = ["diff", "--old", "metal-api-v0.19.0", "--new", "metal-api"];
    let runs: Vec<(Vec<&str>, &[&str])> = vec![
        (vec!["report"], &["table", "markdown", "csv", "html"]),
        (vec!["replay"], &["table", "csv"]),
        (vec!["explain"], &["table", "markdown", "csv"]),
        (vec!["issues"], &["table", "markdown", "csv"]),
        (vec!["graph"], &["svg", "dot", "mermaid"]),
        (vec!["check"], &["table", "markdown", "junit"]),
        (diff.to_vec(), &["table", "markdown"]),
    ];
    for (command, outputs) in runs {
        for output in outputs {
            let mut args = command.clone();
            args.extend(["-o", output, fixture]);
            let (_, stdout, stderr) = stdout_of(&args);
            for c in HIDDEN {
                assert!(!stdout.contains(c), "{args:?} shows U+{:04X} raw", c as u32);
                assert!(
                    !stderr.contains(c),
                    "{args:?} stderr shows U+{:04X} raw",
                    c as u32
                );
            }
            if command == ["report"] && *output == "table" {
                // Machines that differ by an invisible character are shown apart.
                assert!(
                    stdout.contains(
                        "metal-api's crash-loop flag (33): m-1\\u{1b}, m-1\\u{7f}, m-1\\u{85}"
                    ),
                    "{stdout}"
                );
                assert!(
                    stderr.contains("\\u{202e}"),
                    "stderr names the bad time: {stderr}"
                );
            }
        }
    }
    let shown = on_terminal(120, &["issues", "--all", fixture], &[("NO_COLOR", "1")]);
    for c in HIDDEN {
        assert!(
            !shown.contains(c),
            "the terminal shows U+{:04X} raw",
            c as u32
        );
    }
}

// Item 5: commands fsmlog prints are safe to paste.

#[test]
fn a_suggested_command_quotes_what_a_file_name_says() {
    let dir = testdata("hostile-names/shell");
    let (_, out, _) = stdout_of(&["explain", arg(&dir)]);
    let line = out
        .lines()
        .find(|l| l.contains("metalctl machine logs"))
        .expect("a machine to look at");
    assert!(
        line.contains("metalctl machine logs '$(touch PWNED) it'\\''s'   # first at"),
        "{line}"
    );
    // Pasted into a shell, the quoted word is the id, and runs nothing.
    let work = tempfile::tempdir().unwrap();
    let command = line
        .trim()
        .replacen("metalctl machine logs", "printf %s", 1);
    let echoed = Process::new("sh")
        .args(["-c", &command])
        .current_dir(work.path())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&echoed.stdout),
        "$(touch PWNED) it's"
    );
    assert!(!work.path().join("PWNED").exists());
    // A plain id stays as it is.
    let (_, seed, _) = stdout_of(&["explain", arg(&testdata("seed-machine.txt"))]);
    assert!(
        seed.contains("  metalctl machine logs seed-machine   # first at"),
        "{seed}"
    );
}

#[test]
fn csv_guards_a_field_once_at_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let list = json!([
        {"id": "-2+3", "events": {"log": [
            {"time": "2022-08-22T06:36:15Z", "event": "PXE Booting", "message": "[unexpectedly received in state waiting]"},
            {"time": "2022-08-22T06:32:44Z", "event": "Waiting", "message": "w"}]}},
        {"id": "=cmd", "events": {"log": [
            {"time": "2022-08-22T06:36:15Z", "event": "PXE Booting", "message": "[unexpectedly received in state waiting]"},
            {"time": "2022-08-22T06:32:44Z", "event": "Waiting", "message": "w"}]}}
    ]);
    let file = dir.path().join("list.json");
    std::fs::write(&file, list.to_string()).unwrap();
    let (_, csv, _) = stdout_of(&["report", "-o", "csv", arg(&file)]);
    let row = csv.lines().nth(1).unwrap();
    assert!(row.ends_with(",'-2+3 =cmd,unannounced-reboot"), "{row}");
}

#[test]
fn a_rule_set_name_must_show_as_the_text_it_is() {
    let (code, _, stderr) = stdout_of(&[
        "rules",
        "lint",
        arg(&testdata("hostile-names/bad-name-rules.json")),
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(":2: the name holds U+001B, a character that hides or reorders text"),
        "{stderr}"
    );
    let (code, _, stderr) = stdout_of(&[
        "report",
        "--rules",
        arg(&testdata("hostile-names/bad-name-rules.json")),
        arg(&testdata("seed-machine.txt")),
    ]);
    assert_eq!(code, 2);
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
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

// Issue 36 item 8: `-o yaml` is valid YAML 1.2 whatever the keys from input are.

/// Places no YAML key may be written plain as: too long for an implicit key (2,000
/// characters; 1,200 bytes in 400), YAML's indicators, a comment, line breaks, controls,
/// what a YAML stream must not hold raw, and words a reader takes for another type.
fn hostile_places() -> Vec<String> {
    let mut places = vec![
        "r".repeat(2000),
        "机".repeat(400),
        format!("{}: {}", "k".repeat(600), "v".repeat(600)),
    ];
    places.extend(
        [
            "a: b",
            "#c",
            "x # y",
            "x\ny",
            "cr\rlf",
            "\u{1b}[2J\u{7}\u{85}\u{7f}",
            "\u{feff}bom",
            "\u{fffe}\u{ffff}",
            "ls\u{2028}ps\u{2029}",
            "\u{202e}evil",
            "-lead",
            "- item",
            "?q",
            "? q",
            ":",
            "[x",
            "{y}",
            "*alias",
            "&anchor",
            "!tag",
            "|",
            ">",
            "%YAML",
            "@",
            "`",
            "'\"",
            "\\",
            " sp ",
            "\t",
            "true",
            "No",
            "~",
            "null",
            "1",
            "0x1f",
            "1e3",
            ".inf",
            "2025-01-01",
            "<<",
            "=",
            "---",
            "...",
        ]
        .map(String::from),
    );
    places
}

/// A fleet of one crash-looping machine copied once per hostile place, its rack that place,
/// and its partition and size the place's neighbours.
fn hostile_fleet(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(testdata("fleet-v0.42.2/list-json/machines.json")).unwrap();
    let fleet: Vec<Value> = serde_json::from_str(&text).unwrap();
    let seed = fleet
        .iter()
        .find(|m| m["id"] == "043afe87-2ce5-45b2-824a-4b04924cf73f")
        .unwrap();
    let places = hostile_places();
    let machines: Vec<Value> = places
        .iter()
        .enumerate()
        .map(|(i, place)| {
            let mut machine = seed.clone();
            let id = format!("00000000-0000-4000-8000-{i:012}");
            machine["id"] = json!(id);
            machine["name"] = json!(id);
            machine["rackid"] = json!(place);
            machine["partition"] = json!({"id": places[(i + 1) % places.len()]});
            machine["size"] = json!({"id": places[(i + 2) % places.len()]});
            machine
        })
        .collect();
    let file = dir.join("machines.json");
    std::fs::write(&file, serde_json::to_string(&machines).unwrap()).unwrap();
    file
}

#[test]
fn yaml_keys_from_input_are_valid_yaml_and_read_back_as_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = hostile_fleet(dir.path());
    let baseline = dir.path().join("baseline.json");
    let (code, _, stderr) = stdout_of(&["check", "--write-baseline", arg(&baseline), arg(&fleet)]);
    assert_eq!(code, 0, "{stderr}");
    let pyyaml = have(
        "PyYAML (python3 -c 'import yaml')",
        Process::new("python3")
            .args(["-c", "import yaml"])
            .output()
            .is_ok_and(|o| o.status.success()),
    );
    for command in [
        vec!["report", arg(&fleet)],
        vec!["report", "--wide", arg(&fleet)],
        vec!["explain", arg(&fleet)],
        vec!["issues", arg(&fleet)],
        vec!["replay", arg(&fleet)],
        vec![
            "rules",
            "propose",
            "--pair",
            "Preparing/Preparing",
            arg(&fleet),
        ],
        vec!["check", "--baseline", arg(&baseline), arg(&fleet)],
        vec![
            "diff",
            "--old",
            "metal-api-v0.19.3",
            "--new",
            "metal-api",
            arg(&fleet),
        ],
    ] {
        let with = |format: &str| {
            let mut args = command.clone();
            args.extend(["-o", format]);
            let (_, out, stderr) = stdout_of(&args);
            assert!(!out.is_empty(), "{args:?}: {stderr}");
            out
        };
        let json: Value = serde_json::from_str(&with("json")).unwrap();
        let yaml = with("yaml");
        // The fixture's places reach these documents as keys (`where`) or values (`issues`).
        if ["report", "explain", "issues"].contains(&command[0]) {
            assert!(yaml.contains(&"r".repeat(2000)), "{command:?}");
        }
        assert_eq!(yaml_value(&yaml), json, "{command:?}: saphyr-parser");
        if pyyaml {
            let mut python = Process::new("python3")
                .args([
                    "-c",
                    "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)",
                ])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            python
                .stdin
                .take()
                .unwrap()
                .write_all(yaml.as_bytes())
                .unwrap();
            let read = python.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&read.stderr);
            assert!(
                read.status.success(),
                "{command:?}: PyYAML refused it: {err}"
            );
            let value: Value = serde_json::from_slice(&read.stdout).unwrap();
            assert_eq!(value, json, "{command:?}: PyYAML");
        }
    }
}
