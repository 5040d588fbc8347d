//! Reading exports: finds the files behind the paths, detects each file's format by content,
//! and hands every machine's log on as soon as it is read, one machine at a time.

mod json;
pub mod merge;

pub use json::ElementBatch;
pub use table::TableBatch;
mod ndjson;
mod table;
pub mod time;

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use flate2::read::MultiGzDecoder;

use crate::event::Event;

/// One machine's events as read from one input, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineLog {
    pub machine: String,
    /// The file (or `-`) the log came from.
    pub source: String,
    /// The line the machine starts on in its file.
    pub line: usize,
    pub format: Format,
    /// Oldest first; equal times keep the order metal-api stored them in.
    pub events: Vec<Event>,
    /// The exported last error event, which may or may not be among `events`.
    pub last_error_event: Option<Event>,
    pub recorded: RecordedFlags,
    /// Whether messages carry metal-api's recorded verdicts (true for every export).
    pub annotated: bool,
}

/// The container fields an export recorded besides the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedFlags {
    pub last_event_time: Option<DateTime<Utc>>,
    pub crash_loop: Option<bool>,
    pub failed_machine_reclaim: Option<bool>,
}

/// The input formats fsmlog reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Format {
    /// `metalctl machine logs ID -o json` (an event array, maybe a `Recent last error` block).
    LogsJson,
    /// `metalctl machine describe ID -o json` (one machine object).
    DescribeJson,
    /// `metalctl machine list -o json` (an array of machine objects).
    ListJson,
    /// metal-api's `GET /v1/machine/{id}/event` response (`{log, last_error_event, …}`).
    EventApi,
    /// metal-api's stored containers, a dump of the event table (one object or an array).
    ContainerDump,
    /// The v2 API's machines (`uuid`, `recentProvisioningEvents`; camelCase or snake_case).
    V2Json,
    /// A raw event stream, one `{"machine", "time", "event", "message"}` a line, any order.
    Ndjson,
    /// The table `metalctl machine logs ID` prints (also `-o wide`, `-o markdown`).
    Table,
}

impl Format {
    /// The name used in `--format` and in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Format::LogsJson => "logs-json",
            Format::DescribeJson => "describe-json",
            Format::ListJson => "list-json",
            Format::EventApi => "event-api",
            Format::ContainerDump => "container-dump",
            Format::V2Json => "v2-json",
            Format::Ndjson => "ndjson",
            Format::Table => "table",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
#[derive(Debug)]
pub enum Record {
    Machine(MachineLog),
    /// Raw machines of a large file, to be decoded (on any thread) with [`Batch::decode`].
    Batch(Batch),
    Error(InputError),
    /// A file found while walking a directory that holds no machine log.
    Skipped {
        path: String,
        reason: String,
    },
}

/// How to read the inputs.
#[derive(Debug, Clone, Default)]
pub struct InputOptions {
    /// Forces a format instead of detecting it.
    pub format: Option<Format>,
    /// The machine id for single-machine formats instead of the file stem.
    pub machine_id: Option<String>,
    /// Zone abbreviations resolved by `--tz`, before the built-in table.
    pub zones: Vec<time::ExtraZone>,
    /// Counts the bytes read from files (before decompression), for a progress display.
    pub bytes_read: Option<Arc<AtomicU64>>,
    /// Read machines without their events (JSON exports and tables): enough to learn which
    /// machines an input holds, at a fraction of the cost.
    pub ids_only: bool,
}

/// A reader that adds what passes through it to a shared counter.
struct Counting<R> {
    inner: R,
    counter: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// How many problems one file (or one batch of a large file) names before it only counts
/// them: a file of garbage must not make memory grow with its size.
pub const MAX_ERRORS: usize = 100;

/// Passes records on, but no more than [`MAX_ERRORS`] problems; [`ErrorCap::finish`] names
/// how many more there were.
struct ErrorCap<'s> {
    sink: &'s mut dyn FnMut(Record),
    passed: usize,
    dropped: usize,
    last: Option<InputError>,
}

impl<'s> ErrorCap<'s> {
    fn new(sink: &'s mut dyn FnMut(Record)) -> Self {
        ErrorCap {
            sink,
            passed: 0,
            dropped: 0,
            last: None,
        }
    }

