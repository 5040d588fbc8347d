//! metal-api's handling of provisioning events (docs/metal-api.md), one event at a time over a
//! container, and nothing else: no input, no output.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use super::container::{Container, Handling, Step, StoredEvent};
use crate::event::{EventKind, State, unexpected_message};
use crate::log::Liveliness;
use crate::rules::{Ruleset, Target};

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
#[derive(Debug, Clone)]
pub struct Replayer<'r> {
    rules: &'r Ruleset,
    container: Container,
    /// The state the next event is taken to arrive in while the container is still empty.
    empty_state: State,
    /// The state the next event is taken to arrive in whatever the container holds.
    next_state: Option<State>,
    /// Only the verdicts matter: stored messages stay as they came.
    judging: bool,
    /// How many events set the failed-reclaim flag (to either value).
    reclaim_sets: u64,
    /// How many events set the crash-loop flag (to either value).
    crash_sets: u64,
    /// How many stored events the container keeps: metal-api's number, or the newest alone
    /// where only verdicts and the newest event are read (see [`Replayer::keeping_newest`]).
    kept: usize,
}

impl<'r> Replayer<'r> {
    /// Starts from an empty container (`Initial`).
    pub fn new(rules: &'r Ruleset) -> Self {
        Replayer {
            rules,
            container: Container::default(),
            empty_state: State::Initial,
            next_state: None,
            judging: false,
            reclaim_sets: 0,
            crash_sets: 0,
            kept: rules.kept_events,
        }
    }

    /// A replayer whose container's messages do not matter, only the verdicts: it spares
    /// writing metal-api's unexpected message.
    pub fn judging(rules: &'r Ruleset) -> Self {
        Replayer {
            judging: true,
            ..Replayer::new(rules)
        }
    }

    /// The container as it stands.
    pub fn container(&self) -> &Container {
        &self.container
    }

    /// The container, for what an export recorded to be put in place between events.
    pub(super) fn container_mut(&mut self) -> &mut Container {
        &mut self.container
    }

    /// Takes the next event (only that one) to arrive in `state` if nothing is stored yet: the
    /// oldest row of an export that carries a recorded verdict arrived there (docs/metal-api.md,
    /// "What an export holds").
    pub fn assume_empty_state(&mut self, state: State) {
        self.empty_state = state;
    }

    /// Takes the next event (only that one) to arrive in `state`, as the oldest row of a log
    /// is taken: the first row of a record that begins after a gap in the others.
    pub fn assume_next_state(&mut self, state: State) {
        self.next_state = Some(state);
    }

    /// Keeps only the newest stored event: every verdict, the state and the chronology guard
    /// read the newest alone, so the replay is the same; for a machine judged for long.
    pub(super) fn keeping_newest(mut self) -> Self {
        self.kept = self.kept.min(1);
        self
    }

    /// The rule set it replays under.
    pub(super) fn rules(&self) -> &'r Ruleset {
        self.rules
    }

    /// How many events set the failed-reclaim flag so far.
    pub(super) fn reclaim_sets(&self) -> u64 {
        self.reclaim_sets
    }

    /// How many events set the crash-loop flag so far.
    pub(super) fn crash_sets(&self) -> u64 {
        self.crash_sets
    }

    /// The state the next event would arrive in after `assume_empty_state` (`empty`) and
    /// `assume_next_state` (`next`) where given.
    pub(super) fn state_after(&self, empty: Option<State>, next: Option<State>) -> State {
        if let Some(state) = next.or(self.next_state) {
            return state;
        }
        if self.container.events.is_empty() {
            empty.unwrap_or(self.empty_state)
        } else {
            self.container.state()
        }
    }

    pub(super) fn current_state(&self) -> State {
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
        let last_event_time = self.container.last_event_time;
        let from = self.current_state();
        self.empty_state = State::Initial;
        self.next_state = None;
        let (effect, verdict) = match self.rules.lookup(from, event) {
            None => (self.unexpected_effect(event), Handling::Unexpected),
            Some(target) => {
                let receiver = match target {
                    Target::To(state) => state,
                    Target::Stay => from,
                };
                (
                    self.valid_effect(receiver, from, event, time),
                    Handling::Expected,
                )
            }
        };
        let verdict = if self.violates_chronology(&effect, time) {
            Handling::Rejected
        } else {
            self.apply(&effect, time, event, &message, from);
            verdict
        };
        Step {
            time,
            event,
            message,
            from,
            handling: verdict,
            to: self.current_state(),
            stored: verdict != Handling::Rejected && effect.store,
            recorded_state,
            line,
            source: 0,
            index: 0,
            last_event_time,
        }
    }

    fn unexpected_effect(&self, event: EventKind) -> Effect {
        Effect {
            // An unexpected Alive is never stored: it would wedge the FSM (`fsm.go`).
            store: event != EventKind::Alive,
            touch_time: true,
            crash_loop: matches!(event, EventKind::PxeBooting | EventKind::Preparing)
                .then_some(true),
            last_error: true,
            unexpected: true,
            ..Effect::default()
        }
    }

    /// The effect decided by the state that receives a valid event (`states/*.go`).
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

    /// The chronology guard (`ProvisioningEventContainer.Validate`), checked on the container as the effect would leave it.
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
        let message = if effect.unexpected && !self.judging {
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
            self.crash_sets += 1;
        }
        if let Some(flag) = effect.failed_machine_reclaim {
            c.failed_machine_reclaim = flag;
            self.reclaim_sets += 1;
        }
        if effect.last_error {
            c.last_error_event = Some(stored.clone());
        }
        if effect.store {
            // Keeping the newest alone (a machine judged for long), room for one is enough:
            // a fleet holds one container a machine.
            if self.kept == 1 && c.events.capacity() == 0 {
                c.events.reserve_exact(1);
            }
            if c.events.len() == self.kept && self.kept > 0 {
                c.events.pop_back();
            }
            c.events.push_front(stored);
            c.events.truncate(self.kept);
        }
    }

    /// Ends the replay and hands over the container.
    pub fn finish(self) -> Container {
        self.container
    }
}
