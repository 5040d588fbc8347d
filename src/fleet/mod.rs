//! The pipeline every reading command shares: the inputs resolved once (files, options,
//! threads), what is read taken in (`intake`) and a machine's records merged (`merge`), the
//! fold of every machine into a tally as a sequence of planned passes, the clock and window a
//! view counts in, and the results several commands ask for of the machines judged. It never sees
//! the command line: commands build it from paths and options. Each fold hands back what it
//! computed beside the input's problems.

mod clock;
mod fold;
mod follow;
mod inputs;
mod intake;
mod keep;
mod lean;
mod live;
pub(crate) mod merge;
mod plan;
mod progress;
mod spread;
mod summaries;
mod ties;

pub use clock::{Pending, counted};
pub use follow::Follow;
pub use inputs::{Inputs, Sources};
pub use intake::{Intake, take_in};
pub use keep::{Keep, Kept};
pub use live::LiveFleet;
pub use merge::Merger;
pub use summaries::{explain, fleet_graph, gather_audit, rule_diff, summarize};
