//! `check -o json`.

use std::io::{self, Write};

use serde::Serialize;

use super::common::{ErrorJson, WindowJson, errors};
use super::safe;
use crate::render::reports::CheckReport;
use crate::render::sentence;

#[derive(Serialize)]
struct CheckJson<'a> {
    rules: &'a str,
    baseline: Option<String>,
    passed: bool,
    machines: u64,
    events: u64,
    errors: Vec<ErrorJson<'a>>,
    window: WindowJson,
    pairs: Vec<CheckPairJson>,
}

#[derive(Serialize)]
struct CheckPairJson {
    state: &'static str,
    event: &'static str,
    baseline_state: &'static str,
    count: u64,
    machines: u64,
    machine_share: f64,
    max_machine_share: Option<f64>,
    violation: Option<&'static str>,
    message: String,
}

/// Writes `check -o json`.
pub fn check(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let doc = CheckJson {
        rules: report.rules,
        baseline: report.baseline.map(|p| p.display().to_string()),
        passed: report.result.passed(),
        machines: report.summary.machines,
        events: report.summary.events,
        errors: errors(&report.problems.errors),
        window: WindowJson::of(&report.window),
        pairs: report
            .result
            .pairs
            .iter()
            .map(|p| CheckPairJson {
                state: p.state.name(),
                event: p.event.name(),
                baseline_state: p.baseline.name(),
                count: p.tally.as_ref().map_or(0, |t| t.count),
                machines: p.tally.as_ref().map_or(0, |t| t.machines),
                machine_share: p.share,
                max_machine_share: p.ceiling,
                violation: p.violation.as_ref().map(|v| v.id()),
                message: sentence::pair(p),
            })
            .collect(),
    };
    safe::pretty(&mut *out, &doc)?;
    writeln!(out)
}
