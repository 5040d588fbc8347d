//! The JSON and NDJSON output, whose shape is documented in docs/json.md and kept stable.

mod check;
mod common;
mod diff;
mod explain;
mod issues;
mod report;
pub(crate) mod safe;
mod trace;

pub use check::check;
pub use diff::diff;
pub use explain::explain;
pub use issues::{issue_types, issues};
pub use report::report;
pub use trace::TraceJson;
