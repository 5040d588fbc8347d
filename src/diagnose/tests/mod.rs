//! Every class and each edge on hand-made machines: what the machine sent goes through
//! metal-api's FSM under a rule set, and what metal-api stored is the export diagnosed.

mod evidence;

use chrono::{DateTime, TimeDelta, Utc};

use super::*;
use crate::event::{Event, EventKind, EventKind::*, EventName, Pair, State};
use crate::log::{Format, MachineLog};
use crate::replay::{Replayer, Trace, replay};

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2025-01-01T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
        + TimeDelta::seconds(seconds)
}

/// What metal-api stores of what a machine sent (seconds, event), as an export taken right
/// after the last of them holds it: stored events with their recorded verdicts, oldest
/// first, the container's last event time, and the machine alive.
fn exported(rules: &str, sent: &[(i64, EventKind)]) -> MachineLog {
    let rules = Ruleset::resolve(rules).unwrap();
    let mut replayer = Replayer::new(&rules);
    for &(t, event) in sent {
        replayer.step(at(t), event, "", None, 0);
    }
    let mut log = MachineLog::new("m".to_string(), "m.json", 1, Format::LogsJson);
    let container = replayer.finish();
    log.events = container
        .events
        .iter()
        .rev()
        .map(|e| Event::from_recorded(e.time, EventName::Known(e.event), &e.message, 0))
        .collect();
    log.recorded.last_event_time = container.last_event_time;
    log.recorded.liveliness = Some("Alive".into());
    log
}

/// The same log as a raw stream: every event sent, no recorded verdicts.
fn streamed(sent: &[(i64, EventKind)]) -> MachineLog {
    let mut log = MachineLog::new("m".to_string(), "m.ndjson", 1, Format::Ndjson);
    log.annotated = false;
    log.events = sent
        .iter()
        .map(|&(t, e)| Event::from_recorded(at(t), EventName::Known(e), "", 0))
        .collect();
    log
}

/// One diagnosed unexpected step: (state, event, class, root).
type Diagnosed = (State, EventKind, Class, Option<Pair>);

/// Each unexpected step of the log replayed under `rules`.
fn diagnosed(log: &MachineLog, rules: &str) -> Vec<Diagnosed> {
    let rules = Ruleset::resolve(rules).unwrap();
    let trace: Trace = replay(log, &rules);
    let d = Diagnosis::of(log, &trace, &rules);
    trace
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((s.from, s.event, d.class(i)?, d.root(i))))
        .collect()
}

/// A machine's first life: provisioned and phoned home.
const LIFE: [(i64, EventKind); 7] = [
    (0, PxeBooting),
    (60, Preparing),
    (120, Registering),
    (150, Waiting),
    (1000, Installing),
    (1200, BootingNewKernel),
    (1300, PhonedHome),
];

fn with(more: &[(i64, EventKind)]) -> Vec<(i64, EventKind)> {
    LIFE.iter().chain(more).copied().collect()
}

#[test]
fn a_late_phoned_home_is_delayed_and_what_it_caused_are_its_cascades() {
    // Reclaimed, booted again; metal-core's buffered Phoned Home arrives a minute after
    // Preparing (v0.19.3 stores it): Registering is then unexpected too.
    let sent = with(&[
        (5000, MachineReclaim),
        (5100, PxeBooting),
        (5160, Preparing),
        (5220, PhonedHome),
        (5280, Registering),
        (5300, Waiting),
    ]);
    let got = diagnosed(&exported("metal-api-v0.19.3", &sent), "metal-api-v0.19.3");
    assert_eq!(
        got,
        vec![
            (State::Preparing, PhonedHome, Class::Delayed, None),
            (
                State::PhonedHome,
                Registering,
                Class::Cascade,
                Some((State::Preparing, PhonedHome))
            ),
        ]
    );
}

