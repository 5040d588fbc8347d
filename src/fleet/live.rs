//! A fleet judged live: a history directory (`fsmlog collect`'s, docs/history.md) read once,
//! then each machine judged further as a poll appends its events, and the fleet's summary at
//! any point equal to `summarize` over the directory as it then stands. What a poll costs
//! grows with its new events and the fleet's pairs, never with the history: each machine
//! keeps its `Judging` (bounded) and the stream's last instant; its share of the summary is
//! worked out when asked for, never kept (a share holds a trend's days: it would grow with the
//! history, and a poll's `machines.json` changes nearly every machine's anyway).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};

use super::fold::Folded;
use super::inputs::Inputs;
use super::lean::{Read, Streamed};
use super::merge::{Merged, merge};
use crate::aggregate::{Counting, Summary};
use crate::days;
use crate::event::{Event, Pair};
use crate::graph::Graph;
use crate::input::{FilesRead, Problems};
use crate::issues::MachineFacts;
use crate::judge::{Facts, Judging};
use crate::log::{Format, MachineLog, Shape};
use crate::replay::Handling;
use crate::rules::Ruleset;

/// A fleet judged live.
pub struct LiveFleet<'r> {
    rules: &'r Ruleset,
    counting: Counting,
    /// `DIR/events`, as the readers name the day files in it.
    events: PathBuf,
    machines: BTreeMap<String, Machine<'r>>,
    files: FilesRead,
    /// The day files read or written since.
    days: std::collections::BTreeSet<NaiveDate>,
    /// The pairs' trends, handed over by each machine as its occurrences are counted.
    series: BTreeMap<Pair, BTreeMap<NaiveDate, u64>>,
}

/// One machine of the live fleet.
struct Machine<'r> {
    judging: Judging<'r>,
    /// Its events at the newest instant fed: a line identical to one of them is read twice
    /// and counts once, as merging counts it.
    instant: Vec<Event>,
    last_time: Option<DateTime<Utc>>,
    /// A gap marker no event at or after its time has followed yet (that event begins at a
    /// seam), and the newest marker's time.
    pending_gap: Option<DateTime<Utc>>,
    last_gap: Option<DateTime<Utc>>,
    /// The day files that hold the machine: the newest, and how many.
    last_day: Option<NaiveDate>,
    day_records: usize,
    /// Whether `machines.json` lists it.
    listed: bool,
    /// The smallest path of its records: the file the exported last error is said to be in.
    first_source: String,
    /// Its `machines.json` entry as last listed (the audit reads it).
    entry: Option<MachineLog>,
}

