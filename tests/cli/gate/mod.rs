//! Rules as data, `diff` and the `check` gate, as a CI job runs them.

mod said;
mod sarif;
mod unknown;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

// Rule files.

#[test]
fn exported_rules_load_back_with_byte_identical_reports() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.19.0/list-json");
    let seed = testdata("seed-machine.txt");
    for rules in RULE_SETS {
        let (code, exported, _) = stdout_of(&["rules", "export", rules]);
        assert_eq!(code, 0);
        let file = write(dir.path(), &format!("{rules}.json"), &exported);
        for input in [&fleet, &seed] {
            let builtin = fsmlog()
                .args(["report", "-o", "json", "--rules", rules, arg(&input)])
                .output()
                .unwrap();
            let from_file = fsmlog()
                .args(["report", "-o", "json", "--rules", arg(&file), arg(&input)])
                .output()
                .unwrap();
            assert!(builtin.status.success());
            assert_eq!(builtin.stdout, from_file.stdout, "{rules}");
        }
    }
}

#[test]
fn rules_list_and_show() {
    let (code, list, _) = stdout_of(&["rules", "list"]);
    assert_eq!(code, 0);
    for rules in RULE_SETS {
        assert!(list.contains(rules), "{list}");
    }
    let (code, matrix, _) = stdout_of(&["rules", "show", "metal-api-v0.19.0"]);
    assert_eq!(code, 0);
    // Registering has no rule for Installing in v0.19.0: the matrix shows a dash there.
    let registering = matrix
        .lines()
        .find(|l| l.contains("│ Registering "))
        .unwrap();
    let cells: Vec<&str> = registering.split('┆').map(str::trim).collect();
    // Columns: state, then events in metal-api's order; Installing is the 8th event.
    assert_eq!(cells[8], "—", "{registering}");
    let (_, matrix, _) = stdout_of(&["rules", "show", "metal-api-v0.19.3"]);
    let registering = matrix
        .lines()
        .find(|l| l.contains("│ Registering "))
        .unwrap();
    let cells: Vec<&str> = registering.split('┆').map(str::trim).collect();
    assert_eq!(cells[8], "Installing", "{registering}");
}

#[test]
fn lint_names_each_mistake_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (_, exported, _) = stdout_of(&["rules", "export", "metal-api-v0.19.0"]);
    let good = write(dir.path(), "good.json", &exported);
    let (code, out, _) = stdout_of(&["rules", "lint", arg(&good)]);
    assert_eq!(code, 0);
    assert!(out.contains("ok (metal-api-v0.19.0)"));
    // Line 5 is the first transition row: make it name an unknown state, and repeat the
    // original row after it as line 6.
    let mut lines: Vec<String> = exported.lines().map(String::from).collect();
    let original = lines[4].clone();
    assert!(original.contains("\"Initial\"]"), "{original}");
    lines[4] = original.replace("\"Initial\"]", "\"Initia\"]");
    lines.insert(5, original);
    let bad = write(dir.path(), "bad.json", &lines.join("\n"));
    let (code, _, err) = stdout_of(&["rules", "lint", arg(&bad)]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("bad.json:5: unknown state \"Initia\""),
        "{err}"
    );
    assert!(
        err.contains("bad.json:6: duplicate pair (Planned Reboot, PXE Booting)"),
        "{err}"
    );
}

#[test]
fn import_go_reproduces_each_builtin() {
    let dir = tempfile::tempdir().unwrap();
    for rules in RULE_SETS {
        let go = write(dir.path(), "events.go", &events_go(rules));
        let out = dir.path().join("imported.json");
        let (code, _, err) = stdout_of(&[
            "rules",
            "import-go",
            arg(&go),
            "--like",
            rules,
            "--name",
            rules,
            "--out",
            arg(&out),
        ]);
        assert_eq!(code, 0, "{err}");
        let imported: Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let (_, exported, _) = stdout_of(&["rules", "export", rules]);
        let builtin: Value = serde_json::from_str(&exported).unwrap();
        assert_eq!(imported["transitions"], builtin["transitions"], "{rules}");
        assert_eq!(
            imported["buffered_phoned_home_seconds"],
            builtin["buffered_phoned_home_seconds"]
        );
    }
}

