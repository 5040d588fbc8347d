//! What every command does alike at its end: how it ended (the exit code), standard output,
//! files written, and the input's problems told on stderr.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

use crate::gate::Nothing;
use crate::input::record::InputError;
use crate::render::escape;

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Ok,
    /// Exit 1: `check`, `diff` or `rules lint` found what it gates on.
    GateFailed,
    /// Exit 2: some input could not be read; the rest was reported.
    InputErrors,
}

/// Tells on stderr why a gate has nothing to judge (see [`Nothing`]), after the input's
/// problems.
pub(crate) fn say_nothing_read(nothing: Option<Nothing>) {
    if let Some(nothing) = nothing {
        eprintln!(
            "fsmlog: {}, so there is nothing to gate on; check the paths, or pass --allow-empty to accept an empty input",
            crate::render::sentence::nothing(nothing)
        );
    }
}

/// Tells what could not be read (see [`print_problems`]) and ends a command that gates on
/// nothing: exit code 2 where some input could not be read, else 0.
pub(crate) fn finish(
    errors: &[InputError],
    skipped: &[(String, String)],
    notes: &[InputError],
) -> Outcome {
    print_problems(errors, skipped, notes);
    if errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::InputErrors
    }
}

/// Tells on stderr what could not be read and how ambiguous inputs were taken, so that
/// stdout stays clean for programs.
pub(crate) fn print_problems(
    errors: &[InputError],
    skipped: &[(String, String)],
    notes: &[InputError],
) {
    let stderr = io::stderr();
    let mut err = stderr.lock();
    for note in notes {
        let _ = writeln!(err, "fsmlog: note: {}", escape::text(&note.to_string()));
    }
    for (path, reason) in skipped {
        let line = format!("skipped {path}: {reason}");
        let _ = writeln!(err, "fsmlog: {}", escape::text(&line));
    }
    for error in errors {
        let _ = writeln!(err, "fsmlog: {}", escape::text(&error.to_string()));
    }
}

/// Standard output, buffered.
pub(crate) fn stdout() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::new(io::stdout().lock())
}

/// Writes a file through `write`, naming the file in any error.
pub(crate) fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::new(file);
    write(&mut out).with_context(|| format!("cannot write {}", path.display()))?;
    out.flush()
        .with_context(|| format!("cannot write {}", path.display()))
}
