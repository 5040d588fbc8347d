//! A [`Doc`] for a terminal or a pipe: tables drawn with comfy-table, fitted to the
//! terminal's width by shortening values first, then wrapping only the columns that may wrap,
//! then leaving out optional columns (said below the table); colour only where it is on.
//! Piped output is never wrapped or shortened, so that `grep` and `cut` work.

use crate::event::format_time;
use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{
    Attribute, Cell, CellAlignment, Color, ColumnConstraint, ContentArrangement, Table, Width,
};
use unicode_width::UnicodeWidthStr;

use super::doc::{Align, Block, Doc, Fit, Grid, Piece, Shortener, Tone, Value, sparkline};
use super::escape;
use super::terminal::Terminal;
use crate::window::duration;

mod command;
mod rows;

/// The narrowest a wrapping column gets before optional columns are left out.
const MIN_WRAP: usize = 24;
/// The narrowest a wrapping column ever gets.
const MIN_COLUMN: usize = 8;

/// How pieces are shown here.
struct Show<'t> {
    term: &'t Terminal,
    ids: Shortener,
}

impl Show<'_> {
    fn text(&self, value: &Value) -> String {
        let id = |id: &str| {
            let id = escape::text(id);
            if self.term.shorten {
                self.ids.show(&id).to_string()
            } else {
                id.into_owned()
            }
        };
        match value {
            Value::Label(text) => escape::text(text).into_owned(),
            Value::Input(text) => escape::text(text).into_owned(),
            Value::Argument(word) => escape::text(&escape::shell_word(word)).into_owned(),
            Value::Machine(m) | Value::Example(m) => id(m),
            Value::Machines { ids, total } => {
                let shown = if self.term.shorten { 2 } else { ids.len() };
                let mut list: Vec<String> = ids.iter().take(shown).map(|m| id(m)).collect();
                let rest = total.saturating_sub(list.len() as u64);
                if self.term.shorten && rest > 0 {
                    list.push(format!("+{rest}"));
                }
                list.join(", ")
            }
            Value::Count(n) => n.to_string(),
            Value::Time(t) if self.term.shorten => t.format("%Y-%m-%d %H:%M:%S").to_string(),
            Value::Time(t) => format_time(*t),
            Value::Share(share) => format!("{:.1}%", share * 100.0),
            Value::Seconds(s) => duration(*s),
            Value::Spark(counts) => sparkline(counts),
            Value::Link { text, .. } => escape::text(text).into_owned(),
            Value::Empty => "—".to_string(),
            Value::Separator => " · ".to_string(),
        }
    }

    fn style(&self, tone: Tone) -> Style {
        if !self.term.color {
            return Style::new();
        }
        match tone {
            Tone::Plain => Style::new(),
            Tone::Bad => AnsiColor::Red.on_default(),
            Tone::Warn => AnsiColor::Yellow.on_default(),
            Tone::Strong => Style::new().bold(),
            Tone::Faint => Style::new().dimmed(),
        }
    }

    fn styled(&self, piece: &Piece) -> String {
        let text = self.text(&piece.value);
        let style = self.style(piece.tone);
        if style == Style::new() {
            text
        } else {
            format!("{style}{text}{style:#}")
        }
    }

    /// A piece in the line's tone: a heading's plain pieces are strong.
    fn toned(piece: &Piece, strong: bool) -> Piece {
        if strong && piece.tone == Tone::Plain {
            piece.clone().tone(Tone::Strong)
        } else {
            piece.clone()
        }
    }

    /// A line of pieces, fitted to the terminal; continuation lines are indented. A line
    /// of items (pieces between [`Value::Separator`]s) breaks only between its items, after
    /// the ` ·`; an item wider than a line of its own, and a line without items, break
    /// between pieces.
    fn line(&self, pieces: &[Piece], strong: bool) -> String {
        let width = self.term.width.unwrap_or(usize::MAX);
        let mut flow = Flow::default();
        if !pieces.iter().any(|p| p.value == Value::Separator) {
            self.flow(pieces, strong, width, &mut flow);
            return flow.out;
        }
        let items: Vec<&[Piece]> = pieces.split(|p| p.value == Value::Separator).collect();
        for (i, item) in items.iter().enumerate() {
            let own: usize = item.iter().map(|p| self.text(&p.value).width()).sum();
            // An item with another after it leaves room for the ` ·` a break would end on.
            let tail = if i + 1 < items.len() { 2 } else { 0 };
            let wide = own + tail;
            if i > 0 {
                let separator = Show::toned(&Value::Separator.into(), strong);
                if flow.used + 3 + wide > width && flow.used > 2 {
                    flow.out.push_str(self.styled(&separator).trim_end());
                    flow.out.push_str("\n  ");
                    flow.used = 2;
                } else {
                    flow.out.push_str(&self.styled(&separator));
                    flow.used += 3;
                }
            }
            if flow.used + wide <= width {
                for piece in item.iter() {
                    flow.out.push_str(&self.styled(&Show::toned(piece, strong)));
                }
                flow.used += own;
            } else {
                self.flow(item, strong, width.saturating_sub(tail), &mut flow);
            }
        }
        flow.out
    }

    /// A command and its comment on one line where they fit, else as
    /// [`command::lay_out`] lays them out.
    fn command(&self, command: &[Piece], comment: &[Piece]) -> String {
        let width = self.term.width.unwrap_or(usize::MAX);
        let line = Block::command_line(command, comment);
        if line
            .iter()
            .map(|p| self.text(&p.value).width())
            .sum::<usize>()
            <= width
        {
            return self.line(&line, false);
        }
        // Our own words break at their spaces; a word from input (a quoted id) never does.
        let words = |pieces: &[Piece]| {
            command::words(pieces.iter().map(|p| {
                let breaks = matches!(p.value, Value::Label(_));
                (self.text(&p.value), self.style(p.tone), breaks)
            }))
        };
        command::lay_out(&words(comment), &words(command), width)
    }

    /// Lays pieces out from where `flow` stands, broken between pieces (never inside one)
    /// where they are wider than the terminal.
    fn flow(&self, pieces: &[Piece], strong: bool, width: usize, flow: &mut Flow) {
        // Our own words break anywhere between words; text from input only where it would
        // not fit on a line of its own.
        let mut words = Vec::new();
        for piece in pieces {
            let (text, whole) = match &piece.value {
                Value::Label(text) => (text.as_ref(), false),
                Value::Input(text) => (text.as_str(), text.width() + 2 <= width),
                _ => ("", true),
            };
            if whole || !text.contains(' ') {
                words.push(piece.clone());
                continue;
            }
            for (i, word) in text.split(' ').enumerate() {
                let as_piece = |t: String| match piece.value {
                    Value::Input(_) => Value::Input(t),
                    _ => Value::Label(t.into()),
                };
                if i > 0 {
                    words.push(Piece {
                        value: as_piece(" ".to_string()),
                        tone: piece.tone,
                    });
                }
                words.push(Piece {
                    value: as_piece(word.to_string()),
                    tone: piece.tone,
                });
            }
        }
        // Words with no space between them (a link and the bracket after it) stay on one
        // line together: a line breaks only at a space.
        let mut units: Vec<Vec<Piece>> = Vec::new();
        let mut glued = false;
        for piece in words {
            let blank = self.text(&piece.value).trim().is_empty();
            match units.last_mut() {
                Some(unit) if glued && !blank => unit.push(piece),
                _ => units.push(vec![piece]),
            }
            glued = !blank;
        }
        let Flow { out, used } = flow;
        let mut full = false;
        for unit in &units {
            let unit: Vec<Piece> = unit.iter().map(|p| Show::toned(p, strong)).collect();
            let plain: String = unit.iter().map(|p| self.text(&p.value)).collect();
            let w = plain.width();
            let blank = plain.trim().is_empty();
            if *used > 0 && *used + w > width && blank {
                // A space that does not fit is where the line breaks, not a trailing blank.
                full = true;
                continue;
            }
            if *used > 0 && (full || *used + w > width) && !blank {
                let kept = out.trim_end_matches(' ').len();
                out.truncate(kept);
                out.push_str("\n  ");
                *used = 2;
                full = false;
            }
            let shown: String = unit.iter().map(|p| self.styled(p)).collect();
            if *used == 2 && out.ends_with("\n  ") {
                out.push_str(shown.trim_start());
                *used += plain.trim_start().width();
            } else {
                out.push_str(&shown);
                *used += w;
            }
        }
    }
}

