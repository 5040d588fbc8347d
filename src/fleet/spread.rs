//! The lean read spread over the threads: the fleet's machines parted among them by their id
//! (a fixed hash), each part judged on a thread of its own from the lines the reading thread
//! hands on, a machine's lines in the order they came; what each part settled added up, and
//! the parts gathered into one at the end.

use std::hash::BuildHasher;
use std::sync::mpsc::SyncSender;

use foldhash::fast::FixedState;

use super::fold::Folded;
use super::intake::{self, Intake};
use crate::aggregate::Summary;
use crate::input::record::{Record, StreamLines};
use crate::input::{self, InputFile, InputOptions, Problems};
use crate::log::{Format, MachineLog, Shape};

/// A part of the fleet's machines as the lean read keeps them.
pub(super) trait Part: Send + Sized {
    /// No machine yet, judged as this part judges them.
    fn fresh(&self) -> Self;
    /// Takes a record of one of its machines, read from the file read `file`th.
    fn machine(&mut self, log: MachineLog, file: usize);
    /// Takes lines of its machines from the file read `file`th.
    fn lines(&mut self, lines: StreamLines, file: usize);
    /// A file ended: what is settled goes to `settled`.
    fn settle(&mut self, settled: &mut Summary);
    /// Takes another part's machines in (`others`: every other part's, to make room once).
    fn gather(&mut self, others: Vec<Self>);
}

/// How many parts the machines are judged in at most.
const MAX_PARTS: usize = 16;

/// How many pieces of work wait for a part at most: the reader waits for a part that lags.
const QUEUED: usize = 16;

/// The part of the fleet a machine is judged in (by a fixed hash of its id, so that a run
/// parts the fleet as every other run does).
fn part_of(id: &str, parts: usize) -> usize {
    if parts == 1 {
        return 0;
    }
    (FixedState::with_seed(0).hash_one(id) % parts as u64) as usize
}

/// What a part of the fleet is handed to do.
enum Work {
    /// A record of one of its machines, read from the file read `file`th.
    Machine(Box<MachineLog>, usize),
    /// Lines of its machines.
    Lines(StreamLines, usize),
    /// A file ended: what is settled goes to the part's summary.
    Settle,
}

/// The lean read's records filed: each machine's to its part (judged on the reading thread
/// where there is one part, sent to its thread where there are more), a problem where the
/// fold keeps them.
struct Dispatch<'d, P> {
    own: Option<&'d mut P>,
    parts: &'d [SyncSender<Work>],
    file: usize,
    problems: &'d mut Problems,
}

impl<P: Part> Intake for Dispatch<'_, P> {
    fn machine(&mut self, log: MachineLog) {
        match self.own.as_mut() {
            Some(own) => own.machine(log, self.file),
            None => {
                let part = part_of(&log.machine, self.parts.len());
                let _ = self.parts[part].send(Work::Machine(Box::new(log), self.file));
            }
        }
    }

    fn problems(&mut self) -> &mut Problems {
        self.problems
    }

    fn lines(&mut self, lines: StreamLines) {
        if let Some(own) = self.own.as_mut() {
            own.lines(lines, self.file);
            return;
        }
        let parts = self.parts.len();
        let split = lines.split(parts, &|id| part_of(id, parts));
        for (tx, part) in self.parts.iter().zip(split) {
            if !part.is_empty() {
                let _ = tx.send(Work::Lines(part, self.file));
            }
        }
    }
}

/// Reads `order`'s files in parts as `options` say (one part a thread), each part's machines
/// made as `first` makes them; what the parts settled goes to `folded`'s summary, problems and
/// files read to it too. The machines of every part, gathered into `first`.
pub(super) fn read<P: Part>(
    order: &[&InputFile],
    options: &InputOptions,
    first: P,
    folded: &mut Folded<Summary>,
) -> P {
    // The machines parted among the threads by their id: each part judged on a thread of
    // its own, a machine's lines in the order they came (docs/performance.md).
    let parts = options.threads.clamp(1, MAX_PARTS);
    let (all, settled) = std::thread::scope(|scope| {
        // One part is judged on the reading thread; more each on a thread of their own, the
        // reading thread only handing lines on (it also takes the parsed blocks in order).
        let mut senders = Vec::new();
        let mut handles = Vec::new();
        let threads = if parts == 1 { 0 } else { parts };
        for _ in 0..threads {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Work>(QUEUED);
            let mut part = first.fresh();
            handles.push(scope.spawn(move || {
                let mut settled = Summary::default();
                for work in rx {
                    match work {
                        Work::Machine(log, file) => part.machine(*log, file),
                        Work::Lines(lines, file) => part.lines(lines, file),
                        Work::Settle => part.settle(&mut settled),
                    }
                }
                (part, settled)
            }));
            senders.push(tx);
        }
        // The first part's machines gather every part's at the end.
        let (mut own, gather) = if parts == 1 {
            (Some(first), None)
        } else {
            (None, Some(first))
        };
        let mut settled = Summary::default();
        for (index, file) in order.iter().enumerate() {
            let mut format = None;
            let mut skipped = false;
            let mut dispatch = Dispatch {
                own: own.as_mut(),
                parts: &senders,
                file: index,
                problems: &mut folded.problems,
            };
            let opened = input::read_file(file, options, &mut |record| {
                skipped |= matches!(record, Record::Skipped(_));
                if let Some(shape) = shape_of(&record) {
                    format.get_or_insert(shape);
                }
                intake::take_in(record, &mut dispatch);
            });
            if opened && !skipped {
                folded.files.add(format);
            }
            if let Some(own) = own.as_mut() {
                own.settle(&mut settled);
            }
            for tx in &senders {
                // A part that stopped has panicked: its join says so below.
                let _ = tx.send(Work::Settle);
            }
        }
        drop(senders);
        let mut all = own.take().or(gather).expect("the first part");
        let mut others = Vec::new();
        for handle in handles {
            let (part, part_settled) = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            others.push(part);
            settled += part_settled;
        }
        all.gather(others);
        (all, settled)
    });
    folded.value += settled;
    all
}

/// The shape of the file a record says, where it says one (the first record that does
/// names the file's).
fn shape_of(record: &Record) -> Option<Shape> {
    if let Record::Batch(batch) = record {
        return Some(batch.shape().unwrap_or(Shape::of(Format::ListJson)));
    }
    if let Record::Machine(log) = record {
        return Some(log.shape());
    }
    if let Record::Lines(_) = record {
        return Some(Shape::of(Format::Ndjson));
    }
    None
}
