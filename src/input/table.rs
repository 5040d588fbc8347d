//! The table `metalctl machine logs ID` prints: default, `-o wide` and `-o markdown`, indented
//! or not, with the `Recent last error` block, and several machines under `==> NAME <==`.

use std::io::BufRead;
use std::path::Path;

use super::time::{ExtraZone, parse_rfc1123};
use super::{
    Batch, FileContext, Format, InputError, MachineLog, NotALog, Record, into_time_order,
    machine_from_path, read_line_capped,
};
use crate::event::{Event, EventName};

/// The length of the RFC 1123 time a row starts with, as Go prints it:
/// `Mon, 22 Aug 2022 06:36:15 UTC` (weekday optional, fractions allowed, the zone an
/// abbreviation or `-0700` / `+03`). Checked by hand: this runs for every row of a table.
fn time_prefix_len(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    let alpha = |i: usize, n: usize| {
        b.get(i..i + n)
            .is_some_and(|s| s.iter().all(u8::is_ascii_alphabetic))
    };
    let digits = |i: usize| {
        b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let byte = |i: usize, c: u8| b.get(i) == Some(&c);
    if alpha(0, 3) && byte(3, b',') && byte(4, b' ') {
        i = 5;
    }
    let day = digits(i);
    if !(1..=2).contains(&day) || !byte(i + day, b' ') {
        return None;
    }
    i += day + 1;
    if !alpha(i, 3) || !byte(i + 3, b' ') {
        return None;
    }
    i += 4;
    if digits(i) != 4 || !byte(i + 4, b' ') {
        return None;
    }
    i += 5;
    let hour = digits(i);
    if !(1..=2).contains(&hour) || !byte(i + hour, b':') {
        return None;
    }
    i += hour + 1;
    if digits(i) != 2 || !byte(i + 2, b':') || digits(i + 3) != 2 {
        return None;
    }
    i += 5;
    if byte(i, b'.') {
        let fraction = digits(i + 1);
        if fraction == 0 {
            return None;
        }
        i += 1 + fraction;
    }
    if !byte(i, b' ') {
        return None;
    }
    i += 1;
    let zone = if matches!(b.get(i), Some(b'+' | b'-')) {
        match digits(i + 1) {
            n @ (2 | 4) => n + 1,
            _ => return None,
        }
    } else {
        let n = b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        if !(1..=5).contains(&n) {
            return None;
        }
        n
    };
    Some(i + zone)
}

/// Splits off the first column: columns are separated by two or more spaces or tabs (event
/// names hold single spaces). `None` when there is no second column.
fn split_column(text: &str) -> (&str, Option<&str>) {
    let gap = text
        .as_bytes()
        .windows(2)
        .position(|w| w == b"  " || w[0] == b'\t')
        .or_else(|| text.ends_with('\t').then(|| text.len() - 1));
    match gap {
        Some(at) => (
            &text[..at],
            Some(text[at..].trim_start_matches([' ', '\t'])),
        ),
        None => (text, None),
    }
}

/// The machine being read and what has been found for it so far.
struct Section {
    machine: String,
    line: usize,
    events: Vec<Event>,
    last_error: Option<Event>,
    /// Set after `Recent last error`: the next row is the last error event, not a log row.
    in_last_error: bool,
    /// Rows that could not be read.
    bad_rows: usize,
}

impl Section {
    fn new(machine: String, line: usize) -> Section {
        Section {
            machine,
            line,
            events: Vec::new(),
            last_error: None,
            in_last_error: false,
            bad_rows: 0,
        }
    }

    /// The machine read, unless every row of it was bad (its errors say why).
    fn finish(mut self, path: &str) -> Option<MachineLog> {
        if self.events.is_empty() && self.last_error.is_none() && self.bad_rows > 0 {
            return None;
        }
        into_time_order(&mut self.events, true);
        let mut log = MachineLog::new(self.machine, path, self.line, Format::Table);
        log.events = self.events;
        log.last_error_event = self.last_error;
        Some(log)
    }
}

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
    /// Machines without their rows (see [`super::InputOptions::ids_only`]).
    ids_only: bool,
    /// The lines, each with its `\n`.
    text: Vec<u8>,
    /// The number of the first line in `text`.
    first_line: usize,
}

impl TableBatch {
    fn new(ctx: &FileContext, first_line: usize) -> TableBatch {
        TableBatch {
            path: ctx.path.clone(),
            file_machine: ctx.machine.clone(),
            zones: ctx.options.zones.clone(),
            ids_only: ctx.options.ids_only,
            text: Vec::new(),
            first_line,
        }
    }

    /// How many bytes of input the batch holds.
    pub fn len_bytes(&self) -> usize {
        self.text.len()
    }

