//! What every reader hands on: machines as read from one input, the problems met on the way,
//! and the options that say how to read. Shared by the format readers, merging and the
//! commands; the readers themselves live beside this file.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use std::sync::atomic::AtomicU64;

pub use super::problems::InputError;
use super::problems::PathsTaken;
use super::problems::Skipped;
use super::time::ExtraZone;
use crate::event::Event;
use crate::log::{Format, MachineLog, Shape};

/// What the reader hands on: a machine's log, or a problem it met on the way.
// Records pass one at a time, by value, straight to the fold: boxing every machine would cost
// an allocation each for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Record {
    Machine(MachineLog),
    /// Raw machines of a large file, to be decoded on any thread (see [`super::decode`]).
    Batch(Box<dyn Batch>),
    /// A raw stream's lines, each of a machine, as [`ReadMode::Lines`] hands them on.
    Lines(Box<StreamLines>),
    Error(InputError),
    /// What an ambiguous input was taken for (an empty array): no problem, but said on
    /// stderr and in `inputs.notes`, so that nothing is read without a word.
    Note(InputError),
    /// A file (or directory entry) that is not read, with the reason.
    Skipped(Skipped),
    /// How an input, or some of its values, was read (only with `FSMLOG_TRACE=read`).
    ReadBy {
        path: String,
        taken: PathsTaken,
    },
}

/// A machine ready for replay, its records merged into one log (the fleet merges them:
/// `fleet::merge`), and how many of its events were dropped as duplicates.
#[derive(Debug)]
pub struct Merged {
    pub log: MachineLog,
    /// Events dropped because another record of the machine had them too.
    pub duplicates: u64,
    /// How many records the machine was assembled from (1 when it was not merged).
    pub records: usize,
    /// Ties between raw parts that neither their names nor their times ordered.
    pub notes: Vec<InputError>,
}

/// Raw machines a reader read but has not parsed yet, so that parsing can run on any thread.
/// Each reader of a large format has its own kind.
pub trait Batch: Send + std::fmt::Debug {
    /// Parses the machines, handing on each one and each problem, in input order.
    fn parse(&self, emit: &mut dyn FnMut(Record));
    /// The shape of the machines in the batch, where the reader knows it already.
    fn shape(&self) -> Option<Shape>;
}

/// How to read the inputs.
#[derive(Debug, Clone, Default)]
pub struct InputOptions {
    /// Forces a format instead of detecting it.
    pub format: Option<Format>,
    /// The machine id for single-machine formats instead of the file stem.
    pub machine_id: Option<String>,
    /// Zone abbreviations resolved by `--tz`, before the built-in table.
    pub zones: Vec<ExtraZone>,
    /// Counts the bytes read from files (before decompression), for a progress display.
    pub bytes_read: Option<Arc<AtomicU64>>,
    /// What of each machine to read.
    pub mode: ReadMode,
    /// How many threads a raw stream's lines are parsed on in [`ReadMode::Lines`] (0 or 1:
    /// the reading one).
    pub threads: usize,
}

/// What of each machine a reader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadMode {
    /// Everything the commands report on: events, the recorded flags, where the machine is
    /// and who has it; not what only the audit judges by (see [`ReadMode::Audit`]).
    #[default]
    Whole,
    /// [`ReadMode::Whole`], and what only `issues` judges by: the ASNs of an allocation's
    /// networks (asn-not-unique) and the `ipmi` object (the four BMC types). A reader that
    /// meets them in another mode steps over them unparsed, so that a command that never
    /// judges them never pays for them.
    Audit,
    /// The machines without their events (JSON exports and tables): enough to learn which
    /// machines an input holds, and how many records each has, at a fraction of the cost.
    IdsOnly,
    /// Everything, a raw stream's lines each handed on as a record of its own the moment it
    /// is read (nothing of the stream held): for a fold that judges machines as they are
    /// read. Other formats are read whole.
    Lines,
}

/// Lines of a raw stream in order, each an event or a gap marker of a machine.
#[derive(Debug)]
pub struct StreamLines {
    /// The file, as its problems name it.
    pub(super) path: Arc<str>,
    /// The lines' machines, one after the other.
    pub(super) ids: Arc<str>,
    pub(super) items: Vec<LineItem>,
}

/// One line: its number, its machine, what it says.
#[derive(Debug)]
pub(super) struct LineItem {
    pub line: usize,
    pub id: LineId,
    pub what: StreamLine,
}

/// A line's machine: where it lies in its lines' `ids`.
#[derive(Debug)]
pub(super) struct LineId(pub usize, pub usize);

/// What one line of a stream says of its machine.
#[derive(Debug)]
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

    /// The lines parted among `parts` folds by their machine (`part_of` its id gives the
    /// part): each part keeps its lines' order, and a machine's lines are all in one.
    pub fn split(self, parts: usize, part_of: &dyn Fn(&str) -> usize) -> Vec<StreamLines> {
        let mut split: Vec<StreamLines> = (0..parts)
            .map(|_| StreamLines {
                path: Arc::clone(&self.path),
                ids: Arc::clone(&self.ids),
                items: Vec::with_capacity(self.items.len() / parts + 1),
            })
            .collect();
        for item in self.items {
            let part = part_of(&self.ids[item.id.0..item.id.1]);
            split[part].items.push(item);
        }
        split
    }

    /// The file the lines are in, shared.
    pub fn shared_path(&self) -> Arc<str> {
        Arc::clone(&self.path)
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Hands on each line in order: its number, its machine and what it says.
    pub fn each(self, take: &mut dyn FnMut(usize, &str, StreamLine)) {
        for item in self.items {
            let id = &self.ids[item.id.0..item.id.1];
            take(item.line, id, item.what);
        }
    }

    /// The lines as the records of one line each that the line-at-a-time reader hands on
    /// (for a reader of records that is not the lean fold).
    pub fn records(self, emit: &mut dyn FnMut(Record)) {
        let path = Arc::clone(&self.path);
        self.each(&mut |line, id, what| {
            let mut log = MachineLog::new(id.to_string(), &path, line, Format::Ndjson);
            log.annotated = false;
            match what {
                StreamLine::Event(event) => log.events.push(event),
                StreamLine::Gap(time) => log.gaps.push(time),
            }
            emit(Record::Machine(log));
        });
    }
}
