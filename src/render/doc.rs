//! What a text view says, before it is printed: headings, lines and tables made of typed
//! pieces (a count, a time, a machine id, text from input). The views build a [`Doc`]; the
//! terminal, Markdown and CSV renderers each print it their way, so that escaping, shortening
//! and colour live in one place per format, not in every view.

use std::borrow::Cow;
use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

/// One value in a line or a cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Our own words: headings, state and event names, verdicts.
    Label(Cow<'static, str>),
    /// Text from input (a message, a name from a rule file, a path): escaped by every
    /// renderer.
    Input(String),
    /// A machine id: shortened to its shortest unique prefix on a terminal.
    Machine(String),
    /// A machine id where a view says more of the machine: shown as [`Value::Machine`], and
    /// in the HTML page the place its other mentions link to.
    Example(String),
    /// A word from input in a command fsmlog suggests (a machine id, a path): quoted as a
    /// POSIX shell needs it, so that pasting the command runs nothing the word says.
    Argument(String),
    /// Some machines of many: `a, b, +4` on a terminal.
    Machines {
        ids: Vec<String>,
        total: u64,
    },
    Count(u64),
    Time(DateTime<Utc>),
    /// A share, 0–1, shown as a percentage.
    Share(f64),
    /// A duration in seconds, shown as `1h40m`.
    Seconds(f64),
    /// Counts over time, shown as a sparkline.
    Spark(Vec<u64>),
    /// Our own words that name a page (a metal-api pull request): a link where the format
    /// has them.
    Link {
        text: String,
        url: String,
    },
    /// Nothing to show (a dash in tables).
    Empty,
    /// ` · ` between the items of a line: the only place a terminal breaks a line that has
    /// them.
    Separator,
}

/// How a piece stands out where colour is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tone {
    #[default]
    Plain,
    /// Unexpected, failed: red.
    Bad,
    /// Rejected, a warning: yellow.
    Warn,
    /// Headings: bold.
    Strong,
    /// Of little weight: dim.
    Faint,
}

/// A value with its tone.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub value: Value,
    pub tone: Tone,
}

impl Piece {
    /// The same piece in another tone.
    pub fn tone(self, tone: Tone) -> Piece {
        Piece { tone, ..self }
    }
}

impl From<Value> for Piece {
    fn from(value: Value) -> Piece {
        Piece {
            value,
            tone: Tone::Plain,
        }
    }
}

/// Our own words.
pub fn label(text: impl Into<Cow<'static, str>>) -> Piece {
    Value::Label(text.into()).into()
}

/// Text from input.
pub fn input(text: impl Into<String>) -> Piece {
    Value::Input(text.into()).into()
}

/// A word from input in a suggested command.
pub fn argument(word: impl Into<String>) -> Piece {
    Value::Argument(word.into()).into()
}

/// A machine id.
pub fn machine(id: impl Into<String>) -> Piece {
    Value::Machine(id.into()).into()
}

/// ` · ` between a line's items (see [`Value::Separator`]).
pub fn sep() -> Piece {
    Value::Separator.into()
}

/// A count.
pub fn count(n: u64) -> Piece {
    Value::Count(n).into()
}

/// A time.
pub fn time(t: DateTime<Utc>) -> Piece {
    Value::Time(t).into()
}

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// How a column's values take a line when a table does not fit the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Never split across lines.
    Whole,
    /// May wrap between words: long messages.
    Wrap,
}

/// A table column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub header: Cow<'static, str>,
    pub align: Align,
    pub fit: Fit,
    /// Left out when nothing else helps, lowest rank first (said below the table); `None`
    /// for a column that always shows.
    pub optional: Option<u8>,
}

impl Column {
    /// A column of whole values, left-aligned.
    pub fn new(header: impl Into<Cow<'static, str>>) -> Column {
        Column {
            header: header.into(),
            align: Align::Left,
            fit: Fit::Whole,
            optional: None,
        }
    }

