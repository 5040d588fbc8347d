//! Where the fleet is: partition, rack and size read from the machine objects, per pair in
//! `report` and `explain`, per machine in `issues`, and nothing where the input has none.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use super::*;

/// The list's machines by id.
fn machines_of(list: &Path) -> BTreeMap<String, Value> {
    let list: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(list).unwrap()).unwrap();
    list.into_iter()
        .map(|m| (m["id"].as_str().unwrap().to_string(), m))
        .collect()
}

#[test]
fn where_agrees_with_the_export_for_every_pair() {
    let list = testdata(LIST);
    let machines = machines_of(&list);
    // Which machine had which pair, as `issues` lists them; worked out by hand from the list
    // for every pair: machines per partition, rack and size.
    let (_, issues, _) = run_json(&["issues", "-o", "json", "--all", arg(&list)]);
    let mut want: BTreeMap<String, Value> = BTreeMap::new();
    for m in issues["machines"].as_array().unwrap() {
        let id = m["machine"].as_str().unwrap();
        let export = &machines[id];
        // issues names each machine's place as the export does.
        assert_eq!(m["partition"], export["partition"]["id"], "{id}");
        assert_eq!(m["rack"], export["rackid"], "{id}");
        assert_eq!(m["size"], export["size"]["id"], "{id}");
        assert_eq!(
            m.get("hostname").cloned().unwrap_or(Value::Null),
            export["allocation"]["hostname"],
            "{id}"
        );
        for issue in m["issues"].as_array().unwrap() {
            for p in issue["pairs"].as_array().into_iter().flatten() {
                let name = format!(
                    "{}/{}",
                    p["state"].as_str().unwrap(),
                    p["event"].as_str().unwrap()
                );
                let entry = want
                    .entry(name)
                    .or_insert_with(|| json!({"partition": {}, "rack": {}, "size": {}}));
                for (dimension, value) in [
                    ("partition", &export["partition"]["id"]),
                    ("rack", &export["rackid"]),
                    ("size", &export["size"]["id"]),
                ] {
                    let n = &mut entry[dimension][value.as_str().unwrap()];
                    *n = json!(n.as_u64().unwrap_or(0) + 1);
                }
            }
        }
    }
    let report = report_of(&[arg(&list)]);
    let pairs = report["unexpected"].as_array().unwrap();
    assert_eq!(pairs.len(), want.len());
    for p in pairs {
        let name = format!(
            "{}/{}",
            p["state"].as_str().unwrap(),
            p["event"].as_str().unwrap()
        );
        assert_eq!(p["where"], want[&name], "{name}");
        let racks: u64 = p["where"]["rack"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(
            racks,
            p["machines"].as_u64().unwrap(),
            "every machine has a rack"
        );
    }
    // The pair's 6 machines sit in 5 racks: no rack's problem alone.
    let reboot = &want["Waiting/PXE Booting"];
    assert_eq!(reboot["rack"].as_object().unwrap().len(), 5);
    // explain says the same, in words and in JSON.
    let (_, explained, _) = run_json(&["explain", "-o", "json", arg(&list)]);
    for p in explained["pairs"].as_array().unwrap() {
        let name = format!(
            "{}/{}",
            p["state"].as_str().unwrap(),
            p["event"].as_str().unwrap()
        );
        assert_eq!(p["where"], want[&name], "{name}");
    }
    let (_, text, _) = stdout_of(&["explain", arg(&list)]);
    assert!(
        text.contains("where: 6 machines in 1 partition (fra-equ01 ×6), 5 racks (rack06 ×2, rack04, rack07, +2), 1 size (c1-xlarge-x86 ×6)"),
        "{text}"
    );
    let (_, table, _) = stdout_of(&["report", arg(&list)]);
    assert!(table.contains("┆ Where "), "{table}");
    assert!(table.contains("┆ rack06 +4 "), "{table}");
    // issues: each machine's partition and rack, on every CSV row of it, as the export says.
    let (_, csv, _) = stdout_of(&["issues", "-o", "csv", "--all", arg(&list)]);
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    assert_eq!(header.last(), Some(&"Where"), "{csv}");
    let mut seen = 0;
    for row in rows {
        let cells: Vec<&str> = row.split(',').collect();
        let m = &machines[cells[0]];
        let want = format!(
            "{} · {}",
            m["partition"]["id"].as_str().unwrap(),
            m["rackid"].as_str().unwrap()
        );
        assert_eq!(cells.last(), Some(&want.as_str()), "{row}");
        seen += 1;
    }
    assert!(seen > machines.len(), "a row per issue: {seen}");
}

#[test]
fn an_input_without_places_says_nothing_of_them() {
    for input in [
        "fleet-v0.42.2/logs-json",
        "fleet-v0.42.2/ndjson",
        "seed-machine.txt",
    ] {
        let path = testdata(input);
        let report = report_of(&[arg(&path)]);
        for p in report["unexpected"].as_array().unwrap() {
            assert!(p.get("where").is_none(), "{input}: {p}");
        }
        let (_, table, _) = stdout_of(&["report", arg(&path)]);
        assert!(!table.contains("Where"), "{input}");
        let (_, text, _) = stdout_of(&["explain", arg(&path)]);
        assert!(!text.contains("\nwhere: "), "{input}");
        for format in ["table", "csv"] {
            let (_, out, _) = stdout_of(&["issues", "--wide", "--all", "-o", format, arg(&path)]);
            assert!(!out.contains("Where"), "{input} {format}");
        }
        let (_, issues, _) = run_json(&["issues", "-o", "json", "--all", arg(&path)]);
        for m in issues["machines"].as_array().unwrap() {
            assert!(
                m.get("rack").is_none() && m.get("partition").is_none(),
                "{input}: {m}"
            );
        }
    }
}

#[test]
fn a_list_split_any_way_gives_the_same_places_and_the_newest_export_wins() {
    let dir = tempfile::tempdir().unwrap();
    let list: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(testdata(LIST)).unwrap()).unwrap();
    let (a, b) = list.split_at(5);
    let first = write(
        dir.path(),
        "a.json",
        &serde_json::to_string_pretty(a).unwrap(),
    );
    let second = write(
        dir.path(),
        "b.json",
        &serde_json::to_string_pretty(b).unwrap(),
    );
    let whole = report_of(&[arg(&testdata(LIST))]);
    let split = report_of(&[arg(&second), arg(&first)]);
    assert_eq!(split["unexpected"], whole["unexpected"]);
    // The same machine exported twice, moved to another rack in between: the newer export
    // (by its newest event) says where it is.
    let mut moved = list[0].clone();
    moved["rackid"] = json!("rack99");
    let log = moved["events"]["log"].as_array_mut().unwrap();
    let newest = log[0].clone();
    let mut later = newest.clone();
    later["time"] = json!("2030-01-01T00:00:00.000Z");
    later["event"] = json!("Alive");
    log.insert(0, later);
    let older = write(
        dir.path(),
        "older.json",
        &serde_json::to_string_pretty(&[&list[0]]).unwrap(),
    );
    let newer = write(
        dir.path(),
        "newer.json",
        &serde_json::to_string_pretty(&[&moved]).unwrap(),
    );
    for order in [[&older, &newer], [&newer, &older]] {
        let (_, issues, _) = run_json(&[
            "issues",
            "-o",
            "json",
            "--all",
            arg(order[0]),
            arg(order[1]),
        ]);
        assert_eq!(issues["machines"][0]["rack"], "rack99", "{issues}");
    }
}

