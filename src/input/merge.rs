//! The same machine in several records (a list export plus per-machine logs, overlapping
//! exports from two days) is one machine: its records are held until all have been read, then
//! merged, and identical events count once.
//!
//! Which machines recur is learnt by reading every file once beforehand, so only those
//! machines' records are held, and each only until its last record arrives.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{TimeDelta, Timelike};
use rayon::prelude::*;

use super::{InputFile, InputOptions, MachineLog, Record, read_file_decoded};
use crate::event::Event;

/// A machine ready for replay, and how many of its events were dropped as duplicates.
#[derive(Debug)]
pub struct Merged {
    pub log: MachineLog,
    /// Events dropped because another record of the machine had them too.
    pub duplicates: u64,
    /// How many records the machine was assembled from (1 when it was not merged).
    pub records: usize,
}

/// Holds the records of recurring machines until each is complete.
#[derive(Debug, Default)]
pub struct Merger {
    /// Machines with more than one record, and how many records each has.
    recurring: HashMap<String, usize>,
    pending: Mutex<HashMap<String, Vec<MachineLog>>>,
}

impl Merger {
    /// Learns which machines recur by reading the files once. With a single file there is
    /// nothing to learn; standard input cannot be read twice and is never held.
    pub fn plan(files: &[InputFile], options: &InputOptions) -> Merger {
        if files.len() < 2 {
            return Merger::default();
        }
        let scanned: Vec<&InputFile> = files.iter().filter(|f| f.path.as_os_str() != "-").collect();
        let options = InputOptions {
            ids_only: true,
            ..options.clone()
        };
        let ids: Vec<Vec<String>> = scanned
            .par_iter()
            .map(|file| {
                let mut ids = Vec::new();
                read_file_decoded(file, &options, &mut |record| {
                    if let Record::Machine(log) = record {
                        ids.push(log.machine);
                    }
                });
                ids
            })
            .collect();
        let mut counts: HashMap<String, usize> = HashMap::new();
        for id in ids.into_iter().flatten() {
            *counts.entry(id).or_default() += 1;
        }
        counts.retain(|_, n| *n > 1);
        Merger {
            recurring: counts,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one record: hands back the machine when it is complete, holds it otherwise.
    pub fn offer(&self, log: MachineLog) -> Option<Merged> {
        let Some(&expected) = self.recurring.get(&log.machine) else {
            return Some(Merged {
                log,
                duplicates: 0,
                records: 1,
            });
        };
        let key = log.machine.clone();
        let parts = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            let parts = pending.entry(key.clone()).or_default();
            parts.push(log);
            if parts.len() < expected {
                return None;
            }
            pending.remove(&key)?
        };
        Some(merge(parts))
    }

    /// Hands back machines whose records did not all arrive (a file changed between the two
    /// readings, or could not be read the second time).
    pub fn drain(&self) -> Vec<Merged> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut rest: Vec<_> = pending.drain().map(|(_, parts)| merge(parts)).collect();
        rest.sort_by(|a, b| a.log.machine.cmp(&b.log.machine));
        rest
    }
}

/// Merges the records of one machine; the result does not depend on their arrival order.
pub fn merge(mut parts: Vec<MachineLog>) -> Merged {
    parts.sort_by(|a, b| (&a.source, a.line).cmp(&(&b.source, b.line)));
    let records = parts.len();
    let newest = parts
        .iter()
        .enumerate()
        .max_by_key(|(i, p)| {
            (
                p.recorded.last_event_time,
                p.events.last().map(|e| e.time),
                *i,
            )
        })
        .map_or(0, |(i, _)| i);
    let recorded = parts[newest].recorded.clone();
    let annotated = parts.iter().all(|p| p.annotated);
    let last_error_event = parts
        .iter()
        .filter_map(|p| p.last_error_event.clone())
        .max_by_key(|e| e.time);
    let mut all: Vec<Event> = Vec::with_capacity(parts.iter().map(|p| p.events.len()).sum());
    let mut first = None;
    for part in parts {
        if first.is_none() {
            first = Some((
                part.machine.clone(),
                part.source.clone(),
                part.line,
                part.format,
            ));
        }
        all.extend(part.events);
    }
    let (machine, source, line, format) = first.expect("a merge has at least one record");
    all.sort_by_key(|e| e.time);
    let before = all.len();
    let events = dedupe(all);
    Merged {
        duplicates: (before - events.len()) as u64,
        records,
        log: MachineLog {
            machine,
            source,
            line,
            format,
            events,
            last_error_event,
            recorded,
            annotated,
        },
    }
}

