//! One test per rule of metal-api's event handling (docs/metal-api.md) and per difference
//! between the built-in rule sets, in the order the doc gives the rules, so that rules and
//! tests read side by side. Times are seconds after a fixed start so the 5-minute boundaries
//! read plainly. How an exported log is read (its oldest row, recorded verdicts, the export's
//! own fields) is tested in `exported.rs`.

mod exported;

use chrono::{DateTime, TimeDelta, Utc};

use super::*;
use crate::event::EventKind::{self, *};
use crate::event::State;
use crate::log::Liveliness;
use crate::rules::Ruleset;

const V0190: &str = "metal-api-v0.19.0";
const V0193: &str = "metal-api-v0.19.3";
const V0422: &str = "metal-api-v0.42.2";

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2025-09-22T10:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
        + TimeDelta::seconds(seconds)
}

fn rules(name: &str) -> Ruleset {
    Ruleset::resolve(name).unwrap()
}

/// Feeds (seconds, event) pairs with the message "m" and returns the steps.
fn feed(replayer: &mut Replayer, events: &[(i64, EventKind)]) -> Vec<Step> {
    events
        .iter()
        .map(|&(s, e)| replayer.step(at(s), e, "m", None, 0))
        .collect()
}

/// Replays a provisioning up to Waiting: PXE Booting, Preparing, Registering, Waiting.
fn to_waiting(replayer: &mut Replayer) {
    feed(
        replayer,
        &[
            (0, PxeBooting),
            (10, Preparing),
            (20, Registering),
            (30, Waiting),
        ],
    );
}

// Rule 1: the state is the home state of the newest stored event.

#[test]
fn state_is_initial_when_nothing_is_stored() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    assert_eq!(replayer.current_state(), State::Initial);
    // An Alive is valid in Initial but never stored: still Initial afterwards.
    let step = replayer.step(at(0), Alive, "", None, 0);
    assert_eq!((step.from, step.to), (State::Initial, State::Initial));
    // Only Initial accepts Waiting straight away; anything stored would have refused it.
    let step = replayer.step(at(1), Waiting, "", None, 0);
    assert_eq!(step.handling, Handling::Expected);
}

#[test]
fn state_follows_the_newest_stored_event_even_an_unexpected_one() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    to_waiting(&mut replayer);
    let step = replayer.step(at(40), Preparing, "again", None, 0);
    assert_eq!(step.handling, Handling::Unexpected);
    assert_eq!(step.from, State::Waiting);
    // The unexpected Preparing is stored, so the machine is now in Preparing.
    assert_eq!(step.to, State::Preparing);
    assert_eq!(replayer.container().state(), State::Preparing);
}

#[test]
fn crashed_leads_to_crashing() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    let steps = feed(&mut replayer, &[(0, PxeBooting), (10, Crashed)]);
    assert_eq!(steps[1].to, State::Crashing);
}

// Rule 2: transition, self transition, or no rule.

#[test]
fn three_outcomes_of_the_lookup() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    let steps = feed(
        &mut replayer,
        &[(0, PxeBooting), (10, PxeBooting), (20, Waiting)],
    );
    assert_eq!(
        (steps[0].handling, steps[0].to),
        (Handling::Expected, State::PxeBooting)
    );
    assert_eq!(
        (steps[1].handling, steps[1].to),
        (Handling::Expected, State::PxeBooting)
    );
    assert_eq!(steps[2].handling, Handling::Unexpected);
}

// Rule 3: the receiving state decides the effect.

#[test]
fn valid_alive_updates_time_and_is_never_stored() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    let steps = feed(&mut replayer, &[(0, PxeBooting)]);
    replayer.container_mut().liveliness = Liveliness::Unknown;
    let steps = [
        steps[0].clone(),
        replayer.step(at(100), Alive, "m", None, 0),
    ];
    assert_eq!(steps[1].handling, Handling::Expected);
    assert!(!steps[1].stored);
    let c = replayer.container();
    assert_eq!(c.events.len(), 1);
    assert_eq!(c.last_event_time, Some(at(100)));
    assert_eq!(c.liveliness, Liveliness::Alive);
    assert_eq!(c.state(), State::PxeBooting);
}

#[test]
fn crashing_sets_crash_loop_and_last_error_and_stores() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    let steps = feed(&mut replayer, &[(0, Installing), (10, Crashed)]);
    assert!(steps[1].stored);
    let c = replayer.container();
    assert!(c.crash_loop);
    let last_error = c.last_error_event.as_ref().unwrap();
    assert_eq!((last_error.event, last_error.time), (Crashed, at(10)));
    assert_eq!(last_error.message.as_ref(), "m");
}