#[test]
fn a_hostile_place_is_text_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut list: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(testdata(LIST)).unwrap()).unwrap();
    let hostile = "<b>r\u{1b}[31m|*x*\u{202e}";
    for m in &mut list {
        m["rackid"] = json!(hostile);
    }
    let file = write(
        dir.path(),
        "hostile.json",
        &serde_json::to_string_pretty(&list).unwrap(),
    );
    for format in ["table", "markdown", "csv", "html"] {
        let (_, out, _) =
            stdout_of(&["report", "-o", format, "--wide", "--by", "rack", arg(&file)]);
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{202e}'),
            "{format}: {out}"
        );
        // The breakdown by rack is a table of its own (the CSV stays the pairs).
        assert_eq!(out.contains("by rack"), format != "csv", "{format}: {out}");
        if format == "html" || format == "markdown" {
            assert!(!out.contains("<b>r"), "{format}");
        }
    }
    for format in ["table", "markdown", "csv"] {
        let (_, out, _) = stdout_of(&["issues", "-o", format, "--wide", arg(&file)]);
        assert!(out.contains("Where"), "{format}: {out}");
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{202e}') && out.contains("\\u{1b}"),
            "{format}: {out}"
        );
        if format == "markdown" {
            assert!(!out.contains("<b>r") && out.contains("\\|"), "{format}");
        }
    }
    let (_, text, _) = stdout_of(&["explain", arg(&file)]);
    assert!(
        !text.contains('\u{1b}') && text.contains("\\u{1b}"),
        "{text}"
    );
    let report = report_of(&[arg(&file)]);
    assert_eq!(
        report["unexpected"][0]["where"]["rack"][hostile],
        report["unexpected"][0]["machines"]
    );
}

