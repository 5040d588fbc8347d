//! Events of equal time in several records of one machine: in which order the records hand
//! them on. Exports keep the order of their paths and lines. A raw stream's parts are in any
//! order inside (a late, buffered line comes after newer ones), so what they hold cannot
//! always say which part is older; their names can, where they are rotations of one file as
//! logrotate and the collector name them. Names decide first, then what the parts hold; a
//! tie that neither decides is named in a note, so that no answer that may differ from the
//! whole stream's is silent.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::path::{Component, Path};

use chrono::{DateTime, SecondsFormat, Utc};

use crate::event::{Event, EventName};
use crate::input::InputError;
use crate::log::{Format, MachineLog};

/// The order in which `parts` (sorted by path and line) hand on their events of equal time,
/// by index, and a note for each pair of raw parts whose order at a shared instant matters
/// but is decided by neither their names nor their times. `identical` is the merge's rule for
/// two raw lines that are one event read twice.
pub(super) fn order(parts: &[MachineLog], identical: Same) -> (Vec<usize>, Vec<InputError>) {
    let raw: Vec<usize> = (0..parts.len()).filter(|&i| is_raw(&parts[i])).collect();
    let mut order: Vec<usize> = (0..parts.len()).filter(|&i| !is_raw(&parts[i])).collect();
    if raw.len() < 2 {
        order.extend(raw);
        return (order, Vec::new());
    }
    let rotations: Vec<Option<Rotation>> = parts.iter().map(|p| rotation(&p.source)).collect();
    let chains = chains(&raw, &rotations);
    let contents: Vec<Option<Content>> = parts
        .iter()
        .map(|p| is_raw(p).then(|| content(p)))
        .collect();
    let rank = |i: usize| rotations[i].as_ref().map(|r| &r.rank);
    let mut chain_of = vec![usize::MAX; parts.len()];
    let chained: Vec<Vec<usize>> = chains
        .into_values()
        .enumerate()
        .map(|(c, mut chain)| {
            chain.sort_by(|&a, &b| (rank(a), &contents[a], a).cmp(&(rank(b), &contents[b], b)));
            for &i in &chain {
                chain_of[i] = c;
            }
            chain
        })
        .collect();
    // Names order two parts where they are in one chain and of different ranks.
    let named_apart = |a: usize, b: usize| chain_of[a] == chain_of[b] && rank(a) != rank(b);
    // Each chain is in the order its names give; between chains, the part whose content
    // comes first (oldest event, then newest) goes first among the chains' next parts.
    let mut next = vec![0; chained.len()];
    while let Some(c) = (0..chained.len())
        .filter(|&c| next[c] < chained[c].len())
        .min_by_key(|&c| (&contents[chained[c][next[c]]], chained[c][next[c]]))
    {
        order.push(chained[c][next[c]]);
        next[c] += 1;
    }
    let notes = undecided(parts, &order, &named_apart, identical);
    (order, notes)
}

/// Whether two raw lines are one event read twice.
pub(super) type Same = fn(&Event, &Event) -> bool;

/// Whether a record is (a part of) a raw event stream.
fn is_raw(log: &MachineLog) -> bool {
    log.format == Format::Ndjson
}

/// A part's oldest and newest time.
type Span = (DateTime<Utc>, DateTime<Utc>);

/// What a raw part holds, as it is compared with another: its oldest and newest time, then
/// its events.
type Content<'a> = (Option<Span>, Vec<(&'a EventName, &'a str)>);

/// A raw part's [`Content`].
fn content(p: &MachineLog) -> Content<'_> {
    let span = p.events.first().zip(p.events.last());
    let events = p.events.iter().map(|e| (&e.name, &*e.message));
    (span.map(|(a, b)| (a.time, b.time)), events.collect())
}