#[test]
fn repeated_pxe_booting_is_swallowed_but_updates_time() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    let steps = feed(&mut replayer, &[(0, PxeBooting), (50, PxeBooting)]);
    assert!(steps[0].stored);
    assert!(!steps[1].stored);
    assert_eq!(steps[1].handling, Handling::Expected);
    let c = replayer.container();
    assert_eq!(c.events.len(), 1);
    assert_eq!(c.last_event_time, Some(at(50)));
}

#[test]
fn pxe_booting_and_preparing_clear_failed_reclaim() {
    let r = rules(V0422);
    for event in [PxeBooting, Preparing] {
        let mut replayer = Replayer::new(&r);
        feed(&mut replayer, &[(0, MachineReclaim), (400, PhonedHome)]);
        assert!(replayer.container().failed_machine_reclaim);
        let step = replayer.step(at(500), event, "m", None, 0);
        assert!(step.stored);
        assert!(!replayer.container().failed_machine_reclaim, "{event}");
    }
}

#[test]
fn registering_to_booting_new_kernel_just_store() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    let steps = feed(
        &mut replayer,
        &[
            (0, PxeBooting),
            (10, Preparing),
            (20, Registering),
            (30, Waiting),
            (40, Installing),
            (50, BootingNewKernel),
        ],
    );
    assert!(
        steps
            .iter()
            .all(|s| s.stored && s.handling == Handling::Expected)
    );
    let c = replayer.container();
    assert_eq!(c.events.len(), 6);
    assert_eq!(c.events[0].event, BootingNewKernel);
    assert!(!c.crash_loop && !c.failed_machine_reclaim);
}

#[test]
fn repeated_phoned_home_is_swallowed() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    let steps = feed(
        &mut replayer,
        &[(0, BootingNewKernel), (10, PhonedHome), (3600, PhonedHome)],
    );
    assert!(steps[1].stored);
    assert!(!steps[2].stored);
    assert_eq!(replayer.container().events.len(), 2);
    assert_eq!(replayer.container().last_event_time, Some(at(3600)));
}

#[test]
fn phoned_home_from_booting_new_kernel_clears_crash_loop() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, Installing), (10, Crashed)]);
    assert!(replayer.container().crash_loop);
    // Crashing has no rule for Booting New Kernel: a fresh install leads there.
    feed(
        &mut replayer,
        &[
            (20, PxeBooting),
            (30, Preparing),
            (40, Registering),
            (50, Waiting),
        ],
    );
    feed(&mut replayer, &[(60, Installing), (70, BootingNewKernel)]);
    assert!(
        replayer.container().crash_loop,
        "still set before Phoned Home"
    );
    let step = replayer.step(at(80), PhonedHome, "m", None, 0);
    assert!(step.stored);
    assert!(!replayer.container().crash_loop);
}

#[test]
fn phoned_home_in_machine_reclaim_flags_failed_reclaim_after_more_than_five_minutes() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, MachineReclaim)]);
    let step = replayer.step(at(301), PhonedHome, "m", None, 0);
    assert_eq!(step.handling, Handling::Expected);
    assert!(!step.stored);
    let c = replayer.container();
    assert!(c.failed_machine_reclaim);
    assert_eq!(c.last_event_time, Some(at(301)));
    assert_eq!(c.state(), State::MachineReclaim);
}

#[test]
fn phoned_home_in_machine_reclaim_within_five_minutes_changes_nothing() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, MachineReclaim)]);
    let before = replayer.container().clone();
    // Exactly five minutes is not more than five minutes.
    let step = replayer.step(at(300), PhonedHome, "m", None, 0);
    assert!(!step.stored);
    assert_eq!(replayer.container(), &before);
}

#[test]
fn planned_reboot_and_machine_reclaim_clear_crash_loop_and_store_even_when_repeated() {
    let r = rules(V0422);
    for event in [PlannedReboot, MachineReclaim] {
        let mut replayer = Replayer::new(&r);
        feed(&mut replayer, &[(0, Installing), (10, Crashed)]);
        let first = replayer.step(at(20), event, "m", None, 0);
        assert!(first.stored);
        assert!(!replayer.container().crash_loop, "{event}");
        // The repeat is a self transition: it is stored and clears the flag again.
        replayer.container_mut().crash_loop = true;
        let repeat = replayer.step(at(30), event, "m", None, 0);
        assert_eq!(repeat.handling, Handling::Expected);
        assert!(repeat.stored, "{event}");
        assert!(!replayer.container().crash_loop, "{event}");
        assert_eq!(replayer.container().events.len(), 4);
    }
}

