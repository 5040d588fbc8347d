//! One line of a `metalctl machine logs` table, as metalctl printed it or as a person pasted
//! it: `TIME  EVENT  MESSAGE` with columns two or more spaces apart (also `-o wide`, indented,
//! or `| … |` Markdown), the RFC 3339 times metalctl printed before August 2022, and pasted
//! copies whose gaps chat, mail or an issue collapsed to single spaces and that may carry list
//! or quote markers (`• `, `- `, `* `, `> `). In a pasted row the event is told from the
//! message by metal-api's event names.

use chrono::{DateTime, Utc};

use super::time::{
    ExtraZone, fixed_rfc1123, parse_rfc1123, parse_rfc3339, rfc3339_prefix_len, time_prefix_len,
};
use crate::event::{Event, EventKind, EventName};

/// What one line of a table file is.
#[derive(Debug)]
pub(crate) enum Line<'a> {
    /// Nothing but whitespace.
    Blank,
    /// A `TIME  EVENT  MESSAGE` header.
    Header,
    /// A Markdown table's `|---|---|` rule.
    Rule,
    /// `==> NAME <==`: the next machine's section begins.
    Section(&'a str),
    /// `Recent last error (… ago):`: the next row is the last error event.
    LastError,
    /// A row, read or not; `pasted` when its gaps were collapsed or it carries markers.
    Row {
        event: Result<Event, String>,
        pasted: bool,
    },
    /// The command that printed the table (`metalctl machine logs ID`, `$ …`), as quoted
    /// with it.
    Command,
    /// Any other text: prose around a pasted log, or a broken line of a table.
    Other(&'a str),
}

/// Reads one line.
pub(crate) fn classify<'a>(text: &'a str, zones: &[ExtraZone]) -> Line<'a> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Line::Blank;
    }
    if let Some(name) = section_header(trimmed) {
        return Line::Section(name);
    }
    let (body, marked) = strip_markers(trimmed);
    if body.is_empty() {
        return Line::Blank;
    }
    if is_markdown_rule(body) {
        return Line::Rule;
    }
    if is_header(body) {
        return Line::Header;
    }
    if body.starts_with("Recent last error") {
        return Line::LastError;
    }
    if body.starts_with("metalctl ") || body.starts_with("$ ") {
        return Line::Command;
    }
    if let Some(inner) = body.strip_prefix('|') {
        return Line::Row {
            event: parse_markdown_row(inner, zones),
            pasted: marked,
        };
    }
    let Some(end) = time_prefix_len(body) else {
        if let Some(at) = buried_row(body) {
            return Line::Row {
                event: Err(format!(
                    "a row after other text ({:?}): a row starts with its time (after any `- `, `1. ` or `> ` marker); the row is skipped",
                    shorten(body[..at].trim_end())
                )),
                pasted: true,
            };
        }
        return Line::Other(trimmed);
    };
    let time = match parse_time(&body[..end], zones) {
        Ok(time) => time,
        Err(err) => {
            return Line::Row {
                event: Err(err),
                pasted: marked,
            };
        }
    };
    let rest = &body[end..];
    if rest.starts_with("  ") || rest.starts_with('\t') || rest.trim().is_empty() {
        let (name, message) = split_column(rest.trim_start_matches([' ', '\t']));
        return Line::Row {
            event: finish_row(time, name.trim(), message.unwrap_or("").trim()),
            pasted: marked,
        };
    }
    match rest.strip_prefix(' ') {
        Some(pasted) => Line::Row {
            event: pasted_row(time, pasted),
            pasted: true,
        },
        None => Line::Row {
            event: Err(format!(
                "the time must be followed by a space, found {:?}",
                shorten(rest)
            )),
            pasted: marked,
        },
    }
}

