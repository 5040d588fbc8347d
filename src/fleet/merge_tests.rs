//! Merging records of one machine: exports that overlap or lie days apart, tables beside
//! JSON, and a raw stream's parts cut anywhere, given in any order.

use super::*;
use crate::event::{EventKind, EventName};
use crate::log::Format;
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
    let mut log = MachineLog::new("m".to_string(), source, 1, Format::LogsJson);
    log.events = events;
    log
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
fn events_a_record_holds_twice_stay_twice() {
    let crash = || event("2025-01-01T10:00:00Z", EventKind::Crashed, "oops");
    let a = log("a", vec![crash(), crash()]);
    let b = log("b", vec![crash()]);
    let merged = merge(vec![a, b]);
    assert_eq!(merged.log.events.len(), 2);
    assert_eq!(merged.duplicates, 1);
}

#[test]
fn a_record_after_a_gap_begins_at_a_seam() {
    let older = log(
        "a",
        vec![
            event("2025-01-01T10:00:00Z", EventKind::Registering, "r"),
            event("2025-01-01T10:01:00Z", EventKind::Waiting, "w"),
        ],
    );
    let newer = log(
        "b",
        vec![
            event("2025-01-03T10:00:00Z", EventKind::Registering, "r"),
            event("2025-01-03T10:01:00Z", EventKind::Waiting, "w"),
        ],
    );
    assert_eq!(merge(vec![newer.clone(), older.clone()]).log.seams, vec![2]);
    let overlapping = log(
        "c",
        vec![
            event("2025-01-01T10:01:00Z", EventKind::Waiting, "w"),
            event("2025-01-01T10:05:00Z", EventKind::Installing, "i"),
        ],
    );
    assert!(merge(vec![older, overlapping]).log.seams.is_empty());
}

#[test]
fn a_raw_stream_split_anywhere_is_one_stream() {
    let kinds = [
        EventKind::PxeBooting,
        EventKind::Preparing,
        EventKind::Registering,
        EventKind::Waiting,
        EventKind::PxeBooting,
        EventKind::Preparing,
        EventKind::Alive,
    ];
    let stream: Vec<Event> = kinds
        .iter()
        .enumerate()
        .map(|(i, &kind)| {
            // A day between the two boots, as between two daily files.
            let day = if i < 4 { 1 } else { 2 };
            event(&format!("2025-09-0{day}T00:0{i}:00Z"), kind, "")
        })
        .collect();
    let raw = |source: &str, events: &[Event]| {
        let mut part = log(source, events.to_vec());
        part.annotated = false;
        part
    };
    for cut in 0..=stream.len() {
        let (a, b) = stream.split_at(cut);
        for parts in [
            vec![raw("a", a), raw("b", b)],
            vec![raw("b", b), raw("a", a)],
        ] {
            let merged = merge(parts);
            let got: Vec<_> = merged
                .log
                .events
                .iter()
                .map(|e| (e.time, &e.name))
                .collect();
            let want: Vec<_> = stream.iter().map(|e| (e.time, &e.name)).collect();
            assert_eq!(got, want, "cut at {cut}");
            assert!(merged.log.seams.is_empty(), "cut at {cut}");
            assert_eq!(merged.duplicates, 0);
        }
    }
    // A raw part after an export alone begins after its gap, as any record does.
    let (a, b) = stream.split_at(4);
    let mut later = log("b", b.to_vec());
    later.annotated = false;
    assert_eq!(merge(vec![log("a", a.to_vec()), later]).log.seams, vec![4]);
    // The same parts as exports (their newest rows only) begin again after the gap.
    let (a, b) = stream.split_at(4);
    assert_eq!(
        merge(vec![log("a", a.to_vec()), log("b", b.to_vec())])
            .log
            .seams,
        vec![4]
    );
}

#[test]
fn merger_holds_recurring_machines_until_complete() {
    let census = Census::default();
    census.note(["m", "m", "n"]);
    let merger = Merger::new(census.recurring());
    assert!(merger.offer(log("a", Vec::new())).is_none());
    let merged = merger.offer(log("b", Vec::new())).unwrap();
    assert_eq!(merged.records, 2);
    let mut other = log("c", Vec::new());
    other.machine = "n".to_string();
    assert_eq!(merger.offer(other).unwrap().records, 1);
    assert!(merger.drain().is_empty());
}

#[test]
fn a_census_knows_a_machine_recurs_as_soon_as_it_has_counted_it_twice() {
    let census = Census::default();
    census.note(["m", "n"]);
    assert!(!census.recurs(), "each machine once so far");
    census.note(["o", "m"]);
    assert!(census.recurs());
    assert!(
        !census.recurring().is_empty(),
        "the same as the census's answer"
    );
}

