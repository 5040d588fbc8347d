//! A raw stream read line by line for the lean fold (`ReadMode::Lines`): the stream cut into
//! blocks of whole lines on this thread, the blocks' lines parsed on every thread the options
//! give (`InputOptions::threads`), and handed on in the stream's order as [`StreamLines`],
//! compact (a block's machines in one string, not a string a line). Every line is
//! parsed as the line-at-a-time reader parses it, and every problem named at the same line
//! in the same order, so that the records are the same whatever the number of threads.

use std::collections::{HashMap, VecDeque};
use std::io::BufRead;
use std::sync::{Arc, Mutex, mpsc};

use chrono::{DateTime, Utc};

use super::context::{FileContext, MAX_LINE};
use super::fast;
use super::raw::lenient::Text;
use super::raw::{RawEvent, RawLine, convert_event};
use super::record::{
    InputError, InputOptions, LineId, LineItem, ReadMode, Record, StreamLine, StreamLines,
};
use super::time::parse_rfc3339;
use crate::log::Format;

/// How many bytes of whole lines a block holds (about 900 of a collector's lines): small
/// enough that a day file is many blocks, so that one thread judges a block while the others
/// parse the next.
const BLOCK: usize = 128 << 10;

const TOO_LONG: &str = "line longer than 1 MiB; skipped";

/// Reads the stream's lines as blocks, parsed on `ctx.options.threads` threads, handing on
/// lines and problems in order; how many lines were good (an event or a gap marker).
pub(super) fn read(
    reader: impl BufRead,
    ctx: &FileContext,
    direct: bool,
    emit: &mut dyn FnMut(Record),
) -> usize {
    read_blocks(reader, ctx, direct, BLOCK, emit)
}

/// [`read`] with blocks of about `block` bytes.
fn read_blocks(
    reader: impl BufRead,
    ctx: &FileContext,
    direct: bool,
    block: usize,
    emit: &mut dyn FnMut(Record),
) -> usize {
    let mut cutter = Cutter {
        reader,
        block,
        carry: Vec::new(),
        skipping: false,
        done: false,
    };
    let mut out = Emitter {
        path: &ctx.path,
        shared: Arc::from(ctx.path.as_str()),
        next_line: 1,
        good: 0,
        emit,
    };
    let threads = ctx.options.threads.max(1);
    if threads == 1 {
        let mut pieces = VecDeque::new();
        while !cutter.done {
            cutter.next(&mut pieces);
            for piece in pieces.drain(..) {
                match piece {
                    Piece::Lines(bytes) => out.parsed(parse(bytes, direct)),
                    other => out.problem(other),
                }
            }
        }
        return out.good;
    }
    let (jobs, queue) = mpsc::sync_channel::<(usize, Vec<u8>)>(threads * 4);
    let queue = Mutex::new(queue);
    let (done, parsed) = mpsc::channel::<(usize, Parsed)>();
    std::thread::scope(|scope| {
        for _ in 1..threads {
            let (queue, done) = (&queue, done.clone());
            scope.spawn(move || {
                loop {
                    let job = queue.lock().expect("no worker panics").recv();
                    let Ok((seq, bytes)) = job else { break };
                    if done.send((seq, parse(bytes, direct))).is_err() {
                        break;
                    }
                }
            });
        }
        // Pieces in the stream's order; a block is parsed by whichever thread takes it
        // first, this one too while it waits.
        let mut order: VecDeque<Pending> = VecDeque::new();
        let mut ready: HashMap<usize, Parsed> = HashMap::new();
        let (mut sent, mut in_flight) = (0, 0);
        let mut pieces = VecDeque::new();
        loop {
            while !cutter.done && in_flight < threads * 4 {
                cutter.next(&mut pieces);
                for piece in pieces.drain(..) {
                    match piece {
                        Piece::Lines(bytes) => {
                            jobs.send((sent, bytes)).expect("the workers run");
                            order.push_back(Pending::Block(sent));
                            sent += 1;
                            in_flight += 1;
                        }
                        other => order.push_back(Pending::Other(other)),
                    }
                }
            }
            match order.pop_front() {
                None => break,
                Some(Pending::Other(piece)) => out.problem(piece),
                Some(Pending::Block(seq)) => {
                    let block = loop {
                        if let Some(block) = ready.remove(&seq) {
                            break block;
                        }
                        // Never waiting for the queue: a worker holds it while it waits for
                        // a block, and only this thread sends them.
                        let job = queue.try_lock().ok().and_then(|q| q.try_recv().ok());
                        if let Some((other, bytes)) = job {
                            ready.insert(other, parse(bytes, direct));
                            continue;
                        }
                        let (other, block) = parsed.recv().expect("the workers run");
                        ready.insert(other, block);
                    };
                    in_flight -= 1;
                    out.parsed(block);
                }
            }
        }
        drop(jobs);
    });
    out.good
}

