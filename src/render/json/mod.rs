//! The JSON and NDJSON output, whose shape is documented in docs/json.md and kept stable.

mod explain;
mod issues;
pub(crate) mod safe;

pub use explain::explain;
pub use issues::issues;

use std::io::{self, Write};

use serde::Serialize;

use super::{CheckReport, DiffReport, Report, TraceRenderer, time};
use crate::aggregate::PairTally;
use crate::aggregate::Summary;
use crate::diff::Change;
use crate::event::State;
use crate::replay::{Container, Step, StoredEvent, Trace};
use crate::window::{Period, Shown};

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
struct InputsJson<'a> {
    files: u64,
    formats: std::collections::BTreeMap<&'static str, u64>,
    machines: u64,
    merged_machines: u64,
    events: u64,
    skipped_lines: u64,
    duplicates: u64,
    replayed: u64,
    rejected: u64,
    unknown_events: Vec<UnknownJson<'a>>,
    errors: Vec<ErrorJson<'a>>,
    skipped: Vec<SkippedJson<'a>>,
    notes: Vec<ErrorJson<'a>>,
}

impl<'a> InputsJson<'a> {
    /// The `inputs` object of a summary.
    fn of(s: &'a Summary) -> InputsJson<'a> {
        InputsJson {
            files: s.files,
            formats: s.formats.clone(),
            machines: s.machines,
            merged_machines: s.merged_machines,
            events: s.events,
            skipped_lines: s.skipped_lines,
            duplicates: s.duplicates,
            replayed: s.replayed,
            rejected: s.rejected,
            unknown_events: s
                .unknown_events
                .iter()
                .map(|(name, t)| UnknownJson {
                    event: name,
                    count: t.count,
                    machines: t.machines,
                })
                .collect(),
            errors: errors(&s.errors),
            skipped: s
                .skipped
                .iter()
                .map(|(path, reason)| SkippedJson { path, reason })
                .collect(),
            notes: errors(&s.notes),
        }
    }
}

#[derive(Serialize)]
struct UnknownJson<'a> {
    event: &'a str,
    count: u64,
    machines: u64,
}

#[derive(Serialize)]
struct ErrorJson<'a> {
    path: &'a str,
    line: Option<usize>,
    column: Option<usize>,
    message: &'a str,
}

#[derive(Serialize)]
struct SkippedJson<'a> {
    path: &'a str,
    reason: &'a str,
}

#[derive(Serialize)]
struct PairJson {
    state: &'static str,
    event: &'static str,
    count: u64,
    machines: u64,
    first_seen: String,
    last_seen: String,
    examples: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    series: Option<Vec<PeriodJson>>,
}

#[derive(Serialize)]
struct PeriodJson {
    period: String,
    count: u64,
}

/// The window a view counted in (`since ≤ time < until`), and the `--now` it counted back
/// from.
#[derive(Serialize)]
pub(crate) struct WindowJson {
    since: Option<String>,
    until: Option<String>,
    now: Option<String>,
}

impl WindowJson {
    pub(crate) fn of(shown: &Shown) -> WindowJson {
        WindowJson {
            since: shown.window.since.map(time),
            until: shown.window.until.map(time),
            now: shown.now.map(time),
        }
    }
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
        inputs: InputsJson::of(s),
        window: WindowJson::of(&report.window),
        unexpected: s
            .pairs_by_count()
            .into_iter()
            .map(|((state, event), t)| {
                PairJson::new(*state, *event, t).with_series(t, report.period)
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

impl PairJson {
    fn new(state: State, event: crate::event::EventKind, t: &PairTally) -> PairJson {
        PairJson {
            state: state.name(),
            event: event.name(),
            count: t.count,
            machines: t.machines,
            first_seen: time(t.first_seen),
            last_seen: time(t.last_seen),
            examples: t.examples.iter().cloned().collect(),
            series: None,
        }
    }

    fn with_series(mut self, t: &PairTally, period: Option<Period>) -> PairJson {
        if let Some(period) = period {
            self.series = Some(
                t.series
                    .iter()
                    .map(|(start, count)| PeriodJson {
                        period: period.label(*start),
                        count: *count,
                    })
                    .collect(),
            );
        }
        self
    }
}

#[derive(Serialize)]
struct DiffJson<'a> {
    old: &'a str,
    new: &'a str,
    inputs: DiffInputsJson<'a>,
    window: WindowJson,
    newly_expected: Vec<PairJson>,
    newly_unexpected: Vec<PairJson>,
    flags: Vec<FlipJson<'a>>,
}

#[derive(Serialize)]
struct DiffInputsJson<'a> {
    files: u64,
    machines: u64,
    events: u64,
    errors: Vec<ErrorJson<'a>>,
    notes: Vec<ErrorJson<'a>>,
}

#[derive(Serialize)]
struct FlipJson<'a> {
    machine: &'a str,
    flag: &'static str,
    old: bool,
    new: bool,
}

fn errors(list: &[crate::input::InputError]) -> Vec<ErrorJson<'_>> {
    list.iter()
        .map(|e| ErrorJson {
            path: &e.path,
            line: (e.line > 0).then_some(e.line),
            column: (e.column > 0).then_some(e.column),
            message: &e.message,
        })
        .collect()
}

