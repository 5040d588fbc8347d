//! A machine as any export carries it, turned into the log the replay reads: its events
//! converted and put in time order, each bad one named, and the flags it recorded.

use std::sync::Arc;

use super::lenient::{Slot, Text};
use super::shapes::{EventsField, RawEvent, RawItem, v2_liveliness};
use crate::event::{Event, EventKind, EventName};
use crate::input::record::{InputError, ReadMode, Record};
use crate::input::row_order::into_time_order;
use crate::input::time::parse_rfc3339;
use crate::log::{Format, Liveliness, MachineInfo, MachineLog, RecordedFlag, RecordedFlags};

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

impl<'a> MachineParts<'a> {
    /// The machine's parts whatever the format; `None` for a value that is no machine.
    /// `in_list` takes a bare machine object (no events at all) as a machine of `in_list`'s
    /// format without an event container.
    pub fn of(item: RawItem<'a>, in_list: Option<Format>) -> Option<MachineParts<'a>> {
        let format = match (item.kind(), in_list) {
            (Some(format), _) => format,
            (None, Some(list)) if item.names_a_machine() => list,
            _ => return None,
        };
        let top_flags = (item.crash_loop, item.failed_machine_reclaim);
        let v1_allocation = match item.allocation {
            Slot::Absent => None,
            Slot::Null => Some(false),
            Slot::Value(_) => Some(true),
        };
        let place = item.place().map(Arc::new);
        let bmc = item.bmc().map(Arc::new);
        let says_partition = item.says_partition();
        let mut parts = MachineParts {
            id: item.id,
            log: Vec::new(),
            log_path: &[],
            last_error_event: None,
            last_event_time: None,
            crash_loop: None,
            failed_machine_reclaim: None,
            liveliness: item.liveliness.map(|l| l.0.into_owned()),
            info: MachineInfo {
                allocated: v1_allocation,
                allocated_as_of: None,
                no_event_container: false,
                place,
                machine_object: matches!(format, Format::DescribeJson | Format::ListJson),
                says_partition,
                bmc,
            },
            format,
        };
        match (item.events, item.recent_provisioning_events, item.log) {
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
                parts.last_error_event = item.last_error_event;
                parts.last_event_time = item.last_event_time;
                parts.crash_loop = top_flags.0;
                parts.failed_machine_reclaim = top_flags.1;
            }
            (Slot::Absent, v2 @ (Slot::Value(_) | Slot::Null), _) => {
                parts.id = item.uuid.or(parts.id);
                // An absent allocation is not known to be none: exports leave it out of
                // allocated machines too.
                parts.liveliness = item
                    .status
                    .and_then(|s| s.liveliness)
                    .and_then(|l| v2_liveliness(&l))
                    .map(str::to_string);
                match v2 {
                    Slot::Value(mut v2) => {
                        // Proto JSON leaves out defaults: no state means neither flag is set.
                        // Written as its number, `MachineProvisioningEventState` has 1
                        // CRASHLOOP and 2 FAILED_RECLAIM (metal-stack/api's machine.proto).
                        let state = match v2.state.as_ref().map(|s| (s.number, &**s)) {
                            Some((Some(1), _)) => "CRASHLOOP",
                            Some((Some(2), _)) => "FAILED_RECLAIM",
                            Some((Some(_), _)) | None => "",
                            Some((None, text)) => text,
                        };
                        parts.crash_loop = Some(state.ends_with("CRASHLOOP"));
                        parts.failed_machine_reclaim = Some(state.ends_with("FAILED_RECLAIM"));
                        parts.info.no_event_container =
                            v2.events.as_ref().is_none_or(Vec::is_empty)
                                && v2.last_event_time.is_none()
                                && v2.last_error_event.is_none();
                        for event in v2.events.iter_mut().flatten() {
                            named_by_v2_number(event);
                        }
                        if let Some(event) = &mut v2.last_error_event {
                            named_by_v2_number(event);
                        }
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
                parts.last_error_event = item.last_error_event;
                parts.last_event_time = item.last_event_time;
                parts.crash_loop = top_flags.0;
                parts.failed_machine_reclaim = top_flags.1;
            }
            // `"events": null`, or a bare machine object in a list.
            _ => {
                parts.id = parts.id.or(item.uuid);
                parts.info.no_event_container = true;
            }
        }
        Some(parts)
    }
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
            liveliness: self.liveliness.as_deref().map(Liveliness::from),
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
        emit: &mut dyn FnMut(Record),
    ) -> Option<MachineLog> {
        let machine = match (&self.id, file_machine) {
            (Some(id), _) => id.0.to_string(),
            (None, Some(machine)) => machine.to_string(),
            (None, None) if mode == ReadMode::IdsOnly => return None,
            (None, None) => {
                emit(Record::Error(InputError::at(
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
                Err(message) => emit(Record::Error(InputError::at(path, line_of(index), message))),
            }
        }
        into_time_order(&mut events, true);
        log.last_error_event = match self.last_error_event.take().map(convert_event) {
            Some(Ok(event)) => Some(event.at_line(line)),
            Some(Err(message)) => {
                emit(Record::Error(InputError::at(
                    path,
                    line,
                    format!("last_error_event: {message}"),
                )));
                None
            }
            None => None,
        };
        if mode != ReadMode::Audit {
            // The fast paths step over what only the audit reads; the careful path reads it
            // all. Dropped here, a machine is the same whichever path read it.
            self.info.bmc = None;
            if let Some(place) = self.info.place.as_mut().filter(|p| !p.asns.is_empty()) {
                Arc::make_mut(place).asns = Vec::new();
            }
        }
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
    #[inline]
    pub fn push(&mut self, item: RawItem, path: &str, line: usize, emit: &mut dyn FnMut(Record)) {
        if let Some(machine) = item.element_kind().filter(|k| *k != Format::LogsJson) {
            self.bad += 1;
            let machine = match machine {
                Format::DescribeJson => Format::ListJson,
                other => other,
            };
            emit(Record::Error(InputError::at(
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
                emit(Record::Error(InputError::at(path, line, message)));
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

/// A v2 event whose type is written as its enum number, named as the enum names it; an
/// unknown number stays as it was written, an unknown event.
fn named_by_v2_number(event: &mut RawEvent) {
    if let Some(name) = event.event.as_mut()
        && let Some(kind) = name.number.and_then(EventKind::from_v2_number)
    {
        name.text = Text(kind.name().into());
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
        assert_eq!(MachineParts::of(item, None).unwrap().id.unwrap().0, "b");
    }

    #[test]
    fn a_numeric_id_is_its_text() {
        let item: RawItem = serde_json::from_str(r#"{"id": 42, "events": {"log": []}}"#).unwrap();
        assert_eq!(MachineParts::of(item, None).unwrap().id.unwrap().0, "42");
    }

    #[test]
    fn v2_liveliness_and_allocation() {
        let item: RawItem = serde_json::from_str(
            r#"{"uuid": "m", "status": {"liveliness": "MACHINE_LIVELINESS_DEAD"}, "recentProvisioningEvents": {"events": []}}"#,
        )
        .unwrap();
        let parts = MachineParts::of(item, None).unwrap();
        assert_eq!(parts.liveliness.as_deref(), Some("Dead"));
        assert_eq!(
            parts.info.allocated, None,
            "left out is not known to be none"
        );
        assert!(parts.info.no_event_container);
    }

    #[test]
    fn what_only_the_audit_judges_by_is_kept_for_the_audit_only() {
        let built = |text: &str, mode| {
            let item: RawItem = serde_json::from_str(text).unwrap();
            let parts = MachineParts::of(item, None).unwrap();
            parts
                .build("x", 1, None, mode, &mut |_| 1, &mut |_| {})
                .unwrap()
        };
        let firewall = r#"{"id": "m", "events": {"log": []}, "partition": {"id": "fra"},
            "allocation": {"role": "firewall", "networks": [{"asn": 4200000001}, {"asn": 0}]},
            "ipmi": {"address": "10.0.0.1:623", "mac": "aa:bb:cc:dd:ee:ff", "password": "x"}}"#;
        let audit = built(firewall, ReadMode::Audit);
        let place = audit.machine_info.place.as_deref().unwrap();
        assert_eq!(place.asns, [4_200_000_001]);
        let bmc = audit.machine_info.bmc.as_deref().unwrap();
        assert_eq!(
            (bmc.address.as_str(), bmc.mac.as_str()),
            ("10.0.0.1:623", "aa:bb:cc:dd:ee:ff")
        );
        // Every other command: the careful path read them, but the machine is what the fast
        // paths, which step over them, hand on.
        let report = built(firewall, ReadMode::Whole);
        let place = report.machine_info.place.as_deref().unwrap();
        assert_eq!(
            (place.partition.as_deref(), place.role.as_deref()),
            (Some("fra"), Some("firewall"))
        );
        assert!(place.asns.is_empty());
        assert!(report.machine_info.bmc.is_none());
        // The ASNs alone are no place, whether they were read or not.
        let asns_only =
            r#"{"id": "m", "events": {"log": []}, "allocation": {"networks": [{"asn": 65000}]}}"#;
        for mode in [ReadMode::Whole, ReadMode::Audit] {
            let log = built(asns_only, mode);
            assert_eq!(log.machine_info.place, None, "{mode:?}");
            assert_eq!(log.machine_info.allocated, Some(true));
        }
    }

    #[test]
    fn v1_allocation_null_object_or_absent() {
        let allocated = |text: &str| {
            let item: RawItem = serde_json::from_str(text).unwrap();
            MachineParts::of(item, None).unwrap().info.allocated
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

    #[test]
    fn v2_enum_numbers_are_read_as_metal_stack_api_numbers_them() {
        let item: RawItem = serde_json::from_str(
            r#"{"uuid": "m", "recentProvisioningEvents": {"events": [
                {"time": "2025-09-24T10:00:00Z", "event": 3},
                {"time": "2025-09-24T10:01:00Z", "event": 11},
                {"time": "2025-09-24T10:02:00Z", "event": 0},
                {"time": "2025-09-24T10:03:00Z", "event": 12},
                {"time": "2025-09-24T10:04:00Z", "event": "3"},
                {"time": "2025-09-24T10:05:00Z", "event": -3}
            ], "lastErrorEvent": {"time": "2025-09-24T09:00:00Z", "event": 2}, "state": 1}}"#,
        )
        .unwrap();
        let parts = MachineParts::of(item, None).unwrap();
        assert_eq!(parts.crash_loop, Some(true));
        assert_eq!(parts.failed_machine_reclaim, Some(false));
        let names: Vec<EventName> = parts
            .log
            .into_iter()
            .map(|raw| convert_event(raw).unwrap().name)
            .collect();
        let unknown = |s: &str| EventName::Unknown(s.to_string());
        assert_eq!(
            names,
            [
                EventName::Known(EventKind::PxeBooting),
                EventName::Known(EventKind::MachineReclaim),
                unknown("0"),
                unknown("12"),
                // Only a number is an enum number; protojson never writes one as a string.
                unknown("3"),
                unknown("-3"),
            ]
        );
        let last = convert_event(parts.last_error_event.unwrap()).unwrap();
        assert_eq!(last.name, EventName::Known(EventKind::Crashed));
        for (state, flags) in [
            ("2", (false, true)),
            ("0", (false, false)),
            ("\"1\"", (false, false)),
        ] {
            let text = format!(
                r#"{{"uuid": "m", "recentProvisioningEvents": {{"events": [], "state": {state}}}}}"#
            );
            let item: RawItem = serde_json::from_str(&text).unwrap();
            let parts = MachineParts::of(item, None).unwrap();
            assert_eq!(
                (parts.crash_loop, parts.failed_machine_reclaim),
                (Some(flags.0), Some(flags.1)),
                "{state}"
            );
        }
    }
}
