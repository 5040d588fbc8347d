//! The shipped alert rules (`deploy/prometheus/`) load in promtool, pass their own `promtool
//! test rules` cases, and name only families and labels fsmlog writes.

use super::*;

fn deploy(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/prometheus")
        .join(name)
}

#[test]
fn the_alert_rules_name_what_fsmlog_writes() {
    let rules = std::fs::read_to_string(deploy("fsmlog-alerts.yaml")).unwrap();
    // Every family the rules name is one fsmlog writes: the gate's in check's file, the
    // fleet's in report's, the machines' in issues'.
    let seed = testdata("seed-machine.txt");
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (_, gate, _) = stdout_of(&["check", "-o", "openmetrics", arg(&seed)]);
    let (_, report, _) = stdout_of(&["report", "-o", "openmetrics", arg(&seed)]);
    let (_, issues, _) = stdout_of(&["issues", "-o", "openmetrics", arg(&fleet)]);
    let text = gate + &report + &issues;
    for name in [
        "fsmlog_gate_passed",
        "fsmlog_unexpected_machines",
        "fsmlog_unexpected_verdict_info",
        "metal_machine_issues",
        "metal_machine_allocation_info",
    ] {
        assert!(
            rules.contains(name) && text.contains(&format!("# TYPE {name} gauge")),
            "{name}"
        );
    }
    let (samples, _) = parse(&issues);
    let info = of(&samples, "metal_machine_allocation_info");
    assert_eq!(info.len(), 12, "{issues}");
    for label in ["machineid", "partition", "machinename"] {
        assert!(rules.contains(label), "{label}");
        assert!(info.iter().all(|s| s.labels.contains_key(label)), "{label}");
    }
    // The report's file is the one whose age the stale alert reads.
    assert!(rules.contains(r#"fsmlog-report\\.prom"#), "{rules}");
    // The docs point at the file rather than keep a copy that could drift.
    for doc in ["docs/metrics.md", "docs/ci.md"] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(doc)).unwrap();
        assert!(
            text.contains("deploy/prometheus/fsmlog-alerts.yaml"),
            "{doc}"
        );
        assert!(
            !text.contains("alert: Fsmlog"),
            "{doc} keeps a copy of a rule"
        );
    }
}

#[test]
fn the_alert_rules_load_and_pass_their_promtool_tests() {
    if !have_promtool() {
        return;
    }
    promtool_rules_pass(&deploy(""), "fsmlog-alerts.yaml", "fsmlog-alerts.test.yaml");
}
