//! metal-api's handling of provisioning events (SPEC §2), replayed one event at a time over a
//! container, and nothing else: no input, no output.

use std::collections::VecDeque;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use crate::event::{Event, EventKind, EventName, State, unexpected_message};
use crate::log::{MachineLog, RecordedFlag};
use crate::rules::{Ruleset, Target};

/// An event as metal-api stores it in the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub time: DateTime<Utc>,
    pub event: EventKind,
    pub message: Arc<str>,
}

/// metal-api's liveliness flag; replay only ever sets it to `Alive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveliness {
    Unknown,
    Alive,
}

impl Liveliness {
    /// metal-api's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Liveliness::Unknown => "Unknown",
            Liveliness::Alive => "Alive",
        }
    }
}

/// What metal-api keeps per machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    /// Stored events, newest first.
    pub events: VecDeque<StoredEvent>,
    pub last_event_time: Option<DateTime<Utc>>,
    pub last_error_event: Option<StoredEvent>,
    pub crash_loop: bool,
    pub failed_machine_reclaim: bool,
    pub liveliness: Liveliness,
    /// The crash-loop flag the input recorded, until a later event sets the flag: metal-api's
    /// own value where the replay of a shortened log cannot know it.
    pub recorded_crash_loop: Option<bool>,
}

impl Default for Container {
    fn default() -> Self {
        Container {
            events: VecDeque::new(),
            last_event_time: None,
            last_error_event: None,
            crash_loop: false,
            failed_machine_reclaim: false,
            liveliness: Liveliness::Unknown,
            recorded_crash_loop: None,
        }
    }
}

impl Container {
    /// The state is the home state of the newest stored event, `Initial` when none is stored.
    pub fn state(&self) -> State {
        self.events
            .front()
            .map_or(State::Initial, |e| e.event.home_state())
    }

    /// The crash-loop flag metal-api held: the recorded one where no later event changed it.
    pub fn held_crash_loop(&self) -> bool {
        self.recorded_crash_loop.unwrap_or(self.crash_loop)
    }
}

/// How the replay judged one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    Expected,
    Unexpected,
    Rejected,
}

impl Verdict {
    /// The spelling in output.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Expected => "expected",
            Verdict::Unexpected => "unexpected",
            Verdict::Rejected => "rejected",
        }
    }
}

/// One event's passage through the FSM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub time: DateTime<Utc>,
    pub event: EventKind,
    /// The message as the input had it, without a recorded verdict.
    pub message: Arc<str>,
    pub from: State,
    pub verdict: Verdict,
    pub to: State,
    pub stored: bool,
    pub recorded_state: Option<State>,
    pub line: usize,
    /// Which of the trace's sources the line is in.
    pub source: u32,
}

/// An event whose name metal-api does not know; replay skips it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEvent {
    pub name: String,
    pub line: usize,
}

/// The replay of one machine: every step, and the container at the end.
#[derive(Debug, Clone)]
pub struct Trace {
    pub machine: String,
    pub source: String,
    /// Every file the machine was read from; a step's `source` indexes this.
    pub sources: Vec<String>,
    pub steps: Vec<Step>,
    pub container: Container,
    pub unknown: Vec<UnknownEvent>,
    /// The exported last error event when it is not among the log's rows: judged in its
    /// recorded state, counted once, never replayed.
    pub last_error_only: Option<Step>,
    /// Whether the input carries metal-api's recorded verdicts (exports do, raw streams not).
    pub annotated: bool,
}

/// What one event does to the container, decided before anything is changed so the
/// chronology guard can refuse it whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Effect {
    store: bool,
    touch_time: bool,
    crash_loop: Option<bool>,
    failed_machine_reclaim: Option<bool>,
    last_error: bool,
    /// The message to store: the original, or metal-api's unexpected message.
    unexpected: bool,
}

impl Effect {
    fn store() -> Effect {
        Effect {
            store: true,
            touch_time: true,
            ..Effect::default()
        }
    }

    fn touch() -> Effect {
        Effect {
            touch_time: true,
            ..Effect::default()
        }
    }
}

