//! metalctl's habits, as operators type them: `-o yaml` is the `-o json` document, `-o wide`
//! is `--wide`, `--no-headers` leaves the header rows out, lists take commas, and metalctl's
//! option and command names are aliases.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::*;

fn output(args: &[&str]) -> String {
    let (_, out, _) = stdout_of(args);
    out
}

#[test]
fn yaml_is_the_json_document_wherever_json_is() {
    let seed = testdata("seed-machine.txt");
    let fleet = testdata("fleet-v0.42.2/list-json");
    let hostile = testdata("html");
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.json");
    let (code, _, stderr) = stdout_of(&[
        "check",
        "--write-baseline",
        arg(&baseline),
        arg(&testdata("fleet-v0.19.0/list-json")),
    ]);
    assert_eq!(code, 0, "{stderr}");
    for command in [
        vec!["report", arg(&fleet), arg(&hostile)],
        vec!["explain", arg(&fleet)],
        vec!["issues", arg(&fleet)],
        vec!["replay", arg(&seed)],
        vec![
            "rules",
            "propose",
            "--pair",
            "Waiting/PXE Booting",
            arg(&fleet),
        ],
        vec!["check", "--baseline", arg(&baseline), arg(&fleet)],
        vec![
            "diff",
            "--old",
            "metal-api-v0.19.3",
            "--new",
            "metal-api",
            arg(&fleet),
        ],
    ] {
        let with = |format: &str| {
            let mut args = command.clone();
            args.extend(["-o", format]);
            output(&args)
        };
        let json: Value = serde_json::from_str(&with("json")).unwrap();
        let yaml = with("yaml");
        assert_eq!(yaml_value(&yaml), json, "{command:?}");
        // Text from input stays escaped, as in the JSON.
        assert!(
            !yaml.contains('\u{1b}') && !yaml.contains('\u{202e}'),
            "{command:?}"
        );
    }
}

#[test]
fn wide_is_the_wide_table_and_no_headers_leaves_the_header_rows_out() {
    let fleet = "fleet-v0.42.2/list-json";
    for command in ["report", "explain", "issues"] {
        let wide = on_terminal(100, &[command, "-o", "wide", fleet], &[("NO_COLOR", "1")]);
        let flag = on_terminal(100, &[command, "--wide", fleet], &[("NO_COLOR", "1")]);
        assert_eq!(wide, flag, "{command}");
        let plain = on_terminal(100, &[command, fleet], &[("NO_COLOR", "1")]);
        assert_ne!(
            wide, plain,
            "{command}: -o wide shows more than the fitted table"
        );
    }
    // Another command's formats still refuse it.
    let (code, _, stderr) = stdout_of(&["graph", "-o", "wide", &format!("testdata/{fleet}")]);
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid value 'wide'"), "{stderr}");
    // --no-headers: the CSV starts with its first pair, the table is its rows alone (rows.rs
    // checks them against the JSON).
    let path = testdata(fleet);
    let csv = output(&["report", "-o", "csv", arg(&path)]);
    let bare = output(&["report", "-o", "csv", "--no-headers", arg(&path)]);
    assert!(csv.starts_with("State,Event,Count"), "{csv}");
    assert_eq!(bare, csv.split_once("\r\n").unwrap().1);
    let table = output(&["report", arg(&path)]);
    let headless = output(&["report", "--no-headers", arg(&path)]);
    assert!(table.contains("│ State "), "{table}");
    assert!(
        !headless.contains('│') && headless.starts_with("Preparing  Preparing  "),
        "{headless}"
    );
    let replay = output(&[
        "replay",
        "-o",
        "csv",
        "--no-headers",
        arg(&testdata("seed-machine.txt")),
    ]);
    assert!(replay.starts_with("seed-machine,"), "{replay}");
}

