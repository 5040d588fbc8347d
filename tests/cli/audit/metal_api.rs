//! metal-api's six types that need more than events: `no-partition` and `asn-not-unique` from
//! a machine object, the four BMC types from a `metalctl machine ipmi -o json` export
//! (testdata/audit/ipmi.json, made by hand: one machine per condition of metal-api's
//! cmd/metal-api/internal/issues/*.go, and its edges), judged on every reading path alike, and
//! not judged where the export lacks their data.

use super::*;

const IPMI: &str = "audit/ipmi.json";
const NOW: &str = "2025-09-22T12:00:00Z";

const SIX: [&str; 6] = [
    "no-partition",
    "bmc-without-mac",
    "bmc-without-ip",
    "bmc-info-outdated",
    "asn-not-unique",
    "bmc-no-distinct-ip",
];

/// machine → its issues among the six, as `issues -o json --all` lists them.
fn six_of(json: &Value) -> BTreeMap<String, Vec<String>> {
    types_of(json)
        .into_iter()
        .map(|(m, types)| {
            (
                m,
                types
                    .into_iter()
                    .filter(|t| SIX.contains(&t.as_str()))
                    .collect(),
            )
        })
        .collect()
}

/// What metal-api's code says of each machine of the file, worked out by hand.
fn expected() -> BTreeMap<String, Vec<String>> {
    [
        ("ok", &[][..]),
        // `m.IPMI.MacAddress == ""`.
        ("no-mac", &["bmc-without-mac"]),
        // `m.IPMI.Address == ""`, `null` as Go reads it; two empty addresses are not one.
        ("no-ip", &["bmc-without-ip"]),
        ("no-ip-2", &["bmc-without-ip"]),
        // `LastUpdated.IsZero()`: Go's zero time, or no time at all.
        ("never", &["bmc-info-outdated"]),
        ("no-update", &["bmc-info-outdated"]),
        // `time.Since(LastUpdated) > 20*time.Minute`: 20 minutes is not more.
        ("at-20m", &[]),
        ("at-20m1s", &["bmc-info-outdated"]),
        // The same address on two BMCs: both.
        ("dup-a", &["bmc-no-distinct-ip"]),
        ("dup-b", &["bmc-no-distinct-ip"]),
        ("hostile-a", &["bmc-no-distinct-ip"]),
        ("hostile-b", &["bmc-no-distinct-ip"]),
        // `m.PartitionID == ""`.
        ("no-partition", &["no-partition"]),
        // Firewalls sharing an ASN (0 is none); a machine of role `machine` with the same
        // ASNs counts for nothing, and is judged of nothing.
        ("fw-1", &["asn-not-unique"]),
        ("fw-2", &["asn-not-unique"]),
        ("fw-3", &[]),
        ("m-1", &[]),
        // A last update that is no time: bmc-info-outdated is not judged.
        ("odd-time", &[]),
    ]
    .into_iter()
    .map(|(m, types)| (m.to_string(), types.iter().map(|t| t.to_string()).collect()))
    .collect()
}

fn ipmi_json(path: &str) -> Value {
    let (code, json, stderr) = run_json(&["issues", "-o", "json", "--all", "--now", NOW, path]);
    assert_eq!(code, 0, "{stderr}");
    json
}

#[test]
fn the_six_types_are_judged_as_metal_api_judges_them() {
    let json = ipmi_json(&testdata(IPMI).to_string_lossy());
    assert_eq!(six_of(&json), expected());
    // What they were judged on, in metal-api's words where it has some.
    let details: BTreeMap<(String, String), String> = json["machines"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| {
            m["issues"].as_array().unwrap().iter().map(move |i| {
                (
                    (
                        m["machine"].as_str().unwrap().to_string(),
                        i["type"].as_str().unwrap().to_string(),
                    ),
                    i["details"].as_str().unwrap().to_string(),
                )
            })
        })
        .collect();
    let of = |m: &str, t: &str| details[&(m.to_string(), t.to_string())].clone();
    assert_eq!(
        of("never", "bmc-info-outdated"),
        "machine ipmi has never been set"
    );
    assert_eq!(
        of("at-20m1s", "bmc-info-outdated"),
        "last updated 20m1s ago"
    );
    assert_eq!(
        of("fw-1", "asn-not-unique"),
        "ASN 4200000001 not unique, shared with fw-2"
    );
    assert_eq!(
        of("dup-b", "bmc-no-distinct-ip"),
        "BMC IP 10.0.0.99 not unique, shared with dup-a"
    );
}

/// The value as YAML in block style, strings as JSON writes them (YAML's double-quoted
/// strings read JSON's escapes).
fn yaml(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                out.push_str(&format!("\n{pad}{k}:"));
                yaml(v, indent + 2, out);
            }
        }
        Value::Array(list) if !list.is_empty() => {
            for v in list {
                out.push_str(&format!("\n{pad}- "));
                let mut item = String::new();
                yaml(v, indent + 2, &mut item);
                out.push_str(item.trim_start_matches('\n').trim_start());
            }
        }
        scalar => out.push_str(&format!(" {scalar}")),
    }
}