/// Drops events that another record has too. Tables print whole seconds and may shorten
/// messages with `...`, so an event from a table matches the same event from JSON.
fn dedupe(sorted: Vec<Event>) -> Vec<Event> {
    let mut kept: Vec<Event> = Vec::with_capacity(sorted.len());
    'next: for event in sorted {
        for earlier in kept.iter_mut().rev() {
            if event.time - earlier.time >= TimeDelta::seconds(1) {
                break;
            }
            if earlier.same_as(&event) {
                if quality(&event) > quality(earlier) {
                    *earlier = event;
                }
                continue 'next;
            }
        }
        kept.push(event);
    }
    kept.sort_by_key(|e| e.time);
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
mod tests {
    use super::*;
    use crate::event::{EventKind, EventName};
    use crate::input::{Format, RecordedFlags};
    use chrono::{DateTime, Utc};

    fn event(time: &str, kind: EventKind, message: &str) -> Event {
        Event::from_recorded(
            DateTime::parse_from_rfc3339(time)
                .unwrap()
                .with_timezone(&Utc),
            EventName::Known(kind),
            message,
            1,
        )
    }

    fn log(source: &str, events: Vec<Event>) -> MachineLog {
        MachineLog {
            machine: "m".to_string(),
            source: source.to_string(),
            line: 1,
            format: Format::LogsJson,
            events,
            last_error_event: None,
            recorded: RecordedFlags::default(),
            annotated: true,
        }
    }

    #[test]
    fn overlapping_exports_merge_with_duplicates_counted_once() {
        let day1 = log(
            "a.json",
            vec![
                event("2025-01-01T10:00:00.100Z", EventKind::PxeBooting, "dhcp"),
                event("2025-01-01T10:01:00.200Z", EventKind::Preparing, "hammer"),
            ],
        );
        let day2 = log(
            "b.json",
            vec![
                event("2025-01-01T10:01:00.200Z", EventKind::Preparing, "hammer"),
                event("2025-01-01T10:02:00.300Z", EventKind::Registering, "reg"),
            ],
        );
        let merged = merge(vec![day2, day1]);
        assert_eq!(merged.duplicates, 1);
        assert_eq!(merged.records, 2);
        assert_eq!(merged.log.events.len(), 3);
        assert_eq!(merged.log.source, "a.json");
    }

    #[test]
    fn table_row_matches_the_json_event() {
        let json = log(
            "a.json",
            vec![event(
                "2025-01-01T10:00:00.100Z",
                EventKind::Crashed,
                "installation failed: unable to install grub on /dev/sda: exit status 1",
            )],
        );
        let table = log(
            "a.txt",
            vec![event(
                "2025-01-01T10:00:00Z",
                EventKind::Crashed,
                "installation failed: unable to install grub ...",
            )],
        );
        let merged = merge(vec![table, json]);
        assert_eq!(merged.duplicates, 1);
        assert_eq!(merged.log.events[0].time.nanosecond(), 100_000_000);
    }

    #[test]
    fn same_time_different_event_is_kept() {
        let a = log(
            "a",
            vec![event("2025-01-01T10:00:00Z", EventKind::PxeBooting, "x")],
        );
        let b = log(
            "b",
            vec![event("2025-01-01T10:00:00Z", EventKind::Preparing, "x")],
        );
        assert_eq!(merge(vec![a, b]).duplicates, 0);
    }

    #[test]
    fn merger_holds_recurring_machines_until_complete() {
        let merger = Merger {
            recurring: HashMap::from([("m".to_string(), 2)]),
            pending: Mutex::new(HashMap::new()),
        };
        assert!(merger.offer(log("a", Vec::new())).is_none());
        let merged = merger.offer(log("b", Vec::new())).unwrap();
        assert_eq!(merged.records, 2);
        let mut other = log("c", Vec::new());
        other.machine = "n".to_string();
        assert_eq!(merger.offer(other).unwrap().records, 1);
        assert!(merger.drain().is_empty());
    }
}
