//! A machine judged in chunks against the same machine judged whole: random logs under every
//! built-in rule set, and every machine of the fixtures.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use super::*;
use crate::aggregate::Breakdown;
use crate::diagnose::Judged;
use crate::event::State;
use crate::log::{Dimension, Format, RecordedFlag};
use crate::rules::builtins;
use crate::window::{Period, Window};

/// What judging a merged machine whole adds to a summary.
fn whole(merged: &Merged, rules: &Ruleset, counting: &Counting) -> Summary {
    let mut summary = Summary::default();
    summary.add(&Judged::of(merged, rules), counting);
    summary
}

/// The machine as it was after its first `n` events, what its records say besides them kept.
fn prefix(merged: &Merged, n: usize) -> Merged {
    let mut log = merged.log.clone();
    log.events.truncate(n);
    log.seams.retain(|&s| s < n);
    Merged {
        log,
        duplicates: merged.duplicates,
        records: merged.records,
        notes: Vec::new(),
    }
}

/// Feeds a machine's events in chunks cut at `cuts`, comparing with the whole judgement of
/// each prefix at every cut; the first difference, if any.
fn chunked(
    merged: &Merged,
    rules: &Ruleset,
    counting: &Counting,
    cuts: &[usize],
) -> Option<String> {
    let log = &merged.log;
    let mut judging = Judging::new(
        log.machine.as_str(),
        log.annotated,
        Facts::of(log),
        rules,
        counting,
    );
    *judging.accounting_mut() = Accounting {
        newest_event: None,
        duplicates: merged.duplicates,
        skipped_lines: log.skipped_lines,
        records: merged.records,
        gaps: log.gaps.len() as u64,
    };
    let mut fed = 0;
    for &cut in cuts.iter().chain([&log.events.len()]) {
        while fed < cut.min(log.events.len()) {
            let event = &log.events[fed];
            let source = log
                .sources
                .get(event.source as usize)
                .map_or(log.source.as_str(), String::as_str);
            judging.push(event, source, log.seams.contains(&fed));
            fed += 1;
        }
        let expected = whole(&prefix(merged, fed), rules, counting);
        let got = judging.contribution();
        if got != expected {
            return Some(format!(
                "{} under {} after {fed} events:\n judged whole: {expected:?}\n judged in chunks: {got:?}",
                log.machine, rules.name
            ));
        }
    }
    None
}

/// A seeded xorshift.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

fn start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2025-09-01T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

/// The provisioning cycle's events in order, which random logs walk with detours.
const CYCLE: [EventKind; 8] = [
    EventKind::PxeBooting,
    EventKind::Preparing,
    EventKind::Registering,
    EventKind::Waiting,
    EventKind::Installing,
    EventKind::BootingNewKernel,
    EventKind::PhonedHome,
    EventKind::PhonedHome,
];

/// A random machine: events at random steps in time (some equal, some backwards, some a day
/// or two apart), walking the provisioning cycle with skips, repeats and random events; some
/// with recorded verdicts, seams, unknown names; random recorded flags, last error and place.
fn random_machine(r: &mut Random, id: usize) -> Merged {
    let mut log = MachineLog::new(format!("m{id}"), "a.json", 1, Format::LogsJson);
    log.sources.push("b.json".into());
    log.annotated = r.one_in(2);
    let mut time = start();
    let mut at = 0usize;
    let n = 1 + r.below(90) as usize;
    for i in 0..n {
        time += match r.below(10) {
            0 => TimeDelta::hours(20 + r.below(40) as i64),
            1 => TimeDelta::seconds(-(r.below(30) as i64)),
            2 => TimeDelta::zero(),
            _ => TimeDelta::seconds(r.below(400) as i64),
        };
        let name = match r.below(12) {
            0 => EventName::Unknown("Rebooting".into()),
            1..=3 => {
                EventName::Known(EventKind::ALL[r.below(EventKind::ALL.len() as u64) as usize])
            }
            4 => EventName::Known(EventKind::Alive),
            5 => EventName::Known(EventKind::PhonedHome),
            _ => {
                at = match r.below(8) {
                    0 => at + 2,
                    1 => at,
                    2 => 0,
                    _ => at + 1,
                } % CYCLE.len();
                EventName::Known(CYCLE[at])
            }
        };
        let message = if r.one_in(3) { "same" } else { "msg" };
        let mut event = Event::from_recorded(time, name, message, i + 2);
        event.source = r.below(2) as u32;
        if log.annotated && r.one_in(6) {
            event.recorded_state = Some(State::ALL[r.below(State::ALL.len() as u64) as usize]);
        }
        if i > 0 && r.one_in(15) {
            log.seams.push(i);
        }
        log.events.push(event);
    }
    let flag = |r: &mut Random| {
        (!r.one_in(3)).then(|| RecordedFlag {
            value: r.one_in(2),
            as_of: (!r.one_in(4))
                .then(|| start() + TimeDelta::minutes(r.below(n as u64 * 8) as i64)),
        })
    };
    log.recorded.failed_machine_reclaim = flag(r);
    log.recorded.crash_loop = flag(r);
    if r.one_in(2) {
        log.recorded.last_event_time =
            Some(start() + TimeDelta::minutes(r.below(n as u64 * 8) as i64));
    }
    log.last_error_event = match r.below(4) {
        0 => None,
        1 => Some(log.events[r.below(n as u64) as usize].clone()),
        _ => {
            let kind = EventKind::ALL[r.below(EventKind::ALL.len() as u64) as usize];
            let mut le = Event::from_recorded(
                start() + TimeDelta::minutes(r.below(n as u64 * 8) as i64),
                if r.one_in(8) {
                    EventName::Unknown("Odd".into())
                } else {
                    EventName::Known(kind)
                },
                "last",
                1,
            );
            le.recorded_state =
                (!r.one_in(3)).then(|| State::ALL[r.below(State::ALL.len() as u64) as usize]);
            le.source = 1;
            Some(le)
        }
    };
    if r.one_in(2) {
        log.machine_info.place = Some(Arc::new(Place {
            partition: Some(format!("p{}", r.below(2))),
            rack: r.one_in(2).then(|| "r1".to_string()),
            ..Place::default()
        }));
    }
    log.skipped_lines = r.below(2);
    if r.one_in(4) {
        log.gaps.push(time);
    }
    Merged {
        log,
        duplicates: r.below(2),
        records: 1 + r.below(2) as usize,
        notes: Vec::new(),
    }
}