/// A raw stream's part as its reader hands it on.
fn raw(source: &str, events: &[Event]) -> MachineLog {
    let mut part = log(source, events.to_vec());
    part.format = Format::Ndjson;
    part.annotated = false;
    part
}

/// What a merged machine replays: each event's time, name and message, in order.
fn replayed(merged: &Merged) -> Vec<(DateTime<Utc>, EventName, String)> {
    let events = merged.log.events.iter();
    events
        .map(|e| (e.time, e.name.clone(), e.message.to_string()))
        .collect()
}

/// Whole seconds with ties (a reboot and the PXE boot after it in one second), two events of
/// one second with and without a fraction, and single events at both ends: where a part lies
/// wholly at one instant another part does not share, its place follows from its content.
fn stream_with_ties() -> Vec<Event> {
    use EventKind::*;
    [
        ("00:00:00Z", PxeBooting, "dhcp"),
        ("00:00:10Z", Preparing, "hammer"),
        ("00:00:10.300Z", Preparing, "hammer"),
        ("00:00:20Z", Registering, "r"),
        ("00:00:20Z", Waiting, "w"),
        ("00:01:00Z", PhonedHome, "ph"),
        ("00:02:00Z", PlannedReboot, "reboot"),
        ("00:02:00Z", PxeBooting, "dhcp"),
        ("00:02:00Z", PxeBooting, "dhcp again"),
        ("00:03:00Z", Preparing, "hammer"),
    ]
    .iter()
    .map(|(time, kind, message)| event(&format!("2025-09-01T{time}"), *kind, message))
    .collect()
}

/// Every order of `n` parts.
fn orders(n: usize) -> Vec<Vec<usize>> {
    if n == 1 {
        return vec![vec![0]];
    }
    let mut all = Vec::new();
    for rest in orders(n - 1) {
        for at in 0..=rest.len() {
            let mut order = rest.clone();
            order.insert(at, n - 1);
            all.push(order);
        }
    }
    all
}

#[test]
fn a_raw_stream_cut_at_every_seam_into_parts_in_any_order_is_the_whole() {
    let stream = stream_with_ties();
    let whole = merge(vec![raw("whole", &stream)]);
    let n = stream.len();
    let mut cuts: Vec<Vec<usize>> = (0..=n).map(|a| vec![a]).collect();
    cuts.extend((0..=n).flat_map(|a| (a..=n).map(move |b| vec![a, b])));
    for cut in cuts {
        let mut bounds = vec![0];
        bounds.extend(&cut);
        bounds.push(n);
        let pieces: Vec<&[Event]> = bounds.windows(2).map(|w| &stream[w[0]..w[1]]).collect();
        // Named as logrotate names them, the newest part's path sorting first.
        let names = ["events.ndjson.2", "events.ndjson.1", "events.ndjson"];
        for order in orders(pieces.len()) {
            let parts = order
                .iter()
                .map(|&i| raw(names[3 - pieces.len() + i], pieces[i]))
                .collect();
            let merged = merge(parts);
            assert_eq!(
                replayed(&merged),
                replayed(&whole),
                "cut {cut:?}, {order:?}"
            );
            assert!(merged.log.seams.is_empty(), "cut {cut:?}");
            assert_eq!(merged.duplicates, 0, "cut {cut:?}");
        }
    }
}

#[test]
fn overlapping_raw_parts_count_each_line_once_as_the_stream_does() {
    let stream = stream_with_ties();
    for start in 0..stream.len() {
        for end in start..=stream.len() {
            // Rotated copies that overlap from `start` to `end`.
            let (older, newer) = (&stream[..end], &stream[start..]);
            for parts in [
                vec![raw("a", older), raw("b", newer)],
                vec![raw("b", older), raw("a", newer)],
            ] {
                let merged = merge(parts);
                assert_eq!(replayed(&merged), replayed(&merge(vec![raw("w", &stream)])));
                assert_eq!(merged.duplicates, (end - start) as u64);
            }
        }
    }
    // The same lines twice in one file, as `cat a a` writes them: once too.
    let twice: Vec<Event> = stream.iter().chain(&stream).cloned().collect();
    let mut sorted = twice.clone();
    sorted.sort_by_key(|e| e.time);
    let merged = Merger::default().offer(raw("twice", &sorted)).unwrap();
    assert_eq!(replayed(&merged).len(), stream.len());
    assert_eq!(merged.duplicates, stream.len() as u64);
}

