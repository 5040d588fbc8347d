//! The replay: metal-api's handling of provisioning events ([`fsm`], docs/metal-api.md) over the
//! container it keeps ([`container`]), and a machine's log replayed with what its export
//! recorded put in place ([`log`]).

mod container;
mod fsm;
mod log;
mod stream;
#[cfg(test)]
mod tests;

pub use container::{Container, Handling, Step, StoredEvent, Trace};
pub use fsm::Replayer;
pub use log::{Branch, Branches, judge_outside_log, replay};
pub use stream::{Following, Replaying};
