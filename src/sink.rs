//! Where output goes: standard output, or a file named by `--out` (written atomically where
//! that can be done, appended to where it names a descriptor the shell opened).

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Where a command's output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    Stdout,
    File(PathBuf),
}

impl Sink {
    /// `--out` when given, else standard output; `-` is standard output, as everywhere else
    /// a path is taken (`./-` names a file called `-`).
    pub fn to(out: Option<&Path>) -> Sink {
        match out {
            Some(path) if path.as_os_str() != "-" => Sink::File(path.to_path_buf()),
            _ => Sink::Stdout,
        }
    }

    /// Writes through `write` (see [`write_file`] for a file), buffered and flushed.
    pub fn write(&self, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
        match self {
            Sink::File(path) => write_file(path, write),
            Sink::Stdout => {
                let mut out = BufWriter::new(io::stdout().lock());
                write(&mut out)?;
                out.flush()?;
                Ok(())
            }
        }
    }
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
pub fn write_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
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
