//! The vocabulary of metal-api's provisioning FSM: states, events, and one event as read from
//! an input file, with the place it was read from.

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Timelike, Utc};

/// A (state, event) pair: the state an event arrived in, and the event (how `report` groups
/// unexpected occurrences).
pub type Pair = (State, EventKind);

/// A state of the provisioning FSM, in the order metal-api lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    Initial,
    Alive,
    Crashing,
    PxeBooting,
    Preparing,
    Registering,
    Waiting,
    Installing,
    BootingNewKernel,
    PhonedHome,
    PlannedReboot,
    MachineReclaim,
}

impl State {
    /// Every state, in metal-api's order.
    pub const ALL: [State; 12] = [
        State::Initial,
        State::Alive,
        State::Crashing,
        State::PxeBooting,
        State::Preparing,
        State::Registering,
        State::Waiting,
        State::Installing,
        State::BootingNewKernel,
        State::PhonedHome,
        State::PlannedReboot,
        State::MachineReclaim,
    ];

    /// The provisioning path, in the order a machine takes it.
    pub const PROVISIONING: [State; 7] = [
        State::PxeBooting,
        State::Preparing,
        State::Registering,
        State::Waiting,
        State::Installing,
        State::BootingNewKernel,
        State::PhonedHome,
    ];

    /// The display name, without metal-api's `State ` prefix (`PXE Booting`).
    pub fn name(self) -> &'static str {
        match self {
            State::Initial => "Initial",
            State::Alive => "Alive",
            State::Crashing => "Crashing",
            State::PxeBooting => "PXE Booting",
            State::Preparing => "Preparing",
            State::Registering => "Registering",
            State::Waiting => "Waiting",
            State::Installing => "Installing",
            State::BootingNewKernel => "Booting New Kernel",
            State::PhonedHome => "Phoned Home",
            State::PlannedReboot => "Planned Reboot",
            State::MachineReclaim => "Machine Reclaim",
        }
    }

    /// Position in [`State::ALL`], for table lookups.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Parses a display name, metal-api's `State …` spelling, case-insensitively.
    pub fn parse(text: &str) -> Option<State> {
        let text = trim_space(text);
        let bare = trim_space(strip_prefix_ignore_case(text, "state ").unwrap_or(text));
        State::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(bare))
    }

    /// Appends the name metal-api writes inside `[unexpectedly received in …]`, `state pxe
    /// booting`, to `text` (a replay writes one per unexpected event).
    fn push_metal_api_lowercase(self, text: &mut String) {
        text.push_str("state ");
        text.extend(self.name().chars().map(|c| c.to_ascii_lowercase()));
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A provisioning event type that metal-api knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    Alive,
    Crashed,
    PxeBooting,
    PlannedReboot,
    Preparing,
    Registering,
    Waiting,
    Installing,
    BootingNewKernel,
    PhonedHome,
    MachineReclaim,
}

impl EventKind {
    /// Every event type, in metal-api's order.
    pub const ALL: [EventKind; 11] = [
        EventKind::Alive,
        EventKind::Crashed,
        EventKind::PxeBooting,
        EventKind::PlannedReboot,
        EventKind::Preparing,
        EventKind::Registering,
        EventKind::Waiting,
        EventKind::Installing,
        EventKind::BootingNewKernel,
        EventKind::PhonedHome,
        EventKind::MachineReclaim,
    ];

