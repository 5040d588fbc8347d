//! Runs the real binary on the files in `testdata/`, in a fresh work dir where a test writes
//! files. The fleets' `expected.json` files were worked out independently of fsmlog from
//! metal-api's behaviour; they are the oracle here.

mod action;
mod audit;
mod build_script;
mod collect;
mod damaged;
mod dash;
mod deploy;
mod diagnose;
mod gate;
mod hostile;
mod html;
mod input;
mod manners;
mod merging;
mod metrics;
mod newcomer;
mod paste;
mod pictures;
mod places;
mod raw_parts;
mod read_paths;
mod report;
mod rows;
mod rule_files;
mod shells;
mod terminal;
mod triage;
mod util;
mod watch;

pub use util::*;
