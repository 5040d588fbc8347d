//! The order lists are shown in: as fsmlog always lists them (pairs most frequent first,
//! machines worst first), or by the columns `--sort-by` names in metal-lib's syntax
//! (`count:desc,state`: comma-separated columns, each ascending unless `:desc`), as metalctl's
//! lists sort. The named columns decide first; ties keep the usual order.

use std::cmp::Ordering;

use crate::aggregate::PairTally;
use crate::event::Pair;
use crate::issues::{Audited, MachineFacts};
use crate::log::Place;

/// The columns of one kind of list that `--sort-by` can name.
pub trait Column: Copy + Eq + std::fmt::Debug + 'static {
    /// What one row of the list is, as the columns compare it.
    type Row<'a>: Copy;
    /// Every column, with its name on the command line.
    const ALL: &'static [(Self, &'static str)];
    /// Compares two rows by this column, ascending.
    fn compare(self, a: Self::Row<'_>, b: Self::Row<'_>) -> Ordering;
}

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

impl Column for PairColumn {
    type Row<'a> = (&'a Pair, &'a PairTally);

    const ALL: &'static [(PairColumn, &'static str)] = &[
        (PairColumn::State, "state"),
        (PairColumn::Event, "event"),
        (PairColumn::Count, "count"),
        (PairColumn::Machines, "machines"),
        (PairColumn::FirstSeen, "first-seen"),
        (PairColumn::LastSeen, "last-seen"),
    ];

    fn compare(self, (a, at): Self::Row<'_>, (b, bt): Self::Row<'_>) -> Ordering {
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

/// A column `issues` can sort its machines by: metalctl's `machine issues` keys that an export
/// holds (`id`, `partition`, `rack`, `size`, `project`, `liveliness`, `when`, `event`), and the
/// columns of fsmlog's own table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineColumn {
    Id,
    Partition,
    Rack,
    Size,
    Project,
    Hostname,
    Liveliness,
    When,
    Event,
    State,
    Severity,
}

impl Column for MachineColumn {
    type Row<'a> = &'a Audited;

    const ALL: &'static [(MachineColumn, &'static str)] = &[
        (MachineColumn::Id, "id"),
        (MachineColumn::Partition, "partition"),
        (MachineColumn::Rack, "rack"),
        (MachineColumn::Size, "size"),
        (MachineColumn::Project, "project"),
        (MachineColumn::Hostname, "hostname"),
        (MachineColumn::Liveliness, "liveliness"),
        (MachineColumn::When, "when"),
        (MachineColumn::Event, "event"),
        (MachineColumn::State, "state"),
        (MachineColumn::Severity, "severity"),
    ];

    fn compare(self, a: &Audited, b: &Audited) -> Ordering {
        let (fa, fb) = (&a.facts, &b.facts);
        // A value the export does not hold sorts as metalctl's empty string: first.
        let place = |pick: fn(&Place) -> &Option<String>| placed(fa, pick).cmp(&placed(fb, pick));
        match self {
            MachineColumn::Id => fa.machine.cmp(&fb.machine),
            MachineColumn::Partition => place(|p| &p.partition),
            MachineColumn::Rack => place(|p| &p.rack),
            MachineColumn::Size => place(|p| &p.size),
            MachineColumn::Project => place(|p| &p.project),
            MachineColumn::Hostname => place(|p| &p.hostname),
            MachineColumn::Liveliness => fa.liveliness.cmp(&fb.liveliness),
            // metalctl sorts `when` by how long ago: the newest event first (and a machine
            // without one last).
            MachineColumn::When => fb.last_event_time.cmp(&fa.last_event_time),
            // metalctl compares the newest event's name as text.
            MachineColumn::Event => {
                let name = |f: &MachineFacts| f.newest_stored.map(|e| e.name());
                name(fa).cmp(&name(fb))
            }
            MachineColumn::State => fa.state.cmp(&fb.state),
            MachineColumn::Severity => a.worst().cmp(&b.worst()),
        }
    }
}

/// One member of where a machine is, `None` where its export does not say.
fn placed(facts: &MachineFacts, pick: fn(&Place) -> &Option<String>) -> Option<&str> {
    facts.place.as_deref().and_then(|p| pick(p).as_deref())
}

/// One column of `--sort-by` and its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortKey<C> {
    pub column: C,
    pub descending: bool,
}

impl<C: Column> SortKey<C> {
    /// Reads one column as metal-lib's `ParseSortFlags` does: `count`, `count:desc`,
    /// `count:ascending`, in any case, spaces around ignored.
    pub fn parse(text: &str) -> Result<SortKey<C>, String> {
        let text = text.trim().to_lowercase();
        let (name, direction) = text.split_once(':').unwrap_or((&text, "asc"));
        let descending = match direction {
            "asc" | "ascending" => false,
            "desc" | "descending" => true,
            other => return Err(format!("unsupported sort direction: {other}")),
        };
        let column = C::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(c, _)| *c)
            .ok_or_else(|| {
                let names: Vec<&str> = C::ALL.iter().map(|(_, n)| *n).collect();
                format!(
                    "sort key does not exist: {name} (possible: {})",
                    names.join("|")
                )
            })?;
        Ok(SortKey { column, descending })
    }
}

