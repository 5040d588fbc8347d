//! The transition graph: states as nodes, transitions as edges. Of a rule set alone, the
//! transitions it allows; of a fleet, the transitions the replay observed (with the events and
//! their counts, unexpected ones apart), the rule edges nobody took, and how many machines are
//! in each state now. Per-machine graphs add up with `+=`.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use crate::diagnose::Judged;
use crate::event::{EventKind, Pair, State};
use crate::replay::{Handling, Step, Trace};
use crate::rules::{Ruleset, Target};
use crate::window::Window;

/// Where an edge starts: a state, or every state (a rule set's `*` row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    State(State),
    Any,
}

/// What kind of transition an edge is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// Observed, and a rule allows it.
    Expected,
    /// Observed, and no rule allows it.
    Unexpected,
    /// A rule that allows it; in a fleet's graph, nobody took it.
    Rule,
}

/// An edge and the events that made it, each with how often (0 for a rule nobody took).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EdgeKey {
    pub from: Source,
    pub to: State,
    pub kind: EdgeKind,
}

/// One machine's steps counted as its events come, for a machine judged further (which
/// keeps no steps): what [`Graph::add_trace`] adds of them, and its unexpected pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edges(Vec<(EdgeStep, u64)>);

/// Steps alike: from a state, by an event, to a state, with a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EdgeStep {
    from: State,
    event: EventKind,
    to: State,
    handling: Handling,
}

impl Edges {
    /// Counts a step of the replay.
    pub fn add(&mut self, step: &Step) {
        let key = EdgeStep {
            from: step.from,
            event: step.event,
            to: step.to,
            handling: step.handling,
        };
        // A machine takes few distinct steps: a short list beats a map in size and time.
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => self.0.push((key, 1)),
        }
    }

    /// How many steps of each pair were unexpected, by pair.
    pub fn unexpected(&self) -> BTreeMap<Pair, u64> {
        let mut pairs = BTreeMap::new();
        for (e, n) in &self.0 {
            if e.handling == Handling::Unexpected {
                *pairs.entry((e.from, e.event)).or_default() += n;
            }
        }
        pairs
    }
}

/// A transition graph.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Graph {
    pub edges: BTreeMap<EdgeKey, BTreeMap<EventKind, u64>>,
    /// Machines per state at the end of their logs (a fleet's graph only).
    pub now_in: BTreeMap<State, u64>,
    /// Logs whose first event arrived in the empty container (from Initial), per state it
    /// led to: drawn as a count on the state, not as an edge from Initial.
    pub starts: BTreeMap<State, u64>,
    /// Whether the graph is of a fleet (observed) or of the rule set alone.
    pub observed: bool,
}

impl Graph {
    /// The rule set alone: each row once (a `*` row from every state as one edge), the events
    /// that keep a state as loops; Initial, which accepts any first event, only towards PXE
    /// Booting.
    pub fn of_rules(rules: &Ruleset) -> Graph {
        let mut graph = Graph::default();
        for event in EventKind::ALL {
            if let Some(target) = rules.wildcard(event) {
                let to = match target {
                    Target::To(state) => state,
                    Target::Stay => continue,
                };
                graph.add_edge(Source::Any, to, EdgeKind::Rule, event, 0);
            }
            for state in State::ALL {
                if state == State::Alive || !rules.has_row(state, event) {
                    continue;
                }
                if state == State::Initial && event != EventKind::PxeBooting {
                    continue;
                }
                let Some(target) = rules.lookup(state, event) else {
                    continue;
                };
                graph.add_edge(
                    Source::State(state),
                    rule_target(state, target),
                    EdgeKind::Rule,
                    event,
                    0,
                );
            }
        }
        graph
    }

    fn add_edge(&mut self, from: Source, to: State, kind: EdgeKind, event: EventKind, n: u64) {
        *self
            .edges
            .entry(EdgeKey { from, to, kind })
            .or_default()
            .entry(event)
            .or_default() += n;
    }

    /// Folds one judged machine in: its transitions in the window, and its state now.
    pub fn add(&mut self, judged: &Judged, window: &Window) {
        self.add_trace(judged.trace(), window);
    }

    /// Folds one machine's replay in: its transitions in the window, and its state now.
    pub fn add_trace(&mut self, trace: &Trace, window: &Window) {
        for step in &trace.steps {
            if window.contains(step.time) {
                self.add_step(step.from, step.event, step.to, step.handling, 1);
            }
        }
        let outside = trace.last_error_only.as_ref();
        self.add_end(
            trace.container.state(),
            outside.filter(|s| window.contains(s.time)),
        );
    }

