//! A top-level array read element by element: by the careful scan, or, once the reader knows
//! what the array holds, cut at its element lines where it is pretty-printed.

use std::cell::Cell;
use std::io::BufRead;

use super::indented;
use super::scanner::{Position, SplitError, Splitter, printable};

/// How an array may be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cutting {
    /// Element by element, byte by byte: every array, until its reader knows what it holds.
    #[default]
    Careful,
    /// At its element lines where it is pretty-printed (see [`indented::cut`]), once the
    /// reader knows the array is a document of its own.
    AtElementLines,
}

/// The values of a piece of an array that holds more than one (`a, b`), each with where it
/// starts; `None` unless the piece is two or more whole values and commas.
pub fn values_in(piece: &[u8], start: Position) -> Option<Vec<(Vec<u8>, Position)>> {
    let mut scan = Splitter::at(piece, start);
    let mut values = Vec::new();
    loop {
        let mut value = Vec::new();
        let at = scan.read_value(&mut value).ok()?;
        values.push((value, at));
        match scan.skip_whitespace().ok()? {
            Some(b',') => {
                scan.bump().ok()?;
            }
            None if values.len() > 1 => return Some(values),
            _ => return None,
        }
    }
}

/// Reads a top-level array element by element, calling `each` with the element and its start.
pub fn for_each_element<R: BufRead>(
    splitter: &mut Splitter<R>,
    each: impl FnMut(&[u8], Position) -> Result<(), SplitError>,
) -> Result<(), SplitError> {
    for_each_element_cut(splitter, &Cell::new(Cutting::Careful), each)
}

/// Like [`for_each_element`], but once `cutting` says so (`each` sets it, when it knows the
/// array is the whole document) a pretty-printed array is cut at its element lines between
/// elements instead of scanned byte by byte; what the cut cannot vouch for, and the last
/// element, the careful scan reads.
pub fn for_each_element_cut<R: BufRead>(
    splitter: &mut Splitter<R>,
    cutting: &Cell<Cutting>,
    mut each: impl FnMut(&[u8], Position) -> Result<(), SplitError>,
) -> Result<(), SplitError> {
    splitter.expect(b'[')?;
    let mut element = Vec::new();
    if splitter.skip_whitespace()? == Some(b']') {
        splitter.bump()?;
        return Ok(());
    }
    loop {
        element.clear();
        let start = splitter.read_value(&mut element)?;
        each(&element, start)?;
        match splitter.skip_whitespace()? {
            Some(b',') => {
                splitter.bump()?;
                if cutting.get() == Cutting::AtElementLines
                    && let Some(indent) = indented::element_indent(splitter)?
                {
                    indented::cut(splitter, &indent, &mut each)?;
                }
            }
            Some(b']') => {
                splitter.bump()?;
                return Ok(());
            }
            Some(other) => {
                return Err(splitter.syntax(format!(
                    "expected `,` or `]` after an array element, found `{}`",
                    printable(other)
                )));
            }
            None => return Err(splitter.syntax("the array is not closed (truncated?)")),
        }
    }
}
