//! The diagnosis metal-api#324 asked for: for each unexpected pair, accept it, swallow it,
//! follow it to its root, or fix another component. Each machine's unexpected occurrences are
//! followed to their roots ([`cascade`]) and classified ([`class`]); a pair's classes make its
//! verdict ([`verdict`]). A machine is judged whole here and nowhere else: [`Judged`] holds its
//! log, the log's replay and its diagnosis, and every result of a fleet (the summary, the
//! graph, the explanation, the issues audit, the rule diff) takes a machine as one, beside its
//! own type; a machine judged *further* as its events arrive is `judge::Judging`, which ends
//! in the same summary (docs/decisions.md, "A machine judged once").

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
    Autoreboot, Basis, Classes, Decisions, Lack, MIN_MACHINES, PairVerdict, SHARE, VerdictContext,
    verdict,
};

use std::cell::OnceCell;

use chrono::{DateTime, Utc};

use crate::event::Pair;
use crate::input::Merged;
use crate::log::MachineLog;
use crate::replay::{Trace, replay};
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

/// A machine's log, its replay under one rule set, and its diagnosis, worked out the first
/// time it is asked for (the audit and the rule diff never ask).
pub struct Judged<'a> {
    log: Log<'a>,
    rules: &'a Ruleset,
    trace: Trace,
    diagnosis: OnceCell<Diagnosis>,
}

/// The log judged: a merged machine's, or the earlier part of it ([`Judged::as_it_was_at`]).
enum Log<'a> {
    Merged(&'a Merged),
    Earlier(Box<MachineLog>),
}

impl<'a> Judged<'a> {
    /// A merged machine replayed under `rules`.
    pub fn of(merged: &'a Merged, rules: &'a Ruleset) -> Self {
        Judged {
            trace: replay(&merged.log, rules),
            log: Log::Merged(merged),
            rules,
            diagnosis: OnceCell::new(),
        }
    }

    /// The machine as it was at `cut`, judged on what it had sent by then; `None` where it
    /// had sent nothing yet (a machine not heard of is not judged).
    pub fn as_it_was_at(&self, cut: DateTime<Utc>) -> Option<Judged<'a>> {
        let mut then = self.log().clone();
        then.as_it_was_at(cut);
        then.newest_event()?;
        Some(Judged {
            trace: replay(&then, self.rules),
            log: Log::Earlier(Box::new(then)),
            rules: self.rules,
            diagnosis: OnceCell::new(),
        })
    }

    /// The log replayed.
    pub fn log(&self) -> &MachineLog {
        match &self.log {
            Log::Merged(merged) => &merged.log,
            Log::Earlier(log) => log,
        }
    }

    /// How many events other records of the machine had too, and how many records it was
    /// assembled from (none and one for an earlier part).
    pub fn merging(&self) -> (u64, usize) {
        match &self.log {
            Log::Merged(merged) => (merged.duplicates, merged.records),
            Log::Earlier(_) => (0, 1),
        }
    }

    /// The replay.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The diagnosis of the replay.
    pub fn diagnosis(&self) -> &Diagnosis {
        self.diagnosis
            .get_or_init(|| Diagnosis::of(self.log(), &self.trace, self.rules))
    }
}
