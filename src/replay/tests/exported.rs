//! How an exported log is replayed: its oldest row, the verdicts it recorded, the flags and
//! paths the rules leave implicit, and `replay()` on whole exported logs.

use super::*;

// The oldest row of an export.

#[test]
fn assumed_state_applies_to_the_next_event_only() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    replayer.assume_empty_state(State::PxeBooting);
    // Received by PXE Booting as a time update: nothing stored.
    let step = replayer.step(at(0), PhonedHome, "ph", Some(State::PxeBooting), 0);
    assert_eq!((step.from, step.stored), (State::PxeBooting, false));
    // The next row arrives in an empty container again: Initial.
    let step = replayer.step(at(60), Registering, "r", None, 0);
    assert_eq!(
        (step.from, step.handling),
        (State::Initial, Handling::Expected)
    );
}

#[test]
fn oldest_row_with_recorded_verdict_is_replayed_from_that_state() {
    let r = rules(V0190);
    let mut replayer = Replayer::new(&r);
    replayer.assume_empty_state(State::Registering);
    let step = replayer.step(
        at(0),
        Installing,
        "start installation",
        Some(State::Registering),
        0,
    );
    assert_eq!(step.from, State::Registering);
    assert_eq!(step.handling, Handling::Unexpected);
    assert_eq!(
        replayer.container().events[0].message.as_ref(),
        "[unexpectedly received in state registering]: start installation"
    );
    // Under v0.19.3 the same row is expected.
    let r = rules(V0193);
    let mut replayer = Replayer::new(&r);
    replayer.assume_empty_state(State::Registering);
    let step = replayer.step(
        at(0),
        Installing,
        "start installation",
        Some(State::Registering),
        0,
    );
    assert_eq!(step.handling, Handling::Expected);
}

#[test]
fn registering_to_installing_differs_between_v0_19_0_and_v0_19_3() {
    let mut verdicts = Vec::new();
    for name in [V0190, V0193, V0422] {
        let r = rules(name);
        let mut replayer = Replayer::new(&r);
        feed(
            &mut replayer,
            &[(0, PxeBooting), (10, Preparing), (20, Registering)],
        );
        verdicts.push(replayer.step(at(30), Installing, "m", None, 0).handling);
    }
    assert_eq!(
        verdicts,
        vec![Handling::Unexpected, Handling::Expected, Handling::Expected]
    );
}

// Flags and paths the rules above leave implicit.

#[test]
fn repeated_pxe_booting_clears_failed_reclaim_on_the_time_update_path() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, PxeBooting)]);
    replayer.container_mut().failed_machine_reclaim = true;
    let step = replayer.step(at(10), PxeBooting, "m", None, 0);
    assert!(!step.stored);
    assert!(!replayer.container().failed_machine_reclaim);
    // The late Phoned Home that PXE Booting receives runs the same handler.
    replayer.container_mut().failed_machine_reclaim = true;
    let step = replayer.step(at(700), PhonedHome, "m", None, 0);
    assert!(!step.stored);
    assert!(!replayer.container().failed_machine_reclaim);
}

#[test]
fn phoned_home_from_initial_clears_crash_loop() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    replayer.container_mut().crash_loop = true;
    let step = replayer.step(at(0), PhonedHome, "m", None, 0);
    assert!(step.stored);
    assert!(!replayer.container().crash_loop);
}

#[test]
fn unexpected_pxe_booting_or_preparing_leaves_failed_reclaim_alone() {
    let r = rules(V0422);
    for event in [PxeBooting, Preparing] {
        let mut replayer = Replayer::new(&r);
        to_waiting(&mut replayer);
        replayer.container_mut().failed_machine_reclaim = true;
        let step = replayer.step(at(40), event, "m", None, 0);
        assert_eq!(step.handling, Handling::Unexpected, "{event}");
        assert!(replayer.container().failed_machine_reclaim, "{event}");
    }
}

#[test]
fn a_time_update_alone_sets_liveliness() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, MachineReclaim)]);
    replayer.container_mut().liveliness = Liveliness::Unknown;
    let step = replayer.step(at(400), PhonedHome, "m", None, 0);
    assert!(!step.stored);
    assert_eq!(replayer.container().liveliness, Liveliness::Alive);
}

#[test]
fn a_swallowed_event_may_move_time_backwards() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(
        &mut replayer,
        &[(0, BootingNewKernel), (100, PhonedHome), (900, PhonedHome)],
    );
    // A repeated Phoned Home at 200 is a time update: behind 900, but not behind 100.
    let step = replayer.step(at(200), PhonedHome, "m", None, 0);
    assert_eq!(step.handling, Handling::Expected);
    assert_eq!(replayer.container().last_event_time, Some(at(200)));
}

#[test]
fn buffered_phoned_home_needs_a_last_event_time() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    replayer.assume_empty_state(State::Waiting);
    let step = replayer.step(at(0), PhonedHome, "m", None, 0);
    assert_eq!(step.handling, Handling::Expected);
    assert!(
        step.stored,
        "no last_event_time: nothing to be within five minutes of"
    );
}

// replay(): how an exported log is read (docs/metal-api.md, its last section).

mod exported_log {
    use super::*;
    use crate::event::{Event, EventName};
    use crate::log::{Format, MachineLog, RecordedFlag};