/// Replays events through one rule set, holding the container between events.
pub struct Replayer<'r> {
    rules: &'r Ruleset,
    container: Container,
    /// The state the next event is taken to arrive in while the container is still empty.
    empty_state: State,
    /// The state the next event is taken to arrive in whatever the container holds.
    next_state: Option<State>,
}

impl<'r> Replayer<'r> {
    /// Starts from an empty container (`Initial`).
    pub fn new(rules: &'r Ruleset) -> Self {
        Replayer {
            rules,
            container: Container::default(),
            empty_state: State::Initial,
            next_state: None,
        }
    }

    /// The container as it stands.
    pub fn container(&self) -> &Container {
        &self.container
    }

    /// Takes the next event (only that one) to arrive in `state` if nothing is stored yet: the
    /// oldest row of an export that carries a recorded verdict arrived there (SPEC §2, last
    /// paragraph).
    pub fn assume_empty_state(&mut self, state: State) {
        self.empty_state = state;
    }

    /// Takes the next event (only that one) to arrive in `state`, as the oldest row of a log
    /// is taken: the first row of a record that begins after a gap in the others.
    pub fn assume_next_state(&mut self, state: State) {
        self.next_state = Some(state);
    }

    fn current_state(&self) -> State {
        if let Some(state) = self.next_state {
            return state;
        }
        if self.container.events.is_empty() {
            self.empty_state
        } else {
            self.container.state()
        }
    }

    /// Handles one event as metal-api would and tells what happened.
    pub fn step(
        &mut self,
        time: DateTime<Utc>,
        event: EventKind,
        message: impl Into<Arc<str>>,
        recorded_state: Option<State>,
        line: usize,
    ) -> Step {
        let message = message.into();
        let from = self.current_state();
        self.empty_state = State::Initial;
        self.next_state = None;
        let (effect, verdict) = match self.rules.lookup(from, event) {
            None => (self.unexpected_effect(event), Verdict::Unexpected),
            Some(target) => {
                let receiver = match target {
                    Target::To(state) => state,
                    Target::Stay => from,
                };
                (
                    self.valid_effect(receiver, from, event, time),
                    Verdict::Expected,
                )
            }
        };
        let verdict = if self.violates_chronology(&effect, time) {
            Verdict::Rejected
        } else {
            self.apply(&effect, time, event, &message, from);
            verdict
        };
        Step {
            time,
            event,
            message,
            from,
            verdict,
            to: self.current_state(),
            stored: verdict != Verdict::Rejected && effect.store,
            recorded_state,
            line,
            source: 0,
        }
    }

    fn unexpected_effect(&self, event: EventKind) -> Effect {
        Effect {
            // An unexpected Alive is never stored: it would wedge the FSM (SPEC §2.4).
            store: event != EventKind::Alive,
            touch_time: true,
            crash_loop: matches!(event, EventKind::PxeBooting | EventKind::Preparing)
                .then_some(true),
            last_error: true,
            unexpected: true,
            ..Effect::default()
        }
    }

    /// The effect decided by the state that receives a valid event (SPEC §2.3).
    fn valid_effect(
        &self,
        receiver: State,
        from: State,
        event: EventKind,
        time: DateTime<Utc>,
    ) -> Effect {
        let buffers = matches!(
            receiver,
            State::PxeBooting | State::Preparing | State::Registering | State::Waiting
        );
        if buffers && event == EventKind::PhonedHome && self.within_buffer(time) {
            return Effect::default();
        }
        match receiver {
            State::Alive => Effect::touch(),
            State::Crashing => Effect {
                crash_loop: Some(true),
                last_error: true,
                ..Effect::store()
            },
            State::PxeBooting => {
                let base = if from == State::PxeBooting {
                    Effect::touch()
                } else {
                    Effect::store()
                };
                Effect {
                    failed_machine_reclaim: Some(false),
                    ..base
                }
            }
            State::Preparing => Effect {
                failed_machine_reclaim: Some(false),
                ..Effect::store()
            },
            State::PhonedHome => match from {
                State::PhonedHome => Effect::touch(),
                State::MachineReclaim => {
                    if self.elapsed_beyond(time, self.rules.failed_reclaim_threshold) {
                        Effect {
                            failed_machine_reclaim: Some(true),
                            ..Effect::touch()
                        }
                    } else {
                        Effect::default()
                    }
                }
                _ => Effect {
                    crash_loop: Some(false),
                    ..Effect::store()
                },
            },
            State::PlannedReboot | State::MachineReclaim => Effect {
                crash_loop: Some(false),
                ..Effect::store()
            },
            State::Initial
            | State::Registering
            | State::Waiting
            | State::Installing
            | State::BootingNewKernel => Effect::store(),
        }
    }

