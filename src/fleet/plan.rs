//! What a pass over the inputs is to do: which files it reads, which machines it merges, and
//! whether it counts records for a census. A fold starts from the first plan and asks each
//! finished pass whether another is needed; every pass a command makes is one of these.
//!
//! A separate pass to learn the plan before anything is counted would read the whole input
//! once more on every run. Instead the first pass counts as if no machine recurred and every
//! file were new, learning both on the way; in the common case (each machine once, each file
//! once) it is the only pass.

use super::inputs::Inputs;
use super::merge::{Census, Merger};

/// One pass's instructions.
pub(super) struct Plan {
    /// Indices into [`Inputs::files`] of the files to read, in order.
    pub files: Vec<usize>,
    /// Holds the records of machines known to recur until each is complete.
    pub merger: Merger,
    /// Counts each machine's records, where the plan still has to learn which recur.
    pub census: Option<Census>,
}

impl Plan {
    /// The first pass: every file not known to be a repeat, no machine merged, a census.
    pub fn first(inputs: &Inputs) -> Plan {
        Plan {
            files: inputs.unrepeated(inputs.known_repeats()),
            merger: Merger::default(),
            census: Some(Census::default()),
        }
    }

    /// The pass to make after this one; `None` when this one was final. A pass that learnt
    /// that some file is a repeat (a file found in a directory that is one read already) is
    /// made again without it, learning the census again; one whose census found machines with
    /// several records is followed by a pass merging them.
    pub fn next(self, inputs: &Inputs, learning_files: bool) -> Option<Plan> {
        let census = self.census?;
        if learning_files && !inputs.settled().is_empty() {
            return Some(Plan::first_settled(inputs));
        }
        let recurring = census.recurring();
        if recurring.is_empty() {
            return None;
        }
        Some(Plan {
            files: inputs.unrepeated(inputs.settled()),
            merger: Merger::new(recurring),
            census: None,
        })
    }

    /// The first pass again, once every file's identity is known.
    fn first_settled(inputs: &Inputs) -> Plan {
        Plan {
            files: inputs.unrepeated(inputs.settled()),
            ..Plan::first(inputs)
        }
    }
}