impl<'r> LiveFleet<'r> {
    /// Reads a history directory once (the lean way where it can: each machine judged as
    /// its lines come, see `fleet::lean`), every machine kept to be judged further.
    pub fn load(
        dir: &Path,
        inputs: &Inputs,
        rules: &'r Ruleset,
        counting: &Counting,
    ) -> (LiveFleet<'r>, Problems) {
        let events = dir.join("events");
        let mut read = Vec::new();
        let lean = super::lean::read(inputs, rules, counting, true, &mut |machine, _| {
            read.push(match machine {
                Read::Streamed(judged) => Machine::judged(*judged),
                Read::Merged(merged) => Machine::of(&merged, &events, rules, counting),
            });
        });
        let folded = match lean {
            Some(mut folded) => {
                inputs.finish(&mut folded);
                Folded {
                    value: Loaded(read),
                    problems: folded.problems,
                    files: folded.files,
                    kept: folded.kept,
                }
            }
            None => inputs.fold(|found: &mut Loaded<'r>, merged| {
                found.0.push(Machine::of(&merged, &events, rules, counting));
            }),
        };
        let mut days = std::collections::BTreeSet::new();
        for file in inputs.readable() {
            if let Some(day) = day_of(&events, &file.path) {
                days.insert(day);
            }
        }
        let mut series = BTreeMap::new();
        let machines = folded
            .value
            .0
            .into_iter()
            .map(|mut m| {
                add_series(&mut series, m.judging.take_series());
                (m.judging.machine().to_string(), m)
            })
            .collect();
        let fleet = LiveFleet {
            rules,
            counting: *counting,
            events,
            machines,
            files: folded.files,
            days,
            series,
        };
        (fleet, folded.problems)
    }

    /// Judges a machine further: `events`, appended to the history in time order after what
    /// it holds of the machine (each with the line it was written on in its day file), and
    /// the machine as the poll shows it besides its events (its `machines.json` entry read as
    /// a record without events; `None` where the poll no longer lists it).
    pub fn advance(&mut self, machine: &str, events: &[Event], listed: Option<&MachineLog>) {
        for event in events {
            self.push(machine, event);
        }
        self.list(machine, listed);
    }

    /// Judges a machine further by one event appended to the history (with the line it was
    /// written on in its day file). `false`, and nothing judged, where the event is older
    /// than one the machine holds: its lines are out of time order, and only reading the
    /// history again judges it as `report` does.
    pub fn push(&mut self, machine: &str, event: &Event) -> bool {
        let entry = entry(&mut self.machines, machine, self.rules, &self.counting);
        if entry.last_time.is_some_and(|t| event.time < t) {
            return false;
        }
        let day = event.time.date_naive();
        if self.days.insert(day) {
            self.files.add(Some(Shape::of(Format::Ndjson)));
        }
        let source = day_file(&self.events, day);
        entry.push(event, &source, day, self.rules, &self.counting);
        add_series(&mut self.series, entry.judging.take_series());
        true
    }

    /// Takes a machine's `machines.json` entry as the newest poll shows it (read as a record
    /// without events; `None` where it is not listed). An entry the same as before changes
    /// nothing.
    pub fn list(&mut self, machine: &str, listed: Option<&MachineLog>) {
        let entry = entry(&mut self.machines, machine, self.rules, &self.counting);
        if entry.entry.is_some() && entry.entry.as_ref() == listed {
            return;
        }
        entry.list(listed);
    }

    /// Every machine's entry as `listed` gives it (a `machines.json` read whole): those it
    /// does not hold are no longer listed.
    pub fn list_all(&mut self, listed: &std::collections::HashMap<String, MachineLog>) {
        let unlisted: Vec<String> = self
            .machines
            .iter()
            .filter(|(id, m)| m.listed && !listed.contains_key(id.as_str()))
            .map(|(id, _)| id.clone())
            .collect();
        for id in unlisted {
            self.list(&id, None);
        }
        for (id, log) in listed {
            self.list(id, Some(log));
        }
    }

    /// A gap marker appended for a machine before the events that follow it; `false`, and
    /// nothing judged, where it lies behind what the machine holds (see [`LiveFleet::push`]).
    pub fn gap(&mut self, machine: &str, time: DateTime<Utc>) -> bool {
        let day = time.date_naive();
        let entry = entry(&mut self.machines, machine, self.rules, &self.counting);
        // As the lean read: a marker behind an event would move a seam back onto it, one
        // behind another marker changes how markers are counted.
        if entry.last_time.is_some_and(|t| time <= t) || entry.last_gap.is_some_and(|g| time < g) {
            return false;
        }
        if self.days.insert(day) {
            self.files.add(Some(Shape::of(Format::Ndjson)));
        }
        let source = day_file(&self.events, day);
        entry.gap(time, &source, day);
        true
    }

    /// The fleet's graph as the history now stands: what `fleet_graph` draws over the
    /// directory (the rule edges nobody took are the caller's).
    pub fn graph(&self) -> Graph {
        let mut graph = Graph::default();
        for machine in self.machines.values().filter(|m| m.records() > 0) {
            let judging = &machine.judging;
            graph.add_edges(judging.edges());
            let outside = judging.last_error_only();
            graph.add_end(judging.ended().state(), outside.as_ref());
        }
        graph
    }

    /// What the audit needs of every machine, by id, as `issues DIR` gathers it from the
    /// directory: each judgement, with the machine's `machines.json` entry as [`LiveFleet::list`]
    /// last took it (read the audit's way by the caller).
    pub fn audit_facts(&self) -> Vec<MachineFacts> {
        let mut facts = Vec::with_capacity(self.machines.len());
        for (id, machine) in self.machines.iter().filter(|(_, m)| m.records() > 0) {
            let judging = &machine.judging;
            let stub;
            let log = match &machine.entry {
                Some(log) if machine.listed => log,
                _ => {
                    stub = MachineLog::new(id.clone(), &machine.first_source, 0, Format::Ndjson);
                    &stub
                }
            };
            let mut unexpected = judging.edges().unexpected();
            if let Some(step) = judging.last_error_only()
                && step.handling == Handling::Unexpected
            {
                *unexpected.entry((step.from, step.event)).or_default() += 1;
            }
            facts.push(MachineFacts::gather(
                log,
                judging.last_time(),
                &judging.ended(),
                unexpected,
            ));
        }
        facts
    }

    /// The fleet's summary as the history now stands: `summarize` over the directory.
    pub fn summary(&self) -> Summary {
        let mut summary = Summary::default();
        for machine in self.machines.values() {
            if machine.records() == 0 {
                continue;
            }
            summary += machine.judging.contribution();
        }
        for (pair, series) in &self.series {
            if let Some(tally) = summary.pairs.get_mut(pair) {
                for (period, n) in series {
                    *tally.series.entry(*period).or_default() += n;
                }
            }
        }
        summary.files_read(self.files.clone());
        summary
    }
}