/// How a rotated file's name says its age.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    /// `base.1`, `base.2.gz`: a higher number is older.
    Numbered,
    /// `base-YYYYMMDD[HH…]` (logrotate's `dateext`): an older date is older.
    Dated,
    /// The collector's day files, `YYYY-MM-DD.ndjson`.
    Day,
    /// The bare `base`: the file being written, newer than its rotations.
    Current,
}

/// A part's place among the rotations of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rotation {
    /// The directory as named, and the base name (for day files, what follows the date).
    file: (String, String),
    family: Family,
    /// Older first within one family.
    rank: (u8, Reverse<u64>, String),
}

/// A part's rotation as its path names it (a path like any other is the current file of its
/// own name); `None` where the path names no file (standard input).
fn rotation(source: &str) -> Option<Rotation> {
    let path = Path::new(source);
    let name = path.file_name()?.to_str()?;
    // `./a` and `a` are in one directory.
    let dir: Vec<_> = path
        .parent()
        .map(|p| p.components().filter(|c| *c != Component::CurDir).collect())
        .unwrap_or_default();
    let dir = dir
        .iter()
        .collect::<std::path::PathBuf>()
        .display()
        .to_string();
    let bare = name.strip_suffix(".gz").unwrap_or(name);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let make = |base: &str, family, rank| {
        Some(Rotation {
            file: (dir.clone(), base.to_string()),
            family,
            rank,
        })
    };
    if let Some((base, n)) = bare.rsplit_once('.')
        // More digits than a rotation count has are a date written another way, which a
        // number's order would turn round.
        && digits(n)
        && n.len() <= 6
        && !base.is_empty()
    {
        let n: u64 = n.parse().ok()?;
        return make(base, Family::Numbered, (0, Reverse(n), String::new()));
    }
    if let Some((base, date)) = bare.rsplit_once('-')
        && digits(date)
        && date.len() >= 8
        && !base.is_empty()
    {
        return make(base, Family::Dated, (0, Reverse(0), date.to_string()));
    }
    let day = bare.as_bytes();
    if day.len() >= 10
        && day[..10].iter().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                *b == b'-'
            } else {
                b.is_ascii_digit()
            }
        })
    {
        let rank = (0, Reverse(0), bare[..10].to_string());
        return make(&bare[10..], Family::Day, rank);
    }
    make(name, Family::Current, (1, Reverse(0), String::new()))
}

/// The raw parts grouped into chains that their names order: the rotations of one file in
/// one family, the current file with its numbered rotations (or its dated ones where it has
/// no numbered), every other part a chain of its own. Each chain is named by its first part,
/// so that chains come in the parts' order.
fn chains(raw: &[usize], rotations: &[Option<Rotation>]) -> BTreeMap<usize, Vec<usize>> {
    let mut families: BTreeMap<&(String, String), Vec<Family>> = BTreeMap::new();
    for r in raw.iter().filter_map(|&i| rotations[i].as_ref()) {
        families.entry(&r.file).or_default().push(r.family);
    }
    let mut first: BTreeMap<(&(String, String), Family), usize> = BTreeMap::new();
    let mut chains: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &i in raw {
        let Some(r) = &rotations[i] else {
            chains.insert(i, vec![i]);
            continue;
        };
        let family = match r.family {
            Family::Current => {
                let has = |f| families[&r.file].contains(&f);
                [Family::Numbered, Family::Dated]
                    .into_iter()
                    .find(|&f| has(f))
                    .unwrap_or(Family::Current)
            }
            f => f,
        };
        let head = *first.entry((&r.file, family)).or_insert(i);
        chains.entry(head).or_default().push(i);
    }
    chains
}

/// Whether a part's lines were in time order in its file: where one came late, its oldest
/// event says nothing of where the part begins.
fn in_time_order(p: &MachineLog) -> bool {
    p.events.windows(2).all(|w| w[0].line <= w[1].line)
}

