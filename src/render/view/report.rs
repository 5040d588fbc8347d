//! `report`'s text view: the totals, the unexpected pairs, unknown events, flagged machines
//! and the recorded verdicts this replay does not reproduce.

use chrono::NaiveDate;

use crate::aggregate::{PairTally, Summary, Verdicts};
use crate::event::{Pair, State};
use crate::input::Problems;
use crate::log::Dimension;
use crate::render::doc::{
    Block, Column, Doc, Grid, Piece, Tone, Value, bars, count, input, label, periods_per_bar, sep,
    time,
};
use crate::render::reports::Report;
use crate::window::{Period, Shown};

use super::phrases;
use super::phrases::{counted, examples, machine_list};
use super::verdicts;

/// The totals line every reading command starts with.
pub fn totals(rules: &str, s: &Summary, problems: &Problems) -> Vec<Piece> {
    let unknown: u64 = s.unknown_events.values().map(|t| t.count).sum();
    let mut line = vec![label("rules "), input(rules), sep()];
    line.extend(counted(s.files, "file"));
    line.push(sep());
    line.extend(counted(s.machines, "machine"));
    line.push(sep());
    line.extend(counted(s.events, "event"));
    line.push(label(format!(
        " ({} replayed, {} rejected, {unknown} unknown, {} duplicates)",
        s.replayed, s.rejected, s.duplicates
    )));
    line.push(sep());
    let errors = problems.errors.len() as u64;
    let mut error_pieces = counted(errors, "input error");
    if errors > 0 {
        error_pieces = error_pieces
            .into_iter()
            .map(|p| p.tone(Tone::Bad))
            .collect();
    }
    line.extend(error_pieces);
    if s.skipped_lines > 0 {
        line.push(sep());
        line.extend(counted(s.skipped_lines, "pasted line"));
        line.push(label(" skipped"));
    }
    if s.gaps > 0 {
        line.push(sep());
        line.extend(counted(s.gaps, "gap"));
        line.push(label(" on "));
        line.extend(counted(s.gap_machines, "machine"));
    }
    line
}

/// Where a pair links to on a page (its explanation), if anywhere.
pub type PairLink<'l> = Option<&'l dyn Fn(&Pair) -> String>;

/// A pair's state or event: our own words, a link where the page has one for the pair.
fn pair_word(name: &'static str, pair: &Pair, link: PairLink) -> Piece {
    match link {
        Some(link) => Value::Link {
            text: name.to_string(),
            url: link(pair),
        }
        .into(),
        None => label(name),
    }
}

/// The unexpected pairs as a table (the view's data); with a trend column per period.
pub fn pairs_table(
    s: &Summary,
    pairs: &[(&Pair, &PairTally)],
    verdicts: &Verdicts,
    period: Option<Period>,
    with_message: bool,
    link: PairLink,
) -> Grid {
    let mut columns = vec![
        Column::new("State"),
        Column::new("Event"),
        Column::number("Count"),
        Column::number("Machines"),
        // The machines to look at stay longer than when it last happened.
        Column::new("First seen").or_left_out(3),
        Column::new("Last seen").or_left_out(0),
        Column::optional("Examples", 2),
    ];
    // Every pair's sparkline spans the same periods, so their bars line up.
    let span = period.and_then(|p| {
        let starts = s.pairs.values().flat_map(|t| t.series.keys().copied());
        let first = starts.clone().min()?;
        let last = starts.max()?;
        Some((p, first, last))
    });
    if let Some(period) = period {
        // A long span puts several periods in a bar; the header says how many.
        let per_bar = span.map_or(1, |span| periods_per_bar(starts(span).count(), MAX_BARS));
        let unit = match period {
            Period::Day => "day",
            Period::Week => "week",
        };
        let header = if per_bar == 1 {
            format!("Per {unit}")
        } else {
            format!("Per {per_bar} {unit}s")
        };
        // The trend was asked for: it stays.
        columns.push(Column::new(header));
    }
    if with_message {
        columns.push(Column::wrapping("First message"));
    }
    // Last, so that the columns a CSV had before verdicts keep their places.
    columns.push(Column::new("Verdict"));
    // Only where an export said where its machines are; after the verdict, for the same
    // reason.
    let placed = pairs.iter().any(|(_, t)| !t.places.is_empty());
    if placed {
        // Left out after the last time, before the machines to look at.
        columns.push(Column::optional("Where", 1));
    }
    let mut grid = Grid::new(columns);
    for &(pair, t) in pairs {
        let (state, event) = pair;
        let mut row = vec![
            pair_word(state.name(), pair, link),
            pair_word(event.name(), pair, link),
            count(t.count).tone(Tone::Bad),
            count(t.machines),
            time(t.first_seen),
            time(t.last_seen),
            examples(t.examples.iter(), t.machines),
        ];
        if period.is_some() {
            row.push(Value::Spark(series(t, span)).into());
        }
        if with_message {
            row.push(input(t.first_message.as_deref().unwrap_or("").to_string()));
        }
        row.push(
            verdicts
                .get(&(*state, *event))
                .map_or(Value::Empty.into(), |v| label(v.kind.name())),
        );
        if placed {
            row.push(where_cell(t));
        }
        grid.row(row);
    }
    grid
}

