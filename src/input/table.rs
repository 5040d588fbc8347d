//! The table `metalctl machine logs ID` prints: default, `-o wide` and `-o markdown`, indented
//! or not, with the `Recent last error` block, and several machines under `==> NAME <==`.

use std::io::BufRead;
use std::path::Path;

use super::row::{Line, classify, fast_classify, has_row_shape, section_header};
use super::row_order;
use super::time::ExtraZone;
use crate::event::Event;
use crate::input::context::{FileContext, NotALog, machine_from_path, read_line_capped};
use crate::input::record::{Batch, InputError, ReadMode, Record};
use crate::log::{Format, MachineLog, Shape};

/// The machine being read and what has been found for it so far.
struct Section {
    machine: String,
    line: usize,
    /// The rows in the order they were read.
    events: Vec<Event>,
    /// Rows (by index) that follow a repeated `TIME  EVENT  MESSAGE` header: each begins
    /// another record of the machine.
    breaks: Vec<usize>,
    /// Each `Recent last error` block's event, with how many rows were read before it.
    last_errors: Vec<(usize, Event)>,
    /// Set after `Recent last error`: the next row is the last error event, not a log row.
    in_last_error: bool,
    /// Rows that could not be read.
    bad_rows: usize,
    /// Lines of pasted text that are no rows.
    skipped_lines: u64,
    /// Whether a header or a row was seen: a section of nothing but prose is no machine.
    has_table: bool,
}

impl Section {
    fn new(machine: String, line: usize) -> Section {
        Section {
            machine,
            line,
            events: Vec::new(),
            breaks: Vec::new(),
            last_errors: Vec::new(),
            in_last_error: false,
            bad_rows: 0,
            skipped_lines: 0,
            has_table: false,
        }
    }

    /// The machine's records (one, unless its order restarts: see [`row_order::records`]), each
    /// with the last error block that follows it; none when every row was bad (its errors say
    /// why). With [`ReadMode::IdsOnly`], the records' rows are left out.
    fn finish(self, path: &str, mode: ReadMode) -> Vec<MachineLog> {
        if self.events.is_empty()
            && self.last_errors.is_empty()
            && (self.bad_rows > 0 || !self.has_table)
        {
            return Vec::new();
        }
        let cuts = row_order::cut(self.events, &self.breaks, self.line);
        let count = cuts.len();
        let mut last_errors = self.last_errors;
        let mut logs = Vec::with_capacity(count);
        for (i, cut) in cuts.into_iter().enumerate() {
            // A block follows the rows read before it; one before any row is the first
            // record's.
            let (mine, rest): (Vec<_>, Vec<_>) = last_errors
                .into_iter()
                .partition(|(after, _)| i + 1 == count || *after <= cut.end);
            last_errors = rest;
            let mut log = MachineLog::new(self.machine.clone(), path, cut.line, Format::Table);
            if mode != ReadMode::IdsOnly {
                log.events = cut.events;
            }
            log.last_error_event = mine.into_iter().map(|(_, e)| e).max_by_key(|e| e.time);
            if i == 0 {
                log.skipped_lines = self.skipped_lines;
            }
            logs.push(log);
        }
        logs
    }
}

