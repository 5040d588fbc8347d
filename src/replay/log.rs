//! A machine's log replayed: its events through the FSM in time order, with what its export
//! recorded (flags, the last error event outside the log) put in place as of the time it held.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::container::{Container, Handling, Step, Trace, UnknownEvent};
use super::fsm::Replayer;
use crate::event::{Event, EventName, State};
use crate::log::{MachineLog, RecordedFlag};
use crate::rules::Ruleset;

/// Replays one machine's log: events in time order, unknown events set aside. The flags the
/// input recorded are put in place as of the time they held (see `MachineLog::as_of`); events
/// newer than that are replayed on top.
pub fn replay(log: &MachineLog, rules: &Ruleset) -> Trace {
    let mut steps = Vec::with_capacity(log.events.len());
    let mut unknown = Vec::new();
    let mut recorded = RecordedOnTop::new(log);
    let replayer = run(log, rules, &mut recorded, &mut |step| steps.push(step));
    for event in &log.events {
        if let EventName::Unknown(name) = &event.name {
            unknown.push(UnknownEvent {
                name: name.clone(),
                line: event.line,
            });
        }
    }
    let mut container = replayer.finish();
    recorded.apply_rest(&mut container);
    let mut last_error_only = None;
    if let Some(le) = &log.last_error_event
        && !log.events.iter().any(|e| e.same_as(le))
    {
        match judge_outside_log(le, rules) {
            Some(step) => last_error_only = Some(step),
            None => unknown.push(UnknownEvent {
                name: le.name.as_str().to_string(),
                line: le.line,
            }),
        }
    }
    Trace {
        machine: log.machine.clone(),
        source: log.source.clone(),
        sources: log.sources.clone(),
        steps,
        container,
        unknown,
        last_error_only,
        annotated: log.annotated,
        place: log.machine_info.place.clone(),
    }
}

/// The real replay's verdicts, advanced one event at a time, from which the replay without
/// one stored event (a cascade's root) branches off. Only verdicts matter here: they depend on
/// the newest stored event and the last event time alone (the recorded flags never decide
/// one), so a branch that holds the same two as the real replay after the same event gives
/// every later event the real verdict, and is followed no further.
pub struct Branches<'l, 'r> {
    log: &'l MachineLog,
    base: Replayer<'r>,
    feed: Feed,
    /// The next event the base has not been handed.
    next: usize,
}

impl<'l, 'r> Branches<'l, 'r> {
    /// The real replay of `log`, before its first event.
    pub fn new(log: &'l MachineLog, rules: &'r Ruleset) -> Self {
        Branches {
            log,
            base: Replayer::judging(rules),
            feed: Feed::default(),
            next: 0,
        }
    }

    /// The verdicts, by event index, the events after `skip` up to `until` would have had
    /// without the event at `skip`, up to and including the event where that replay rejoins
    /// the real one; every later event has its real verdict. `skip` must not be before an
    /// event an earlier call skipped.
    pub fn without(&mut self, skip: usize, until: usize) -> Branch {
        let events = &self.log.events;
        while self.next < skip.min(events.len()) {
            self.feed.feed(self.log, self.next, false, &mut self.base);
            self.next += 1;
        }
        let (mut real, mut real_feed) = (self.base.clone(), self.feed.clone());
        let (mut branch, mut branch_feed) = (self.base.clone(), self.feed.clone());
        if skip >= events.len() {
            return Branch(Vec::new());
        }
        real_feed.feed(self.log, skip, false, &mut real);
        branch_feed.feed(self.log, skip, true, &mut branch);
        let mut verdicts = Vec::new();
        for index in skip + 1..=until.min(events.len() - 1) {
            let stepped = real_feed.feed(self.log, index, false, &mut real);
            let Some(step) = branch_feed.feed(self.log, index, false, &mut branch) else {
                continue;
            };
            verdicts.push((index, step.handling));
            if stepped.is_some()
                && branch_feed.carried.is_none()
                && same_verdicts_ahead(&real, &branch)
            {
                break;
            }
        }
        Branch(verdicts)
    }
}

/// The verdicts of the replay without one event, by event index, up to where it rejoins the
/// real replay.
#[derive(Debug, Clone)]
pub struct Branch(Vec<(usize, Handling)>);

impl Branch {
    /// The verdict the event at `index` would have had; `real`, the one it had, past the
    /// rejoin.
    pub fn verdict(&self, index: usize, real: Handling) -> Handling {
        self.0
            .binary_search_by_key(&index, |(i, _)| *i)
            .map_or(real, |at| self.0[at].1)
    }
}

