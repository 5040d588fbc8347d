//! The shapes of exported machines and events as serde reads them, shared by the JSON, YAML
//! and stream readers. Keys are read as Go's `encoding/json` reads them: a repeated key keeps
//! its last value, unknown keys are skipped, and a number where text is expected (a numeric
//! `id`) is taken as its text, so that one odd field does not lose the whole machine.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use crate::skim::Member;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::time::parse_rfc3339;
use crate::event::{Event, EventName};
use crate::input::order::into_time_order;
use crate::input::record::{InputError, ReadMode, Record};
use crate::log::{Format, MachineInfo, MachineLog, RecordedFlag, RecordedFlags};

/// Text as an export holds it: a string, or a number or boolean taken as its text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Text<'a>(pub Cow<'a, str>);

impl<'a> std::ops::Deref for Text<'a> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor<'a>(PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
            type Value = Text<'a>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
        }

        deserializer.deserialize_any(TextVisitor(PhantomData))
    }
}

/// Implements `Deserialize` for a struct of `Option` fields read from a map: the last of
/// repeated keys wins, unknown keys are skipped. Keys are matched as serde's derive matches
/// them, to a field tag, without copying or re-checking them.
macro_rules! last_wins {
    ($name:ident { $($field:ident: [$($key:literal),+]),* $(,)? }) => {
        impl $name<'_> {
            /// Every key the type reads; any other is ignored.
            #[allow(dead_code)]
            pub(crate) const KEYS: &'static [&'static str] = &[$($($key),+),*];
        }

        impl<'de: 'a, 'a> Deserialize<'de> for $name<'a> {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                #[allow(non_camel_case_types)]
                enum Field {
                    $($field,)*
                    Other,
                }

                impl<'de> Deserialize<'de> for Field {
                    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                        struct FieldVisitor;

                        impl Visitor<'_> for FieldVisitor {
                            type Value = Field;

                            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                                f.write_str("a key")
                            }

                            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                                Ok(match v {
                                    $($($key)|+ => Field::$field,)*
                                    _ => Field::Other,
                                })
                            }
                        }

                        deserializer.deserialize_identifier(FieldVisitor)
                    }
                }

                struct MapVisitor<'a>(PhantomData<&'a ()>);

                impl<'de: 'a, 'a> Visitor<'de> for MapVisitor<'a> {
                    type Value = $name<'a>;

                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("an object")
                    }

                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        let mut out = $name::default();
                        while let Some(key) = map.next_key::<Field>()? {
                            match key {
                                $(Field::$field => out.$field = map.next_value()?,)*
                                Field::Other => {
                                    map.next_value::<IgnoredAny>()?;
                                }
                            }
                        }
                        Ok(out)
                    }
                }

                deserializer.deserialize_map(MapVisitor(PhantomData))
            }
        }
    };
}

/// One event as metal-api exports it.
#[derive(Debug, Default)]
pub(crate) struct RawEvent<'a> {
    pub time: Option<Text<'a>>,
    pub event: Option<Text<'a>>,
    pub message: Option<Text<'a>>,
}

last_wins!(RawEvent {
    time: ["time"],
    event: ["event"],
    message: ["message"],
});

/// One line of the raw event stream; the machine may be named by any of three keys.
#[derive(Default)]
pub(crate) struct RawLine<'a> {
    machine: Option<Text<'a>>,
    machine_id: Option<Text<'a>>,
    id: Option<Text<'a>>,
    time: Option<Text<'a>>,
    event: Option<Text<'a>>,
    message: Option<Text<'a>>,
}

last_wins!(RawLine {
    machine: ["machine"],
    machine_id: ["machine_id"],
    id: ["id"],
    time: ["time"],
    event: ["event"],
    message: ["message"],
});

impl<'a> RawLine<'a> {
    /// The machine the line names, and its event.
    pub fn machine(self) -> (Option<Text<'a>>, RawEvent<'a>) {
        (
            self.machine.or(self.machine_id).or(self.id),
            RawEvent {
                time: self.time,
                event: self.event,
                message: self.message,
            },
        )
    }

    /// Whether the line is an event of some machine.
    pub fn is_event(&self) -> bool {
        (self.machine.is_some() || self.machine_id.is_some() || self.id.is_some())
            && (self.event.is_some() || self.time.is_some())
    }
}

