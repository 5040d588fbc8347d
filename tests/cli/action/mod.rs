//! The GitHub Action: `action.yml` hands every input to `action/judge.sh` through its step's
//! env block, and the script run the way that step runs it gives fsmlog's verdicts (0, 1, 2),
//! writes the files it names in `$GITHUB_OUTPUT`, and appends the summary whatever the
//! verdict. The example workflows lint clean with actionlint and use only what the action
//! declares.

mod rules_mode;
mod workflows;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use regex::Regex;
use serde_json::Value;

use super::*;

/// What the runner itself provides to a step; everything else the script reads must come from
/// the step's env block.
const RUNNER_ENV: [&str; 3] = ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "RUNNER_TEMP"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn unquote(value: &str) -> String {
    let v = value.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_string();
        }
    }
    v.to_string()
}

/// The lines under `lines[at]`: those indented deeper than it, blank lines and comments left
/// out.
fn under(lines: &[String], at: usize) -> Vec<String> {
    let base = indent(&lines[at]);
    lines[at + 1..]
        .iter()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .take_while(|l| indent(l) > base)
        .cloned()
        .collect()
}

/// `key: value` of the lines at a block's own indentation (the first line's), in order.
fn keys(block: &[String]) -> Vec<(String, String, usize)> {
    let Some(first) = block.first() else {
        return Vec::new();
    };
    let level = indent(first);
    block
        .iter()
        .enumerate()
        .filter(|(_, l)| indent(l) == level)
        .map(|(i, l)| {
            let (k, v) = l.trim().split_once(':').unwrap_or((l.trim(), ""));
            (k.trim().to_string(), unquote(v), i)
        })
        .collect()
}

/// The items of a YAML list block, each with its `- ` turned into indentation.
fn items(block: &[String]) -> Vec<Vec<String>> {
    let mut items: Vec<Vec<String>> = Vec::new();
    let level = block.first().map_or(0, |l| indent(l));
    for line in block {
        if indent(line) == level && line.trim_start().starts_with("- ") {
            items.push(vec![line.replacen("- ", "  ", 1)]);
        } else if let Some(item) = items.last_mut() {
            item.push(line.clone());
        }
    }
    items
}

