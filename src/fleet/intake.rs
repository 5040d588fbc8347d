//! The fleet's intake: a record a reader hands on becomes a machine or a problem here, and
//! only here. Every fold (the planned passes, the lean read, `replay`'s stream) takes what it
//! reads in through [`take_in`], saying only where a machine goes.

use crate::input::record::StreamLines;
use crate::input::{self, Problems, Record};
use crate::log::MachineLog;

/// Where a fold puts what is read: its machines, and the problems met on the way.
pub trait Intake {
    /// One record of a machine, as read (merging, if any, is the fold's).
    fn machine(&mut self, log: MachineLog);
    /// Where errors, notes, files left out and read paths go.
    fn problems(&mut self) -> &mut Problems;
    /// A raw stream's lines: each made into a record of its own, unless the fold takes the
    /// lines as they are.
    fn lines(&mut self, lines: StreamLines) {
        lines.records(&mut |r| take_in(r, self));
    }
}

/// Takes in one record: a machine to [`Intake::machine`], a problem to [`Intake::problems`], a
/// batch decoded on this thread and a stream's lines opened, their records taken in the same
/// way.
pub fn take_in<I: Intake + ?Sized>(record: Record, to: &mut I) {
    match record {
        Record::Machine(log) => to.machine(log),
        Record::Error(err) => to.problems().errors.push(err),
        Record::Note(note) => to.problems().notes.push(note),
        Record::Skipped(skipped) => to.problems().skipped.push(skipped),
        Record::ReadBy { path, taken } => to.problems().read_by(path, taken),
        Record::Batch(batch) => input::decode(batch.as_ref(), &mut |r| take_in(r, to)),
        Record::Lines(lines) => to.lines(*lines),
    }
}