    fn event(seconds: i64, kind: EventKind, message: &str) -> Event {
        Event::from_recorded(at(seconds), EventName::Known(kind), message, 0)
    }

    fn log(events: Vec<Event>) -> MachineLog {
        let mut log = MachineLog::new("m".to_string(), "m.json", 1, Format::LogsJson);
        log.events = events;
        log
    }

    /// A flag as an export records it, holding as of the log's newest event.
    fn recorded(log: &MachineLog, value: bool) -> Option<RecordedFlag> {
        Some(RecordedFlag {
            value,
            as_of: log.as_of(),
        })
    }

    #[test]
    fn oldest_row_with_a_recorded_verdict_arrives_in_that_state() {
        let trace = replay(
            &log(vec![
                event(
                    0,
                    PxeBooting,
                    "[unexpectedly received in state waiting]: dhcp",
                ),
                event(60, Preparing, "hammer"),
            ]),
            &rules(V0422),
        );
        assert_eq!(trace.steps[0].from, State::Waiting);
        assert_eq!(trace.steps[0].handling, Handling::Unexpected);
        assert_eq!(
            trace.container.events[1].message.as_ref(),
            "[unexpectedly received in state waiting]: dhcp"
        );
        // Without the recorded verdict, the oldest row comes from Initial.
        let trace = replay(&log(vec![event(0, PxeBooting, "dhcp")]), &rules(V0422));
        assert_eq!(trace.steps[0].from, State::Initial);
        assert_eq!(trace.steps[0].handling, Handling::Expected);
    }

    #[test]
    fn exported_failed_reclaim_flag_is_taken_either_way() {
        let mut reclaim = log(vec![event(0, MachineReclaim, "free")]);
        reclaim.recorded.failed_machine_reclaim = recorded(&reclaim, true);
        assert!(
            replay(&reclaim, &rules(V0422))
                .container
                .failed_machine_reclaim
        );
        let mut stream = log(vec![
            event(0, MachineReclaim, "free"),
            event(400, PhonedHome, ""),
        ]);
        assert!(
            replay(&stream, &rules(V0422))
                .container
                .failed_machine_reclaim
        );
        stream.recorded.failed_machine_reclaim = recorded(&stream, false);
        assert!(
            !replay(&stream, &rules(V0422))
                .container
                .failed_machine_reclaim
        );
    }

    #[test]
    fn recorded_flags_hold_as_of_their_record_and_newer_events_replay_on_top() {
        // An older export saw the failed reclaim and a crash loop; newer rows (another record
        // of the machine, merged in) show it PXE boot and phone home again.
        let mut merged = log(vec![
            event(0, MachineReclaim, "free"),
            event(600, PxeBooting, "dhcp"),
            event(660, Preparing, "hammer"),
        ]);
        let as_of = Some(at(0));
        merged.recorded.failed_machine_reclaim = Some(RecordedFlag { value: true, as_of });
        merged.recorded.crash_loop = Some(RecordedFlag { value: true, as_of });
        let trace = replay(&merged, &rules(V0422));
        assert!(
            !trace.container.failed_machine_reclaim,
            "PXE Booting clears it"
        );
        assert!(
            trace.container.held_crash_loop(),
            "no newer event sets the crash loop flag, so the recorded one holds"
        );
        // The same flags recorded after the newest event are what metal-api holds.
        let late = Some(at(700));
        merged.recorded.failed_machine_reclaim = Some(RecordedFlag {
            value: true,
            as_of: late,
        });
        assert!(
            replay(&merged, &rules(V0422))
                .container
                .failed_machine_reclaim
        );
    }

    #[test]
    fn last_error_in_the_log_is_not_counted_again() {
        let mut l = log(vec![
            event(0, Waiting, "w"),
            event(
                60,
                PxeBooting,
                "[unexpectedly received in state waiting]: dhcp",
            ),
        ]);
        l.last_error_event = Some(event(
            60,
            PxeBooting,
            "[unexpectedly received in state waiting]: dhcp",
        ));
        assert!(replay(&l, &rules(V0422)).last_error_only.is_none());
    }

    #[test]
    fn last_error_outside_the_log_is_judged_in_its_recorded_state() {
        let mut l = log(vec![event(100, Waiting, "w")]);
        l.last_error_event = Some(event(
            50,
            Installing,
            "[unexpectedly received in state registering]: inst",
        ));
        let step = replay(&l, &rules(V0190)).last_error_only.unwrap();
        assert_eq!(
            (step.from, step.handling),
            (State::Registering, Handling::Unexpected)
        );
        let step = replay(&l, &rules(V0193)).last_error_only.unwrap();
        assert_eq!(step.handling, Handling::Expected);
    }

    #[test]
    fn last_error_outside_the_log_without_verdict_is_still_counted() {
        let mut l = log(vec![event(100, PxeBooting, "dhcp")]);
        l.last_error_event = Some(event(50, Crashed, "boom"));
        let trace = replay(&l, &rules(V0422));
        let step = trace.last_error_only.unwrap();
        assert_eq!(step.handling, Handling::Expected);
        l.last_error_event = Some(Event::from_recorded(
            at(50),
            EventName::Unknown("Bogus".to_string()),
            "",
            0,
        ));
        let trace = replay(&l, &rules(V0422));
        assert!(trace.last_error_only.is_none());
        assert_eq!(trace.unknown.len(), 1);
    }
}