    /// Parses every row, handing on each machine and naming each bad row.
    pub fn decode(&self, sink: &mut dyn FnMut(Record)) {
        let mut section: Option<Section> = None;
        let lines = self.text.split_inclusive(|&b| b == b'\n');
        for (this_line, raw) in (self.first_line..).zip(lines) {
            let Ok(text) = std::str::from_utf8(raw) else {
                if let Some(current) = section.as_mut() {
                    current.bad_rows += 1;
                }
                sink(Record::Error(InputError::at(
                    &self.path,
                    this_line,
                    "invalid UTF-8; the row is skipped",
                )));
                continue;
            };
            let trimmed = text.trim();
            if trimmed.is_empty() || is_markdown_rule(trimmed) {
                continue;
            }
            if is_header(trimmed) {
                // A table with a header and no rows is a machine without events.
                section.get_or_insert_with(|| Section::new(self.file_machine.clone(), this_line));
                continue;
            }
            if let Some(name) = section_header(trimmed) {
                if let Some(done) = section.take().and_then(|s| s.finish(&self.path)) {
                    sink(Record::Machine(done));
                }
                section = Some(Section::new(machine_from_path(Path::new(name)), this_line));
                continue;
            }
            let current =
                section.get_or_insert_with(|| Section::new(self.file_machine.clone(), this_line));
            if trimmed.starts_with("Recent last error") {
                current.in_last_error = true;
                continue;
            }
            if self.ids_only {
                continue;
            }
            match parse_row(trimmed, &self.zones) {
                Ok(event) => {
                    let event = event.at_line(this_line);
                    if current.in_last_error {
                        current.last_error = Some(event);
                        current.in_last_error = false;
                    } else {
                        current.events.push(event);
                    }
                }
                Err(message) => {
                    current.bad_rows += 1;
                    sink(Record::Error(InputError::at(
                        &self.path, this_line, message,
                    )));
                }
            }
        }
        if let Some(done) = section.and_then(|s| s.finish(&self.path)) {
            sink(Record::Machine(done));
        }
    }
}

/// `==> NAME <==`, as `tail -n +1 *.txt` heads each file.
fn section_header(trimmed: &str) -> Option<&str> {
    trimmed
        .strip_prefix("==> ")
        .and_then(|rest| rest.strip_suffix(" <=="))
        .map(str::trim)
}

/// Whether the first bytes of a file hold at least one table row: a text file without one is
/// some other text, not a damaged table.
pub(crate) fn looks_like_table(head: &[u8], zones: &[ExtraZone]) -> bool {
    head.split(|&b| b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .map(str::trim)
        .any(|line| {
            // The shape of a row is enough: a row whose zone is unknown is still a table row,
            // and its error (with the --tz hint) is more use than "not a log".
            let row = line.trim_start_matches(['|', ' ']);
            time_prefix_len(row).is_some() || parse_row(line, zones).is_ok() || is_header(line)
        })
}

/// Cuts a table file into batches of whole machine sections (a section ends where the next
/// `==> NAME <==` begins) and hands them on; rows are parsed by [`TableBatch::decode`].
pub(crate) fn read(
    mut reader: impl BufRead,
    ctx: &FileContext,
    sink: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut batch = TableBatch::new(ctx, 1);
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let fits = match read_line_capped(&mut reader, &mut buf) {
            Ok(None) => break,
            Ok(Some(fits)) => fits,
            Err(err) => {
                sink(Record::Error(InputError::at(
                    &ctx.path,
                    line_no + 1,
                    format!("cannot read: {err}"),
                )));
                break;
            }
        };
        line_no += 1;
        if !fits {
            sink(Record::Error(InputError::at(
                &ctx.path,
                line_no,
                "line longer than 1 MiB; skipped",
            )));
            // An empty line in its place keeps the batch's line numbers right.
            batch.text.push(b'\n');
            continue;
        }
        let starts_section =
            std::str::from_utf8(&buf).is_ok_and(|l| section_header(l.trim()).is_some());
        if starts_section && batch.text.len() >= BATCH_BYTES {
            let full = std::mem::replace(&mut batch, TableBatch::new(ctx, line_no));
            sink(Record::Batch(Batch::Table(full)));
        }
        batch.text.extend_from_slice(&buf);
        if !buf.ends_with(b"\n") {
            batch.text.push(b'\n');
        }
    }
    if !batch.text.is_empty() {
        sink(Record::Batch(Batch::Table(batch)));
    }
    Ok(())
}

