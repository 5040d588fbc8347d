//! `rules show`: a rule set as a state × event matrix.

use crate::event::{EventKind, State};
use crate::render::doc::{Column, Doc, Grid, Tone, label};
use crate::rules::Ruleset;

/// The target state, `self`, or `—` for unexpected, per state and event.
pub fn matrix(rules: &Ruleset) -> Doc {
    let mut columns = vec![Column::new("state \\ event")];
    columns.extend(EventKind::ALL.iter().map(|e| Column::new(e.name())));
    let mut grid = Grid::new(columns);
    grid.repeat_first = true;
    for state in State::ALL {
        let mut row = vec![label(state.name())];
        for event in EventKind::ALL {
            row.push(match rules.lookup(state, event) {
                Some(target) => label(target.to_string()),
                None => label("—").tone(Tone::Faint),
            });
        }
        grid.row(row);
    }
    let mut doc = Doc::default();
    doc.table(grid);
    doc
}
