//! `issues list`: the issue types as `metalctl machine issues list` lists metal-api's, in
//! every format, and a path named `list` still read.

use super::*;

/// metal-api's thirteen types as its `Spec()`s say them (cmd/metal-api/internal/issues/*.go,
/// copied by hand): id, severity, description; each links its troubleshooting page.
const METAL_API: [(&str, &str, &str); 13] = [
    ("no-partition", "major", "machine with no partition"),
    (
        "liveliness-dead",
        "major",
        "the machine is not sending events anymore",
    ),
    (
        "liveliness-unknown",
        "major",
        "the machine is not sending LLDP alive messages anymore",
    ),
    (
        "liveliness-not-available",
        "minor",
        "the machine liveliness is not available",
    ),
    (
        "failed-machine-reclaim",
        "critical",
        "machine phones home but not allocated",
    ),
    (
        "crashloop",
        "major",
        "machine is in a provisioning crash loop (⭕)",
    ),
    (
        "last-event-error",
        "minor",
        "the machine had an error during the provisioning lifecycle",
    ),
    ("bmc-without-mac", "major", "BMC has no mac address"),
    ("bmc-without-ip", "major", "BMC has no ip address"),
    (
        "bmc-info-outdated",
        "major",
        "BMC has not been updated from either metal-hammer or metal-bmc",
    ),
    (
        "asn-not-unique",
        "minor",
        "The ASN is not unique (only impact on firewalls)",
    ),
    (
        "bmc-no-distinct-ip",
        "major",
        "BMC IP address is not distinct",
    ),
    (
        "no-event-container",
        "major",
        "machine has no event container",
    ),
];

fn refurl(id: &str) -> String {
    format!("https://docs.metal-stack.io/stable/installation/troubleshoot/#{id}")
}

/// `fsmlog issues list ARGS…` run in `dir`.
fn list_in(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let output = fsmlog()
        .current_dir(dir)
        .args(["issues", "list"])
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn the_list_holds_metal_apis_types_as_metal_api_says_them() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, stderr) = list_in(dir.path(), &["-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let list: Vec<Value> = serde_json::from_str(&out).unwrap();
    // V1MachineIssue's members, and what fsmlog needs to judge each.
    for item in &list {
        let keys: BTreeSet<&str> = item
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            keys,
            BTreeSet::from([
                "id",
                "severity",
                "description",
                "ref_url",
                "details",
                "needs"
            ])
        );
    }
    let by_id: BTreeMap<&str, &Value> = list
        .iter()
        .map(|i| (i["id"].as_str().unwrap(), i))
        .collect();
    for (id, severity, description) in METAL_API {
        let item = by_id.get(id).unwrap_or_else(|| panic!("{id} missing"));
        assert_eq!(item["severity"], severity, "{id}");
        assert_eq!(item["description"], description, "{id}");
        assert_eq!(item["ref_url"], refurl(id).as_str(), "{id}");
        assert_eq!(item["details"], "", "{id}");
    }
    // fsmlog's own two, and nothing else.
    assert_eq!(list.len(), 15);
    assert!(by_id.contains_key("stuck") && by_id.contains_key("unexpected-transitions"));
    let needs = |id: &str| by_id[id]["needs"].as_str().unwrap().to_string();
    assert_eq!(needs("bmc-info-outdated"), "ipmi");
    assert_eq!(needs("bmc-no-distinct-ip"), "ipmi");
    assert_eq!(needs("no-partition"), "machine-object");
    assert_eq!(needs("asn-not-unique"), "allocation");
    assert_eq!(needs("crashloop"), "events");
}

