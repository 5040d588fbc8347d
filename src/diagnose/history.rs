//! Where a user of an older metal-api stands: the newer built-in rule set that already
//! handles a pair. Told beside the verdict, never part of it, so that a back-test on a fleet
//! recorded under an old release finds what metal-stack found then.

use std::sync::OnceLock;

use super::ruling::{Precedent, SWALLOWING_STATES};
use crate::event::{EventKind, Pair};
use crate::log::MachineLog;
use crate::replay::{Handling, Trace, replay};
use crate::rules::{Ruleset, builtins};

/// How a newer rule set handles a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// A rule expects it.
    Expected,
    /// Its state's callback swallows it as buffered (and a `self` rule expects it outside the
    /// window).
    Swallowed,
}

impl How {
    /// The name in output.
    pub fn name(self) -> &'static str {
        match self {
            How::Expected => "expected",
            How::Swallowed => "swallowed",
        }
    }
}

/// The oldest built-in rule set newer than the one replayed that handles a pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandledBy {
    pub rules: String,
    pub how: How,
    pub precedent: Option<Precedent>,
    /// How many of the pair's occurrences it handles, and of how many: fewer where a machine
    /// replayed under it still stores a Phoned Home of them.
    pub occurrences: u64,
    pub of: u64,
    /// Of the rest, those where it stores a Phoned Home (that one or one the machine sent
    /// after it) 5 minutes or more after the machine's last event as it holds it; the others
    /// had no event before them to measure from.
    pub later: u64,
    /// Of `later`, those where the next event other than Phoned Home is then unexpected.
    pub then_unexpected: u64,
}

impl HandledBy {
    /// Whether it handles only some of the pair's occurrences.
    pub fn partly(&self) -> bool {
        self.occurrences < self.of
    }
}

/// What the newer release that buffers Phoned Home does with one unexpected Phoned Home, the
/// machine replayed under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Newer {
    /// It stores nothing of it, nor of what the machine sent after it before the next event
    /// the replayed release stored: the pair, and what it caused, are gone.
    Swallowed,
    /// It stores a Phoned Home of them, as a `self` rule does one 5 minutes or more after the
    /// last event it holds (a swallowed one does not move that time); `then_unexpected` where
    /// the next event other than Phoned Home is unexpected.
    Stored { then_unexpected: bool },
    /// It stores it, and had no event before it to measure from (an export's oldest row).
    Unmeasured,
}

/// What a pair's occurrences came to under the newer release that buffers Phoned Home (see
/// [`Newer`]); an occurrence of another pair is in none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnderNewer {
    pub swallowed: u64,
    pub stored: u64,
    pub then_unexpected: u64,
}

impl UnderNewer {
    /// Counts one occurrence.
    pub fn add(&mut self, newer: Option<Newer>) {
        match newer {
            Some(Newer::Swallowed) => self.swallowed += 1,
            Some(Newer::Stored { then_unexpected }) => {
                self.stored += 1;
                self.then_unexpected += u64::from(then_unexpected);
            }
            Some(Newer::Unmeasured) | None => {}
        }
    }
}

impl std::ops::AddAssign for UnderNewer {
    fn add_assign(&mut self, other: UnderNewer) {
        self.swallowed += other.swallowed;
        self.stored += other.stored;
        self.then_unexpected += other.then_unexpected;
    }
}

/// The built-in rule sets newer than `replayed`, oldest first; none when `replayed` is no
/// built-in (a rule file's place in metal-api's history is unknown).
pub fn newer_than(replayed: &str) -> Vec<Ruleset> {
    newer_builtins(replayed).to_vec()
}

/// The same, loaded once: every machine with a Phoned Home to judge asks for them.
pub(super) fn newer_builtins(replayed: &str) -> &'static [Ruleset] {
    static ALL: OnceLock<Vec<Ruleset>> = OnceLock::new();
    let all = ALL.get_or_init(builtins);
    match all.iter().position(|r| r.name == replayed) {
        Some(at) => &all[at + 1..],
        None => &[],
    }
}

/// The newer rule set that handles `pair` (the oldest that has a rule for it), where that is
/// a swallow: one that buffers Phoned Home, in a state whose callback swallows it.
pub(super) fn swallowing(pair: Pair, newer: &[Ruleset]) -> Option<&Ruleset> {
    let rules = newer.iter().find(|r| r.lookup(pair.0, pair.1).is_some())?;
    (pair.1 == EventKind::PhonedHome
        && rules.buffered_phoned_home.is_some()
        && SWALLOWING_STATES.contains(&pair.0))
    .then_some(rules)
}

/// By step of `trace` (the machine replayed under `rules`): what the newer release that would
/// swallow an unexpected Phoned Home does with it, the machine replayed under that release
/// (metal-api's own window, measured from the last event time as that release holds it: a
/// Phoned Home it swallows does not move it, an Alive it takes in does). `None` for every
/// other step; empty where no step needs it.
pub fn under_newer(log: &MachineLog, trace: &Trace, rules: &Ruleset) -> Vec<Option<Newer>> {
    let newer = newer_builtins(&rules.name);
    let steps = &trace.steps;
    let mut judged = Vec::new();
    let mut replays: Vec<(&str, Trace)> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if step.handling != Handling::Unexpected {
            continue;
        }
        let Some(by) = swallowing((step.from, step.event), newer) else {
            continue;
        };
        let at = match replays.iter().position(|(name, _)| *name == by.name) {
            Some(at) => at,
            None => {
                replays.push((&by.name, replay(log, by)));
                replays.len() - 1
            }
        };
        if judged.is_empty() {
            judged = vec![None; steps.len()];
        }
        judged[i] = newer_fate(trace, &replays[at].1, i);
    }
    judged
}

