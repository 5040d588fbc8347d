//! `replay`'s text view, one machine at a time: a heading and a table of its steps.

use crate::render::doc::{Column, Doc, Grid, Piece, Tone, input, label, sep, time};
use crate::replay::{Handling, Step, Trace};

/// The columns of the steps table; CSV adds the machine in front.
pub fn step_columns() -> Vec<Column> {
    vec![
        Column::new("Time"),
        Column::new("Event"),
        Column::new("From"),
        Column::new("Verdict"),
        Column::optional("To", 1),
        Column::optional("Stored", 0),
        Column::wrapping("Message"),
    ]
}

/// One step as table cells.
pub fn step_cells(step: &Step) -> Vec<Piece> {
    let tone = match step.handling {
        Handling::Expected => Tone::Plain,
        Handling::Unexpected => Tone::Bad,
        Handling::Rejected => Tone::Warn,
    };
    vec![
        time(step.time),
        label(step.event.name()),
        label(step.from.name()),
        label(step.handling.name()).tone(tone),
        label(step.to.name()),
        label(if step.stored { "yes" } else { "no" }),
        input(step.message.to_string()),
    ]
}

/// One machine's replay.
pub fn doc(trace: &Trace) -> Doc {
    let c = &trace.container;
    let mut doc = Doc::default();
    // The whole id: machines print one at a time, so no prefix is known to be unique.
    doc.heading(vec![
        label("machine "),
        input(trace.machine.clone()),
        sep(),
        label(format!("state {}", c.state())),
        sep(),
        label(format!("crash loop {}", c.crash_loop)),
        sep(),
        label(format!("failed reclaim {}", c.failed_machine_reclaim)),
        sep(),
        label(format!("{} stored events", c.events.len())),
    ]);
    let mut from = vec![label("read from ").tone(Tone::Faint)];
    for (i, source) in trace.sources.iter().enumerate() {
        if i > 0 {
            from.push(label(", ").tone(Tone::Faint));
        }
        from.push(input(source.clone()).tone(Tone::Faint));
    }
    doc.line(from);
    let mut grid = Grid::new(step_columns());
    for step in &trace.steps {
        grid.row(step_cells(step));
    }
    doc.table(grid);
    for unknown in &trace.unknown {
        doc.line(vec![
            label("unknown event \""),
            input(unknown.name.clone()),
            label(format!("\" at line {} (skipped)", unknown.line)),
        ]);
    }
    doc
}
