//! Ties between a raw stream's parts: rotated names decide, whatever order the lines came in;
//! where neither names nor times decide, a note says so.

use super::*;
use crate::event::EventKind;
use crate::fleet::merge::{Merged, merge};
use crate::log::Format;

/// An event of machine `m` at `2025-09-01T` + `time`, read at `line`.
fn event(time: &str, kind: EventKind, message: &str, line: usize) -> Event {
    let time = DateTime::parse_from_rfc3339(&format!("2025-09-01T{time}")).unwrap();
    Event::from_recorded(time.to_utc(), EventName::Known(kind), message, line)
}

/// A raw part as the stream reader hands it on: its lines in arrival order, sorted by time
/// with ties kept in that order.
fn part(source: &str, arrival: &[Event]) -> MachineLog {
    let mut log = MachineLog::new("m".to_string(), source, 1, Format::Ndjson);
    log.events = arrival.to_vec();
    log.events.sort_by_key(|e| e.time);
    log.annotated = false;
    log
}

/// What a merged machine replays: each event's time, name and message, in order.
fn replayed(merged: &Merged) -> Vec<(DateTime<Utc>, EventName, String)> {
    let events = merged.log.events.iter();
    events
        .map(|e| (e.time, e.name.clone(), e.message.to_string()))
        .collect()
}

/// The stream of the review: a planned reboot, its PXE boot in the same second, and then a
/// late, buffered Phoned Home of five seconds before. Cut after the reboot, the newer part
/// holds the oldest event.
fn late_phoned_home() -> Vec<Event> {
    use EventKind::*;
    vec![
        event("00:02:00Z", PlannedReboot, "", 1),
        event("00:02:00Z", PxeBooting, "", 2),
        event("00:01:55Z", PhonedHome, "buffered", 3),
    ]
}

#[test]
fn rotated_names_say_which_part_is_older() {
    let age = |s: &str| rotation(s).map(|r| (r.file.1, r.family, r.rank));
    let numbered = |n| (0, Reverse(n), String::new());
    let current = (1, Reverse(0), String::new());
    let base = "events.ndjson".to_string();
    assert_eq!(
        age("/var/log/events.ndjson"),
        Some((base.clone(), Family::Current, current.clone()))
    );
    assert_eq!(
        age("events.ndjson.1"),
        Some((base.clone(), Family::Numbered, numbered(1)))
    );
    assert_eq!(
        age("events.ndjson.2.gz"),
        Some((base.clone(), Family::Numbered, numbered(2)))
    );
    let dated = |d: &str| (0, Reverse(0), d.to_string());
    assert_eq!(
        age("events.ndjson-20250901"),
        Some((base.clone(), Family::Dated, dated("20250901")))
    );
    assert_eq!(
        age("events.ndjson-2025090113.gz"),
        Some((base.clone(), Family::Dated, dated("2025090113")))
    );
    assert_eq!(
        age("collector/2025-09-01.ndjson"),
        Some((".ndjson".to_string(), Family::Day, dated("2025-09-01")))
    );
    // A long number is a date written another way: no rotation count, so no order.
    assert_eq!(
        age("events.ndjson.20250901").map(|a| a.1),
        Some(Family::Current)
    );
    // `./a` and `a` are one directory; another directory is another file.
    assert_eq!(
        rotation("./x/events.ndjson.1").unwrap().file,
        rotation("x/events.ndjson").unwrap().file
    );
    assert_ne!(
        rotation("y/events.ndjson.1").unwrap().file,
        rotation("x/events.ndjson").unwrap().file
    );
    assert_eq!(rotation(""), None);
}

#[test]
fn a_late_line_in_the_newer_part_does_not_put_it_first_when_names_say_it_is_newer() {
    let stream = late_phoned_home();
    let whole = merge(vec![part("whole", &stream)]);
    // Checked by hand: the stream as it came, sorted by time with ties in arrival order.
    let kinds: Vec<_> = whole.log.events.iter().map(|e| e.name.clone()).collect();
    use EventKind::*;
    assert_eq!(
        kinds,
        [PhonedHome, PlannedReboot, PxeBooting].map(EventName::Known)
    );
    let (older, newer) = stream.split_at(1);
    let namings = [
        ("events.ndjson.1", "events.ndjson"),
        ("events.ndjson.2.gz", "events.ndjson.1"),
        ("events.ndjson-20250901", "events.ndjson-20250902"),
        ("events.ndjson-20250901.gz", "events.ndjson"),
        ("logs/2025-09-01.ndjson", "logs/2025-09-02.ndjson"),
    ];
    for (old_name, new_name) in namings {
        for parts in [
            vec![part(old_name, older), part(new_name, newer)],
            vec![part(new_name, newer), part(old_name, older)],
        ] {
            let merged = merge(parts);
            assert_eq!(replayed(&merged), replayed(&whole), "{old_name} {new_name}");
            assert_eq!(merged.notes, vec![], "{old_name} {new_name}");
        }
    }
}

