//! A machine's log replayed as its events arrive, one at a time, exactly as [`replay`] replays
//! it whole, and the replay without one event (a cascade's root) followed beside it until it
//! rejoins: what a machine judged further when new events come needs of the replay, and
//! nothing that grows with its history (the container keeps metal-api's newest events).
//!
//! [`replay`]: super::replay

use chrono::{DateTime, Utc};

use super::container::{Container, Handling, Step};
use super::fsm::Replayer;
use super::log::{Feed, same_verdicts_ahead};
use crate::event::{Event, EventName};
use crate::log::{RecordedFlag, RecordedFlags};
use crate::rules::Ruleset;

/// The replay of a log fed an event at a time. The flags an export recorded are not put in
/// place between events (no verdict depends on them); [`Replaying::failed_machine_reclaim`]
/// tells the flag the whole replay ends with. The container keeps its newest stored event
/// only, all that verdicts and a summary read of it.
#[derive(Debug, Clone)]
pub struct Replaying<'r> {
    replayer: Replayer<'r>,
    feed: Feed,
    /// The index the next event has in the log.
    next: usize,
    /// The newest time of the events fed so far, unknown ones included.
    latest: Option<DateTime<Utc>>,
    /// Where the last step that set the failed-reclaim flag came: the newest time of the
    /// events up to it.
    reclaim_set_after: Option<DateTime<Utc>>,
    /// The same for the crash-loop flag.
    crash_set_after: Option<DateTime<Utc>>,
}

impl<'r> Replaying<'r> {
    /// A replay under `rules` before its first event.
    pub fn new(rules: &'r Ruleset) -> Self {
        Replaying {
            replayer: Replayer::new(rules).keeping_newest(),
            feed: Feed::default(),
            next: 0,
            latest: None,
            reclaim_set_after: None,
            crash_set_after: None,
        }
    }

    /// Replays the next event of the log; `seam` where it begins at a seam (see
    /// `MachineLog::seams`). `None` for an event whose name metal-api does not know.
    pub fn push(&mut self, event: &Event, seam: bool) -> Option<Step> {
        let index = self.next;
        self.next += 1;
        self.latest = self.latest.max(Some(event.time));
        let sets = (self.replayer.reclaim_sets(), self.replayer.crash_sets());
        let step = self
            .feed
            .feed_event(event, index, seam, false, &mut self.replayer);
        if self.replayer.reclaim_sets() != sets.0 {
            self.reclaim_set_after = self.latest;
        }
        if self.replayer.crash_sets() != sets.1 {
            self.crash_set_after = self.latest;
        }
        step
    }

    /// The container as it stands.
    pub fn container(&self) -> &Container {
        self.replayer.container()
    }

    /// Whether the next event may be stored as unexpected: only such an event can be a
    /// cascade's root, and only then is the replay before it kept.
    pub fn may_store_unexpected(&self, event: &Event, seam: bool) -> bool {
        let EventName::Known(kind) = event.name else {
            return false;
        };
        let state = self.feed.arrival(event, seam, &self.replayer);
        kind != crate::event::EventKind::Alive
            && self.replayer.rules().lookup(state, kind).is_none()
    }

    /// The replay without the next event (as if it had never been stored), to be followed
    /// beside this one from the event after it.
    pub fn without_next(&self, event: &Event, seam: bool) -> Following<'r> {
        let mut replayer = self.replayer.clone();
        let mut feed = self.feed.clone();
        feed.feed_event(event, self.next, seam, true, &mut replayer);
        Following {
            replayer,
            feed,
            next: self.next + 1,
        }
    }

    /// The failed-reclaim flag the whole replay (`replay`) ends with, given the flag the
    /// input recorded: that one is put in place before the first event later than the time
    /// it held, and events after that which set the flag replace it.
    pub fn failed_machine_reclaim(&self, recorded: Option<RecordedFlag>) -> bool {
        let replayed = self.container().failed_machine_reclaim;
        match recorded {
            Some(flag) if !set_after(self.reclaim_set_after, flag) => flag.value,
            _ => replayed,
        }
    }

    /// The container as the whole replay (`replay`) ends it, given the flags the input
    /// recorded (each put in place as [`Replaying::failed_machine_reclaim`] says).
    pub fn ended(&self, recorded: &RecordedFlags) -> Container {
        let mut container = self.container().clone();
        container.failed_machine_reclaim =
            self.failed_machine_reclaim(recorded.failed_machine_reclaim);
        if let Some(flag) = recorded.crash_loop
            && !set_after(self.crash_set_after, flag)
        {
            container.recorded_crash_loop = Some(flag.value);
        }
        container
    }
}

/// Whether an event set a flag after the recorded one was put in place: the newest time of
/// the events up to it is later than the time the recorded flag held.
fn set_after(set: Option<DateTime<Utc>>, flag: RecordedFlag) -> bool {
    set.is_some_and(|newest| flag.as_of.is_none_or(|as_of| newest > as_of))
}

/// The replay without one event, followed beside the real one: the verdicts the later events
/// would have had had that event never been stored.
#[derive(Debug, Clone)]
pub struct Following<'r> {
    replayer: Replayer<'r>,
    feed: Feed,
    next: usize,
}

impl Following<'_> {
    /// The verdict the next event would have had; `None` for an unknown event.
    pub fn push(&mut self, event: &Event, seam: bool) -> Option<Handling> {
        let index = self.next;
        self.next += 1;
        self.feed
            .feed_event(event, index, seam, false, &mut self.replayer)
            .map(|s| s.handling)
    }

    /// Whether, both having taken the same known event, this replay gives every later event
    /// the real one's verdict (see `Branches::without`): then it is followed no further.
    pub fn rejoined(&self, real: &Replaying) -> bool {
        self.feed.carried_nothing() && same_verdicts_ahead(&real.replayer, &self.replayer)
    }
}
