//! The raw event stream: one `{"machine"|"machine_id"|"id", "time", "event", "message"}` a
//! line, machines interleaved, in any order, with every event the machines sent (Alive and
//! those metal-api swallows included). Events carry no recorded verdicts.
//!
//! A collector that may have missed events writes a gap marker instead,
//! `{"machine", "time", "gap": true}`: the machine's events before its time were lost, so
//! the replay begins again at a seam there (see `fleet::merge`).
//!
//! A machine's events can come anywhere in the stream, so the stream is grouped in memory
//! before any machine is replayed: memory grows with the stream's events. A fold that judges
//! each machine as its lines come (`ReadMode::Lines`, the history read lean) gets every line
//! as a record of its own instead, the moment it is read, and nothing is held.
//!
//! A line is read where it lies in the reader's buffer, and the compact four-key line a
//! collector writes straight from its bytes (`fast::stream_line`); anything else by serde.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use foldhash::fast::RandomState;

use super::lines::parse_line;
use super::raw::RawLine;
use crate::event::Event;
use crate::input::context::{FileContext, MAX_LINE, NotALog, read_line_capped};
use crate::input::record::{InputError, ReadMode, Record, StreamLine};
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
    reader: impl BufRead,
    ctx: &FileContext,
    emit: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    read_lines(reader, ctx, emit, true)
}

/// Reads the stream, each line straight from its bytes where `direct` allows and the line is
/// the compact four-key line (`fast::stream_line`), by serde otherwise.
fn read_lines(
    mut reader: impl BufRead,
    ctx: &FileContext,
    emit: &mut dyn FnMut(Record),
    direct: bool,
) -> Result<(), NotALog> {
    if ctx.options.mode == ReadMode::Lines {
        let good = super::lines::read(reader, ctx, direct, emit);
        if good == 0 && ctx.options.format.is_none() {
            return Err(NotALog("no event line found".to_string()));
        }
        return Ok(());
    }
    let mut stream = Stream {
        direct,
        ..Stream::default()
    };
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        line_no += 1;
        // A line that lies whole in the reader's buffer is read where it lies; only one that
        // runs past the buffer's end (or is too long) is copied out.
        let whole = match reader.fill_buf() {
            Ok([]) => break,
            Ok(chunk) => memchr::memchr(b'\n', chunk)
                .filter(|end| *end < MAX_LINE)
                .map(|end| {
                    stream.line(&chunk[..end], ctx, line_no, emit);
                    end + 1
                }),
            Err(err) => {
                emit(Record::Error(InputError::at(
                    &ctx.path,
                    line_no,
                    format!("cannot read: {err}"),
                )));
                break;
            }
        };
        if let Some(taken) = whole {
            reader.consume(taken);
            continue;
        }
        buf.clear();
        match read_line_capped(&mut reader, &mut buf) {
            Ok(None) => break,
            Ok(Some(true)) => stream.line(&buf, ctx, line_no, emit),
            Ok(Some(false)) => {
                emit(Record::Error(InputError::at(
                    &ctx.path,
                    line_no,
                    "line longer than 1 MiB; skipped",
                )));
            }
            Err(err) => {
                emit(Record::Error(InputError::at(
                    &ctx.path,
                    line_no,
                    format!("cannot read: {err}"),
                )));
                break;
            }
        }
    }
    if stream.good_lines == 0 && ctx.options.format.is_none() {
        return Err(NotALog("no event line found".to_string()));
    }
    let mut machines: Vec<_> = stream.machines.into_iter().collect();
    machines.sort_by(|a, b| a.0.cmp(&b.0));
    for (machine, mut held) in machines {
        // A stream is in arrival order: a stable sort keeps it among equal times.
        held.events.sort_by_key(|e| e.time);
        held.gaps.sort();
        held.gaps.dedup();
        let mut log = MachineLog::new(machine, &ctx.path, held.line, Format::Ndjson);
        log.events = held.events;
        log.gaps = held.gaps;
        log.annotated = false;
        emit(Record::Machine(log));
    }
    Ok(())
}

/// Whether reading `bytes` as a stream with each line straight from its bytes hands on
/// exactly the records that reading every line with serde does (machines, lines, problems,
/// in the same order), held whole and line by line in blocks on several threads
/// (`lines::blocks_agree`). For the differential property test; the reader never calls it.
pub fn stream_agrees(bytes: &[u8]) -> bool {
    let options = crate::input::record::InputOptions {
        format: Some(Format::Ndjson),
        ..Default::default()
    };
    let ctx = FileContext {
        path: "stream.ndjson".to_string(),
        machine: "stream".to_string(),
        options: &options,
        read_ahead: true,
        named: true,
    };
    let records = |direct: bool| {
        let mut out = Vec::new();
        // A small buffer, so that lines also run past its end.
        let reader = std::io::BufReader::with_capacity(64, bytes);
        let read = read_lines(reader, &ctx, &mut |r| out.push(format!("{r:?}")), direct);
        (read.is_ok(), out)
    };
    records(true) == records(false) && super::lines::blocks_agree(bytes)
}

/// The stream as read so far: each machine's lines, the messages shared among its events.
#[derive(Default)]
struct Stream {
    /// Whether a line may be read straight from its bytes.
    direct: bool,
    /// By foldhash (randomly seeded, as std's SipHash is, at a fraction of its cost a line).
    machines: HashMap<String, Held, RandomState>,
    messages: HashSet<Arc<str>, RandomState>,
    good_lines: usize,
}

impl Stream {
    /// Takes one line (with or without its line end).
    fn line(
        &mut self,
        bytes: &[u8],
        ctx: &FileContext,
        line_no: usize,
        emit: &mut dyn FnMut(Record),
    ) {
        let text = bytes.trim_ascii();
        if text.is_empty() {
            return;
        }
        match parse_line(text, self.direct) {
            Ok((machine, StreamLine::Gap(time))) => {
                self.good_lines += 1;
                entry(&mut self.machines, machine.0, line_no)
                    .gaps
                    .push(time);
            }
            Ok((machine, StreamLine::Event(mut event))) => {
                self.good_lines += 1;
                // The whole stream is held until it ends: share each distinct message (there
                // are few) instead of keeping a copy per event.
                match self.messages.get(&*event.message) {
                    Some(shared) => event.message = Arc::clone(shared),
                    None => {
                        self.messages.insert(Arc::clone(&event.message));
                    }
                }
                let event = event.at_line(line_no);
                entry(&mut self.machines, machine.0, line_no)
                    .events
                    .push(event);
            }
            Err(message) => emit(Record::Error(InputError::at(&ctx.path, line_no, message))),
        }
    }
}

/// A machine's lines as the stream is read: the line it first appears on, its events in
/// arrival order, its gap markers' times.
struct Held {
    line: usize,
    events: Vec<Event>,
    gaps: Vec<DateTime<Utc>>,
}

/// The machine's lines so far, begun at `line` when it is new.
fn entry<'m>(
    machines: &'m mut HashMap<String, Held, RandomState>,
    machine: Cow<str>,
    line: usize,
) -> &'m mut Held {
    // Looked up by reference first: most lines name a machine seen already.
    if !machines.contains_key(&*machine) {
        machines.insert(
            machine.to_string(),
            Held {
                line,
                events: Vec::new(),
                gaps: Vec::new(),
            },
        );
    }
    machines.get_mut(&*machine).expect("inserted above")
}
