//! What reading met besides machines: errors, files left out, notes on how an ambiguous input
//! was taken, how each input was read (`FSMLOG_TRACE=read`), and the files a pass read by
//! shape. A command gets them from its fold beside its result; `Ending::tell` (src/ending.rs)
//! tells them on stderr, and the JSON outputs carry the errors, files left out and notes.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::AddAssign;

use crate::log::Shape;

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

/// A file (or directory entry) that is not read, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// The input's problems, in file and line order once [`Problems::sort`] ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems {
    pub errors: Vec<InputError>,
    pub skipped: Vec<Skipped>,
    /// What ambiguous inputs were taken for.
    pub notes: Vec<InputError>,
    /// How each input was read, by path (only with `FSMLOG_TRACE=read`).
    pub read_paths: BTreeMap<String, PathsTaken>,
}

impl Problems {
    /// One more tally of how `path` was read.
    pub fn read_by(&mut self, path: String, taken: PathsTaken) {
        self.read_paths.entry(path).or_default().merge(&taken);
    }

    /// Puts each list in file and line order, so that output does not depend on scheduling.
    pub fn sort(&mut self) {
        self.errors.sort();
        self.skipped.sort();
        self.notes.sort();
    }

    /// Whether some input could not be read (exit 2).
    pub fn unreadable(&self) -> bool {
        !self.errors.is_empty()
    }
}

impl AddAssign for Problems {
    fn add_assign(&mut self, other: Problems) {
        self.errors.extend(other.errors);
        self.skipped.extend(other.skipped);
        self.notes.extend(other.notes);
        for (path, taken) in other.read_paths {
            self.read_paths.entry(path).or_default().merge(&taken);
        }
    }
}

/// The files a pass read, and how many by the shape of their first machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesRead {
    pub count: u64,
    pub formats: BTreeMap<Shape, u64>,
}

impl FilesRead {
    /// One more file read; the shape of its first machine, if it had one.
    pub fn add(&mut self, format: Option<Shape>) {
        self.count += 1;
        if let Some(format) = format {
            *self.formats.entry(format).or_default() += 1;
        }
    }
}

impl AddAssign for FilesRead {
    fn add_assign(&mut self, other: FilesRead) {
        self.count += other.count;
        for (format, n) in other.formats {
            *self.formats.entry(format).or_default() += n;
        }
    }
}

/// A way an input, or a value in it, was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReadPath {
    /// A `machine logs` file read straight from its bytes.
    WholeLog,
    /// Cut by the careful scan (a file, then its values).
    Careful,
    /// Read by the YAML reader (its lists' machines then as JSON's are).
    Yaml,
    /// Read by the reader of `metalctl machine logs` tables.
    Table,
    /// Read line by line as a raw event stream.
    Ndjson,
    /// A machine with only the members fsmlog reads kept, then read directly.
    Skimmed,
    /// A machine read straight from its bytes.
    Direct,
    /// A machine parsed by simd-json.
    Simd,
    /// A value parsed by serde: the careful parse, which names what is wrong.
    Serde,
}

impl ReadPath {
    const ALL: [ReadPath; 9] = [
        ReadPath::WholeLog,
        ReadPath::Careful,
        ReadPath::Yaml,
        ReadPath::Table,
        ReadPath::Ndjson,
        ReadPath::Skimmed,
        ReadPath::Direct,
        ReadPath::Simd,
        ReadPath::Serde,
    ];

    /// The name a trace gives it.
    pub fn name(self) -> &'static str {
        match self {
            ReadPath::WholeLog => "whole log read directly",
            ReadPath::Careful => "careful scan",
            ReadPath::Yaml => "YAML reader",
            ReadPath::Table => "table reader",
            ReadPath::Ndjson => "raw event stream",
            ReadPath::Skimmed => "skimmed",
            ReadPath::Direct => "direct",
            ReadPath::Simd => "simd-json",
            ReadPath::Serde => "serde",
        }
    }
}

/// How many of [`ReadPath::ALL`] name how a whole file was read (the rest name its values).
const FILE_PATHS: usize = 5;

/// How often each path was taken for one input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathsTaken([u64; 9]);

impl PathsTaken {
    /// One input, or one value in it, read this way.
    pub fn add(&mut self, path: ReadPath) {
        self.0[path as usize] += 1;
    }

    /// Another tally of the same input, added.
    pub fn merge(&mut self, other: &PathsTaken) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine += theirs;
        }
    }

    /// `careful scan; machines: 480 skimmed, 20 direct`: the file's path, then the values'.
    pub fn describe(&self) -> String {
        let taken = |paths: &[ReadPath]| -> Vec<String> {
            paths
                .iter()
                .filter(|p| self.0[**p as usize] > 0)
                .map(|p| format!("{} {}", self.0[*p as usize], p.name()))
                .collect()
        };
        let file: Vec<&str> = ReadPath::ALL[..FILE_PATHS]
            .iter()
            .filter(|p| self.0[**p as usize] > 0)
            .map(|p| p.name())
            .collect();
        let values = taken(&ReadPath::ALL[FILE_PATHS..]);
        let mut text = if file.is_empty() {
            "read".to_string()
        } else {
            file.join(", ")
        };
        if !values.is_empty() {
            text.push_str("; values: ");
            text.push_str(&values.join(", "));
        }
        text
    }
}