/// Whether reading `bytes` in small blocks on three threads, each line straight from its
/// bytes where it can be, hands on exactly the records that reading them on one thread by
/// serde does (for the differential property test, through `ndjson::stream_agrees`).
pub(super) fn blocks_agree(bytes: &[u8]) -> bool {
    let records = |direct: bool, threads: usize, block: usize| {
        let options = InputOptions {
            format: Some(Format::Ndjson),
            mode: ReadMode::Lines,
            threads,
            ..InputOptions::default()
        };
        let ctx = FileContext {
            path: "stream.ndjson".to_string(),
            machine: "stream".to_string(),
            options: &options,
            read_ahead: true,
            named: true,
        };
        let mut out = Vec::new();
        let reader = std::io::BufReader::with_capacity(64, bytes);
        read_blocks(reader, &ctx, direct, block, &mut |record| match record {
            Record::Lines(lines) => lines.records(&mut |r| out.push(format!("{r:?}"))),
            other => out.push(format!("{other:?}")),
        });
        out
    };
    records(true, 3, 61) == records(false, 1, BLOCK)
}

/// A piece of the stream, in order: a block of whole lines, a line too long to read, or
/// the end of reading where the input failed.
enum Piece {
    Lines(Vec<u8>),
    TooLong,
    Failed(String),
}

/// A piece whose block is still being parsed.
enum Pending {
    Block(usize),
    Other(Piece),
}

/// Cuts the stream into blocks at line ends.
struct Cutter<R> {
    reader: R,
    /// How many bytes a block holds at least (unless the stream ends).
    block: usize,
    /// The start of a line the last block did not hold whole.
    carry: Vec<u8>,
    /// Within a line too long to read, until its end.
    skipping: bool,
    done: bool,
}

impl<R: BufRead> Cutter<R> {
    /// Adds the next pieces (at least one, unless the stream has ended).
    fn next(&mut self, pieces: &mut VecDeque<Piece>) {
        let mut block = std::mem::take(&mut self.carry);
        block.reserve(self.block + (64 << 10));
        // Where the line the block ends in begins.
        let mut line_start = 0;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(err) => {
                    // A line cut off by the failure is not read.
                    block.truncate(line_start);
                    if !block.is_empty() {
                        pieces.push_back(Piece::Lines(block));
                    }
                    pieces.push_back(Piece::Failed(format!("cannot read: {err}")));
                    self.done = true;
                    return;
                }
            };
            if chunk.is_empty() {
                if self.skipping {
                    pieces.push_back(Piece::TooLong);
                }
                if !block.is_empty() {
                    pieces.push_back(Piece::Lines(block));
                }
                self.done = true;
                return;
            }
            if self.skipping {
                let taken = match memchr::memchr(b'\n', chunk) {
                    Some(end) => {
                        self.skipping = false;
                        end + 1
                    }
                    None => chunk.len(),
                };
                self.reader.consume(taken);
                if !self.skipping {
                    pieces.push_back(Piece::TooLong);
                    return;
                }
                continue;
            }
            let taken = chunk.len();
            let before = block.len();
            block.extend_from_slice(chunk);
            self.reader.consume(taken);
            if let Some(end) = memchr::memrchr(b'\n', &block[before..]) {
                line_start = before + end + 1;
            }
            // A line that is no longer whole-able: longer than a line may be even if it
            // ended at the stream's end.
            if block.len() - line_start > MAX_LINE {
                block.truncate(line_start);
                if !block.is_empty() {
                    pieces.push_back(Piece::Lines(block));
                }
                self.skipping = true;
                return;
            }
            if line_start >= self.block {
                self.carry = block[line_start..].to_vec();
                block.truncate(line_start);
                pieces.push_back(Piece::Lines(block));
                return;
            }
        }
    }
}

/// A block's lines parsed: its good lines, and its problems (by their line in the block).
struct Parsed {
    ids: Arc<str>,
    items: Vec<LineItem>,
    problems: Vec<(usize, String)>,
    /// How many lines the block holds.
    lines: usize,
}

