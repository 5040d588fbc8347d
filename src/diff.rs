//! What changes when the same events are judged by two rule sets: the (state, event) pairs
//! whose verdict flips, and the machines whose flags flip. Like [`crate::aggregate`], per-machine
//! results add up with `+=` in any order.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::AddAssign;

use crate::aggregate::{Occurrence, PairTally, merge_pairs};
use crate::diagnose::Judged;
use crate::event::{EventKind, Pair, State};
use crate::replay::{Handling, Step, Trace};
use crate::window::Window;

/// The direction of a verdict change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Change {
    /// Unexpected under the old rules, not under the new: fixed, or hidden.
    NewlyExpected,
    /// Not unexpected under the old rules, unexpected under the new: a regression.
    NewlyUnexpected,
}

/// Which flag flipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Flag {
    CrashLoop,
    FailedMachineReclaim,
}

impl Flag {
    /// The spelling in output (metal-api's field name).
    pub fn name(self) -> &'static str {
        match self {
            Flag::CrashLoop => "crash_loop",
            Flag::FailedMachineReclaim => "failed_machine_reclaim",
        }
    }
}

/// Everything `diff` says about a fleet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleDiff {
    pub files: u64,
    pub machines: u64,
    /// The events judged under both rule sets.
    pub events: u64,
    /// The unknown events read (skipped by both replays).
    pub unknown: u64,
    /// Of the events judged, those at a time the window holds: what the gate passes on.
    pub in_window: u64,
    /// Keyed by change and the state the event was unexpected in (under the rules that found it
    /// unexpected).
    pub changes: BTreeMap<(Change, State, EventKind), PairTally>,
    /// (flag, machine, old value, new value); a set, so that a machine id that occurs twice
    /// keeps both entries whatever the order they were counted in.
    pub flips: BTreeSet<(Flag, String, bool, bool)>,
    /// The newest event read (the data's own clock).
    pub newest_event: Option<chrono::DateTime<chrono::Utc>>,
}

fn unexpected(step: &Step) -> bool {
    step.handling == Handling::Unexpected
}

impl RuleDiff {
    /// Compares one machine judged under the old rules and under the new.
    pub fn add(&mut self, old: &Judged, new: &Judged, window: &Window) {
        self.add_traces(old.trace(), new.trace(), window);
        self.newest_event = self.newest_event.max(old.log().newest_event());
    }

    /// Compares one machine's two traces (the same events under the old and the new rules).
    pub(crate) fn add_traces(&mut self, old: &Trace, new: &Trace, window: &Window) {
        self.machines += 1;
        self.unknown += old.unknown.len() as u64;
        let machine = &old.machine;
        let mut seen = BTreeSet::new();
        let olds = old.steps.iter().chain(old.last_error_only.iter());
        let news = new.steps.iter().chain(new.last_error_only.iter());
        for (o, n) in olds.zip(news) {
            self.events += 1;
            if !window.contains(o.time) {
                continue;
            }
            self.in_window += 1;
            // Unexpected under both rule sets but in another state: the old pair is gone and a
            // new one appears, which is both a change and a regression.
            let old_pair = unexpected(o) && !(unexpected(n) && n.from == o.from);
            let new_pair = unexpected(n) && !(unexpected(o) && o.from == n.from);
            let keys = [
                old_pair.then_some((Change::NewlyExpected, o.from, o.event)),
                new_pair.then_some((Change::NewlyUnexpected, n.from, n.event)),
            ];
            for key in keys.into_iter().flatten() {
                let first = seen.insert(key);
                self.changes
                    .entry(key)
                    .or_insert_with(|| PairTally::new(o.time))
                    .observe(&Occurrence::of(o, old), first);
            }
        }
        let flags = [
            (
                Flag::CrashLoop,
                old.container.crash_loop,
                new.container.crash_loop,
            ),
            (
                Flag::FailedMachineReclaim,
                old.container.failed_machine_reclaim,
                new.container.failed_machine_reclaim,
            ),
        ];
        for (flag, before, after) in flags {
            if before != after {
                self.flips.insert((flag, machine.clone(), before, after));
            }
        }
    }

    /// The changes in one direction, most frequent first.
    pub fn changes(&self, change: Change) -> Vec<(Pair, &PairTally)> {
        let mut list: Vec<_> = self
            .changes
            .iter()
            .filter(|((c, _, _), _)| *c == change)
            .map(|((_, s, e), t)| ((*s, *e), t))
            .collect();
        list.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(&b.0)));
        list
    }

    /// Whether anything becomes newly unexpected.
    pub fn has_regressions(&self) -> bool {
        self.changes
            .keys()
            .any(|(c, _, _)| *c == Change::NewlyUnexpected)
    }
}

