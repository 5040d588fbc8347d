//! `rules propose`'s text view: the pairs it accepts and where they lead, those it leaves
//! out and why, then its effect exactly as `diff` prints it.

use super::phrases::counted;
use crate::aggregate::Summary;
use crate::diagnose::Basis;
use crate::diff::Change;
use crate::propose::{Because, LeftOut, Proposal};
use crate::render::doc::{Block, Column, Doc, Grid, Tone, Value, count, input, label};
use crate::render::reports::DiffReport;
use crate::render::sentence;

/// Why a pair is left out, in words.
fn why(l: &LeftOut) -> String {
    match &l.because {
        Because::Verdict => sentence::verdict(&l.verdict),
        Because::CannotSwallow => {
            let why =
                l.verdict.evidence.iter().find(|b| {
                    matches!(b, Basis::OnlyPhonedHome { .. } | Basis::NoSwallowIn { .. })
                });
            match why {
                Some(why) => format!(
                    "{}; {}",
                    sentence::verdict(&l.verdict),
                    sentence::basis(why)
                ),
                None => sentence::verdict(&l.verdict),
            }
        }
        Because::FewMachines { min_share } => format!(
            "on {:.1}% of the fleet, less than --min-share {:.1}%",
            l.share * 100.0,
            min_share * 100.0
        ),
        Because::NoTarget => {
            "the base rule set accepts the event nowhere, so it has no usual target".to_string()
        }
    }
}

/// The proposal and its effect.
pub fn doc(proposal: &Proposal, summary: &Summary, effect: &DiffReport) -> Doc {
    let mut doc = Doc::default();
    doc.push(Block::Title("fsmlog rules propose".to_string()));
    doc.line(super::report::totals(
        &proposal.base,
        summary,
        effect.problems,
    ));
    let mut heading = vec![label("Accepted: ")];
    heading.extend(counted(proposal.accepted.len() as u64, "pair"));
    heading.push(label(" (by their verdicts: an accepted pair leads where "));
    heading.push(input(proposal.base.clone()));
    heading.push(label(
        " usually sends the event, a swallowed one stays, `self`)",
    ));
    doc.heading(heading);
    let mut grid = Grid::new(vec![
        Column::new("State"),
        Column::new("Event"),
        Column::new("Target"),
        Column::new("Verdict"),
        Column::number("Count"),
        Column::number("Machines"),
        Column::number("Share"),
    ]);
    for a in &proposal.accepted {
        let verdict = if a.forced {
            label(format!("{} (forced by --pair)", a.verdict.kind.name())).tone(Tone::Warn)
        } else {
            label(a.verdict.kind.name())
        };
        grid.row(vec![
            label(a.state.name()),
            label(a.event.name()),
            label(a.target.to_string()),
            verdict,
            count(a.tally.count),
            count(a.tally.machines),
            Value::Share(a.share).into(),
        ]);
    }
    doc.table(grid);
    if let Some(seconds) = proposal.buffering {
        doc.line(vec![label(format!(
            "buffered_phoned_home_seconds: {seconds}, as metal-api v0.42.2 swallows a Phoned Home that comes within 5 minutes of the last event"
        ))]);
    }
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
            label(why(l)),
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
