//! A [`Doc`] as GitHub-flavoured Markdown, for pull-request comments and tickets: full values
//! (no shortening), every piece from input escaped so that it shows as the text it is.

use crate::event::format_time;
use std::io::{self, Write};

use super::doc::{Align, Block, Doc, Piece, Value, sparkline};
use super::escape;
use crate::window::duration;

fn text(piece: &Piece) -> String {
    match &piece.value {
        // Our own words carry no markup; only a table cell's `|` would split the cell.
        Value::Label(text) => escape::text(text).replace('|', "\\|"),
        Value::Input(text) | Value::Machine(text) | Value::Example(text) => escape::markdown(text),
        Value::Argument(word) => escape::markdown(&escape::shell_word(word)),
        Value::Machines { ids, .. } => ids
            .iter()
            .map(|id| escape::markdown(id))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Count(n) => n.to_string(),
        Value::Time(t) => format_time(*t),
        Value::Share(share) => format!("{:.1}%", share * 100.0),
        Value::Seconds(s) => duration(*s),
        Value::Spark(counts) => sparkline(counts),
        Value::Link { text, url } => format!(
            "[{}]({})",
            escape::text(text).replace('|', "\\|"),
            url.replace(['(', ')', ' '], "")
        ),
        Value::Empty => "—".to_string(),
        Value::Separator => " · ".to_string(),
    }
}

fn line(pieces: &[Piece]) -> String {
    pieces.iter().map(text).collect()
}

/// Prints a document.
pub fn render(doc: &Doc, out: &mut dyn Write) -> io::Result<()> {
    for block in &doc.blocks {
        match block {
            Block::Title(title) => writeln!(out, "## {}\n", escape::markdown(title))?,
            Block::Heading(pieces) => writeln!(out, "### {}\n", line(pieces))?,
            Block::Line(pieces) => writeln!(out, "{}\n", line(pieces))?,
            Block::Command { command, comment } => {
                writeln!(out, "{}\n", line(&Block::command_line(command, comment)))?
            }
            Block::Table(grid) if grid.rows.is_empty() => writeln!(out, "none\n")?,
            Block::Table(grid) => {
                let header: Vec<&str> = grid.columns.iter().map(|c| c.header.as_ref()).collect();
                writeln!(out, "| {} |", header.join(" | "))?;
                let rule: Vec<&str> = grid
                    .columns
                    .iter()
                    .map(|c| match c.align {
                        Align::Left => "---",
                        Align::Right => "---:",
                    })
                    .collect();
                writeln!(out, "| {} |", rule.join(" | "))?;
                for row in &grid.rows {
                    let cells: Vec<String> = row.iter().map(text).collect();
                    writeln!(out, "| {} |", cells.join(" | "))?;
                }
                writeln!(out)?;
            }
        }
    }
    Ok(())
}
