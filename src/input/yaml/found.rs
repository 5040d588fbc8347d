//! What a YAML file's top-level elements, read so far, have decided (events or machines, a
//! list's shape) and found; and one element made into its machine, the same whether the
//! parser or the direct reader read it.

use std::collections::HashMap;

use crate::input::context::FileContext;
use crate::input::raw::{LogEvents, MachineParts, RawItem};
use crate::input::record::{InputError, ReadMode, Record};
use crate::log::{Format, MachineLog};

/// What the elements read so far have decided and found.
pub(super) struct Found {
    pub(super) forced: Option<Format>,
    /// Whether the file is a `machine logs` array of events (the first element tells).
    pub(super) events_array: Option<bool>,
    pub(super) log_events: LogEvents,
    pub(super) machines: usize,
    pub(super) elements: usize,
    /// The shape of a list's machines (its first element tells).
    pub(super) list_format: Option<Format>,
}

impl Found {
    pub(super) fn new(forced: Option<Format>) -> Found {
        Found {
            forced,
            events_array: forced.map(|f| f == Format::LogsJson),
            log_events: LogEvents {
                yaml: true,
                ..LogEvents::default()
            },
            machines: 0,
            elements: 0,
            list_format: None,
        }
    }

    /// One top-level element (at `line`, the lines of its sequences' items by path), read.
    pub(super) fn element(
        &mut self,
        value: Result<RawItem, String>,
        line: usize,
        item_lines: &HashMap<String, Vec<usize>>,
        in_list: bool,
        ctx: &FileContext,
        emit: &mut dyn FnMut(Record),
    ) {
        self.elements += 1;
        let item = match value {
            Ok(item) => item,
            Err(err) => {
                emit(Record::Error(InputError::at(
                    &ctx.path,
                    line,
                    format!("invalid YAML element: {err}"),
                )));
                return;
            }
        };
        let kind = item.element_kind();
        let is_events = match self.events_array {
            Some(decided) => decided,
            None if kind.is_none() => return,
            None => *self.events_array.insert(kind == Some(Format::LogsJson)),
        };
        if is_events {
            self.log_events.push(item, &ctx.path, line, emit);
            return;
        }
        let shape = if in_list {
            self.list_format.get_or_insert(match kind {
                Some(Format::DescribeJson) | None => Format::ListJson,
                Some(other) => other,
            });
            self.list_format
        } else {
            None
        };
        let file_machine = (!in_list).then_some(ctx.machine.as_str());
        let place = Place {
            path: &ctx.path,
            line,
            item_lines,
            in_list,
            file_machine,
        };
        if let Some(machine) = machine(item, &place, shape, self.forced, ctx.options.mode, emit) {
            self.machines += 1;
            emit(Record::Machine(machine));
        }
    }
}

/// Where an element was read: the file, its line and its items' lines, and whether it is an
/// item of a list (else the file's one machine, `file_machine`).
pub(super) struct Place<'a> {
    pub(super) path: &'a str,
    pub(super) line: usize,
    pub(super) item_lines: &'a HashMap<String, Vec<usize>>,
    pub(super) in_list: bool,
    pub(super) file_machine: Option<&'a str>,
}

/// A machine element made into its log (`shape`: a list's), or the error that says why not.
pub(super) fn machine(
    item: RawItem,
    at: &Place,
    shape: Option<Format>,
    forced: Option<Format>,
    mode: ReadMode,
    emit: &mut dyn FnMut(Record),
) -> Option<MachineLog> {
    let Some(mut parts) = MachineParts::of(item, shape) else {
        emit(Record::Error(InputError::at(
            at.path,
            at.line,
            "not a machine (no `events`, `log` or `recentProvisioningEvents`)",
        )));
        return None;
    };
    if at.in_list && parts.format == Format::DescribeJson {
        parts.format = Format::ListJson;
    }
    if let Some(forced) = forced
        && forced != parts.format
        && !(forced == Format::ListJson && parts.format == Format::DescribeJson)
    {
        emit(Record::Error(InputError::at(
            at.path,
            at.line,
            format!(
                "expected {} YAML, but this is {}",
                forced.name_in(true),
                parts.format.name_in(true)
            ),
        )));
        return None;
    }
    let lines = at
        .item_lines
        .get(&parts.log_path.join("/"))
        .map_or(&[][..], Vec::as_slice);
    let mut line_of = |i: usize| lines.get(i).copied().unwrap_or(at.line);
    let mut machine = parts.build(at.path, at.line, at.file_machine, mode, &mut line_of, emit)?;
    machine.yaml = true;
    Some(machine)
}
