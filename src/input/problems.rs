//! What reading met besides machines: errors, files left out, and notes on how an ambiguous
//! input was taken. Every reading command hands them back beside its result, and one place
//! tells them (`crate::messages`).

use std::fmt;
use std::ops::AddAssign;

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
}

impl Problems {
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
    }
}

/// The files a pass read, and how many by the format of their first machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesRead {
    pub count: u64,
    pub formats: std::collections::BTreeMap<&'static str, u64>,
}

impl FilesRead {
    /// One more file read; the format name of its first machine, if it had one.
    pub fn add(&mut self, format: Option<&'static str>) {
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