#[test]
fn every_format_lists_the_same_types() {
    let dir = tempfile::tempdir().unwrap();
    let (_, json, _) = list_in(dir.path(), &["-o", "json"]);
    let list: Vec<Value> = serde_json::from_str(&json).unwrap();
    let ids: Vec<&str> = list.iter().map(|i| i["id"].as_str().unwrap()).collect();
    // The table: metalctl's header, a row per type in the JSON's order.
    let (code, table, _) = list_in(dir.path(), &["-o", "table"]);
    assert_eq!(code, 0);
    for header in ["ID", "Severity", "Description", "Judged from"] {
        assert!(table.contains(header), "{table}");
    }
    let mut at = 0;
    for id in &ids {
        let found = table[at..]
            .find(&format!(" {id} "))
            .unwrap_or_else(|| panic!("{id}"));
        at += found;
    }
    // CSV: the header, then one line per type, its id and severity first.
    let (_, csv, _) = list_in(dir.path(), &["-o", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "ID,Severity,Description,Reference URL,Judged from"
    );
    assert_eq!(lines.len(), ids.len() + 1);
    for (line, item) in lines[1..].iter().zip(&list) {
        let head = format!(
            "{},{},",
            item["id"].as_str().unwrap(),
            item["severity"].as_str().unwrap()
        );
        assert!(line.starts_with(&head), "{line}");
    }
    // Markdown: a table row per type.
    let (_, markdown, _) = list_in(dir.path(), &["-o", "markdown"]);
    for item in &list {
        let row = format!(
            "| {} | {} | {} | {} |",
            item["id"].as_str().unwrap(),
            item["severity"].as_str().unwrap(),
            item["description"].as_str().unwrap(),
            item["ref_url"].as_str().unwrap()
        );
        assert!(markdown.contains(&row), "{row}\n{markdown}");
    }
    // YAML: the JSON's objects.
    let (_, yaml, _) = list_in(dir.path(), &["-o", "yaml"]);
    assert_eq!(yaml.matches("- id: ").count(), ids.len(), "{yaml}");
    assert!(
        yaml.contains(
            "  ref_url: \"https://docs.metal-stack.io/stable/installation/troubleshoot/#no-partition\""
        ),
        "{yaml}"
    );
    // OpenMetrics: the exporter's info family, a sample per type.
    let (_, metrics, _) = list_in(dir.path(), &["-o", "openmetrics"]);
    assert_eq!(
        metrics.matches("\nmetal_machine_issues_info{").count(),
        ids.len()
    );
    assert!(metrics.ends_with("# EOF\n"));
    // The filters hold as for machines.
    let (_, critical, _) = list_in(dir.path(), &["-o", "json", "--severity", "critical"]);
    let critical: Vec<Value> = serde_json::from_str(&critical).unwrap();
    assert_eq!(critical.len(), 1);
    assert_eq!(critical[0]["id"], "failed-machine-reclaim");
}

#[test]
fn a_path_named_list_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(testdata(AUDIT), dir.path().join("list")).unwrap();
    // The file `list` there: it is read, as before.
    let (code, out, stderr) = list_in(dir.path(), &["-o", "json"]);
    assert!(code == 0 || code == 1, "{stderr}");
    let read: Value = serde_json::from_str(&out).unwrap();
    let (_, direct, _) = run_json(&["issues", "-o", "json", &audit_file()]);
    assert_eq!(read["machines"], direct["machines"]);
    // `./list` is always the path: a directory of that name, and none at all.
    std::fs::remove_file(dir.path().join("list")).unwrap();
    std::fs::create_dir(dir.path().join("list")).unwrap();
    std::fs::copy(testdata(AUDIT), dir.path().join("list/machines.json")).unwrap();
    let (_, out, _) = list_in(dir.path(), &["-o", "json"]);
    let read: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(read["machines"], direct["machines"]);
    let output = fsmlog()
        .current_dir(dir.path())
        .args(["issues", "-o", "json", "./list"])
        .output()
        .unwrap();
    let read: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(read["machines"], direct["machines"]);
    let empty = tempfile::tempdir().unwrap();
    let output = fsmlog()
        .current_dir(empty.path())
        .args(["issues", "./list"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn issues_list_feeds_a_template_and_rows_alone_as_its_json() {
    let (code, json, _) = stdout_of(&["issues", "list", "-o", "json"]);
    assert_eq!(code, 0);
    let ids: Vec<String> = serde_json::from_str::<Value>(&json)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    let (code, lines, stderr) = stdout_of(&[
        "issues",
        "list",
        "-o",
        "template",
        "--template",
        "{{ .id }}",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines.lines().collect::<Vec<_>>(), ids);
    let (code, rows, stderr) = stdout_of(&["issues", "list", "--no-headers"]);
    assert_eq!(code, 0, "{stderr}");
    let first: Vec<&str> = rows
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(first, ids);
}
