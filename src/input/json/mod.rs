//! The JSON exports: metalctl's `machine logs -o json` (with its `Recent last error`
//! trailer), `machine describe -o json` and `machine list -o json`, metal-api's
//! `GET /v1/machine/{id}/event` response and event-table dump, and the v2 API's machines.
//! Arrays are read one element at a time.

mod batch;
mod element;
mod events;
#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::io::BufRead;

pub use batch::ElementBatch;
use element::{array_format, element_error, machine_from_parts};
use events::PendingEvents;

use super::fast::{self, Reading, direct_event_array, read_by};
use super::raw::{LogEvents, MachineParts, RawEvent, convert_event};
use super::row_order;
use crate::event::{Event, is_uuid};
use crate::input::context::{FileContext, NotALog};
use crate::input::record::{InputError, Record};
use crate::jsonsplit::{Cutting, SplitError, Splitter, for_each_element_cut};
use crate::log::{Format, MachineLog};

/// Reads one JSON file, one document after another (metalctl's concatenated outputs, `jq -c`
/// lines, a log appended to its own file), each taken as a file's content would be; `forced`
/// is the format the user named, if any.
pub(crate) fn read(
    reader: impl BufRead,
    ctx: &FileContext,
    forced: Option<Format>,
    emit: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut splitter = Splitter::new(reader);
    let mut documents = 0;
    loop {
        let next = match splitter.skip_whitespace() {
            Ok(next) => next,
            Err(err) => {
                emit(Record::Error(split_error(&ctx.path, err)));
                return Ok(());
            }
        };
        let result = match next {
            Some(b'[') => read_array(&mut splitter, ctx, forced, emit),
            Some(b'{') => read_object(&mut splitter, ctx, forced, emit),
            Some(_) if documents == 0 => {
                return Err(NotALog(match forced {
                    Some(f) => format!(
                        "expected {} JSON (or the same as YAML, {}), found something else",
                        f.name(),
                        f.name_in(true)
                    ),
                    None => "expected metalctl JSON, found something else".to_string(),
                }));
            }
            Some(_) => {
                let position = splitter.position();
                emit(Record::Error(InputError {
                    path: ctx.path.clone(),
                    line: position.line,
                    column: position.column,
                    message: "unexpected content after the JSON document (another document, or metalctl's `Recent last error (… ago):` block after a log, may follow one)".to_string(),
                }));
                return Ok(());
            }
            None if documents == 0 => {
                emit(Record::Error(InputError::at(
                    &ctx.path,
                    0,
                    "the file is empty",
                )));
                return Ok(());
            }
            None => return Ok(()),
        };
        documents += 1;
        match result {
            Ok(()) => {}
            Err(Stop::NotALog(not_a_log)) if documents == 1 => return Err(not_a_log),
            Err(Stop::NotALog(NotALog(reason))) => {
                let line = splitter.position().line;
                emit(Record::Error(InputError::at(
                    &ctx.path,
                    line,
                    format!("the document before this line is no machine log: {reason}"),
                )));
            }
            Err(Stop::Damaged(err)) => {
                emit(Record::Error(split_error(&ctx.path, err)));
                return Ok(());
            }
        }
    }
}

fn split_error(path: &str, err: SplitError) -> InputError {
    match err {
        SplitError::Io(err) => InputError::at(path, 0, format!("cannot read: {err}")),
        SplitError::Syntax {
            line,
            column,
            message,
        } => InputError {
            path: path.to_string(),
            line,
            column,
            message: format!("invalid JSON: {message}"),
        },
    }
}

/// Why a document's read stopped short: it holds no machine log, or its JSON is damaged
/// (what was read before the damage has been handed on).
enum Stop {
    NotALog(NotALog),
    Damaged(SplitError),
}

impl From<SplitError> for Stop {
    fn from(err: SplitError) -> Stop {
        Stop::Damaged(err)
    }
}

/// What an array holds, as its first readable element (or the forced format) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holds {
    Undecided,
    Events,
    Machines,
}