/// Whether two replays give every later event the same verdict: the same newest stored event
/// (the state, and the chronology guard's bound) and the same last event time (the buffer,
/// the failed-reclaim threshold, the guard).
pub(super) fn same_verdicts_ahead(a: &Replayer, b: &Replayer) -> bool {
    let (a, b) = (a.container(), b.container());
    let newest = |c: &Container| c.events.front().map(|e| (e.time, e.event));
    newest(a) == newest(b) && a.last_event_time == b.last_event_time
}

/// Runs a log's known events through the FSM in order and hands on each step; the replayer
/// keeps the container.
fn run<'r>(
    log: &MachineLog,
    rules: &'r Ruleset,
    recorded: &mut RecordedOnTop,
    each: &mut dyn FnMut(Step),
) -> Replayer<'r> {
    let mut replayer = Replayer::new(rules);
    // Sized once: growing it event by event costs more than the replay of a short log.
    let kept = log.events.len().min(rules.kept_events.saturating_add(1));
    replayer.container_mut().events.reserve(kept);
    let mut feed = Feed::default();
    for (index, event) in log.events.iter().enumerate() {
        recorded.apply_before(event.time, replayer.container_mut());
        if let Some(step) = feed.feed(log, index, false, &mut replayer) {
            each(step);
        }
    }
    replayer
}

/// Where a log's events stand as they are handed to the FSM one by one: whether one was
/// stepped yet (the oldest row), and what a left-out event hands on to the next.
#[derive(Debug, Clone, Default)]
pub(super) struct Feed {
    stepped: bool,
    /// Where the event left out was the oldest row or began a record, the next event stands
    /// where it stood: it arrives in the state the left-out one arrived in.
    carried: Option<Option<State>>,
}

impl Feed {
    /// Hands the event at `index` to the replayer, or leaves it out (`skip`), as if it had
    /// never been stored; `None` for an event left out or unknown.
    fn feed(
        &mut self,
        log: &MachineLog,
        index: usize,
        skip: bool,
        replayer: &mut Replayer,
    ) -> Option<Step> {
        let at_seam = log.seams.contains(&index);
        self.feed_event(&log.events[index], index, at_seam, skip, replayer)
    }

    /// The same for an event handed alone: `at_seam` where it begins at a seam.
    pub(super) fn feed_event(
        &mut self,
        event: &Event,
        index: usize,
        at_seam: bool,
        skip: bool,
        replayer: &mut Replayer,
    ) -> Option<Step> {
        let EventName::Known(kind) = &event.name else {
            return None;
        };
        let first = !self.stepped;
        let seam = !first && at_seam;
        if skip {
            if first || seam {
                self.carried = Some(event.recorded_state);
            }
            return None;
        }
        // An event that begins a record of its own says where it stands itself.
        let (seam, arrival) = match self.carried.take() {
            Some(arrival) if !at_seam => (!first, arrival),
            _ => (seam, event.recorded_state),
        };
        if first && let Some(state) = arrival {
            replayer.assume_empty_state(state);
        }
        if seam {
            replayer.assume_next_state(arrival.unwrap_or(State::Initial));
        }
        self.stepped = true;
        let mut step = replayer.step(
            event.time,
            *kind,
            Arc::clone(&event.message),
            event.recorded_state,
            event.line,
        );
        step.source = event.source;
        step.index = index;
        Some(step)
    }
}

impl Feed {
    /// The state a known event fed now would arrive in, nothing changed (see
    /// [`Feed::feed_event`]).
    pub(super) fn arrival(&self, event: &Event, at_seam: bool, replayer: &Replayer) -> State {
        let first = !self.stepped;
        let (seam, arrival) = match self.carried {
            Some(arrival) if !at_seam => (!first, arrival),
            _ => (!first && at_seam, event.recorded_state),
        };
        let empty = if first { arrival } else { None };
        let next = seam.then(|| arrival.unwrap_or(State::Initial));
        replayer.state_after(empty, next)
    }

    /// Whether no left-out event hands its place on to the next.
    pub(super) fn carried_nothing(&self) -> bool {
        self.carried.is_none()
    }
}

/// The recorded flags still to be put in place, each at the time it held.
struct RecordedOnTop {
    failed_machine_reclaim: Option<RecordedFlag>,
    crash_loop: Option<RecordedFlag>,
}

impl RecordedOnTop {
    fn new(log: &MachineLog) -> RecordedOnTop {
        RecordedOnTop {
            failed_machine_reclaim: log.recorded.failed_machine_reclaim,
            crash_loop: log.recorded.crash_loop,
        }
    }

