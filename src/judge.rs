//! A machine judged: its log replayed, diagnosed and tallied into its share of a fleet's
//! `Summary`, once, and further as new events arrive. Fed a machine's events in time order
//! (in any chunks), [`Judging::contribution`] is at every point exactly what judging the log
//! so far whole gives (`Summary::add` of a `diagnose::Judged`), and what it keeps
//! does not grow with the log: the replays' containers, the diagnosis' running values and
//! open questions (`diagnose::Diagnosing`), the machine's settled tallies, and a few of its
//! newest events (docs/decisions.md, "A machine judged further").

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};

use crate::aggregate::{Accounting, Counting, EndFlags, MachineTally, Occurrence, Summary};
use crate::diagnose::{Diagnosing, Settled};
use crate::event::{Event, EventKind, EventName, Pair};
use crate::graph::Edges;
use crate::input::Merged;
use crate::log::{MachineLog, Place, RecordedFlags};
use crate::replay::{Container, Step, judge_outside_log};
use crate::rules::Ruleset;

/// How many of a machine's newest events are kept to find an exported last error among when
/// the facts change after they came.
const RECENT: usize = 16;

/// What a machine's records say of it besides its events, as the replay and the tallies read
/// it: the exported last error, the recorded flags and times, and where it is.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub last_error_event: Option<Event>,
    /// The file the last error event was read from.
    pub last_error_source: String,
    pub recorded: RecordedFlags,
    pub place: Option<Arc<Place>>,
}

impl Facts {
    /// What a (merged) log says besides its events.
    pub fn of(log: &MachineLog) -> Facts {
        let source = |e: &Event| {
            log.sources
                .get(e.source as usize)
                .map_or(log.source.as_str(), String::as_str)
                .to_string()
        };
        Facts {
            last_error_event: log.last_error_event.clone(),
            last_error_source: log
                .last_error_event
                .as_ref()
                .map(source)
                .unwrap_or_default(),
            recorded: log.recorded.clone(),
            place: log.machine_info.place.clone(),
        }
    }
}

/// A machine being judged.
#[derive(Debug, Clone)]
pub struct Judging<'r> {
    /// Shared with the fleet's index of machines: a machine's id is held once.
    machine: Arc<str>,
    rules: &'r Ruleset,
    counting: Counting,
    diagnosing: Diagnosing<'r>,
    tally: MachineTally,
    /// The settled share, counted without the machine's place (put in place at the end);
    /// `None` while nothing is counted (boxed: a fleet's machines mostly hold none).
    summary: Option<Box<Summary>>,
    /// Boxed where a record said something: a raw stream's machine says nothing.
    facts: Option<Box<Facts>>,
    /// The time of the last event fed.
    last_time: Option<DateTime<Utc>>,
    recent: VecDeque<Event>,
    /// How many of the newest events `recent` keeps: none where the facts are known before
    /// the events (see [`Judging::without_recent`]).
    recent_kept: usize,
    /// How many events were fed.
    fed: u64,
    /// Whether an event fed is the exported last error.
    last_error_in_log: bool,
    accounting: Accounting,
    /// Its steps counted, where it is judged further (the fleet's graph and audit read them).
    edges: Edges,
}

impl<'r> Judging<'r> {
    /// A machine before its first event; `annotated` where its input carries metal-api's
    /// recorded verdicts (exports do, raw streams not).
    pub fn new(
        machine: impl Into<Arc<str>>,
        annotated: bool,
        facts: Facts,
        rules: &'r Ruleset,
        counting: &Counting,
    ) -> Self {
        Judging {
            machine: machine.into(),
            rules,
            counting: *counting,
            diagnosing: Diagnosing::new(rules, counting.window, annotated),
            tally: MachineTally::default(),
            summary: None,
            facts: boxed(facts),
            last_time: None,
            recent: VecDeque::new(),
            recent_kept: RECENT,
            fed: 0,
            last_error_in_log: false,
            accounting: Accounting {
                records: 1,
                ..Accounting::default()
            },
            edges: Edges::default(),
        }
    }

    /// A merged machine judged whole.
    pub fn of(merged: &Merged, rules: &'r Ruleset, counting: &Counting) -> Self {
        let log = &merged.log;
        let mut judging = Judging::new(
            log.machine.as_str(),
            log.annotated,
            Facts::of(log),
            rules,
            counting,
        );
        for (index, event) in log.events.iter().enumerate() {
            let seam = log.seams.contains(&index);
            let source = log
                .sources
                .get(event.source as usize)
                .map_or(log.source.as_str(), String::as_str);
            judging.push(event, source, seam);
        }
        judging.accounting = Accounting {
            newest_event: None,
            duplicates: merged.duplicates,
            skipped_lines: log.skipped_lines,
            records: merged.records,
            gaps: log.gaps.len() as u64,
        };
        judging
    }

