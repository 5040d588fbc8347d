//! Where input comes from: the command line's paths expanded into inputs (directories walked,
//! symlinks followed, the same file named twice read once), and each input opened for reading.
//!
//! Standard input, pipes and FIFOs can be read only once. As a first pass reads one, every
//! byte is copied into a spool (memory up to a bound, then a temporary file), and a later pass
//! reads the spool instead: no source is ever read twice.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::record::InputError;

/// How an input is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A regular file, opened afresh for every pass.
    File,
    /// Standard input (`-`), spooled as it is read.
    Stdin,
    /// A pipe, FIFO or device named by path (`<(…)`, `/dev/stdin`), spooled as it is read.
    Stream,
}

/// One input to read, and whether it was named by the user or found in a directory.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub path: PathBuf,
    pub named: bool,
    pub kind: SourceKind,
    spool: Arc<OnceLock<Spooled>>,
    /// The file's identity once it is known: from the `stat` that found a path named on the
    /// command line, from the open file for one found in a directory (see [`repeats`]).
    identity: Arc<OnceLock<Identity>>,
}

impl InputFile {
    fn new(path: PathBuf, named: bool, kind: SourceKind, identity: Option<Identity>) -> InputFile {
        let known = OnceLock::new();
        if let Some(identity) = identity {
            let _ = known.set(identity);
        }
        InputFile {
            path,
            named,
            kind,
            spool: Arc::new(OnceLock::new()),
            identity: Arc::new(known),
        }
    }

    /// Learns the file's identity from its path, unless it is known already.
    pub fn learn_identity(&self) {
        if self.identity.get().is_none() {
            let _ = self.identity.set(identity(&self.path));
        }
    }

    /// The path as shown in messages; `-` for standard input.
    pub fn display(&self) -> String {
        // A path that is UTF-8 (almost every one) is copied; only another is made lossy, which
        // costs a scan character by character.
        match self.path.to_str() {
            Some(text) => text.to_string(),
            None => self.path.display().to_string(),
        }
    }

    /// The size in bytes where it is known beforehand (regular files).
    pub fn size(&self) -> Option<u64> {
        match self.kind {
            SourceKind::File => std::fs::metadata(&self.path).ok().map(|m| m.len()),
            _ => self.spool.get().map(Spooled::len),
        }
    }

    /// Opens the input: a file afresh, a stream from its spool once a pass has read it, or
    /// else from its source with a copy of every byte kept for the next pass (completed by
    /// [`Reading::finish`]).
    pub fn open(&self) -> io::Result<Reading> {
        if self.kind == SourceKind::File {
            let file = File::open(&self.path);
            if self.identity.get().is_none() {
                // Asked of the open file, no path is looked up again; a file that cannot be
                // opened is asked by its path, as the walk used to ask every file.
                let id = match &file {
                    Ok(file) => file.metadata().ok().and_then(|m| identity_of(&m)),
                    Err(_) => identity(&self.path),
                };
                let _ = self.identity.set(id);
            }
            return Ok(Reading {
                inner: Box::new(file?),
                tee: None,
            });
        }
        if let Some(spooled) = self.spool.get() {
            return Ok(Reading {
                inner: spooled.reader()?,
                tee: None,
            });
        }
        let inner: Box<dyn Read + Send> = match self.kind {
            SourceKind::Stdin => Box::new(io::stdin()),
            _ => Box::new(File::open(&self.path)?),
        };
        Ok(Reading {
            inner,
            tee: Some((SpoolWriter::default(), Arc::clone(&self.spool))),
        })
    }
}

/// An open input. Reading it from its source also fills the spool.
pub struct Reading {
    inner: Box<dyn Read + Send>,
    tee: Option<(SpoolWriter, Arc<OnceLock<Spooled>>)>,
}

impl Read for Reading {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some((spool, _)) = &mut self.tee {
            spool.write_all(&buf[..n])?;
        }
        Ok(n)
    }
}

impl Reading {
    /// Reads what the pass left unread into the spool, so that the next pass sees the whole
    /// input; a read error is kept and raised again where the next pass reaches it.
    pub fn finish(mut self) {
        let Some((mut spool, slot)) = self.tee.take() else {
            return;
        };
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            match self.inner.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    if let Err(err) = spool.write_all(&chunk[..n]) {
                        spool.error = Some(err.to_string());
                        break;
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    spool.error = Some(err.to_string());
                    break;
                }
            }
        }
        let _ = slot.set(spool.seal());
    }
}

