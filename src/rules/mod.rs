//! Rule sets: which (state, event) pairs metal-api accepts and where they lead, plus the
//! behaviour knobs. Built-ins are JSON files in the same schema a user writes.

mod file;
pub mod go;
mod go_body;
pub mod go_patch;
mod ruleset;

pub use file::{RuleFile, RuleRow, Target};
pub use ruleset::{DEFAULT_RULES, Ruleset, builtins};
