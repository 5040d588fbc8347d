//! How a run ends: what a command hands back besides its output (the input's problems, what
//! it has to tell, its gate), told on stderr in one place and turned into the exit code CI
//! reads (0 ok, 1 a gate failed, 2 unreadable input or nothing to judge); and [`say`], for
//! the lines a command tells as it goes.

use std::io::{self, Write};

use crate::input::Problems;
use crate::render::escape;

/// What a gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Gate {
    /// Passed, or nothing is gated: exit 0 unless some input could not be read.
    #[default]
    Passed,
    /// Exit 1: `check`, `diff`, `issues --fail-on` or `rules lint` found what it gates on.
    Failed,
    /// Exit 2: there was nothing to judge or to write (said in [`Ending::after`]).
    Refused,
}

/// Tells one line on stderr at once, for what must be said even if the command fails later
/// (a file written, a warning about what is being done): `fsmlog: ` and `line`, which whoever
/// wrote it has escaped.
pub fn say(line: &str) {
    let _ = writeln!(io::stderr().lock(), "fsmlog: {line}");
}

/// Writes one log line on stderr as it is (`watch --log-format json`'s lines carry no prefix).
pub fn log(line: &str) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}

/// Everything a command leaves to be told after its output.
#[derive(Debug, Default)]
pub struct Ending {
    pub problems: Problems,
    /// Lines told after the problems: why nothing was judged or written.
    pub after: Vec<String>,
    /// Text for stderr as it is, last (GitHub's workflow commands).
    pub verbatim: String,
    pub gate: Gate,
}

impl Ending {
    /// A command that gates nothing, with the input's problems.
    pub fn with(problems: Problems) -> Ending {
        Ending {
            problems,
            ..Ending::default()
        }
    }

    /// The exit code: 2 where some input could not be read or there was nothing to judge,
    /// else 1 where the gate failed, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.problems.unreadable() || self.gate == Gate::Refused {
            2
        } else if self.gate == Gate::Failed {
            1
        } else {
            0
        }
    }

    /// Tells on stderr what there is to tell, so that stdout stays clean for programs; what
    /// could not be read and how ambiguous inputs were taken are named by file and line.
    pub fn tell(&self, err: &mut dyn Write) -> io::Result<()> {
        let p = &self.problems;
        for (path, taken) in &p.read_paths {
            let line = format!("trace: {path}: {}", taken.describe());
            writeln!(err, "fsmlog: {}", escape::text(&line))?;
        }
        for note in &p.notes {
            writeln!(err, "fsmlog: note: {}", escape::text(&note.to_string()))?;
        }
        for skipped in &p.skipped {
            let line = format!("skipped {}: {}", skipped.path, skipped.reason);
            writeln!(err, "fsmlog: {}", escape::text(&line))?;
        }
        for error in &p.errors {
            writeln!(err, "fsmlog: {}", escape::text(&error.to_string()))?;
        }
        for line in &self.after {
            writeln!(err, "fsmlog: {line}")?;
        }
        err.write_all(self.verbatim.as_bytes())
    }
}