#[test]
fn the_five_minute_boundary_is_strict() {
    for (gap, delayed) in [(299, true), (300, false)] {
        let sent = with(&[
            (5000, MachineReclaim),
            (5100, PxeBooting),
            (5160, Preparing),
            (5160 + gap, PhonedHome),
            (5160 + gap + 60, Registering),
        ]);
        let got = diagnosed(&exported("metal-api-v0.19.3", &sent), "metal-api-v0.19.3");
        let class = got[0].2;
        assert_eq!(class == Class::Delayed, delayed, "gap {gap}s: {got:?}");
    }
    // A skipped stage has no time limit: metal-hammer installs right after registering on
    // a reinstall however long registering took (the five minutes are the buffering's).
    for gap in [299, 300, 3600] {
        let mut sent = installed_then_reinstalled();
        let last = sent.last().unwrap().0;
        sent.push((last + gap, Installing));
        sent.push((last + gap + 100, BootingNewKernel));
        let got = diagnosed(&exported("metal-api-v0.19.0", &sent), "metal-api-v0.19.0");
        let skip = got.iter().find(|d| d.0 == State::Registering);
        assert_eq!(
            skip.map(|d| d.2),
            Some(Class::SkippedStage),
            "gap {gap}s: {got:?}"
        );
    }
}

/// A machine installed and phoned home, then booted again for a reinstall up to Registering
/// (what metal-hammer sends before it installs without Waiting).
fn installed_then_reinstalled() -> Vec<(i64, EventKind)> {
    vec![
        (0, PxeBooting),
        (60, Preparing),
        (120, Registering),
        (180, Waiting),
        (600, Installing),
        (800, BootingNewKernel),
        (900, PhonedHome),
        (90_000, PxeBooting),
        (90_060, Preparing),
        (90_120, Registering),
    ]
}

#[test]
fn skipping_waiting_on_a_reinstall_is_a_skipped_stage() {
    let mut sent = installed_then_reinstalled();
    sent.extend([
        (90_140, Installing),
        (90_300, BootingNewKernel),
        (90_400, PhonedHome),
    ]);
    // The reboot into the reinstall is unexpected in Phoned Home too (a reinstall without an
    // event); the skip is the Registering pair.
    let got = diagnosed(&exported("metal-api-v0.19.0", &sent), "metal-api-v0.19.0");
    assert_eq!(
        got,
        vec![
            (
                State::PhonedHome,
                PxeBooting,
                Class::UnannouncedReboot(Reboot::Reinstall),
                None
            ),
            (State::Registering, Installing, Class::SkippedStage, None)
        ]
    );
    // A skip the machine does not go on from is no skipped stage.
    let got = diagnosed(
        &exported("metal-api-v0.19.0", &sent[..11]),
        "metal-api-v0.19.0",
    );
    assert_eq!(got.last().unwrap().2, Class::Unclassified);
    // Without a sign of a reinstall (no Phoned Home before, or a Machine Reclaim since, which
    // frees the allocation) Waiting skipped is of no class: metal-hammer skips it only on a
    // reinstall.
    let fresh = [
        (0, PxeBooting),
        (60, Preparing),
        (120, Registering),
        (140, Installing),
        (300, BootingNewKernel),
        (400, PhonedHome),
    ];
    let got = diagnosed(&exported("metal-api-v0.19.0", &fresh), "metal-api-v0.19.0");
    assert_eq!(got[0].2, Class::Unclassified, "{got:?}");
    let mut reclaimed = installed_then_reinstalled();
    reclaimed.insert(7, (80_000, MachineReclaim));
    reclaimed.extend([(90_140, Installing), (90_300, BootingNewKernel)]);
    let got = diagnosed(
        &exported("metal-api-v0.19.0", &reclaimed),
        "metal-api-v0.19.0",
    );
    let skip = got.iter().find(|d| d.0 == State::Registering).unwrap();
    assert_eq!(skip.2, Class::Unclassified, "{got:?}");
}