/// A line being laid out: what is written, and how wide its last line is.
#[derive(Default)]
struct Flow {
    out: String,
    used: usize,
}

/// Prints a document.
pub fn render(doc: &Doc, term: &Terminal, out: &mut dyn Write) -> io::Result<()> {
    let show = Show {
        term,
        ids: Shortener::new(doc.machine_ids()),
    };
    if !term.headers {
        // The view's main table (its first, the one CSV prints) and nothing around it; every
        // row whole, a column shown once for a run of rows (`ditto`) repeated on each line.
        let Some(grid) = doc.blocks.iter().find_map(|b| match b {
            Block::Table(grid) => Some(grid),
            _ => None,
        }) else {
            return Ok(());
        };
        let cells: Vec<Vec<rows::Cell>> = grid
            .rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|p| (show.text(&p.value), show.style(p.tone)))
                    .collect()
            })
            .collect();
        return rows::write(&cells, out);
    }
    for block in &doc.blocks {
        match block {
            Block::Title(_) => {}
            Block::Heading(pieces) => writeln!(out, "\n{}", show.line(pieces, true))?,
            Block::Line(pieces) => writeln!(out, "{}", show.line(pieces, false))?,
            Block::Command { command, comment } => {
                writeln!(out, "{}", show.command(command, comment))?
            }
            Block::Table(grid) => table(grid, &show, out)?,
        }
    }
    Ok(())
}

