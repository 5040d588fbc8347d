//! The audit on the bundled fleets and as input arrives: it agrees with `report` and with
//! metal-api's own issue rules, finds the one stuck machine worked out by hand, and judges an
//! earlier `--now` as the machines were then.
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::*;

fn with_issue(json: &Value, kind: &str) -> BTreeSet<String> {
    types_of(json)
        .into_iter()
        .filter(|(_, types)| types.iter().any(|t| t == kind))
        .map(|(m, _)| m)
        .collect()
}

fn ids(list: &Value) -> BTreeSet<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn on_the_fleets_issues_agree_with_report() {
    for fleet in FLEETS {
        let exports = describe_exports(fleet);
        let newest: BTreeMap<String, Option<String>> = exports
            .iter()
            .map(|m| {
                (
                    m["id"].as_str().unwrap().to_string(),
                    m["events"]["log"][0]["event"].as_str().map(String::from),
                )
            })
            .collect();
        for format in [
            "describe-json",
            "list-json",
            "v2-json",
            "container-dump",
            "text",
        ] {
            for rules in RULE_SETS {
                let input = testdata(&format!("{fleet}/{format}"));
                let input = arg(&input);
                let (_, report, _) = run_json(&["report", "-o", "json", "--rules", rules, input]);
                let (code, issues, stderr) =
                    run_json(&["issues", "-o", "json", "--rules", rules, input]);
                assert_eq!(code, 0, "{stderr}");
                let at = format!("{fleet}/{format} {rules}");
                assert_eq!(issues["inputs"], report["inputs"], "{at}");
                // report flags every machine whose replayed container has crash_loop set;
                // metal-api (and so `issues`) leaves out those whose newest stored event is
                // Waiting. `issues` judges the flag metal-api held (exported, where it is);
                // on these samples it is the replayed one, which this equality also shows.
                let flagged = ids(&report["machines"]["crash_loop"]);
                let waiting: BTreeSet<String> = flagged
                    .iter()
                    .filter(|m| newest[*m].as_deref() == Some("Waiting"))
                    .cloned()
                    .collect();
                let crashloop = with_issue(&issues, "crashloop");
                assert_eq!(
                    crashloop,
                    flagged.difference(&waiting).cloned().collect(),
                    "{at}"
                );
                // No sample machine is unallocated with Phoned Home newest, so the failed
                // reclaims are exactly the flagged ones.
                assert_eq!(
                    with_issue(&issues, "failed-machine-reclaim"),
                    ids(&report["machines"]["failed_machine_reclaim"]),
                    "{at}"
                );
                // Every unexpected occurrence report counts is in exactly one machine's issue.
                let mut summed: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
                for m in issues["machines"].as_array().unwrap() {
                    for i in m["issues"].as_array().unwrap() {
                        if i["type"] != "unexpected-transitions" {
                            continue;
                        }
                        for p in i["pairs"].as_array().unwrap() {
                            let key = (
                                p["state"].as_str().unwrap().to_string(),
                                p["event"].as_str().unwrap().to_string(),
                            );
                            let entry = summed.entry(key).or_default();
                            entry.0 += p["count"].as_u64().unwrap();
                            entry.1 += 1;
                        }
                    }
                }
                let summed: Vec<_> = summed
                    .into_iter()
                    .map(|((s, e), (count, machines))| (s, e, count, machines))
                    .collect();
                assert_eq!(summed, pairs(&report["unexpected"]), "{at}");
            }
        }
    }
}

#[test]
fn no_fleet_machine_is_stuck_under_its_own_rules() {
    for (fleet, rules) in [
        ("fleet-v0.19.0", "metal-api-v0.19.0"),
        ("fleet-v0.42.2", "metal-api-v0.42.2"),
    ] {
        for format in ["describe-json", "text", "logs-json", "ndjson", "event-api"] {
            let json = stuck(rules, &testdata(&format!("{fleet}/{format}")));
            assert_eq!(json["machines"], serde_json::json!([]), "{fleet}/{format}");
        }
    }
}

