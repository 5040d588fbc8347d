//! What every picture of the graph draws alike: the states in lifecycle order, a node's name
//! and note, an edge's label lines, and which edges lead down the lifecycle.

use crate::event::{EventKind, State};
use crate::graph::{EdgeKey, EdgeKind, Graph, Source};

/// A node's name.
pub(super) fn node_name(from: Source) -> &'static str {
    match from {
        Source::State(state) => state.name(),
        Source::Any => "any state",
    }
}

/// The lines of an edge's label: each event, with its count where observed.
pub(super) fn edge_lines(
    key: &EdgeKey,
    events: &std::collections::BTreeMap<EventKind, u64>,
) -> Vec<String> {
    events
        .iter()
        .map(|(event, n)| match key.kind {
            EdgeKind::Rule => event.name().to_string(),
            _ => format!("{} ×{n}", event.name()),
        })
        .collect()
}

/// The second line of a node: machines in it now, logs that begin in it.
pub(super) fn node_note(graph: &Graph, state: State) -> Option<String> {
    if !graph.observed {
        return (state == State::Initial).then(|| "any first event".to_string());
    }
    let now = graph.now_in.get(&state).copied().unwrap_or(0);
    let starts = graph.starts.get(&state).copied().unwrap_or(0);
    let mut parts = Vec::new();
    if state != State::Initial {
        parts.push(format!("{now} now"));
    }
    if starts > 0 {
        parts.push(match starts {
            1 => "1 log begins".to_string(),
            n => format!("{n} logs begin"),
        });
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The states a graph draws, in lifecycle order: the provisioning path, then the states around
/// it; Alive is never a state a machine is in.
pub(super) const LIFECYCLE: [State; 11] = [
    State::Initial,
    State::PxeBooting,
    State::Preparing,
    State::Registering,
    State::Waiting,
    State::Installing,
    State::BootingNewKernel,
    State::PhonedHome,
    State::PlannedReboot,
    State::MachineReclaim,
    State::Crashing,
];

pub(super) fn drawn_states() -> impl Iterator<Item = State> {
    LIFECYCLE.into_iter()
}

/// Whether an edge leads down the lifecycle (or is a loop): the edges that Graphviz and
/// Mermaid should rank by, so that the picture reads top to bottom; the others lead back.
pub(super) fn leads_down(key: &EdgeKey) -> bool {
    let rank = |s: State| {
        LIFECYCLE
            .iter()
            .position(|l| *l == s)
            .unwrap_or(LIFECYCLE.len())
    };
    match key.from {
        Source::Any => false,
        Source::State(from) => rank(from) <= rank(key.to),
    }
}