/// A section's `==> NAME <==` header (name and line), and its lines (`None`: not UTF-8).
type SectionLines<'a> = (Option<(&'a str, usize)>, Vec<(usize, Option<Line<'a>>)>);

/// How many bytes of raw sections a batch collects before it is handed on.
const BATCH_BYTES: usize = 1 << 20;

/// Raw lines of whole machine sections, not parsed yet: the unit of parallel work for a large
/// table file. [`TableBatch::decode`] turns them into records.
#[derive(Debug)]
pub struct TableBatch {
    path: String,
    /// The machine of rows before any `==> NAME <==` header (the file's).
    file_machine: String,
    zones: Vec<ExtraZone>,
    /// What of each machine to read.
    mode: ReadMode,
    /// The lines, each with its `\n`.
    text: Vec<u8>,
    /// The number of the first line in `text`.
    first_line: usize,
    /// Whether rows as metalctl prints them take the fast path (off only to check it).
    fast: bool,
}

impl TableBatch {
    fn new(ctx: &FileContext, first_line: usize) -> TableBatch {
        TableBatch {
            path: ctx.path.clone(),
            file_machine: ctx.machine.clone(),
            zones: ctx.options.zones.clone(),
            mode: ctx.options.mode,
            text: Vec::new(),
            first_line,
            fast: true,
        }
    }

    /// Reads one line, a row as metalctl prints it on the fast path.
    fn classify<'a>(&self, text: &'a str) -> Line<'a> {
        let fast = if self.fast {
            fast_classify(text, &self.zones)
        } else {
            None
        };
        fast.unwrap_or_else(|| classify(text, &self.zones))
    }

    /// Reads one machine's lines (`None` for a line that is not UTF-8).
    fn section(
        &self,
        name: Option<(&str, usize)>,
        lines: Vec<(usize, Option<Line>)>,
        pasted: bool,
        emit: &mut dyn FnMut(Record),
    ) {
        let mut section =
            name.map(|(name, at)| Section::new(machine_from_path(Path::new(name)), at));
        // Lines skipped before the section's first row or header, counted once it opens.
        let mut skipped_before = 0;
        for (at, line) in lines {
            let current = match (&line, &mut section) {
                (Some(Line::Rule), None) => continue,
                (Some(Line::Blank), None) => {
                    skipped_before += u64::from(pasted);
                    continue;
                }
                (Some(Line::Command), None) => {
                    skipped_before += 1;
                    continue;
                }
                (Some(Line::Other(_)), None) if pasted => {
                    skipped_before += 1;
                    continue;
                }
                (_, Some(current)) => current,
                (_, slot) => {
                    let mut opened = Section::new(self.file_machine.clone(), at);
                    opened.skipped_lines = std::mem::take(&mut skipped_before);
                    slot.insert(opened)
                }
            };
            if matches!(line, Some(Line::Header | Line::Row { .. })) {
                current.has_table = true;
            }
            let message = match line {
                None => "invalid UTF-8; the row is skipped".to_string(),
                Some(Line::Blank) => {
                    current.skipped_lines += u64::from(pasted);
                    continue;
                }
                Some(Line::Header) => {
                    if current.breaks.last() != Some(&current.events.len()) {
                        current.breaks.push(current.events.len());
                    }
                    continue;
                }
                Some(Line::Rule | Line::Section(_)) => continue,
                Some(Line::LastError) => {
                    current.in_last_error = true;
                    continue;
                }
                Some(Line::Command) => {
                    current.skipped_lines += 1;
                    continue;
                }
                Some(Line::Other(_)) if pasted => {
                    current.skipped_lines += 1;
                    continue;
                }
                Some(Line::Other(text)) => format!(
                    "expected a row starting with a time like `Mon, 22 Aug 2022 06:36:15 UTC`, found {:?}",
                    shorten(text)
                ),
                Some(Line::Row {
                    event: Ok(event), ..
                }) => {
                    let event = event.at_line(at);
                    if current.in_last_error {
                        current.last_errors.push((current.events.len(), event));
                        current.in_last_error = false;
                    } else {
                        current.events.push(event);
                    }
                    continue;
                }
                Some(Line::Row {
                    event: Err(message),
                    ..
                }) => message,
            };
            current.bad_rows += 1;
            emit(Record::Error(InputError::at(&self.path, at, message)));
        }
        for done in section.map_or_else(Vec::new, |s| s.finish(&self.path, self.mode)) {
            emit(Record::Machine(done));
        }
    }
}

impl Batch for TableBatch {
    /// Parses every row, handing on each machine and naming each bad row.
    fn parse(&self, emit: &mut dyn FnMut(Record)) {
        // A section is read whole before its lines are judged: whether it is pasted text
        // (prose around the rows is skipped) or a table (a line that is no row is an error)
        // depends on all its rows.
        let mut sections: Vec<SectionLines> = vec![(None, Vec::new())];
        // The batch is checked as UTF-8 once; only where it is not, line by line. Every line
        // ends with its `\n` (the reader adds one to a last line without).
        let whole = simdutf8::basic::from_utf8(&self.text).ok();
        let mut start = 0;
        for (this_line, end) in (self.first_line..).zip(memchr::memchr_iter(b'\n', &self.text)) {
            let end = end + 1;
            let line = match whole {
                Some(text) => Some(&text[start..end]),
                None => std::str::from_utf8(&self.text[start..end]).ok(),
            }
            .map(|text| self.classify(text));
            start = end;
            match line {
                Some(Line::Section(next)) => sections.push((Some((next, this_line)), Vec::new())),
                line => sections
                    .last_mut()
                    .expect("there is always a section")
                    .1
                    .push((this_line, line)),
            }
        }
        // Pasted text is told for the whole batch (a pasted file is one batch): a note
        // before the first `==>` header belongs to the pasted sections after it.
        let pasted = sections
            .iter()
            .flat_map(|(_, lines)| lines)
            .any(|(_, l)| matches!(l, Some(Line::Row { pasted: true, .. })));
        for (name, lines) in sections {
            self.section(name, lines, pasted, emit);
        }
    }