fn read_array<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    forced: Option<Format>,
    emit: &mut dyn FnMut(Record),
) -> Result<(), Stop> {
    // The first element that parses decides between an event array and an array of
    // machines, unless the user forced the format. Machines are handed on in batches of raw
    // elements, so that parsing them can run on every core while this thread reads on.
    let mut holds = match forced {
        Some(Format::LogsJson) => Holds::Events,
        Some(_) => Holds::Machines,
        None => Holds::Undecided,
    };
    let line = splitter.position().line;
    let mut elements = 0;
    let mut log_events = LogEvents::default();
    let mut pending = PendingEvents::default();
    // simd-json writes into what it parses: the element that decides the array's kind is
    // parsed from a copy.
    let mut scratch = Vec::new();
    let mut not_a_log = false;
    let mode = ctx.options.mode;
    let mut batch = ElementBatch::new(&ctx.path, forced, mode);
    // Set once the array is known to hold machines or events: it may then be cut at its
    // element lines (see `jsonsplit::indented`).
    let cutting = Cell::new(if forced.is_some() {
        Cutting::AtElementLines
    } else {
        Cutting::Careful
    });
    let split = for_each_element_cut(splitter, &cutting, |bytes, start| {
        elements += 1;
        if not_a_log {
            return Ok(());
        }
        if holds == Holds::Machines {
            batch.push(bytes, start);
            if batch.is_full() {
                let fresh = ElementBatch::new(&ctx.path, forced, mode);
                let full = std::mem::replace(&mut batch, fresh);
                emit(Record::Batch(Box::new(full)));
            }
            return Ok(());
        }
        if holds == Holds::Events {
            pending.push(bytes, start);
            if pending.is_full() {
                pending.parse_into(&mut log_events, &ctx.path, emit);
            }
            return Ok(());
        }
        let item = match fast::value(bytes, &mut scratch) {
            Ok((item, _)) => item,
            Err(err) => {
                emit(Record::Error(element_error(
                    &ctx.path,
                    start,
                    &err,
                    "array element",
                )));
                return Ok(());
            }
        };
        // A bare machine object (an id, no events) is a machine without an event container.
        let kind = item.element_kind();
        let is_events = match (holds, kind) {
            (Holds::Events, _) => true,
            (Holds::Machines, _) => false,
            (Holds::Undecided, None) => {
                not_a_log = true;
                return Ok(());
            }
            (Holds::Undecided, Some(kind)) => {
                holds = if kind == Format::LogsJson {
                    Holds::Events
                } else {
                    Holds::Machines
                };
                holds == Holds::Events
            }
        };
        if is_events {
            log_events.push(item, &ctx.path, start.line, emit);
        } else {
            batch.format = kind.map(array_format);
            batch.push(bytes, start);
        }
        cutting.set(Cutting::AtElementLines);
        Ok(())
    });
    pending.parse_into(&mut log_events, &ctx.path, emit);
    if let Err(err) = split {
        // What was read before the damage is still reported, then the damage is named.
        match holds {
            Holds::Events if !log_events.events.is_empty() => {
                events_log(ctx, line, log_events.events, None, emit)
            }
            Holds::Machines if !batch.is_empty() => emit(Record::Batch(Box::new(batch))),
            _ => {}
        }
        return Err(Stop::Damaged(err));
    }
    if not_a_log {
        return Err(Stop::NotALog(NotALog(
            "a JSON array whose elements are neither events nor machines".to_string(),
        )));
    }
    if holds == Holds::Machines {
        if !batch.is_empty() {
            emit(Record::Batch(Box::new(batch)));
        }
        if elements == 0 {
            let message = format!(
                "an empty {} array `[]`: no machine",
                forced.unwrap_or(Format::ListJson)
            );
            emit(Record::Note(InputError::at(&ctx.path, line, message)));
        }
        return Ok(());
    }
    // An event array, or an empty array (a machine without events): metalctl's `Recent last
    // error` block may follow. An array whose every event was bad is no machine: its errors
    // say why.
    let last_error = match read_trailer(splitter, ctx, emit) {
        Ok(last_error) => last_error,
        Err(err) => {
            // As above: the events read before the damage are still reported (wherever the
            // read failed, in the array or after it), then the damage is named.
            if !log_events.events.is_empty() {
                events_log(ctx, line, log_events.events, None, emit);
            }
            return Err(Stop::Damaged(err));
        }
    };
    if elements == 0 && last_error.is_none() {
        if let Some(log) = empty_array(ctx, line, Format::LogsJson, emit) {
            emit(Record::Machine(log));
        }
    } else if holds == Holds::Undecided && last_error.is_none() {
        // Every element failed to read before one told events from machines: neither a
        // list's machines nor a log's, so no machine (least of all one named after the
        // file); the errors say why.
    } else if log_events.is_a_machine(last_error.is_some()) {
        events_log(ctx, line, log_events.events, last_error, emit);
    }
    Ok(())
}