impl AddAssign for RuleDiff {
    fn add_assign(&mut self, other: RuleDiff) {
        self.files += other.files;
        self.machines += other.machines;
        self.events += other.events;
        self.unknown += other.unknown;
        self.in_window += other.in_window;
        merge_pairs(&mut self.changes, other.changes);
        self.flips.extend(other.flips);
        self.newest_event = self.newest_event.max(other.newest_event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, EventName};
    use crate::log::{Format, MachineLog};
    use crate::replay::replay;
    use crate::rules::Ruleset;
    use chrono::{DateTime, TimeDelta, Utc};

    fn log(events: &[(i64, EventKind)]) -> MachineLog {
        let start = DateTime::parse_from_rfc3339("2025-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let mut log = MachineLog::new("m".into(), "m.json", 1, Format::LogsJson);
        log.annotated = false;
        log.events = events
            .iter()
            .map(|(s, k)| {
                Event::from_recorded(start + TimeDelta::seconds(*s), EventName::Known(*k), "", 1)
            })
            .collect();
        log
    }

    fn diff(old: &str, new: &str, log: &MachineLog) -> RuleDiff {
        let old = Ruleset::resolve(old).unwrap();
        let new = Ruleset::resolve(new).unwrap();
        let mut d = RuleDiff::default();
        d.add_traces(&replay(log, &old), &replay(log, &new), &Window::default());
        d
    }

    #[test]
    fn registering_to_installing_becomes_expected() {
        use EventKind::*;
        let l = log(&[
            (0, PxeBooting),
            (10, Preparing),
            (20, Registering),
            (30, Installing),
        ]);
        let d = diff("metal-api-v0.19.0", "metal-api-v0.19.3", &l);
        let fixed = d.changes(Change::NewlyExpected);
        assert_eq!(fixed.len(), 1);
        assert_eq!(fixed[0].0, (State::Registering, Installing));
        assert_eq!(fixed[0].1.count, 1);
        assert!(!d.has_regressions());
        // The other way round it is a regression.
        let d = diff("metal-api-v0.19.3", "metal-api-v0.19.0", &l);
        assert!(d.has_regressions());
    }

    #[test]
    fn buffered_phoned_home_hides_two_pairs() {
        use EventKind::*;
        // Under v0.19.3 the Phoned Home in Waiting is unexpected and stored, so the Alive after
        // it arrives in Phoned Home; under v0.42.2 it is swallowed and the Alive is expected.
        let l = log(&[
            (0, Registering),
            (10, Waiting),
            (20, PhonedHome),
            (30, Alive),
        ]);
        let d = diff("metal-api-v0.19.3", "metal-api-v0.42.2", &l);
        let pairs: Vec<_> = d
            .changes(Change::NewlyExpected)
            .iter()
            .map(|(p, _)| *p)
            .collect();
        // Equal counts: in metal-api's state order.
        assert_eq!(
            pairs,
            vec![(State::Waiting, PhonedHome), (State::PhonedHome, Alive)]
        );
        assert!(!d.has_regressions());
    }

    #[test]
    fn unexpected_under_both_but_in_another_state_is_a_regression() {
        use EventKind::*;
        // Under v0.19.3 the Phoned Home in Waiting is stored, so Registering arrives in Phoned
        // Home; under v0.42.2 it is swallowed, so Registering arrives in Waiting.
        let l = log(&[
            (0, Registering),
            (10, Waiting),
            (20, PhonedHome),
            (30, Registering),
        ]);
        let d = diff("metal-api-v0.19.3", "metal-api-v0.42.2", &l);
        assert!(d.has_regressions());
        let new: Vec<_> = d
            .changes(Change::NewlyUnexpected)
            .iter()
            .map(|(p, _)| *p)
            .collect();
        assert_eq!(new, vec![(State::Waiting, Registering)]);
        let gone: Vec<_> = d
            .changes(Change::NewlyExpected)
            .iter()
            .map(|(p, _)| *p)
            .collect();
        assert!(gone.contains(&(State::PhonedHome, Registering)), "{gone:?}");
    }

    #[test]
    fn flag_flips_are_reported_per_machine() {
        let rules = Ruleset::resolve("metal-api-v0.42.2").unwrap();
        let old = replay(&log(&[(0, EventKind::Installing)]), &rules);
        let mut new = old.clone();
        new.container.crash_loop = true;
        let mut d = RuleDiff::default();
        d.add_traces(&old, &new, &Window::default());
        assert_eq!(
            d.flips,
            BTreeSet::from([(Flag::CrashLoop, "m".to_string(), false, true)])
        );
        let mut same = RuleDiff::default();
        same.add_traces(&old, &old, &Window::default());
        assert!(same.flips.is_empty() && same.changes.is_empty());
    }
}
