//! One unexpected pair's tally: how often, on which machines, when, where it was first read,
//! and what its occurrences are; and one occurrence as the tally takes it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};

use super::breakdown::{Split, merge_splits, splits_by_count};
use crate::diagnose::Classes;
use crate::event::Location;
use crate::log::{Dimension, Place};
use crate::replay::{Step, Trace};

/// How many example machines a pair keeps (the smallest ids, so the choice is stable).
pub const EXAMPLES: usize = 3;

/// One unexpected event on one machine, where it was read.
#[derive(Debug, Clone, Copy)]
pub struct Occurrence<'a> {
    pub time: DateTime<Utc>,
    pub machine: &'a str,
    /// The file and line it was read at.
    pub source: &'a str,
    pub line: usize,
    /// The message the machine sent with it.
    pub message: &'a Arc<str>,
    /// Where the machine is, where its export says.
    pub place: Option<&'a Place>,
}

impl<'a> Occurrence<'a> {
    /// A step of a machine's trace.
    pub fn of(step: &'a Step, trace: &'a Trace) -> Occurrence<'a> {
        Occurrence {
            time: step.time,
            machine: &trace.machine,
            source: trace
                .sources
                .get(step.source as usize)
                .map_or(trace.source.as_str(), String::as_str),
            line: step.line,
            message: &step.message,
            place: trace.place.as_deref(),
        }
    }
}

/// The tally of one unexpected (state, event) pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairTally {
    pub count: u64,
    pub machines: u64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    pub examples: BTreeSet<String>,
    /// Where the first occurrence was read (the earliest; among equal times the smallest
    /// file and line), for output that points at a file.
    pub first_at: Option<Location>,
    /// The message of the first occurrence.
    pub first_message: Option<Arc<str>>,
    /// Occurrences per period (by the period's first day), where a trend was asked for.
    pub series: BTreeMap<NaiveDate, u64>,
    /// What the occurrences are (see [`crate::diagnose`]), where the machines were diagnosed.
    pub classes: Classes,
    /// The pair's machines per (dimension, value), where their exports say where they are.
    pub places: BTreeMap<(Dimension, String), u64>,
    /// The counts per value of the dimension `--by` breaks them down by (`None`: machines
    /// whose export does not say), where a breakdown was asked for.
    pub split: BTreeMap<Option<String>, Split>,
}

impl PairTally {
    /// A tally with nothing counted yet.
    pub fn new(time: DateTime<Utc>) -> PairTally {
        PairTally {
            count: 0,
            machines: 0,
            first_seen: time,
            last_seen: time,
            examples: BTreeSet::new(),
            first_at: None,
            first_message: None,
            series: BTreeMap::new(),
            classes: Classes::default(),
            places: BTreeMap::new(),
            split: BTreeMap::new(),
        }
    }

    /// Counts one occurrence; `first_on_machine` when its machine has not been counted for
    /// this pair yet.
    pub fn observe(&mut self, o: &Occurrence, first_on_machine: bool) {
        let earlier = match &self.first_at {
            None => true,
            Some(at) => {
                o.time < self.first_seen
                    || (o.time == self.first_seen
                        && (o.source, o.line) < (at.path.as_str(), at.line))
            }
        };
        if earlier {
            self.first_at = Some(Location {
                path: o.source.to_string(),
                line: o.line,
            });
            self.first_message = Some(Arc::clone(o.message));
        }
        self.count += 1;
        self.first_seen = if self.count == 1 {
            o.time
        } else {
            self.first_seen.min(o.time)
        };
        self.last_seen = if self.count == 1 {
            o.time
        } else {
            self.last_seen.max(o.time)
        };
        if first_on_machine {
            self.machines += 1;
            if let Some(place) = o.place {
                for dimension in Dimension::ALL {
                    if let Some(value) = place.of(dimension) {
                        *self
                            .places
                            .entry((dimension, value.to_string()))
                            .or_default() += 1;
                    }
                }
            }
            if self.examples.len() < EXAMPLES
                || self
                    .examples
                    .last()
                    .is_some_and(|last| o.machine < last.as_str())
            {
                self.examples.insert(o.machine.to_string());
                keep_smallest(&mut self.examples);
            }
        }
    }

    /// Adds another tally of the same pair.
    pub fn merge(&mut self, other: PairTally) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other;
            return;
        }
        if (other.first_seen, &other.first_at) < (self.first_seen, &self.first_at) {
            self.first_at = other.first_at;
            self.first_message = other.first_message;
        }
        self.count += other.count;
        self.machines += other.machines;
        self.first_seen = self.first_seen.min(other.first_seen);
        self.last_seen = self.last_seen.max(other.last_seen);
        self.examples.extend(other.examples);
        keep_smallest(&mut self.examples);
        self.classes += other.classes;
        for (period, n) in other.series {
            *self.series.entry(period).or_default() += n;
        }
        for (place, n) in other.places {
            *self.places.entry(place).or_default() += n;
        }
        merge_splits(&mut self.split, other.split);
    }

    /// The breakdown `--by` asked for, most occurrences first (then by value; machines whose
    /// export does not say last).
    pub fn split_by_count(&self) -> Vec<(Option<&str>, &Split)> {
        splits_by_count(&self.split)
    }

    /// The machines per value of a dimension, most first (then by value).
    pub fn where_(&self, dimension: Dimension) -> Vec<(&str, u64)> {
        let mut values: Vec<(&str, u64)> = self
            .places
            .range((dimension, String::new())..)
            .take_while(|((d, _), _)| *d == dimension)
            .map(|((_, v), n)| (v.as_str(), *n))
            .collect();
        values.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        values
    }
}

fn keep_smallest(examples: &mut BTreeSet<String>) {
    while examples.len() > EXAMPLES {
        examples.pop_last();
    }
}
