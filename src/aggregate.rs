//! Fleet tallies: each machine's trace folds into a `Summary`, and summaries add up with `+=`,
//! so files and machines can be counted in any order (or in parallel) with the same result.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::AddAssign;

use chrono::{DateTime, Utc};

use crate::diagnose::Judged;
use crate::diagnose::{
    Action, Class, Decisions, Diagnosis, Newer, PairVerdict, Reboot, VerdictContext, handled_by,
    in_autoreboot_window, newer_than, ruling, verdict,
};
use crate::event::{EventKind, Pair, State};
use crate::input::FilesRead;
use crate::log::{Dimension, Place, Shape};
use crate::replay::{Handling, Step, Trace};
use crate::window::{Period, Window};

mod breakdown;
mod pair;
pub use breakdown::Breakdown;
use breakdown::observe_split;
pub use pair::{Occurrence, PairTally};

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
    /// Folds one judged machine into the tallies: its replay, its diagnosis, and what
    /// merging its records dropped.
    pub fn add(&mut self, judged: &Judged, counting: &Counting) {
        self.add_judged(judged, counting, judged.diagnosis());
    }

    /// Folds one judged machine in without its diagnosis, every occurrence counted: the
    /// counts and flags without classes (the issues audit shows no verdict, and pays for
    /// none).
    pub fn add_undiagnosed(&mut self, judged: &Judged) {
        self.add_judged(judged, &Counting::default(), &Diagnosis::default());
    }

    fn add_judged(&mut self, judged: &Judged, counting: &Counting, diagnosis: &Diagnosis) {
        self.add_counted(judged.trace(), counting, diagnosis);
        let log = judged.log();
        let (duplicates, records) = judged.merging();
        self.add_accounting(Accounting {
            newest_event: log.newest_event(),
            duplicates,
            skipped_lines: log.skipped_lines,
            records,
            gaps: log.gaps.len() as u64,
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
        let context = VerdictContext {
            min_machines,
            decisions: self.decisions.clone(),
        };
        let newer = newer_than(replayed);
        self.pairs
            .iter()
            .map(|(pair, t)| {
                let mut v = verdict(*pair, &t.classes, t.machines, &context);
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

/// What one machine has counted once already: its pairs, classes per pair, reboot pairs, rule
/// changes and unknown names. Bounded by the numbers of pairs and classes, never by events.
#[derive(Debug, Clone, Default)]
pub struct MachineTally {
    pairs: BTreeSet<Pair>,
    classes: BTreeSet<(Pair, Class)>,
    reboots: BTreeSet<Pair>,
    decisions: BTreeSet<(EventKind, Action)>,
    unknown: BTreeSet<String>,
}

impl MachineTally {
    /// Counts one judged step (a row, or an exported last error outside the log) in the
    /// input's accounting, and where the window holds it, its disagreement and, if it is
    /// unexpected, its pair. Whether it was counted as an unexpected occurrence.
    pub fn step(
        &mut self,
        summary: &mut Summary,
        step: &Step,
        occurrence: &Occurrence,
        counting: &Counting,
        annotated: bool,
    ) -> bool {
        summary.events += 1;
        match step.handling {
            Handling::Rejected => summary.rejected += 1,
            Handling::Expected | Handling::Unexpected => summary.replayed += 1,
        }
        if !counting.window.contains(step.time) {
            return false;
        }
        summary.judged_in_window += 1;
        let unexpected = step.handling == Handling::Unexpected;
        if unexpected {
            let first = self.pairs.insert((step.from, step.event));
            summary.count_unexpected(step, occurrence, first, counting);
        }
        if annotated && let Some(key) = disagreement(step) {
            *summary.disagreements.entry(key).or_default() += 1;
        }
        unexpected
    }

    /// Counts what the diagnosis found an occurrence of `pair` to be: its class, the pair of
    /// its root, and for an unannounced reboot in Waiting whether it came in the autoreboot
    /// window (see [`crate::diagnose::in_autoreboot_window`]).
    pub fn class(
        &mut self,
        summary: &mut Summary,
        pair: Pair,
        class: Class,
        root: Option<Pair>,
        autoreboot: Option<bool>,
    ) {
        let first = self.classes.insert((pair, class));
        let reboot = matches!(class, Class::UnannouncedReboot(_)) && self.reboots.insert(pair);
        let tally = summary.pair_mut(pair);
        tally.classes.add(class, root, first);
        if reboot {
            tally.classes.add_reboot_machine();
        }
        if class == Class::UnannouncedReboot(Reboot::InWaiting) {
            tally.classes.add_autoreboot(autoreboot);
        }
        let action = ruling(class, pair.0, pair.1).action;
        if action.changes_rules() && self.decisions.insert((pair.1, action)) {
            *summary.decisions.entry((pair.1, action)).or_default() += 1;
        }
    }

    /// Counts what the newer release that buffers Phoned Home does with an occurrence of
    /// `pair` (`None`: it is none such a release swallows).
    pub fn newer(&mut self, summary: &mut Summary, pair: Pair, newer: Option<Newer>) {
        summary.pair_mut(pair).classes.add_newer(newer);
    }

    /// Counts an event whose name metal-api does not know.
    pub fn unknown(&mut self, summary: &mut Summary, name: &str) {
        summary.events += 1;
        let tally = summary.unknown_events.entry(name.to_string()).or_default();
        tally.count += 1;
        if !self.unknown.contains(name) {
            self.unknown.insert(name.to_string());
            tally.machines += 1;
        }
    }
}

/// The machine's flags as its container holds them at the end of its log.
#[derive(Debug, Clone, Copy, Default)]
pub struct EndFlags {
    pub crash_loop: bool,
    /// The newest stored event.
    pub newest: Option<EventKind>,
    pub failed_machine_reclaim: bool,
}

/// What merging a machine's records and reading them counted besides its steps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Accounting {
    /// See [`crate::log::MachineLog::newest_event`].
    pub newest_event: Option<DateTime<Utc>>,
    pub duplicates: u64,
    pub skipped_lines: u64,
    pub records: usize,
    pub gaps: u64,
}

impl Summary {
    /// The tally of `pair`, made where it is still missing (its times are set by the first
    /// occurrence counted, which always comes first).
    fn pair_mut(&mut self, pair: Pair) -> &mut PairTally {
        self.pairs
            .entry(pair)
            .or_insert_with(|| PairTally::new(DateTime::<Utc>::MIN_UTC))
    }

    /// Counts one machine (call once per machine) and its container's flags at the end.
    pub fn add_end(&mut self, machine: &str, flags: EndFlags) {
        self.machines += 1;
        if flags.crash_loop {
            self.crash_loop.insert(machine.to_string());
            if flags.newest == Some(EventKind::Waiting) {
                self.crash_loop_waiting.insert(machine.to_string());
            }
        }
        if flags.failed_machine_reclaim {
            self.failed_machine_reclaim.insert(machine.to_string());
        }
    }

    /// Counts what reading and merging one machine's records counted.
    pub fn add_accounting(&mut self, a: Accounting) {
        self.newest_event = self.newest_event.max(a.newest_event);
        self.events += a.duplicates;
        self.duplicates += a.duplicates;
        self.skipped_lines += a.skipped_lines;
        if a.records > 1 {
            self.merged_machines += 1;
        }
        self.gaps += a.gaps;
        self.gap_machines += u64::from(a.gaps > 0);
    }

    /// Puts one machine's summary, counted without its place, where the machine is: every
    /// pair's places and, where a breakdown by a dimension was asked for, its split (which
    /// for one machine has the one value of its place). Only for a summary of one machine.
    pub fn place_machine(&mut self, place: Option<&Place>, breakdown: Option<Dimension>) {
        let Some(place) = place else { return };
        for tally in self.pairs.values_mut() {
            if tally.count == 0 {
                continue;
            }
            for dimension in Dimension::ALL {
                if let Some(value) = place.of(dimension) {
                    *tally
                        .places
                        .entry((dimension, value.to_string()))
                        .or_default() += tally.machines;
                }
            }
            if let Some(dimension) = breakdown
                && let Some(value) = place.of(dimension)
                && let Some(split) = tally.split.remove(&None)
            {
                tally.split.insert(Some(value.to_string()), split);
            }
        }
    }
}

#[cfg(test)]
mod tests;
