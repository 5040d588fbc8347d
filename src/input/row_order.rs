//! The order of a log's rows. metalctl prints a log newest first, so where a row is newer than
//! the row above it the order restarts: another record of the same machine begins, as
//! appending an export to its own file makes (`metalctl machine logs ID >> ID.txt` on two days,
//! `cat a a`). Such records are handed on as the separate records they are and merged as
//! records from different files are. Each record is then put into time order.

use std::cmp::Ordering;
use std::ops::Range;

use crate::event::Event;

/// The records a log's rows (in the order they were read) hold, as ranges of `rows`.
/// `breaks` are rows that begin a record whatever their time (the first row after a repeated
/// `TIME  EVENT  MESSAGE` header). Between breaks, the order the rows mostly follow is the
/// log's (newest first where they are as often one way as the other, as metalctl prints it),
/// and a row that goes against it begins another record. Equal times never do: tables print
/// whole seconds.
pub(crate) fn records(rows: &[Event], breaks: &[usize]) -> Vec<Range<usize>> {
    let mut bounds: Vec<usize> = breaks
        .iter()
        .copied()
        .filter(|&b| b > 0 && b < rows.len())
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut records = Vec::new();
    let mut start = 0;
    for end in bounds.into_iter().chain([rows.len()]) {
        if start < end {
            restarts(rows, start..end, &mut records);
        }
        start = end;
    }
    records
}

/// One record of a log, its events in time order.
pub(crate) struct Cut {
    /// The line the record starts on: `first_line` for the first, else its first row's.
    pub line: usize,
    pub events: Vec<Event>,
    /// How many of the log's rows were read up to the end of this record.
    pub end: usize,
}

/// Cuts a log's rows (in the order read) into its records (see [`records`]), at least one,
/// each in time order.
pub(crate) fn cut(rows: Vec<Event>, breaks: &[usize], first_line: usize) -> Vec<Cut> {
    let mut ranges = records(&rows, breaks);
    if ranges.is_empty() {
        ranges.push(0..0);
    }
    let mut rows = rows.into_iter();
    ranges
        .into_iter()
        .enumerate()
        .map(|(i, range)| {
            let mut events: Vec<Event> = rows.by_ref().take(range.len()).collect();
            let line = match (i, events.first()) {
                (0, _) | (_, None) => first_line,
                (_, Some(first)) => first.line,
            };
            into_time_order(&mut events, true);
            Cut {
                line,
                events,
                end: range.end,
            }
        })
        .collect()
}

/// Splits one run of rows where the order restarts.
fn restarts(rows: &[Event], run: Range<usize>, records: &mut Vec<Range<usize>>) {
    let steps = || {
        rows[run.clone()]
            .windows(2)
            .map(|w| w[1].time.cmp(&w[0].time))
    };
    let newer = steps().filter(|s| *s == Ordering::Greater).count();
    let older = steps().filter(|s| *s == Ordering::Less).count();
    let against = if older >= newer {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    let mut start = run.start;
    for (i, step) in (run.start + 1..).zip(steps()) {
        if step == against {
            records.push(start..i);
            start = i;
        }
    }
    records.push(start..run.end);
}

/// Puts a record's events into time order; exports are newest first, so a record whose
/// first event is newer than its last is reversed before the stable sort keeps equal times
/// in stored order.
pub(crate) fn into_time_order(events: &mut [Event], newest_first_by_default: bool) {
    let newest_first = match (events.first(), events.last()) {
        (Some(first), Some(last)) if first.time != last.time => first.time > last.time,
        _ => newest_first_by_default,
    };
    if newest_first {
        events.reverse();
    }
    // Almost every record is in order once reversed; a stable sort still moves every event.
    if !events.is_sorted_by_key(|e| e.time) {
        events.sort_by_key(|e| e.time);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventKind, EventName};
    use chrono::{TimeZone, Utc};

    fn rows(minutes: &[i64]) -> Vec<Event> {
        minutes
            .iter()
            .map(|&m| {
                Event::from_recorded(
                    Utc.timestamp_opt(1_700_000_000 + 60 * m, 0).unwrap(),
                    EventName::Known(EventKind::Waiting),
                    "",
                    0,
                )
            })
            .collect()
    }

    #[test]
    fn a_log_newest_first_is_one_record() {
        assert_eq!(records(&rows(&[5, 4, 4, 2, 1]), &[]), vec![0..5]);
        assert_eq!(records(&rows(&[1, 2, 4]), &[]), vec![0..3], "oldest first");
        assert_eq!(records(&rows(&[3]), &[]), vec![0..1]);
        assert!(records(&[], &[]).is_empty());
    }

    #[test]
    fn a_row_newer_than_the_one_above_begins_a_record() {
        // `cat a a`, and two days appended, the second newer.
        assert_eq!(records(&rows(&[3, 2, 1, 3, 2, 1]), &[]), vec![0..3, 3..6]);
        assert_eq!(records(&rows(&[3, 2, 1, 9, 8, 7]), &[]), vec![0..3, 3..6]);
        // A first record of one row: the order the rows mostly follow decides.
        assert_eq!(records(&rows(&[1, 9, 8, 7]), &[]), vec![0..1, 1..4]);
        // An oldest-first log appended to itself restarts where a row is older.
        assert_eq!(records(&rows(&[1, 2, 3, 1, 2, 3]), &[]), vec![0..3, 3..6]);
    }

    #[test]
    fn a_repeated_header_begins_a_record_whatever_the_times() {
        assert_eq!(records(&rows(&[5, 5, 5, 5]), &[2]), vec![0..2, 2..4]);
        assert_eq!(records(&rows(&[3, 2, 1, 3]), &[0, 3, 9]), vec![0..3, 3..4]);
    }
}