/// A row exactly as metalctl prints it (its own time first, then a gap of two or more
/// spaces), read without [`classify`]'s look at every other kind of line: `None` for any
/// other line, which `classify` reads; where it answers, `classify` answers the same
/// (`table_agrees` and the property tests check it).
pub(crate) fn fast_classify<'a>(text: &'a str, zones: &[ExtraZone]) -> Option<Line<'a>> {
    // A letter first: no indent, marker, header, `|` or section, so `classify` would come
    // to the time at once.
    let line = text.trim_end();
    if !line.as_bytes().first()?.is_ascii_alphabetic() {
        return None;
    }
    let (time, end) = fixed_rfc1123(line, zones)?;
    let rest = &line[end..];
    if !rest.starts_with("  ") {
        return None;
    }
    let (name, message) = split_column(rest.trim_start_matches([' ', '\t']));
    Some(Line::Row {
        event: finish_row(time, name.trim(), message.unwrap_or("").trim()),
        pasted: false,
    })
}

/// Whether a line has a row's shape (a time at its start, after any markers or `|`), whether
/// or not it reads: a row whose zone is unknown is still a row.
pub(crate) fn has_row_shape(text: &str) -> bool {
    let (body, _) = strip_markers(text.trim());
    time_prefix_len(body.trim_start_matches(['|', ' '])).is_some()
}

/// Takes off leading list and quote markers (nested ones too), numbered ones among them.
fn strip_markers(mut line: &str) -> (&str, bool) {
    let mut marked = false;
    loop {
        let rest = ["• ", "- ", "* ", "> ", "•", ">"]
            .iter()
            .find_map(|m| line.strip_prefix(m))
            .or_else(|| strip_number(line));
        match rest {
            // A bare `>` ends a quoted blank line; `-` or `*` alone would be prose.
            Some(rest) => {
                line = rest.trim_start();
                marked = true;
            }
            None => return (line, marked),
        }
    }
}

/// Where a line that does not start with a row's time holds one further on, followed by one
/// of metal-api's event names: a row with something before it, which must not pass for prose.
fn buried_row(line: &str) -> Option<usize> {
    line.char_indices()
        .filter(|&(i, _)| i > 0 && !line.as_bytes()[i - 1].is_ascii_alphanumeric())
        .find(|&(i, _)| {
            let at = &line[i..];
            time_prefix_len(at).is_some_and(|end| {
                let rest = at[end..].trim_start_matches([' ', '\t', '|']);
                EventKind::ALL.iter().any(|k| {
                    rest.get(..k.name().len())
                        .is_some_and(|head| head.eq_ignore_ascii_case(k.name()))
                })
            })
        })
        .map(|(i, _)| i)
}

/// Takes off a numbered list marker: `1. `, `1) ` or `(1) ` (at most four digits, so that
/// no time or year is taken for one).
fn strip_number(line: &str) -> Option<&str> {
    let (open, body) = match line.strip_prefix('(') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=4).contains(&digits) {
        return None;
    }
    let rest = &body[digits..];
    let rest = if open {
        rest.strip_prefix(") ")?
    } else {
        rest.strip_prefix(". ")
            .or_else(|| rest.strip_prefix(") "))?
    };
    Some(rest)
}

/// A row whose gaps were collapsed: after the time, metal-api's event name (the longest that
/// fits, in any case), then the message.
fn pasted_row(time: DateTime<Utc>, rest: &str) -> Result<Event, String> {
    let rest = rest.trim_start();
    let mut names: Vec<EventKind> = EventKind::ALL.to_vec();
    names.sort_by_key(|k| std::cmp::Reverse(k.name().len()));
    for kind in names {
        let name = kind.name();
        let Some(head) = rest.get(..name.len()) else {
            continue;
        };
        let after = &rest[name.len()..];
        if head.eq_ignore_ascii_case(name) && (after.is_empty() || after.starts_with(' ')) {
            return Ok(Event::from_recorded(
                time,
                EventName::Known(kind),
                after.trim(),
                0,
            ));
        }
    }
    Err(format!(
        "cannot tell the event from the message in {:?}: no metal-api event name follows the time (in a table, columns are two or more spaces apart)",
        shorten(rest)
    ))
}

