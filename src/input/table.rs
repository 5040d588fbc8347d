//! The table `metalctl machine logs ID` prints: default, `-o wide` and `-o markdown`, indented
//! or not, with the `Recent last error` block, and several machines under `==> NAME <==`.

use std::io::BufRead;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::time::{ExtraZone, parse_rfc1123};
use super::{
    FileContext, Format, InputError, MachineLog, NotALog, Record, RecordedFlags, into_time_order,
    machine_from_path, read_line_capped,
};
use crate::event::{Event, EventName};

/// A row starts with Go's RFC 1123 time: `Mon, 22 Aug 2022 06:36:15 UTC` (or `-0700`).
static ROW_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[A-Za-z]{3}, )?\d{1,2} [A-Za-z]{3} \d{4} \d{1,2}:\d{2}:\d{2}(?:\.\d+)? (?:[A-Za-z]{1,5}|[+-]\d{4})",
    )
    .expect("the row time pattern is valid")
});

/// Columns are separated by two or more spaces (event names hold single spaces).
static COLUMN_GAP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r" {2,}|\t+").expect("the column gap pattern is valid"));

/// The machine being read and what has been found for it so far.
struct Section {
    machine: String,
    line: usize,
    events: Vec<Event>,
    last_error: Option<Event>,
    /// Set after `Recent last error`: the next row is the last error event, not a log row.
    in_last_error: bool,
}

impl Section {
    fn new(machine: String, line: usize) -> Section {
        Section {
            machine,
            line,
            events: Vec::new(),
            last_error: None,
            in_last_error: false,
        }
    }

    fn finish(mut self, ctx: &FileContext) -> MachineLog {
        into_time_order(&mut self.events, true);
        MachineLog {
            machine: self.machine,
            source: ctx.path.clone(),
            line: self.line,
            format: Format::Table,
            events: self.events,
            last_error_event: self.last_error,
            recorded: RecordedFlags::default(),
            annotated: true,
        }
    }
}

/// Reads a table file line by line.
pub(crate) fn read(
    mut reader: impl BufRead,
    ctx: &FileContext,
    sink: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut section: Option<Section> = None;
    let mut buf = Vec::new();
    let mut line_no = 0;
    let mut rows_seen = 0;
    let mut errors_before_first_row = Vec::new();
    loop {
        buf.clear();
        match read_line_capped(&mut reader, &mut buf) {
            Ok(None) => break,
            Ok(Some(true)) => {}
            Ok(Some(false)) => {
                line_no += 1;
                let error = InputError::at(&ctx.path, line_no, "line longer than 1 MiB; skipped");
                if rows_seen == 0 {
                    errors_before_first_row.push(error);
                } else {
                    sink(Record::Error(error));
                }
                continue;
            }
            Err(err) => {
                sink(Record::Error(InputError::at(
                    &ctx.path,
                    line_no + 1,
                    format!("cannot read: {err}"),
                )));
                break;
            }
        }
        line_no += 1;
        let Ok(text) = std::str::from_utf8(&buf) else {
            let error = InputError::at(&ctx.path, line_no, "invalid UTF-8; the row is skipped");
            if rows_seen == 0 {
                errors_before_first_row.push(error);
            } else {
                sink(Record::Error(error));
            }
            continue;
        };
        let line = text.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim();
        if trimmed.is_empty() || is_markdown_rule(trimmed) || is_header(trimmed) {
            continue;
        }
        if let Some(name) = trimmed
            .strip_prefix("==> ")
            .and_then(|rest| rest.strip_suffix(" <=="))
        {
            if let Some(done) = section.take() {
                sink(Record::Machine(done.finish(ctx)));
            }
            section = Some(Section::new(
                machine_from_path(Path::new(name.trim())),
                line_no,
            ));
            continue;
        }
        let current = section.get_or_insert_with(|| Section::new(ctx.machine.clone(), line_no));
        if trimmed.starts_with("Recent last error") {
            current.in_last_error = true;
            continue;
        }
        match parse_row(trimmed, &ctx.options.zones) {
            Ok(event) => {
                rows_seen += 1;
                let event = event.at_line(line_no);
                if current.in_last_error {
                    current.last_error = Some(event);
                    current.in_last_error = false;
                } else {
                    current.events.push(event);
                }
            }
            Err(message) => {
                let error = InputError::at(&ctx.path, line_no, message);
                if rows_seen == 0 {
                    errors_before_first_row.push(error);
                } else {
                    sink(Record::Error(error));
                }
            }
        }
    }
    if rows_seen == 0 && ctx.options.format.is_none() {
        // Nothing looked like a row: this is some other text file, not a damaged table.
        return Err(NotALog(match errors_before_first_row.first() {
            Some(first) => format!(
                "no table row found (line {}: {})",
                first.line, first.message
            ),
            None => "no table row found".to_string(),
        }));
    }
    for error in errors_before_first_row {
        sink(Record::Error(error));
    }
    if let Some(done) = section {
        sink(Record::Machine(done.finish(ctx)));
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
    let Some(time_match) = ROW_TIME.find(line) else {
        return Err(format!(
            "expected a row starting with a time like `Mon, 22 Aug 2022 06:36:15 UTC`, found {:?}",
            shorten(line)
        ));
    };
    let time = parse_rfc1123(time_match.as_str(), zones)?;
    let rest = &line[time_match.end()..];
    if !rest.is_empty() && COLUMN_GAP.find(rest).is_none_or(|m| m.start() != 0) {
        return Err(format!(
            "the time must be followed by two or more spaces, found {:?}",
            shorten(rest)
        ));
    }
    let rest = rest.trim_start();
    let mut columns = COLUMN_GAP.splitn(rest, 2);
    let name = columns.next().unwrap_or("").trim();
    let message = columns.next().unwrap_or("").trim();
    finish_row(time, name, message)
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
