//! A machine's log replayed: its events through the FSM in time order, with what its export
//! recorded (flags, the last error event outside the log) put in place as of the time it held.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::container::{Container, Step, Trace, UnknownEvent, Verdict};
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
    let replayer = run(log, &log.events, rules, None, &mut recorded, &mut |step| {
        steps.push(step)
    });
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
    }
}

/// The verdict each event of a log up to `until` would have had without the event at `skip`
/// (as if it had never been stored), by the event's index; `None` for that event, unknown
/// ones and those after `until`.
pub fn verdicts_without(
    log: &MachineLog,
    rules: &Ruleset,
    skip: usize,
    until: usize,
) -> Vec<Option<Verdict>> {
    let mut verdicts = vec![None; log.events.len()];
    let mut recorded = RecordedOnTop::new(log);
    let events = &log.events[..log.events.len().min(until.saturating_add(1))];
    run(log, events, rules, Some(skip), &mut recorded, &mut |step| {
        verdicts[step.index] = Some(step.verdict)
    });
    verdicts
}

/// Runs a log's known events (`events`, the log's or the first of them) through the FSM in
/// order, but the one at `skip`, and hands on each step; the replayer keeps the container.
fn run<'r>(
    log: &MachineLog,
    events: &[Event],
    rules: &'r Ruleset,
    skip: Option<usize>,
    recorded: &mut RecordedOnTop,
    each: &mut dyn FnMut(Step),
) -> Replayer<'r> {
    let mut replayer = if skip.is_some() {
        Replayer::judging(rules)
    } else {
        Replayer::new(rules)
    };
    // Sized once: growing it event by event costs more than the replay of a short log.
    let kept = events.len().min(rules.kept_events.saturating_add(1));
    replayer.container_mut().events.reserve(kept);
    let mut first = true;
    // Where the event left out was the oldest row or began a record, the next event stands
    // where it stood: it arrives in the state the left-out one arrived in.
    let mut carried: Option<Option<State>> = None;
    for (index, event) in events.iter().enumerate() {
        recorded.apply_before(event.time, replayer.container_mut());
        let EventName::Known(kind) = &event.name else {
            continue;
        };
        let seam = !first && log.seams.contains(&index);
        if skip == Some(index) {
            if first || seam {
                carried = Some(event.recorded_state);
            }
            continue;
        }
        // An event that begins a record of its own says where it stands itself.
        let (seam, arrival) = match carried.take() {
            Some(arrival) if !log.seams.contains(&index) => (!first, arrival),
            _ => (seam, event.recorded_state),
        };
        if first && let Some(state) = arrival {
            replayer.assume_empty_state(state);
        }
        if seam {
            replayer.assume_next_state(arrival.unwrap_or(State::Initial));
        }
        first = false;
        let mut step = replayer.step(
            event.time,
            *kind,
            Arc::clone(&event.message),
            event.recorded_state,
            event.line,
        );
        step.source = event.source;
        step.index = index;
        each(step);
    }
    replayer
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
fn judge_outside_log(event: &Event, rules: &Ruleset) -> Option<Step> {
    let EventName::Known(kind) = event.name else {
        return None;
    };
    let (from, verdict) = match event.recorded_state {
        Some(state) if rules.lookup(state, kind).is_none() => (state, Verdict::Unexpected),
        Some(state) => (state, Verdict::Expected),
        None => (kind.home_state(), Verdict::Expected),
    };
    Some(Step {
        time: event.time,
        event: kind,
        message: event.message.clone(),
        from,
        verdict,
        to: from,
        stored: false,
        recorded_state: event.recorded_state,
        line: event.line,
        source: event.source,
        // No row of the log.
        index: usize::MAX,
    })
}
