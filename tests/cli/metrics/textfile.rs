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
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
