//! Rule files and metal-api's events.go: every mistake named at its line (and column),
//! every Go spelling read or refused.
use std::path::Path;

use serde_json::Value;

use super::*;

// 7. Rule files never panic.

#[test]
fn out_of_range_rule_numbers_are_named_with_their_line() {
    for (file, key, line) in [
        (
            "rule-files/rules-huge-seconds.json",
            "failed_reclaim_seconds",
            22,
        ),
        (
            "rule-files/rules-beyond-i64.json",
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

#[test]
fn import_go_names_duplicates_by_their_go_lines() {
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

fn waiting_from(rules: &Value) -> Vec<String> {
    let rows = rules["transitions"].as_array().unwrap();
    let row = rows.iter().find(|r| r["event"] == "Waiting").unwrap();
    let from = row["from"].as_array().unwrap();
    from.iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn import_go(dir: &Path, go: &str) -> (i32, Value, String) {
    let file = dir.join("events.go");
    std::fs::write(&file, go).unwrap();
    let (code, out, err) = stdout_of(&["rules", "import-go", arg(&file)]);
    (code, serde_json::from_str(&out).unwrap_or(Value::Null), err)
}

/// The Waiting entry of metal-api v0.42.2's `events.go`, as `events_go` writes it.
const WAITING: &str = "\t\t\tName: metal.ProvisioningEventWaiting.String(), // a comment\n\t\t\tSrc: []string{\n\t\t\t\tstates.Registering.String(),\n\t\t\t\tstates.Initial.String(),\n\t\t\t},";

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

#[test]
fn a_rule_file_in_yaml_is_its_json_and_its_mistakes_are_named_at_their_yaml_lines() {
    let fleet = testdata("fleet-v0.42.2/list-json");
    let dir = tempfile::tempdir().unwrap();
    let proposal = |format: &str| {
        let (code, text, stderr) = stdout_of(&[
            "rules",
            "propose",
            "-o",
            format,
            "--rules",
            "metal-api-v0.19.0",
            "--pair",
            "Waiting/PXE Booting",
            arg(&fleet),
        ]);
        assert_eq!(code, 0, "{stderr}");
        let path = dir.path().join(format!("proposed.{format}"));
        std::fs::write(&path, text).unwrap();
        path
    };
    let (json, yaml) = (proposal("json"), proposal("yaml"));
    // Every command that reads a rule file answers alike with either.
    for command in [
        vec!["report", "-o", "json", "--rules"],
        vec!["diff", "-o", "json", "--old", "metal-api-v0.19.0", "--new"],
    ] {
        let answer = |rules: &Path| {
            let mut args = command.clone();
            args.extend([arg(rules), arg(&fleet)]);
            let (code, report, _) = run_json(&args);
            assert!(code == 0 || code == 1, "{command:?}");
            report
        };
        let from_json = answer(&json);
        assert_eq!(answer(&yaml), from_json, "{command:?}");
    }
    let (_, report, _) = run_json(&["report", "-o", "json", "--rules", arg(&yaml), arg(&fleet)]);
    assert!(
        report["unexpected"].as_array().unwrap().iter().all(|p| (
            p["state"].as_str(),
            p["event"].as_str()
        ) != (
            Some("Waiting"),
            Some("PXE Booting")
        )),
        "the accepted pair is expected under the YAML rules: {report}"
    );
    let (code, said, _) = stdout_of(&["rules", "lint", arg(&yaml)]);
    assert_eq!(code, 0);
    assert!(
        said.ends_with("ok (metal-api-v0.19.0-proposed)\n"),
        "{said}"
    );
    // Written by hand, plain scalars and all: each mistake at its line.
    let hand = |second_row: &str| {
        let path = dir.path().join("hand.yaml");
        std::fs::write(
            &path,
            format!(
                "name: hand\ntransitions:\n  - event: PXE Booting\n    from: [Initial]\n    to: PXE Booting\n{second_row}failed_reclaim_seconds: 300\nkept_events: 100\nbuffered_phoned_home_seconds: null\n"
            ),
        )
        .unwrap();
        let (code, _, stderr) = stdout_of(&["rules", "lint", arg(&path)]);
        (code, stderr)
    };
    let (code, stderr) = hand("  - event: Waiting\n    from: [PXE Booting]\n    to: self\n");
    assert_eq!(code, 0, "{stderr}");
    let (code, stderr) = hand("  - event: Bogus\n    from: [Initial]\n    to: self\n");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("hand.yaml:6: unknown event \"Bogus\""),
        "{stderr}"
    );
    let (code, stderr) = hand("  - event: Waiting\n    from: 7\n    to: self\n");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("hand.yaml:6: invalid type: integer `7`"),
        "{stderr}"
    );
    // A repeated key is refused, as in JSON, not read as its last value.
    let (code, stderr) = hand("kept_events: 5\n");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("hand.yaml:8: duplicate field `kept_events`"),
        "{stderr}"
    );
    let (code, stderr) =
        hand("  - event: Waiting\n    from: [Initial]\n    to: self\ndescription: -1\n");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("hand.yaml:9: invalid type: integer `-1`"),
        "{stderr}"
    );
    // A repeated key in a row, or spelled another way, is refused too.
    let (code, stderr) =
        hand("  - event: Waiting\n    from: [Initial]\n    to: self\n    to: Waiting\n");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("hand.yaml:9: duplicate field `transitions/to`"),
        "{stderr}"
    );
    let (code, stderr) = hand("\"na\\u006de\": sneaky\n");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("hand.yaml:6: duplicate field `name`"),
        "{stderr}"
    );
    // A quoted first key is YAML still; a JSON rule file after a byte-order mark is JSON.
    let quoted = dir.path().join("quoted.yaml");
    std::fs::write(
        &quoted,
        "\"name\": q\ntransitions: []\nfailed_reclaim_seconds: 300\nkept_events: 100\nbuffered_phoned_home_seconds: ~\n",
    )
    .unwrap();
    let (code, said, stderr) = stdout_of(&["rules", "lint", arg(&quoted)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(said.ends_with("ok (q)\n"), "{said}");
    let (_, exported, _) = stdout_of(&["rules", "export", "metal-api"]);
    let bom = dir.path().join("bom.json");
    std::fs::write(&bom, format!("\u{feff}{exported}")).unwrap();
    let (code, _, stderr) = stdout_of(&["rules", "lint", arg(&bom)]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_rule_file_must_say_its_buffering_window_as_it_says_every_knob() {
    let dir = tempfile::tempdir().unwrap();
    let (_, exported, _) = stdout_of(&["rules", "export", "metal-api-v0.19.0"]);
    assert!(exported.contains("\n  \"buffered_phoned_home_seconds\": null,\n"));
    for knob in [
        "buffered_phoned_home_seconds",
        "failed_reclaim_seconds",
        "kept_events",
    ] {
        // The knob's line taken out, JSON and YAML alike: refused, never read as a default.
        let mut json: Value = serde_json::from_str(&exported).unwrap();
        json.as_object_mut().unwrap().remove(knob).unwrap();
        let json = serde_json::to_string_pretty(&json).unwrap();
        let json_path = write(dir.path(), "no-knob.json", &json);
        let yaml = format!(
            "name: no-knob\ntransitions:\n  - event: PXE Booting\n    from: [Initial]\n    to: PXE Booting\n{}",
            [
                ("buffered_phoned_home_seconds", "null"),
                ("failed_reclaim_seconds", "300"),
                ("kept_events", "100"),
            ]
            .iter()
            .filter(|(key, _)| *key != knob)
            .map(|(key, value)| format!("{key}: {value}\n"))
            .collect::<String>()
        );
        let yaml_path = write(dir.path(), "no-knob.yaml", &yaml);
        for path in [&json_path, &yaml_path] {
            let (code, said, stderr) = stdout_of(&["rules", "lint", arg(path)]);
            assert_eq!(code, 1, "{knob} left out of {path:?}: {said}{stderr}");
            assert!(
                stderr.contains(&format!("missing field `{knob}`")),
                "{knob}: {stderr}"
            );
            // Named at a line once: the JSON's closing brace, the YAML mapping's first line.
            let line = if *path == json_path {
                json.lines().count()
            } else {
                1
            };
            let name = path.file_name().unwrap().to_str().unwrap();
            assert!(
                stderr.contains(&format!("{name}:{line}: missing field `{knob}`\n")),
                "{knob}: {stderr}"
            );
            assert!(!stderr.contains(" at line "), "{stderr}");
            let (code, _, stderr) = stdout_of(&[
                "report",
                "--rules",
                arg(path),
                arg(&testdata("seed-machine.txt")),
            ]);
            assert_eq!(code, 2, "{knob}: {stderr}");
        }
    }
    // `null` is "no buffering", in JSON and in YAML (`null` or `~`).
    for (name, text) in [
        ("null.json", exported.clone()),
        (
            "null.yaml",
            "name: n\ntransitions: []\nbuffered_phoned_home_seconds: null\nfailed_reclaim_seconds: 300\nkept_events: 100\n".to_string(),
        ),
        (
            "tilde.yaml",
            "name: n\ntransitions: []\nbuffered_phoned_home_seconds: ~\nfailed_reclaim_seconds: 300\nkept_events: 100\n".to_string(),
        ),
    ] {
        let path = write(dir.path(), name, &text);
        let (code, said, stderr) = stdout_of(&["rules", "lint", arg(&path)]);
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(said.contains(": ok ("), "{said}");
    }
}

#[test]
fn import_go_refuses_an_events_body_it_would_not_read_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let go = events_go("metal-api-v0.42.2");
    let (code, _, err) = import_go(dir.path(), &go);
    assert_eq!(code, 0, "{err}");
    let line_of =
        |text: &str, piece: &str| 1 + text[..text.find(piece).unwrap()].matches('\n').count();
    let ret = "\treturn fsm.Events{\n";
    let end = "\t}\n}\n\nfunc eventCallbacks";
    let one_row = "fsm.Events{{Name: metal.ProvisioningEventPXEBooting.String(), Src: []string{states.Initial.String()}, Dst: states.PXEBooting.String()}}";
    let cases = [
        (
            go.replace(ret, "\tevents := fsm.Events{\n").replace(
                end,
                "\t}\n\tevents = append(events, fsm.EventDesc{Name: metal.ProvisioningEventAlive.String(), Src: states.AllStateNames(), Dst: states.Alive.String()})\n\treturn events\n}\n\nfunc eventCallbacks",
            ),
            "\tevents :=",
            2,
        ),
        (
            go.replace(ret, "\treturn append(fsm.Events{\n")
                .replace(end, "\t}, extra()...)\n}\n\nfunc eventCallbacks"),
            "\treturn append(",
            9,
        ),
        (go.replace(end, "\t}[1:]\n}\n\nfunc eventCallbacks"), "\t}[1:]", 3),
        (
            go.replace(ret, "\tevents := fsm.Events{\n").replace(
                end,
                "\t}\n\tevents[3].Dst = states.Waiting.String()\n\treturn events\n}\n\nfunc eventCallbacks",
            ),
            "\tevents :=",
            2,
        ),
        (
            go.replace(
                ret,
                &format!("\tif os.Getenv(\"FSM\") == \"\" {{\n\t\treturn {one_row}\n\t}}\n{ret}"),
            ),
            "\tif os.Getenv",
            2,
        ),
        (
            go.replace(
                "const SelfTransitionState = \"self_transition\"",
                "const SelfTransitionState = \"State Waiting\"",
            ),
            "const SelfTransitionState",
            7,
        ),
        (
            go.replace(ret, &format!("{ret}\t\textra(),\n")),
            "\t\textra(),",
            3,
        ),
    ];
    for (text, piece, column) in cases {
        let at = format!("events.go:{}:{column}: ", line_of(&text, piece));
        let (code, out, err) = import_go(dir.path(), &text);
        assert_eq!(code, 2, "{piece}: {out}");
        assert!(err.contains(&at), "{piece}: {at} in {err}");
    }
}

#[test]
fn import_go_lexes_runes_and_strings_as_go_does_so_no_comment_hides_the_real_events() {
    let dir = tempfile::tempdir().unwrap();
    let real = events_go("metal-api-v0.42.2");
    // A `'"'` rune and a `"/*"` string open nothing in Go, nor does a `"*/"` string close
    // anything: the real `Events()` is code, and the one in the block comment after it is not.
    // Read with `'` taken for no quote, the `/*` in the string would open a comment that hides
    // the real table and the fake one would be read instead.
    let (head, body) = real.split_once("// Events are the transitions.\n").unwrap();
    let fake = "/* \"\nfunc Events() fsm.Events {\n\treturn fsm.Events{\n\t\t{\n\t\t\tName: metal.ProvisioningEventPXEBooting.String(),\n\t\t\tSrc: []string{\n\t\t\t\tstates.Initial.String(),\n\t\t\t},\n\t\t\tDst: states.PXEBooting.String(),\n\t\t},\n\t}\n}\n*/\n";
    let hostile = format!(
        "{head}var q = '\"'\nvar s = \"/*\"\n\n// Events are the transitions.\n{body}\nvar t = \"*/\"\n\n{fake}"
    );
    let file = write(dir.path(), "events.go", &hostile);
    let (code, imported, stderr) = stdout_of(&["rules", "import-go", arg(&file)]);
    assert_eq!(code, 0, "{stderr}");
    let (_, want, _) = stdout_of(&[
        "rules",
        "import-go",
        arg(&write(dir.path(), "real.go", &real)),
    ]);
    let rows = |text: &str| -> Value {
        serde_json::from_str::<Value>(text).unwrap()["transitions"].clone()
    };
    assert_eq!(rows(&imported), rows(&want));
}

#[test]
fn import_go_refuses_a_row_a_later_all_states_row_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let real = events_go("metal-api-v0.42.2");
    // looplab/fsm keeps the last row for a pair: this explicit row, before the Machine
    // Reclaim row of every state, never applies in metal-api, though a rule file's explicit
    // row would beat its `*` row.
    let star = "\t\t{\n\t\t\tName: metal.ProvisioningEventMachineReclaim.String(), // a comment\n\t\t\tSrc:  states.AllStateNames(),";
    assert!(real.contains(star), "{real}");
    let early = "\t\t{\n\t\t\tName: metal.ProvisioningEventMachineReclaim.String(),\n\t\t\tSrc: []string{\n\t\t\t\tstates.PXEBooting.String(),\n\t\t\t},\n\t\t\tDst: states.Installing.String(),\n\t\t},\n";
    let shadowed = real.replacen(star, &format!("{early}{star}"), 1);
    let file = write(dir.path(), "events.go", &shadowed);
    let (code, _, stderr) = stdout_of(&["rules", "import-go", arg(&file)]);
    assert_eq!(code, 2, "{stderr}");
    let line = shadowed[..shadowed.find(early).unwrap()].lines().count() + 1;
    assert!(
        stderr.contains(&format!("events.go:{line}:3: Machine Reclaim from PXE Booting is overridden by the `states.AllStateNames()` row after it")),
        "{stderr}"
    );
    // After the `*` row, the explicit row wins in both: read.
    let end = "\t}\n}\n";
    let after = real.replacen(end, &format!("{early}{end}"), 1);
    let file = write(dir.path(), "after.go", &after);
    let (code, _, stderr) = stdout_of(&["rules", "import-go", arg(&file)]);
    assert_eq!(code, 0, "{stderr}");
}
