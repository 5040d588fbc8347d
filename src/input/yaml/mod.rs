//! YAML exports: every JSON shape fsmlog reads, as metalctl prints it with `-o yaml` (the
//! default of `machine describe`; keys as in the JSON, since metalctl marshals YAML from the
//! same models): one document, a `---` stream of documents, or a top-level sequence.
//!
//! saphyr's event parser reads the stream; each top-level element (or document) becomes a
//! JSON value as soon as it is complete and is read by the same code as the JSON exports, so
//! a large list is held one machine at a time.

mod direct;
mod found;
mod tree;

use std::io::{BufRead, Read};
use std::rc::Rc;

use serde::Deserialize;

use super::raw::{RawEvent, RawItem, convert_event};
use crate::event::Event;
use crate::input::context::{FileContext, NotALog};
use crate::input::record::{InputError, Record};
use crate::input::row_order::into_time_order;
use crate::log::{Format, MachineLog};
use found::Found;
use tree::{Chars, Elements};

/// Whether a text file's first meaningful line opens YAML: `---`, a `%YAML` directive, a
/// `key:` mapping line, a `- key:` sequence item at any indent (`-   key:` as PyYAML's
/// `indent=4` and `yq -I4` write it), or a flow collection (`[{key: …`, `{key: …`).
pub(crate) fn looks_like_yaml(head: &[u8]) -> bool {
    let Some(first) = head
        .split(|&b| b == b'\n')
        .filter_map(|l| std::str::from_utf8(l).ok())
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    else {
        return false;
    };
    if first.starts_with("---") || first.starts_with("%YAML") || is_flow_yaml(first) {
        return true;
    }
    let item = match first.strip_prefix('-') {
        Some(rest) if rest.starts_with([' ', '\t']) => rest.trim_start_matches([' ', '\t']),
        _ => first,
    };
    let key_len = item
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    key_len > 0
        && item.as_bytes()[0].is_ascii_alphabetic()
        && item[key_len..].starts_with(':')
        && matches!(item.as_bytes().get(key_len + 1), None | Some(b' '))
}

/// Whether a line opens a flow collection of mappings with plain keys, `[{id: m, …` or
/// `{id: m, …`, which JSON (whose keys are quoted) never is.
pub(crate) fn is_flow_yaml(line: &str) -> bool {
    let rest = line.trim_start();
    let rest = rest
        .strip_prefix('[')
        .or_else(|| rest.strip_prefix("- "))
        .unwrap_or(rest)
        .trim_start();
    let Some(inner) = rest.strip_prefix('{') else {
        return false;
    };
    let inner = inner.trim_start();
    let key_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    key_len > 0
        && inner.as_bytes()[0].is_ascii_alphabetic()
        && inner[key_len..].trim_start().starts_with(':')
}

/// A small YAML text that is one mapping (a rule file), read whole.
pub(crate) struct Mapping {
    /// The JSON value it spells.
    pub value: serde_json::Value,
    /// The line of each item of its sequences, by their path of keys (`transitions`).
    pub sequence_lines: std::collections::HashMap<String, Vec<usize>>,
    /// The line of each of its top-level keys.
    pub key_lines: std::collections::HashMap<String, usize>,
    /// Each key repeated in one of its mappings (by its path of keys), at the repeat's line.
    pub repeated_keys: Vec<(usize, String)>,
}

/// Reads a YAML text that is one mapping.
pub(crate) fn mapping(text: &str) -> Result<Mapping, String> {
    let mut chars = Chars::new(text.as_bytes());
    let mut reading = Elements::new(&mut chars, 0);
    reading.note_keys = true;
    let element = match reading.next() {
        Ok(Some(element)) if !reading.in_sequence && element.value.is_object() => element,
        Ok(_) => return Err("line 1: expected a YAML mapping".to_string()),
        Err((line, column, message)) => return Err(format!("line {line}:{column}: {message}")),
    };
    match reading.next() {
        Ok(None) => Ok(Mapping {
            value: element.value,
            sequence_lines: element.item_lines,
            key_lines: element.key_lines,
            repeated_keys: element.repeated_keys,
        }),
        Ok(Some(next)) => Err(format!(
            "line {}: a second document; a rule file is one mapping",
            next.line
        )),
        Err((line, column, message)) => Err(format!("line {line}:{column}: {message}")),
    }
}

