//! The alert rules the docs show load in promtool, and name families and labels fsmlog writes.

use super::*;

#[test]
fn the_alert_rules_in_the_ci_recipe_load() {
    if !have_promtool() {
        return;
    }
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let rules = ci
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("an alert rule block in docs/ci.md");
    assert!(rules.contains("fsmlog_gate_passed"), "{rules}");
    promtool_loads(rules);
    // Every family the rules name is one fsmlog writes: the gate's in check's file, the
    // fleet's in report's.
    let seed = testdata("seed-machine.txt");
    let (_, gate, _) = stdout_of(&["check", "-o", "openmetrics", arg(&seed)]);
    let (_, fleet, _) = stdout_of(&["report", "-o", "openmetrics", arg(&seed)]);
    let text = gate + &fleet;
    for name in [
        "fsmlog_gate_passed",
        "fsmlog_unexpected_machines",
        "fsmlog_unexpected_verdict_info",
        "fsmlog_newest_event_timestamp_seconds",
    ] {
        assert!(
            rules.contains(name) && text.contains(&format!("# TYPE {name} gauge")),
            "{name}"
        );
    }
}

#[test]
fn the_alert_rules_that_join_the_machine_families_load() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md"))
            .unwrap();
    let rules = doc
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("an alert rule block in docs/metrics.md");
    // The families they join are issues' own, with the labels they name.
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (_, text, _) = stdout_of(&["issues", "-o", "openmetrics", arg(&fleet)]);
    let (samples, _) = parse(&text);
    let info = of(&samples, "metal_machine_allocation_info");
    assert_eq!(info.len(), 12, "{text}");
    for label in ["machineid", "partition", "machinename"] {
        assert!(rules.contains(label), "{label}");
        assert!(info.iter().all(|s| s.labels.contains_key(label)), "{label}");
    }
    for name in ["metal_machine_issues", "metal_machine_allocation_info"] {
        assert!(rules.contains(name) && text.contains(&format!("# TYPE {name} gauge")));
    }
    if !have_promtool() {
        return;
    }
    promtool_loads(rules);
}

/// Asserts that promtool loads an alert rule file.
fn promtool_loads(rules: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.yml");
    std::fs::write(&file, rules).unwrap();
    let out = Process::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
