//! `-o openmetrics`: every output passes promtool (the classic text parser, which
//! node_exporter's textfile collector and the Pushgateway use too) and Prometheus' OpenMetrics
//! parser; its values are the JSON's of the same run; `issues` writes metal-metrics-exporter's
//! families by their names, labels and help texts; `--out` writes atomically.

mod alerts;
mod labels;
mod out;
mod partitions;
mod textfile;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use serde_json::Value;

use super::*;

/// One sample: its family's name, its labels, its value.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Reads an exposition back, checking its shape on the way: `# TYPE` then `# HELP` before a
/// family's samples, no blank line, `# EOF` last. Label values are unescaped as the format
/// says (`\\`, `\"`, `\n`).
fn parse(text: &str) -> (Vec<Sample>, BTreeMap<String, String>) {
    assert!(text.ends_with("# EOF\n"), "{text}");
    let mut samples = Vec::new();
    let mut help = BTreeMap::new();
    let mut typed = None::<String>;
    for line in text.lines() {
        assert!(!line.is_empty(), "a blank line: {text}");
        if line == "# EOF" {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert_eq!(kind, "gauge", "{line}");
            typed = Some(name.to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, text) = rest.split_once(' ').unwrap();
            assert_eq!(typed.as_deref(), Some(name), "HELP after its TYPE: {line}");
            assert!(!text.contains('"'), "{line}");
            help.insert(name.to_string(), text.to_string());
            continue;
        }
        assert!(!line.starts_with('#'), "{line}");
        let (name, rest) = match line.find(['{', ' ']) {
            Some(i) => line.split_at(i),
            None => panic!("{line}"),
        };
        assert_eq!(
            typed.as_deref(),
            Some(name),
            "a sample of its family: {line}"
        );
        assert!(help.contains_key(name), "{line}");
        let mut labels = BTreeMap::new();
        let mut chars = rest.chars().peekable();
        if chars.peek() == Some(&'{') {
            chars.next();
            loop {
                let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
                assert_eq!(chars.next(), Some('"'), "{line}");
                let mut value = String::new();
                loop {
                    match chars.next().unwrap() {
                        '\\' => match chars.next().unwrap() {
                            '\\' => value.push('\\'),
                            '"' => value.push('"'),
                            'n' => value.push('\n'),
                            other => panic!("an escape the format has not: \\{other} in {line}"),
                        },
                        '"' => break,
                        c => {
                            assert!(!c.is_control(), "a raw control in {line:?}");
                            value.push(c)
                        }
                    }
                }
                labels.insert(key, value);
                match chars.next() {
                    Some(',') => continue,
                    Some('}') => break,
                    other => panic!("{other:?} in {line}"),
                }
            }
        }
        let value: String = chars.collect();
        let value = value.strip_prefix(' ').unwrap_or_else(|| panic!("{line}"));
        samples.push(Sample {
            name: name.to_string(),
            labels,
            value: value.parse().unwrap_or_else(|_| panic!("{line}")),
        });
    }
    (samples, help)
}

fn of<'s>(samples: &'s [Sample], name: &str) -> Vec<&'s Sample> {
    samples.iter().filter(|s| s.name == name).collect()
}

fn one(samples: &[Sample], name: &str) -> f64 {
    let found = of(samples, name);
    assert_eq!(found.len(), 1, "{name}: {found:?}");
    found[0].value
}

fn label<'s>(s: &'s Sample, key: &str) -> &'s str {
    s.labels
        .get(key)
        .unwrap_or_else(|| panic!("{key} in {s:?}"))
}