/// How a list is ordered: the `--sort-by` keys, none for the usual order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order<C>(pub Vec<SortKey<C>>);

impl<C> Default for Order<C> {
    fn default() -> Self {
        Order(Vec::new())
    }
}

/// How a list of pairs is ordered.
pub type PairOrder = Order<PairColumn>;

/// How `issues` orders its machines.
pub type MachineOrder = Order<MachineColumn>;

impl<C: Column> Order<C> {
    /// Sorts items, already in the usual order, by the named columns; `row` reads an item's
    /// row (items without one go last, as they stand).
    pub fn sort<T>(&self, items: &mut [T], row: impl for<'a> Fn(&'a T) -> Option<C::Row<'a>>) {
        if self.0.is_empty() {
            return;
        }
        items.sort_by(|a, b| {
            let (a, b) = match (row(a), row(b)) {
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
    use crate::issues::IssueType;
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
            SortKey::<PairColumn>::parse(" Count:DESC "),
            Ok(SortKey {
                column: PairColumn::Count,
                descending: true
            })
        );
        assert!(!SortKey::<PairColumn>::parse("machines").unwrap().descending);
        assert!(
            SortKey::<PairColumn>::parse("count:up")
                .unwrap_err()
                .contains("direction")
        );
        assert!(
            SortKey::<PairColumn>::parse("colour")
                .unwrap_err()
                .contains("first-seen")
        );
        let a = (State::Waiting, EventKind::PxeBooting);
        let b = (State::Preparing, EventKind::Preparing);
        let c = (State::PhonedHome, EventKind::Alive);
        let (ta, tb, tc) = (tally(8, 6), tally(24, 3), tally(8, 1));
        // The usual order: most frequent first.
        let usual = vec![(&b, &tb), (&a, &ta), (&c, &tc)];
        let sorted = |keys: &str| {
            let order: PairOrder = Order(
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

    fn judged(
        id: &str,
        rack: Option<&str>,
        last: Option<i64>,
        worst: Option<IssueType>,
    ) -> Audited {
        let place = rack.map(|r| {
            std::sync::Arc::new(Place {
                rack: Some(r.to_string()),
                ..Place::default()
            })
        });
        Audited {
            facts: MachineFacts {
                machine: id.to_string(),
                state: State::Waiting,
                newest_stored: Some(EventKind::Waiting),
                last_event_time: last.map(|s| DateTime::from_timestamp(s, 0).unwrap()),
                last_error_time: None,
                crash_loop: false,
                failed_machine_reclaim: false,
                liveliness: None,
                allocated: None,
                no_event_container: false,
                place,
                machine_object: false,
                says_partition: false,
                bmc: None,
                unexpected: Default::default(),
            },
            issues: worst
                .map(|kind| crate::issues::Issue {
                    kind,
                    evidence: crate::issues::Evidence::NoEvents,
                })
                .into_iter()
                .collect(),
        }
    }

    #[test]
    fn machines_sort_as_metalctl_sorts_them() {
        // The usual order: worst first, then by id.
        let usual = vec![
            judged(
                "a",
                Some("rack02"),
                Some(100),
                Some(IssueType::FailedMachineReclaim),
            ),
            judged("b", None, None, Some(IssueType::Stuck)),
            judged(
                "c",
                Some("rack01"),
                Some(300),
                Some(IssueType::LastEventError),
            ),
            judged("d", Some("rack02"), Some(200), None),
        ];
        let sorted = |keys: &str| {
            let order: MachineOrder = Order(
                keys.split(',')
                    .map(|k| SortKey::parse(k).unwrap())
                    .collect(),
            );
            let mut items = usual.clone();
            order.sort(&mut items, |j| Some(j));
            items
                .iter()
                .map(|j| j.facts.machine.as_str())
                .collect::<String>()
        };
        // A machine whose export names no rack sorts as metalctl's empty string: first.
        assert_eq!(sorted("rack"), "bcad");
        assert_eq!(sorted("rack:desc"), "adcb");
        // `when` is how long ago: the newest event first, a machine without one last.
        assert_eq!(sorted("when"), "cdab");
        assert_eq!(sorted("when:desc"), "badc");
        assert_eq!(sorted("severity"), "dcba");
        assert_eq!(sorted("rack:desc,when"), "dacb");
        assert_eq!(sorted("id:desc"), "dcba");
        // `event` is the newest event's name as text, as metalctl compares it: Phoned Home
        // before Waiting, though Waiting comes first in the lifecycle.
        let mut by_event = usual.clone();
        for (j, e) in by_event.iter_mut().zip([
            EventKind::Waiting,
            EventKind::PhonedHome,
            EventKind::PxeBooting,
        ]) {
            j.facts.newest_stored = Some(e);
        }
        let order: MachineOrder = Order(vec![SortKey::parse("event").unwrap()]);
        order.sort(&mut by_event, |j| Some(j));
        let names: Vec<&str> = by_event
            .iter()
            .map(|j| j.facts.newest_stored.unwrap().name())
            .collect();
        assert_eq!(names, ["PXE Booting", "Phoned Home", "Waiting", "Waiting"]);
        assert!(
            SortKey::<MachineColumn>::parse("count")
                .unwrap_err()
                .contains("possible: id|partition")
        );
    }
}