#[test]
fn phoned_home_in_planned_reboot_is_stored_and_moves_to_phoned_home() {
    let r = rules(V0190);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, PhonedHome), (20, PlannedReboot)]);
    let step = replayer.step(at(30), PhonedHome, "m", None, 0);
    assert_eq!(step.handling, Handling::Expected);
    assert!(step.stored);
    assert_eq!(step.to, State::PhonedHome);
}

#[test]
fn phoned_home_received_by_planned_reboot_resets_a_set_crash_loop() {
    // Planned Reboot's own event clears crash_loop too, so build the state by hand: a
    // container whose newest event is Planned Reboot but with crash_loop still set.
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, PlannedReboot)]);
    replayer.container_mut().crash_loop = true;
    let step = replayer.step(at(10), PhonedHome, "m", None, 0);
    assert!(step.stored);
    assert!(!replayer.container().crash_loop);
}

// Buffered phoned home (v0.42.2 only).

#[test]
fn buffered_phoned_home_within_five_minutes_is_swallowed_entirely() {
    let r = rules(V0422);
    for (state_event, state) in [
        (PxeBooting, State::PxeBooting),
        (Preparing, State::Preparing),
        (Registering, State::Registering),
        (Waiting, State::Waiting),
    ] {
        let mut replayer = Replayer::new(&r);
        feed(&mut replayer, &[(0, state_event)]);
        let before = replayer.container().clone();
        let step = replayer.step(at(299), PhonedHome, "m", None, 0);
        assert_eq!(step.handling, Handling::Expected, "{state}");
        assert!(!step.stored);
        assert_eq!(step.to, state);
        // Not even the time moves.
        assert_eq!(replayer.container(), &before, "{state}");
    }
}

#[test]
fn late_phoned_home_in_waiting_is_stored_and_keeps_crash_loop() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    to_waiting(&mut replayer);
    // An unexpected PXE Booting in Waiting sets crash_loop; then back to Waiting.
    feed(
        &mut replayer,
        &[
            (40, PxeBooting),
            (50, Preparing),
            (60, Registering),
            (70, Waiting),
        ],
    );
    assert!(replayer.container().crash_loop);
    // Exactly five minutes after the last event is not within the window.
    let step = replayer.step(at(370), PhonedHome, "m", None, 0);
    assert_eq!(step.handling, Handling::Expected);
    assert!(step.stored);
    assert_eq!(step.to, State::PhonedHome);
    assert!(
        replayer.container().crash_loop,
        "Waiting's handler leaves crash_loop set"
    );
}

#[test]
fn late_phoned_home_in_preparing_clears_failed_reclaim() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(
        &mut replayer,
        &[(0, MachineReclaim), (400, PhonedHome), (500, Preparing)],
    );
    replayer.container_mut().failed_machine_reclaim = true;
    let step = replayer.step(at(1000), PhonedHome, "m", None, 0);
    assert!(step.stored);
    assert!(!replayer.container().failed_machine_reclaim);
}

#[test]
fn late_phoned_home_in_pxe_booting_only_updates_time() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, PxeBooting)]);
    let step = replayer.step(at(600), PhonedHome, "m", None, 0);
    assert_eq!(step.handling, Handling::Expected);
    assert!(!step.stored);
    assert_eq!(step.to, State::PxeBooting);
    assert_eq!(replayer.container().last_event_time, Some(at(600)));
}

#[test]
fn phoned_home_in_waiting_is_unexpected_before_v0_42_2() {
    for name in [V0190, V0193] {
        let r = rules(name);
        let mut replayer = Replayer::new(&r);
        to_waiting(&mut replayer);
        let step = replayer.step(at(40), PhonedHome, "phoned home", None, 0);
        assert_eq!(step.handling, Handling::Unexpected, "{name}");
        assert!(step.stored);
        assert_eq!(
            replayer.container().events[0].message.as_ref(),
            "[unexpectedly received in state waiting]: phoned home"
        );
    }
}

// Rule 4: unexpected events.

#[test]
fn unexpected_message_and_last_error() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    to_waiting(&mut replayer);
    let step = replayer.step(
        at(40),
        PxeBooting,
        "machine sent extended dhcp request",
        None,
        0,
    );
    assert_eq!(step.handling, Handling::Unexpected);
    let c = replayer.container();
    let expected = "[unexpectedly received in state waiting]: machine sent extended dhcp request";
    assert_eq!(c.events[0].message.as_ref(), expected);
    assert_eq!(
        c.last_error_event.as_ref().unwrap().message.as_ref(),
        expected
    );
    assert_eq!(c.last_event_time, Some(at(40)));
    assert!(c.crash_loop);
}

#[test]
fn unexpected_message_without_original_has_no_separator() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, PxeBooting)]);
    replayer.step(at(10), Waiting, "", None, 0);
    assert_eq!(
        replayer.container().events[0].message.as_ref(),
        "[unexpectedly received in state pxe booting]"
    );
}

