//! A raw stream read line by line for the lean fold (`ReadMode::Lines`): the stream cut into
//! blocks of whole lines on this thread, the blocks' lines parsed on every thread the options
//! give (`InputOptions::threads`), and handed on in the stream's order as [`StreamLines`],
//! compact (a line's machine is a range of its block's bytes, not a copy). Every line is
//! parsed as the line-at-a-time reader parses it, and every problem named at the same line
//! in the same order, so that the records are the same whatever the number of threads.

use std::collections::{HashMap, VecDeque};
use std::io::BufRead;
use std::sync::{Arc, Mutex, mpsc};

use chrono::{DateTime, Utc};

use super::context::{FileContext, MAX_LINE};
use super::ndjson::{Line, parse_line};
use super::record::{InputError, Record};
use crate::event::Event;
use crate::log::{Format, MachineLog};

/// How many bytes of whole lines a block holds (about 7,000 of a collector's lines).
const BLOCK: usize = 1 << 20;

const TOO_LONG: &str = "line longer than 1 MiB; skipped";

/// Lines of a raw stream in order, each an event or a gap marker of a machine.
#[derive(Debug)]
pub struct StreamLines {
    /// The file, as its problems name it.
    path: Arc<str>,
    bytes: Arc<Vec<u8>>,
    items: Vec<Item>,
}

/// One line: its number, its machine, what it says.
#[derive(Debug)]
struct Item {
    line: usize,
    id: Id,
    what: Line,
}

/// A line's machine: where it lies in the block's bytes, or decoded (it held an escape).
#[derive(Debug)]
enum Id {
    At(u32, u32),
    Owned(String),
}

/// What one line of a stream says of its machine.
pub enum StreamLine {
    Event(Event),
    /// A gap marker's time.
    Gap(DateTime<Utc>),
}

impl StreamLines {
    /// The file the lines are in, as its problems name it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Hands on each line in order: its number, its machine and what it says.
    pub fn each(self, take: &mut dyn FnMut(usize, &str, StreamLine)) {
        for item in self.items {
            let id = match &item.id {
                Id::At(start, end) => {
                    // Cut from a line that was read as UTF-8 at both ends of a string.
                    std::str::from_utf8(&self.bytes[*start as usize..*end as usize])
                        .expect("a machine read from its line")
                }
                Id::Owned(id) => id.as_str(),
            };
            let what = match item.what {
                Line::Event(event) => StreamLine::Event(event),
                Line::Gap(time) => StreamLine::Gap(time),
            };
            take(item.line, id, what);
        }
    }

    /// The lines as the records of one line each that the line-at-a-time reader hands on
    /// (for a reader of records that is not the lean fold).
    pub fn records(self, sink: &mut dyn FnMut(Record)) {
        let path = Arc::clone(&self.path);
        self.each(&mut |line, id, what| {
            let mut log = MachineLog::new(id.to_string(), &path, line, Format::Ndjson);
            log.annotated = false;
            match what {
                StreamLine::Event(event) => log.events.push(event),
                StreamLine::Gap(time) => log.gaps.push(time),
            }
            sink(Record::Machine(log));
        });
    }
}

/// Reads the stream's lines as blocks, parsed on `ctx.options.threads` threads, handing on
/// lines and problems in order; how many lines were good (an event or a gap marker).
pub(super) fn read(
    reader: impl BufRead,
    ctx: &FileContext,
    direct: bool,
    sink: &mut dyn FnMut(Record),
) -> usize {
    let mut cutter = Cutter {
        reader,
        carry: Vec::new(),
        skipping: false,
        done: false,
    };
    let mut out = Emitter {
        path: &ctx.path,
        shared: Arc::from(ctx.path.as_str()),
        next_line: 1,
        good: 0,
        sink,
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
    let (jobs, queue) = mpsc::sync_channel::<(usize, Vec<u8>)>(threads * 2);
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
            while !cutter.done && in_flight < threads * 2 {
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
        block.reserve(BLOCK + (1 << 16));
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
            if line_start >= BLOCK {
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
    bytes: Vec<u8>,
    items: Vec<Item>,
    problems: Vec<(usize, String)>,
    /// How many lines the block holds.
    lines: usize,
}

/// Parses a block's lines, numbered from 0.
fn parse(bytes: Vec<u8>, direct: bool) -> Parsed {
    let mut items = Vec::with_capacity(bytes.len() / 128);
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
                let base = bytes.as_ptr() as usize;
                let id = match machine.0 {
                    std::borrow::Cow::Borrowed(id) => {
                        let at = (id.as_ptr() as usize).wrapping_sub(base);
                        match u32::try_from(at).ok().zip(u32::try_from(at + id.len()).ok()) {
                            Some((a, b)) if (b as usize) <= bytes.len() => Id::At(a, b),
                            _ => Id::Owned(id.to_string()),
                        }
                    }
                    std::borrow::Cow::Owned(id) => Id::Owned(id),
                };
                items.push(Item { line, id, what });
            }
            Err(message) => problems.push((line, message)),
        }
    }
    Parsed {
        bytes,
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
    sink: &'s mut dyn FnMut(Record),
}

impl Emitter<'_, '_> {
    /// A piece that is no block: a line too long, or the failure that ends the stream.
    fn problem(&mut self, piece: Piece) {
        match piece {
            Piece::Lines(_) => {}
            Piece::TooLong => {
                (self.sink)(Record::Error(InputError::at(
                    self.path,
                    self.next_line,
                    TOO_LONG,
                )));
                self.next_line += 1;
            }
            Piece::Failed(message) => {
                (self.sink)(Record::Error(InputError::at(
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
        let bytes = Arc::new(parsed.bytes);
        let mut items = parsed.items;
        for item in &mut items {
            item.line += base;
            if let Line::Event(event) = &mut item.what {
                event.line = item.line;
            }
        }
        if parsed.problems.is_empty() {
            self.lines(&bytes, items);
            return;
        }
        // A block's lines broken where a problem lies between them.
        let mut items = items.into_iter().peekable();
        for (line, message) in parsed.problems {
            let before = std::iter::from_fn(|| items.next_if(|i| i.line < base + line));
            self.lines(&bytes, before.collect());
            (self.sink)(Record::Error(InputError::at(self.path, base + line, message)));
        }
        self.lines(&bytes, items.collect());
    }

    fn lines(&mut self, bytes: &Arc<Vec<u8>>, items: Vec<Item>) {
        if !items.is_empty() {
            (self.sink)(Record::Lines(Box::new(StreamLines {
                path: Arc::clone(&self.shared),
                bytes: Arc::clone(bytes),
                items,
            })));
        }
    }
}
