//! `diff -o json`.

use std::io::{self, Write};

use serde::Serialize;

use super::common::{ErrorJson, PairJson, WindowJson, errors};
use super::safe;
use crate::diff::Change;
use crate::render::reports::DiffReport;

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
            errors: errors(&report.problems.errors),
            notes: errors(&report.problems.notes),
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
