//! `report` and `replay` on the sample fleets: the pairs, the disagreements, the container.

use serde_json::Value;

use super::*;

// The report that started the project.

#[test]
fn seed_machine_has_one_pair_under_every_rule_set() {
    for rules in RULE_SETS {
        let seed = testdata("seed-machine.txt");
        let (code, report, _) = run_json(&["report", "-o", "json", "--rules", rules, arg(&seed)]);
        assert_eq!(code, 0, "{rules}");
        assert_eq!(
            pairs(&report["unexpected"]),
            vec![("Waiting".into(), "PXE Booting".into(), 3, 1)],
            "{rules}"
        );
        assert_eq!(report["disagreements"], serde_json::json!([]), "{rules}");
        assert_eq!(report["inputs"]["events"], 10);
        assert_eq!(
            report["unexpected"][0]["first_seen"],
            "2022-08-22T04:50:05Z"
        );
        assert_eq!(report["unexpected"][0]["last_seen"], "2022-08-22T06:36:15Z");
        assert_eq!(
            report["unexpected"][0]["examples"],
            serde_json::json!(["seed-machine"])
        );
    }
}

// The sample fleets, per format, against their expected.json.

fn check_fleet_format(fleet: &str, format: &str) {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(testdata(&format!("{fleet}/expected.json"))).unwrap(),
    )
    .unwrap();
    let recorded_with = expected["recorded_with"].as_str().unwrap();
    let dir = testdata(&format!("{fleet}/{format}"));
    for rules in RULE_SETS {
        let (code, report, stderr) =
            run_json(&["report", "-o", "json", "--rules", rules, arg(&dir)]);
        assert_eq!(code, 0, "{fleet} {format} {rules}: {stderr}");
        assert_eq!(
            pairs(&report["unexpected"]),
            pairs(&expected["report_unexpected"][format][rules]),
            "{fleet} {format} {rules}"
        );
        if rules == recorded_with {
            assert_eq!(
                report["disagreements"],
                serde_json::json!([]),
                "{fleet} {format} under its own rules"
            );
        }
    }
}

#[test]
fn fleets_as_logs_json() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "logs-json");
    }
}

#[test]
fn fleets_as_describe_json() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "describe-json");
    }
}

#[test]
fn fleets_as_list_json() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "list-json");
    }
}

#[test]
fn fleets_as_event_api() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "event-api");
    }
}

#[test]
fn fleets_as_text_tables() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "text");
    }
}

#[test]
fn fleets_as_markdown_tables() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "markdown");
    }
}

#[test]
fn fleets_as_concatenated_tables() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "concat-text");
    }
}

#[test]
fn fleets_as_container_dumps() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "container-dump");
    }
}

#[test]
fn fleets_as_v2_json() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "v2-json");
    }
}

#[test]
fn fleets_as_raw_event_streams() {
    for fleet in FLEETS {
        check_fleet_format(fleet, "ndjson");
    }
}

#[test]
fn replaying_under_newer_rules_shows_the_disagreement() {
    // Recorded under v0.19.0, Registering → Installing was unexpected; v0.19.3 allows it.
    let dir = testdata("fleet-v0.19.0/describe-json");
    let (_, report, _) = run_json(&[
        "report",
        "-o",
        "json",
        "--rules",
        "metal-api-v0.19.3",
        arg(&dir),
    ]);
    let disagreements = report["disagreements"].as_array().unwrap();
    assert!(
        disagreements.iter().any(|d| d["event"] == "Installing"
            && d["recorded_state"] == "Registering"
            && d["replayed_state"].is_null()
            && d["count"] == 3),
        "{disagreements:?}"
    );
}

// replay reproduces what metal-api stored.