/// Writes `diff -o json`.
pub fn diff(report: &DiffReport, out: &mut dyn Write) -> io::Result<()> {
    let d = report.diff;
    let pairs = |change| {
        d.changes(change)
            .into_iter()
            .map(|((state, event), t)| PairJson::new(state, event, t))
            .collect()
    };
    let doc = DiffJson {
        old: report.old,
        new: report.new,
        inputs: DiffInputsJson {
            files: d.files,
            machines: d.machines,
            events: d.events,
            errors: errors(&d.errors),
            notes: errors(&d.notes),
        },
        window: WindowJson::of(&report.window),
        newly_expected: pairs(Change::NewlyExpected),
        newly_unexpected: pairs(Change::NewlyUnexpected),
        flags: d
            .flips
            .iter()
            .map(|(flag, machine, old, new)| FlipJson {
                machine,
                flag: flag.name(),
                old: *old,
                new: *new,
            })
            .collect(),
    };
    safe::pretty(&mut *out, &doc)?;
    writeln!(out)
}

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
        errors: errors(&report.summary.errors),
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
                message: p.message(),
            })
            .collect(),
    };
    safe::pretty(&mut *out, &doc)?;
    writeln!(out)
}

#[derive(Serialize)]
struct MachineJson<'a> {
    machine: &'a str,
    source: &'a str,
    state: &'static str,
    container: ContainerJson<'a>,
    steps: Vec<StepJson<'a>>,
    /// The exported last error event where it is no row of the log: judged (and counted by
    /// `report`) but not replayed.
    last_error_outside_log: Option<StepJson<'a>>,
}

#[derive(Serialize)]
struct ContainerJson<'a> {
    id: &'a str,
    liveliness: &'static str,
    events: Vec<StoredJson<'a>>,
    last_event_time: Option<String>,
    last_error_event: Option<StoredJson<'a>>,
    crash_loop: bool,
    failed_machine_reclaim: bool,
}

#[derive(Serialize)]
struct StoredJson<'a> {
    time: String,
    event: &'static str,
    message: &'a str,
}

#[derive(Serialize)]
struct StepJson<'a> {
    time: String,
    event: &'static str,
    message: &'a str,
    from: &'static str,
    verdict: &'static str,
    to: &'static str,
    stored: bool,
    recorded_state: Option<&'static str>,
}

fn stored(e: &StoredEvent) -> StoredJson<'_> {
    StoredJson {
        time: time(e.time),
        event: e.event.name(),
        message: &e.message,
    }
}

fn container<'a>(machine: &'a str, c: &'a Container) -> ContainerJson<'a> {
    ContainerJson {
        id: machine,
        liveliness: c.liveliness.name(),
        events: c.events.iter().map(stored).collect(),
        last_event_time: c.last_event_time.map(time),
        last_error_event: c.last_error_event.as_ref().map(stored),
        crash_loop: c.crash_loop,
        failed_machine_reclaim: c.failed_machine_reclaim,
    }
}

fn step(s: &Step) -> StepJson<'_> {
    StepJson {
        time: time(s.time),
        event: s.event.name(),
        message: &s.message,
        from: s.from.name(),
        verdict: s.verdict.name(),
        to: s.to.name(),
        stored: s.stored,
        recorded_state: s.recorded_state.map(State::name),
    }
}

fn machine(trace: &Trace) -> MachineJson<'_> {
    MachineJson {
        machine: &trace.machine,
        source: &trace.source,
        state: trace.container.state().name(),
        container: container(&trace.machine, &trace.container),
        steps: trace.steps.iter().map(step).collect(),
        last_error_outside_log: trace.last_error_only.as_ref().map(step),
    }
}

/// `replay -o json` (one document, machines streamed into its array) or `-o ndjson`.
pub struct TraceJson {
    lines: bool,
    written: usize,
}

impl TraceJson {
    /// One JSON document: `{"rules": …, "machines": [ … ]}`.
    pub fn array() -> Self {
        TraceJson {
            lines: false,
            written: 0,
        }
    }

    /// One machine object per line.
    pub fn lines() -> Self {
        TraceJson {
            lines: true,
            written: 0,
        }
    }
}

impl TraceRenderer for TraceJson {
    fn begin(&mut self, rules: &str, out: &mut dyn Write) -> io::Result<()> {
        if !self.lines {
            out.write_all(b"{\"rules\":")?;
            safe::compact(out, rules)?;
            out.write_all(b",\"machines\":[")?;
        }
        Ok(())
    }

    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
        if !self.lines && self.written > 0 {
            out.write_all(b",")?;
        }
        if !self.lines {
            out.write_all(b"\n")?;
        }
        safe::compact(&mut *out, &machine(trace))?;
        if self.lines {
            out.write_all(b"\n")?;
        }
        self.written += 1;
        Ok(())
    }

    fn end(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if !self.lines {
            out.write_all(b"\n]}\n")?;
        }
        Ok(())
    }
}