/// The machines a fold hands back.
#[derive(Default)]
struct Loaded<'r>(Vec<Machine<'r>>);

impl std::ops::AddAssign for Loaded<'_> {
    fn add_assign(&mut self, other: Self) {
        self.0.extend(other.0);
    }
}

impl<'r> Machine<'r> {
    /// A machine first seen in a poll.
    fn new(machine: &str, rules: &'r Ruleset, counting: &Counting) -> Self {
        Machine {
            judging: Judging::new(machine, false, Facts::default(), rules, counting),
            instant: Vec::new(),
            last_time: None,
            pending_gap: None,
            last_gap: None,
            last_day: None,
            day_records: 0,
            listed: false,
            first_source: String::new(),
            entry: None,
        }
    }

    /// A machine judged as the lean read read its lines.
    fn judged(judged: Streamed<'r>) -> Self {
        Machine {
            last_day: judged
                .last_time
                .max(judged.last_gap)
                .map(|t| t.date_naive()),
            judging: judged.judging,
            instant: judged.instant,
            last_time: judged.last_time,
            pending_gap: judged.pending_gap,
            last_gap: judged.last_gap,
            day_records: judged.stream_records,
            listed: judged.listed,
            first_source: judged.first_source,
            entry: None,
        }
    }

    /// A machine as the history held it when read.
    fn of(merged: &Merged, events: &Path, rules: &'r Ruleset, counting: &Counting) -> Self {
        let log = &merged.log;
        let last_time = log.events.last().map(|e| e.time);
        let instant = log
            .events
            .iter()
            .rev()
            .take_while(|e| Some(e.time) == last_time)
            .cloned()
            .collect();
        let listed = log
            .sources
            .iter()
            .any(|s| day_of(events, Path::new(s)).is_none());
        let last_day = log
            .events
            .last()
            .map(|e| e.time)
            .max(log.gaps.last().copied())
            .map(|t| t.date_naive());
        Machine {
            judging: Judging::of(merged, rules, counting),
            instant,
            last_time,
            pending_gap: log
                .gaps
                .iter()
                .copied()
                .filter(|g| last_time.is_none_or(|t| *g > t))
                .min(),
            last_gap: log.gaps.last().copied(),
            last_day,
            day_records: merged.records - usize::from(listed),
            listed,
            first_source: log.source.clone(),
            entry: None,
        }
    }

