//! One machine's share of a `Summary`, added a step at a time: what a machine counts once per
//! pair, class or name is remembered here, so that a whole trace (`Summary::add_counted`) and
//! a machine judged as its events arrive (`crate::judge`) add the very same numbers.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::{Counting, Occurrence, Summary, disagreement};
use crate::diagnose::{Action, Class, Newer, Reboot, ruling};
use crate::event::{EventKind, Pair};
use crate::log::{Dimension, Place};
use crate::replay::{Handling, Step};

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
    fn pair_mut(&mut self, pair: Pair) -> &mut super::PairTally {
        self.pairs
            .entry(pair)
            .or_insert_with(|| super::PairTally::new(DateTime::<Utc>::MIN_UTC))
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
