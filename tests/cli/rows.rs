//! metalctl's ways of feeding a loop: `-o template --template '{{ .id }}'` and `--no-headers`,
//! each checked row by row against the command's `-o json`, and text from input escaped on
//! the way.

use serde_json::Value;

use super::*;

const FLEET: &str = "fleet-v0.42.2/list-json";

/// stdout of a run that must exit 0 (`check` and `diff`, whose gates fail here, 1).
fn ok(args: &[&str]) -> String {
    let (code, out, stderr) = stdout_of(args);
    let gate = i32::from(["check", "diff"].contains(&args[0]));
    assert_eq!(code, gate, "{args:?}: {stderr}");
    out
}

/// `-o json` of a command line.
fn json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.extend(["-o", "json"]);
    serde_json::from_str(&ok(&args)).unwrap()
}

/// `-o template --template TEMPLATE` of a command line, its lines.
fn template(args: &[&str], template: &str) -> Vec<String> {
    let mut args = args.to_vec();
    args.extend(["-o", "template", "--template", template]);
    ok(&args).lines().map(str::to_string).collect()
}

fn strings(rows: &Value, key: &str) -> Vec<String> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| r[key].as_str().unwrap().to_string())
        .collect()
}

fn pair_names(rows: &Value) -> Vec<String> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r["state"].as_str().unwrap(),
                r["event"].as_str().unwrap()
            )
        })
        .collect()
}

/// A describe export of one machine whose id and message hold a terminal's control
/// sequences and a right-to-left override.
fn hostile_machine(dir: &std::path::Path) -> std::path::PathBuf {
    write(
        dir,
        "hostile.json",
        r#"{"id": "m-1\u001b[2J\u202e", "allocation": null, "events": {"log": [
  {"time": "2025-09-10T10:05:00Z", "event": "PXE Booting", "message": "again \u001b]0;owned\u0007 \u009b31m"},
  {"time": "2025-09-10T10:00:00Z", "event": "Waiting", "message": "waiting for allocation"}
], "last_event_time": "2025-09-10T10:05:00Z", "last_error_event": null, "crash_loop": false, "failed_machine_reclaim": false}}"#,
    )
}

fn no_raw_controls(text: &str) {
    for c in text.chars() {
        assert!(
            c == '\n' || !(c.is_control() || matches!(c, '\u{202a}'..='\u{202e}')),
            "raw {c:?} in {text:?}"
        );
    }
}

#[test]
fn template_lines_are_the_json_rows() {
    let fleet = testdata(FLEET);
    let fleet = arg(&fleet);
    // issues: a machine per row, `{{ .id }}` as in metalctl (and `.machine`, fsmlog's name).
    let issues = json(&["issues", "--all", fleet]);
    let ids = strings(&issues["machines"], "id");
    assert_eq!(ids, strings(&issues["machines"], "machine"));
    assert_eq!(ids.len(), 12);
    assert_eq!(template(&["issues", "--all", fleet], "{{ .id }}"), ids);
    assert_eq!(template(&["issues", "--all", fleet], "{{ .machine }}"), ids);
    // `range` and `printf` over a row's nested list, as operators write them.
    let counted: Vec<String> = issues["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let types: Vec<&str> = m["issues"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["type"].as_str().unwrap())
                .collect();
            format!(
                "{} {} {}",
                m["id"].as_str().unwrap(),
                types.len(),
                types.join(",")
            )
        })
        .collect();
    assert_eq!(
        template(
            &["issues", "--all", fleet],
            r#"{{ printf "%s %d" .id (len .issues) }} {{ range $i, $x := .issues }}{{ if $i }},{{ end }}{{ $x.type }}{{ end }}"#
        ),
        counted
    );
    // report and explain: a pair per row.
    let report = json(&["report", fleet]);
    assert_eq!(pair_names(&report["unexpected"]).len(), 2);
    assert_eq!(
        template(&["report", fleet], "{{ .state }}/{{ .event }}"),
        pair_names(&report["unexpected"])
    );
    let counts: Vec<String> = report["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{} {}", p["count"], p["verdict"]["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        template(&["report", fleet], "{{ .count }} {{ .verdict.kind }}"),
        counts
    );
    let explain = json(&["explain", fleet]);
    assert_eq!(
        template(&["explain", fleet], "{{ .state }}/{{ .event }}"),
        pair_names(&explain["pairs"])
    );
    // check: a pair per row.
    let check = json(&["check", fleet]);
    assert_eq!(
        template(&["check", fleet], "{{ .state }}/{{ .event }}"),
        pair_names(&check["pairs"])
    );
    // replay: a machine per row, as `-o ndjson` has them.
    let seed = testdata("seed-machine.txt");
    let replay: Vec<Value> = ok(&["replay", "-o", "ndjson", arg(&seed), fleet])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replay.len(), 13);
    let steps: Vec<String> = replay
        .iter()
        .map(|m| {
            format!(
                "{} {}",
                m["id"].as_str().unwrap(),
                m["steps"].as_array().unwrap().len()
            )
        })
        .collect();
    assert_eq!(
        template(&["replay", arg(&seed), fleet], "{{ .id }} {{ len .steps }}"),
        steps
    );
    // diff: one document, once.
    let args = [
        "diff",
        "--old",
        "metal-api",
        "--new",
        "metal-api-v0.19.0",
        fleet,
    ];
    let diff = json(&args);
    let regressions = pair_names(&diff["newly_unexpected"]);
    assert_eq!(regressions.len(), 1);
    assert_eq!(
        template(
            &args,
            r#"{{ range .newly_unexpected }}{{ .state }}/{{ .event }}{{ printf "\n" }}{{ end }}{{ len .newly_expected }}"#
        ),
        [regressions, vec!["0".to_string()]].concat()
    );
}