    /// A column of numbers.
    pub fn number(header: impl Into<Cow<'static, str>>) -> Column {
        Column {
            align: Align::Right,
            ..Column::new(header)
        }
    }

    /// A column that may wrap.
    pub fn wrapping(header: impl Into<Cow<'static, str>>) -> Column {
        Column {
            fit: Fit::Wrap,
            ..Column::new(header)
        }
    }

    /// A column that may be left out on a narrow terminal, the lowest rank first.
    pub fn optional(header: impl Into<Cow<'static, str>>, rank: u8) -> Column {
        Column {
            optional: Some(rank),
            ..Column::new(header)
        }
    }

    /// The same column, left out on a narrow terminal before those of a higher rank.
    pub fn or_left_out(self, rank: u8) -> Column {
        Column {
            optional: Some(rank),
            ..self
        }
    }
}

/// A table: columns and rows of pieces, one per column.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Piece>>,
    /// Where the table is too wide for the terminal, print it as several tables, each with
    /// the first column (a matrix's row names) and as many others as fit.
    pub repeat_first: bool,
    /// The columns a terminal table shows once for a run of rows that repeat them all (a
    /// machine's several issues); Markdown and CSV repeat them on every row.
    pub ditto: Vec<usize>,
}

impl Grid {
    /// An empty table with these columns.
    pub fn new(columns: Vec<Column>) -> Grid {
        Grid {
            columns,
            rows: Vec::new(),
            repeat_first: false,
            ditto: Vec::new(),
        }
    }

    /// Adds a row (as many pieces as columns).
    pub fn row(&mut self, cells: Vec<Piece>) {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.rows.push(cells);
    }
}

/// A part of a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// The document's title (Markdown shows it, the terminal does not).
    Title(String),
    Heading(Vec<Piece>),
    Line(Vec<Piece>),
    /// A command to paste and, after its `#`, what it shows: no renderer puts a word of the
    /// comment, or of the command, at the start of a line of its own.
    Command {
        command: Vec<Piece>,
        comment: Vec<Piece>,
    },
    Table(Grid),
}

impl Block {
    /// A command as one line: the command, `   # ` and its comment.
    pub fn command_line(command: &[Piece], comment: &[Piece]) -> Vec<Piece> {
        let mut line = command.to_vec();
        line.push(label("   # "));
        line.extend_from_slice(comment);
        line
    }
}

/// A text view: blocks in order. The first table is the view's data, which CSV prints.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Doc {
    pub blocks: Vec<Block>,
}

impl Doc {
    /// Adds a block.
    pub fn push(&mut self, block: Block) {
        self.blocks.push(block);
    }

    /// Adds a line of pieces.
    pub fn line(&mut self, pieces: Vec<Piece>) {
        self.blocks.push(Block::Line(pieces));
    }

    /// Adds a heading.
    pub fn heading(&mut self, pieces: Vec<Piece>) {
        self.blocks.push(Block::Heading(pieces));
    }

    /// Adds a command to paste, with what it shows.
    pub fn command(&mut self, command: Vec<Piece>, comment: Vec<Piece>) {
        self.blocks.push(Block::Command { command, comment });
    }

    /// Adds a table.
    pub fn table(&mut self, grid: Grid) {
        self.blocks.push(Block::Table(grid));
    }

    /// Every machine id the document shows.
    pub fn machine_ids(&self) -> BTreeSet<&str> {
        fn add<'d>(ids: &mut BTreeSet<&'d str>, piece: &'d Piece) {
            match &piece.value {
                Value::Machine(id) | Value::Example(id) => {
                    ids.insert(id.as_str());
                }
                Value::Machines { ids: list, .. } => ids.extend(list.iter().map(String::as_str)),
                _ => {}
            }
        }
        let mut ids = BTreeSet::new();
        for block in &self.blocks {
            match block {
                Block::Heading(pieces) | Block::Line(pieces) => {
                    pieces.iter().for_each(|p| add(&mut ids, p))
                }
                Block::Command { command, comment } => {
                    command.iter().chain(comment).for_each(|p| add(&mut ids, p))
                }
                Block::Table(grid) => grid.rows.iter().flatten().for_each(|p| add(&mut ids, p)),
                Block::Title(_) => {}
            }
        }
        ids
    }
}

