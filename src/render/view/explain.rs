//! `explain`'s text view: an overview table of the pairs, then a short triage note per pair.

use crate::render::reports::ExplainReport;
use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;

use super::phrases::counted;
use super::verdicts;
use crate::aggregate::PairTally;
use crate::diagnose::PairVerdict;
use crate::event::{EventKind, State};
use crate::explain::{PairContext, top_sequences};
use crate::log::Dimension;
use crate::render::doc::{
    Block, Column, Doc, Grid, Piece, Tone, Value, bars, count, input, label, sep, time,
};
use crate::render::sentence::amount;

/// What an empty sequence before or after an occurrence means.
const START: &str = "(start of the log)";
const END: &str = "(end of the log)";

/// The most bars the line of days gets (it has a line of its own); longer spans are put in
/// buckets of several days.
const MAX_BARS: usize = 60;

/// A sequence of event names, oldest first; `none` says what an empty one means.
fn sequence(events: &[EventKind], none: &str) -> String {
    if events.is_empty() {
        return none.to_string();
    }
    events
        .iter()
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(" › ")
}

fn commonest(map: &HashMap<Vec<EventKind>, u64>, of: u64, none: &str) -> Piece {
    match top_sequences(map).first() {
        Some((events, n)) => label(format!(
            "{} ({:.0}%)",
            sequence(events, none),
            100.0 * *n as f64 / of.max(1) as f64
        )),
        None => Value::Empty.into(),
    }
}

/// Occurrences per day from the first to the last, zeros included, in at most
/// [`MAX_BARS`] buckets.
pub fn daily_counts(by_day: &BTreeMap<NaiveDate, u64>) -> Vec<u64> {
    let (Some(first), Some(last)) = (by_day.keys().next(), by_day.keys().next_back()) else {
        return Vec::new();
    };
    let mut days = vec![0; (*last - *first).num_days() as usize + 1];
    for (day, n) in by_day {
        days[(*day - *first).num_days() as usize] += n;
    }
    bars(&days, MAX_BARS)
}

/// The explanation of every pair.
pub fn doc(report: &ExplainReport) -> Doc {
    let (rules, e, verdicts, context) = (
        report.rules,
        report.explanation,
        report.verdicts,
        report.context,
    );
    let mut doc = Doc::default();
    doc.push(Block::Title("fsmlog explain".to_string()));
    doc.line(super::report::totals(rules, &e.summary, report.problems));
    let pairs = report.pairs();
    let mut heading = vec![label("Unexpected transitions explained: ")];
    heading.extend(counted(pairs.len() as u64, "pair"));
    heading.push(label(" (times in UTC)"));
    doc.heading(heading);
    let mut grid = Grid::new(vec![
        Column::new("State"),
        Column::new("Event"),
        Column::number("Count"),
        Column::number("Machines"),
        Column::number("Gap median"),
        Column::number("Gap p90"),
        // The notes below say all of these again: on a narrow terminal they go first.
        Column::wrapping("Commonly before").or_left_out(1),
        Column::wrapping("Commonly after").or_left_out(0),
        Column::optional("Days", 2),
    ]);
    for ((state, event), c) in &pairs {
        let Some(t) = &c.tally else { continue };
        let gaps = c.gap_stats();
        let of = c.with_context();
        grid.row(vec![
            label(state.name()),
            label(event.name()),
            count(t.count).tone(Tone::Bad),
            count(t.machines),
            gaps.map_or(Value::Empty, |g| Value::Seconds(g.median))
                .into(),
            gaps.map_or(Value::Empty, |g| Value::Seconds(g.p90)).into(),
            commonest(&c.before, of, START),
            commonest(&c.after, of, END),
            Value::Spark(daily_counts(&c.by_day)).into(),
        ]);
    }
    doc.table(grid);
    for ((state, event), c) in pairs {
        note(
            &mut doc,
            *state,
            *event,
            c,
            verdicts.get(&(*state, *event)),
            context,
        );
    }
    doc
}

