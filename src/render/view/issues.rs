//! `issues`'s text view: the counts per issue type, then a row per issue, worst machines
//! first.

use crate::issues::{IssueType, Severity, counts};
use crate::render::doc::{Block, Column, Doc, Grid, Tone, Value, input, label, machine, sep, time};
use crate::render::reports::IssuesReport;
use crate::render::sentence;

use super::phrases::counted;

fn tone(severity: Severity) -> Tone {
    match severity {
        Severity::Critical | Severity::Major => Tone::Bad,
        Severity::Minor => Tone::Warn,
    }
}

/// The audit.
pub fn doc(report: &IssuesReport) -> Doc {
    let mut doc = Doc::default();
    doc.push(Block::Title("fsmlog issues".to_string()));
    doc.line(super::report::totals(
        report.rules,
        report.summary,
        report.problems,
    ));
    doc.line(vec![label("judged at "), time(report.now)]);
    let with_issues = report
        .machines
        .iter()
        .filter(|j| !j.issues.is_empty())
        .count();
    let mut heading = vec![label("Machines with issues: ")];
    heading.extend(counted(with_issues as u64, "machine"));
    heading.push(label(" (times in UTC)"));
    doc.heading(heading);
    let counts = counts(report.machines);
    let mut line = Vec::new();
    for kind in IssueType::ALL {
        let Some(n) = counts.get(&kind) else { continue };
        if !line.is_empty() {
            line.push(sep());
        }
        // One piece each, so that a long line breaks between types, never inside one.
        line.push(label(format!("{} {n}", kind.id())).tone(tone(kind.severity())));
    }
    if !line.is_empty() {
        doc.line(line);
    }
    if report.types.contains(&IssueType::Crashloop)
        && let Some(line) = super::phrases::crash_loop_waiting(report.summary)
    {
        doc.line(line);
    }
    let mut grid = Grid::new(vec![
        Column::new("Machine"),
        Column::optional("State", 2),
        Column::optional("Last event", 1),
        Column::new("Severity"),
        Column::new("Issue"),
        Column::wrapping("Details"),
    ]);
    grid.ditto = 3;
    for j in report.machines {
        let f = &j.facts;
        let last = f.last_event_time.map_or(Value::Empty, Value::Time);
        if j.issues.is_empty() {
            grid.row(vec![
                machine(f.machine.clone()),
                label(f.state.name()),
                last.clone().into(),
                Value::Empty.into(),
                Value::Empty.into(),
                Value::Empty.into(),
            ]);
        }
        for issue in &j.issues {
            let severity = issue.kind.severity();
            grid.row(vec![
                machine(f.machine.clone()),
                label(f.state.name()),
                last.clone().into(),
                label(severity.name()).tone(tone(severity)),
                label(issue.kind.id()),
                input(sentence::details(issue, report.now)),
            ]);
        }
    }
    doc.table(grid);
    doc
}
