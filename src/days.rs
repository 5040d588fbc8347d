//! A history directory's day files (`events/YYYY-MM-DD.ndjson`, docs/history.md): the name of
//! a day's file, the day a name holds, and a folder's day files by day. One place for the
//! collector that writes them and the live fleet that follows them.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;

/// The name of `day`'s file.
pub fn name(day: NaiveDate) -> String {
    format!("{}.ndjson", day.format("%Y-%m-%d"))
}

/// The day a day file's name holds; `None` for any other name.
pub fn day_of(name: &str) -> Option<NaiveDate> {
    let day = name.strip_suffix(".ndjson")?;
    NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()
}

/// The day files in `events`, with their names, by day (a folder not made yet holds none).
pub fn list(events: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut files = Vec::new();
    let entries = match std::fs::read_dir(events) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(err) => return Err(err),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if day_of(&name).is_some() && entry.file_type()?.is_file() {
            files.push((name, entry.path()));
        }
    }
    files.sort();
    Ok(files)
}