    /// The display name, as metal-api spells the event (`PXE Booting`).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Alive => "Alive",
            EventKind::Crashed => "Crashed",
            EventKind::PxeBooting => "PXE Booting",
            EventKind::PlannedReboot => "Planned Reboot",
            EventKind::Preparing => "Preparing",
            EventKind::Registering => "Registering",
            EventKind::Waiting => "Waiting",
            EventKind::Installing => "Installing",
            EventKind::BootingNewKernel => "Booting New Kernel",
            EventKind::PhonedHome => "Phoned Home",
            EventKind::MachineReclaim => "Machine Reclaim",
        }
    }

    /// Position in [`EventKind::ALL`], for table lookups.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The state this event leads to: `Crashed` → `Crashing`, every other event → its namesake.
    pub fn home_state(self) -> State {
        match self {
            EventKind::Alive => State::Alive,
            EventKind::Crashed => State::Crashing,
            EventKind::PxeBooting => State::PxeBooting,
            EventKind::PlannedReboot => State::PlannedReboot,
            EventKind::Preparing => State::Preparing,
            EventKind::Registering => State::Registering,
            EventKind::Waiting => State::Waiting,
            EventKind::Installing => State::Installing,
            EventKind::BootingNewKernel => State::BootingNewKernel,
            EventKind::PhonedHome => State::PhonedHome,
            EventKind::MachineReclaim => State::MachineReclaim,
        }
    }

    /// The event a v2 export names by its enum number, as metal-stack/api's
    /// `MachineProvisioningEventType` (`proto/metalstack/api/v2/machine.proto`) numbers them;
    /// 0 is the enum's unset value, no event, and so is any number the enum does not have.
    pub fn from_v2_number(number: u64) -> Option<EventKind> {
        let kind = match number {
            1 => EventKind::Alive,
            2 => EventKind::Crashed,
            3 => EventKind::PxeBooting,
            4 => EventKind::PlannedReboot,
            5 => EventKind::Preparing,
            6 => EventKind::Registering,
            7 => EventKind::Waiting,
            8 => EventKind::Installing,
            9 => EventKind::BootingNewKernel,
            10 => EventKind::PhonedHome,
            11 => EventKind::MachineReclaim,
            _ => return None,
        };
        Some(kind)
    }

    /// Parses a display name case-insensitively, or the v2 API's enum spelling
    /// (`MACHINE_PROVISIONING_EVENT_TYPE_PXE_BOOTING`, also without `MACHINE_`).
    pub fn parse(text: &str) -> Option<EventKind> {
        let text = trim_space(text);
        if let Some(exact) = EventKind::ALL.into_iter().find(|k| k.name() == text) {
            return Some(exact);
        }
        let enum_tail = strip_prefix_ignore_case(text, "MACHINE_PROVISIONING_EVENT_TYPE_")
            .or_else(|| strip_prefix_ignore_case(text, "PROVISIONING_EVENT_TYPE_"));
        let wanted = enum_tail.unwrap_or(text);
        EventKind::ALL.into_iter().find(|k| {
            let name = k.name();
            if enum_tail.is_some() {
                name.replace(' ', "_").eq_ignore_ascii_case(wanted)
            } else {
                name.eq_ignore_ascii_case(wanted)
            }
        })
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// An event's name as read: one metal-api knows, or an unknown one kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventName {
    Known(EventKind),
    Unknown(String),
}

impl EventName {
    /// Classifies a name as read from input.
    pub fn parse(text: &str) -> EventName {
        match EventKind::parse(text) {
            Some(kind) => EventName::Known(kind),
            None => EventName::Unknown(text.to_string()),
        }
    }

    /// The display name, or the unknown name as it was read.
    pub fn as_str(&self) -> &str {
        match self {
            EventName::Known(kind) => kind.name(),
            EventName::Unknown(name) => name,
        }
    }
}

/// Where in the input an event or a problem was read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Location {
    pub path: String,
    /// One-based line; 0 when the place has no line (a whole file).
    pub line: usize,
}

/// One provisioning event as read from an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub time: DateTime<Utc>,
    pub name: EventName,
    /// The message without any recorded `[unexpectedly received in …]` prefix; shared with the
    /// replay's steps and container, so one event costs one allocation.
    pub message: Arc<str>,
    /// The state named by a recorded `[unexpectedly received in state X]` prefix.
    pub recorded_state: Option<State>,
    /// The line this event starts on.
    pub line: usize,
    /// Which of its machine log's sources (see `MachineLog::sources`) the line is in.
    pub source: u32,
}