    /// Keeps none of the newest events: for a machine whose facts are all known before its
    /// first event (a history read whole), where no later facts need looking up.
    pub fn without_recent(mut self) -> Self {
        self.recent_kept = 0;
        self.recent = VecDeque::new();
        self
    }

    /// The machine's id.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// Judges the next event, read from `source`; `seam` where it begins at a seam (the first
    /// after a gap, or a record that begins after a gap in the others).
    pub fn push(&mut self, event: &Event, source: &str, seam: bool) {
        self.fed += 1;
        self.last_time = Some(event.time);
        if let Some(le) = &self.facts().last_error_event
            && event.same_as(le)
        {
            self.last_error_in_log = true;
        }
        if self.recent_kept > 0 {
            if self.recent.len() == self.recent_kept {
                self.recent.pop_front();
            }
            self.recent.push_back(event.clone());
        }
        match self.diagnosing.push(event, seam) {
            Some(step) => {
                if self.recent_kept > 0 {
                    self.edges.add(&step);
                }
                let occurrence = Occurrence {
                    time: step.time,
                    machine: &self.machine,
                    source,
                    line: step.line,
                    message: &step.message,
                    place: None,
                };
                let annotated = self.diagnosing.annotated();
                self.tally.step(
                    self.summary.get_or_insert_default(),
                    &step,
                    &occurrence,
                    &self.counting,
                    annotated,
                );
            }
            None => {
                if let EventName::Unknown(name) = &event.name {
                    self.tally
                        .unknown(self.summary.get_or_insert_default(), name);
                }
            }
        }
        for (settled, n) in self.diagnosing.take_settled() {
            add_settled(
                &mut self.tally,
                self.summary.get_or_insert_default(),
                settled,
                n,
            );
        }
    }

    /// Takes what the machine's records say of it now (a poll's newer view). An exported last
    /// error is looked up among the events fed so far as far as the newest [`RECENT`] of them
    /// reach (docs/decisions.md says why that is enough).
    pub fn set_facts(&mut self, facts: Facts) {
        let same = match (&self.facts().last_error_event, &facts.last_error_event) {
            (Some(a), Some(b)) => a == b,
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.last_error_in_log = facts
                .last_error_event
                .as_ref()
                .is_some_and(|le| self.recent.iter().any(|e| e.same_as(le)));
        }
        self.facts = boxed(facts);
    }

    /// What reading and merging the machine's records found besides its events (its newest
    /// event's time is worked out from the events and facts).
    pub fn accounting_mut(&mut self) -> &mut Accounting {
        &mut self.accounting
    }

    /// How many events were fed.
    pub fn fed(&self) -> u64 {
        self.fed
    }

    /// The time of the newest event fed.
    pub fn last_time(&self) -> Option<DateTime<Utc>> {
        self.last_time
    }

    /// Its steps counted (none where it keeps no recent events: it is not judged further).
    pub fn edges(&self) -> &Edges {
        &self.edges
    }

    /// The container as judging its log whole ends it, the recorded flags in place.
    pub fn ended(&self) -> Container {
        self.diagnosing.replay().ended(&self.facts().recorded)
    }

    /// The exported last error judged where no event fed is it (as `replay` judges it).
    pub fn last_error_only(&self) -> Option<Step> {
        let le = self.facts().last_error_event.as_ref()?;
        if self.last_error_in_log {
            return None;
        }
        judge_outside_log(le, self.rules)
    }

    /// Hands over the trend the machine's counted occurrences made so far, by pair, and keeps
    /// none of it: a machine judged for long would keep a count per period, and the fleet
    /// adds the trends up as they are (see `LiveFleet`).
    pub fn take_series(&mut self) -> Vec<(Pair, BTreeMap<NaiveDate, u64>)> {
        let Some(summary) = self.summary.as_mut() else {
            return Vec::new();
        };
        summary
            .pairs
            .iter_mut()
            .filter(|(_, tally)| !tally.series.is_empty())
            .map(|(pair, tally)| (*pair, std::mem::take(&mut tally.series)))
            .collect()
    }