#[test]
fn import_go_rejects_a_file_of_another_shape() {
    let dir = tempfile::tempdir().unwrap();
    let go = write(dir.path(), "main.go", "package main\n\nfunc main() {}\n");
    let (code, _, err) = stdout_of(&["rules", "import-go", arg(&go)]);
    assert_eq!(code, 2);
    assert!(err.contains("no `func Events() fsm.Events {`"), "{err}");
}

// diff.

/// `fsmlog diff --old OLD --new NEW -o json PATH`: (exit code, output, stderr).
fn diff_json(old: &str, new: &str, path: &Path) -> (i32, Value, String) {
    run_json(&["diff", "--old", old, "--new", new, "-o", "json", arg(&path)])
}

#[test]
fn diff_v0_19_0_to_v0_19_3_only_fixes_registering_to_installing() {
    for fleet in FLEETS {
        let dir = testdata(&format!("{fleet}/describe-json"));
        let (code, diff, _) = diff_json("metal-api-v0.19.0", "metal-api-v0.19.3", &dir);
        assert_eq!(code, 0, "{fleet}");
        assert_eq!(diff["newly_unexpected"], serde_json::json!([]));
        let fixed = pairs(&diff["newly_expected"]);
        assert_eq!(fixed.len(), 1, "{fleet}: {fixed:?}");
        assert_eq!(
            (fixed[0].0.as_str(), fixed[0].1.as_str()),
            ("Registering", "Installing")
        );
    }
    // The seed machine has no Registering → Installing: nothing changes.
    let seed = testdata("seed-machine.txt");
    let (code, diff, _) = diff_json("metal-api-v0.19.0", "metal-api-v0.19.3", &seed);
    assert_eq!(code, 0);
    assert_eq!(diff["newly_expected"], serde_json::json!([]));
}

#[test]
fn diff_fails_on_regressions_unless_told_otherwise() {
    let dir = testdata("fleet-v0.19.0/describe-json");
    let args = |fail_on: &str| {
        fsmlog()
            .args([
                "diff",
                "--old",
                "metal-api-v0.19.3",
                "--new",
                "metal-api-v0.19.0",
                "--fail-on",
                fail_on,
                arg(&dir),
            ])
            .output()
            .unwrap()
            .status
            .code()
            .unwrap()
    };
    assert_eq!(args("newly-unexpected"), 1);
    assert_eq!(args("any"), 1);
    assert_eq!(args("never"), 0);
    // The raw stream under v0.19.3 → v0.42.2: buffered Phoned Home hides pairs, nothing new.
    let stream = testdata("fleet-v0.42.2/ndjson");
    let (code, diff, _) = diff_json("metal-api-v0.19.3", "metal-api-v0.42.2", &stream);
    assert_eq!(code, 0);
    let hidden = pairs(&diff["newly_expected"]);
    assert!(
        hidden
            .iter()
            .any(|p| p.0 == "Waiting" && p.1 == "Phoned Home"),
        "{hidden:?}"
    );
}

// check.

