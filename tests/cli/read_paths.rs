//! `FSMLOG_TRACE=read` names the path each input took, and the paths give one answer: what the
//! fast paths read is what the careful path reads.

use serde_json::Value;

use super::*;

/// (stdout, stderr) of `fsmlog ARGS…` with `FSMLOG_TRACE` set to `trace` (or unset).
fn traced(args: &[&str], trace: Option<&str>) -> (String, String) {
    let mut command = fsmlog();
    command.args(args).env_remove("FSMLOG_TRACE");
    if let Some(trace) = trace {
        command.env("FSMLOG_TRACE", trace);
    }
    let out = command.output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The trace line of the input `path` names, without the prefix.
fn trace_of<'a>(stderr: &'a str, path: &str) -> Vec<&'a str> {
    let prefix = format!("fsmlog: trace: {path}: ");
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .collect()
}

#[test]
fn each_input_names_the_path_it_took() {
    let list = arg(&testdata("fleet-v0.42.2/list-json/machines.json")).to_string();
    let logs = testdata("fleet-v0.42.2/logs-json");
    let first_log = std::fs::read_dir(&logs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let first_log = arg(&first_log).to_string();
    let table = testdata("fleet-v0.42.2/text");
    let first_table = std::fs::read_dir(&table)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let first_table = arg(&first_table).to_string();
    let stream = arg(&testdata("fleet-v0.42.2/ndjson")).to_string();
    let (_, stderr) = traced(
        &[
            "report",
            "-o",
            "json",
            &list,
            &first_log,
            &first_table,
            &stream,
        ],
        Some("read"),
    );
    // The bundled list is pretty-printed, its machines mostly events: each is read by a fast
    // path (skimmed, or read directly where skimming would save too little), and none falls
    // to the careful parse.
    let list_trace = trace_of(&stderr, &list);
    assert_eq!(list_trace.len(), 1, "{stderr}");
    assert!(
        list_trace[0].starts_with("careful scan; values: "),
        "{stderr}"
    );
    assert!(
        list_trace[0].contains("skimmed") || list_trace[0].contains("direct"),
        "{stderr}"
    );
    assert!(!list_trace[0].contains("serde"), "{stderr}");
    let counted: u64 = list_trace[0]
        .split("values: ")
        .nth(1)
        .unwrap()
        .split(", ")
        .map(|part| part.split(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        counted, 12,
        "every machine of the list, each once: {stderr}"
    );
    assert_eq!(trace_of(&stderr, &first_log), ["whole log read directly"]);
    assert_eq!(trace_of(&stderr, &first_table), ["table reader"]);
    let stream_file = std::fs::read_dir(testdata("fleet-v0.42.2/ndjson"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(trace_of(&stderr, arg(&stream_file)), ["raw event stream"]);
}

#[test]
fn a_machine_the_direct_reader_is_not_sure_of_is_parsed_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // A numeric id (Go reads it as its text): the direct reader declines it and simd-json
    // reads it; a damaged element falls through every fast path to serde, which names it.
    let list = write(
        dir.path(),
        "list.json",
        "[\n  {\"id\": \"m0\", \"events\": {\"log\": []}},\n  {\"id\": 42, \"events\": {\"log\": [{\"time\": \"2025-09-16T10:00:00Z\", \"event\": \"Alive\", \"message\": \"\"}]}},\n  {\"id\": \"m2\", \"events\": {\"log\": [}}\n]\n",
    );
    let (stdout, stderr) = traced(&["report", "-o", "json", arg(&list)], Some("read"));
    let trace = trace_of(&stderr, arg(&list));
    assert_eq!(
        trace,
        ["careful scan; values: 1 direct, 1 simd-json, 1 serde"],
        "{stderr}"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["inputs"]["machines"], 2, "{stderr}");
    assert_eq!(report["inputs"]["events"], 1);
    assert_eq!(
        report["inputs"]["errors"].as_array().unwrap().len(),
        1,
        "{stderr}"
    );
}

#[test]
fn the_trace_changes_nothing_else_and_is_off_by_default() {
    let fleet = arg(&testdata("fleet-v0.42.2")).to_string();
    let args = ["report", "-o", "json", fleet.as_str()];
    let (plain_out, plain_err) = traced(&args, None);
    let (traced_out, traced_err) = traced(&args, Some("read"));
    assert_eq!(plain_out, traced_out);
    assert!(!plain_err.contains("trace:"), "{plain_err}");
    // Without the trace lines, stderr is what it was.
    let rest: Vec<&str> = traced_err
        .lines()
        .filter(|l| !l.starts_with("fsmlog: trace: "))
        .collect();
    assert_eq!(rest, plain_err.lines().collect::<Vec<_>>());
    let (_, other_err) = traced(&args, Some("something-else"));
    assert!(!other_err.contains("trace:"), "{other_err}");
}
