//! What every test of the binary shares: where the test data is, how the binary is run and
//! its answer read, and the tools some tests need (skipped where a machine lacks them).

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use assert_cmd::Command;
use fsmlog::sim::fleet;
use saphyr_parser::{Event, Parser, ScalarStyle};
use serde_json::{Map, Value};

pub const RULE_SETS: [&str; 3] = [
    "metal-api-v0.19.0",
    "metal-api-v0.19.3",
    "metal-api-v0.42.2",
];
pub const FLEETS: [&str; 2] = ["fleet-v0.19.0", "fleet-v0.42.2"];

pub fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

pub fn fsmlog() -> Command {
    Command::cargo_bin("fsmlog").unwrap()
}

/// Runs `fsmlog ARGS…` and returns (exit code, stdout as JSON, stderr).
pub fn run_json(args: &[&str]) -> (i32, Value, String) {
    let output = fsmlog().args(args).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|err| panic!("stdout is not JSON ({err}): {stdout}"));
    let stderr = String::from_utf8(output.stderr).unwrap();
    (output.status.code().unwrap(), json, stderr)
}

/// (state, event, count, machines) of a report's or an expected file's pair list.
pub fn pairs(list: &Value) -> Vec<(String, String, u64, u64)> {
    let mut pairs: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["state"].as_str().unwrap().to_string(),
                p["event"].as_str().unwrap().to_string(),
                p["count"].as_u64().unwrap(),
                p["machines"].as_u64().unwrap(),
            )
        })
        .collect();
    pairs.sort();
    pairs
}