#[test]
fn a_row_whose_template_prints_nothing_has_no_line() {
    let fleet = testdata(FLEET);
    let lines = template(
        &["report", arg(&fleet)],
        r#"{{ if eq .state "Waiting" }}{{ .event }}{{ end }}"#,
    );
    assert_eq!(lines, ["PXE Booting"]);
}

#[test]
fn template_mistakes_are_usage_errors() {
    let fleet = testdata(FLEET);
    let fleet = arg(&fleet);
    let cases: [(&[&str], &str); 5] = [
        (
            &["issues", "-o", "template", fleet],
            "-o template needs --template",
        ),
        (
            &["issues", "--template", "{{ .id }}", fleet],
            "--template is for -o template",
        ),
        (
            &["graph", "--template", "{{ .id }}", fleet],
            "--template is for -o template",
        ),
        (
            &["issues", "-o", "template", "--template", "{{ .id ", fleet],
            "--template: template: t:1",
        ),
        // Runs, then fails on the first row.
        (
            &[
                "report",
                "-o",
                "template",
                "--template",
                "{{ index .state 99 }}",
                fleet,
            ],
            "--template: ",
        ),
    ];
    for (args, message) in cases {
        let (code, out, stderr) = stdout_of(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("fsmlog: {message}")),
            "{args:?}: {stderr}"
        );
        assert!(out.is_empty(), "{args:?}: {out}");
    }
    // A global option before the command keeps its value: the template is not the command.
    let ids = template(&["issues", fleet], "{{ .id }}");
    let before = ok(&["--template", "{{ .id }}", "issues", "-o", "template", fleet]);
    assert_eq!(before.lines().collect::<Vec<_>>(), ids);
}

#[test]
fn text_from_input_reaches_the_template_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = hostile_machine(dir.path());
    let path = arg(&path);
    let issues = json(&["issues", "--all", path]);
    assert_eq!(issues["machines"][0]["id"], "m-1\u{1b}[2J\u{202e}");
    let lines = template(&["issues", "--all", path], "{{ .id }}");
    assert_eq!(lines, ["m-1\\u{1b}[2J\\u{202e}"]);
    let out = template(
        &["replay", path],
        "{{ .id }} {{ range .steps }}{{ .message }}|{{ end }}",
    );
    assert_eq!(
        out,
        ["m-1\\u{1b}[2J\\u{202e} waiting for allocation|again \\u{1b}]0;owned\\u{7} \\u{9b}31m|"]
    );
    no_raw_controls(&out.join("\n"));
    // --no-headers shows them as the tables do.
    for command in [vec!["issues", "--all", path], vec!["replay", path]] {
        let mut args = command.clone();
        args.push("--no-headers");
        let rows = ok(&args);
        no_raw_controls(&rows);
        assert!(rows.starts_with("m-1\\u{1b}[2J\\u{202e}  "), "{rows}");
    }
}

/// The columns of a `--no-headers` line: cells are separated by at least two spaces.
fn cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

fn rows_alone(text: &str) {
    for border in ['│', '─', '┌', '└', '├', '╞', '═'] {
        assert!(!text.contains(border), "{border} in {text}");
    }
    assert!(!text.contains("rules "), "the summary line in {text}");
    assert!(!text.contains("(times in UTC)"), "a heading in {text}");
    assert!(!text.lines().any(|l| l.trim().is_empty()), "{text}");
}

