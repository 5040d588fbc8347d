//! Reading exports: detects each input's format by content and dispatches it to its reader,
//! which hands on every machine as soon as it is read. The shared types live in [`record`],
//! finding and opening inputs in [`source`], the readers beside them.

mod context;
pub mod fast;
mod head;
pub(crate) mod json;
mod lines;
mod ndjson;
mod problems;
mod raw;
mod row_order;
pub use fast::direct_agrees;
pub use json::whole_log_agrees;
pub use ndjson::stream_agrees;
/// What a skim keeps of a member (`fast::skim`), for the collector's own shapes.
pub(crate) use raw::Member;
pub use record::StreamLine;
pub use table::table_agrees;
pub use yaml::yaml_agrees;
pub mod record;
mod row;
pub mod source;
mod table;
pub mod time;
pub(crate) mod yaml;

pub use crate::log::Format;
pub use context::machine_from_path;
pub use problems::{FilesRead, Problems, Skipped};
pub use record::{Batch, InputError, InputOptions, Merged, Record};
pub use source::{InputFile, SourceKind, discover, identities_known, repeats};

use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use flate2::read::MultiGzDecoder;

use context::{ErrorCap, FileContext, Metered, NotALog};
use fast::{ReadPath, Reading};
use head::{BOM, Failing, Head, read_head};

/// Parses a batch, handing on each machine and each problem in input order: at most
/// [`MAX_ERRORS`] problems, then a count of the rest.
pub fn decode(batch: &dyn Batch, emit: &mut dyn FnMut(Record)) {
    let mut capped = ErrorCap::new(emit);
    batch.parse(&mut |r| capped.pass(r));
    capped.finish();
}

/// Reads one input and hands on every record it holds, machines of a large array in batches
/// still to be decoded. `false` when the input could not be opened (that is named in a record).
pub fn read_file(file: &InputFile, options: &InputOptions, emit: &mut dyn FnMut(Record)) -> bool {
    let display = file.display();
    let mut reading = match file.open() {
        Ok(reading) => reading,
        Err(err) => {
            emit(Record::Error(InputError::at(
                &display,
                0,
                format!("cannot open: {err}"),
            )));
            return false;
        }
    };
    let ctx = FileContext {
        machine: options
            .machine_id
            .clone()
            .unwrap_or_else(|| machine_from_path(&file.path)),
        path: display,
        options,
        read_ahead: file.kind == SourceKind::File,
        named: file.named,
    };
    let mut capped = ErrorCap::new(emit);
    match &options.bytes_read {
        Some(counter) => {
            let mut counting = Metered {
                inner: &mut reading,
                counter: Arc::clone(counter),
            };
            read_stream(&mut counting, &ctx, &mut |r| capped.pass(r));
        }
        None => read_stream(&mut reading, &ctx, &mut |r| capped.pass(r)),
    }
    capped.finish();
    reading.finish();
    true
}

/// Reads one input on this thread and hands on machines and problems only: batches are
/// decoded as they come. `false` when the input could not be opened.
pub fn read_file_decoded(
    file: &InputFile,
    options: &InputOptions,
    emit: &mut dyn FnMut(Record),
) -> bool {
    read_file(file, options, &mut |record| match record {
        Record::Batch(batch) => decode(batch.as_ref(), emit),
        other => emit(other),
    })
}

/// Reads one input from any reader as if it were the file `name` named on the command line,
/// batches decoded (for tests and fuzzing).
pub fn read_reader(
    mut reader: impl Read,
    name: &str,
    options: &InputOptions,
    emit: &mut dyn FnMut(Record),
) {
    let ctx = FileContext {
        machine: options
            .machine_id
            .clone()
            .unwrap_or_else(|| machine_from_path(Path::new(name))),
        path: name.to_string(),
        options,
        read_ahead: true,
        named: true,
    };
    read_stream(&mut reader, &ctx, &mut |record| match record {
        Record::Batch(batch) => decode(batch.as_ref(), emit),
        other => emit(other),
    });
}

fn read_stream(raw: &mut dyn Read, ctx: &FileContext, emit: &mut dyn FnMut(Record)) {
    read_layer(raw, None, ctx, emit);
}

/// Reads a stream, unwrapping what is wrapped around the text: gzip (told by its magic
/// number, so compressed standard input works too) and UTF-16 with a byte-order mark (what
/// Windows PowerShell's `>` writes). `layer` names the wrapping the stream came out of.
fn read_layer(
    raw: &mut dyn Read,
    layer: Option<&str>,
    ctx: &FileContext,
    emit: &mut dyn FnMut(Record),
) {
    let head = read_head(raw);
    if head.cut == 0
        && let Some(err) = &head.error
    {
        let message = match layer {
            Some(layer) => format!("cannot decompress ({layer}): {err}"),
            None => format!("cannot read: {err}"),
        };
        emit(Record::Error(InputError::at(&ctx.path, 0, message)));
        return;
    }
    let seen = &head.bytes[..head.cut];
    // What wraps the text starts at its first byte, never after blank ones.
    let bare = head.padding.is_empty();
    let gzip = bare && seen.starts_with(&[0x1f, 0x8b]);
    let utf16 = bare && (seen.starts_with(&[0xff, 0xfe]) || seen.starts_with(&[0xfe, 0xff]));
    if gzip || utf16 {
        let mut rest = Failing(head.error);
        let joined = io::Cursor::new(head.bytes).chain(raw).chain(&mut rest);
        if gzip {
            read_layer(&mut MultiGzDecoder::new(joined), Some("gzip"), ctx, emit);
        } else {
            let mut decoded = encoding_rs_io::DecodeReaderBytesBuilder::new()
                .bom_sniffing(true)
                .strip_bom(true)
                .build(joined);
            read_layer(&mut decoded, Some("UTF-16"), ctx, emit);
        }
        return;
    }
    read_detected(head, raw, ctx, emit);
}

