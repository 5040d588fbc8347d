//! `report`'s text view: the totals, the unexpected pairs, unknown events, flagged machines
//! and the recorded verdicts this replay does not reproduce.

use crate::aggregate::Summary;
use crate::event::State;
use crate::render::doc::{Block, Column, Doc, Grid, Tone, count, input, label, time};

use super::{counted, examples, machine_list};

/// The totals line every reading command starts with.
pub fn totals(rules: &str, s: &Summary) -> Vec<crate::render::doc::Piece> {
    let unknown: u64 = s.unknown_events.values().map(|t| t.count).sum();
    let mut line = vec![label("rules "), input(rules), label(" · ")];
    line.extend(counted(s.files, "file"));
    line.push(label(" · "));
    line.extend(counted(s.machines, "machine"));
    line.push(label(" · "));
    line.extend(counted(s.events, "event"));
    line.push(label(format!(
        " ({} replayed, {} rejected, {unknown} unknown, {} duplicates)",
        s.replayed, s.rejected, s.duplicates
    )));
    line.push(label(" · "));
    let errors = s.errors.len() as u64;
    let mut error_pieces = counted(errors, "input error");
    if errors > 0 {
        error_pieces = error_pieces
            .into_iter()
            .map(|p| p.tone(Tone::Bad))
            .collect();
    }
    line.extend(error_pieces);
    if s.skipped_lines > 0 {
        line.push(label(" · "));
        line.extend(counted(s.skipped_lines, "pasted line"));
        line.push(label(" skipped"));
    }
    line
}

/// The unexpected pairs as a table (the view's data).
pub fn pairs_table(s: &Summary) -> Grid {
    let mut grid = Grid::new(vec![
        Column::new("State"),
        Column::new("Event"),
        Column::number("Count"),
        Column::number("Machines"),
        Column::new("First seen"),
        Column::new("Last seen"),
        Column::optional("Examples", 0),
    ]);
    for ((state, event), t) in s.pairs_by_count() {
        grid.row(vec![
            label(state.name()),
            label(event.name()),
            count(t.count).tone(Tone::Bad),
            count(t.machines),
            time(t.first_seen),
            time(t.last_seen),
            examples(t.examples.iter(), t.machines),
        ]);
    }
    grid
}

/// The whole report.
pub fn doc(rules: &str, s: &Summary) -> Doc {
    let mut doc = Doc::default();
    doc.push(Block::Title("fsmlog report".to_string()));
    doc.line(totals(rules, s));
    if s.merged_machines > 0 {
        doc.line(vec![label(format!(
            "{} machines had records in several inputs and were merged; {} duplicate events counted once",
            s.merged_machines, s.duplicates
        ))]);
    }
    let pairs = s.pairs.len() as u64;
    let mut heading = vec![label("Unexpected transitions: ")];
    heading.extend(counted(pairs, "pair"));
    heading.push(label(" (times in UTC)"));
    doc.heading(heading);
    doc.table(pairs_table(s));
    if !s.unknown_events.is_empty() {
        doc.heading(vec![label("Unknown events (skipped by the replay)")]);
        for (name, t) in &s.unknown_events {
            doc.line(vec![
                label("unknown event \""),
                input(name.clone()),
                label(format!("\" ×{} on {} machines", t.count, t.machines)),
            ]);
        }
    }
    doc.heading(vec![label("Machines")]);
    let mut crash = vec![label(format!("crash loop ({}): ", s.crash_loop.len()))];
    crash.extend(machine_list(s.crash_loop.iter()));
    doc.line(crash);
    let mut failed = vec![label(format!(
        "failed reclaim ({}): ",
        s.failed_machine_reclaim.len()
    ))];
    failed.extend(machine_list(s.failed_machine_reclaim.iter()));
    doc.line(failed);
    doc.heading(vec![label(
        "Recorded verdicts this replay does not reproduce",
    )]);
    let mut grid = Grid::new(vec![
        Column::new("Event"),
        Column::new("Recorded"),
        Column::new("Replayed"),
        Column::number("Count"),
    ]);
    for ((event, recorded, replayed), n) in &s.disagreements {
        grid.row(vec![
            label(event.name()),
            label(verdict_text(*recorded)),
            label(verdict_text(*replayed)),
            count(*n).tone(Tone::Warn),
        ]);
    }
    doc.table(grid);
    doc
}

fn verdict_text(state: Option<State>) -> String {
    match state {
        Some(state) => format!("unexpected in {state}"),
        None => "expected".to_string(),
    }
}
