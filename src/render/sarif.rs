//! `check -o sarif`: SARIF 2.1.0, one result per unexpected pair, for code-scanning UIs.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::CheckReport;
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

/// A relative URI reference for a path: forward slashes, and what a URI cannot hold escaped.
fn uri_reference(path: &str) -> String {
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

/// Writes the SARIF log.
pub fn check(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    // Code-scanning UIs need a location. A pair lives in the fleet's exports, not in a file of
    // the repository, so name the baseline (a committed file) or else the first input.
    let uri = report
        .baseline
        .or_else(|| report.inputs.first().map(|p| p.as_path()))
        .map_or_else(
            || "-".to_string(),
            |p| uri_reference(&p.display().to_string()),
        );
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
                properties["firstSeen"] = json!(super::time(t.first_seen));
                properties["lastSeen"] = json!(super::time(t.last_seen));
            }
            if let Some(ceiling) = pair.ceiling {
                properties["maxMachineShare"] = json!(ceiling);
            }
            json!({
                "ruleId": rule_id(pair),
                "level": level(pair),
                "kind": if pair.baseline == BaselineState::Absent { "pass" } else { "fail" },
                "message": {"text": pair.message()},
                "locations": [{
                    "physicalLocation": {"artifactLocation": {"uri": uri}},
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
                "rules": [
                    {
                        "id": PAIR_RULE,
                        "name": "UnexpectedTransition",
                        "shortDescription": {"text": "metal-api received a provisioning event in a state with no rule for it"},
                        "fullDescription": {"text": "The machine provisioning FSM has no transition for this (state, event) pair, so metal-api stores the event as [unexpectedly received in state …]. A pair outside the accepted baseline fails the gate."},
                        "defaultConfiguration": {"level": "error"},
                    },
                    {
                        "id": Violation::CeilingExceeded { share: 0.0, ceiling: 0.0 }.id(),
                        "name": "MachineShareCeiling",
                        "shortDescription": {"text": "an accepted unexpected pair shows on more machines than the baseline allows"},
                        "defaultConfiguration": {"level": "error"},
                    },
                ],
            }},
            "automationDetails": {"id": format!("fsmlog/check/{}/", report.rules)},
            "properties": {"rules": report.rules, "machines": report.summary.machines},
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}