/// The time a row starts with, as metalctl prints it: RFC 1123, or RFC 3339 before 2022.
fn parse_time(text: &str, zones: &[ExtraZone]) -> Result<DateTime<Utc>, String> {
    // RFC 3339 has its `T` after the date; an RFC 1123 time without its weekday may end in a
    // zone that holds one (`22 Aug 2022 06:36:15 UTC`).
    if rfc3339_prefix_len(text).is_some() {
        parse_rfc3339(text)
    } else {
        parse_rfc1123(text, zones)
    }
}

/// Splits off the first column: columns are separated by two or more spaces or tabs (event
/// names hold single spaces). `None` when there is no second column.
fn split_column(text: &str) -> (&str, Option<&str>) {
    // The first tab, or the first of two spaces.
    let bytes = text.as_bytes();
    let gap = memchr::memchr2_iter(b' ', b'\t', bytes)
        .find(|&i| bytes[i] == b'\t' || bytes.get(i + 1) == Some(&b' '));
    match gap {
        Some(at) => (
            &text[..at],
            Some(text[at..].trim_start_matches([' ', '\t'])),
        ),
        None => (text, None),
    }
}

/// `==> NAME <==`, as `tail -n +1 *.txt` heads each file.
pub(crate) fn section_header(trimmed: &str) -> Option<&str> {
    trimmed
        .strip_prefix("==> ")
        .and_then(|rest| rest.strip_suffix(" <=="))
        .map(str::trim)
}