    /// Folds in the transitions a machine judged further counted, every one (the whole
    /// history is its window).
    pub fn add_edges(&mut self, edges: &Edges) {
        for (e, n) in &edges.0 {
            self.add_step(e.from, e.event, e.to, e.handling, *n);
        }
    }

    /// Folds in a machine's end: the state it is in now, and the exported last error event
    /// outside its log (counted as report counts it, from the state it was recorded in to
    /// where it would have led).
    pub fn add_end(&mut self, state: State, last_error_only: Option<&Step>) {
        self.observed = true;
        *self.now_in.entry(state).or_default() += 1;
        if let Some(step) = last_error_only
            && step.handling == Handling::Unexpected
        {
            let to = match step.event {
                EventKind::Alive => step.from,
                event => event.home_state(),
            };
            self.add_edge(
                Source::State(step.from),
                to,
                EdgeKind::Unexpected,
                step.event,
                1,
            );
        }
    }

    /// `n` steps of the replay alike.
    fn add_step(&mut self, from: State, event: EventKind, to: State, handling: Handling, n: u64) {
        let kind = match handling {
            Handling::Rejected => return,
            Handling::Unexpected => EdgeKind::Unexpected,
            Handling::Expected => EdgeKind::Expected,
        };
        if from == State::Initial && kind == EdgeKind::Expected {
            *self.starts.entry(to).or_default() += n;
            return;
        }
        self.add_edge(Source::State(from), to, kind, event, n);
    }

    /// Adds the rule set's edges that nobody took (faint in a fleet's graph).
    pub fn add_untaken_rules(&mut self, rules: &Ruleset) {
        let mut taken: Vec<(Source, State, EventKind)> = self
            .edges
            .iter()
            .filter(|(k, _)| k.kind == EdgeKind::Expected)
            .flat_map(|(k, events)| events.keys().map(move |e| (k.from, k.to, *e)))
            .collect();
        // A log that begins in PXE Booting took the rule from Initial.
        if self.starts.contains_key(&State::PxeBooting) {
            taken.push((
                Source::State(State::Initial),
                State::PxeBooting,
                EventKind::PxeBooting,
            ));
        }
        let taken_anywhere =
            |event: EventKind, to: State| taken.iter().any(|(_, t, e)| *e == event && *t == to);
        for (key, events) in Graph::of_rules(rules).edges {
            for event in events.keys() {
                let seen = match key.from {
                    Source::Any => taken_anywhere(*event, key.to),
                    from => taken.contains(&(from, key.to, *event)),
                };
                if !seen {
                    self.add_edge(key.from, key.to, EdgeKind::Rule, *event, 0);
                }
            }
        }
    }
}

/// Where a rule leads: its target state, or the state itself for `self` and for events that
/// never move a machine (Alive is never stored).
fn rule_target(state: State, target: Target) -> State {
    match target {
        Target::To(State::Alive) | Target::Stay => state,
        Target::To(to) => to,
    }
}

impl AddAssign for Graph {
    fn add_assign(&mut self, other: Graph) {
        self.observed |= other.observed;
        for (key, events) in other.edges {
            let mine = self.edges.entry(key).or_default();
            for (event, n) in events {
                *mine.entry(event).or_default() += n;
            }
        }
        for (state, n) in other.now_in {
            *self.now_in.entry(state).or_default() += n;
        }
        for (state, n) in other.starts {
            *self.starts.entry(state).or_default() += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_row_is_one_edge() {
        let graph = Graph::of_rules(&Ruleset::resolve("metal-api").unwrap());
        let into_reboot: Vec<_> = graph
            .edges
            .keys()
            .filter(|k| k.to == State::PlannedReboot)
            .collect();
        assert_eq!(
            into_reboot,
            vec![
                &EdgeKey {
                    from: Source::State(State::PlannedReboot),
                    to: State::PlannedReboot,
                    kind: EdgeKind::Rule
                },
                &EdgeKey {
                    from: Source::Any,
                    to: State::PlannedReboot,
                    kind: EdgeKind::Rule
                },
            ]
        );
        let waiting_loop = &graph.edges[&EdgeKey {
            from: Source::State(State::Waiting),
            to: State::Waiting,
            kind: EdgeKind::Rule,
        }];
        assert_eq!(
            waiting_loop.keys().collect::<Vec<_>>(),
            vec![&EventKind::Alive, &EventKind::PhonedHome]
        );
    }
}