/// Reads a `machine logs -o json` file held whole in memory straight from its bytes, as
/// the careful path would read it (the same events, lines and problems); `false`, with
/// nothing handed on, where the direct reader declines it and the careful path must read it.
pub(crate) fn whole_log(
    bytes: &[u8],
    ctx: &FileContext,
    forced: Option<Format>,
    emit: &mut dyn FnMut(Record),
) -> bool {
    if forced.is_some_and(|f| f != Format::LogsJson) {
        return false;
    }
    let Some(array) = direct_event_array(bytes) else {
        return false;
    };
    // The first element decides what the array holds; only an event makes it a log.
    match array.events.first() {
        Some((first, _)) if first.element_kind() == Some(Format::LogsJson) => {}
        _ => return false,
    }
    let mut log_events = LogEvents::default();
    log_events.events.reserve(array.events.len());
    for (raw, at) in array.events {
        log_events.push(raw, &ctx.path, at, emit);
    }
    let last_error = array
        .last_error
        .and_then(|(raw, at)| last_error_at(raw, at, &ctx.path, emit));
    let has_last_error = last_error.is_some();
    if log_events.is_a_machine(has_last_error) {
        events_log(ctx, array.line, log_events.events, last_error, emit);
    }
    true
}

/// Whether a `machine logs -o json` file read straight from its bytes gives the records the
/// careful path gives, in the same order; `None` where the direct reader declines it (and
/// hands on nothing). For the differential property test and fuzz target.
pub fn whole_log_agrees(bytes: &[u8]) -> Option<bool> {
    let options = crate::input::record::InputOptions::default();
    let ctx = FileContext {
        path: "m.json".to_string(),
        machine: "m".to_string(),
        options: &options,
        read_ahead: true,
        named: true,
    };
    // As detected, and as `--format logs-json` reads it.
    let mut read_directly = None;
    for forced in [None, Some(Format::LogsJson)] {
        let mut direct = Vec::new();
        if !whole_log(bytes, &ctx, forced, &mut |r| direct.push(format!("{r:?}"))) {
            // Declined: nothing may have been handed on, or the careful path would read it
            // twice.
            if !direct.is_empty() {
                return Some(false);
            }
            continue;
        }
        let mut careful = Vec::new();
        let outcome = read(std::io::Cursor::new(bytes), &ctx, forced, &mut |r| {
            careful.push(format!("{r:?}"))
        });
        if outcome.is_err() || direct != careful {
            return Some(false);
        }
        read_directly = Some(true);
    }
    read_directly
}

/// The machine of a `machine logs -o json` array that starts at `line`: one record, or
/// several where the array's order restarts (see [`row_order::records`]), the last error with
/// the last of them.
fn events_log(
    ctx: &FileContext,
    line: usize,
    events: Vec<Event>,
    last_error: Option<Event>,
    emit: &mut dyn FnMut(Record),
) {
    let cuts = row_order::cut(events, &[], line);
    let count = cuts.len();
    let mut last_error = last_error;
    for (i, cut) in cuts.into_iter().enumerate() {
        let mut log = MachineLog::new(ctx.machine.clone(), &ctx.path, cut.line, Format::LogsJson);
        log.events = cut.events;
        if i + 1 == count {
            log.last_error_event = last_error.take();
        }
        emit(Record::Machine(log));
    }
}

