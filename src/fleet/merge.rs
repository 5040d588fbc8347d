//! The same machine in several records (a list export plus per-machine logs, overlapping
//! exports from two days, the same machine twice in one file, standard input beside a file)
//! is one machine: its records are held until all have been read, then merged, and identical
//! events count once.
//!
//! Which machines recur is learnt while reading: a [`Census`] counts each machine's records.
//! A pass that finds none recurring is final; otherwise a second pass (over spooled copies of
//! streams) holds exactly the recurring machines' records until each has all of them, so the
//! result never depends on reading order, timing or the number of threads.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{TimeDelta, Timelike};

use super::ties;
use crate::event::Event;
pub use crate::input::Merged;
use crate::log::{Format, MachineLog, Place, RecordedFlag};

/// A machine id's key in the census: a fixed hash, so the census stays small and counting
/// copies no id. Two ids that share a hash are both held and, when neither record completes
/// the other, handed back by [`Merger::drain`] as the separate machines they are.
pub fn key(machine: &str) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(machine)
}

/// Counts how many records each machine has, from any number of threads.
#[derive(Debug, Default)]
pub struct Census {
    counts: Mutex<HashMap<u64, u32>>,
    /// Whether some machine has been counted twice already.
    recurs: AtomicBool,
}

impl Census {
    /// Counts one record of each of these machines.
    pub fn note<'a>(&self, machines: impl IntoIterator<Item = &'a str>) {
        let keys: Vec<u64> = machines.into_iter().map(key).collect();
        self.note_keys(&keys);
    }

    /// Counts one record of each of the machines with these keys (see [`key`]).
    pub fn note_keys(&self, keys: &[u64]) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        for &k in keys {
            let count = counts.entry(k).or_default();
            *count += 1;
            if *count > 1 {
                self.recurs.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Whether some machine has more than one record among those counted so far: then the
    /// pass counting them is not the last (a merging pass follows).
    pub fn recurs(&self) -> bool {
        self.recurs.load(Ordering::Relaxed)
    }

    /// The machines with more than one record, and how many each has.
    pub fn recurring(self) -> Recurring {
        let mut counts = self.counts.into_inner().unwrap_or_else(|e| e.into_inner());
        counts.retain(|_, n| *n > 1);
        Recurring(counts)
    }
}

/// The machines that have several records, and how many.
#[derive(Debug, Default, Clone)]
pub struct Recurring(HashMap<u64, u32>);

impl Recurring {
    /// Whether no machine has more than one record.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Holds the records of recurring machines until each is complete.
#[derive(Debug, Default)]
pub struct Merger {
    recurring: Recurring,
    pending: Mutex<HashMap<String, Vec<MachineLog>>>,
}

impl Merger {
    /// A merger for the machines a census found recurring (none: every record is a machine).
    pub fn new(recurring: Recurring) -> Merger {
        Merger {
            recurring,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one record: hands back the machine when it is complete, holds it otherwise.
    pub fn offer(&self, log: MachineLog) -> Option<Merged> {
        let Some(&expected) = self.recurring.0.get(&key(&log.machine)) else {
            // A raw stream's repeated lines and gap markers are settled as a merge settles
            // them, so that one file answers as its parts would.
            if is_raw(&log) && (!log.gaps.is_empty() || repeats(&log.events)) {
                return Some(merge(vec![log]));
            }
            return Some(Merged {
                log,
                duplicates: 0,
                records: 1,
                notes: Vec::new(),
            });
        };
        let name = log.machine.clone();
        let parts = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            let parts = pending.entry(name.clone()).or_default();
            parts.push(log);
            if parts.len() < expected as usize {
                return None;
            }
            pending.remove(&name)?
        };
        Some(merge(parts))
    }

    /// Hands back machines whose records did not all arrive (an id sharing another's key, a
    /// record that could not be read the second time), sorted by id.
    pub fn drain(&self) -> Vec<Merged> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut rest: Vec<_> = pending.drain().map(|(_, parts)| merge(parts)).collect();
        rest.sort_by(|a, b| a.log.machine.cmp(&b.log.machine));
        rest
    }
}

/// Merges the records of one machine; the result does not depend on their arrival order.
/// Each recorded flag comes from the record that is newest as of its own events and last
/// event time; the replay puts it in place at that time and replays newer events on top.
pub fn merge(mut parts: Vec<MachineLog>) -> Merged {
    parts.sort_by(|a, b| (&a.source, a.line).cmp(&(&b.source, b.line)));
    let records = parts.len();
    let newest_flag = |flag: fn(&MachineLog) -> Option<RecordedFlag>| {
        parts
            .iter()
            .filter_map(flag)
            .enumerate()
            .max_by_key(|(i, f)| (f.as_of, *i))
            .map(|(_, f)| f)
    };
    let crash_loop = newest_flag(|p| p.recorded.crash_loop);
    let failed_machine_reclaim = newest_flag(|p| p.recorded.failed_machine_reclaim);
    let newest_said = |said: fn(&MachineLog) -> bool| {
        parts
            .iter()
            .enumerate()
            .filter(|(_, p)| said(p))
            .max_by_key(|(i, p)| (p.as_of(), *i))
            .map(|(i, _)| i)
    };
    let liveliness = newest_said(|p| p.recorded.liveliness.is_some()).map(|i| {
        let r = &parts[i].recorded;
        (r.liveliness.clone(), r.liveliness_as_of)
    });
    let allocated = newest_said(|p| p.machine_info.allocated.is_some()).map(|i| {
        let m = &parts[i].machine_info;
        (m.allocated, m.allocated_as_of)
    });
    // Where the machine is: the newest record that says (a machine moved, or was allocated
    // again, between two exports).
    let place = newest_said(|p| p.machine_info.place.is_some())
        .and_then(|i| parts[i].machine_info.place.clone());
    // The BMC: the newest record that says (a `machine ipmi` export beside a list).
    let bmc = newest_said(|p| p.machine_info.bmc.is_some())
        .and_then(|i| parts[i].machine_info.bmc.clone());
    let last_event_time = parts
        .iter()
        .filter_map(|p| p.recorded.last_event_time)
        .max();
    let no_event_container = parts.iter().all(|p| p.machine_info.no_event_container);
    let machine_object = parts.iter().any(|p| p.machine_info.machine_object);
    let says_partition = parts.iter().any(|p| p.machine_info.says_partition);
    let annotated = parts.iter().all(|p| p.annotated);
    let skipped_lines = parts.iter().map(|p| p.skipped_lines).sum();
    let last_error_event = parts
        .iter()
        .filter_map(|p| p.last_error_event.clone())
        .max_by_key(|e| e.time);
    let seams = seams(&parts);
    let mut gaps: Vec<_> = parts.iter().flat_map(|p| p.gaps.iter().copied()).collect();
    gaps.sort();
    gaps.dedup();
    let mut sources: Vec<String> = Vec::new();
    let mut source_of = Vec::with_capacity(parts.len());
    for part in &parts {
        let index = match sources.iter().position(|s| *s == part.source) {
            Some(i) => i,
            None => {
                sources.push(part.source.clone());
                sources.len() - 1
            }
        };
        source_of.push(index as u32);
    }
    let first = parts
        .first()
        .map(|p| (p.machine.clone(), p.line, p.format, p.yaml));
    // Events of equal time keep the order of the records they come from: laid out in
    // `ties::order`, the stable sort by time below keeps it.
    let (order, notes) = ties::order(&parts, identical);
    let mut all: Vec<Copy> = Vec::with_capacity(parts.iter().map(|p| p.events.len()).sum());
    let mut parts: Vec<Option<MachineLog>> = parts.into_iter().map(Some).collect();
    for record in order {
        let Some(part) = parts[record].take() else {
            continue;
        };
        let seam = seams.get(record).copied().flatten();
        let raw = is_raw(&part);
        let index = source_of[record];
        all.extend(part.events.into_iter().enumerate().map(|(i, e)| Copy {
            event: e.with_source(index),
            records: vec![record as u32],
            seam: seam == Some(i),
            raw,
        }));
    }
    let (machine, line, format, yaml) = first.expect("a merge has at least one record");
    all.sort_by_key(|c| c.event.time);
    let before = all.len();
    let kept = dedupe(all);
    let mut seams: Vec<usize> = kept
        .iter()
        .enumerate()
        .filter(|(_, c)| c.seam)
        .map(|(i, _)| i)
        .collect();
    // A gap marker: its machine's events before it were lost, so the first event at or after
    // it begins at a seam, whichever part holds it.
    for gap in &gaps {
        let at = kept.partition_point(|c| c.event.time < *gap);
        if at < kept.len() {
            seams.push(at);
        }
    }
    seams.sort_unstable();
    seams.dedup();
    let events: Vec<Event> = kept.into_iter().map(|c| c.event).collect();
    let mut log = MachineLog::new(machine, &sources[0], line, format);
    log.sources = sources;
    log.yaml = yaml;
    log.events = events;
    log.last_error_event = last_error_event;
    log.recorded.last_event_time = last_event_time;
    log.recorded.crash_loop = crash_loop;
    log.recorded.failed_machine_reclaim = failed_machine_reclaim;
    (log.recorded.liveliness, log.recorded.liveliness_as_of) = liveliness.unwrap_or_default();
    (log.machine_info.allocated, log.machine_info.allocated_as_of) = allocated.unwrap_or_default();
    log.machine_info.no_event_container = no_event_container;
    log.machine_info.machine_object = machine_object;
    log.machine_info.bmc = bmc;
    log.machine_info.says_partition = says_partition;
    // Who has the machine is the allocation's word, and the newest record that says whether
    // there is one decides: a freed machine keeps its place, not its old hostname.
    log.machine_info.place = match (place, log.machine_info.allocated) {
        (Some(place), Some(false)) => Some(Arc::new(Place {
            hostname: None,
            project: None,
            role: None,
            image: None,
            cluster: None,
            primary_asn: None,
            asns: Vec::new(),
            ..(*place).clone()
        })),
        (place, _) => place,
    };
    log.annotated = annotated;
    log.skipped_lines = skipped_lines;
    log.seams = seams;
    log.gaps = gaps;
    Merged {
        duplicates: (before - log.events.len()) as u64,
        records,
        log,
        notes,
    }
}

/// An event of one of the records being merged.
struct Copy {
    event: Event,
    /// The records that hold this event (more than one once copies are folded together).
    records: Vec<u32>,
    /// Whether the event begins a record whose events all come after a gap in the others.
    seam: bool,
    /// Whether the event comes from a raw stream.
    raw: bool,
}

/// Whether a record is (a part of) a raw event stream.
fn is_raw(log: &MachineLog) -> bool {
    log.format == Format::Ndjson
}

/// Whether a raw record holds some event twice (see [`dedupe`]); its events are in time order.
fn repeats(events: &[Event]) -> bool {
    events.iter().enumerate().any(|(i, e)| {
        events[i + 1..]
            .iter()
            .take_while(|later| later.time == e.time)
            .any(|later| identical(e, later))
    })
}

/// Whether two lines of raw streams are the same event: the same instant to the nanosecond,
/// name and message. Only a table prints whole seconds or shortens messages.
fn identical(a: &Event, b: &Event) -> bool {
    a.time == b.time
        && a.name == b.name
        && a.message == b.message
        && a.recorded_state == b.recorded_state
}

/// For each record, the index of its oldest event when the record begins after a gap: every
/// other record that starts before it ends more than a second before it starts, so events
/// between them may be missing (two exports of the newest 20 events, days apart). The replay
/// takes such an event as it takes the oldest row of a log. A raw stream holds every event
/// the machine sent, so its parts (daily files, rotated logs) are one stream: a record of one
/// never begins at a seam, and its events are replayed on from wherever the others left.
fn seams(parts: &[MachineLog]) -> Vec<Option<usize>> {
    parts
        .iter()
        .map(|part| {
            let start = part.events.first()?.time;
            let before = |p: &&MachineLog| p.events.first().is_some_and(|e| e.time < start);
            // A raw part after another raw part carries on its stream; after exports only,
            // it begins after their gap as any record does.
            if !part.annotated && parts.iter().filter(before).any(|p| !p.annotated) {
                return None;
            }
            let earlier: Vec<_> = parts
                .iter()
                .filter_map(|p| Some((p.events.first()?.time, p.events.last()?.time)))
                .filter(|(oldest, _)| *oldest < start)
                .collect();
            let gap = !earlier.is_empty()
                && earlier
                    .iter()
                    .all(|(_, newest)| start - *newest >= TimeDelta::seconds(1));
            gap.then_some(0)
        })
        .collect()
}

/// Drops events that another record has too: a copy is folded into an earlier one only when
/// that one does not hold a copy from the same record already, so events an export holds
/// twice stay twice. Tables print whole seconds and may shorten messages with `...`, so an
/// event from a table matches the same event from JSON.
///
/// Raw streams have one rule within a file and across files: a line identical to an earlier
/// one (see [`identical`]) is the same event, read twice, and counts once. Overlapping
/// rotated copies and a file given twice are common; a machine sending the very same event
/// twice in one instant is rare.
fn dedupe(sorted: Vec<Copy>) -> Vec<Copy> {
    let mut kept: Vec<Copy> = Vec::with_capacity(sorted.len());
    'next: for copy in sorted {
        for earlier in kept.iter_mut().rev() {
            if copy.event.time - earlier.event.time >= TimeDelta::seconds(1) {
                break;
            }
            let record = copy.records[0];
            let same = if copy.raw && earlier.raw {
                identical(&earlier.event, &copy.event)
            } else {
                !earlier.records.contains(&record) && earlier.event.same_as(&copy.event)
            };
            if same {
                if !earlier.records.contains(&record) {
                    earlier.records.push(record);
                }
                earlier.seam |= copy.seam;
                if quality(&copy.event) > quality(&earlier.event) {
                    earlier.event = copy.event;
                }
                continue 'next;
            }
        }
        kept.push(copy);
    }
    kept.sort_by_key(|c| c.event.time);
    kept
}

/// Which of two copies of an event to keep: the one with a recorded verdict, sub-second time
/// and the longer message.
fn quality(e: &Event) -> (bool, bool, usize) {
    (
        e.recorded_state.is_some(),
        e.time.nanosecond() != 0,
        e.message.len(),
    )
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
