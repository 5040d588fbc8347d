//! fsmlog replays metal-stack machine provisioning event logs through metal-api's FSM.
//!
//! The pipeline runs one way: `input` finds and reads exports into per-machine
//! [`MachineLog`]s (`log`); `rules` provides the [`Ruleset`] to judge them by; `replay` turns
//! a log into a trace exactly as metal-api would have handled each event; `aggregate` folds
//! traces into a fleet [`Summary`]; `render` prints summaries and traces for people and
//! programs. `fleet` is the pipeline every reading command shares, `commands` wires it per
//! subcommand, `cli` is the command line; `export` writes machines back in every input
//! format, for the fleet generator, benches and tests (behind the `sim` feature). The modules
//! are private: what the binary, the tests, the benches and the examples use is re-exported
//! here, so that code nobody uses is seen as dead.

mod aggregate;
mod cli;
mod collect;
mod commands;
mod days;
mod diagnose;
mod diff;
mod ending;
mod event;
mod explain;
// Writes machines in every input format: for the generator, the benches and the tests only.
#[cfg(feature = "sim")]
mod export;
mod fleet;
mod gate;
mod graph;
mod hidden;
mod input;
mod issues;
mod jsonsplit;
mod judge;
mod log;
mod order;
mod propose;
mod render;
mod replay;
mod rules;
mod scan;
mod serve;
#[cfg(feature = "sim")]
pub mod sim;
mod sink;
mod stdin;
mod window;

pub use aggregate::Summary;
pub use cli::{Cli, metalctl_spellings};
pub use commands::run;
pub use ending::{Ending, Gate};
pub use event::{EventKind, EventName, State, format_time, unexpected_message};
#[cfg(feature = "sim")]
pub use export::{Exporter, Layout};
pub use fleet::LiveFleet;
pub use input::{InputOptions, Record, read_reader};
#[doc(hidden)]
pub use input::{direct_agrees, stream_agrees, table_agrees, whole_log_agrees, yaml_agrees};
pub use judge::{Facts, Judging};
pub use log::Liveliness;
pub use log::{Format, MachineLog};
pub use render::escape;
pub use replay::{Container, Replayer, StoredEvent, replay};
pub use rules::Ruleset;