    fn shape(&self) -> Option<Shape> {
        Some(Shape::of(Format::Table))
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Whether the first bytes of a file hold at least one table row: a text file without one is
/// some other text, not a damaged table.
pub(crate) fn looks_like_table(head: &[u8], zones: &[ExtraZone]) -> bool {
    head.split(|&b| b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .any(|line| {
            // The shape of a row is enough: a row whose zone is unknown is still a table row,
            // and its error (with the --tz hint) is more use than "not a log".
            has_row_shape(line)
                || matches!(
                    classify(line, zones),
                    Line::Row { event: Ok(_), .. } | Line::Header
                )
        })
}

/// Cuts a table file into batches of whole machine sections (a section ends where the next
/// `==> NAME <==` begins) and hands them on; rows are parsed by [`TableBatch::decode`].
pub(crate) fn read(
    reader: impl BufRead,
    ctx: &FileContext,
    emit: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    read_with(reader, ctx, true, emit)
}

/// Whether reading `bytes` as a table, rows as metalctl prints them on the fast path, hands on
/// exactly the records (machines, events, problems, in the same order) that reading every
/// line with the careful classifier does. For the differential property test and fuzz
/// target; the reader never calls it.
pub fn table_agrees(bytes: &[u8]) -> bool {
    let options = crate::input::record::InputOptions {
        format: Some(Format::Table),
        // A zone of the user's, which the fast path must look up as the careful one does.
        zones: vec![("XST".to_string(), 330), ("utc".to_string(), 60)],
        ..Default::default()
    };
    let ctx = FileContext {
        path: "table.txt".to_string(),
        machine: "table".to_string(),
        options: &options,
        read_ahead: true,
        named: true,
    };
    let records = |fast: bool| {
        let mut out = Vec::new();
        // A small buffer, so that lines also run past its end.
        let reader = std::io::BufReader::with_capacity(64, bytes);
        let read = read_with(reader, &ctx, fast, &mut |r| match r {
            Record::Batch(batch) => batch.parse(&mut |r| out.push(format!("{r:?}"))),
            other => out.push(format!("{other:?}")),
        });
        (read.is_ok(), out)
    };
    records(true) == records(false)
}

fn read_with(
    mut reader: impl BufRead,
    ctx: &FileContext,
    fast: bool,
    emit: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let new_batch = |first_line| TableBatch {
        fast,
        ..TableBatch::new(ctx, first_line)
    };
    let mut batch = new_batch(1);
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let fits = match read_line_capped(&mut reader, &mut buf) {
            Ok(None) => break,
            Ok(Some(fits)) => fits,
            Err(err) => {
                emit(Record::Error(InputError::at(
                    &ctx.path,
                    line_no + 1,
                    format!("cannot read: {err}"),
                )));
                break;
            }
        };
        line_no += 1;
        if !fits {
            emit(Record::Error(InputError::at(
                &ctx.path,
                line_no,
                "line longer than 1 MiB; skipped",
            )));
            // An empty line in its place keeps the batch's line numbers right.
            batch.text.push(b'\n');
            continue;
        }
        // A line that starts with a printable ASCII byte other than `=` cannot trim to
        // `==> NAME <==`; only the others are looked at closely.
        let starts_section = !matches!(buf.first(), Some(&(b'!'..=b'<' | b'>'..=b'~')))
            && std::str::from_utf8(&buf).is_ok_and(|l| section_header(l.trim()).is_some());
        if starts_section && batch.text.len() >= BATCH_BYTES {
            let full = std::mem::replace(&mut batch, new_batch(line_no));
            emit(Record::Batch(Box::new(full)));
        }
        batch.text.extend_from_slice(&buf);
        if !buf.ends_with(b"\n") {
            batch.text.push(b'\n');
        }
    }
    if !batch.text.is_empty() {
        emit(Record::Batch(Box::new(batch)));
    }
    Ok(())
}
