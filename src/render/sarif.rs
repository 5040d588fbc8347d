//! `check -o sarif`: SARIF 2.1.0, one result per unexpected pair, for code-scanning UIs.

use crate::event::format_time;
use std::io::{self, Write};

use serde_json::{Value, json};

use super::reports::CheckReport;
use super::sentence;
use crate::gate::{BaselineState, PairCheck, Violation, fingerprint};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const PAIR_RULE: &str = "unexpected-transition";

fn level(pair: &PairCheck) -> &'static str {
    match (&pair.violation, pair.baseline) {
        (Some(_), _) => "error",
        (None, BaselineState::Absent) => "none",
        (None, _) => "note",
    }
}

fn rule_id(pair: &PairCheck) -> &'static str {
    match &pair.violation {
        Some(v @ Violation::CeilingExceeded { .. }) => v.id(),
        _ => PAIR_RULE,
    }
}

/// A URI for a path: relative to the current directory (where CI runs, at the repository's
/// root) where it lies below it, else a `file:` URI; forward slashes, and what a URI cannot
/// hold escaped.
fn uri_reference(path: &str) -> String {
    let as_path = std::path::Path::new(path);
    if as_path.is_absolute() {
        let below = std::env::current_dir().ok().and_then(|cwd| {
            as_path
                .strip_prefix(cwd)
                .ok()
                .map(|p| p.display().to_string())
        });
        return match below {
            Some(relative) => escape_uri(&relative),
            None => format!("file://{}", escape_uri(path)),
        };
    }
    escape_uri(path.strip_prefix("./").unwrap_or(path))
}

fn escape_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.replace('\\', "/").bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(byte as char)
            }
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// Where a result points: the pair's entry in the baseline, or else the file and line where
/// it first occurred.
fn location(report: &CheckReport, pair: &PairCheck) -> (String, usize) {
    if let (Some(baseline), Some(line)) = (report.baseline, pair.baseline_line) {
        return (uri_reference(&baseline.display().to_string()), line);
    }
    if let Some(at) = pair.tally.as_ref().and_then(|t| t.first_at.as_ref()) {
        return (uri_reference(&at.path), at.line.max(1));
    }
    let fallback = report
        .baseline
        .or_else(|| report.inputs.first().map(|p| p.as_path()));
    (
        fallback.map_or_else(
            || "-".to_string(),
            |p| uri_reference(&p.display().to_string()),
        ),
        1,
    )
}

const HELP_PAIR: &str = "An event reached metal-api in a state that has no rule for it, and metal-api stored it as `[unexpectedly received in state …]`. The result points at the first occurrence (a new pair) or at the pair's entry in the baseline.\n\nTo see why it happens: `fsmlog explain --pair 'STATE/EVENT' EXPORTS` shows how long machines sat in the state and what came before and after. If the transition is legitimate, accept it in the baseline (`fsmlog check --write-baseline`), or propose the rule change with `fsmlog rules propose`. If another component misbehaves, fix that component.";

const HELP_CEILING: &str = "The baseline accepts this unexpected pair, but only on up to `max_machine_share` of the fleet; today more machines show it. The result points at the pair's entry in the baseline.\n\nLook at the machines with `fsmlog explain --pair 'STATE/EVENT' EXPORTS`. Raise the ceiling in the baseline if the growth is expected, or find what changed.";

/// A reporting descriptor with everything GitHub code scanning requires.
fn rule(id: &str, name: &str, short: &str, full: &str, help: &str) -> Value {
    json!({
        "id": id,
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": help.replace('`', ""), "markdown": help},
        "helpUri": HELP_URI,
        "defaultConfiguration": {"level": "error"},
    })
}

const HELP_URI: &str = "https://github.com/metal-stack/metal-api/issues/324";

/// Whether the run could judge the fleet: not when it read no machine at all.
fn invocation(report: &CheckReport) -> Value {
    if let Some(nothing) = report.result.nothing_read {
        json!({
            "executionSuccessful": false,
            "toolExecutionNotifications": [{
                "level": "error",
                "message": {"text": format!("{}, so there is nothing to pass on; check the paths, or pass --allow-empty", sentence::nothing(nothing))},
            }],
        })
    } else {
        json!({"executionSuccessful": true})
    }
}

/// Writes the SARIF log.
pub fn check(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let results: Vec<Value> = report
        .result
        .pairs
        .iter()
        .map(|pair| {
            let mut properties = json!({
                "state": pair.state.name(),
                "event": pair.event.name(),
                "machineShare": pair.share,
            });
            if let Some(t) = &pair.tally {
                properties["count"] = json!(t.count);
                properties["machines"] = json!(t.machines);
                properties["examples"] = json!(t.examples);
                properties["firstSeen"] = json!(format_time(t.first_seen));
                properties["lastSeen"] = json!(format_time(t.last_seen));
            }
            if let Some(ceiling) = pair.ceiling {
                properties["maxMachineShare"] = json!(ceiling);
            }
            let (uri, line) = location(report, pair);
            json!({
                "ruleId": rule_id(pair),
                "level": level(pair),
                "kind": if pair.baseline == BaselineState::Absent { "pass" } else { "fail" },
                "message": {"text": sentence::pair(pair)},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri},
                        "region": {"startLine": line},
                    },
                    "logicalLocations": [{
                        "name": format!("{} / {}", pair.state.name(), pair.event.name()),
                        "kind": "object",
                    }],
                }],
                "baselineState": pair.baseline.name(),
                "partialFingerprints": {"fsmlogPair/v1": fingerprint(pair.state, pair.event)},
                "properties": properties,
            })
        })
        .collect();
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "fsmlog",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": HELP_URI,
                "rules": [
                    rule(
                        PAIR_RULE,
                        "UnexpectedTransition",
                        "metal-api received a provisioning event in a state with no rule for it",
                        "The machine provisioning FSM has no transition for this (state, event) pair, so metal-api stores the event as [unexpectedly received in state …]. A pair outside the accepted baseline fails the gate.",
                        HELP_PAIR,
                    ),
                    rule(
                        Violation::CeilingExceeded { share: 0.0, ceiling: 0.0 }.id(),
                        "MachineShareCeiling",
                        "an accepted unexpected pair shows on more machines than the baseline allows",
                        "The baseline accepts this unexpected (state, event) pair only on up to a given share of the fleet's machines (max_machine_share), and more machines show it today.",
                        HELP_CEILING,
                    ),
                ],
            }},
            "automationDetails": {"id": format!("fsmlog/check/{}/", report.rules)},
            "invocations": [invocation(report)],
            "properties": {"rules": report.rules, "machines": report.summary.machines},
            "results": results,
        }],
    });
    super::json::safe::pretty(&mut *out, &log)?;
    writeln!(out)
}
