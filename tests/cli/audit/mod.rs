//! Fleet audit: `issues` judges metal-api's own machine issues on the container the
//! export holds, plus the replay's own (`stuck`, `unexpected-transitions`), and agrees with
//! `report` wherever both count the same thing.

mod fleets;
mod list;
mod metal_api;

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