/// What the replay under the newer release (`newer`, step for step the same events as
/// `trace`) does with step `i` and what the replayed release took in after it without storing
/// (the later Phoned Home events, Alive) up to the next event it stored.
fn newer_fate(trace: &Trace, newer: &Trace, i: usize) -> Option<Newer> {
    let (old, new) = (&trace.steps, &newer.steps);
    if new.len() != old.len() || new[i].index != old[i].index {
        return None;
    }
    let end = old[i + 1..]
        .iter()
        .position(|s| s.stored)
        .map_or(old.len(), |p| i + 1 + p);
    let Some(k) = (i..end).find(|&k| new[k].stored || new[k].handling == Handling::Unexpected)
    else {
        return Some(Newer::Swallowed);
    };
    if k == i && new[i].last_event_time.is_none() {
        return Some(Newer::Unmeasured);
    }
    let then_unexpected = new[k].handling == Handling::Unexpected
        || new[k + 1..]
            .iter()
            .find(|s| s.event != EventKind::PhonedHome)
            .is_some_and(|s| s.handling == Handling::Unexpected);
    Some(Newer::Stored { then_unexpected })
}

/// How the first of `newer` that handles any of the pair's `count` occurrences does, if one
/// does. A release that buffers Phoned Home handles in PXE Booting … Waiting only the
/// occurrences `under` counts as swallowed (see [`under_newer`]): it stores the others, or a
/// Phoned Home after them, and the machine stays where the replayed release put it.
pub fn handled_by(
    pair: Pair,
    newer: &[Ruleset],
    under: UnderNewer,
    count: u64,
) -> Option<HandledBy> {
    let (state, event) = pair;
    let rules = newer.iter().find(|r| r.lookup(state, event).is_some())?;
    let (how, precedent, handled, later, then_unexpected) = match swallowing(pair, newer) {
        Some(_) => (
            How::Swallowed,
            Some(Precedent::SWALLOW_BUFFERED),
            under.swallowed,
            under.stored,
            under.then_unexpected,
        ),
        None => (How::Expected, precedent_of(&rules.name), count, 0, 0),
    };
    (handled > 0).then(|| HandledBy {
        rules: rules.name.clone(),
        how,
        precedent,
        occurrences: handled,
        of: count,
        later,
        then_unexpected,
    })
}

/// The pull request that brought a built-in rule set's change.
fn precedent_of(rules: &str) -> Option<Precedent> {
    match rules {
        "metal-api-v0.19.3" => Some(Precedent::ACCEPT_REINSTALL),
        "metal-api-v0.42.2" => Some(Precedent::SWALLOW_BUFFERED),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::State;

    /// Who handles a pair of four occurrences, all within the buffering window.
    fn by(replayed: &str, pair: Pair) -> Option<(String, How, Option<u32>)> {
        let all = UnderNewer {
            swallowed: 4,
            ..UnderNewer::default()
        };
        handled_by(pair, &newer_than(replayed), all, 4)
            .map(|h| (h.rules, h.how, h.precedent.map(|p| p.number)))
    }

    #[test]
    fn an_older_release_learns_which_release_handles_the_pair() {
        let skipped = (State::Registering, EventKind::Installing);
        assert_eq!(
            by("metal-api-v0.19.0", skipped),
            Some(("metal-api-v0.19.3".into(), How::Expected, Some(325)))
        );
        for state in SWALLOWING_STATES {
            let late = (state, EventKind::PhonedHome);
            assert_eq!(
                by("metal-api-v0.19.3", late),
                Some(("metal-api-v0.42.2".into(), How::Swallowed, Some(631))),
                "{state}"
            );
            assert_eq!(by("metal-api-v0.42.2", late), None);
        }
        // Still unexpected in the newest release: nobody handles it.
        let reboot = (State::Waiting, EventKind::PxeBooting);
        assert_eq!(by("metal-api-v0.19.0", reboot), None);
        // A rule file has no place in the history.
        assert!(newer_than("my-rules").is_empty());
    }

    #[test]
    fn a_swallow_handles_only_the_occurrences_the_newer_replay_swallowed() {
        let newer = newer_than("metal-api-v0.19.3");
        let under = |swallowed, stored, then_unexpected| UnderNewer {
            swallowed,
            stored,
            then_unexpected,
        };
        for state in SWALLOWING_STATES {
            let pair = (state, EventKind::PhonedHome);
            // None swallowed: no release is named.
            assert_eq!(handled_by(pair, &newer, under(0, 3, 3), 3), None);
            let some = handled_by(pair, &newer, under(2, 1, 0), 3).unwrap();
            assert_eq!(
                (some.occurrences, some.of, some.later, some.then_unexpected),
                (2, 3, 1, 0)
            );
            assert!(some.partly());
            // One is an export's oldest row: nothing before it to measure from.
            let unknown = handled_by(pair, &newer, under(2, 0, 0), 3).unwrap();
            assert_eq!((unknown.occurrences, unknown.later), (2, 0));
            let all = handled_by(pair, &newer, under(3, 0, 0), 3).unwrap();
            assert!(!all.partly());
        }
    }
}