#[test]
fn the_one_stuck_machine_checked_by_hand() {
    // fleet-v0.19.0's 63c1eeb5, replayed under v0.42.2 from its text export:
    //   2025-09-24 15:27:16 Phoned Home                 → Phoned Home
    //   2025-09-25 12:18:48 PXE Booting                 → PXE Booting (stored)
    //   2025-09-25 12:22:31 Phoned Home in PXE Booting  → a self transition under v0.42.2, and
    //     3m43s after the last event: buffered, swallowed. The machine stays in PXE Booting.
    // A text export has no last_event_time, so its newest event is 12:22:31; the newest event
    // of the whole input (`now`) is 2025-09-27T12:49:12Z, two days later: stuck.
    // Under v0.19.0 the Phoned Home is unexpected in PXE Booting and stored, so the machine is
    // in Phoned Home; from a machine export, last_event_time 2025-09-27T12:47:22Z is recent.
    let json = stuck("metal-api-v0.42.2", &testdata("fleet-v0.19.0/text"));
    assert_eq!(json["now"], "2025-09-27T12:49:12Z");
    let machines = json["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 1, "{json}");
    let m = &machines[0];
    assert_eq!(m["machine"], "63c1eeb5-1996-429e-a05f-084a98869567");
    assert_eq!(m["state"], "PXE Booting");
    assert_eq!(m["last_event_time"], "2025-09-25T12:22:31Z");
    assert_eq!(m["allocated"], Value::Null);
    assert_eq!(
        m["issues"][0]["details"],
        "in PXE Booting for 2d without an event"
    );
    for (rules, format) in [
        ("metal-api-v0.19.0", "fleet-v0.19.0/text"),
        ("metal-api-v0.42.2", "fleet-v0.19.0/describe-json"),
    ] {
        let json = stuck(rules, &testdata(format));
        assert_eq!(json["machines"], serde_json::json!([]), "{format} {rules}");
    }
}

#[test]
fn the_audit_does_not_depend_on_how_the_input_arrives() {
    // The fleet as one list, as one file per machine, and the list on stdin beside nothing.
    let list = testdata("fleet-v0.42.2/list-json");
    let list_file = std::fs::read_dir(&list)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let describe = testdata("fleet-v0.42.2/describe-json");
    let args = |input: &str| {
        vec![
            "issues".to_string(),
            "-o".to_string(),
            "json".to_string(),
            "--all".to_string(),
            input.to_string(),
        ]
    };
    let run = |args: Vec<String>, stdin: Option<Vec<u8>>| -> Value {
        let mut cmd = fsmlog();
        cmd.args(&args);
        if let Some(bytes) = stdin {
            cmd.write_stdin(bytes);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let from_list = run(args(arg(&list_file)), None);
    let from_files = run(args(arg(&describe)), None);
    let from_stdin = run(args("-"), Some(std::fs::read(&list_file).unwrap()));
    assert_eq!(from_list["machines"].as_array().unwrap().len(), 12);
    // The bundled describe files were generated with places of their own, not the list's.
    let unplaced = |report: &Value| {
        let mut machines = report["machines"].clone();
        for m in machines.as_array_mut().unwrap() {
            for key in ["partition", "rack", "size", "hostname", "project"] {
                m.as_object_mut().unwrap().remove(key);
            }
        }
        machines
    };
    assert_eq!(unplaced(&from_files), unplaced(&from_list));
    assert_eq!(from_stdin["machines"], from_list["machines"]);
    assert_eq!(from_stdin["now"], from_list["now"]);
}

#[test]
fn an_earlier_now_judges_the_machines_as_they_were_then() {
    // 11:55: m-crash-preparing's last error (11:54) happened a minute before; its later
    // last_event_time (11:57) is not known yet. Nothing is judged on what came after.
    let (code, json, _) = issues_json(&["--all", "--now", "2025-09-22T11:55:00Z"]);
    assert_eq!(code, 0);
    let machines = json["machines"].as_array().unwrap();
    for m in machines {
        for issue in m["issues"].as_array().unwrap() {
            let details = issue["details"].as_str().unwrap();
            assert!(!details.contains(" -"), "no negative age: {details}");
        }
    }
    let m = machines
        .iter()
        .find(|m| m["machine"] == "m-crash-preparing")
        .unwrap();
    assert_eq!(m["last_event_time"], "2025-09-22T11:54:00Z");
    let error = m["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "last-event-error")
        .unwrap();
    assert_eq!(error["details"], "occurred 1m ago");
    // m-alive had not yet sent its Alive of 12:00: silent since 06:04. What its export says
    // (not allocated) describes 12:00, so the allocation is not known at 11:55: Unknown.
    assert_eq!(types_of(&json)["m-alive"], ["liveliness-unknown"]);
    let alive = machines.iter().find(|m| m["machine"] == "m-alive").unwrap();
    assert_eq!(alive["allocated"], Value::Null);
    // The input is still counted whole, as report counts it.
    let (_, report, _) = run_json(&["report", "-o", "json", &audit_file()]);
    assert_eq!(json["inputs"], report["inputs"]);
}

#[test]
fn what_an_export_said_gives_way_to_newer_events() {
    // A describe export: not allocated, Dead, waiting; then a pasted table of the same
    // machine going on to install and phone home (so it was allocated after all).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m-later.json"),
        r#"{"id": "m-later", "allocation": null, "liveliness": "Dead",
            "events": {"log": [
              {"time": "2025-09-22T06:04:00Z", "event": "Waiting", "message": "w"},
              {"time": "2025-09-22T06:03:00Z", "event": "Registering", "message": "r"}],
             "last_event_time": "2025-09-22T06:04:00Z", "last_error_event": null,
             "crash_loop": false, "failed_machine_reclaim": false}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("m-later.txt"),
        "TIME                           EVENT               MESSAGE
         Mon, 22 Sep 2025 11:58:00 UTC  Phoned Home         phoned home
         Mon, 22 Sep 2025 11:55:00 UTC  Booting New Kernel  b
         Mon, 22 Sep 2025 11:50:00 UTC  Installing          i
         Mon, 22 Sep 2025 06:04:00 UTC  Waiting             w
",
    )
    .unwrap();
    let (code, json, stderr) = run_json(&[
        "issues",
        "-o",
        "json",
        "--all",
        "--now",
        "2025-09-22T12:00:00Z",
        arg(&dir.path()),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let m = &json["machines"][0];
    assert_eq!(json["inputs"]["machines"], 1, "one machine, merged");
    assert_eq!(m["state"], "Phoned Home");
    // Neither the export's "not allocated" (so no failed reclaim) nor its Dead hold now:
    // the machine was heard two minutes ago.
    assert_eq!(m["allocated"], Value::Null);
    assert_eq!(m["issues"], serde_json::json!([]), "{m}");
}

#[test]
fn a_machine_not_heard_of_at_now_is_not_judged() {
    // Every machine of the fleet starts after 2025-09-01: as of then, there is none to judge,
    // and a gate has nothing to fail on.
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (code, json, _) = run_json(&[
        "issues",
        "-o",
        "json",
        "--all",
        "--fail-on",
        "minor",
        "--now",
        "2025-09-01T00:00:00Z",
        arg(&fleet),
    ]);
    assert_eq!(code, 0);
    assert_eq!(json["machines"], serde_json::json!([]));
    assert_eq!(json["inputs"]["machines"], 12, "still read and counted");
}
