//! The metrics as a textfile directory and an alert see them: metal-metrics-exporter's
//! values, and each family written by one command only.

use super::*;

#[test]
fn the_last_errors_are_judged_with_the_exporters_hour() {
    // On the bundled fleet 8 machines had a last error within metal-api's 7 days, none within
    // the hour metal-metrics-exporter asks for: an alert on the exporter's series stays quiet,
    // and so must one on fsmlog's.
    let fleet = testdata("fleet-v0.42.2/list-json");
    let last_errors = |extra: &[&str]| -> usize {
        let mut args = vec!["issues", "-o", "openmetrics", "--only", "last-event-error"];
        args.extend_from_slice(extra);
        args.push(arg(&fleet));
        let (_, text, _) = stdout_of(&args);
        let (samples, _) = parse(&text);
        of(&samples, "metal_machine_issues")
            .iter()
            .filter(|s| s.value == 1.0)
            .count()
    };
    assert_eq!(last_errors(&[]), 0);
    assert_eq!(last_errors(&["--last-error-threshold", "7d"]), 8);
    // Every other output keeps metal-api's 7 days.
    let (_, json, _) = run_json(&[
        "issues",
        "-o",
        "json",
        "--only",
        "last-event-error",
        arg(&fleet),
    ]);
    assert_eq!(json["machines"].as_array().unwrap().len(), 8, "{json}");
}

#[test]
fn report_check_and_issues_share_a_textfile_directory_without_repeating_a_series() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.42.2/list-json");
    let baseline = dir.path().join("baseline.json");
    let (code, _, _) = stdout_of(&["check", arg(&fleet), "--write-baseline", arg(&baseline)]);
    assert_eq!(code, 0);
    let textfiles = dir.path().join("textfiles");
    std::fs::create_dir(&textfiles).unwrap();
    let mut families: BTreeMap<String, String> = BTreeMap::new();
    let mut series = std::collections::BTreeSet::new();
    for (file, args) in [
        (
            "fsmlog_report.prom",
            vec!["report", "-o", "openmetrics", arg(&fleet)],
        ),
        (
            "fsmlog_check.prom",
            vec![
                "check",
                "-o",
                "openmetrics",
                "--baseline",
                arg(&baseline),
                arg(&fleet),
            ],
        ),
        (
            "fsmlog_issues.prom",
            vec!["issues", "-o", "openmetrics", arg(&fleet)],
        ),
    ] {
        let (_, text, _) = stdout_of(&args);
        std::fs::write(textfiles.join(file), &text).unwrap();
        let (samples, help) = parse(&text);
        // Each family belongs to one command.
        for name in help.keys() {
            if let Some(other) = families.insert(name.clone(), file.to_string()) {
                panic!("{name} in {other} and {file}");
            }
        }
        for s in samples {
            assert!(
                series.insert((s.name.clone(), s.labels.clone())),
                "{file}: {s:?}"
            );
        }
    }
    if have_promtool() {
        for entry in std::fs::read_dir(&textfiles).unwrap() {
            let path = entry.unwrap().path();
            let out = std::process::Command::new("promtool")
                .args(["check", "metrics"])
                .stdin(std::fs::File::open(&path).unwrap())
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() || only_the_exporters_label_names(&said),
                "{}: {said}",
                path.display(),
            );
        }
    }
}

#[test]
fn the_allocation_info_is_the_exporters_for_every_machine_object() {
    // Each machine of the fixture worked out by hand from metal-metrics-exporter's
    // collector.go: placeholders where there is no allocation, AVAILABLE for an empty state,
    // tags cut at their first `=` (the last of a key winning) and read only of an allocated
    // machine. The table's machine (testdata/seed-machine.txt) has no machine object: no
    // series.
    let want = |id: &str, partition, name, cluster, asn, role, state, image| {
        let labels: BTreeMap<String, String> = [
            ("machineid", id),
            ("partition", partition),
            ("machinename", name),
            ("clusterTag", cluster),
            ("primaryASN", asn),
            ("role", role),
            ("state", state),
            ("imageId", image),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        (id.to_string(), labels)
    };
    let na = "NOTALLOCATED";
    let expected: BTreeMap<String, BTreeMap<String, String>> = [
        want(
            "m-locked",
            "fra-equ01",
            "fw-1",
            "c-2",
            "4200000001",
            "firewall",
            "LOCKED",
            "firewall-ubuntu-3.0",
        ),
        want("m-reserved", "fra-equ01", na, na, na, "", "RESERVED", na),
        want(
            "m-bare",
            "fra-equ02",
            "",
            "a=b",
            "",
            "machine",
            "AVAILABLE",
            na,
        ),
        // A line feed and an escape in a hostname are shown escaped, as in every output.
        want(
            "m-hostile",
            "",
            "evil\"\\u{a}name\\u{1b}[31m",
            na,
            na,
            "",
            "AVAILABLE",
            na,
        ),
    ]
    .into_iter()
    .collect();
    let pretty = testdata("metrics/allocations.json");
    let dir = tempfile::tempdir().unwrap();
    let compact = dir.path().join("compact.json");
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&pretty).unwrap()).unwrap();
    std::fs::write(&compact, serde_json::to_vec(&value).unwrap()).unwrap();
    // Read skimmed or directly (JSON), and through serde (YAML).
    let yaml = testdata("metrics/allocations.yaml");
    let table = testdata("seed-machine.txt");
    for fleet in [&pretty, &compact, &yaml] {
        let (code, text, _) = stdout_of(&["issues", "-o", "openmetrics", arg(fleet), arg(&table)]);
        assert_eq!(code, 0);
        let (samples, help) = parse(&text);
        assert_eq!(
            help["metal_machine_allocation_info"],
            "Provide information about the machine allocation"
        );
        let got: BTreeMap<String, BTreeMap<String, String>> =
            of(&samples, "metal_machine_allocation_info")
                .into_iter()
                .map(|s| {
                    assert_eq!(s.value, 1.0);
                    (s.labels["machineid"].clone(), s.labels.clone())
                })
                .collect();
        assert_eq!(got, expected, "{}", fleet.display());
        // Every machine read is in the issue families, the table's too.
        assert!(
            of(&samples, "metal_machine_issues")
                .iter()
                .any(|s| !expected.contains_key(&s.labels["machineid"])),
            "{text}"
        );
        if have_promtool() {
            promtool_accepts(&text, &fleet.display().to_string());
        }
    }
}