const UNEXPECTED_PREFIX: &str = "[unexpectedly received in ";

impl Event {
    /// Builds an event from a message as metal-api stored it, splitting off a recorded verdict.
    pub fn from_recorded(
        time: DateTime<Utc>,
        name: EventName,
        message: &str,
        line: usize,
    ) -> Event {
        let (recorded_state, message) = split_recorded_verdict(message);
        Event {
            time,
            name,
            message: message.into(),
            recorded_state,
            line,
            source: 0,
        }
    }

    /// The same event, read at `line`.
    pub fn at_line(self, line: usize) -> Event {
        Event { line, ..self }
    }

    /// The same event, read from the machine log's source number `source`.
    pub fn with_source(self, source: u32) -> Event {
        Event { source, ..self }
    }

    /// Whether two records show the same event: same name, same instant (tables print whole
    /// seconds) and the same message (tables may shorten it with `...`).
    pub fn same_as(&self, other: &Event) -> bool {
        self.name == other.name
            && same_instant(self.time, other.time)
            && same_message(&self.message, &other.message)
    }

    /// The message as metal-api stored it, with the recorded verdict put back.
    pub fn recorded_message(&self) -> String {
        match self.recorded_state {
            Some(state) => unexpected_message(state, &self.message),
            None => self.message.to_string(),
        }
    }
}

fn same_instant(a: DateTime<Utc>, b: DateTime<Utc>) -> bool {
    let whole = |t: DateTime<Utc>| t.with_nanosecond(0).unwrap_or(t);
    a == b || (a.nanosecond() == 0 && whole(b) == a) || (b.nanosecond() == 0 && whole(a) == b)
}

fn same_message(a: &str, b: &str) -> bool {
    let shortened = |short: &str, long: &str| {
        short
            .strip_suffix("...")
            .is_some_and(|head| long.starts_with(head.trim_end()))
    };
    if a == b || shortened(a, b) || shortened(b, a) {
        return true;
    }
    // A pasted copy has its runs of whitespace collapsed.
    let collapse = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (a, b) = (collapse(a), collapse(b));
    a == b || shortened(&a, &b) || shortened(&b, &a)
}

/// metal-api's message for an event that arrived in `state` with no rule for it.
pub fn unexpected_message(state: State, original: &str) -> String {
    let mut text = String::with_capacity(UNEXPECTED_PREFIX.len() + 24 + original.len());
    text.push_str(UNEXPECTED_PREFIX);
    state.push_metal_api_lowercase(&mut text);
    text.push(']');
    if !original.is_empty() {
        text.push_str(": ");
        text.push_str(original);
    }
    text
}

/// Trims white space as [`str::trim`] does, without its Unicode scan when both ends are
/// plain ASCII that is no space (as every name and time metal-api writes is).
pub fn trim_space(text: &str) -> &str {
    let solid = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_graphic());
    if solid(text.as_bytes().first()) && solid(text.as_bytes().last()) {
        text
    } else {
        text.trim()
    }
}

/// Splits `[unexpectedly received in state X]: rest` into (X, rest); other messages pass as-is.
pub fn split_recorded_verdict(message: &str) -> (Option<State>, &str) {
    let Some(rest) = message.strip_prefix(UNEXPECTED_PREFIX) else {
        return (None, message);
    };
    let Some(close) = rest.find(']') else {
        return (None, message);
    };
    let Some(state) = State::parse(&rest[..close]) else {
        return (None, message);
    };
    let after = &rest[close + 1..];
    let original = after.strip_prefix(": ").unwrap_or(after);
    (Some(state), original)
}

/// Parses a pair as `report` names it: `STATE/EVENT`, e.g. `Waiting/PXE Booting`, in any case;
/// the fingerprint form `waiting/pxe-booting` too.
pub fn parse_pair(text: &str) -> Result<Pair, String> {
    let (state, event) = text.split_once('/').ok_or_else(|| {
        format!("expected STATE/EVENT, e.g. `Waiting/PXE Booting`, found {text:?}")
    })?;
    let spaced = |s: &str| s.trim().replace('-', " ");
    let state = State::parse(&spaced(state)).ok_or_else(|| format!("unknown state {state:?}"))?;
    let event =
        EventKind::parse(&spaced(event)).ok_or_else(|| format!("unknown event {event:?}"))?;
    Ok((state, event))
}