/// Notes for the pairs of raw parts that hold events of one instant whose order changes the
/// answer, and that neither names nor times put in the order they were given.
fn undecided(
    parts: &[MachineLog],
    order: &[usize],
    named_apart: &dyn Fn(usize, usize) -> bool,
    identical: Same,
) -> Vec<InputError> {
    let mut position = vec![0; parts.len()];
    for (at, &i) in order.iter().enumerate() {
        position[i] = at;
    }
    let span = |p: &MachineLog| Some((p.events.first()?.time, p.events.last()?.time));
    let mut raw: Vec<(usize, Span)> = (0..parts.len())
        .filter(|&i| is_raw(&parts[i]))
        .filter_map(|i| Some((i, span(&parts[i])?)))
        .collect();
    raw.sort_by_key(|&(i, (first, _))| (first, i));
    let mut notes = Vec::new();
    for (k, &(a, (a_first, a_last))) in raw.iter().enumerate() {
        for &(b, (b_first, b_last)) in raw[k + 1..].iter().take_while(|(_, s)| s.0 <= a_last) {
            if named_apart(a, b) {
                continue;
            }
            let Some(at) = tie_that_matters(&parts[a], &parts[b], identical) else {
                continue;
            };
            let (first, second) = if position[a] < position[b] {
                (a, b)
            } else {
                (b, a)
            };
            let (before, after) = ((a_first, a_last), (b_first, b_last));
            let (before, after) = if first == a {
                (before, after)
            } else {
                (after, before)
            };
            // Times decide where one part ends at or before the other begins and not the
            // other way round, and both parts' lines came in time order.
            let by_time = before.1 <= after.0
                && after.1 > before.0
                && in_time_order(&parts[a])
                && in_time_order(&parts[b]);
            if !by_time {
                notes.push(note(&parts[first], &parts[second], at));
            }
        }
    }
    notes
}

/// The first instant both parts hold at which the order of the two changes which events are
/// kept or their order (identical lines count once, so parts that overlap as rotated copies
/// do agree).
fn tie_that_matters(a: &MachineLog, b: &MachineLog, identical: Same) -> Option<DateTime<Utc>> {
    fn at(p: &MachineLog, t: DateTime<Utc>) -> &[Event] {
        let from = p.events.partition_point(|e| e.time < t);
        let to = p.events.partition_point(|e| e.time <= t);
        &p.events[from..to]
    }
    fn kept<'a>(
        first: &'a [Event],
        second: &'a [Event],
        identical: Same,
    ) -> Vec<(&'a EventName, &'a str)> {
        let mut kept: Vec<&Event> = Vec::new();
        for e in first.iter().chain(second) {
            if !kept.iter().any(|k| identical(k, e)) {
                kept.push(e);
            }
        }
        kept.into_iter().map(|e| (&e.name, &*e.message)).collect()
    }
    let mut times: Vec<DateTime<Utc>> = a.events.iter().map(|e| e.time).collect();
    times.dedup();
    times.into_iter().find(|&t| {
        let (x, y) = (at(a, t), at(b, t));
        !y.is_empty() && kept(x, y, identical) != kept(y, x, identical)
    })
}

/// The note for two parts whose events of `at` were put `first`'s first without a reason.
fn note(first: &MachineLog, second: &MachineLog, at: DateTime<Utc>) -> InputError {
    let line = first
        .events
        .iter()
        .find(|e| e.time == at)
        .map_or(first.line, |e| e.line);
    let time = at.to_rfc3339_opts(SecondsFormat::AutoSi, true);
    InputError::at(
        &first.source,
        line,
        format!(
            "machine {}: events of the same time ({time}) in {} and {} are ordered by neither \
             names nor times (their times overlap there, or a line came late), {}'s first, \
             which may not be the whole stream's order; name rotated parts as logrotate does \
             (events.ndjson, events.ndjson.1, events.ndjson.2.gz, events.ndjson-20250901), \
             or give one stream",
            first.machine, first.source, second.source, first.source
        ),
    )
}

#[cfg(test)]
#[path = "ties_tests.rs"]
mod tests;