/// metal-api's event container as the v1 machine API exports it (`events` of describe/list).
#[derive(Default)]
struct RawEventBlock<'a> {
    log: Option<Vec<RawEvent<'a>>>,
    last_error_event: Option<RawEvent<'a>>,
    last_event_time: Option<Text<'a>>,
    crash_loop: Option<bool>,
    failed_machine_reclaim: Option<bool>,
}

last_wins!(RawEventBlock {
    log: ["log"],
    last_error_event: ["last_error_event"],
    last_event_time: ["last_event_time"],
    crash_loop: ["crash_loop"],
    failed_machine_reclaim: ["failed_machine_reclaim"],
});

/// `events` is an object in v1 machine exports and an array in the event-table dump.
enum EventsField<'a> {
    Block(RawEventBlock<'a>),
    List(Vec<RawEvent<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for EventsField<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EventsVisitor<'a>(PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for EventsVisitor<'a> {
            type Value = EventsField<'a>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an events object or an array of events")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                RawEventBlock::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(EventsField::Block)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(EventsField::List)
            }
        }

        deserializer.deserialize_any(EventsVisitor(PhantomData))
    }
}

/// The v2 API's `recentProvisioningEvents` (camelCase or snake_case).
#[derive(Default)]
struct RawV2Events<'a> {
    events: Option<Vec<RawEvent<'a>>>,
    last_error_event: Option<RawEvent<'a>>,
    last_event_time: Option<Text<'a>>,
    state: Option<Text<'a>>,
}

last_wins!(RawV2Events {
    events: ["events"],
    last_error_event: ["last_error_event", "lastErrorEvent"],
    last_event_time: ["last_event_time", "lastEventTime"],
    state: ["state"],
});

/// The v2 API's machine `status`; only the liveliness is read.
#[derive(Default)]
struct RawV2Status<'a> {
    liveliness: Option<Text<'a>>,
}

last_wins!(RawV2Status {
    liveliness: ["liveliness"],
});

/// A field that may be absent, `null`, or a value; `Option` alone cannot tell the first two
/// apart.
#[derive(Default)]
enum Slot<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Slot<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(deserializer)? {
            Some(value) => Slot::Value(value),
            None => Slot::Null,
        })
    }
}

/// Any top-level value or array element of the formats read here; which fields are set
/// tells which format it is.
#[derive(Default)]
pub(crate) struct RawItem<'a> {
    id: Option<Text<'a>>,
    uuid: Option<Text<'a>>,
    events: Slot<EventsField<'a>>,
    recent_provisioning_events: Slot<RawV2Events<'a>>,
    time: Option<Text<'a>>,
    event: Option<Text<'a>>,
    message: Option<Text<'a>>,
    log: Option<Vec<RawEvent<'a>>>,
    last_error_event: Option<RawEvent<'a>>,
    last_event_time: Option<Text<'a>>,
    crash_loop: Option<bool>,
    failed_machine_reclaim: Option<bool>,
    liveliness: Option<Text<'a>>,
    allocation: Slot<IgnoredAny>,
    status: Option<RawV2Status<'a>>,
}

last_wins!(RawItem {
    id: ["id"],
    uuid: ["uuid"],
    events: ["events"],
    recent_provisioning_events: ["recentProvisioningEvents", "recent_provisioning_events"],
    time: ["time"],
    event: ["event"],
    message: ["message"],
    log: ["log"],
    last_error_event: ["last_error_event"],
    last_event_time: ["last_event_time"],
    crash_loop: ["crash_loop"],
    failed_machine_reclaim: ["failed_machine_reclaim"],
    liveliness: ["liveliness"],
    allocation: ["allocation"],
    status: ["status"],
});

impl<'a> RawItem<'a> {
    /// What a skim of an exported object keeps of a member (see [`crate::skim`]): the keys
    /// read here, and of `allocation` only whether it is there.
    pub fn member(key: &[u8]) -> Member {
        match key {
            b"allocation" => Member::Presence,
            key if RawItem::KEYS.iter().any(|k| k.as_bytes() == key) => Member::Keep,
            _ => Member::Skip,
        }
    }