/// How much of a stream a spool keeps in memory before it moves to a temporary file.
const SPOOL_MEMORY: usize = 64 << 20;

/// A spool being filled.
#[derive(Default)]
struct SpoolWriter {
    memory: Vec<u8>,
    file: Option<io::BufWriter<tempfile::NamedTempFile>>,
    len: u64,
    /// The read error that ended the input early, if one did.
    error: Option<String>,
}

impl Write for SpoolWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && self.memory.len() + buf.len() > SPOOL_MEMORY {
            let mut file = io::BufWriter::with_capacity(1 << 20, tempfile::NamedTempFile::new()?);
            file.write_all(&self.memory)?;
            self.memory = Vec::new();
            self.file = Some(file);
        }
        match &mut self.file {
            Some(file) => file.write_all(buf)?,
            None => self.memory.extend_from_slice(buf),
        }
        self.len += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

impl SpoolWriter {
    fn seal(self) -> Spooled {
        let data = match self.file {
            Some(file) => match file.into_inner() {
                Ok(file) => SpoolData::File(file),
                Err(err) => {
                    return Spooled {
                        data: SpoolData::Memory(Arc::from(Vec::new())),
                        len: 0,
                        error: Some(format!("cannot write the spool: {}", err.error())),
                    };
                }
            },
            None => SpoolData::Memory(Arc::from(self.memory)),
        };
        Spooled {
            data,
            len: self.len,
            error: self.error,
        }
    }
}

/// A stream as a first pass read it.
#[derive(Debug)]
struct Spooled {
    data: SpoolData,
    len: u64,
    error: Option<String>,
}

#[derive(Debug)]
enum SpoolData {
    Memory(Arc<[u8]>),
    File(tempfile::NamedTempFile),
}

impl Spooled {
    fn len(&self) -> u64 {
        self.len
    }

    fn reader(&self) -> io::Result<Box<dyn Read + Send>> {
        let data: Box<dyn Read + Send> = match &self.data {
            SpoolData::Memory(bytes) => Box::new(io::Cursor::new(Arc::clone(bytes))),
            SpoolData::File(file) => Box::new(file.reopen()?),
        };
        Ok(match &self.error {
            Some(error) => Box::new(data.chain(FailAtEnd(Some(error.clone())))),
            None => data,
        })
    }
}

/// Raises a stored read error once, where the input ended the first time.
struct FailAtEnd(Option<String>);

impl Read for FailAtEnd {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(error) => Err(io::Error::other(error)),
            None => Ok(0),
        }
    }
}

/// The inputs behind the command line's paths, and what was not read and why.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Every file listed, in order; a file reached twice is listed twice (see [`repeats`]).
    pub files: Vec<InputFile>,
    pub errors: Vec<InputError>,
    /// Entries that are not read, with the reason: hidden ones, special files found in a
    /// directory.
    pub skipped: Vec<super::problems::Skipped>,
}

/// The file `fsmlog collect` keeps what its next poll is aligned to in (`collect/tail.rs`),
/// passed over without a word in a directory read.
const COLLECTOR_STATE: &[u8] = b".fsmlog-tail.json";

