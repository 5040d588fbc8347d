//! Runs the real binary on the files in `testdata/`, in a fresh work dir where a test writes
//! files. The fleets' `expected.json` files were worked out independently of fsmlog from
//! metal-api's behaviour; they are the oracle here.

mod action;
mod audit;
mod diagnose;
mod gate;
mod input;
mod metrics;
mod pictures;
mod regressions;
mod report;
mod terminal;
mod triage;
mod trust;
mod trust_ii;
mod trust_iii;
mod util;

pub use util::*;
