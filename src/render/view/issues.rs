//! `issues`'s text view: the counts per issue type, then a row per issue, worst machines
//! first.

use crate::issues::{Audited, IssueType, Severity, counts};
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
    let mut columns = vec![
        Column::new("Machine"),
        Column::optional("State", 2),
        // Details says how long ago already: the first to go on a narrow terminal.
        Column::optional("Last event", 0),
        Column::new("Severity"),
        Column::new("Issue"),
        Column::wrapping("Details"),
    ];
    // Only where an export said where its machines are; last, so that a CSV's columns keep
    // their places.
    let placed = report.machines.iter().any(|j| where_text(j).is_some());
    if placed {
        columns.push(Column::optional("Where", 1));
    }
    let mut grid = Grid::new(columns);
    grid.ditto = vec![0, 1, 2];
    if placed {
        grid.ditto.push(6);
    }
    for j in report.machines {
        let f = &j.facts;
        let last = f.last_event_time.map_or(Value::Empty, Value::Time);
        let place = || match where_text(j) {
            Some(text) => input(text),
            None => Value::Empty.into(),
        };
        if j.issues.is_empty() {
            let mut row = vec![
                machine(f.machine.clone()),
                label(f.state.name()),
                last.clone().into(),
                Value::Empty.into(),
                Value::Empty.into(),
                Value::Empty.into(),
            ];
            if placed {
                row.push(place());
            }
            grid.row(row);
        }
        for issue in &j.issues {
            let severity = issue.kind.severity();
            let mut row = vec![
                machine(f.machine.clone()),
                label(f.state.name()),
                last.clone().into(),
                label(severity.name()).tone(tone(severity)),
                label(issue.kind.id()),
                input(sentence::details(issue, report.now)),
            ];
            if placed {
                row.push(place());
            }
            grid.row(row);
        }
    }
    doc.table(grid);
    doc
}

/// `issues list`: the types as metalctl's `machine issues list` prints them (ID, Severity,
/// Description, Reference URL), and the export each is judged from.
pub fn types(types: &[IssueType]) -> Doc {
    let mut grid = Grid::new(vec![
        Column::new("ID"),
        Column::new("Severity"),
        Column::wrapping("Description"),
        Column::optional("Reference URL", 0),
        Column::wrapping("Judged from"),
    ]);
    for kind in types {
        let severity = kind.severity();
        grid.row(vec![
            label(kind.id()),
            label(severity.name()).tone(tone(severity)),
            label(kind.description()),
            label(kind.refurl()),
            label(sentence::needs(kind.needs())),
        ]);
    }
    let mut doc = Doc::default();
    doc.table(grid);
    doc
}

/// Where a machine is, as metalctl's wide issue table names it: its partition and rack
/// (`fra-equ01 · rack06`), where its export says.
fn where_text(j: &Audited) -> Option<String> {
    let place = j.facts.place.as_deref()?;
    let parts: Vec<&str> = [&place.partition, &place.rack]
        .into_iter()
        .filter_map(|p| p.as_deref())
        .filter(|p| !p.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}
