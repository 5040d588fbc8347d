//! `check`'s text view: the gate's verdict and each pair against the baseline.

use crate::gate::BaselineState;
use crate::render::doc::{Block, Column, Doc, Grid, Tone, Value, count, input, label, sep};
use crate::render::reports::CheckReport;
use crate::render::sentence;

use super::phrases::counted;

/// The gate's verdict.
pub fn doc(report: &CheckReport) -> Doc {
    let result = report.result;
    let failed = result.violations().count();
    let mut doc = Doc::default();
    doc.push(Block::Title("fsmlog check".to_string()));
    doc.line(vec![if let Some(nothing) = result.nothing_read {
        label(format!(
            "FAILED: {}, so there is nothing to pass on",
            sentence::nothing(nothing)
        ))
        .tone(Tone::Bad)
    } else if failed == 0 {
        label("passed").tone(Tone::Strong)
    } else {
        label(format!("FAILED: {failed} pairs beyond the baseline")).tone(Tone::Bad)
    }]);
    let mut line = vec![label("rules "), input(report.rules), sep()];
    match report.baseline {
        Some(path) => {
            line.push(label("baseline "));
            line.push(input(path.display().to_string()));
        }
        None => line.push(label("no baseline")),
    }
    line.push(sep());
    line.extend(counted(report.summary.machines, "machine"));
    line.push(sep());
    line.extend(counted(report.summary.events, "event"));
    line.push(sep());
    line.extend(counted(report.problems.errors.len() as u64, "input error"));
    doc.line(line);
    if let Some(line) = super::report::window_line(&report.window) {
        doc.line(line);
    }
    doc.heading(vec![label("Unexpected pairs against the baseline")]);
    let mut grid = Grid::new(vec![
        Column::new("State"),
        Column::new("Event"),
        Column::new("Baseline"),
        Column::number("Count"),
        Column::number("Machines"),
        Column::number("Share"),
        Column::number("Ceiling"),
        Column::new("Verdict"),
    ]);
    for pair in &result.pairs {
        let (n, machines) = pair
            .tally
            .as_ref()
            .map_or((0, 0), |t| (t.count, t.machines));
        let verdict = match (&pair.violation, pair.baseline) {
            (Some(v), _) => label(v.id()).tone(Tone::Bad),
            (None, BaselineState::Absent) => label("not seen").tone(Tone::Faint),
            (None, _) => label("accepted"),
        };
        grid.row(vec![
            label(pair.state.name()),
            label(pair.event.name()),
            label(pair.baseline.name()),
            count(n),
            count(machines),
            Value::Share(pair.share).into(),
            pair.ceiling.map_or(Value::Empty, Value::Share).into(),
            verdict,
        ]);
    }
    doc.table(grid);
    doc
}