#[test]
fn any_other_stage_skipped_is_a_lost_event_of_its_sender() {
    let start = [
        (0, PxeBooting),
        (60, Preparing),
        (120, Registering),
        (180, Waiting),
    ];
    // Booting New Kernel never came: Phoned Home in Installing, then the machine goes on.
    let mut no_kexec = start.to_vec();
    no_kexec.extend([
        (600, Installing),
        (900, PhonedHome),
        (90_000, PlannedReboot),
    ]);
    // Installing never came: Booting New Kernel in Waiting, then Phoned Home.
    let mut no_install = start.to_vec();
    no_install.extend([(600, BootingNewKernel), (700, PhonedHome)]);
    // Registering never came: Waiting in Preparing, then Installing.
    let no_register = [
        (0, PxeBooting),
        (60, Preparing),
        (180, Waiting),
        (600, Installing),
        (700, BootingNewKernel),
    ];
    for (sent, state, event, skipped) in [
        (
            &no_kexec[..],
            State::Installing,
            PhonedHome,
            State::BootingNewKernel,
        ),
        (
            &no_install[..],
            State::Waiting,
            BootingNewKernel,
            State::Installing,
        ),
        (
            &no_register[..],
            State::Preparing,
            Waiting,
            State::Registering,
        ),
    ] {
        let got = diagnosed(&exported("metal-api-v0.42.2", sent), "metal-api-v0.42.2");
        assert_eq!(
            got,
            vec![(state, event, Class::LostEvent(skipped), None)],
            "{sent:?}"
        );
        let v = verdict(
            (state, event),
            &classes(&[(Class::LostEvent(skipped), 4, 2)]),
            2,
            &VerdictContext::new(2),
        );
        assert_eq!(
            (v.kind, v.action, v.component, v.precedent),
            (
                Kind::LostEvent,
                Action::Investigate,
                Some(Component::MetalHammer),
                None
            ),
            "{state}/{event}"
        );
    }
}

#[test]
fn boots_again_before_waiting_are_a_crash_loop() {
    let sent = [
        (0, PxeBooting),
        (60, Preparing),
        (150, Preparing),
        (240, Preparing),
    ];
    let got = diagnosed(&exported("metal-api", &sent), "metal-api");
    assert_eq!(got.len(), 2);
    assert!(
        got.iter().all(|g| g.2 == Class::CrashLoop && g.3.is_none()),
        "{got:?}"
    );
}

#[test]
fn unannounced_reboots_are_named_by_where_they_came_and_what_followed() {
    // In Waiting: the Planned Reboot did not arrive.
    let sent = [
        (0, PxeBooting),
        (60, Preparing),
        (120, Registering),
        (150, Waiting),
        (9000, PxeBooting),
        (9060, Preparing),
    ];
    let got = diagnosed(&exported("metal-api", &sent), "metal-api");
    assert_eq!(got[0].2, Class::UnannouncedReboot(Reboot::InWaiting));
    // After Phoned Home, provisioning goes on: a reinstall by metal-api.
    let reinstall = with(&[(9000, PxeBooting), (9060, Preparing), (9120, Registering)]);
    let got = diagnosed(&exported("metal-api", &reinstall), "metal-api");
    assert_eq!(got[0].2, Class::UnannouncedReboot(Reboot::Reinstall));
    let after = Class::UnannouncedReboot(Reboot::AfterPhonedHome);
    // After Phoned Home, the machine comes back from its disk and metal-core phones home
    // each minute: the raw stream holds those Phoned Home events, and what followed is that
    // (the one five minutes or more after the last event: v0.42.2 swallowed the first).
    let firmware = with(&[(9000, PxeBooting), (9120, PhonedHome), (9400, PhonedHome)]);
    let got = diagnosed(&streamed(&firmware), "metal-api");
    assert_eq!(
        got,
        vec![(
            State::PhonedHome,
            PxeBooting,
            Class::UnannouncedReboot(Reboot::Firmware),
            None
        )]
    );
    let nothing_after = with(&[(9000, PxeBooting)]);
    for log in [
        exported("metal-api", &nothing_after),
        streamed(&nothing_after),
    ] {
        assert_eq!(diagnosed(&log, "metal-api")[0].2, after, "{:?}", log.format);
    }
    // Under a rule set that stores a Phoned Home in PXE Booting, the stored one is the
    // evidence; the last event time is none. Not one less than five minutes after the last
    // event: metal-core buffers Phoned Home, so it may be one from before the reboot.
    let got = diagnosed(
        &exported("metal-api-v0.19.3", &firmware),
        "metal-api-v0.19.3",
    );
    assert_eq!(got[0].2, after);
    let late = with(&[(9000, PxeBooting), (9300, PhonedHome), (9400, PhonedHome)]);
    let got = diagnosed(&exported("metal-api-v0.19.3", &late), "metal-api-v0.19.3");
    assert_eq!(got[0].2, Class::UnannouncedReboot(Reboot::Firmware));
    // metal-hammer ran (Installing, Booting New Kernel follow), but its Preparing is not
    // there: not the disk, not a reinstall shown.
    let ran = with(&[
        (9000, PxeBooting),
        (9300, Installing),
        (9500, BootingNewKernel),
    ]);
    for log in [exported("metal-api", &ran), streamed(&ran)] {
        assert_eq!(diagnosed(&log, "metal-api")[0].2, after, "{:?}", log.format);
    }
    // During the installation.
    let sent = [
        (0, PxeBooting),
        (60, Preparing),
        (120, Registering),
        (150, Waiting),
        (900, Installing),
        (1500, PxeBooting),
    ];
    let got = diagnosed(&exported("metal-api", &sent), "metal-api");
    assert_eq!(got[0].2, Class::UnannouncedReboot(Reboot::Installation));
}