/// Shortens machine ids as git shortens hashes: a UUID (what metal-stack names machines by)
/// to the shortest prefix, at least [`Shortener::MIN`] characters, that no other id in the
/// output shares. Other ids are names a person chose and stay whole.
#[derive(Debug, Default)]
pub struct Shortener {
    /// (id, shown length) sorted by id.
    lengths: Vec<(String, usize)>,
}

impl Shortener {
    /// The fewest characters of an id shown.
    pub const MIN: usize = 8;

    /// Learns the ids an output shows.
    pub fn new<'a>(ids: impl IntoIterator<Item = &'a str>) -> Shortener {
        let sorted: Vec<&str> = ids
            .into_iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let common =
            |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        let lengths = sorted
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let before = i.checked_sub(1).map_or(0, |j| common(sorted[j], id));
                let after = sorted.get(i + 1).map_or(0, |next| common(next, id));
                let needed = (before.max(after) + 1).max(Shortener::MIN);
                (id.to_string(), needed)
            })
            .collect();
        Shortener { lengths }
    }

    /// The id as shown: its unique prefix (the whole id where that is not shorter, or where
    /// it is no UUID).
    pub fn show<'a>(&self, id: &'a str) -> &'a str {
        if !crate::event::is_uuid(id) {
            return id;
        }
        let length = match self
            .lengths
            .binary_search_by(|(known, _)| known.as_str().cmp(id))
        {
            Ok(i) => self.lengths[i].1,
            Err(_) => return id,
        };
        match id.char_indices().nth(length) {
            Some((cut, _)) => &id[..cut],
            None => id,
        }
    }
}

/// How many periods each bar sums when `periods` are drawn in at most `max` bars.
pub fn periods_per_bar(periods: usize, max: usize) -> usize {
    periods.div_ceil(max.max(1)).max(1)
}

/// Counts per period summed into at most `max` bars (see [`periods_per_bar`]).
pub fn bars(counts: &[u64], max: usize) -> Vec<u64> {
    counts
        .chunks(periods_per_bar(counts.len(), max))
        .map(|c| c.iter().sum())
        .collect()
}

/// A sparkline: one bar per count, scaled to the largest; zeros as the lowest bar.
pub fn sparkline(counts: &[u64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    counts
        .iter()
        .map(|&n| {
            let level = (n * (BARS.len() as u64 - 1)).div_ceil(max) as usize;
            BARS[level.min(BARS.len() - 1)]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_shorten_to_their_unique_prefix() {
        let ids = [
            "043afe87-2ce5-45b2-824a-4b04924cf73f",
            "043afe87-2ce6-0000-0000-000000000000",
            "2513f57b-4054-4b51-93e8-0c67992d646d",
            "seed-machine",
            "fra-equ01-rack07-machine-0042",
        ];
        let s = Shortener::new(ids);
        assert_eq!(s.show(ids[0]), "043afe87-2ce5");
        assert_eq!(s.show(ids[1]), "043afe87-2ce6");
        assert_eq!(s.show(ids[2]), "2513f57b");
        assert_eq!(s.show(ids[3]), "seed-machine");
        assert_eq!(s.show(ids[4]), "fra-equ01-rack07-machine-0042");
    }

    #[test]
    fn sparkline_scales_to_the_largest() {
        assert_eq!(sparkline(&[0, 1, 7]), "▁▂█");
        assert_eq!(sparkline(&[3, 3]), "██");
        assert_eq!(sparkline(&[]), "");
    }
}