    /// Whether the input carries metal-api's recorded verdicts.
    pub fn annotated(&self) -> bool {
        self.diagnosing.annotated()
    }

    /// What the machine's records say of it besides its events.
    pub fn facts(&self) -> &Facts {
        self.facts.as_deref().unwrap_or(&NO_FACTS)
    }

    /// Hands over what is settled of the machine's share so far, where nothing of it waits
    /// for later events (a later class is then always an occurrence's that comes later): the
    /// caller adds it to the fleet's summary, and `contribution` gives the rest. Only where
    /// the machine's place is known already (it is put on the part handed over).
    pub fn take_settled(&mut self) -> Option<Summary> {
        if self.diagnosing.has_open() {
            return None;
        }
        let mut part = *self.summary.take()?;
        if part == Summary::default() {
            return None;
        }
        part.place_machine(self.facts().place.as_deref(), self.counting.breakdown);
        Some(part)
    }

    /// The machine's share of the fleet's `Summary` as its log stands: what judging it whole
    /// would add.
    pub fn contribution(&self) -> Summary {
        let mut summary = self.summary.as_deref().cloned().unwrap_or_default();
        let mut tally = self.tally.clone();
        let container = self.diagnosing.replay().container();
        let annotated = self.diagnosing.annotated();
        let newest = container.events.front().map(|e| e.time);
        let facts = self.facts();
        let le = facts.last_error_event.as_ref();
        // `class::moved_past_newest`.
        let moved = newest.is_some_and(|newest| {
            let alive_after =
                le.is_some_and(|e| e.name == EventName::Known(EventKind::Alive) && e.time > newest);
            annotated
                && !alive_after
                && facts
                    .recorded
                    .last_event_time
                    .is_some_and(|last| last > newest)
        });
        for (settled, n) in self.diagnosing.at_end(moved) {
            add_settled(&mut tally, &mut summary, settled, n);
        }
        if let Some(le) = le
            && !self.last_error_in_log
        {
            match judge_outside_log(le, self.rules) {
                Some(step) => self.count_outside(&mut tally, &mut summary, &step, annotated),
                None => tally.unknown(&mut summary, le.name.as_str()),
            }
        }
        summary.add_end(
            &self.machine,
            EndFlags {
                crash_loop: container.crash_loop,
                newest: container.events.front().map(|e| e.event),
                failed_machine_reclaim: self
                    .diagnosing
                    .replay()
                    .failed_machine_reclaim(facts.recorded.failed_machine_reclaim),
            },
        );
        summary.add_accounting(Accounting {
            newest_event: self
                .last_time
                .max(le.map(|e| e.time))
                .max(facts.recorded.last_event_time),
            ..self.accounting
        });
        summary.place_machine(facts.place.as_deref(), self.counting.breakdown);
        summary
    }

    /// Counts the exported last error that is no row of the log.
    fn count_outside(
        &self,
        tally: &mut MachineTally,
        summary: &mut Summary,
        step: &Step,
        annotated: bool,
    ) {
        let occurrence = Occurrence {
            time: step.time,
            machine: &self.machine,
            source: &self.facts().last_error_source,
            line: step.line,
            message: &step.message,
            place: None,
        };
        if tally.step(summary, step, &occurrence, &self.counting, annotated) {
            let class = Diagnosing::outside(step);
            tally.class(summary, (step.from, step.event), class, None, None);
        }
    }
}

/// What a machine's records say where they say nothing.
static NO_FACTS: Facts = Facts {
    last_error_event: None,
    last_error_source: String::new(),
    recorded: RecordedFlags::NONE,
    place: None,
};

/// The facts boxed where they say something.
fn boxed(facts: Facts) -> Option<Box<Facts>> {
    // Every field named, so that one added is not forgotten here.
    let Facts {
        last_error_event,
        last_error_source,
        recorded,
        place,
    } = &facts;
    let empty = last_error_event.is_none()
        && last_error_source.is_empty()
        && *recorded == RecordedFlags::NONE
        && place.is_none();
    (!empty).then(|| Box::new(facts))
}

/// Adds what the diagnosis settled, `n` times.
fn add_settled(tally: &mut MachineTally, summary: &mut Summary, settled: Settled, n: u64) {
    for _ in 0..n {
        match settled {
            Settled::Class {
                pair,
                class,
                root,
                autoreboot,
            } => tally.class(summary, pair, class, root, autoreboot),
            Settled::Newer { pair, newer } => tally.newer(summary, pair, Some(newer)),
        }
    }
}

#[cfg(test)]
mod tests;