#[test]
fn raw_lines_of_one_second_with_and_without_a_fraction_are_two_events() {
    let whole = event("2025-09-01T00:00:10Z", EventKind::Preparing, "hammer");
    let fraction = event("2025-09-01T00:00:10.300Z", EventKind::Preparing, "hammer");
    let merged = merge(vec![
        raw("a", std::slice::from_ref(&whole)),
        raw("b", &[fraction]),
    ]);
    assert_eq!(merged.log.events.len(), 2);
    assert_eq!(merged.duplicates, 0);
    // A table's whole second beside the JSON's fraction is still the same event.
    let table = log("t", vec![whole]);
    let json = log(
        "j",
        vec![event(
            "2025-09-01T00:00:10.300Z",
            EventKind::Preparing,
            "hammer",
        )],
    );
    assert_eq!(merge(vec![table, json]).duplicates, 1);
}

#[test]
fn a_gap_marker_begins_a_seam_in_whichever_part_holds_it() {
    let stream = stream_with_ties();
    let gap = stream[5].time;
    for cut in 0..=stream.len() {
        let (a, b) = stream.split_at(cut);
        // The marker in the part it fell into by its line, or in the other one.
        for marked in [0, 1] {
            let mut parts = vec![raw("x.1", a), raw("x", b)];
            parts[marked].gaps = vec![gap];
            let merged = merge(parts);
            assert_eq!(merged.log.seams, vec![5], "cut {cut}");
            assert_eq!(merged.log.gaps, vec![gap]);
        }
    }
    // One file with a marker: the merger settles it as a merge would.
    let mut part = raw("one", &stream);
    part.gaps = vec![gap, stream[9].time + TimeDelta::seconds(1)];
    let merged = Merger::default().offer(part).unwrap();
    assert_eq!(
        merged.log.seams,
        vec![5],
        "a marker after the last event begins nothing"
    );
    assert_eq!(merged.log.gaps.len(), 2);
}

proptest::proptest! {
    /// Any stream whose first and last instants hold one event each (parts that lie wholly at
    /// one instant another part shares could be either's), cut into up to three parts given
    /// in any order, with gap markers in any part: the parts merge into the whole stream.
    #[test]
    fn any_raw_stream_in_parts_merges_into_the_whole(
        steps in proptest::collection::vec((0usize..4, 0usize..5, proptest::bool::ANY), 2..14),
        cuts in proptest::collection::vec(0usize..14, 0..3),
        gaps in proptest::collection::vec((0usize..14, 0usize..3), 0..3),
        rotate in 0usize..6,
    ) {
        use EventKind::*;
        let kinds = [PxeBooting, Preparing, PlannedReboot, PhonedHome, Registering];
        let millis = [0, 300, 1000, 10_000];
        let mut time = DateTime::parse_from_rfc3339("2025-09-01T00:00:00Z").unwrap().to_utc();
        let last = steps.len() - 1;
        let stream: Vec<Event> = steps
            .iter()
            .enumerate()
            .map(|(i, &(step, kind, message))| {
                // A tie neither right after the first event nor right before the last.
                let step = if i == 1 || i == last { millis[step].max(300) } else { millis[step] };
                time += TimeDelta::milliseconds(step as i64 * i64::from(i > 0));
                let message = if message { "a" } else { "b" };
                Event::from_recorded(time, EventName::Known(kinds[kind]), message, i + 1)
            })
            .collect();
        let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(stream.len())).collect();
        bounds.extend([0, stream.len()]);
        bounds.sort_unstable();
        let mut parts: Vec<MachineLog> = bounds
            .windows(2)
            .filter(|w| w[0] < w[1])
            .enumerate()
            // Named as logrotate names them: the newest part's path sorts first.
            .map(|(i, w)| raw(&format!("events.ndjson.{}", 9 - i), &stream[w[0]..w[1]]))
            .collect();
        let mut whole = raw("whole", &stream);
        for &(at, part) in &gaps {
            let at = stream[at.min(last)].time;
            whole.gaps.push(at);
            let part = part % parts.len();
            parts[part].gaps.push(at);
        }
        whole.gaps.sort();
        let whole = merge(vec![whole]);
        let n = parts.len();
        parts.rotate_left(rotate % n);
        if rotate % 2 == 1 {
            parts.reverse();
        }
        let merged = merge(parts);
        proptest::prop_assert_eq!(replayed(&merged), replayed(&whole));
        proptest::prop_assert_eq!(&merged.log.seams, &whole.log.seams);
        proptest::prop_assert_eq!(merged.duplicates, whole.duplicates);
    }
}