    fn records(&self) -> usize {
        self.day_records + usize::from(self.listed)
    }

    fn push(
        &mut self,
        event: &Event,
        source: &str,
        day: NaiveDate,
        rules: &'r Ruleset,
        counting: &Counting,
    ) {
        self.in_day_file(source, day);
        if Some(event.time) == self.last_time && self.instant.iter().any(|e| identical(e, event)) {
            self.judging.accounting_mut().duplicates += 1;
            return;
        }
        if Some(event.time) != self.last_time {
            self.instant.clear();
        }
        if self.last_time.is_none() && self.judging.fed() == 0 && self.judging.annotated() {
            // A machine only listed so far: its first event makes it a raw stream's.
            let facts = self.judging.facts().clone();
            self.judging = Judging::new(self.judging.machine(), false, facts, rules, counting);
        }
        let seam = self.pending_gap.is_some_and(|g| event.time >= g);
        if seam {
            self.pending_gap = None;
        }
        self.judging.push(event, source, seam);
        self.last_time = Some(event.time);
        self.instant.push(event.clone());
    }

    fn gap(&mut self, time: DateTime<Utc>, source: &str, day: NaiveDate) {
        self.in_day_file(source, day);
        if self.last_gap != Some(time) {
            self.judging.accounting_mut().gaps += 1;
            self.last_gap = Some(time);
        }
        self.pending_gap = Some(self.pending_gap.map_or(time, |g| g.min(time)));
    }

    /// Notes that the machine has a record in the day file `source`.
    fn in_day_file(&mut self, source: &str, day: NaiveDate) {
        if self.last_day != Some(day) {
            self.last_day = Some(day);
            self.day_records += 1;
            if self.first_source.is_empty() || source < self.first_source.as_str() {
                self.first_source = source.to_string();
            }
            self.judging.accounting_mut().records = self.records();
        }
    }

    /// Takes the machine's `machines.json` entry as the poll shows it.
    fn list(&mut self, listed: Option<&MachineLog>) {
        self.listed = listed.is_some();
        let mut facts = match listed {
            Some(log) => Facts::of(&merge(vec![log.clone()]).log),
            None => Facts::default(),
        };
        if let Some(log) = listed
            && (self.first_source.is_empty() || log.source < self.first_source)
        {
            self.first_source = log.source.clone();
        }
        facts.last_error_source = self.first_source.clone();
        self.judging.set_facts(facts);
        self.entry = listed.cloned();
        self.judging.accounting_mut().records = self.records();
    }
}

/// A machine of the fleet, made where it is first seen.
fn entry<'a, 'r>(
    machines: &'a mut BTreeMap<String, Machine<'r>>,
    machine: &str,
    rules: &'r Ruleset,
    counting: &Counting,
) -> &'a mut Machine<'r> {
    machines
        .entry(machine.to_string())
        .or_insert_with(|| Machine::new(machine, rules, counting))
}

/// Adds trends handed over to the fleet's.
fn add_series(
    fleet: &mut BTreeMap<Pair, BTreeMap<NaiveDate, u64>>,
    handed: Vec<(Pair, BTreeMap<NaiveDate, u64>)>,
) {
    for (pair, series) in handed {
        let into = fleet.entry(pair).or_default();
        for (period, n) in series {
            *into.entry(period).or_default() += n;
        }
    }
}

/// Whether two lines of raw streams are the same event (as merging decides).
fn identical(a: &Event, b: &Event) -> bool {
    a.time == b.time
        && a.name == b.name
        && a.message == b.message
        && a.recorded_state == b.recorded_state
}

/// The day file of `day` in `events`, named as the readers name it.
fn day_file(events: &Path, day: NaiveDate) -> String {
    events.join(days::name(day)).display().to_string()
}

/// The day a day file of `events` holds.
fn day_of(events: &Path, file: &Path) -> Option<NaiveDate> {
    if file.parent()? != events {
        return None;
    }
    days::day_of(file.file_name()?.to_str()?)
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