fn table(grid: &Grid, show: &Show, out: &mut dyn Write) -> io::Result<()> {
    if grid.rows.is_empty() {
        return writeln!(out, "none");
    }
    let mut texts: Vec<Vec<String>> = grid
        .rows
        .iter()
        .map(|row| row.iter().map(|p| show.text(&p.value)).collect())
        .collect();
    let ditto: Vec<usize> = grid
        .ditto
        .iter()
        .copied()
        .filter(|&c| c < grid.columns.len())
        .collect();
    for r in (1..texts.len()).rev() {
        if !ditto.is_empty() && ditto.iter().all(|&c| texts[r][c] == texts[r - 1][c]) {
            ditto.iter().for_each(|&c| texts[r][c].clear());
        }
    }
    let natural: Vec<usize> = grid
        .columns
        .iter()
        .enumerate()
        .map(|(c, column)| {
            texts
                .iter()
                .map(|row| row[c].width())
                .chain([column.header.width()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    // No word is split: a column is never narrower than its longest word.
    let longest: Vec<usize> = grid
        .columns
        .iter()
        .enumerate()
        .map(|(c, column)| {
            texts
                .iter()
                .map(|row| row[c].as_str())
                .chain([column.header.as_ref()])
                .flat_map(|text| text.split_whitespace())
                .map(UnicodeWidthStr::width)
                .max()
                .unwrap_or(0)
        })
        .collect();
    let sizes = Sizes {
        natural: &natural,
        longest: &longest,
    };
    let laid = Laid {
        grid,
        texts: &texts,
        sizes: &sizes,
    };
    let all: Vec<usize> = (0..grid.columns.len()).collect();
    let Some(limit) = show.term.width else {
        return draw(&laid, show, &all, &natural, Fitting::Natural, out);
    };
    let (shown, left_out, widths) = fit(grid, &sizes, all, limit);
    let needed = table_width(&shown.iter().map(|&c| widths[c]).collect::<Vec<_>>());
    if needed <= limit {
        let fitting = if shown.iter().any(|&c| widths[c] < natural[c]) {
            Fitting::Fitted(limit)
        } else {
            Fitting::Natural
        };
        draw(&laid, show, &shown, &widths, fitting, out)?;
    } else if grid.repeat_first && shown.len() > 2 {
        // Several tables, each with the first column and as many others as fit.
        let mut chunk = vec![shown[0]];
        for &c in &shown[1..] {
            let mut wider: Vec<usize> = chunk.iter().map(|&c| natural[c]).collect();
            wider.push(natural[c]);
            if chunk.len() > 1 && table_width(&wider) > limit {
                draw(&laid, show, &chunk, &natural, Fitting::Natural, out)?;
                chunk.truncate(1);
            }
            chunk.push(c);
        }
        draw(&laid, show, &chunk, &natural, Fitting::Natural, out)?;
    } else {
        // Nothing left to leave out: only now may whole values wrap (a terminal this narrow
        // gets a table of its width rather than lines it cannot show).
        draw(&laid, show, &shown, &widths, Fitting::Squeezed(limit), out)?;
    }
    if !left_out.is_empty() {
        let note = format!(
            "({} left out to fit {limit} columns; --wide or a wider terminal shows {})",
            left_out.join(", "),
            if left_out.len() == 1 { "it" } else { "them" }
        );
        writeln!(
            out,
            "{}",
            show.line(&[Value::Label(note.into()).into()], false)
        )?;
    }
    Ok(())
}

/// A table's cells as they will be shown, and how wide they are.
struct Laid<'a> {
    grid: &'a Grid,
    texts: &'a [Vec<String>],
    sizes: &'a Sizes<'a>,
}

/// How wide each column's values are: whole, and their longest word.
struct Sizes<'a> {
    natural: &'a [usize],
    longest: &'a [usize],
}

/// The width a table takes with these column widths (borders and padding included).
fn table_width(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + 3 * widths.len() + 1
}

/// How a table meets the terminal's width.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fitting {
    /// As wide as its values.
    Natural,
    /// Wrapping columns narrowed to fit this width; the others whole.
    Fitted(usize),
    /// Every column may wrap to fit this width.
    Squeezed(usize),
}

/// Which columns to show and how wide: whole columns keep their width; wrapping columns get
/// what is left, no less than MIN_WRAP each (and never less than their longest word) while
/// optional columns (lowest rank first) can still be left out. A column left out comes back
/// (most valuable first) when one left out after it made the room and nothing wraps for it.
fn fit(
    grid: &Grid,
    sizes: &Sizes,
    mut shown: Vec<usize>,
    limit: usize,
) -> (Vec<usize>, Vec<String>, Vec<usize>) {
    let (natural, longest) = (sizes.natural, sizes.longest);
    let wraps = |c: usize| grid.columns[c].fit == Fit::Wrap;
    // The room the wrapping columns get, whether it is too little for them, and whether it
    // is all they want.
    let room = |shown: &[usize]| -> (usize, bool, bool) {
        let fixed: usize = shown
            .iter()
            .filter(|&&c| !wraps(c))
            .map(|&c| natural[c])
            .sum();
        let borders = 3 * shown.len() + 1;
        let room = limit.saturating_sub(fixed + borders);
        let wrapping = shown.iter().filter(|&&c| wraps(c));
        let wanted: usize = wrapping.clone().map(|&c| natural[c]).sum();
        let narrowest: usize = wrapping
            .clone()
            .map(|&c| longest[c].max(MIN_COLUMN).min(natural[c]))
            .sum();
        let count = wrapping.count();
        let cramped = room < wanted.min(MIN_WRAP * count) || fixed + borders + narrowest > limit;
        (room, cramped, room >= wanted)
    };
    let mut dropped = Vec::new();
    while room(&shown).1 {
        let Some((_, i)) = shown
            .iter()
            .enumerate()
            .filter_map(|(i, &c)| Some((grid.columns[c].optional?, i)))
            .min()
        else {
            break;
        };
        dropped.push(shown.remove(i));
    }
    for at in (0..dropped.len()).rev() {
        let mut trial = shown.clone();
        let c = dropped[at];
        trial.insert(trial.partition_point(|&s| s < c), c);
        // Back only where no wrapping column wraps for it: they were left out for those.
        if let (_, false, true) = room(&trial) {
            shown = trial;
            dropped.remove(at);
        }
    }
    let left_out = dropped
        .iter()
        .map(|&c| grid.columns[c].header.to_string())
        .collect();
    // Share the room among the wrapping columns, the narrow ones whole first.
    let mut widths = natural.to_vec();
    let mut room = room(&shown).0;
    let mut rest: Vec<usize> = shown.iter().copied().filter(|&c| wraps(c)).collect();
    rest.sort_by_key(|&c| natural[c]);
    let mut left = rest.len();
    for c in rest {
        let share = (room / left.max(1)).max(MIN_COLUMN).max(longest[c]);
        widths[c] = natural[c].min(share);
        room = room.saturating_sub(widths[c]);
        left -= 1;
    }
    (shown, left_out, widths)
}

/// Draws the table with comfy-table.
fn draw(
    laid: &Laid,
    show: &Show,
    shown: &[usize],
    widths: &[usize],
    fitting: Fitting,
    out: &mut dyn Write,
) -> io::Result<()> {
    let Laid { grid, texts, sizes } = laid;
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    if show.term.color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    if let Fitting::Fitted(limit) | Fitting::Squeezed(limit) = fitting {
        t.set_content_arrangement(ContentArrangement::Dynamic);
        t.set_width(limit.min(u16::MAX as usize) as u16);
    }
    let header: Vec<Cell> = shown
        .iter()
        .map(|&c| {
            let cell = Cell::new(&grid.columns[c].header);
            if show.term.color {
                cell.add_attribute(Attribute::Bold)
            } else {
                cell
            }
        })
        .collect();
    t.set_header(header);
    for (row, pieces) in texts.iter().zip(&grid.rows) {
        let cells: Vec<Cell> = shown
            .iter()
            .map(|&c| {
                let cell = Cell::new(&row[c]);
                match (show.term.color, pieces[c].tone) {
                    (false, _) | (_, Tone::Plain) => cell,
                    (_, Tone::Bad) => cell.fg(Color::Red),
                    (_, Tone::Warn) => cell.fg(Color::Yellow),
                    (_, Tone::Strong) => cell.add_attribute(Attribute::Bold),
                    (_, Tone::Faint) => cell.add_attribute(Attribute::Dim),
                }
            })
            .collect();
        t.add_row(cells);
    }
    for (i, &c) in shown.iter().enumerate() {
        if let Some(column) = t.column_mut(i) {
            if grid.columns[c].align == Align::Right {
                column.set_cell_alignment(CellAlignment::Right);
            }
            let cells = |w: usize| Width::Fixed((w + 2).min(u16::MAX as usize) as u16);
            match fitting {
                Fitting::Fitted(_) => column.set_constraint(match grid.columns[c].fit {
                    Fit::Wrap => ColumnConstraint::UpperBoundary(cells(widths[c])),
                    Fit::Whole => ColumnConstraint::Absolute(cells(widths[c])),
                }),
                Fitting::Squeezed(_) => {
                    column.set_constraint(ColumnConstraint::LowerBoundary(cells(sizes.longest[c])))
                }
                Fitting::Natural => column,
            };
        }
    }
    writeln!(out, "{t}")
}
