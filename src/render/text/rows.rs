//! `--no-headers`: a table as rows alone, as metal-lib's borderless table prints them for
//! metalctl: no border, one line per row; each cell left-aligned, padded to its column's width
//! and two spaces (the last cell unpadded), so that `awk '{print $1}'` reads the first column.

use std::io::{self, Write};

use anstyle::Style;
use unicode_width::UnicodeWidthStr;

/// A cell as shown, and its style where colour is on.
pub(super) type Cell = (String, Style);

/// Writes the rows, each on a line of its own.
pub(super) fn write(rows: &[Vec<Cell>], out: &mut dyn Write) -> io::Result<()> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|row| row.get(c))
                .map(|(text, _)| text.width())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::new();
        for (c, (text, style)) in row.iter().enumerate() {
            if *style == Style::new() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_padded_to_their_column_and_two_spaces() {
        let cell = |t: &str| (t.to_string(), Style::new());
        let rows = vec![
            vec![cell("a"), cell("Phoned Home"), cell("x")],
            vec![cell("longer"), cell("b"), cell("")],
        ];
        let mut out = Vec::new();
        write(&rows, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a       Phoned Home  x\nlonger  b            \n"
        );
    }
}
