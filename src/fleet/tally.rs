//! What a reading command accumulates over the fleet: a tally adds up with `+=` and takes the
//! input's problems and file counts; the pipeline folds every machine into one.

use std::ops::AddAssign;

use crate::aggregate::Summary;
use crate::diff::RuleDiff;
use crate::explain::Explanation;
use crate::input::record::InputError;

/// What a command accumulates over the fleet: it adds up with `+=` and takes the input's
/// problems and file counts.
pub trait Tally: Default + AddAssign + Send {
    /// A problem met while reading.
    fn input_error(&mut self, error: InputError);
    /// What an ambiguous input was taken for.
    fn note(&mut self, note: InputError);
    /// A file found in a directory that holds no machine log.
    fn skipped(&mut self, path: String, reason: String);
    /// A file that was read; the format name of its first machine, if it had one.
    fn file_read(&mut self, format: Option<&'static str>);
}

impl Tally for Summary {
    fn input_error(&mut self, error: InputError) {
        self.errors.push(error);
    }

    fn note(&mut self, note: InputError) {
        self.notes.push(note);
    }

    fn skipped(&mut self, path: String, reason: String) {
        self.skipped.push((path, reason));
    }

    fn file_read(&mut self, format: Option<&'static str>) {
        self.files += 1;
        if let Some(format) = format {
            *self.formats.entry(format).or_default() += 1;
        }
    }
}

/// Implements [`Tally`] for a tally that keeps the input's problems and files in its
/// `summary`, as `report` does.
macro_rules! tally_by_summary {
    ($($tally:ty),*) => {
        $(impl $crate::fleet::tally::Tally for $tally {
            fn input_error(&mut self, error: $crate::input::InputError) {
                self.summary.input_error(error);
            }

            fn note(&mut self, note: $crate::input::InputError) {
                self.summary.note(note);
            }

            fn skipped(&mut self, path: String, reason: String) {
                self.summary.skipped(path, reason);
            }

            fn file_read(&mut self, format: Option<&'static str>) {
                self.summary.file_read(format);
            }
        })*
    };
}
pub(crate) use tally_by_summary;

impl Tally for RuleDiff {
    fn input_error(&mut self, error: InputError) {
        self.errors.push(error);
    }

    fn note(&mut self, note: InputError) {
        self.notes.push(note);
    }

    fn skipped(&mut self, path: String, reason: String) {
        self.skipped.push((path, reason));
    }

    fn file_read(&mut self, _format: Option<&'static str>) {
        self.files += 1;
    }
}

tally_by_summary!(Explanation);