/// A random way to count: the whole time or a window, with or without a trend and a
/// breakdown.
fn random_counting(r: &mut Random) -> Counting {
    let window = match r.below(3) {
        0 => Window {
            since: Some(start() + TimeDelta::hours(r.below(48) as i64)),
            until: r
                .one_in(2)
                .then(|| start() + TimeDelta::hours(48 + r.below(96) as i64)),
        },
        _ => Window::default(),
    };
    Counting {
        window,
        period: r.one_in(3).then_some(Period::Day),
        breakdown: match r.below(3) {
            0 => Breakdown::Partition.dimension(),
            1 => Some(Dimension::Rack),
            _ => None,
        },
    }
}

#[test]
fn a_machine_judged_in_chunks_is_judged_as_whole_under_every_rule_set() {
    let mut r = Random(0x9e37_79b9_7f4a_7c15);
    let all = builtins();
    let mut failures = Vec::new();
    for id in 0..1500 {
        let merged = random_machine(&mut r, id);
        let counting = random_counting(&mut r);
        let len = merged.log.events.len();
        let mut cuts: Vec<usize> = (0..r.below(6))
            .map(|_| r.below(len as u64 + 1) as usize)
            .collect();
        cuts.sort_unstable();
        for rules in &all {
            if let Some(failure) = chunked(&merged, rules, &counting, &cuts) {
                failures.push(failure);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ; the first:\n{}",
        failures.len(),
        failures[0]
    );
}

/// The first differences found in every machine of one input path, judged event by event.
#[derive(Default)]
struct Differences(Vec<String>, u64);

impl std::ops::AddAssign for Differences {
    fn add_assign(&mut self, other: Differences) {
        self.0.extend(other.0);
        self.1 += other.1;
    }
}

fn judged_alike(path: PathBuf) -> Differences {
    use crate::fleet::{Inputs, Sources};
    let sources = Sources {
        paths: vec![path],
        threads: Some(1),
        ..Sources::default()
    };
    let inputs = Inputs::resolve(&sources).unwrap();
    let all = builtins();
    inputs
        .fold(|found: &mut Differences, merged| {
            found.1 += 1;
            let len = merged.log.events.len();
            let cuts = [len / 3, len / 2, len.saturating_sub(1)];
            for rules in &all {
                let counting = Counting::default();
                if let Some(d) = chunked(&merged, rules, &counting, &cuts) {
                    found.0.push(d);
                }
            }
        })
        .value
}

#[test]
fn every_machine_of_the_fixtures_is_judged_in_chunks_as_whole() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("testdata")];
    let samples = root.join("../shared/samples");
    if samples.is_dir() {
        paths.push(samples);
    }
    for path in paths {
        let found = judged_alike(path.clone());
        assert!(found.1 > 10, "{}: machines were read", path.display());
        assert!(
            found.0.is_empty(),
            "{}: {} differ; the first:\n{}",
            path.display(),
            found.0.len(),
            found.0[0]
        );
    }
}