    fn pass(&mut self, record: Record) {
        match record {
            Record::Error(err) if self.passed >= MAX_ERRORS => {
                self.dropped += 1;
                self.last = Some(err);
            }
            Record::Error(err) => {
                self.passed += 1;
                (self.sink)(Record::Error(err));
            }
            other => (self.sink)(other),
        }
    }

    fn finish(self) {
        if let Some(last) = self.last {
            (self.sink)(Record::Error(InputError {
                message: format!(
                    "{} more problems not listed, the last of them here: {}",
                    self.dropped, last.message
                ),
                ..last
            }));
        }
    }
}

/// Raw machines read but not parsed yet, so that parsing can run on any thread.
#[derive(Debug)]
pub enum Batch {
    Json(ElementBatch),
    Table(TableBatch),
}

impl Batch {
    /// Parses the machines, handing on each one and each problem, in input order (at most
    /// [`MAX_ERRORS`] problems, then a count of the rest).
    pub fn decode(&self, sink: &mut dyn FnMut(Record)) {
        let mut capped = ErrorCap::new(sink);
        match self {
            Batch::Json(batch) => batch.decode(&mut |r| capped.pass(r)),
            Batch::Table(batch) => batch.decode(&mut |r| capped.pass(r)),
        }
        capped.finish();
    }

    /// The format of the machines in the batch, where the reader knows it already.
    pub fn format(&self) -> Option<Format> {
        match self {
            Batch::Json(batch) => batch.format,
            Batch::Table(_) => Some(Format::Table),
        }
    }

    /// How many bytes of input the batch holds.
    pub fn len_bytes(&self) -> usize {
        match self {
            Batch::Json(batch) => batch.len_bytes(),
            Batch::Table(batch) => batch.len_bytes(),
        }
    }
}

/// One file to read, and whether it was named by the user or found in a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    pub path: PathBuf,
    pub named: bool,
}

impl InputFile {
    /// The path as shown in messages; `-` for standard input.
    pub fn display(&self) -> String {
        self.path.display().to_string()
    }
}

/// Expands the command-line paths into files: directories recursively, sorted, hidden entries
/// left out. Paths that do not exist come back as errors.
pub fn discover(paths: &[PathBuf]) -> (Vec<InputFile>, Vec<InputError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            files.push(InputFile {
                path: path.clone(),
                named: true,
            });
            continue;
        }
        if path.is_dir() {
            let walk = walkdir::WalkDir::new(path)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| {
                    e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.')
                });
            for entry in walk {
                match entry {
                    Ok(entry) if entry.file_type().is_file() => files.push(InputFile {
                        path: entry.into_path(),
                        named: false,
                    }),
                    Ok(_) => {}
                    Err(err) => errors.push(InputError::at(
                        &err.path().unwrap_or(path).display().to_string(),
                        0,
                        format!("cannot read directory entry: {err}"),
                    )),
                }
            }
        } else if path.exists() {
            files.push(InputFile {
                path: path.clone(),
                named: true,
            });
        } else {
            errors.push(InputError::at(
                &path.display().to_string(),
                0,
                "no such file or directory",
            ));
        }
    }
    (files, errors)
}

/// Everything a format reader needs to know about the file it reads.
pub(crate) struct FileContext<'a> {
    pub path: String,
    /// The machine id for single-machine formats.
    pub machine: String,
    pub options: &'a InputOptions,
}

/// Reads one file and hands on every record it holds, machines of a large array in batches
/// still to be decoded.
pub fn read_file(file: &InputFile, options: &InputOptions, sink: &mut dyn FnMut(Record)) {
    let display = file.display();
    let reader: Box<dyn Read> = if file.path.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        match File::open(&file.path) {
            Ok(f) => Box::new(f),
            Err(err) => {
                sink(Record::Error(InputError::at(
                    &display,
                    0,
                    format!("cannot open: {err}"),
                )));
                return;
            }
        }
    };
    let reader: Box<dyn Read> = match &options.bytes_read {
        Some(counter) => Box::new(Counting {
            inner: reader,
            counter: Arc::clone(counter),
        }),
        None => reader,
    };
    let ctx = FileContext {
        machine: options
            .machine_id
            .clone()
            .unwrap_or_else(|| machine_from_path(&file.path)),
        path: display,
        options,
    };
    let mut capped = ErrorCap::new(sink);
    read_stream(reader, &ctx, file.named, &mut |r| capped.pass(r));
    capped.finish();
}

