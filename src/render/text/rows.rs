//! `--no-headers`: the view's main table (its first, the one CSV prints) as rows alone, as
//! metal-lib's borderless table prints them for metalctl: no border, no heading, no line or
//! note around it, one line per row; each cell left-aligned, padded to its column's width and
//! two spaces (the last cell unpadded), so that `awk '{print $1}'` reads the first column.

use std::io::{self, Write};

use unicode_width::UnicodeWidthStr;

use super::Show;
use crate::render::doc::{Block, Doc};

/// Prints the document's first table, rows only; nothing where it has none.
pub(super) fn render(doc: &Doc, show: &Show, out: &mut dyn Write) -> io::Result<()> {
    let Some(grid) = doc.blocks.iter().find_map(|b| match b {
        Block::Table(grid) => Some(grid),
        _ => None,
    }) else {
        return Ok(());
    };
    // Every row whole: a column a table shows once for a run of rows (`ditto`) is repeated,
    // so that each line stands alone.
    let texts: Vec<Vec<String>> = grid
        .rows
        .iter()
        .map(|row| row.iter().map(|p| show.text(&p.value)).collect())
        .collect();
    let widths: Vec<usize> = (0..grid.columns.len())
        .map(|c| texts.iter().map(|row| row[c].width()).max().unwrap_or(0))
        .collect();
    for (row, pieces) in texts.iter().zip(&grid.rows) {
        let mut line = String::new();
        for (c, text) in row.iter().enumerate() {
            let style = show.style(pieces[c].tone);
            if style == anstyle::Style::new() {
                line.push_str(text);
            } else {
                line.push_str(&format!("{style}{text}{style:#}"));
            }
            if c + 1 < row.len() {
                line.push_str(&" ".repeat(widths[c] - text.width() + 2));
            }
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}