#[test]
fn alive_where_no_state_expects_it_is_liveness() {
    let sent = with(&[(5000, PlannedReboot), (5030, Alive)]);
    let log = streamed(&sent);
    let got = diagnosed(&log, "metal-api");
    assert_eq!(
        got,
        vec![(State::PlannedReboot, Alive, Class::Liveness, None)]
    );
}

#[test]
fn a_second_network_boot_hours_later_is_a_root_of_its_own() {
    // v0.19.0: PXE Booting in Phoned Home (a root), the Phoned Home from the disk in PXE
    // Booting (its cascade: in Phoned Home it would have been expected), and hours later the
    // same again: a root of its own, not a cascade of the first one's Phoned Home.
    let sent = with(&[
        (9000, PxeBooting),
        (9400, PhonedHome),
        (40000, PxeBooting),
        (40400, PhonedHome),
    ]);
    let got = diagnosed(&exported("metal-api-v0.19.0", &sent), "metal-api-v0.19.0");
    let roots: Vec<_> = got.iter().map(|g| (g.0, g.1, g.3)).collect();
    assert_eq!(
        roots,
        vec![
            (State::PhonedHome, PxeBooting, None),
            (
                State::PxeBooting,
                PhonedHome,
                Some((State::PhonedHome, PxeBooting))
            ),
            (State::PhonedHome, PxeBooting, None),
            (
                State::PxeBooting,
                PhonedHome,
                Some((State::PhonedHome, PxeBooting))
            ),
        ]
    );
    assert_eq!(got[0].2, Class::UnannouncedReboot(Reboot::Firmware));
}

#[test]
fn a_cascade_of_a_cascade_follows_the_same_root() {
    // A late Phoned Home in Waiting (v0.19.3 stores it): metal-hammer's Alive events and
    // then Installing arrive in Phoned Home, each a cascade of the one root.
    let sent = with(&[
        (5000, MachineReclaim),
        (5100, PxeBooting),
        (5160, Preparing),
        (5220, Registering),
        (5250, Waiting),
        (5330, PhonedHome),
        (5400, Alive),
        (5460, Alive),
        (6000, Installing),
    ]);
    let got = diagnosed(&streamed(&sent), "metal-api-v0.19.3");
    let root = Some((State::Waiting, PhonedHome));
    assert_eq!(got[0].2, Class::Delayed);
    assert_eq!(got.len(), 4);
    assert!(
        got[1..]
            .iter()
            .all(|g| g.2 == Class::Cascade && g.3 == root),
        "{got:?}"
    );
}

#[test]
fn an_exported_last_error_outside_the_log_has_no_context_but_alive_needs_none() {
    let rules = Ruleset::resolve("metal-api").unwrap();
    for (event, class) in [(PxeBooting, Class::NoContext), (Alive, Class::Liveness)] {
        let mut log = exported("metal-api", &LIFE);
        log.last_error_event = Some(Event::from_recorded(
            at(9000),
            EventName::Known(event),
            "[unexpectedly received in state phoned home]",
            0,
        ));
        let trace = replay(&log, &rules);
        assert!(trace.last_error_only.is_some());
        assert_eq!(Diagnosis::of(&log, &trace, &rules).outside, Some(class));
    }
}

fn classes(list: &[(Class, u64, u64)]) -> Classes {
    let mut c = Classes::default();
    for &(class, n, machines) in list {
        for i in 0..n {
            c.add(class, None, i < machines);
        }
    }
    c
}

