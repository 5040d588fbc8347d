//! One element of a JSON array (or one document): parsed, its problems named with the line
//! in the file, and built into a machine.

use crate::input::raw::{MachineParts, RawItem};
use crate::input::record::{InputError, ReadMode, Record};
use crate::jsonsplit::{Position, element_lines_at};
use crate::log::{Format, MachineLog};

/// Turns a serde error inside an element into one that names the line in the file.
pub(super) fn element_error(
    path: &str,
    start: Position,
    err: &serde_json::Error,
    what: &str,
) -> InputError {
    let (line, column) = if err.line() <= 1 {
        (start.line, start.column + err.column().saturating_sub(1))
    } else {
        (start.line + err.line() - 1, err.column())
    };
    let detail = err.to_string();
    // serde appends its own position, which is relative to the element: drop it.
    let detail = match detail.rfind(" at line ") {
        Some(cut) => detail[..cut].to_string(),
        None => detail,
    };
    InputError {
        path: path.to_string(),
        line,
        column,
        message: format!("invalid {what}: {detail}"),
    }
}

/// A machine object in an array is a `list-json` element, whatever its own shape says.
pub(super) fn array_format(format: Format) -> Format {
    match format {
        Format::DescribeJson => Format::ListJson,
        other => other,
    }
}

/// Parses one array element; a bad one is named and skipped (`None`).
pub(super) fn parse_element<'a>(
    bytes: &'a [u8],
    start: Position,
    path: &str,
    emit: &mut dyn FnMut(Record),
) -> Option<RawItem<'a>> {
    match serde_json::from_slice(bytes) {
        Ok(item) => Some(item),
        Err(err) => {
            emit(Record::Error(element_error(
                path,
                start,
                &err,
                "array element",
            )));
            None
        }
    }
}

/// Builds a machine from its parts (see [`MachineParts::build`]), finding a bad event's line
/// by scanning the element again.
pub(super) fn machine_from_parts(
    parts: MachineParts,
    bytes: &[u8],
    start: Position,
    path: &str,
    file_machine: Option<&str>,
    mode: ReadMode,
    emit: &mut dyn FnMut(Record),
) -> Option<MachineLog> {
    let log_path = parts.log_path;
    let mut event_lines: Option<Vec<usize>> = None;
    let mut line_of = |index: usize| -> usize {
        // Only a bad event needs its own line, so the element is scanned again only then.
        let lines = event_lines.get_or_insert_with(|| {
            element_lines_at(bytes, log_path)
                .unwrap_or_default()
                .into_iter()
                .map(|l| l + start.line - 1)
                .collect()
        });
        lines.get(index).copied().unwrap_or(start.line)
    };
    parts.build(path, start.line, file_machine, mode, &mut line_of, emit)
}
