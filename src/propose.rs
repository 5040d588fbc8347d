//! The rule change a fleet's verdicts call for (see [`crate::diagnose`]): the base rule set
//! plus an accepting row for each pair judged `accept` (leading where the base rule set
//! usually sends that event), a swallowing `self` row for each Phoned Home judged `swallow`
//! (with metal-api v0.42.2's buffering window), and no row for any other pair: metal-stack
//! accepted one observed pair in its history and swallowed one; every other was a problem
//! elsewhere. `--pair` forces a pair in whatever its verdict.

use crate::aggregate::{PairTally, Summary, Verdicts};
use crate::diagnose::{Action, Kind, PairVerdict};
use crate::event::{EventKind, Pair, State};
use crate::rules::{RuleFile, RuleRow, Ruleset, Target};

use std::collections::BTreeMap;

/// When a pair is accepted.
#[derive(Debug, Clone)]
pub struct Thresholds {
    /// On at least this share (0–1) of the fleet.
    pub min_share: f64,
    /// Accepted whatever their verdict.
    pub named: Vec<Pair>,
}

/// metal-api v0.42.2's window for buffered Phoned Home events, in seconds
/// (`swallowBufferedPhonedHomeThreshold`).
pub const BUFFERED_PHONED_HOME_SECONDS: u64 = 300;

/// A pair the proposal takes in, where it leads, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub state: State,
    pub event: EventKind,
    pub target: Target,
    pub tally: PairTally,
    pub share: f64,
    pub verdict: PairVerdict,
    /// Named with `--pair` against its verdict: neither accept nor a swallow metal-api runs.
    pub forced: bool,
}

/// Why the proposal leaves a pair unexpected.
#[derive(Debug, Clone, PartialEq)]
pub enum Because {
    /// Its verdict is no rule change.
    Verdict,
    /// A delayed event metal-api cannot swallow: another event than Phoned Home, or a state
    /// whose callback stores it.
    CannotSwallow,
    /// Accepted by its verdict, but on less of the fleet than `--min-share`.
    FewMachines { min_share: f64 },
    /// The base rule set accepts the event nowhere, so it has no usual target.
    NoTarget,
}

/// A pair the proposal leaves unexpected, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    pub state: State,
    pub event: EventKind,
    pub tally: PairTally,
    pub share: f64,
    pub verdict: PairVerdict,
    pub because: Because,
}

/// The proposed rule set and how it came about.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub base: String,
    pub accepted: Vec<Accepted>,
    pub left_out: Vec<LeftOut>,
    /// Named with `--pair` but not seen unexpected at all.
    pub not_seen: Vec<Pair>,
    /// The buffering window the proposal sets where the base had a shorter one or none.
    pub buffering: Option<u64>,
    pub file: RuleFile,
}

/// Where the base rule set usually sends `event`: the commonest target over the states that
/// accept it; ties go to the event's own state, then to metal-api's state order (`self`
/// last).
pub fn usual_target(base: &Ruleset, event: EventKind) -> Option<Target> {
    let mut counts: BTreeMap<(u8, usize), (Target, u64)> = BTreeMap::new();
    for state in State::ALL {
        if state == State::Alive {
            continue;
        }
        let Some(target) = base.lookup(state, event) else {
            continue;
        };
        // Ranked for ties: the event's own state first, then the state order, `self` last.
        let rank = match target {
            Target::To(s) if s == event.home_state() => (0, 0),
            Target::To(s) => (1, s.index()),
            Target::Stay => (2, 0),
        };
        counts.entry(rank).or_insert((target, 0)).1 += 1;
    }
    let best = counts.values().map(|(_, n)| *n).max()?;
    counts
        .into_values()
        .find(|(_, n)| *n == best)
        .map(|(target, _)| target)
}