fn is_markdown_rule(line: &str) -> bool {
    line.starts_with('|') && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

fn is_header(line: &str) -> bool {
    let line = line.trim_start_matches(['|', ' ']);
    line.starts_with("TIME") && line.contains("EVENT")
}

/// Parses one line that should be a row (for tests).
#[cfg(test)]
fn parse_row(line: &str, zones: &[ExtraZone]) -> Result<Event, String> {
    match classify(line, zones) {
        Line::Row { event, .. } => event,
        other => Err(format!("not a row: {other:?}")),
    }
}

fn parse_markdown_row(inner: &str, zones: &[ExtraZone]) -> Result<Event, String> {
    let inner = inner.trim_end().strip_suffix('|').unwrap_or(inner);
    let mut cells = inner.splitn(3, '|');
    let time_text = cells.next().unwrap_or("").trim();
    let name = cells.next().unwrap_or("").trim();
    let message = cells.next().unwrap_or("").trim().replace("\\|", "|");
    let time = parse_time(time_text, zones)?;
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
                .contains("not a row")
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

    #[test]
    fn pasted_rows_tell_the_event_by_its_name() {
        let e = parse_row(
            "Thu, 01 Sep 2022 15:49:37 UTC PXE Booting [unexpectedly received in state phoned home]: machine sent extended dhcp request",
            &[],
        )
        .unwrap();
        assert_eq!(e.name, EventName::Known(EventKind::PxeBooting));
        assert_eq!(e.recorded_state, Some(State::PhonedHome));
        assert_eq!(&*e.message, "machine sent extended dhcp request");
        let e = parse_row(
            "> - Mon, 22 Aug 2022 06:36:15 UTC booting new kernel boot into",
            &[],
        )
        .unwrap();
        assert_eq!(e.name, EventName::Known(EventKind::BootingNewKernel));
        assert_eq!(&*e.message, "boot into");
        assert!(matches!(
            classify("• Mon, 22 Aug 2022 06:36:15 UTC Waiting", &[]),
            Line::Row {
                pasted: true,
                event: Ok(_)
            }
        ));
        assert!(
            parse_row("Mon, 22 Aug 2022 06:36:15 UTC Rebooting now", &[])
                .unwrap_err()
                .contains("no metal-api event name follows the time")
        );
    }

    #[test]
    fn rows_of_2020_have_rfc3339_times() {
        let e = parse_row(
            "2020-09-17T07:29:22.780Z        Planned Reboot  autoreboot after 24h",
            &[],
        )
        .unwrap();
        assert_eq!(e.name, EventName::Known(EventKind::PlannedReboot));
        assert_eq!(e.time.to_rfc3339(), "2020-09-17T07:29:22.780+00:00");
        assert_eq!(&*e.message, "autoreboot after 24h");
        let pasted = parse_row(
            "2020-09-16T07:29:34.740+02:00 Registering start registering",
            &[],
        )
        .unwrap();
        assert_eq!(pasted.name, EventName::Known(EventKind::Registering));
        assert_eq!(rfc3339_prefix_len("2020-09-16T07:29:34Z x"), Some(20));
        assert_eq!(rfc3339_prefix_len("2020-09-16 07:29:34Z"), None);
    }

    #[test]
    fn numbered_markers_are_markers_and_buried_rows_are_named() {
        for line in [
            "1. Mon, 22 Aug 2022 06:36:15 UTC Waiting w",
            "12) Mon, 22 Aug 2022 06:36:15 UTC Waiting w",
            "(3) Mon, 22 Aug 2022 06:36:15 UTC Waiting w",
            "> 4. Mon, 22 Aug 2022 06:36:15 UTC Waiting w",
        ] {
            let e = parse_row(line, &[]).unwrap_or_else(|err| panic!("{line}: {err}"));
            assert_eq!(e.name, EventName::Known(EventKind::Waiting), "{line}");
        }
        // A date is no number marker.
        let e = parse_row("22 Aug 2022 06:36:15 UTC  Waiting  w", &[]).unwrap();
        assert_eq!(e.time.to_rfc3339(), "2022-08-22T06:36:15+00:00");
        assert!(
            parse_row("Step 6: Mon, 22 Aug 2022 06:36:15 UTC Waiting w", &[])
                .unwrap_err()
                .contains("a row after other text (\"Step 6:\")")
        );
        assert!(matches!(
            classify("We saw it on Mon, 22 Aug 2022 06:36:15 UTC, twice.", &[]),
            Line::Other(_)
        ));
    }

    #[test]
    fn metalctls_rows_take_the_fast_path_and_all_else_declines() {
        let zones = [("XST".to_string(), 330)];
        for line in [
            "Mon, 22 Aug 2022 06:36:15 UTC   Booting New Kernel   boot into  distribution kernel  \n",
            "Mon, 22 Aug 2022 06:36:15 XST  PXE Booting  [unexpectedly received in state waiting]: x\r\n",
            "Sun, 21 Sep 2025 16:19:52 +0200  Alive",
            "Mon, 22 Aug 2022 06:36:15 UTC  waiting for allocation",
        ] {
            let fast = fast_classify(line, &zones).unwrap_or_else(|| panic!("declined {line:?}"));
            assert_eq!(
                format!("{fast:?}"),
                format!("{:?}", classify(line, &zones)),
                "{line:?}"
            );
        }
        for line in [
            "  Mon, 22 Aug 2022 06:36:15 UTC  Waiting  w",
            "Mon, 22 Aug 2022 06:36:15 UTC Waiting w",
            "Mon, 22 Aug 2022 06:36:15.5 UTC  Waiting  w",
            "Mon, 2 Aug 2022 06:36:15 UTC  Waiting  w",
            "Mon, 22 Aug 2022 06:36:15 FOO  Waiting  w",
            "Mon, 30 Feb 2022 06:36:15 UTC  Waiting  w",
            "Mon, 22 Aug 2022 23:59:60 UTC  Waiting  w",
            "Mon, 22 Aug 2022 06:36:15 UTC",
            "| Mon, 22 Aug 2022 06:36:15 UTC | Waiting | w |",
            "2020-09-17T07:29:22.780Z  Waiting  w",
            "TIME  EVENT  MESSAGE",
        ] {
            assert!(fast_classify(line, &zones).is_none(), "{line:?}");
        }
    }

    #[test]
    fn prose_and_markers_are_not_rows() {
        assert!(matches!(classify("Here is the log:", &[]), Line::Other(_)));
        assert!(matches!(classify("> ", &[]), Line::Blank));
        assert!(matches!(
            classify("- TIME EVENT MESSAGE", &[]),
            Line::Header
        ));
    }
}