#[test]
fn no_headers_prints_the_rows_alone_one_line_each() {
    let fleet = testdata(FLEET);
    let fleet = arg(&fleet);
    // issues: a line per issue, the machine first, every line whole.
    let issues = json(&["issues", "--all", fleet]);
    let expected: Vec<String> = issues["machines"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| {
            let n = m["issues"].as_array().unwrap().len().max(1);
            vec![m["id"].as_str().unwrap().to_string(); n]
        })
        .collect();
    let rows = ok(&["issues", "--all", "--no-headers", fleet]);
    rows_alone(&rows);
    let first: Vec<&str> = rows.lines().map(|l| cells(l)[0]).collect();
    assert_eq!(first, expected);
    // As metalctl's, awk's first field is the id.
    assert!(rows.lines().all(|l| !l.starts_with(' ')));
    let types: Vec<String> = issues["machines"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["issues"].as_array().unwrap().clone())
        .map(|i| i["type"].as_str().unwrap().to_string())
        .collect();
    let shown: Vec<&str> = rows
        .lines()
        .filter_map(|l| cells(l).get(4).copied())
        .filter(|c| types.iter().any(|t| t == c))
        .collect();
    assert_eq!(shown, types);
    // report and explain: a pair per line, its state, event, count and machines first.
    let report = json(&["report", fleet]);
    let rows = ok(&["report", "--no-headers", fleet]);
    rows_alone(&rows);
    let got: Vec<Vec<&str>> = rows.lines().map(|l| cells(l)[..4].to_vec()).collect();
    let want: Vec<Vec<String>> = report["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            vec![
                p["state"].as_str().unwrap().to_string(),
                p["event"].as_str().unwrap().to_string(),
                p["count"].to_string(),
                p["machines"].to_string(),
            ]
        })
        .collect();
    assert_eq!(got, want);
    let explain = json(&["explain", fleet]);
    let rows = ok(&["explain", "--no-headers", fleet]);
    rows_alone(&rows);
    let got: Vec<String> = rows
        .lines()
        .map(|l| format!("{}/{}", cells(l)[0], cells(l)[1]))
        .collect();
    assert_eq!(got, pair_names(&explain["pairs"]));
    // check: its pairs.
    let check = json(&["check", fleet]);
    let rows = ok(&["check", "--no-headers", fleet]);
    rows_alone(&rows);
    let got: Vec<String> = rows
        .lines()
        .map(|l| format!("{}/{}", cells(l)[0], cells(l)[1]))
        .collect();
    assert_eq!(got, pair_names(&check["pairs"]));
    // replay: a line per step, the machine in front, as in its CSV.
    let seed = testdata("seed-machine.txt");
    let replay: Vec<Value> = ok(&["replay", "-o", "ndjson", arg(&seed), fleet])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let want: Vec<(String, String)> = replay
        .iter()
        .flat_map(|m| {
            let id = m["id"].as_str().unwrap().to_string();
            m["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |s| (id.clone(), s["time"].as_str().unwrap().to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    let rows = ok(&["replay", "--no-headers", arg(&seed), fleet]);
    rows_alone(&rows);
    let got: Vec<(String, String)> = rows
        .lines()
        .map(|l| (cells(l)[0].to_string(), cells(l)[1].to_string()))
        .collect();
    assert_eq!(got, want);
    // diff: its regressions; rules show: the matrix's rows, a state first.
    let args = [
        "diff",
        "--old",
        "metal-api",
        "--new",
        "metal-api-v0.19.0",
        fleet,
    ];
    let diff = json(&args);
    let mut bare = args.to_vec();
    bare.push("--no-headers");
    let rows = ok(&bare);
    rows_alone(&rows);
    let got: Vec<String> = rows
        .lines()
        .map(|l| format!("{}/{}", cells(l)[0], cells(l)[1]))
        .collect();
    assert_eq!(got, pair_names(&diff["newly_unexpected"]));
    let rows = ok(&["rules", "show", "--no-headers"]);
    rows_alone(&rows);
    assert!(!rows.contains("buffered phoned home"), "{rows}");
    assert!(rows.starts_with("Initial "), "{rows}");
}

#[test]
fn no_headers_on_a_terminal_is_rows_alone_too() {
    let rows = on_terminal(
        100,
        &["issues", "--no-headers", FLEET],
        &[("NO_COLOR", "1")],
    );
    rows_alone(&rows);
    let ids = strings(&json(&["issues", arg(&testdata(FLEET))])["machines"], "id");
    let mut first: Vec<&str> = rows.lines().map(|l| cells(l)[0]).collect();
    first.dedup();
    // Shortened as every table on a terminal shortens ids.
    assert_eq!(first.len(), ids.len(), "{rows}");
    for (shown, id) in first.iter().zip(&ids) {
        assert!(id.starts_with(shown), "{shown} {id}");
    }
}
