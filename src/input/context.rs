//! What every format reader is handed and shares: the file it reads and how, the cap on the
//! problems it names, and the helpers for lines and machine ids that several readers use.

use std::io::{self, BufRead, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::record::{InputError, InputOptions, Record};

/// Everything a format reader needs to know about the file it reads.
pub(crate) struct FileContext<'a> {
    pub path: String,
    /// The machine id for single-machine formats.
    pub machine: String,
    pub options: &'a InputOptions,
    /// Whether the input may be read ahead of need: a regular file (or a reader handed in
    /// by a test), not a pipe or standard input, which may trickle.
    pub read_ahead: bool,
    /// Whether the user named the file (a file that holds no log is then an error), rather
    /// than it being found in a directory (then it is skipped, and said so).
    pub named: bool,
}

/// A file that holds no machine log at all (as opposed to a damaged one).
pub(crate) struct NotALog(pub String);

/// How many problems one file (or one batch of a large file) names before it only counts
/// them: a file of garbage must not make memory grow with its size.
pub const MAX_ERRORS: usize = 100;

/// Passes records on, but no more than [`MAX_ERRORS`] problems; [`ErrorCap::finish`] names
/// how many more there were.
pub(crate) struct ErrorCap<'s> {
    emit: &'s mut dyn FnMut(Record),
    passed: usize,
    dropped: usize,
    last: Option<InputError>,
}

impl<'s> ErrorCap<'s> {
    pub fn new(emit: &'s mut dyn FnMut(Record)) -> Self {
        ErrorCap {
            emit,
            passed: 0,
            dropped: 0,
            last: None,
        }
    }

    pub fn pass(&mut self, record: Record) {
        match record {
            Record::Error(err) if self.passed >= MAX_ERRORS => {
                self.dropped += 1;
                self.last = Some(err);
            }
            Record::Error(err) => {
                self.passed += 1;
                (self.emit)(Record::Error(err));
            }
            other => (self.emit)(other),
        }
    }

    pub fn finish(self) {
        if let Some(last) = self.last {
            (self.emit)(Record::Error(InputError {
                message: format!(
                    "{} more problems not listed, the last of them here: {}",
                    self.dropped, last.message
                ),
                ..last
            }));
        }
    }
}

/// A reader that adds what passes through it to a shared counter.
pub(super) struct Metered<R> {
    pub inner: R,
    pub counter: Arc<AtomicU64>,
}

impl<R: Read> Read for Metered<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The longest line a line-based reader accepts; longer ones are skipped and named.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// Reads one line into `buf` (without keeping more than [`MAX_LINE`] bytes of it): `None` at
/// the end, `Some(false)` when the line was too long and was skipped.
pub(crate) fn read_line_capped(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
) -> io::Result<Option<bool>> {
    let mut any = false;
    let mut fits = true;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(any.then_some(fits));
        }
        any = true;
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if fits && buf.len() + take <= MAX_LINE {
            buf.extend_from_slice(&chunk[..take]);
        } else {
            fits = false;
            buf.clear();
        }
        reader.consume(take);
        if done {
            return Ok(Some(fits));
        }
    }
}

/// The machine id a file stands for: its name without extensions (`ID.json.gz` → `ID`).
pub fn machine_from_path(path: &Path) -> String {
    let name = path
        .file_name()
        .map(file_name_text)
        .unwrap_or_else(|| "-".to_string());
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric()) => {
            stem.to_string()
        }
        _ => name.to_string(),
    }
}

/// A file name as text that keeps its bytes apart: a name that is not UTF-8 shows each byte
/// that is not as `\xNN` (and a backslash as `\\`), so `m\xff` and `m\xfe` stay two
/// machines where replacing both with U+FFFD would make them one.
fn file_name_text(name: &std::ffi::OsStr) -> String {
    if let Some(text) = name.to_str() {
        return text.to_string();
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in name.as_bytes().utf8_chunks() {
            out.push_str(&chunk.valid().replace('\\', "\\\\"));
            for byte in chunk.invalid() {
                out.push_str(&format!("\\x{byte:02x}"));
            }
        }
        out
    }
    #[cfg(not(unix))]
    name.to_string_lossy().into_owned()
}
