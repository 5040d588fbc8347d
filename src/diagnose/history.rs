//! Where a user of an older metal-api stands: the newer built-in rule set that already
//! handles a pair. Told beside the verdict, never part of it, so that a back-test on a fleet
//! recorded under an old release finds what metal-stack found then.

use super::ruling::{Precedent, SWALLOWING_STATES};
use crate::event::{EventKind, Pair};
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

/// How the first of `newer` that handles `pair` does, if one does.
pub fn handled_by((state, event): Pair, newer: &[Ruleset]) -> Option<HandledBy> {
    let rules = newer.iter().find(|r| r.lookup(state, event).is_some())?;
    let swallowed = event == EventKind::PhonedHome
        && rules.buffered_phoned_home.is_some()
        && SWALLOWING_STATES.contains(&state);
    let (how, precedent) = if swallowed {
        (How::Swallowed, Some(Precedent::SWALLOW_BUFFERED))
    } else {
        (How::Expected, precedent_of(&rules.name))
    };
    Some(HandledBy {
        rules: rules.name.clone(),
        how,
        precedent,
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

    fn by(replayed: &str, pair: Pair) -> Option<(String, How, Option<u32>)> {
        handled_by(pair, &newer_than(replayed))
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
}