/// Whether a machine id has a UUID's shape, `8-4-4-4-12` hex digits: metal-stack names
/// machines by their UUID.
pub fn is_uuid(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Formats a time as RFC 3339 in UTC, with milliseconds only where the time has them.
pub fn format_time(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_parse_in_every_spelling() {
        assert_eq!(EventKind::parse("PXE Booting"), Some(EventKind::PxeBooting));
        assert_eq!(EventKind::parse("pxe booting"), Some(EventKind::PxeBooting));
        assert_eq!(
            EventKind::parse("MACHINE_PROVISIONING_EVENT_TYPE_PHONED_HOME"),
            Some(EventKind::PhonedHome)
        );
        assert_eq!(
            EventKind::parse("PROVISIONING_EVENT_TYPE_BOOTING_NEW_KERNEL"),
            Some(EventKind::BootingNewKernel)
        );
        assert_eq!(EventKind::parse("Rebooting"), None);
        assert_eq!(EventKind::parse("PHONED_HOME"), None);
    }

    #[test]
    fn pairs_parse_as_report_names_them() {
        assert_eq!(
            parse_pair("waiting/pxe booting"),
            Ok((State::Waiting, EventKind::PxeBooting))
        );
        assert_eq!(
            parse_pair("Booting New Kernel/phoned-home"),
            Ok((State::BootingNewKernel, EventKind::PhonedHome))
        );
        assert!(parse_pair("Waiting").unwrap_err().contains("STATE/EVENT"));
        assert!(
            parse_pair("Nowhere/Waiting")
                .unwrap_err()
                .contains("unknown state")
        );
    }

    #[test]
    fn home_state_of_crashed_is_crashing() {
        assert_eq!(EventKind::Crashed.home_state(), State::Crashing);
        assert_eq!(EventKind::Waiting.home_state(), State::Waiting);
    }

    #[test]
    fn states_parse_with_and_without_prefix() {
        assert_eq!(State::parse("state waiting"), Some(State::Waiting));
        assert_eq!(State::parse("State PXE Booting"), Some(State::PxeBooting));
        assert_eq!(
            State::parse("booting new kernel"),
            Some(State::BootingNewKernel)
        );
        assert_eq!(State::parse("state nowhere"), None);
    }

    #[test]
    fn recorded_verdict_is_split_and_rebuilt() {
        let (state, rest) =
            split_recorded_verdict("[unexpectedly received in state waiting]: machine sent dhcp");
        assert_eq!(state, Some(State::Waiting));
        assert_eq!(rest, "machine sent dhcp");
        let (state, rest) = split_recorded_verdict("[unexpectedly received in state pxe booting]");
        assert_eq!(state, Some(State::PxeBooting));
        assert_eq!(rest, "");
        assert_eq!(split_recorded_verdict("plain"), (None, "plain"));
    }

    #[test]
    fn trim_space_trims_as_str_trim_does() {
        for text in [
            "",
            " ",
            "Waiting",
            " Waiting",
            "Waiting\t",
            "\u{a0}Waiting",
            "Waiting\u{3000}",
            "a",
            "é",
            "x é",
            "\u{a0}",
            "\n\r",
            "W a",
        ] {
            assert_eq!(trim_space(text), text.trim(), "{text:?}");
        }
    }

    #[test]
    fn unexpected_message_omits_separator_for_empty_original() {
        assert_eq!(
            unexpected_message(State::PxeBooting, ""),
            "[unexpectedly received in state pxe booting]"
        );
        assert_eq!(
            unexpected_message(State::Waiting, "hello"),
            "[unexpectedly received in state waiting]: hello"
        );
    }
}