#[test]
fn replay_of_describe_json_reproduces_the_exported_container() {
    for (fleet, rules) in [
        ("fleet-v0.19.0", "metal-api-v0.19.0"),
        ("fleet-v0.42.2", "metal-api-v0.42.2"),
    ] {
        let dir = testdata(&format!("{fleet}/describe-json"));
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let exported: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let (code, out, _) = run_json(&["replay", "-o", "json", "--rules", rules, arg(&path)]);
            assert_eq!(code, 0);
            let machine = &out["machines"][0];
            assert_eq!(machine["machine"], exported["id"]);
            let container = &machine["container"];
            let log = exported["events"]["log"].as_array().unwrap();
            let events = container["events"].as_array().unwrap();
            assert_eq!(events.len(), log.len(), "{}", path.display());
            for (got, want) in events.iter().zip(log) {
                assert_eq!(got["event"], want["event"], "{}", path.display());
                assert_eq!(got["message"], want["message"], "{}", path.display());
                assert_eq!(got["time"], want["time"], "{}", path.display());
            }
            assert_eq!(container["crash_loop"], exported["events"]["crash_loop"]);
            let last_error = &exported["events"]["last_error_event"];
            if !last_error.is_null() {
                assert_eq!(
                    container["last_error_event"]["message"],
                    last_error["message"]
                );
            }
        }
    }
}

#[test]
fn replay_steps_are_oldest_first_with_verdicts() {
    let seed = testdata("seed-machine.txt");
    let (code, out, _) = run_json(&["replay", "-o", "json", arg(&seed)]);
    assert_eq!(code, 0);
    assert_eq!(out["rules"], "metal-api-v0.42.2");
    let steps = out["machines"][0]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 10);
    assert_eq!(steps[0]["time"], "2022-08-22T04:44:20Z");
    assert_eq!(steps[0]["from"], "Initial");
    assert_eq!(steps[1]["event"], "PXE Booting");
    assert_eq!(steps[1]["from"], "Waiting");
    assert_eq!(steps[1]["verdict"], "unexpected");
    assert_eq!(steps[1]["to"], "PXE Booting");
    assert_eq!(steps[1]["stored"], true);
    assert_eq!(steps[1]["recorded_state"], "Waiting");
    assert_eq!(steps[1]["message"], "machine sent extended dhcp request");
    assert_eq!(steps[2]["recorded_state"], Value::Null);
}

#[test]
fn replay_ndjson_is_one_machine_per_line() {
    let dir = testdata("fleet-v0.42.2/list-json");
    let output = fsmlog()
        .args(["replay", "-o", "ndjson", arg(&dir)])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let machines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(machines.len(), 12);
    assert!(
        machines
            .iter()
            .all(|m| m["steps"].is_array() && m["container"].is_object())
    );
}

// Item 9: the smaller ones.

#[test]
fn a_pair_seen_only_as_a_last_error_says_so() {
    let file = testdata("odd-exports/00000000-0000-4000-8000-00000000a1e5.json");
    let (_, out, _) = stdout_of(&["explain", arg(&file)]);
    assert!(
        out.contains("every occurrence is an exported last error event, not a row of the log"),
        "{out}"
    );
    assert!(!out.contains("of 0 occurrences in a log"), "{out}");
    assert!(
        !out.contains("no occurrence has a stored event before it"),
        "{out}"
    );
}

#[test]
fn every_command_s_help_ends_with_examples() {
    for command in [
        vec!["man"],
        vec!["rules", "list"],
        vec!["rules", "show"],
        vec!["rules", "export"],
        vec!["rules", "lint"],
        vec!["rules", "import-go"],
        vec!["rules", "propose"],
    ] {
        let mut args = command.clone();
        args.push("--help");
        let (code, out, _) = stdout_of(&args);
        assert_eq!(code, 0);
        let examples = out
            .rfind("Examples:\n")
            .unwrap_or_else(|| panic!("{command:?}: {out}"));
        let first = out[examples..].lines().nth(1).unwrap();
        assert!(
            first.trim_start().starts_with("fsmlog "),
            "{command:?}: {first}"
        );
    }
}
