//! The raw event stream: one `{"machine"|"machine_id"|"id", "time", "event", "message"}` a
//! line, machines interleaved, in any order, with every event the machines sent (Alive and
//! those metal-api swallows included). Events carry no recorded verdicts.
//!
//! A machine's events can come anywhere in the stream, so the stream is grouped in memory
//! before any machine is replayed: memory grows with the stream's events.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::sync::Arc;

use super::raw::{RawLine, convert_event};
use crate::event::Event;
use crate::input::context::{FileContext, NotALog, read_line_capped};
use crate::input::record::{InputError, Record};
use crate::log::{Format, MachineLog};

/// Whether the first whole lines of a file look like a raw event stream (so that one damaged
/// line does not turn the stream into "one broken JSON document").
pub(crate) fn looks_like_stream(head: &[u8]) -> bool {
    // A lone `{` on the first line is a pretty-printed document, never a stream line.
    let first = head
        .split(|&b| b == b'\n')
        .find(|l| !l.trim_ascii().is_empty());
    if first.is_some_and(|l| l.trim_ascii() == b"{") {
        return false;
    }
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty());
    let complete = head.iter().filter(|&&b| b == b'\n').count();
    let sample: Vec<&[u8]> = lines.by_ref().take(complete.clamp(1, 8)).collect();
    // Most lines open an object (damaged ones may not), and one of them is a whole event: a
    // pretty-printed document has lines like `"id": …` or a lone `{` instead.
    let object_lines = sample.iter().filter(|l| l.first() == Some(&b'{')).count();
    object_lines * 2 > sample.len()
        && sample
            .iter()
            .any(|l| serde_json::from_slice::<RawLine>(l).is_ok_and(|r| r.is_event()))
}

/// Reads the stream, then hands on every machine, sorted by id.
pub(crate) fn read(
    mut reader: impl BufRead,
    ctx: &FileContext,
    sink: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut machines: HashMap<String, (usize, Vec<Event>)> = HashMap::new();
    let mut messages: HashSet<Arc<str>> = HashSet::new();
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
                let (machine, event) = line.machine();
                let machine = machine.ok_or("event line without `machine`")?;
                Ok((machine, convert_event(event)?))
            });
        match parsed {
            Ok((machine, mut event)) => {
                good_lines += 1;
                // The whole stream is held until it ends: share each distinct message (there
                // are few) instead of keeping a copy per event.
                match messages.get(&*event.message) {
                    Some(shared) => event.message = Arc::clone(shared),
                    None => {
                        messages.insert(Arc::clone(&event.message));
                    }
                }
                let event = event.at_line(line_no);
                match machines.get_mut(&*machine) {
                    Some(entry) => entry.1.push(event),
                    None => {
                        machines.insert(machine.0.into_owned(), (line_no, vec![event]));
                    }
                }
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
        let mut log = MachineLog::new(machine, &ctx.path, line, Format::Ndjson);
        log.events = events;
        log.annotated = false;
        sink(Record::Machine(log));
    }
    Ok(())
}
