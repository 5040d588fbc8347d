//! The diagnosis metal-api#324 asked for: for each unexpected pair, accept it, swallow it,
//! follow it to its root, or fix another component. Each machine's unexpected occurrences are
//! followed to their roots ([`cascade`]) and classified ([`class`]); a pair's classes make its
//! verdict ([`verdict`]).

mod cascade;
mod class;
mod history;
mod ruling;
mod stream;
#[cfg(test)]
mod tests;
mod verdict;

pub use class::{
    ALIVE_TICK, AUTOREBOOT_AFTER, AUTOREBOOT_LONGEST, AUTOREBOOT_POST, Class, Reboot, WINDOW,
    in_autoreboot_window,
};
pub use history::{HandledBy, How, Newer, handled_by, newer_than};
pub use ruling::{Action, Component, Kind, Precedent, ruling};
pub use stream::{Diagnosing, Settled};
pub use verdict::{
    Autoreboot, Basis, Classes, Decisions, Fleet, Lack, MIN_MACHINES, PairVerdict, SHARE, verdict,
};

use crate::event::Pair;
use crate::log::MachineLog;
use crate::replay::Trace;
use crate::rules::Ruleset;

/// What the diagnosis found of one machine: each step's class and the pair of its root, and
/// the class of the exported last error outside the log.
#[derive(Debug, Clone, Default)]
pub struct Diagnosis {
    /// By step; empty when the machine was not diagnosed.
    pub classes: Vec<Option<Class>>,
    /// By step: the (state, event) of the root a cascade follows.
    pub roots: Vec<Option<Pair>>,
    pub outside: Option<Class>,
    /// By step: what the newer release that buffers Phoned Home does with an unexpected
    /// Phoned Home it would swallow; empty where there is none.
    pub newer: Vec<Option<Newer>>,
}

impl Diagnosis {
    /// Diagnoses one machine's replay under `rules`.
    pub fn of(log: &MachineLog, trace: &Trace, rules: &Ruleset) -> Diagnosis {
        let unexpected = trace
            .steps
            .iter()
            .filter(|s| s.handling == crate::replay::Handling::Unexpected)
            .count();
        let outside = trace.last_error_only.as_ref().map(class::outside);
        if unexpected == 0 {
            // Most machines: nothing to diagnose, nothing to allocate.
            return Diagnosis {
                outside,
                ..Diagnosis::default()
            };
        }
        let roots = if unexpected > 1 {
            cascade::roots(log, trace, rules)
        } else {
            vec![None; trace.steps.len()]
        };
        let classes = class::classify(trace, &roots, class::moved_past_newest(log, trace));
        Diagnosis {
            classes,
            roots: roots
                .iter()
                .map(|r| r.map(|i| (trace.steps[i].from, trace.steps[i].event)))
                .collect(),
            outside,
            newer: history::under_newer(log, trace, rules),
        }
    }

    /// What the newer release that buffers Phoned Home does with step `i`, where it is a
    /// Phoned Home that release would swallow.
    pub fn newer(&self, i: usize) -> Option<Newer> {
        self.newer.get(i).copied().flatten()
    }

    /// The class of step `i`, if the machine was diagnosed.
    pub fn class(&self, i: usize) -> Option<Class> {
        self.classes.get(i).copied().flatten()
    }

    /// The root pair of step `i`, if it is a cascade.
    pub fn root(&self, i: usize) -> Option<Pair> {
        self.roots.get(i).copied().flatten()
    }
}