/// Reads one YAML file; `forced` is the JSON shape the user named, if any. A list as
/// metalctl prints it is read straight from its lines ([`direct`]) as far as it keeps to
/// that shape; the rest, or the whole file, goes through saphyr's parser.
pub(crate) fn read(
    reader: impl BufRead,
    ctx: &FileContext,
    forced: Option<Format>,
    emit: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    read_with(reader, ctx, forced, true, &mut 0, emit)
}

/// [`read`], with the direct reader or without (`direct`), counting the items it read.
fn read_with(
    mut reader: impl BufRead,
    ctx: &FileContext,
    forced: Option<Format>,
    direct: bool,
    direct_read: &mut usize,
    emit: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut found = Found::new(forced);
    if forced.is_none() && direct {
        match direct::read_list(&mut reader, ctx, &mut found, direct_read, emit) {
            direct::Outcome::Done => return Ok(()),
            direct::Outcome::Rest { head, line, error } => {
                let rest = std::io::Cursor::new(head).chain(direct::Then { error, reader });
                return careful(rest, line - 1, ctx, forced, found, emit);
            }
        }
    }
    careful(reader, 0, ctx, forced, found, emit)
}

/// Reads YAML with saphyr's parser from `offset` lines into the file on, with what the
/// elements before (read straight from their lines) found.
fn careful(
    reader: impl BufRead,
    offset: usize,
    ctx: &FileContext,
    forced: Option<Format>,
    mut found: Found,
    emit: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut chars = Chars::new(reader);
    chars.lines = offset;
    let problems = Rc::clone(&chars.problems);
    let parsed = {
        let mut reading = Elements::new(&mut chars, offset);
        loop {
            let element = match reading.next() {
                Ok(Some(element)) => element,
                Ok(None) => break Ok(()),
                Err(err) => break Err(err),
            };
            if problems.borrow().fatal {
                // The input ended early: the last element may be cut short.
                break Ok(());
            }
            let item = RawItem::deserialize(&element.value).map_err(|e| e.to_string());
            let in_list = reading.in_sequence;
            found.element(item, element.line, &element.item_lines, in_list, ctx, emit);
        }
    };
    if let Err((line, column, message)) = parsed {
        emit(Record::Error(InputError {
            path: ctx.path.clone(),
            line,
            column,
            message: format!("invalid YAML: {message}"),
        }));
    }
    for (line, message) in std::mem::take(&mut problems.borrow_mut().lines) {
        emit(Record::Error(InputError::at(&ctx.path, line, message)));
    }
    let last_error = match chars.trailer {
        Some(at) => read_trailer(&mut chars, at, ctx, emit),
        None => None,
    };
    if found.events_array == Some(true) || last_error.is_some() {
        if found.log_events.is_a_machine(last_error.is_some()) {
            let mut events = found.log_events.events;
            into_time_order(&mut events, true);
            let mut log = MachineLog::new(ctx.machine.clone(), &ctx.path, 1, Format::LogsJson);
            log.yaml = true;
            log.events = events;
            log.last_error_event = last_error;
            emit(Record::Machine(log));
        }
        return Ok(());
    }
    if found.machines == 0 && found.elements > 0 && found.events_array.is_none() && forced.is_none()
    {
        return Err(NotALog(
            "YAML whose documents are neither events nor machines".to_string(),
        ));
    }
    Ok(())
}

/// Whether reading `bytes` as YAML, a list as metalctl prints it straight from its lines,
/// hands on exactly the records (machines, events, problems, in the same order) that saphyr's
/// parser's reading of the whole file does; `None` where the direct reader read no item. For
/// the differential property test and fuzz target; the reader never calls it.
pub fn yaml_agrees(bytes: &[u8]) -> Option<bool> {
    let options = crate::input::record::InputOptions::default();
    let ctx = FileContext {
        path: "list.yaml".to_string(),
        machine: "list".to_string(),
        options: &options,
        read_ahead: true,
        named: true,
    };
    let mut direct_read = 0;
    let mut records = |direct: bool| {
        let mut out = Vec::new();
        // A small buffer, so that lines also run past its end.
        let reader = std::io::BufReader::with_capacity(64, bytes);
        let mut emit = |r: Record| match r {
            Record::Batch(batch) => batch.parse(&mut |r| out.push(format!("{r:?}"))),
            other => out.push(format!("{other:?}")),
        };
        let read = read_with(reader, &ctx, None, direct, &mut direct_read, &mut emit);
        (read.is_ok(), out)
    };
    let careful = records(false);
    let direct = records(true);
    (direct_read > 0).then(|| direct == careful)
}