/// Parses a block's lines, numbered from 0.
fn parse(bytes: Vec<u8>, direct: bool) -> Parsed {
    let mut items = Vec::with_capacity(bytes.len() / 128);
    // The machines' ids one after the other: the reading thread takes each as it lies there.
    let mut ids = String::with_capacity(bytes.len() / 4);
    let mut problems = Vec::new();
    let mut lines = 0;
    let mut start = 0;
    while start < bytes.len() {
        let (end, next) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(at) => (start + at, start + at + 1),
            None => (bytes.len(), bytes.len()),
        };
        let line = lines;
        lines += 1;
        let raw = &bytes[start..end];
        start = next;
        // A line with its end at MAX_LINE or beyond is too long, as the line-at-a-time
        // reader counts (the last line without an end may be MAX_LINE long).
        if next > end && raw.len() >= MAX_LINE {
            problems.push((line, TOO_LONG.to_string()));
            continue;
        }
        let text = raw.trim_ascii();
        if text.is_empty() {
            continue;
        }
        match parse_line(text, direct) {
            Ok((machine, what)) => {
                let start = ids.len();
                ids.push_str(&machine);
                let id = LineId(start, ids.len());
                items.push(LineItem { line, id, what });
            }
            Err(message) => problems.push((line, message)),
        }
    }
    Parsed {
        ids: Arc::from(ids),
        items,
        problems,
        lines,
    }
}

/// Hands parsed pieces on in order, each line numbered in the stream.
struct Emitter<'a, 's> {
    path: &'a str,
    shared: Arc<str>,
    next_line: usize,
    good: usize,
    emit: &'s mut dyn FnMut(Record),
}

impl Emitter<'_, '_> {
    /// A piece that is no block: a line too long, or the failure that ends the stream.
    fn problem(&mut self, piece: Piece) {
        match piece {
            Piece::Lines(_) => {}
            Piece::TooLong => {
                (self.emit)(Record::Error(InputError::at(
                    self.path,
                    self.next_line,
                    TOO_LONG,
                )));
                self.next_line += 1;
            }
            Piece::Failed(message) => {
                (self.emit)(Record::Error(InputError::at(
                    self.path,
                    self.next_line,
                    message,
                )));
            }
        }
    }

    /// A parsed block: its lines, broken where a problem lies between them.
    fn parsed(&mut self, parsed: Parsed) {
        let base = self.next_line;
        self.next_line += parsed.lines;
        self.good += parsed.items.len();
        let ids = parsed.ids;
        let mut items = parsed.items;
        for item in &mut items {
            item.line += base;
            if let StreamLine::Event(event) = &mut item.what {
                event.line = item.line;
            }
        }
        if parsed.problems.is_empty() {
            self.lines(&ids, items);
            return;
        }
        // A block's lines broken where a problem lies between them.
        let mut items = items.into_iter().peekable();
        for (line, message) in parsed.problems {
            let before = std::iter::from_fn(|| items.next_if(|i| i.line < base + line));
            self.lines(&ids, before.collect());
            (self.emit)(Record::Error(InputError::at(
                self.path,
                base + line,
                message,
            )));
        }
        self.lines(&ids, items.collect());
    }

    fn lines(&mut self, ids: &Arc<str>, items: Vec<LineItem>) {
        if !items.is_empty() {
            (self.emit)(Record::Lines(Box::new(StreamLines {
                path: Arc::clone(&self.shared),
                ids: Arc::clone(ids),
                items,
            })));
        }
    }
}

/// A line (without surrounding white space): its machine, and its event or gap marker;
/// straight from its bytes where `direct` allows and the line is the compact four-key line,
/// by serde otherwise.
pub(super) fn parse_line(text: &[u8], direct: bool) -> Result<(Text<'_>, StreamLine), String> {
    let fast = if direct {
        fast::stream_line(text)
    } else {
        None
    };
    match fast {
        Some((machine, event)) => convert_event(event).map(|e| (machine, StreamLine::Event(e))),
        None => careful(text),
    }
}

/// A line read by serde: its machine, and its event or gap marker.
fn careful(text: &[u8]) -> Result<(Text<'_>, StreamLine), String> {
    serde_json::from_slice::<RawLine>(text)
        .map_err(|err| format!("invalid event line: {err}"))
        .and_then(|line| {
            let gap = line.is_gap();
            let (machine, event) = line.machine();
            let machine = machine.ok_or("event line without `machine`")?;
            if gap {
                return Ok((machine, StreamLine::Gap(gap_time(event)?)));
            }
            Ok((machine, StreamLine::Event(convert_event(event)?)))
        })
}

/// A gap marker's time; a marker carries no event (it says that events were lost).
fn gap_time(line: RawEvent) -> Result<DateTime<Utc>, String> {
    if line.event.is_some() {
        return Err("a gap marker (`\"gap\": true`) carries no `event`".to_string());
    }
    let time = line.time.ok_or("gap marker without `time`")?;
    parse_rfc3339(&time)
}

#[cfg(test)]
#[path = "lines_tests.rs"]
mod tests;