#[test]
fn each_filter_is_the_export_cut_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let list: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(testdata(LIST)).unwrap()).unwrap();
    let whole = testdata(LIST);
    fn two_racks(m: &Value) -> bool {
        ["rack06", "rack08"].contains(&m["rackid"].as_str().unwrap())
    }
    /// The options, and which of the list's machines they keep.
    type Case<'a> = (Vec<&'a str>, fn(&Value) -> bool);
    fn alloc<'v>(m: &'v Value, key: &str) -> &'v Value {
        &m["allocation"][key]
    }
    let cases: [Case; 10] = [
        (vec!["--rack", "rack06,rack08"], two_racks),
        (
            vec![
                "--id",
                "476c0f23-364b-4fc2-8366-b0cab4f0896d,043afe87-2ce5-45b2-824a-4b04924cf73f",
            ],
            |m| m["id"].as_str().unwrap().starts_with(['4', '0']),
        ),
        (vec!["--role", "machine"], |m| alloc(m, "role") == "machine"),
        (vec!["--role", "firewall"], |m| {
            alloc(m, "role") == "firewall"
        }),
        (vec!["--hostname", "worker-3,worker-40"], |m| {
            alloc(m, "hostname") == "worker-3" || alloc(m, "hostname") == "worker-40"
        }),
        (
            vec!["--project", "e9e44d42-274f-40d6-8896-f13c439a90bb"],
            |m| alloc(m, "project") == "e9e44d42-274f-40d6-8896-f13c439a90bb",
        ),
        (
            vec!["--image", "debian-12.0.20250815", "--hostname", "worker-22"],
            |m| {
                alloc(m, "image")["id"] == "debian-12.0.20250815"
                    && alloc(m, "hostname") == "worker-22"
            },
        ),
        (vec!["--rack", "rack06", "--rack", "rack08"], two_racks),
        (
            vec!["--partition", "fra-equ01", "--size", "c1-xlarge-x86"],
            |_| true,
        ),
        (vec!["--partition", "elsewhere"], |_| false),
    ];
    for (args, keep) in cases {
        let cut: Vec<&Value> = list.iter().filter(|m| keep(m)).collect();
        let by_hand = write(
            dir.path(),
            "cut.json",
            &serde_json::to_string_pretty(&cut).unwrap(),
        );
        let run = |extra: &[&str], path: &Path| {
            let mut a = vec!["report", "-o", "json"];
            a.extend_from_slice(extra);
            a.push(arg(path));
            run_json(&a)
        };
        let (code, filtered, stderr) = run(&args, &whole);
        assert_eq!(code, 0, "{stderr}");
        let (_, want, _) = run(&[], &by_hand);
        assert_eq!(filtered["unexpected"], want["unexpected"], "{args:?}");
        assert_eq!(filtered["machines"], want["machines"], "{args:?}");
        assert_eq!(filtered["inputs"]["machines"], cut.len(), "{args:?}");
        // Said, not silent: how many were kept and left out.
        assert!(
            stderr.contains(&format!(
                "kept {} of 12 machines; {} left out",
                cut.len(),
                12 - cut.len()
            )),
            "{stderr}"
        );
        // The metrics count only what is kept.
        let mut metrics = vec!["issues", "-o", "openmetrics"];
        metrics.extend_from_slice(&args);
        metrics.push(arg(&whole));
        let (_, text, _) = stdout_of(&metrics);
        let ids: std::collections::BTreeSet<&str> = text
            .lines()
            .filter(|l| l.starts_with("metal_machine_issues{"))
            .filter_map(|l| l.split("machineid=\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(ids.len(), cut.len(), "{args:?}");
        // And replay prints only them.
        let mut replay = vec!["replay", "-o", "json"];
        replay.extend_from_slice(&args);
        replay.push(arg(&whole));
        let (_, traces, _) = run_json(&replay);
        assert_eq!(
            traces["machines"].as_array().unwrap().len(),
            cut.len(),
            "{args:?}"
        );
    }
}

#[test]
fn report_and_issues_both_say_why_their_crash_loops_differ() {
    let list = testdata(LIST);
    // By hand from the export: flagged machines whose newest stored event is Waiting.
    let waiting = machines_of(&list)
        .values()
        .filter(|m| {
            m["events"]["crash_loop"] == json!(true)
                && m["events"]["log"][0]["event"] == json!("Waiting")
        })
        .count();
    assert_eq!(waiting, 6);
    let (_, issues, _) = run_json(&["issues", "-o", "json", "--only", "crashloop", arg(&list)]);
    assert_eq!(issues["machines"].as_array().unwrap().len(), 0, "{issues}");
    let said = format!("{waiting} machines with metal-api's crash-loop flag wait in Waiting");
    let (_, report, _) = stdout_of(&["report", arg(&list)]);
    assert!(report.contains(&said), "{report}");
    let (_, audit, _) = stdout_of(&["issues", arg(&list)]);
    assert!(audit.contains(&said), "{audit}");
}

#[test]
fn a_place_of_another_shape_is_read_loosely_and_never_loses_the_machine() {
    let dir = tempfile::tempdir().unwrap();
    let list: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(testdata(LIST)).unwrap()).unwrap();
    let mut odd = list.clone();
    odd[0]["partition"] = json!("fra-by-id");
    odd[0]["rackid"] = json!({"unexpected": 1});
    odd[1]["size"] = json!(42);
    odd[1]["allocation"] = json!("yes");
    odd[2]["allocation"] = json!({"hostname": "h", "image": "debian-by-id"});
    odd[3]["partition"] = json!([1, 2]);
    odd[4]["allocation"] = json!({"hostname": {"x": 1}, "project": "p", "image": {"id": {}}});
    // Pretty-printed (the skim and the direct reader) and on one line (serde): the same.
    let pretty = write(
        dir.path(),
        "pretty.json",
        &serde_json::to_string_pretty(&odd).unwrap(),
    );
    let compact = write(
        dir.path(),
        "compact.json",
        &serde_json::to_string(&odd).unwrap(),
    );
    let mut seen = Vec::new();
    for file in [&pretty, &compact] {
        let (code, issues, stderr) = run_json(&["issues", "-o", "json", "--all", arg(file)]);
        assert_eq!(code, 0, "{stderr}");
        let machines = issues["machines"].as_array().unwrap().clone();
        assert_eq!(machines.len(), 12, "no machine is lost");
        let by_id = |id: &Value| {
            machines
                .iter()
                .find(|m| m["machine"] == *id)
                .unwrap()
                .clone()
        };
        let (m0, m1, m2, m3) = (
            by_id(&odd[0]["id"]),
            by_id(&odd[1]["id"]),
            by_id(&odd[2]["id"]),
            by_id(&odd[3]["id"]),
        );
        assert_eq!(m0["partition"], "fra-by-id");
        assert!(m0.get("rack").is_none(), "{m0}");
        assert_eq!(m1["size"], "42");
        assert_eq!(m1["allocated"], true);
        assert_eq!(m2["hostname"], "h");
        assert!(m3.get("partition").is_none(), "{m3}");
        let m4 = by_id(&odd[4]["id"]);
        assert!(m4.get("hostname").is_none(), "{m4}");
        assert_eq!(m4["project"], "p");
        seen.push(machines);
    }
    assert_eq!(seen[0], seen[1], "every reading path gives the same places");
}

