//! metalctl's and metal-api's JSON: `machine logs -o json` (with its `Recent last error`
//! trailer), `machine describe -o json`, `machine list -o json` (read element by element) and
//! the `GET /v1/machine/{id}/event` response.

use std::borrow::Cow;
use std::io::BufRead;

use serde::Deserialize;

use super::time::parse_rfc3339;
use super::{FileContext, Format, InputError, MachineLog, NotALog, Record, RecordedFlags};
use crate::event::{Event, EventName};
use crate::input::into_time_order;
use crate::jsonsplit::{Position, SplitError, Splitter, element_lines_at, for_each_element};

/// One event as metal-api exports it.
#[derive(Deserialize, Default)]
struct RawEvent<'a> {
    #[serde(borrow, default)]
    time: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    event: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
}

/// metal-api's event container as the v1 API exports it.
#[derive(Deserialize, Default)]
struct RawEventBlock<'a> {
    #[serde(borrow, default)]
    log: Option<Vec<RawEvent<'a>>>,
    #[serde(borrow, default)]
    last_error_event: Option<RawEvent<'a>>,
    #[serde(borrow, default)]
    last_event_time: Option<Cow<'a, str>>,
    #[serde(default)]
    crash_loop: Option<bool>,
    #[serde(default)]
    failed_machine_reclaim: Option<bool>,
}

/// Any top-level JSON value or array element of the formats read here; which fields are set
/// tells which format it is.
#[derive(Deserialize, Default)]
struct RawItem<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    events: Option<RawEventBlock<'a>>,
    #[serde(borrow, default)]
    time: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    event: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    log: Option<Vec<RawEvent<'a>>>,
    #[serde(borrow, default)]
    last_error_event: Option<RawEvent<'a>>,
    #[serde(borrow, default)]
    last_event_time: Option<Cow<'a, str>>,
    #[serde(default)]
    crash_loop: Option<bool>,
    #[serde(default)]
    failed_machine_reclaim: Option<bool>,
}

impl<'a> RawItem<'a> {
    fn kind(&self) -> Option<Format> {
        if self.events.is_some() {
            Some(Format::DescribeJson)
        } else if self.log.is_some() {
            Some(Format::EventApi)
        } else if self.event.is_some() || self.time.is_some() {
            Some(Format::LogsJson)
        } else {
            None
        }
    }

    fn into_event(self) -> RawEvent<'a> {
        RawEvent {
            time: self.time,
            event: self.event,
            message: self.message,
        }
    }
}

