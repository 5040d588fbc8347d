//! The tallies' own tests: hand-made traces folded and added up.

use super::*;
use crate::replay::Container;

fn step(from: State, event: EventKind, verdict: Handling, minute: u32) -> Step {
    Step {
        time: DateTime::parse_from_rfc3339(&format!("2025-01-01T00:{minute:02}:00Z"))
            .unwrap()
            .with_timezone(&Utc),
        event,
        message: "".into(),
        from,
        handling: verdict,
        to: from,
        stored: true,
        recorded_state: None,
        line: 1,
        source: 0,
        index: 0,
        last_event_time: None,
    }
}

fn trace(machine: &str, steps: Vec<Step>) -> Trace {
    Trace {
        machine: machine.to_string(),
        source: "x".to_string(),
        sources: vec!["x".to_string()],
        steps,
        container: Container::default(),
        unknown: Vec::new(),
        last_error_only: None,
        annotated: false,
        place: None,
    }
}

#[test]
fn counts_events_and_distinct_machines_per_pair() {
    let w = State::Waiting;
    let pxe = EventKind::PxeBooting;
    let mut a = Summary::default();
    a.add_trace(&trace(
        "m2",
        vec![
            step(w, pxe, Handling::Unexpected, 5),
            step(w, pxe, Handling::Unexpected, 9),
            step(w, EventKind::Waiting, Handling::Expected, 1),
        ],
    ));
    let mut b = Summary::default();
    b.add_trace(&trace("m1", vec![step(w, pxe, Handling::Unexpected, 2)]));
    b.add_trace(&trace("m3", vec![step(w, pxe, Handling::Rejected, 3)]));
    a += b;
    let tally = &a.pairs[&(w, pxe)];
    assert_eq!(tally.count, 3);
    assert_eq!(tally.machines, 2);
    assert_eq!(tally.first_seen.to_rfc3339(), "2025-01-01T00:02:00+00:00");
    assert_eq!(tally.last_seen.to_rfc3339(), "2025-01-01T00:09:00+00:00");
    assert_eq!(tally.examples.iter().collect::<Vec<_>>(), vec!["m1", "m2"]);
    assert_eq!((a.events, a.replayed, a.rejected, a.machines), (5, 4, 1, 3));
}

#[test]
fn merge_order_does_not_change_the_result() {
    let mk = |m: &str| {
        let mut s = Summary::default();
        s.add_trace(&trace(
            m,
            vec![step(
                State::Preparing,
                EventKind::Preparing,
                Handling::Unexpected,
                1,
            )],
        ));
        s
    };
    let names = ["m5", "m4", "m3", "m2", "m1"];
    let mut forward = Summary::default();
    for n in names {
        forward += mk(n);
    }
    let mut backward = Summary::default();
    for n in names.iter().rev() {
        backward += mk(n);
    }
    assert_eq!(forward, backward);
    assert_eq!(
        forward.pairs[&(State::Preparing, EventKind::Preparing)]
            .examples
            .iter()
            .collect::<Vec<_>>(),
        vec!["m1", "m2", "m3"]
    );
}

#[test]
fn disagreement_only_where_verdicts_differ() {
    let mut s = step(
        State::Registering,
        EventKind::Installing,
        Handling::Expected,
        1,
    );
    s.recorded_state = Some(State::Registering);
    assert_eq!(
        disagreement(&s),
        Some((EventKind::Installing, Some(State::Registering), None))
    );
    s.handling = Handling::Unexpected;
    assert_eq!(disagreement(&s), None);
    s.recorded_state = None;
    assert_eq!(
        disagreement(&s),
        Some((EventKind::Installing, None, Some(State::Registering)))
    );
}