/// What an empty array `[]` is taken for, said in a note: the log of a machine without
/// events when the machine is named (`--machine-id`, or a file named by a UUID, as
/// `metalctl machine logs ID -o json > ID.json` names it); otherwise a `machine list` that
/// matched nothing, no machine at all.
pub(crate) fn empty_array(
    ctx: &FileContext,
    line: usize,
    format: Format,
    emit: &mut dyn FnMut(Record),
) -> Option<MachineLog> {
    let named = ctx.options.machine_id.is_some() || is_uuid(&ctx.machine);
    let message = if named {
        format!(
            "an empty array `[]`, read as the log of machine {} without events",
            ctx.machine
        )
    } else {
        "an empty array `[]`, read as a machine list that matched nothing: no machine (name the file by the machine's id, or pass --machine-id, to read it as a machine's empty log)".to_string()
    };
    emit(Record::Note(InputError::at(&ctx.path, line, message)));
    named.then(|| MachineLog::new(ctx.machine.clone(), &ctx.path, line, format))
}

fn read_object<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    forced: Option<Format>,
    emit: &mut dyn FnMut(Record),
) -> Result<(), Stop> {
    let mut bytes = Vec::new();
    let start = splitter.read_value(&mut bytes)?;
    let mut scratch = Vec::with_capacity(bytes.len() + simd_json::INPUT_PADDING);
    let item = match fast::value(&bytes, &mut scratch) {
        Ok((item, way)) => {
            read_by(&ctx.path, way, emit);
            item
        }
        Err(err) => {
            read_by(&ctx.path, fast::ways(Reading::Value).careful, emit);
            emit(Record::Error(element_error(&ctx.path, start, &err, "JSON")));
            return Ok(());
        }
    };
    let Some(parts) = MachineParts::of(item, None) else {
        if forced.is_some() {
            emit(Record::Error(InputError::at(
                &ctx.path,
                start.line,
                "expected a machine object (with `events`, `log` or `recentProvisioningEvents`)",
            )));
            return Ok(());
        }
        return Err(Stop::NotALog(NotALog(
            "a JSON object with none of `events`, `log`, `recentProvisioningEvents`".to_string(),
        )));
    };
    if let Some(forced) = forced.filter(|f| *f != parts.format && *f != Format::ListJson) {
        emit(Record::Error(InputError::at(
            &ctx.path,
            start.line,
            format!("expected {forced} JSON, but the object is {}", parts.format),
        )));
        return Ok(());
    }
    if let Some(machine) = machine_from_parts(
        parts,
        &bytes,
        start,
        &ctx.path,
        Some(&ctx.machine),
        ctx.options.mode,
        emit,
    ) {
        emit(Record::Machine(machine));
    }
    Ok(())
}

/// After a `machine logs -o json` array: metalctl's `Recent last error (… ago):` block, if
/// it follows; anything else is left for the next document.
fn read_trailer<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    emit: &mut dyn FnMut(Record),
) -> Result<Option<Event>, SplitError> {
    if matches!(splitter.skip_whitespace()?, None | Some(b'[' | b'{')) {
        return Ok(None);
    }
    let mut text = Vec::new();
    if !splitter.line_starting_with(b"Recent last error", &mut text)? {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    let start = splitter.read_value(&mut bytes)?;
    let event = match serde_json::from_slice::<RawEvent>(&bytes) {
        Ok(raw) => last_error_at(raw, start.line, &ctx.path, emit),
        Err(err) => {
            emit(Record::Error(element_error(
                &ctx.path,
                start,
                &err,
                "last error event",
            )));
            None
        }
    };
    Ok(event)
}

/// metalctl's last error event as read at `line`, or the problem with it named.
fn last_error_at(
    raw: RawEvent,
    line: usize,
    path: &str,
    emit: &mut dyn FnMut(Record),
) -> Option<Event> {
    match convert_event(raw) {
        Ok(event) => Some(event.at_line(line)),
        Err(message) => {
            emit(Record::Error(InputError::at(path, line, message)));
            None
        }
    }
}
