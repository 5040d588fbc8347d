//! The shapes of exported machines and events as serde reads them, shared by the JSON, YAML
//! and stream readers. Keys are read as Go's `encoding/json` reads them: a repeated key keeps
//! its last value, unknown keys are skipped, and a number where text is expected (a numeric
//! `id`) is taken as its text, so that one odd field does not lose the whole machine.

pub(crate) mod lenient;
mod members;
mod parts;
pub(crate) mod shapes;

pub(crate) use parts::{LogEvents, MachineParts, convert_event};
pub(crate) use shapes::{Member, RawEvent, RawItem, RawLine};