#[test]
fn parts_that_neither_names_nor_times_order_are_named_in_a_note() {
    use EventKind::*;
    // The review's case under names that are no rotations of one file: the newer part holds
    // a late line, so its oldest event says nothing.
    let stream = late_phoned_home();
    let (older, newer) = stream.split_at(1);
    let merged = merge(vec![part("b.ndjson", older), part("a.ndjson", newer)]);
    assert_eq!(merged.notes.len(), 1, "{:?}", merged.notes);
    let note = &merged.notes[0];
    assert_eq!(
        (note.path.as_str(), note.line),
        ("a.ndjson", 2),
        "the PXE boot's line"
    );
    assert!(
        note.message.starts_with(
            "machine m: events of the same time (2025-09-01T00:02:00Z) in a.ndjson and b.ndjson"
        ),
        "{}",
        note.message
    );
    assert!(
        note.message.contains("or give one stream"),
        "{}",
        note.message
    );
    // Two parts of one instant each (the review's p1 and p2): either order fits their times.
    let reboot = [event("00:02:00Z", PlannedReboot, "", 1)];
    let pxe = [event("00:02:00Z", PxeBooting, "", 1)];
    let merged = merge(vec![part("p1", &reboot), part("p2", &pxe)]);
    assert_eq!(merged.notes.len(), 1);
    // Named as rotations, the same parts are ordered and say nothing.
    let merged = merge(vec![part("e.ndjson", &pxe), part("e.ndjson.1", &reboot)]);
    assert_eq!(merged.notes, vec![]);
    let kinds: Vec<_> = merged.log.events.iter().map(|e| e.name.clone()).collect();
    assert_eq!(kinds, [PlannedReboot, PxeBooting].map(EventName::Known));
    // Times decide where one part ends at the instant the other begins, lines in order.
    let before = [event("00:01:00Z", PhonedHome, "", 1), reboot[0].clone()];
    let after = [pxe[0].clone(), event("00:03:00Z", Preparing, "", 2)];
    let merged = merge(vec![part("b", &after), part("a", &before)]);
    assert_eq!(merged.notes, vec![]);
    // Overlapping copies of the same lines: either order keeps the same events.
    let both = [reboot[0].clone(), pxe[0].clone()];
    let merged = merge(vec![part("copy", &both), part("orig", &both)]);
    assert_eq!(merged.notes, vec![]);
    assert_eq!(merged.duplicates, 2);
    // Rotations of different files, or different directories, are no rotations of one.
    let merged = merge(vec![
        part("x/e.ndjson", &pxe),
        part("y/e.ndjson.1", &reboot),
    ]);
    assert_eq!(merged.notes.len(), 1);
}

proptest::proptest! {
    /// A stream in arrival order with late lines (a line up to a few seconds older than the
    /// one before it), cut into up to four parts named as rotations of one file and given in
    /// any order: the parts merge into the whole stream, and no note is needed.
    #[test]
    fn rotated_parts_of_a_stream_with_late_lines_merge_into_the_whole(
        steps in proptest::collection::vec((0usize..5, 0usize..5, proptest::bool::ANY), 1..16),
        cuts in proptest::collection::vec(0usize..16, 0..4),
        naming in 0usize..4,
        rotate in 0usize..8,
    ) {
        use EventKind::*;
        let kinds = [PxeBooting, Preparing, PlannedReboot, PhonedHome, Registering];
        // Ahead, a tie, or back: a late line.
        let millis = [0, 0, 1000, -3000, -1000];
        let start = DateTime::parse_from_rfc3339("2025-09-01T00:10:00Z").unwrap().to_utc();
        let mut time = start;
        let stream: Vec<Event> = steps
            .iter()
            .enumerate()
            .map(|(i, &(step, kind, message))| {
                time += chrono::TimeDelta::milliseconds(millis[step]);
                let message = if message { "a" } else { "b" };
                Event::from_recorded(time, EventName::Known(kinds[kind]), message, i + 1)
            })
            .collect();
        let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(stream.len())).collect();
        bounds.extend([0, stream.len()]);
        bounds.sort_unstable();
        bounds.dedup();
        let pieces: Vec<&[Event]> = bounds.windows(2).map(|w| &stream[w[0]..w[1]]).collect();
        let n = pieces.len();
        // The oldest piece first; names as logrotate and the collector give them.
        let name = |i: usize| match naming {
            0 if i + 1 == n => "events.ndjson".to_string(),
            0 => format!("events.ndjson.{}{}", n - 1 - i, if n - 1 - i > 1 { ".gz" } else { "" }),
            1 => format!("events.ndjson-2025090{}", i + 1),
            2 if i + 1 == n => "events.ndjson".to_string(),
            2 => format!("events.ndjson-2025090{}.gz", i + 1),
            _ => format!("collector/2025-09-0{}.ndjson", i + 1),
        };
        let mut parts: Vec<MachineLog> = (0..n).map(|i| part(&name(i), pieces[i])).collect();
        parts.rotate_left(rotate % n);
        if rotate % 2 == 1 {
            parts.reverse();
        }
        let whole = merge(vec![part("whole", &stream)]);
        let merged = merge(parts);
        proptest::prop_assert_eq!(replayed(&merged), replayed(&whole));
        proptest::prop_assert_eq!(merged.duplicates, whole.duplicates);
        proptest::prop_assert!(merged.notes.is_empty(), "{:?}", merged.notes);
    }
}