/// Where a pair's machines are, in a cell: the rack most of them are in (else the partition)
/// and how many other racks.
fn where_cell(t: &PairTally) -> Piece {
    for dimension in [Dimension::Rack, Dimension::Partition, Dimension::Size] {
        let values = t.where_(dimension);
        if let Some((commonest, _)) = values.first() {
            let others = values.len() - 1;
            return match others {
                0 => input(commonest.to_string()),
                n => input(format!("{commonest} +{n}")),
            };
        }
    }
    Value::Empty.into()
}

/// The most bars a trend cell gets (a table column: it must leave room for the others); a
/// longer span puts several periods in a bar.
const MAX_BARS: usize = 20;

/// A pair's counts per period over the span of all pairs, zeros included, in at most
/// [`MAX_BARS`] bars.
fn series(t: &PairTally, span: Option<(Period, NaiveDate, NaiveDate)>) -> Vec<u64> {
    let Some(span) = span else {
        return Vec::new();
    };
    let counts: Vec<u64> = starts(span)
        .map(|at| t.series.get(&at).copied().unwrap_or(0))
        .collect();
    bars(&counts, MAX_BARS)
}

/// The first day of every period of a span.
fn starts(
    (period, first, last): (Period, NaiveDate, NaiveDate),
) -> impl Iterator<Item = NaiveDate> {
    std::iter::successors(Some(first), move |&at| Some(period.next(at)))
        .take_while(move |&at| at <= last)
}

/// What a window says above a table: which occurrences it counts.
pub fn window_line(shown: &Shown) -> Option<Vec<Piece>> {
    let w = &shown.window;
    if w.is_all() {
        return None;
    }
    let mut line = vec![label("counting what happened ")];
    if let Some(since) = w.since {
        line.push(label("from "));
        line.push(time(since));
    }
    if let Some(until) = w.until {
        line.push(label(if w.since.is_some() {
            " until "
        } else {
            "until "
        }));
        line.push(time(until));
    }
    if let Some(now) = shown.now {
        line.push(label(" (now: "));
        line.push(time(now));
        line.push(label(")"));
    }
    Some(line)
}

/// The whole report.
pub fn doc(report: &Report) -> Doc {
    doc_of(report, false, None)
}

