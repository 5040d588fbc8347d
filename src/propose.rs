//! The rule change that would accept what a fleet does: the base rule set plus one accepting
//! row for each unexpected pair seen often enough, leading where the base rule set usually
//! sends that event.

use std::collections::BTreeMap;

use crate::aggregate::{PairTally, Summary};
use crate::event::{EventKind, State};
use crate::rules::{RuleFile, RuleRow, Ruleset, Target};

/// When a pair is accepted.
#[derive(Debug, Clone)]
pub struct Thresholds {
    /// Seen on at least this many machines.
    pub min_machines: u64,
    /// And on at least this share (0–1) of the fleet.
    pub min_share: f64,
    /// Accepted whatever their numbers.
    pub named: Vec<(State, EventKind)>,
}

/// A pair the proposal accepts, where it leads, and the evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub state: State,
    pub event: EventKind,
    pub target: Target,
    pub tally: PairTally,
    pub share: f64,
}

/// A pair the proposal leaves unexpected, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    pub state: State,
    pub event: EventKind,
    pub tally: PairTally,
    pub share: f64,
    pub reason: String,
}

/// The proposed rule set and how it came about.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub base: String,
    pub accepted: Vec<Accepted>,
    pub left_out: Vec<LeftOut>,
    /// Named with `--pair` but not seen unexpected at all.
    pub not_seen: Vec<(State, EventKind)>,
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

/// Builds the proposal from a fleet's summary under the base rule set.
pub fn propose(base: &Ruleset, summary: &Summary, thresholds: &Thresholds, name: &str) -> Proposal {
    let fleet = summary.machines.max(1) as f64;
    let mut accepted = Vec::new();
    let mut left_out = Vec::new();
    for ((state, event), tally) in summary.pairs_by_count() {
        let share = tally.machines as f64 / fleet;
        let named = thresholds.named.contains(&(*state, *event));
        let reason = if named {
            None
        } else if tally.machines < thresholds.min_machines {
            Some(format!(
                "on {} machine{}, fewer than --min-machines {}",
                tally.machines,
                if tally.machines == 1 { "" } else { "s" },
                thresholds.min_machines
            ))
        } else if share < thresholds.min_share {
            Some(format!(
                "on {:.1}% of the fleet, less than --min-share {:.1}%",
                share * 100.0,
                thresholds.min_share * 100.0
            ))
        } else {
            None
        };
        let target = usual_target(base, *event);
        match (reason, target) {
            (None, Some(target)) => accepted.push(Accepted {
                state: *state,
                event: *event,
                target,
                tally: tally.clone(),
                share,
            }),
            (reason, _) => left_out.push(LeftOut {
                state: *state,
                event: *event,
                tally: tally.clone(),
                share,
                reason: reason.unwrap_or_else(|| {
                    format!(
                        "{} accepts {event} nowhere, so it has no usual target",
                        base.name
                    )
                }),
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
    let evidence: Vec<String> = accepted
        .iter()
        .map(|a| {
            format!(
                "{} in {} → {} ({}× on {} machines, {:.1}% of the fleet)",
                a.event,
                a.state,
                a.target,
                a.tally.count,
                a.tally.machines,
                a.share * 100.0
            )
        })
        .collect();
    file.description = if evidence.is_empty() {
        format!("{} unchanged: no unexpected pair is accepted", base.name)
    } else {
        format!("{} proposed: accepts {}", base.name, evidence.join("; "))
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
}
