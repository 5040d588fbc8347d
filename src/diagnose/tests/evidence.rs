//! What a class is named on, checked against what metal-api's code leaves in a container: the
//! firmware only where a Phoned Home shows the disk, a lost Booting New Kernel on a machine
//! that keeps phoning home, the newer release's swallow by each occurrence's timing, and
//! metal-hammer's autoreboot with the firmware's POST after it.

use super::*;
use crate::diagnose::history::{Newer, handled_by, newer_than};
use crate::diagnose::ruling::{Reason, ruling};

const V0193: &str = "metal-api-v0.19.3";
const V0422: &str = "metal-api-v0.42.2";

#[test]
fn a_dhcp_retry_loop_leaves_the_container_the_disk_leaves_so_no_component_is_named() {
    // v0.42.2: after Phoned Home the machine boots from the network (stored, unexpected);
    // then either it comes back from its disk and phones home, or its firmware keeps asking
    // for DHCP. PXEBootingState stores neither the Phoned Home (later than five minutes it
    // only moves the time) nor the repeated PXE Booting ("swallow repeated pxe booting
    // events"): the two exports are the same.
    let disk = with(&[(9000, PxeBooting), (9120, PhonedHome), (9400, PhonedHome)]);
    let retries = with(&[(9000, PxeBooting), (9120, PxeBooting), (9400, PxeBooting)]);
    let (disk_log, retry_log) = (exported(V0422, &disk), exported(V0422, &retries));
    assert_eq!(disk_log.events, retry_log.events);
    assert_eq!(
        disk_log.recorded.last_event_time,
        retry_log.recorded.last_event_time
    );
    assert_eq!(disk_log.recorded.last_event_time, Some(at(9400)));
    let after = Class::UnannouncedReboot(Reboot::AfterPhonedHome);
    for log in [&disk_log, &retry_log] {
        assert_eq!(
            diagnosed(log, V0422),
            vec![(State::PhonedHome, PxeBooting, after, None)]
        );
    }
    // The raw streams tell them apart: the Phoned Home itself is the evidence.
    assert_eq!(
        diagnosed(&streamed(&disk), V0422)[0].2,
        Class::UnannouncedReboot(Reboot::Firmware)
    );
    assert_eq!(diagnosed(&streamed(&retries), V0422)[0].2, after);
    // Each verdict prints what it was named on, or why nothing names a cause.
    let reasons = |reboot| {
        ruling(
            Class::UnannouncedReboot(reboot),
            State::PhonedHome,
            PxeBooting,
        )
        .reasons()
        .collect::<Vec<_>>()
    };
    assert_eq!(reasons(Reboot::Firmware), [Reason::BackOnDisk]);
    assert_eq!(reasons(Reboot::AfterPhonedHome), [Reason::NothingAfter]);
    let v = verdict(
        (State::PhonedHome, PxeBooting),
        &classes(&[(after, 3, 3)]),
        3,
        &VerdictContext::new(2),
    );
    assert_eq!((v.component, v.precedent), (None, None));
    assert!(
        v.evidence.contains(&Basis::NothingAfter),
        "{:?}",
        v.evidence
    );
    // Reboots of several kinds name no cause, and say nothing about what follows one.
    let v = verdict(
        (State::PhonedHome, PxeBooting),
        &classes(&[
            (Class::UnannouncedReboot(Reboot::Firmware), 2, 2),
            (Class::UnannouncedReboot(Reboot::Reinstall), 2, 2),
        ]),
        4,
        &VerdictContext::new(2),
    );
    assert_eq!(v.component, None);
    assert!(
        !v.evidence
            .iter()
            .any(|b| matches!(b, Basis::NothingAfter | Basis::BackOnDisk)),
        "{:?}",
        v.evidence
    );
}

/// A machine provisioned up to Installing whose Booting New Kernel never arrived: its
/// installed OS phones home at 900 s, and then each minute up to `until`.
fn without_kexec(until: i64) -> Vec<(i64, EventKind)> {
    let mut sent = vec![
        (0, PxeBooting),
        (60, Preparing),
        (120, Registering),
        (180, Waiting),
        (600, Installing),
    ];
    sent.extend((900..=until).step_by(60).map(|t| (t, PhonedHome)));
    sent
}