fn lines_of(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

/// The children of `key` in `block` (a key at the block's own indentation).
fn child(block: &[String], key: &str) -> Vec<String> {
    let (_, _, at) = keys(block)
        .into_iter()
        .find(|(k, _, _)| k == key)
        .unwrap_or_else(|| panic!("no {key}: in {block:#?}"));
    under(block, at)
}

/// action.yml, read as far as these tests need it.
struct Action {
    /// Input name → default (None: no default).
    inputs: BTreeMap<String, Option<String>>,
    /// Output name → its value expression.
    outputs: BTreeMap<String, String>,
    steps: Vec<Vec<String>>,
}

impl Action {
    fn load() -> Action {
        let lines = lines_of(&read(&root().join("action.yml")));
        let top: Vec<String> = lines
            .iter()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .cloned()
            .collect();
        let section = |name: &str| {
            let at = top
                .iter()
                .position(|l| l == &format!("{name}:"))
                .unwrap_or_else(|| panic!("action.yml has no {name}:"));
            under(&top, at)
        };
        let inputs_block = section("inputs");
        let inputs = keys(&inputs_block)
            .into_iter()
            .map(|(name, _, at)| {
                let fields = under(&inputs_block, at);
                let default = keys(&fields)
                    .into_iter()
                    .find(|(k, _, _)| k == "default")
                    .map(|(_, v, _)| v);
                (name, default)
            })
            .collect();
        let outputs_block = section("outputs");
        let outputs = keys(&outputs_block)
            .into_iter()
            .map(|(name, _, at)| {
                let fields = under(&outputs_block, at);
                let value = keys(&fields)
                    .into_iter()
                    .find(|(k, _, _)| k == "value")
                    .unwrap_or_else(|| panic!("output {name} has no value"))
                    .1;
                (name, value)
            })
            .collect();
        let runs = section("runs");
        let steps = items(&child(&runs, "steps"));
        Action {
            inputs,
            outputs,
            steps,
        }
    }

    /// The step that runs the script (`id: judge`).
    fn judge(&self) -> &[String] {
        self.steps
            .iter()
            .find(|s| keys(s).iter().any(|(k, v, _)| k == "id" && v == "judge"))
            .expect("a step with id: judge")
    }

    fn judge_run(&self) -> String {
        keys(self.judge())
            .into_iter()
            .find(|(k, _, _)| k == "run")
            .expect("the judge step's run:")
            .1
    }

    /// The judge step's env block: variable → value expression.
    fn judge_env(&self) -> BTreeMap<String, String> {
        keys(&child(self.judge(), "env"))
            .into_iter()
            .map(|(k, v, _)| (k, v))
            .collect()
    }

    /// The variable → input name of the judge step's env block.
    fn env_inputs(&self) -> BTreeMap<String, String> {
        let expr = Regex::new(r"^\$\{\{ inputs\.([a-z-]+) \}\}$").unwrap();
        self.judge_env()
            .into_iter()
            .map(|(var, value)| {
                let c = expr
                    .captures(&value)
                    .unwrap_or_else(|| panic!("{var}: {value} is not one input"));
                (var, c[1].to_string())
            })
            .collect()
    }
}

/// The environment variables the script reads (`$NAME`, `${NAME…}`); its own variables are
/// lower-case.
fn script_reads() -> BTreeSet<String> {
    let script = read(&root().join("action/judge.sh"));
    let var = Regex::new(r"\$\{?([A-Z][A-Z0-9_]*)").unwrap();
    var.captures_iter(&script)
        .map(|c| c[1].to_string())
        .collect()
}

/// The outputs the script writes (`output NAME …`, or `produces NAME FILE` for a file).
fn script_outputs() -> BTreeSet<String> {
    let script = read(&root().join("action/judge.sh"));
    let output = Regex::new(r"(?m)^\s*(?:output|produces) ([a-z][a-z-]*) ").unwrap();
    output
        .captures_iter(&script)
        .map(|c| c[1].to_string())
        .collect()
}

#[test]
fn the_step_passes_every_input_the_script_reads_and_nothing_else() {
    let action = Action::load();
    assert_eq!(
        action.judge_run(),
        r#"bash "$GITHUB_ACTION_PATH/action/judge.sh""#
    );
    let env = action.env_inputs();
    let passed: BTreeSet<&str> = env.values().map(String::as_str).collect();
    let declared: BTreeSet<&str> = action.inputs.keys().map(String::as_str).collect();
    assert_eq!(
        passed, declared,
        "every input, and only inputs, reach the script"
    );
    assert_eq!(env.len(), passed.len(), "one variable an input: {env:?}");
    let reads = script_reads();
    let provided: BTreeSet<String> = env
        .keys()
        .cloned()
        .chain(RUNNER_ENV.iter().map(|s| s.to_string()))
        .collect();
    assert!(
        reads.is_subset(&provided),
        "the script reads {:?}, which the step does not pass",
        reads.difference(&provided).collect::<Vec<_>>()
    );
    let unread: Vec<_> = env.keys().filter(|v| !reads.contains(*v)).collect();
    assert!(unread.is_empty(), "passed but never read: {unread:?}");
    assert_eq!(action.inputs["mode"], None, "mode has no default");
    assert_eq!(action.inputs["fleet"], None, "fleet has no default");

    // Outputs: each is the judge step's, and the script writes each.
    let written = script_outputs();
    for (name, value) in &action.outputs {
        assert_eq!(value, &format!("${{{{ steps.judge.outputs.{name} }}}}"));
        assert!(written.contains(name), "the script never writes {name}");
    }
    let declared: BTreeSet<String> = action.outputs.keys().cloned().collect();
    assert_eq!(written, declared);

    // No expression is spliced into a script: every run: block, inline or a block scalar.
    let lines = lines_of(&read(&root().join("action.yml")));
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start().trim_start_matches("- ");
        if let Some(value) = trimmed.strip_prefix("run:") {
            let script = [vec![value.to_string()], under(&lines, at)].concat();
            assert!(
                !script.iter().any(|l| l.contains("${{")),
                "action.yml:{}: an expression inside run:",
                at + 1
            );
        }
    }
    // The install step is the one the cache decides on.
    let install = action
        .steps
        .iter()
        .find(|s| s.iter().any(|l| l.contains("cargo install")))
        .expect("an install step");
    let install = install.join("\n");
    assert!(
        install.contains(r#"--path "$GITHUB_ACTION_PATH""#),
        "{install}"
    );
    assert!(install.contains("--locked"), "{install}");
    assert!(
        install.contains("if: steps.cache.outputs.cache-hit != 'true'"),
        "{install}"
    );
}

/// A runner's work area: RUNNER_TEMP, the workspace, and the step's summary and output files.
struct Runner {
    dir: tempfile::TempDir,
}

/// What one run of the judge step left.
struct Step {
    code: i32,
    stdout: String,
    stderr: String,
    summary: String,
    outputs: BTreeMap<String, String>,
}

const EARLIER: &str = "an earlier step's summary\n";

impl Runner {
    fn new() -> Runner {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["temp", "workspace", "home"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        Runner { dir }
    }

    fn temp(&self) -> PathBuf {
        self.dir.path().join("temp")
    }

    fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }

    /// Runs the judge step as the runner does: the step's `run:` under `bash -eo pipefail`,
    /// its env block filled from `inputs` (by input name) or the inputs' defaults, in the
    /// workspace, with fsmlog first on PATH. `base_ref` stands for `github.base_ref`.
    fn judge(&self, inputs: &[(&str, &str)], base_ref: &str, extra: &[(&str, &str)]) -> Step {
        let action = Action::load();
        let given: BTreeMap<&str, &str> = inputs.iter().copied().collect();
        for name in given.keys() {
            assert!(action.inputs.contains_key(*name), "no input {name}");
        }
        let summary = self.temp().join("step_summary.md");
        let output = self.temp().join("github_output");
        std::fs::write(&summary, EARLIER).unwrap();
        std::fs::write(&output, "").unwrap();
        let bin = assert_cmd::cargo::cargo_bin("fsmlog");
        let path = std::env::join_paths(
            std::iter::once(bin.parent().unwrap().to_path_buf())
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        let mut step = Process::new("bash");
        step.args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
            .arg(action.judge_run())
            .current_dir(self.workspace())
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.dir.path().join("home"))
            .env("TMPDIR", self.temp())
            .env("GITHUB_ACTION_PATH", root())
            .env("GITHUB_WORKSPACE", self.workspace())
            .env("RUNNER_TEMP", self.temp())
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_OUTPUT", &output);
        for (var, input) in action.env_inputs() {
            let value = match given.get(input.as_str()) {
                Some(v) => v.to_string(),
                None => {
                    let default = action.inputs[&input].clone().unwrap_or_default();
                    match default.as_str() {
                        "${{ github.base_ref }}" => base_ref.to_string(),
                        d => {
                            assert!(!d.contains("${{"), "{input}: cannot evaluate {d}");
                            default
                        }
                    }
                }
            };
            step.env(var, value);
        }
        for (k, v) in extra {
            step.env(k, v);
        }
        let out = step.output().unwrap();
        let written = read(&output);
        let outputs: BTreeMap<String, String> = written
            .lines()
            .map(|l| {
                let (k, v) = l.split_once('=').unwrap_or_else(|| panic!("{l}"));
                (k.to_string(), v.to_string())
            })
            .collect();
        assert_eq!(
            outputs.len(),
            written.lines().count(),
            "each output once: {written}"
        );
        let summary = read(&summary);
        assert!(
            summary.starts_with(EARLIER),
            "the summary is appended to: {summary}"
        );
        Step {
            code: out.status.code().unwrap(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
            summary: summary[EARLIER.len()..].to_string(),
            outputs,
        }
    }
}

impl Step {
    fn file(&self, output: &str) -> String {
        let path = self
            .outputs
            .get(output)
            .unwrap_or_else(|| panic!("no output {output}: {:?}", self.outputs));
        assert!(Path::new(path).is_absolute(), "{output}={path}");
        read(Path::new(path))
    }

    fn json(&self, output: &str) -> Value {
        let text = self.file(output);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{output}: {e}\n{text}"))
    }

    fn exit_code(&self) -> &str {
        self.outputs.get("exit-code").map_or("none", String::as_str)
    }

    fn context(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}\n--- stderr\n{}\n--- summary\n{}",
            self.code, self.stdout, self.stderr, self.summary
        )
    }
}