/// The triage note of one pair.
fn note(
    doc: &mut Doc,
    state: State,
    event: EventKind,
    c: &PairContext,
    verdict: Option<&PairVerdict>,
    context: usize,
) {
    let Some(t) = &c.tally else { return };
    let mut heading = vec![label(format!("{event} in {state}: "))];
    heading.extend(
        counted(t.count, "occurrence")
            .into_iter()
            .map(|p| p.tone(Tone::Bad)),
    );
    heading.push(label(" on "));
    heading.extend(counted(t.machines, "machine"));
    heading.push(label(", "));
    heading.push(time(t.first_seen));
    heading.push(label(" … "));
    heading.push(time(t.last_seen));
    doc.heading(heading);
    if let Some(v) = verdict {
        // The answer first: what to do about the pair, then what it rests on.
        verdicts::verdict_lines(doc, v);
    }
    let of = c.with_context();
    if of == 0 {
        // Nothing to lay out: no occurrence is a row of a log.
        doc.line(vec![label(format!(
            "every occurrence is an exported last error event, not a row of the log: no time in {state} before it and no events around it to show; the log itself (`metalctl machine logs`) may hold more"
        ))]);
    } else {
        context_lines(doc, state, c, context);
    }
    let days = daily_counts(&c.by_day);
    doc.line(vec![
        label("by day: "),
        Value::Spark(days).into(),
        label(format!(
            " ({} with occurrences)",
            amount(c.by_day.len() as u64, "day")
        )),
    ]);
    if let Some(line) = where_line(t) {
        doc.line(line);
    }
    let examples = c.examples_by_time();
    doc.line(vec![label("look at:")]);
    for (machine, first) in &examples {
        doc.command(
            verdicts::metalctl("metalctl machine logs", machine),
            vec![label("first at "), time(*first)],
        );
    }
    if let (Some(v), Some((machine, _))) = (verdict, examples.first()) {
        verdicts::next_steps(doc, v, machine);
    }
}

/// The note's lines on what surrounds the occurrences that are rows of a log: the time in the
/// state before them, the stored events before and after.
fn context_lines(doc: &mut Doc, state: State, c: &PairContext, context: usize) {
    match c.gap_stats() {
        Some(g) => doc.line(vec![
            label(format!(
                "time in {state} before it (since the previous stored event, {}): median ",
                amount(g.n as u64, "occurrence")
            )),
            Value::Seconds(g.median).into(),
            sep(),
            label("p90 "),
            Value::Seconds(g.p90).into(),
            sep(),
            label("min "),
            Value::Seconds(g.min).into(),
            sep(),
            label("max "),
            Value::Seconds(g.max).into(),
        ]),
        None => doc.line(vec![label("no occurrence has a stored event before it")]),
    }
    let of = c.with_context();
    for (title, map, none) in [("before", &c.before, START), ("after", &c.after, END)] {
        doc.line(vec![label(format!(
            "{title} it (up to {}, of {} in a log):",
            amount(context as u64, "stored event"),
            amount(of, "occurrence")
        ))]);
        for (events, n) in top_sequences(map) {
            doc.line(vec![label(format!(
                "  {:>3.0}%  {:>4}×  {}",
                100.0 * n as f64 / of.max(1) as f64,
                n,
                sequence(events, none)
            ))]);
        }
    }
    if c.without_context > 0 {
        doc.line(vec![label(format!(
            "{} as the exported last error event only (not a row of the log: no gap, no context)",
            c.without_context
        ))]);
    }
}

/// Where a pair's machines are: `where: 6 machines in 1 partition (fra-equ01), 5 racks
/// (rack06 ×2, rack04, rack07, +2), 1 size (c1-xlarge-x86)`; `None` where no export said.
fn where_line(t: &PairTally) -> Option<Vec<Piece>> {
    const SHOWN: usize = 3;
    if t.places.is_empty() {
        return None;
    }
    let mut line = vec![label("where: ")];
    let placed = Dimension::ALL
        .iter()
        .map(|d| t.where_(*d).iter().map(|v| v.1).sum::<u64>())
        .max()
        .unwrap_or(0);
    line.push(label(format!("{} in ", amount(placed, "machine"))));
    let mut first = true;
    for dimension in Dimension::ALL {
        let values = t.where_(dimension);
        if values.is_empty() {
            continue;
        }
        if !first {
            line.push(label(", "));
        }
        first = false;
        line.push(label(format!(
            "{} (",
            amount(values.len() as u64, dimension.name())
        )));
        for (i, (value, n)) in values.iter().take(SHOWN).enumerate() {
            if i > 0 {
                line.push(label(", "));
            }
            line.push(input(value.to_string()));
            if *n > 1 {
                line.push(label(format!(" ×{n}")));
            }
        }
        if values.len() > SHOWN {
            line.push(label(format!(", +{}", values.len() - SHOWN)));
        }
        line.push(label(")"));
    }
    if placed < t.machines {
        line.push(label(format!(
            "; {} without a place in {}",
            amount(t.machines - placed, "machine"),
            if t.machines - placed == 1 {
                "its export"
            } else {
                "their exports"
            }
        )));
    }
    Some(line)
}