/// Expands the command-line paths into inputs: directories recursively and sorted, symlinks
/// followed (a loop is named, not followed), hidden entries of a directory and special files
/// found in one named and left out (a collector's state file without a word). A file found in a directory is not `stat`ed here: its
/// identity, which tells a file reached twice, is learnt when it is opened (a directory of
/// thousands of small files would otherwise wait for one `stat` after another before its
/// first file is read); [`repeats`] then names the files listed twice.
pub fn discover(paths: &[PathBuf]) -> Discovered {
    let mut found = Discovered::default();
    for path in paths {
        if path.as_os_str() == "-" {
            if let Err(err) = crate::stdin::take("an input path") {
                found.errors.push(InputError::at("-", 0, err.to_string()));
                continue;
            }
            let id = identity(Path::new("/dev/stdin"));
            let stdin = InputFile::new(path.clone(), true, SourceKind::Stdin, Some(id));
            found.files.push(stdin);
            continue;
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, &mut found),
            Ok(meta) => {
                let kind = if meta.is_file() {
                    SourceKind::File
                } else {
                    SourceKind::Stream
                };
                let id = identity_of(&meta);
                found
                    .files
                    .push(InputFile::new(path.clone(), true, kind, Some(id)));
            }
            Err(err) => {
                // ELOOP: a symlink that points at itself, or a cycle of them.
                let message = if err.raw_os_error() == Some(40) && cfg!(target_os = "linux") {
                    "symlink loop, not followed".to_string()
                } else if std::fs::symlink_metadata(path).is_ok() {
                    format!("broken symlink: {err}")
                } else if err.kind() == io::ErrorKind::NotFound {
                    "no such file or directory".to_string()
                } else {
                    format!("cannot read: {err}")
                };
                found
                    .errors
                    .push(InputError::at(&path.display().to_string(), 0, message));
            }
        }
    }
    found
}

/// The files that are a file listed before them (by device and inode), each by its index
/// with why it is not read, in listing order; a file whose identity is not known (not
/// opened yet, or without one) is taken as no other.
pub fn repeats(files: &[InputFile]) -> Vec<(usize, String)> {
    let mut seen: HashMap<(u64, u64), usize> = HashMap::new();
    let mut twice = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let Some(Some(id)) = file.identity.get() else {
            continue;
        };
        match seen.get(id) {
            Some(&first) => twice.push((
                index,
                format!(
                    "the same file as {}, which is read once",
                    files[first].display()
                ),
            )),
            None => {
                seen.insert(*id, index);
            }
        }
    }
    twice
}

/// Whether every file's identity is known, so that [`repeats`] is final.
pub fn identities_known(files: &[InputFile]) -> bool {
    files.iter().all(|f| f.identity.get().is_some())
}

/// A file's identity on this system (device and inode), where there is one.
type Identity = Option<(u64, u64)>;

fn identity(path: &Path) -> Identity {
    std::fs::metadata(path).ok().and_then(|m| identity_of(&m))
}

#[cfg(unix)]
fn identity_of(meta: &std::fs::Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity_of(_meta: &std::fs::Metadata) -> Identity {
    None
}

fn walk(root: &Path, found: &mut Discovered) {
    let mut entries = walkdir::WalkDir::new(root)
        .follow_links(true)
        // Siblings share their parent's path, so comparing whole paths orders them by name,
        // without taking each path apart at every comparison.
        .sort_by(|a, b| a.path().as_os_str().cmp(b.path().as_os_str()))
        .into_iter();
    while let Some(entry) = entries.next() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                let path = err.path().unwrap_or(root).display().to_string();
                let message = if err.loop_ancestor().is_some() {
                    "symlink loop, not followed".to_string()
                } else if err
                    .path()
                    .is_some_and(|p| std::fs::symlink_metadata(p).is_ok())
                {
                    format!(
                        "broken symlink or unreadable entry: {}",
                        err.io_error().map_or(err.to_string(), |e| e.to_string())
                    )
                } else {
                    format!("cannot read directory entry: {err}")
                };
                found.errors.push(InputError::at(&path, 0, message));
                continue;
            }
        };
        let name = entry.file_name().as_encoded_bytes();
        let hidden = entry.depth() > 0 && name.starts_with(b".");
        // A collector's own state beside its history (docs/history.md): no input, no noise.
        if hidden && name == COLLECTOR_STATE {
            continue;
        }
        let display = || entry.path().display().to_string();
        if hidden {
            found.skipped.push(super::problems::Skipped {
                path: display(),
                reason: "hidden; name it on the command line to read it".to_string(),
            });
            if entry.file_type().is_dir() {
                entries.skip_current_dir();
            }
            continue;
        }
        let kind = entry.file_type();
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            found.skipped.push(super::problems::Skipped {
                path: display(),
                reason: "not a regular file (a pipe, socket or device in a directory is not read; name it on the command line)"
                    .to_string(),
            });
            continue;
        }
        let file = InputFile::new(entry.into_path(), false, SourceKind::File, None);
        found.files.push(file);
    }
}