#[test]
fn lists_take_commas_and_metalctls_names_are_aliases() {
    let fleet = testdata("fleet-v0.42.2/list-json");
    let fleet = arg(&fleet);
    assert_eq!(
        output(&[
            "issues",
            "-o",
            "json",
            "--only",
            "crashloop,last-event-error",
            fleet
        ]),
        output(&[
            "issues",
            "-o",
            "json",
            "--only",
            "crashloop",
            "--only",
            "last-event-error",
            fleet
        ])
    );
    assert_eq!(
        output(&["issues", "-o", "json", "--omit", "crashloop,stuck", fleet]),
        output(&[
            "issues",
            "-o",
            "json",
            "--omit",
            "crashloop",
            "--omit",
            "stuck",
            fleet
        ])
    );
    let pairs = output(&[
        "explain",
        "-o",
        "json",
        "--pair",
        "Waiting/PXE Booting,preparing/preparing",
        fleet,
    ]);
    let pairs: Value = serde_json::from_str(&pairs).unwrap();
    assert_eq!(pairs["pairs"].as_array().unwrap().len(), 2, "{pairs}");
    assert_eq!(
        output(&["report", "--output-format", "json", fleet]),
        output(&["report", "-o", "json", fleet])
    );
    assert_eq!(
        output(&[
            "issues",
            "-o",
            "json",
            "--last-event-error-threshold",
            "1h",
            fleet
        ]),
        output(&[
            "issues",
            "-o",
            "json",
            "--last-error-threshold",
            "1h",
            fleet
        ])
    );
    assert_eq!(
        output(&["completion", "bash"]),
        output(&["completions", "bash"])
    );
}

#[test]
fn sort_by_orders_the_pairs_as_metal_lib_does() {
    let stream = testdata("fleet-v0.42.2/ndjson");
    let json = |extra: &[&str]| -> Vec<(String, u64, u64)> {
        let mut args = vec!["report", "-o", "json", "--rules", "metal-api-v0.19.3"];
        args.extend_from_slice(extra);
        args.push(arg(&stream));
        let (_, report, _) = run_json(&args);
        report["unexpected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    format!(
                        "{}/{}",
                        p["state"].as_str().unwrap(),
                        p["event"].as_str().unwrap()
                    ),
                    p["machines"].as_u64().unwrap(),
                    p["count"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let usual = json(&[]);
    assert!(usual.len() > 3, "{usual:?}");
    // By hand: machines descending, then count ascending, then the usual order.
    let mut want = usual.clone();
    want.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
    assert_eq!(json(&["--sort-by", "machines:desc,count"]), want);
    assert_eq!(
        json(&["--sort-by", "Machines:DESCENDING", "--sort-by", "count:asc"]),
        want
    );
    // The table lists them in the same order.
    let (_, table, _) = stdout_of(&[
        "report",
        "--rules",
        "metal-api-v0.19.3",
        "--sort-by",
        "machines:desc,count",
        arg(&stream),
    ]);
    let rows: Vec<String> = table
        .lines()
        .filter(|l| l.starts_with("│ ") && !l.starts_with("│ State"))
        .map(|l| {
            let cells: Vec<&str> = l.split(['│', '┆']).map(str::trim).collect();
            format!("{}/{}", cells[1], cells[2])
        })
        .collect();
    let names: Vec<String> = want.iter().map(|w| w.0.clone()).collect();
    assert_eq!(rows, names);
    let (code, _, stderr) = stdout_of(&["report", "--sort-by", "count:up", arg(&stream)]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unsupported sort direction: up"),
        "{stderr}"
    );
}

#[test]
fn sort_by_orders_the_machines_as_metalctl_does() {
    let list = testdata("fleet-v0.42.2/list-json");
    let machines = |extra: &[&str]| -> Vec<(String, Option<String>, Option<DateTime<Utc>>)> {
        let mut args = vec!["issues", "-o", "json", "--all"];
        args.extend_from_slice(extra);
        args.push(arg(&list));
        let (code, audit, _) = run_json(&args);
        assert_eq!(code, 0);
        audit["machines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["machine"].as_str().unwrap().to_string(),
                    m["rack"].as_str().map(String::from),
                    m["last_event_time"]
                        .as_str()
                        .map(|t| DateTime::parse_from_rfc3339(t).unwrap().to_utc()),
                )
            })
            .collect()
    };
    let usual = machines(&[]);
    let racks: std::collections::BTreeSet<_> = usual.iter().map(|m| &m.1).collect();
    assert!(racks.len() > 3, "{racks:?}");
    // By hand: racks descending, then metalctl's `when` (the newest event first), then the
    // usual order (worst first, then by id).
    let mut want = usual.clone();
    want.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)));
    assert_ne!(want, usual);
    assert_eq!(machines(&["--sort-by", "rack:desc,when"]), want);
    assert_eq!(
        machines(&["--sort-by", "RACK:descending", "--sort-by", "when:asc"]),
        want
    );
    let mut by_id = usual.clone();
    by_id.sort_by(|a, b| b.0.cmp(&a.0));
    assert_eq!(machines(&["--sort-by", "id:desc"]), by_id);
    // The table lists the machines in the same order, each once (its further issues ditto).
    let (_, table, _) = stdout_of(&["issues", "--all", "--sort-by", "rack:desc,when", arg(&list)]);
    let rows: Vec<String> = table
        .lines()
        .filter(|l| l.starts_with("│ ") && !l.starts_with("│ Machine"))
        .map(|l| l.split(['│', '┆']).nth(1).unwrap().trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    let ids: Vec<String> = want.iter().map(|w| w.0.clone()).collect();
    assert_eq!(rows, ids);
    let (code, _, stderr) = stdout_of(&["issues", "--sort-by", "bios", arg(&list)]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("sort key does not exist: bios (possible: id|partition|rack"),
        "{stderr}"
    );
}