fn fleet_path(name: &str) -> String {
    testdata(name).to_str().unwrap().to_string()
}

/// The fleet's own pairs as a baseline, written by `fsmlog check --write-baseline`.
fn write_baseline(dir: &Path, fleet: &str) -> PathBuf {
    let baseline = dir.join("fsmlog-baseline.json");
    let out = fsmlog()
        .args(["check", fleet, "--write-baseline"])
        .arg(&baseline)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    baseline
}

#[test]
fn fleet_mode_writes_sarif_junit_and_markdown() {
    let runner = Runner::new();
    let gate = runner.workspace().join("gate");
    std::fs::create_dir(&gate).unwrap();
    let fleet = fleet_path("fleet-v0.42.2/list-json");
    let baseline = write_baseline(&gate, &fleet);
    let inputs = [
        ("mode", "fleet"),
        ("fleet", fleet.as_str()),
        ("working-directory", "gate"),
        ("baseline", "fsmlog-baseline.json"),
    ];
    let step = runner.judge(&inputs, "", &[("GITHUB_ACTIONS", "true")]);
    let ctx = step.context();
    assert_eq!(step.code, 0, "{ctx}");
    assert_eq!(step.exit_code(), "0");
    let sarif = step.json("sarif");
    assert_eq!(sarif["version"], "2.1.0", "{sarif}");
    let junit = step.file("junit");
    let doc = roxmltree::Document::parse(&junit).unwrap_or_else(|e| panic!("{e}\n{junit}"));
    assert!(
        doc.descendants().any(|n| n.has_tag_name("testcase")),
        "{junit}"
    );
    assert!(
        !doc.descendants().any(|n| n.has_tag_name("failure")),
        "{junit}"
    );
    let markdown = step.file("markdown");
    assert!(
        markdown.starts_with("## fsmlog check\n\npassed\n"),
        "{markdown}"
    );
    assert!(step.summary.contains(&markdown), "{ctx}");
    assert!(!step.stderr.contains("::error"), "{ctx}");

    // Drop an accepted pair: the gate fails on it, and every file still says so.
    let mut accepted: Value = serde_json::from_str(&read(&baseline)).unwrap();
    accepted["accepted"]
        .as_array_mut()
        .unwrap()
        .retain(|p| p["state"] != "Preparing");
    std::fs::write(&baseline, accepted.to_string()).unwrap();
    let step = runner.judge(&inputs, "", &[("GITHUB_ACTIONS", "true")]);
    let ctx = step.context();
    assert_eq!(step.code, 1, "{ctx}");
    assert_eq!(step.exit_code(), "1");
    assert!(
        step.summary.contains("FAILED: 1 pairs beyond the baseline"),
        "{ctx}"
    );
    assert!(
        step.summary
            .contains("| Preparing | Preparing | new | 24 | 3 |"),
        "{ctx}"
    );
    let junit = step.file("junit");
    let doc = roxmltree::Document::parse(&junit).unwrap_or_else(|e| panic!("{e}\n{junit}"));
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("failure"))
            .count(),
        1,
        "{junit}"
    );
    let sarif = step.json("sarif");
    let states: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["baselineState"].as_str())
        .collect();
    assert!(states.contains(&"new"), "{sarif}");
    // One annotation for the one violation, though check ran three times.
    assert_eq!(step.stderr.matches("::error").count(), 1, "{ctx}");

    // Without a baseline every unexpected pair fails; a baseline that is not there is an
    // input error.
    let bare = runner.judge(&inputs[..3], "", &[]);
    assert_eq!(bare.code, 1, "{}", bare.context());
    let missing = runner.judge(
        &[inputs[0], inputs[1], inputs[2], ("baseline", "nope.json")],
        "",
        &[],
    );
    assert_eq!(missing.code, 2, "{}", missing.context());
    assert_eq!(missing.exit_code(), "2");
    // A baseline that does not parse: check writes no report, the summary says so.
    std::fs::write(&baseline, "{\"rules\": 1").unwrap();
    let broken = runner.judge(&inputs, "", &[]);
    let ctx = broken.context();
    assert_eq!(broken.code, 2, "{ctx}");
    assert!(broken.stderr.contains("fsmlog-baseline.json:1"), "{ctx}");
    assert!(
        broken
            .summary
            .contains("## fsmlog check\n\nfsmlog wrote no report (exit 2)"),
        "{ctx}"
    );
    assert!(
        !broken.outputs.contains_key("sarif"),
        "an empty SARIF is no output: {ctx}"
    );
    assert!(!broken.outputs.contains_key("junit"), "{ctx}");
}

#[test]
fn fleet_mode_never_passes_a_fleet_of_unknown_events() {
    let runner = Runner::new();
    let fleet = runner.workspace().join("unknown.json");
    std::fs::write(
        &fleet,
        r#"[{"uuid": "m1", "recentProvisioningEvents": {"events": [{"time": "2025-09-24T10:00:00Z", "event": 12}, {"time": "2025-09-24T10:01:00Z", "event": "Bogus"}]}}]"#,
    )
    .unwrap();
    let step = runner.judge(&[("mode", "fleet"), ("fleet", arg(&fleet))], "", &[]);
    let ctx = step.context();
    assert_eq!(step.code, 2, "{ctx}");
    assert_eq!(step.exit_code(), "2");
    assert!(
        step.summary
            .contains("FAILED: no event read is one of metal-api's"),
        "{ctx}"
    );
}