/// metalctl's `Recent last error (… ago):` block after a `machine logs -o yaml` document:
/// the last error event, as one more YAML document.
fn read_trailer<R: BufRead>(
    chars: &mut Chars<R>,
    at: usize,
    ctx: &FileContext,
    emit: &mut dyn FnMut(Record),
) -> Option<Event> {
    chars.trailer = None;
    let mut reading = Elements::new(chars, at);
    let element = match reading.next() {
        Ok(Some(element)) => element,
        Ok(None) => return None,
        Err((line, column, message)) => {
            emit(Record::Error(InputError {
                path: ctx.path.clone(),
                line,
                column,
                message: format!("invalid YAML after `Recent last error`: {message}"),
            }));
            return None;
        }
    };
    let converted = RawEvent::deserialize(&element.value)
        .map_err(|e| e.to_string())
        .and_then(convert_event);
    match converted {
        Ok(event) => Some(event.at_line(element.line)),
        Err(message) => {
            emit(Record::Error(InputError::at(
                &ctx.path,
                element.line,
                message,
            )));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_is_told_by_its_first_line() {
        assert!(looks_like_yaml(b"---\nid: x\n"));
        assert!(looks_like_yaml(b"# comment\nallocation: null\n"));
        assert!(looks_like_yaml(b"- event: Waiting\n  time: x\n"));
        assert!(!looks_like_yaml(
            b"Mon, 22 Aug 2022 06:36:15 UTC  Waiting  w\n"
        ));
        assert!(!looks_like_yaml(b"TIME  EVENT  MESSAGE\n"));
        assert!(!looks_like_yaml(b"Hi team: here is the log\n"));
    }

    /// What reading `reader` hands on, batches decoded in order, with the direct reader or
    /// without.
    fn records(reader: impl BufRead, direct: bool) -> (Vec<String>, usize) {
        let options = crate::input::record::InputOptions::default();
        let ctx = FileContext {
            path: "list.yaml".to_string(),
            machine: "list".to_string(),
            options: &options,
            read_ahead: true,
            named: true,
        };
        let (mut out, mut read) = (Vec::new(), 0);
        let mut emit = |r: Record| match r {
            Record::Batch(batch) => batch.parse(&mut |r| out.push(format!("{r:?}"))),
            other => out.push(format!("{other:?}")),
        };
        let _ = read_with(reader, &ctx, None, direct, &mut read, &mut emit);
        (out, read)
    }

    #[test]
    fn a_read_error_in_a_list_is_told_as_the_parser_tells_it() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk on fire"))
            }
        }
        let list =
            "---\n- events:\n    log: []\n  id: m-1\n- events:\n    log: []\n  id: m-2\n- ev";
        let reader = || std::io::BufReader::with_capacity(16, list.as_bytes().chain(Broken));
        let (careful, _) = records(reader(), false);
        let (direct, read) = records(reader(), true);
        assert_eq!(
            read, 1,
            "the item the error follows is the parser's to read"
        );
        assert_eq!(direct, careful);
        assert!(
            careful
                .iter()
                .any(|r| r.contains("cannot read: disk on fire")),
            "{careful:?}"
        );
    }

    #[test]
    fn yaml_of_other_printers_is_told_too() {
        assert!(looks_like_yaml(b"-   id: m\n    events:\n"));
        assert!(looks_like_yaml(b"[{id: m, events: {log: []}}]\n"));
        assert!(looks_like_yaml(b"{id: m}\n"));
        assert!(!is_flow_yaml("[{\"id\": \"m\"}]"));
        assert!(!is_flow_yaml("{\"id\": 1}"));
        assert!(!looks_like_yaml(b"-Mon, 22 Aug 2022\n"));
    }
}