/// Runs promtool's checks on an exposition: `check metrics` (the classic parser, rc 0 means
/// neither parse errors nor lint problems), and the OpenMetrics parser of `tsdb
/// create-blocks-from openmetrics` on a copy with a timestamp on every sample, which that
/// command needs.
fn promtool_accepts(text: &str, what: &str) {
    let mut child = Process::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() || only_the_exporters_label_names(&said),
        "promtool check metrics, {what}: {said}\n{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let stamped: String = text
        .lines()
        .map(|l| {
            if l.starts_with('#') {
                format!("{l}\n")
            } else {
                format!("{l} 1758515622\n")
            }
        })
        .collect();
    let file = dir.path().join("om.txt");
    std::fs::write(&file, stamped).unwrap();
    let out = Process::new("promtool")
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&file)
        .arg(dir.path().join("blocks"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "OpenMetrics parser, {what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether all promtool said is its lint of the camelCase label names metal-metrics-exporter
/// gives `metal_machine_allocation_info` (`clusterTag`, `primaryASN`, `imageId`): names an
/// alert joins on, so fsmlog writes them as the exporter does. promtool fails its check
/// on a lint problem as on a parse error; a parse error reads "error while linting".
fn only_the_exporters_label_names(said: &str) -> bool {
    let lint = "metal_machine_allocation_info label names should be written in 'snake_case' not 'camelCase'";
    said.lines().any(|l| l == lint) && said.lines().all(|l| l.is_empty() || l == lint)
}

/// Every input the checks run on: the fleets in two shapes, the seed, the damaged and
/// hostile ones.
fn inputs() -> Vec<PathBuf> {
    [
        "fleet-v0.42.2/list-json",
        "fleet-v0.19.0/describe-json",
        "fleet-v0.19.0/ndjson",
        "seed-machine.txt",
        "damaged",
        "odd-exports",
        "no-events",
        "merging",
        "gate",
        "hostile-names",
        "metrics/hostile.json",
    ]
    .iter()
    .map(|p| testdata(p))
    .collect()
}

#[test]
fn promtool_accepts_every_output_on_every_input() {
    if !have_promtool() {
        return;
    }
    for input in inputs() {
        for command in ["report", "check", "issues"] {
            let (code, text, stderr) = stdout_of(&[command, "-o", "openmetrics", arg(&input)]);
            assert!((0..=2).contains(&code), "{stderr}");
            promtool_accepts(&text, &format!("{command} {}", input.display()));
        }
    }
}

#[test]
fn report_metrics_are_the_reports_json() {
    for input in inputs() {
        for rules in RULE_SETS {
            let (_, text, _) =
                stdout_of(&["report", "-o", "openmetrics", "--rules", rules, arg(&input)]);
            let (_, json, _) = run_json(&["report", "-o", "json", "--rules", rules, arg(&input)]);
            let (samples, _) = parse(&text);
            let what = format!("{} under {rules}", input.display());
            let inputs = &json["inputs"];
            assert_eq!(
                one(&samples, "fsmlog_machines"),
                inputs["machines"].as_f64().unwrap(),
                "{what}"
            );
            assert_eq!(
                one(&samples, "fsmlog_input_errors"),
                inputs["errors"].as_array().unwrap().len() as f64
            );
            let events: BTreeMap<&str, f64> = of(&samples, "fsmlog_events")
                .into_iter()
                .map(|s| (label(s, "outcome"), s.value))
                .collect();
            let unknown: f64 = inputs["unknown_events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| u["count"].as_f64().unwrap())
                .sum();
            assert_eq!(events["replayed"], inputs["replayed"].as_f64().unwrap());
            assert_eq!(events["rejected"], inputs["rejected"].as_f64().unwrap());
            assert_eq!(events["duplicate"], inputs["duplicates"].as_f64().unwrap());
            assert_eq!(events["unknown"], unknown);
            assert_eq!(
                events.values().sum::<f64>(),
                inputs["events"].as_f64().unwrap(),
                "every event read is one outcome: {what}"
            );
            let newest = json["window"]["now"].as_str().map(|t| {
                chrono::DateTime::parse_from_rfc3339(t)
                    .unwrap()
                    .timestamp_millis() as f64
                    / 1000.0
            });
            let found: Vec<f64> = of(&samples, "fsmlog_newest_event_timestamp_seconds")
                .iter()
                .map(|s| s.value)
                .collect();
            assert_eq!(found, newest.into_iter().collect::<Vec<_>>(), "{what}");
            let unexpected = json["unexpected"].as_array().unwrap();
            for (family, key) in [
                ("fsmlog_unexpected_transitions", "count"),
                ("fsmlog_unexpected_machines", "machines"),
                ("fsmlog_unexpected_cascades", "cascades"),
            ] {
                let mut got: Vec<(String, String, f64)> = of(&samples, family)
                    .into_iter()
                    .map(|s| {
                        (
                            label(s, "state").to_string(),
                            label(s, "event").to_string(),
                            s.value,
                        )
                    })
                    .collect();
                let mut want: Vec<(String, String, f64)> = unexpected
                    .iter()
                    .map(|p| {
                        (
                            p["state"].as_str().unwrap().to_string(),
                            p["event"].as_str().unwrap().to_string(),
                            p[key].as_f64().unwrap(),
                        )
                    })
                    .collect();
                got.sort_by(|a, b| a.partial_cmp(b).unwrap());
                want.sort_by(|a, b| a.partial_cmp(b).unwrap());
                assert_eq!(got, want, "{family} of {what}");
            }
            for p in unexpected {
                let v = &p["verdict"];
                let info: Vec<&Sample> = of(&samples, "fsmlog_unexpected_verdict_info")
                    .into_iter()
                    .filter(|s| label(s, "state") == p["state"] && label(s, "event") == p["event"])
                    .collect();
                assert_eq!(info.len(), 1, "{what}");
                assert_eq!(label(info[0], "kind"), v["kind"]);
                assert_eq!(label(info[0], "action"), v["action"]);
                assert_eq!(
                    label(info[0], "component"),
                    v["component"].as_str().unwrap_or("")
                );
            }
        }
    }
}

#[test]
fn check_metrics_are_the_gates_json() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.42.2/list-json");
    let baseline = dir.path().join("baseline.json");
    let (code, _, _) = stdout_of(&["check", arg(&fleet), "--write-baseline", arg(&baseline)]);
    assert_eq!(code, 0);
    // One pair dropped from the baseline: it fails the gate.
    let mut b: Value = serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    b["accepted"].as_array_mut().unwrap().remove(0);
    let narrower = dir.path().join("narrower.json");
    std::fs::write(&narrower, b.to_string()).unwrap();
    for (base, passes) in [(&baseline, true), (&narrower, false)] {
        let args = ["check", arg(&fleet), "--baseline", arg(base)];
        let (code, text, _) = stdout_of(&[&args[..], &["-o", "openmetrics"]].concat());
        assert_eq!(code, if passes { 0 } else { 1 });
        let (_, json, _) = run_json(&[&args[..], &["-o", "json"]].concat());
        let (samples, _) = parse(&text);
        assert_eq!(
            one(&samples, "fsmlog_gate_passed"),
            f64::from(u8::from(passes))
        );
        assert_eq!(json["passed"], passes);
        let mut got: Vec<(String, String, String)> = of(&samples, "fsmlog_gate_violations")
            .into_iter()
            .map(|s| {
                assert_eq!(s.value, 1.0);
                (
                    label(s, "state").into(),
                    label(s, "event").into(),
                    label(s, "violation").into(),
                )
            })
            .collect();
        let mut want: Vec<(String, String, String)> = json["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| !p["violation"].is_null())
            .map(|p| {
                (
                    p["state"].as_str().unwrap().into(),
                    p["event"].as_str().unwrap().into(),
                    p["violation"].as_str().unwrap().into(),
                )
            })
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(got.is_empty(), passes);
        // Only the gate's own families: the fleet's are report's (a textfile directory with
        // both files would repeat them, and node_exporter refuses repeated series).
        let names: std::collections::BTreeSet<&str> =
            samples.iter().map(|s| s.name.as_str()).collect();
        assert!(
            names.iter().all(|n| n.starts_with("fsmlog_gate_")),
            "{names:?}"
        );
    }
}

#[test]
fn issues_are_metal_metrics_exporters_families() {
    for input in inputs() {
        let (_, text, _) = stdout_of(&["issues", "-o", "openmetrics", arg(&input)]);
        // The metrics judge last errors as metal-metrics-exporter asks metal-api to: 1h.
        let (_, json, _) = run_json(&[
            "issues",
            "-o",
            "json",
            "--all",
            "--last-error-threshold",
            "1h",
            arg(&input),
        ]);
        let (samples, help) = parse(&text);
        // The exporter's names, help texts and label names (metal-metrics-exporter v0.3.1).
        // The allocation family only where a machine object was read (as the exporter's
        // client library leaves out a family without samples).
        let mut families = vec!["metal_machine_issues", "metal_machine_issues_info"];
        if text.contains("metal_machine_allocation_info{") {
            families.insert(0, "metal_machine_allocation_info");
        }
        assert_eq!(
            help.keys().collect::<Vec<_>>(),
            families,
            "{}",
            input.display()
        );
        assert_eq!(
            help["metal_machine_issues"],
            "Provide information on machine issues"
        );
        assert_eq!(
            help["metal_machine_issues_info"],
            "Provide general information on issues that are evaluated by the metal-api"
        );
        for s in &samples {
            let keys: Vec<&str> = s.labels.keys().map(String::as_str).collect();
            match s.name.as_str() {
                "metal_machine_issues" => assert_eq!(keys, ["issueid", "machineid"]),
                "metal_machine_allocation_info" => assert_eq!(
                    keys,
                    [
                        "clusterTag",
                        "imageId",
                        "machineid",
                        "machinename",
                        "partition",
                        "primaryASN",
                        "role",
                        "state"
                    ]
                ),
                _ => assert_eq!(keys, ["description", "issueid", "refurl", "severity"]),
            }
        }
        let info = of(&samples, "metal_machine_issues_info");
        let types: Vec<&str> = info.iter().map(|s| label(s, "issueid")).collect();
        assert_eq!(types.len(), 15, "every type fsmlog judges");
        for s in &info {
            assert_eq!(s.value, 1.0);
            let id = label(s, "issueid");
            if id != "stuck" && id != "unexpected-transitions" {
                assert_eq!(
                    label(s, "refurl"),
                    format!("https://docs.metal-stack.io/stable/installation/troubleshoot/#{id}")
                );
            }
        }
        let crashloop = info
            .iter()
            .find(|s| label(s, "issueid") == "crashloop")
            .unwrap();
        assert_eq!(
            label(crashloop, "description"),
            "machine is in a provisioning crash loop (⭕)"
        );
        assert_eq!(label(crashloop, "severity"), "major");
        // Every machine × every type judged of it: 1 where `issues -o json --all` lists the
        // issue. Only the types that need a machine object or an ipmi export may go unjudged.
        let machines = json["machines"].as_array().unwrap();
        let rows = of(&samples, "metal_machine_issues");
        assert!(
            rows.len() <= machines.len() * types.len(),
            "{}",
            input.display()
        );
        let needs_more = [
            "no-partition",
            "asn-not-unique",
            "bmc-without-mac",
            "bmc-without-ip",
            "bmc-info-outdated",
            "bmc-no-distinct-ip",
        ];
        // The JSON's ids are the input's, and so are the labels, but for controls, shown as
        // every text output shows them (`\u{1b}`).
        let shown = |id: &str| fsmlog::escape::text(id).into_owned();
        for m in machines {
            let id = shown(m["machine"].as_str().unwrap());
            let has: Vec<&str> = m["issues"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    let kind = i["type"].as_str().unwrap();
                    let row = info.iter().find(|s| label(s, "issueid") == kind).unwrap();
                    assert_eq!(
                        i["refurl"],
                        label(row, "refurl"),
                        "issues -o json names it too"
                    );
                    kind
                })
                .collect();
            for t in &types {
                let row: Vec<&&Sample> = rows
                    .iter()
                    .filter(|s| label(s, "machineid") == id && label(s, "issueid") == *t)
                    .collect();
                if row.is_empty() && needs_more.contains(t) {
                    assert!(!has.contains(t), "{id} {t}");
                    continue;
                }
                assert_eq!(row.len(), 1, "{id} {t}");
                assert_eq!(
                    row[0].value,
                    f64::from(u8::from(has.contains(t))),
                    "{id} {t}"
                );
            }
        }
    }
}

#[test]
fn the_filters_choose_the_types_and_a_resolved_issue_is_a_zero() {
    let fleet = testdata("fleet-v0.42.2/list-json");
    // metalctl's spellings: a comma list, and its name for the threshold (metal-api's 7d,
    // where the metrics would judge by the exporter's 1h).
    let (_, text, _) = stdout_of(&[
        "issues",
        "-o",
        "openmetrics",
        "--only",
        "crashloop,last-event-error",
        "--last-event-error-threshold",
        "7d",
        arg(&fleet),
    ]);
    let (samples, _) = parse(&text);
    let types: Vec<&str> = of(&samples, "metal_machine_issues_info")
        .iter()
        .map(|s| label(s, "issueid"))
        .collect();
    assert_eq!(types, ["crashloop", "last-event-error"]);
    assert_eq!(of(&samples, "metal_machine_issues").len(), 24);
    // Judged a month later the last errors are old: the rows stay, at 0.
    let (_, later, _) = stdout_of(&[
        "issues",
        "-o",
        "openmetrics",
        "--only",
        "last-event-error",
        "--now",
        "2025-10-30T00:00:00Z",
        arg(&fleet),
    ]);
    let (later, _) = parse(&later);
    let rows = of(&later, "metal_machine_issues");
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|s| s.value == 0.0));
    assert!(
        of(&samples, "metal_machine_issues")
            .iter()
            .any(|s| s.value == 1.0)
    );
}