fn doc_of(report: &Report, with_message: bool, link: PairLink) -> Doc {
    let (rules, s) = (report.rules, report.summary);
    let mut doc = Doc::default();
    doc.push(Block::Title("fsmlog report".to_string()));
    doc.line(totals(rules, s, report.problems));
    if let Some(line) = window_line(&report.window) {
        doc.line(line);
    }
    if s.merged_machines > 0 {
        let mut line = counted(s.merged_machines, "machine");
        line.push(label(format!(
            " read from several records (inputs, or exports appended to one file) and merged; {} duplicate events counted once",
            s.duplicates
        )));
        doc.line(line);
    }
    let pairs = s.pairs.len() as u64;
    let mut heading = vec![label("Unexpected transitions: ")];
    heading.extend(counted(pairs, "pair"));
    heading.push(label(" (times in UTC)"));
    doc.heading(heading);
    doc.table(pairs_table(
        s,
        &report.pairs(),
        report.verdicts,
        report.period,
        with_message,
        link,
    ));
    cascade_lines(&mut doc, s);
    if let Some(dimension) = report.breakdown {
        breakdown(&mut doc, report, dimension);
    }
    if !s.unknown_events.is_empty() {
        doc.heading(vec![label("Unknown events (skipped by the replay)")]);
        for (name, t) in &s.unknown_events {
            doc.line(vec![
                label("unknown event \""),
                input(name.clone()),
                label(format!(
                    "\" ×{} on {}",
                    t.count,
                    crate::render::sentence::amount(t.machines, "machine")
                )),
            ]);
        }
    }
    // metal-api's own flags, as its FSM leaves them: not a verdict of fsmlog's.
    doc.heading(vec![label("Machines")]);
    let mut crash = vec![label(format!(
        "metal-api's crash-loop flag ({}): ",
        s.crash_loop.len()
    ))];
    crash.extend(machine_list(s.crash_loop.iter()));
    doc.line(crash);
    if let Some(line) = phrases::crash_loop_waiting(s) {
        doc.line(line);
    }
    let mut failed = vec![label(format!(
        "metal-api's failed-reclaim flag ({}): ",
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

/// `--by partition|rack|size`: each pair's counts per value, in the pairs' order, most
/// occurrences first within a pair.
fn breakdown(doc: &mut Doc, report: &Report, dimension: Dimension) {
    let name = dimension.name();
    doc.heading(vec![label(format!("Unexpected transitions by {name}"))]);
    let mut title = name.to_string();
    title[..1].make_ascii_uppercase();
    let mut grid = Grid::new(vec![
        Column::new("State"),
        Column::new("Event"),
        Column::new(title),
        Column::number("Count"),
        Column::number("Machines"),
        Column::new("First seen").or_left_out(1),
        Column::new("Last seen").or_left_out(0),
    ]);
    for ((state, event), t) in report.pairs() {
        for (value, split) in t.split_by_count() {
            grid.row(vec![
                label(state.name()),
                label(event.name()),
                match value {
                    Some(value) => input(value.to_string()),
                    // Said as such: an export without places is not one place.
                    None => label("(not in the export)").tone(Tone::Faint),
                },
                count(split.count).tone(Tone::Bad),
                count(split.machines),
                time(split.first_seen),
                time(split.last_seen),
            ]);
        }
    }
    doc.table(grid);
}

/// Under the pairs: which of them follow from another (cascades), so that one cause is not
/// read as several problems.
fn cascade_lines(doc: &mut Doc, s: &Summary) {
    for ((state, event), t) in s.pairs_by_count() {
        let cascades = t.classes.cascades();
        if cascades == 0 {
            continue;
        }
        let roots: Vec<String> = t
            .classes
            .roots_by_count()
            .iter()
            .map(|((s, e), n)| format!("{e} in {s} ×{n}"))
            .collect();
        doc.line(vec![label(format!(
            "cascades: {cascades} of the {} {event} in {state} follow an unexpected {}",
            t.count,
            roots.join(", ")
        ))]);
    }
}

/// The report with each pair's first message and the input problems, for a page that is read
/// without a terminal's stderr beside it; each pair a link where `link` gives one.
pub fn doc_with_problems(report: &Report, link: PairLink) -> Doc {
    let mut doc = doc_of(report, true, link);
    verdict_notes(&mut doc, report, link);
    let p = report.problems;
    if p.errors.is_empty() && p.skipped.is_empty() {
        return doc;
    }
    doc.heading(vec![label("Input problems")]);
    let mut grid = Grid::new(vec![
        Column::new("File"),
        Column::number("Line"),
        Column::wrapping("Problem"),
    ]);
    for error in &p.errors {
        grid.row(vec![
            input(error.path.clone()),
            if error.line > 0 {
                count(error.line as u64)
            } else {
                Value::Empty.into()
            },
            input(error.message.clone()).tone(Tone::Bad),
        ]);
    }
    for skipped in &p.skipped {
        grid.row(vec![
            input(skipped.path.clone()),
            Value::Empty.into(),
            input(format!("skipped: {}", skipped.reason)).tone(Tone::Faint),
        ]);
    }
    doc.table(grid);
    doc
}

/// Each pair's verdict in full, with its precedents as links and what to run next: the page
/// has no `explain` beside it.
fn verdict_notes(doc: &mut Doc, report: &Report, link: PairLink) {
    let judged: Vec<_> = report
        .pairs()
        .into_iter()
        .filter_map(|(pair, t)| Some((pair, t, report.verdicts.get(pair)?)))
        .collect();
    if judged.is_empty() {
        return;
    }
    doc.heading(vec![label("Verdicts")]);
    for (pair, t, v) in judged {
        let (state, event) = pair;
        let name = format!("{event} in {state}");
        let heading = match link {
            Some(link) => Value::Link {
                text: name,
                url: link(pair),
            }
            .into(),
            None => label(name),
        };
        doc.line(vec![heading.tone(Tone::Strong)]);
        verdicts::verdict_lines(doc, v);
        // The pair's examples in full: where the table's shortened ids link to.
        let mut examples = vec![label("examples: ")];
        for (i, id) in t.examples.iter().enumerate() {
            if i > 0 {
                examples.push(label(", "));
            }
            examples.push(Value::Example(id.clone()).into());
        }
        let rest = t.machines.saturating_sub(t.examples.len() as u64);
        if rest > 0 {
            examples.push(label(format!(
                " and {}",
                crate::render::sentence::amount(rest, "more machine")
            )));
        }
        doc.line(examples);
        if let Some(machine) = t.examples.first() {
            verdicts::next_steps(doc, v, machine);
        }
    }
}

fn verdict_text(state: Option<State>) -> String {
    match state {
        Some(state) => format!("unexpected in {state}"),
        None => "expected".to_string(),
    }
}