    /// The format this value belongs to, judged by its fields.
    pub fn kind(&self) -> Option<Format> {
        match (&self.events, &self.recent_provisioning_events, &self.log) {
            (Slot::Value(EventsField::Block(_)) | Slot::Null, _, _) => Some(Format::DescribeJson),
            (Slot::Value(EventsField::List(_)), _, _) => Some(Format::ContainerDump),
            (Slot::Absent, Slot::Value(_) | Slot::Null, _) => Some(Format::V2Json),
            (Slot::Absent, Slot::Absent, Some(_)) => Some(Format::EventApi),
            _ if self.event.is_some() || self.time.is_some() => Some(Format::LogsJson),
            _ => None,
        }
    }

    /// What an element of an array (or a document of a YAML stream) is, by its fields: an event
    /// (`LogsJson`), a machine of some format (a bare machine object counts as one without
    /// events), or `None` for neither.
    pub fn element_kind(&self) -> Option<Format> {
        self.kind()
            .or_else(|| self.names_a_machine().then_some(Format::DescribeJson))
    }

    /// Whether the value names a machine (an `id` or `uuid`) though it carries no events: a
    /// machine without an event container, in an array of machines.
    pub fn names_a_machine(&self) -> bool {
        self.kind().is_none() && (self.id.is_some() || self.uuid.is_some())
    }

    /// The value as one event of an event array.
    pub fn into_event(self) -> RawEvent<'a> {
        RawEvent {
            time: self.time,
            event: self.event,
            message: self.message,
        }
    }

    /// The machine's parts whatever the format; `None` for a value that is no machine.
    /// `in_list` takes a bare machine object (no events at all) as a machine of `in_list`'s
    /// format without an event container.
    pub fn into_machine(self, in_list: Option<Format>) -> Option<MachineParts<'a>> {
        let format = match (self.kind(), in_list) {
            (Some(format), _) => format,
            (None, Some(list)) if self.names_a_machine() => list,
            _ => return None,
        };
        let top_flags = (self.crash_loop, self.failed_machine_reclaim);
        let v1_allocation = match self.allocation {
            Slot::Absent => None,
            Slot::Null => Some(false),
            Slot::Value(_) => Some(true),
        };
        let mut parts = MachineParts {
            id: self.id,
            log: Vec::new(),
            log_path: &[],
            last_error_event: None,
            last_event_time: None,
            crash_loop: None,
            failed_machine_reclaim: None,
            liveliness: self.liveliness.map(|l| l.0.into_owned()),
            info: MachineInfo {
                allocated: v1_allocation,
                allocated_as_of: None,
                no_event_container: false,
            },
            format,
        };
        match (self.events, self.recent_provisioning_events, self.log) {
            (Slot::Value(EventsField::Block(block)), _, _) => {
                parts.info.no_event_container = block.log.as_ref().is_none_or(Vec::is_empty)
                    && block.last_event_time.is_none()
                    && block.last_error_event.is_none();
                parts.log = block.log.unwrap_or_default();
                parts.log_path = &["events", "log"];
                parts.last_error_event = block.last_error_event;
                parts.last_event_time = block.last_event_time;
                parts.crash_loop = block.crash_loop;
                parts.failed_machine_reclaim = block.failed_machine_reclaim;
            }
            (Slot::Value(EventsField::List(list)), _, _) => {
                parts.log = list;
                parts.log_path = &["events"];
                parts.last_error_event = self.last_error_event;
                parts.last_event_time = self.last_event_time;
                parts.crash_loop = top_flags.0;
                parts.failed_machine_reclaim = top_flags.1;
            }
            (Slot::Absent, v2 @ (Slot::Value(_) | Slot::Null), _) => {
                parts.id = self.uuid.or(parts.id);
                // An absent allocation is not known to be none: exports leave it out of
                // allocated machines too.
                parts.liveliness = self
                    .status
                    .and_then(|s| s.liveliness)
                    .and_then(|l| v2_liveliness(&l))
                    .map(str::to_string);
                match v2 {
                    Slot::Value(v2) => {
                        // Proto JSON leaves out defaults: no state means neither flag is set.
                        let state = v2.state.as_deref().unwrap_or("");
                        parts.crash_loop = Some(state.ends_with("CRASHLOOP"));
                        parts.failed_machine_reclaim = Some(state.ends_with("FAILED_RECLAIM"));
                        parts.info.no_event_container =
                            v2.events.as_ref().is_none_or(Vec::is_empty)
                                && v2.last_event_time.is_none()
                                && v2.last_error_event.is_none();
                        parts.log = v2.events.unwrap_or_default();
                        parts.log_path = &["recentProvisioningEvents", "events"];
                        parts.last_error_event = v2.last_error_event;
                        parts.last_event_time = v2.last_event_time;
                    }
                    _ => parts.info.no_event_container = true,
                }
            }
            (Slot::Absent, Slot::Absent, Some(log)) => {
                parts.log = log;
                parts.log_path = &["log"];
                parts.last_error_event = self.last_error_event;
                parts.last_event_time = self.last_event_time;
                parts.crash_loop = top_flags.0;
                parts.failed_machine_reclaim = top_flags.1;
            }
            // `"events": null`, or a bare machine object in a list.
            _ => {
                parts.id = parts.id.or(self.uuid);
                parts.info.no_event_container = true;
            }
        }
        Some(parts)
    }
}

