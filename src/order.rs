//! The order pairs are listed in: most frequent first, as fsmlog always lists them, or by the
//! columns `--sort-by` names in metal-lib's syntax (`count:desc,state`: comma-separated
//! columns, each ascending unless `:desc`), as metalctl's lists sort. The named columns
//! decide first; ties keep the usual order.

use std::cmp::Ordering;

use crate::aggregate::PairTally;
use crate::event::Pair;

/// A column pairs can be sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairColumn {
    State,
    Event,
    Count,
    Machines,
    FirstSeen,
    LastSeen,
}

impl PairColumn {
    /// Every column, with its name on the command line.
    pub const ALL: [(PairColumn, &'static str); 6] = [
        (PairColumn::State, "state"),
        (PairColumn::Event, "event"),
        (PairColumn::Count, "count"),
        (PairColumn::Machines, "machines"),
        (PairColumn::FirstSeen, "first-seen"),
        (PairColumn::LastSeen, "last-seen"),
    ];

    fn compare(self, (a, at): (&Pair, &PairTally), (b, bt): (&Pair, &PairTally)) -> Ordering {
        match self {
            PairColumn::State => a.0.cmp(&b.0),
            PairColumn::Event => a.1.cmp(&b.1),
            PairColumn::Count => at.count.cmp(&bt.count),
            PairColumn::Machines => at.machines.cmp(&bt.machines),
            PairColumn::FirstSeen => at.first_seen.cmp(&bt.first_seen),
            PairColumn::LastSeen => at.last_seen.cmp(&bt.last_seen),
        }
    }
}

/// One column of `--sort-by` and its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortKey {
    pub column: PairColumn,
    pub descending: bool,
}

impl SortKey {
    /// Reads one column as metal-lib's `ParseSortFlags` does: `count`, `count:desc`,
    /// `count:ascending`, in any case, spaces around ignored.
    pub fn parse(text: &str) -> Result<SortKey, String> {
        let text = text.trim().to_lowercase();
        let (name, direction) = text.split_once(':').unwrap_or((&text, "asc"));
        let descending = match direction {
            "asc" | "ascending" => false,
            "desc" | "descending" => true,
            other => return Err(format!("unsupported sort direction: {other}")),
        };
        let names: Vec<&str> = PairColumn::ALL.iter().map(|(_, n)| *n).collect();
        let column = PairColumn::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(c, _)| *c)
            .ok_or_else(|| {
                format!(
                    "sort key does not exist: {name} (possible: {})",
                    names.join("|")
                )
            })?;
        Ok(SortKey { column, descending })
    }
}

/// How a list of pairs is ordered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairOrder(pub Vec<SortKey>);

impl PairOrder {
    /// Sorts items, already in the usual order, by the named columns; `pair` reads an item's
    /// pair and tally (items without one go last, as they stand).
    pub fn sort<T>(&self, items: &mut [T], pair: impl Fn(&T) -> Option<(&Pair, &PairTally)>) {
        if self.0.is_empty() {
            return;
        }
        items.sort_by(|a, b| {
            let (a, b) = match (pair(a), pair(b)) {
                (Some(a), Some(b)) => (a, b),
                (a, b) => return b.is_some().cmp(&a.is_some()),
            };
            self.0
                .iter()
                .map(|key| {
                    let order = key.column.compare(a, b);
                    if key.descending {
                        order.reverse()
                    } else {
                        order
                    }
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventKind, State};
    use chrono::DateTime;

    fn tally(count: u64, machines: u64) -> PairTally {
        let mut t = PairTally::new(DateTime::from_timestamp(1_756_684_800, 0).unwrap());
        t.count = count;
        t.machines = machines;
        t
    }

    #[test]
    fn columns_sort_as_metal_lib_spells_them_and_ties_keep_the_usual_order() {
        assert_eq!(
            SortKey::parse(" Count:DESC "),
            Ok(SortKey {
                column: PairColumn::Count,
                descending: true
            })
        );
        assert!(!SortKey::parse("machines").unwrap().descending);
        assert!(
            SortKey::parse("count:up")
                .unwrap_err()
                .contains("direction")
        );
        assert!(SortKey::parse("colour").unwrap_err().contains("first-seen"));
        let a = (State::Waiting, EventKind::PxeBooting);
        let b = (State::Preparing, EventKind::Preparing);
        let c = (State::PhonedHome, EventKind::Alive);
        let (ta, tb, tc) = (tally(8, 6), tally(24, 3), tally(8, 1));
        // The usual order: most frequent first.
        let usual = vec![(&b, &tb), (&a, &ta), (&c, &tc)];
        let sorted = |keys: &str| {
            let order = PairOrder(
                keys.split(',')
                    .map(|k| SortKey::parse(k).unwrap())
                    .collect(),
            );
            let mut items = usual.clone();
            order.sort(&mut items, |(p, t)| Some((*p, *t)));
            items.iter().map(|(p, _)| **p).collect::<Vec<_>>()
        };
        assert_eq!(sorted("machines:desc"), [a, b, c]);
        assert_eq!(sorted("machines"), [c, b, a]);
        // Equal counts keep the usual order; then the second key decides.
        assert_eq!(sorted("count"), [a, c, b]);
        assert_eq!(sorted("count,machines"), [c, a, b]);
        assert_eq!(sorted("state"), [b, a, c], "metal-api's state order");
    }
}
