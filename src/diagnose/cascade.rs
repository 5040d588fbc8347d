//! Cascades: one cause counted as several pairs. metal-api stores most unexpected events, and
//! the newest stored event sets the state, so one stored unexpected event puts the machine in
//! the wrong state and the next, normal event is unexpected too. Walking a machine's
//! unexpected occurrences oldest first, the first that metal-api stored is a root; a later one
//! is a cascade of the current root when the machine replayed without the root's event would
//! have expected it; one that is not, and was stored, is the next root. A cascade of a cascade
//! is a cascade of the same root.

use crate::log::MachineLog;
use crate::replay::{Branch, Branches, Handling, Trace};
use crate::rules::Ruleset;

/// For each step of a trace, the step (by its index in the trace) it is a cascade of.
pub fn roots(log: &MachineLog, trace: &Trace, rules: &Ruleset) -> Vec<Option<usize>> {
    let steps = &trace.steps;
    let mut roots = vec![None; steps.len()];
    let mut branches = Branches::new(log, rules);
    // The current root, and the verdicts without it up to where that replay rejoins the real
    // one (replayed once, when first needed; past them every verdict is the real one).
    let mut root: Option<(usize, Option<Branch>)> = None;
    // No verdict after the last unexpected step is asked for.
    let until = steps
        .iter()
        .rposition(|s| s.handling == Handling::Unexpected)
        .map_or(0, |i| steps[i].index);
    for (i, step) in steps.iter().enumerate() {
        if step.handling != Handling::Unexpected {
            continue;
        }
        if let Some((r, without)) = &mut root {
            let without = without.get_or_insert_with(|| branches.without(steps[*r].index, until));
            if without.verdict(step.index, step.handling) == Handling::Expected {
                roots[i] = Some(*r);
                continue;
            }
        }
        if step.stored {
            root = Some((i, None));
        }
    }
    roots
}