/// The v2 enum spelling of a liveliness as metal-api's v1 spells it.
fn v2_liveliness(text: &str) -> Option<&'static str> {
    let tail = text
        .strip_prefix("MACHINE_LIVELINESS_")
        .unwrap_or(text)
        .to_ascii_lowercase();
    match tail.as_str() {
        "alive" => Some("Alive"),
        "dead" => Some("Dead"),
        "unknown" => Some("Unknown"),
        _ => None,
    }
}

/// A machine as any export carries it.
pub(crate) struct MachineParts<'a> {
    pub id: Option<Text<'a>>,
    pub log: Vec<RawEvent<'a>>,
    /// Where the log sits in the object, to find a bad event's line.
    pub log_path: &'static [&'static str],
    pub last_error_event: Option<RawEvent<'a>>,
    pub last_event_time: Option<Text<'a>>,
    pub crash_loop: Option<bool>,
    pub failed_machine_reclaim: Option<bool>,
    pub liveliness: Option<String>,
    pub info: MachineInfo,
    pub format: Format,
}

impl MachineParts<'_> {
    /// The recorded container fields; the flags hold as of `as_of` (the record's newest event
    /// or its last event time).
    pub fn recorded(&self, events: &[Event]) -> RecordedFlags {
        let last_event_time = self
            .last_event_time
            .as_deref()
            .and_then(|t| parse_rfc3339(t).ok());
        let as_of = events.last().map(|e| e.time).max(last_event_time);
        let flag = |value: Option<bool>| value.map(|value| RecordedFlag { value, as_of });
        RecordedFlags {
            last_event_time,
            crash_loop: flag(self.crash_loop),
            failed_machine_reclaim: flag(self.failed_machine_reclaim),
            liveliness: self.liveliness.clone(),
            liveliness_as_of: self.liveliness.as_ref().and(as_of),
        }
    }
}

impl MachineParts<'_> {
    /// Builds the machine, naming each bad event with its line (`line_of` its index in the
    /// log). A machine that is alone in its file may take its id from the file name
    /// (`file_machine`); in an array it cannot.
    pub fn build(
        mut self,
        path: &str,
        line: usize,
        file_machine: Option<&str>,
        mode: ReadMode,
        line_of: &mut dyn FnMut(usize) -> usize,
        sink: &mut dyn FnMut(Record),
    ) -> Option<MachineLog> {
        let machine = match (&self.id, file_machine) {
            (Some(id), _) => id.0.to_string(),
            (None, Some(machine)) => machine.to_string(),
            (None, None) if mode == ReadMode::IdsOnly => return None,
            (None, None) => {
                sink(Record::Error(InputError::at(
                    path,
                    line,
                    "machine without `id` (or `uuid`)",
                )));
                return None;
            }
        };
        let mut log = MachineLog::new(machine, path, line, self.format);
        if mode == ReadMode::IdsOnly {
            return Some(log);
        }
        let mut events = Vec::with_capacity(self.log.len());
        let recorded_log = std::mem::take(&mut self.log);
        for (index, raw) in recorded_log.into_iter().enumerate() {
            match convert_event(raw) {
                Ok(event) => events.push(event.at_line(line)),
                Err(message) => sink(Record::Error(InputError::at(path, line_of(index), message))),
            }
        }
        into_time_order(&mut events, true);
        log.last_error_event = match self.last_error_event.take().map(convert_event) {
            Some(Ok(event)) => Some(event.at_line(line)),
            Some(Err(message)) => {
                sink(Record::Error(InputError::at(
                    path,
                    line,
                    format!("last_error_event: {message}"),
                )));
                None
            }
            None => None,
        };
        log.recorded = self.recorded(&events);
        log.machine_info = self.info.clone();
        log.events = events;
        if log.machine_info.allocated.is_some() {
            log.machine_info.allocated_as_of = log.as_of();
        }
        Some(log)
    }
}