fn check(dir: &Path, extra: &[&str], inputs: &[&Path]) -> (i32, String, String) {
    let mut args = vec!["check".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    let output = fsmlog()
        .current_dir(dir)
        .env_remove("GITHUB_ACTIONS")
        .args(&args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// The v0.42.2 fleet plus a machine with a pair the fleet does not have.
fn fleet_with_new_pair(dir: &Path) -> PathBuf {
    write(
        dir,
        "new-pair.txt",
        "Mon, 22 Aug 2022 06:40:00 UTC   Installing    start installation\n\
         Mon, 22 Aug 2022 06:36:15 UTC   PXE Booting   machine sent extended dhcp request\n",
    )
}

#[test]
fn check_passes_against_its_own_baseline_and_fails_on_a_new_pair() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (code, _, err) = check(
        dir.path(),
        &["--write-baseline", "baseline.json"],
        &[&fleet],
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = check(dir.path(), &["--baseline", "baseline.json"], &[&fleet]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("passed"), "{out}");
    let extra = fleet_with_new_pair(dir.path());
    let (code, out, _) = check(
        dir.path(),
        &["--baseline", "baseline.json"],
        &[&fleet, &extra],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("new-unexpected-pair"), "{out}");
    assert!(out.contains("Installing"), "{out}");
}

#[test]
fn check_ceiling_on_machine_share() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.42.2/list-json");
    // 6 of 12 machines show Waiting / PXE Booting; 3 show Preparing / Preparing.
    write(
        dir.path(),
        "baseline.json",
        r#"{"rules": "metal-api-v0.42.2", "accepted": [
  {"state": "Waiting", "event": "PXE Booting", "max_machine_share": 0.4},
  {"state": "Preparing", "event": "Preparing", "max_machine_share": 0.25}
]}"#,
    );
    let (code, out, _) = check(
        dir.path(),
        &["--baseline", "baseline.json", "-o", "json"],
        &[&fleet],
    );
    assert_eq!(code, 1);
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result["passed"], false);
    let by_state = |state: &str| {
        result["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["state"] == state)
            .unwrap()
            .clone()
    };
    assert_eq!(by_state("Waiting")["violation"], "machine-share-ceiling");
    assert_eq!(by_state("Waiting")["machine_share"], 0.5);
    assert_eq!(by_state("Preparing")["violation"], Value::Null);
}

/// Writes the fleet's baseline, then checks the fleet plus a machine with a new pair.
fn check_new_pair_against_baseline(dir: &Path, output: &str) -> (i32, String, String) {
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (code, _, err) = check(dir, &["--write-baseline", "baseline.json"], &[&fleet]);
    assert_eq!(code, 0, "{err}");
    let extra = fleet_with_new_pair(dir);
    check(
        dir,
        &["--baseline", "baseline.json", "-o", output],
        &[&fleet, &extra],
    )
}

#[test]
fn check_junit_is_xml_with_a_failure_per_violation() {
    let dir = tempfile::tempdir().unwrap();
    let (code, xml, _) = check_new_pair_against_baseline(dir.path(), "junit");
    assert_eq!(code, 1);
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 3);
    let failed: Vec<_> = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
        .map(|c| c.attribute("name").unwrap())
        .collect();
    assert_eq!(failed, vec!["PXE Booting / Installing"]);
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("failures"), Some("1"));
    assert_eq!(suite.attribute("tests"), Some("3"));
}

/// The SARIF 2.1.0 schema, as the `serde-sarif` crate (a dev-dependency) ships it.
fn sarif_schema() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let metadata = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let metadata: Value = serde_json::from_slice(&metadata.stdout).unwrap();
    let manifest = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "serde-sarif")
        .expect("serde-sarif is a dev-dependency")["manifest_path"]
        .as_str()
        .unwrap()
        .to_string();
    let schema = Path::new(&manifest)
        .parent()
        .unwrap()
        .join("src/schema.json");
    let text = std::fs::read_to_string(schema).unwrap();
    // The published `language` patterns have a bare `]`, which ECMAScript regexes accept and
    // the validator's do not; escape it so the schema compiles (no field we write is affected).
    let bare = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
    assert!(text.contains(bare));
    let text = text.replace(bare, r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$""#);
    let schema: Value = serde_json::from_str(&text).unwrap();
    schema
}

#[test]
fn check_sarif_validates_and_marks_the_new_pair() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = check_new_pair_against_baseline(dir.path(), "sarif");
    assert_eq!(code, 1);
    let sarif: Value = serde_json::from_str(&out).unwrap();
    let schema = sarif_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let problems: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{problems:#?}");
    // The typed model of serde-sarif reads it too.
    let _: serde_sarif::sarif::Sarif = serde_json::from_value(sarif.clone()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let new: Vec<_> = results
        .iter()
        .filter(|r| r["baselineState"] == "new")
        .collect();
    assert_eq!(new.len(), 1);
    assert_eq!(
        new[0]["partialFingerprints"]["fsmlogPair/v1"],
        "pxe-booting/installing"
    );
    assert_eq!(new[0]["level"], "error");
    assert!(
        results
            .iter()
            .filter(|r| r["baselineState"] == "unchanged")
            .all(|r| r["level"] == "note")
    );
}

#[test]
fn github_actions_gets_annotations_for_the_violations() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.42.2/list-json");
    let output = fsmlog()
        .current_dir(dir.path())
        .env("GITHUB_ACTIONS", "true")
        .args(["check", arg(&fleet)])
        .output()
        .unwrap();
    // Without a baseline both pairs of the fleet are violations.
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    let annotations: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert_eq!(annotations.len(), 2, "{stderr}");
    assert!(
        annotations[0].contains("title=fsmlog%3A Preparing / Preparing::"),
        "{stderr}"
    );
}

