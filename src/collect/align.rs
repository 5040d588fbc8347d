//! Where a poll's window of a machine's events continues what the history holds. A window is
//! the newest stored events, so consecutive windows overlap as sequences: the longest run at
//! the end of what was collected that the window starts with is the overlap, and what follows
//! it is new. Two identical events in one second are two events of the sequence, so neither
//! is lost nor doubled.

use std::sync::Arc;

use chrono::{DateTime, Utc};

/// An event as the history keeps it to compare: the time as read, the event and message as
/// stored (shared: a fleet's messages repeat).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub time: DateTime<Utc>,
    pub event: Arc<str>,
    pub message: Arc<str>,
}

/// An event of a poll's window, borrowed from the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown<'a> {
    pub time: DateTime<Utc>,
    pub event: &'a str,
    pub message: &'a str,
}

impl Seen {
    fn is(&self, shown: &Shown) -> bool {
        self.time == shown.time && *self.event == *shown.event && *self.message == *shown.message
    }
}

/// What of a window is new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Continuation {
    /// The index of the window's first new event (the window's length where none is).
    pub first_new: usize,
    /// Events may have been lost before the first new one.
    pub gap: bool,
}

/// Aligns `window` (oldest first) to `collected` (the newest collected events of the machine,
/// oldest first). `full` says the window holds as many events as metal-api hands out, so older
/// ones may have been left out of it.
pub fn align(collected: &[Seen], window: &[Shown], full: bool) -> Continuation {
    let Some(newest) = collected.last() else {
        // The first poll of a machine is where its history starts, not a gap.
        return Continuation {
            first_new: 0,
            gap: false,
        };
    };
    let longest = collected.len().min(window.len());
    if let Some(overlap) = (1..=longest).rev().find(|&k| {
        collected[collected.len() - k..]
            .iter()
            .zip(&window[..k])
            .all(|(kept, shown)| kept.is(shown))
    }) {
        return Continuation {
            first_new: overlap,
            gap: false,
        };
    }
    // No overlap: what is newer than the newest collected event is new. A full window that
    // is newer throughout may have lost what came between; a window whose older events are
    // not the collected ones (a container rewritten) is taken from where it is newer.
    let first_new = window
        .iter()
        .position(|e| e.time > newest.time)
        .unwrap_or(window.len());
    Continuation {
        first_new,
        gap: full && first_new == 0 && !window.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(second: i64, event: &'static str) -> Shown<'static> {
        Shown {
            time: DateTime::from_timestamp(1_700_000_000 + second, 0).unwrap(),
            event,
            message: "",
        }
    }

    fn kept(shown: &[Shown]) -> Vec<Seen> {
        shown
            .iter()
            .map(|s| Seen {
                time: s.time,
                event: s.event.into(),
                message: s.message.into(),
            })
            .collect()
    }

    #[test]
    fn the_overlap_is_skipped() {
        let collected = kept(&[ev(1, "a"), ev(2, "b"), ev(3, "c")]);
        let window = [ev(2, "b"), ev(3, "c"), ev(4, "d")];
        let c = align(&collected, &window, true);
        assert_eq!((c.first_new, c.gap), (2, false));
        assert_eq!(align(&collected, &window[..2], false).first_new, 2);
    }

    #[test]
    fn identical_events_in_one_second_are_neither_lost_nor_doubled() {
        // Collected …, X, A, A; the window begins at the first A and a third A came.
        let collected = kept(&[ev(0, "x"), ev(5, "a"), ev(5, "a")]);
        let window = [ev(5, "a"), ev(5, "a"), ev(5, "a"), ev(6, "b")];
        assert_eq!(align(&collected, &window, false).first_new, 2);
        // No third A: the window begins at the first A, or at the second.
        let window = [ev(5, "a"), ev(5, "a"), ev(6, "b")];
        assert_eq!(align(&collected, &window, false).first_new, 2);
        let window = [ev(5, "a"), ev(6, "b")];
        assert_eq!(align(&collected, &window, false).first_new, 1);
    }

    #[test]
    fn a_full_window_newer_than_everything_is_a_gap() {
        let collected = kept(&[ev(1, "a")]);
        let window = [ev(5, "c"), ev(6, "d")];
        assert_eq!(
            align(&collected, &window, true),
            Continuation {
                first_new: 0,
                gap: true
            }
        );
        assert!(!align(&collected, &window, false).gap);
        assert!(!align(&[], &window, true).gap, "the first poll is no gap");
    }

    #[test]
    fn an_older_window_adds_nothing_and_a_rewritten_one_only_what_is_newer() {
        let collected = kept(&[ev(1, "a"), ev(2, "b"), ev(3, "c"), ev(4, "d")]);
        let c = align(&collected, &[ev(2, "b"), ev(3, "c")], true);
        assert_eq!((c.first_new, c.gap), (2, false));
        let c = align(&collected, &[ev(3, "z"), ev(9, "e")], true);
        assert_eq!((c.first_new, c.gap), (1, false));
    }
}
