//! What every reader hands on: machines as read from one input, the problems met on the way,
//! and the options that say how to read. Shared by the format readers, merging and the
//! commands; the readers themselves live beside this file.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use super::time::ExtraZone;
use crate::log::{Format, MachineLog};

/// A problem with the input, named by file and line (and column where it helps).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct InputError {
    pub path: String,
    /// One-based; 0 when the problem concerns the whole file.
    pub line: usize,
    /// One-based; 0 when unknown or not helpful.
    pub column: usize,
    pub message: String,
}

impl InputError {
    /// A problem at a line of a file.
    pub fn at(path: &str, line: usize, message: impl Into<String>) -> InputError {
        InputError {
            path: path.to_string(),
            line,
            column: 0,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.column > 0 {
                write!(f, ":{}", self.column)?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// What the reader hands on: a machine's log, or a problem it met on the way.
// Records pass one at a time, by value, straight to the fold: boxing every machine would cost
// an allocation each for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Record {
    Machine(MachineLog),
    /// Raw machines of a large file, to be decoded on any thread (see [`super::decode`]).
    Batch(Box<dyn Batch>),
    Error(InputError),
    /// What an ambiguous input was taken for (an empty array): no problem, but said on
    /// stderr and in `inputs.notes`, so that nothing is read without a word.
    Note(InputError),
    /// A file (or directory entry) that is not read, with the reason.
    Skipped {
        path: String,
        reason: String,
    },
}

/// Raw machines a reader read but has not parsed yet, so that parsing can run on any thread.
/// Each reader of a large format has its own kind.
pub trait Batch: Send + std::fmt::Debug {
    /// Parses the machines, handing on each one and each problem, in input order.
    fn parse(&self, sink: &mut dyn FnMut(Record));
    /// The format name of the machines in the batch, where the reader knows it already.
    fn format_name(&self) -> Option<&'static str>;
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
}

/// What of each machine a reader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadMode {
    /// Everything.
    #[default]
    Whole,
    /// The machines without their events (JSON exports and tables): enough to learn which
    /// machines an input holds, and how many records each has, at a fraction of the cost.
    IdsOnly,
}