#[test]
fn tz_takes_a_comma_list() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.txt");
    // XST is +0500 and YST -0300: read so, the Waiting (03:32 YST = 06:32Z) comes before the
    // PXE Booting (11:36 XST = 06:36Z), an unexpected pair at 06:36:15Z.
    std::fs::write(
        &path,
        "Mon, 22 Aug 2022 11:36:15 XST   PXE Booting   dhcp\nMon, 22 Aug 2022 03:32:44 YST   Waiting   waiting\n",
    )
    .unwrap();
    let report = |zones: &[&str]| {
        let mut args = vec!["report", "-o", "json"];
        for zone in zones {
            args.extend(["--tz", zone]);
        }
        args.push(arg(&path));
        let (code, report, _) = run_json(&args);
        assert_eq!(code, 0, "{zones:?}");
        report
    };
    let listed = report(&["XST=+0500,YST=-0300"]);
    assert_eq!(listed["unexpected"][0]["state"], "Waiting");
    assert_eq!(
        listed["unexpected"][0]["first_seen"],
        "2022-08-22T06:36:15Z"
    );
    assert_eq!(listed, report(&["XST=+0500", "YST=-0300"]));
}

#[test]
fn machine_id_on_a_file_that_names_its_machines_is_an_error_and_id_picks_them() {
    let list = testdata(LIST);
    // Before, the id was dropped without a word and all 12 machines printed.
    let (code, report, stderr) = run_json(&[
        "issues",
        "-o",
        "json",
        "--all",
        "--machine-id",
        "x",
        arg(&list),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("machines.json: --machine-id names the machine of")
            && stderr.contains("names its machines itself (use --id to pick machines)"),
        "{stderr}"
    );
    // The rest is still reported.
    assert_eq!(report["machines"].as_array().unwrap().len(), 12);
    // A file that does not name its machine takes the id.
    let (code, report, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        "--machine-id",
        "named-by-hand",
        arg(&testdata("seed-machine.txt")),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(report["unexpected"][0]["examples"][0], "named-by-hand");
    // --id picks machines, as metalctl's does.
    let (code, report, stderr) = run_json(&[
        "issues",
        "-o",
        "json",
        "--all",
        "--id",
        "476c0f23-364b-4fc2-8366-b0cab4f0896d",
        arg(&list),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let machines = report["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 1);
    assert_eq!(
        machines[0]["machine"],
        "476c0f23-364b-4fc2-8366-b0cab4f0896d"
    );
}
