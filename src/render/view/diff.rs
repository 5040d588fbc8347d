//! `diff`'s text view: what becomes newly unexpected or newly expected, and flags that flip.

use crate::diff::Change;
use crate::render::doc::{Block, Column, Doc, Grid, Tone, count, input, label, machine, sep, time};
use crate::render::reports::DiffReport;

use super::phrases::{counted, examples};

/// The verdict changes and flag flips between two rule sets.
pub fn doc(report: &DiffReport) -> Doc {
    let d = report.diff;
    let mut doc = Doc::default();
    doc.push(Block::Title("fsmlog diff".to_string()));
    let mut line = vec![input(report.old), label(" → "), input(report.new), sep()];
    line.extend(counted(d.files, "file"));
    line.push(sep());
    line.extend(counted(d.machines, "machine"));
    line.push(sep());
    line.extend(counted(d.events, "event"));
    line.push(sep());
    line.extend(counted(report.problems.errors.len() as u64, "input error"));
    doc.line(line);
    if let Some(line) = super::report::window_line(&report.window) {
        doc.line(line);
    }
    let sections = [
        (
            Change::NewlyUnexpected,
            "Newly unexpected (regressions): ",
            "State (new rules)",
            Tone::Bad,
        ),
        (
            Change::NewlyExpected,
            "Newly expected (fixed, or hidden): ",
            "State (old rules)",
            Tone::Plain,
        ),
    ];
    for (change, title, state_header, tone) in sections {
        let rows = d.changes(change);
        let mut heading = vec![label(title)];
        heading.extend(counted(rows.len() as u64, "pair"));
        doc.heading(heading);
        let mut grid = Grid::new(vec![
            Column::new(state_header),
            Column::new("Event"),
            Column::number("Count"),
            Column::number("Machines"),
            Column::new("First seen"),
            Column::new("Last seen"),
            Column::optional("Examples", 0),
        ]);
        for ((state, event), t) in rows {
            grid.row(vec![
                label(state.name()),
                label(event.name()),
                count(t.count).tone(tone),
                count(t.machines),
                time(t.first_seen),
                time(t.last_seen),
                examples(t.examples.iter(), t.machines),
            ]);
        }
        doc.table(grid);
    }
    let mut heading = vec![label("Flags that flip: ")];
    heading.extend(counted(d.flips.len() as u64, "flag"));
    doc.heading(heading);
    let mut grid = Grid::new(vec![
        Column::new("Machine"),
        Column::new("Flag"),
        Column::new("Old"),
        Column::new("New"),
    ]);
    for (flag, id, old, new) in &d.flips {
        grid.row(vec![
            machine(id.clone()),
            label(flag.name()),
            label(old.to_string()),
            label(new.to_string()),
        ]);
    }
    doc.table(grid);
    doc
}
