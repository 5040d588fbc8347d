//! What each command's text output says, as a [`Doc`](super::doc::Doc): the same view
//! prints on a terminal, as Markdown or as CSV. Views only arrange what was computed.

pub mod check;
pub mod diff;
pub mod explain;
pub mod issues;
mod phrases;
pub mod propose;
pub mod replay;
pub mod report;
pub mod rules;
mod verdicts;