#[test]
fn bad_baseline_is_a_usage_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "baseline.json",
        "{\"accepted\": [\n  {\"state\": \"Waiting\", \"event\": \"PXE Bootin\"}\n]}\n",
    );
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (code, _, err) = check(dir.path(), &["--baseline", "baseline.json"], &[&fleet]);
    assert_eq!(code, 2);
    assert!(
        err.contains("baseline.json:2: unknown event \"PXE Bootin\""),
        "{err}"
    );
}

#[test]
fn check_with_both_baselines_gates_against_the_given_one() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.42.2/list-json");
    write(dir.path(), "old.json", r#"{"rules": "r", "accepted": []}"#);
    let (code, _, _) = check(
        dir.path(),
        &["--baseline", "old.json", "--write-baseline", "new.json"],
        &[&fleet],
    );
    assert_eq!(code, 1, "the given baseline accepts nothing");
    assert!(dir.path().join("new.json").exists());
}

#[test]
fn a_gate_never_passes_on_nothing() {
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

// Item 2: `[]` is said, and no gate passes on it.

#[test]
fn an_empty_list_is_no_machine_and_no_gate_passes_on_it() {
    let dir = testdata("gate/empty-list");
    let (code, out, stderr) = run_json(&["check", "-o", "json", arg(&dir)]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(out["passed"], false);
    assert!(
        stderr.contains("fsmlog: note: ")
            && stderr.contains("machines.json:1: an empty array `[]`, read as a machine list that matched nothing: no machine"),
        "{stderr}"
    );
    assert!(stderr.contains("no machine was read"), "{stderr}");
    let (code, out, stderr) = run_json(&["issues", "-o", "json", "--all", arg(&dir)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["machines"], json!([]), "no machine named `machines`");
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&dir)]);
    assert_eq!(code, 0);
    assert_eq!(report["inputs"]["machines"], 0);
    assert_eq!(report["inputs"]["notes"][0]["line"], 1);
    let (code, _, _) = run_json(&["check", "-o", "json", "--allow-empty", arg(&dir)]);
    assert_eq!(code, 0);
}

#[test]
fn machines_without_a_single_event_give_a_gate_nothing_to_pass_on() {
    // A machine's empty log (named by its UUID) is a machine, but no gate passes on it.
    let empty = testdata("no-events/00000000-0000-4000-8000-00000000e0e0.json");
    let (_, report, stderr) = run_json(&["report", "-o", "json", arg(&empty)]);
    assert_eq!(report["inputs"]["machines"], 1);
    assert!(
        stderr.contains(
            "read as the log of machine 00000000-0000-4000-8000-00000000e0e0 without events"
        ),
        "{stderr}"
    );
    for gate in [
        vec!["check", "-o", "json"],
        vec![
            "diff",
            "--old",
            "metal-api-v0.19.0",
            "--new",
            "metal-api",
            "-o",
            "json",
        ],
        vec!["issues", "--fail-on", "minor", "-o", "json"],
    ] {
        let mut args = gate.clone();
        args.push(arg(&empty));
        let (code, _, stderr) = run_json(&args);
        assert_eq!(code, 2, "{gate:?}: {stderr}");
        assert!(
            stderr.contains("no event was read, so there is nothing to gate on"),
            "{stderr}"
        );
        args.insert(1, "--allow-empty");
        let (code, _, stderr) = run_json(&args);
        assert_ne!(code, 2, "{gate:?} --allow-empty: {stderr}");
    }
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