#[test]
fn a_lost_booting_new_kernel_is_classified_on_a_machine_that_keeps_phoning_home() {
    // PhonedHomeState stores none of the later Phoned Home events, so no stored step follows
    // the one in Installing; the raw stream holds them, the export the last event time they
    // moved.
    let lost = Class::LostEvent(State::BootingNewKernel);
    let sent = without_kexec(1500);
    for rules in [V0193, V0422] {
        let log = exported(rules, &sent);
        assert_eq!(log.events.len(), 6, "one Phoned Home stored");
        assert_eq!(log.recorded.last_event_time, Some(at(1500)));
        for log in [log, streamed(&sent)] {
            assert_eq!(
                diagnosed(&log, rules),
                vec![(State::Installing, PhonedHome, lost, None)],
                "{rules} {:?}",
                log.format
            );
        }
    }
    let v = verdict(
        (State::Installing, PhonedHome),
        &classes(&[(lost, 2, 2)]),
        2,
        &VerdictContext::new(2),
    );
    assert_eq!(
        (v.kind, v.action, v.component),
        (
            Kind::LostEvent,
            Action::Investigate,
            Some(Component::MetalHammer)
        )
    );
    // One Phoned Home and nothing after it: nothing shows that the machine carried on.
    let once = without_kexec(900);
    for log in [exported(V0422, &once), streamed(&once)] {
        assert_eq!(diagnosed(&log, V0422)[0].2, Class::Unclassified);
    }
}

#[test]
fn booting_new_kernel_is_not_lost_where_it_came_or_an_alive_moved_the_time() {
    let lost = Class::LostEvent(State::BootingNewKernel);
    // Two early Phoned Home events in Installing, then Booting New Kernel a minute later:
    // it came.
    let mut sent = without_kexec(960);
    sent.extend([(1020, BootingNewKernel), (1080, PhonedHome)]);
    for rules in [V0193, V0422] {
        let got = diagnosed(&streamed(&sent), rules);
        assert_eq!((got[0].0, got[0].1), (State::Installing, PhonedHome));
        assert_ne!(got[0].2, lost, "{rules}: {got:?}");
    }
    // An export whose last event time is an unexpected Alive's (metal-api's InvalidEventError
    // path moves it for Alive too, and keeps the Alive as the last error): metal-hammer was
    // running after the Phoned Home, nothing shows the machine kept phoning home.
    let mut sent = without_kexec(900);
    sent.push((960, Alive));
    let mut log = exported(V0422, &sent);
    assert_eq!(log.recorded.last_event_time, Some(at(960)));
    let alive = "[unexpectedly received in state phoned home]: hammer alive";
    log.last_error_event = Some(Event::from_recorded(
        at(960),
        EventName::Known(Alive),
        alive,
        0,
    ));
    assert_eq!(diagnosed(&log, V0422)[0].2, Class::Unclassified);
    // The same export with Phoned Home events after it instead: lost.
    let log = exported(V0422, &without_kexec(960));
    assert_eq!(diagnosed(&log, V0422)[0].2, lost);
}

#[test]
fn a_buffered_phoned_home_or_one_metal_hammer_follows_does_not_name_the_firmware() {
    // After Phoned Home, a network boot, metal-core's buffered Phoned Home from before it 30 s
    // later (v0.42.2 swallows it), and metal-hammer runs: a reinstall, not the disk.
    let buffered = with(&[
        (9000, PxeBooting),
        (9030, PhonedHome),
        (9060, Preparing),
        (9070, Registering),
    ]);
    let reinstall = Class::UnannouncedReboot(Reboot::Reinstall);
    assert_eq!(diagnosed(&streamed(&buffered), V0422)[0].2, reinstall);
    assert_eq!(diagnosed(&streamed(&buffered), V0193)[0].2, reinstall);
    let v0193 = exported(V0193, &buffered);
    assert_eq!(diagnosed(&v0193, V0193)[0].2, reinstall);
    // One later than five minutes, but metal-hammer's events after it: nothing tells which.
    let followed = with(&[
        (9000, PxeBooting),
        (9400, PhonedHome),
        (9460, Preparing),
        (9470, Registering),
    ]);
    let after = Class::UnannouncedReboot(Reboot::AfterPhonedHome);
    assert_eq!(diagnosed(&streamed(&followed), V0422)[0].2, after);
    let mut ticking = followed.clone();
    ticking[LIFE.len() + 2] = (9460, Alive);
    ticking.pop();
    assert_eq!(diagnosed(&streamed(&ticking), V0422)[0].2, after);
    // The disk: five minutes or more after the last event, nothing of metal-hammer's after.
    let disk = with(&[(9000, PxeBooting), (9300, PhonedHome), (9360, PhonedHome)]);
    let firmware = Class::UnannouncedReboot(Reboot::Firmware);
    assert_eq!(diagnosed(&streamed(&disk), V0422)[0].2, firmware);
    assert_eq!(diagnosed(&exported(V0193, &disk), V0193)[0].2, firmware);
    // v0.19.3 stores the first Phoned Home, within the window, and takes the later ones in
    // unstored: the raw stream shows the disk, the export only a buffered one.
    let kept = with(&[
        (9000, PxeBooting),
        (9100, PhonedHome),
        (9200, PhonedHome),
        (9700, PhonedHome),
    ]);
    assert_eq!(diagnosed(&streamed(&kept), V0193)[0].2, firmware);
    assert_eq!(diagnosed(&exported(V0193, &kept), V0193)[0].2, after);
}