/// Detects the format from the head and reads the whole input with its reader.
fn read_detected(
    mut head: Head,
    rest: &mut dyn Read,
    ctx: &FileContext,
    emit: &mut dyn FnMut(Record),
) {
    let seen = &head.bytes[..head.cut];
    let bom = seen.starts_with(BOM);
    let family = match (ctx.options.format, detect(seen)) {
        (_, Err(damage)) => {
            // The head leaves out the blank lines before the content.
            let line = match damage.line {
                0 => 0,
                line => line + head.padding.lines,
            };
            emit(Record::Error(InputError::at(
                &ctx.path,
                line,
                damage.message,
            )));
            return;
        }
        (Some(Format::Table), _) => Family::Table,
        (Some(Format::Ndjson), _) => Family::Stream,
        (Some(_), Ok(Family::Yaml)) => Family::Yaml,
        (Some(_), _) => Family::Json,
        (None, Ok(Family::Table)) if !table::looks_like_table(seen, &ctx.options.zones) => {
            let reason = "no table row (`Mon, 22 Aug 2022 06:36:15 UTC  EVENT  MESSAGE`) in its first lines, and not JSON";
            report_not_a_log(ctx, reason.to_string(), emit);
            return;
        }
        (None, Ok(family)) => family,
    };
    if ctx.read_ahead {
        head.read_ahead(rest);
    }
    let ways = fast::ways(match family {
        Family::Json => Reading::Json {
            held_whole: head.complete && head.error.is_none() && head.padding.is_empty(),
        },
        Family::Yaml => Reading::Yaml,
        Family::Table => Reading::Table,
        Family::Stream => Reading::Stream,
    });
    for &way in ways.fast {
        let whole = &head.bytes[if bom { BOM.len() } else { 0 }..];
        if way == ReadPath::WholeLog && json::whole_log(whole, ctx, ctx.options.format, emit) {
            fast::read_by(&ctx.path, way, emit);
            return;
        }
    }
    fast::read_by(&ctx.path, ways.careful, emit);
    let reader = head.into_reader(rest, if bom { BOM.len() } else { 0 });
    let outcome = match family {
        Family::Table => table::read(reader, ctx, emit),
        Family::Stream => ndjson::read(reader, ctx, emit),
        Family::Json => json::read(reader, ctx, ctx.options.format, emit),
        Family::Yaml => yaml::read(reader, ctx, ctx.options.format, emit),
    };
    if let Err(NotALog(reason)) = outcome {
        report_not_a_log(ctx, reason, emit);
    }
}

/// Names a file that holds no machine log: an error when the user named it, a skipped file
/// when it was found in a directory.
fn report_not_a_log(ctx: &FileContext, reason: String, emit: &mut dyn FnMut(Record)) {
    {
        let hint = match ctx.options.format {
            None => "; use --format to read it as a given format",
            Some(_) => "",
        };
        if ctx.named {
            emit(Record::Error(InputError::at(
                &ctx.path,
                0,
                format!("not a machine log: {reason}{hint}"),
            )));
        } else {
            emit(Record::Skipped(Skipped {
                path: ctx.path.clone(),
                reason: format!("{reason}{hint}"),
            }));
        }
    }
}

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
    /// The JSON shapes as YAML (`-o yaml`).
    Yaml,
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
        // Text in UTF-16 has a NUL beside every ASCII character.
        let pairs = head.chunks_exact(2).take(64);
        let utf16 = pairs.clone().count() > 4
            && pairs
                .clone()
                .all(|p| (p[0] == 0) != (p[1] == 0) || p == [0, 0]);
        let hint = if utf16 {
            "; it looks like UTF-16 without a byte-order mark: convert it with `iconv -f UTF-16LE -t UTF-8`"
        } else {
            ""
        };
        return Err(Damage {
            line: 1 + head[..nul].iter().filter(|&&b| b == b'\n').count(),
            message: format!("binary content (a NUL byte), not a machine log{hint}"),
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
    let first_line = text.split(|&b| b == b'\n').next().unwrap_or_default();
    if std::str::from_utf8(first_line).is_ok_and(yaml::is_flow_yaml) {
        return Ok(Family::Yaml);
    }
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
        // A text with table rows among its first lines is a table, whatever else it holds.
        _ if !table::looks_like_table(text, &[]) && yaml::looks_like_yaml(text) => Family::Yaml,
        _ => Family::Table,
    })
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
        let marker = b"{\"machine\": \"m\", \"time\": \"2025-09-01T00:00:00Z\", \"gap\": true}\n";
        assert_eq!(detect(marker), Ok(Family::Stream), "a gap marker first");
        assert_eq!(detect(b" \n ").unwrap_err().message, "the file is empty");
        assert_eq!(detect(b"a\nb\x7fELF\0\0").unwrap_err().line, 2);
    }
}