/// Reads one file on this thread and hands on machines and problems only: batches are decoded
/// as they come.
pub fn read_file_decoded(file: &InputFile, options: &InputOptions, sink: &mut dyn FnMut(Record)) {
    read_file(file, options, &mut |record| match record {
        Record::Batch(batch) => batch.decode(sink),
        other => sink(other),
    });
}

/// Reads one input from any reader as if it were the file `name` named on the command line,
/// batches decoded (for tests and fuzzing).
pub fn read_reader(
    reader: impl Read,
    name: &str,
    options: &InputOptions,
    sink: &mut dyn FnMut(Record),
) {
    let ctx = FileContext {
        machine: options
            .machine_id
            .clone()
            .unwrap_or_else(|| machine_from_path(Path::new(name))),
        path: name.to_string(),
        options,
    };
    read_stream(Box::new(reader), &ctx, true, &mut |record| match record {
        Record::Batch(batch) => batch.decode(sink),
        other => sink(other),
    });
}

/// How much of a file's beginning detection looks at.
const HEAD: usize = 256 << 10;

/// Reads the beginning of a stream: up to [`HEAD`] bytes, or less once a few non-blank lines
/// are there (a pipe may hand over a partial line first). A read error ends the head early and
/// is handed back, to be raised where the head ends, after what was read is reported.
fn read_head(reader: &mut dyn Read) -> (Vec<u8>, Option<io::Error>) {
    let mut head = Vec::new();
    let mut chunk = [0u8; 16 << 10];
    // Non-blank complete lines so far, and whether the current line has a non-blank byte.
    let mut lines = 0;
    let mut filled = false;
    while head.len() < HEAD {
        let want = (HEAD - head.len()).min(chunk.len());
        let n = match reader.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return (head, Some(err)),
        };
        head.extend_from_slice(&chunk[..n]);
        for &byte in &chunk[..n] {
            if byte == b'\n' {
                lines += usize::from(filled);
                filled = false;
            } else if !byte.is_ascii_whitespace() {
                filled = true;
            }
        }
        if lines >= 4 {
            break;
        }
    }
    (head, None)
}

/// A reader that fails once with a stored error, then reads nothing.
struct Failing(Option<io::Error>);

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(err) => Err(err),
            None => Ok(0),
        }
    }
}

/// Reads the head, keeping a read error for after it: `(head, the rest of the stream)`.
fn split_head<'r>(mut raw: Box<dyn Read + 'r>) -> (Vec<u8>, Box<dyn Read + 'r>) {
    match read_head(&mut raw) {
        (head, None) => (head, raw),
        (head, Some(err)) => (head, Box::new(Failing(Some(err)))),
    }
}

fn read_stream(
    mut raw: Box<dyn Read + '_>,
    ctx: &FileContext,
    named: bool,
    sink: &mut dyn FnMut(Record),
) {
    let (mut head, rest) = split_head(raw);
    raw = rest;
    // gzip is recognised by its magic number, so compressed standard input works too.
    if head.starts_with(&[0x1f, 0x8b]) {
        (head, raw) = split_head(Box::new(MultiGzDecoder::new(
            io::Cursor::new(head).chain(raw),
        )));
    }
    let bom = head.starts_with(BOM);
    let family = match (ctx.options.format, detect(&head)) {
        (_, Err(damage)) => {
            sink(Record::Error(InputError::at(
                &ctx.path,
                damage.line,
                damage.message,
            )));
            return;
        }
        (Some(Format::Table), _) => Family::Table,
        (Some(Format::Ndjson), _) => Family::Stream,
        (Some(_), _) => Family::Json,
        (None, Ok(Family::Table)) if !table::looks_like_table(&head, &ctx.options.zones) => {
            let reason = "no table row (`Mon, 22 Aug 2022 06:36:15 UTC  EVENT  MESSAGE`) in its first lines, and not JSON";
            report_not_a_log(ctx, named, reason.to_string(), sink);
            return;
        }
        (None, Ok(family)) => family,
    };
    let mut head = io::Cursor::new(head);
    if bom {
        head.set_position(BOM.len() as u64);
    }
    let reader = BufReader::with_capacity(64 << 10, head.chain(raw));
    let outcome = match family {
        Family::Table => table::read(reader, ctx, sink),
        Family::Stream => ndjson::read(reader, ctx, sink),
        Family::Json => json::read(reader, ctx, ctx.options.format, sink),
    };
    if let Err(NotALog(reason)) = outcome {
        report_not_a_log(ctx, named, reason, sink);
    }
}