#[test]
fn unexpected_preparing_sets_crash_loop() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, PxeBooting), (10, Preparing)]);
    let step = replayer.step(at(20), Preparing, "m", None, 0);
    assert_eq!(step.handling, Handling::Unexpected);
    assert!(replayer.container().crash_loop);
}

#[test]
fn unexpected_crashed_does_not_set_crash_loop() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, BootingNewKernel), (10, PhonedHome)]);
    let step = replayer.step(at(20), Crashed, "boom", None, 0);
    assert_eq!(step.handling, Handling::Unexpected);
    assert!(step.stored);
    let c = replayer.container();
    assert!(!c.crash_loop);
    assert_eq!(c.state(), State::Crashing);
    assert_eq!(
        c.last_error_event.as_ref().unwrap().message.as_ref(),
        "[unexpectedly received in state phoned home]: boom"
    );
}

#[test]
fn unexpected_alive_is_never_stored_but_is_the_last_error() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(0, BootingNewKernel), (10, PhonedHome)]);
    let step = replayer.step(at(20), Alive, "", None, 0);
    assert_eq!(step.handling, Handling::Unexpected);
    assert!(!step.stored);
    let c = replayer.container();
    assert_eq!(c.events.len(), 2);
    assert_eq!(c.last_event_time, Some(at(20)));
    assert_eq!(c.last_error_event.as_ref().unwrap().event, Alive);
    assert_eq!(c.state(), State::PhonedHome);
}

// Rule 5: stored events and time updates set last_event_time and liveliness.

#[test]
fn stored_event_sets_time_and_liveliness() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    assert_eq!(replayer.container().liveliness, Liveliness::Unknown);
    feed(&mut replayer, &[(7, PxeBooting)]);
    assert_eq!(replayer.container().liveliness, Liveliness::Alive);
    assert_eq!(replayer.container().last_event_time, Some(at(7)));
}

// Rule 6: the chronology guard.

#[test]
fn older_stored_event_is_rejected_and_container_kept() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(100, PxeBooting)]);
    let before = replayer.container().clone();
    let step = replayer.step(at(50), Preparing, "m", None, 0);
    assert_eq!(step.handling, Handling::Rejected);
    assert!(!step.stored);
    assert_eq!(step.to, State::PxeBooting);
    assert_eq!(replayer.container(), &before);
}

#[test]
fn older_time_update_is_rejected() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(100, PxeBooting)]);
    let step = replayer.step(at(50), Alive, "", None, 0);
    assert_eq!(step.handling, Handling::Rejected);
    assert_eq!(replayer.container().last_event_time, Some(at(100)));
}

#[test]
fn equal_times_are_in_order() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    let steps = feed(&mut replayer, &[(100, PxeBooting), (100, Preparing)]);
    assert_eq!(steps[1].handling, Handling::Expected);
    assert_eq!(replayer.container().events.len(), 2);
}

#[test]
fn unexpected_event_may_move_time_backwards_but_not_before_the_newest_stored() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(
        &mut replayer,
        &[(0, BootingNewKernel), (100, PhonedHome), (900, PhonedHome)],
    );
    assert_eq!(replayer.container().last_event_time, Some(at(900)));
    // An unexpected Alive at 200: behind last_event_time, not behind the newest stored (100).
    let step = replayer.step(at(200), Alive, "", None, 0);
    assert_eq!(step.handling, Handling::Unexpected);
    assert_eq!(replayer.container().last_event_time, Some(at(200)));
    // At 50 it would be behind the newest stored event: refused.
    let step = replayer.step(at(50), Alive, "", None, 0);
    assert_eq!(step.handling, Handling::Rejected);
    assert_eq!(replayer.container().last_event_time, Some(at(200)));
}

#[test]
fn swallowed_buffered_phoned_home_needs_no_guard() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    feed(&mut replayer, &[(100, Waiting)]);
    // Earlier than the newest stored event, but swallowed: nothing changes, nothing refused.
    let step = replayer.step(at(90), PhonedHome, "m", None, 0);
    assert_eq!(step.handling, Handling::Expected);
}

// Rule 7: the newest 100 events are kept.

#[test]
fn keeps_only_the_newest_hundred_events() {
    let r = rules(V0422);
    let mut replayer = Replayer::new(&r);
    for i in 0..150 {
        replayer.step(at(i), PlannedReboot, format!("{i}"), None, 0);
    }
    let c = replayer.container();
    assert_eq!(c.events.len(), 100);
    assert_eq!(c.events[0].message.as_ref(), "149");
    assert_eq!(c.events[99].message.as_ref(), "50");
}
