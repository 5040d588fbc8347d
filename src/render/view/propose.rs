//! `rules propose`'s text view: the pairs it accepts and where they lead, those it leaves
//! out and why, then its effect exactly as `diff` prints it.

use super::phrases::counted;
use crate::aggregate::Summary;
use crate::diff::Change;
use crate::propose::Proposal;
use crate::render::doc::{Block, Column, Doc, Grid, Tone, Value, count, input, label};
use crate::render::report::DiffReport;

/// The proposal and its effect.
pub fn doc(proposal: &Proposal, summary: &Summary, effect: &DiffReport) -> Doc {
    let mut doc = Doc::default();
    doc.push(Block::Title("fsmlog rules propose".to_string()));
    doc.line(super::report::totals(&proposal.base, summary));
    let mut heading = vec![label("Accepted: ")];
    heading.extend(counted(proposal.accepted.len() as u64, "pair"));
    heading.push(label(" (a row each, leading where "));
    heading.push(input(proposal.base.clone()));
    heading.push(label(" usually sends the event)"));
    doc.heading(heading);
    let mut grid = Grid::new(vec![
        Column::new("State"),
        Column::new("Event"),
        Column::new("Target"),
        Column::number("Count"),
        Column::number("Machines"),
        Column::number("Share"),
    ]);
    for a in &proposal.accepted {
        grid.row(vec![
            label(a.state.name()),
            label(a.event.name()),
            label(a.target.to_string()),
            count(a.tally.count),
            count(a.tally.machines),
            Value::Share(a.share).into(),
        ]);
    }
    doc.table(grid);
    let mut heading = vec![label("Left out: ")];
    heading.extend(counted(proposal.left_out.len() as u64, "pair"));
    doc.heading(heading);
    let mut grid = Grid::new(vec![
        Column::new("State"),
        Column::new("Event"),
        Column::number("Count"),
        Column::number("Machines"),
        Column::wrapping("Why"),
    ]);
    for l in &proposal.left_out {
        grid.row(vec![
            label(l.state.name()),
            label(l.event.name()),
            count(l.tally.count),
            count(l.tally.machines),
            label(l.reason.clone()),
        ]);
    }
    doc.table(grid);
    for (state, event) in &proposal.not_seen {
        doc.line(vec![
            label(format!(
                "--pair {state}/{event}: not unexpected in this input, nothing to accept"
            ))
            .tone(Tone::Warn),
        ]);
    }
    doc.heading(vec![
        label("Effect (as fsmlog diff prints it)").tone(Tone::Strong),
    ]);
    if !effect.diff.changes(Change::NewlyUnexpected).is_empty() {
        doc.line(vec![label(
            "warning: the proposal makes pairs newly unexpected: an accepted event is stored or swallowed where it was not, and later events arrive in another state",
        )
        .tone(Tone::Warn)]);
    }
    doc.blocks.extend(
        super::diff::doc(effect)
            .blocks
            .into_iter()
            .filter(|b| !matches!(b, Block::Title(_))),
    );
    doc
}
