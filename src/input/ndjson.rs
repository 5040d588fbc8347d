//! The raw event stream: one `{"machine"|"machine_id"|"id", "time", "event", "message"}` a
//! line, machines interleaved, in any order, with every event the machines sent (Alive and
//! those metal-api swallows included). Events carry no recorded verdicts.
//!
//! A machine's events can come anywhere in the stream, so the stream is grouped in memory
//! before any machine is replayed: memory grows with the stream's events.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;

use serde::Deserialize;

use super::json::{RawEvent, convert_event};
use super::{
    FileContext, Format, InputError, MachineLog, NotALog, Record, RecordedFlags, read_line_capped,
};
use crate::event::Event;

/// One line of the stream.
#[derive(Deserialize)]
pub(crate) struct RawLine<'a> {
    #[serde(borrow, default, alias = "machine_id", alias = "id")]
    pub machine: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub time: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub event: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub message: Option<Cow<'a, str>>,
}

/// Whether a line looks like the start of a raw event stream.
pub(crate) fn looks_like_stream(first_line: &[u8]) -> bool {
    serde_json::from_slice::<RawLine>(first_line)
        .is_ok_and(|l| l.machine.is_some() && (l.event.is_some() || l.time.is_some()))
}

/// Reads the stream, then hands on every machine, sorted by id.
pub(crate) fn read(
    mut reader: impl BufRead,
    ctx: &FileContext,
    sink: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut machines: HashMap<String, (usize, Vec<Event>)> = HashMap::new();
    let mut buf = Vec::new();
    let mut line_no = 0;
    let mut good_lines = 0;
    loop {
        buf.clear();
        line_no += 1;
        match read_line_capped(&mut reader, &mut buf) {
            Ok(None) => break,
            Ok(Some(true)) => {}
            Ok(Some(false)) => {
                sink(Record::Error(InputError::at(
                    &ctx.path,
                    line_no,
                    "line longer than 1 MiB; skipped",
                )));
                continue;
            }
            Err(err) => {
                sink(Record::Error(InputError::at(
                    &ctx.path,
                    line_no,
                    format!("cannot read: {err}"),
                )));
                break;
            }
        }
        let text = buf.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let parsed = serde_json::from_slice::<RawLine>(text)
            .map_err(|err| format!("invalid event line: {err}"))
            .and_then(|line| {
                let machine = line.machine.ok_or("event line without `machine`")?;
                let event = RawEvent {
                    time: line.time,
                    event: line.event,
                    message: line.message,
                };
                Ok((machine.into_owned(), convert_event(event)?))
            });
        match parsed {
            Ok((machine, event)) => {
                good_lines += 1;
                let entry = machines
                    .entry(machine)
                    .or_insert_with(|| (line_no, Vec::new()));
                entry.1.push(event.at_line(line_no));
            }
            Err(message) => sink(Record::Error(InputError::at(&ctx.path, line_no, message))),
        }
    }
    if good_lines == 0 && ctx.options.format.is_none() {
        return Err(NotALog("no event line found".to_string()));
    }
    let mut machines: Vec<_> = machines.into_iter().collect();
    machines.sort_by(|a, b| a.0.cmp(&b.0));
    for (machine, (line, mut events)) in machines {
        // A stream is in arrival order: a stable sort keeps it among equal times.
        events.sort_by_key(|e| e.time);
        sink(Record::Machine(MachineLog {
            machine,
            source: ctx.path.clone(),
            line,
            format: Format::Ndjson,
            events,
            last_error_event: None,
            recorded: RecordedFlags::default(),
            annotated: false,
        }));
    }
    Ok(())
}
