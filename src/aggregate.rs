//! Fleet tallies: each machine's trace folds into a `Summary`, and summaries add up with `+=`,
//! so files and machines can be counted in any order (or in parallel) with the same result.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::AddAssign;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};

use crate::diagnose::{
    Class, Classes, Decisions, Diagnosis, Fleet, PairVerdict, Reboot, handled_by,
    in_autoreboot_window, newer_than, verdict,
};
use crate::event::{EventKind, Location, Pair, State};
use crate::input::FilesRead;
use crate::input::merge::Merged;
use crate::log::{Dimension, Place, Shape};
use crate::replay::{Handling, Step, Trace};
use crate::window::{Period, Window};

mod breakdown;
mod machine;
pub use breakdown::{Breakdown, Split};
use breakdown::{merge_splits, observe_split, splits_by_count};
pub use machine::{Accounting, EndFlags, MachineTally};

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

/// How often an unknown event name was read, and on how many machines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameTally {
    pub count: u64,
    pub machines: u64,
}

/// A recorded verdict that this replay does not reproduce: the event, the state metal-api
/// recorded it as unexpected in (`None`: recorded as expected) and the state this replay
/// finds it unexpected in (`None`: expected here).
pub type Disagreement = (EventKind, Option<State>, Option<State>);

/// The verdict of each unexpected pair.
pub type Verdicts = BTreeMap<Pair, PairVerdict>;

/// Everything `report` says about a fleet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub files: u64,
    /// Files per format name (`list-json`, `list-yaml`, …).
    pub formats: BTreeMap<Shape, u64>,
    pub machines: u64,
    /// Events read: replayed + rejected + unknown + duplicates.
    pub events: u64,
    /// Events dropped because another record of the same machine had them too.
    pub duplicates: u64,
    /// Machines assembled from more than one record.
    pub merged_machines: u64,
    /// Gap markers of raw streams (a collector missed events), and the machines they are of.
    pub gaps: u64,
    pub gap_machines: u64,
    /// Lines of pasted logs that were no rows (prose, blank lines) and were skipped.
    pub skipped_lines: u64,
    /// The newest event replayed: the data's own clock (`--now` by default).
    pub newest_event: Option<DateTime<Utc>>,
    pub replayed: u64,
    pub rejected: u64,
    /// Of the events replayed or rejected, those at a time the window holds: what a gate on
    /// `--since`/`--until` passes on.
    pub judged_in_window: u64,
    pub unknown_events: BTreeMap<String, NameTally>,
    pub pairs: BTreeMap<Pair, PairTally>,
    pub crash_loop: BTreeSet<String>,
    /// Of those, the machines whose newest stored event is Waiting: metal-api's crashloop
    /// issue leaves them out (issues/crash-loop.go).
    pub crash_loop_waiting: BTreeSet<String>,
    pub failed_machine_reclaim: BTreeSet<String>,
    pub disagreements: BTreeMap<Disagreement, u64>,
    /// Machines per rule change the diagnosis found reason for (one decision per event).
    pub decisions: Decisions,
}

/// What a view counts and how: the window occurrences must fall in, and the periods of the
/// pairs' trend series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counting {
    pub window: Window,
    pub period: Option<Period>,
    /// The dimension the pairs' counts are broken down by (`--by partition|rack|size`).
    pub breakdown: Option<Dimension>,
}

impl Summary {
    /// Folds one machine into the tallies: its trace, what the diagnosis found of it (see
    /// [`Diagnosis::of`]; `Diagnosis::default()` where a view needs none), and what merging
    /// its records dropped.
    pub fn add_machine(
        &mut self,
        trace: &Trace,
        merged: &Merged,
        counting: &Counting,
        diagnosis: &Diagnosis,
    ) {
        self.add_counted(trace, counting, diagnosis);
        self.add_accounting(Accounting {
            newest_event: merged.log.newest_event(),
            duplicates: merged.duplicates,
            skipped_lines: merged.log.skipped_lines,
            records: merged.records,
            gaps: merged.log.gaps.len() as u64,
        });
    }

    /// Folds one machine's trace into the tallies, counting every occurrence.
    pub fn add_trace(&mut self, trace: &Trace) {
        self.add_counted(trace, &Counting::default(), &Diagnosis::default());
    }