/// Builds the proposal from a fleet's summary and verdicts under the base rule set.
pub fn propose(
    base: &Ruleset,
    summary: &Summary,
    verdicts: &Verdicts,
    thresholds: &Thresholds,
    name: &str,
) -> Proposal {
    let fleet = summary.machines.max(1) as f64;
    let mut accepted = Vec::new();
    let mut left_out = Vec::new();
    for ((state, event), tally) in summary.pairs_by_count() {
        let (state, event) = (*state, *event);
        let share = tally.machines as f64 / fleet;
        let Some(verdict) = verdicts.get(&(state, event)).cloned() else {
            continue;
        };
        let named = thresholds.named.contains(&(state, event));
        let swallow = verdict.action == Action::Swallow;
        let because = match verdict.kind {
            _ if named => None,
            Kind::Swallow if !swallow => Some(Because::CannotSwallow),
            Kind::Accept | Kind::Swallow if share < thresholds.min_share => {
                Some(Because::FewMachines {
                    min_share: thresholds.min_share,
                })
            }
            Kind::Accept | Kind::Swallow => None,
            _ => Some(Because::Verdict),
        };
        // A swallowed event stays where it came; an accepted one leads where the base sends
        // it, and where that is the state itself, metal-api needs `self` (a transition to the
        // current state by name is a `NoTransitionError`).
        // A named pair follows its verdict where it has one to follow: `--pair` on a swallow
        // still swallows (and so still gets the buffering), it does not accept.
        let target = if swallow {
            Some(Target::Stay)
        } else {
            usual_target(base, event).map(|t| match t {
                Target::To(to) if to == state => Target::Stay,
                other => other,
            })
        };
        match (because, target) {
            (None, Some(target)) => accepted.push(Accepted {
                state,
                event,
                target,
                tally: tally.clone(),
                share,
                forced: named && !matches!(verdict.kind, Kind::Accept) && !swallow,
                verdict,
            }),
            (because, _) => left_out.push(LeftOut {
                state,
                event,
                tally: tally.clone(),
                share,
                verdict,
                because: because.unwrap_or(Because::NoTarget),
            }),
        }
    }
    let not_seen = thresholds
        .named
        .iter()
        .filter(|pair| !summary.pairs.contains_key(pair))
        .copied()
        .collect();
    let mut file = base.file.clone();
    file.name = name.to_string();
    let swallows = accepted
        .iter()
        .any(|a| a.event == EventKind::PhonedHome && a.target == Target::Stay);
    let buffering = (swallows
        && file
            .buffered_phoned_home_seconds
            .is_none_or(|s| s < BUFFERED_PHONED_HOME_SECONDS))
    .then_some(BUFFERED_PHONED_HOME_SECONDS);
    if let Some(seconds) = buffering {
        file.buffered_phoned_home_seconds = Some(seconds);
    }
    let evidence: Vec<String> = accepted
        .iter()
        .map(|a| {
            let verb = if a.verdict.action == Action::Swallow {
                "swallows"
            } else {
                "accepts"
            };
            format!(
                "{verb} {} in {} → {} (×{} on {} machine{}, {:.1}% of the fleet)",
                a.event,
                a.state,
                a.target,
                a.tally.count,
                a.tally.machines,
                if a.tally.machines == 1 { "" } else { "s" },
                a.share * 100.0
            )
        })
        .collect();
    file.description = if evidence.is_empty() {
        format!("{} unchanged: no unexpected pair is accepted", base.name)
    } else {
        format!("{} proposed: {}", base.name, evidence.join("; "))
    };
    file.transitions.extend(accepted.iter().map(|a| RuleRow {
        event: a.event.name().to_string(),
        from: vec![a.state.name().to_string()],
        to: a.target.to_string(),
    }));
    Proposal {
        base: base.name.clone(),
        accepted,
        left_out,
        not_seen,
        buffering,
        file,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(name: &str) -> Ruleset {
        Ruleset::resolve(name).unwrap()
    }

    #[test]
    fn usual_targets_of_the_builtins() {
        let r = rules("metal-api");
        assert_eq!(
            usual_target(&r, EventKind::PxeBooting),
            Some(Target::To(State::PxeBooting))
        );
        assert_eq!(
            usual_target(&r, EventKind::Alive),
            Some(Target::To(State::Alive))
        );
        assert_eq!(
            usual_target(&r, EventKind::Crashed),
            Some(Target::To(State::Crashing))
        );
        // Phoned Home: 3 states lead to Phoned Home, 6 stay under v0.42.2.
        assert_eq!(usual_target(&r, EventKind::PhonedHome), Some(Target::Stay));
        assert_eq!(
            usual_target(&rules("metal-api-v0.19.0"), EventKind::PhonedHome),
            Some(Target::To(State::PhonedHome)),
            "3 lead to Phoned Home, 2 stay"
        );
    }

    /// A fleet of 10 machines with one pair, 4 times on 2 machines, of this many delayed
    /// occurrences: its summary and its verdicts.
    fn delayed(pair: Pair) -> (Summary, Verdicts) {
        use crate::diagnose::{Class, Classes, VerdictContext, verdict};
        let mut classes = Classes::default();
        for i in 0..4 {
            classes.add(Class::Delayed, None, i < 2);
        }
        let time = chrono::DateTime::from_timestamp(1_756_684_800, 0).unwrap();
        let mut tally = PairTally::new(time);
        tally.count = 4;
        tally.machines = 2;
        let mut summary = Summary {
            machines: 10,
            ..Summary::default()
        };
        summary.pairs.insert(pair, tally);
        let verdicts =
            Verdicts::from([(pair, verdict(pair, &classes, 2, &VerdictContext::new(2)))]);
        (summary, verdicts)
    }

    #[test]
    fn a_named_swallow_is_still_swallowed_with_its_buffering() {
        let pair = (State::Waiting, EventKind::PhonedHome);
        let (summary, verdicts) = delayed(pair);
        let base = rules("metal-api-v0.19.3");
        for named in [vec![], vec![pair]] {
            let thresholds = Thresholds {
                min_share: 0.0,
                named: named.clone(),
            };
            let p = propose(&base, &summary, &verdicts, &thresholds, "p");
            assert_eq!(p.accepted.len(), 1, "{named:?}");
            assert_eq!(p.accepted[0].target, Target::Stay, "{named:?}");
            assert!(!p.accepted[0].forced, "{named:?}");
            assert_eq!(p.buffering, Some(BUFFERED_PHONED_HOME_SECONDS), "{named:?}");
            assert!(
                p.file
                    .description
                    .contains("swallows Phoned Home in Waiting → self"),
                "{}",
                p.file.description
            );
        }
    }

    #[test]
    fn a_named_swallow_metal_api_cannot_run_is_forced() {
        // Installing stores a late Phoned Home: no swallowing there, so a named one is
        // accepted to the usual target, against its verdict.
        let pair = (State::Installing, EventKind::PhonedHome);
        let (summary, verdicts) = delayed(pair);
        let base = rules("metal-api-v0.19.3");
        let unnamed = Thresholds {
            min_share: 0.0,
            named: vec![],
        };
        let p = propose(&base, &summary, &verdicts, &unnamed, "p");
        assert!(p.accepted.is_empty());
        assert_eq!(p.left_out[0].because, Because::CannotSwallow);
        let named = Thresholds {
            min_share: 0.0,
            named: vec![pair],
        };
        let p = propose(&base, &summary, &verdicts, &named, "p");
        assert_eq!(p.accepted.len(), 1);
        assert!(p.accepted[0].forced);
        assert_eq!(p.buffering, None);
        assert!(
            p.file
                .description
                .contains("accepts Phoned Home in Installing")
        );
    }
}
