//! The fold of every machine into a tally, as a sequence of [`Plan`]s; and one pass over the
//! inputs as a plan says: every file read on the worker threads, each
//! machine handed to the command's closure, the tallies added up. Whatever the number of
//! threads or the timing, the result is the same.

use super::keep::{Keep, Kept};
use std::ops::AddAssign;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};

use rayon::prelude::*;

use super::inputs::Inputs;
use super::intake::{self, Intake};
use super::merge::{self, Merged};
use super::plan::Plan;
use super::progress::Progress;
use crate::input;
use crate::input::record::{Batch, Record};
use crate::input::{FilesRead, Problems};
use crate::log::{Format, MachineLog, Shape};

/// What a pass computed, and what reading met on the way.
#[derive(Default)]
pub struct Folded<T> {
    /// What the command's closure added up.
    pub value: T,
    pub problems: Problems,
    pub files: FilesRead,
    /// Machines kept, and left out, by [`Inputs::keep`].
    pub kept: Kept,
}

impl<T: std::ops::AddAssign> std::ops::AddAssign for Folded<T> {
    fn add_assign(&mut self, other: Folded<T>) {
        self.value += other.value;
        self.problems += other.problems;
        self.files += other.files;
        self.kept += other.kept;
    }
}

impl Inputs {
    /// Reads every input in parallel and folds each machine into a tally; the result does
    /// not depend on the number of threads, on timing, or on how the machines are split into
    /// files. The passes are [`Plan`]s: the first takes every record as a machine and counts
    /// each machine's records; only when a machine has several does a second pass (over
    /// spooled copies of streams) merge them. Batches of a large array are decoded, replayed
    /// and folded on every core while the file's thread reads on (see [`pass`]).
    pub fn fold<T, F>(&self, per_machine: F) -> Folded<T>
    where
        T: Default + AddAssign + Send,
        F: Fn(&mut T, Merged) + Sync,
    {
        let mut learning_files = !self.repeats_known();
        let mut plan = Plan::first(self);
        let mut folded = self.pass(&plan, &per_machine);
        while let Some(next) = plan.next(self, learning_files) {
            learning_files = false;
            plan = next;
            folded = self.pass(&plan, &per_machine);
        }
        self.finish(&mut folded);
        folded
    }

    /// What every fold adds to the problems at its end: the filter's note and misnamed
    /// machines, the inputs' own errors and skipped files, all sorted.
    pub(super) fn finish<T>(&self, folded: &mut Folded<T>) {
        if !self.keep.is_all() {
            let note = self.keep.note(&folded.kept);
            folded.problems.notes.push(note);
        }
        let misnamed = self.keep.misnamed(&folded.kept);
        folded.problems.errors.extend(misnamed);
        folded.problems.errors.extend(self.errors.iter().cloned());
        folded.problems.skipped.extend(self.skipped_all());
        folded.problems.sort();
    }

    /// One pass over the inputs, with a progress bar where one is wanted.
    fn pass<T, F>(&self, plan: &Plan, per_machine: &F) -> Folded<T>
    where
        T: Default + AddAssign + Send,
        F: Fn(&mut T, Merged) + Sync,
    {
        let progress = match &self.options.bytes_read {
            Some(counter) => {
                counter.store(0, Ordering::Relaxed);
                let sizes = self.files.iter().filter_map(|f| f.size()).sum();
                Progress::start(Arc::clone(counter), sizes)
            }
            None => Progress::none(),
        };
        let folded = self.install(|| pass(self, plan, per_machine));
        progress.finish();
        folded
    }
}

/// Batches of one file being decoded at once, per worker thread: enough to keep every core
/// busy while the file's thread reads on, few enough that memory stays bounded.
const IN_FLIGHT_PER_THREAD: usize = 2;

/// Runs one pass: each file as the plan says, machines merged by the plan's merger.
pub(super) fn pass<T, F>(inputs: &Inputs, plan: &Plan, per_machine: &F) -> Folded<T>
where
    T: Default + std::ops::AddAssign + Send,
    F: Fn(&mut T, Merged) + Sync,
{
    let handler = Handler {
        plan,
        per_machine,
        keep: &inputs.keep,
    };
    let limit = IN_FLIGHT_PER_THREAD * rayon::current_num_threads().max(1);
    // Files fold into one tally per run of files a worker takes on (rayon's splits), not a
    // tally each: a directory of small files would otherwise build and merge one per file.
    let read_one = |mut folded: Folded<T>, file: &input::InputFile| {
        // Each decoded batch adds itself here as it finishes, so that memory holds only the
        // batches in flight, not one tally per batch of a large file.
        let decoded: Mutex<Folded<T>> = Mutex::new(Folded::default());
        let in_flight = InFlight::new(limit);
        let mut ids = Vec::new();
        let mut format = None;
        let mut skipped = false;
        let opened = rayon::scope(|scope| {
            input::read_file(file, &inputs.options, &mut |record| match record {
                Record::Batch(batch) => {
                    format.get_or_insert(batch.shape().unwrap_or(Shape::of(Format::ListJson)));
                    in_flight.enter();
                    let (decoded, in_flight, handler) = (&decoded, &in_flight, &handler);
                    scope.spawn(move |_| {
                        // Counted out even if decoding panics, so that the reader never waits
                        // for it (the panic then ends the scope).
                        let _leaving = Leaving(in_flight);
                        let mut local = Folded::default();
                        let mut ids = Vec::new();
                        handler.decode(batch.as_ref(), &mut local, &mut ids);
                        handler.count(&ids);
                        *decoded.lock().unwrap_or_else(|e| e.into_inner()) += local;
                    });
                }
                Record::Skipped(s) => {
                    skipped = true;
                    folded.problems.skipped.push(s);
                }
                Record::Machine(log) => {
                    format.get_or_insert(log.shape());
                    handler.handle(&mut folded, &mut ids, Record::Machine(log));
                }
                other => handler.handle(&mut folded, &mut ids, other),
            })
        });
        handler.count(&ids);
        folded += decoded.into_inner().unwrap_or_else(|e| e.into_inner());
        if opened && !skipped {
            folded.files.add(format);
        }
        folded
    };
    let mut total = plan
        .files
        .par_iter()
        .map(|&i| &inputs.files[i])
        .fold(Folded::default, read_one)
        .reduce(Folded::default, |mut a, b| {
            a += b;
            a
        });
    for merged in plan.merger.drain() {
        handler.take(&mut total, merged);
    }
    total
}