#[test]
fn every_reading_path_judges_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let pretty = testdata(IPMI);
    let text = std::fs::read_to_string(&pretty).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let compact = dir.join("compact.json");
    std::fs::write(&compact, serde_json::to_string(&value).unwrap()).unwrap();
    let mut as_yaml = String::new();
    yaml(&value, 0, &mut as_yaml);
    let yaml_file = dir.join("ipmi.yaml");
    std::fs::write(&yaml_file, as_yaml.trim_start()).unwrap();
    let want = six_of(&ipmi_json(&pretty.to_string_lossy()));
    for path in [&compact, &yaml_file] {
        let got = six_of(&ipmi_json(&path.to_string_lossy()));
        assert_eq!(got, want, "{}", path.display());
    }
    // The pretty-printed list is skimmed (the credentials never parsed), the compact one
    // read directly: both fast paths, one answer.
    for (path, taken) in [(&pretty, "skimmed"), (&compact, "direct")] {
        let output = fsmlog()
            .args(["issues", "-o", "json", "--now", NOW])
            .arg(path)
            .env("FSMLOG_TRACE", "read")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(taken), "{}: {stderr}", path.display());
    }
}

/// The `metal_machine_issues` rows of an openmetrics text: (machine, type) → value.
fn rows_of(text: &str) -> BTreeMap<(String, String), String> {
    text.lines()
        .filter(|l| l.starts_with("metal_machine_issues{"))
        .map(|l| {
            let label = |name: &str| {
                let from = l.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                l[from..from + l[from..].find('"').unwrap()].to_string()
            };
            let value = l.rsplit(' ').next().unwrap().to_string();
            ((label("machineid"), label("issueid")), value)
        })
        .collect()
}

#[test]
fn openmetrics_has_a_row_only_where_the_type_is_judged() {
    let ipmi = testdata(IPMI);
    let (code, text, stderr) = stdout_of(&[
        "issues",
        "-o",
        "openmetrics",
        "--now",
        NOW,
        &ipmi.to_string_lossy(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let rows = rows_of(&text);
    let expected = expected();
    for (machine, types) in &expected {
        for t in SIX {
            let row = rows.get(&(machine.clone(), t.to_string()));
            let want = if machine == "odd-time" && t == "bmc-info-outdated" {
                None
            } else if types.iter().any(|x| x == t) {
                Some("1")
            } else {
                Some("0")
            };
            assert_eq!(row.map(String::as_str), want, "{machine} {t}");
        }
    }
    // A describe export holds the partition and the allocation, not the BMC; a logs export
    // none of them: no row, neither 0 nor 1.
    let describe = testdata("fleet-v0.19.0/describe-json");
    let (_, text, _) = stdout_of(&["issues", "-o", "openmetrics", &describe.to_string_lossy()]);
    let rows = rows_of(&text);
    let has = |t: &str| rows.keys().any(|(_, x)| x == t);
    assert!(has("no-partition") && has("asn-not-unique"), "{text}");
    assert!(!SIX[1..4].iter().chain(&SIX[5..]).any(|t| has(t)), "{text}");
    let logs = testdata("fleet-v0.19.0/logs-json");
    let (_, text, _) = stdout_of(&["issues", "-o", "openmetrics", &logs.to_string_lossy()]);
    let rows = rows_of(&text);
    assert!(!rows.is_empty());
    assert!(
        !rows.keys().any(|(_, t)| SIX.contains(&t.as_str())),
        "{text}"
    );
    // Every type is described, as the exporter's info family describes metal-api's.
    for t in SIX {
        let info = text.lines().find(|l| {
            l.starts_with("metal_machine_issues_info{") && l.contains(&format!("issueid=\"{t}\""))
        });
        assert!(info.is_some(), "{t}: {text}");
    }
}

#[test]
fn hostile_bmc_values_are_shown_escaped_and_the_credentials_never() {
    let ipmi = testdata(IPMI).to_string_lossy().to_string();
    for format in ["table", "json", "yaml", "markdown", "csv", "openmetrics"] {
        let (code, out, stderr) = stdout_of(&["issues", "-o", format, "--now", NOW, &ipmi]);
        assert_eq!(code, 0, "{format}: {stderr}");
        assert!(!out.contains("SECRET-PASSWORD"), "{format}");
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{202e}'),
            "{format}: {out}"
        );
    }
    let (_, table, _) = stdout_of(&["issues", "--now", NOW, &ipmi]);
    assert!(
        table.contains(r"BMC IP \u{1b}[31m10.6.6.6\u{202e} not unique, shared with hostile-b"),
        "{table}"
    );
}
