//! The gate's SARIF as GitHub's own validator takes it: every rule it checks passes, and each
//! result points at the line it is about.
use std::path::{Path, PathBuf};

use serde_json::Value;

use std::process::{Command as Process, Stdio};

use super::*;

// 8. SARIF that GitHub accepts.

/// Microsoft's SARIF Multitool, which `.ci/run` installs under `target/tools`.
fn multitool() -> Option<PathBuf> {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tools/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
    if tool.exists() {
        return Some(tool);
    }
    crate::skipped("the SARIF Multitool (npm, target/tools)");
    None
}

#[test]
fn sarif_passes_githubs_rules_and_points_at_lines() {
    let Some(tool) = multitool() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(testdata(LIST), d.join("fleet.json")).unwrap();
    std::fs::copy(testdata("gate/new-pair.txt"), d.join("new.txt")).unwrap();
    let run = |args: &[&str]| fsmlog().current_dir(d).args(args).output().unwrap();
    run(&["check", "fleet.json", "--write-baseline", "baseline.json"]);
    let output = run(&[
        "check",
        "fleet.json",
        "new.txt",
        "--baseline",
        "baseline.json",
        "-o",
        "sarif",
    ]);
    assert_eq!(output.status.code(), Some(1));
    std::fs::write(d.join("f.sarif"), &output.stdout).unwrap();
    let status = Process::new(&tool)
        .current_dir(d)
        .args([
            "validate",
            "f.sarif",
            "--rule-kind",
            "Gh;Sarif",
            "--output",
            "report.sarif",
        ])
        .args(["--log", "ForceOverwrite"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let findings: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("report.sarif")).unwrap()).unwrap();
    let findings: Vec<String> = findings["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{} {}", r["ruleId"], r["message"]))
        .collect();
    assert!(findings.is_empty(), "{findings:#?}");
    // Each result points at a file and line that exist.
    let sarif: Value = serde_json::from_slice(&output.stdout).unwrap();
    for result in sarif["runs"][0]["results"].as_array().unwrap() {
        let location = &result["locations"][0]["physicalLocation"];
        let uri = location["artifactLocation"]["uri"].as_str().unwrap();
        let line = location["region"]["startLine"].as_u64().unwrap() as usize;
        let text = std::fs::read_to_string(d.join(uri)).unwrap();
        let shown = text.lines().nth(line - 1).unwrap();
        if result["baselineState"] == "new" {
            // The pair's first occurrence: for Installing in PXE Booting the first of its two
            // rows, not the later one.
            assert_eq!(uri, "new.txt");
            assert!(
                shown.contains(result["properties"]["event"].as_str().unwrap()),
                "{shown}"
            );
            if result["properties"]["state"] == "PXE Booting" {
                assert!(shown.contains("08:10:00"), "{shown}");
            }
        } else {
            assert_eq!(uri, "baseline.json");
            assert!(
                shown.contains(result["properties"]["state"].as_str().unwrap()),
                "{shown}"
            );
        }
    }
}
