//! `explain -o json`.

use crate::render::reports::ExplainReport;
use std::io::{self, Write};

use serde::Serialize;

use super::common::{InputsJson, VerdictJson, WhereJson, WindowJson};
use crate::diagnose::PairVerdict;
use crate::event::format_time as time;
use crate::explain::{PairContext, top_sequences};

#[derive(Serialize)]
struct ExplainJson<'a> {
    rules: &'a str,
    inputs: InputsJson<'a>,
    window: WindowJson,
    pairs: Vec<PairJson<'a>>,
}

#[derive(Serialize)]
struct PairJson<'a> {
    state: &'static str,
    event: &'static str,
    count: u64,
    machines: u64,
    first_seen: String,
    last_seen: String,
    without_context: u64,
    gap_seconds: Option<GapJson>,
    before: Vec<SequenceJson>,
    after: Vec<SequenceJson>,
    by_day: Vec<DayJson>,
    examples: Vec<ExampleJson<'a>>,
    verdict: Option<VerdictJson>,
    #[serde(rename = "where", skip_serializing_if = "Option::is_none")]
    place: Option<WhereJson>,
}

#[derive(Serialize)]
struct GapJson {
    n: usize,
    min: f64,
    median: f64,
    p90: f64,
    max: f64,
}

#[derive(Serialize)]
struct SequenceJson {
    events: Vec<&'static str>,
    count: u64,
    share: f64,
}

#[derive(Serialize)]
struct DayJson {
    day: String,
    count: u64,
}

#[derive(Serialize)]
struct ExampleJson<'a> {
    machine: &'a str,
    time: String,
}

/// Milliseconds precision, as the gaps were measured.
fn ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

fn sequences(
    map: &std::collections::HashMap<Vec<crate::event::EventKind>, u64>,
    of: u64,
) -> Vec<SequenceJson> {
    top_sequences(map)
        .into_iter()
        .map(|(events, count)| SequenceJson {
            events: events.iter().map(|e| e.name()).collect(),
            count,
            share: if of == 0 {
                0.0
            } else {
                count as f64 / of as f64
            },
        })
        .collect()
}

fn pair<'a>(
    state: &'static str,
    event: &'static str,
    c: &'a PairContext,
    verdict: Option<&PairVerdict>,
) -> Option<PairJson<'a>> {
    let tally = c.tally.as_ref()?;
    let with_context = c.with_context();
    Some(PairJson {
        state,
        event,
        count: tally.count,
        machines: tally.machines,
        first_seen: time(tally.first_seen),
        last_seen: time(tally.last_seen),
        without_context: c.without_context,
        gap_seconds: c.gap_stats().map(|g| GapJson {
            n: g.n,
            min: ms(g.min),
            median: ms(g.median),
            p90: ms(g.p90),
            max: ms(g.max),
        }),
        before: sequences(&c.before, with_context),
        after: sequences(&c.after, with_context),
        by_day: c
            .by_day
            .iter()
            .map(|(day, count)| DayJson {
                day: day.format("%Y-%m-%d").to_string(),
                count: *count,
            })
            .collect(),
        examples: c
            .examples_by_time()
            .into_iter()
            .map(|(machine, t)| ExampleJson {
                machine,
                time: time(t),
            })
            .collect(),
        verdict: verdict.map(VerdictJson::of),
        place: WhereJson::of(tally),
    })
}

/// Writes `explain -o json`.
pub fn explain(report: &ExplainReport, out: &mut dyn Write) -> io::Result<()> {
    let (explanation, verdicts) = (report.explanation, report.verdicts);
    let doc = ExplainJson {
        rules: report.rules,
        inputs: InputsJson::of(&explanation.summary, report.problems),
        window: WindowJson::of(&report.window),
        pairs: report
            .pairs()
            .into_iter()
            .filter_map(|((state, event), c)| {
                pair(
                    state.name(),
                    event.name(),
                    c,
                    verdicts.get(&(*state, *event)),
                )
            })
            .collect(),
    };
    super::safe::pretty(&mut *out, &doc)?;
    writeln!(out)
}