/// Reads one JSON file; `forced` is the format the user named, if any.
pub(crate) fn read(
    reader: impl BufRead,
    ctx: &FileContext,
    forced: Option<Format>,
    sink: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut splitter = Splitter::new(reader);
    let result = match splitter.skip_whitespace() {
        Ok(Some(b'[')) => read_array(&mut splitter, ctx, forced, sink),
        Ok(Some(b'{')) => read_object(&mut splitter, ctx, forced, sink),
        Ok(Some(_)) => {
            return Err(NotALog(format!(
                "expected {} JSON, found something else",
                forced.map_or("metalctl", |f| f.name())
            )));
        }
        Ok(None) => return Err(NotALog("the file is empty".to_string())),
        Err(err) => Err(err),
    };
    match result {
        Ok(outcome) => outcome,
        Err(err) => {
            sink(Record::Error(split_error(&ctx.path, err)));
            Ok(())
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

/// Turns a serde error inside an element into one that names the line in the file.
fn element_error(path: &str, start: Position, err: &serde_json::Error, what: &str) -> InputError {
    let (line, column) = if err.line() <= 1 {
        (start.line, start.column + err.column().saturating_sub(1))
    } else {
        (start.line + err.line() - 1, err.column())
    };
    let detail = err.to_string();
    // serde appends its own position, which is relative to the element: drop it.
    let detail = match detail.rfind(" at line ") {
        Some(cut) => detail[..cut].to_string(),
        None => detail,
    };
    InputError {
        path: path.to_string(),
        line,
        column,
        message: format!("invalid {what}: {detail}"),
    }
}

/// The outcome of a read that got as far as the JSON structure allowed.
type Outcome = Result<(), NotALog>;

fn read_array<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    forced: Option<Format>,
    sink: &mut dyn FnMut(Record),
) -> Result<Outcome, SplitError> {
    // The first element that parses decides between an event array and a machine list,
    // unless the user forced the format.
    let mut mode = forced;
    let mut log_events = Vec::new();
    let mut not_a_log = false;
    for_each_element(splitter, |bytes, start| {
        if not_a_log {
            return Ok(());
        }
        let item: RawItem = match serde_json::from_slice(bytes) {
            Ok(item) => item,
            Err(err) => {
                sink(Record::Error(element_error(
                    &ctx.path,
                    start,
                    &err,
                    "array element",
                )));
                return Ok(());
            }
        };
        let mode = match mode {
            Some(mode) => mode,
            None => match item.kind() {
                Some(Format::LogsJson) => *mode.insert(Format::LogsJson),
                Some(_) => *mode.insert(Format::ListJson),
                None => {
                    not_a_log = true;
                    return Ok(());
                }
            },
        };
        if mode == Format::LogsJson {
            match convert_event(item.into_event()) {
                Ok(event) => log_events.push(event.at_line(start.line)),
                Err(message) => sink(Record::Error(InputError::at(
                    &ctx.path, start.line, message,
                ))),
            }
        } else if item.events.is_some() || item.log.is_some() {
            if let Some(machine) =
                machine_from_item(item, bytes, start, ctx, Format::ListJson, sink)
            {
                sink(Record::Machine(machine));
            }
        } else {
            sink(Record::Error(InputError::at(
                &ctx.path,
                start.line,
                "array element is not a machine object (it has no `events`)",
            )));
        }
        Ok(())
    })?;
    if not_a_log {
        return Ok(Err(NotALog(
            "a JSON array whose elements are neither events nor machines".to_string(),
        )));
    }
    match mode {
        Some(Format::LogsJson) => {
            let last_error = read_trailer(splitter, ctx, sink)?;
            into_time_order(&mut log_events, true);
            sink(Record::Machine(MachineLog {
                machine: ctx.machine.clone(),
                source: ctx.path.clone(),
                format: Format::LogsJson,
                events: log_events,
                last_error_event: last_error,
                recorded: RecordedFlags::default(),
                annotated: true,
            }));
        }
        _ => expect_end(splitter, ctx, sink)?,
    }
    Ok(Ok(()))
}

fn read_object<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    forced: Option<Format>,
    sink: &mut dyn FnMut(Record),
) -> Result<Outcome, SplitError> {
    let mut bytes = Vec::new();
    let start = splitter.read_value(&mut bytes)?;
    let item: RawItem = match serde_json::from_slice(&bytes) {
        Ok(item) => item,
        Err(err) => {
            sink(Record::Error(element_error(&ctx.path, start, &err, "JSON")));
            return Ok(Ok(()));
        }
    };
    let format = match (forced, item.kind()) {
        (Some(format), _) => format,
        (None, Some(kind @ (Format::DescribeJson | Format::EventApi))) => kind,
        (None, _) => {
            return Ok(Err(NotALog(
                "a JSON object with neither `events` (machine) nor `log` (event response)"
                    .to_string(),
            )));
        }
    };
    if item.events.is_none() && item.log.is_none() {
        sink(Record::Error(InputError::at(
            &ctx.path,
            start.line,
            format!("expected {format} JSON, but the object has neither `events` nor `log`"),
        )));
        return Ok(Ok(()));
    }
    if let Some(machine) = machine_from_item(item, &bytes, start, ctx, format, sink) {
        sink(Record::Machine(machine));
    }
    expect_end(splitter, ctx, sink)?;
    Ok(Ok(()))
}

/// Builds a machine from a describe/list object or an event response, naming each bad event.
fn machine_from_item(
    item: RawItem,
    bytes: &[u8],
    start: Position,
    ctx: &FileContext,
    format: Format,
    sink: &mut dyn FnMut(Record),
) -> Option<MachineLog> {
    let (block, log_path): (RawEventBlock, &[&str]) = match item.events {
        Some(block) => (block, &["events", "log"]),
        None => (
            RawEventBlock {
                log: item.log,
                last_error_event: item.last_error_event,
                last_event_time: item.last_event_time,
                crash_loop: item.crash_loop,
                failed_machine_reclaim: item.failed_machine_reclaim,
            },
            &["log"],
        ),
    };
    let machine = match (item.id, format) {
        (Some(id), _) => id.into_owned(),
        (None, Format::ListJson) => {
            sink(Record::Error(InputError::at(
                &ctx.path,
                start.line,
                "machine object without `id`",
            )));
            return None;
        }
        (None, _) => ctx.machine.clone(),
    };
    let mut event_lines: Option<Vec<usize>> = None;
    let mut line_of = |index: usize| -> usize {
        // Only a bad event needs its own line, so the element is scanned again only then.
        let lines = event_lines.get_or_insert_with(|| {
            element_lines_at(bytes, log_path)
                .unwrap_or_default()
                .into_iter()
                .map(|l| l + start.line - 1)
                .collect()
        });
        lines.get(index).copied().unwrap_or(start.line)
    };
    let mut events = Vec::with_capacity(block.log.as_ref().map_or(0, Vec::len));
    for (index, raw) in block.log.unwrap_or_default().into_iter().enumerate() {
        match convert_event(raw) {
            Ok(event) => events.push(event.at_line(start.line)),
            Err(message) => sink(Record::Error(InputError::at(
                &ctx.path,
                line_of(index),
                message,
            ))),
        }
    }
    into_time_order(&mut events, true);
    let last_error_event = match block.last_error_event.map(convert_event) {
        Some(Ok(event)) => Some(event.at_line(start.line)),
        Some(Err(message)) => {
            sink(Record::Error(InputError::at(
                &ctx.path,
                start.line,
                format!("last_error_event: {message}"),
            )));
            None
        }
        None => None,
    };
    let last_event_time = block.last_event_time.and_then(|t| parse_rfc3339(&t).ok());
    Some(MachineLog {
        machine,
        source: ctx.path.clone(),
        format,
        events,
        last_error_event,
        recorded: RecordedFlags {
            last_event_time,
            crash_loop: block.crash_loop,
            failed_machine_reclaim: block.failed_machine_reclaim,
        },
        annotated: true,
    })
}

fn convert_event(raw: RawEvent) -> Result<Event, String> {
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

/// After a `machine logs -o json` array: metalctl's `Recent last error (… ago):` block.
fn read_trailer<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    sink: &mut dyn FnMut(Record),
) -> Result<Option<Event>, SplitError> {
    if splitter.skip_whitespace()?.is_none() {
        return Ok(None);
    }
    let line = splitter.position().line;
    let mut text = Vec::new();
    splitter.read_line(&mut text)?;
    if !text.starts_with(b"Recent last error") {
        sink(Record::Error(InputError::at(
            &ctx.path,
            line,
            "unexpected text after the JSON array (expected `Recent last error (… ago):`)",
        )));
        return Ok(None);
    }
    let mut bytes = Vec::new();
    let start = splitter.read_value(&mut bytes)?;
    let event = match serde_json::from_slice::<RawEvent>(&bytes) {
        Ok(raw) => match convert_event(raw) {
            Ok(event) => Some(event.at_line(start.line)),
            Err(message) => {
                sink(Record::Error(InputError::at(
                    &ctx.path, start.line, message,
                )));
                None
            }
        },
        Err(err) => {
            sink(Record::Error(element_error(
                &ctx.path,
                start,
                &err,
                "last error event",
            )));
            None
        }
    };
    expect_end(splitter, ctx, sink)?;
    Ok(event)
}

fn expect_end<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    sink: &mut dyn FnMut(Record),
) -> Result<(), SplitError> {
    if splitter.skip_whitespace()?.is_some() {
        let position = splitter.position();
        sink(Record::Error(InputError {
            path: ctx.path.clone(),
            line: position.line,
            column: position.column,
            message: "unexpected content after the JSON document".to_string(),
        }));
    }
    Ok(())
}
