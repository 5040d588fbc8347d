//! The hand-written SIMD, in one room: the byte scans the JSON cut and the fast readers run
//! over every byte they read, each a safe function that compares AVX2's 32 or SSE2's 16 bytes
//! at a time where the processor has them (bytes one by one elsewhere), with the same answer
//! whichever it takes. Only this module names `std::arch` (`tests/layout.rs` holds it).
//!
//! - [`plain_run`] and [`leading_spaces`] (`runs.rs`): a string's plain text and a line's
//!   indentation, for the direct reader;
//! - [`IndentLines`] (`indent_lines.rs`): the lines of a pretty-printed object at one indent,
//!   for the skim;
//! - [`structural_masks`] (`masks.rs`): a block's quotes, backslashes and brackets, for the
//!   cut of a pretty-printed array;
//! - `cpu.rs`: whether the processor has AVX2, asked once.

mod cpu;
mod indent_lines;
mod masks;
mod runs;

pub use indent_lines::IndentLines;
pub use masks::structural_masks;
pub use runs::{leading_spaces, plain_run};