    /// Buffered phoned home: strictly less than the window since the last event.
    fn within_buffer(&self, time: DateTime<Utc>) -> bool {
        match (
            self.rules.buffered_phoned_home,
            self.container.last_event_time,
        ) {
            (Some(window), Some(last)) => time - last < window,
            _ => false,
        }
    }

    /// Strictly more than `threshold` since the last event; with no last event the time
    /// since it is unknown, and nothing is flagged.
    fn elapsed_beyond(&self, time: DateTime<Utc>, threshold: TimeDelta) -> bool {
        self.container
            .last_event_time
            .is_some_and(|last| time - last > threshold)
    }

    /// The chronology guard (SPEC §2.6), checked on the container as the effect would leave it.
    fn violates_chronology(&self, effect: &Effect, time: DateTime<Utc>) -> bool {
        let previous_newest = self.container.events.front().map(|e| e.time);
        if effect.store && previous_newest.is_some_and(|newest| time < newest) {
            return true;
        }
        let newest = if effect.store {
            Some(time)
        } else {
            previous_newest
        };
        let last_event_time = if effect.touch_time {
            Some(time)
        } else {
            self.container.last_event_time
        };
        match (newest, last_event_time) {
            (Some(newest), Some(last)) => newest > last,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    fn apply(
        &mut self,
        effect: &Effect,
        time: DateTime<Utc>,
        event: EventKind,
        message: &Arc<str>,
        from: State,
    ) {
        let c = &mut self.container;
        let message = if effect.unexpected {
            unexpected_message(from, message).into()
        } else {
            Arc::clone(message)
        };
        let stored = StoredEvent {
            time,
            event,
            message,
        };
        if effect.touch_time {
            c.last_event_time = Some(time);
            c.liveliness = Liveliness::Alive;
        }
        if let Some(flag) = effect.crash_loop {
            c.crash_loop = flag;
            c.recorded_crash_loop = None;
        }
        if let Some(flag) = effect.failed_machine_reclaim {
            c.failed_machine_reclaim = flag;
        }
        if effect.last_error {
            c.last_error_event = Some(stored.clone());
        }
        if effect.store {
            c.events.push_front(stored);
            c.events.truncate(self.rules.kept_events);
        }
    }

    /// Ends the replay and hands over the container.
    pub fn finish(self) -> Container {
        self.container
    }
}

/// Replays one machine's log: events in time order, unknown events set aside. The flags the
/// input recorded are put in place as of the time they held (see `MachineLog::as_of`); events
/// newer than that are replayed on top.
pub fn replay(log: &MachineLog, rules: &Ruleset) -> Trace {
    let mut replayer = Replayer::new(rules);
    // Sized once: growing it event by event costs more than the replay of a short log.
    let kept = log.events.len().min(rules.kept_events.saturating_add(1));
    replayer.container.events.reserve(kept);
    let mut steps = Vec::with_capacity(log.events.len());
    let mut unknown = Vec::new();
    let mut recorded = RecordedOnTop::new(log);
    for (index, event) in log.events.iter().enumerate() {
        recorded.apply_before(event.time, &mut replayer.container);
        let EventName::Known(kind) = &event.name else {
            unknown.push(UnknownEvent {
                name: event.name.as_str().to_string(),
                line: event.line,
            });
            continue;
        };
        if steps.is_empty()
            && let Some(state) = event.recorded_state
        {
            replayer.assume_empty_state(state);
        }
        if !steps.is_empty() && log.seams.contains(&index) {
            replayer.assume_next_state(event.recorded_state.unwrap_or(State::Initial));
        }
        let mut step = replayer.step(
            event.time,
            *kind,
            Arc::clone(&event.message),
            event.recorded_state,
            event.line,
        );
        step.source = event.source;
        steps.push(step);
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
    })
}

#[cfg(test)]
mod tests;
