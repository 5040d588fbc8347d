//! Where a user of an older metal-api stands: the newer built-in rule set that already
//! handles a pair. Told beside the verdict, never part of it, so that a back-test on a fleet
//! recorded under an old release finds what metal-stack found then.

use super::ruling::{Precedent, SWALLOWING_STATES};
use crate::event::{EventKind, Pair, State};
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
    /// How many of the pair's occurrences it handles, and of how many: fewer where it swallows
    /// only those that came within its buffering window.
    pub occurrences: u64,
    pub of: u64,
    /// Of the rest, those that came later than the window (it stores them); the others had no
    /// event before them to measure from.
    pub later: u64,
}

impl HandledBy {
    /// Whether it handles only some of the pair's occurrences.
    pub fn partly(&self) -> bool {
        self.occurrences < self.of
    }
}

/// The built-in rule sets newer than `replayed`, oldest first; none when `replayed` is no
/// built-in (a rule file's place in metal-api's history is unknown).
pub fn newer_than(replayed: &str) -> Vec<Ruleset> {
    let all = builtins();
    match all.iter().position(|r| r.name == replayed) {
        Some(at) => all.into_iter().skip(at + 1).collect(),
        None => Vec::new(),
    }
}

/// How the first of `newer` that handles any of the pair's `count` occurrences does, if one
/// does, given when they came (`soon`: less than metal-api's buffering window after the
/// container's last event time; `late`: later; the rest had no event before them). A release that buffers Phoned Home
/// swallows in Preparing, Registering and Waiting only the soon ones
/// (`swallowBufferedPhonedHome`, states.go): a later one a `self` rule stores, and the next
/// event is unexpected in Phoned Home. PXE Booting takes a later one's time only
/// (`PXEBootingState`), so it handles them all.
pub fn handled_by(
    (state, event): Pair,
    newer: &[Ruleset],
    (soon, late): (u64, u64),
    count: u64,
) -> Option<HandledBy> {
    newer.iter().find_map(|rules| {
        rules.lookup(state, event)?;
        let swallowed = event == EventKind::PhonedHome
            && rules.buffered_phoned_home.is_some()
            && SWALLOWING_STATES.contains(&state);
        let (how, precedent, handled, later) = match swallowed {
            true if state == State::PxeBooting => {
                (How::Swallowed, Some(Precedent::SWALLOW_BUFFERED), count, 0)
            }
            // The built-in window is metal-api's five minutes, the one `soon` was counted by.
            true => (
                How::Swallowed,
                Some(Precedent::SWALLOW_BUFFERED),
                soon,
                late,
            ),
            false => (How::Expected, precedent_of(&rules.name), count, 0),
        };
        (handled > 0).then(|| HandledBy {
            rules: rules.name.clone(),
            how,
            precedent,
            occurrences: handled,
            of: count,
            later,
        })
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

    /// Who handles a pair of four occurrences, all within the buffering window.
    fn by(replayed: &str, pair: Pair) -> Option<(String, How, Option<u32>)> {
        handled_by(pair, &newer_than(replayed), (4, 0), 4)
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
    fn a_buffered_phoned_home_is_swallowed_only_within_the_window() {
        let newer = newer_than("metal-api-v0.19.3");
        // Six minutes after the last event: v0.42.2's Waiting stores it (and the next
        // Installing is unexpected), so it handles none of them.
        for state in [State::Preparing, State::Registering, State::Waiting] {
            let pair = (state, EventKind::PhonedHome);
            assert_eq!(handled_by(pair, &newer, (0, 3), 3), None);
            let some = handled_by(pair, &newer, (2, 1), 3).unwrap();
            assert_eq!((some.occurrences, some.of, some.later), (2, 3, 1));
            assert!(some.partly());
            // One is an export's oldest row: nothing before it to measure from.
            let unknown = handled_by(pair, &newer, (2, 0), 3).unwrap();
            assert_eq!((unknown.occurrences, unknown.later), (2, 0));
            let all = handled_by(pair, &newer, (3, 0), 3).unwrap();
            assert!(!all.partly());
        }
        // PXE Booting takes a later one's time only: it handles them all.
        let pxe = (State::PxeBooting, EventKind::PhonedHome);
        let pxe = handled_by(pxe, &newer, (0, 3), 3).unwrap();
        assert_eq!((pxe.how, pxe.occurrences, pxe.of), (How::Swallowed, 3, 3));
    }
}
