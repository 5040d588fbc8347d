//! Cuts a JSON byte stream into its values without parsing them, so that a huge top-level array
//! is handed on one element at a time (memory bounded by the largest element) and each element
//! knows the line it starts on for error messages: the careful scan ([`scanner`]), arrays
//! element by element ([`array`]), the fast cut of pretty-printed arrays ([`indented`]) and what it
//! checks a piece with ([`structure`]), and the lines of nested arrays ([`lines`]).

mod array;
mod indented;
mod lines;
mod pushback;
mod scanner;
mod structure;
#[cfg(test)]
mod tests;

pub use array::{Cutting, for_each_element_cut, values_in};
pub use lines::element_lines_at;
pub use scanner::{MAX_VALUE, Position, SplitError, Splitter};
pub use structure::Scan;