/// Sums `inputs` into (read, replayed + rejected + unknown + duplicates).
pub fn accounting(report: &Value) -> (u64, u64) {
    let inputs = &report["inputs"];
    let unknown: u64 = inputs["unknown_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["count"].as_u64().unwrap())
        .sum();
    (
        inputs["events"].as_u64().unwrap(),
        inputs["replayed"].as_u64().unwrap()
            + inputs["rejected"].as_u64().unwrap()
            + unknown
            + inputs["duplicates"].as_u64().unwrap(),
    )
}

/// Runs `fsmlog ARGS…` and returns (exit code, stdout, stderr).
pub fn stdout_of(args: &[&str]) -> (i32, String, String) {
    let output = fsmlog().args(args).output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// An `events.go` in the shape metal-api's has (every release from v0.19.0 on: the constant,
/// `Events()` returning one literal, a function after it that uses the constant), written from
/// a rule file's rows.
pub fn events_go(rules: &str) -> String {
    let (_, exported, _) = stdout_of(&["rules", "export", rules]);
    let file: Value = serde_json::from_str(&exported).unwrap();
    let ident = |name: &str| name.replace(' ', "");
    let mut go = String::from(
        "package fsm\n\nimport (\n\t\"context\"\n\n\t\"github.com/looplab/fsm\"\n)\n\nconst SelfTransitionState = \"self_transition\"\n\n// Events are the transitions.\nfunc Events() fsm.Events {\n\treturn fsm.Events{\n",
    );
    for row in file["transitions"].as_array().unwrap() {
        go.push_str("\t\t{\n");
        go.push_str(&format!(
            "\t\t\tName: metal.ProvisioningEvent{}.String(), // {}\n",
            ident(row["event"].as_str().unwrap()),
            "a comment"
        ));
        let from: Vec<&str> = row["from"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        if from == ["*"] {
            go.push_str("\t\t\tSrc:  states.AllStateNames(),\n");
        } else {
            go.push_str("\t\t\tSrc: []string{\n");
            for state in from {
                go.push_str(&format!("\t\t\t\tstates.{}.String(),\n", ident(state)));
            }
            go.push_str("\t\t\t},\n");
        }
        match row["to"].as_str().unwrap() {
            "self" => go.push_str("\t\t\tDst: SelfTransitionState,\n"),
            state => go.push_str(&format!("\t\t\tDst: states.{}.String(),\n", ident(state))),
        }
        go.push_str("\t\t},\n");
    }
    go.push_str("\t}\n}\n");
    go.push_str(
        "\nfunc eventCallbacks() fsm.Callbacks {\n\treturn fsm.Callbacks{\n\t\t\"enter_\" + SelfTransitionState: func(ctx context.Context, e *fsm.Event) {},\n\t}\n}\n",
    );
    go
}

/// A generated fleet of `machines`, as `metalctl machine list -o json` would export it.
pub fn generated_fleet(dir: &Path, machines: u64, seed: u64, events: usize) -> PathBuf {
    generated_fleet_under("metal-api", dir, machines, seed, events)
}

/// A generated fleet whose events metal-api stored under `rules`.
pub fn generated_fleet_under(
    rules: &str,
    dir: &Path,
    machines: u64,
    seed: u64,
    events: usize,
) -> PathBuf {
    let rules = fsmlog::Ruleset::resolve(rules).unwrap();
    let file = dir.join("fleet.json");
    let out = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    let mut exporter = fsmlog::Exporter::new(fsmlog::Layout::ListJson, out);
    for index in 0..machines {
        let m = fleet::machine(seed, index, events, &rules);
        exporter.machine(&m.id, &m.container).unwrap();
    }
    exporter.finish().unwrap();
    file
}

/// Runs `git ARGS…` in `repo`, with an identity and without the machine's own git config.
pub fn git(repo: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=fsmlog",
            "-c",
            "user.email=fsmlog@example.invalid",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A path as the `&str` an argument list of `&str` takes (every path a test makes is UTF-8).
pub fn arg<P: AsRef<Path> + ?Sized>(p: &P) -> &str {
    p.as_ref().to_str().unwrap()
}

pub fn tools() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools")
}

/// Whether a checker is there; in CI (`FSMLOG_REQUIRE_TOOLS`) it must be.
pub fn have(what: &str, present: bool) -> bool {
    if !present {
        skipped(what);
    }
    present
}

/// Fails where CI requires every checker; elsewhere says on the test output that the calling
/// test is skipped and why. Written to the process's stderr, not through `eprintln!`, which the
/// test harness swallows for a test that passes.
pub fn skipped(what: &str) {
    assert!(
        std::env::var_os("FSMLOG_REQUIRE_TOOLS").is_none(),
        "{what} is missing; .ci/run installs it"
    );
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let line = format!("skipped: {test}: {what} is not installed (see .ci/run)\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

pub fn on_path(program: &str) -> bool {
    Process::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether promtool is there (skipped, or failed in CI, where it is not).
pub fn have_promtool() -> bool {
    have(
        "promtool (Debian's prometheus package)",
        on_path("promtool"),
    )
}

/// `promtool check rules RULES` and `promtool test rules TESTS` in `dir`, each passing.
pub fn promtool_rules_pass(dir: &Path, rules: &str, tests: &str) {
    for args in [["check", "rules", rules], ["test", "rules", tests]] {
        let out = Process::new("promtool")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| on_path(c))
}

/// Runs a command line in a pseudo-terminal (util-linux `script`), so that fsmlog sees a
/// terminal on stdout; returns what the terminal shows, lines without their `\r`.
pub fn on_terminal(columns: usize, args: &[&str], env: &[(&str, &str)]) -> String {
    let bin = assert_cmd::cargo::cargo_bin("fsmlog");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let command = format!("'{}' {}", bin.display(), quoted.join(" "));
    let mut script = Process::new("script");
    script
        .args(["-qec", &command, "/dev/null"])
        .env("COLUMNS", columns.to_string())
        .env_remove("NO_COLOR")
        .current_dir(testdata(""));
    for (key, value) in env {
        script.env(key, value);
    }
    let output = script.output().unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .replace("\r\n", "\n")
}

/// `fsmlog report -o json PATHS…`, which must exit 0.
pub fn report_of(paths: &[&str]) -> Value {
    let mut args = vec!["report", "-o", "json"];
    args.extend_from_slice(paths);
    let (code, json, stderr) = run_json(&args);
    assert_eq!(code, 0, "{stderr}");
    json
}

/// Runs fsmlog with its address space capped at 1 GiB: (exit code, stdout, stderr).
pub fn capped(args: &[&str]) -> (Option<i32>, String, String) {
    let bin = assert_cmd::cargo::cargo_bin("fsmlog");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 1048576; exec \"$0\" \"$@\"")
        .arg(bin)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `text` to `dir/name`.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The bundled v0.42.2 list export.
pub const LIST: &str = "fleet-v0.42.2/list-json/machines.json";

/// The bundled v0.42.2 fleet as `metalctl machine logs` tables.
pub const TEXT_DIR: &str = "fleet-v0.42.2/text";

/// Runs `fsmlog ARGS…` with `stdin` and returns (exit code, stdout as JSON, stderr).
pub fn run_json_stdin(args: &[&str], stdin: &[u8]) -> (i32, Value, String) {
    let output = fsmlog().args(args).write_stdin(stdin).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|err| panic!("stdout is not JSON ({err}): {stdout}"));
    (
        output.status.code().unwrap(),
        json,
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// A YAML document read into JSON values: a quoted scalar is a string, a plain one the JSON
/// literal it spells (YAML 1.2's core schema reads numbers, booleans and null so).
pub fn yaml_value(text: &str) -> Value {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<(Value, Option<String>)> = Vec::new();
    let mut root = None;
    while let Some(event) = parser.next_event() {
        let (event, _) = event.unwrap();
        let value = match event {
            Event::SequenceStart(..) => {
                stack.push((Value::Array(Vec::new()), None));
                continue;
            }
            Event::MappingStart(..) => {
                stack.push((Value::Object(Map::new()), None));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => stack.pop().unwrap().0,
            Event::Scalar(text, ScalarStyle::Plain, ..) => {
                serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.into_owned()))
            }
            Event::Scalar(text, ..) => Value::String(text.into_owned()),
            _ => continue,
        };
        match stack.last_mut() {
            None => root = Some(value),
            Some((Value::Array(items), _)) => items.push(value),
            Some((Value::Object(map), key)) => match key.take() {
                Some(k) => {
                    map.insert(k, value);
                }
                None => *key = Some(value.as_str().unwrap().to_string()),
            },
            _ => unreachable!(),
        }
    }
    root.unwrap()
}
