//! What several views say alike: counted nouns, lists of machines, a pair's examples.

use crate::render::doc::{Piece, Value, count as count_piece, label, machine};
use crate::render::sentence::plural;

/// `1 machine`, `2 machines`.
pub fn counted(n: u64, noun: &str) -> Vec<Piece> {
    vec![count_piece(n), label(format!(" {}", plural(n, noun)))]
}

/// How many machine ids a listed set shows before it says "and N more".
pub const LISTED_MACHINES: usize = 10;

/// `a, b, c and 4 more`, or `none`.
pub fn machine_list<'a>(ids: impl ExactSizeIterator<Item = &'a String>) -> Vec<Piece> {
    let total = ids.len();
    if total == 0 {
        return vec![label("none")];
    }
    let mut pieces = Vec::new();
    for (i, id) in ids.take(LISTED_MACHINES).enumerate() {
        if i > 0 {
            pieces.push(label(", "));
        }
        pieces.push(machine(id.clone()));
    }
    if total > LISTED_MACHINES {
        pieces.push(label(format!(" and {} more", total - LISTED_MACHINES)));
    }
    pieces
}

/// Example machines of a pair: the smallest ids kept, and how many machines there are.
pub fn examples<'a>(ids: impl Iterator<Item = &'a String>, machines: u64) -> Piece {
    Value::Machines {
        ids: ids.cloned().collect(),
        total: machines,
    }
    .into()
}
