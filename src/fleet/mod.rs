//! The pipeline every reading command shares: the inputs resolved once (files, options,
//! threads), the parallel fold of every machine into a tally, the clock and window a view
//! counts in, and the tallies several commands ask for. It never sees the command line:
//! commands build it from paths and options.

mod clock;
mod inputs;
mod progress;
mod summaries;
pub(crate) mod tally;

pub use clock::counted;
pub use inputs::{Inputs, Sources};
pub use summaries::{fleet_graph, summarize};
pub(crate) use tally::tally_by_summary;
