//! Fleet audit (issue 11): `issues` judges metal-api's own machine issues on the container the
//! export holds, plus the replay's own (`stuck`, `unexpected-transitions`), and agrees with
//! `report` wherever both count the same thing.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

use super::*;

const AUDIT: &str = "audit/machines.json";

fn audit_file() -> String {
    testdata(AUDIT).to_str().unwrap().to_string()
}

/// machine → its issue types, as `issues -o json` lists them.
fn types_of(json: &Value) -> BTreeMap<String, Vec<String>> {
    json["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let types = m["issues"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["type"].as_str().unwrap().to_string())
                .collect();
            (m["machine"].as_str().unwrap().to_string(), types)
        })
        .collect()
}

fn issues_json(extra: &[&str]) -> (i32, Value, String) {
    let file = audit_file();
    let mut args = vec!["issues", "-o", "json"];
    args.extend_from_slice(extra);
    args.push(&file);
    run_json(&args)
}

fn expected(rows: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
    rows.iter()
        .map(|(m, types)| (m.to_string(), types.iter().map(|t| t.to_string()).collect()))
        .collect()
}

#[test]
fn hand_made_machines_have_the_issues_worked_out_by_hand() {
    // `now` is the newest event of the input: m-alive's last_event_time 2025-09-22T12:00:00Z.
    let (code, json, stderr) = issues_json(&["--all"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["now"], "2025-09-22T12:00:00Z");
    let want = expected(&[
        // Waiting, no flag, its last event is now: nothing to say.
        ("m-alive", &[]),
        // Allocated and silent for 3h: Unknown, not Dead; Installing for 3h is stuck.
        ("m-installing", &["liveliness-unknown", "stuck"]),
        // Unallocated and silent since the day before: Dead; the exported flag; reclaiming
        // for a day is stuck.
        (
            "m-reclaim-failed",
            &["failed-machine-reclaim", "liveliness-dead", "stuck"],
        ),
        // allocation null and the newest stored event is Phoned Home; heard 4 minutes ago.
        ("m-phoned-unallocated", &["failed-machine-reclaim"]),
        // The same log without an allocation field: the allocation is not known, no issue.
        ("m-phoned-unknown", &[]),
        // crash_loop set, but the newest stored event is Waiting (metal-api's exception).
        ("m-crash-waiting", &[]),
        // crash_loop set in Preparing; the last error 6 minutes ago; the recorded unexpected
        // Preparing in Preparing. Preparing for 3 minutes is not stuck yet.
        (
            "m-crash-preparing",
            &["crashloop", "last-event-error", "unexpected-transitions"],
        ),
        // The exported last error is an unexpected Alive outside the log, an hour ago.
        (
            "m-recent-error",
            &["last-event-error", "unexpected-transitions"],
        ),
        // The machine object came without an event container: metal-api judges nothing else.
        ("m-no-container", &["no-event-container"]),
    ]);
    // A machine's issues are listed worst first, then in the order of the issue table.
    assert_eq!(types_of(&json), want);
    let machine = |id: &str| -> Value {
        json["machines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["machine"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(machine("m-phoned-unallocated")["allocated"], false);
    assert_eq!(machine("m-phoned-unknown")["allocated"], Value::Null);
    assert_eq!(machine("m-installing")["allocated"], true);
    assert_eq!(machine("m-reclaim-failed")["state"], "Machine Reclaim");
    let issue = |id: &str, kind: &str| -> Value {
        machine(id)["issues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["type"] == kind)
            .unwrap()
            .clone()
    };
    assert_eq!(
        issue("m-crash-preparing", "last-event-error")["details"],
        "occurred 6m ago"
    );
    assert_eq!(
        issue("m-recent-error", "last-event-error")["details"],
        "occurred 1h ago"
    );
    assert_eq!(
        issue("m-installing", "stuck")["details"],
        "in Installing for 3h without an event"
    );
    let crash = issue("m-crash-preparing", "crashloop");
    assert_eq!(crash["severity"], "major");
    assert_eq!(
        crash["details"],
        "crash loop flag set; newest stored event Preparing"
    );
    assert_eq!(
        crash["description"],
        "machine is in a provisioning crash loop (⭕)"
    );
    assert_eq!(
        issue("m-phoned-unallocated", "failed-machine-reclaim")["severity"],
        "critical"
    );
    let unexpected = issue("m-recent-error", "unexpected-transitions");
    assert_eq!(unexpected["details"], "Alive in Planned Reboot ×1");
    assert_eq!(
        unexpected["pairs"],
        serde_json::json!([{"state": "Planned Reboot", "event": "Alive", "count": 1}])
    );
    // Worst first (the critical ones), then by id; the machines without issues last.
    let order: Vec<&str> = json["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["machine"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "m-phoned-unallocated",
            "m-reclaim-failed",
            "m-crash-preparing",
            "m-installing",
            "m-no-container",
            "m-recent-error",
            "m-alive",
            "m-crash-waiting",
            "m-phoned-unknown",
        ]
    );
    let counts = &json["counts"];
    assert_eq!(counts["failed-machine-reclaim"], 2);
    assert_eq!(counts["stuck"], 2);
    assert_eq!(counts["crashloop"], 1);
    assert!(counts.get("liveliness-unknown").is_some());
    assert!(counts.get("liveliness-not-available").is_none());
    assert_eq!(json["inputs"]["machines"], 9);
}

#[test]
fn without_all_only_machines_with_issues_are_listed() {
    let (_, json, _) = issues_json(&[]);
    let listed = types_of(&json);
    assert_eq!(listed.len(), 6);
    assert!(listed.values().all(|types| !types.is_empty()));
}

#[test]
fn liveliness_turns_after_exactly_five_minutes() {
    // m-alive last heard at 12:00:00 and is not allocated; m-installing is allocated.
    let at = |now: &str| {
        let (_, json, _) = issues_json(&["--all", "--now", now, "--only", "liveliness-dead"]);
        types_of(&json)["m-alive"].clone()
    };
    assert!(
        at("2025-09-22T12:05:00Z").is_empty(),
        "5 minutes is still alive"
    );
    assert_eq!(at("2025-09-22T12:05:00.001Z"), ["liveliness-dead"]);
}

#[test]
fn last_error_threshold_is_strict_and_zero_turns_it_off() {
    // m-crash-preparing's last error is at 11:54:00, six minutes before now.
    let types = |threshold: &str| {
        let (_, json, _) = issues_json(&[
            "--all",
            "--only",
            "last-event-error",
            "--last-error-threshold",
            threshold,
        ]);
        types_of(&json)["m-crash-preparing"].clone()
    };
    assert!(
        types("6m").is_empty(),
        "exactly the threshold is old enough"
    );
    assert_eq!(types("6m1s"), ["last-event-error"]);
    assert_eq!(types("7d"), ["last-event-error"]);
    assert!(types("0").is_empty());
}

#[test]
fn stuck_after_is_strict() {
    // m-installing's newest event is at 08:59:59.
    let types = |now: &str| {
        let (_, json, _) = issues_json(&["--all", "--only", "stuck", "--now", now]);
        types_of(&json)["m-installing"].clone()
    };
    assert!(types("2025-09-22T09:59:59Z").is_empty());
    assert_eq!(types("2025-09-22T10:00:00Z"), ["stuck"]);
    let (_, json, _) = issues_json(&["--only", "stuck", "--stuck-after", "4h"]);
    assert_eq!(
        types_of(&json).keys().collect::<Vec<_>>(),
        ["m-reclaim-failed"]
    );
}

#[test]
fn filters_as_metal_api_has_them() {
    let (_, json, _) = issues_json(&["--only", "crashloop", "--only", "stuck", "--omit", "stuck"]);
    assert_eq!(
        types_of(&json),
        expected(&[("m-crash-preparing", &["crashloop"])])
    );
    let (_, json, _) = issues_json(&["--severity", "major"]);
    for (machine, types) in types_of(&json) {
        for t in types {
            assert!(
                ![
                    "last-event-error",
                    "unexpected-transitions",
                    "liveliness-not-available"
                ]
                .contains(&t.as_str()),
                "{machine}: {t} is minor"
            );
        }
    }
    let (_, json, _) = issues_json(&["--severity", "critical"]);
    assert_eq!(
        types_of(&json),
        expected(&[
            ("m-phoned-unallocated", &["failed-machine-reclaim"]),
            ("m-reclaim-failed", &["failed-machine-reclaim"]),
        ])
    );
    // The counts are of what is shown.
    assert_eq!(
        json["counts"],
        serde_json::json!({"failed-machine-reclaim": 2})
    );
}

#[test]
fn fail_on_is_a_gate() {
    let (code, _, _) = issues_json(&["--fail-on", "critical"]);
    assert_eq!(code, 1);
    let (code, _, _) = issues_json(&["--fail-on", "critical", "--omit", "failed-machine-reclaim"]);
    assert_eq!(code, 0);
    let (code, _, _) = issues_json(&["--fail-on", "major", "--only", "last-event-error"]);
    assert_eq!(code, 0);
    let (code, _, _) = issues_json(&["--fail-on", "minor", "--only", "last-event-error"]);
    assert_eq!(code, 1);
    // Without --fail-on, issues never fail the run.
    let (code, _, _) = issues_json(&[]);
    assert_eq!(code, 0);
}

#[test]
fn a_gate_on_nothing_or_on_bad_input_is_not_passed() {
    let dir = tempfile::tempdir().unwrap();
    // An empty directory: no machine at all (an empty `[]` would be one machine's empty log).
    let empty = dir.path().join("exports");
    std::fs::create_dir(&empty).unwrap();
    let empty = arg(&empty);
    let (code, _, stderr) = stdout_of(&["issues", "--fail-on", "major", empty]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, _) = stdout_of(&["issues", "--fail-on", "major", "--allow-empty", empty]);
    assert_eq!(code, 0);
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "[{\"id\": \"x\", \"events\": {\"log\": [{\"time\": 3}]}}",
    )
    .unwrap();
    let (code, _, stderr) = stdout_of(&["issues", arg(&bad), &audit_file()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("bad.json"), "{stderr}");
}

#[test]
fn now_is_the_wall_clock_on_request() {
    let before = Utc::now();
    let (_, json, _) = issues_json(&["--now", "now", "--only", "liveliness-dead"]);
    let now: DateTime<Utc> = json["now"].as_str().unwrap().parse().unwrap();
    assert!(now >= before - TimeDelta::seconds(1) && now <= Utc::now());
    // Years after the export, every unallocated machine that has a last event is dead.
    let dead: BTreeSet<String> = types_of(&json).into_keys().collect();
    for m in ["m-alive", "m-phoned-unallocated", "m-crash-waiting"] {
        assert!(dead.contains(m), "{m}");
    }
    assert!(
        !dead.contains("m-installing"),
        "allocated machines are unknown, not dead"
    );
}

#[test]
fn text_outputs_list_every_issue() {
    for format in ["table", "markdown", "csv"] {
        let (code, out, _) = stdout_of(&["issues", "-o", format, &audit_file()]);
        assert_eq!(code, 0);
        for id in ["m-phoned-unallocated", "m-reclaim-failed", "m-no-container"] {
            assert!(out.contains(id), "{format}: {id}\n{out}");
        }
        assert!(out.contains("failed-machine-reclaim"), "{format}");
        assert!(
            !out.contains("m-phoned-unknown"),
            "{format}: no issue, not listed"
        );
    }
    let (_, csv, _) = stdout_of(&["issues", "-o", "csv", &audit_file()]);
    // A header and one row per issue: 1 + 3 + 3 + 2 + 1 + 2 issues of six machines.
    assert_eq!(csv.lines().count(), 1 + 12, "{csv}");
    // A machine without issues (--all) has empty cells, not a made-up issue type.
    let (_, csv, _) = stdout_of(&["issues", "-o", "csv", "--all", &audit_file()]);
    let healthy = csv.lines().find(|l| l.starts_with("m-alive,")).unwrap();
    assert!(healthy.ends_with(",,,"), "{healthy}");
}

/// What metal-api would say of an exported machine: computed here from the describe export's
/// fields, without fsmlog.
fn metal_api_issues(m: &Value, now: DateTime<Utc>) -> Vec<&'static str> {
    let time = |v: &Value| v.as_str().map(|s| s.parse::<DateTime<Utc>>().unwrap());
    let events = &m["events"];
    let newest = events["log"][0]["event"].as_str();
    let mut types = Vec::new();
    match m["liveliness"].as_str() {
        Some("Alive") => {}
        Some("Dead") => types.push("liveliness-dead"),
        Some("Unknown") => types.push("liveliness-unknown"),
        _ => types.push("liveliness-not-available"),
    }
    let unallocated_phoned_home =
        m.get("allocation").is_some_and(Value::is_null) && newest == Some("Phoned Home");
    if events["failed_machine_reclaim"] == true || unallocated_phoned_home {
        types.push("failed-machine-reclaim");
    }
    if events["crash_loop"] == true && newest != Some("Waiting") {
        types.push("crashloop");
    }
    if let Some(at) = time(&events["last_error_event"]["time"])
        && now - at < TimeDelta::days(7)
    {
        types.push("last-event-error");
    }
    types
}

fn describe_exports(fleet: &str) -> Vec<Value> {
    let dir = testdata(&format!("{fleet}/describe-json"));
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect()
}

/// The newest time anywhere in the exports: the audit's default `now`.
fn newest_time(exports: &[Value]) -> DateTime<Utc> {
    let mut newest = DateTime::<Utc>::MIN_UTC;
    for m in exports {
        let events = &m["events"];
        let times = events["log"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["time"])
            .chain([
                &events["last_event_time"],
                &events["last_error_event"]["time"],
            ]);
        for t in times.filter_map(Value::as_str) {
            newest = newest.max(t.parse().unwrap());
        }
    }
    newest
}

const METAL_API_TYPES: [&str; 6] = [
    "liveliness-dead",
    "liveliness-unknown",
    "liveliness-not-available",
    "failed-machine-reclaim",
    "crashloop",
    "last-event-error",
];

#[test]
fn on_the_fleets_metal_apis_own_issues_are_those_of_the_exported_container() {
    for fleet in FLEETS {
        let exports = describe_exports(fleet);
        let now = newest_time(&exports);
        let mut want: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for m in &exports {
            let types = metal_api_issues(m, now);
            if !types.is_empty() {
                let id = m["id"].as_str().unwrap().to_string();
                want.insert(id, types.iter().map(|t| t.to_string()).collect());
            }
        }
        if fleet == "fleet-v0.19.0" {
            // The oracle is not vacuous: 63c1eeb5 is in a crash loop outside Waiting.
            assert!(want.values().any(|t| t.iter().any(|t| t == "crashloop")));
        }
        // Every machine export carries the whole container; under any rule set the answer is
        // the export's, because a replay under other rules finds errors metal-api never held.
        for format in ["describe-json", "list-json", "v2-json", "container-dump"] {
            for rules in RULE_SETS {
                let input = testdata(&format!("{fleet}/{format}"));
                let mut args = vec!["issues", "-o", "json", "--rules", rules];
                for t in METAL_API_TYPES {
                    args.extend(["--only", t]);
                }
                args.push(arg(&input));
                let (code, json, stderr) = run_json(&args);
                assert_eq!(code, 0, "{stderr}");
                let judged: DateTime<Utc> = json["now"].as_str().unwrap().parse().unwrap();
                assert_eq!(judged, now, "{fleet}/{format}");
                assert_eq!(types_of(&json), want, "{fleet}/{format} {rules}");
            }
        }
    }
}

fn ids(list: &Value) -> BTreeSet<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn with_issue(json: &Value, kind: &str) -> BTreeSet<String> {
    types_of(json)
        .into_iter()
        .filter(|(_, types)| types.iter().any(|t| t == kind))
        .map(|(m, _)| m)
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

/// The machines `issues --only stuck` lists under `rules`.
fn stuck(rules: &str, input: &std::path::Path) -> Value {
    let (_, json, _) = run_json(&[
        "issues",
        "-o",
        "json",
        "--only",
        "stuck",
        "--rules",
        rules,
        arg(&input),
    ]);
    json
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
    assert_eq!(from_files["machines"], from_list["machines"]);
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