/// Names a file that holds no machine log: an error when the user named it, a skipped file
/// when it was found in a directory.
fn report_not_a_log(ctx: &FileContext, named: bool, reason: String, sink: &mut dyn FnMut(Record)) {
    {
        let hint = "; use --format to read it as a given format";
        if named {
            sink(Record::Error(InputError::at(
                &ctx.path,
                0,
                format!("not a machine log: {reason}{hint}"),
            )));
        } else {
            sink(Record::Skipped {
                path: ctx.path.clone(),
                reason: format!("{reason}{hint}"),
            });
        }
    }
}

/// A file that holds no machine log at all (as opposed to a damaged one).
pub(crate) struct NotALog(pub String);

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The families of formats, told apart by the first bytes; each reader then tells the exact
/// format from the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// One JSON document (or metalctl's two): the JSON exports.
    Json,
    /// A JSON object per line: the raw event stream.
    Stream,
    /// metalctl's tables.
    Table,
}

/// A file no reader can take: empty, or binary.
#[derive(Debug, PartialEq, Eq)]
struct Damage {
    line: usize,
    message: String,
}

/// Guesses the family from the first bytes: a first line that is a whole event object is a
/// stream, other JSON is a document, other text a table. Empty and binary files are damage.
fn detect(head: &[u8]) -> Result<Family, Damage> {
    if let Some(nul) = head.iter().position(|&b| b == 0) {
        return Err(Damage {
            line: 1 + head[..nul].iter().filter(|&&b| b == b'\n').count(),
            message: "binary content (a NUL byte), not a machine log".to_string(),
        });
    }
    let text = head.strip_prefix(BOM).unwrap_or(head);
    let Some(start) = text.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Err(Damage {
            line: 0,
            message: "the file is empty".to_string(),
        });
    };
    let text = &text[start..];
    let after = |i: usize| text[i..].iter().copied().find(|b| !b.is_ascii_whitespace());
    Ok(match text[0] {
        b'{' if ndjson::looks_like_stream(text) => Family::Stream,
        // JSON only if what follows the bracket can start a member or a value: `[package]` or
        // `[![badge]` are text.
        b'{' if matches!(after(1), Some(b'"' | b'}') | None) => Family::Json,
        b'[' if matches!(
            after(1),
            Some(b'{' | b'[' | b']' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n') | None
        ) =>
        {
            Family::Json
        }
        _ => Family::Table,
    })
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
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
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
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "-".to_string());
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric()) => {
            stem.to_string()
        }
        _ => name.to_string(),
    }
}

/// Puts a log's events into time order; exports are newest first, so a log whose first event
/// is newer than its last is reversed before the stable sort keeps equal times in stored order.
pub(crate) fn into_time_order(events: &mut [Event], newest_first_by_default: bool) {
    let newest_first = match (events.first(), events.last()) {
        (Some(first), Some(last)) if first.time != last.time => first.time > last.time,
        _ => newest_first_by_default,
    };
    if newest_first {
        events.reverse();
    }
    events.sort_by_key(|e| e.time);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_id_is_the_stem() {
        assert_eq!(machine_from_path(Path::new("a/b/m-1.json")), "m-1");
        assert_eq!(machine_from_path(Path::new("m-1.json.gz")), "m-1");
        assert_eq!(machine_from_path(Path::new("m-1")), "m-1");
    }

    #[test]
    fn detect_by_first_character() {
        assert_eq!(detect(b"  \n[{"), Ok(Family::Json));
        assert_eq!(
            detect(b"{\"machine\": \"m\", \"event\": \"Alive\"}\n{"),
            Ok(Family::Stream)
        );
        assert_eq!(
            detect(b"{\"id\": \"m\",\n \"events\": {}}"),
            Ok(Family::Json)
        );
        assert_eq!(detect(b"TIME  EVENT"), Ok(Family::Table));
        assert_eq!(detect(b" \n ").unwrap_err().message, "the file is empty");
        assert_eq!(detect(b"a\nb\x7fELF\0\0").unwrap_err().line, 2);
    }
}