#[test]
fn a_newer_release_swallows_an_occurrence_only_where_its_own_replay_does() {
    // v0.19.3 stores the first Phoned Home in Waiting and takes later ones in as Phoned Home.
    // v0.42.2 swallows one less than five minutes after the last event time as it holds it:
    // a swallowed Phoned Home does not move that time (swallowBufferedPhonedHome returns
    // first), an Alive in Waiting does (AliveState). What it stores a `self` rule keeps, and
    // the machine is in Phoned Home as under v0.19.3.
    let rules = Ruleset::resolve(V0193).unwrap();
    let newer = newer_than(V0193);
    let stored = |then_unexpected| Newer::Stored { then_unexpected };
    // What came after Waiting (seconds after it), the next event, and v0.42.2's fate.
    type Case<'a> = (&'a [(i64, EventKind)], EventKind, Newer);
    let cases: [Case; 6] = [
        (&[(240, PhonedHome)], Installing, Newer::Swallowed),
        (&[(360, PhonedHome)], Installing, stored(true)),
        // Exactly five minutes: the comparison is strict.
        (&[(300, PhonedHome)], Installing, stored(true)),
        // 4 and 8 minutes after Waiting: v0.42.2 swallows the first and stores the second.
        (
            &[(240, PhonedHome), (480, PhonedHome)],
            Installing,
            stored(true),
        ),
        // metal-hammer's Alive moved the time: 8 minutes after Waiting is 4 after it.
        (
            &[(240, Alive), (480, PhonedHome)],
            Installing,
            Newer::Swallowed,
        ),
        // Stored, and a Planned Reboot after it: nothing is unexpected.
        (&[(300, PhonedHome)], PlannedReboot, stored(false)),
    ];
    for (after, next, fate) in cases {
        let mut sent = with(&[
            (5000, MachineReclaim),
            (5100, PxeBooting),
            (5160, Preparing),
            (5220, Registering),
            (5250, Waiting),
        ]);
        sent.extend(after.iter().map(|&(t, e)| (5250 + t, e)));
        sent.push((5250 + after.last().unwrap().0 + 60, next));
        let log = streamed(&sent);
        let trace = replay(&log, &rules);
        let d = Diagnosis::of(&log, &trace, &rules);
        let pair = (State::Waiting, PhonedHome);
        let (i, _) = trace
            .steps
            .iter()
            .enumerate()
            .find(|(_, s)| (s.from, s.event) == pair)
            .unwrap();
        assert_eq!(d.newer(i), Some(fate), "{after:?} {next}");
        let mut counted = Classes::default();
        counted.add_newer(d.newer(i));
        let by = handled_by(pair, &newer, counted.under_newer, 1);
        let swallowed = fate == Newer::Swallowed;
        assert_eq!(by.is_some(), swallowed, "{after:?}: {by:?}");
        // What v0.42.2 reports of the same stream.
        let under_newest = diagnosed(&log, V0422);
        let unexpected = under_newest
            .iter()
            .any(|d| (d.0, d.1) == (State::PhonedHome, next));
        assert_eq!(
            unexpected,
            fate == stored(true),
            "{after:?}: {under_newest:?}"
        );
    }
}

#[test]
fn the_autoreboot_window_leaves_room_for_the_reboot_and_the_post() {
    // Preparing at 60 s; metal-hammer reboots at the latest 48 h 10 s later, and the
    // firmware's POST comes before the DHCP request metal-api records (76 s in
    // metal-api#464's log).
    let rules = Ruleset::resolve(V0422).unwrap();
    let latest = 60 + 48 * 3600 + 10;
    for (after, inside) in [
        (60 + 24 * 3600 - 1, false),
        (60 + 24 * 3600, true),
        (latest + 76, true),
        (latest + 300, true),
        (latest + 301, false),
    ] {
        let sent = [
            (0, PxeBooting),
            (60, Preparing),
            (120, Registering),
            (150, Waiting),
            (after, PxeBooting),
        ];
        let trace = replay(&exported(V0422, &sent), &rules);
        let at_reboot = trace.steps.len() - 1;
        assert_eq!(
            in_autoreboot_window(&trace.steps, at_reboot),
            Some(inside),
            "{after}s"
        );
    }
}