#[test]
fn a_pair_needs_seventy_percent_of_its_occurrences_with_context() {
    let pair = (State::Waiting, PxeBooting);
    let reboot = Class::UnannouncedReboot(Reboot::InWaiting);
    let v = verdict(
        pair,
        &classes(&[(reboot, 7, 3), (Class::Unclassified, 3, 1)]),
        3,
        &VerdictContext::new(2),
    );
    assert_eq!(v.kind, Kind::UnannouncedReboot);
    assert_eq!(v.component, Some(Component::MetalHammer));
    assert_eq!(v.precedent, Some(Precedent::WAITING_REBOOT));
    assert!((v.share - 0.7).abs() < 1e-9);
    let v = verdict(
        pair,
        &classes(&[(reboot, 6, 3), (Class::Unclassified, 4, 1)]),
        3,
        &VerdictContext::new(2),
    );
    assert_eq!(v.kind, Kind::Undecided);
    assert!(matches!(v.evidence[0], Basis::Mix(_)), "{:?}", v.evidence);
    // Occurrences without context are left out of the share.
    let v = verdict(
        pair,
        &classes(&[(reboot, 7, 3), (Class::NoContext, 30, 3)]),
        3,
        &VerdictContext::new(2),
    );
    assert_eq!(v.kind, Kind::UnannouncedReboot);
    assert_eq!(v.share, 1.0);
    let v = verdict(
        pair,
        &classes(&[(Class::NoContext, 3, 3)]),
        3,
        &VerdictContext::new(2),
    );
    assert_eq!(v.kind, Kind::Undecided);
}

#[test]
fn a_rule_change_needs_the_fleet_and_a_crash_loop_does_not() {
    let pair = (State::Registering, Installing);
    let one = verdict(
        pair,
        &classes(&[(Class::SkippedStage, 5, 1)]),
        1,
        &VerdictContext::new(2),
    );
    assert_eq!(one.kind, Kind::Undecided);
    assert!(one.evidence.contains(&Basis::TooFewMachines {
        machines: 1,
        needed: 2,
        action: Action::Accept,
    }));
    let two = verdict(
        pair,
        &classes(&[(Class::SkippedStage, 5, 2)]),
        2,
        &VerdictContext::new(2),
    );
    assert_eq!((two.kind, two.action), (Kind::Accept, Action::Accept));
    assert_eq!(two.precedent, Some(Precedent::ACCEPT_REINSTALL));
    let crash = verdict(
        (State::Preparing, Preparing),
        &classes(&[(Class::CrashLoop, 5, 1)]),
        1,
        &VerdictContext::new(2),
    );
    assert_eq!(crash.kind, Kind::CrashLoop);
    // Swallowing is for Phoned Home only.
    let late = verdict(
        (State::Waiting, Registering),
        &classes(&[(Class::Delayed, 4, 2)]),
        2,
        &VerdictContext::new(2),
    );
    assert_eq!(
        (late.kind, late.action),
        (Kind::Swallow, Action::Investigate)
    );
    let late = verdict(
        (State::Waiting, PhonedHome),
        &classes(&[(Class::Delayed, 4, 2)]),
        2,
        &VerdictContext::new(2),
    );
    assert_eq!((late.kind, late.action), (Kind::Swallow, Action::Swallow));
}

#[test]
fn a_late_phoned_home_is_swallowed_only_where_metal_api_swallows_it() {
    for state in [
        State::PxeBooting,
        State::Preparing,
        State::Registering,
        State::Waiting,
    ] {
        let v = verdict(
            (state, PhonedHome),
            &classes(&[(Class::Delayed, 4, 2)]),
            2,
            &VerdictContext::new(2),
        );
        assert_eq!(v.action, Action::Swallow, "{state}");
    }
    // InstallingState stores a Phoned Home a `self` rule lets in.
    let v = verdict(
        (State::Installing, PhonedHome),
        &classes(&[(Class::Delayed, 4, 2)]),
        2,
        &VerdictContext::new(2),
    );
    assert_eq!((v.kind, v.action), (Kind::Swallow, Action::Investigate));
    assert!(v.evidence.contains(&Basis::NoSwallowIn {
        state: State::Installing
    }));
    // metal-core sends Phoned Home: the one to look at.
    assert_eq!(v.component, Some(Component::MetalCore));
    assert!(
        crate::render::sentence::verdict(&v).starts_with("verdict: swallow — look at metal-core ·")
    );
}