/// What a pass does with each record: machines to the command (merged as the plan says,
/// counted for its census), problems beside them.
struct Handler<'a, F> {
    plan: &'a Plan,
    per_machine: &'a F,
    keep: &'a Keep,
}

impl<F> Handler<'_, F> {
    /// Folds a whole machine in, if it is one to keep.
    fn take<T>(&self, folded: &mut Folded<T>, merged: Merged)
    where
        F: Fn(&mut T, Merged),
    {
        // A census pass that has met a machine twice is followed by a merging pass that
        // folds every machine again, and its own tally is dropped: the rest of it only counts.
        if self.plan.census.as_ref().is_some_and(|c| c.recurs()) {
            return;
        }
        if self.keep.take(&merged.log, &mut folded.kept) {
            folded.problems.notes.extend(merged.notes.iter().cloned());
            (self.per_machine)(&mut folded.value, merged);
        }
    }

    fn handle<T>(&self, folded: &mut Folded<T>, ids: &mut Vec<u64>, record: Record)
    where
        F: Fn(&mut T, Merged),
    {
        let mut into = PassIntake {
            handler: self,
            folded,
            ids,
        };
        intake::take_in(record, &mut into);
    }

    /// A batch's machines, decoded on this thread.
    fn decode<T>(&self, batch: &dyn Batch, folded: &mut Folded<T>, ids: &mut Vec<u64>)
    where
        F: Fn(&mut T, Merged),
    {
        input::decode(batch, &mut |r| self.handle(folded, ids, r));
    }

    /// Counts the machines of some records in the plan's census, if it takes one.
    fn count(&self, ids: &[u64]) {
        if let Some(census) = &self.plan.census {
            census.note_keys(ids);
        }
    }
}

/// A pass's records filed into one tally: each machine counted for the census, offered to the
/// merger and, once complete, folded in.
struct PassIntake<'h, 'f, F, T> {
    handler: &'h Handler<'h, F>,
    folded: &'f mut Folded<T>,
    ids: &'f mut Vec<u64>,
}

impl<F, T> Intake for PassIntake<'_, '_, F, T>
where
    F: Fn(&mut T, Merged),
{
    fn machine(&mut self, log: MachineLog) {
        if self.handler.plan.census.is_some() {
            // By key, so that no id is copied for the census.
            self.ids.push(merge::key(&log.machine));
        }
        if let Some(merged) = self.handler.plan.merger.offer(log) {
            self.handler.take(self.folded, merged);
        }
    }

    fn problems(&mut self) -> &mut Problems {
        &mut self.folded.problems
    }
}

/// How many batches of a file are being decoded, and a limit on it. A reader that reaches
/// the limit first helps decode (rayon runs a waiting task on this thread); only when no task
/// is left to take does it wait, woken as soon as one finishes.
struct InFlight {
    count: Mutex<usize>,
    freed: Condvar,
    limit: usize,
}

impl InFlight {
    fn new(limit: usize) -> InFlight {
        InFlight {
            count: Mutex::new(0),
            freed: Condvar::new(),
            limit,
        }
    }

    /// Waits until one more batch may be in flight, and counts it.
    fn enter(&self) {
        loop {
            {
                let count = self.count.lock().unwrap_or_else(|e| e.into_inner());
                if *count < self.limit {
                    drop(count);
                    break;
                }
            }
            // Help with the batches in flight instead of blocking a worker they may need.
            if matches!(rayon::yield_now(), Some(rayon::Yield::Executed)) {
                continue;
            }
            // Nothing left to take: every batch in flight runs on another thread, and the
            // first to finish wakes this one.
            let count = self.count.lock().unwrap_or_else(|e| e.into_inner());
            let _count = self
                .freed
                .wait_while(count, |n| *n >= self.limit)
                .unwrap_or_else(|e| e.into_inner());
        }
        *self.count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    }

    /// One batch is done.
    fn leave(&self) {
        *self.count.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        self.freed.notify_one();
    }
}

/// Counts a batch out of [`InFlight`] when its task ends, however it ends.
struct Leaving<'a>(&'a InFlight);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}