    /// Puts in place the flags that held before an event at `time` (events at the very time
    /// a flag held were part of what the export saw).
    fn apply_before(&mut self, time: DateTime<Utc>, container: &mut Container) {
        let due =
            |flag: &Option<RecordedFlag>| flag.is_some_and(|f| f.as_of.is_none_or(|t| t < time));
        if due(&self.failed_machine_reclaim) {
            self.apply_failed(container);
        }
        if due(&self.crash_loop) {
            self.apply_crash(container);
        }
    }

    fn apply_rest(&mut self, container: &mut Container) {
        self.apply_failed(container);
        self.apply_crash(container);
    }

    fn apply_failed(&mut self, container: &mut Container) {
        // A failed reclaim is flagged by a Phoned Home that is never stored, so an export
        // cannot show it; the exported flag is the only witness.
        if let Some(flag) = self.failed_machine_reclaim.take() {
            container.failed_machine_reclaim = flag.value;
        }
    }

    fn apply_crash(&mut self, container: &mut Container) {
        if let Some(flag) = self.crash_loop.take() {
            container.recorded_crash_loop = Some(flag.value);
        }
    }
}

/// Judges the exported last error event when it is not among the log's rows: in the state its
/// recorded verdict names, or as the expected event it was recorded as (its state before is
/// unknown then, and shown as its home state). `None` for an unknown event name.
pub fn judge_outside_log(event: &Event, rules: &Ruleset) -> Option<Step> {
    let EventName::Known(kind) = event.name else {
        return None;
    };
    let (from, verdict) = match event.recorded_state {
        Some(state) if rules.lookup(state, kind).is_none() => (state, Handling::Unexpected),
        Some(state) => (state, Handling::Expected),
        None => (kind.home_state(), Handling::Expected),
    };
    Some(Step {
        time: event.time,
        event: kind,
        message: event.message.clone(),
        from,
        handling: verdict,
        to: from,
        stored: false,
        recorded_state: event.recorded_state,
        line: event.line,
        source: event.source,
        // No row of the log.
        index: usize::MAX,
        last_event_time: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventKind;
    use crate::log::Format;
    use chrono::TimeDelta;

    /// The verdicts without `skip` from a replay of the whole log, not stopped anywhere.
    fn from_scratch(log: &MachineLog, rules: &Ruleset, skip: usize) -> Vec<Option<Handling>> {
        let mut replayer = Replayer::judging(rules);
        let mut feed = Feed::default();
        (0..log.events.len())
            .map(|i| {
                feed.feed(log, i, i == skip, &mut replayer)
                    .map(|s| s.handling)
            })
            .collect()
    }

    /// Logs of random events at random steps in time (some equal, some backwards), some with
    /// recorded verdicts and seams.
    fn random_logs() -> Vec<MachineLog> {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let start = DateTime::parse_from_rfc3339("2025-09-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        (0..600)
            .map(|_| {
                let mut log = MachineLog::new("m".into(), "m", 1, Format::LogsJson);
                let mut time = start;
                for i in 0..(5 + next(60) as usize) {
                    // Steps around the five minutes of the buffer and the reclaim threshold,
                    // and Alive and Phoned Home often, which touch the time only.
                    time += TimeDelta::seconds(next(240) as i64 - 20);
                    let often = [EventKind::Alive, EventKind::PhonedHome];
                    let kind = match next(3) {
                        0 => often[next(2) as usize],
                        _ => EventKind::ALL[next(EventKind::ALL.len() as u64) as usize],
                    };
                    let mut event = Event::from_recorded(time, EventName::Known(kind), "m", 0);
                    if next(8) == 0 {
                        event.recorded_state =
                            Some(State::ALL[next(State::ALL.len() as u64) as usize]);
                    }
                    if i > 0 && next(12) == 0 {
                        log.seams.push(i);
                    }
                    log.events.push(event);
                }
                log
            })
            .collect()
    }

    #[test]
    fn a_branch_followed_to_where_it_rejoins_gives_the_verdicts_of_a_whole_replay() {
        for rules in ["metal-api-v0.19.0", "metal-api-v0.42.2"] {
            let rules = Ruleset::resolve(rules).unwrap();
            for log in random_logs() {
                let real = from_scratch(&log, &rules, usize::MAX);
                let until = log.events.len() - 1;
                let mut branches = Branches::new(&log, &rules);
                for skip in 0..log.events.len() {
                    let expected = from_scratch(&log, &rules, skip);
                    let span = branches.without(skip, until).0;
                    for index in skip + 1..log.events.len() {
                        let got = match span.binary_search_by_key(&index, |(i, _)| *i) {
                            Ok(at) => Some(span[at].1),
                            Err(_) if span.last().is_some_and(|(i, _)| index < *i) => None,
                            Err(_) => real[index],
                        };
                        assert_eq!(got, expected[index], "skip {skip}, event {index}: {log:?}");
                    }
                }
            }
        }
    }
}
