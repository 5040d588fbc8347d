//! What every command does alike at its end: how it ended (the exit code), standard output,
//! files written, and the input's problems told on stderr.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

use crate::gate::Nothing;
use crate::input::record::InputError;
use crate::render::escape;

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Ok,
    /// Exit 1: `check`, `diff` or `rules lint` found what it gates on.
    GateFailed,
    /// Exit 2: some input could not be read; the rest was reported.
    InputErrors,
}

/// Tells on stderr why a gate has nothing to judge (see [`Nothing`]), after the input's
/// problems.
pub(crate) fn say_nothing_read(nothing: Option<Nothing>) {
    if let Some(nothing) = nothing {
        say_nothing(
            nothing,
            "there is nothing to gate on",
            "accept an empty input",
        );
    }
}

/// Whether metrics must not be written: no machine was read, and an empty exposition would
/// tell a collector that every issue is resolved.
pub(crate) fn no_metrics_of_nothing(machines: u64, allow_empty: bool) -> bool {
    machines == 0 && !allow_empty
}

/// Says on stderr that no metrics were written and why, after the input's problems.
pub(crate) fn say_no_metrics() {
    say_nothing(
        Nothing::Machines,
        "no metrics are written (an empty text would resolve every alert)",
        "write it",
    );
}

/// `fsmlog: <what was not read>, so <consequence>; check the paths, or pass --allow-empty to
/// <what that does>`.
fn say_nothing(nothing: Nothing, consequence: &str, allowed: &str) {
    eprintln!(
        "fsmlog: {}, so {consequence}; check the paths, or pass --allow-empty to {allowed}",
        crate::render::sentence::nothing(nothing)
    );
}

/// Tells what could not be read (see [`print_problems`]) and ends a command that gates on
/// nothing: exit code 2 where some input could not be read, else 0.
pub(crate) fn finish(
    errors: &[InputError],
    skipped: &[(String, String)],
    notes: &[InputError],
) -> Outcome {
    print_problems(errors, skipped, notes);
    if errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::InputErrors
    }
}

/// Tells on stderr what could not be read and how ambiguous inputs were taken, so that
/// stdout stays clean for programs.
pub(crate) fn print_problems(
    errors: &[InputError],
    skipped: &[(String, String)],
    notes: &[InputError],
) {
    let stderr = io::stderr();
    let mut err = stderr.lock();
    for note in notes {
        let _ = writeln!(err, "fsmlog: note: {}", escape::text(&note.to_string()));
    }
    for (path, reason) in skipped {
        let line = format!("skipped {path}: {reason}");
        let _ = writeln!(err, "fsmlog: {}", escape::text(&line));
    }
    for error in errors {
        let _ = writeln!(err, "fsmlog: {}", escape::text(&error.to_string()));
    }
}

/// Standard output, buffered.
pub(crate) fn stdout() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::new(io::stdout().lock())
}

/// Writes a file through `write`, naming the file in any error. A regular file (or one not
/// there yet) is written atomically, wherever it is (`/dev/shm` too): into a temporary file
/// beside it (whose name does not end like the file's, so that node_exporter's textfile
/// collector never reads half a `.prom`), then renamed over it; a reader sees the old file or
/// the new one. The new file keeps an existing file's permissions, else is readable by all.
/// Symbolic links are followed, so a link stays and the file it names (there or not yet) is
/// replaced. A path that names a descriptor the caller holds (`/dev/stdout`, `/dev/stderr`,
/// `/dev/fd/N`, `/proc/self/fd/N`) is appended to, since it may be a file the shell opened
/// for `>>`; anything else that cannot be renamed over (a pipe, a device) is written
/// straight.
pub(crate) fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let mut target = path.to_path_buf();
    // As many links as Linux follows before it says ELOOP.
    for _ in 0..40 {
        if names_a_descriptor(&target) {
            // Appended to: reopening a descriptor's file must not cut what the shell's `>>`
            // kept (a `>` has already emptied it).
            return write_straight(path, true, write);
        }
        match std::fs::symlink_metadata(&target) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let Ok(next) = std::fs::read_link(&target) else {
                    break;
                };
                target = match target.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            Ok(meta) if meta.is_file() => {
                return write_atomically(path, &target, Some(meta.permissions()), write);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return write_atomically(path, &target, readable_by_all(), write);
            }
            _ => break,
        }
    }
    write_straight(path, false, write)
}

/// Whether a path names one of the process's open descriptors, not a file of its own.
fn names_a_descriptor(path: &Path) -> bool {
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // By its components, so that `/dev/fd//1` and `/dev/./fd/1` are `/dev/fd/1`.
    let path: std::path::PathBuf = path.components().collect();
    let Some(text) = path.to_str() else {
        return false;
    };
    if matches!(text, "/dev/stdout" | "/dev/stderr") {
        return true;
    }
    if let Some(fd) = text.strip_prefix("/dev/fd/") {
        return number(fd);
    }
    let Some(rest) = text.strip_prefix("/proc/") else {
        return false;
    };
    match rest.split_once("/fd/") {
        Some((process, fd)) => {
            (process == "self" || process == "thread-self" || number(process)) && number(fd)
        }
        None => false,
    }
}

/// Writes `real` (the file `shown` names) by renaming a finished temporary file over it.
fn write_atomically(
    shown: &Path,
    real: &Path,
    permissions: Option<std::fs::Permissions>,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let dir = match real.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = real
        .file_name()
        .map_or_else(|| "fsmlog".into(), |n| n.to_string_lossy().into_owned());
    let failed = || format!("cannot write {}", shown.display());
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create {}", shown.display()))?;
    let mut out = BufWriter::new(temp);
    write(&mut out).with_context(failed)?;
    let temp = out
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(failed)?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(temp.path(), permissions).with_context(failed)?;
    }
    temp.persist(real)
        .map_err(|e| e.error)
        .with_context(failed)?;
    Ok(())
}

/// Writes `path` in place, for what is not a regular file; at its end where `append`.
fn write_straight(
    path: &Path,
    append: bool,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let failed = || format!("cannot write {}", path.display());
    let file = std::fs::OpenOptions::new()
        .write(true)
        .append(append)
        .create(!append)
        .truncate(!append)
        .open(path)
        .with_context(failed)?;
    let mut out = BufWriter::new(file);
    write(&mut out).with_context(failed)?;
    out.flush().with_context(failed)?;
    Ok(())
}

/// A new file's permissions: 0644 (a temporary file starts as 0600, which a collector
/// running as another user cannot read).
#[cfg(unix)]
fn readable_by_all() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn readable_by_all() -> Option<std::fs::Permissions> {
    None
}

/// Writes through `write` to `--out` when given (see [`write_file`]), else to standard output.
pub(crate) fn output(
    out: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    match out {
        Some(path) => write_file(path, write),
        None => {
            let mut out = stdout();
            write(&mut out)?;
            out.flush()?;
            Ok(())
        }
    }
}