#[test]
fn by_partition_rack_or_size_is_what_each_filter_counts() {
    // Each value's counts under `--by` are the report of the export cut to that value by its
    // filter, and a pair's values add up to the pair.
    let list = testdata(LIST);
    for (dimension, filter) in [
        ("partition", "--partition"),
        ("rack", "--rack"),
        ("size", "--size"),
    ] {
        let report = report_of(&["--by", dimension, arg(&list)]);
        for pair in report["unexpected"].as_array().unwrap() {
            let breakdown = &pair["breakdown"];
            assert_eq!(breakdown["by"], dimension);
            let values = breakdown["values"].as_array().unwrap();
            let sum = |field: &str| {
                values
                    .iter()
                    .map(|v| v[field].as_u64().unwrap())
                    .sum::<u64>()
            };
            assert_eq!(sum("count"), pair["count"].as_u64().unwrap(), "{pair}");
            assert_eq!(
                sum("machines"),
                pair["machines"].as_u64().unwrap(),
                "{pair}"
            );
            let counts: Vec<u64> = values
                .iter()
                .map(|v| v["count"].as_u64().unwrap())
                .collect();
            assert!(
                counts.windows(2).all(|w| w[0] >= w[1]),
                "most first: {counts:?}"
            );
            for value in values {
                let name = value["value"]
                    .as_str()
                    .expect("every machine of the list is placed");
                let cut = report_of(&[filter, name, arg(&list)]);
                let same = cut["unexpected"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["state"] == pair["state"] && p["event"] == pair["event"])
                    .unwrap_or_else(|| panic!("{filter} {name}: {cut}"));
                for field in ["count", "machines", "first_seen", "last_seen"] {
                    assert_eq!(value[field], same[field], "{filter} {name} {field}");
                }
            }
        }
    }
    // A period and a dimension together; two of either is a usage error.
    let both = report_of(&["--by", "day,rack", arg(&list)]);
    assert!(both["unexpected"][0]["series"].is_array());
    assert!(both["unexpected"][0]["breakdown"]["values"].is_array());
    for twice in ["day,week", "rack,size"] {
        let (code, _, err) = stdout_of(&["report", "--by", twice, arg(&list)]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--by takes at most one"), "{err}");
    }
    // Without places every occurrence is under no value, and said so.
    let seed = testdata("seed-machine.txt");
    let report = report_of(&["--by", "rack", arg(&seed)]);
    let pair = &report["unexpected"][0];
    assert_eq!(pair["breakdown"]["values"][0]["value"], Value::Null);
    assert_eq!(pair["breakdown"]["values"][0]["count"], pair["count"]);
    let (_, table, _) = stdout_of(&["report", "--by", "rack", arg(&seed)]);
    assert!(table.contains("(not in the export)"), "{table}");
}

#[test]
fn an_empty_place_leaves_no_dangling_separator_in_where() {
    let dir = tempfile::tempdir().unwrap();
    let mut list: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(testdata(LIST)).unwrap()).unwrap();
    list[0]["rackid"] = json!("");
    list[1]["partition"]["id"] = json!("");
    let (first, second) = (
        list[0]["id"].as_str().unwrap().to_string(),
        list[1]["id"].as_str().unwrap().to_string(),
    );
    let want_second = list[1]["rackid"].as_str().unwrap().to_string();
    let file = write(
        dir.path(),
        "empty-places.json",
        &serde_json::to_string_pretty(&list).unwrap(),
    );
    let (_, csv, _) = stdout_of(&["issues", "-o", "csv", "--all", arg(&file)]);
    let where_of = |id: &str| {
        let row = csv.lines().find(|l| l.starts_with(id)).unwrap();
        row.rsplit(',').next().unwrap().to_string()
    };
    assert_eq!(where_of(&first), "fra-equ01", "{csv}");
    assert_eq!(where_of(&second), want_second, "{csv}");
}