fn is_markdown_rule(line: &str) -> bool {
    line.starts_with('|') && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

fn is_header(line: &str) -> bool {
    let line = line.trim_start_matches(['|', ' ']);
    line.starts_with("TIME") && line.contains("EVENT")
}

/// Parses one row: `TIME  EVENT  MESSAGE` or `| TIME | EVENT | MESSAGE |`.
fn parse_row(line: &str, zones: &[ExtraZone]) -> Result<Event, String> {
    if let Some(inner) = line.strip_prefix('|') {
        return parse_markdown_row(inner, zones);
    }
    let Some(end) = time_prefix_len(line) else {
        return Err(format!(
            "expected a row starting with a time like `Mon, 22 Aug 2022 06:36:15 UTC`, found {:?}",
            shorten(line)
        ));
    };
    let time = parse_rfc1123(&line[..end], zones)?;
    let rest = &line[end..];
    if !(rest.is_empty() || rest.starts_with("  ") || rest.starts_with('\t')) {
        return Err(format!(
            "the time must be followed by two or more spaces, found {:?}",
            shorten(rest)
        ));
    }
    let (name, message) = split_column(rest.trim_start_matches([' ', '\t']));
    finish_row(time, name.trim(), message.unwrap_or("").trim())
}

fn parse_markdown_row(inner: &str, zones: &[ExtraZone]) -> Result<Event, String> {
    let inner = inner.trim_end().strip_suffix('|').unwrap_or(inner);
    let mut cells = inner.splitn(3, '|');
    let time_text = cells.next().unwrap_or("").trim();
    let name = cells.next().unwrap_or("").trim();
    let message = cells.next().unwrap_or("").trim().replace("\\|", "|");
    let time = parse_rfc1123(time_text, zones)?;
    finish_row(time, name, &message)
}

fn finish_row(
    time: chrono::DateTime<chrono::Utc>,
    name: &str,
    message: &str,
) -> Result<Event, String> {
    if name.is_empty() {
        return Err("the row has a time but no EVENT column".to_string());
    }
    let event = EventName::parse(name);
    if message.is_empty() && matches!(event, EventName::Unknown(_)) && name.contains(' ') {
        // `TIME  Foo bar baz` with one gap: the EVENT and MESSAGE columns ran together.
        return Err(format!(
            "cannot tell the EVENT column from the MESSAGE column in {:?}; columns are separated by two or more spaces",
            shorten(name)
        ));
    }
    Ok(Event::from_recorded(time, event, message, 0))
}

fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventKind, State};

    #[test]
    fn plain_row_with_spaced_event_name() {
        let e = parse_row(
            "Mon, 22 Aug 2022 06:36:15 UTC   Booting New Kernel   boot into  distribution kernel  ",
            &[],
        )
        .unwrap();
        assert_eq!(e.name, EventName::Known(EventKind::BootingNewKernel));
        assert_eq!(&*e.message, "boot into  distribution kernel");
    }

    #[test]
    fn recorded_verdict_is_split_off() {
        let e = parse_row("Mon, 22 Aug 2022 06:36:15 UTC  PXE Booting  [unexpectedly received in state waiting]: machine sent extended dhcp request", &[]).unwrap();
        assert_eq!(e.recorded_state, Some(State::Waiting));
        assert_eq!(&*e.message, "machine sent extended dhcp request");
    }

    #[test]
    fn markdown_row() {
        let e = parse_row(
            "| Mon, 22 Aug 2022 06:36:15 CEST | Waiting | waiting for allocation |",
            &[],
        )
        .unwrap();
        assert_eq!(e.name, EventName::Known(EventKind::Waiting));
        assert_eq!(e.time.to_rfc3339(), "2022-08-22T04:36:15+00:00");
        assert_eq!(&*e.message, "waiting for allocation");
    }

    #[test]
    fn row_without_message_is_fine() {
        let e = parse_row("Mon, 22 Aug 2022 06:36:15 +0200  Alive", &[]).unwrap();
        assert_eq!(e.name, EventName::Known(EventKind::Alive));
        assert_eq!(&*e.message, "");
    }

    #[test]
    fn time_prefix_shapes() {
        assert_eq!(
            time_prefix_len("Mon, 22 Aug 2022 06:36:15 UTC  x"),
            Some(29)
        );
        assert_eq!(time_prefix_len("2 Aug 2022 6:36:15.25 -0700"), Some(27));
        assert_eq!(time_prefix_len("Mon, 22 Aug 2022 06:36:15 +03"), Some(29));
        assert_eq!(time_prefix_len("Mon, 22 Aug 2022 06:36:15"), None);
        assert_eq!(time_prefix_len("Mon, 22 Aug 22 06:36:15 UTC"), None);
        assert_eq!(time_prefix_len("Mon, 22 Aug 2022 06:36:15 TOOLONG"), None);
        assert_eq!(time_prefix_len("é"), None);
        assert_eq!(time_prefix_len(""), None);
    }

    #[test]
    fn columns_split_at_wide_gaps() {
        assert_eq!(
            split_column("Booting New Kernel   boot  x"),
            ("Booting New Kernel", Some("boot  x"))
        );
        assert_eq!(split_column("Alive"), ("Alive", None));
        assert_eq!(split_column("Waiting\tw"), ("Waiting", Some("w")));
    }

    #[test]
    fn bad_rows_say_why() {
        assert!(
            parse_row("yesterday  Waiting  x", &[])
                .unwrap_err()
                .contains("expected a row")
        );
        assert!(
            parse_row("Mon, 22 Aug 2022 06:36:15 UTC", &[])
                .unwrap_err()
                .contains("no EVENT column")
        );
        assert!(
            parse_row("Mon, 22 Aug 2022 06:36:15 UTC  waiting for allocation", &[])
                .unwrap_err()
                .contains("cannot tell the EVENT column")
        );
    }
}
