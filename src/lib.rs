//! fsmlog replays metal-stack machine provisioning event logs through metal-api's FSM.
//!
//! The pipeline runs one way: [`input`] finds and reads exports into per-machine
//! [`input::MachineLog`]s; [`rules`] provides the [`rules::Ruleset`] to judge them by;
//! [`replay`] turns a log into a [`replay::Trace`] exactly as metal-api would have handled each
//! event; [`aggregate`] folds traces into a fleet [`aggregate::Summary`]; [`render`] prints
//! summaries and traces for people and programs. [`commands`] wires these per subcommand;
//! [`export`] writes machines back in every input format, for the fleet generator and tests.

pub mod aggregate;
pub mod cli;
pub mod commands;
pub mod diff;
pub mod event;
pub mod explain;
pub mod export;
pub mod fleet;
pub mod gate;
pub mod graph;
pub mod hidden;
pub mod input;
pub mod issues;
pub mod jsonsplit;
pub mod log;
pub mod propose;
pub mod render;
pub mod replay;
pub mod rules;
#[cfg(feature = "sim")]
pub mod sim;
pub mod window;