/// The events of a `machine logs` array as its elements are read, and how many were bad.
#[derive(Default)]
pub(crate) struct LogEvents {
    pub events: Vec<Event>,
    pub bad: usize,
    /// Whether the array was read from YAML, for the format names in errors.
    pub yaml: bool,
}

impl LogEvents {
    /// Takes an element as the next event, or names what is wrong with it (a machine where
    /// an event should be, when `--format logs-json` was given a list).
    pub fn push(&mut self, item: RawItem, path: &str, line: usize, sink: &mut dyn FnMut(Record)) {
        if let Some(machine) = item.element_kind().filter(|k| *k != Format::LogsJson) {
            self.bad += 1;
            let machine = match machine {
                Format::DescribeJson => Format::ListJson,
                other => other,
            };
            sink(Record::Error(InputError::at(
                path,
                line,
                format!(
                    "expected {} (an event array), but this element is a machine ({})",
                    Format::LogsJson.name_in(self.yaml),
                    machine.name_in(self.yaml)
                ),
            )));
            return;
        }
        match convert_event(item.into_event()) {
            Ok(event) => self.events.push(event.at_line(line)),
            Err(message) => {
                self.bad += 1;
                sink(Record::Error(InputError::at(path, line, message)));
            }
        }
    }

    /// Whether the array is a machine: any event read, or none bad (an empty log), or a
    /// last error beside it. An array whose every event was bad is no machine; its errors
    /// say why.
    pub fn is_a_machine(&self, last_error: bool) -> bool {
        !self.events.is_empty() || self.bad == 0 || last_error
    }
}

/// Turns an exported event into an [`Event`]; the error says what is missing or wrong.
pub(crate) fn convert_event(raw: RawEvent) -> Result<Event, String> {
    let time = raw.time.ok_or("event without `time`")?;
    let time = parse_rfc3339(&time)?;
    let name = raw.event.ok_or("event without `event` name")?;
    Ok(Event::from_recorded(
        time,
        EventName::parse(&name),
        raw.message.as_deref().unwrap_or(""),
        0,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let item: RawItem =
            serde_json::from_str(r#"{"id": "a", "id": "b", "events": {"log": []}}"#).unwrap();
        assert_eq!(item.into_machine(None).unwrap().id.unwrap().0, "b");
    }

    #[test]
    fn a_numeric_id_is_its_text() {
        let item: RawItem = serde_json::from_str(r#"{"id": 42, "events": {"log": []}}"#).unwrap();
        assert_eq!(item.into_machine(None).unwrap().id.unwrap().0, "42");
    }

    #[test]
    fn v2_liveliness_and_allocation() {
        let item: RawItem = serde_json::from_str(
            r#"{"uuid": "m", "status": {"liveliness": "MACHINE_LIVELINESS_DEAD"}, "recentProvisioningEvents": {"events": []}}"#,
        )
        .unwrap();
        let parts = item.into_machine(None).unwrap();
        assert_eq!(parts.liveliness.as_deref(), Some("Dead"));
        assert_eq!(
            parts.info.allocated, None,
            "left out is not known to be none"
        );
        assert!(parts.info.no_event_container);
    }

    #[test]
    fn v1_allocation_null_object_or_absent() {
        let allocated = |text: &str| {
            let item: RawItem = serde_json::from_str(text).unwrap();
            item.into_machine(None).unwrap().info.allocated
        };
        assert_eq!(
            allocated(r#"{"id": "m", "allocation": null, "events": {}}"#),
            Some(false)
        );
        assert_eq!(
            allocated(r#"{"id": "m", "allocation": {"name": "x"}, "events": {}}"#),
            Some(true)
        );
        assert_eq!(allocated(r#"{"id": "m", "events": {}}"#), None);
    }
}
