//! Standard input, named `-` where a command reads a file (`--rules -`, `--baseline -`, `rules
//! lint -`, `rules import-go -`, `--go-file -`) as among the input paths. It holds one stream:
//! the first reader takes it, and a second `-` is an error naming both, never an empty file.

use std::io::{self, Read};
use std::path::Path;
use std::sync::Mutex;

/// Who took standard input, if anyone did.
static TAKEN: Mutex<Option<&'static str>> = Mutex::new(None);

/// Whether a path names standard input.
pub fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Takes standard input for the input paths (`what`), or says who has it; the paths may be
/// resolved more than once.
pub fn take(what: &'static str) -> io::Result<()> {
    claim(what, true)
}

fn claim(what: &'static str, again: bool) -> io::Result<()> {
    let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    match *taken {
        Some(first) if again && first == what => Ok(()),
        Some(first) => Err(io::Error::other(format!(
            "standard input (`-`) is read once, and it is read for {first} already; name a file for {what}"
        ))),
        None => {
            *taken = Some(what);
            Ok(())
        }
    }
}

/// A file's text, or standard input's where the path is `-` (once in a run).
pub fn read_to_string(path: &Path, what: &'static str) -> io::Result<String> {
    if !is_dash(path) {
        return std::fs::read_to_string(path);
    }
    claim(what, false)?;
    let mut text = String::new();
    io::stdin().lock().read_to_string(&mut text)?;
    Ok(text)
}
