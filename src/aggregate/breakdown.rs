//! What `report --by` breaks a pair's counts down by, and the counts per partition, rack or
//! size.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::log::Dimension;
use crate::window::Period;

/// What `report --by` breaks the pairs' counts down by: a period (a trend) or where the
/// machines are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breakdown {
    Day,
    Week,
    Partition,
    Rack,
    Size,
}

impl Breakdown {
    /// The period of a trend.
    pub fn period(self) -> Option<Period> {
        match self {
            Breakdown::Day => Some(Period::Day),
            Breakdown::Week => Some(Period::Week),
            _ => None,
        }
    }

    /// The dimension of the fleet.
    pub fn dimension(self) -> Option<Dimension> {
        match self {
            Breakdown::Partition => Some(Dimension::Partition),
            Breakdown::Rack => Some(Dimension::Rack),
            Breakdown::Size => Some(Dimension::Size),
            _ => None,
        }
    }
}

/// A pair's counts among the machines of one partition, rack or size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub count: u64,
    pub machines: u64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
}

impl Split {
    fn observe(&mut self, time: DateTime<Utc>, first_on_machine: bool) {
        self.count += 1;
        self.machines += u64::from(first_on_machine);
        self.first_seen = self.first_seen.min(time);
        self.last_seen = self.last_seen.max(time);
    }

    fn merge(&mut self, other: &Split) {
        self.count += other.count;
        self.machines += other.machines;
        self.first_seen = self.first_seen.min(other.first_seen);
        self.last_seen = self.last_seen.max(other.last_seen);
    }
}

/// Counts one occurrence among the machines of `value`.
pub(super) fn observe_split(
    splits: &mut BTreeMap<Option<String>, Split>,
    value: Option<&str>,
    time: DateTime<Utc>,
    first_on_machine: bool,
) {
    // Looked up by reference first: most occurrences fall on a value already counted.
    if let Some(split) = splits.get_mut(&value.map(str::to_string)) {
        split.observe(time, first_on_machine);
        return;
    }
    splits.insert(
        value.map(str::to_string),
        Split {
            count: 1,
            machines: 1,
            first_seen: time,
            last_seen: time,
        },
    );
}

/// Adds another pair tally's counts per value.
pub(super) fn merge_splits(
    mine: &mut BTreeMap<Option<String>, Split>,
    other: BTreeMap<Option<String>, Split>,
) {
    for (value, split) in other {
        match mine.get_mut(&value) {
            Some(existing) => existing.merge(&split),
            None => {
                mine.insert(value, split);
            }
        }
    }
}

/// The counts per value, most occurrences first (then by value; machines whose export does
/// not say last).
pub(super) fn splits_by_count(
    splits: &BTreeMap<Option<String>, Split>,
) -> Vec<(Option<&str>, &Split)> {
    let mut values: Vec<(Option<&str>, &Split)> =
        splits.iter().map(|(v, s)| (v.as_deref(), s)).collect();
    values.sort_by(|a, b| {
        b.1.count
            .cmp(&a.1.count)
            .then(a.0.is_none().cmp(&b.0.is_none()))
            .then(a.0.cmp(&b.0))
    });
    values
}
