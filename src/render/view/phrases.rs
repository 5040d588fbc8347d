//! What several views say alike: counted nouns, lists of machines, a pair's examples.

use crate::aggregate::Summary;
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

/// Why `report`'s crash-loop flags and `issues`' crashloop issues differ: metal-api's issue
/// leaves out a flagged machine whose newest event is Waiting (issues/crash-loop.go).
pub fn crash_loop_waiting(s: &Summary) -> Option<Vec<Piece>> {
    let n = s.crash_loop_waiting.len() as u64;
    let (verb, them) = if n == 1 {
        ("waits", "it")
    } else {
        ("wait", "them")
    };
    (n > 0).then(|| {
        vec![label(format!(
            "  {} with metal-api's crash-loop flag {verb} in Waiting (the newest event): its crashloop issue leaves {them} out (issues/crash-loop.go), so `fsmlog issues` and `metalctl machine issues` do not list {them}, and `fsmlog report` does",
            crate::render::sentence::amount(n, "machine"),
        ))]
    })
}
