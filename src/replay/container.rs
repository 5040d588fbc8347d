//! What the replay holds and hands over: the container metal-api keeps per machine, and each
//! event's passage through the FSM.

use std::collections::VecDeque;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use crate::event::{EventKind, State};
use crate::log::{Liveliness, Place};

/// An event as metal-api stores it in the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub time: DateTime<Utc>,
    pub event: EventKind,
    pub message: Arc<str>,
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
    /// metal-api's liveliness flag; the replay only ever sets it to `Alive`.
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
pub enum Handling {
    Expected,
    Unexpected,
    Rejected,
}

impl Handling {
    /// The spelling in output.
    pub fn name(self) -> &'static str {
        match self {
            Handling::Expected => "expected",
            Handling::Unexpected => "unexpected",
            Handling::Rejected => "rejected",
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
    pub handling: Handling,
    pub to: State,
    pub stored: bool,
    pub recorded_state: Option<State>,
    pub line: usize,
    /// Which of the trace's sources the line is in.
    pub source: u32,
    /// The event's index in the machine's log.
    pub index: usize,
    /// The container's last event time when the event arrived: what metal-api measures its
    /// buffering window from (every event it took in, stored or not, Alive included).
    pub last_event_time: Option<DateTime<Utc>>,
}

impl Step {
    /// Whether the event came less than `window` after the container's last event time, as
    /// metal-api's buffering measures it (the comparison is strict).
    pub fn within(&self, window: TimeDelta) -> bool {
        self.last_event_time
            .is_some_and(|last| self.time - last < window)
    }
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
    /// Where the machine is, where its export says.
    pub place: Option<Arc<Place>>,
}
