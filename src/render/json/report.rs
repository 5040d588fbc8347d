//! `report -o json`.

use std::io::{self, Write};

use serde::Serialize;

use super::common::{InputsJson, PairJson, WindowJson};
use super::safe;
use crate::event::State;
use crate::render::reports::Report;

#[derive(Serialize)]
struct ReportJson<'a> {
    rules: &'a str,
    inputs: InputsJson<'a>,
    window: WindowJson,
    unexpected: Vec<PairJson>,
    machines: MachinesJson<'a>,
    disagreements: Vec<DisagreementJson>,
}

#[derive(Serialize)]
struct MachinesJson<'a> {
    crash_loop: Vec<&'a str>,
    failed_machine_reclaim: Vec<&'a str>,
}

#[derive(Serialize)]
struct DisagreementJson {
    event: &'static str,
    recorded_state: Option<&'static str>,
    replayed_state: Option<&'static str>,
    count: u64,
}

/// Writes `report -o json`.
pub fn report(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let s = report.summary;
    let doc = ReportJson {
        rules: report.rules,
        inputs: InputsJson::of(s, report.problems),
        window: WindowJson::of(&report.window),
        unexpected: report
            .pairs()
            .into_iter()
            .map(|((state, event), t)| {
                PairJson::new(*state, *event, t)
                    .with_series(t, report.period)
                    .with_breakdown(t, report.breakdown)
                    .with_verdict(t, report.verdicts.get(&(*state, *event)))
            })
            .collect(),
        machines: MachinesJson {
            crash_loop: s.crash_loop.iter().map(String::as_str).collect(),
            failed_machine_reclaim: s
                .failed_machine_reclaim
                .iter()
                .map(String::as_str)
                .collect(),
        },
        disagreements: s
            .disagreements
            .iter()
            .map(|((event, recorded, replayed), count)| DisagreementJson {
                event: event.name(),
                recorded_state: recorded.map(State::name),
                replayed_state: replayed.map(State::name),
                count: *count,
            })
            .collect(),
    };
    safe::pretty(&mut *out, &doc)?;
    writeln!(out)
}