    /// Folds one machine's trace into the tallies: every event in the input accounting, the
    /// occurrences in the window in the pairs and disagreements.
    pub fn add_counted(&mut self, trace: &Trace, counting: &Counting, diagnosis: &Diagnosis) {
        let mut machine = MachineTally::default();
        let judged = trace.steps.iter().chain(trace.last_error_only.iter());
        for (i, step) in judged.enumerate() {
            let occurrence = Occurrence::of(step, trace);
            if !machine.step(self, step, &occurrence, counting, trace.annotated) {
                continue;
            }
            let pair = (step.from, step.event);
            machine.newer(self, pair, diagnosis.newer(i));
            let class = if i < trace.steps.len() {
                diagnosis.class(i)
            } else {
                diagnosis.outside
            };
            if let Some(class) = class {
                let autoreboot = (class == Class::UnannouncedReboot(Reboot::InWaiting))
                    .then(|| in_autoreboot_window(&trace.steps, i))
                    .flatten();
                machine.class(self, pair, class, diagnosis.root(i), autoreboot);
            }
        }
        for unknown in &trace.unknown {
            machine.unknown(self, &unknown.name);
        }
        self.add_end(
            &trace.machine,
            EndFlags {
                crash_loop: trace.container.crash_loop,
                newest: trace.container.events.front().map(|e| e.event),
                failed_machine_reclaim: trace.container.failed_machine_reclaim,
            },
        );
    }

    fn count_unexpected(
        &mut self,
        step: &Step,
        occurrence: &Occurrence,
        first_on_machine: bool,
        counting: &Counting,
    ) -> &mut PairTally {
        let tally = self
            .pairs
            .entry((step.from, step.event))
            .or_insert_with(|| PairTally::new(step.time));
        tally.observe(occurrence, first_on_machine);
        if let Some(period) = counting.period {
            *tally.series.entry(period.start(step.time)).or_default() += 1;
        }
        if let Some(dimension) = counting.breakdown {
            let value = occurrence.place.and_then(|p| p.of(dimension));
            observe_split(&mut tally.split, value, step.time, first_on_machine);
        }
        tally
    }

    /// Every pair's verdict (see [`crate::diagnose::verdict`]) for a fleet replayed under
    /// the rule set named `replayed`, with the newer built-in rule set that handles it.
    pub fn verdicts(&self, min_machines: u64, replayed: &str) -> Verdicts {
        let fleet = Fleet {
            min_machines,
            decisions: self.decisions.clone(),
        };
        let newer = newer_than(replayed);
        self.pairs
            .iter()
            .map(|(pair, t)| {
                let mut v = verdict(*pair, &t.classes, t.machines, &fleet);
                v.handled_by = handled_by(*pair, &newer, t.classes.under_newer, t.count);
                (*pair, v)
            })
            .collect()
    }

    /// The unexpected pairs, most frequent first, then by state and event.
    pub fn pairs_by_count(&self) -> Vec<(&Pair, &PairTally)> {
        by_count(&self.pairs)
    }

    /// Takes the count of files a fold read.
    pub fn files_read(&mut self, files: FilesRead) {
        self.files = files.count;
        self.formats = files.formats;
    }
}

/// Adds tallies keyed by pair into another such map.
pub fn merge_pairs<K: Ord>(mine: &mut BTreeMap<K, PairTally>, other: BTreeMap<K, PairTally>) {
    for (key, tally) in other {
        match mine.get_mut(&key) {
            Some(existing) => existing.merge(tally),
            None => {
                mine.insert(key, tally);
            }
        }
    }
}

/// Sorts tallies most frequent first, then by key.
pub fn by_count<K: Ord>(pairs: &BTreeMap<K, PairTally>) -> Vec<(&K, &PairTally)> {
    let mut sorted: Vec<_> = pairs.iter().collect();
    sorted.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
    sorted
}

/// The disagreement a step shows, if its recorded verdict differs from the replayed one.
fn disagreement(step: &Step) -> Option<Disagreement> {
    let replayed = match step.handling {
        Handling::Unexpected => Some(step.from),
        Handling::Expected => None,
        Handling::Rejected => return None,
    };
    (replayed != step.recorded_state).then_some((step.event, step.recorded_state, replayed))
}

impl AddAssign for Summary {
    fn add_assign(&mut self, other: Summary) {
        self.files += other.files;
        for (format, n) in other.formats {
            *self.formats.entry(format).or_default() += n;
        }
        self.machines += other.machines;
        self.events += other.events;
        self.duplicates += other.duplicates;
        self.merged_machines += other.merged_machines;
        self.gaps += other.gaps;
        self.gap_machines += other.gap_machines;
        self.skipped_lines += other.skipped_lines;
        self.newest_event = self.newest_event.max(other.newest_event);
        self.replayed += other.replayed;
        self.judged_in_window += other.judged_in_window;
        self.rejected += other.rejected;
        for (name, tally) in other.unknown_events {
            let mine = self.unknown_events.entry(name).or_default();
            mine.count += tally.count;
            mine.machines += tally.machines;
        }
        merge_pairs(&mut self.pairs, other.pairs);
        self.crash_loop.extend(other.crash_loop);
        self.crash_loop_waiting.extend(other.crash_loop_waiting);
        self.failed_machine_reclaim
            .extend(other.failed_machine_reclaim);
        for (key, n) in other.disagreements {
            *self.disagreements.entry(key).or_default() += n;
        }
        for (key, n) in other.decisions {
            *self.decisions.entry(key).or_default() += n;
        }
    }
}

#[cfg(test)]
mod tests;
