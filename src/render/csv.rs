//! Tables as CSV (RFC 4180, a header row): full values for programs and spreadsheets, every
//! piece from input with its control characters escaped and no leading formula character.

use crate::event::format_time;
use std::io::{self, Write};

use super::doc::{Block, Column, Doc, Piece, Value};
use super::escape;

/// A piece as a CSV field: raw numbers, RFC 3339 times, ids separated by spaces.
fn field(piece: &Piece) -> String {
    match &piece.value {
        Value::Label(text) => escape::csv(text).into_owned(),
        Value::Input(text) | Value::Machine(text) | Value::Example(text) => {
            escape::csv(text).into_owned()
        }
        Value::Argument(word) => escape::csv(&escape::shell_word(word)).into_owned(),
        // One field: only its start could be read as a formula, so only it is guarded.
        Value::Machines { ids, .. } => escape::csv(&ids.join(" ")).into_owned(),
        Value::Count(n) => n.to_string(),
        Value::Time(t) => format_time(*t),
        Value::Share(share) => share.to_string(),
        Value::Seconds(s) => format!("{s:.3}"),
        Value::Spark(counts) => counts
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" "),
        Value::Link { text, .. } => escape::csv(text).into_owned(),
        Value::Empty => String::new(),
        Value::Separator => " · ".to_string(),
    }
}

/// Writes rows as they come, the header first.
pub struct CsvRows<W: Write> {
    writer: csv::Writer<W>,
}

impl<W: Write> CsvRows<W> {
    /// Goes on writing rows of these columns, the header only when `header`.
    pub fn continuing(out: W, columns: &[Column], header: bool) -> io::Result<CsvRows<W>> {
        // RFC 4180 ends records with CRLF.
        let mut writer = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(out);
        if header {
            writer.write_record(columns.iter().map(|c| c.header.as_ref()))?;
        }
        Ok(CsvRows { writer })
    }

    /// One row.
    pub fn row(&mut self, pieces: &[Piece]) -> io::Result<()> {
        Ok(self.writer.write_record(pieces.iter().map(field))?)
    }

    /// Flushes what is written.
    pub fn finish(mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

/// Prints the document's first table, the view's data, its header row where `header`.
pub fn render(doc: &Doc, header: bool, out: &mut dyn Write) -> io::Result<()> {
    let Some(grid) = doc.blocks.iter().find_map(|b| match b {
        Block::Table(grid) => Some(grid),
        _ => None,
    }) else {
        return Ok(());
    };
    let mut rows = CsvRows::continuing(out, &grid.columns, header)?;
    for row in &grid.rows {
        rows.row(row)?;
    }
    rows.finish()
}
